"""Elementwise choices: clamp (and clamp_min / clamp_max), where, masked_fill, with their
in-place forms. ``where`` has a fast path (Note [Binary fast path] in _pointwise/_elementwise.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import (
    Kernel,
    Kernels,
    Kit,
    OpError,
    Scalar,
    bind,
    check_broadcast,
    check_fits,
    torch_name,
)
from ._elementwise import inplace, write_result


def clamp(kit: Kit, self: Tensor, min: Scalar | None = None, max: Scalar | None = None) -> Tensor:
    if min is None and max is None:
        raise OpError("torch.clamp: At least one of 'min' or 'max' must not be None")
    xp = kit.xp
    compute = kit.compute
    bounds = [b for b in (min, max) if b is not None]
    od = kit.result_dtype(self, *bounds)
    if od is _dt.bool:
        raise OpError("\"clamp_scalar_cpu\" not implemented for 'Bool'")
    if od.kind == "c":
        raise OpError("clamp is not supported for complex types")
    for b in bounds:
        check_fits(b, od)
    r = kit.as_compute(self, od)
    if min is not None:
        r = xp.maximum(r, xp.asarray(kit.scalar(min, od), dtype=compute[od]))
    if max is not None:
        r = xp.minimum(r, xp.asarray(kit.scalar(max, od), dtype=compute[od]))
    return kit.wrap(r, od, self._device)


def clamp_tensor(
    kit: Kit, self: Tensor, min: Tensor | None = None, max: Tensor | None = None
) -> Tensor:
    if min is None and max is None:
        raise OpError("torch.clamp: At least one of 'min' or 'max' must not be None")
    xp = kit.xp
    bounds = [b for b in (min, max) if b is not None]
    od = kit.result_dtype(self, *bounds)
    device = self._device
    check_broadcast(tuple(self._data.shape), *(tuple(b._data.shape) for b in bounds))
    r = kit.as_compute(self, od)
    if min is not None:
        r = xp.maximum(r, kit.operand(min, od, device))
    if max is not None:
        r = xp.minimum(r, kit.operand(max, od, device))
    return kit.wrap(r, od, device)


def clamp_(kit: Kit, self: Tensor, min: Scalar | None = None, max: Scalar | None = None) -> Tensor:
    r = clamp(kit, self, min, max)
    write_result(kit, self, r._data, r._dtype, in_place=True)
    return self


def clamp_tensor_(
    kit: Kit, self: Tensor, min: Tensor | None = None, max: Tensor | None = None
) -> Tensor:
    r = clamp_tensor(kit, self, min, max)
    write_result(kit, self, r._data, r._dtype, in_place=True)
    return self


def no_complex_clamp(d: _dt.dtype) -> None:
    if d.kind == "c":
        raise OpError("clamp is not supported for complex types")


def clamp_one(
    kit: Kit, name: str, f: Callable[[Any, Any], Any], kernel_name: str
) -> tuple[Kernel, Kernel]:
    """The kernels of ``clamp_min`` / ``clamp_max`` (``name``) and their ``.Tensor``: one bound,
    a Scalar or a Tensor, promoted with self as PyTorch's ``clamp`` does (an int tensor with a
    float bound gives a float result)."""
    xp = kit.xp
    compute = kit.compute

    def clamp_one_scalar(self: Tensor, bound: Scalar) -> Tensor:
        od = kit.result_dtype(self, bound)
        no_complex_clamp(od)
        if od is _dt.bool:
            raise OpError(f"\"{name}_scalar_cpu\" not implemented for 'Bool'")
        check_fits(bound, od)
        b = xp.asarray(kit.scalar(bound, od), dtype=compute[od])
        return kit.wrap(f(kit.as_compute(self, od), b), od, self._device)

    def clamp_one_tensor(self: Tensor, bound: Tensor) -> Tensor:
        check_broadcast(tuple(self._data.shape), tuple(bound._data.shape))
        od = kit.result_dtype(self, bound)
        if od.kind == "c":
            raise OpError(f"\"{kernel_name}\" not implemented for '{torch_name(od)}'")
        device = self._device
        r = f(kit.as_compute(self, od), kit.operand(bound, od, device))
        return kit.wrap(r, od, device)

    return clamp_one_scalar, clamp_one_tensor


def check_condition(condition: Tensor) -> None:
    if condition._dtype is not _dt.bool:
        raise OpError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{torch_name(condition._dtype)}"
        )


# where's fast paths (Note [Binary fast path]): a bool condition and tensors of one native
# dtype and one shape on one device, and for a scalar a float (or an int that a double holds
# exactly) with a floating tensor: ``xp.where`` converts it as ``asarray(v, dtype)`` does. Each
# kernel is made by its builder, named after it.

_EXACT = float(2**53)


def plain_float(v: Any) -> bool:
    t = type(v)
    return t is float or (t is int and -_EXACT <= v <= _EXACT)


def where_self(kit: Kit) -> Kernel:
    """The kernel of ``aten::where.self``."""
    xp = kit.xp
    new = kit.new
    ks = kit.keyset
    where_fast = frozenset(d for d in kit.native if d.kind in "biufc")
    where = xp.where

    def where_self(condition: Tensor, self: Tensor, other: Tensor) -> Tensor:
        d = self._dtype
        dev = self._device
        if (
            condition._dtype is _dt.bool
            and d is other._dtype
            and d in where_fast
            and condition._device is dev
            and other._device is dev
        ):
            c, a, b = condition._data, self._data, other._data
            if c.shape == a.shape == b.shape:
                return new(where(c, a, b), d, dev, ks)
        check_condition(condition)
        od = kit.result_dtype(self, other)
        device = self._device
        check_broadcast(*(tuple(t._data.shape) for t in (condition, self, other)))
        c = kit.condition(condition, device)
        return kit.wrap(
            xp.where(c, kit.operand(self, od, device), kit.operand(other, od, device)), od, device
        )

    return where_self


def where_scalar(kit: Kit, scalar_self: bool) -> Kernel:
    """The kernel of ``aten::where.ScalarSelf`` (``scalar_self``: ``self`` is the Python scalar)
    or ``aten::where.ScalarOther`` (``other`` is): one tensor operand and one scalar, the
    scalar on the side the overload names."""
    xp = kit.xp
    new = kit.new
    ks = kit.keyset
    compute = kit.compute
    where_scalar_fast = frozenset(d for d in kit.native if d.kind == "f")
    where = xp.where

    def kernel(condition: Tensor, self: Any, other: Any) -> Tensor:
        t, v = (other, self) if scalar_self else (self, other)
        d = t._dtype
        dev = t._device
        if (
            condition._dtype is _dt.bool
            and d in where_scalar_fast
            and condition._device is dev
            and plain_float(v)
        ):
            c, a = condition._data, t._data
            if c.shape == a.shape:
                r = where(c, v, a) if scalar_self else where(c, a, v)
                return new(r, d, dev, ks)
        check_condition(condition)
        od = kit.result_dtype(self, other)
        check_broadcast(tuple(condition._data.shape), tuple(t._data.shape))
        c = kit.condition(condition, dev)
        if od.kind in "ui":  # PyTorch checks integer results only
            check_fits(v, od)
        s = xp.asarray(kit.scalar(v, od), dtype=compute[od])
        a = kit.operand(t, od, dev)
        return kit.wrap(xp.where(c, s, a) if scalar_self else xp.where(c, a, s), od, dev)

    # named as its builder's kernel was before the two builders merged
    name = "where_scalar_self" if scalar_self else "where_scalar_other"
    kernel.__name__ = name
    kernel.__qualname__ = f"{name}.<locals>.{name}"
    return kernel


def where_scalar_other(kit: Kit) -> Kernel:
    """The kernel of ``aten::where.ScalarOther``."""
    return where_scalar(kit, scalar_self=False)


def where_scalar_self(kit: Kit) -> Kernel:
    """The kernel of ``aten::where.ScalarSelf``."""
    return where_scalar(kit, scalar_self=True)


def masked_fill(kit: Kit, self: Tensor, mask: Tensor, value: Scalar) -> Tensor:
    if mask._dtype is not _dt.bool:
        raise OpError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {mask._dtype.name}"
        )
    xp = kit.xp
    d = self._dtype
    device = self._device
    check_broadcast(tuple(self._data.shape), tuple(mask._data.shape))
    check_fits(value, d)
    if d.kind in "ui" and isinstance(value, float):
        value = int(value)
    v = xp.asarray(kit.scalar(value, d), dtype=kit.compute[d])
    m = kit.condition(mask, device)
    return kit.wrap(xp.where(m, v, kit.as_compute(self, d)), d, device)


def masked_fill_tensor(kit: Kit, self: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    if value._data.ndim != 0:
        raise OpError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._data.ndim} dimension(s)."
        )
    return masked_fill(kit, self, mask, kit.item(value._data, value._dtype))


KERNELS: dict[str, Callable[..., Any]] = {
    "clamp": clamp,
    "clamp.Tensor": clamp_tensor,
    "clamp_": clamp_,
    "clamp_.Tensor": clamp_tensor_,
    "masked_fill.Scalar": masked_fill,
    "masked_fill.Tensor": masked_fill_tensor,
}

BUILDERS = {
    "where.self": where_self,
    "where.ScalarOther": where_scalar_other,
    "where.ScalarSelf": where_scalar_self,
}


def build(kit: Kit) -> Kernels:
    xp = kit.xp
    k: Kernels = {name: bind(kit, fn) for name, fn in KERNELS.items()}
    k.update((name, make(kit)) for name, make in BUILDERS.items())
    k["clamp_min"], k["clamp_min.Tensor"] = clamp_one(kit, "clamp_min", xp.maximum, "maximum_cpu")
    k["clamp_max"], k["clamp_max.Tensor"] = clamp_one(kit, "clamp_max", xp.minimum, "minimum_cpu")
    for name in ("clamp_min", "clamp_max", "masked_fill.Scalar", "masked_fill.Tensor"):
        op, _, overload = name.partition(".")
        inplace(kit, k, f"{op}_.{overload}" if overload else f"{op}_", name)
    inplace(kit, k, "clamp_min_.Tensor", "clamp_min.Tensor", promoted=True)
    inplace(kit, k, "clamp_max_.Tensor", "clamp_max.Tensor", promoted=True)
    return k
