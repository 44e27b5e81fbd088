"""The ``shape`` family of the composites: flatten and friends, view_as, movedim, broadcasting, narrow,
split and chunk, stacking, flips, diff, tile and repeat_interleave."""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as _dt
from .._op_errors import infer_size, torch_name
from ..ops import ops
from ..tensor import _wrap_dim

aten = ops.aten


def flatten(self: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    shape = list(self.shape)
    if self.ndim == 0:  # the dims must still be valid for a 0-d tensor: -1 or 0
        _wrap_dim(start_dim, 0, "flatten.using_ints")
        _wrap_dim(end_dim, 0, "flatten.using_ints")
        return aten.reshape.default(self, [1])
    s = _wrap_dim(start_dim, len(shape), "flatten.using_ints")
    e = _wrap_dim(end_dim, len(shape), "flatten.using_ints")
    if s > e:
        raise RuntimeError(
            "aten::flatten.using_ints: flatten() has invalid args: start_dim cannot come after end_dim"
        )
    if s == e:
        return aten.reshape.default(self, shape)
    n = 1
    for d in shape[s : e + 1]:
        n *= d
    return aten.reshape.default(self, [*shape[:s], n, *shape[e + 1 :]])


def unflatten(self: Any, dim: int, sizes: Any) -> Any:
    if self.ndim == 0:  # PyTorch wraps the dim error this way
        raise RuntimeError(
            "aten::unflatten.int: unflatten got an unexpected error:\n"
            f"Dimension specified as {dim} but tensor has no dimensions"
        )
    d = _wrap_dim(dim, self.ndim, "unflatten.int")
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("aten::unflatten.int: unflatten: sizes must be non-empty")
    shape = list(self.shape)
    known = math.prod(s for s in sizes if s != -1)
    n = shape[d]
    if (known != n) if -1 not in sizes else (n != 0 if known == 0 else n % known != 0):
        raise RuntimeError(
            f"aten::unflatten.int: unflatten: Provided sizes {sizes} don't multiply up to "
            f"the size of dim {dim} ({n}) in the input tensor"
        )
    try:
        sizes = list(infer_size(sizes, n))
    except RuntimeError as e:
        raise RuntimeError(f"aten::unflatten.int: unflatten got an unexpected error:\n{e}") from e
    return aten.view.default(self, [*shape[:d], *sizes, *shape[d + 1 :]])


def view_as(self: Any, other: Any) -> Any:
    return aten.view.default(self, list(other.shape))


def reshape_as(self: Any, other: Any) -> Any:
    return aten.reshape.default(self, list(other.shape))


def expand_as(self: Any, other: Any) -> Any:
    return aten.expand.default(self, list(other.shape))


def swapaxes(self: Any, axis0: int, axis1: int) -> Any:
    return aten.transpose.int(self, axis0, axis1)


def movedim(self: Any, source: Any, destination: Any) -> Any:
    """PyTorch's movedim: the moved dims go to their destinations, the others keep their order
    in the remaining places."""
    nd = self.ndim
    if len(source) != len(destination):
        raise RuntimeError(
            f"aten::movedim.intlist: movedim: Invalid source or destination dims: source "
            f"({list(source)} dims) should contain the same number of dims as destination "
            f"({list(destination)} dims)"
        )
    src = [_wrap_dim(d, nd, "movedim.intlist") for d in source]
    dst = [_wrap_dim(d, nd, "movedim.intlist") for d in destination]
    for what, given, wrapped in (("source", source, src), ("destination", destination, dst)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(
                f"aten::movedim.intlist: movedim: repeated dim in `{what}` ({list(given)})"
            )
    if nd == 0:  # the dims were checked; nothing moves
        return aten.permute.default(self, [])
    order = [-1] * nd
    for s, d in zip(src, dst, strict=True):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in set(src))
    perm = [next(rest) if o == -1 else o for o in order]
    return aten.permute.default(self, perm)


def movedim_int(self: Any, source: int, destination: int) -> Any:
    return movedim(self, [source], [destination])


def moveaxis(self: Any, source: Any, destination: Any) -> Any:
    return movedim(self, source, destination)


def moveaxis_int(self: Any, source: int, destination: int) -> Any:
    return movedim(self, [source], [destination])


def ravel(self: Any) -> Any:
    return aten.reshape.default(self, [-1])


def broadcast_to(self: Any, size: Any) -> Any:
    return aten.expand.default(self, list(size))


def broadcast_tensors(tensors: Any) -> Any:
    shape: list[int] = []
    for x in tensors:
        s = list(x.shape)
        if len(s) > len(shape):
            shape = [1] * (len(s) - len(shape)) + shape
        s = [1] * (len(shape) - len(s)) + s
        for i, (n, m) in enumerate(zip(shape, s, strict=True)):
            if n != m and n != 1 and m != 1:
                raise RuntimeError(
                    f"aten::broadcast_tensors: The size of tensor a ({n}) must match the size of "
                    f"tensor b ({m}) at non-singleton dimension {i}"
                )
            shape[i] = m if n == 1 else n
    return [aten.expand.default(x, shape) for x in tensors]


def _meshgrid(tensors: Any, indexing: str, overload: str) -> Any:
    if len(tensors) == 0:
        raise RuntimeError(f"aten::{overload}: meshgrid expects a non-empty TensorList")
    for x in tensors[1:]:
        if x.dtype is not tensors[0].dtype:
            raise RuntimeError(
                f"aten::{overload}: meshgrid expects all tensors to have the same dtype"
            )
    for x in tensors:
        if x.ndim > 1:
            raise RuntimeError(
                f"aten::{overload}: Expected 0D or 1D tensor in the tensor list but got: {x}"
            )
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'aten::{overload}: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    # "xy" is "ij" with the first two inputs swapped, and so their outputs
    swap = indexing == "xy" and len(tensors) >= 2
    ts = [tensors[1], tensors[0], *tensors[2:]] if swap else list(tensors)
    shape = [x.numel() for x in ts]
    out = []
    for i, x in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(aten.expand.default(aten.view.default(x, view), shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return out


def meshgrid(tensors: Any) -> Any:
    import warnings

    warnings.warn(  # PyTorch 2.13 still warns when indexing= is left out
        "tensorplug.meshgrid: pass the indexing argument, indexing='ij' (used when it is left "
        "out) or indexing='xy'; PyTorch will require it in an upcoming release.",
        UserWarning,
        stacklevel=2,
    )
    return _meshgrid(tensors, "ij", "meshgrid")


def meshgrid_indexing(tensors: Any, *, indexing: str) -> Any:
    return _meshgrid(tensors, indexing, "meshgrid.indexing")


def narrow(self: Any, dim: int, start: int, length: int) -> Any:
    if self.ndim == 0:
        raise RuntimeError("aten::narrow: narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("aten::narrow: narrow(): length must be non-negative.")
    d = _wrap_dim(dim, self.ndim, "narrow")
    n = self.shape[d]
    if not -n <= start <= n:
        raise IndexError(
            f"aten::narrow: start out of range (expected to be in range of [{-n}, {n}], but got "
            f"{start})"
        )
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(
            f"aten::narrow: start ({start}) + length ({length}) exceeds dimension size ({n})."
        )
    return aten.slice.Tensor(self, d, start, start + length)


def narrow_tensor(self: Any, dim: int, start: Any, length: int) -> Any:
    if start.ndim != 0 or start.dtype.is_floating_point or start.dtype.is_complex:
        raise RuntimeError("aten::narrow.Tensor: start must be an 0-dim integral Tensor.")
    return narrow(self, dim, int(start.item()), length)


def split_sizes(self: Any, split_size: Any, dim: int = 0) -> Any:
    return aten.split_with_sizes.default(self, list(split_size), dim)


def chunk(self: Any, chunks: int, dim: int = 0) -> Any:
    if self.ndim == 0:
        raise RuntimeError("aten::chunk: chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(
            f"aten::chunk: chunk expects `chunks` to be greater than 0, got: {chunks}"
        )
    d = _wrap_dim(dim, self.ndim, "chunk")
    size = self.shape[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        sizes = [0] * chunks
        return aten.split_with_sizes.default(self, sizes, d)
    return aten.split.Tensor(self, max(split_size, 1), d)


def stack(tensors: Any, dim: int = 0) -> Any:
    if len(tensors) == 0:
        raise RuntimeError("aten::stack: stack expects a non-empty TensorList")
    shape = tuple(tensors[0].shape)
    for i, x in enumerate(tensors):
        if tuple(x.shape) != shape:
            raise RuntimeError(
                f"aten::stack: stack expects each tensor to be equal size, but got {list(shape)} "
                f"at entry 0 and {list(x.shape)} at entry {i}"
            )
    d = _wrap_dim(dim, len(shape) + 1, "stack")
    return aten.cat.default([aten.unsqueeze.default(x, d) for x in tensors], d)


def _stack_check(tensors: Any, name: str) -> None:
    if len(tensors) == 0:
        raise RuntimeError(f"aten::{name}: {name} expects a non-empty TensorList")


def atleast_1d(self: Any) -> Any:
    return aten.reshape.default(self, [1]) if self.ndim == 0 else self


def atleast_2d(self: Any) -> Any:
    if self.ndim == 0:
        return aten.reshape.default(self, [1, 1])
    return aten.unsqueeze.default(self, 0) if self.ndim == 1 else self


def atleast_3d(self: Any) -> Any:
    if self.ndim == 0:
        return aten.reshape.default(self, [1, 1, 1])
    if self.ndim == 1:
        return aten.unsqueeze.default(aten.unsqueeze.default(self, 0), -1)
    return aten.unsqueeze.default(self, -1) if self.ndim == 2 else self


def atleast_1d_sequence(tensors: Any) -> Any:
    return [atleast_1d(x) for x in tensors]


def atleast_2d_sequence(tensors: Any) -> Any:
    return [atleast_2d(x) for x in tensors]


def atleast_3d_sequence(tensors: Any) -> Any:
    return [atleast_3d(x) for x in tensors]


def vstack(tensors: Any) -> Any:
    _stack_check(tensors, "vstack")
    return aten.cat.default([atleast_2d(x) for x in tensors], 0)


def hstack(tensors: Any) -> Any:
    _stack_check(tensors, "hstack")
    ts = [atleast_1d(x) for x in tensors]
    return aten.cat.default(ts, 0 if ts[0].ndim == 1 else 1)


def dstack(tensors: Any) -> Any:
    _stack_check(tensors, "dstack")
    return aten.cat.default([atleast_3d(x) for x in tensors], 2)


def column_stack(tensors: Any) -> Any:
    _stack_check(tensors, "column_stack")
    cols = [aten.reshape.default(x, [x.numel(), 1]) if x.ndim <= 1 else x for x in tensors]
    return aten.cat.default(cols, 1)


# --- numpy's names for splits, stacks and rotations (issue 29) ---------------------------------


def _tensor_split_at(self: Any, bounds: list[int], d: int) -> Any:
    """The pieces of ``self`` between consecutive ``bounds`` along ``d``: views (slices)."""
    n = self.shape[d]
    out, start = [], 0
    for b in [*bounds, n]:  # each piece from the last index to this one, as slices clamp them
        out.append(aten.slice.Tensor(self, d, start, max(b, start)))
        start = b
    return out


def _tensor_split_dim(self: Any, dim: int, overload: str) -> int:
    if self.ndim == 0:
        raise RuntimeError(
            f"aten::tensor_split.{overload}: tensor_split expected at least a 1-dimensional "
            "tensor, but got a tensor with 0 dims"
        )
    return _wrap_dim(dim, self.ndim, f"tensor_split.{overload}")


def tensor_split_sections(self: Any, sections: int, dim: int = 0) -> Any:
    d = _tensor_split_dim(self, dim, "sections")
    if sections <= 0:
        raise RuntimeError(
            f"aten::tensor_split.sections: number of sections must be larger than 0, got {sections}"
        )
    n = self.shape[d]
    small, extra = divmod(n, sections)
    bounds, at = [], 0
    for i in range(sections - 1):
        at += small + (1 if i < extra else 0)
        bounds.append(at)
    return _tensor_split_at(self, bounds, d)


def tensor_split_indices(self: Any, indices: Any, dim: int = 0) -> Any:
    d = _tensor_split_dim(self, dim, "indices")
    n = self.shape[d]
    # a negative index counts from the end, as a slice's start does
    return _tensor_split_at(self, [i + n if i < 0 else i for i in indices], d)


def tensor_split_tensor_indices_or_sections(
    self: Any, tensor_indices_or_sections: Any, dim: int = 0
) -> Any:
    t = tensor_indices_or_sections
    name = "aten::tensor_split.tensor_indices_or_sections"
    if t.dtype is not _dt.int64:
        raise RuntimeError(
            f"{name}: tensor_split expected tensor_indices_or_sections to have dtype of long, but "
            f"got {torch_name(t.dtype)}"
        )
    if t.ndim > 1:
        raise RuntimeError(
            f"{name}: tensor_split expected tensor_indices_or_sections to be a zero-dimensional "
            f"or one-dimensional tensor, but got a tensor with {t.ndim} dims"
        )
    if t.ndim == 0:
        return tensor_split_sections(self, int(t.item()), dim)
    return tensor_split_indices(self, [int(v.item()) for v in aten.unbind.int(t, 0)], dim)


def _numpy_split(name: str, dim: int, least: int, self: Any, sections: Any) -> Any:
    """hsplit/vsplit/dsplit: tensor_split along ``dim``, ``sections`` dividing it evenly."""
    overload = "int" if isinstance(sections, int) else "array"
    if self.ndim < least:
        raise RuntimeError(
            f"aten::{name}.{overload}: torch.{name} requires a tensor with at least {least} "
            f"dimension, but got a tensor with {self.ndim} dimensions!"
        )
    if overload == "array":
        return tensor_split_indices(self, list(sections), dim)
    if sections == 0 or self.shape[dim] % sections != 0:
        raise RuntimeError(
            f"aten::{name}.int: torch.{name} attempted to split along dimension {dim}, but the "
            f"size of the dimension {self.shape[dim]} is not divisible by the split_size "
            f"{sections}!"
        )
    return tensor_split_sections(self, sections, dim)


def hsplit_int(self: Any, sections: int) -> Any:
    return _numpy_split("hsplit", 0 if self.ndim == 1 else 1, 1, self, sections)


def hsplit_array(self: Any, indices: Any) -> Any:
    return _numpy_split("hsplit", 0 if self.ndim == 1 else 1, 1, self, indices)


def vsplit_int(self: Any, sections: int) -> Any:
    return _numpy_split("vsplit", 0, 2, self, sections)


def vsplit_array(self: Any, indices: Any) -> Any:
    return _numpy_split("vsplit", 0, 2, self, indices)


def dsplit_int(self: Any, sections: int) -> Any:
    return _numpy_split("dsplit", 2, 3, self, sections)


def dsplit_array(self: Any, indices: Any) -> Any:
    return _numpy_split("dsplit", 2, 3, self, indices)


def concat(tensors: Any, dim: int = 0) -> Any:
    return aten.cat.default(tensors, dim)


def concatenate(tensors: Any, dim: int = 0) -> Any:
    return aten.cat.default(tensors, dim)


def row_stack(tensors: Any) -> Any:
    _stack_check(tensors, "row_stack")
    return aten.cat.default([atleast_2d(x) for x in tensors], 0)


def swapdims(self: Any, dim0: int, dim1: int) -> Any:
    return aten.transpose.int(self, dim0, dim1)


def adjoint(self: Any) -> Any:
    """The conjugate transpose of the last two dims: a view of a real tensor."""
    if self.ndim < 2:
        raise RuntimeError(
            "aten::adjoint: tensor.adjoint() is only supported on matrices or batches of "
            f"matrices. Got {self.ndim}-D tensor."
        )
    t = aten.transpose.int(self, -2, -1)
    return aten.conj.default(t) if self.dtype.is_complex else t


def diagflat(self: Any, offset: int = 0) -> Any:
    return aten.diag.default(aten.reshape.default(self, [-1]), offset)


def rot90(self: Any, k: int = 1, dims: Any = (0, 1)) -> Any:
    """``k`` quarter turns from ``dims[0]`` towards ``dims[1]``: flips and a transpose."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(
            f"aten::rot90: expected total rotation dims == 2, but got dims = {len(dims)}"
        )
    if self.ndim < 2:
        raise RuntimeError(
            f"aten::rot90: expected total dims >= 2, but got total dims = {self.ndim}"
        )
    d0, d1 = (_wrap_dim(d, self.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(
            f"aten::rot90: expected rotation dims to be different, but got dim0 = {d0} and "
            f"dim1 = {d1}"
        )
    k %= 4
    if k == 1:
        return aten.transpose.int(aten.flip.default(self, [d1]), d0, d1)
    if k == 2:
        return aten.flip.default(self, [d0, d1])
    if k == 3:
        return aten.flip.default(aten.transpose.int(self, d0, d1), [d1])
    return aten.clone.default(self)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """Columns ``x**0 ... x**(N-1)`` (reversed unless ``increasing``), as a cumulative product;
    integral and bool ``x`` give int64."""
    if x.ndim != 1:
        raise RuntimeError("aten::vander: x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("aten::vander: N must be non-negative.")
    d = _dt.promote_types(x.dtype, _dt.int64)
    m = x.shape[0]
    ones = aten.ones.default([m, min(n, 1)], dtype=d, device=x.device)
    cols = [ones]
    if n > 1:
        xs = aten.expand.default(
            aten.reshape.default(aten._to_copy.default(x, dtype=d), [m, 1]), [m, n - 1]
        )
        cols.append(aten.cumprod.default(xs, 1))
    out = aten.cat.default(cols, 1)
    return out if increasing else aten.flip.default(out, [1])


def cartesian_prod(tensors: Any) -> Any:
    for x in tensors:
        if x.ndim != 1:
            raise RuntimeError(
                f"aten::cartesian_prod: Expect a 1D vector, but got shape {list(x.shape)}"
            )
    if len(tensors) == 1:
        return tensors[0]
    grids = aten.meshgrid.indexing(tensors, indexing="ij")
    return aten.stack.default([aten.reshape.default(g, [-1]) for g in grids], 1)


def combinations(self: Any, r: int = 2, with_replacement: bool = False) -> Any:
    """The r-element combinations of a vector's elements, in lexicographic order of positions.

    The positions are the coordinates of the ordered cells of an ``n**r`` grid (``nonzero`` of
    a mask made of ``arange``): they depend on ``n`` and ``r`` only, so under vmap they stay
    unbatched and the values are picked with ``index_select``."""
    if self.ndim != 1:
        raise RuntimeError(
            f"aten::combinations: Expect a 1D vector, but got shape {list(self.shape)}"
        )
    if r < 0:
        raise RuntimeError(f"aten::combinations: Expect a non-negative number, but got {r}")
    if r == 0:
        return aten.empty.memory_format([0], dtype=self.dtype, device=self.device)
    n = self.shape[0]
    pos = aten.arange.default(n, dtype=_dt.int64, device=self.device)
    grids = aten.meshgrid.indexing([pos] * r, indexing="ij")
    mask = aten.ones.default([n] * r, dtype=_dt.bool, device=self.device)
    for a, b in zip(grids, grids[1:], strict=False):
        ordered = aten.le.Tensor(a, b) if with_replacement else aten.lt.Tensor(a, b)
        mask = aten.logical_and.default(mask, ordered)
    idx = aten.nonzero.default(mask)  # (count, r)
    picked = aten.index_select.default(self, 0, aten.reshape.default(idx, [-1]))
    return aten.reshape.default(picked, [idx.shape[0], r])


def block_diag(tensors: Any) -> Any:
    """The tensors (each at most 2-d; a 0-d one is 1x1, a 1-d one a row) on the diagonal of one
    matrix of their promoted dtype, zeros elsewhere: each row band padded by zeros and the
    bands concatenated (PyTorch's kernel copies into zeros; the values and gradients agree)."""
    mats = []
    for i, x in enumerate(tensors):
        if x.ndim > 2:
            raise RuntimeError(
                "aten::block_diag: torch.block_diag: Input tensors must have 2 or fewer "
                f"dimensions. Input {i} has {x.ndim} dimensions"
            )
        mats.append(atleast_2d(x))
    d = mats[0].dtype
    for m in mats[1:]:
        d = _dt.promote_types(d, m.dtype)
    device = mats[0].device
    width = sum(m.shape[1] for m in mats)
    bands, left = [], 0
    for m in mats:
        rows, cols = m.shape
        m = aten._to_copy.default(m, dtype=d) if m.dtype is not d else m
        parts = [aten.zeros.default([rows, left], dtype=d, device=device), m]
        parts.append(aten.zeros.default([rows, width - left - cols], dtype=d, device=device))
        bands.append(aten.cat.default(parts, 1))
        left += cols
    return aten.cat.default(bands, 0)


def narrow_copy(self: Any, dim: int, start: int, length: int) -> Any:
    return aten.clone.default(narrow(self, dim, start, length))


def fliplr(self: Any) -> Any:
    if self.ndim < 2:
        raise RuntimeError("aten::fliplr: Input must be >= 2-d.")
    return aten.flip.default(self, [1])


def flipud(self: Any) -> Any:
    if self.ndim < 1:
        raise RuntimeError("aten::flipud: Input must be >= 1-d.")
    return aten.flip.default(self, [0])


def diff(self: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
    if self.ndim == 0:
        raise RuntimeError("aten::diff: diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"aten::diff: order must be non-negative but got {n}")
    d = _wrap_dim(dim, self.ndim, "diff")
    for x in (prepend, append):
        if x is not None and x.ndim != self.ndim:
            raise RuntimeError(
                "aten::diff: diff expects prepend or append to be the same dimension as input"
            )
    parts = [x for x in (prepend, self, append) if x is not None]
    out = aten.cat.default(parts, d) if len(parts) > 1 else self
    for _ in range(n):
        m = out.shape[d]
        if m == 0:
            break
        hi = aten.slice.Tensor(out, d, 1, m)
        lo = aten.slice.Tensor(out, d, 0, m - 1)
        # bools differ where they are not equal (PyTorch's logical_xor)
        out = aten.ne.Tensor(hi, lo) if out.dtype is _dt.bool else aten.sub.Tensor(hi, lo)
    return out if n else aten.clone.default(out)


def tile(self: Any, dims: Any) -> Any:
    dims = list(dims)
    return aten.repeat.default(self, [1] * (self.ndim - len(dims)) + dims)


def _repeat_interleave_size(n: int, output_size: int | None, overload: str) -> None:
    if output_size is not None and output_size != n:
        raise RuntimeError(
            f"aten::repeat_interleave.{overload}: repeat_interleave: Invalid output_size, "
            f"expected {n} but got {output_size}"
        )


def repeat_interleave_self_int(
    self: Any, repeats: int, dim: int | None = None, *, output_size: int | None = None
) -> Any:
    """Each element ``repeats`` times along ``dim``: a new dim after it, expanded and merged
    (PyTorch's own decomposition for an int, whose gradient is a sum over the copies)."""
    if repeats < 0:
        raise RuntimeError("aten::repeat_interleave.self_int: Repeats must be non-negative")
    x = aten.reshape.default(self, [-1]) if dim is None else self
    d = 0 if dim is None else _wrap_dim(dim, x.ndim, "repeat_interleave.self_int")
    if x.ndim == 0:
        x = aten.reshape.default(x, [1])
    shape = list(x.shape)
    _repeat_interleave_size(shape[d] * repeats, output_size, "self_int")
    spread = aten.unsqueeze.default(x, d + 1)
    grown = aten.expand.default(spread, [*shape[: d + 1], repeats, *shape[d + 1 :]])
    return aten.reshape.default(grown, [*shape[:d], shape[d] * repeats, *shape[d + 1 :]])


def repeat_interleave_self_tensor(
    self: Any, repeats: Any, dim: int | None = None, *, output_size: int | None = None
) -> Any:
    x = aten.reshape.default(self, [-1]) if dim is None else self
    d = 0 if dim is None else _wrap_dim(dim, x.ndim, "repeat_interleave.self_Tensor")
    if x.ndim == 0:
        x = aten.reshape.default(x, [1])
    if repeats.ndim == 0 or (repeats.ndim == 1 and repeats.shape[0] == 1):
        repeats = aten.expand.default(aten.reshape.default(repeats, [1]), [x.shape[d]])
    elif repeats.ndim == 1 and repeats.shape[0] != x.shape[d]:
        raise RuntimeError(
            "aten::repeat_interleave.self_Tensor: repeats must have the same size as input "
            f"along dim, but got repeats.size(0) = {repeats.shape[0]} and input.size({d}) = "
            f"{x.shape[d]}"
        )
    index = aten.repeat_interleave.Tensor(repeats, output_size=output_size)
    return aten.index_select.default(x, d, index)


def swapaxes_(self: Any, axis0: int, axis1: int) -> Any:
    """``swapaxes`` in place (an alias of ``transpose_``, as in PyTorch)."""
    return aten.transpose_.default(self, axis0, axis1)


def swapdims_(self: Any, dim0: int, dim1: int) -> Any:
    """``swapdims`` in place (an alias of ``transpose_``, as in PyTorch)."""
    return aten.transpose_.default(self, dim0, dim1)


def resize_as_(self: Any, the_template: Any, *, memory_format: Any = None) -> Any:
    """``resize_`` to the template's sizes (PyTorch's: the template only gives sizes, so it
    may live on another device)."""
    return aten.resize_.default(self, list(the_template.shape), memory_format=memory_format)


# --- unsafe_chunk, unsafe_split, unsafe_split_with_sizes (issue 29) ----------------------------
# PyTorch's "unsafe" forms return pieces autograd does not track as views, for code that
# knows it will not write into them; here the pieces of chunk and split serve (writing into
# them is tracked, so it stays correct).


def unsafe_chunk(self: Any, chunks: int, dim: int = 0) -> Any:
    return chunk(self, chunks, dim)


def unsafe_split(self: Any, split_size: int, dim: int = 0) -> Any:
    return aten.split.Tensor(self, split_size, dim)


def unsafe_split_with_sizes(self: Any, split_sizes: Any, dim: int = 0) -> Any:
    return aten.split_with_sizes.default(self, list(split_sizes), dim)
