"""Extrema (amax/amin, max/min with and without indices, argmax/argmin, aminmax) and the
comparisons of whole tensors (isclose, allclose, equal): the ``reductions`` family (Note
[Reduction fast path] in _common.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import (
    Kernel,
    Kernels,
    Kit,
    OpError,
    check_broadcast,
    guard,
    guarded,
    torch_name,
    wrap_dim,
    wrap_dims,
)
from ._common import Fast, _one_axis

# --- extrema ----------------------------------------------------------------------------------


def no_complex(name: str, d: _dt.dtype) -> None:
    if d.kind == "c":
        raise OpError(f"{name}(): does not support complex input")


def nonempty_dims(name: str, self: Tensor, axes: tuple[int, ...] | None) -> None:
    shape = self._data.shape
    for ax in range(self._data.ndim) if axes is None else axes:
        if shape[ax] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {ax} to have non-zero size.")


def extremum(kit: Kit, name: str, fn_name: str, ufunc_name: str) -> tuple[Kernel, Kernel]:
    """The kernels of ``amax`` (``name``, over dims) and ``max`` (over everything), or of
    ``amin`` and ``min``: ``xp.<fn_name>``, on the fast path the ufunc ``xp.<ufunc_name>``'s
    reduction."""
    xp = kit.xp
    fn = getattr(xp, fn_name)
    ufunc_reduce = getattr(getattr(xp, ufunc_name, None), "reduce", None)
    fast = Fast(kit)
    ordered, quick = fast.ordered, fast.quick

    def reduce_fn(a: Any, axis: int | None, keepdim: bool) -> Any:
        return ufunc_reduce(a, axis, None, None, keepdim)  # type: ignore[misc]

    def general(self: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
        d = self._dtype
        no_complex(name, d)
        axes = wrap_dims(dim, self._data.ndim)
        nonempty_dims(name, self, axes)
        r = fn(kit.as_compute(self, d), axis=axes, keepdims=keepdim)
        return kit.wrap(r, d, self._device)

    slow = guard(name, general)

    @guarded
    def over_dims(self: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
        if self._dtype in ordered:
            a = self._data
            ax = _one_axis(dim, a.ndim)
            if ax is not None and a.shape[ax]:
                return quick(reduce_fn, self, ax, keepdim)
        return slow(self, dim, keepdim)  # type: ignore[no-any-return]

    def over_all(self: Tensor) -> Tensor:
        d = self._dtype
        no_complex(name[1:], d)
        if math.prod(self._data.shape) == 0:
            raise OpError(
                f"{name[1:]}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return kit.wrap(fn(kit.as_compute(self, d)), d, self._device)

    return over_dims, over_all


def aminmax(kit: Kit) -> Kernel:
    xp = kit.xp

    def aminmax(
        self: Tensor, *, dim: int | None = None, keepdim: bool = False
    ) -> tuple[Tensor, Tensor]:
        d = self._dtype
        if d.kind == "c":
            raise NotImplementedError(
                f"aten::aminmax: \"aminmax_cpu\" not implemented for '{torch_name(d)}'"
            )
        a = kit.as_compute(self, d)
        if dim is None:
            if math.prod(a.shape) == 0:
                raise OpError(
                    "aminmax(): cannot compute aminmax over an empty dimension as the operation "
                    "has no identity."
                )
            axes: tuple[int, ...] | None = None
        else:
            ax = wrap_dim(dim, a.ndim)
            if a.ndim and a.shape[ax] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {ax} to have non-zero size.")
            axes = (ax,) if a.ndim else ()
        lo, hi = xp.min(a, axis=axes, keepdims=keepdim), xp.max(a, axis=axes, keepdims=keepdim)
        return kit.wrap(lo, d, self._device), kit.wrap(hi, d, self._device)

    return aminmax


def with_indices(kit: Kit, name: str, arg_name: str) -> tuple[Kernel, Kernel]:
    """The kernels of ``max.dim`` (values and indices) and ``argmax`` (``name`` ``"max"``,
    ``xp.<arg_name>``), or of ``min.dim`` and ``argmin``."""
    xp = kit.xp
    arg = getattr(xp, arg_name)

    def values_and_indices(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        d = self._dtype
        no_complex(name, d)
        ax = wrap_dim(dim, self._data.ndim)
        a = kit.as_compute(self, d)
        if a.ndim == 0:
            a = xp.reshape(a, (1,))
            idx = xp.zeros((1,), dtype=kit.storage[_dt.int64])
            vals = a
        else:
            nonempty_dims(name, self, (ax,))
            # the standard's argmax takes numbers only (torch refuses bools): True > False
            idx = arg(xp.astype(a, xp.uint8) if d is _dt.bool else a, axis=ax, keepdims=True)
            vals = kit.take_along_axis(a, idx, axis=ax)
            if not keepdim:
                idx = xp.squeeze(idx, axis=ax)
                vals = xp.squeeze(vals, axis=ax)
        if self._data.ndim == 0:
            idx = xp.reshape(idx, ())
            vals = xp.reshape(vals, ())
        device = self._device
        return kit.wrap(vals, d, device), kit.wrap(idx, _dt.int64, device)

    def indices(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
        d = self._dtype
        no_complex("arg" + name, d)
        if d is _dt.bool:
            raise OpError(f"arg{name}(): does not support bool input")
        a = kit.as_compute(self, d)
        device = self._device
        if dim is None:
            if math.prod(a.shape) == 0:
                raise IndexError(
                    f"arg{name}(): Expected reduction dim to be specified for input.numel() == 0."
                )
            r = arg(xp.reshape(a, (-1,)))
            if keepdim:
                r = xp.reshape(xp.asarray(r), (1,) * a.ndim)
            return kit.wrap(r, _dt.int64, device)
        ax = wrap_dim(dim, a.ndim)
        if a.ndim == 0:
            return kit.wrap(xp.zeros((), dtype=kit.storage[_dt.int64]), _dt.int64, device)
        nonempty_dims("arg" + name, self, (ax,))
        return kit.wrap(arg(a, axis=ax, keepdims=keepdim), _dt.int64, device)

    return values_and_indices, indices


# --- comparisons of whole tensors -------------------------------------------------------------


def comparisons(kit: Kit) -> tuple[Kernel, Kernel, Kernel]:
    """The kernels of ``isclose``, ``allclose`` (on ``isclose``) and ``equal``."""
    xp = kit.xp

    def isclose(
        self: Tensor,
        other: Tensor,
        rtol: float = 1e-05,
        atol: float = 1e-08,
        equal_nan: bool = False,
    ) -> Tensor:
        if self._dtype is not other._dtype:
            raise OpError(f"{torch_name(self._dtype)} did not match {torch_name(other._dtype)}")
        if rtol < 0:
            raise OpError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
        if atol < 0:
            raise OpError(f"atol must be greater than or equal to zero, but got {atol:g}")
        kit.same_device(self, other)
        check_broadcast(tuple(self._data.shape), tuple(other._data.shape))
        d = self._dtype
        a = kit.as_compute(self, d)
        b = kit.as_compute(other, d)
        if d.kind == "b":
            return kit.wrap(a == b, _dt.bool, self._device)
        with kit.quiet():
            if d.kind in "ui":  # |a - b| without wrapping around
                a, b = kit.cast(a, kit.compute[_dt.float64]), kit.cast(b, kit.compute[_dt.float64])
            close = a == b
            if d.kind in "fc":
                finite = xp.isfinite(a) & xp.isfinite(b)
                close = close | (finite & (xp.abs(a - b) <= atol + rtol * xp.abs(b)))
                if equal_nan:
                    close = close | ((a != a) & (b != b))
            else:
                close = close | (xp.abs(a - b) <= atol + rtol * xp.abs(b))
        return kit.wrap(close, _dt.bool, self._device)

    def allclose(
        self: Tensor,
        other: Tensor,
        rtol: float = 1e-05,
        atol: float = 1e-08,
        equal_nan: bool = False,
    ) -> bool:
        return bool(xp.all(isclose(self, other, rtol, atol, equal_nan)._data))

    def equal(self: Tensor, other: Tensor) -> bool:
        kit.same_device(self, other)
        if tuple(self._data.shape) != tuple(other._data.shape):
            return False
        d = kit.result_dtype(self, other)
        a = kit.operand(self, d, self._device)
        return bool(xp.all(a == kit.operand(other, d, other._device)))

    return isclose, allclose, equal


BUILDERS: dict[str, Any] = {"aminmax": aminmax}


def build(kit: Kit) -> Kernels:
    k: Kernels = {name: make(kit) for name, make in BUILDERS.items()}
    k["amax"], k["max"] = extremum(kit, "amax", "max", "maximum")
    k["amin"], k["min"] = extremum(kit, "amin", "min", "minimum")
    k["max.dim"], k["argmax"] = with_indices(kit, "max", "argmax")
    k["min.dim"], k["argmin"] = with_indices(kit, "min", "argmin")
    k["isclose"], k["allclose"], k["equal"] = comparisons(kit)
    return k
