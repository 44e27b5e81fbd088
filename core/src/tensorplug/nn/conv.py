"""Convolution layers: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``, with PyTorch's
constructor arguments, checks, initialization (``kaiming_uniform_(a=sqrt(5))`` for the weight,
U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias), ``extra_repr`` and state_dict keys
(``weight``, ``bias``).

``padding_mode`` other than ``"zeros"`` pads the input with ``F.pad`` first (``reflect``,
``replicate``, ``circular``) and convolves without padding, as PyTorch's layers do.

``LazyConv*`` and ``LazyConvTranspose*`` take ``in_channels`` from their first input (channel
dimension 1, or 0 of an unbatched input) and then become the plain layer (nn/lazy.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import tensorplug

from .. import dtypes as _dtypes
from ..tensor import Tensor
from . import functional as F
from . import init
from ._autograd import no_grad
from .lazy import LazyModuleMixin, UninitializedParameter
from .module import Module
from .parameter import Parameter

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
    "LazyConvTranspose3d",
]  # fmt: skip

_tp: Any = tensorplug

_Size = int | Sequence[int]
_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(value: Any, n: int) -> tuple[Any, ...]:
    """``value`` as an ``n``-tuple: a sequence as it is, one value repeated (PyTorch's
    ``_single``/``_pair``/``_triple``)."""
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """What the convolutions and the transposed convolutions share: arguments, checks,
    parameters, initialization, ``extra_repr``."""

    _dims = 0
    weight: Parameter
    bias: Parameter | None

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: _Size, stride: _Size,
        padding: _Size | str, dilation: _Size, transposed: bool, output_padding: _Size,
        groups: int, bias: bool, padding_mode: str, device: Any = None,
        dtype: _dtypes.dtype | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size, stride, dilation = (_ntuple(v, n) for v in (kernel_size, stride, dilation))
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ntuple(padding, n)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding: tuple[int, ...] | str = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts for the padding modes: the last dimension first, both sides
        if isinstance(padding, str):
            twice = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(n - 1, -1, -1), strict=True):
                    total = d * (k - 1)
                    left = total // 2
                    twice[2 * i] = left
                    twice[2 * i + 1] = total - left
            self._reversed_padding_repeated_twice = twice
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in (0, 1)]
        if transposed:
            shape = [in_channels, out_channels // groups, *kernel_size]
        else:
            shape = [out_channels, in_channels // groups, *kernel_size]
        self.weight = Parameter(_tp.empty(shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_tp.empty([out_channels], dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # kaiming_uniform_ with a=sqrt(5): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as PyTorch
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        n = self._dims
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: _Size, stride: _Size = 1,
        padding: _Size | str = 0, dilation: _Size = 1, groups: int = 1, bias: bool = True,
        padding_mode: str = "zeros", device: Any = None, dtype: _dtypes.dtype | None = None,
    ) -> None:  # fmt: skip
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0,
            groups, bias, padding_mode, device, dtype,
        )  # fmt: skip

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = getattr(F, f"conv{self._dims}d")
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            r: Tensor = conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
            return r
        r = conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)
        return r

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over (N, C_in, L) or (C_in, L); weight (C_out, C_in / groups, k)."""

    _dims = 1


class Conv2d(_Conv):
    """2-d convolution over (N, C_in, H, W) or (C_in, H, W); weight (C_out, C_in / groups, kh,
    kw)."""

    _dims = 2


class Conv3d(_Conv):
    """3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W)."""

    _dims = 3


class _ConvTranspose(_ConvNd):
    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: _Size, stride: _Size = 1,
        padding: _Size = 0, output_padding: _Size = 0, groups: int = 1, bias: bool = True,
        dilation: _Size = 1, padding_mode: str = "zeros", device: Any = None,
        dtype: _dtypes.dtype | None = None,
    ) -> None:  # fmt: skip
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, True,
            output_padding, groups, bias, padding_mode, device, dtype,
        )  # fmt: skip

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> list[int]:
        """``output_padding``, or what gives ``output_size`` (PyTorch's checks and words)."""
        n = self._dims
        if output_size is None:
            return list(self.output_padding)
        batched = input.ndim == n + 2
        lead = 2 if batched else 1
        size = [int(v) for v in output_size]
        if len(size) == lead + n:
            size = size[lead:]
        if len(size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or "
                f"{lead + n} elements (got {len(size)})"
            )
        assert not isinstance(self.padding, str)
        lows, highs = [], []
        for d in range(n):
            low = (
                (input.shape[d + lead] - 1) * self.stride[d]
                - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1)
                + 1
            )
            lows.append(low)
            highs.append(low + self.stride[d] - 1)
        for want, low, high in zip(size, lows, highs, strict=True):
            if want < low or want > high:
                raise ValueError(
                    f"requested an output size of {size}, but valid sizes range from {lows} to "
                    f"{highs} (for an input of {list(input.shape[lead:])})"
                )
        return [want - low for want, low in zip(size, lows, strict=True)]

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        conv = getattr(F, f"conv_transpose{self._dims}d")
        r: Tensor = conv(
            input, self.weight, self.bias, self.stride, self.padding, output_padding,
            self.groups, self.dilation,
        )  # fmt: skip
        return r


class ConvTranspose1d(_ConvTranspose):
    """Transposed 1-d convolution; weight (C_in, C_out / groups, k)."""

    _dims = 1


class ConvTranspose2d(_ConvTranspose):
    """Transposed 2-d convolution; weight (C_in, C_out / groups, kh, kw). ``forward(input,
    output_size=None)``: ``output_size`` picks the output padding."""

    _dims = 2


class ConvTranspose3d(_ConvTranspose):
    """Transposed 3-d convolution; weight (C_in, C_out / groups, kd, kh, kw)."""

    _dims = 3


# --- lazy layers ------------------------------------------------------------------------------


class _LazyConvMixin(LazyModuleMixin):
    """PyTorch's ``_LazyConvXdMixin``: the weight (and bias) materialized from the first
    input's channels, then initialized as the plain layer's."""

    in_channels: int
    out_channels: int
    groups: int
    transposed: bool
    kernel_size: tuple[int, ...]
    _dims: int
    weight: Any
    bias: Any

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        n = self._dims
        if input.ndim not in (n + 1, n + 2):
            raise RuntimeError(
                f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {list(input.shape)}"
            )
        self.in_channels = int(input.shape[1] if input.ndim == n + 2 else input.shape[0])
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with no_grad():
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(plain: type[_Conv]) -> Any:
    class LazyConv(_LazyConvMixin, plain):  # type: ignore[valid-type,misc]
        cls_to_become = plain

        def __init__(
            self, out_channels: int, kernel_size: _Size, stride: _Size = 1,
            padding: _Size | str = 0, dilation: _Size = 1, groups: int = 1, bias: bool = True,
            padding_mode: str = "zeros", device: Any = None,
            dtype: _dtypes.dtype | None = None,
        ) -> None:  # fmt: skip
            super().__init__(
                0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                device, dtype,
            )  # fmt: skip
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)

    name = f"Lazy{plain.__name__}"
    LazyConv.__name__ = LazyConv.__qualname__ = name
    LazyConv.__doc__ = f"A ``{plain.__name__}`` whose ``in_channels`` is its first input's."
    return LazyConv


def _lazy_conv_transpose(plain: type[_ConvTranspose]) -> Any:
    class LazyConvTranspose(_LazyConvMixin, plain):  # type: ignore[valid-type,misc]
        cls_to_become = plain

        def __init__(
            self, out_channels: int, kernel_size: _Size, stride: _Size = 1, padding: _Size = 0,
            output_padding: _Size = 0, groups: int = 1, bias: bool = True, dilation: _Size = 1,
            padding_mode: str = "zeros", device: Any = None,
            dtype: _dtypes.dtype | None = None,
        ) -> None:  # fmt: skip
            super().__init__(
                0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                padding_mode, device, dtype,
            )  # fmt: skip
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)

    name = f"Lazy{plain.__name__}"
    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = name
    LazyConvTranspose.__doc__ = (
        f"A ``{plain.__name__}`` whose ``in_channels`` is its first input's."
    )
    return LazyConvTranspose


LazyConv1d = _lazy_conv(Conv1d)
LazyConv2d = _lazy_conv(Conv2d)
LazyConv3d = _lazy_conv(Conv3d)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d)
