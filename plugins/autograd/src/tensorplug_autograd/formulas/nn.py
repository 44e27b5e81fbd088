"""Formulas of the neural network functions: losses, softmax, resampling (upsampling, pixel
shuffle, grid sampling), and the mixed precision bookkeeping (Note [Formula table])."""

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


def _no_double_backward(name: str) -> Any:
    def refuse(g: Any, s: Any) -> Tensor:
        raise NotImplementedError(
            f"aten::{name}_backward: the second derivative of grid_sample (the gradient of its "
            "gradient) is not implemented in tensorplug yet (PyTorch has it). Differentiate "
            "grid_sample once, or compute the second-order term outside autograd."
        )

    return refuse


def _def_grid_sampler(name: str) -> None:
    # one backward kernel gives both gradients; each formula asks for its own (output_mask).
    # The backward kernel's own derivative is refused by name (it is a gap: PyTorch has one)
    backward = getattr(_aten, name + "_backward").default
    refuse = _no_double_backward(name)
    defderiv(name + "_backward", grad_output=refuse, input=refuse, grid=refuse)
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


_def_grid_sampler("grid_sampler_2d")
_def_grid_sampler("grid_sampler_3d")


# --- mixed precision training: GradScaler's bookkeeping, never part of a graph -------------------

nondifferentiable("_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_")


# --- optimizers: the multi-tensor updates of tp.optim, run under no_grad ----------------------

nondifferentiable(
    "_foreach_add_.Scalar", "_fused_adam_", "_fused_adam_.tensor_lr", "_fused_adamw_",
    "_fused_adamw_.tensor_lr", "_fused_sgd_", "_fused_sgd_.tensor_lr", "_fused_adagrad_",
    "_fused_adagrad_.tensor_lr",
)  # fmt: skip
