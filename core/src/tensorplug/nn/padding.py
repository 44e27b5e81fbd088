"""Padding layers over ``F.pad``: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``,
``ReplicationPad`` and ``CircularPad``, each 1d/2d/3d, with PyTorch's arguments (one int for
every side, or ``(left, right[, top, bottom[, front, back]])``) and ``extra_repr``."""

from __future__ import annotations

from collections.abc import Sequence

from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
]  # fmt: skip


def _amounts(padding: int | Sequence[int], dims: int) -> tuple[int, ...]:
    if isinstance(padding, int):
        return (padding,) * (2 * dims)
    return tuple(int(p) for p in padding)


class _PadNd(Module):
    _dims = 0
    _mode = "constant"

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        self.padding = _amounts(padding, self._dims)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: int | Sequence[int], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dimension with ``value``."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dimensions with ``value``."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dimensions with ``value``."""

    _dims = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dimension with zeros."""

    _dims = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last 2 dimensions with zeros."""

    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last 3 dimensions with zeros."""

    _dims = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dimension with its reflection (the edge not repeated)."""

    _dims, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last 2 dimensions with their reflection."""

    _dims, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last 3 dimensions with their reflection."""

    _dims, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dimension by repeating its edge."""

    _dims, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last 2 dimensions by repeating their edges."""

    _dims, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last 3 dimensions by repeating their edges."""

    _dims, _mode = 3, "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        n = self._dims
        if input.ndim not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.ndim}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dimension by wrapping around."""

    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dimensions by wrapping around."""

    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dimensions by wrapping around."""

    _dims = 3
