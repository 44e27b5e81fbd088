"""Views and shape kernels: transpose, permute, view, reshape, (un)squeeze, expand, select,
unbind, slice, split, diagonal, cat, detach; and the shape ops that copy: flip, roll, repeat,
tril, triu (and tril_ / triu_ in place), diag.

Ops whose schema returns ``Tensor(a)`` return views made with ``Tensor._alias``: they share the
version counter and the memory of their base, so writing into a view writes through (numpy and
cupy basic indexing, transposes and reshapes without copy are views). ``reshape`` returns a view
when the strides allow one and a new tensor otherwise, as in PyTorch; ``expand`` gives a
read-only broadcast view, and writing into it raises PyTorch's "more than one element of the
written-to tensor refers to a single memory location".

The common calls (a 2-D transpose, a size with no ``-1``, an expand that only grows unit dims)
check what they need inline and call the array's own methods (``swapaxes``, ``reshape``), which
skip the Python layers of ``np.transpose``/``np.expand_dims``; ``np.expand_dims`` is itself
``a.reshape`` with a 1 inserted. Anything unusual takes the general code with its messages.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor
from ._kit import (
    Kernel,
    Kernels,
    Kit,
    OpError,
    OpTypeError,
    bind,
    fmt_shape,
    guard,
    guarded,
    infer_size,
    lowers,
    optional,
    torch_name,
    wrap_dim,
    wrap_dims,
)

_IN_PLACE: dict[type, bool] = {}  # array type -> whether it reshapes with copy=False


def reshapes_in_place(kit: Kit) -> bool:
    """Whether ``kit``'s arrays take ``a.reshape(shape, copy=False)`` (numpy >= 2.1)."""
    t = kit.array_type
    got = _IN_PLACE.get(t)
    if got is None:
        reshape = getattr(t, "reshape", None)
        try:
            got = (
                reshape is not None and reshape(kit.xp.zeros((2, 1)), (2,), copy=False) is not None
            )
        except TypeError:
            got = False
        _IN_PLACE[t] = got
    return got


_VIEWS: dict[type, bool] = {}


def has_views(kit: Kit) -> bool:
    """Whether ``kit``'s namespace reshapes without a copy at all: a contiguous ``(2, 1)`` array
    to ``(2,)`` with ``copy=False``, which any library with strided views can do. A lazy
    library (dask) cannot (its arrays share no memory): its views are new arrays."""
    t = kit.array_type
    got = _VIEWS.get(t)
    if got is None:
        xp = kit.xp
        try:
            got = xp.reshape(xp.zeros((2, 1)), (2,), copy=False) is not None
        except TypeError:
            got = True  # numpy < 2.1 has no copy=, and its views are real
        except (AttributeError, IndexError, NotImplementedError, ValueError):
            got = False
        _VIEWS[t] = got
    return got


def reshape_view(kit: Kit, a: Any, shape: tuple[int, ...]) -> Any:
    """``a`` reshaped without a copy; ValueError when the strides do not allow it."""
    xp = kit.xp
    if reshapes_in_place(kit):
        return a.reshape(shape, copy=False)
    if not math.prod(a.shape) or not has_views(kit):
        # nothing to copy (array_api_strict would refuse); or arrays that share no memory
        # (dask): every reshape is a new array, as every view is (docs/dask.md)
        return xp.reshape(a, shape)
    try:
        return xp.reshape(a, shape, copy=False)
    except (AttributeError, IndexError) as e:
        # array_api_strict's word for "would copy"; array-api-compat's own copy=False
        # (it sets ``shape``) raises IndexError on a 0-d array
        raise ValueError(str(e)) from e
    except TypeError:  # numpy < 2.1 has no copy=
        r = a.view()
        try:
            r.shape = shape
        except AttributeError as e:
            raise ValueError(str(e)) from e
        return r


def target_size(size: Sequence[int], numel: int) -> tuple[int, ...]:
    """``infer_size``; a size with no ``-1`` that fits is taken as it is."""
    if size and min(size) >= 0 and math.prod(size) == numel:
        return tuple(size)
    return infer_size(size, numel)


def squeeze(kit: Kit, self: Tensor) -> Tensor:
    xp = kit.xp
    a = self._data
    axes = tuple(i for i, n in enumerate(a.shape) if n == 1)
    return self._alias(xp.squeeze(a, axis=axes) if axes else a[...])


def squeeze_dim(kit: Kit, self: Tensor, dim: int) -> Tensor:
    xp = kit.xp
    a = self._data
    d = wrap_dim(dim, a.ndim)
    if a.ndim and a.shape[d] == 1:
        return self._alias(xp.squeeze(a, axis=d))
    return self._alias(a[...])


def expand(kit: Kit, self: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:
    xp = kit.xp
    a = self._data
    shape = tuple(a.shape)
    if len(size) == len(shape):  # the common call: grow unit dims only, no -1
        out = tuple(size)
        if out == shape:
            return self._alias(a[...])
        for n, have in zip(out, shape, strict=True):
            if n != have and (have != 1 or n < 0):
                break
        else:
            return self._alias(xp.broadcast_to(a, out))
    if len(size) < len(shape):
        raise OpError(
            f"expand({self._dtype.name} tensor{{{fmt_shape(shape)}}}, size={fmt_shape(size)}): the "
            f"number of sizes provided ({len(size)}) must be greater or equal to the number "
            f"of dimensions in the tensor ({len(shape)})"
        )
    lead = len(size) - len(shape)
    target = []
    for i, n in enumerate(size):
        if i < lead:
            if n < 0:
                raise OpError(
                    f"The expanded size of the tensor ({n}) isn't allowed in a leading, "
                    "non-existing dimension 0"
                )
            target.append(n)
            continue
        have = shape[i - lead]
        if n == -1:
            n = have
        elif have != n and have != 1:
            raise OpError(
                f"The expanded size of the tensor ({n}) must match the existing size "
                f"({have}) at non-singleton dimension {i}.  Target sizes: {fmt_shape(size)}.  "
                f"Tensor sizes: {fmt_shape(shape)}"
            )
        target.append(n)
    out = tuple(target)
    return self._alias(a[...] if out == shape else xp.broadcast_to(a, out))


def select(kit: Kit, self: Tensor, dim: int, index: int) -> Tensor:
    a = self._data
    if a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{fmt_shape(a.shape)} at dimension {d}"
        )
    return self._alias(a[(slice(None),) * d + (index, Ellipsis)])


def unbind(kit: Kit, self: Tensor, dim: int = 0) -> list[Tensor]:
    a = self._data
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, a.ndim)
    lead = (slice(None),) * d
    return [self._alias(a[(*lead, i, Ellipsis)]) for i in range(int(a.shape[d]))]


def slice_(
    kit: Kit,
    self: Tensor,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
) -> Tensor:
    a = self._data
    if a.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, a.ndim)
    if step <= 0:
        raise OpError("slice step must be positive")
    # bounds within the dim: the standard leaves slices past the end unspecified
    bounded = slice(*slice(start, end, step).indices(int(a.shape[d])))
    return self._alias(a[(slice(None),) * d + (bounded, Ellipsis)])


def pieces(self: Tensor, sizes: Sequence[int], d: int) -> list[Tensor]:
    a = self._data
    out = []
    at = 0
    for n in sizes:
        stop = min(at + n, int(a.shape[d]))
        out.append(self._alias(a[(slice(None),) * d + (slice(at, stop), Ellipsis)]))
        at += n
    return out


def split(kit: Kit, self: Tensor, split_size: int, dim: int = 0) -> list[Tensor]:
    a = self._data
    if a.ndim == 0:
        raise OpError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, a.ndim)
    n = int(a.shape[d])
    if split_size < 0:
        raise OpError(f"split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0:
        if n != 0:
            raise OpError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
            )
        return pieces(self, [0], d)
    count = max(1, -(-n // split_size))
    sizes = [split_size] * (count - 1) + [n - split_size * (count - 1)]
    return pieces(self, sizes, d)


def split_with_sizes(
    kit: Kit, self: Tensor, split_sizes: Sequence[int], dim: int = 0
) -> list[Tensor]:
    a = self._data
    if a.ndim == 0:
        raise OpError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, a.ndim)
    n = int(a.shape[d])
    for s in split_sizes:
        if s < 0:
            raise OpError(
                "split_with_sizes expects split_sizes have only non-negative entries, but got "
                f"split_sizes={fmt_shape(split_sizes)}"
            )
    if sum(split_sizes) != n:
        raise OpError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
            f"at dimension {d}), but got split_sizes={fmt_shape(split_sizes)}"
        )
    return pieces(self, split_sizes, d)


def cat(kit: Kit, tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    xp = kit.xp
    concat = getattr(xp, "concat", None) or xp.concatenate
    if not isinstance(tensors, (list, tuple)):
        raise OpTypeError(
            f"cat(): argument 'tensors' (position 1) must be tuple of Tensors, not "
            f"{type(tensors).__name__}"
        )
    if len(tensors) == 0:
        raise OpError("torch.cat(): expected a non-empty list of Tensors")
    # PyTorch skips legacy empty 1-D tensors (shape [0]) when others have more dims
    full = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
    if not full:
        full = list(tensors[:1])
    ref = full[0]
    nd = ref._data.ndim
    if nd == 0:
        raise OpError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, nd)
    od = kit.result_dtype(*tensors) if len({t._dtype for t in tensors}) > 1 else ref._dtype
    device = ref._device
    arrays = []
    keep = {id(t) for t in full}
    for i, t in enumerate(tensors):
        if id(t) not in keep:
            continue
        s = t._data.shape
        if t._data.ndim != nd:
            raise OpError(
                f"Tensors must have same number of dimensions: got {nd} and {t._data.ndim}"
            )
        for j in range(nd):
            if j != d and s[j] != ref._data.shape[j]:
                raise OpError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref._data.shape[j]} but got size {s[j]} for tensor number {i} in the list."
                )
        kit.same_device(ref, t)
        arrays.append(kit.cast(t._data, kit.storage[od]))
    return kit.wrap(concat(arrays, axis=d), od, device)


def flip(kit: Kit, self: Tensor, dims: Sequence[int]) -> Tensor:
    xp = kit.xp
    a = self._data
    axes = wrap_dims(dims, a.ndim) if dims else None
    if axes is None or a.ndim == 0:
        return kit.wrap(kit.copy(a), self._dtype, self._device)
    return kit.wrap(kit.copy(xp.flip(a, axis=axes)), self._dtype, self._device)


def roll(
    kit: Kit, self: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] = ()
) -> Tensor:
    xp = kit.xp
    a = self._data
    shift_list = [shifts] if isinstance(shifts, int) else list(shifts)
    dim_list = [dims] if isinstance(dims, int) else list(dims)
    if not shift_list:
        raise OpError("`shifts` required")
    if not dim_list and len(shift_list) == 1:  # roll the flattened tensor
        if a.ndim == 0 or math.prod(a.shape) == 0:
            return kit.wrap(kit.copy(a), self._dtype, self._device)
        flat = xp.roll(xp.reshape(a, (-1,)), shift_list[0])
        return kit.wrap(xp.reshape(flat, tuple(a.shape)), self._dtype, self._device)
    if len(shift_list) != len(dim_list):
        raise OpError(
            f"shifts and dimensions must align. shifts: {len(shift_list)}, dims:{len(dim_list)}"
        )
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim_list[0]} but tensor has no dimensions")
    axes = tuple(wrap_dim(d, a.ndim) for d in dim_list)
    if math.prod(a.shape) == 0:
        return kit.wrap(kit.copy(a), self._dtype, self._device)
    return kit.wrap(xp.roll(a, tuple(shift_list), axis=axes), self._dtype, self._device)


def repeat(kit: Kit, self: Tensor, repeats: Sequence[int]) -> Tensor:
    xp = kit.xp
    a = self._data
    reps = tuple(repeats)
    if len(reps) < a.ndim:
        raise OpError(
            "Number of dimensions of repeat dims can not be smaller than number of "
            "dimensions of tensor"
        )
    shape = (1,) * (len(reps) - a.ndim) + tuple(a.shape)
    out = tuple(n * r for n, r in zip(shape, reps, strict=True))
    for n in out:
        if n < 0:
            raise OpError(f"Trying to create tensor with negative dimension {n}: {fmt_shape(out)}")
    # each dim n as (1, n), broadcast to (r, n): the row-major order of np.tile
    spread = xp.reshape(a, tuple(x for n in shape for x in (1, n)))
    grown = xp.broadcast_to(
        spread, tuple(x for n, r in zip(shape, reps, strict=True) for x in (r, n))
    )
    return kit.wrap(kit.copy(xp.reshape(grown, out)), self._dtype, self._device)


def repeat_interleave(kit: Kit, repeats: Tensor, *, output_size: int | None = None) -> Tensor:
    """The index of each position: ``i`` repeated ``repeats[i]`` times (int64)."""
    xp = kit.xp
    r = repeats._data
    if r.ndim != 1:
        raise OpError("repeat_interleave only accept 1D vector as repeat")
    if repeats._dtype.kind not in "iu":  # bool too: PyTorch takes only int32 and int64
        raise NotImplementedError(
            f"\"repeat_interleave_cpu\" not implemented for '{torch_name(repeats._dtype)}'"
        )
    if math.prod(r.shape) and not kit.lazy and int(xp.min(r)) < 0:
        raise OpError("repeats can not be negative")
    long_t = kit.storage[_dt.int64]
    if kit.lazy:
        # the length is the one value read (Note [Value-dependent shapes]); each position's
        # index is where it falls among the running totals (dask repeats by Python ints only)
        ends = xp.cumulative_sum(kit.cast(r, long_t))
        total = int(kit.to_host(ends[-1])) if r.shape[0] else 0
        out = xp.searchsorted(ends, xp.arange(total, dtype=long_t), side="right")
        out = kit.cast(out, long_t)
    else:
        out = xp.repeat(xp.arange(r.shape[0], dtype=long_t), kit.cast(r, long_t))
    if output_size is not None and output_size != out.shape[0]:
        raise OpError("allocated size does not match required size")
    return kit.wrap(out, _dt.int64, repeats._device)


def triangle(kit: Kit, name: str, self: Tensor, diagonal: int) -> Tensor:
    """``tril`` / ``triu`` (``name``)."""
    xp = kit.xp
    a = self._data
    if a.ndim < 2:
        raise OpError(f"{name}: input tensor must have at least 2 dimensions")
    return kit.wrap(getattr(xp, name)(a, k=diagonal), self._dtype, self._device)


def triangle_(kit: Kit, name: str, self: Tensor, diagonal: int) -> Tensor:
    """``tril_`` / ``triu_`` (``name`` without the _)."""
    xp = kit.xp
    a = self._data
    if a.ndim < 2:
        raise OpError(f"{name}: input tensor must have at least 2 dimensions")
    kit.assign(a, getattr(xp, name)(a, k=diagonal))
    return self


def tril(kit: Kit, self: Tensor, diagonal: int = 0) -> Tensor:
    return triangle(kit, "tril", self, diagonal)


def triu(kit: Kit, self: Tensor, diagonal: int = 0) -> Tensor:
    return triangle(kit, "triu", self, diagonal)


def tril_(kit: Kit, self: Tensor, diagonal: int = 0) -> Tensor:
    return triangle_(kit, "tril", self, diagonal)


def triu_(kit: Kit, self: Tensor, diagonal: int = 0) -> Tensor:
    return triangle_(kit, "triu", self, diagonal)


def standard_diagonal(kit: Kit, a: Any, offset: int, d1: int, d2: int) -> Any:
    """numpy's ``diagonal`` (the diagonal as the last dim) in standard functions. The two
    dims flattened into one without a copy (``reshape(copy=False)``), the diagonal is a
    strided slice of it, every ``cols + 1``-th element: a view, as numpy's, where the
    namespace's slices are views (the standard leaves that open). Where the flattening
    would copy, the elements are picked (a copy)."""
    xp = kit.xp
    rest = [j for j in range(a.ndim) if j not in (d1, d2)]
    m = xp.permute_dims(a, (*rest, d1, d2))
    rows, cols = int(m.shape[-2]), int(m.shape[-1])
    n = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    lead = tuple(m.shape[:-2])
    if n and math.prod(m.shape):
        try:
            flat = reshape_view(kit, m, (*lead, rows * cols))
        except ValueError:
            pass
        else:
            start = offset if offset >= 0 else -offset * cols
            step = cols + 1
            return flat[..., start : start + (n - 1) * step + 1 : step]
    i64 = kit.storage[_dt.int64]
    i = xp.arange(n, dtype=i64) - min(offset, 0)
    return kit.getitem(m, (Ellipsis, i, i + offset))


def standard_diag(kit: Kit, a: Any, k: int = 0) -> Any:
    """numpy's ``diag``: the ``k``-th diagonal of a matrix, or a matrix with vector ``a``
    on its ``k``-th diagonal."""
    xp = kit.xp
    if a.ndim == 2:
        return standard_diagonal(kit, a, k, 0, 1)
    n = int(a.shape[0]) + abs(k)
    out = xp.zeros((n, n), dtype=a.dtype)
    i = xp.arange(int(a.shape[0]), dtype=kit.storage[_dt.int64]) - min(k, 0)
    kit.put(out, (i, i + k), a)
    return out


def _reverses_axes(kit: Kit, transpose: Callable[[Any], Any]) -> bool:
    """Whether the array method ``transpose()`` with no axes reverses them (numpy's, cupy's)."""
    try:
        return tuple(transpose(kit.xp.zeros((2, 3))).shape) == (3, 2)
    except (AttributeError, NotImplementedError, TypeError, ValueError):
        return False


_NUMPY_DIAG: dict[type, bool] = {}


def numpy_diag(kit: Kit) -> Any:
    """The namespace's ``diag`` where it is numpy's (``diag(a, k=)``: numpy, cupy, dask), else
    None: torch's takes ``diagonal=``. Probed once per array type, so a namespace whose ``diag``
    means something else is never called with numpy's arguments."""
    fn = getattr(kit.xp, "diag", None)
    if fn is None:
        return None
    t = kit.array_type
    got = _NUMPY_DIAG.get(t)
    if got is None:
        try:
            got = tuple(fn(kit.xp.ones((2,)), k=1).shape) == (3, 3)
        except (AttributeError, NotImplementedError, TypeError, ValueError):
            got = False
        _NUMPY_DIAG[t] = got
    return fn if got else None


def diag(kit: Kit, self: Tensor, diagonal: int = 0) -> Tensor:
    diag_fn = numpy_diag(kit) or functools.partial(standard_diag, kit)
    a = self._data
    if a.ndim not in (1, 2):
        raise OpError(f"diag(): Supports 1D or 2D tensors. Got {a.ndim}D")
    if 0 in a.shape:  # dask's diag of an empty vector divides by zero
        diag_fn = functools.partial(standard_diag, kit)
    # numpy's diag of a matrix is a read-only view: copied
    return kit.wrap(kit.copy(diag_fn(a, k=diagonal)), self._dtype, self._device)


def diagonal(kit: Kit, self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    xp = kit.xp
    diagonal_fn = optional(xp, "diagonal", functools.partial(standard_diagonal, kit))
    a = self._data
    d1, d2 = wrap_dim(dim1, a.ndim), wrap_dim(dim2, a.ndim)
    if d1 == d2:
        raise OpError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    r = diagonal_fn(a, offset, d1, d2)
    flags = getattr(r, "flags", None)
    if flags is not None and not getattr(flags, "writeable", True):
        # numpy's diagonal is a read-only view only by caution: it is writable memory
        # of the base (unless the base is read-only itself, an expand); CuPy's flags have
        # no writeable (its arrays always are)
        try:
            flags.writeable = True
        except ValueError:
            pass
    return self._alias(r)


def _same_array(a: Any) -> Any:
    """``detach``'s raw lowering (Note [Raw lowerings] in _kit.py): its values are its input's."""
    return a


def detach(kit: Kit, self: Tensor) -> Tensor:
    # the data and the version counter are shared, but the result is no view (PyTorch's
    # detach() has no _base): an in-place change of it changes a tensor of its own
    t = self._alias(self._data[...])
    t._storage_base = t._base  # it still shares its storage (Note [Strided layout])
    del t._base
    return t


def views(kit: Kit) -> Kernels:
    """The kernels of view, reshape, transpose.int, permute and unsqueeze: the views every
    layer makes, calling the array's own methods where it has them (module docstring)."""
    xp = kit.xp
    permute_dims = getattr(xp, "permute_dims", None) or xp.transpose
    # the array's own methods, where it has them (cheaper than the namespace's functions)
    swapaxes = getattr(kit.array_type, "swapaxes", None)
    transpose_method = getattr(kit.array_type, "transpose", None)  # numpy's and cupy's
    if transpose_method is not None and not _reverses_axes(kit, transpose_method):
        transpose_method = None  # torch's transpose(dim0, dim1) needs its dims
    reshape_method = getattr(kit.array_type, "reshape", None)
    nocopy = reshapes_in_place(kit)  # then ``a.reshape(shape, copy=False)``

    def view(self: Tensor, size: Sequence[int]) -> Tensor:
        a = self._data
        shape = target_size(size, int(math.prod(a.shape)))
        try:
            r = a.reshape(shape, copy=False) if nocopy else reshape_view(kit, a, shape)
            return self._alias(r)
        except ValueError:
            raise OpError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            ) from None

    def reshape(self: Tensor, shape: Sequence[int]) -> Tensor:
        a = self._data
        target = target_size(shape, int(math.prod(a.shape)))
        try:
            r = a.reshape(target, copy=False) if nocopy else reshape_view(kit, a, target)
            return self._alias(r)
        except ValueError:
            return kit.new(xp.reshape(kit.copy(a), target), self._dtype, self._device, kit.keyset)

    def transpose_general(self: Tensor, dim0: int, dim1: int) -> Tensor:
        a = self._data
        nd = a.ndim
        d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
        if nd < 2:
            return self._alias(a[...])
        perm = list(range(nd))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return self._alias(permute_dims(a, tuple(perm)))

    slow_transpose = guard("transpose.int", transpose_general)

    @guarded  # the fast path raises nothing (Note [Kernel errors] in _checks.py)
    def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
        a = self._data
        nd = a.ndim
        if swapaxes is not None and nd >= 2 and -nd <= dim0 < nd and -nd <= dim1 < nd:
            return self._alias(swapaxes(a, dim0, dim1))  # numpy wraps negative dims too
        return slow_transpose(self, dim0, dim1)  # type: ignore[no-any-return]

    def permute_general(self: Tensor, dims: Sequence[int]) -> Tensor:
        a = self._data
        nd = a.ndim
        if len(dims) != nd:
            raise OpError(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the "
                f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not "
                f"equal to len(dims) = {len(dims)}"
            )
        wrapped = tuple(wrap_dim(d, nd) for d in dims)
        if len(set(wrapped)) != len(wrapped):
            raise OpError("permute(): duplicate dims are not allowed.")
        return self._alias(permute_dims(a, wrapped) if nd else a[...])

    slow_permute = guard("permute", permute_general)

    @guarded  # the fast path raises nothing (Note [Kernel errors] in _checks.py)
    def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
        # the matrices' orders (``w.T``, its backward): numpy's own method, no checks to run
        if transpose_method is not None and len(dims) == 2 and self._data.ndim == 2:
            d0, d1 = dims
            if (d0 == 1 and d1 == 0) or (d0 == -1 and d1 == -2):
                return self._alias(transpose_method(self._data))
        return slow_permute(self, dims)  # type: ignore[no-any-return]

    def unsqueeze(self: Tensor, dim: int) -> Tensor:
        a = self._data
        d = wrap_dim(dim, a.ndim + 1)
        if reshape_method is not None:  # what np.expand_dims does, without its checks
            shape = tuple(a.shape)
            return self._alias(a.reshape((*shape[:d], 1, *shape[d:])))
        return self._alias(xp.expand_dims(a, axis=d))

    # Note [Raw lowerings] in _kit.py: the fast paths' array views
    def lower_transpose(self: Any, dim0: int, dim1: int) -> Any:
        nd = len(self.shape)
        if swapaxes is None or nd < 2 or not (-nd <= dim0 < nd and -nd <= dim1 < nd):
            return None
        return (lambda a: swapaxes(a, dim0, dim1)), kit.keyset

    def lower_permute(self: Any, dims: Sequence[int]) -> Any:
        nd = len(self.shape)
        if not nd or len(dims) != nd or not all(-nd <= d < nd for d in dims):
            return None
        wrapped = tuple(d % nd for d in dims)
        if len(set(wrapped)) != nd:
            return None
        return (lambda a: permute_dims(a, wrapped)), kit.keyset

    return {
        "view": view,
        "reshape": reshape,
        "transpose.int": lowers(kit, transpose, lower_transpose),
        "permute": lowers(kit, permute, lower_permute),
        "unsqueeze": unsqueeze,
    }


KERNELS: dict[str, Callable[..., Any]] = {
    "squeeze": squeeze,
    "squeeze.dim": squeeze_dim,
    "expand": expand,
    "select.int": select,
    "unbind.int": unbind,
    "slice.Tensor": slice_,
    "split.Tensor": split,
    "split_with_sizes": split_with_sizes,
    "flip": flip,
    "roll": roll,
    "repeat": repeat,
    "repeat_interleave.Tensor": repeat_interleave,
    "tril": tril,
    "triu": triu,
    "tril_": tril_,
    "triu_": triu_,
    "diag": diag,
    "diagonal": diagonal,
    "cat": cat,
    "detach": detach,
}


# --- in-place views (issue 29) --------------------------------------------------------------
# ``x.squeeze_()`` makes ``x`` itself the view ``x.squeeze()`` would be: the same memory, its
# new shape. (The autograd plugin gives x the view's history, the batched plugin its layout.)
INPLACE_VIEWS = {
    "squeeze_": "squeeze",
    "squeeze_.dim": "squeeze.dim",
    "unsqueeze_": "unsqueeze",
    "transpose_": "transpose.int",
}


def inplace_view(view: Kernel) -> Kernel:
    def inplace_view(self: Tensor, *args: Any) -> Tensor:
        self._data = view(self, *args)._data
        return self

    return inplace_view


def build(kit: Kit) -> Kernels:
    k: Kernels = views(kit)
    k.update((name, bind(kit, fn)) for name, fn in KERNELS.items())
    lowers(kit, k["detach"], lambda self: (_same_array, kit.keyset))  # Note [Raw lowerings]
    for name, functional in INPLACE_VIEWS.items():
        k[name] = inplace_view(k[functional])
    return k
