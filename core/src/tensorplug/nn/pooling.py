"""Pooling modules, torch.nn's: ``MaxPool1d/2d/3d``, ``MaxUnpool1d/2d/3d``,
``AvgPool1d/2d/3d``, ``LPPool1d/2d/3d``, ``AdaptiveMaxPool1d/2d/3d``,
``AdaptiveAvgPool1d/2d/3d`` and ``FractionalMaxPool2d/3d``, with PyTorch's constructor
arguments, stored attributes and ``extra_repr``; each calls the function of
:mod:`tensorplug.nn.functional` of its name.

Usage::

    pool = nn.MaxPool2d(2, return_indices=True)
    y, idx = pool(x)
    nn.MaxUnpool2d(2)(y, idx)                        # x's shape, zeros but at the maxima
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
]  # fmt: skip


def _ntuple(value: Any, n: int) -> tuple[Any, ...]:
    """torch's ``_single``/``_pair``/``_triple``: an iterable as a tuple, else ``n`` copies."""
    if isinstance(value, list | tuple):
        return tuple(value)
    return (value,) * n


class _MaxPoolNd(Module):
    _n = 0

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """1-d max pooling over ``(N, C, L)`` or ``(C, L)``."""

    def forward(self, input: Tensor) -> Any:
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)  # fmt: skip


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""

    def forward(self, input: Tensor) -> Any:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)  # fmt: skip


class MaxPool3d(_MaxPoolNd):
    """3-d max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""

    def forward(self, input: Tensor) -> Any:
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)  # fmt: skip


class _MaxUnpoolNd(Module):
    _n = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        n = self._n
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if (stride is not None) else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._n - 1]
        r: Tensor = unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)
        return r


class MaxUnpool1d(_MaxUnpoolNd):
    """The inverse of ``MaxPool1d`` (given its indices): zeros but at the maxima."""

    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The inverse of ``MaxPool2d`` (given its indices): zeros but at the maxima."""

    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The inverse of ``MaxPool3d`` (given its indices): zeros but at the maxima."""

    _n = 3


class AvgPool1d(Module):
    """1-d average pooling; its sizes are stored as 1-tuples, as torch's."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)  # fmt: skip


class _AvgPoolNd(Module):
    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-d average pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)  # fmt: skip


class AvgPool3d(_AvgPoolNd):
    """3-d average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)  # fmt: skip


class _LPPoolNd(Module):
    _n = 0

    def __init__(
        self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
    ) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )

    def forward(self, input: Tensor) -> Tensor:
        pool = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._n - 1]
        r: Tensor = pool(input, float(self.norm_type), self.kernel_size, self.stride,
                         self.ceil_mode)  # fmt: skip
        return r


class LPPool1d(_LPPoolNd):
    """Power-average pooling: ``(sum of x^p over each window)^(1/p)``, along the last dim."""

    _n = 1


class LPPool2d(_LPPoolNd):
    """Power-average pooling over 2-d windows."""

    _n = 2


class LPPool3d(_LPPoolNd):
    """Power-average pooling over 3-d windows."""

    _n = 3


class _AdaptiveMaxPoolNd(Module):
    _n = 0

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor) -> Any:
        pool = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[self._n - 1]
        return pool(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling to ``output_size`` positions, whatever the input's length."""

    _n = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to an ``output_size`` grid (``None`` keeps a dimension's size)."""

    _n = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """3-d adaptive max pooling."""

    _n = 3


class _AdaptiveAvgPoolNd(Module):
    _n = 0

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor) -> Tensor:
        pool = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[self._n - 1]
        r: Tensor = pool(input, self.output_size)
        return r


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling to ``output_size`` positions, whatever the input's length."""

    _n = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to an ``output_size`` grid (``None`` keeps a dimension's size);
    ``AdaptiveAvgPool2d(1)`` is ResNet's global average pooling."""

    _n = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """3-d adaptive average pooling."""

    _n = 3


class _FractionalMaxPoolNd(Module):
    """PyTorch's FractionalMaxPool2d/3d: ``output_size`` or ``output_ratio`` (in (0, 1)), and
    ``_random_samples`` kept as a buffer (in the state_dict when given)."""

    _n = 0

    def __init__(
        self,
        kernel_size: Any,
        output_size: Any = None,
        output_ratio: Any = None,
        return_indices: bool = False,
        _random_samples: Any = None,
    ) -> None:
        super().__init__()
        n = self._n
        name = type(self).__name__
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        pool = F.fractional_max_pool2d if self._n == 2 else F.fractional_max_pool3d
        return pool(
            input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
            _random_samples=self._random_samples,
        )  # fmt: skip


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max pooling over windows at pseudo-random positions (Graham's fractional max pooling)."""

    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-d fractional max pooling."""

    _n = 3
