"""``Linear``: ``y = x @ weight.T + bias``."""

from __future__ import annotations

import math
from typing import Any

import tensorplug

from .. import dtypes as _dtypes
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Linear"]

_tp: Any = tensorplug


class Linear(Module):
    """An affine map from ``in_features`` to ``out_features``.

    ``weight`` is (out_features, in_features) and ``bias`` (out_features), both drawn from
    U(-1/sqrt(in_features), 1/sqrt(in_features)) — PyTorch's ``kaiming_uniform_(a=sqrt(5))``.
    """

    weight: Parameter
    bias: Parameter | None

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: _dtypes.dtype | None = None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_tp.empty([out_features, in_features], dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_tp.empty([out_features], dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )
