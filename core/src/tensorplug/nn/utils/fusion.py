"""Folding a batch normalization in eval mode into the convolution or linear layer before it
(``torch.nn.utils.fusion``): ``y = bn(conv(x))`` is one convolution with weight
``W * gamma / sqrt(var + eps)`` (per output channel) and bias
``(b - mean) * gamma / sqrt(var + eps) + beta``, so inference runs one layer instead of two.

Usage::

    model.eval()
    fused = tp.nn.utils.fuse_conv_bn_eval(model.conv, model.bn)
"""

from __future__ import annotations

import copy
from typing import Any

import tensorplug

from ...tensor import Tensor
from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
]  # fmt: skip

_tp: Any = tensorplug


def fuse_conv_bn_eval(conv: Any, bn: Any, transpose: bool = False) -> Any:
    """A copy of ``conv`` (``ConvNd``, or ``ConvTransposeNd`` with ``transpose=True``) that
    computes ``bn(conv(x))`` with ``bn``'s running statistics (both in eval mode)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_conv_bn_eval needs a batch norm that tracks running stats")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose,
    )  # fmt: skip
    return fused


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Parameter, Parameter]:
    """The weight and bias of the fused convolution, as parameters that require grad where
    the convolution's did; the output channels are dim 0 of the weight (dim 1 transposed)."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = _tp.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _tp.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _tp.zeros_like(bn_rm)
    rsqrt = _tp.rsqrt(bn_rv + bn_eps)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
    with _tp.no_grad():
        w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(dtype=w_dtype)
        b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear: Any, bn: Any) -> Any:
    """A copy of ``linear`` that computes ``bn(linear(x))`` with ``bn``'s running statistics
    (both in eval mode; ``bn`` normalizes the linear layer's output features)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features must equal bn.num_features or bn.num_features must be 1"
        )
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_linear_bn_eval needs a batch norm that tracks running stats")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor,
    bn_b: Tensor,
) -> tuple[Parameter, Parameter]:
    """The weight and bias of the fused linear layer."""
    if linear_b is None:
        linear_b = _tp.zeros_like(bn_rm)
    with _tp.no_grad():
        scale = bn_w * _tp.rsqrt(bn_rv + bn_eps)
        w = linear_w * scale.unsqueeze(-1)
        b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)
