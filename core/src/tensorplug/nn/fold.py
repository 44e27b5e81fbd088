"""``Unfold`` and ``Fold``: the modules of ``F.unfold`` (sliding blocks as columns, im2col) and
``F.fold`` (columns summed back into an image, col2im)."""

from __future__ import annotations

from collections.abc import Sequence

from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]

_Size = int | Sequence[int]


class Fold(Module):
    """Columns (N, C * prod(kernel_size), L) summed into (N, C, *output_size)."""

    def __init__(
        self, output_size: _Size, kernel_size: _Size, dilation: _Size = 1, padding: _Size = 0,
        stride: _Size = 1,
    ) -> None:  # fmt: skip
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """The sliding blocks of (N, C, H, W) as columns (N, C * prod(kernel_size), L)."""

    def __init__(
        self, kernel_size: _Size, dilation: _Size = 1, padding: _Size = 0, stride: _Size = 1
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
            f"stride={self.stride}"
        )
