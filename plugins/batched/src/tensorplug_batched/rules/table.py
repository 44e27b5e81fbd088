"""The table of batching rules and the ``def*`` helpers every op family uses (as JAX's
batching.py); the family modules beside this one fill it.

``RULES`` maps an operator overload's name (``"add.Tensor"``) to a *maker*: ``maker(op)``
returns the kernel registered for ``op`` on the ``Batched`` key. A kernel receives the call's
arguments, finds the highest level among them (Note [Levels] in batched.py), calls ``op`` (or
another operator) on the unwrapped values and wraps what it returns at that level. When no
argument is batched -- the key was included by hand, or a caller redispatched with it -- the
kernel passes the call straight down (``calls.passdown``) instead of guessing.

The helpers here serve several families:

* :func:`defrule` -- a decorator for the rules that are their own shape (views, the matmul
  family, indexing, ...);
* :func:`defdim` -- operators along one or more dimensions that keep the rank (``cumsum``,
  ``softmax.int``, ``sort``, ``flip``), over one tensor or several of one shape (``gather``);
* :func:`defdynamic` -- operators whose result shape depends on values, refused as PyTorch
  refuses them.

The family helpers live with their family: ``defunary`` and ``defbroadcasting`` in
pointwise.py, ``defreduction`` and ``deffull`` in reductions.py. Operators without a rule reach
the boxed loop fallback (fallback.py).

Usage::

    @defrule("unsqueeze.default")
    def unsqueeze(op):
        def rule(self, dim):
            ...
        return rule
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import tensorplug as tp

from ..batched import BatchedTensor, front, materialize, unbatched, wrap
from ..calls import inplace_error, passdown, top_level, wrap_dim

__all__ = [
    "RULES",
    "Kernel",
    "Maker",
    "arg_index",
    "defdim",
    "defdynamic",
    "defrule",
    "is_inplace",
    "map_out",
    "positions",
    "register_all",
    "wrap_out",
]

Kernel = Callable[..., Any]
Maker = Callable[[Any], Kernel]

# op name ("add.Tensor") -> maker(op) -> the op's Batched kernel
RULES: dict[str, Maker] = {}

aten = tp.ops.aten
_unsqueeze = aten.unsqueeze.default
_squeeze_dim = aten.squeeze.dim


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


# --- what rules read from a schema --------------------------------------------------------------


def positions(op: Any, kinds: tuple[str, ...] = ("Tensor", "Tensor?")) -> tuple[int, ...]:
    """Where ``op``'s positional arguments of these tensor kinds are."""
    return tuple(i for i, a in enumerate(op.schema.positional) if a.tensor_kind in kinds)


def is_inplace(op: Any) -> bool:
    """Whether ``op`` writes its first argument (``add_``, ``copy_``)."""
    args = op.schema.positional
    return bool(args) and args[0].is_write


def arg_index(op: Any, name: str) -> tuple[int, str | None]:
    """Where argument ``name`` is: (positional index, None) or (-1, keyword name)."""
    for i, a in enumerate(op.schema.positional):
        if a.name == name:
            return i, None
    for a in op.schema.kwarg_only:
        if a.name == name:
            return -1, name
    raise ValueError(f"{op.name} has no argument {name!r}")


# --- what rules do with results -----------------------------------------------------------------


def wrap_out(out: Any, lvl: int, bdim: int = 0) -> Any:
    """Wrap a tensor, or each tensor of a (named) tuple or list, at ``lvl``."""
    if isinstance(out, tp.Tensor):
        return wrap(out, bdim, lvl)
    if isinstance(out, list):
        return [wrap(o, bdim, lvl) for o in out]
    items = [wrap(o, bdim, lvl) for o in out]
    return type(out)(*items) if hasattr(out, "_fields") else tuple(items)


def map_out(out: Any, fn: Callable[[Any], Any]) -> Any:
    """``fn`` of a tensor, or of each tensor of a (named) tuple or list."""
    if isinstance(out, tp.Tensor):
        return fn(out)
    items = [fn(o) for o in out]
    if isinstance(out, list):
        return items
    return type(out)(*items) if hasattr(out, "_fields") else tuple(items)


# --- defdim ------------------------------------------------------------------------------------


def defdim(*names: str, dim: str = "dim") -> None:
    """Rules for ops along dimension(s) ``dim`` (an ``int`` or ``int[]`` argument) that keep
    the rank: the logical dimension ``d`` is ``d + 1`` of the value with the batch dimension
    first. Every tensor argument gets a batch dimension (unbatched ones are expanded: ``gather``
    needs ``index`` batched like ``self``); in-place ops refuse an unbatched ``self``."""
    for name in names:
        defrule(name)(functools.partial(_along, dim_name=dim))


def _along(op: Any, dim_name: str) -> Kernel:
    di, dkw = arg_index(op, dim_name)
    tensors = positions(op)
    inplace = is_inplace(op)
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
            out = map_out(out, lambda o: _squeeze_dim(o, 1) if o.ndim == 2 else o)
        return wrap_out(out, lvl)

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
