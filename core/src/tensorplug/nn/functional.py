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
from ..ops import ops
from ..tensor import Tensor
from ._autograd import no_grad

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


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer tensor ``input``.

    Entries equal to ``padding_idx`` (negative counts from the end) contribute no gradient to
    ``weight``; ``scale_grad_by_freq`` divides each row's gradient by its index's count in
    ``input``; with ``max_norm``, the rows looked up are first rescaled in ``weight``, in place,
    to a ``norm_type``-norm of at most ``max_norm`` (as PyTorch's ``embedding_renorm_``).
    """
    n = weight.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise ValueError(
                f"embedding: padding_idx must be within num_embeddings ({n}), got {padding_idx}"
            )
        if padding_idx < 0:
            padding_idx += n  # aten::embedding's -1 means none
    if sparse:
        raise NotImplementedError(
            "embedding: sparse=True asks for sparse gradients, but tensorplug has no sparse "
            "tensors; use sparse=False (dense gradients)"
        )
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    r: Tensor = _tp.embedding(weight, input, -1 if padding_idx is None else padding_idx,
                              scale_grad_by_freq)
    return r


def _renorm_rows(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale the rows of ``weight`` that ``indices`` picks whose norm exceeds ``max_norm`` by
    ``max_norm / (norm + 1e-7)``, in place and outside the graph. An index that occurs twice
    writes the same row twice."""
    aten = ops.aten
    with no_grad():
        flat = aten.reshape.default(indices, [-1])
        rows = aten.index.Tensor(weight, [flat])
        norms = aten.pow.Tensor_Scalar(
            aten.sum.dim_IntList(aten.pow.Tensor_Scalar(aten.abs.default(rows), norm_type),
                                 [1], True),
            1.0 / norm_type,
        )
        scale = aten.where.ScalarOther(
            aten.gt.Scalar(norms, max_norm),
            aten.rdiv.Scalar(aten.add.Scalar(norms, 1e-7), max_norm), 1.0,
        )
        aten.index_put_.default(weight, [flat], aten.mul.Tensor(rows, scale))


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
