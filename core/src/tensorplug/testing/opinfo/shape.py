"""Samples and oracles of the ``shape`` family: views, the shape ops that copy, and the
composites of the shape ops (repeat_interleave included)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import tensorplug as tp

from ._core import (
    ALL,
    BOOL,
    FLOATS,
    INTS,
    NUMERIC,
    OpInfo,
    S,
    SampleInput,
    add,
    add_inplace,
    fixed,
    fn,
    is_float,
    make,
    meth,
    promoted,
    result_type,
    same,
)

# --- views and shape --------------------------------------------------------------------------
# Oracles of view ops return numpy views of their input, so the harness can write through
# both and compare the bases.

VIEW_DTYPES = FLOATS + INTS + BOOL


def _view_op(
    name: str,
    samples: Any,
    ref: Callable[..., Any],
    *,
    function: bool = True,
    method: bool = True,
    view_write: str = "view",
    dtypes: tuple[str, ...] = VIEW_DTYPES,
) -> None:
    add(
        OpInfo(
            name,
            op=fn(name.split(".")[0]) if function else meth(name.split(".")[0]),
            method=meth(name.split(".")[0]) if (function and method) else None,
            sample_inputs=samples,
            ref=ref,
            dtypes=dtypes,
            kind="view",
            view_write=view_write,
        )
    )


def _t_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((2, 3), d, rng))
    yield S("1d", make((4,), d, rng))
    yield S("0dim", make((), d, rng))
    yield S("empty", make((0, 3), d, rng))


_view_op("t", _t_samples, lambda x: x.T)


def _transpose_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("0_1", make((2, 3), d, rng), 0, 1)
    yield S("3d_0_2", make((2, 3, 4), d, rng), 0, 2)
    yield S("neg_dims", make((2, 3, 4), d, rng), -1, 0)
    yield S("same_dim", make((2, 3), d, rng), 1, 1)
    yield S("0dim", make((), d, rng), 0, -1)


_view_op(
    "transpose.int",
    _transpose_samples,
    lambda x, d0, d1: np.swapaxes(x, d0, d1) if x.ndim else x[...],
)
_view_op(
    "swapaxes",
    _transpose_samples,
    lambda x, d0, d1: np.swapaxes(x, d0, d1) if x.ndim else x[...],
)


def _permute_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("3d", make((2, 3, 4), d, rng), [2, 0, 1])
    yield S("neg_dims", make((2, 3, 4), d, rng), [-1, 0, 1])
    yield S("identity", make((2, 3), d, rng), [0, 1])
    yield S("0dim", make((), d, rng), [])
    yield S("empty", make((2, 0), d, rng), [1, 0])


_view_op("permute", _permute_samples, lambda x, dims: np.transpose(x, dims))


def _movedim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("two", make((2, 3, 4), d, rng), [0, 1], [2, 0])
    yield S("neg_dims", make((2, 3, 4), d, rng), [-1], [0])
    yield S("all_reversed", make((2, 3, 4), d, rng), [0, 1, 2], [2, 1, 0])
    yield S("none", make((2, 3), d, rng), [], [])
    yield S("0dim", make((), d, rng), [0], [-1])
    yield S("tuples", make((2, 0, 3), d, rng), (1,), (2,))


_view_op(
    "movedim.intlist",
    _movedim_samples,
    lambda x, src, dst: np.moveaxis(x, src, dst) if x.ndim else x[...],
)


def _movedim_int_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("first_to_last", make((2, 3, 4), d, rng), 0, -1)
    yield S("last_to_first", make((2, 3, 4), d, rng), 2, 0)
    yield S("same", make((2, 3), d, rng), 1, 1)
    yield S("kw", make((2, 3, 4), d, rng), source=1, destination=0)
    yield S("0dim", make((), d, rng), 0, 0)


_view_op(
    "movedim.int",
    _movedim_int_samples,
    lambda x, source, destination: np.moveaxis(x, source, destination) if x.ndim else x[...],
)


def _reshape_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d_to_2d", make((2, 3), d, rng), [3, 2])
    yield S("infer", make((2, 3, 4), d, rng), [-1, 4])
    yield S("flat", make((2, 3), d, rng), [-1])
    yield S("0dim_to_1", make((), d, rng), [1])
    yield S("1_to_0dim", make((1,), d, rng), [])
    yield S("empty", make((2, 0), d, rng), [0, 5])
    yield S("tuple_shape", make((6,), d, rng), (2, 3))


_view_op("view", _reshape_samples, lambda x, size: np.reshape(x, size), function=False)
_view_op("reshape", _reshape_samples, lambda x, shape: np.reshape(x, shape))


def _as_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d_to_2d", make((2, 3), d, rng), make((3, 2), d, rng))
    yield S("flat", make((2, 3), d, rng), make((6,), "int64", rng))
    yield S("0dim_to_1", make((), d, rng), make((1,), d, rng))
    yield S("1_to_0dim", make((1,), d, rng), make((), d, rng))
    yield S("empty", make((2, 0), d, rng), make((0, 5), d, rng))


_view_op("view_as", _as_samples, lambda x, other: np.reshape(x, other.shape), function=False)
_view_op("reshape_as", _as_samples, lambda x, other: np.reshape(x, other.shape), function=False)


def _unsqueeze_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((2, 3), d, rng), 0)
    yield S("dim_last", make((2, 3), d, rng), 2)
    yield S("neg_dim", make((2, 3), d, rng), -1)
    yield S("neg_dim_first", make((2, 3), d, rng), -3)
    yield S("0dim", make((), d, rng), 0)
    yield S("empty", make((0,), d, rng), 1)


_view_op(
    "unsqueeze",
    _unsqueeze_samples,
    lambda x, dim: np.expand_dims(x, dim if dim >= 0 else dim + x.ndim + 1),
)


def _squeeze_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("middle", make((3, 1, 2), d, rng))
    yield S("all_ones", make((1, 1), d, rng))
    yield S("none_to_squeeze", make((2, 3), d, rng))
    yield S("0dim", make((), d, rng))
    yield S("empty", make((1, 0), d, rng))


_view_op("squeeze", _squeeze_samples, lambda x: np.squeeze(x))


def _squeeze_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("size1", make((3, 1, 2), d, rng), 1)
    yield S("not_size1_noop", make((3, 1, 2), d, rng), 0)
    yield S("neg_dim", make((3, 2, 1), d, rng), -1)
    yield S("0dim", make((), d, rng), 0)


def _ref_squeeze_dim(x: Any, dim: int) -> Any:
    if x.ndim == 0:
        return x[...]
    return np.squeeze(x, axis=dim) if x.shape[dim] == 1 else x[...]


_view_op("squeeze.dim", _squeeze_dim_samples, _ref_squeeze_dim)


def _expand_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("column", make((3, 1), d, rng), [3, 4])
    yield S("keep_minus1", make((3, 1), d, rng), [-1, 4])
    yield S("new_leading", make((3,), d, rng), [2, 3])
    yield S("0dim", make((), d, rng), [2, 2])
    yield S("same", make((2, 3), d, rng), [2, 3])
    yield S("to_empty", make((1, 3), d, rng), [0, 3])


def _ref_expand(x: Any, size: list[int], implicit: bool = False) -> Any:
    lead = len(size) - x.ndim
    shape = [x.shape[i - lead] if s == -1 else s for i, s in enumerate(size)]
    return np.broadcast_to(x, shape)


_view_op("expand", _expand_samples, _ref_expand, function=False, view_write="base")


def _expand_as_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("column", make((3, 1), d, rng), make((3, 4), d, rng))
    yield S("new_leading", make((3,), d, rng), make((2, 3), "float64", rng))
    yield S("0dim", make((), d, rng), make((2, 2), d, rng))
    yield S("same", make((2, 3), d, rng), make((2, 3), d, rng))
    yield S("to_empty", make((1, 3), d, rng), make((0, 3), d, rng))


_view_op(
    "expand_as",
    _expand_as_samples,
    lambda x, other: np.broadcast_to(x, other.shape),
    function=False,
    view_write="base",
)


def _flatten_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((2, 3, 4), d, rng))
    yield S("start1", make((2, 3, 4), d, rng), 1)
    yield S("start0_end1", make((2, 3, 4), d, rng), 0, 1)
    yield S("neg_dims_kw", make((2, 3, 4, 5), d, rng), start_dim=-3, end_dim=-2)
    yield S("0dim", make((), d, rng))
    yield S("1d", make((5,), d, rng))


def _ref_flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return (
        x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1 :])
        if x.size
        else x.reshape(x.shape[:s] + (int(np.prod(x.shape[s : e + 1])),) + x.shape[e + 1 :])
    )


_view_op("flatten.using_ints", _flatten_samples, _ref_flatten)


def _unflatten_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim1", make((2, 12), d, rng), 1, [3, 4])
    yield S("infer", make((2, 12), d, rng), 1, (3, -1))
    yield S("neg_dim", make((6, 2), d, rng), -2, [1, 2, 3])
    yield S("single", make((4,), d, rng), 0, [4])
    yield S("empty", make((0, 3), d, rng), 0, [0, 5])
    yield S("kw", make((2, 6), d, rng), dim=1, sizes=[-1, 2])


def _ref_unflatten(x: Any, dim: int, sizes: Any) -> Any:
    dim %= x.ndim
    sizes = list(sizes)
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[dim] // int(np.prod([n for n in sizes if n != -1]))
    return x.reshape(x.shape[:dim] + tuple(sizes) + x.shape[dim + 1 :])


_view_op("unflatten.int", _unflatten_samples, _ref_unflatten)


def _select_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((2, 3), d, rng), 0, 1)
    yield S("dim1_neg_index", make((2, 3), d, rng), 1, -1)
    yield S("neg_dim", make((2, 3, 4), d, rng), -1, 2)
    yield S("to_0dim", make((4,), d, rng), 0, 3)


def _ref_select(x: Any, dim: int, index: int) -> Any:
    dim = dim % x.ndim
    return x[(slice(None),) * dim + (index, Ellipsis)]  # Ellipsis keeps a 0-dim view


_view_op("select.int", _select_samples, _ref_select)


def _unbind_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((3, 2), d, rng))
    yield S("dim1", make((2, 3), d, rng), 1)
    yield S("neg_dim_kw", make((2, 3, 4), d, rng), dim=-1)
    yield S("to_0dim", make((4,), d, rng))
    yield S("empty_other_dim", make((0, 3), d, rng), 1)
    yield S("empty", make((0, 3), d, rng), 0)


def _ref_unbind(x: Any, dim: int = 0) -> list[Any]:
    dim %= x.ndim
    return [x[(slice(None),) * dim + (i, Ellipsis)] for i in range(x.shape[dim])]


_view_op("unbind.int", _unbind_samples, _ref_unbind)


def _slice_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((5, 3), d, rng), 0, 1, 3)
    yield S("step2", make((3, 6), d, rng), 1, None, None, 2)
    yield S("end_beyond", make((5,), d, rng), 0, 2, 100)
    yield S("neg_start", make((5, 2), d, rng), 0, -2)
    yield S("start_gt_end_empty", make((5,), d, rng), 0, 4, 2)
    yield S("kw", make((4, 5), d, rng), dim=-1, start=1, end=4, step=2)
    yield S("defaults", make((3,), d, rng))


def _ref_slice(x: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Any:
    dim = dim % x.ndim
    return x[(slice(None),) * dim + (slice(start, end, step),)]


_view_op("slice.Tensor", _slice_samples, _ref_slice, method=False)


def _narrow_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim1", make((2, 5), d, rng), 1, 1, 3)
    yield S("neg_start", make((5, 2), d, rng), 0, -3, 2)
    yield S("neg_dim", make((2, 3, 4), d, rng), -1, 0, 4)
    yield S("empty_at_end", make((4,), d, rng), 0, 4, 0)


def _ref_narrow(x: Any, dim: int, start: Any, length: int) -> Any:
    dim %= x.ndim
    start = int(start) % x.shape[dim] if int(start) < 0 else int(start)
    return x[(slice(None),) * dim + (slice(start, start + length),)]


_view_op("narrow", _narrow_samples, _ref_narrow)


def _narrow_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim1", make((2, 5), d, rng), 1, np.array(1), 3)
    yield S("neg_start", make((5, 2), d, rng), 0, np.array(-3), 2)
    yield S("int32_start", make((4,), d, rng), 0, np.array(2, np.int32), 1)


_view_op("narrow.Tensor", _narrow_tensor_samples, _ref_narrow)


def _split_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("uneven", make((5, 2), d, rng), 2)
    yield S("even_dim1", make((2, 6), d, rng), 3, 1)
    yield S("larger_than_dim", make((3,), d, rng), 5)
    yield S("neg_dim_kw", make((2, 5), d, rng), 2, dim=-1)


def _ref_split(x: Any, split_size: int, dim: int = 0) -> list[Any]:
    n = x.shape[dim]
    cuts = list(range(split_size, n, split_size))
    return np.split(x, cuts, axis=dim)


_view_op("split.Tensor", _split_samples, _ref_split)


def _split_sizes_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("1_4", make((5, 2), d, rng), [1, 4])
    yield S("with_zero", make((5,), d, rng), [2, 0, 3])
    yield S("neg_dim", make((2, 6), d, rng), [3, 1, 2], -1)
    yield S("single", make((3,), d, rng), [3])


def _ref_split_sizes(x: Any, split_sizes: list[int], dim: int = 0) -> list[Any]:
    return np.split(x, list(np.cumsum(split_sizes)[:-1]), axis=dim)


_view_op("split_with_sizes", _split_sizes_samples, _ref_split_sizes)


def _chunk_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("5_into_3", make((5,), d, rng), 3)
    yield S("6_into_4_gives_3", make((6,), d, rng), 4)
    yield S("dim1", make((2, 6), d, rng), 2, 1)
    yield S("neg_dim", make((2, 3), d, rng), 3, -1)
    yield S("more_chunks_than_elements", make((2,), d, rng), 5)


def _ref_chunk(x: Any, chunks: int, dim: int = 0) -> list[Any]:
    n = x.shape[dim]
    size = -(-n // chunks)  # ceil: chunk may return fewer than `chunks` pieces
    return _ref_split(x, max(size, 1), dim)


_view_op("chunk", _chunk_samples, _ref_chunk)


def _flip_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((3, 2), d, rng), [0])
    yield S("two_dims", make((2, 3, 4), d, rng), [0, -1])
    yield S("no_dims", make((2, 3), d, rng), [])
    yield S("0dim", make((), d, rng), [0])
    yield S("empty", make((0, 3), d, rng), (1,))


add(
    OpInfo(
        "flip",
        op=fn("flip"),
        method=meth("flip"),
        sample_inputs=_flip_samples,
        ref=lambda x, dims: np.flip(x, tuple(dims)) if x.ndim and len(dims) else x,
        dtypes=ALL,
    )
)


def _roll_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("flat", make((2, 3), d, rng), 1)
    yield S("flat_neg_big", make((2, 3), d, rng), [-8])
    yield S("one_dim", make((2, 3), d, rng), 2, 1)
    yield S("two_dims", make((2, 3, 4), d, rng), [1, -5], [0, -1])
    yield S("same_dim_twice", make((5,), d, rng), (1, 2), (0, 0))
    yield S("0dim", make((), d, rng), 3)
    yield S("empty", make((0, 3), d, rng), 1, 0)
    yield S("kw", make((4,), d, rng), shifts=-1, dims=0)


def _ref_roll(x: Any, shifts: Any, dims: Any = ()) -> Any:
    if isinstance(dims, int) or len(dims):
        return np.roll(x, shifts, dims)
    return np.roll(x, shifts if isinstance(shifts, int) else shifts[0])


add(
    OpInfo(
        "roll",
        op=fn("roll"),
        method=meth("roll"),
        sample_inputs=_roll_samples,
        ref=_ref_roll,
        dtypes=ALL,
    )
)


def _repeat_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((2, 3), d, rng), [2, 3])
    yield S("new_dims", make((2, 3), d, rng), [2, 1, 2])
    yield S("ones", make((2, 3), d, rng), [1, 1])
    yield S("zero", make((2, 3), d, rng), (0, 2))
    yield S("0dim", make((), d, rng), [2, 3])
    yield S("0dim_none", make((), d, rng), [])
    yield S("empty", make((0, 2), d, rng), [3, 2])


add(
    OpInfo(
        "repeat",
        op=meth("repeat"),
        sample_inputs=_repeat_samples,
        ref=lambda x, repeats: np.tile(x, repeats),
        dtypes=ALL,
    )
)


def _triangle_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("square", make((3, 3), d, rng))
    yield S("wide_k1", make((3, 5), d, rng), 1)
    yield S("tall_kneg", make((5, 3), d, rng), -2)
    yield S("batched_kw", make((2, 3, 4), d, rng), diagonal=-1)
    yield S("k_beyond", make((2, 3), d, rng), 7)
    yield S("k_below", make((2, 3), d, rng), -7)
    yield S("empty", make((0, 3), d, rng))


for _name, _ref_tri in (("tril", np.tril), ("triu", np.triu)):
    add_inplace(
        add(
            OpInfo(
                _name,
                op=fn(_name),
                method=meth(_name),
                sample_inputs=_triangle_samples,
                ref=lambda x, diagonal=0, _f=_ref_tri: _f(x, diagonal),
                dtypes=ALL,
            )
        ),
        f"{_name}_",
        f"{_name}_",
    )


def _diag_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("vector", make((3,), d, rng))
    yield S("vector_k1", make((3,), d, rng), 1)
    yield S("vector_kneg", make((2,), d, rng), -2)
    yield S("square", make((3, 3), d, rng))
    yield S("wide_k1", make((2, 4), d, rng), 1)
    yield S("tall_kneg_kw", make((4, 2), d, rng), diagonal=-1)
    yield S("matrix_k_beyond", make((2, 3), d, rng), 5)
    yield S("empty_vector", make((0,), d, rng), 2)


add(
    OpInfo(
        "diag",
        op=fn("diag"),
        method=meth("diag"),
        sample_inputs=_diag_samples,
        ref=lambda x, diagonal=0: np.diag(x, diagonal).copy(),
        dtypes=ALL,
    )
)


def _diagonal_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("square", make((3, 3), d, rng))
    yield S("wide_k1", make((2, 4), d, rng), 1)
    yield S("tall_kneg", make((4, 2), d, rng), -1)
    yield S("batched_dims", make((2, 3, 4), d, rng), 0, 0, 2)
    yield S("neg_dims_swapped_kw", make((2, 3, 4), d, rng), offset=1, dim1=-1, dim2=0)
    yield S("k_beyond", make((2, 3), d, rng), 5)
    yield S("empty", make((0, 3), d, rng))


def _ref_diagonal(x: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    r = np.diagonal(x, offset, dim1 % x.ndim, dim2 % x.ndim)
    r.flags.writeable = x.flags.writeable  # numpy's diagonal is read-only only by caution
    return r


_view_op("diagonal", _diagonal_samples, _ref_diagonal)


# --- strided views (strided backends only: Note [Strided layout] in tensorplug/_strides.py) --
# The samples' inputs are new row-major tensors, so their storage is the oracle's ``x.ravel()``.


def _strided_ref(x: Any, size: Any, stride: Any, storage_offset: Any = None) -> Any:
    flat = x.reshape(-1)[storage_offset or 0 :]
    item = x.itemsize
    return np.lib.stride_tricks.as_strided(flat, tuple(size), tuple(s * item for s in stride))


def _as_strided_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("transposed", make((6,), d, rng), (2, 3), (1, 2))
    yield S("offset", make((3, 4), d, rng), (2, 3), (4, 1), 1)
    yield S("overlapping", make((5,), d, rng), (3, 2), (1, 1))
    yield S("zero_stride_kw", make((2, 3), d, rng), [2, 2], [0, 1], storage_offset=2)
    yield S("0dim", make((4,), d, rng), (), (), 3)
    yield S("empty", make((3,), d, rng), (0, 2), (1, 1))


def _unfold_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim1", make((3, 5), d, rng), 1, 2, 1)
    yield S("step2", make((3, 5), d, rng), 1, 3, 2)
    yield S("dim0_neg", make((4, 3), d, rng), -2, 2, 2)
    yield S("3d", make((2, 5, 2), d, rng), 1, 4, 1)
    yield S("size0", make((4,), d, rng), 0, 0, 1)
    yield S("0dim", make((), d, rng), 0, 1, 1)


def _ref_unfold(x: Any, dimension: int, size: int, step: int) -> Any:
    if x.ndim == 0:
        return x.reshape((size,))
    dim = dimension % x.ndim
    n = (x.shape[dim] - size) // step + 1
    shape = (*x.shape[:dim], n, *x.shape[dim + 1 :], size)
    st = x.strides
    strides = (*st[:dim], st[dim] * step, *st[dim + 1 :], st[dim])
    return np.lib.stride_tricks.as_strided(x, shape, strides)


def _as_strided_scatter_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("diagonal", make((3, 3), d, rng), make((3,), d, rng), (3,), (4,))
    yield S("block_offset", make((3, 4), d, rng), make((2, 2), d, rng), (2, 2), (4, 1), 5)


def _ref_as_strided_scatter(
    x: Any, src: Any, size: Any, stride: Any, storage_offset: Any = None
) -> Any:
    out = x.copy()
    _strided_ref(out, size, stride, storage_offset)[...] = src
    return out


for _name, _samples, _ref, _method_only in (
    ("as_strided", _as_strided_samples, _strided_ref, False),
    ("unfold", _unfold_samples, _ref_unfold, True),
):
    add(
        OpInfo(
            _name,
            op=meth(_name) if _method_only else fn(_name),
            method=None if _method_only else meth(_name),
            sample_inputs=_samples,
            ref=_ref,
            dtypes=VIEW_DTYPES,
            kind="view",
            needs_strides=_name == "as_strided",
            strided_view=_name == "unfold",  # a copy on a backend without strides
        )
    )


# view.dtype: the same memory read as another dtype (numpy's ndarray.view); the samples' target
# dtypes avoid float16/bfloat16, which the oracle computes in float64
_VIEW_AS = {
    "float32": ("int32", "int64", "uint8"),
    "int32": ("float32", "int64", "int16"),
    "float64": ("int64", "int32", "float32"),
    "int64": ("float64", "int32", "uint8"),
}


def _view_dtype_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    same, wider, narrower = (getattr(tp, n) for n in _VIEW_AS[d])
    yield S("same_size", make((2, 4), d, rng), same)
    yield S("wider", make((3, 4), d, rng), wider)
    yield S("narrower", make((2, 3), d, rng), narrower)
    yield S("sliced_rows", make((4, 4), d, rng)[1:3], wider)


add(
    OpInfo(
        "view.dtype",
        op=lambda x, dtype: x.view(dtype),
        method=None,
        aten_variant=True,
        sample_inputs=_view_dtype_samples,
        ref=lambda x, dtype: x.view(dtype if isinstance(dtype, np.dtype | type) else dtype.name),
        dtypes=("float32", "int32", "float64", "int64"),
        result_dtype=lambda s, d: s.args[1].name if len(s.args) > 1 else d,
        kind="view",
        needs_strides=True,
    )
)


def _as_strided_inplace_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # in place, the shape stays: what the harness's in-place checks compare
    yield S("column_major", make((2, 3), d, rng), (2, 3), (1, 2))
    yield S("broadcast_offset", make((4,), d, rng), (4,), (0,), 2)


add(
    OpInfo(
        "as_strided_",
        op=meth("as_strided_"),
        method=None,
        sample_inputs=_as_strided_inplace_samples,
        ref=_strided_ref,
        dtypes=VIEW_DTYPES,
        kind="inplace",
        needs_strides=True,
    )
)
add(
    OpInfo(
        "as_strided_scatter",
        op=fn("as_strided_scatter"),
        method=meth("as_strided_scatter"),
        sample_inputs=_as_strided_scatter_samples,
        ref=_ref_as_strided_scatter,
        dtypes=ALL,
        needs_strides=True,
    )
)


def _cat_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", [make((2, 3), d, rng), make((1, 3), d, rng)])
    yield S("dim1", [make((2, 3), d, rng), make((2, 2), d, rng)], 1)
    yield S("neg_dim_three", [make((2, 1), d, rng), make((2, 2), d, rng), make((2, 3), d, rng)], -1)
    yield S("with_empty", [make((0, 3), d, rng), make((2, 3), d, rng)], dim=0)
    yield S("single", [make((4,), d, rng)])
    if d == "float32":
        yield S("promote_int64_float32", [make((2,), "int64", rng), make((3,), d, rng)])


add(
    OpInfo(
        "cat",
        op=fn("cat"),
        sample_inputs=_cat_samples,
        ref=lambda ts, dim=0: np.concatenate(ts, axis=dim),
        dtypes=ALL,
        result_dtype=lambda s, d: result_type(*s.args[0]),
    )
)


def _stack_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", [make((2, 3), d, rng), make((2, 3), d, rng)])
    yield S("dim1", [make((2, 3), d, rng), make((2, 3), d, rng), make((2, 3), d, rng)], 1)
    yield S("neg_dim", [make((2, 3), d, rng), make((2, 3), d, rng)], dim=-1)
    yield S("0dim", [make((), d, rng), make((), d, rng)])
    yield S("empty", [make((0,), d, rng), make((0,), d, rng)], 1)


add(
    OpInfo(
        "stack",
        op=fn("stack"),
        sample_inputs=_stack_samples,
        ref=lambda ts, dim=0: np.stack(ts, axis=dim),
        dtypes=ALL,
        result_dtype=lambda s, d: result_type(*s.args[0]),
    )
)


# --- group G: composites of the shape ops ------------------------------------------------------


def _moveaxis_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("int", make((2, 3, 4), d, rng), 0, -1)
    yield S("lists", make((2, 3, 4), d, rng), [0, 1], [2, 0])
    yield S("0dim", make((), d, rng), 0, 0)


_view_op(
    "moveaxis.int",
    lambda d, rng: (s for s in _moveaxis_samples(d, rng) if not isinstance(s.args[1], list)),
    lambda x, s, t: np.moveaxis(x, s, t) if x.ndim else x[...],
)
_view_op(
    "moveaxis.intlist",
    lambda d, rng: (s for s in _moveaxis_samples(d, rng) if isinstance(s.args[1], list)),
    lambda x, s, t: np.moveaxis(x, s, t),
)


def _ravel_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((2, 3), d, rng))
    yield S("0dim", make((), d, rng))
    yield S("empty", make((0, 3), d, rng))


_view_op("ravel", _ravel_samples, lambda x: np.reshape(x, -1))


def _broadcast_to_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("column", make((3, 1), d, rng), [3, 4])
    yield S("new_leading", make((3,), d, rng), (2, 3))
    yield S("0dim", make((), d, rng), [2, 2])
    yield S("keep", make((2, 3), d, rng), [-1, 3])


_view_op(
    "broadcast_to",
    _broadcast_to_samples,
    lambda x, size: np.broadcast_to(
        x, [x.shape[i - len(size) + x.ndim] if n == -1 else n for i, n in enumerate(size)]
    ),
    view_write="base",
)


def _split_sizes_list_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("1_2", make((3, 2), d, rng), [1, 2])
    yield S("dim1", make((2, 5), d, rng), [4, 0, 1], 1)


_view_op(
    "split.sizes",
    _split_sizes_list_samples,
    lambda x, sizes, dim=0: np.split(x, np.cumsum(sizes)[:-1], axis=dim),
)


def _tensors_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("two", [make((2, 1), d, rng), make((3,), d, rng)])
    yield S("three", [make((), d, rng), make((4, 1, 2), d, rng), make((1, 2), d, rng)])
    yield S("one", [make((2,), d, rng)])


add(
    OpInfo(
        "broadcast_tensors",
        op=fn("broadcast_tensors"),
        sample_inputs=_tensors_samples,
        ref=lambda ts: [np.array(t) for t in np.broadcast_arrays(*ts)],
        dtypes=ALL,
    )
)


def _meshgrid_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("ij", [make((2,), d, rng), make((3,), d, rng)], indexing="ij")
    yield S("xy", [make((2,), d, rng), make((3,), d, rng), make((4,), d, rng)], indexing="xy")
    yield S("0dim_xy", [make((), d, rng), make((3,), d, rng)], indexing="xy")
    yield S("one_xy", [make((2,), d, rng)], indexing="xy")


add(
    OpInfo(
        "meshgrid.indexing",
        op=fn("meshgrid"),
        sample_inputs=_meshgrid_samples,
        ref=lambda ts, indexing: [
            np.array(m) for m in np.meshgrid(*[np.ravel(t) for t in ts], indexing=indexing)
        ],
        dtypes=ALL,
    )
)


def _meshgrid_default_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("two", [make((2,), d, rng), make((3,), d, rng)])


add(
    OpInfo(
        "meshgrid",
        op=fn("meshgrid"),
        sample_inputs=_meshgrid_default_samples,
        ref=lambda ts: [np.array(m) for m in np.meshgrid(*ts, indexing="ij")],
        dtypes=FLOATS,
    )
)


def _tile_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("fewer_dims", make((2, 3), d, rng), [2])
    yield S("more_dims", make((2, 3), d, rng), (2, 1, 2))
    yield S("0dim", make((), d, rng), [3])
    yield S("empty", make((0, 2), d, rng), [2, 2])


add(
    OpInfo(
        "tile",
        op=fn("tile"),
        method=meth("tile"),
        sample_inputs=_tile_samples,
        ref=lambda x, dims: np.tile(x, dims),
        dtypes=ALL,
    )
)


def _repeat_interleave_int_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("flat", make((2, 3), d, rng), 2)
    yield S("dim1", make((2, 3), d, rng), 3, 1)
    yield S("neg_dim_output_size", make((2, 3), d, rng), 2, dim=-2, output_size=4)
    yield S("zero", make((2, 3), d, rng), 0, 0)
    yield S("0dim", make((), d, rng), 3)


def _ref_repeat_interleave(x: Any, repeats: Any, dim: Any = None, output_size: Any = None) -> Any:
    return np.repeat(x, repeats, axis=dim)


add(
    OpInfo(
        "repeat_interleave.self_int",
        op=fn("repeat_interleave"),
        method=meth("repeat_interleave"),
        sample_inputs=_repeat_interleave_int_samples,
        ref=_ref_repeat_interleave,
        dtypes=ALL,
    )
)


def _repeat_interleave_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((3, 2), d, rng), np.array([1, 0, 2]), 0)
    yield S("flat", make((2, 2), d, rng), np.array([1, 2, 0, 1]))
    yield S("one_count", make((2, 3), d, rng), np.array([2]), 1)
    yield S("0dim_count", make((2, 3), d, rng), np.array(2), dim=1, output_size=6)


add(
    OpInfo(
        "repeat_interleave.self_Tensor",
        op=fn("repeat_interleave"),
        method=meth("repeat_interleave"),
        sample_inputs=_repeat_interleave_tensor_samples,
        ref=_ref_repeat_interleave,
        dtypes=ALL,
    )
)


def _flip2_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((2, 3), d, rng))
    yield S("3d", make((2, 3, 4), d, rng))
    yield S("empty", make((0, 3), d, rng))


for _name, _np_flip in (("fliplr", np.fliplr), ("flipud", np.flipud)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_flip2_samples,
            ref=lambda x, _f=_np_flip: _f(x).copy(),
            dtypes=ALL,
        )
    )


# --- numpy's names for splits, stacks and rotations (issue 29) ---------------------------------

# composites of dtype-generic ops: one floating dtype and one integral (gradcheck draws its
# float64 samples from the same generators)
_GENERIC = ("float32", "int64")


def _tensor_split_sections_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("7_into_3", make((7,), d, rng), 3)
    yield S("dim1_uneven", make((2, 5), d, rng), 3, 1)
    yield S("more_than_size", make((2,), d, rng), 4)
    yield S("neg_dim_kw", make((3, 4), d, rng), sections=2, dim=-1)


def _tensor_split_indices_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("ordered", make((6,), d, rng), [1, 4])
    yield S("unordered_negative", make((5, 2), d, rng), [4, 2, -1])
    yield S("beyond_dim1", make((2, 3), d, rng), [2, 9], 1)
    yield S("none", make((3,), d, rng), [])


def _tensor_split_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("indices", make((6, 2), d, rng), np.array([2, 3], np.int64))
    yield S("sections_0d", make((2, 5), d, rng), np.array(2, np.int64), 1)


def _ref_tensor_split(x: Any, at: Any, dim: int = 0) -> list[Any]:
    at = at.tolist() if isinstance(at, np.ndarray) else at
    return np.array_split(x, at, axis=dim) if isinstance(at, int) else np.split(x, at, axis=dim)


def _ref_tensor_split_kw(x: Any, sections: Any = None, dim: int = 0) -> list[Any]:
    return _ref_tensor_split(x, sections, dim)


_view_op(
    "tensor_split.sections",
    _tensor_split_sections_samples,
    lambda x, sections, dim=0: _ref_tensor_split(x, sections, dim),
    dtypes=_GENERIC,
)
_view_op("tensor_split.indices", _tensor_split_indices_samples, _ref_tensor_split, dtypes=_GENERIC)
_view_op("tensor_split.tensor_indices_or_sections", _tensor_split_tensor_samples, _ref_tensor_split)


def _np_split_samples(
    least: int, overload: str
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        shape = (4, 6, 4)[:least] if least > 1 else (6,)
        if overload == "int":
            yield S("even", make(shape, d, rng), 2)
            return
        yield S("indices", make(shape, d, rng), [1, 3])
        if least == 1:
            yield S("2d", make((2, 4), d, rng), [3])

    return samples


for _name, _least, _np_fn in (
    ("hsplit", 1, np.hsplit),
    ("vsplit", 2, np.vsplit),
    ("dsplit", 3, np.dsplit),
):
    for _overload in ("int", "array"):
        _view_op(
            f"{_name}.{_overload}",
            _np_split_samples(_least, _overload),
            lambda x, n, _f=_np_fn: _f(x, n),
            dtypes=_GENERIC,
        )


def _concat_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", [make((2, 3), d, rng), make((1, 3), d, rng)])
    yield S("dim1_kw", [make((2, 1), d, rng), make((2, 2), d, rng)], dim=1)
    yield S("neg_dim", [make((2,), d, rng), make((3,), d, rng)], -1)


for _name in ("concat", "concatenate"):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            sample_inputs=_concat_samples,
            ref=lambda ts, dim=0: np.concatenate(ts, axis=dim),
            dtypes=("float32", "int64"),
        )
    )


def _row_stack_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("1d", [make((3,), d, rng), make((3,), d, rng)])
    yield S("2d_and_1d", [make((2, 3), d, rng), make((3,), d, rng)])
    yield S("0d", [make((), d, rng), make((), d, rng)])


add(
    OpInfo(
        "row_stack",
        op=fn("row_stack"),
        sample_inputs=_row_stack_samples,
        ref=lambda ts: np.vstack(ts),
        dtypes=("float32", "int64"),
    )
)


def _swapdims_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((2, 3), d, rng), 0, 1)
    yield S("3d_neg", make((2, 3, 4), d, rng), -1, 0)
    yield S("same", make((2, 3), d, rng), 1, 1)


_view_op("swapdims", _swapdims_samples, lambda x, a, b: np.swapaxes(x, a, b), dtypes=_GENERIC)


def _adjoint_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((2, 3), d, rng))
    yield S("batched", make((2, 3, 1), d, rng))


_view_op(
    "adjoint", _adjoint_samples, lambda x: np.swapaxes(x, -1, -2), dtypes=_GENERIC
)  # real: no conjugate


def _diagflat_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("1d", make((3,), d, rng))
    yield S("2d_offset", make((2, 2), d, rng), 1)
    yield S("neg_offset_kw", make((2,), d, rng), offset=-2)
    yield S("0d", make((), d, rng))


add(
    OpInfo(
        "diagflat",
        op=fn("diagflat"),
        method=meth("diagflat"),
        sample_inputs=_diagflat_samples,
        ref=lambda x, offset=0: np.diagflat(x, offset),
        dtypes=("float32", "int64"),
    )
)


def _rot90_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((2, 3), d, rng))
    yield S("k2", make((2, 3), d, rng), 2)
    yield S("k3_dims", make((2, 3, 4), d, rng), 3, [2, 0])
    yield S("k_neg", make((3, 2), d, rng), -1)
    yield S("k0_kw", make((2, 2), d, rng), k=4, dims=[1, 0])


add(
    OpInfo(
        "rot90",
        op=fn("rot90"),
        method=meth("rot90"),
        sample_inputs=_rot90_samples,
        ref=lambda x, k=1, dims=(0, 1): np.rot90(x, k, tuple(dims)).copy(),
        dtypes=("float32", "int64"),
    )
)


def _vander_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((3,), d, rng, -2, 2))
    yield S("N4_increasing", make((3,), d, rng, -2, 2), 4, True)
    yield S("N1", make((2,), d, rng), N=1)
    yield S("N0", make((2,), d, rng), 0)
    yield S("empty", make((0,), d, rng))


def _ref_vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    if x.dtype.kind in "biu":
        x = x.astype(np.int64)
    return np.vander(x, N, increasing)


add(
    OpInfo(
        "vander",
        op=fn("vander"),
        sample_inputs=_vander_samples,
        ref=_ref_vander,
        dtypes=("float32", "int64"),
        result_dtype=lambda s, d: d if is_float(d) else "int64",
    )
)


def _cartesian_prod_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("two", [make((2,), d, rng), make((3,), d, rng)])
    yield S("three", [make((2,), d, rng), make((1,), d, rng), make((2,), d, rng)])
    yield S("one", [make((3,), d, rng)])
    yield S("empty", [make((0,), d, rng), make((2,), d, rng)])


def _ref_cartesian_prod(ts: list[Any]) -> Any:
    if len(ts) == 1:
        return ts[0]
    grids = np.meshgrid(*ts, indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], axis=1)


add(
    OpInfo(
        "cartesian_prod",
        op=fn("cartesian_prod"),
        sample_inputs=_cartesian_prod_samples,
        ref=_ref_cartesian_prod,
        dtypes=("float32", "int64"),
    )
)


def _combinations_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((4,), d, rng))
    yield S("r3", make((4,), d, rng), 3)
    yield S("r1", make((3,), d, rng), 1)
    yield S("replacement", make((3,), d, rng), 2, True)
    yield S("r_beyond", make((2,), d, rng), r=3)
    yield S("r0", make((3,), d, rng), 0)


def _ref_combinations(x: Any, r: int = 2, with_replacement: bool = False) -> Any:
    if r == 0:
        return x[:0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(range(len(x)), r)), np.int64).reshape(-1, r)
    return x[idx]


add(
    OpInfo(
        "combinations",
        op=fn("combinations"),
        sample_inputs=_combinations_samples,
        ref=_ref_combinations,
        dtypes=("float32", "int64"),
    )
)


def _block_diag_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("mats", [make((2, 2), d, rng), make((1, 3), d, rng)])
    yield S("0d_1d_empty", [make((), d, rng), make((2,), d, rng), make((0, 2), d, rng)])
    yield S("one", [make((2, 3), d, rng)])
    if d == "float32":
        yield S("promote", [make((1, 1), "int64", rng), make((2, 2), d, rng)])


def _ref_block_diag(ts: list[Any]) -> Any:
    mats = [np.atleast_2d(t) for t in ts]
    out = np.zeros(
        (sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), np.result_type(*mats)
    )
    r = c = 0
    for m in mats:
        out[r : r + m.shape[0], c : c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


add(
    OpInfo(
        "block_diag",
        op=fn("block_diag"),
        sample_inputs=_block_diag_samples,
        ref=_ref_block_diag,
        dtypes=("float32", "int64"),
        result_dtype=lambda s, d: result_type(*s.args[0]),
    )
)


def _narrow_copy_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((4, 2), d, rng), 0, 1, 2)
    yield S("neg_start", make((2, 5), d, rng), 1, -3, 3)
    yield S("empty", make((3,), d, rng), 0, 3, 0)


add(
    OpInfo(
        "narrow_copy",
        op=fn("narrow_copy"),
        method=meth("narrow_copy"),
        sample_inputs=_narrow_copy_samples,
        ref=lambda x, dim, start, length: np.take(
            x, range(start % x.shape[dim], start % x.shape[dim] + length), axis=dim
        ),
        dtypes=("float32", "int64"),
    )
)


def _diff_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((2, 5), d, rng))
    yield S("n2_dim0", make((4, 3), d, rng), 2, 0)
    yield S("n_beyond", make((3,), d, rng), 5)
    yield S("n0", make((3,), d, rng), 0)
    yield S(
        "prepend_append", make((2, 3), d, rng), 1, -1, make((2, 1), d, rng), make((2, 2), d, rng)
    )
    yield S("append_kw", make((3,), d, rng), n=2, append=make((2,), d, rng))


def _ref_diff(x: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(x, n, axis=dim, **kw)


add(
    OpInfo(
        "diff",
        op=fn("diff"),
        method=meth("diff"),
        sample_inputs=_diff_samples,
        ref=_ref_diff,
        dtypes=ALL,
    )
)


def _trace_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("square", make((3, 3), d, rng))
    yield S("wide", make((2, 4), d, rng))
    yield S("empty", make((0, 3), d, rng))


add(
    OpInfo(
        "trace",
        op=fn("trace"),
        method=meth("trace"),
        sample_inputs=_trace_samples,
        ref=lambda x: np.asarray(np.trace(x)),
        dtypes=NUMERIC,
        result_dtype=lambda s, d: d if d in FLOATS else "int64",
    )
)


def _stack_list_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("1d", [make((3,), d, rng), make((3,), d, rng)])
    yield S("2d", [make((2, 3), d, rng), make((2, 3), d, rng)])
    yield S("0dim", [make((), d, rng), make((), d, rng)])
    yield S("3d", [make((2, 3, 1), d, rng), make((2, 3, 2), d, rng)])


def _stack_op(name: str, ref: Callable[..., Any], ok: Callable[[SampleInput], bool]) -> None:
    add(
        OpInfo(
            name,
            op=fn(name),
            sample_inputs=lambda d, rng: (s for s in _stack_list_samples(d, rng) if ok(s)),
            ref=ref,
            dtypes=ALL,
            result_dtype=lambda s, d: result_type(*s.args[0]),
        )
    )


_stack_op("vstack", lambda ts: np.vstack(ts), lambda s: s.name != "3d")
_stack_op("hstack", lambda ts: np.hstack(ts), lambda s: s.name != "3d")
_stack_op("dstack", lambda ts: np.dstack(ts), lambda s: True)
_stack_op("column_stack", lambda ts: np.column_stack(ts), lambda s: s.name != "3d")


def _atleast_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for shape in ((), (3,), (2, 3), (2, 3, 1), (1, 2, 1, 2)):
        yield S(f"{len(shape)}d", make(shape, d, rng))


def _atleast_seq_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("mixed", [make((), d, rng), make((3,), d, rng), make((2, 3), d, rng)])
    yield S("one", [make((2,), d, rng)])


for _n, _np_at in ((1, np.atleast_1d), (2, np.atleast_2d), (3, np.atleast_3d)):
    add(
        OpInfo(
            f"atleast_{_n}d",
            op=fn(f"atleast_{_n}d"),
            sample_inputs=_atleast_samples,
            ref=lambda x, _f=_np_at: np.array(_f(x)),
            dtypes=ALL,
        )
    )
    add(
        OpInfo(
            f"atleast_{_n}d.Sequence",
            op=fn(f"atleast_{_n}d"),
            sample_inputs=_atleast_seq_samples,
            ref=lambda ts, _f=_np_at: [np.array(_f(t)) for t in ts],
            dtypes=ALL,
        )
    )


def _kron_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d_2d", make((2, 3), d, rng), make((3, 2), d, rng))
    yield S("2d_1d", make((2, 3), d, rng), make((4,), d, rng))
    yield S("0dim", make((), d, rng), make((2,), d, rng))
    yield S("empty", make((0, 2), d, rng), make((2, 2), d, rng))


add(
    OpInfo(
        "kron",
        op=fn("kron"),
        method=meth("kron"),
        sample_inputs=_kron_samples,
        ref=lambda a, b: np.kron(a, b),
        dtypes=ALL,
        result_dtype=promoted(0, 1),
    )
)


def _tensordot_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("one_pair", make((2, 3), d, rng), make((3, 4), d, rng), [1], [0])
    yield S("two_pairs", make((2, 3, 4), d, rng), make((4, 3, 5), d, rng), [1, 2], [1, 0])
    yield S("none", make((2,), d, rng), make((3,), d, rng), [], [])
    yield S("neg", make((2, 3), d, rng), make((2, 4), d, rng), [-2], [0])


add(
    OpInfo(
        "tensordot",
        op=fn("tensordot"),
        sample_inputs=_tensordot_samples,
        ref=lambda a, b, da, db: np.tensordot(a, b, (da, db)),
        dtypes=NUMERIC,
    )
)


def _tensordot_int_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((2, 3, 4), d, rng), make((3, 4, 5), d, rng))
    yield S("dims1", make((2, 3), d, rng), make((3, 4), d, rng), dims=1)
    yield S("dims0", make((2,), d, rng), make((3,), d, rng), 0)


add(
    OpInfo(
        "tensordot.int",
        op=fn("tensordot"),
        sample_inputs=_tensordot_int_samples,
        ref=lambda a, b, dims=2: np.tensordot(a, b, dims),
        dtypes=NUMERIC,
    )
)


def _einsum_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("matmul", "ij,jk->ik", [make((2, 3), d, rng), make((3, 4), d, rng)])
    yield S("implicit", "ij,jk", [make((2, 3), d, rng), make((3, 4), d, rng)])
    yield S("batched", "bij,bjk->bik", [make((2, 2, 3), d, rng), make((2, 3, 4), d, rng)])
    yield S("transpose", "ij->ji", [make((2, 3), d, rng)])
    yield S("sum_all", "ij->", [make((2, 3), d, rng)])
    yield S("outer", "i,j", [make((3,), d, rng), make((2,), d, rng)])
    yield S("trace", "ii", [make((3, 3), d, rng)])
    yield S("diagonal", "ii->i", [make((3, 3), d, rng)])
    yield S("ellipsis", "...ij,...jk", [make((2, 2, 3), d, rng), make((3, 4), d, rng)])
    yield S("ellipsis_out", "i...->...", [make((2, 3, 4), d, rng)])
    yield S(
        "three", "ij,jk,kl->il", [make((2, 3), d, rng), make((3, 4), d, rng), make((4, 2), d, rng)]
    )
    yield S("upper_case", "Ba,a", [make((2, 3), d, rng), make((3,), d, rng)])
    yield S("spaces_broadcast", "i j , j", [make((2, 1), d, rng), make((3,), d, rng)])


add(
    OpInfo(
        "einsum",
        op=fn("einsum"),
        sample_inputs=_einsum_samples,
        ref=lambda eq, ts, path=None: np.asarray(np.einsum(eq.replace(" ", ""), *ts)),
        dtypes=NUMERIC,
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


# --- in-place views (issue 29): self becomes the view -------------------------------------------

from ._core import OP_DB, add_inplace_of_shape  # noqa: E402

for _base_name, _name in (
    ("squeeze", "squeeze_"),
    ("squeeze.dim", "squeeze_.dim"),
    ("unsqueeze", "unsqueeze_"),
    ("transpose.int", "transpose_"),
    ("swapaxes", "swapaxes_"),
    ("t", "t_"),
):
    add_inplace_of_shape(next(i for i in OP_DB if i.name == _base_name), _name, _name.split(".")[0])

# unsafe_chunk / unsafe_split / unsafe_split_with_sizes: chunk's and split's samples and values
# (their pieces are not checked as views: PyTorch does not promise that they are)
for _base_name, _name in (
    ("chunk", "unsafe_chunk"),
    ("split.Tensor", "unsafe_split.Tensor"),
    ("split_with_sizes", "unsafe_split_with_sizes"),
):
    _base = next(i for i in OP_DB if i.name == _base_name)
    add(
        OpInfo(
            _name,
            op=fn(_name.split(".")[0]),
            method=meth(_name.split(".")[0]),
            sample_inputs=_base.sample_inputs,
            ref=_base.ref,
            dtypes=_base.dtypes,
        )
    )


# --- storage ops (issue 29): self takes another size, or another tensor's storage ------------
# Strided backends only (needs_strides): elsewhere they raise, naming the op and the backend.
# The samples' inputs are new row-major tensors, so the storage a resize keeps is ``x.ravel()``;
# the samples keep or shrink the element count (a grown storage's new elements are not values).


def _resize_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same_numel", make((2, 6), d, rng), (3, 4))
    yield S("shrink", make((3, 4), d, rng), (5,))
    yield S("to_0dim", make((4,), d, rng), ())
    yield S("to_empty", make((2, 3), d, rng), (0, 3))


def _resize_as_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same_numel", make((2, 6), d, rng), make((4, 3), d, rng))
    yield S("shrink", make((3, 4), d, rng), make((2, 2), d, rng))


def _ref_resize(x: Any, size: Any) -> Any:
    n = int(np.prod(size, dtype=np.int64))
    return x.reshape(-1)[:n].reshape(tuple(size))


def _set_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("other_shape", make((2, 3), d, rng), make((4,), d, rng))
    yield S("same_shape", make((2, 2), d, rng), make((2, 2), d, rng))


def _set_offset_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("transposed", make((3,), d, rng), make((6,), d, rng), 0, (2, 3), (1, 2))
    yield S("offset", make((2,), d, rng), make((3, 4), d, rng), 1, (2, 3), (4, 1))
    yield S("default_stride", make((2,), d, rng), make((8,), d, rng), 2, (2, 3))


def _ref_set_offset(x: Any, source: Any, storage_offset: Any, size: Any, stride: Any = ()) -> Any:
    if not stride:  # contiguous strides for size
        acc, out = 1, []
        for s in reversed(tuple(size)):
            out.append(acc)
            acc *= max(int(s), 1)
        stride = tuple(reversed(out))
    return _strided_ref(source, size, stride, storage_offset)


def _set_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("plain", make((2, 3), d, rng))


_STORAGE_OP = dict(dtypes=VIEW_DTYPES, kind="inplace", needs_strides=True, result_dtype=same)
add(
    OpInfo(
        "resize_", op=meth("resize_"), sample_inputs=_resize_samples, ref=_ref_resize, **_STORAGE_OP
    )
)
add(
    OpInfo(
        "resize_as_",
        op=fn("resize_as_"),
        method=meth("resize_as_"),
        sample_inputs=_resize_as_samples,
        ref=lambda x, other: _ref_resize(x, other.shape),
        **_STORAGE_OP,
    )
)
add(
    OpInfo(
        "set_.source_Tensor",
        op=meth("set_"),
        sample_inputs=_set_tensor_samples,
        ref=lambda x, source: source,
        **_STORAGE_OP,
    )
)
add(
    OpInfo(
        "set_.source_Tensor_storage_offset",
        op=meth("set_"),
        sample_inputs=_set_offset_samples,
        ref=_ref_set_offset,
        **_STORAGE_OP,
    )
)
add(
    OpInfo(
        "set_",
        op=meth("set_"),
        sample_inputs=_set_samples,
        ref=lambda x: np.empty((0,), x.dtype),
        **_STORAGE_OP,
    )
)
add_inplace_of_shape(next(i for i in OP_DB if i.name == "swapdims"), "swapdims_", "swapdims_")
