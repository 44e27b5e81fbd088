"""Part ``conv`` of the ``nn`` family of the array kit: ``convolution`` (every public
convolution, transposed or not, 1-3 spatial dimensions, groups) and its one backward kernel
``convolution_backward``, and the sliding-block operators ``im2col`` and ``col2im``
(``F.unfold`` / ``F.fold``), with PyTorch's checks and messages.

Note [Convolution as one matmul]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A convolution of ``x`` (N, C, *S) with ``w`` (O, C/G, *K) in G groups is one matrix product per
sample and group once ``x`` is unfolded into its windows ("im2col"): ``cols`` (N, G, C/G * K,
L), L the number of output positions, and ``y = w.reshape(G, O/G, C/G * K) @ cols``, a batched
``matmul`` whose result is already (N, O, L) in row-major order. The windows are read as one
strided view of the padded input on numpy and CuPy (``as_strided``: no copy until the reshape
that feeds the product); other namespaces stack one strided slice per kernel offset, which
the array API has. The other gradients are products of the same pieces:

* the input's: ``w^T @ g`` gives the windows' gradients, added back to where each window came
  from ("col2im", :func:`_fold`: one strided slice per kernel offset);
* the weight's: ``g @ cols^T`` summed over the samples;
* the bias's: ``g`` summed over the samples and positions.

A transposed convolution is the input gradient of the convolution that maps its output back
to its input (the same weight), so its forward is :func:`_input_grad`, its input's gradient a
plain convolution and its weight's gradient :func:`_weight_grad` with the roles swapped.
Products run in the accumulation dtype (float32 for half precision, as PyTorch accumulates).
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Sequence
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernel, Kernels, Kit, OpError, bind, cpp_name, fmt_shape, torch_name
from .._standard import matrix_transpose as _mT
from ._layout import channels_last_of, relayout

Ints = Sequence[int]

# --- the array routines (Note [Convolution as one matmul]) -------------------------------------


_STRIDED: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _strided(xp: Any) -> Any:
    """``as_strided`` of ``xp`` (numpy, CuPy), or None: found once per namespace, and kept only
    where it gives back an array of ``xp``'s own type (a namespace that lends numpy's ``lib``
    would hand out host arrays)."""
    try:
        return _STRIDED[xp]
    except (KeyError, TypeError):
        pass
    tricks = getattr(getattr(xp, "lib", None), "stride_tricks", None)
    fn = getattr(tricks, "as_strided", None)
    if fn is not None:
        probe = xp.zeros((2, 2))
        try:
            if type(fn(probe, shape=(2,), strides=probe.strides[:1])) is not type(probe):
                fn = None
        except (AttributeError, TypeError, ValueError):
            fn = None
    try:
        _STRIDED[xp] = fn
    except TypeError:  # a namespace that takes no weak reference: looked up each call
        pass
    return fn


def _pad(xp: Any, a: Any, padding: Ints) -> Any:
    """``a`` (N, C, *S) with ``padding[i]`` zeros on both sides of spatial dimension i."""
    if not any(padding):
        return a
    shape = tuple(a.shape[:2]) + tuple(n + 2 * p for n, p in zip(a.shape[2:], padding, strict=True))
    z = xp.zeros(shape, dtype=a.dtype)
    z[
        (
            slice(None),
            slice(None),
            *(slice(p, p + n) for n, p in zip(a.shape[2:], padding, strict=True)),
        )
    ] = a
    return z


def _offsets(kernel: Ints) -> Any:
    return itertools.product(*(range(k) for k in kernel))


def _window(off: Ints, dilation: Ints, stride: Ints, out: Ints) -> tuple[slice, ...]:
    """The positions kernel offset ``off`` reads, one per output position."""
    return (
        slice(None),
        slice(None),
        *(
            slice(o * d, o * d + s * (n - 1) + 1, s)
            for o, d, s, n in zip(off, dilation, stride, out, strict=True)
        ),
    )


def _unfold(
    xp: Any, strided: Any, x: Any, kernel: Ints, dilation: Ints, padding: Ints, stride: Ints,
    out: Ints,
) -> Any:  # fmt: skip
    """The windows of ``x`` (N, C, *S): (N, C, prod(kernel), prod(out)), a new array."""
    n, c = x.shape[:2]
    a = _pad(xp, x, padding)
    k, L = math.prod(kernel), math.prod(out)
    if strided is not None and hasattr(a, "strides"):
        sp = a.strides[2:]
        view = strided(
            a,
            shape=(n, c, *kernel, *out),
            strides=(
                *a.strides[:2],
                *(s * d for s, d in zip(sp, dilation, strict=True)),
                *(s * t for s, t in zip(sp, stride, strict=True)),
            ),
        )
        return view.reshape(n, c, k, L)  # the one copy
    parts = [a[_window(off, dilation, stride, out)] for off in _offsets(kernel)]
    if not parts:
        return xp.zeros((n, c, 0, L), dtype=x.dtype)
    return xp.reshape(xp.stack(parts, axis=2), (n, c, k, L))


def _fold(
    xp: Any, cols: Any, size: Ints, kernel: Ints, dilation: Ints, padding: Ints, stride: Ints,
    out: Ints, views: bool = False,
) -> Any:  # fmt: skip
    """The adjoint of :func:`_unfold`: windows (N, C, prod(kernel), prod(out)) added back into
    an (N, C, *size) array. ``views``: a basic slice of ``xp``'s arrays is a view that ``add``
    can write into (numpy, CuPy), so each window adds in place instead of through a
    temporary."""
    n, c = cols.shape[:2]
    padded = tuple(m + 2 * p for m, p in zip(size, padding, strict=True))
    acc = xp.zeros((n, c, *padded), dtype=cols.dtype)
    cols = xp.reshape(cols, (n, c, cols.shape[2], *out))
    for j, off in enumerate(_offsets(kernel)):
        idx = _window(off, dilation, stride, out)
        if views:
            part = acc[idx]
            xp.add(part, cols[:, :, j, ...], out=part)
        else:
            acc[idx] = acc[idx] + cols[:, :, j, ...]
    if not any(padding):
        return acc
    return acc[
        (slice(None), slice(None), *(slice(p, p + m) for m, p in zip(size, padding, strict=True)))
    ]


class _Conv:
    """One convolution's geometry: kernel, stride, padding, dilation, groups; its input's
    spatial size ``size`` and its output's ``out`` (of the plain, untransposed convolution)."""

    __slots__ = ("kernel", "stride", "padding", "dilation", "groups", "size", "out")

    def __init__(
        self, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints, groups: int,
        size: Ints, out: Ints,
    ) -> None:  # fmt: skip
        self.kernel, self.stride, self.padding = tuple(kernel), tuple(stride), tuple(padding)
        self.dilation, self.groups = tuple(dilation), groups
        self.size, self.out = tuple(size), tuple(out)

    def unfold(self, xp: Any, strided: Any, x: Any) -> Any:
        return _unfold(xp, strided, x, self.kernel, self.dilation, self.padding, self.stride,
                       self.out)  # fmt: skip

    def fold(self, xp: Any, cols: Any, views: bool) -> Any:
        return _fold(xp, cols, self.size, self.kernel, self.dilation, self.padding, self.stride,
                     self.out, views)  # fmt: skip


# Note [Convolution in batch chunks]: on the host, the windows of a few samples at a time
# (``chunk`` of them, about _CHUNK_BYTES of columns) go through the product, the results written
# into one output: the columns stay in the cache and in the allocator's reused memory instead of
# one array of every sample's windows (75 MB for a ResNet block's 3x3 convolution, which the C
# library maps afresh, page by page, on each call). Measured on the ResNet block's convolution
# (32x64x32x32, 3x3): forward 34 -> 27 ms, weight gradient 34 -> 30 ms. Other devices take the
# whole batch at once (``chunk`` = N).
_CHUNK_BYTES = 4 << 20


def chunk_size(kit: Kit, x: Any, channels: int, geo: _Conv) -> int:
    """Samples per chunk for ``x`` (N, channels, ...) unfolded by ``geo``."""
    n = int(x.shape[0])
    if kit.device_type != "cpu" or _strided(kit.xp) is None:
        return max(n, 1)
    per = channels * math.prod(geo.kernel) * math.prod(geo.out) * int(x.dtype.itemsize)
    return max(1, min(n, _CHUNK_BYTES // max(per, 1)))


def _forward(xp: Any, strided: Any, x: Any, w: Any, geo: _Conv, chunk: int = 0) -> Any:
    """``x`` (N, C, *size) convolved with ``w`` (O, C/G, *kernel): (N, O, *out)."""
    n, c = x.shape[:2]
    o, g = w.shape[0], geo.groups
    k, L = math.prod(geo.kernel), math.prod(geo.out)
    wm = xp.reshape(w, (g, o // g, (c // g) * k))
    if 0 < chunk < n:  # Note [Convolution in batch chunks]
        y = xp.empty((n, g, o // g, L), dtype=wm.dtype)
        for s in range(0, n, chunk):
            cols = geo.unfold(xp, strided, x[s : s + chunk, ...])
            xp.matmul(wm, xp.reshape(cols, (-1, g, (c // g) * k, L)), out=y[s : s + chunk, ...])
        return xp.reshape(y, (n, o, *geo.out))
    cols = geo.unfold(xp, strided, x)  # (N, C, K, L)
    cols = xp.reshape(cols, (n, g, (c // g) * k, L))
    y = xp.matmul(wm, cols)  # (N, G, O/G, L)
    return xp.reshape(y, (n, o, *geo.out))


def _as_convolution(geo: _Conv) -> _Conv | None:
    """The plain convolution whose output is :func:`_input_grad`'s (a stride-1 convolution's
    input gradient is the gradient convolved with the flipped, transposed weight, padded by
    ``dilation * (kernel - 1) - padding``), or None where there is none or it would cost more
    products than adding the windows back (an input larger than the output)."""
    if any(s != 1 for s in geo.stride):
        return None
    pad = tuple(
        d * (q - 1) - p for d, q, p in zip(geo.dilation, geo.kernel, geo.padding, strict=True)
    )
    if any(p < 0 for p in pad):
        return None
    size = tuple(
        o + 2 * p - d * (q - 1)
        for o, p, d, q in zip(geo.out, pad, geo.dilation, geo.kernel, strict=True)
    )
    if size != geo.size:  # a transposed convolution's output_padding
        return None
    if math.prod(geo.size) > math.prod(geo.out):
        # the padded gradient has more windows than the output has positions (LeNet's 5x5
        # without padding: 144 against 64): more products than the windows added back
        return None
    return _Conv(geo.kernel, geo.stride, pad, geo.dilation, geo.groups, geo.out, geo.size)


def _input_grad(
    xp: Any, g: Any, w: Any, geo: _Conv, c: int, views: bool, strided: Any = None, chunk: int = 0
) -> Any:
    """The gradient of :func:`_forward`'s ``x`` (``c`` channels) for ``g`` (N, O, *out)."""
    n, o = g.shape[:2]
    gr = geo.groups
    k = math.prod(geo.kernel)
    L = math.prod(geo.out)
    flipped = _as_convolution(geo)
    if flipped is not None:  # one convolution: no windows added back one offset at a time
        nd = len(geo.kernel)
        wt = xp.reshape(w, (gr, o // gr, c // gr, *geo.kernel))
        wt = xp.permute_dims(wt, (0, 2, 1, *range(3, 3 + nd)))
        wt = xp.flip(xp.reshape(wt, (c, o // gr, *geo.kernel)), axis=tuple(range(2, 2 + nd)))
        return _forward(xp, strided, g, wt, flipped, chunk)
    wm = xp.reshape(w, (gr, o // gr, (c // gr) * k))
    if views and all(st == 1 for st in geo.stride) and len(geo.kernel) > 1:
        return _input_grad_wide(xp, g, wm, geo, c)
    gcols = xp.matmul(_mT(xp, wm), xp.reshape(g, (n, gr, o // gr, L)))
    return geo.fold(xp, xp.reshape(gcols, (n, c, k, L)), views)


def _input_grad_wide(xp: Any, g: Any, wm: Any, geo: _Conv, c: int) -> Any:
    """:func:`_input_grad` of a stride-1 convolution through widened rows: ``g``'s output grid
    embedded in the padded input's (its dimensions after the first widened to the padded
    input's, zeros in the extra positions), so that each kernel offset's windows are one
    contiguous run of the padded input's flat memory and add back with one long add per
    channel (LeNet's 5x5 over 14x14: 25 adds of 140-element runs instead of 25 of 10-element
    rows; 1.7 -> 1.2 ms). The product grows by the widening (14/10 there).

    The samples go inside the product: ``g`` laid out (O, N, widened), one product per group
    gives (C * K, N * run), so that each kernel offset's windows of every sample and channel
    are one contiguous block (C rows of N runs) and the adds read memory in order, into an
    accumulator laid out (C, N, padded); the result is copied back to (N, C, *size). With the
    samples outside (N products, each offset's windows strided by K runs) the 25 adds took
    longer than the product: on LeNet's second layer 3.0 -> 2.2 ms a call (loaded machine)."""
    n, o = g.shape[:2]
    gr, k = geo.groups, math.prod(geo.kernel)
    nd = len(geo.kernel)
    padded = tuple(m + 2 * p for m, p in zip(geo.size, geo.padding, strict=True))
    wide = (geo.out[0], *padded[1:])
    gw = xp.zeros((o, n, *wide), dtype=g.dtype)
    gw[(slice(None), slice(None), *(slice(0, m) for m in geo.out))] = xp.permute_dims(
        g, (1, 0, *range(2, 2 + nd))
    )
    run = math.prod(wide)
    gcols = xp.matmul(_mT(xp, wm), xp.reshape(gw, (gr, o // gr, n * run)))  # (G, C/G * K, N*run)
    gcols = xp.reshape(gcols, (c, k, n, run))
    flat = [math.prod(padded[i + 1 :]) for i in range(len(padded))]
    starts = [
        sum(f * d * q for f, d, q in zip(flat, geo.dilation, off, strict=True))
        for off in _offsets(geo.kernel)
    ]
    acc = xp.zeros((c, n, max(math.prod(padded), max(starts) + run)), dtype=g.dtype)
    for j, s in enumerate(starts):
        part = acc[:, :, s : s + run]
        xp.add(part, gcols[:, j, ...], out=part)
    r = xp.reshape(acc[:, :, : math.prod(padded)], (c, n, *padded))
    r = r[
        (
            slice(None),
            slice(None),
            *(slice(p, p + m) for m, p in zip(geo.size, geo.padding, strict=True)),
        )
    ]
    out = xp.empty((n, c, *geo.size), dtype=g.dtype)
    out[...] = xp.permute_dims(r, (1, 0, *range(2, 2 + nd)))
    return out


def _weight_grad(xp: Any, strided: Any, x: Any, g: Any, geo: _Conv, chunk: int = 0) -> Any:
    """The gradient of :func:`_forward`'s ``w`` (O, C/G, *kernel) for ``g`` (N, O, *out)."""
    n, c = x.shape[:2]
    o, gr = g.shape[1], geo.groups
    k, L = math.prod(geo.kernel), math.prod(geo.out)
    gm = xp.reshape(g, (n, gr, o // gr, L))
    if not 0 < chunk < n:
        chunk = max(n, 1)
    gw = None
    for s in range(0, n, chunk):  # Note [Convolution in batch chunks]
        cols = geo.unfold(xp, strided, x[s : s + chunk, ...])
        cols = xp.reshape(cols, (-1, gr, (c // gr) * k, L))
        part = xp.sum(xp.matmul(gm[s : s + chunk, ...], _mT(xp, cols)), axis=0)  # (G, O/G, C/G * K)
        gw = part if gw is None else gw + part
    if gw is None:  # no samples
        gw = xp.zeros((gr, o // gr, (c // gr) * k), dtype=g.dtype)
    return xp.reshape(gw, (o, c // gr, *geo.kernel))


# Note [Channels-last convolution]: on the host, a channels_last input (N, C, *S viewed over
# (N, *S, C) memory) is convolved in that order: the windows of a few samples, (n, L, K * C),
# read as one strided view of the padded (n, *S, C) array whose last axis is contiguous, times
# the weight laid out (K * C, O), give (n, L, O), the channels_last result itself (no copy back
# to PyTorch's layout). The weight's gradient is ``cols^T @ g`` the same way; the stride-1
# input gradient is this convolution of the gradient with the flipped weight (_as_convolution).
# Groups of one only (the others take the row-major path and a copy into channels_last).
# Measured on the ResNet block's convolution: see docs/performance.md.


def _nhwc_padded(xp: Any, x: Any, padding: Ints) -> Any:
    """``x`` (N, C, *S) as a new (N, *padded S, C) row-major array, zeros around."""
    nd = x.ndim - 2
    v = xp.permute_dims(x, (0, *range(2, 2 + nd), 1))
    shape = (v.shape[0], *(n + 2 * p for n, p in zip(v.shape[1:-1], padding, strict=True)),
             v.shape[-1])  # fmt: skip
    if not any(padding):
        z = xp.empty(shape, dtype=x.dtype)
        z[...] = v
        return z
    z = xp.zeros(shape, dtype=x.dtype)
    inner = tuple(slice(p, p + n) for n, p in zip(v.shape[1:-1], padding, strict=True))
    z[(slice(None), *inner, slice(None))] = v
    return z


def _nhwc_cols(strided: Any, a: Any, geo: _Conv) -> Any:
    """The windows of padded (n, *S, C) ``a``: (n, L, K * C), one copy."""
    n, c = a.shape[0], a.shape[-1]
    sp = a.strides[1:-1]
    view = strided(
        a,
        shape=(n, *geo.out, *geo.kernel, c),
        strides=(
            a.strides[0],
            *(s * t for s, t in zip(sp, geo.stride, strict=True)),
            *(s * d for s, d in zip(sp, geo.dilation, strict=True)),
            a.strides[-1],
        ),
    )
    return view.reshape(n, math.prod(geo.out), math.prod(geo.kernel) * c)


def _forward_cl(xp: Any, strided: Any, x: Any, w: Any, geo: _Conv, chunk: int) -> Any:
    """:func:`_forward` in channels_last order (Note [Channels-last convolution]): (N, O, *out)
    whose memory is (N, *out, O)."""
    n, nd, o = x.shape[0], x.ndim - 2, w.shape[0]
    a = _nhwc_padded(xp, x, geo.padding)
    wm = xp.reshape(xp.permute_dims(w, (*range(2, 2 + nd), 1, 0)), (-1, o))  # (K * C, O)
    L = math.prod(geo.out)
    y = xp.empty((n, L, o), dtype=wm.dtype)
    step = chunk if 0 < chunk < n else max(n, 1)
    for s in range(0, n, step):
        xp.matmul(_nhwc_cols(strided, a[s : s + step], geo), wm, out=y[s : s + step])
    y = xp.reshape(y, (n, *geo.out, o))
    return xp.permute_dims(y, (0, nd + 1, *range(1, nd + 1)))


def _weight_grad_cl(xp: Any, strided: Any, x: Any, g: Any, geo: _Conv, chunk: int) -> Any:
    """:func:`_weight_grad` in channels_last order: (O, C, *kernel)."""
    n, c, nd, o = x.shape[0], x.shape[1], x.ndim - 2, g.shape[1]
    a = _nhwc_padded(xp, x, geo.padding)
    gl = xp.reshape(xp.permute_dims(g, (0, *range(2, 2 + nd), 1)), (n, -1, o))  # (N, L, O)
    step = chunk if 0 < chunk < n else max(n, 1)
    gw = xp.zeros((math.prod(geo.kernel) * c, o), dtype=g.dtype)
    for s in range(0, n, step):
        cols = _nhwc_cols(strided, a[s : s + step], geo)
        gw = gw + xp.sum(xp.matmul(_mT(xp, cols), gl[s : s + step]), axis=0)
    gw = xp.reshape(gw, (*geo.kernel, c, o))
    return xp.permute_dims(gw, (nd + 1, nd, *range(nd)))


def _input_grad_cl(xp: Any, strided: Any, g: Any, w: Any, geo: _Conv, chunk: int) -> Any:
    """The stride-1 input gradient in channels_last order, or None where there is no
    convolution form of it (:func:`_as_convolution`)."""
    flipped = _as_convolution(geo)
    if flipped is None:
        return None
    nd = len(geo.kernel)
    wt = xp.flip(xp.permute_dims(w, (1, 0, *range(2, 2 + nd))), axis=tuple(range(2, 2 + nd)))
    return _forward_cl(xp, strided, g, wt, flipped, chunk)


# --- checks: PyTorch's, in its order and words ------------------------------------------------


def _expand(name: str, value: Ints, k: int) -> tuple[int, ...]:
    v = tuple(int(i) for i in value)
    if len(v) == 1 and k != 1:
        return v * k
    if len(v) != k:
        raise OpError(
            f"expected {name} to be a single integer value or a list of {k} values to match the "
            f"convolution dimensions, but got {name}={list(v)}"
        )
    return v


def _out_size(n: int, k: int, s: int, p: int, d: int) -> int:
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


# (input shape, weight shape, bias shape, stride, padding, dilation, transposed,
# output_padding, groups) -> conv_geometry's result: a network calls each layer with the same
# shapes every step, and the checks cost about 25 us of Python per call. Bounded: cleared when
# full. Only calls that passed the checks are kept.
_GEOMETRY: dict[tuple[Any, ...], tuple[_Conv, tuple[int, ...]]] = {}
_GEOMETRY_SIZE = 512


def conv_geometry(
    input: Tensor, weight: Tensor, bias: Tensor | None, stride: Ints, padding: Ints,
    dilation: Ints, transposed: bool, output_padding: Ints, groups: int,
) -> tuple[_Conv, tuple[int, ...]]:  # fmt: skip
    """PyTorch's checks of ``convolution`` (``_convolution`` and ``check_shape_forward``), and
    the geometry of the untransposed convolution behind it with the call's output shape."""
    key = (
        input._data.shape, weight._data.shape, None if bias is None else bias._data.shape,
        tuple(stride), tuple(padding), tuple(dilation), bool(transposed),
        tuple(output_padding), groups,
    )  # fmt: skip
    got = _GEOMETRY.get(key)
    if got is None:
        got = _checked_geometry(
            input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
        )
        if len(_GEOMETRY) >= _GEOMETRY_SIZE:
            _GEOMETRY.clear()
        _GEOMETRY[key] = got
    return got


def _checked_geometry(
    input: Tensor, weight: Tensor, bias: Tensor | None, stride: Ints, padding: Ints,
    dilation: Ints, transposed: bool, output_padding: Ints, groups: int,
) -> tuple[_Conv, tuple[int, ...]]:  # fmt: skip
    xs, ws = tuple(input._data.shape), tuple(weight._data.shape)
    k = len(ws) - 2
    if len(ws) < 3:
        raise OpError("weight should have at least three dimensions")
    if groups <= 0:
        raise OpError("non-positive groups is not supported")
    stride = _expand("stride", stride, k)
    padding = _expand("padding", padding, k)
    dilation = _expand("dilation", dilation, k)
    output_padding = _expand("output_padding", output_padding, k)
    if any(p < 0 for p in padding):
        raise OpError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise OpError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise OpError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise OpError("non-positive dilation is not supported")
    if len(xs) != len(ws):
        raise OpError(
            f"Expected {len(ws)}-dimensional input for {len(ws)}-dimensional weight "
            f"{fmt_shape(ws)}, but got {len(xs)}-dimensional input of size {fmt_shape(xs)} instead"
        )
    if ws[0] < groups:
        raise OpError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but "
            f"got weight of size {fmt_shape(ws)} instead"
        )
    if ws[0] % groups:
        raise OpError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{fmt_shape(ws)}] instead"
        )
    kernel, size = ws[2:], xs[2:]
    if not transposed:
        if xs[1] != ws[1] * groups:
            raise OpError(
                f"Given groups={groups}, weight of size {fmt_shape(ws)}, expected "
                f"input{fmt_shape(xs)} to have {ws[1] * groups} channels, but got {xs[1]} "
                "channels instead"
            )
        padded = [n + 2 * p for n, p in zip(size, padding, strict=True)]
        dk = [d * (q - 1) + 1 for d, q in zip(dilation, kernel, strict=True)]
        if any(a < b for a, b in zip(padded, dk, strict=True)):
            raise OpError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, dk))}). Kernel size can't be greater than "
                "actual input size"
            )
        out = tuple(map(_out_size, size, kernel, stride, padding, dilation))
        geo = _Conv(kernel, stride, padding, dilation, groups, size, out)
        result = (xs[0], ws[0], *out)
        out_channels = ws[0]
    else:
        if xs[1] != ws[0]:
            raise OpError(
                f"Given transposed=1, weight of size {fmt_shape(ws)}, expected input"
                f"{fmt_shape(xs)} to have {ws[0]} channels, but got {xs[1]} channels instead"
            )
        if any(
            op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation, strict=True)
        ):
            names = ("depth", "height", "width")[3 - k :] if k <= 3 else [str(i) for i in range(k)]
            parts = [
                f"output_padding_{nm}: {v}" for nm, v in zip(names, output_padding, strict=True)
            ]
            parts += [f"stride_{nm}: {v}" for nm, v in zip(names, stride, strict=True)]
            parts += [f"dilation_{nm}: {v}" for nm, v in zip(names, dilation, strict=True)]
            raise OpError(
                "output padding must be smaller than either stride or dilation, but got "
                + " ".join(parts)
            )
        full = tuple(
            (n - 1) * s - 2 * p + d * (q - 1) + op + 1
            for n, s, p, d, q, op in zip(
                size, stride, padding, dilation, kernel, output_padding, strict=True
            )
        )
        if any(n <= 0 for n in full):
            raise OpError(
                f"Given input size per channel: ({' x '.join(map(str, size))}). Calculated output "
                f"size per channel: ({' x '.join(map(str, full))}). Output size is too small"
            )
        # the plain convolution from the output (``full``) back to the input (``size``)
        geo = _Conv(kernel, stride, padding, dilation, groups, full, size)
        out_channels = ws[1] * groups
        result = (xs[0], out_channels, *full)
    if bias is not None:
        bs = tuple(bias._data.shape)
        if bs != (out_channels,):
            raise OpError(
                f"Given weight of size {fmt_shape(ws)}, expected bias to be 1-dimensional with "
                f"{out_channels} elements, but got bias of size {fmt_shape(bs)} instead"
            )
    return geo, result


def _conv_dtype(input: Tensor, weight: Tensor, bias: Tensor | None) -> _dt.dtype:
    d = input._dtype
    if weight._dtype is not d:
        raise OpError(f"expected scalar type {torch_name(d)} but found {torch_name(weight._dtype)}")
    if bias is not None and bias._dtype is not d:
        raise OpError(
            f"Input type ({cpp_name(d)}) and bias type ({cpp_name(bias._dtype)}) should be the same"
        )
    if d.kind == "b":
        raise OpError(f"\"slow_conv\" not implemented for '{torch_name(d)}'")
    return d


# --- the kernels --------------------------------------------------------------------------------


def convolution(
    kit: Kit, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Ints, padding: Ints,
    dilation: Ints, transposed: bool, output_padding: Ints, groups: int,
) -> Tensor:  # fmt: skip
    """``aten::convolution``: Note [Convolution as one matmul]."""
    xp = kit.xp
    geo, shape = conv_geometry(
        input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
    )
    d = _conv_dtype(input, weight, bias)
    kit.same_device(input, weight)
    device = input._device
    acc = kit.accumulate[d]
    x, w = kit.cast(input._data, acc), kit.cast(weight._data, acc)
    strided = _strided(xp)
    # Note [Channels last through the kernels]: PyTorch's CPU convolution gives channels_last
    # when the input or the weight suggests it
    fmt = channels_last_of(kit, input) or channels_last_of(kit, weight)
    if fmt is not None and _channels_last_path(kit, geo, transposed, input):
        y = _forward_cl(xp, strided, x, w, geo, chunk_size(kit, x, x.shape[1], geo))
    elif transposed:
        chunk = chunk_size(kit, x, x.shape[1], geo)
        y = _input_grad(xp, x, w, geo, shape[1], strided is not None, strided, chunk)
    else:
        y = _forward(xp, strided, x, w, geo, chunk_size(kit, x, x.shape[1], geo))
    if bias is not None:
        kit.same_device(input, bias)
        b = xp.reshape(kit.cast(bias._data, acc), (1, shape[1]) + (1,) * (len(shape) - 2))
        y = xp.add(y, b, out=y) if kit.writes_out else y + b
    r: Tensor = relayout(kit, kit.wrap(y, d, device), fmt)
    return r


def _channels_last_path(kit: Kit, geo: _Conv, transposed: bool, input: Tensor) -> bool:
    """Whether Note [Channels-last convolution]'s path runs: a plain convolution of one group
    of a channels_last input on the host."""
    return (
        not transposed
        and geo.groups == 1
        and kit.device_type == "cpu"
        and _strided(kit.xp) is not None
        and channels_last_of(kit, input) is not None
    )


def convolution_backward(
    kit: Kit, grad_output: Tensor, input: Tensor, weight: Tensor, bias_sizes: Ints | None,
    stride: Ints, padding: Ints, dilation: Ints, transposed: bool, output_padding: Ints,
    groups: int, output_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:  # fmt: skip
    """``aten::convolution_backward``: the gradients of ``convolution``'s input, weight and bias
    for ``grad_output``, each where ``output_mask`` asks (None elsewhere)."""
    xp = kit.xp
    geo, shape = conv_geometry(
        input, weight, None, stride, padding, dilation, transposed, output_padding, groups
    )
    d = _conv_dtype(input, weight, None)
    gs = tuple(grad_output._data.shape)
    if gs != shape:
        raise OpError(
            f"Expected grad_output of size {fmt_shape(shape)} (the output of the convolution), "
            f"but got {fmt_shape(gs)}"
        )
    if grad_output._dtype is not d:
        raise OpError(
            f"expected scalar type {torch_name(d)} but found {torch_name(grad_output._dtype)}"
        )
    kit.same_device(grad_output, input)
    kit.same_device(grad_output, weight)
    device = grad_output._device
    acc = kit.accumulate[d]
    g = kit.cast(grad_output._data, acc)
    strided = _strided(xp)
    mask = tuple(bool(m) for m in output_mask)
    gi = gw = gb = None
    if transposed:
        x = kit.cast(input._data, acc)
        if mask[0] or mask[1]:
            w = kit.cast(weight._data, acc)
            if mask[0]:  # a plain convolution of the gradient; output_padding may give more
                r = _forward(xp, strided, g, w, geo, chunk_size(kit, g, g.shape[1], geo))
                r = r[(slice(None), slice(None), *(slice(0, n) for n in geo.out))]
                gi = kit.wrap(r, d, device)
            if mask[1]:
                chunk = chunk_size(kit, g, g.shape[1], geo)
                gw = kit.wrap(_weight_grad(xp, strided, g, x, geo, chunk), d, device)
    elif _channels_last_path(kit, geo, transposed, input):  # Note [Channels-last convolution]
        x = kit.cast(input._data, acc)
        w = kit.cast(weight._data, acc)
        chunk = chunk_size(kit, x, x.shape[1], geo)
        if mask[0]:
            r = _input_grad_cl(xp, strided, g, w, geo, chunk)
            if r is None:
                r = _input_grad(xp, g, w, geo, x.shape[1], True, strided, chunk)
            gi = kit.wrap(r, d, device)
        if mask[1]:
            gw = kit.wrap(_weight_grad_cl(xp, strided, x, g, geo, chunk), d, device)
    else:
        if mask[0]:
            w = kit.cast(weight._data, acc)
            c = input._data.shape[1]
            chunk = chunk_size(kit, g, g.shape[1], geo)
            gi = _input_grad(xp, g, w, geo, c, strided is not None, strided, chunk)
            gi = kit.wrap(gi, d, device)
        if mask[1]:
            x = kit.cast(input._data, acc)
            chunk = chunk_size(kit, x, x.shape[1], geo)
            gw = kit.wrap(_weight_grad(xp, strided, x, g, geo, chunk), d, device)
    if mask[2]:
        axes = (0, *range(2, len(gs)))
        gb = kit.wrap(xp.sum(g, axis=axes), d, device)
    # Note [Channels last through the kernels]: each gradient in its own argument's format
    # (the channels-last kernels' results are row-major where their argument is)
    row_major = "contiguous_format" if kit.strided else None
    return (
        relayout(kit, gi, channels_last_of(kit, input) or row_major),
        relayout(kit, gw, channels_last_of(kit, weight) or row_major),
        gb,
    )


# --- im2col and col2im (F.unfold and F.fold) --------------------------------------------------


def _pairs(
    name: str, kernel_size: Ints, dilation: Ints, padding: Ints, stride: Ints
) -> tuple[tuple[int, ...], ...]:
    for what, v in (("kernel_size", kernel_size), ("dilation", dilation),
                    ("padding", padding), ("stride", stride)):  # fmt: skip
        if len(v) != 2:
            raise OpError(f"It is expected {what} equals to 2, but got size {len(v)}")
    kh, kw = kernel_size
    if kh <= 0 or kw <= 0:
        raise OpError(
            f"kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: "
            f"{kw}"
        )
    if stride[0] <= 0 or stride[1] <= 0:
        raise OpError(
            f"stride should be greater than zero, but got stride_height: {stride[0]} "
            f"stride_width: {stride[1]}"
        )
    if dilation[0] <= 0 or dilation[1] <= 0:
        raise OpError(
            f"dilation should be greater than zero, but got dilation_height: {dilation[0]} "
            f"dilation_width: {dilation[1]}"
        )
    if padding[0] < 0 or padding[1] < 0:
        raise OpError(
            f"padding should be non-negative, but got pad_height: {padding[0]} pad_width: "
            f"{padding[1]}"
        )
    return tuple(kernel_size), tuple(dilation), tuple(padding), tuple(stride)


def _block_dtype(name: str, self: Tensor) -> _dt.dtype:
    d = self._dtype
    if d.kind == "b":
        raise OpError(f"\"{name}\" not implemented for '{torch_name(d)}'")
    return d


def im2col(
    kit: Kit, self: Tensor, kernel_size: Ints, dilation: Ints, padding: Ints, stride: Ints
) -> Tensor:
    """``aten::im2col``: the sliding blocks of a (N, C, H, W) or (C, H, W) input as columns,
    (N, C * kh * kw, L)."""
    kernel, dil, pad, st = _pairs("im2col", kernel_size, dilation, padding, stride)
    d = _block_dtype("im2col", self)
    a = self._data
    shape = tuple(a.shape)
    if len(shape) not in (3, 4) or 0 in shape[-3:]:
        raise OpError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
            f"dimensions for input, but got: {fmt_shape(shape)}"
        )
    batched = len(shape) == 4
    if not batched:
        a = kit.xp.reshape(a, (1, *shape))
    size = tuple(a.shape[2:])
    out = tuple(map(_out_size, size, kernel, st, pad, dil))
    if out[0] < 1 or out[1] < 1:
        raise OpError(
            f"Given input with spatial size ({size[0]}, {size[1]}), kernel_size=({kernel[0]}, "
            f"{kernel[1]}), dilation=({dil[0]}, {dil[1]}), padding=({pad[0]}, {pad[1]}), "
            f"calculated shape of the array of sliding blocks as ({out[0]}, {out[1]}), but its "
            "components must be at least one."
        )
    xp = kit.xp
    n, c = a.shape[:2]
    cols = _unfold(xp, _strided(xp), kit.cast(a, kit.compute[d]), kernel, dil, pad, st, out)
    r = xp.reshape(cols, (n, c * kernel[0] * kernel[1], out[0] * out[1]))
    if not batched:
        r = xp.reshape(r, tuple(r.shape[1:]))
    return kit.wrap(r, d, self._device)


def col2im(
    kit: Kit, self: Tensor, output_size: Ints, kernel_size: Ints, dilation: Ints, padding: Ints,
    stride: Ints,
) -> Tensor:  # fmt: skip
    """``aten::col2im``: columns (N, C * kh * kw, L) or (C * kh * kw, L) added back into an
    (N, C, *output_size) image; the adjoint of :func:`im2col`."""
    if len(output_size) != 2:
        raise OpError(f"It is expected output_size equals to 2, but got size {len(output_size)}")
    oh, ow = (int(v) for v in output_size)
    if oh <= 0 or ow <= 0:
        raise OpError(
            f"output should be greater than zero, but got output_height: {oh} output_width: {ow}"
        )
    kernel, dil, pad, st = _pairs("col2im", kernel_size, dilation, padding, stride)
    d = _block_dtype("col2im", self)
    a = self._data
    shape = tuple(a.shape)
    if len(shape) not in (2, 3) or 0 in shape[-2:]:
        raise OpError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {fmt_shape(shape)}"
        )
    batched = len(shape) == 3
    rows, L = shape[-2], shape[-1]
    kk = kernel[0] * kernel[1]
    if rows % kk:
        raise OpError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
            f"but got input.size(1)={rows} and kernel_size=({kernel[0]}, {kernel[1]})"
        )
    out = tuple(map(_out_size, (oh, ow), kernel, st, pad, dil))
    if out[0] * out[1] != L:
        raise OpError(
            f"Given output_size=({oh}, {ow}), kernel_size=({kernel[0]}, {kernel[1]}), "
            f"dilation=({dil[0]}, {dil[1]}), padding=({pad[0]}, {pad[1]}), stride=({st[0]}, "
            f"{st[1]}), expected size of input's dimension {2 if batched else 1} to match the "
            f"calculated number of sliding blocks {out[0]} * {out[1]} = {out[0] * out[1]}, but "
            f"got input.size({2 if batched else 1})={L}."
        )
    xp = kit.xp
    n = shape[0] if batched else 1
    cols = xp.reshape(kit.cast(a, kit.accumulate[d]), (n, rows // kk, kk, L))
    r = _fold(xp, cols, (oh, ow), kernel, dil, pad, st, out, _strided(xp) is not None)
    if not batched:
        r = xp.reshape(r, tuple(r.shape[1:]))
    return kit.wrap(r, d, self._device)


KERNELS: dict[str, Kernel] = {
    "convolution": convolution,
    "convolution_backward": convolution_backward,
    "im2col": im2col,
    "col2im": col2im,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
