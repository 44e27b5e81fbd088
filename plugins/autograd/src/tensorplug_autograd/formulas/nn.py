"""Formulas of the neural network functions: losses, softmax, resampling (upsampling, pixel
shuffle, grid sampling), and the mixed precision bookkeeping (Note [Formula table])."""

from __future__ import annotations

import itertools
import math
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

from ._table import (
    FORMULAS,
    OUTPUT_DIFFERENTIABILITY,
    SAVED_OUTPUTS,
    _aten,
    _zeros,
    defderiv,
    nondifferentiable,
)

# --- neural network functions --------------------------------------------------------------------


_BCE_EPS = 1e-12  # PyTorch's EPSILON in binary_cross_entropy_backward


def _bce_self(
    g: Tensor, x: Tensor, target: Tensor, weight: Tensor | None, reduction: str
) -> Tensor:
    grad = g * (x - target) / (x * (1 - x)).clamp(min=_BCE_EPS)
    if weight is not None:
        grad = grad * weight
    return grad / x.numel() if reduction == "mean" and x.numel() else grad


def _bce_target(
    g: Tensor, x: Tensor, target: Tensor, weight: Tensor | None, reduction: str
) -> Tensor:
    # the forward clamps both logs at -100; so does its derivative in target
    grad = g * ((-x).log1p().clamp(min=-100.0) - x.log().clamp(min=-100.0))
    if weight is not None:
        grad = grad * weight
    return grad / x.numel() if reduction == "mean" and x.numel() else grad


defderiv(
    "nll_loss",
    self=lambda g, s: _aten.nll_loss_backward.default(
        g, s.self, s.target, s.weight, s.reduction, s.ignore_index
    ),
)
defderiv(
    "nll_loss_backward",  # linear in grad_output; constant in self
    grad_output=lambda g, s: tp.nll_loss(g, s.target, s.weight, s.reduction, s.ignore_index),
    self=lambda g, s: _zeros(g, s.self_shape),
)
defderiv(
    "binary_cross_entropy",
    self=lambda g, s: _bce_self(g, s.self, s.target, s.weight, s.reduction),
    target=lambda g, s: _bce_target(g, s.self, s.target, s.weight, s.reduction),
)


# --- convolution ---------------------------------------------------------------------------------
# convolution's three gradients come from one convolution_backward call that asks only for
# those the graph needs (s.grad_input_mask), as derivatives.yaml's entry does. The output is
# bilinear in (input, weight): with B(x, w) the convolution without bias and
# convolution_backward(gO, x, w) = (B(., w)^T gO, B(x, .)^T gO, sum gO), the gradients of the
# backward for incoming (ggI, ggW, ggB) are
#   grad_output: B(ggI, w) + B(x, ggW) + ggB (broadcast over the batch and positions),
#   input:       B(x, .)^T applied the other way: convolution_backward(gO, x, ggW)[0],
#   weight:      convolution_backward(gO, ggI, w)[1],
# all public operators, so double (and higher) backward records as well.


def _conv_params(s: Any) -> tuple[Any, ...]:
    return (s.stride, s.padding, s.dilation, s.transposed, s.output_padding, s.groups)


def _convolution_backward(g: Tensor, s: Any) -> tuple[Tensor | None, ...]:
    mask = s.grad_input_mask
    bias_sizes = [g.shape[1]] if mask[2] else None
    return tuple(
        _aten.convolution_backward.default(
            g, s.input, s.weight, bias_sizes, s.stride, s.padding, s.dilation, s.transposed,
            s.output_padding, s.groups, list(mask),
        )
    )  # fmt: skip


def _conv(x: Tensor, w: Tensor, p: tuple[Any, ...]) -> Tensor:
    r: Tensor = _aten.convolution.default(x, w, None, *p)
    return r


def _convolution_double_backward(
    gg: tuple[Tensor | None, ...], s: Any
) -> tuple[Tensor | None, ...]:
    ggi, ggw, ggb = gg
    go, x, w = s.grad_output, s.input, s.weight
    p = _conv_params(s)
    need_go, need_x, need_w = s.grad_input_mask
    d_go = d_x = d_w = None
    if need_go:
        parts = []
        if ggi is not None:
            parts.append(_conv(ggi, w, p))
        if ggw is not None:
            parts.append(_conv(x, ggw, p))
        if ggb is not None:
            parts.append(ggb.reshape([1, -1] + [1] * (go.ndim - 2)))
        for part in parts:
            d_go = part if d_go is None else d_go + part
        if d_go is not None and tuple(d_go.shape) != tuple(go.shape):
            d_go = d_go.expand(list(go.shape))
    if need_x and ggw is not None:
        d_x = _aten.convolution_backward.default(go, x, ggw, None, *p, [True, False, False])[0]
    if need_w and ggi is not None:
        d_w = _aten.convolution_backward.default(go, ggi, w, None, *p, [False, True, False])[1]
    return d_go, d_x, d_w


# one formula for several inputs: keyed by the tuple of their names (Note [Formula table])
FORMULAS["convolution"] = {("input", "weight", "bias"): _convolution_backward}
FORMULAS["convolution_backward"] = {
    ("grad_output", "input", "weight"): _convolution_double_backward
}
# im2col and col2im are each other's adjoints (derivatives.yaml)
defderiv(
    "im2col",
    self=lambda g, s: _aten.col2im.default(
        g, s.self_shape[-2:], s.kernel_size, s.dilation, s.padding, s.stride
    ),
)
defderiv(
    "col2im",
    self=lambda g, s: _aten.im2col.default(g, s.kernel_size, s.dilation, s.padding, s.stride),
)


# --- padding -------------------------------------------------------------------------------------
# constant_pad_nd's gradient crops what it padded (negative amounts pad what it cropped, with
# zeros); reflection and replication have backward kernels, linear in grad_output.

defderiv(
    "constant_pad_nd",
    self=lambda g, s: _aten.constant_pad_nd.default(g, [-p for p in s.pad]),
)


def _defpad(name: str) -> None:
    """The formulas of ``name`` (reflection_pad2d, ...) and of its backward kernel."""
    fwd = getattr(_aten, name).default
    bwd = getattr(_aten, f"{name}_backward").default
    defderiv(name, self=lambda g, s: bwd(g, s.self, s.padding))
    defderiv(
        f"{name}_backward",
        grad_output=lambda g, s: fwd(g, s.padding),
        self=lambda g, s: _zeros(g, s.self_shape),
    )


for _mode in ("reflection", "replication"):
    for _k in (1, 2, 3):
        _defpad(f"{_mode}_pad{_k}d")


# --- softmax -------------------------------------------------------------------------------------

defderiv(
    "softmax.int",
    self=lambda g, s: _aten._softmax_backward_data.default(g, s.result, s.dim, s.self_dtype),
)
defderiv(
    "log_softmax.int",
    self=lambda g, s: _aten._log_softmax_backward_data.default(g, s.result, s.dim, s.self_dtype),
)


def _softmax_backward_output(g: Tensor, gg: Tensor, y: Tensor, dim: int) -> Tensor:
    # d/dy of y * (g - sum(g * y)), applied to gg
    return gg * (g - (g * y).sum([dim], True)) - g * (gg * y).sum([dim], True)


defderiv(
    "_softmax_backward_data",
    grad_output=lambda g, s: _aten._softmax_backward_data.default(
        g, s.output, s.dim, s.input_dtype
    ),
    output=lambda g, s: _softmax_backward_output(s.grad_output, g, s.output, s.dim),
)
defderiv(
    "_log_softmax_backward_data",
    # its Jacobian in grad_output is I - exp(y) 1^T along dim: not symmetric
    grad_output=lambda g, s: g - (g * s.output.exp()).sum([s.dim], True),
    output=lambda g, s: -g * s.output.exp() * s.grad_output.sum([s.dim], True),
)


# --- attention -----------------------------------------------------------------------------------
# The fused kernel's one backward kernel (Note [Fused attention] in array_backend/_nn/_attention.py)
# recomputes the weights from the saved log-sum-exp. As in PyTorch, that backward kernel has no
# derivative of its own (a second backward through it raises); the math path, which
# scaled_dot_product_attention takes for dropout or a mask that requires grad, has every one.


def _attention_backward(
    g: tuple[Tensor | None, ...],
    q: Tensor,
    k: Tensor,
    v: Tensor,
    result: tuple[Tensor, Tensor],
    is_causal: bool,
    attn_mask: Tensor | None,
    scale: float | None,
) -> tuple[Tensor | None, ...]:
    if g[0] is None:
        return (None, None, None)
    return tuple(
        _aten._scaled_dot_product_flash_attention_for_cpu_backward.default(
            g[0], q, k, v, result[0], result[1], 0.0, is_causal, attn_mask=attn_mask, scale=scale
        )
    )


FORMULAS["_scaled_dot_product_flash_attention_for_cpu"] = {
    ("query", "key", "value"): lambda g, s: _attention_backward(
        g, s.query, s.key, s.value, s.result, s.is_causal, s.attn_mask, s.scale
    )
}
OUTPUT_DIFFERENTIABILITY["_scaled_dot_product_flash_attention_for_cpu"] = (True, False)
# --- resampling ----------------------------------------------------------------------------------

# Each upsampling operator is linear in its input: its gradient is its backward kernel, and the
# backward kernel's is the forward again (derivatives.yaml's upsample_* entries), so double
# backward works. The scales are the arguments after output_size (and align_corners).
_SCALES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}
_UPSAMPLE = (
    ("upsample_nearest1d", 1, False),
    ("upsample_nearest2d", 2, False),
    ("upsample_nearest3d", 3, False),
    ("_upsample_nearest_exact1d", 1, False),
    ("_upsample_nearest_exact2d", 2, False),
    ("_upsample_nearest_exact3d", 3, False),
    ("upsample_linear1d", 1, True),
    ("upsample_bilinear2d", 2, True),
    ("upsample_trilinear3d", 3, True),
    ("upsample_bicubic2d", 2, True),
    ("_upsample_bilinear2d_aa", 2, True),
    ("_upsample_bicubic2d_aa", 2, True),
)


def _upsample_options(s: Any, n: int, aligned: bool) -> list[Any]:
    head = [s.align_corners] if aligned else []
    return head + [getattr(s, name) for name in _SCALES[n]]


def _def_upsample(name: str, n: int, aligned: bool) -> None:
    forward = getattr(_aten, name).default
    backward = getattr(_aten, name + "_backward").default
    defderiv(
        name,
        self=lambda g, s: backward(
            g, s.output_size, s.self_shape, *_upsample_options(s, n, aligned)
        ),
    )
    defderiv(
        name + "_backward",
        grad_output=lambda g, s: forward(g, s.output_size, *_upsample_options(s, n, aligned)),
    )


for _name, _n, _aligned in _UPSAMPLE:
    _def_upsample(_name, _n, _aligned)

defderiv("pixel_shuffle", self=lambda g, s: _aten.pixel_unshuffle.default(g, s.upscale_factor))
defderiv("pixel_unshuffle", self=lambda g, s: _aten.pixel_shuffle.default(g, s.downscale_factor))


# Note [Grid sampler double backward]
# grid_sampler_*_backward gives gi = W(grid)^T go and gg_k = m_k * sum_c go * (dW/dix_k x),
# where W's entries are products of one weight per dim (w_j of the pixel coordinate ix_j) and
# m_k = d ix_k / d grid_k (unnormalization times padding; piecewise constant). With upstream
# gradients ggi and ggg, the derivatives of <ggi, gi> + <ggg, gg> are
#   in go:   W ggi (the forward of ggi)  +  sum_corners x[pos] * a
#   in x:    the scatter of go * a to every corner's position
#   in grid: gg of (go, ggi)  +  m_l * sum_corners (go . x[pos]) * sum_k ggg_k m_k d2w_kl
# with a = sum_k ggg_k m_k dw_corner/dix_k. _GridTerms computes the corners' positions and
# weights with public operators, as the kernels do (a zero border around the input).

_CUBIC_A = -0.75


class _GridTerms:
    def __init__(self, x: Tensor, grid: Tensor, mode: int, padding: int, align: bool) -> None:
        n = grid.shape[-1]
        self.n, self.mode = n, mode
        self.batch, self.channels = x.shape[0], x.shape[1]
        self.spatial = list(x.shape[2:])
        self.padded = [v + 2 for v in self.spatial]
        self.out = list(grid.shape[1:-1])
        self.q = math.prod(self.out)
        g = grid.reshape(self.batch * self.q, n)
        self.taps: list[list[tuple[Tensor, Tensor, Tensor, Tensor]]] = []
        self.mults: list[Tensor] = []
        for k in range(n):
            self._dim(g[:, n - 1 - k], self.spatial[k], padding, align)
        rows = tp.arange(self.batch, device=x.device) * math.prod(self.padded)
        self.rows = rows.reshape(self.batch, 1).expand(self.batch, self.q).reshape(-1)

    def _pad(self, v: Tensor, size: int, padding: int, align: bool) -> tuple[Tensor, Tensor]:
        one = tp.ones_like(v)
        if padding == 0:
            return v, one
        mult = one
        if padding == 2:
            lo2, hi2 = (0, 2 * (size - 1)) if align else (-1, 2 * size - 1)
            if lo2 == hi2:
                return tp.zeros_like(v), tp.zeros_like(v)
            low, span = lo2 / 2, (hi2 - lo2) / 2
            shifted = v - low
            sign = tp.where(shifted < 0, -one, one)
            mag = shifted.abs()
            extra = tp.remainder(mag, span)
            even = tp.remainder(tp.floor(mag / span), 2) == 0
            v = tp.where(even, extra + low, span - extra + low)
            mult = tp.where(even, sign, -sign)
        inside = (v > 0) & (v < size - 1)
        return v.clamp(0, size - 1), mult * inside.to(v.dtype)

    def _dim(self, v: Tensor, size: int, padding: int, align: bool) -> None:
        scale = (size - 1) / 2 if align else size / 2
        ix = (v + 1) * scale if align else ((v + 1) * size - 1) / 2
        ix = tp.where(tp.isfinite(ix), ix, tp.full_like(ix, -100.0))

        def at(pos: Tensor) -> Tensor:
            return pos.clamp(-1, size).to(tp.int64) + 1

        zero = tp.zeros_like(ix)
        if self.mode == 2:  # bicubic: padding applies to each tap's own position
            lo = tp.floor(ix)
            t = ix - lo
            a = _CUBIC_A
            taps = []
            for k, (u, sgn) in enumerate(((t + 1, 1), (t, 1), (1 - t, -1), (2 - t, -1))):
                if k in (1, 2):
                    w = ((a + 2) * u - (a + 3)) * u * u + 1
                    dw = (3 * (a + 2) * u - 2 * (a + 3)) * u
                    d2w = 6 * (a + 2) * u - 2 * (a + 3)
                else:
                    w = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a
                    dw = (3 * a * u - 10 * a) * u + 8 * a
                    d2w = 6 * a * u - 10 * a
                pos, _ = self._pad(lo + (k - 1), size, padding, align)
                taps.append((at(pos), w, dw * sgn, d2w))
            self.taps.append(taps)
            self.mults.append(tp.full_like(ix, scale))
            return
        ix, m = self._pad(ix, size, padding, align)
        self.mults.append(m * scale)
        if self.mode == 1:
            self.taps.append([(at(tp.round(ix)), tp.ones_like(ix), zero, zero)])
            return
        lo = tp.floor(ix)
        frac = ix - lo
        one = tp.ones_like(ix)
        self.taps.append([(at(lo), 1 - frac, -one, zero), (at(lo + 1), frac, one, zero)])

    def source(self, x: Tensor) -> Tensor:
        n = self.n
        padded = x
        for d in range(2, n + 2):  # a zero on each side of every spatial dim
            side = list(padded.shape)
            side[d] = 1
            zero = tp.zeros(side, dtype=x.dtype, device=x.device)
            padded = tp.cat([zero, padded, zero], d)
        moved = padded.permute(0, *range(2, n + 2), 1)
        return moved.reshape(self.batch * math.prod(self.padded), self.channels)

    def rows_of(self, t: Tensor) -> Tensor:
        """(N, C, *out) as (N * q, C)."""
        n = self.n
        return t.permute(0, *range(2, n + 2), 1).reshape(self.batch * self.q, self.channels)

    def corners(self) -> Any:
        for combo in itertools.product(*(range(len(t)) for t in self.taps)):
            flat = self.rows
            stride = math.prod(self.padded)
            parts = []
            for k, j in enumerate(combo):
                stride //= self.padded[k]
                flat = flat + self.taps[k][j][0] * stride
                parts.append(self.taps[k][j])
            yield flat, parts


def _prod(ts: list[Tensor]) -> Tensor:
    out = ts[0]
    for t in ts[1:]:
        out = out * t
    return out


def _grid_double_backward(
    which: str, g: Any, go: Tensor, x: Tensor, grid: Tensor, mode: int, padding: int,
    align: bool, name: str,
) -> Tensor | None:  # fmt: skip
    ggi, ggg = g
    backward = getattr(_aten, name + "_backward").default
    forward = getattr(_aten, name).default
    terms = _GridTerms(x, grid, mode, padding, align)
    n, rows_n = terms.n, terms.batch * terms.q
    go_rows = terms.rows_of(go)
    total: Tensor | None = None

    def add(t: Tensor) -> None:
        nonlocal total
        total = t if total is None else total + t

    if which == "grad_output" and ggi is not None:
        add(forward(ggi, grid, mode, padding, align))
    if which == "grid" and ggi is not None:
        add(backward(go, ggi, grid, mode, padding, align, [False, True])[1])
    if ggg is None or mode == 1:  # nearest: the weights do not move with the grid
        return total if total is not None or which != "input" else tp.zeros_like(x)
    gk = [ggg.reshape(rows_n, n)[:, n - 1 - k] * terms.mults[k] for k in range(n)]
    src = terms.source(x) if which != "input" else None
    acc = None  # input: the scatter target; grad_output: rows; grid: per-dim sums
    dgrid = [tp.zeros_like(gk[0]) for _ in range(n)]
    for flat, parts in terms.corners():
        ws = [p[1] for p in parts]
        # a = sum_k ggg_k m_k dw_corner / dix_k
        coef = _prod([gk[0] * parts[0][2], *ws[1:]])
        for k in range(1, n):
            coef = coef + _prod([gk[k] * parts[k][2], *(ws[j] for j in range(n) if j != k)])
        if which == "input":
            if acc is None:
                size = terms.batch * math.prod(terms.padded)
                acc = tp.zeros(size, terms.channels, dtype=x.dtype, device=x.device)
            acc = tp.index_add(acc, 0, flat, go_rows * coef.reshape(rows_n, 1))
            continue
        picked = tp.index_select(src, 0, flat)
        if which == "grad_output":
            part = picked * coef.reshape(rows_n, 1)
            acc = part if acc is None else acc + part
            continue
        dots = (picked * go_rows).sum(1)
        for ell in range(n):
            second = None
            for k in range(n):
                if k == ell:
                    d2 = _prod([parts[k][3], *(ws[j] for j in range(n) if j != k)])
                else:
                    d2 = _prod(
                        [
                            parts[k][2] * parts[ell][2],
                            *(ws[j] for j in range(n) if j not in (k, ell)),
                        ]
                    )
                term = gk[k] * d2
                second = term if second is None else second + term
            dgrid[ell] = dgrid[ell] + dots * second * terms.mults[ell]
    if which == "input":
        assert acc is not None
        full = acc.reshape(terms.batch, *terms.padded, terms.channels)
        inner = full[(slice(None), *(slice(1, 1 + v) for v in terms.spatial))]
        return inner.permute(0, n + 1, *range(1, n + 1)).contiguous()
    if which == "grad_output":
        assert acc is not None
        out = acc.reshape(terms.batch, *terms.out, terms.channels)
        add(out.permute(0, n + 1, *range(1, n + 1)))
        return total
    gg = tp.stack([dgrid[n - 1 - j] for j in range(n)], -1).reshape(list(grid.shape))
    add(gg)
    return total


def _def_grid_sampler(name: str) -> None:
    # one backward kernel gives both gradients; each formula asks for its own (output_mask)
    backward = getattr(_aten, name + "_backward").default
    defderiv(
        name,
        input=lambda g, s: backward(
            g, s.input, s.grid, s.interpolation_mode, s.padding_mode, s.align_corners,
            [True, False],
        )[0],
        grid=lambda g, s: backward(
            g, s.input, s.grid, s.interpolation_mode, s.padding_mode, s.align_corners,
            [False, True],
        )[1],
    )  # fmt: skip
    # Note [Grid sampler double backward]
    defderiv(
        name + "_backward",
        grad_output=lambda g, s: _grid_double_backward(
            "grad_output", g, s.grad_output, s.input, s.grid, s.interpolation_mode,
            s.padding_mode, s.align_corners, name,
        ),
        input=lambda g, s: _grid_double_backward(
            "input", g, s.grad_output, s.input, s.grid, s.interpolation_mode,
            s.padding_mode, s.align_corners, name,
        ),
        grid=lambda g, s: _grid_double_backward(
            "grid", g, s.grad_output, s.input, s.grid, s.interpolation_mode,
            s.padding_mode, s.align_corners, name,
        ),
    )  # fmt: skip


_def_grid_sampler("grid_sampler_2d")
_def_grid_sampler("grid_sampler_3d")


# --- pooling -------------------------------------------------------------------------------------
# The backward kernels are linear in grad_output and constant in self: their own gradients are
# the forward again (avg_pool, _adaptive_avg_pool) or a gather at the indices (max pooling's
# double backward, PyTorch's max_pool_double_backward), and zeros for self.


def _gather_planes(g: Tensor, indices: Tensor, nd: int) -> Tensor:
    """``g`` (an input's shape) read at ``indices`` (flat positions in each plane of the last
    ``nd`` dims): the gradient of scattering to those positions."""
    flat = g.flatten(g.ndim - nd) if g.ndim >= nd else g
    idx = indices.flatten(indices.ndim - nd)
    return flat.gather(-1, idx).reshape(list(indices.shape))


def _pooling_formulas(nd: int) -> None:
    """The formulas of the ``nd``-d pooling operators and their backward kernels."""
    with_indices = f"max_pool{nd}d_with_indices"
    max_backward = getattr(_aten, f"{with_indices}_backward").default
    avg = getattr(_aten, f"avg_pool{nd}d").default
    avg_backward = getattr(_aten, f"avg_pool{nd}d_backward").default
    adaptive = getattr(_aten, f"_adaptive_avg_pool{nd}d").default
    adaptive_backward = getattr(_aten, f"_adaptive_avg_pool{nd}d_backward").default
    amax = f"adaptive_max_pool{nd}d"
    amax_backward = getattr(_aten, f"{amax}_backward").default

    def zeros_self(g: Tensor, s: Any) -> Tensor:
        return _zeros(g, s.self_shape)

    def gather(g: Tensor, s: Any) -> Tensor:
        return _gather_planes(g, s.indices, nd)

    def max_self(g: Any, s: Any) -> Tensor:
        return max_backward(
            g[0], s.self, s.kernel_size, s.stride, s.padding, s.dilation, s.ceil_mode, s.result[1]
        )

    def avg_self(g: Tensor, s: Any) -> Tensor:
        return avg_backward(
            g, s.self, s.kernel_size, s.stride, s.padding, s.ceil_mode, s.count_include_pad,
            s.divisor_override,
        )  # fmt: skip

    def avg_backward_grad(g: Tensor, s: Any) -> Tensor:
        return avg(
            g, s.kernel_size, s.stride, s.padding, s.ceil_mode, s.count_include_pad,
            s.divisor_override,
        )  # fmt: skip

    def adaptive_self(g: Tensor, s: Any) -> Tensor:
        return adaptive_backward(g, s.self)

    def adaptive_backward_grad(g: Tensor, s: Any) -> Tensor:
        return adaptive(g, list(s.grad_output_shape[-nd:]))

    def amax_self(g: Any, s: Any) -> Tensor:
        return amax_backward(g[0], s.self, s.result[1])

    defderiv(with_indices, self=max_self)
    OUTPUT_DIFFERENTIABILITY[with_indices] = (True, False)
    SAVED_OUTPUTS[with_indices] = (1,)  # the indices, as PyTorch saves result1
    defderiv(f"{with_indices}_backward", grad_output=gather, self=zeros_self)
    defderiv(f"avg_pool{nd}d", self=avg_self)
    defderiv(f"avg_pool{nd}d_backward", grad_output=avg_backward_grad, self=zeros_self)
    defderiv(f"_adaptive_avg_pool{nd}d", self=adaptive_self)
    defderiv(
        f"_adaptive_avg_pool{nd}d_backward", grad_output=adaptive_backward_grad, self=zeros_self
    )
    defderiv(amax, self=amax_self)
    OUTPUT_DIFFERENTIABILITY[amax] = (True, False)
    SAVED_OUTPUTS[amax] = (1,)
    defderiv(f"{amax}_backward", grad_output=gather, self=zeros_self)
    defderiv(f"max_unpool{nd}d", self=gather)


_pooling_formulas(2)
_pooling_formulas(3)


# --- fractional max pooling ----------------------------------------------------------------------
# derivatives.yaml's: the gradient goes back to each window's maximum (the indices, saved as
# result1); random_samples is not differentiable; the backward kernel's is the gather.


def _fractional_formulas(nd: int) -> None:
    name = f"fractional_max_pool{nd}d"
    backward = getattr(_aten, f"{name}_backward").default

    def self_grad(g: Any, s: Any) -> Tensor:
        return backward(g[0], s.self, s.kernel_size, s.output_size, s.result[1])

    def gather(g: Tensor, s: Any) -> Tensor:
        return _gather_planes(g, s.indices, nd)

    def zeros_self(g: Tensor, s: Any) -> Tensor:
        return _zeros(g, s.self_shape)

    defderiv(name, self=self_grad)
    OUTPUT_DIFFERENTIABILITY[name] = (True, False)
    SAVED_OUTPUTS[name] = (1,)
    defderiv(f"{name}_backward", grad_output=gather, self=zeros_self)


_fractional_formulas(2)
_fractional_formulas(3)


# --- normalization -------------------------------------------------------------------------------
# Note [Normalization double backward]
# native_batch_norm and native_group_norm return the statistics they normalized with, and their
# backward kernels take them back as inputs: the kernels' formulas below are partial
# derivatives, in every input (grad_out, input, weight, and the mean and inverse standard
# deviation), so gradcheck of the backward kernels holds with the statistics fixed. The forward
# ops' statistics are not differentiable outputs (as in PyTorch); when a backward pass records
# (create_graph), the forward formula recomputes them from the input with differentiable ops,
# so the chain rule sees that they depend on it and second derivatives are exact. Without
# recording, it passes the saved ones (no extra work).
#
# Both are the same computation in a "grouped" layout: x's elements are normalized over the
# dims R of each group (M elements), and the weight is per channel, summed over the dims S.
# With xh = (x - mean) * s, u = w * g, E[.] the group mean and P(v) = v - E[v] - xh E[v xh]
# (symmetric), the kernel's outputs are gi = s P(u), gw = sum_S(g xh), gb = sum_S(g); their
# partials, for incoming (ggi, ggw, ggb), with A = E[u xh] and C = sum_R(ggi xh):
#   d grad_out = w s P(ggi) + ggw xh + ggb          d weight = sum_S(g s P(ggi))
#   d input    = s (ggw g - s A ggi - s C u / M)     d mean   = -sum_R(d input)
#   d invstd   = sum_R(ggi (u - E[u] - 3 xh A)) + sum_R(ggw g xh) / s
# With running statistics (batch norm in eval) gi = w s g: d grad_out = w s ggi + ggw xh + ggb,
# d weight = sum_S(ggi s g), d input = ggw g s.


def _norm_partials(
    gg: tuple[Tensor | None, ...], g: Tensor, x: Tensor, w: Tensor | None, mu: Tensor, s: Tensor,
    r: list[int], sdims: list[int], m: int, train: bool,
) -> tuple[Tensor | None, ...]:  # fmt: skip
    ggi, ggw, ggb = gg
    xh = (x - mu) * s
    u = g if w is None else g * w
    d_g: Tensor | None = None
    d_w: Tensor | None = None
    d_x: Tensor | None = None
    d_mu: Tensor | None = None
    d_s: Tensor | None = None

    def add(a: Tensor | None, b: Tensor) -> Tensor:
        return b if a is None else a + b

    if train:
        a = (u * xh).mean(r, True)
        if ggi is not None:
            p = ggi - ggi.mean(r, True) - xh * (ggi * xh).mean(r, True)
            d_g = s * p if w is None else w * s * p
            if w is not None:
                d_w = (g * s * p).sum(sdims, True)
            c = (ggi * xh).sum(r, True)
            d_x = -(s * a * ggi) - s * c * u / m
            d_s = (ggi * (u - u.mean(r, True) - 3 * xh * a)).sum(r, True)
        if ggw is not None:
            d_g = add(d_g, ggw * xh)
            d_x = add(d_x, ggw * g)
            d_s = add(d_s, (ggw * g * xh).sum(r, True) / s)
        if d_x is not None:
            d_x = d_x * s
            d_mu = -d_x.sum(r, True)
    else:
        if ggi is not None:
            d_g = ggi * s if w is None else ggi * s * w
            if w is not None:
                d_w = (ggi * s * g).sum(sdims, True)
        if ggw is not None:
            d_g = add(d_g, ggw * xh)
            d_x = ggw * g * s
    if ggb is not None:
        d_g = add(d_g, ggb.expand(list(g.shape)) if d_g is None else ggb)
    return d_g, d_x, d_w, d_mu, d_s


def _bn_layout(x: Tensor) -> tuple[list[int], list[int], int]:
    """Batch norm's R (and S: the same) and M: every dim but the channels'."""
    r = [0, *range(2, x.ndim)]
    return r, [1] * x.ndim, x.numel() // x.shape[1]


def _as(t: Tensor | None, shape: list[int]) -> Tensor | None:
    return None if t is None else t.reshape(shape)


def _bn_backward_partials(
    g: tuple[Tensor | None, ...], grad_out: Tensor, x: Tensor, w: Tensor | None,
    rm: Tensor | None, rv: Tensor | None, mean: Tensor | None, invstd: Tensor | None,
    train: bool, eps: float,
) -> tuple[Tensor | None, ...]:  # fmt: skip
    r, cshape, m = _bn_layout(x)
    cshape[1] = x.shape[1]
    if train:
        mu, s = _as(mean, cshape), _as(invstd, cshape)
    else:
        mu, s = _as(rm, cshape), _as(rv, cshape)
        s = (s + eps).rsqrt() if s is not None else None
    assert mu is not None and s is not None
    gg = (g[0], _as(g[1], cshape), _as(g[2], cshape))
    d_g, d_x, d_w, d_mu, d_s = _norm_partials(
        gg, grad_out, x, _as(w, cshape), mu, s, r, r, m, train
    )
    c = [x.shape[1]]
    return d_g, d_x, _as(d_w, c), _as(d_mu, c), _as(d_s, c)


def _bn_forward_backward(
    g: tuple[Tensor, ...], x: Tensor, w: Tensor | None, b: Tensor | None, rm: Tensor | None,
    rv: Tensor | None, result: tuple[Tensor, ...], training: bool, eps: float,
) -> tuple[Tensor | None, ...]:  # fmt: skip
    mean, invstd = result[1], result[2]
    if training and tp.is_grad_enabled():  # Note [Normalization double backward]
        r = [0, *range(2, x.ndim)]
        xf = x if x.dtype == mean.dtype else x.to(mean.dtype)
        mean = xf.mean(r)
        centered = xf - mean.reshape(_bn_layout(x)[1][:1] + [x.shape[1]] + [1] * (x.ndim - 2))
        invstd = ((centered * centered).mean(r) + eps).rsqrt()
    gi, gw, gb = _aten.native_batch_norm_backward.default(
        g[0], x, w, rm, rv, mean, invstd, training, eps, [True, w is not None, b is not None]
    )
    return gi, gw, gb


FORMULAS["native_batch_norm"] = {
    ("input", "weight", "bias"): lambda g, s: _bn_forward_backward(
        g, s.input, s.weight, s.bias, s.running_mean, s.running_var, s.result, s.training, s.eps
    )
}
OUTPUT_DIFFERENTIABILITY["native_batch_norm"] = (True, False, False)
SAVED_OUTPUTS["native_batch_norm"] = (1, 2)  # the mean and invstd, not the output
FORMULAS["native_batch_norm_backward"] = {
    ("grad_out", "input", "weight", "save_mean", "save_invstd"): lambda g, s: (
        _bn_backward_partials(
            g, s.grad_out, s.input, s.weight, s.running_mean, s.running_var, s.save_mean,
            s.save_invstd, s.train, s.eps,
        )
    )
}  # fmt: skip


def _gn_layout(x: Tensor, n: int, c: int, hxw: int, group: int) -> list[int]:
    return [n, group, c // group, hxw]


def _gn_forward_backward(
    g: tuple[Tensor, ...], x: Tensor, w: Tensor | None, b: Tensor | None,
    result: tuple[Tensor, ...], n: int, c: int, hxw: int, group: int, eps: float,
) -> tuple[Tensor | None, ...]:  # fmt: skip
    mean, rstd = result[1], result[2]
    if tp.is_grad_enabled():  # Note [Normalization double backward]
        xf = x.reshape([n, group, -1])
        mean = xf.mean([2])
        centered = xf - mean.unsqueeze(2)
        rstd = ((centered * centered).mean([2]) + eps).rsqrt()
    gi, gw, gb = _aten.native_group_norm_backward.default(
        g[0], x, mean, rstd, w, n, c, hxw, group, [True, w is not None, b is not None]
    )
    return gi, gw, gb


def _gn_backward_partials(
    g: tuple[Tensor | None, ...], grad_out: Tensor, x: Tensor, mean: Tensor, rstd: Tensor,
    w: Tensor | None, n: int, c: int, hxw: int, group: int,
) -> tuple[Tensor | None, ...]:  # fmt: skip
    layout = _gn_layout(x, n, c, hxw, group)
    wshape = [1, group, c // group, 1]
    stat = [n, group, 1, 1]
    gi = _as(g[0], layout)
    gg = (gi, _as(g[1], wshape), _as(g[2], wshape))
    d_g, d_x, d_w, d_mu, d_s = _norm_partials(
        gg, grad_out.reshape(layout), x.reshape(layout), _as(w, wshape), mean.reshape(stat),
        rstd.reshape(stat), [2, 3], [0, 3], (c // group) * hxw, True,
    )  # fmt: skip
    shape = list(x.shape)
    return (
        _as(d_g, shape), _as(d_x, shape), _as(d_mu, [n, group]), _as(d_s, [n, group]),
        _as(d_w, [c]),
    )  # fmt: skip


FORMULAS["native_group_norm"] = {
    ("input", "weight", "bias"): lambda g, s: _gn_forward_backward(
        g, s.input, s.weight, s.bias, s.result, s.N, s.C, s.HxW, s.group, s.eps
    )
}
OUTPUT_DIFFERENTIABILITY["native_group_norm"] = (True, False, False)
SAVED_OUTPUTS["native_group_norm"] = (1, 2)  # the mean and rstd, not the output
FORMULAS["native_group_norm_backward"] = {
    ("grad_out", "input", "mean", "rstd", "weight"): lambda g, s: _gn_backward_partials(
        g, s.grad_out, s.input, s.mean, s.rstd, s.weight, s.N, s.C, s.HxW, s.group
    )
}


# --- layer normalization ---------------------------------------------------------------------------
# native_layer_norm as group norm is done (Note [Normalization double backward]): each row of
# the normalized dims is a group (R: the normalized dims; S, the dims the weight is summed over:
# the others), so the backward kernel's partials are _norm_partials'.


def _ln_dims(x: Tensor, normalized_shape: Any) -> tuple[list[int], list[int], int]:
    k = x.ndim - len(normalized_shape)
    return list(range(k, x.ndim)), list(range(k)), math.prod(normalized_shape)


def _ln_forward_backward(g: tuple[Tensor, ...], s: Any) -> tuple[Tensor | None, ...]:
    x, w, b, shape = s.input, s.weight, s.bias, s.normalized_shape
    mean, rstd = s.result[1], s.result[2]
    if tp.is_grad_enabled():  # Note [Normalization double backward]
        r = _ln_dims(x, shape)[0]
        xf = x if x.dtype == mean.dtype else x.to(mean.dtype)
        mean = xf.mean(r, True)
        centered = xf - mean
        rstd = ((centered * centered).mean(r, True) + s.eps).rsqrt()
    need_x, need_w, need_b = s.grad_input_mask
    mask = [need_x, need_w and w is not None, need_b and b is not None]
    gi, gw, gb = _aten.native_layer_norm_backward.default(g[0], x, shape, mean, rstd, w, b, mask)
    return gi, gw, gb


def _ln_backward_partials(g: tuple[Tensor | None, ...], s: Any) -> tuple[Tensor | None, ...]:
    x, w, go, mean, rstd = s.input, s.weight, s.grad_out, s.mean, s.rstd
    gg = tuple(g)
    flat = x.ndim == len(s.normalized_shape)  # no outer dims: one in front for the sums over S
    if flat:
        x, go, mean, rstd = x.unsqueeze(0), go.unsqueeze(0), mean.unsqueeze(0), rstd.unsqueeze(0)
        gg = (None if gg[0] is None else gg[0].unsqueeze(0), *gg[1:])
    r, sdims, m = _ln_dims(x, s.normalized_shape)
    d_g, d_x, d_w, d_mu, d_s = _norm_partials(gg, go, x, w, mean, rstd, r, sdims, m, True)
    if flat:
        d_g, d_x, d_mu, d_s = (None if t is None else t.squeeze(0) for t in (d_g, d_x, d_mu, d_s))
    if d_w is not None and w is not None:
        d_w = d_w.reshape(list(w.shape))
    # the bias only says whether grad_bias is asked for: no gradient (PyTorch's Tensor())
    return d_g, d_x, d_mu, d_s, d_w, None


FORMULAS["native_layer_norm"] = {("input", "weight", "bias"): _ln_forward_backward}
OUTPUT_DIFFERENTIABILITY["native_layer_norm"] = (True, False, False)
SAVED_OUTPUTS["native_layer_norm"] = (1, 2)  # the mean and rstd, not the output
FORMULAS["native_layer_norm_backward"] = {
    ("grad_out", "input", "mean", "rstd", "weight", "bias"): _ln_backward_partials
}


# --- recurrent cells -----------------------------------------------------------------------------
# The fused cells (Note [Fused recurrent cells] in array_backend/_nn/_rnn.py): their backward
# kernels work from the saved workspace. The LSTM's two gate inputs and its two biases share one
# gradient (the biases' summed over the batch). As in PyTorch, a backward that records a graph
# (create_graph=True) runs the same gradients as public ops recomputed from the inputs instead
# (PyTorch's _thnn_differentiable_*_cell_backward), so the cells have double backward; the
# workspace is not differentiable.


class _Cell:
    """What a cell's formula read from its saved context, for the helpers below."""

    def __init__(self, ig: Tensor, hg: Tensor, state: Tensor, ib: Any, hb: Any) -> None:
        self.ig, self.hg, self.state, self.ib, self.hb = ig, hg, state, ib, hb

    def biases(self, gi: Tensor, gh: Tensor) -> tuple[Tensor | None, Tensor | None]:
        return (
            gi.sum(0) if self.ib is not None else None,
            gh.sum(0) if self.hb is not None else None,
        )

    def input_part(self) -> Tensor:
        return self.ig if self.ib is None else self.ig + self.ib

    def hidden_part(self) -> Tensor:
        return self.hg if self.hb is None else self.hg + self.hb


def _lstm_cell_differentiable(
    ghy: Tensor | None, gcy: Tensor | None, c: _Cell
) -> tuple[Tensor, Tensor]:
    i, f, g, o = (c.input_part() + c.hidden_part()).chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cx = c.state
    tc = (f * cx + i * g).tanh()
    dc = tp.zeros_like(cx) if gcy is None else gcy
    do = tp.zeros_like(cx)
    if ghy is not None:
        dc = dc + ghy * o * (1 - tc * tc)
        do = ghy * tc * o * (1 - o)
    di, df, dg = dc * g * i * (1 - i), dc * cx * f * (1 - f), dc * i * (1 - g * g)
    return tp.cat([di, df, dg, do], 1), dc * f


def _lstm_cell_backward(
    g: tuple[Tensor | None, ...], c: _Cell, cy: Tensor, workspace: Tensor
) -> tuple[Tensor | None, ...]:
    ghy, gcy = g[0], g[1]
    if ghy is None and gcy is None:
        return (None,) * 5
    if tp.is_grad_enabled():
        gates, gcx = _lstm_cell_differentiable(ghy, gcy, c)
    else:
        gates, gcx, _ = _aten._thnn_fused_lstm_cell_backward_impl.default(
            ghy, gcy, c.state, cy, workspace, False
        )
    return (gates, gates, gcx, *c.biases(gates, gates))


def _gru_cell_differentiable(ghy: Tensor, c: _Cell) -> tuple[Tensor, Tensor, Tensor]:
    xr, xz, xn = c.input_part().chunk(3, 1)
    hr, hz, hn = c.hidden_part().chunk(3, 1)
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    dn = ghy * (1 - z) * (1 - n * n)
    dz = ghy * (c.state - n) * z * (1 - z)
    dr = dn * hn * r * (1 - r)
    return tp.cat([dr, dz, dn], 1), tp.cat([dr, dz, dn * r], 1), ghy * z


def _gru_cell_backward(
    g: tuple[Tensor | None, ...], c: _Cell, workspace: Tensor
) -> tuple[Tensor | None, ...]:
    if g[0] is None:
        return (None,) * 5
    if tp.is_grad_enabled():
        gi, gh, ghx = _gru_cell_differentiable(g[0], c)
    else:
        gi, gh, ghx, _, _ = _aten._thnn_fused_gru_cell_backward.default(g[0], workspace, False)
    return (gi, gh, ghx, *c.biases(gi, gh))


_CELL_INPUTS = ("input_gates", "hidden_gates")
FORMULAS["_thnn_fused_lstm_cell"] = {
    (*_CELL_INPUTS, "cx", "input_bias", "hidden_bias"): lambda g, s: _lstm_cell_backward(
        g,
        _Cell(s.input_gates, s.hidden_gates, s.cx, s.input_bias, s.hidden_bias),
        s.result[1],
        s.result[2],
    )
}
OUTPUT_DIFFERENTIABILITY["_thnn_fused_lstm_cell"] = (True, True, False)
FORMULAS["_thnn_fused_gru_cell"] = {
    (*_CELL_INPUTS, "hx", "input_bias", "hidden_bias"): lambda g, s: _gru_cell_backward(
        g, _Cell(s.input_gates, s.hidden_gates, s.hx, s.input_bias, s.hidden_bias), s.result[1]
    )
}
OUTPUT_DIFFERENTIABILITY["_thnn_fused_gru_cell"] = (True, False)

# --- recurrent layers ----------------------------------------------------------------------------
# One LSTM or GRU layer over a whole sequence (Note [Fused recurrent layer] in
# array_backend/_nn/_rnn_layer.py): one node per layer and direction, whose backward kernel
# walks the steps backward and makes each weight gradient one product over all of them. A
# backward that records a graph runs the same gradients as public ops recomputed from the
# inputs (PyTorch's mkldnn_rnn_layer_differentiable_backward), so the layer has double backward.


class _LayerRows:
    """A layer's input and output gradient as rows ``(N, ...)``, step after step, and each
    step's size: a packed input's batch sizes, or the batch ``T`` times (time-major)."""

    def __init__(self, s: Any, gy: Tensor | None) -> None:
        x = s.input
        self.packed = bool(len(s.batch_sizes))
        if self.packed:
            self.sizes = [int(n) for n in s.batch_sizes]
        else:
            if s.batch_first:
                x = x.transpose(0, 1)
                gy = None if gy is None else gy.transpose(0, 1)
            T, B = x.shape[0], x.shape[1]
            self.sizes = [B] * T
            x = x.reshape([T * B, x.shape[2]])
            gy = None if gy is None else gy.reshape([T * B, gy.shape[2]])
        self.x, self.T, self.batch_first = x, len(self.sizes), s.batch_first
        self.gys = None if gy is None else gy.split(self.sizes)
        self.order = list(range(self.T - 1, -1, -1)) if s.reverse else list(range(self.T))

    def input_grad(self, rows: Tensor) -> Tensor:
        if self.packed:
            return rows
        B = self.sizes[0] if self.T else 0
        g = rows.reshape([self.T, B, rows.shape[1]])
        return g.transpose(0, 1) if self.batch_first else g

    def cat(self, parts: list[Any], width: int) -> Tensor:
        return tp.cat(parts) if parts else self.x.new_zeros([0, width])


def _merge(new: Tensor, full: Tensor) -> Tensor:
    """A state's first rows replaced by a step's (the sequences that ran it): the rest keep
    theirs (Note [Fused recurrent layer])."""
    n = new.shape[0]
    return new if n == full.shape[0] else tp.cat([new, full[n:]])


def _lstm_layer_differentiable(
    gy: Tensor | None, ghy: Tensor | None, gcy: Tensor | None, s: Any
) -> tuple[Tensor | None, ...]:
    w_ih, w_hh = s.weight0, s.weight1
    b_ih, b_hh = (s.weight2, s.weight3) if s.has_biases else (None, None)
    L = _LayerRows(s, gy)
    H = s.hidden_size
    pre = L.x @ w_ih.t()
    for b in (b_ih, b_hh):
        if b is not None:
            pre = pre + b
    pres = pre.split(L.sizes)
    h, c = s.hx_, s.cx_
    saved: list[Any] = [None] * L.T
    for t in L.order:
        n = L.sizes[t]
        h_prev, c_prev = h[:n], c[:n]
        i, f, gg, o = (pres[t] + h_prev @ w_hh.t()).chunk(4, 1)
        i, f, gg, o = i.sigmoid(), f.sigmoid(), gg.tanh(), o.sigmoid()
        c_t = f * c_prev + i * gg
        tc = c_t.tanh()
        h, c = _merge(o * tc, h), _merge(c_t, c)
        saved[t] = (i, f, gg, o, c_prev, tc, h_prev)
    dh = tp.zeros_like(s.hx_) if ghy is None else ghy
    dc = tp.zeros_like(s.cx_) if gcy is None else gcy
    dgates: list[Any] = [None] * L.T
    for t in reversed(L.order):
        i, f, gg, o, c_prev, tc, _ = saved[t]
        n = L.sizes[t]
        dh_t, dc_t = dh[:n], dc[:n]
        if L.gys is not None:
            dh_t = dh_t + L.gys[t]
        dc_t = dc_t + dh_t * o * (1 - tc * tc)
        d = tp.cat(
            [dc_t * gg * i * (1 - i), dc_t * c_prev * f * (1 - f), dc_t * i * (1 - gg * gg),
             dh_t * tc * o * (1 - o)],
            1,
        )  # fmt: skip
        dh, dc = _merge(d @ w_hh, dh), _merge(dc_t * f, dc)
        dgates[t] = d
    flat = L.cat(dgates, 4 * H)
    h_prev = L.cat([st[6] for st in saved], H)
    gb = flat.sum(0) if s.has_biases else None
    gx = L.input_grad(flat @ w_ih)
    return gx, flat.t() @ L.x, flat.t() @ h_prev, gb, gb, dh, dc


def _gru_layer_differentiable(
    gy: Tensor | None, ghy: Tensor | None, gcy: Tensor | None, s: Any
) -> tuple[Tensor | None, ...]:
    w_ih, w_hh = s.weight0, s.weight1
    b_ih, b_hh = (s.weight2, s.weight3) if s.has_biases else (None, None)
    L = _LayerRows(s, gy)
    H = s.hidden_size
    pre = L.x @ w_ih.t()
    if b_ih is not None:
        pre = pre + b_ih
    pres = pre.split(L.sizes)
    h = s.hx_
    saved: list[Any] = [None] * L.T
    for t in L.order:
        h_prev = h[: L.sizes[t]]
        hg = h_prev @ w_hh.t()
        if b_hh is not None:
            hg = hg + b_hh
        xr, xz, xn = pres[t].chunk(3, 1)
        hr, hz, hn = hg.chunk(3, 1)
        r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
        n = (xn + r * hn).tanh()
        saved[t] = (r, z, n, hn, h_prev)
        h = _merge(n + z * (h_prev - n), h)
    dh = tp.zeros_like(s.hx_) if ghy is None else ghy
    dgi: list[Any] = [None] * L.T
    dgh: list[Any] = [None] * L.T
    for t in reversed(L.order):
        r, z, n, hn, h_prev = saved[t]
        dh_t = dh[: L.sizes[t]]
        if L.gys is not None:
            dh_t = dh_t + L.gys[t]
        dn = dh_t * (1 - z) * (1 - n * n)
        dz = dh_t * (h_prev - n) * z * (1 - z)
        dr = dn * hn * r * (1 - r)
        dgi[t] = tp.cat([dr, dz, dn], 1)
        dgh[t] = tp.cat([dr, dz, dn * r], 1)
        dh = _merge(dh_t * z + dgh[t] @ w_hh, dh)
    fi, fh = L.cat(dgi, 3 * H), L.cat(dgh, 3 * H)
    h_prev = L.cat([st[4] for st in saved], H)
    gbi, gbh = (fi.sum(0), fh.sum(0)) if s.has_biases else (None, None)
    gcx = gcy  # the GRU's cy is cx passed through
    return L.input_grad(fi @ w_ih), fi.t() @ L.x, fh.t() @ h_prev, gbi, gbh, dh, gcx


def _lstm_layer_backward(g: tuple[Tensor | None, ...], s: Any) -> tuple[Tensor | None, ...]:
    gy, ghy, gcy = g[0], g[1], g[2]
    if gy is None and ghy is None and gcy is None:
        return (None,) * 7
    if tp.is_grad_enabled():
        if s.mode == 3:
            return _gru_layer_differentiable(gy, ghy, gcy, s)
        return _lstm_layer_differentiable(gy, ghy, gcy, s)
    y, hy, cy, ws = s.result
    return tuple(
        _aten.mkldnn_rnn_layer_backward.default(
            s.input, s.weight0, s.weight1, s.weight2, s.weight3, s.hx_, s.cx_, y, hy, cy,
            gy, ghy, gcy, s.reverse, s.mode, s.hidden_size, s.num_layers, s.has_biases,
            s.train, s.bidirectional, s.batch_sizes, s.batch_first, ws,
        )
    )  # fmt: skip


FORMULAS["mkldnn_rnn_layer"] = {
    ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_"): _lstm_layer_backward
}
OUTPUT_DIFFERENTIABILITY["mkldnn_rnn_layer"] = (True, True, True, False)
nondifferentiable("mkldnn_rnn_layer_backward")

# --- mixed precision training: GradScaler's bookkeeping, never part of a graph -------------------

nondifferentiable("_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_")


# --- optimizers: the multi-tensor updates of tp.optim, run under no_grad ----------------------

nondifferentiable(
    "_foreach_add_.Scalar", "_fused_adam_", "_fused_adam_.tensor_lr", "_fused_adamw_",
    "_fused_adamw_.tensor_lr", "_fused_sgd_", "_fused_sgd_.tensor_lr", "_fused_adagrad_",
    "_fused_adagrad_.tensor_lr",
)  # fmt: skip
