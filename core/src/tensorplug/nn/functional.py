"""Functions of tensors for building networks (``tensorplug.nn.functional``, usually ``F``).

Thin wrappers over the standard operators (``tp.linear``, ``tp.cross_entropy``, ...) with
``torch.nn.functional``'s names and signatures, so an argument type that defines
``__tensorplug_function__`` still gets the call. Where torch keeps deprecated positional
arguments (``size_average``, ``reduce``), these take keyword-only arguments instead.

Usage::

    import tensorplug.nn.functional as F
    loss = F.cross_entropy(F.linear(x, w, b), target, label_smoothing=0.1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorplug

from .. import dtypes as _dtypes
from ..tensor import Tensor

__all__ = [
    "binary_cross_entropy",
    "cross_entropy",
    "dropout",
    "embedding",
    "gelu",
    "layer_norm",
    "linear",
    "log_softmax",
    "mse_loss",
    "nll_loss",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "tanh",
]

_tp: Any = tensorplug  # the generated functions are invisible to the type checker


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``."""
    r: Tensor = _tp.linear(input, weight, bias)
    return r


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    r: Tensor = _tp.relu_(input) if inplace else _tp.relu(input)
    return r


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """GELU: exact (``"none"``) or its ``"tanh"`` approximation."""
    r: Tensor = _tp.gelu(input, approximate=approximate)
    return r


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    r: Tensor = _tp.silu(input)
    return _copy_into(input, r) if inplace else r


def sigmoid(input: Tensor) -> Tensor:
    r: Tensor = _tp.sigmoid(input)
    return r


def tanh(input: Tensor) -> Tensor:
    r: Tensor = _tp.tanh(input)
    return r


def softmax(input: Tensor, dim: int, dtype: _dtypes.dtype | None = None) -> Tensor:
    r: Tensor = _tp.softmax(input, dim, dtype)
    return r


def log_softmax(input: Tensor, dim: int, dtype: _dtypes.dtype | None = None) -> Tensor:
    r: Tensor = _tp.log_softmax(input, dim, dtype)
    return r


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p), when training."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    r: Tensor = _tp.dropout(input, p, training)
    return _copy_into(input, r) if inplace and r is not input else r


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Rows of ``weight`` picked by the integer tensor ``input``.

    Entries equal to ``padding_idx`` contribute no gradient to ``weight`` (as in PyTorch).
    """
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]  # aten::embedding's -1 means none
    r: Tensor = _tp.embedding(weight, input, -1 if padding_idx is None else padding_idx)
    return r


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int],
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dimensions, then scale and shift."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    r: Tensor = _tp.layer_norm(input, shape, weight, bias, eps)
    return r


def mse_loss(input: Tensor, target: Tensor, *, reduction: str = "mean") -> Tensor:
    r: Tensor = _tp.mse_loss(input, target, reduction)
    return r


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, *,
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` (N, C) and class indices or probabilities ``target``."""
    r: Tensor = _tp.cross_entropy(input, target, weight, reduction, ignore_index,
                                  label_smoothing)
    return r


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, *,
             ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of log-probabilities ``input`` (N, C) and class indices."""
    r: Tensor = _tp.nll_loss(input, target, weight, reduction, ignore_index)
    return r


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, *,
                         reduction: str = "mean") -> Tensor:
    """Binary cross entropy of probabilities ``input`` and targets in [0, 1]."""
    r: Tensor = _tp.binary_cross_entropy(input, target, weight, reduction)
    return r


def _copy_into(target: Tensor, value: Tensor) -> Tensor:
    """The ``inplace=True`` form: the result written into the input."""
    r: Tensor = target.copy_(value)
    return r
