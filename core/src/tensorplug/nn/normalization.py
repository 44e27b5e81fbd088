"""``LayerNorm``: normalization over the trailing dimensions of each sample."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorplug

from .. import dtypes as _dtypes
from ..tensor import Tensor
from . import functional as F
from .module import Module
from .parameter import Parameter

__all__ = ["LayerNorm"]

_tp: Any = tensorplug


class LayerNorm(Module):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last dimensions, whose sizes
    are ``normalized_shape``; ``weight`` starts at ones and ``bias`` at zeros."""

    weight: Parameter | None
    bias: Parameter | None

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: _dtypes.dtype | None = None,
    ) -> None:
        super().__init__()
        shape = (
            (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        )
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_tp.ones(list(shape), dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(_tp.zeros(list(shape), dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )
