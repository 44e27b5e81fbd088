"""Samples and oracles of the ``reductions`` family: sums, statistics, extrema, norms, the
whole-tensor comparisons (isclose, allclose, equal), the scans, and sorting (sort, argsort,
topk, median, kthvalue, cummax/cummin, unique)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._core import (
    ALL,
    DT,
    FLOATS,
    INTS,
    LOWP,
    LOWP_TOL_LOOSE,
    NUMERIC,
    OpInfo,
    S,
    SampleInput,
    add,
    binary_samples,
    dtype_kwarg,
    fixed,
    fn,
    is_float,
    is_int,
    make,
    meth,
    np_dtype,
    promoted,
    same,
    sum_rule,
)

# --- reductions -------------------------------------------------------------------------------


def _axis(dim: Any) -> Any:
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(dim) if dim else None  # PyTorch: dim=[] reduces everything
    return dim


def _np_dtype_kw(dtype: Any) -> Any:
    return None if dtype is None else dtype


def _full_reduce_samples(
    *, empty: bool = True, low: float | None = None, high: float | None = None
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield S("2d", make((3, 4), d, rng, low, high))
        yield S("0dim", make((), d, rng, low, high))
        yield S("3d", make((2, 3, 4), d, rng, low, high))
        if empty:
            yield S("empty", make((0,), d, rng, low, high))
            yield S("empty_2d", make((2, 0), d, rng, low, high))

    return gen


def _dim_reduce_samples(
    *,
    empty: bool = True,
    low: float | None = None,
    high: float | None = None,
    none_dim: bool = True,
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = lambda shape: make(shape, d, rng, low, high)  # noqa: E731
        yield S("dim1", x((3, 4)), 1)
        yield S("dim0_keepdim", x((3, 4)), 0, True)
        yield S("neg_dim", x((2, 3, 4)), -1)
        yield S("dim_list", x((2, 3, 4)), [0, 2])
        yield S("dim_list_neg_keepdim", x((2, 3, 4)), [-1, 0], keepdim=True)
        yield S("0dim", x(()), 0)
        yield S("dim_kw", x((3, 4)), dim=-2, keepdim=False)
        if none_dim:
            yield S("dim_none", x((3, 4)), None)
        if empty:
            yield S("empty_reduced", x((2, 0)), 1)
            yield S("empty_kept", x((0, 3)), 1)

    return gen


def _with_dtype_kw(
    gen: Callable[[str, np.random.Generator], Iterator[SampleInput]], target: str = "float64"
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def out(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield from gen(d, rng)
        for s in list(gen(d, rng))[:2]:
            yield SampleInput(s.args, {**s.kwargs, "dtype": DT(target)}, f"{s.name}_dtype_{target}")

    return out


def _ref_sum(x: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    x = np.asarray(x)
    if dtype is None and x.dtype.kind in "bui":
        dtype = np.int64
    return np.sum(x, axis=_axis(dim), keepdims=keepdim, dtype=dtype)


def _ref_mean(x: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    x = np.asarray(x, dtype=np.float64)
    axis = None if x.ndim == 0 else _axis(dim)  # a 0-dim tensor accepts dim 0 / -1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.mean(x, axis=axis, keepdims=keepdim)


add(
    OpInfo(
        "sum",
        op=fn("sum"),
        method=meth("sum"),
        sample_inputs=_with_dtype_kw(_full_reduce_samples()),
        ref=_ref_sum,
        dtypes=ALL + LOWP,
        result_dtype=sum_rule,
        tol=LOWP_TOL_LOOSE,
    )
)
add(
    OpInfo(
        "sum.dim_IntList",
        op=fn("sum"),
        method=meth("sum"),
        sample_inputs=_with_dtype_kw(_dim_reduce_samples()),
        ref=_ref_sum,
        dtypes=ALL + LOWP,
        result_dtype=sum_rule,
        tol=LOWP_TOL_LOOSE,
    )
)


def _mean_full_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    if is_int(d):  # integer means need an explicit floating dtype in PyTorch
        yield S("int_dtype_float32", make((3, 4), d, rng), dtype=DT("float32"))
        return
    yield from _with_dtype_kw(_full_reduce_samples())(d, rng)


def _mean_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    if is_int(d):
        yield S("int_dtype_float64", make((3, 4), d, rng), 1, dtype=DT("float64"))
        return
    yield from _with_dtype_kw(_dim_reduce_samples())(d, rng)


add(
    OpInfo(
        "mean",
        op=fn("mean"),
        method=meth("mean"),
        sample_inputs=_mean_full_samples,
        ref=_ref_mean,
        dtypes=FLOATS + INTS + LOWP,
        result_dtype=dtype_kwarg(same),
        tol=LOWP_TOL_LOOSE,
    )
)
add(
    OpInfo(
        "mean.dim",
        op=fn("mean"),
        method=meth("mean"),
        sample_inputs=_mean_dim_samples,
        ref=_ref_mean,
        dtypes=FLOATS + INTS + LOWP,
        result_dtype=dtype_kwarg(same),
        tol=LOWP_TOL_LOOSE,
    )
)


def _ref_var(x: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False) -> Any:
    ddof = 1 if correction is None else correction
    return np.var(np.asarray(x, np.float64), axis=_axis(dim), ddof=ddof, keepdims=keepdim)


def _var_correction_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng)  # noqa: E731
    yield S("all", x((3, 4)))
    yield S("dim1", x((3, 4)), 1)
    yield S("correction0", x((3, 4)), 1, correction=0)
    yield S("dim_list_keepdim", x((2, 3, 4)), [0, 2], keepdim=True)
    yield S("dim_none_correction2", x((3, 4)), None, correction=2)
    yield S("neg_dim_float_correction", x((3, 4)), -1, correction=0.5)
    yield S("dim_kw", x((5, 3)), dim=0)


add(
    OpInfo(
        "var.correction",
        op=fn("var"),
        method=meth("var"),
        sample_inputs=_var_correction_samples,
        ref=_ref_var,
        dtypes=FLOATS,
    )
)
add(
    OpInfo(
        "std.correction",
        op=fn("std"),
        method=meth("std"),
        sample_inputs=_var_correction_samples,
        ref=lambda *a, **k: np.sqrt(_ref_var(*a, **k)),
        dtypes=FLOATS,
    )
)


def _var_unbiased_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("unbiased", make((3, 4), d, rng), unbiased=True)
    yield S("biased", make((3, 4), d, rng), unbiased=False)
    yield S("biased_0dim", make((), d, rng), unbiased=False)
    yield S("unbiased_1d", make((7,), d, rng), unbiased=True)


def _ref_var_unbiased(x: Any, unbiased: bool = True) -> Any:
    return np.var(np.asarray(x, np.float64), ddof=1 if unbiased else 0)


add(
    OpInfo(
        "var",
        op=fn("var"),
        method=meth("var"),
        sample_inputs=_var_unbiased_samples,
        ref=_ref_var_unbiased,
        dtypes=FLOATS,
    )
)
add(
    OpInfo(
        "std",
        op=fn("std"),
        method=meth("std"),
        sample_inputs=_var_unbiased_samples,
        ref=lambda x, unbiased=True: np.sqrt(_ref_var_unbiased(x, unbiased)),
        dtypes=FLOATS,
    )
)


def _ref_prod(x: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    x = np.asarray(x)
    if dtype is None and x.dtype.kind in "bui":
        dtype = np.int64
    return np.prod(x, axis=dim, keepdims=keepdim, dtype=dtype)


def _prod_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    lo, hi = (-2, 2) if not is_float(d) else (0.5, 1.5)
    x = lambda shape: make(shape, d, rng, lo, hi)  # noqa: E731
    yield S("dim1", x((3, 4)), 1)
    yield S("dim0_keepdim", x((3, 4)), 0, True)
    yield S("neg_dim", x((2, 3, 4)), -2)
    yield S("0dim", x(()), 0)
    yield S("empty_reduced", x((2, 0)), 1)
    yield S("dtype_float64", x((3, 4)), 1, dtype=DT("float64"))


add(
    OpInfo(
        "prod",
        op=fn("prod"),
        method=meth("prod"),
        sample_inputs=_with_dtype_kw(_full_reduce_samples(low=-2, high=2)),
        ref=_ref_prod,
        dtypes=ALL,
        result_dtype=sum_rule,
    )
)
add(
    OpInfo(
        "prod.dim_int",
        op=fn("prod"),
        method=meth("prod"),
        sample_inputs=_prod_dim_samples,
        ref=_ref_prod,
        dtypes=ALL,
        result_dtype=sum_rule,
    )
)


def _amax_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng)  # noqa: E731
    yield S("all_default", x((3, 4)))
    yield S("dim1", x((3, 4)), 1)
    yield S("dim_list_keepdim", x((2, 3, 4)), [0, -1], True)
    yield S("neg_dim_kw", x((2, 3, 4)), dim=-2)
    yield S("0dim", x(()))
    yield S("empty_kept", x((0, 3)), 1)


for _name, _np in (("amax", np.max), ("amin", np.min)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_amax_samples,
            ref=(
                lambda f: lambda x, dim=(), keepdim=False: f(x, axis=_axis(dim), keepdims=keepdim)
            )(_np),
            dtypes=ALL + LOWP,
        )
    )


def _max_all_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((3, 4), d, rng))
    yield S("0dim", make((), d, rng))
    yield S("1d", make((7,), d, rng))


def _max_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # small integers: ties are common, and PyTorch returns the first maximal index
    x = lambda shape: make(shape, d, rng, -2, 2)  # noqa: E731
    yield S("dim1", x((3, 4)), 1)
    yield S("dim0_keepdim", x((3, 4)), 0, True)
    yield S("neg_dim", x((2, 3, 4)), -1)
    yield S("keepdim_kw", x((2, 3, 4)), dim=1, keepdim=True)
    yield S("0dim", x(()), 0)
    yield S("empty_kept", x((0, 3)), 1)


for _name, _np, _arg in (("max", np.max, np.argmax), ("min", np.min, np.argmin)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_max_all_samples,
            ref=_np,
            dtypes=ALL + LOWP,
        )
    )
    add(
        OpInfo(
            f"{_name}.dim",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_max_dim_samples,
            ref=(
                lambda f, g: (
                    lambda x, dim, keepdim=False: (
                        f(x, axis=dim, keepdims=keepdim),
                        g(x, axis=dim, keepdims=keepdim),
                    )
                )
            )(_np, _arg),
            dtypes=ALL,
            result_dtype=lambda s, d: (d, "int64"),
            returns_names=("values", "indices"),
        )
    )


def _argmax_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -2, 2)  # noqa: E731
    yield S("flat", x((3, 4)))
    yield S("dim1", x((3, 4)), 1)
    yield S("dim0_keepdim", x((3, 4)), 0, True)
    yield S("neg_dim_kw", x((2, 3, 4)), dim=-1)
    yield S("0dim", x(()))
    yield S("empty_kept", x((0, 3)), 1)


def _ref_argmax(f: Callable[..., Any]) -> Callable[..., Any]:
    def ref(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        x = np.asarray(x)
        if dim is None:
            return np.asarray(f(x.reshape(-1)))
        return f(x, axis=dim, keepdims=keepdim)

    return ref


for _name, _arg in (("argmax", np.argmax), ("argmin", np.argmin)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_argmax_samples,
            ref=_ref_argmax(_arg),
            dtypes=NUMERIC,
            result_dtype=fixed("int64"),
        )
    )


def _ref_logsumexp(x: Any, dim: Any, keepdim: bool = False) -> Any:
    x = np.asarray(x, np.float64)
    axis = _axis(dim)
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=axis if axis is not None else None)


def _logsumexp_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim1", make((3, 4), d, rng), 1)
    yield S("dim_list_keepdim", make((2, 3, 4), d, rng), [0, 2], True)
    yield S("neg_dim", make((2, 3, 4), d, rng), -1)
    yield S("large_values", make((2, 5), d, rng, 50, 60), 1)
    yield S("0dim", make((), d, rng), 0)


add(
    OpInfo(
        "logsumexp",
        op=fn("logsumexp"),
        method=meth("logsumexp"),
        sample_inputs=_logsumexp_samples,
        ref=_ref_logsumexp,
        dtypes=FLOATS,
    )
)


# --- var_mean / std_mean, median, any / all, count_nonzero ---------------------------------


for _name, _f in (("var_mean", lambda v: v), ("std_mean", np.sqrt)):

    def _ref_var_mean(
        x: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False, f: Any = _f
    ) -> Any:
        return (
            f(_ref_var(x, dim, correction=correction, keepdim=keepdim)),
            np.mean(np.asarray(x, np.float64), axis=_axis(dim), keepdims=keepdim),
        )

    add(
        OpInfo(
            f"{_name}.correction",
            op=fn(_name),
            sample_inputs=_var_correction_samples,
            ref=_ref_var_mean,
            dtypes=FLOATS,
            result_dtype=lambda s, d: (d, d),
        )
    )
    add(
        OpInfo(
            _name,
            op=fn(_name),
            sample_inputs=_var_unbiased_samples,
            ref=(
                lambda f: (
                    lambda x, unbiased=True: (
                        f(_ref_var_unbiased(x, unbiased)),
                        np.mean(np.asarray(x, np.float64)),
                    )
                )
            )(_f),
            dtypes=FLOATS,
            result_dtype=lambda s, d: (d, d),
        )
    )


def _ref_median(x: Any) -> Any:
    x = np.asarray(x).reshape(-1)
    if x.size == 0:  # NaN, as C++ converts it to the dtype on x86
        return np.asarray({"int64": -(2**63)}.get(x.dtype.name, np.nan))
    if x.dtype.kind == "f" and np.isnan(x).any():
        return np.asarray(np.nan)
    return np.sort(x)[(x.size - 1) // 2]  # the lower median


def _ref_median_dim(x: Any, dim: int, keepdim: bool = False) -> Any:
    """The lower median and its index in a stable sort; a NaN row gives its first NaN."""
    x = np.asarray(x)
    if x.ndim == 0:
        return x, np.asarray(0)
    n = x.shape[dim]
    idx = np.take(np.argsort(x, axis=dim, kind="stable"), [(n - 1) // 2], axis=dim)
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        first_nan = np.expand_dims(np.argmax(nan, axis=dim), dim)
        idx = np.where(np.any(nan, axis=dim, keepdims=True), first_nan, idx)
    vals = np.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        idx, vals = np.squeeze(idx, axis=dim), np.squeeze(vals, axis=dim)
    return vals, idx


def _median_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -3, 3)  # noqa: E731 - ties in ints
    yield S("2d", x((3, 4)))
    yield S("odd", x((7,)))
    yield S("0dim", x(()))
    yield S("empty", x((0,)))
    if is_float(d) and d not in LOWP:
        yield S("nan", np.array([1.0, np.nan, -2.0, np.nan], dtype=d))


def _median_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -3, 3)  # noqa: E731
    yield S("dim1", x((3, 4)), 1)
    yield S("dim0_keepdim", x((5, 3)), 0, True)
    yield S("neg_dim", x((2, 3, 5)), -1)
    yield S("0dim", x(()), 0)
    yield S("empty_kept", x((0, 3)), 1)
    if is_float(d) and d not in LOWP:
        yield S("nan", np.array([[1.0, np.nan, 2.0, np.nan], [3.0, 1.0, 2.0, 0.0]], dtype=d), 1)


add(
    OpInfo(
        "median",
        op=fn("median"),
        method=meth("median"),
        sample_inputs=_median_samples,
        ref=_ref_median,
        dtypes=NUMERIC + LOWP,
    )
)
add(
    OpInfo(
        "median.dim",
        op=fn("median"),
        method=meth("median"),
        sample_inputs=_median_dim_samples,
        ref=_ref_median_dim,
        dtypes=NUMERIC,
        result_dtype=lambda s, d: (d, "int64"),
        returns_names=("values", "indices"),
    )
)


def _aminmax_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -3, 3)  # noqa: E731 - ties in ints
    yield S("all", x((3, 4)))
    yield S("all_keepdim", x((2, 3)), keepdim=True)
    yield S("dim1", x((3, 4)), dim=1)
    yield S("neg_dim_keepdim", x((2, 3, 4)), dim=-2, keepdim=True)
    yield S("0dim", x(()))
    yield S("0dim_dim", x(()), dim=0)
    yield S("empty_other_dim", x((0, 3)), dim=1)
    if is_float(d) and d not in LOWP:
        yield S("nan", np.array([[1.0, np.nan, 2.0], [3.0, 1.0, 2.0]], dtype=d), dim=1)


def _ref_aminmax(x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
    x = np.asarray(x)
    axis = None if dim is None or x.ndim == 0 else dim
    lo, hi = np.min(x, axis=axis, keepdims=keepdim), np.max(x, axis=axis, keepdims=keepdim)
    if dim is None and keepdim:
        lo, hi = lo.reshape((1,) * x.ndim), hi.reshape((1,) * x.ndim)
    return lo, hi


add(
    OpInfo(
        "aminmax",
        op=fn("aminmax"),
        method=meth("aminmax"),
        sample_inputs=_aminmax_samples,
        ref=_ref_aminmax,
        dtypes=ALL,
        result_dtype=lambda s, d: (d, d),
        returns_names=("min", "max"),
    )
)


def _ref_kthvalue(x: Any, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The k-th smallest (NaNs last) and its index: among tied elements the one ATen's
    quick_select_template leaves at position k - 1, as PyTorch's CPU kernel returns."""
    from ...array_backend._reductions._sorting import quick_select_index

    x = np.asarray(x)
    if x.ndim == 0:
        return x, np.asarray(0)
    moved = np.moveaxis(x, dim, -1)
    rows = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, 1)
    picks = [quick_select_index(r.tolist(), k - 1) for r in rows] if moved.size else []
    idx = np.asarray(picks, dtype=np.int64).reshape((*moved.shape[:-1], 1))
    idx = np.moveaxis(idx, -1, dim)
    vals = np.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        idx, vals = np.squeeze(idx, axis=dim), np.squeeze(vals, axis=dim)
    return vals, idx


def _kthvalue_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -3, 3)  # noqa: E731
    yield S("dim1", x((3, 4)), 2, 1)
    yield S("dim0_keepdim", x((5, 3)), 5, 0, True)
    yield S("default_dim", x((2, 3, 5)), 1)
    yield S("0dim", x(()), 1)
    yield S("empty_kept", x((0, 3)), 1, 1)
    if is_float(d) and d not in LOWP:
        yield S("nan", np.array([[1.0, np.nan, 2.0], [3.0, 1.0, 2.0]], dtype=d), 3, 1)


add(
    OpInfo(
        "kthvalue",
        op=fn("kthvalue"),
        method=meth("kthvalue"),
        sample_inputs=_kthvalue_samples,
        ref=_ref_kthvalue,
        dtypes=NUMERIC,
        result_dtype=lambda s, d: (d, "int64"),
        returns_names=("values", "indices"),
    )
)


def _ref_cumulative(pick: Any) -> Any:
    """cummax / cummin by a loop: a tie or a NaN takes the later index, as PyTorch."""

    def ref(x: Any, dim: int) -> Any:
        x = np.asarray(x)
        if x.ndim == 0:
            return x.copy(), np.asarray(0)
        a = np.moveaxis(x, dim, -1)
        vals, idx = a.copy(), np.zeros(a.shape, np.int64)
        for row in np.ndindex(a.shape[:-1]):
            for j in range(a.shape[-1]):
                v = a[row + (j,)]
                if (
                    j == 0
                    or v != v
                    or (
                        vals[row + (j - 1,)] == vals[row + (j - 1,)]
                        and pick(v, vals[row + (j - 1,)])
                    )
                ):
                    vals[row + (j,)], idx[row + (j,)] = v, j
                else:
                    vals[row + (j,)], idx[row + (j,)] = vals[row + (j - 1,)], idx[row + (j - 1,)]
        return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)

    return ref


def _cumulative_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -3, 3)  # noqa: E731 - ties in ints
    yield S("dim1", x((3, 5)), 1)
    yield S("neg_dim", x((2, 3, 4)), -2)
    yield S("0dim", x(()), 0)
    yield S("empty", x((0, 3)), 0)
    if is_float(d) and d not in LOWP:
        yield S("nan", np.array([1.0, np.nan, 3.0, np.nan, 0.0], dtype=d), 0)


for _name, _pick in (("cummax", np.greater_equal), ("cummin", np.less_equal)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_cumulative_samples,
            ref=_ref_cumulative(_pick),
            dtypes=NUMERIC,
            result_dtype=lambda s, d: (d, "int64"),
            returns_names=("values", "indices"),
        )
    )


def _ref_unique2(
    x: Any,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,  # noqa: A002
) -> Any:
    """np.unique, each NaN a value of its own; inverse of the input's shape."""
    x = np.asarray(x)
    u, inv, cnt = np.unique(x.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
    none = np.zeros((0,), np.int64)
    return (
        u,
        inv.reshape(x.shape).astype(np.int64) if return_inverse else none,
        cnt.astype(np.int64) if return_counts else none,
    )


def _unique2_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -2, 2)  # noqa: E731 - repeats
    yield S("plain", x((7,)))
    yield S("2d_inverse_counts", x((3, 4)), True, True, True)
    yield S("unsorted_counts", x((5,)), False, False, True)
    yield S("0dim", x(()), True, True, True)
    yield S("empty", x((0, 2)), True, True, True)
    if is_float(d) and d not in LOWP:
        yield S("nan", np.array([2.0, np.nan, 1.0, np.nan], dtype=d), True, True, True)


def _ref_unique_dim(
    x: Any,
    dim: int,
    sorted: bool = True,
    return_inverse: bool = False,  # noqa: A002
    return_counts: bool = False,
) -> Any:
    x = np.asarray(x)
    none = np.zeros((0,), np.int64)
    if x.size == 0:
        return x.copy(), none, none
    u, inv, cnt = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
    return (
        u,
        inv.reshape(-1).astype(np.int64) if return_inverse else none,
        cnt.astype(np.int64) if return_counts else none,
    )


def _unique_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, 0, 1)  # noqa: E731 - repeated rows
    yield S("rows", x((6, 2)), 0, True, True, True)
    yield S("cols", x((2, 6)), 1)
    yield S("neg_dim_3d", x((2, 5, 2)), -2, True, False, True)
    yield S("empty_selected", x((0, 3)), 0, True, True, True)


add(
    OpInfo(
        "_unique2",
        op=fn("_unique2"),
        sample_inputs=_unique2_samples,
        ref=_ref_unique2,
        dtypes=ALL,
        result_dtype=lambda s, d: (d, "int64", "int64"),
    )
)
add(
    OpInfo(
        "unique_dim",
        op=fn("unique_dim"),
        sample_inputs=_unique_dim_samples,
        ref=_ref_unique_dim,
        dtypes=ALL,
        result_dtype=lambda s, d: (d, "int64", "int64"),
    )
)


def _logical_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, 0, 1)  # noqa: E731 - zeros are common
    yield S("2d", x((3, 4)))
    yield S("0dim", x(()))
    yield S("empty", x((0,)))
    yield S("zeros", np.zeros((2, 3), dtype=np_dtype(d)))


def _logical_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, 0, 1)  # noqa: E731
    yield S("dim1", x((3, 4)), 1)
    yield S("neg_dim_keepdim", x((2, 3, 4)), -1, True)
    yield S("0dim", x(()), 0)
    yield S("empty_reduced", x((2, 0)), 1)


def _logical_dims_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, 0, 1)  # noqa: E731
    yield S("dims", x((2, 3, 4)), [0, 2])
    yield S("dims_keepdim", x((2, 3, 4)), [-1], True)
    yield S("dim_none", x((3, 4)), None)
    yield S("no_dims", x((3, 4)), [])
    yield S("empty_kept", x((0, 3)), [1])


def _ref_logical(f: Callable[..., Any]) -> Callable[..., Any]:
    def ref(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        x = np.asarray(x) != 0
        if x.ndim == 0:
            return x
        if isinstance(dim, list) and not dim:  # dim=[] reduces nothing, as PyTorch
            return x
        return f(x, axis=_axis(dim), keepdims=keepdim)

    return ref


for _name, _np in (("any", np.any), ("all", np.all)):
    for _overload, _samples in (
        ("", _logical_samples),
        (".dim", _logical_dim_samples),
        (".dims", _logical_dims_samples),
    ):
        add(
            OpInfo(
                _name + _overload,
                op=fn(_name),
                method=meth(_name),
                sample_inputs=_samples,
                ref=_ref_logical(_np),
                dtypes=ALL,
                result_dtype=fixed("bool"),
            )
        )


def _ref_count_nonzero(x: Any, dim: Any = None) -> Any:
    x = np.asarray(x)
    axis = None if x.ndim == 0 else _axis(dim)
    return np.asarray(np.count_nonzero(x, axis=axis), dtype=np.int64)


def _count_nonzero_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -1, 1)  # noqa: E731
    yield S("all", x((3, 4)))
    yield S("dim1", x((3, 4)), 1)
    yield S("neg_dim", x((2, 3, 4)), -2)
    yield S("0dim", x(()))
    yield S("empty", x((0, 3)), 0)


def _count_nonzero_list_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -1, 1)  # noqa: E731
    yield S("dims", x((2, 3, 4)), [0, 2])
    yield S("one_dim", x((3, 4)), [-1])
    yield S("no_dims", x((3, 4)), [])
    yield S("empty", x((2, 0)), [1])


add(
    OpInfo(
        "count_nonzero",
        op=fn("count_nonzero"),
        method=meth("count_nonzero"),
        sample_inputs=_count_nonzero_samples,
        ref=_ref_count_nonzero,
        dtypes=ALL,
        result_dtype=fixed("int64"),
    )
)
add(
    OpInfo(
        "count_nonzero.dim_IntList",
        op=fn("count_nonzero"),
        method=meth("count_nonzero"),
        sample_inputs=_count_nonzero_list_samples,
        ref=_ref_count_nonzero,
        dtypes=ALL,
        result_dtype=fixed("int64"),
    )
)

# --- norms ------------------------------------------------------------------------------------


def _ref_vector_norm(
    x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Any:
    a = np.abs(np.asarray(x, np.float64))
    axis = None if a.ndim == 0 else _axis(dim)
    p = float(ord)
    with np.errstate(divide="ignore"):
        if p == np.inf:
            return np.max(a, axis=axis, keepdims=keepdim)
        if p == -np.inf:
            return np.min(a, axis=axis, keepdims=keepdim)
        if p == 0:
            return np.sum(a != 0, axis=axis, keepdims=keepdim).astype(np.float64)
        return np.sum(a**p, axis=axis, keepdims=keepdim) ** (1 / p)


def _spread(shape: tuple[int, ...], d: str, rng: np.random.Generator) -> np.ndarray:
    """Nonzero values of distinct magnitudes: inf norms have one maximal element, no ties."""
    n = int(np.prod(shape))
    mags = (rng.permutation(n) + 1) * 0.25
    return (mags * rng.choice([-1.0, 1.0], size=n)).reshape(shape).astype(np_dtype(d))


def _norm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: _spread(shape, d, rng)  # noqa: E731
    yield S("default", x((3, 4)))
    yield S("p1", x((3, 4)), 1)
    yield S("p3", x((2, 3)), 3)
    yield S("p_half", x((5,)), 0.5)
    yield S("inf", x((3, 4)), float("inf"))
    yield S("neg_inf", x((3, 4)), float("-inf"))
    yield S("p0", x((3, 4)), 0)
    yield S("0dim", x(()), 2)
    yield S("empty", x((0,)))


def _norm_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: _spread(shape, d, rng)  # noqa: E731
    yield S("dim1", x((3, 4)), 2, 1)
    yield S("p1_keepdim", x((3, 4)), 1, 0, True)
    yield S("inf_dim_list", x((2, 3, 4)), float("inf"), [0, 2])
    yield S("neg_inf_neg_dim", x((2, 3, 4)), float("-inf"), -1)
    yield S("p_none", x((3, 4)), None, 1)
    yield S("p3_dim_kw", x((3, 4)), 3, dim=-1, keepdim=True)
    yield S("dim_only_kw", x((3, 4)), dim=0)
    yield S("keepdim_only_kw", x((3, 4)), keepdim=True)
    yield S("empty_kept", x((0, 3)), 2, 1)
    yield S("zero_row", np.zeros((2, 3), dtype=np_dtype(d)), 2, 1)


def _vector_norm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _norm_samples(d, rng)
    x = lambda shape: _spread(shape, d, rng)  # noqa: E731
    yield S("dim_list", x((2, 3, 4)), 2, [0, -1])
    yield S("ord_kw_keepdim", x((3, 4)), ord=1.5, dim=1, keepdim=True)
    yield S("zero_row_p3", np.zeros((2, 3), dtype=np_dtype(d)), 3, 1)
    if d == "float32":
        yield S("dtype_float64", x((3, 4)), 2, 1, dtype=DT("float64"))


def _ref_norm_dim(x: Any, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Any:
    return _ref_vector_norm(x, 2 if p is None else p, dim, keepdim)


add(
    OpInfo(
        "norm.Scalar",
        op=fn("norm"),
        method=meth("norm"),
        sample_inputs=_norm_samples,
        ref=_ref_vector_norm,
        dtypes=FLOATS + LOWP,
        tol=LOWP_TOL_LOOSE,
    )
)
add(
    OpInfo(
        "norm.ScalarOpt_dim",
        op=fn("norm"),
        method=meth("norm"),
        sample_inputs=_norm_dim_samples,
        ref=_ref_norm_dim,
        dtypes=FLOATS,
    )
)
add(
    OpInfo(
        "linalg_vector_norm",
        op=fn("linalg.vector_norm"),
        sample_inputs=_vector_norm_samples,
        ref=_ref_vector_norm,
        dtypes=FLOATS + LOWP,
        result_dtype=dtype_kwarg(same),
        tol=LOWP_TOL_LOOSE,
    )
)

# --- allclose, equal: Python bools --------------------------------------------------------------


def _compare_bool(got: Any, expected: Any, s: SampleInput, d: str) -> None:
    assert type(got) is bool, f"expected a Python bool, got {type(got).__name__}"
    assert got == bool(expected), f"{got} != {bool(expected)}"


def _allclose_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a = make((3, 4), d, rng)
    yield S("same", a, a.copy())
    if is_float(d):
        yield S("close", a, (a * (1 + 1e-7)).astype(a.dtype))
        yield S("far", a, (a + 1).astype(a.dtype))
        yield S("atol", a, (a + 0.05).astype(a.dtype), atol=0.1)
        yield S("rtol_kw", a, (a * 1.01).astype(a.dtype), rtol=0.02)
        nan = np.array([1.0, np.nan], dtype=d)
        yield S("nan", nan, nan.copy())
        yield S("equal_nan", nan, nan.copy(), equal_nan=True)
        inf = np.array([np.inf, -np.inf], dtype=d)
        yield S("inf", inf, inf.copy())
    else:
        yield S("different", a, np.logical_not(a) if d == "bool" else a + 1)
    yield S("broadcast", a, a[:1].copy())
    yield S("empty", make((0,), d, rng), make((0,), d, rng))


def _ref_allclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "b":
        return bool(np.all(a == b))
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _equal_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a = make((3, 4), d, rng)
    yield S("same", a, a.copy())
    b = a.copy()
    b[1, 1] = not b[1, 1] if d == "bool" else b[1, 1] + 1
    yield S("one_differs", a, b)
    yield S("shape_differs", a, a[:1].copy())
    yield S("0dim", np.array(a[0, 0]), np.array(a[0, 0]))
    yield S("empty", make((0,), d, rng), make((0,), d, rng))
    if is_float(d):
        yield S("nan", np.array([np.nan], dtype=d), np.array([np.nan], dtype=d))
        yield S("other_dtype", a, a.astype(np.float64 if d == "float32" else np.float32))


def _ref_isclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Any:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "b":
        return a == b
    if a.dtype.kind in "iu":
        a, b = a.astype(np.float64), b.astype(np.float64)
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


add(
    OpInfo(
        "isclose",
        op=fn("isclose"),
        method=meth("isclose"),
        sample_inputs=_allclose_samples,
        ref=_ref_isclose,
        dtypes=ALL,
        result_dtype=fixed("bool"),
    )
)


def _ref_equal(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all(a == b))


add(
    OpInfo(
        "allclose",
        op=fn("allclose"),
        method=meth("allclose"),
        sample_inputs=_allclose_samples,
        ref=_ref_allclose,
        dtypes=ALL,
        compare=_compare_bool,
    )
)
add(
    OpInfo(
        "equal",
        op=fn("equal"),
        method=meth("equal"),
        sample_inputs=_equal_samples,
        ref=_ref_equal,
        dtypes=ALL,
        compare=_compare_bool,
    )
)

# --- integrals, gradients and covariance (issue 29) --------------------------------------------


def _float_of(d: str) -> str:
    return d if is_float(d) else "float32"


def _ref_trapezoid_x(y: Any, x: Any, *, dim: int = -1) -> Any:
    if y.shape[dim] == 0:
        return np.zeros(np.delete(np.array(y.shape), dim % y.ndim), y.dtype)
    return np.asarray(np.trapezoid(y.astype(np.float64), x.astype(np.float64), axis=dim))


def _ref_trapezoid_dx(y: Any, *, dx: Any = 1, dim: int = -1) -> Any:
    if y.shape[dim] == 0:
        return np.zeros(np.delete(np.array(y.shape), dim % y.ndim), y.dtype)
    return np.asarray(np.trapezoid(y.astype(np.float64), dx=dx, axis=dim))


def _trapezoid_x_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("1d", make((4,), d, rng), np.sort(make((4,), d, rng)))
    yield S("x_1d_dim0", make((3, 2), d, rng), make((3,), d, rng), dim=0)
    yield S("x_full", make((2, 3), d, rng), make((2, 3), d, rng))
    yield S("x_padded", make((2, 3), d, rng), make((3,), d, rng), dim=-1)
    yield S("empty", make((0, 2), d, rng), make((0,), d, rng), dim=0)


def _trapezoid_dx_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((5,), d, rng))
    yield S("dx_dim0", make((3, 2), d, rng), dx=2, dim=0)
    yield S("float_dx", make((2, 3), d, rng), dx=0.5)
    yield S("one_sample", make((1, 2), d, rng), dim=0)
    yield S("empty", make((2, 0), d, rng))


for _name in ("trapezoid", "trapz"):
    add(
        OpInfo(
            f"{_name}.x",
            op=fn(_name),
            sample_inputs=_trapezoid_x_samples,
            ref=_ref_trapezoid_x,
            dtypes=("float32", "int64"),
            result_dtype=lambda s, d: d if s.args[0].size == 0 else _float_of(d),
        )
    )
    add(
        OpInfo(
            f"{_name}.dx",
            op=fn(_name),
            sample_inputs=_trapezoid_dx_samples,
            ref=_ref_trapezoid_dx,
            dtypes=("float32", "int64"),
            result_dtype=lambda s, d: d if s.args[0].size == 0 else _float_of(d),
        )
    )


def _cumulative_trapezoid(y: Any, dx: Any, dim: int) -> Any:
    y = y.astype(np.float64)
    d = dim % y.ndim
    n = y.shape[d]
    left = np.take(y, range(0, max(n - 1, 0)), axis=d)
    right = np.take(y, range(1, n), axis=d)
    return np.cumsum(dx * (left + right) / 2.0, axis=d)


def _ref_cumulative_trapezoid_x(y: Any, x: Any, *, dim: int = -1) -> Any:
    d = dim % y.ndim
    if x.ndim == 1:
        shape = [1] * y.ndim
        shape[d] = -1
        x = x.reshape(shape)
    return _cumulative_trapezoid(y, np.diff(x.astype(np.float64), axis=d), dim)


add(
    OpInfo(
        "cumulative_trapezoid.x",
        op=fn("cumulative_trapezoid"),
        sample_inputs=_trapezoid_x_samples,
        ref=_ref_cumulative_trapezoid_x,
        dtypes=("float32", "int64"),
        result_dtype=lambda s, d: _float_of(d),
    )
)
add(
    OpInfo(
        "cumulative_trapezoid.dx",
        op=fn("cumulative_trapezoid"),
        sample_inputs=_trapezoid_dx_samples,
        ref=lambda y, *, dx=1, dim=-1: _cumulative_trapezoid(y, dx, dim),
        dtypes=("float32", "int64"),
        result_dtype=lambda s, d: _float_of(d),
    )
)


def _ref_gradient(x: Any, *, spacing: Any = None, dim: Any = None, edge_order: int = 1) -> Any:
    axes = list(range(x.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if spacing is None:
        spacing = [1.0] * len(axes)
    elif not isinstance(spacing, (list, tuple)):
        spacing = [spacing] * len(axes)
    spacing = [s.astype(np.float64) if isinstance(s, np.ndarray) else s for s in spacing]
    out = np.gradient(x.astype(np.float64), *spacing, axis=axes, edge_order=edge_order)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _gradient_samples(overload: str) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x2 = make((3, 4), d, rng)
        if overload == "scalarint":
            yield S("default", make((5,), d, rng))
            yield S("spacing_dim", x2, spacing=2.0, dim=1)
            yield S("edge2_all", x2, spacing=0.5, edge_order=2)
        elif overload == "scalararray":
            yield S("two_dims", x2, spacing=2, dim=[1, 0])
        elif overload == "array":
            yield S("one_dim", x2, dim=[-1], edge_order=2)
        elif overload == "scalarrayint":
            yield S("per_dim", x2, spacing=[1.5, 2.0])
            yield S("one", make((4,), d, rng), spacing=[3.0], dim=0, edge_order=2)
        elif overload == "scalarrayarray":
            yield S("per_dim", x2, spacing=[2.0], dim=[1])
        else:
            c0 = np.array([0.0, 1.0, 3.0], np.float64 if d == "float64" else np.float32)
            c1 = np.array([0.0, 0.5, 2.0, 2.5], c0.dtype)
            kw = {} if overload == "tensorarrayint" else {"dim": [0, 1]}
            yield S("coordinates", x2, spacing=[c0, c1], **kw)
            yield S("coordinates_edge2", x2, spacing=[c0, c1], edge_order=2, **kw)

    return samples


for _overload in (
    "scalarint",
    "scalararray",
    "array",
    "scalarrayint",
    "scalarrayarray",
    "tensorarrayint",
    "tensorarray",
):
    add(
        OpInfo(
            f"gradient.{_overload}",
            op=fn("gradient"),
            sample_inputs=_gradient_samples(_overload),
            ref=_ref_gradient,
            dtypes=("float32",) if _overload.startswith("tensor") else ("float32", "int64"),
            result_dtype=lambda s, d: _float_of(d),
        )
    )


def _ref_cov(x: Any, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
    x = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.cov(x, ddof=correction, fweights=fweights, aweights=aweights))


def _cov_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((2, 5), d, rng))
    yield S("1d", make((4,), d, rng))
    yield S("correction0", make((3, 4), d, rng), correction=0)
    yield S("fweights", make((2, 4), d, rng), fweights=np.array([1, 2, 0, 3], np.int64))
    yield S("aweights", make((2, 3), d, rng), aweights=np.array([0.5, 1.0, 2.0], np.float32))
    yield S(
        "both",
        make((2, 3), d, rng),
        correction=2,
        fweights=np.array([1, 2, 1], np.int64),
        aweights=np.array([0.5, 1.0, 2.0], np.float32),
    )


add(
    OpInfo(
        "cov",
        op=fn("cov"),
        method=meth("cov"),
        sample_inputs=_cov_samples,
        ref=_ref_cov,
        dtypes=("float32", "int64"),
        result_dtype=lambda s, d: _float_of(d),
        tol={"float32": (1e-4, 1e-5)},
    )
)


def _corrcoef_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((3, 5), d, rng))
    yield S("1d", make((4,), d, rng))


add(
    OpInfo(
        "corrcoef",
        op=fn("corrcoef"),
        method=meth("corrcoef"),
        sample_inputs=_corrcoef_samples,
        ref=lambda x: np.clip(np.corrcoef(x.astype(np.float64)), -1, 1),
        dtypes=("float32", "int64"),
        result_dtype=lambda s, d: _float_of(d),
        tol={"float32": (1e-4, 1e-5)},
    )
)


# --- counting: bincount, histograms, isin, unique_consecutive (issue 29) -----------------------


def _bincount_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("plain", rng.integers(0, 5, size=(6,)).astype(np.int64))
    yield S("minlength", np.array([1, 1, 0], np.int64), minlength=5)
    yield S("weights_f32", np.array([2, 0, 2], np.int64), np.array([0.5, 1.0, 2.0], np.float32))
    yield S("weights_f64", np.array([3, 1], np.int64), weights=np.array([1.5, 2.0]), minlength=2)
    yield S("weights_int", np.array([3, 1], np.int64), np.array([4, 5], np.int64))
    yield S("empty", np.zeros((0,), np.int64), minlength=3)


def _ref_bincount(x: Any, weights: Any = None, minlength: int = 0) -> Any:
    if weights is None:
        return np.bincount(x, minlength=minlength).astype(np.int64)
    dt = np.float32 if weights.dtype == np.float32 else np.float64
    return np.bincount(x, weights.astype(np.float64), minlength).astype(dt)


add(
    OpInfo(
        "bincount",
        op=fn("bincount"),
        method=meth("bincount"),
        sample_inputs=_bincount_samples,
        ref=_ref_bincount,
        dtypes=INTS,
        result_dtype=lambda s, d: (
            "int64"
            if len(s.args) < 2 and "weights" not in s.kwargs
            else "float32"
            if (s.args[1] if len(s.args) > 1 else s.kwargs["weights"]).dtype == np.float32
            else "float64"
        ),
    )
)


def _histc_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default_bins", make((20,), d, rng))
    yield S("range", make((3, 4), d, rng), 5, -1, 1)
    yield S("constant", np.full((3,), 1.0, np_dtype(d)), bins=4)
    yield S("equal_min_max", np.array([1.0, 2.0, 1.0], np_dtype(d)), 3, 2, 2)
    yield S("empty", make((0,), d, rng), 4)


def _ref_histc(x: Any, bins: int = 100, min: Any = 0, max: Any = 0) -> Any:  # noqa: A002
    x = x.reshape(-1).astype(np.float64)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = x.min(), x.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    keep = x[(x >= lo) & (x <= hi)]
    pos = np.minimum(np.floor((keep - lo) * (bins / (hi - lo))).astype(np.int64), bins - 1)
    return np.bincount(pos, minlength=bins).astype(np.float64)


add(
    OpInfo(
        "histc",
        op=fn("histc"),
        method=meth("histc"),
        sample_inputs=_histc_samples,
        ref=_ref_histc,
        dtypes=FLOATS,
    )
)


def _histogram_bin_ct_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((30,), d, rng))
    yield S(
        "range_weight",
        make((2, 5), d, rng),
        4,
        range=[-1.0, 2.0],
        weight=make((2, 5), d, rng, 0, 1),
    )
    yield S("density", make((8,), d, rng), bins=3, density=True)
    yield S("constant", np.ones((3,), np_dtype(d)), 4)
    yield S("empty", make((0,), d, rng), 2)


def _histogram_bins_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    edges = np.array([-2.0, -0.5, 0.0, 1.0, 3.0], np_dtype(d))
    yield S("edges", make((12,), d, rng), edges)
    yield S(
        "weight_density",
        make((3, 3), d, rng),
        edges,
        weight=make((3, 3), d, rng, 0, 1),
        density=True,
    )


def _ref_histogram(
    x: Any, bins: Any = 100, *, range: Any = None, weight: Any = None, density: bool = False
) -> Any:  # noqa: A002
    x = x.reshape(-1)
    w = None if weight is None else weight.reshape(-1).astype(np.float64)
    if isinstance(bins, np.ndarray):
        edges = bins.astype(np.float64)
    else:
        lo, hi = range if range is not None else ((x.min(), x.max()) if x.size else (0.0, 1.0))
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, bins + 1, dtype=x.dtype).astype(np.float64)
    hist, _ = np.histogram(x.astype(np.float64), edges, weights=w, density=density)
    return hist, edges


for _ov, _samples in (
    ("bin_ct", _histogram_bin_ct_samples),
    ("bins_tensor", _histogram_bins_tensor_samples),
):
    add(
        OpInfo(
            f"histogram.{_ov}",
            op=fn("histogram"),
            method=meth("histogram"),
            sample_inputs=_samples,
            ref=_ref_histogram,
            dtypes=FLOATS,
            result_dtype=lambda s, d: (d, d),
            returns_names=("hist", "bin_edges"),
        )
    )


def _hdd_points(d: str, rng: np.random.Generator) -> np.ndarray:
    return make((7, 2), d, rng)


def _ref_hdd_edges(x: Any, bins: Any, range: Any = None) -> list[Any]:  # noqa: A002
    pts = x.reshape(-1, x.shape[-1])
    out = []
    for k, b in enumerate(bins):
        if range is not None:
            lo, hi = range[2 * k], range[2 * k + 1]
        else:
            lo, hi = (pts[:, k].min(), pts[:, k].max()) if len(pts) else (0.0, 1.0)
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        out.append(np.linspace(lo, hi, b + 1, dtype=x.dtype))
    return out


def _ref_histogramdd(
    x: Any,
    bins: Any,
    range: Any = None,
    weight: Any = None,
    density: bool = False,  # noqa: A002
) -> Any:
    n = x.shape[-1]
    if isinstance(bins, int):
        bins = [bins] * n
    edges = bins if isinstance(bins[0], np.ndarray) else _ref_hdd_edges(x, bins, range)
    pts = x.reshape(-1, n).astype(np.float64)
    w = None if weight is None else weight.reshape(-1).astype(np.float64)
    hist, _ = np.histogramdd(pts, [e.astype(np.float64) for e in edges], weights=w, density=density)
    return hist, list(edges)


def _histogramdd_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("bins_list", _hdd_points(d, rng), [2, 3])
    yield S(
        "range_weight_density",
        _hdd_points(d, rng),
        [2, 2],
        [-1.0, 1.0, 0.0, 2.0],
        make((7,), d, rng, 0, 1),
        True,
    )
    yield S("batched_points", make((2, 3, 2), d, rng), [1, 2])


def _histogramdd_int_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("int", _hdd_points(d, rng), 3)
    yield S("int_kw", make((4, 3), d, rng), bins=2, weight=make((4,), d, rng, 0, 1))


def _histogramdd_tensors_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    e0 = np.array([-3.0, 0.0, 3.0], np_dtype(d))
    e1 = np.array([-1.0, 0.5, 1.0, 2.0], np_dtype(d))
    yield S("edges", _hdd_points(d, rng), [e0, e1])
    yield S("edges_density", _hdd_points(d, rng), [e0, e1], density=True)


for _ov, _samples in (
    ("", _histogramdd_samples),
    (".int_bins", _histogramdd_int_samples),
    (".TensorList_bins", _histogramdd_tensors_samples),
):
    add(
        OpInfo(
            f"histogramdd{_ov}",
            op=fn("histogramdd"),
            sample_inputs=_samples,
            ref=_ref_histogramdd,
            dtypes=FLOATS,
            result_dtype=lambda s, d: (d, d),
            returns_names=("hist", "bin_edges"),
            tol={"float32": (1e-5, 1e-5)},
        )
    )
add(
    OpInfo(
        "_histogramdd_bin_edges",
        op=fn("_histogramdd_bin_edges"),
        sample_inputs=lambda d, rng: (
            S("bins", _hdd_points(d, rng), [2, 3]),
            S("range", _hdd_points(d, rng), [1, 2], range=[0.0, 1.0, -1.0, -1.0]),
        ),
        ref=lambda x, bins, *, range=None, weight=None, density=False: _ref_hdd_edges(  # noqa: A002
            x, bins, range
        ),
        dtypes=FLOATS,
    )
)
add(
    OpInfo(
        "_histogramdd_from_bin_tensors",
        op=fn("_histogramdd_from_bin_tensors"),
        sample_inputs=_histogramdd_tensors_samples,
        ref=lambda x, bins, *, weight=None, density=False: _ref_histogramdd(
            x, bins, weight=weight, density=density
        )[0],
        dtypes=FLOATS,
    )
)


def _isin_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((3, 4), d, rng, -3, 3), make((5,), d, rng, -3, 3))
    yield S("invert", make((4,), d, rng, -2, 2), make((2, 2), d, rng, -2, 2), invert=True)
    yield S("empty_test", make((3,), d, rng), make((0,), d, rng))
    yield S(
        "assume_unique",
        np.arange(4).astype(np_dtype(d)),
        np.array([1, 3], np_dtype(d)),
        assume_unique=True,
    )
    if d == "float32":
        yield S("promote", np.array([1, 2, 3], np.int64), np.array([2.5, 3.0], np.float32))


def _isin_scalar_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("in", np.array([[1, 2], [2, 0]], np_dtype(d)), 2)
    yield S("invert", np.array([1, 2], np_dtype(d)), 2, invert=True)


add(
    OpInfo(
        "isin.Tensor_Tensor",
        op=fn("isin"),
        sample_inputs=_isin_tensor_samples,
        ref=lambda e, t, *, assume_unique=False, invert=False: np.isin(e, t, invert=invert),
        dtypes=("float32", "int64"),
        result_dtype=fixed("bool"),
    )
)
add(
    OpInfo(
        "isin.Tensor_Scalar",
        op=fn("isin"),
        sample_inputs=_isin_scalar_samples,
        ref=lambda e, t, *, assume_unique=False, invert=False: np.isin(e, [t], invert=invert),
        dtypes=("float32", "int64"),
        result_dtype=fixed("bool"),
    )
)
add(
    OpInfo(
        "isin.Scalar_Tensor",
        op=fn("isin"),
        sample_inputs=lambda d, rng: (
            S(s.name, s.args[1], s.args[0], **s.kwargs) for s in _isin_scalar_samples(d, rng)
        ),
        ref=lambda e, t, *, assume_unique=False, invert=False: np.asarray(
            np.isin(e, t, invert=invert)
        ),
        dtypes=("float32", "int64"),
        result_dtype=fixed("bool"),
    )
)


def _unique_consecutive_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = np.array([1, 1, 2, 2, 3, 1, 1], np.int64).astype(np_dtype(d))
    yield S("1d", x, True, True)
    yield S("2d_flat", x[:6].reshape(2, 3), True, True)
    rows = np.array([[1, 1], [1, 1], [2, 3], [1, 1]], np.int64).astype(np_dtype(d))
    yield S("dim0", rows, True, True, 0)
    yield S("dim1", rows.T.copy(), True, True, -1)
    yield S("0d", np.array(5).astype(np_dtype(d)), True, True)
    yield S("empty", np.zeros((0,), np_dtype(d)), True, True)


def _ref_unique_consecutive(
    x: Any, return_inverse: bool = False, return_counts: bool = False, dim: Any = None
) -> Any:
    if dim is None:
        flat = x.reshape(-1)
        new = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else np.zeros(0, bool)
        values = flat[new]
        shape = x.shape
    else:
        m = np.moveaxis(x, dim, 0)
        rows = m.reshape(m.shape[0], -1)
        new = np.concatenate([[True], (rows[1:] != rows[:-1]).any(1)])
        values = np.moveaxis(m[new], 0, dim)
        shape = (m.shape[0],)
    inverse = (np.cumsum(new) - 1).reshape(shape).astype(np.int64)
    ends = np.append(np.flatnonzero(new), new.size)
    return values, inverse, np.diff(ends).astype(np.int64)


add(
    OpInfo(
        "unique_consecutive",
        op=fn("unique_consecutive"),
        method=meth("unique_consecutive"),
        sample_inputs=_unique_consecutive_samples,
        ref=_ref_unique_consecutive,
        dtypes=("float32", "int64", "bool"),
        result_dtype=lambda s, d: (d, "int64", "int64"),
    )
)


# --- cumsum, cumprod ----------------------------------------------------------------------------


def _ref_scan(f: Callable[..., Any]) -> Callable[..., Any]:
    def ref(x: Any, dim: int, *, dtype: Any = None) -> Any:
        x = np.asarray(x)
        if dtype is None and x.dtype.kind in "bui":
            dtype = np.int64
        if x.ndim == 0:
            return x.astype(dtype or x.dtype)
        return f(x, axis=dim, dtype=dtype)

    return ref


def _scan_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    lo, hi = (-2, 2) if not is_float(d) else (0.5, 1.5)
    x = lambda shape: make(shape, d, rng, lo, hi)  # noqa: E731
    yield S("dim1", x((3, 4)), 1)
    yield S("dim0", x((3, 4)), 0)
    yield S("neg_dim", x((2, 3, 4)), -1)
    yield S("0dim", x(()), 0)
    yield S("empty", x((0, 3)), 1)
    yield S("dtype_float64", x((3, 4)), 1, dtype=DT("float64"))
    if is_float(d):
        z = x((3, 4))
        z[1, 2] = z[2, 0] = z[2, 3] = 0  # zeros take cumprod's other gradient formula
        yield S("with_zeros", z, 1)
        yield S("with_zeros_dim0", z, 0)


for _name, _np in (("cumsum", np.cumsum), ("cumprod", np.cumprod)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_scan_samples,
            ref=_ref_scan(_np),
            dtypes=ALL + LOWP,
            result_dtype=sum_rule,
            tol=LOWP_TOL_LOOSE,
        )
    )

# --- statistics: nan-aware reductions, quantiles, mode, logcumsumexp, dist, renorm ---------------


def _with_nans(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``x`` with about a quarter of its values NaN (each slice keeps at least one number)."""
    x = x.copy()
    if x.ndim:
        mask = rng.random(x.shape) < 0.25
        mask[(..., 0)] = False
        x[mask] = np.nan
    return x


def _nansum_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng)  # noqa: E731
    maybe_nan = (lambda a: _with_nans(a, rng)) if is_float(d) else (lambda a: a)  # noqa: E731
    yield S("all", maybe_nan(x((3, 4))))
    yield S("dim1", maybe_nan(x((3, 4))), 1)
    yield S("dims_keepdim", maybe_nan(x((2, 3, 4))), [0, 2], True)
    yield S("0dim", x(()))
    yield S("empty", x((0, 3)), 1)
    if d == "float32":
        yield S("dtype_float64", maybe_nan(x((3, 4))), 0, dtype=DT("float64"))


def _ref_nan_reduction(f: Callable[..., Any]) -> Callable[..., Any]:
    def ref(x: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
        x = np.asarray(x)
        if x.dtype == bool:
            x = x.astype(np.int64)
        axis = None if dim is None else tuple(np.atleast_1d(dim))
        return f(x.astype(np.float64) if x.dtype.kind == "f" else x, axis=axis, keepdims=keepdim)

    return ref


add(
    OpInfo(
        "nansum",
        op=fn("nansum"),
        method=meth("nansum"),
        sample_inputs=_nansum_samples,
        ref=_ref_nan_reduction(np.nansum),
        dtypes=("float32", "int64"),
        result_dtype=sum_rule,
    )
)
add(
    OpInfo(
        "nanmean",
        op=fn("nanmean"),
        method=meth("nanmean"),
        sample_inputs=lambda d, rng: (s for s in _nansum_samples(d, rng) if s.name != "empty"),
        ref=_ref_nan_reduction(np.nanmean),
        dtypes=("float32",),
        result_dtype=dtype_kwarg(same),
    )
)


def _ref_nanmedian(x: Any) -> Any:
    x = np.asarray(x).reshape(-1)
    valid = np.sort(x[~np.isnan(x)]) if x.dtype.kind == "f" else np.sort(x)
    return np.asarray(valid[(valid.size - 1) // 2] if valid.size else np.nan, dtype=x.dtype)


def _ref_nanmedian_dim(x: Any, dim: int, keepdim: bool = False) -> Any:
    """The lower median of the numbers and its index in a stable sort (NaNs last)."""
    x = np.asarray(x)
    if x.ndim == 0:
        return x, np.asarray(0)
    order = np.argsort(x, axis=dim, kind="stable")
    valid = np.sum(~np.isnan(x), axis=dim, keepdims=True) if x.dtype.kind == "f" else None
    if valid is None:
        valid = np.full_like(np.take(order, [0], axis=dim), x.shape[dim])
    idx = np.take_along_axis(order, np.maximum(valid - 1, 0) // 2, axis=dim)
    vals = np.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        idx, vals = np.squeeze(idx, axis=dim), np.squeeze(vals, axis=dim)
    return vals, idx


def _nanmedian_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -3, 3)  # noqa: E731 - ties in ints
    yield S("2d", x((3, 4)))
    yield S("0dim", x(()))
    if is_float(d):
        yield S("nan", np.array([1.0, np.nan, -2.0, 4.0, np.nan], dtype=d))
        yield S("all_nan", np.array([np.nan, np.nan], dtype=d))


def _nanmedian_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -3, 3)  # noqa: E731
    yield S("dim1", x((3, 4)), 1)
    yield S("dim0_keepdim", x((5, 3)), 0, True)
    yield S("0dim", x(()), 0)
    if is_float(d):
        yield S("nan", np.array([[1.0, np.nan, 2.0, np.nan], [3.0, 1.0, 2.0, 0.0]], dtype=d), 1)


add(
    OpInfo(
        "nanmedian",
        op=fn("nanmedian"),
        method=meth("nanmedian"),
        sample_inputs=_nanmedian_samples,
        ref=_ref_nanmedian,
        dtypes=NUMERIC,
    )
)
add(
    OpInfo(
        "nanmedian.dim",
        op=fn("nanmedian"),
        method=meth("nanmedian"),
        sample_inputs=_nanmedian_dim_samples,
        ref=_ref_nanmedian_dim,
        dtypes=NUMERIC,
        result_dtype=lambda s, d: (d, "int64"),
        returns_names=("values", "indices"),
    )
)


def _ref_mode(x: Any, dim: int = -1, keepdim: bool = False) -> Any:
    """Slice by slice: the value of most occurrences (the smallest of equals; each NaN counts
    once), and the last index where it occurs."""
    x = np.asarray(x)
    if x.ndim == 0:
        return x, np.asarray(0)
    moved = np.moveaxis(x, dim, -1)
    vals = np.empty(moved.shape[:-1], dtype=x.dtype)
    idx = np.empty(moved.shape[:-1], dtype=np.int64)
    for pos in np.ndindex(*moved.shape[:-1]):
        row = moved[pos]
        best, best_count = None, 0
        for v in sorted(set(row[~np.isnan(row)] if row.dtype.kind == "f" else row)):
            count = int(np.sum(row == v))
            if count > best_count:
                best, best_count = v, count
        if row.dtype.kind == "f" and np.isnan(row).any() and best_count < 1:
            best = np.nan
        vals[pos] = best
        hits = np.flatnonzero(np.isnan(row) if best != best else row == best)
        idx[pos] = hits[-1]
    if keepdim:
        vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


def _mode_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -2, 2)  # noqa: E731 - many repeats
    yield S("default_dim", x((3, 6)))
    yield S("dim0_keepdim", x((5, 3)), 0, True)
    yield S("0dim", x(()))
    yield S("dim_kw", x((2, 3, 4)), dim=1)
    if is_float(d):
        yield S("nan", np.array([[1.0, np.nan, 2.0, np.nan, 2.0, 1.0]], dtype=d), 1)


add(
    OpInfo(
        "mode",
        op=fn("mode"),
        method=meth("mode"),
        sample_inputs=_mode_samples,
        ref=_ref_mode,
        dtypes=("float32", "int64", "bool"),
        result_dtype=lambda s, d: (d, "int64"),
        returns_names=("values", "indices"),
    )
)


def _quantile_samples(scalar: bool) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        def q(values: Any) -> Any:
            return float(values[0]) if scalar else np.array(values, dtype=d)

        x = lambda shape: make(shape, d, rng)  # noqa: E731
        yield S("all", x((3, 4)), q([0.3, 0.5]) if not scalar else 0.3)
        yield S("dim1", x((3, 5)), q([0.0, 0.25, 1.0]), 1)
        yield S("dim0_keepdim", x((4, 3)), q([0.4]), 0, True)
        yield S("all_keepdim", x((2, 3)), q([0.6, 0.1]), None, True)
        for mode in ("lower", "higher", "midpoint", "nearest"):
            yield S(mode, x((2, 5)), q([0.125, 0.375, 0.7]), 1, interpolation=mode)
        yield S("0dim_q", x((5,)), np.array(0.8, dtype=d) if not scalar else 0.8)
        yield S("nan", _with_nans(x((3, 6)), rng), q([0.2, 0.9]), 1)
        yield S("all_nan_row", np.array([[np.nan, np.nan], [1.0, 2.0]], dtype=d), q([0.5]), 1)

    return gen


def _ref_quantile(ignore_nan: bool) -> Callable[..., Any]:
    f = np.nanquantile if ignore_nan else np.quantile

    def ref(
        x: Any, q: Any, dim: Any = None, keepdim: bool = False, interpolation: str = "linear"
    ) -> Any:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN slice
            return f(
                np.asarray(x, np.float64), np.asarray(q, np.float64), axis=dim,
                keepdims=keepdim, method=interpolation,
            )  # fmt: skip

    return ref


for _name, _nan in (("quantile", False), ("nanquantile", True)):
    for _overload, _scalar in (("", False), (".scalar", True)):
        add(
            OpInfo(
                f"{_name}{_overload}",
                op=fn(_name),
                method=meth(_name),
                sample_inputs=_quantile_samples(_scalar),
                ref=_ref_quantile(_nan),
                dtypes=("float32",),
            )
        )


def _msort_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((4, 3), d, rng))
    yield S("1d", make((5,), d, rng))
    yield S("0dim", make((), d, rng))


add(
    OpInfo(
        "msort",
        op=fn("msort"),
        method=meth("msort"),
        sample_inputs=_msort_samples,
        ref=lambda x: np.sort(np.asarray(x), axis=0) if np.ndim(x) else np.asarray(x),
        dtypes=("float32", "int64"),
    )
)


def _logcumsumexp_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng)  # noqa: E731
    yield S("dim1", x((3, 4)), 1)
    yield S("dim0", x((4, 2)), 0)
    yield S("neg_dim", x((2, 3, 4)), -1)
    yield S("0dim", x(()), 0)
    yield S("empty", x((0, 3)), 1)
    if d in FLOATS:
        yield S("spread", np.array([-1000.0, 0.0, -np.inf, 3.0], dtype=d), 0)


def _ref_logcumsumexp(x: Any, dim: int) -> Any:
    x = np.asarray(x, np.float64)
    return x if x.ndim == 0 else np.logaddexp.accumulate(x, axis=dim)


add(
    OpInfo(
        "logcumsumexp",
        op=fn("logcumsumexp"),
        method=meth("logcumsumexp"),
        sample_inputs=_logcumsumexp_samples,
        ref=_ref_logcumsumexp,
        dtypes=("float32", "bfloat16"),
        tol=LOWP_TOL_LOOSE,
    )
)


def _dist_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng)  # noqa: E731
    yield S("p2", x((3, 4)), x((3, 4)))
    yield S("broadcast_p1", x((3, 1)), x((4,)), 1)
    yield S("p0", x((5,)), x((5,)), 0)
    yield S("p_inf", x((2, 3)), x((2, 3)), float("inf"))
    yield S("p3", x((4,)), x((4,)), 3)
    yield S("0dim", x(()), x(()))


def _ref_dist(a: Any, b: Any, p: Any = 2) -> Any:
    diff = np.abs(np.subtract(np.asarray(a, np.float64), np.asarray(b, np.float64))).reshape(-1)
    if p == 0:
        return np.asarray(float(np.count_nonzero(diff)))
    if p == float("inf"):
        return np.asarray(diff.max())
    return np.asarray(np.sum(diff**p) ** (1 / p))


add(
    OpInfo(
        "dist",
        op=fn("dist"),
        method=meth("dist"),
        sample_inputs=_dist_samples,
        ref=_ref_dist,
        dtypes=("float32",),
    )
)


def _renorm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng)  # noqa: E731
    yield S("p2_dim0", x((3, 4)), 2, 0, 3.0)
    yield S("p1_dim1", x((3, 4)), 1, 1, 2.5)
    yield S("p3_3d", x((2, 3, 4)), 3, -1, 2.0)
    yield S("large_maxnorm", x((3, 4)), 2, 0, 100.0)


def _ref_renorm(x: Any, p: Any, dim: int, maxnorm: Any) -> Any:
    x = np.asarray(x, np.float64)
    others = tuple(i for i in range(x.ndim) if i != dim % x.ndim)
    norm = np.sum(np.abs(x) ** p, axis=others, keepdims=True) ** (1 / p)
    return x * np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


renorm = add(
    OpInfo(
        "renorm",
        op=fn("renorm"),
        method=meth("renorm"),
        sample_inputs=_renorm_samples,
        ref=_ref_renorm,
        dtypes=("float32",),
    )
)
add(
    OpInfo(
        "renorm_",
        op=meth("renorm_"),
        sample_inputs=_renorm_samples,
        ref=_ref_renorm,
        dtypes=("float32",),
        kind="inplace",
    )
)


def _unbiased_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng)  # noqa: E731
    yield S("dim1", x((3, 4)), 1)
    yield S("dim0_biased", x((3, 4)), 0, False)
    yield S("dims_keepdim", x((2, 3, 4)), [0, 2], True, True)
    yield S("kw", x((5, 3)), dim=0, unbiased=False, keepdim=True)


def _ref_unbiased(stat: Callable[..., Any], with_mean: bool) -> Callable[..., Any]:
    def ref(x: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
        x = np.asarray(x, np.float64)
        axis = None if dim is None else tuple(np.atleast_1d(dim))
        r = stat(x, axis=axis, ddof=1 if unbiased else 0, keepdims=keepdim)
        return (r, np.mean(x, axis=axis, keepdims=keepdim)) if with_mean else r

    return ref


for _name, _stat, _mean in (
    ("var", np.var, False),
    ("std", np.std, False),
    ("var_mean", np.var, True),
    ("std_mean", np.std, True),
):
    add(
        OpInfo(
            f"{_name}.dim",
            op=fn(_name),
            method=None if _mean else meth(_name),
            sample_inputs=_unbiased_samples,
            ref=_ref_unbiased(_stat, _mean),
            dtypes=("float32",),
            result_dtype=(lambda s, d: (d, d)) if _mean else same,
        )
    )

_MAX_OTHER = ("same_shape", "broadcast", "0dim_other", "promote_int64_float32")
for _name, _np in (("max", np.maximum), ("min", np.minimum)):
    add(
        OpInfo(
            f"{_name}.other",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=lambda d, rng: (
                s for s in binary_samples(bool_promotion=False)(d, rng) if s.name in _MAX_OTHER
            ),
            ref=_np,
            dtypes=("float32", "int64"),
            result_dtype=promoted(0, 1),
        )
    )


# --- sort, argsort, topk ------------------------------------------------------------------------
# Ties: every sort and topk keep them in their original order in both directions (Note [Tie
# order of sort and topk] in _sorting.py); the samples hold ties, short and long rows.


def _stable_argsort(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    if x.ndim == 0:
        return np.asarray(0)
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")
    n = x.shape[dim]
    rev = np.flip(np.argsort(np.flip(x, dim), axis=dim, kind="stable"), dim)
    return (n - 1) - rev


def _ref_sort(x: Any, dim: int = -1, descending: bool = False, *, stable: Any = None) -> Any:
    x = np.asarray(x)
    idx = _stable_argsort(x, dim, descending)
    if x.ndim == 0:
        return x, idx
    return np.take_along_axis(x, idx, axis=dim), idx


def _distinct(shape: tuple[int, ...], d: str, rng: np.random.Generator) -> np.ndarray:
    n = int(np.prod(shape))
    if d == "bool":
        return make(shape, d, rng)
    return (rng.permutation(n) - n // 2).reshape(shape).astype(np_dtype(d))


def _sort_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -2, 2)  # noqa: E731 - ties
    yield S("default", x((3, 5)))
    yield S("dim0", x((4, 3)), 0)
    yield S("descending", x((3, 5)), -1, True)
    yield S("descending_kw_dim0", x((6, 2)), dim=0, descending=True)
    yield S("0dim", x(()))
    yield S("empty", x((0, 3)), 1)
    if d != "bool":
        yield S("long_rows_distinct", _distinct((2, 40), d, rng), descending=True)
    if is_float(d) and d not in LOWP:
        yield S("nan", np.array([1.0, np.nan, -1.0, np.nan, 1.0], dtype=d), descending=True)


def _sort_stable_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -2, 2)  # noqa: E731
    yield S("stable", x((3, 5)), stable=True)
    yield S("stable_long_ties", x((2, 40)), stable=True)
    yield S("stable_long_ties_descending", x((40, 2)), stable=True, dim=0, descending=True)
    yield S("stable_false", x((3, 5)), stable=False, descending=True)
    yield S("0dim", x(()), stable=True)
    yield S("empty", x((0,)), stable=True)


for _name, _samples, _dtypes in (
    ("sort", _sort_samples, ALL + LOWP),
    ("sort.stable", _sort_stable_samples, ALL),
):
    add(
        OpInfo(
            _name,
            op=fn("sort"),
            method=meth("sort"),
            sample_inputs=_samples,
            ref=_ref_sort,
            dtypes=_dtypes,
            result_dtype=lambda s, d: (d, "int64"),
            returns_names=("values", "indices"),
        )
    )
    add(
        OpInfo(
            "arg" + _name,
            op=fn("argsort"),
            method=meth("argsort"),
            sample_inputs=_samples,
            ref=lambda *a, **k: _ref_sort(*a, **k)[1],
            dtypes=ALL,
            result_dtype=fixed("int64"),
        )
    )


def _ref_topk(x: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    x = np.asarray(x)
    if x.ndim == 0:
        return x, np.asarray(0)
    idx = np.take(_stable_argsort(x, dim, largest), range(k), axis=dim)
    return np.take_along_axis(x, idx, axis=dim), idx


def _compare_topk(got: Any, expected: Any, s: SampleInput, d: str) -> None:
    """Unsorted results come in the selection's order: compared sorted by index."""
    vals, idx = (np.asarray(t.cpu().numpy()) for t in got)
    ev, ei = expected
    assert (got[0].dtype.name, got[1].dtype.name) == (d, "int64")
    assert vals.shape == ev.shape and idx.shape == ei.shape
    dim = s.kwargs.get("dim", s.args[2] if len(s.args) > 2 else -1)
    if s.kwargs.get("sorted", True) is False and idx.ndim:
        order, eorder = np.argsort(idx, axis=dim), np.argsort(ei, axis=dim)
        idx, ei = np.take_along_axis(idx, order, dim), np.take_along_axis(ei, eorder, dim)
        vals, ev = np.take_along_axis(vals, order, dim), np.take_along_axis(ev, eorder, dim)
    np.testing.assert_array_equal(idx, ei)
    np.testing.assert_allclose(vals.astype(np.float64), np.asarray(ev, np.float64))


def _topk_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: _distinct(shape, d, rng)  # noqa: E731 - ties: test_sorting.py
    yield S("k2", x((3, 5)), 2)
    yield S("smallest", x((3, 5)), 3, largest=False)
    yield S("dim0", x((5, 3)), 2, 0)
    yield S("unsorted", x((2, 10)), 4, sorted=False)
    yield S("partial_sort_path", x((2, 130)), 2)  # k * 64 <= n: std::partial_sort
    yield S("k_all", x((4,)), 4)
    yield S("k0", x((3, 4)), 0)
    yield S("0dim", x(()), 1)
    yield S("empty_rows", make((0, 4), d, rng), 2)


add(
    OpInfo(
        "topk",
        op=fn("topk"),
        method=meth("topk"),
        sample_inputs=_topk_samples,
        ref=_ref_topk,
        dtypes=NUMERIC + LOWP,
        result_dtype=lambda s, d: (d, "int64"),
        compare=_compare_topk,
        returns_names=("values", "indices"),
    )
)


# --- cumsum_ and cumprod_ (issue 29) ------------------------------------------------------------

from ._core import OP_DB, add_inplace_of_shape  # noqa: E402

for _name in ("cumsum", "cumprod"):
    add_inplace_of_shape(next(i for i in OP_DB if i.name == _name), f"{_name}_", f"{_name}_")


# --- queries and sum_to_size (issue 29) ----------------------------------------------------------


def _is_nonzero_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("0dim", make((), d, rng))
    yield S("one", make((1, 1), d, rng))
    yield S("zero", np.zeros((1,), np_dtype(d)))


def _pair_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same", make((2, 3), d, rng), make((2, 3), d, rng))
    yield S("other", make((2, 3), d, rng), make((3, 2), d, rng))
    yield S("0dim", make((), d, rng), make((1,), d, rng))


def _one_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((2, 3), d, rng))


for _name, _samples, _ref in (
    ("is_nonzero", _is_nonzero_samples, lambda x: bool(np.asarray(x).reshape(-1)[0] != 0)),
    ("is_same_size", _pair_samples, lambda x, y: x.shape == y.shape),
    ("is_signed", _one_samples, lambda x: x.dtype.name not in ("uint8", "bool")),
    ("is_distributed", _one_samples, lambda x: False),
):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_samples,
            ref=_ref,
            dtypes=ALL,
            compare=_compare_bool,
        )
    )


def _sum_to_size_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("keep_ones", make((2, 3), d, rng), [2, 1])
    yield S("leading", make((4, 2, 3), d, rng), [1, 3])
    yield S("drop_leading", make((4, 3), d, rng), [3])
    yield S("same", make((2, 3), d, rng), [2, 3])
    yield S("to_scalar_shape", make((2, 3), d, rng), [1])


def _ref_sum_to_size(x: Any, size: list[int]) -> Any:
    lead = x.ndim - len(size)
    r = x.sum(axis=tuple(range(lead))) if lead else x
    ones = tuple(i for i, (s, t) in enumerate(zip(size, r.shape, strict=True)) if s == 1 and t != 1)
    return r.sum(axis=ones, keepdims=True) if ones else r


add(
    OpInfo(
        "sum_to_size",
        op=meth("sum_to_size"),
        sample_inputs=_sum_to_size_samples,
        ref=_ref_sum_to_size,
        dtypes=FLOATS + INTS,
        result_dtype=same,
    )
)
