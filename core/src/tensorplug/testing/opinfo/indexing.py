"""Samples and oracles of the ``indexing`` family: advanced indexing, index_*, gather and
scatter, masks, nonzero, where(condition), searchsorted and bucketize."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._core import (
    ALL,
    LOWP,
    NUMERIC,
    OpInfo,
    S,
    SampleInput,
    add,
    add_inplace,
    fixed,
    fn,
    is_float,
    is_int,
    make,
    meth,
    np_dtype,
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


# --- writes at positions and numpy's picks (issue 29) ------------------------------------------


def _ref_select_scatter(x: Any, src: Any, dim: int, index: int) -> Any:
    out = x.copy()
    out[(slice(None),) * (dim % x.ndim) + (index,)] = src
    return out


def _select_scatter_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((3, 2), d, rng), make((2,), d, rng), 0, 1)
    yield S("neg_dim_index", make((2, 3, 2), d, rng), make((2, 3), d, rng), -1, -1)
    yield S("1d", make((4,), d, rng), make((), d, rng), 0, 2)


add(
    OpInfo(
        "select_scatter",
        op=fn("select_scatter"),
        method=meth("select_scatter"),
        sample_inputs=_select_scatter_samples,
        ref=_ref_select_scatter,
        dtypes=("float32", "int64"),
    )
)


def _ref_slice_scatter(
    x: Any, src: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1
) -> Any:
    out = x.copy()
    out[(slice(None),) * (dim % x.ndim) + (slice(start, end, step),)] = src
    return out


def _slice_scatter_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default_all", make((3, 2), d, rng), make((3, 2), d, rng))
    yield S("dim1_step", make((2, 5), d, rng), make((2, 2), d, rng), 1, 1, None, 2)
    yield S("kw_neg_start", make((4,), d, rng), make((2,), d, rng), start=-2)
    yield S("empty", make((3, 2), d, rng), make((0, 2), d, rng), 0, 2, 1)


add(
    OpInfo(
        "slice_scatter",
        op=fn("slice_scatter"),
        method=meth("slice_scatter"),
        sample_inputs=_slice_scatter_samples,
        ref=_ref_slice_scatter,
        dtypes=("float32", "int64"),
    )
)


def _ref_diagonal_scatter(x: Any, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    out = x.copy()
    view = np.moveaxis(out, (dim1, dim2), (-2, -1))  # a view of ``out``
    n, m = view.shape[-2:]
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(0, min(n - r0, m - c0))
    i = np.arange(length)
    view[..., r0 + i, c0 + i] = src
    return out


def _diagonal_scatter_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("square", make((3, 3), d, rng), make((3,), d, rng))
    yield S("offset", make((3, 4), d, rng), make((3,), d, rng), 1)
    yield S("neg_offset_dims", make((3, 2, 4), d, rng), make((4, 2), d, rng), -1, 0, 1)
    yield S("kw_dims", make((2, 3, 2), d, rng), make((3, 2), d, rng), dim1=2, dim2=0)


add(
    OpInfo(
        "diagonal_scatter",
        op=fn("diagonal_scatter"),
        method=meth("diagonal_scatter"),
        sample_inputs=_diagonal_scatter_samples,
        ref=_ref_diagonal_scatter,
        dtypes=("float32", "int64"),
    )
)


def _ref_diag_embed(x: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    n = x.shape[-1] + abs(offset)
    out = np.zeros((*x.shape[:-1], n, n), x.dtype)
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    i = np.arange(x.shape[-1])
    out[..., r0 + i, c0 + i] = x
    nd = x.ndim + 1
    return np.moveaxis(out, (-2, -1), (dim1 % nd, dim2 % nd))


def _diag_embed_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("1d", make((3,), d, rng))
    yield S("batched_offset", make((2, 3), d, rng), 1)
    yield S("dims", make((2, 3), d, rng), -1, 0, 2)
    yield S("kw_swapped", make((2,), d, rng), dim1=1, dim2=0)


add(
    OpInfo(
        "diag_embed",
        op=fn("diag_embed"),
        method=meth("diag_embed"),
        sample_inputs=_diag_embed_samples,
        ref=_ref_diag_embed,
        dtypes=("float32", "int64"),
    )
)


def _ref_index_copy(x: Any, dim: int, index: Any, source: Any) -> Any:
    out = x.copy()
    if x.ndim == 0:
        return np.asarray(source).reshape(())
    out[(slice(None),) * (dim % x.ndim) + (index.reshape(-1),)] = source
    return out


def _index_copy_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((4, 2), d, rng), 0, np.array([3, 0], np.int64), make((2, 2), d, rng))
    yield S("dim1", make((2, 3), d, rng), -1, np.array([2, 0, 1], np.int64), make((2, 3), d, rng))
    yield S("0d_index", make((3,), d, rng), 0, np.array(1, np.int64), make((1,), d, rng))
    yield S("scalar", make((), d, rng), 0, np.array([0], np.int64), make((), d, rng))


index_copy = add(
    OpInfo(
        "index_copy",
        op=fn("index_copy"),
        method=meth("index_copy"),
        sample_inputs=_index_copy_samples,
        ref=_ref_index_copy,
        dtypes=("float32", "int64"),
    )
)
_add_inplace_of(index_copy, "index_copy_", "index_copy_")


def _ref_scatter_reduce(
    x: Any, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True
) -> Any:
    """One element of ``index`` at a time, in order."""
    d = dim % max(x.ndim, 1)
    out = x.astype(np.float64 if x.dtype.kind == "f" else x.dtype).copy().reshape(x.shape or (1,))
    idx = index.reshape(index.shape or (1,))
    s = src.reshape(src.shape or (1,))
    got: dict[tuple[int, ...], list[Any]] = {}
    for pos in np.ndindex(*idx.shape):
        t = list(pos)
        t[d] = int(idx[pos])
        got.setdefault(tuple(t), []).append(s[pos])
    for t, vals in got.items():
        vals = ([out[t]] if include_self else []) + vals
        if x.dtype == np.bool_:
            r = any(vals) if reduce in ("sum", "mean", "amax") else all(vals)
        elif reduce == "sum":
            r = np.sum(vals)
        elif reduce == "prod":
            r = np.prod(vals)
        elif reduce == "amax":
            r = np.max(vals)
        elif reduce == "amin":
            r = np.min(vals)
        else:
            r = np.sum(vals) / len(vals) if x.dtype.kind == "f" else np.sum(vals) // len(vals)
        out[t] = r
    return out.reshape(x.shape).astype(x.dtype)


def _scatter_reduce_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    low = 1 if d == "float64" else None  # prod's gradient away from zero
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        yield S(
            f"{reduce}_1d",
            make((4,), d, rng, low, 3 if low else None),
            0,
            np.array([0, 1, 0, 3, 1], np.int64),
            make((5,), d, rng, low, 3 if low else None),
            reduce,
        )
        yield S(
            f"{reduce}_2d_exclude_self",
            make((3, 2), d, rng, low, 3 if low else None),
            1,
            np.array([[1, 1], [0, 1]], np.int64),
            make((2, 3), d, rng, low, 3 if low else None),
            reduce,
            include_self=False,
        )
    yield S(
        "empty_index", make((2,), d, rng), 0, np.zeros((0,), np.int64), make((0,), d, rng), "sum"
    )


scatter_reduce = add(
    OpInfo(
        "scatter_reduce.two",
        op=fn("scatter_reduce"),
        method=meth("scatter_reduce"),
        sample_inputs=_scatter_reduce_samples,
        ref=_ref_scatter_reduce,
        dtypes=ALL,
    )
)
_add_inplace_of(scatter_reduce, "scatter_reduce_.two", "scatter_reduce_")


def _ref_index_reduce(
    x: Any, dim: int, index: Any, source: Any, reduce: str, *, include_self: bool = True
) -> Any:
    d = dim % max(x.ndim, 1)
    shape = [1] * source.ndim
    shape[d] = -1
    spread = np.broadcast_to(index.reshape(shape), source.shape)
    return _ref_scatter_reduce(x, d, spread, source, reduce, include_self=include_self)


def _index_reduce_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    low = 1 if d == "float64" else None
    for reduce in ("prod", "mean", "amax", "amin"):
        yield S(
            f"{reduce}_dim0",
            make((3, 2), d, rng, low, 3 if low else None),
            0,
            np.array([0, 2, 0], np.int64),
            make((3, 2), d, rng, low, 3 if low else None),
            reduce,
        )
        yield S(
            f"{reduce}_dim1_exclude_self",
            make((2, 3), d, rng, low, 3 if low else None),
            -1,
            np.array([1, 1], np.int64),
            make((2, 2), d, rng, low, 3 if low else None),
            reduce,
            include_self=False,
        )


index_reduce = add(
    OpInfo(
        "index_reduce",
        op=fn("index_reduce"),
        method=meth("index_reduce"),
        sample_inputs=_index_reduce_samples,
        ref=_ref_index_reduce,
        dtypes=("float32", "int64"),
    )
)
_add_inplace_of(index_reduce, "index_reduce_", "index_reduce_")


def _ref_take_along_dim(x: Any, indices: Any, dim: Any = None) -> Any:
    if dim is None:
        return np.take(x.reshape(-1), indices.reshape(-1))
    d = dim % x.ndim
    shape = list(
        np.broadcast_shapes(
            x.shape[:d] + (1,) + x.shape[d + 1 :], indices.shape[:d] + (1,) + indices.shape[d + 1 :]
        )
    )
    xs, js = shape.copy(), shape.copy()
    xs[d], js[d] = x.shape[d], indices.shape[d]
    return np.take_along_axis(np.broadcast_to(x, xs), np.broadcast_to(indices, js), d)


def _take_along_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    idx = np.array([[0, 2], [1, 1]], np.int64)
    yield S("dim1", make((2, 3), d, rng), idx, 1)
    yield S("no_dim", make((2, 3), d, rng), np.array([5, 0, 3], np.int64))
    yield S("broadcast", make((2, 3), d, rng), np.array([[1]], np.int64), dim=0)
    yield S("neg_dim_bcast", make((1, 3), d, rng), np.array([[0, 1], [2, 2]], np.int64), -1)


add(
    OpInfo(
        "take_along_dim",
        op=fn("take_along_dim"),
        method=meth("take_along_dim"),
        sample_inputs=_take_along_dim_samples,
        ref=_ref_take_along_dim,
        dtypes=("float32", "int64"),
    )
)


def _argwhere_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = make((3, 4), d, rng)
    x.reshape(-1)[::3] = 0
    yield S("2d", x)
    yield S("0d", np.asarray(make((), d, rng, 1, 2)))
    yield S("empty", make((0, 2), d, rng))


add(
    OpInfo(
        "argwhere",
        op=fn("argwhere"),
        method=meth("argwhere"),
        sample_inputs=_argwhere_samples,
        ref=lambda x: np.argwhere(x).astype(np.int64),
        dtypes=("float32", "int64"),
        result_dtype=fixed("int64"),
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


# --- searchsorted, bucketize ----------------------------------------------------------------


def _ref_search(
    seq: Any,
    values: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: Any = None,
    sorter: Any = None,
) -> Any:
    """A loop of PyTorch's binary search: the first place where ``seq[i] >= v`` (``> v`` with
    right=) is not false, so NaNs and unsorted rows land where PyTorch's do."""
    seq, values = np.asarray(seq), np.asarray(values)
    if sorter is not None:
        seq = np.take_along_axis(seq, np.asarray(sorter), axis=-1)
    right = right or side == "right"
    out = np.zeros(values.shape, np.int32 if out_int32 else np.int64)
    for pos in np.ndindex(values.shape):
        row = seq if seq.ndim == 1 else seq[pos[:-1]]
        v = values[pos]
        lo, hi = 0, row.shape[-1]
        while lo < hi:
            mid = (lo + hi) // 2
            if not (row[mid] > v if right else row[mid] >= v):
                lo = mid + 1
            else:
                hi = mid
        out[pos] = lo
    return out


def _searchsorted_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    seq = np.sort(make((6,), d, rng, -3, 3))
    yield S("1d", seq, make((2, 3), d, rng, -4, 4))
    yield S("right", seq, make((5,), d, rng, -4, 4), right=True)
    yield S("side_right_int32", seq, make((4,), d, rng, -4, 4), side="right", out_int32=True)
    yield S("side_left", seq, make((4,), d, rng, -4, 4), side="left")
    yield S("nd", np.sort(make((2, 5), d, rng, -3, 3), axis=-1), make((2, 3), d, rng, -4, 4))
    order = rng.permutation(6)
    yield S(
        "sorter",
        seq[np.argsort(order)],
        make((4,), d, rng, -4, 4),
        sorter=np.argsort(np.argsort(order)),
    )
    yield S("0dim_value", seq, np.array(seq[2]))
    yield S("empty_seq", make((0,), d, rng), make((3,), d, rng))
    yield S("unsorted", make((5,), d, rng, -3, 3), make((4,), d, rng, -4, 4))
    if is_float(d) and d not in LOWP:
        nan = np.array([1.0, np.nan, 2.0], dtype=d)
        yield S("nan", np.array([1.0, 2.0, np.nan], dtype=d), nan)
        yield S("other_dtype", seq, make((3,), "int64", rng, -4, 4))


def _searchsorted_scalar_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    seq = np.sort(make((6,), d, rng, -3, 3))
    yield S("int", seq, 1)
    yield S("float_right", seq, 0.5, right=True)
    yield S("int32", seq, -1, out_int32=True, side="right")


def _index_rule(s: SampleInput, d: str) -> str:
    return "int32" if s.kwargs.get("out_int32") else "int64"


add(
    OpInfo(
        "searchsorted.Tensor",
        op=fn("searchsorted"),
        sample_inputs=_searchsorted_samples,
        ref=_ref_search,
        dtypes=NUMERIC,
        result_dtype=_index_rule,
    )
)
add(
    OpInfo(
        "searchsorted.Scalar",
        op=fn("searchsorted"),
        sample_inputs=_searchsorted_scalar_samples,
        ref=_ref_search,
        dtypes=NUMERIC,
        result_dtype=_index_rule,
    )
)


def _bucketize_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    bounds = np.sort(make((5,), d, rng, -3, 3))
    yield S("2d", make((2, 3), d, rng, -4, 4), bounds)
    yield S("right_int32", make((4,), d, rng, -4, 4), bounds, right=True, out_int32=True)
    yield S("0dim", np.array(bounds[1]), bounds)
    yield S("empty", make((0,), d, rng), bounds)


def _bucketize_scalar_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    bounds = np.sort(make((5,), d, rng, -3, 3))
    yield S("int", 1, bounds)
    yield S("float_right", -0.5, bounds, right=True)


add(
    OpInfo(
        "bucketize.Tensor",
        op=fn("bucketize"),
        sample_inputs=_bucketize_samples,
        ref=lambda v, b, **kw: _ref_search(b, v, **kw),
        dtypes=NUMERIC,
        result_dtype=_index_rule,
    )
)
add(
    OpInfo(
        "bucketize.Scalar",
        op=fn("bucketize"),
        sample_inputs=_bucketize_scalar_samples,
        ref=lambda v, b, **kw: _ref_search(b, v, **kw),
        dtypes=NUMERIC,
        result_dtype=_index_rule,
    )
)


# --- scatter_add_, put, put_ and fill_diagonal_ (issue 29) -------------------------------------

from ._core import OP_DB, same  # noqa: E402

_add_inplace_of(
    next(info for info in OP_DB if info.name == "scatter_add"), "scatter_add_", "scatter_add_"
)


def _put_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((3, 4), d, rng), _idx([0, 11, 5]), make((3,), d, rng))
    yield S("negative", make((3, 4), d, rng), _idx([-1, -12]), make((2,), d, rng))
    yield S("index_2d", make((2, 3), d, rng), _idx([[1, 2], [4, 0]]), make((2, 2), d, rng))
    yield S("0dim_self", make((), d, rng), _idx([0]), make((1,), d, rng))
    yield S("empty_index", make((3, 4), d, rng), np.zeros((0,), np.int64), make((0,), d, rng))
    if d != "bool":
        src = make((4,), d, rng)
        yield S("accumulate", make((3, 4), d, rng), _idx([1, 1, -11, 3]), src, True)
        yield S("accumulate_kw", make((6,), d, rng), _idx([0, 0]), src[:2], accumulate=True)


def _ref_put(x: Any, index: Any, source: Any, accumulate: bool = False) -> Any:
    out = np.array(x, copy=True).reshape(-1)
    i = np.reshape(index, -1)
    i = np.where(i < 0, i + out.size, i)
    if accumulate:
        np.add.at(out, i, np.reshape(source, -1))
    else:
        out[i] = np.reshape(source, -1)
    return out.reshape(np.shape(x))


_put = add(
    OpInfo(
        "put",
        op=fn("put"),
        method=meth("put"),
        sample_inputs=_put_samples,
        ref=_ref_put,
        dtypes=ALL,
    )
)
_add_inplace_of(_put, "put_", "put_")


def _fill_diagonal_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    v = scalar_for(d)
    yield S("square", make((3, 3), d, rng), v)
    yield S("tall", make((7, 3), d, rng), v)
    yield S("tall_wrap", make((7, 3), d, rng), v, True)
    yield S("wide", make((2, 5), d, rng), v, wrap=True)
    yield S("cube", make((2, 2, 2), d, rng), v)
    yield S("empty", make((0, 3), d, rng), v)


def _ref_fill_diagonal(x: Any, value: Any, wrap: bool = False) -> Any:
    out = np.array(x, copy=True)
    np.fill_diagonal(out, value, wrap=wrap)
    return out


add(
    OpInfo(
        "fill_diagonal_",
        op=meth("fill_diagonal_"),
        sample_inputs=_fill_diagonal_samples,
        ref=_ref_fill_diagonal,
        dtypes=ALL,
        result_dtype=same,
        kind="inplace",
    )
)


def _nonzero_static_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for s in _nonzero_samples(d, rng):
        x = s.args[0]
        n = int(np.count_nonzero(x)) if x.ndim else int(x != 0)
        yield S(f"{s.name}_cut", x, size=max(n - 1, 0))
        yield S(f"{s.name}_pad", x, size=n + 2, fill_value=-7)


def _ref_nonzero_static(x: Any, *, size: int, fill_value: int = -1) -> Any:
    nz = _ref_nonzero(x)
    pad = np.full((max(size - nz.shape[0], 0), nz.shape[1]), fill_value, np.int64)
    return np.concatenate([nz[:size], pad], axis=0)


add(
    OpInfo(
        "nonzero_static",
        op=fn("nonzero_static"),
        method=meth("nonzero_static"),
        sample_inputs=_nonzero_static_samples,
        ref=_ref_nonzero_static,
        dtypes=ALL,
        result_dtype=fixed("int64"),
    )
)
