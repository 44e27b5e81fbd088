"""Strides and memory formats: PyTorch's rules on ``(sizes, strides)``, in elements (internal).

Note [Strided layout]
~~~~~~~~~~~~~~~~~~~~~
A tensor stores no strides (DESIGN §6, Layout): its backend's array has them, and a strided
backend's storage says where an array's elements lie (``memory_layout``: address, strides and
item size in bytes). ``t.stride()``, ``t.storage_offset()``, ``t.is_contiguous()`` and the rest
are computed from that when asked (``_opset/layout.py``), so a tensor whose layout nobody asks
about costs nothing more to make or to dispatch. The storage of a tensor is the memory of its
root base (``t._base``, else ``t`` itself): a view's storage offset is where its first element
lies in its root's memory. This module holds the rules PyTorch applies to sizes and strides
(c10's ``compute_contiguous``, ``is_channels_last_strides_2d``, ``suggest_memory_format``,
``empty_like``'s stride choice), as pure functions on tuples, so the kit, Meta and the op-set
share one copy.

``memory_format`` and ``layout`` are ``str`` subclasses whose value is the constant's name in
the schemas (``contiguous_format``, ``strided``): ``tp.channels_last`` passes where a schema
default ``memory_format=contiguous_format`` would, and kernels compare against plain names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "contiguous_strides",
    "dense_strides_like",
    "view_strides",
    "elementwise_strides",
    "is_contiguous_for",
    "is_non_overlapping_and_dense",
    "layout",
    "memory_format",
    "preserve_format",
    "strided",
    "strides_for",
    "suggest_memory_format",
]


class memory_format(str):  # noqa: N801 - torch.memory_format's name
    """A memory format (``tp.contiguous_format``, ``tp.channels_last``, ...), as
    ``torch.memory_format``: equal to its name, so schemas' defaults and kernels use names."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"tensorplug.{str.__str__(self)}"

    __str__ = __repr__


class layout(str):  # noqa: N801 - torch.layout's name
    """A tensor layout; ``tp.strided`` is the only one (dense tensors), as ``torch.strided``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"tensorplug.{str.__str__(self)}"

    __str__ = __repr__


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
strided = layout("strided")

_FORMATS = {
    "contiguous_format": contiguous_format,
    "channels_last": channels_last,
    "channels_last_3d": channels_last_3d,
    "preserve_format": preserve_format,
}

# the order of dims from the innermost (stride 1) out, per format and rank
_CL_2D = (1, 3, 2, 0)
_CL_3D = (1, 4, 3, 2, 0)


def check_format(fmt: object, op: str) -> memory_format:
    """``fmt`` (a memory format or its name; None is preserve_format) as a memory format."""
    if fmt is None:
        return preserve_format
    got = _FORMATS.get(fmt) if isinstance(fmt, str) else None
    if got is None:
        raise TypeError(
            f"{op}: memory_format must be one of tensorplug.contiguous_format, "
            f"tensorplug.channels_last, tensorplug.channels_last_3d or "
            f"tensorplug.preserve_format, got {fmt!r}"
        )
    return got


def contiguous_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides (PyTorch's: a size-0 or size-1 dim counts as 1 in the product)."""
    out = [0] * len(sizes)
    acc = 1
    for i in range(len(sizes) - 1, -1, -1):
        out[i] = acc
        acc *= max(int(sizes[i]), 1)
    return tuple(out)


def _order_strides(sizes: Sequence[int], order: Sequence[int]) -> tuple[int, ...]:
    """Dense strides laying dims out in ``order`` (innermost first)."""
    out = [0] * len(sizes)
    acc = 1
    for d in order:
        out[d] = acc
        acc *= max(int(sizes[d]), 1)
    return tuple(out)


def strides_for(sizes: Sequence[int], fmt: str, op: str = "") -> tuple[int, ...]:
    """The strides of a new tensor of ``sizes`` in memory format ``fmt`` (not preserve)."""
    if fmt == "channels_last":
        if len(sizes) != 4:
            raise RuntimeError(
                f"{op + ': ' if op else ''}required rank 4 tensor to use channels_last format"
            )
        return _order_strides(sizes, _CL_2D)
    if fmt == "channels_last_3d":
        if len(sizes) != 5:
            raise RuntimeError(
                f"{op + ': ' if op else ''}required rank 5 tensor to use channels_last_3d format"
            )
        return _order_strides(sizes, _CL_3D)
    return contiguous_strides(sizes)


def _dense_in_order(sizes: Sequence[int], strides: Sequence[int], order: Sequence[int]) -> bool:
    """c10's ``compute_channels_last_contiguous_*``: dense with dims laid out in ``order``,
    size-1 dims ignored."""
    expected = 1
    for d in order:
        n = sizes[d]
        if n != 1:
            if strides[d] != expected:
                return False
            expected *= n
    return True


def is_contiguous_for(sizes: Sequence[int], strides: Sequence[int], fmt: str) -> bool:
    """``is_contiguous(memory_format=fmt)``, c10's rules (an empty tensor is contiguous; size-1
    dims' strides do not count; preserve_format asks what contiguous_format does)."""
    if fmt == "channels_last":
        return len(sizes) == 4 and _dense_in_order(sizes, strides, _CL_2D)
    if fmt == "channels_last_3d":
        return len(sizes) == 5 and _dense_in_order(sizes, strides, _CL_3D)
    for n in sizes:
        if n == 0:
            return True
    return _dense_in_order(sizes, strides, range(len(sizes) - 1, -1, -1))


def _strides_like(sizes: Sequence[int], strides: Sequence[int], order: Sequence[int]) -> bool:
    """c10's ``is_channels_last_strides_2d_s4`` / ``_3d_s5``: the strides order dims as
    ``order`` does, ties and size-1 dims resolved towards row-major as PyTorch's are."""
    if strides[1] == 0:
        return False
    lo = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < lo:
            return False
        if d == 0 and lo == strides[1]:
            return False
        lo = strides[d]
        if sizes[d] > 1:
            lo *= sizes[d]
    return True


def suggest_memory_format(sizes: Sequence[int], strides: Sequence[int]) -> memory_format:
    """The format a tensor's strides suggest (PyTorch's ``suggest_memory_format``)."""
    if len(sizes) == 4 and _strides_like(sizes, strides, _CL_2D):
        return channels_last
    if len(sizes) == 5 and _strides_like(sizes, strides, _CL_3D):
        return channels_last_3d
    return contiguous_format


def is_non_overlapping_and_dense(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether the elements fill a block of memory exactly once (c10's rule: size-1 dims
    ignored, the others sorted by stride must be dense; an empty tensor is)."""
    nd = len(sizes)
    if 0 in sizes:  # no elements: nothing overlaps
        return True
    if nd == 1:
        return sizes[0] < 2 or strides[0] == 1
    dims = sorted(range(nd), key=lambda d: (sizes[d] < 2, strides[d]))
    expected = 1
    for d in dims:
        n = sizes[d]
        if n < 2:  # the rest are size 0 or 1 too (sorted last)
            return True
        if strides[d] != expected:
            return False
        expected *= n
    return True


def dense_strides_like(sizes: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """The strides ``empty_like``/``clone`` give under preserve_format: ``strides`` where they
    are non-overlapping and dense, else dense strides in the same order of dims (PyTorch's
    ``infer_dense_strides``)."""
    if is_non_overlapping_and_dense(sizes, strides):
        return tuple(strides)
    return infer_dense_strides(sizes, strides)


def _insertion_order(nd: int, should_swap: Callable[[int, int], int]) -> list[int]:
    """c10's insertion sort of the dims, from the last: ``should_swap(a, b)`` > 0 moves ``b``
    inward past ``a``, < 0 stops, 0 leaves the pair as it is (and goes on)."""
    perm = list(reversed(range(nd)))
    for i in range(1, nd):
        d1 = i
        for d0 in reversed(range(i)):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def _order(sizes: Sequence[int], strides: Sequence[int]) -> list[int]:
    """The dims from the innermost out: c10's insertion sort from the last dim, stride-0 and
    tied dims left in place (``infer_dense_strides``, ``compute_elementwise_output_...``)."""

    def should_swap(a: int, b: int) -> int:
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa != sb:
            return -1 if sa < sb else 1
        return 1 if sizes[a] > sizes[b] else 0

    return _insertion_order(len(sizes), should_swap)


def infer_dense_strides(sizes: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """Dense strides laying the dims out in the order ``strides`` do (c10's)."""
    out = [0] * len(sizes)
    acc = 1
    for d in _order(sizes, strides):
        out[d] = acc
        if sizes[d] > 1:
            acc *= sizes[d]
    return tuple(out)


def elementwise_strides(
    shape: Sequence[int], operands: Sequence[tuple[Sequence[int], Sequence[int]]]
) -> tuple[int, ...] | None:
    """The strides of a fresh elementwise result of ``shape`` from operands ``(sizes,
    strides)`` (broadcast to ``shape``), as PyTorch's TensorIterator lays it out: dims
    ordered by the operands' strides, the first operand that tells deciding (its
    ``reorder_dimensions``), dense in that order; None for row-major."""
    nd = len(shape)
    if nd < 2:
        return None
    if operands and all(tuple(sizes) == tuple(shape) for sizes, _ in operands):
        # TensorIterator's fast set-up: all contiguous, all channels_last, or all dense alike
        if all(is_contiguous_for(shape, st, "contiguous_format") for _, st in operands):
            return None
        if nd == 4 and all(is_contiguous_for(shape, st, "channels_last") for _, st in operands):
            return strides_for(shape, "channels_last")
        if nd == 5 and all(is_contiguous_for(shape, st, "channels_last_3d") for _, st in operands):
            return strides_for(shape, "channels_last_3d")
        first = tuple(operands[0][1])
        if is_non_overlapping_and_dense(shape, first) and all(
            tuple(st) == first for _, st in operands
        ):
            return first
    ops = []
    for sizes, strides in operands:
        lead = nd - len(sizes)
        ops.append(
            tuple(
                0 if j < lead or (sizes[j - lead] == 1 and shape[j] != 1) else strides[j - lead]
                for j in range(nd)
            )
        )

    def should_swap(d0: int, d1: int) -> int:
        for st in ops:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = _insertion_order(nd, should_swap)
    if perm == list(reversed(range(nd))):
        return None
    out = [0] * nd
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def view_strides(
    old: Sequence[int], strides: Sequence[int], new: Sequence[int]
) -> tuple[int, ...] | None:
    """The strides of ``view(new)`` of a tensor of sizes ``old`` and ``strides``, None where
    no view exists (PyTorch's ``computeStride``)."""
    if not old:
        return (1,) * len(new)
    numel = 1
    for n in old:
        numel *= n
    if numel == 0:
        if tuple(old) == tuple(new):
            return tuple(strides)
        return contiguous_strides(new)
    out = [0] * len(new)
    view_d = len(new) - 1
    base = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                out[view_d] = view_numel * base
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base = strides[d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(out)


def dim_order(sizes: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """``Tensor.dim_order()``: the dims from the outermost to the innermost, PyTorch's
    ``compute_elementwise_output_logical_to_physical_perm`` (an insertion sort from the
    last dim that leaves stride-0 and tied dims where they are)."""
    nd = len(sizes)
    contiguous = is_contiguous_for(sizes, strides, "contiguous_format")
    cl = is_contiguous_for(sizes, strides, "channels_last")
    if contiguous and not cl:
        return tuple(range(nd))
    if cl and not contiguous:
        return (0, *range(2, nd), 1)
    return tuple(reversed(_order(sizes, strides)))
