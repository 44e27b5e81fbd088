"""The ``reductions`` family of the meta namespace: the reductions (sum, max, any, ...), argmax
and argmin, the running sums and products, and, as the kit files sorting with the reductions,
sort, argsort and the ``unique_*`` functions, whose shapes depend on values and
so read them (Note [Meta arrays] in _array.py).
"""

from __future__ import annotations

from typing import Any

from ._array import (
    MetaArray,
    _api,
    _as_dtype,
    _axes,
    _axis,
    _b,
    _f64,
    _i64,
    _reads,
    xp,
)


def _reduced(x: MetaArray, axis: Any, keepdims: bool) -> tuple[int, ...]:
    axes = _axes(axis, x.ndim)
    if keepdims:
        return tuple(1 if j in axes else n for j, n in enumerate(x.shape))
    return tuple(n for j, n in enumerate(x.shape) if j not in axes)


def _reduction(name: str, result: str) -> Any:
    def fn(
        x: MetaArray,
        /,
        *,
        axis: Any = None,
        dtype: Any = None,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> MetaArray:
        shape = _reduced(x, axis, keepdims)
        d = x.dtype
        if result == "b":
            d = _b
        elif result == "sum":  # numpy: small integers and bools sum in the default integer
            if dtype is not None:
                d = _as_dtype(dtype, d)
            elif d.kind in "biu" and d.itemsize < 8:  # (numpy's uint8 sums in uint64, which
                d = _i64  # tensorplug lacks; kernels cast the sum to the result dtype anyway)
        elif result == "mean":
            d = _as_dtype(dtype, _f64 if d.kind in "biu" else d)
        elif result == "extremum":
            if any(x.shape[a] == 0 for a in _axes(axis, x.ndim)) or x.size == 0 and axis is None:
                raise ValueError(
                    f"zero-size array to reduction operation {name} which has no identity"
                )
        elif result == "index":
            d = _i64
        out = MetaArray(shape, d)
        if result == "b":
            out.check = name == "all"  # Note [Meta arrays]
        elif result == "extremum" and d.kind in "iu" or name == "count_nonzero":
            out.check = 0  # an index bound, a count, that passes (Note [Meta arrays])
        return out

    fn.__name__ = name
    return fn


for _n, _r in (
    ("sum", "sum"), ("prod", "sum"), ("mean", "mean"), ("std", "mean"), ("var", "mean"),
    ("max", "extremum"), ("min", "extremum"), ("any", "b"), ("all", "b"),
    ("count_nonzero", "index"), ("argmax", "index"), ("argmin", "index"),
):  # fmt: skip
    setattr(xp, _n, _reduction(_n, _r))


def _argm(name: str) -> Any:
    def fn(x: MetaArray, /, *, axis: int | None = None, keepdims: bool = False) -> MetaArray:
        if x.size == 0 and (axis is None or x.shape[_axis(axis, x.ndim)] == 0):
            raise ValueError(f"attempt to get {name} of an empty sequence")
        return MetaArray(_reduced(x, axis, keepdims), _i64)

    fn.__name__ = name
    return fn


xp.argmax, xp.argmin = _argm("argmax"), _argm("argmin")


def _scan(name: str) -> Any:
    def fn(
        x: MetaArray,
        /,
        *,
        axis: int | None = None,
        dtype: Any = None,
        include_initial: bool = False,
    ) -> MetaArray:
        if axis is None:
            if x.ndim > 1:
                raise ValueError("axis must be given for arrays of more than one dimension")
            axis = 0
        shape = x.shape if x.ndim else (1,)
        ax = _axis(axis, len(shape))
        if include_initial:
            shape = shape[:ax] + (shape[ax] + 1,) + shape[ax + 1 :]
        d = _as_dtype(dtype, _i64 if x.dtype.kind in "bi" and x.dtype.itemsize < 8 else x.dtype)
        return MetaArray(shape, d)

    fn.__name__ = name
    return fn


xp.cumulative_sum, xp.cumulative_prod = _scan("cumulative_sum"), _scan("cumulative_prod")


@_api
def sort(
    x: MetaArray, /, *, axis: int = -1, descending: bool = False, stable: bool = True
) -> MetaArray:
    _axis(axis, x.ndim)
    return MetaArray(x.shape, x.dtype)


@_api
def argsort(
    x: MetaArray, /, *, axis: int = -1, descending: bool = False, stable: bool = True
) -> MetaArray:
    _axis(axis, x.ndim)
    return MetaArray(x.shape, _i64)


for _n in ("unique_all", "unique_counts", "unique_inverse", "unique_values"):
    setattr(xp, _n, _reads(_n))


del _n, _r
