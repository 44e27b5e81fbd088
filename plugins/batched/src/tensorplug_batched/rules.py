"""The batching rules: one table, filled by small ``def*`` helpers (as JAX's batching.py).

``RULES`` maps an operator overload's name (``"add.Tensor"``) to a *maker*: ``maker(op)``
returns the kernel registered for ``op`` on the ``Batched`` key. A kernel receives the call's
arguments, finds the highest level among them (Note [Levels] in batched.py), calls ``op`` (or
another operator) on the unwrapped values and wraps what it returns at that level. When no
argument is batched -- the key was included by hand, or a caller redispatched with it -- the
kernel passes the call straight down (:func:`passdown`) instead of guessing.

The helpers here cover the families that share one shape of rule:

* :func:`defunary` -- one tensor argument, a result of its shape (``neg``, ``clone``, ``relu_``);
* :func:`defbroadcasting` -- elementwise over several tensors that broadcast (``add.Tensor``,
  ``where.self``, ``copy_``), with PyTorch's type promotion of the logical tensors;
* :func:`defreduction` -- reductions over logical dimensions, ``keepdim`` and named tuples
  (``sum.dim_IntList``, ``max.dim``); :func:`deffull` for the whole-tensor overloads
  (``sum``, ``max``);
* :func:`defdim` -- operators along one or more dimensions that keep the rank (``cumsum``,
  ``softmax.int``, ``sort``, ``flip``), over one tensor or several of one shape (``gather``);
* :func:`defdynamic` -- operators whose result shape depends on values, refused as PyTorch
  refuses them;
* :func:`defrule` -- a decorator for the rules that are their own shape (views, the matmul
  family, indexing, ...: views.py, linalg.py, indexing.py, randomness.py).

Operators without a rule reach the boxed loop fallback (fallback.py).

Usage::

    defunary("neg.default", "exp.default")
    defbroadcasting("add.Tensor", "mul.Tensor")

    @defrule("unsqueeze.default")
    def unsqueeze(op):
        def rule(self, dim):
            ...
        return rule
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import tensorplug as tp
from tensorplug.tensor import Tensor

from .batched import BatchedTensor, front, materialize, unbatched, wrap

__all__ = [
    "RULES",
    "Maker",
    "broadcasting_kernel",
    "defbroadcasting",
    "defdim",
    "defdynamic",
    "deffull",
    "defreduction",
    "defrule",
    "defunary",
    "inplace_error",
    "passdown",
    "register_all",
    "top_level",
    "wrap_dim",
]

Kernel = Callable[..., Any]
Maker = Callable[[Any], Kernel]

# op name ("add.Tensor") -> maker(op) -> the op's Batched kernel
RULES: dict[str, Maker] = {}

aten = tp.ops.aten
_unsqueeze = aten.unsqueeze.default
_squeeze_dim = aten.squeeze.dim
_reshape = aten.reshape.default
_to_copy = aten._to_copy.default
_tls = tp.dispatch.local_state
_trace = tp.dispatcher.trace_state

# Note [Rules call kernels directly]
# The hot rules (unary ops, an elementwise op of a batched tensor and a plain one, a batched
# vector or matrix times a plain matrix) call the operator on the value as the generated
# ``op(...)`` would: they compute the call's key set from the values and the thread's masks and
# run the kernel ``op.kernel_cache`` holds for it (``op.kernel_for`` on a miss), which saves a
# second pass through the generated call (argument checks the first pass already made). They
# take ``op(...)`` instead while dispatch tracing is on, so that the trace shows the call.


def register_all(lib: tp.Library) -> None:
    """Register every rule of the table into ``lib`` (an ``aten`` IMPL library)."""
    for name, maker in RULES.items():
        op_name, _, overload = name.partition(".")
        op = getattr(getattr(aten, op_name), overload or "default")
        lib.impl(op, maker(op), "Batched")


def defrule(*names: str) -> Callable[[Maker], Maker]:
    """Decorator: ``maker(op) -> kernel`` is the rule of each named overload."""

    def add(maker: Maker) -> Maker:
        for name in names:
            if name in RULES:
                raise ValueError(f"two batching rules for aten::{name}")
            RULES[name] = maker
        return maker

    return add


# --- what every rule shares ------------------------------------------------------------------


def top_level(args: Iterable[Any]) -> int:
    """The highest level among the tensors of ``args`` (and of lists in it); 0: none batched."""
    lvl = 0
    for a in args:
        t = type(a)
        if t is BatchedTensor:
            if a.level > lvl:
                lvl = a.level
        elif t is list or t is tuple:
            for b in a:
                if type(b) is BatchedTensor and b.level > lvl:
                    lvl = b.level
    return lvl


def passdown(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``op`` below ``Batched``: what a rule does when none of its inputs is batched."""
    with tp.dispatch.exclude("Batched"):
        return op(*args, **kwargs)


def inplace_error(op: Any) -> RuntimeError:
    """PyTorch's error for writing a batched value into a tensor that is not batched."""
    return RuntimeError(
        "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
        "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
        "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to "
        "use out-of-place operators instead of inplace arithmetic. If said operator is being "
        f"called inside the PyTorch framework, please file a bug report instead. ({op.name})"
    )


def wrap_dim(dim: int, ndim: int, op: Any = None) -> int:
    """A logical dimension in ``[0, ndim)`` (0-d tensors take 0 and -1): PyTorch's message,
    after the name of ``op`` when given, as the kernels say it."""
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        prefix = f"{op.name}: " if op is not None else ""
        raise IndexError(
            f"{prefix}Dimension out of range (expected to be in range of [{lo}, {hi}], but got "
            f"{dim})"
        )
    if ndim == 0:
        return 0
    return dim + ndim if dim < 0 else dim


def _positions(op: Any, kinds: tuple[str, ...] = ("Tensor", "Tensor?")) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(op.schema.positional) if a.tensor_kind in kinds)


def _is_inplace(op: Any) -> bool:
    args = op.schema.positional
    return bool(args) and args[0].is_write


def _arg_index(op: Any, name: str) -> tuple[int, str | None]:
    """Where argument ``name`` is: (positional index, None) or (-1, keyword name)."""
    for i, a in enumerate(op.schema.positional):
        if a.name == name:
            return i, None
    for a in op.schema.kwarg_only:
        if a.name == name:
            return -1, name
    raise ValueError(f"{op.name} has no argument {name!r}")


# --- defunary --------------------------------------------------------------------------------


def defunary(*names: str) -> None:
    """Rules for ops with one tensor argument (``self``) and a result of its shape.

    The op runs on the value as it is (the batch dimension stays where it is); an in-place op
    writes the value and returns the batched ``self``.
    """
    for name in names:
        defrule(name)(_unary)


def _unary(op: Any) -> Kernel:
    if _is_inplace(op):

        def inplace(self: Any, *args: Any, **kwargs: Any) -> Any:
            if type(self) is not BatchedTensor:
                return passdown(op, (self, *args), kwargs)
            op(self.value, *args, **kwargs)
            return self

        return inplace

    get = op.kernel_cache.get
    kernel_for = op.kernel_for

    def rule(self: Any, *args: Any, **kwargs: Any) -> Any:
        if type(self) is not BatchedTensor:
            return passdown(op, (self, *args), kwargs)
        v = self.value
        if args or kwargs or _trace.enabled:
            return wrap(op(v, *args, **kwargs), self.bdim, self.level)
        m = _tls.masks  # Note [Rules call kernels directly]
        ks = (v.tp_keyset | m.inc) & m.nexc
        return wrap((get(ks) or kernel_for(ks))(v), self.bdim, self.level)

    return rule


# --- defbroadcasting -------------------------------------------------------------------------

# Note [Promotion of batched 0-d tensors]
# PyTorch's type promotion ranks a 0-d tensor below a dimensioned one (``f32[3] + f64[]`` is
# float32). A batched 0-d tensor is physically 1-d, so without care the batch would change the
# result's dtype. When a batched argument is 0-d, the rule computes the dtype of the logical
# call and of the physical one; where they differ it casts the batched 0-d values to the
# logical dtype, after which the physical promotion gives the logical answer.


def defbroadcasting(*names: str, promote: tuple[str, ...] | None = None) -> None:
    """Rules for elementwise ops whose tensor arguments broadcast together.

    ``promote`` names the arguments that take part in type promotion (default: every tensor
    and Scalar argument; Note [Promotion of batched 0-d tensors]); ``()`` turns the check off.
    In-place ops (``self`` written) refuse a batched value written into an unbatched ``self``.
    """
    for name in names:
        defrule(name)(functools.partial(broadcasting_kernel, promote=promote))


def broadcasting_kernel(op: Any, promote: tuple[str, ...] | None = None) -> Kernel:
    """The kernel :func:`defbroadcasting` registers for ``op`` (for rules that reuse it)."""
    tensors = _positions(op)
    inplace = _is_inplace(op)
    if promote is None:
        value_pos = tuple(
            i for i, a in enumerate(op.schema.positional)
            if a.tensor_kind in ("Tensor", "Tensor?") or str(a.type).startswith("Scalar")
        )  # fmt: skip
    else:
        value_pos = tuple(i for i, a in enumerate(op.schema.positional) if a.name in promote)
    if inplace:
        value_pos = ()  # the result takes self's dtype
    pair = tensors if len(tensors) == 2 and not inplace else None
    get = op.kernel_cache.get
    kernel_for = op.kernel_for

    def rule(*args: Any, **kwargs: Any) -> Any:
        if pair is not None:  # the common case first: x (batched) with a plain tensor
            i, j = pair
            a, b = args[i], args[j]
            if type(b) is BatchedTensor:
                a, b, i = b, a, j
            if type(a) is BatchedTensor and type(b) is Tensor:
                n, d = a.tp_data.ndim, a.bdim  # the logical rank (a LogicalShape's)
                if n and b.tp_data.ndim <= n - d:  # the batch dimension stays where it is
                    v = a.value
                    if _trace.enabled:
                        k = op
                    else:
                        m = _tls.masks  # Note [Rules call kernels directly]
                        ks = (v.tp_keyset | b.tp_keyset | m.inc) & m.nexc
                        k = get(ks) or kernel_for(ks)
                    if len(args) == 2 and j == 1:  # (self, other): add, mul, ...
                        out = k(v, b, **kwargs) if i == 0 else k(b, v, **kwargs)
                    else:
                        phys = list(args)
                        phys[i] = v
                        out = k(*phys, **kwargs)
                    return wrap(out, d, a.level)
        lvl = 0
        for i in tensors:
            a = args[i]
            if type(a) is BatchedTensor and a.level > lvl:
                lvl = a.level
        if lvl == 0:
            return passdown(op, args, kwargs)
        self = args[0]
        if inplace and unbatched(self, lvl):
            raise inplace_error(op)
        rank = 0
        zero_d = False
        for i in tensors:
            a = args[i]
            if a is not None:
                n = a.ndim
                if n > rank:
                    rank = n
                elif n == 0 and type(a) is BatchedTensor and a.level == lvl:
                    zero_d = True
        phys = list(args)
        # the batch dimension stays where it is when every batched argument has the full rank
        # and the same bdim, and the unbatched ones do not reach it (right-aligned)
        bdim = -1
        for i in tensors:
            a = args[i]
            if type(a) is BatchedTensor and a.level == lvl:
                if a.ndim != rank or (bdim >= 0 and a.bdim != bdim):
                    bdim = -2
                    break
                bdim = a.bdim
        if bdim >= 0:
            for i in tensors:
                a = args[i]
                if a is not None and (type(a) is not BatchedTensor or a.level != lvl):
                    if a.ndim > rank - bdim:
                        bdim = -2
                        break
        if bdim >= 0:
            for i in tensors:
                a = args[i]
                if type(a) is BatchedTensor and a.level == lvl:
                    phys[i] = a.value
        else:
            bdim = 0
            for i in tensors:
                a = args[i]
                if type(a) is BatchedTensor and a.level == lvl:
                    p = front(a)
                    for _ in range(rank - a.ndim):
                        p = _unsqueeze(p, 1)
                    phys[i] = p
        if zero_d and value_pos:
            _fix_promotion(args, phys, value_pos, lvl)
        out = op(*phys, **kwargs)
        if inplace:
            return self
        return wrap(out, bdim, lvl)

    return rule


def _fix_promotion(args: Any, phys: list[Any], value_pos: tuple[int, ...], lvl: int) -> None:
    """Note [Promotion of batched 0-d tensors]."""
    logical = [args[i] for i in value_pos if args[i] is not None]
    if len(logical) < 2:
        return
    want = tp.result_type(*logical)
    if tp.result_type(*(phys[i] for i in value_pos if phys[i] is not None)) is want:
        return
    for i in value_pos:
        a = args[i]
        if type(a) is BatchedTensor and a.level == lvl and a.ndim == 0 and a.dtype is not want:
            phys[i] = _to_copy(phys[i], dtype=want)


# --- reductions --------------------------------------------------------------------------------


def _flat(x: BatchedTensor) -> Any:
    """``x``'s value as ``[batch, numel]``: what a whole-tensor reduction reduces along dim 1."""
    p = front(x)
    return _reshape(p, [p.shape[0], x.numel()])


def deffull(name: str, reduce: Callable[..., Any], *, empty_ok: bool = True) -> None:
    """The rule of a whole-tensor reduction: ``reduce(flat, *rest, **kw)`` reduces dim 1 of the
    ``[batch, numel]`` value (a dim overload: ``sum(x)`` is ``sum.dim_IntList(flat, [1])``).
    Without ``empty_ok`` (``max``: the dim overload refuses an empty dimension, the whole-tensor
    one has its own answer) an empty tensor runs per sample."""

    def maker(op: Any) -> Kernel:
        def rule(self: Any, *args: Any, **kwargs: Any) -> Any:
            if type(self) is not BatchedTensor:
                return passdown(op, (self, *args), kwargs)
            if not empty_ok and self.numel() == 0:
                from .fallback import loop  # fallback.py imports this module

                return loop(op, (self, *args), kwargs, self.level)
            return _wrap_out(reduce(_flat(self), *args, **kwargs), self.level)

        return rule

    defrule(name)(maker)


def _wrap_out(out: Any, lvl: int, bdim: int = 0) -> Any:
    """Wrap a tensor, or each tensor of a (named) tuple or list, at ``lvl``."""
    if isinstance(out, tp.Tensor):
        return wrap(out, bdim, lvl)
    if isinstance(out, list):
        return [wrap(o, bdim, lvl) for o in out]
    items = [wrap(o, bdim, lvl) for o in out]
    return type(out)(*items) if hasattr(out, "_fields") else tuple(items)


def _map_out(out: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(out, tp.Tensor):
        return fn(out)
    items = [fn(o) for o in out]
    if isinstance(out, list):
        return items
    return type(out)(*items) if hasattr(out, "_fields") else tuple(items)


def defreduction(*names: str, dim: str = "dim", keepdim: str | None = "keepdim",
                 empty_is_all: bool = True) -> None:  # fmt: skip
    """Rules for reductions over logical dimensions (``int``, ``int?`` or ``int[]`` argument
    ``dim``; ``None`` -- and ``[]`` where ``empty_is_all`` -- reduce all of them), with
    ``keepdim`` and tuple results (``max.dim`` gives its named tuple back)."""
    for name in names:
        defrule(name)(functools.partial(_reduction, dim_name=dim, keep_name=keepdim,
                                        empty_is_all=empty_is_all))  # fmt: skip


def _reduction(op: Any, dim_name: str, keep_name: str | None, empty_is_all: bool) -> Kernel:
    di, dkw = _arg_index(op, dim_name)
    ki, kkw = _arg_index(op, keep_name) if keep_name else (-1, None)
    dim_type = str(op.schema.arguments[[a.name for a in op.schema.arguments].index(dim_name)].type)
    is_list = "[" in dim_type

    def rule(self: Any, *args: Any, **kwargs: Any) -> Any:
        if type(self) is not BatchedTensor:
            return passdown(op, (self, *args), kwargs)
        full = (self, *args)
        dim: Any = full[di] if dkw is None else kwargs.get(dkw)
        keep = (full[ki] if kkw is None else kwargs.get(kkw, False)) if keep_name else False
        rank = self.ndim
        everything = dim is None or (is_list and len(dim) == 0 and empty_is_all)
        call = list(full)
        if everything:
            p = _flat(self)
            new_dim: Any = [1] if is_list else 1
        else:
            p = front(self)
            dims = list(dim) if is_list else [dim]
            mapped = [wrap_dim(d, rank, op) + 1 for d in dims]  # a 0-d tensor's dim 0 is 1
            for k, m in enumerate(mapped):
                if m in mapped[:k]:
                    raise RuntimeError(
                        f"{op.name}: dim {m - 1} appears multiple times in the list of dims"
                    )
            if rank == 0:  # a dimension of size 1 to reduce, squeezed out below
                p = _unsqueeze(p, 1)
            new_dim = mapped if is_list else mapped[0]
        call[0] = p
        kw = dict(kwargs)
        if dkw is None:
            call[di] = new_dim
        else:
            kw[dkw] = new_dim
        out = op(*call, **kw)
        if everything and keep and rank > 0:
            shape = [1] * rank
            out = _map_out(out, lambda o: _reshape(o, [o.shape[0], *shape]))
        elif rank == 0:
            out = _map_out(out, lambda o: _squeeze_dim(o, 1) if o.ndim == 2 else o)
        return _wrap_out(out, self.level)

    return rule


# --- defdim ------------------------------------------------------------------------------------


def defdim(*names: str, dim: str = "dim") -> None:
    """Rules for ops along dimension(s) ``dim`` (an ``int`` or ``int[]`` argument) that keep
    the rank: the logical dimension ``d`` is ``d + 1`` of the value with the batch dimension
    first. Every tensor argument gets a batch dimension (unbatched ones are expanded: ``gather``
    needs ``index`` batched like ``self``); in-place ops refuse an unbatched ``self``."""
    for name in names:
        defrule(name)(functools.partial(_along, dim_name=dim))


def _along(op: Any, dim_name: str) -> Kernel:
    di, dkw = _arg_index(op, dim_name)
    tensors = _positions(op)
    inplace = _is_inplace(op)
    dim_type = str(op.schema.arguments[[a.name for a in op.schema.arguments].index(dim_name)].type)
    is_list = "[" in dim_type

    def rule(*args: Any, **kwargs: Any) -> Any:
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, kwargs)
        self = args[0]
        if inplace and unbatched(self, lvl):
            raise inplace_error(op)
        size = next(
            a.value.shape[a.bdim] for a in args if type(a) is BatchedTensor and a.level == lvl
        )
        rank = self.ndim
        call = list(args)
        zero = rank == 0
        for i in tensors:
            a = args[i]
            if a is None:
                continue
            p = front(a) if type(a) is BatchedTensor and a.level == lvl else materialize(a, size)
            call[i] = _unsqueeze(p, 1) if zero and a.ndim == 0 else p
        dim = args[di] if dkw is None else kwargs.get(dkw)
        kw = dict(kwargs)
        if dim is not None:
            new: Any
            if is_list:
                new = [wrap_dim(d, rank, op) + 1 for d in dim]
            else:
                new = wrap_dim(dim, rank, op) + 1
            if dkw is None:
                call[di] = new
            else:
                kw[dkw] = new
        out = op(*call, **kw)
        if inplace:
            return self
        if zero:
            out = _map_out(out, lambda o: _squeeze_dim(o, 1) if o.ndim == 2 else o)
        return _wrap_out(out, lvl)

    return rule


# --- defdynamic --------------------------------------------------------------------------------


def defdynamic(*names: str) -> None:
    """Ops whose result shape depends on the values: refused for batched inputs, as PyTorch."""
    for name in names:
        defrule(name)(_dynamic)


def _dynamic(op: Any) -> Kernel:
    def rule(*args: Any, **kwargs: Any) -> Any:
        if top_level((*args, *kwargs.values())) == 0:
            return passdown(op, args, kwargs)
        raise RuntimeError(
            "vmap: We do not support batching operators that can output dynamic shape. "
            f"Attempted to vmap over {op.name}. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature."
        )

    return rule
