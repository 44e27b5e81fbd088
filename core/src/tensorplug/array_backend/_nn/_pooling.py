"""Part ``pooling`` of the ``nn`` family of the array kit: max, average and adaptive pooling
over 2 or 3 spatial dimensions, their backward kernels, and max unpooling (PyTorch's
operators; the 1-d forms are composites over the 2-d ones, as in PyTorch's Python layer).

Every kernel takes ``(C, *spatial)`` or ``(N, C, *spatial)`` inputs and works on the leading
dimensions as one batch. The general path is written in standard array functions (strided
slices, ``where``, ``matmul``), so CuPy, array_api_strict and the Meta backend run it.

Note [Pooling by window offsets]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A pooling window of ``k_1 x ... x k_n`` elements is read as ``k_1 ... k_n`` strided slices of
the padded input, one per offset inside the window: slice ``(o_1, ..., o_n)`` holds, for every
output position, the window element at that offset. Max pooling folds the slices with
``maximum`` (keeping the first largest's flat index, and NaN wherever one occurs, as PyTorch's
``val > maxval || isnan(val)``); average pooling adds them. The cost is ``k_1 ... k_n`` passes
over the output, with no gather and no index arrays; for LeNet's and ResNet's 2x2/2 windows
that is four elementwise passes, which measured 50 to 100 times faster with numpy than a
reshape into windows and one reduction over the two short window axes (numpy reduces short
axes that are not the last slowly).

Note [Max pooling without padding]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Where no window reaches outside the input (no padding, and ceil mode adds no window) and the
library writes into ``out=`` (numpy, CuPy), the forward takes the maxima of the offsets' views
first, then finds each window's first maximum (PyTorch's index) by counting the offsets
before it that do not hold it: a byte array ``behind`` ("no maximum yet") and-ed with
``view != max`` and added into a byte counter per offset, so no ``where`` (numpy's ``where``
with a scalar was 3/4 of the general path's time). The counter picks each window's step from
a table and the window's first element is added: one int64 pass. A NaN maximum (PyTorch's
index is the window's last NaN) sends the call to the general path. LeNet's 64x6x28x28,
2x2/2: 1.22 -> 0.34 ms (torch: 1.3 ms). The backward stays a scatter by the indices: a write
by the offsets' views, each masked by ``indices - first == step``, measured twice as slow
(0.2 against 0.1 ms), and it would have to check that every index lies in its window.

Adaptive average pooling is separable: its windows are boxes whose bounds depend on one axis
each, so it is one small matrix product per spatial axis (the matrix of window weights), and its
backward is the product with the transposed matrices.

Indices (max pooling's second result) are flat positions in each input plane (``h * W + w``),
PyTorch's convention, which ``max_unpool`` and the backward kernels read.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernel, Kernels, Kit, OpError, bind, fmt_shape, torch_name
from ._layout import keeps_format

# --- arguments and shapes: PyTorch's checks, in its order and words -------------------------


def _expand(name: str, what: str, value: Sequence[int], nd: int, omitted_ok: bool) -> list[int]:
    v = [int(x) for x in value]
    if omitted_ok and not v:
        return []
    if len(v) == 1:
        return v * nd
    if len(v) == nd:
        return v
    words = {1: "", 2: "two", 3: "three"}[nd]
    if what == "stride":
        raise OpError(
            f"{name}: stride must either be omitted, a single int, or a tuple of {words} ints"
        )
    verb = "be either" if what == "dilation" else "either be"
    raise OpError(f"{name}: {what} must {verb} a single int, or a tuple of {words} ints")


def _pooled_size(size: int, k: int, pad: int, stride: int, dilation: int, ceil: bool) -> int:
    """PyTorch's ``pooling_output_shape``, with its checks."""
    if stride == 0:
        raise OpError("stride should not be zero")
    if pad < 0:
        raise OpError(f"pad must be non-negative, but got pad: {pad}")
    if pad > ((k - 1) * dilation + 1) // 2:
        raise OpError(
            "pad should be at most half of effective kernel size, but got "
            f"pad={pad}, kernel_size={k} and dilation={dilation}"
        )
    span = size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil else 0)
    out = span // stride + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1  # the last window must start inside the input or its left padding
    return out


def _check_input(name: str, shape: tuple[int, ...], nd: int) -> None:
    lo, hi = nd + 1, nd + 2
    if len(shape) not in (lo, hi):
        raise OpError(f"non-empty {lo}D or {hi}D (batch mode) tensor expected for input")
    if any(n == 0 for n in shape[-lo:]):
        raise OpError(
            f"Expected {lo}D or {hi}D (batch mode) tensor with optional 0 dim batch size for "
            f"input, but got:{fmt_shape(shape)}"
        )


def _check_output(shape: tuple[int, ...], out: list[int], nd: int) -> None:
    if any(o < 1 for o in out):
        c = shape[-nd - 1]
        given = "x".join(str(n) for n in (c, *shape[-nd:]))
        calc = "x".join(str(n) for n in (c, *out))
        raise OpError(
            f"Given input size: ({given}). Calculated output size: ({calc}). "
            "Output size is too small"
        )


def _positive(what: str, values: list[int], letters: str, label: str) -> None:
    if any(v <= 0 for v in values):
        got = " ".join(f"{label}{c}: {v}" for c, v in zip(letters, values, strict=True))
        raise OpError(f"{what} should be greater than zero, but got {got}")


_LETTERS = {2: "HW", 3: "THW"}


def max_pool_args(
    name: str,
    nd: int,
    shape: tuple[int, ...],
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    """Kernel, stride, padding, dilation (``nd`` each) and the output's spatial sizes."""
    ks = _expand(name, "kernel_size", kernel_size, nd, False)
    st = _expand(name, "stride", stride, nd, True) or list(ks)
    pd = _expand(name, "padding", padding, nd, False)
    dl = _expand(name, "dilation", dilation, nd, False)
    if len(shape) not in (nd + 1, nd + 2):
        raise OpError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    out = [_pooled_size(shape[-nd + i], ks[i], pd[i], st[i], dl[i], ceil_mode) for i in range(nd)]
    letters = _LETTERS[nd]
    _positive("kernel size", ks, letters, "k")
    _positive("stride", st, letters, "d")
    _positive("dilation", dl, letters, "dilation")
    _check_input(name, shape, nd)
    _check_output(shape, out, nd)
    return ks, st, pd, dl, out


def avg_pool_args(
    name: str,
    nd: int,
    shape: tuple[int, ...],
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    divisor_override: int | None,
) -> tuple[list[int], list[int], list[int], list[int]]:
    ks = _expand(name, "kernel_size", kernel_size, nd, False)
    st = _expand(name, "stride", stride, nd, True) or list(ks)
    pd = _expand(name, "padding", padding, nd, False)
    if divisor_override is not None and divisor_override == 0:
        raise OpError("divisor must be not zero")
    if len(shape) not in (nd + 1, nd + 2):
        raise OpError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    out = [_pooled_size(shape[-nd + i], ks[i], pd[i], st[i], 1, ceil_mode) for i in range(nd)]
    letters = _LETTERS[nd]
    _positive("kernel size", ks, letters, "k")
    _positive("stride", st, letters, "d")
    if any(p > k // 2 for p, k in zip(pd, ks, strict=True)):
        got = ", ".join(f"pad{c} = {p}" for c, p in zip(letters[::-1], pd[::-1], strict=True))
        kk = ", ".join(f"k{c} = {k}" for c, k in zip(letters[::-1], ks[::-1], strict=True))
        raise OpError(
            f"pad should be smaller than or equal to half of kernel size, but got {got}, {kk}"
        )
    _check_input(name, shape, nd)
    _check_output(shape, out, nd)
    return ks, st, pd, out


def _floating(name: str, d: _dt.dtype) -> None:
    if d.kind != "f":
        raise NotImplementedError(f"\"{name}\" not implemented for '{torch_name(d)}'")


def _numeric(name: str, d: _dt.dtype) -> None:
    if d.kind not in "uif":
        raise NotImplementedError(f"\"{name}\" not implemented for '{torch_name(d)}'")


# --- padding and windows --------------------------------------------------------------------


def _pad(kit: Kit, a: Any, nd: int, before: list[int], after: list[int], value: Any) -> Any:
    """``a`` with its last ``nd`` dims padded by ``value`` (concatenated blocks: standard)."""
    xp = kit.xp
    for i in range(nd):
        ax = a.ndim - nd + i
        if before[i] <= 0 and after[i] <= 0:
            continue
        parts = []
        for n in (before[i], None, after[i]):
            if n is None:
                parts.append(a)
            elif n > 0:
                shape = list(a.shape)
                shape[ax] = n
                parts.append(xp.full(tuple(shape), value, dtype=a.dtype))
        a = xp.concat(parts, axis=ax)
    return a


_BYTE_INDICES: dict[type, bool] = {}


def _takes_byte_indices(kit: Kit) -> bool:
    """Whether ``xp.take`` takes uint8 indices (numpy's does; torch's wants int32 or int64)."""
    t = kit.array_type
    got = _BYTE_INDICES.get(t)
    if got is None:
        xp = kit.xp
        try:
            i = xp.asarray([1], dtype=kit.storage[_dt.uint8])
            got = int(xp.take(xp.asarray([3, 4]), i)[0]) == 4
        except (IndexError, NotImplementedError, RuntimeError, TypeError, ValueError):
            got = False
        _BYTE_INDICES[t] = got
    return got


def _window_slices(
    nd: int, offsets: tuple[int, ...], st: list[int], dl: list[int], out: list[int]
) -> tuple[Any, ...]:
    return (Ellipsis,) + tuple(
        slice(o * dl[i], o * dl[i] + st[i] * (out[i] - 1) + 1, st[i]) for i, o in enumerate(offsets)
    )


def _needed_after(size: int, k: int, pad: int, stride: int, dilation: int, out: int) -> int:
    """Padding after the input so that the last window (ceil mode) is inside the array."""
    return max(pad, (out - 1) * stride + dilation * (k - 1) + 1 - size - pad)


def _lowest(kit: Kit, d: _dt.dtype) -> Any:
    if d.kind == "f":
        return -math.inf
    if d.kind == "b":
        return False
    return -(1 << (8 * d.itemsize - 1)) if d.kind == "i" else 0


# --- max pooling ------------------------------------------------------------------------------


def max_pool_forward(
    kit: Kit,
    nd: int,
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    name = f"max_pool{nd}d"
    shape = tuple(int(n) for n in self._data.shape)
    ks, st, pd, dl, out = max_pool_args(
        name, nd, shape, kernel_size, stride, padding, dilation, ceil_mode
    )
    d = self._dtype
    _numeric(f"max_pool{nd}d", d)
    a = kit.as_compute(self, d)
    device = self._device
    i64 = kit.storage[_dt.int64]
    spatial = shape[-nd:]
    plane_strides = [math.prod(spatial[i + 1 :]) for i in range(nd)]
    after = [_needed_after(spatial[i], ks[i], pd[i], st[i], dl[i], out[i]) for i in range(nd)]
    p = _pad(kit, a, nd, pd, after, _lowest(kit, d))
    # where windows reach into the padding, an element of the input wins over a padded one
    # even when they are equal (the lowest value), so that the index is the input's
    padded = any(pd) or any(a_ > p_ for a_, p_ in zip(after, pd, strict=True))
    if not padded and kit.writes_out and not kit.lazy:
        fast = _max_pool_unpadded(kit, p, d.kind == "f", nd, ks, st, dl, out, plane_strides)
        if fast is not None:
            return kit.wrap(fast[0], d, device), kit.wrap(fast[1], _dt.int64, device)
    best: Any = None
    coords = [
        xp.reshape(
            xp.arange(out[i], dtype=i64) * st[i] - pd[i],
            tuple(out[i] if j == i else 1 for j in range(nd)),
        )
        for i in range(nd)
    ]
    best_pad: Any = None
    # the winner's offset in its window, in one byte per element (the wheres move 1/8 of an
    # int64's bytes); its flat index is made once at the end: first position + offset's step
    n_offsets = math.prod(ks)
    small = kit.storage[_dt.uint8] if n_offsets <= 256 and _dt.uint8 in kit.storage else i64
    steps: list[int] = []
    best_at: Any = None
    for n, offsets in enumerate(itertools.product(*(range(k) for k in ks))):
        v = p[_window_slices(nd, offsets, st, dl, out)]
        steps.append(sum(offsets[i] * dl[i] * plane_strides[i] for i in range(nd)))
        real: Any = True
        if padded:
            for i in range(nd):
                at = coords[i] + offsets[i] * dl[i]
                real = real & (at >= 0) & (at < spatial[i])
        if best is None:
            best = v
            best_at = xp.zeros(tuple(v.shape), dtype=small)
            if padded:
                best_pad = xp.logical_not(xp.broadcast_to(real, tuple(v.shape)))
            continue
        take = v > best
        if d.kind == "f":
            take = take | xp.isnan(v)
        if padded:
            take = take | (best_pad & real)
            best_pad = xp.where(take, xp.logical_not(real), best_pad)
        # the values: maximum (NaN wins, as in take), cheaper than a where
        best = xp.maximum(best, v)
        best_at = xp.where(take, xp.asarray(n, dtype=small), best_at)
    first: Any = 0
    for i in range(nd):
        first = first + coords[i] * plane_strides[i]
    step = xp.take(xp.asarray(steps, dtype=i64), xp.reshape(kit.cast(best_at, i64), (-1,)))
    index = xp.reshape(step, tuple(best_at.shape)) + first
    return kit.wrap(best, d, device), kit.wrap(index, _dt.int64, device)


def _max_pool_unpadded(
    kit: Kit,
    a: Any,
    floating: bool,
    nd: int,
    ks: list[int],
    st: list[int],
    dl: list[int],
    out: list[int],
    plane_strides: list[int],
) -> tuple[Any, Any] | None:
    """Note [Max pooling without padding]: the maxima and PyTorch's indices of windows that
    all lie inside ``a``, for a library whose functions write into ``out=``; None where a
    maximum is NaN (the general path's last-NaN rule)."""
    xp = kit.xp
    views = [
        a[_window_slices(nd, offsets, st, dl, out)]
        for offsets in itertools.product(*(range(k) for k in ks))
    ]
    n = len(views)
    if n == 1:
        best = xp.asarray(views[0], copy=True)
    else:
        best = xp.maximum(views[0], views[1])
        for v in views[2:]:
            xp.maximum(best, v, out=best)
    if floating and bool(xp.any(xp.isnan(best))):
        return None
    i64 = kit.storage[_dt.int64]
    byte = n <= 256 and _dt.uint8 in kit.storage and _takes_byte_indices(kit)
    small = kit.storage[_dt.uint8] if byte else i64
    # the first offset holding the maximum, as the number of offsets before it that do not:
    # ``behind`` says "no maximum yet", and each offset adds it (byte arithmetic, no where)
    behind = views[0] != best
    at = kit.cast(behind, small)
    for v in views[1:-1]:
        xp.logical_and(behind, v != best, out=behind)
        xp.add(at, behind, out=at)
    steps = [
        sum(o[i] * dl[i] * plane_strides[i] for i in range(nd))
        for o in itertools.product(*(range(k) for k in ks))
    ]
    index = xp.take(xp.asarray(steps, dtype=i64), xp.reshape(at, (-1,)))
    index = xp.reshape(index, tuple(best.shape))
    first: Any = 0  # each window's first element, as a flat position in its plane
    for i in range(nd):
        at_i = xp.arange(out[i], dtype=i64) * (st[i] * plane_strides[i])
        first = first + xp.reshape(at_i, tuple(out[i] if j == i else 1 for j in range(nd)))
    xp.add(index, first, out=index)
    return best, index


def _scatter_planes(
    kit: Kit, grad: Any, indices: Any, planes_shape: tuple[int, ...], plane: int, accumulate: bool
) -> Any:
    """Zeros of ``planes_shape`` (the input's) with ``grad`` added (or written) at ``indices``,
    flat positions in each plane of ``plane`` elements."""
    xp = kit.xp
    n_planes = math.prod(planes_shape) // plane if plane else 0
    out = xp.zeros((n_planes * plane,), dtype=grad.dtype)
    if n_planes and math.prod(indices.shape):
        per_plane = math.prod(indices.shape) // n_planes
        base = xp.reshape(xp.arange(n_planes, dtype=indices.dtype) * plane, (n_planes, 1))
        flat = xp.reshape(xp.reshape(indices, (n_planes, per_plane)) + base, (-1,))
        kit.put(out, (flat,), xp.reshape(grad, (-1,)), accumulate=accumulate)
    return xp.reshape(out, planes_shape)


def _check_grad_shape(name: str, grad: tuple[int, ...], want: tuple[int, ...]) -> None:
    if grad != want:
        raise OpError(
            f"{name}: expected grad_output of shape {fmt_shape(want)}, got {fmt_shape(grad)}"
        )


def max_pool_backward(
    kit: Kit,
    nd: int,
    grad_output: Tensor,
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    indices: Tensor,
) -> Tensor:
    name = f"max_pool{nd}d_with_indices_backward"
    shape = tuple(int(n) for n in self._data.shape)
    ks, st, pd, dl, out = max_pool_args(
        f"max_pool{nd}d", nd, shape, kernel_size, stride, padding, dilation, ceil_mode
    )
    _check_grad_shape(name, tuple(grad_output._data.shape), (*shape[:-nd], *out))
    d = grad_output._dtype
    _floating(name, d)
    g = kit.as_compute(grad_output, d)
    idx = kit.operand(indices, _dt.int64, self._device)
    overlap = any(k * dl_ > s for k, dl_, s in zip(ks, dl, st, strict=True))
    r = _scatter_planes(kit, g, idx, shape, math.prod(shape[-nd:]), overlap)
    return kit.wrap(r, d, self._device)


# --- average pooling --------------------------------------------------------------------------


def _avg_divisors(
    kit: Kit,
    nd: int,
    spatial: tuple[int, ...],
    ks: list[int],
    st: list[int],
    pd: list[int],
    out: list[int],
    count_include_pad: bool,
    dtype: Any,
) -> list[Any]:
    """Per axis, the window sizes PyTorch divides by (their product is the divisor)."""
    xp = kit.xp
    per_axis = []
    for i in range(nd):
        sizes = []
        for o in range(out[i]):
            start = o * st[i] - pd[i]
            end = min(start + ks[i], spatial[i] + pd[i])
            if count_include_pad:
                sizes.append(end - start)
            else:
                sizes.append(min(end, spatial[i]) - max(start, 0))
        v = xp.asarray(sizes, dtype=dtype)
        per_axis.append(xp.reshape(v, tuple(out[i] if j == i else 1 for j in range(nd))))
    return per_axis


def avg_pool_forward(
    kit: Kit,
    nd: int,
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    shape = tuple(int(n) for n in self._data.shape)
    ks, st, pd, out = avg_pool_args(
        f"avg_pool{nd}d", nd, shape, kernel_size, stride, padding, ceil_mode, divisor_override
    )
    d = self._dtype
    _numeric(f"avg_pool{nd}d", d)
    acc = kit.accumulate[d] if d.kind == "f" else kit.compute[d]
    a = kit.cast(self._data, acc)
    spatial = shape[-nd:]
    after = [_needed_after(spatial[i], ks[i], pd[i], st[i], 1, out[i]) for i in range(nd)]
    p = _pad(kit, a, nd, pd, after, 0)
    total = None
    for offsets in itertools.product(*(range(k) for k in ks)):
        v = p[_window_slices(nd, offsets, st, [1] * nd, out)]
        total = v if total is None else total + v
    if divisor_override is not None:
        r = _divide(kit, d, total, divisor_override)
    else:
        div = None
        for v in _avg_divisors(kit, nd, spatial, ks, st, pd, out, count_include_pad, acc):
            div = v if div is None else div * v
        r = _divide(kit, d, total, div)
    return kit.wrap(r, d, self._device)


def _divide(kit: Kit, d: _dt.dtype, total: Any, div: Any) -> Any:
    if d.kind == "f":
        return total / div
    # integers: PyTorch divides in the integer type, truncating toward zero
    xp = kit.xp
    q = xp.abs(total) // div
    return xp.where(total < 0, -q, q)


def avg_pool_backward(
    kit: Kit,
    nd: int,
    grad_output: Tensor,
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Tensor:
    xp = kit.xp
    name = f"avg_pool{nd}d_backward"
    shape = tuple(int(n) for n in self._data.shape)
    ks, st, pd, out = avg_pool_args(
        f"avg_pool{nd}d", nd, shape, kernel_size, stride, padding, ceil_mode, divisor_override
    )
    _check_grad_shape(name, tuple(grad_output._data.shape), (*shape[:-nd], *out))
    d = grad_output._dtype
    _floating(name, d)
    acc = kit.accumulate[d]
    g = kit.cast(grad_output._data, acc)
    spatial = shape[-nd:]
    if divisor_override is not None:
        g = g / divisor_override
    else:
        div: Any = None  # the divisors' product: a small array of the output's spatial shape
        for v in _avg_divisors(kit, nd, spatial, ks, st, pd, out, count_include_pad, acc):
            div = v if div is None else div * v
        g = g / div
    after = [_needed_after(spatial[i], ks[i], pd[i], st[i], 1, out[i]) for i in range(nd)]
    padded = tuple(
        int(n) for n in (*shape[:-nd], *(spatial[i] + pd[i] + after[i] for i in range(nd)))
    )
    acc_grad = xp.zeros(padded, dtype=acc)
    # windows that do not overlap write each input element once: no read, no addition
    overlap = any(k > s_ for k, s_ in zip(ks, st, strict=True))
    for offsets in itertools.product(*(range(k) for k in ks)):
        sl = _window_slices(nd, offsets, st, [1] * nd, out)
        acc_grad[sl] = acc_grad[sl] + g if overlap else g
    inside = (Ellipsis, *(slice(pd[i], pd[i] + spatial[i]) for i in range(nd)))
    return kit.wrap(acc_grad[inside], d, self._device)


# --- adaptive pooling -------------------------------------------------------------------------


def _adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive windows: ``[floor(o L / out), ceil((o + 1) L / out))``."""
    return [((o * size) // out, -((-(o + 1) * size) // out)) for o in range(out)]


def _check_adaptive(name: str, shape: tuple[int, ...], output_size: Sequence[int], nd: int) -> list[int]:  # fmt: skip
    if len(shape) not in (nd + 1, nd + 2):
        sep = ": " if name.startswith("adaptive_max") else " "
        raise OpError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{sep}{fmt_shape(shape)}"
        )
    out = [int(o) for o in output_size]
    if len(out) != nd:
        if name.startswith("adaptive_max"):
            raise OpError(f"{name}(): internal error: output_size.size() must be {nd}")
        raise OpError(f"{name}: output_size must be {nd}")
    for i in range(len(shape) - nd - 1, len(shape)):
        if shape[i] == 0:
            raise OpError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {fmt_shape(shape)} with dimension {i} being empty"
            )
    if any(o < 0 for o in out):
        raise OpError(f"{name}: elements of output_size must be greater than or equal to 0")
    return out


def _adaptive_matrices(kit: Kit, spatial: tuple[int, ...], out: list[int], dtype: Any) -> list[Any]:
    """Per axis, the (out, size) matrix of window weights (1 / window size inside it)."""
    xp = kit.xp
    mats = []
    for size, o in zip(spatial, out, strict=True):
        rows = []
        for start, end in _adaptive_bounds(size, o):
            w = 1.0 / (end - start)
            rows.append([w if start <= i < end else 0.0 for i in range(size)])
        mats.append(xp.asarray(rows, dtype=dtype) if rows else xp.zeros((0, size), dtype=dtype))
    return mats


def _along_axes(kit: Kit, a: Any, nd: int, mats: list[Any], transpose: bool) -> Any:
    """``a`` with each of its last ``nd`` axes multiplied by its matrix (``M`` maps the axis
    of size ``M.shape[1]`` to ``M.shape[0]``; ``transpose`` uses ``M.T``)."""
    xp = kit.xp
    for i in range(nd):
        ax = a.ndim - nd + i
        m = mats[i]
        m = m if transpose else xp.permute_dims(m, (1, 0))
        a = xp.moveaxis(xp.matmul(xp.moveaxis(a, ax, -1), m), -1, ax)
    return a


def adaptive_avg_pool_forward(kit: Kit, nd: int, self: Tensor, output_size: Sequence[int]) -> Tensor:  # fmt: skip
    xp = kit.xp
    name = f"adaptive_avg_pool{nd}d"
    shape = tuple(int(n) for n in self._data.shape)
    out = _check_adaptive(name, shape, output_size, nd)
    d = self._dtype
    _floating(name, d)
    acc = kit.accumulate[d]
    a = kit.cast(self._data, acc)
    spatial = shape[-nd:]
    if all(o == 1 for o in out):  # global pooling: a mean
        r = xp.mean(a, axis=tuple(range(a.ndim - nd, a.ndim)), keepdims=True)
    elif all(o and n % o == 0 for n, o in zip(spatial, out, strict=True)):
        # equal windows that tile the input: average pooling's strided slices
        ks = [n // o for n, o in zip(spatial, out, strict=True)]
        total: Any = None
        for offsets in itertools.product(*(range(k) for k in ks)):
            v = a[_window_slices(nd, offsets, ks, [1] * nd, out)]
            total = v if total is None else total + v
        r = total / math.prod(ks)
    else:
        r = _along_axes(kit, a, nd, _adaptive_matrices(kit, spatial, out, acc), False)
    return kit.wrap(r, d, self._device)


def adaptive_avg_pool_backward(kit: Kit, nd: int, grad_output: Tensor, self: Tensor) -> Tensor:
    name = f"adaptive_avg_pool{nd}d_backward"
    shape = tuple(int(n) for n in self._data.shape)
    gshape = tuple(int(n) for n in grad_output._data.shape)
    if len(gshape) != len(shape) or gshape[:-nd] != shape[:-nd]:
        raise OpError(
            f"{name}: expected grad_output of shape {fmt_shape(shape[:-nd])} followed by "
            f"{nd} output sizes, got {fmt_shape(gshape)}"
        )
    d = grad_output._dtype
    _floating(name, d)
    acc = kit.accumulate[d]
    g = kit.cast(grad_output._data, acc)
    mats = _adaptive_matrices(kit, shape[-nd:], list(gshape[-nd:]), acc)
    return kit.wrap(_along_axes(kit, g, nd, mats, True), d, self._device)


def adaptive_max_pool_forward(
    kit: Kit, nd: int, self: Tensor, output_size: Sequence[int]
) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    name = f"adaptive_max_pool{nd}d"
    shape = tuple(int(n) for n in self._data.shape)
    out = _check_adaptive(name, shape, output_size, nd)
    d = self._dtype
    _floating(name, d)
    a = kit.as_compute(self, d)
    spatial = shape[-nd:]
    i64 = kit.storage[_dt.int64]
    bounds = [_adaptive_bounds(n, o) for n, o in zip(spatial, out, strict=True)]
    widths = [max((e - s for s, e in b), default=1) for b in bounds]
    plane_strides = [math.prod(spatial[i + 1 :]) for i in range(nd)]
    best: Any = None
    for offsets in itertools.product(*(range(w) for w in widths)):
        v = a
        index: Any = 0
        for i, k in enumerate(offsets):
            # the k-th element of each window, the window's last one where it is shorter
            pos = [min(s + k, e - 1) for s, e in bounds[i]]
            idx = xp.asarray(pos, dtype=i64)
            v = xp.take(v, idx, axis=v.ndim - nd + i)
            index = index + xp.reshape(
                idx * plane_strides[i], tuple(out[i] if j == i else 1 for j in range(nd))
            )
        if best is None:
            best = v
            best_index = xp.broadcast_to(index, tuple(v.shape))
            continue
        take = (v > best) | xp.isnan(v)
        # the values: maximum (NaN wins, as in take), cheaper than a where
        best = xp.maximum(best, v)
        best_index = xp.where(take, index, best_index)
    return kit.wrap(best, d, self._device), kit.wrap(
        xp.asarray(best_index, dtype=i64, copy=True), _dt.int64, self._device
    )


def adaptive_max_pool_backward(
    kit: Kit, nd: int, grad_output: Tensor, self: Tensor, indices: Tensor
) -> Tensor:
    name = f"adaptive_max_pool{nd}d_backward"
    shape = tuple(int(n) for n in self._data.shape)
    gshape = tuple(int(n) for n in grad_output._data.shape)
    if gshape != tuple(indices._data.shape):
        raise OpError(
            f"{name}: expected sizes of grad_output {fmt_shape(gshape)} and indices "
            f"{fmt_shape(indices._data.shape)} to match"
        )
    d = grad_output._dtype
    _floating(name, d)
    g = kit.as_compute(grad_output, d)
    idx = kit.operand(indices, _dt.int64, self._device)
    r = _scatter_planes(kit, g, idx, shape, math.prod(shape[-nd:]), True)
    return kit.wrap(r, d, self._device)


# --- fractional max pooling -------------------------------------------------------------------
# Note [Fractional max pooling]: windows of ``kernel_size`` that start at a pseudo-random
# sequence per plane and dimension, PyTorch's ``generate_intervals`` computed in the input's
# dtype (so a given ``random_samples`` picks the same windows): with ``u`` the plane's sample
# for the dimension and ``alpha = (size - pool) / (out - 1)``, window ``i < out - 1`` starts at
# ``int((i + u) * alpha) - int(u * alpha)`` and the last at ``size - pool``. The samples hold
# (W, H) for 2-d and (T, H, W) for 3-d, as PyTorch reads them. Each window's elements are
# gathered by flat position, one offset inside the window at a time, the first maximum (a NaN
# wins) kept with its position in the plane; the backward adds the gradient at the positions
# (windows may overlap).

_FRACTIONAL_DIMS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional_starts(
    kit: Kit, samples: Any, size: int, out: int, pool: int, dtype: Any, storage: Any
) -> Any:
    """(planes, out) int64 window starts for the planes' samples (planes,), computed in
    ``dtype`` with each operation's result rounded to ``storage`` (bfloat16 computed in float32
    rounds as PyTorch's scalar_t arithmetic does)."""
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    last = xp.full((samples.shape[0], 1), size - pool, dtype=i64)
    if out <= 1:
        return last[:, :out]

    def r(a: Any) -> Any:
        return a if storage == dtype else kit.astype(kit.astype(a, storage), dtype)

    alpha = r(r(xp.asarray(size - pool, dtype=dtype)) / r(xp.asarray(out - 1, dtype=dtype)))
    i = r(xp.reshape(xp.arange(out - 1, dtype=dtype), (1, out - 1)))
    u = r(xp.reshape(samples, (-1, 1)))
    seq = xp.astype(r(r(i + u) * alpha), i64) - xp.astype(r(u * alpha), i64)
    return xp.concat([seq, last], axis=1)


def fractional_max_pool_forward(
    kit: Kit, nd: int, self: Tensor, kernel_size: Sequence[int], output_size: Sequence[int],
    random_samples: Tensor,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    xp = kit.xp
    name = f"fractional_max_pool{nd}d"
    where = name if nd == 2 else f"{name}_out"
    if len(kernel_size) != nd:
        raise OpError(f"{name}: kernel_size must either be a single Int or tuple of Ints")
    if len(output_size) != nd:
        raise OpError(f"{name}: output_size must either be a single Int or tuple of Ints")
    shape = tuple(int(n) for n in self._data.shape)
    if len(shape) not in (nd + 1, nd + 2):
        raise OpError(
            f"{where}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {fmt_shape(shape)}"
        )
    for i in range(1, len(shape)):
        if shape[i] <= 0:
            raise OpError(
                f"{where}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"got{fmt_shape(shape)} with dimension {i} being empty."
            )
    rs = tuple(int(n) for n in random_samples._data.shape)
    if len(rs) != 3:
        raise OpError(f"Expect _random_samples to be 3D; got {len(rs)}D.")
    batch = shape[0] if len(shape) == nd + 2 else 1
    channels = shape[-nd - 1]
    if rs[0] < batch:
        raise OpError("Expect _random_samples.size(0) no less then input batch size.")
    if rs[1] != channels:
        raise OpError("Expect _random_samples.size(1) equals to input channel size.")
    if rs[2] != nd:
        raise OpError(f"Expect _random_samples.size(2) equals to {nd}; got {rs[2]}.")
    if random_samples._dtype is not self._dtype:
        raise OpError("Expect _random_samples to have the same dtype as input")
    pool = [int(k) for k in kernel_size]
    out = [int(o) for o in output_size]
    spatial = shape[-nd:]
    # PyTorch's checks: 2-d height then width, the window may end at the edge; 3-d time,
    # width, height, strictly inside
    order = (0, 1) if nd == 2 else (0, 2, 1)
    for i in order:
        dim, k, o, n = _FRACTIONAL_DIMS[nd][i], pool[i], out[i], spatial[i]
        if o + k - 1 > n or (nd == 3 and o + k - 1 == n):
            raise OpError(f"{where}(): pool {dim} {k} too large relative to input {dim} {n}")
    d = self._dtype
    _floating(name, d)
    comp = kit.compute[d]
    a = kit.as_compute(self, d)
    planes = batch * channels
    plane = math.prod(spatial)
    i64 = kit.storage[_dt.int64]
    flat = xp.reshape(a, (-1,))
    u = kit.cast(random_samples._data, comp)[:batch, :channels, :]
    u = xp.reshape(u, (planes, nd))
    col = {2: (1, 0), 3: (0, 1, 2)}[nd]  # the sample's column for each spatial dimension
    starts = [
        _fractional_starts(kit, u[:, col[i]], spatial[i], out[i], pool[i], comp, kit.storage[d])
        for i in range(nd)
    ]
    strides = [math.prod(spatial[i + 1 :]) for i in range(nd)]
    # base position of each window: plane * plane_size + sum(start_i * stride_i), (P, *out)
    base: Any = xp.reshape(xp.arange(planes, dtype=i64) * plane, (planes,) + (1,) * nd)
    for i in range(nd):
        shp = [planes] + [1] * nd
        shp[1 + i] = out[i]
        base = base + xp.reshape(starts[i] * strides[i], tuple(shp))
    full = (planes, *out)
    base = xp.broadcast_to(base, full)
    best: Any = None
    best_pos: Any = None
    for offsets in itertools.product(*(range(k) for k in pool)):
        step = sum(o * s for o, s in zip(offsets, strides, strict=True))
        pos = base + step
        v = xp.reshape(xp.take(flat, xp.reshape(pos, (-1,)), axis=0), full)
        if best is None:
            best, best_pos = v, pos
            continue
        take = (v > best) | xp.isnan(v)
        best = xp.where(take, v, best)
        best_pos = xp.where(take, pos, best_pos)
    rshape = (*shape[: len(shape) - nd], *out)
    if best is None or 0 in out:  # no windows
        best = xp.zeros(rshape, dtype=comp)
        index = xp.zeros(rshape, dtype=i64)
    else:
        index = best_pos - xp.reshape(xp.arange(planes, dtype=i64) * plane, (planes,) + (1,) * nd)
        best, index = xp.reshape(best, rshape), xp.reshape(index, rshape)
    return kit.wrap(best, d, self._device), kit.wrap(
        xp.asarray(index, dtype=i64, copy=True), _dt.int64, self._device
    )


def fractional_max_pool_backward(
    kit: Kit, nd: int, grad_output: Tensor, self: Tensor, kernel_size: Sequence[int],
    output_size: Sequence[int], indices: Tensor,
) -> Tensor:  # fmt: skip
    name = f"fractional_max_pool{nd}d_backward"
    shape = tuple(int(n) for n in self._data.shape)
    gshape = tuple(int(n) for n in grad_output._data.shape)
    want = (*shape[: len(shape) - nd], *(int(o) for o in output_size))
    if gshape != want:
        if nd == 2 or len(gshape) != len(want):
            raise OpError(f"{name}(): gradOutput sizes unexpected")
        for i, dim in enumerate(_FRACTIONAL_DIMS[3]):
            if gshape[i - 3] != want[i - 3]:
                raise OpError(f"{name}_out(): gradOutput {dim} unexpected")
        raise OpError(f"{name}(): gradOutput sizes unexpected")
    if tuple(indices._data.shape) != gshape:
        raise OpError(f"{name}(): indices sizes unexpected")
    d = grad_output._dtype
    _floating(name, d)
    g = kit.as_compute(grad_output, d)
    idx = kit.operand(indices, _dt.int64, self._device)
    r = _scatter_planes(kit, g, idx, shape, math.prod(shape[-nd:]), True)
    return kit.wrap(r, d, self._device)


def fractional_max_pool2d(
    kit: Kit, self: Tensor, kernel_size: Sequence[int], output_size: Sequence[int],
    random_samples: Tensor,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    return fractional_max_pool_forward(kit, 2, self, kernel_size, output_size, random_samples)


def fractional_max_pool3d(
    kit: Kit, self: Tensor, kernel_size: Sequence[int], output_size: Sequence[int],
    random_samples: Tensor,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    return fractional_max_pool_forward(kit, 3, self, kernel_size, output_size, random_samples)


def fractional_max_pool2d_backward(
    kit: Kit, grad_output: Tensor, self: Tensor, kernel_size: Sequence[int],
    output_size: Sequence[int], indices: Tensor,
) -> Tensor:  # fmt: skip
    return fractional_max_pool_backward(
        kit, 2, grad_output, self, kernel_size, output_size, indices
    )


def fractional_max_pool3d_backward(
    kit: Kit, grad_output: Tensor, self: Tensor, kernel_size: Sequence[int],
    output_size: Sequence[int], indices: Tensor,
) -> Tensor:  # fmt: skip
    return fractional_max_pool_backward(
        kit, 3, grad_output, self, kernel_size, output_size, indices
    )


# --- max unpooling ----------------------------------------------------------------------------


def max_unpool(
    kit: Kit, nd: int, self: Tensor, indices: Tensor, output_size: Sequence[int]
) -> Tensor:
    xp = kit.xp
    shape = tuple(int(n) for n in self._data.shape)
    ishape = tuple(int(n) for n in indices._data.shape)
    if indices._dtype is not _dt.int64:
        raise OpError(
            f"elements in indices should be type int64 but got: {torch_name(indices._dtype)}"
        )
    if nd == 2 and len(output_size) != 2:
        raise OpError(
            "There should be exactly two elements (height, width) in output_size, but got "
            f"{len(output_size)} elements."
        )
    if nd == 3 and len(output_size) != 3:
        raise OpError(
            "There should be exactly three elements (depth, height, width) in output_size, but "
            f"got: {len(output_size)} elements."
        )
    if len(shape) not in (nd + 1, nd + 2):
        raise OpError(
            f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
            f"tensor with {len(shape)} dimensions."
        )
    if shape != ishape:
        raise OpError(
            f"Expected shape of indices to be same as that of the input tensor ({fmt_shape(shape)}) "
            f"but got indices tensor with shape: {fmt_shape(ishape)}"
        )
    for i in range(len(shape) - nd - 1, len(shape)):
        if shape[i] <= 0:
            raise OpError(
                f"max_unpooling{nd}d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but got {fmt_shape(shape)} with dimension {i} being empty."
            )
    out = [int(o) for o in output_size]
    plane = math.prod(out)
    d = self._dtype
    idx = kit.operand(indices, _dt.int64, self._device)
    if math.prod(idx.shape):
        bad = (idx < 0) | (idx >= plane)
        if bool(xp.any(bad)):
            first = int(xp.reshape(idx[bad], (-1,))[0]) if kit.fancy_setitem else -1
            sizes = "x".join(str(o) for o in out)
            raise OpError(
                f"Found an invalid max index: {first} (output volumes are of size {sizes}"
            )
    src = kit.as_compute(self, d)
    r = _scatter_planes(kit, src, idx, (*shape[:-nd], *out), plane, False)
    return kit.wrap(r, d, self._device)


# --- the kernels ------------------------------------------------------------------------------


def max_pool2d_with_indices(kit: Kit, *args: Any) -> tuple[Tensor, Tensor]:
    return max_pool_forward(kit, 2, *args)


def max_pool3d_with_indices(kit: Kit, *args: Any) -> tuple[Tensor, Tensor]:
    return max_pool_forward(kit, 3, *args)


def max_pool2d_with_indices_backward(kit: Kit, *args: Any) -> Tensor:
    return max_pool_backward(kit, 2, *args)


def max_pool3d_with_indices_backward(kit: Kit, *args: Any) -> Tensor:
    return max_pool_backward(kit, 3, *args)


def avg_pool2d(kit: Kit, *args: Any, **kwargs: Any) -> Tensor:
    return avg_pool_forward(kit, 2, *args, **kwargs)


def avg_pool3d(kit: Kit, *args: Any, **kwargs: Any) -> Tensor:
    return avg_pool_forward(kit, 3, *args, **kwargs)


def avg_pool2d_backward(kit: Kit, *args: Any) -> Tensor:
    return avg_pool_backward(kit, 2, *args)


def avg_pool3d_backward(kit: Kit, *args: Any) -> Tensor:
    return avg_pool_backward(kit, 3, *args)


def _adaptive_avg_pool2d(kit: Kit, self: Tensor, output_size: Sequence[int]) -> Tensor:
    return adaptive_avg_pool_forward(kit, 2, self, output_size)


def _adaptive_avg_pool3d(kit: Kit, self: Tensor, output_size: Sequence[int]) -> Tensor:
    return adaptive_avg_pool_forward(kit, 3, self, output_size)


def _adaptive_avg_pool2d_backward(kit: Kit, grad_output: Tensor, self: Tensor) -> Tensor:
    return adaptive_avg_pool_backward(kit, 2, grad_output, self)


def _adaptive_avg_pool3d_backward(kit: Kit, grad_output: Tensor, self: Tensor) -> Tensor:
    return adaptive_avg_pool_backward(kit, 3, grad_output, self)


def adaptive_max_pool2d(kit: Kit, self: Tensor, output_size: Sequence[int]) -> tuple[Tensor, Tensor]:  # fmt: skip
    return adaptive_max_pool_forward(kit, 2, self, output_size)


def adaptive_max_pool3d(kit: Kit, self: Tensor, output_size: Sequence[int]) -> tuple[Tensor, Tensor]:  # fmt: skip
    return adaptive_max_pool_forward(kit, 3, self, output_size)


def adaptive_max_pool2d_backward(kit: Kit, grad_output: Tensor, self: Tensor, indices: Tensor) -> Tensor:  # fmt: skip
    return adaptive_max_pool_backward(kit, 2, grad_output, self, indices)


def adaptive_max_pool3d_backward(kit: Kit, grad_output: Tensor, self: Tensor, indices: Tensor) -> Tensor:  # fmt: skip
    return adaptive_max_pool_backward(kit, 3, grad_output, self, indices)


def max_unpool2d(kit: Kit, self: Tensor, indices: Tensor, output_size: Sequence[int]) -> Tensor:
    return max_unpool(kit, 2, self, indices, output_size)


def max_unpool3d(
    kit: Kit,
    self: Tensor,
    indices: Tensor,
    output_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
) -> Tensor:
    return max_unpool(kit, 3, self, indices, output_size)


KERNELS: dict[str, Kernel] = {
    "max_pool2d_with_indices": keeps_format(max_pool2d_with_indices),
    "max_pool3d_with_indices": keeps_format(max_pool3d_with_indices),
    "max_pool2d_with_indices_backward": keeps_format(max_pool2d_with_indices_backward, 1),
    "max_pool3d_with_indices_backward": keeps_format(max_pool3d_with_indices_backward, 1),
    "avg_pool2d": keeps_format(avg_pool2d),
    "avg_pool3d": keeps_format(avg_pool3d, row_major=True),
    "avg_pool2d_backward": keeps_format(avg_pool2d_backward, 1),
    "avg_pool3d_backward": avg_pool3d_backward,
    "_adaptive_avg_pool2d": keeps_format(_adaptive_avg_pool2d),
    "_adaptive_avg_pool3d": keeps_format(_adaptive_avg_pool3d, row_major=True),
    "_adaptive_avg_pool2d_backward": keeps_format(_adaptive_avg_pool2d_backward, 1),
    "_adaptive_avg_pool3d_backward": _adaptive_avg_pool3d_backward,
    "adaptive_max_pool2d": keeps_format(adaptive_max_pool2d),
    "adaptive_max_pool3d": keeps_format(adaptive_max_pool3d, row_major=True),
    "adaptive_max_pool2d_backward": keeps_format(adaptive_max_pool2d_backward, 1),
    "adaptive_max_pool3d_backward": adaptive_max_pool3d_backward,
    "max_unpool2d": keeps_format(max_unpool2d),
    "fractional_max_pool2d": keeps_format(fractional_max_pool2d, row_major=True),
    "fractional_max_pool3d": keeps_format(fractional_max_pool3d, row_major=True),
    "fractional_max_pool2d_backward": fractional_max_pool2d_backward,
    "fractional_max_pool3d_backward": fractional_max_pool3d_backward,
    "max_unpool3d": max_unpool3d,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
