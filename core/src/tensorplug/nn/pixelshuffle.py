"""``PixelShuffle`` and ``PixelUnshuffle``: move ``r * r`` channels into an ``r``-times larger
image and back (sub-pixel convolution), as PyTorch's modules do. No parameters or buffers.

Usage::

    nn.PixelShuffle(2)(tp.zeros(1, 12, 4, 4)).shape              # (1, 3, 8, 8)
    nn.PixelUnshuffle(2)(tp.zeros(1, 3, 8, 8)).shape             # (1, 12, 4, 4)
"""

from __future__ import annotations

from ..tensor import Tensor
from ._resample import pixel_shuffle, pixel_unshuffle
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """``(*, C * r * r, H, W)`` to ``(*, C, H * r, W * r)`` with ``r = upscale_factor``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H * r, W * r)`` to ``(*, C * r * r, H, W)`` with ``r = downscale_factor``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
