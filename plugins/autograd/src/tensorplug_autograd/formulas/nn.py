"""Formulas of the neural network functions: losses, softmax, and the mixed precision
bookkeeping (Note [Formula table])."""

from __future__ import annotations

from typing import Any

import tensorplug as tp
from tensorplug import Tensor

from ._table import (
    FORMULAS,
    OUTPUT_DIFFERENTIABILITY,
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

# --- mixed precision training: GradScaler's bookkeeping, never part of a graph -------------------

nondifferentiable("_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_")


# --- optimizers: the multi-tensor updates of tp.optim, run under no_grad ----------------------

nondifferentiable(
    "_foreach_add_.Scalar", "_fused_adam_", "_fused_adam_.tensor_lr", "_fused_adamw_",
    "_fused_adamw_.tensor_lr", "_fused_sgd_", "_fused_sgd_.tensor_lr", "_fused_adagrad_",
    "_fused_adagrad_.tensor_lr",
)  # fmt: skip
