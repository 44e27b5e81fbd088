"""Parameter initialization, in place and outside the graph (``tensorplug.nn.init``).

Each function fills its tensor under ``no_grad()`` and returns it, as ``torch.nn.init`` does.
Random fills are the in-place random operators ``uniform_`` and ``normal_`` (with
``generator=``), as in PyTorch; fans and gains are PyTorch's (``calculate_gain``,
``_calculate_fan_in_and_fan_out``). All 26 names of ``torch.nn.init`` are here, the deprecated
ones without the trailing underscore (``uniform``, ``xavier_normal``, ...) warning with
PyTorch's ``FutureWarning`` as there.

``orthogonal_`` takes its QR decomposition with numpy on the host (``numpy.linalg.qr``, the
tensor's values copied to the CPU and back): tensorplug has no ``linalg.qr`` operator yet.
``trunc_normal_`` is PyTorch 2.13's rejection sampler, written in tensorplug operators.

Usage::

    w = tp.nn.Parameter(tp.empty(16, 8))
    tp.nn.init.kaiming_uniform_(w, a=math.sqrt(5))
    tp.nn.init.zeros_(bias)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from .. import dtypes as _dtypes
from ..ops import ops
from ..random import Generator
from ..tensor import Tensor
from ._autograd import no_grad

__all__ = [
    "calculate_gain", "constant", "constant_", "dirac", "dirac_", "eye", "eye_",
    "kaiming_normal", "kaiming_normal_", "kaiming_uniform", "kaiming_uniform_", "normal",
    "normal_", "ones_", "orthogonal", "orthogonal_", "sparse", "sparse_", "trunc_normal_",
    "uniform", "uniform_", "xavier_normal", "xavier_normal_", "xavier_uniform",
    "xavier_uniform_", "zeros_",
]  # fmt: skip

_aten = ops.aten


def _is_meta(tensor: Tensor) -> bool:
    return tensor.device.type == "meta"


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill ``tensor`` with values drawn from U(a, b)."""
    with no_grad():
        _aten.uniform_.default(tensor, a, b, generator=generator)
    return tensor


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill ``tensor`` with values drawn from N(mean, std²)."""
    with no_grad():
        _aten.normal_.default(tensor, mean, std, generator=generator)
    return tensor


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Generator | None = None,
) -> Tensor:
    """Fill ``tensor`` with values from N(mean, std²) truncated to [a, b].

    PyTorch 2.13's sampler: when [a, b] holds more than 30% of the mass, normal draws
    outside it are drawn again; otherwise uniform proposals on [a, b] are accepted with the
    normal density's ratio to its peak there.
    """
    if _is_meta(tensor):
        return tensor

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            lo = _aten.full.default([], a, dtype=tensor.dtype).item()
            hi = _aten.full.default([], b, dtype=tensor.dtype).item()
            result = _aten.normal_.default(tensor, mean, std, generator=generator)
            while True:
                mask = _aten.logical_or.default(
                    _aten.lt.Scalar(result, lo), _aten.gt.Scalar(result, hi)
                )
                if not bool(_aten.any.default(mask).item()):
                    break
                fresh = _aten.normal_.default(
                    _aten.empty_like.default(result), mean, std, generator=generator
                )
                result = _aten.where.self(mask, fresh, result)
            if result is not tensor:
                _aten.copy_.default(tensor, result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2

        def log_ratio(x: Tensor) -> Tensor:  # log pdf(x) - log pdf(mode), unnormalised
            z = _aten.div.Scalar(_aten.sub.Scalar(x, mean), std)
            r: Tensor = _aten.sub.Scalar(_aten.mul.Scalar(_aten.mul.Tensor(z, z), -0.5), log_peak)
            return r

        def rejected(x: Tensor) -> Tensor:
            u = _aten.uniform_.default(_aten.empty_like.default(x), 0.0, 1.0, generator=generator)
            r: Tensor = _aten.gt.Tensor(_aten.log.default(u), log_ratio(x))
            return r

        _aten.uniform_.default(tensor, a, b, generator=generator)
        pending = rejected(tensor)
        result = tensor
        while bool(_aten.any.default(pending).item()):
            cand = _aten.uniform_.default(
                _aten.empty_like.default(tensor), a, b, generator=generator
            )
            result = _aten.where.self(pending, cand, result)
            pending = _aten.logical_and.default(pending, rejected(cand))
        if result is not tensor:
            _aten.copy_.default(tensor, result)
    return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``."""
    with no_grad():
        _aten.fill_.Scalar(tensor, val)
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones."""
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill the 2-d ``tensor`` with the identity matrix (ones on the main diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        rows, cols = tensor.shape
        _aten.copy_.default(
            tensor, _aten.eye.m(rows, cols, dtype=tensor.dtype, device=tensor.device)
        )
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill the 3-, 4- or 5-d convolution weight ``tensor`` with the Dirac delta: as many input
    channels as possible pass through unchanged, per group of ``groups``."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    if _is_meta(tensor):
        return tensor
    per_group = sizes[0] // groups
    min_dim = min(per_group, sizes[1])
    centre = tuple(s // 2 for s in sizes[2:])
    with no_grad():
        _aten.zero_.default(tensor)
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * per_group + d, d, *centre)] = 1
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for ``nonlinearity`` (PyTorch's table): 1 for the linear and
    convolution functions and ``sigmoid``, 5/3 for ``tanh``, √2 for ``relu``,
    √(2 / (1 + slope²)) for ``leaky_relu`` (slope ``param``, default 0.01), 3/4 for ``selu``."""
    linear = (
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "sigmoid",
    )
    if nonlinearity in linear:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, int | float) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight shaped ``(out, in, *receptive_field)``."""
    shape = tensor.shape
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Glorot initialization: U(-a, a), a = gain · sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Glorot initialization: N(0, std²), std = gain · sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """He initialization: U(-bound, bound), bound = gain · sqrt(3 / fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """He initialization: N(0, std²), std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill ``tensor`` (2-d or more, trailing dimensions flattened) with a (semi-)orthogonal
    matrix times ``gain``: the Q of the QR decomposition of a standard normal draw, its columns'
    signs fixed by R's diagonal (Mezzadri's uniform distribution), as PyTorch.

    The QR decomposition is ``tp.linalg.qr``'s, on the tensor's device (float32 and
    float64; a half-precision tensor is filled from a float32 decomposition, as PyTorch's).
    """
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or _is_meta(tensor):
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    work = tensor.dtype if tensor.dtype in (_dtypes.float32, _dtypes.float64) else _dtypes.float32
    with no_grad():
        flat = _aten.empty.memory_format([rows, cols], dtype=work, device=tensor.device)
        _aten.normal_.default(flat, 0.0, 1.0, generator=generator)
        if rows < cols:
            flat = _aten.t.default(flat)
        q, r = _aten.linalg_qr.default(flat)
        signs = _aten.sign.default(_aten.diagonal.default(r, 0, -2, -1))
        q = _aten.mul.Tensor(q, signs)
        if rows < cols:
            q = _aten.t.default(q)
        value = _aten.reshape.default(_aten.mul.Scalar(q, gain), list(tensor.shape))
        _aten.copy_.default(tensor, value)
    return tensor


def sparse_(
    tensor: Tensor, sparsity: float, std: float = 0.01, generator: Generator | None = None
) -> Tensor:
    """Fill the 2-d ``tensor`` from N(0, std²), then zero ``ceil(sparsity · rows)`` randomly
    chosen entries of each column."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if _is_meta(tensor):
        return tensor
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        _aten.normal_.default(tensor, 0.0, std, generator=generator)
        for col in range(cols):
            idx = _aten.randperm.default(rows, generator=generator, device=tensor.device)
            zero_rows = _aten.slice.Tensor(idx, 0, 0, num_zeros)
            tensor[zero_rows, col] = 0
    return tensor


def _deprecated(new: Callable[..., Tensor]) -> Callable[..., Tensor]:
    old_name = new.__name__[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new.__name__}`.",
            FutureWarning,
            stacklevel=2,
        )
        return new(*args, **kwargs)

    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = f"Deprecated alias of :func:`{new.__name__}` (warns)."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
