"""Samples and oracles of the reductions and softmaxes."""

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
    dtype_kwarg,
    fixed,
    fn,
    is_float,
    is_int,
    make,
    meth,
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


def _ref_softmax(x: Any, dim: int, dtype: Any = None) -> Any:
    x = np.asarray(x, np.float64)
    if x.ndim == 0:
        return np.ones_like(x)
    e = np.exp(x - np.max(x, axis=dim, keepdims=True)) if x.size else x
    return e / np.sum(e, axis=dim, keepdims=True) if x.size else x


def _ref_log_softmax(x: Any, dim: int, dtype: Any = None) -> Any:
    x = np.asarray(x, np.float64)
    if x.ndim == 0:
        return np.zeros_like(x)
    if not x.size:
        return x
    s = x - np.max(x, axis=dim, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=dim, keepdims=True))


def _softmax_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim1", make((3, 4), d, rng), 1)
    yield S("dim0", make((3, 4), d, rng), 0)
    yield S("neg_dim", make((2, 3, 4), d, rng), -1)
    yield S("large_values", make((2, 5), d, rng, 80, 90), 1)
    yield S("0dim", make((), d, rng), 0)
    yield S("empty", make((0, 4), d, rng), 1)
    if d == "float32":
        yield S("dtype_float64", make((3, 4), d, rng), -1, dtype=DT("float64"))
        yield S("dtype_float64_kw", make((3, 4), d, rng), dim=0, dtype=DT("float64"))


for _name, _ref in (("softmax", _ref_softmax), ("log_softmax", _ref_log_softmax)):
    add(
        OpInfo(
            f"{_name}.int",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_softmax_samples,
            ref=_ref,
            dtypes=FLOATS + LOWP,
            result_dtype=dtype_kwarg(same),
        )
    )
