"""Batching rules of the pointwise operators: elementwise, over one tensor or several that
broadcast together.

Note [Pointwise rules from the tag]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
native_functions.yaml tags the elementwise overloads ``pointwise``, and their rules are read
from the tag and the schema instead of being listed: an overload whose only tensor argument is
``self`` runs on the value as it is (:func:`defunary`); any other broadcasts its tensor
arguments (:func:`defbroadcasting`). The exceptions, each with its reason, are the tables
:data:`_OWN_RULE` and :data:`_PROMOTE` below, and one rule: a composite
(``CompositeImplicitAutograd``: ``clip``, ``mish``, the ``special_*`` aliases) gets no rule,
since the fallback runs its decomposition on the batched tensors and its parts have rules.
A few elementwise operators the yaml does not tag (copies, fills) are listed at
the end.

Usage::

    defunary("neg.default", "exp.default")
    defbroadcasting("add.Tensor", "mul.Tensor")
"""

from __future__ import annotations

import functools
from typing import Any

import tensorplug as tp
from tensorplug.tensor import Tensor

from ..batched import BatchedTensor, front, unbatched, wrap
from ..calls import inplace_error, passdown, top_level
from ..fallback import loop
from .table import Kernel, defrule, is_inplace, positions

__all__ = ["broadcasting_kernel", "defbroadcasting", "defunary"]

aten = tp.ops.aten
_unsqueeze = aten.unsqueeze.default
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


# --- defunary --------------------------------------------------------------------------------


def defunary(*names: str) -> None:
    """Rules for ops with one tensor argument (``self``) and a result of its shape.

    The op runs on the value as it is (the batch dimension stays where it is); an in-place op
    writes the value and returns the batched ``self``.
    """
    for name in names:
        defrule(name)(_unary)


def _unary(op: Any) -> Kernel:
    if is_inplace(op):

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
    tensors = positions(op)
    inplace = is_inplace(op)
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


# --- the rules read from the tag -----------------------------------------------------------------

# pointwise overloads with a rule of their own, below
_OWN_RULE = frozenset({
    "lerp.Tensor", "lerp_.Tensor",  # a batched 0-d weight is promoted like a scalar
    "masked_fill.Tensor", "masked_fill_.Tensor",  # a batched 0-d value
    "add.out", "sub.out", "mul.out", "div.out",  # the functional op, copied into out=
})  # fmt: skip

# pointwise overloads whose type promotion is not that of all their tensors and Scalars
# (Note [Promotion of batched 0-d tensors])
_PROMOTE: dict[str, tuple[str, ...]] = {
    # heaviside refuses mixed dtypes; masked_fill keeps self's: no promotion to imitate
    "heaviside.default": (), "heaviside_.default": (),
    "masked_fill.Scalar": (), "masked_fill_.Scalar": (),
    # the condition takes no part in the promotion
    "where.self": ("self", "other"), "where.ScalarOther": ("self", "other"),
    "where.ScalarSelf": ("self", "other"),
}  # fmt: skip


def _from_tag() -> None:
    """Note [Pointwise rules from the tag]."""
    for op in tp.dispatcher.ops_in("aten"):
        if "pointwise" not in op.tags:
            continue
        name = op.name.partition("::")[2]
        if name in _OWN_RULE or op.has_kernel("CompositeImplicitAutograd"):
            continue
        only_self = positions(op) == (0,) and not any(a.tensor_kind for a in op.schema.kwarg_only)
        if only_self and name not in _PROMOTE:
            defunary(name)
        else:
            defbroadcasting(name, promote=_PROMOTE.get(name))


_from_tag()


@defrule("lerp.Tensor", "lerp_.Tensor")
def _lerp_maker(op: Any) -> Kernel:
    """A 0-d ``weight`` of another dtype is promoted like a scalar (the kernel's rule); batched,
    it is 1-d, so it is cast first to the dtype the logical call computes in."""
    plain = broadcasting_kernel(op, promote=())
    inplace = op.schema.positional[0].is_write

    def kernel(self: Any, end: Any, weight: Any) -> Any:
        lvl = top_level((self, end, weight))
        w = weight
        if (
            type(w) is BatchedTensor
            and w.level == lvl
            and w.ndim == 0
            and w.dtype is not self.dtype
        ):
            d = self.dtype if inplace else tp.result_type(self, end, w)
            weight = aten._to_copy.default(w, dtype=d)
            if not inplace:
                self = aten._to_copy.default(self, dtype=d)
                end = aten._to_copy.default(end, dtype=d)
        return plain(self, end, weight)

    return kernel


@defrule("masked_fill.Tensor", "masked_fill_.Tensor")
def _masked_fill_maker(op: Any) -> Kernel:
    inplace = op.schema.positional[0].is_write
    plain = broadcasting_kernel(op, promote=())

    def kernel(self: Any, mask: Any, value: Any) -> Any:
        lvl = top_level((self, mask, value))
        if lvl == 0 or not (type(value) is BatchedTensor and value.level == lvl) or value.ndim != 0:
            return plain(self, mask, value)
        filled = aten.where.self(mask, aten._to_copy.default(value, dtype=self.dtype), self)
        if not inplace:
            return filled
        if unbatched(self, lvl):
            raise inplace_error(op)
        aten.copy_.default(self, filled)
        return self

    return kernel


def _out_maker(functional: str) -> Any:
    """``op.out(..., out=o)``: the functional op, copied into ``o`` (a batched value into an
    unbatched ``o`` is PyTorch's in-place error); a result ``o`` must be resized or cast to is
    left to the loop, where the kernel's own rules apply."""
    name, _, overload = functional.partition(".")
    fop = getattr(getattr(aten, name), overload)

    def maker(op: Any) -> Kernel:
        def kernel(*args: Any, out: Any, **kwargs: Any) -> Any:
            lvl = top_level((*args, out))
            if lvl == 0:
                return passdown(op, args, {"out": out, **kwargs})
            r = fop(*args, **kwargs)
            if r.shape != out.shape or r.dtype is not out.dtype:
                return loop(op, args, {"out": out, **kwargs}, lvl)
            aten.copy_.default(out, r)
            return out

        return kernel

    return maker


for _name in ("add", "sub", "mul", "div"):
    defrule(f"{_name}.out")(_out_maker(f"{_name}.Tensor"))


# --- frexp: two results -------------------------------------------------------------------------


@defrule("frexp.Tensor")
def _frexp_maker(op: Any) -> Kernel:
    """Elementwise with two results (mantissa, exponent): each keeps the batch dimension."""

    def kernel(self: Any) -> Any:
        if type(self) is not BatchedTensor:
            return passdown(op, (self,), {})
        mantissa, exponent = op(self.value)
        return wrap(mantissa, self.bdim, self.level), wrap(exponent, self.bdim, self.level)

    return kernel


# --- elementwise operators the yaml does not tag -------------------------------------------------

# copies and fills keep the shape (the *_like factories: factories.py)
defunary("_to_copy.default", "clone.default", "detach.default", "fill_.Scalar", "zero_.default")
defbroadcasting("copy_.default")
