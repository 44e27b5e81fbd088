"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``: modules that call
``F.interpolate`` with their settings, as PyTorch's do. They have no parameters or buffers.

Usage::

    up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
    up(tp.zeros(1, 3, 8, 8)).shape                               # (1, 3, 16, 16)
"""

from __future__ import annotations

from collections.abc import Sequence

from ..tensor import Tensor
from ._resample import interpolate
from .module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """Resample to ``size`` or by ``scale_factor`` with ``mode`` (``F.interpolate``'s)."""

    def __init__(
        self,
        size: int | Sequence[int] | None = None,
        scale_factor: float | Sequence[float] | None = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor: float | tuple[float, ...] | None
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None  # type: ignore[arg-type]
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """``Upsample(size, scale_factor, mode="nearest")``."""

    def __init__(
        self, size: int | Sequence[int] | None = None, scale_factor: float | None = None
    ) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(size, scale_factor, mode="bilinear", align_corners=True)``."""

    def __init__(
        self, size: int | Sequence[int] | None = None, scale_factor: float | None = None
    ) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
