"""Samples and oracles of indexing, factories (random ones included) and *_like."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._core import (
    ALL,
    DT,
    FLOATS,
    INTS,
    NUMERIC,
    DtypeRule,
    OpInfo,
    S,
    SampleInput,
    add,
    add_inplace,
    dtype_kwarg,
    factory_rule,
    fixed,
    fn,
    is_float,
    is_int,
    make,
    meth,
    np_dtype,
    same,
    scalar_for,
)

# --- indexing ---------------------------------------------------------------------------------


def _np_index(indices: list[Any]) -> tuple[Any, ...]:
    return tuple(slice(None) if i is None else i for i in indices)


def _idx(values: list[Any]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _index_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = make((4, 3), d, rng)
    yield S("int_1d", x, [_idx([0, 2, 3])])
    yield S("int_2d_index", make((4, 3), d, rng), [_idx([[0, 1], [3, 3]])])
    yield S("negative", make((4, 3), d, rng), [_idx([-1, 0])])
    yield S("bool_mask_full", make((4, 3), d, rng), [make((4, 3), "bool", rng)])
    yield S("bool_mask_dim0", make((4, 3), d, rng), [np.array([True, False, True, False])])
    yield S("none_then_index", make((4, 3), d, rng), [None, _idx([2, 0])])
    yield S("two_indices_broadcast", make((4, 3), d, rng), [_idx([[0], [3]]), _idx([0, 2])])
    yield S("empty_index", make((4, 3), d, rng), [np.zeros((0,), np.int64)])
    yield S("0dim_index", make((4, 3), d, rng), [np.array(2, dtype=np.int64)])


add(
    OpInfo(
        "index.Tensor",
        op=fn("index"),
        method=meth("index"),
        sample_inputs=_index_samples,
        ref=lambda x, indices: x[_np_index(indices)],
        dtypes=ALL,
    )
)


def _index_select_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((4, 3), d, rng), 0, _idx([3, 0, 3]))
    yield S("dim1", make((4, 3), d, rng), 1, _idx([2, 0]))
    yield S("neg_dim", make((2, 3, 4), d, rng), -1, _idx([1, 1, 0]))
    yield S("int32_index", make((4, 3), d, rng), 0, np.array([1, 2], np.int32))
    yield S("0dim_index", make((4, 3), d, rng), 1, np.array(2, np.int64))
    yield S("empty_index", make((4, 3), d, rng), 0, np.zeros((0,), np.int64))
    yield S("0dim_self", make((), d, rng), 0, _idx([0]))
    yield S("empty_self", make((0, 3), d, rng), 1, _idx([2]))


def _ref_index_select(x: Any, dim: int, index: Any) -> Any:
    if x.ndim == 0:
        return x.copy()
    return np.take(x, np.reshape(index, (-1,)), axis=dim)


add(
    OpInfo(
        "index_select",
        op=fn("index_select"),
        method=meth("index_select"),
        sample_inputs=_index_select_samples,
        ref=_ref_index_select,
        dtypes=ALL,
    )
)


def _ref_index_put(x: Any, indices: list[Any], values: Any, accumulate: bool = False) -> Any:
    out = np.array(x, copy=True)
    idx = _np_index(indices)
    if accumulate:
        if out.dtype == np.bool_:
            np.logical_or.at(out, idx, values)
        else:
            np.add.at(out, idx, values)
    else:
        out[idx] = values
    return out


def _index_put_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("int_1d", make((4, 3), d, rng), [_idx([0, 2])], make((2, 3), d, rng))
    yield S("broadcast_values", make((4, 3), d, rng), [_idx([1, 3])], make((3,), d, rng))
    yield S(
        "bool_mask_0dim_value", make((4, 3), d, rng), [make((4, 3), "bool", rng)], make((), d, rng)
    )
    yield S("two_indices", make((4, 3), d, rng), [_idx([0, 3]), _idx([2, 1])], make((2,), d, rng))
    yield S("none_then_index", make((4, 3), d, rng), [None, _idx([0, 2])], make((4, 2), d, rng))
    if d != "bool":
        yield S(
            "accumulate_duplicates",
            make((4, 3), d, rng),
            [_idx([1, 1, 3])],
            make((3, 3), d, rng),
            True,
        )
        yield S(
            "accumulate_kw",
            make((5,), d, rng),
            [_idx([0, 0, 0, 4])],
            make((4,), d, rng),
            accumulate=True,
        )


add(
    OpInfo(
        "index_put_",
        op=fn("index_put_"),
        method=meth("index_put_"),
        sample_inputs=_index_put_samples,
        ref=_ref_index_put,
        dtypes=ALL,
        kind="inplace",
    )
)
add(
    OpInfo(
        "index_put",
        op=fn("index_put"),
        method=meth("index_put"),
        sample_inputs=_index_put_samples,
        ref=_ref_index_put,
        dtypes=ALL,
    )
)


def _gather_grid(index: np.ndarray, dim: int) -> tuple[Any, ...]:
    grid = list(np.indices(index.shape, sparse=True)) if index.ndim else []
    if index.ndim:
        grid[dim] = index
        return tuple(grid)
    return (index,)


def _ref_gather(x: Any, dim: int, index: Any, *, sparse_grad: bool = False) -> Any:
    if x.ndim == 0:
        return x[...] if index.ndim == 0 else np.full(index.shape, x)
    return x[_gather_grid(index, dim % x.ndim)]


def _gather_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim1", make((3, 4), d, rng), 1, rng.integers(0, 4, (3, 2)))
    yield S("dim0", make((3, 4), d, rng), 0, rng.integers(0, 3, (2, 4)))
    yield S("smaller_index", make((3, 4), d, rng), 1, rng.integers(0, 4, (2, 3)))
    yield S("neg_dim", make((2, 3, 4), d, rng), -1, rng.integers(0, 4, (2, 3, 5)))
    yield S("empty_index", make((3, 4), d, rng), 1, np.zeros((3, 0), np.int64))


add(
    OpInfo(
        "gather",
        op=fn("gather"),
        method=meth("gather"),
        sample_inputs=_gather_samples,
        ref=_ref_gather,
        dtypes=ALL,
    )
)


def _ref_scatter_add(x: Any, dim: int, index: Any, src: Any) -> Any:
    out = np.array(x, copy=True)
    src_part = src[tuple(slice(0, s) for s in index.shape)]
    np.add.at(out, _gather_grid(index, dim % x.ndim), src_part)
    return out


def _scatter_add_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S(
        "dim0_duplicates", make((3, 4), d, rng), 0, rng.integers(0, 3, (5, 4)), make((5, 4), d, rng)
    )
    yield S("dim1", make((3, 4), d, rng), 1, rng.integers(0, 4, (3, 6)), make((3, 6), d, rng))
    yield S("src_larger", make((3, 4), d, rng), 1, rng.integers(0, 4, (2, 2)), make((3, 5), d, rng))
    yield S("neg_dim", make((2, 3), d, rng), -1, rng.integers(0, 3, (2, 3)), make((2, 3), d, rng))


add(
    OpInfo(
        "scatter_add",
        op=fn("scatter_add"),
        method=meth("scatter_add"),
        sample_inputs=_scatter_add_samples,
        ref=_ref_scatter_add,
        dtypes=NUMERIC,
    )
)


def _add_inplace_of(base: OpInfo, name: str, method_name: str) -> None:
    """``name`` as the in-place method of ``base``, on the samples whose result has self's
    shape (the index and source arguments do not broadcast with self, so ``add_inplace``'s
    filter does not apply)."""

    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for sample in base.sample_inputs(d, rng):
            if np.shape(base.ref(*sample.args, **sample.kwargs)) == sample.args[0].shape:  # type: ignore[misc]
                yield sample

    add(
        OpInfo(
            name,
            op=meth(method_name),
            sample_inputs=gen,
            ref=base.ref,
            dtypes=base.dtypes,
            kind="inplace",
        )
    )


def _unique_index(rng: np.random.Generator, shape: tuple[int, ...], dim: int, n: int) -> Any:
    """An index of ``shape`` whose entries along ``dim`` are distinct, in ``[0, n)`` (scatter
    of the same place twice has no specified winner)."""
    moved = (shape[dim], *shape[:dim], *shape[dim + 1 :])
    rows = [rng.permutation(n)[: shape[dim]] for _ in range(int(np.prod(moved[1:])))]
    return np.moveaxis(np.array(rows, np.int64).T.reshape(moved), 0, dim)


def _ref_scatter(x: Any, dim: int, index: Any, src: Any) -> Any:
    out = np.array(x, copy=True)
    if not index.size:
        return out
    if np.ndim(src):
        src = src[tuple(slice(0, n) for n in index.shape)]
    if x.ndim == 0:
        out[...] = np.broadcast_to(src, index.shape).reshape(-1)[-1]
        return out
    out[_gather_grid(index, dim % x.ndim)] = np.asarray(src).astype(x.dtype)
    return out


def _scatter_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((3, 4), d, rng), 0, _unique_index(rng, (2, 4), 0, 3), make((2, 4), d, rng))
    yield S("dim1", make((3, 4), d, rng), 1, _unique_index(rng, (3, 2), 1, 4), make((3, 2), d, rng))
    yield S(
        "src_larger",
        make((3, 4), d, rng),
        1,
        _unique_index(rng, (2, 2), 1, 4),
        make((3, 5), d, rng),
    )
    yield S(
        "neg_dim", make((2, 3), d, rng), -1, _unique_index(rng, (2, 3), 1, 3), make((2, 3), d, rng)
    )
    yield S(
        "int32_index",
        make((3, 4), d, rng),
        0,
        _unique_index(rng, (2, 4), 0, 3).astype(np.int32),
        make((2, 4), d, rng),
    )
    yield S(
        "empty_index", make((3, 4), d, rng), 1, np.zeros((3, 0), np.int64), make((3, 4), d, rng)
    )
    yield S("0dim", make((), d, rng), 0, np.array(0, np.int64), make((), d, rng))


scatter = add(
    OpInfo(
        "scatter.src",
        op=fn("scatter"),
        method=meth("scatter"),
        sample_inputs=_scatter_samples,
        ref=_ref_scatter,
        dtypes=ALL,
    )
)
_add_inplace_of(scatter, "scatter_.src", "scatter_")


def _scatter_value_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for sample in _scatter_samples(d, rng):
        yield S(sample.name, *sample.args[:3], scalar_for(d))
    if is_int(d):
        yield S("float_value", make((3,), d, rng), 0, _idx([2]), 2.7)  # truncated, as C


scatter_value = add(
    OpInfo(
        "scatter.value",
        op=fn("scatter"),
        method=meth("scatter"),
        sample_inputs=_scatter_value_samples,
        ref=lambda x, dim, index, value: _ref_scatter(x, dim, index, np.asarray(value)),
        dtypes=ALL,
    )
)
_add_inplace_of(scatter_value, "scatter_.value", "scatter_")


def _ref_index_add(x: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Any:
    if x.dtype == np.bool_:
        out = np.array(x, copy=True)
        if alpha:
            np.logical_or.at(
                out.reshape(-1) if not x.ndim else out,
                (slice(None),) * (dim % max(x.ndim, 1)) + (np.reshape(index, -1),),
                source.reshape(-1) if not x.ndim else source,
            )
        return out
    out = np.array(x, copy=True)
    src = source * np.asarray(alpha).astype(x.dtype) if alpha != 1 else source
    if not x.ndim:
        flat = out.reshape(1)
        np.add.at(flat, np.reshape(index, -1), src.reshape(-1))
        return flat.reshape(())
    np.add.at(out, (slice(None),) * (dim % x.ndim) + (np.reshape(index, -1),), src)
    return out


def _index_add_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0_duplicates", make((4, 3), d, rng), 0, _idx([3, 0, 3]), make((3, 3), d, rng))
    yield S("dim1", make((4, 3), d, rng), 1, _idx([2, 0]), make((4, 2), d, rng))
    yield S("neg_dim", make((2, 3, 4), d, rng), -1, _idx([1, 1, 0]), make((2, 3, 3), d, rng))
    yield S(
        "int32_index", make((4, 3), d, rng), 0, np.array([1, 2], np.int32), make((2, 3), d, rng)
    )
    yield S("empty_index", make((4, 3), d, rng), 0, np.zeros((0,), np.int64), make((0, 3), d, rng))
    yield S("0dim", make((), d, rng), 0, _idx([0]), make((), d, rng))
    if d != "bool":
        yield S("alpha", make((4, 3), d, rng), 0, _idx([1, 1]), make((2, 3), d, rng), alpha=2)


index_add = add(
    OpInfo(
        "index_add",
        op=fn("index_add"),
        method=meth("index_add"),
        sample_inputs=_index_add_samples,
        ref=_ref_index_add,
        dtypes=ALL,
    )
)
_add_inplace_of(index_add, "index_add_", "index_add_")


def _ref_index_fill(x: Any, dim: int, index: Any, value: Any) -> Any:
    out = np.array(x, copy=True)
    v = np.asarray(value)
    v = (
        v.astype(x.dtype)
        if x.dtype.kind != "u" or v.dtype.kind != "f"
        else v.astype(np.int64).astype(x.dtype)
    )
    if not x.ndim:
        if np.size(index):
            out[...] = v
        return out
    out[(slice(None),) * (dim % x.ndim) + (np.reshape(index, -1),)] = v
    return out


def _index_fill_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    v = scalar_for(d)
    yield S("dim0", make((4, 3), d, rng), 0, _idx([3, 0, 3]), v)
    yield S("dim1_negative", make((4, 3), d, rng), 1, _idx([-1]), v)
    yield S("0dim_index", make((2, 3, 4), d, rng), -1, np.array(2, np.int64), v)
    yield S("empty_index", make((4, 3), d, rng), 0, np.zeros((0,), np.int64), v)
    yield S("0dim", make((), d, rng), 0, _idx([0]), v)
    if is_int(d):
        yield S("float_value", make((3,), d, rng), 0, _idx([1]), 2.7)


index_fill = add(
    OpInfo(
        "index_fill.int_Scalar",
        op=fn("index_fill"),
        method=meth("index_fill"),
        sample_inputs=_index_fill_samples,
        ref=_ref_index_fill,
        dtypes=ALL,
    )
)
_add_inplace_of(index_fill, "index_fill_.int_Scalar", "index_fill_")


def _index_fill_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for sample in _index_fill_samples(d, rng):  # the value as a 0-dim tensor of self's dtype
        if sample.name != "float_value":
            yield S(sample.name, *sample.args[:3], np.array(sample.args[3]).astype(np_dtype(d)))


index_fill_tensor = add(
    OpInfo(
        "index_fill.int_Tensor",
        op=fn("index_fill"),
        method=meth("index_fill"),
        sample_inputs=_index_fill_tensor_samples,
        ref=_ref_index_fill,
        dtypes=ALL,
    )
)
_add_inplace_of(index_fill_tensor, "index_fill_.int_Tensor", "index_fill_")


def _take_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d_index", make((3, 4), d, rng), _idx([[0, 11], [5, 5]]))
    yield S("negative", make((3, 4), d, rng), _idx([-1, -12, 3]))
    yield S("0dim_index", make((3, 4), d, rng), np.array(7, np.int64))
    yield S("0dim_self", make((), d, rng), _idx([0, 0, -1]))
    yield S("empty_index", make((3, 4), d, rng), np.zeros((0, 2), np.int64))


add(
    OpInfo(
        "take",
        op=fn("take"),
        method=meth("take"),
        sample_inputs=_take_samples,
        ref=lambda x, index: np.reshape(x, -1)[index],
        dtypes=ALL,
    )
)


def _masked_fill_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    v = scalar_for(d)
    yield S("same_shape", make((3, 4), d, rng), make((3, 4), "bool", rng), v)
    yield S("broadcast_mask", make((3, 4), d, rng), make((3, 1), "bool", rng), v)
    yield S("0dim_mask", make((3, 4), d, rng), np.array(True), v)
    yield S("0dim", make((), d, rng), np.array(False), v)
    yield S("empty", make((0, 4), d, rng), make((0, 4), "bool", rng), v)
    if is_float(d):
        yield S("int_value", make((3,), d, rng), make((3,), "bool", rng), -1)


masked_fill = add(
    OpInfo(
        "masked_fill.Scalar",
        op=fn("masked_fill"),
        method=meth("masked_fill"),
        sample_inputs=_masked_fill_samples,
        ref=lambda x, mask, value: np.where(mask, value, x),
        dtypes=ALL,
    )
)
add_inplace(masked_fill, "masked_fill_.Scalar", "masked_fill_")


def _masked_fill_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for s in _masked_fill_samples(d, rng):  # the value as a 0-dim tensor of self's dtype
        yield S(s.name, s.args[0], s.args[1], np.array(s.args[2]).astype(np_dtype(d)))
    if is_int(d):  # a float value is converted as a C cast: toward zero
        yield S("float_value", make((4,), d, rng), make((4,), "bool", rng), np.array(-7.5))
    if d == "float32":
        yield S("float64_value", make((4,), d, rng), make((4,), "bool", rng), np.array(0.1))


masked_fill_tensor = add(
    OpInfo(
        "masked_fill.Tensor",
        op=fn("masked_fill"),
        method=meth("masked_fill"),
        sample_inputs=_masked_fill_tensor_samples,
        ref=lambda x, mask, value: np.where(mask, value, x),
        dtypes=ALL,
    )
)
add_inplace(masked_fill_tensor, "masked_fill_.Tensor", "masked_fill_")


def _ref_masked_scatter(x: Any, mask: Any, source: Any) -> Any:
    shape = np.broadcast_shapes(x.shape, mask.shape)
    out = np.array(np.broadcast_to(x, shape), copy=True)
    m = np.broadcast_to(mask, shape)
    out[m] = np.reshape(source, -1)[: int(m.sum())]
    return out


def _masked_scatter_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same_shape", make((3, 4), d, rng), make((3, 4), "bool", rng), make((3, 4), d, rng))
    yield S(
        "broadcast_mask",
        make((3, 4), d, rng),
        np.array([True, False, False, True]),
        make((2, 5), d, rng),
    )
    yield S("broadcast_self", make((4,), d, rng), make((2, 4), "bool", rng), make((9,), d, rng))
    yield S("0dim_mask", make((3,), d, rng), np.array(True), make((4,), d, rng))
    yield S("0dim", make((), d, rng), np.array(True), make((), d, rng))
    yield S("empty", make((0, 4), d, rng), make((0, 4), "bool", rng), make((0,), d, rng))


masked_scatter = add(
    OpInfo(
        "masked_scatter",
        op=fn("masked_scatter"),
        method=meth("masked_scatter"),
        sample_inputs=_masked_scatter_samples,
        ref=_ref_masked_scatter,
        dtypes=ALL,
    )
)
_add_inplace_of(masked_scatter, "masked_scatter_", "masked_scatter_")


def _masked_select_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same_shape", make((3, 4), d, rng), make((3, 4), "bool", rng))
    yield S("broadcast_mask", make((3, 4), d, rng), np.array([True, False, False, True]))
    yield S("broadcast_self", make((4,), d, rng), make((2, 4), "bool", rng))
    yield S("0dim_mask", make((3,), d, rng), np.array(True))
    yield S("0dim", make((), d, rng), np.array(True))
    yield S("0dim_false", make((), d, rng), np.array(False))
    yield S("empty", make((0, 4), d, rng), make((0, 4), "bool", rng))


def _ref_masked_select(x: Any, mask: Any) -> Any:
    shape = np.broadcast_shapes(x.shape, mask.shape)
    return np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)].reshape(-1)


add(
    OpInfo(
        "masked_select",
        op=fn("masked_select"),
        method=meth("masked_select"),
        sample_inputs=_masked_select_samples,
        ref=_ref_masked_select,
        dtypes=ALL,
    )
)


def _nonzero_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((3, 4), d, rng, -1, 1))
    yield S("1d", make((5,), d, rng, -1, 1))
    yield S("3d", make((2, 2, 3), d, rng, -1, 1))
    yield S("all_zero", np.zeros((2, 3), np_dtype(d)))
    yield S("0dim_nonzero", np.ones((), np_dtype(d)))
    yield S("0dim_zero", np.zeros((), np_dtype(d)))
    yield S("empty", make((0, 3), d, rng))


def _ref_nonzero(x: Any) -> Any:
    if x.ndim == 0:
        return np.zeros((1 if x != 0 else 0, 0), np.int64)
    return np.stack(np.nonzero(x), axis=1).astype(np.int64)


add(
    OpInfo(
        "nonzero",
        op=fn("nonzero"),
        method=meth("nonzero"),
        sample_inputs=_nonzero_samples,
        ref=_ref_nonzero,
        dtypes=ALL,
        result_dtype=fixed("int64"),
    )
)

# --- factories --------------------------------------------------------------------------------

FACTORY_DTYPES = ("float32", "float64", "int64", "bool")


def _size_samples(d: str, rng: np.random.Generator, *extra: Any) -> Iterator[SampleInput]:
    for label, size in (
        ("2x3", [2, 3]),
        ("0dim", []),
        ("empty", [0]),
        ("empty_2d", (2, 0)),
        ("1d", [5]),
    ):
        yield S(label, size, *extra, dtype=DT(d))
    if d == "float32":
        yield S("default_dtype", [2, 3], *extra)


def _factory(
    name: str,
    ref: Callable[..., Any],
    *,
    samples: Any = None,
    check_values: bool = True,
    dtypes: tuple[str, ...] = FACTORY_DTYPES,
    result_dtype: DtypeRule | None = None,
    public: str | None = None,
) -> None:
    add(
        OpInfo(
            name,
            op=fn(public or name.split(".")[0]),
            sample_inputs=samples or _size_samples,
            ref=ref,
            dtypes=dtypes,
            result_dtype=result_dtype or factory_rule(),
            kind="factory",
            check_values=check_values,
        )
    )


def _np_factory_dtype(dtype: Any, default: Any = np.float32) -> Any:
    return default if dtype is None else dtype


_factory("zeros", lambda size, *, dtype=None: np.zeros(size, _np_factory_dtype(dtype)))
_factory("ones", lambda size, *, dtype=None: np.ones(size, _np_factory_dtype(dtype)))
_factory(
    "empty.memory_format",
    lambda size, *, dtype=None: np.empty(size, _np_factory_dtype(dtype)),
    check_values=False,
    public="empty",
)


def _full_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    v = scalar_for(d)
    yield S("2x3", [2, 3], v, dtype=DT(d))
    yield S("0dim", [], v, dtype=DT(d))
    yield S("empty", [0, 2], v, dtype=DT(d))
    if d == "float32":
        yield S("infer_float", [2, 2], 1.5)
        yield S("infer_int", [3], 7)  # PyTorch infers int64 from an int fill value
        yield S("infer_bool", [2], True)
    if d == "float64":
        yield S("int_value_float_dtype", [2], 3, dtype=DT(d))


def _full_default(s: SampleInput) -> str:
    v = s.args[1]
    return "bool" if isinstance(v, bool) else "int64" if isinstance(v, int) else "float32"


def _ref_full(size: Any, fill_value: Any, *, dtype: Any = None) -> Any:
    if dtype is None:
        dtype = (
            np.bool_
            if isinstance(fill_value, bool)
            else np.int64
            if isinstance(fill_value, int)
            else np.float32
        )
    return np.full(size, fill_value, dtype)


_factory("full", _ref_full, samples=_full_samples, result_dtype=factory_rule(_full_default))


def _arange_default(s: SampleInput) -> str:
    values = [*s.args, *(v for k, v in s.kwargs.items() if k != "dtype")]
    return "int64" if all(isinstance(v, int) for v in values) else "float32"


def _arange_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("end5", 5, dtype=DT(d))
    yield S("end0_empty", 0, dtype=DT(d))
    yield S("float_end", 5.5, dtype=DT(d))
    if d == "float32":
        yield S("infer_int", 5)
        yield S("infer_float", 2.5)


def _arange_start_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("1_10_3", 1, 10, 3, dtype=DT(d))
    yield S("5_0_neg1", 5, 0, -1, dtype=DT(d))
    yield S("default_step", 2, 6, dtype=DT(d))
    yield S("empty", 3, 3, dtype=DT(d))
    yield S("float_start", -2.5, 2, 1, dtype=DT(d))
    yield S("float_step", 0.5, 5.7, 1.9, dtype=DT(d))
    yield S("float_negative_step", 5.5, 0, -1.5, dtype=DT(d))
    if d == "float32":
        yield S("infer_int", 1, 10, 3)
        yield S("infer_float_step", 0, 1, 0.1)
        yield S("infer_float_start", 0.5, 2.5)
        yield S("step_kw", 0, 2, step=0.5)


def _ref_arange(*args: Any, dtype: Any = None) -> Any:
    if len(args) == 1:
        start, end, step = 0, args[0], 1
    else:
        start, end = args[0], args[1]
        step = args[2] if len(args) > 2 else 1
    if dtype is not None and np.dtype(dtype).kind in "iu":
        # PyTorch converts the bounds and the step toward zero first (its int64 rule)
        start, end, step = int(start), int(end), int(step)
    return np.arange(start, end, step, dtype=np.float64)


def _arange_start_ref(start: Any, end: Any, step: Any = 1, *, dtype: Any = None) -> Any:
    return _ref_arange(start, end, step, dtype=dtype)


_factory(
    "arange",
    _ref_arange,
    samples=_arange_samples,
    dtypes=("float32", "float64", "int64"),
    result_dtype=factory_rule(_arange_default),
)
_factory(
    "arange.start_step",
    _arange_start_ref,
    samples=_arange_start_samples,
    dtypes=("float32", "float64", "int64"),
    result_dtype=factory_rule(_arange_default),
)


def _linspace_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("0_1_5", 0, 1, 5, dtype=DT(d))
    yield S("neg", -2, 3, 6, dtype=DT(d))
    yield S("steps1", 3, 7, 1, dtype=DT(d))
    yield S("steps0", 0, 1, 0, dtype=DT(d))
    if d == "float32":
        yield S("default_dtype_int_ends", 0, 10, 5)
        yield S("default_dtype", -1.0, 1.0, 9)


def _ref_linspace(start: Any, end: Any, steps: int, *, dtype: Any = None) -> Any:
    out = np.linspace(float(start), float(end), steps, dtype=np.float64)
    if dtype is not None and np.dtype(dtype).kind in "iu":
        out = np.trunc(out)  # integer linspace: computed in floating point, then truncated
    return out


_factory(
    "linspace", _ref_linspace, samples=_linspace_samples, dtypes=("float32", "float64", "int64")
)


def _logspace_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("0_2_5", 0, 2, 5, dtype=DT(d))
    yield S("neg_base2", -2, 3, 6, 2.0, dtype=DT(d))
    yield S("steps1", 1, 7, 1, dtype=DT(d))
    yield S("steps0", 0, 1, 0, dtype=DT(d))
    if d == "float32":
        yield S("default_dtype_base_kw", -1.0, 1.0, 9, base=3.0)


def _ref_logspace(
    start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None
) -> Any:
    out = np.power(base, _ref_linspace(start, end, steps))
    if dtype is not None and np.dtype(dtype).kind in "iu":
        out = np.trunc(out)  # integer logspace: computed in floating point, then truncated
    return out


_factory(
    "logspace", _ref_logspace, samples=_logspace_samples, dtypes=("float32", "float64", "int64")
)


def _eye_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("3", 3, dtype=DT(d))
    yield S("1", 1, dtype=DT(d))
    yield S("0", 0, dtype=DT(d))
    if d == "float32":
        yield S("default_dtype", 4)


def _eye_m_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2x4", 2, 4, dtype=DT(d))
    yield S("4x2", 4, 2, dtype=DT(d))
    yield S("3x0", 3, 0, dtype=DT(d))
    if d == "float32":
        yield S("default_dtype", 2, 3)


_factory(
    "eye", lambda n, *, dtype=None: np.eye(n, dtype=_np_factory_dtype(dtype)), samples=_eye_samples
)
_factory(
    "eye.m",
    lambda n, m, *, dtype=None: np.eye(n, m, dtype=_np_factory_dtype(dtype)),
    samples=_eye_m_samples,
)


# --- random ops: shape, dtype, range, reproducibility --------------------------------------------


def _check_unit_interval(x: np.ndarray, s: SampleInput, d: str) -> None:
    assert np.all((x >= 0) & (x < 1)), f"rand values outside [0, 1): min {x.min()}, max {x.max()}"
    if x.size >= 1000:
        assert abs(float(x.mean()) - 0.5) < 0.05, f"rand mean {x.mean()} far from 0.5"


def _check_normal(x: np.ndarray, s: SampleInput, d: str) -> None:
    assert np.all(np.isfinite(x)), "randn produced non-finite values"
    if x.size >= 1000:
        assert abs(float(x.mean())) < 0.1, f"randn mean {x.mean()} far from 0"
        assert abs(float(x.std()) - 1.0) < 0.1, f"randn std {x.std()} far from 1"


def _check_randint(x: np.ndarray, s: SampleInput, d: str) -> None:
    low, high = s.meta["low"], s.meta["high"]
    assert np.all((x >= low) & (x < high)), (
        f"randint values outside [{low}, {high}): {x.min()}..{x.max()}"
    )
    assert np.all(x == np.trunc(x)), "randint values are not integral"
    if x.size >= 1000:
        assert len(np.unique(x)) == high - low, "randint does not cover its range"


def _random_size_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2x3", [2, 3], dtype=DT(d))
    yield S("large", [40, 50], dtype=DT(d))
    yield S("0dim", [], dtype=DT(d))
    yield S("empty", [0, 3], dtype=DT(d))
    if d == "float32":
        yield S("default_dtype", [4, 4])


def _random(
    name: str,
    samples: Any,
    check: Any,
    *,
    dtypes: tuple[str, ...] = FLOATS,
    result_dtype: DtypeRule | None = None,
    public: str | None = None,
    method: bool = False,
) -> None:
    base = name.split(".")[0]
    add(
        OpInfo(
            name,
            op=fn(public or base),
            method=meth(base) if method else None,
            sample_inputs=samples,
            ref=None,
            dtypes=dtypes,
            result_dtype=result_dtype or factory_rule(),
            kind="random",
            random_check=check,
        )
    )


_random("rand", _random_size_samples, _check_unit_interval)
_random("randn", _random_size_samples, _check_normal)


def _randint_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("high10", 10, [3, 4], dtype=DT(d), meta={"low": 0, "high": 10, "size": (3, 4)})
    yield S("large", 5, [2000], dtype=DT(d), meta={"low": 0, "high": 5, "size": (2000,)})
    yield S("empty", 3, [0], dtype=DT(d), meta={"low": 0, "high": 3, "size": (0,)})
    if d == "int64":
        yield S("default_dtype", 4, [5, 5], meta={"low": 0, "high": 4, "size": (5, 5)})


def _randint_low_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("3_10", 3, 10, [3, 4], dtype=DT(d), meta={"low": 3, "high": 10, "size": (3, 4)})
    yield S(
        "negative_low", -5, 5, [2000], dtype=DT(d), meta={"low": -5, "high": 5, "size": (2000,)}
    )
    if d == "int64":
        yield S("default_dtype", -2, 2, [6], meta={"low": -2, "high": 2, "size": (6,)})


_random(
    "randint",
    _randint_samples,
    _check_randint,
    dtypes=("int64", "float32"),
    result_dtype=factory_rule(lambda s: "int64"),
)
_random(
    "randint.low",
    _randint_low_samples,
    _check_randint,
    dtypes=("int64", "float32"),
    result_dtype=factory_rule(lambda s: "int64"),
)


def _like_samples(
    values: bool = False,
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield S("2x3", make((2, 3), d, rng))
        yield S("large", make((40, 50), d, rng))
        yield S("0dim", make((), d, rng))
        yield S("empty", make((0, 3), d, rng))
        if d == "float32":
            yield S("dtype_float64", make((2, 2), d, rng), dtype=DT("float64"))

    return gen


_random("rand_like", _like_samples(), _check_unit_interval, result_dtype=dtype_kwarg(same))
_random("randn_like", _like_samples(), _check_normal, result_dtype=dtype_kwarg(same))


def _dropout_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = make((40, 50), d, rng, 0.5, 2.0)  # no zeros, so a zero means "dropped"
    yield S("train_p0.5", x, 0.5, True)
    yield S("train_p0.2_kw", make((30, 40), d, rng, 0.5, 2.0), p=0.2, train=True)
    yield S("eval_identity", make((3, 4), d, rng), 0.5, False, meta={"deterministic": True})
    yield S("train_p0_identity", make((3, 4), d, rng), 0.0, True, meta={"deterministic": True})
    yield S("train_p1_zeros", make((3, 4), d, rng), 1.0, True, meta={"deterministic": True})
    yield S("empty", make((0, 4), d, rng), 0.5, True, meta={"deterministic": True})


def _check_dropout(x: np.ndarray, s: SampleInput, d: str) -> None:
    inp = np.asarray(s.args[0], np.float64)
    p = s.kwargs.get("p", s.args[1] if len(s.args) > 1 else None)
    train = s.kwargs.get("train", s.args[2] if len(s.args) > 2 else None)
    rtol = 1e-6 if d == "float32" else 1e-12
    if not train or p == 0 or x.size == 0:
        np.testing.assert_allclose(x, inp, rtol=rtol, err_msg="dropout must be the identity here")
        return
    if p == 1:
        np.testing.assert_array_equal(
            x, np.zeros_like(inp), err_msg="dropout(p=1) must zero everything"
        )
        return
    kept = x != 0
    np.testing.assert_allclose(
        x[kept], inp[kept] / (1 - p), rtol=rtol, err_msg="kept elements must be scaled by 1/(1-p)"
    )
    frac = 1 - kept.mean()
    assert abs(frac - p) < 0.06, f"dropped fraction {frac:.3f}, expected about {p}"


_random("dropout", _dropout_samples, _check_dropout, result_dtype=same)


# --- random ops of tensors and in-place random fills ------------------------------------------
# meta: "size" (the result's shape) and the distribution's parameters, for the checks below.
# The "large" samples hold 2000 draws: a mean is then within about 0.07 standard deviations of
# the true one (3 standard errors), so the tolerances below hold for every seed yet catch a
# wrong location or scale.


def _randperm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("n5", 5, dtype=DT(d), meta={"size": (5,)})
    yield S("n2000", 2000, dtype=DT(d), meta={"size": (2000,)})
    yield S("n1", 1, dtype=DT(d), meta={"size": (1,), "deterministic": True})
    yield S("n0", 0, dtype=DT(d), meta={"size": (0,)})
    if d == "int64":
        yield S("default_dtype", 7, meta={"size": (7,)})


def _check_randperm(x: np.ndarray, s: SampleInput, d: str) -> None:
    np.testing.assert_array_equal(np.sort(x), np.arange(x.size), err_msg="not a permutation")
    if x.size >= 1000:  # about half the positions move by more than n/4
        assert np.mean(np.abs(x - np.arange(x.size)) > x.size / 4) > 0.4, "barely shuffled"


_random(
    "randperm",
    _randperm_samples,
    _check_randperm,
    dtypes=("int64", "float32"),
    result_dtype=factory_rule(lambda s: "int64"),
)


def _normal_meta(mean: Any, std: Any, size: tuple[int, ...]) -> dict[str, Any]:
    return {"mean": mean, "std": std, "size": size}


def _check_normal_moments(x: np.ndarray, s: SampleInput, d: str) -> None:
    mean = np.broadcast_to(np.asarray(s.meta["mean"], np.float64), x.shape)
    std = np.broadcast_to(np.asarray(s.meta["std"], np.float64), x.shape)
    assert np.all(np.isfinite(x)), "normal produced non-finite values"
    fixed_ = std == 0
    np.testing.assert_allclose(x[fixed_], mean[fixed_], rtol=1e-6, err_msg="std 0 gives the mean")
    z = (x[~fixed_] - mean[~fixed_]) / std[~fixed_]
    if z.size >= 1000:
        assert abs(float(z.mean())) < 0.1, f"standardized mean {z.mean()} far from 0"
        assert abs(float(z.std()) - 1.0) < 0.1, f"standardized std {z.std()} far from 1"


def _normal_float_float_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2x3", 1.0, 2.0, [2, 3], dtype=DT(d), meta=_normal_meta(1.0, 2.0, (2, 3)))
    yield S("large", -3.0, 0.5, [40, 50], dtype=DT(d), meta=_normal_meta(-3.0, 0.5, (40, 50)))
    yield S("0dim", 0.0, 1.0, [], dtype=DT(d), meta=_normal_meta(0.0, 1.0, ()))
    yield S(
        "std0",
        4.0,
        0.0,
        [3],
        dtype=DT(d),
        meta={**_normal_meta(4.0, 0.0, (3,)), "deterministic": True},
    )
    if d == "float32":
        yield S("default_dtype", 0.0, 1.0, [4, 4], meta=_normal_meta(0.0, 1.0, (4, 4)))


def _normal_tensor_float_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    m = make((40, 50), d, rng, -5, 5)
    yield S("large", m, 2.0, meta=_normal_meta(m, 2.0, m.shape))
    m = make((2, 3), d, rng)
    yield S("default_std", m, meta=_normal_meta(m, 1.0, m.shape))
    m = make((), d, rng)
    yield S("0dim", m, 0.5, meta=_normal_meta(m, 0.5, ()))
    m = make((0, 3), d, rng)
    yield S("empty", m, 1.0, meta=_normal_meta(m, 1.0, (0, 3)))


def _normal_float_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    sd = make((40, 50), d, rng, 0.1, 3)
    yield S("large", 2.0, sd, meta=_normal_meta(2.0, sd, sd.shape))
    sd = np.array([0.0, 1.0, 0.0], np_dtype(d))
    yield S("some_std0", 1.5, sd, meta=_normal_meta(1.5, sd, sd.shape))
    sd = make((0,), d, rng, 0.1, 1)
    yield S("empty", 0.0, sd, meta=_normal_meta(0.0, sd, (0,)))


def _normal_tensor_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    m, sd = make((40, 50), d, rng, -5, 5), make((40, 50), d, rng, 0.1, 3)
    yield S("large", m, sd, meta=_normal_meta(m, sd, m.shape))
    m, sd = make((40, 1), d, rng), make((1, 50), d, rng, 0.5, 2)
    yield S("broadcast", m, sd, meta=_normal_meta(m, sd, (40, 50)))
    m, sd = make((), d, rng), make((), d, rng, 0.5, 2)
    yield S("0dim", m, sd, meta=_normal_meta(m, sd, ()))
    if d == "float32":  # the result takes mean's dtype
        m, sd = make((2, 3), "float64", rng), make((2, 3), d, rng, 0.5, 2)
        yield S("mean_float64", m, sd, meta=_normal_meta(m, sd, (2, 3)))


_random("normal.float_float", _normal_float_float_samples, _check_normal_moments, public="normal")
for _name, _gen in (
    ("normal.Tensor_float", _normal_tensor_float_samples),
    ("normal.float_Tensor", _normal_float_tensor_samples),
    ("normal.Tensor_Tensor", _normal_tensor_tensor_samples),
):
    _random(_name, _gen, _check_normal_moments, result_dtype=same)


def _check_bernoulli(x: np.ndarray, s: SampleInput, d: str) -> None:
    p = np.broadcast_to(np.asarray(s.meta["p"], np.float64), x.shape)
    assert np.all((x == 0) | (x == 1)), "bernoulli values other than 0 and 1"
    assert np.all(x[p == 0] == 0) and np.all(x[p == 1] == 1), "p of 0 or 1 must be certain"
    if x.size >= 1000:
        assert abs(float(x.mean()) - float(p.mean())) < 0.05, (
            f"frequency of ones {x.mean()}, expected about {p.mean()}"
        )


def _bernoulli_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p = make((40, 50), d, rng, 0.0, 1.0)
    yield S("large", p, meta={"p": p})
    p = np.array([0.0, 1.0, 0.0, 1.0], np_dtype(d))
    yield S("certain", p, meta={"p": p, "deterministic": True})
    p = make((), d, rng, 0.0, 1.0)
    yield S("0dim", p, meta={"p": p})
    p = make((0, 2), d, rng, 0.0, 1.0)
    yield S("empty", p, meta={"p": p})


def _bernoulli_p_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("large", make((40, 50), d, rng), 0.3, meta={"p": 0.3})
    yield S("p1", make((3, 4), d, rng), 1.0, meta={"p": 1.0, "deterministic": True})
    yield S("p0_kw", make((5,), d, rng), p=0.0, meta={"p": 0.0, "deterministic": True})
    yield S("0dim", make((), d, rng), 0.5, meta={"p": 0.5})


_random("bernoulli", _bernoulli_samples, _check_bernoulli, result_dtype=same, method=True)
_random(
    "bernoulli.p",
    _bernoulli_p_samples,
    _check_bernoulli,
    dtypes=FLOATS + ("int64", "bool"),
    result_dtype=same,
    method=True,
)


def _multinomial_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p = np.array([0.1, 0.0, 0.6, 0.3], np_dtype(d))
    yield S("replacement", p, 2000, True, meta={"p": p, "size": (2000,)})
    rows = np.array([[1.0, 3.0, 0.0], [0.0, 0.0, 2.0]], np_dtype(d))  # unnormalized weights
    yield S("2d_replacement_kw", rows, 1000, replacement=True, meta={"p": rows, "size": (2, 1000)})
    big = make((50,), d, rng, 0.0, 1.0)
    yield S("no_replacement", big, 20, meta={"p": big, "size": (20,)})
    yield S("all_categories", p, 4, False, meta={"p": p, "size": (4,)})
    rows = make((3, 30), d, rng, 0.0, 1.0)
    yield S("2d_no_replacement", rows, 5, meta={"p": rows, "size": (3, 5)})
    yield S("no_rows", np.ones((0, 3), np_dtype(d)), 2, meta={"p": np.ones((0, 3)), "size": (0, 2)})


def _check_multinomial(x: np.ndarray, s: SampleInput, d: str) -> None:
    p = np.asarray(s.meta["p"], np.float64)
    replacement = s.kwargs.get("replacement", s.args[2] if len(s.args) > 2 else False)
    rows, draws = p.reshape(-1, p.shape[-1]), x.reshape(-1, x.shape[-1]).astype(np.int64)
    for pr, xr in zip(rows, draws, strict=True):
        assert np.all((xr >= 0) & (xr < pr.size)), f"category indices outside [0, {pr.size})"
        nonzero = int(np.count_nonzero(pr))
        if replacement or xr.size <= nonzero:  # zero weights come only after all the others
            assert np.all(pr[xr] > 0), "a category of probability 0 was drawn"
        if not replacement:
            assert len(np.unique(xr)) == xr.size, "a category drawn twice without replacement"
        elif xr.size >= 1000:
            freq = np.bincount(xr, minlength=pr.size) / xr.size
            np.testing.assert_allclose(freq, pr / pr.sum(), atol=0.05, err_msg="frequencies")


_random(
    "multinomial",
    _multinomial_samples,
    _check_multinomial,
    result_dtype=fixed("int64"),
    method=True,
)


def _fill_samples(
    *params: tuple[str, tuple[Any, ...], dict[str, Any]],
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for label, args, kwargs in params:
            yield S(f"large_{label}", make((40, 50), d, rng), *args, **kwargs)
        yield S("0dim", make((), d, rng))
        yield S("empty", make((0, 3), d, rng))

    return gen


def _args_kw(s: SampleInput, names: tuple[str, ...], defaults: tuple[float, ...]) -> list[float]:
    return [
        s.kwargs.get(n, s.args[1 + i] if len(s.args) > 1 + i else dflt)
        for i, (n, dflt) in enumerate(zip(names, defaults, strict=True))
    ]


def _check_uniform_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    lo, hi = _args_kw(s, ("from", "to"), (0.0, 1.0))
    assert np.all((x >= lo) & (x <= hi)), f"uniform_ values outside [{lo}, {hi}]"
    if x.size >= 1000:
        assert abs(float(x.mean()) - (lo + hi) / 2) < 0.05 * (hi - lo), "uniform_ mean off"
        assert abs(float(x.std()) - (hi - lo) / np.sqrt(12)) < 0.05 * (hi - lo), "uniform_ std off"


def _check_normal_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    mean, std = _args_kw(s, ("mean", "std"), (0.0, 1.0))
    _check_normal_moments(x, S("", meta=_normal_meta(mean, std, x.shape)), d)


def _check_exponential_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    (lambd,) = _args_kw(s, ("lambd",), (1.0,))
    assert np.all(x >= 0), "exponential_ produced negative values"
    if x.size >= 1000:  # mean and standard deviation are both 1/lambd
        assert abs(float(x.mean()) * lambd - 1) < 0.1, f"exponential_ mean {x.mean()}"
        assert abs(float(x.std()) * lambd - 1) < 0.15, f"exponential_ std {x.std()}"


def _check_bernoulli_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    (p,) = _args_kw(s, ("p",), (0.5,))
    _check_bernoulli(x, S("", meta={"p": p}), d)


def _random_fill(name: str, samples: Any, check: Any, dtypes: tuple[str, ...] = FLOATS) -> None:
    base = name.split(".")[0]
    add(
        OpInfo(
            name,
            op=meth(base),
            sample_inputs=samples,
            ref=None,
            dtypes=dtypes,
            result_dtype=same,
            kind="random",
            random_check=check,
        )
    )


_random_fill(
    "uniform_",
    _fill_samples(("default", (), {}), ("from_to", (-2.0, 6.0), {}), ("to_kw", (), {"to": 4.0})),
    _check_uniform_fill,
)
_random_fill(
    "normal_",
    _fill_samples(("default", (), {}), ("mean_std", (3.0, 0.25), {}), ("std_kw", (), {"std": 5.0})),
    _check_normal_fill,
)
_random_fill(
    "exponential_",
    _fill_samples(("default", (), {}), ("lambd4", (4.0,), {}), ("lambd_kw", (), {"lambd": 0.5})),
    _check_exponential_fill,
)
_random_fill(
    "bernoulli_.float",
    _fill_samples(("default", (), {}), ("p0.2", (0.2,), {}), ("p_kw", (), {"p": 0.9})),
    _check_bernoulli_fill,
    dtypes=FLOATS + ("int64", "bool"),
)


def _check_random_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    lo, hi = s.meta["low"], s.meta["high"]  # inclusive
    assert np.all((x >= lo) & (x <= hi)), f"random_ values outside [{lo}, {hi}]"
    assert np.all(x == np.trunc(x)), "random_ values are not integral"
    if x.size >= 1000 and hi - lo < 100:
        assert len(np.unique(x)) == hi - lo + 1, "random_ does not cover its range"
    elif x.size >= 1000:  # a wide range: the mean is near its middle
        assert abs(float(x.mean()) - (lo + hi) / 2) < 0.05 * (hi - lo), "random_ mean off"


def _random_from_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2_10", make((40, 50), d, rng), 2, 10, meta={"low": 2, "high": 9})
    yield S("negative", make((40, 50), d, rng), -5, 5, meta={"low": -5, "high": 4})
    if d == "int64":
        top = 2**63 - 1
        yield S("to_none", make((40, 50), d, rng), -100, None, meta={"low": -100, "high": top})
    else:
        top = 2**24 if d == "float32" else 2**53
        yield S("to_none", make((40, 50), d, rng), 1, None, meta={"low": 1, "high": top})
    yield S("to_kw", make((0, 3), d, rng), 0, to=3, meta={"low": 0, "high": 2})


def _random_to_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("to7", make((40, 50), d, rng), 7, meta={"low": 0, "high": 6})
    yield S("to1", make((3,), d, rng), 1, meta={"low": 0, "high": 0, "deterministic": True})
    yield S("0dim", make((), d, rng), 100, meta={"low": 0, "high": 99})


def _random_default_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    top = {"int64": 2**63 - 1, "bool": 1, "float32": 2**24, "float64": 2**53}[d]
    yield S("large", make((40, 50), d, rng), meta={"low": 0, "high": top})
    yield S("empty", make((0,), d, rng), meta={"low": 0, "high": top})


_random_fill("random_.from", _random_from_samples, _check_random_fill, dtypes=FLOATS + INTS)
_random_fill("random_.to", _random_to_samples, _check_random_fill, dtypes=FLOATS + INTS)
_random_fill("random_", _random_default_samples, _check_random_fill, dtypes=ALL)

# --- *_like factories -------------------------------------------------------------------------


def _like_value_samples(
    extra: tuple[Any, ...] = (),
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        ex = tuple(scalar_for(d) if e == "fill" else e for e in extra)
        yield S("2x3", make((2, 3), d, rng), *ex)
        yield S("0dim", make((), d, rng), *ex)
        yield S("empty", make((0, 3), d, rng), *ex)
        other = "int64" if d != "int64" else "float64"
        ex_other = tuple(scalar_for(other) if e == "fill" else e for e in extra)
        yield S(f"dtype_{other}", make((2, 2), d, rng), *ex_other, dtype=DT(other))

    return gen


def _like(
    name: str, ref: Callable[..., Any], extra: tuple[Any, ...] = (), check_values: bool = True
) -> None:
    add(
        OpInfo(
            name,
            op=fn(name),
            sample_inputs=_like_value_samples(extra),
            ref=ref,
            dtypes=ALL,
            result_dtype=dtype_kwarg(same),
            check_values=check_values,
        )
    )


_like("zeros_like", lambda x, *, dtype=None: np.zeros(x.shape, dtype or x.dtype))
_like("ones_like", lambda x, *, dtype=None: np.ones(x.shape, dtype or x.dtype))
_like(
    "empty_like", lambda x, *, dtype=None: np.empty(x.shape, dtype or x.dtype), check_values=False
)
_like(
    "full_like", lambda x, v, *, dtype=None: np.full(x.shape, v, dtype or x.dtype), extra=("fill",)
)


# --- group G: where(condition), repeat_interleave's indices, triangle indices ---------------------


def _where_condition_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((3, 4), d, rng))
    yield S("1d", make((5,), d, rng))
    yield S("0dim", make((), d, rng))
    yield S("empty", make((0, 3), d, rng))


add(
    OpInfo(
        "where",
        op=fn("where"),
        sample_inputs=_where_condition_samples,
        ref=lambda c: [i.astype(np.int64) for i in np.nonzero(np.atleast_1d(c))],
        dtypes=ALL,
        result_dtype=fixed("int64"),
    )
)


def _repeat_interleave_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("counts", np.array([1, 0, 3, 2], np.int64))
    yield S("empty", np.zeros((0,), np.int64))
    yield S("output_size", np.array([2, 1], np.int64), output_size=3)


add(
    OpInfo(
        "repeat_interleave.Tensor",
        op=fn("repeat_interleave"),
        sample_inputs=_repeat_interleave_tensor_samples,
        ref=lambda r, output_size=None: np.repeat(np.arange(len(r)), r).astype(np.int64),
        dtypes=INTS,
        result_dtype=fixed("int64"),
    )
)


def _triangle_indices_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("square", 3, 3)
    yield S("wide_offset", 3, 5, 1)
    yield S("tall_neg_offset", 5, 3, -2, dtype=DT("int32"))
    yield S("empty", 0, 4)
    yield S("offset_beyond", 2, 3, 7)


for _name, _np_fn in (("tril_indices", np.tril_indices), ("triu_indices", np.triu_indices)):
    _factory(
        _name,
        lambda row, col, offset=0, *, dtype=None, _f=_np_fn: (
            np.array(_f(row, offset, col) if row and col else np.zeros((2, 0)))
            .reshape(2, -1)
            .astype(_np_factory_dtype(dtype, np.int64))
        ),
        samples=_triangle_indices_samples,
        dtypes=("int64",),
        result_dtype=factory_rule(lambda s: "int64"),
    )
