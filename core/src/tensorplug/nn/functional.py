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

import warnings
from collections.abc import Sequence
from typing import Any

import tensorplug

from .. import dtypes as _dtypes
from ..ops import ops
from ..overrides import _overridable_function
from ..tensor import Tensor
from ._attention import multi_head_attention_forward
from ._autograd import no_grad
from ._padding import pad
from ._resample import (
    affine_grid,
    grid_sample,
    interpolate,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)

__all__ = [
    "affine_grid",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_similarity",
    "cross_entropy",
    "dropout",
    "elu",
    "embedding",
    "fold",
    "embedding_bag",
    "gelu",
    "grid_sample",
    "hardtanh",
    "huber_loss",
    "interpolate",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "logsigmoid",
    "mse_loss",
    "multi_head_attention_forward",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "pixel_shuffle",
    "pixel_unshuffle",
    "relu",
    "relu6",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softmin",
    "softplus",
    "tanh",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
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


def softmax(input: Tensor, dim: int | None = None, dtype: _dtypes.dtype | None = None) -> Tensor:
    """Without ``dim``, PyTorch's deprecated implicit choice (with its warning)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, 3)
    r: Tensor = _tp.softmax(input, dim, dtype)
    return r


def log_softmax(
    input: Tensor, dim: int | None = None, dtype: _dtypes.dtype | None = None
) -> Tensor:
    """Without ``dim``, PyTorch's deprecated implicit choice (with its warning)."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, 3)
    r: Tensor = _tp.log_softmax(input, dim, dtype)
    return r


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p), when training."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    r: Tensor = _tp.dropout(input, p, training)
    return _copy_into(input, r) if inplace and r is not input else r


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
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
    r: Tensor = _tp.embedding(
        weight, input, -1 if padding_idx is None else padding_idx, scale_grad_by_freq
    )
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
            aten.sum.dim_IntList(
                aten.pow.Tensor_Scalar(aten.abs.default(rows), norm_type), [1], True
            ),
            1.0 / norm_type,
        )
        scale = aten.where.ScalarOther(
            aten.gt.Scalar(norms, max_norm),
            aten.rdiv.Scalar(aten.add.Scalar(norms, 1e-7), max_norm),
            1.0,
        )
        aten.index_put_.default(weight, [flat], aten.mul.Tensor(rows, scale))


# --- embedding bags ---------------------------------------------------------------------------

_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sums, means or maxima of bags of rows of ``weight`` (``aten::embedding_bag``,
    Note [Embedding bags] in composites/nn.py): a 2-D ``input`` is a batch of bags of equal
    length; a 1-D ``input`` is cut into bags at ``offsets``. ``per_sample_weights`` (mode
    ``"sum"`` only) scales each row; entries equal to ``padding_idx`` are left out of their bag
    (and of its count for ``"mean"``); an empty bag gives zeros. ``max_norm`` renormalizes the
    rows looked up in place first, as :func:`embedding` does."""
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not "
            f"None, then it must have the same shape as the input ({list(input.shape)})"
        )
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        bags, length = input.shape
        offsets = _tp.arange(0, bags * length, length, dtype=input.dtype, device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise ValueError(
                f"embedding_bag: padding_idx must be within num_embeddings ({n}), got {padding_idx}"
            )
        if padding_idx < 0:
            padding_idx += n
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    if sparse:
        raise NotImplementedError(
            "embedding_bag: sparse=True asks for sparse gradients, but tensorplug has no "
            "sparse tensors; use sparse=False (dense gradients)"
        )
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    r = _tp.embedding_bag(
        weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode], sparse,
        per_sample_weights, include_last_offset, padding_idx,
    )  # fmt: skip
    out: Tensor = r[0]
    return out


def layer_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dimensions, then scale and shift."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    r: Tensor = _tp.layer_norm(input, shape, weight, bias, eps)
    return r


def mse_loss(input: Tensor, target: Tensor, *, reduction: str = "mean") -> Tensor:
    r: Tensor = _tp.mse_loss(input, target, reduction)
    return r


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    *,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy of logits ``input`` (N, C) and class indices or probabilities ``target``."""
    r: Tensor = _tp.cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing)
    return r


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    *,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of log-probabilities ``input`` (N, C) and class indices."""
    r: Tensor = _tp.nll_loss(input, target, weight, reduction, ignore_index)
    return r


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, *, reduction: str = "mean"
) -> Tensor:
    """Binary cross entropy of probabilities ``input`` and targets in [0, 1]."""
    r: Tensor = _tp.binary_cross_entropy(input, target, weight, reduction)
    return r


def _copy_into(target: Tensor, value: Tensor) -> Tensor:
    """The ``inplace=True`` form: the result written into the input."""
    r: Tensor = target.copy_(value)
    return r


# --- convolution ------------------------------------------------------------------------------
# torch.nn.functional's convolutions are the operators themselves (tp.conv2d picks the
# padding="same"/"valid" overload for a string); unfold and fold are im2col and col2im.

_Size = int | Sequence[int]


def conv1d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _Size = 1,
    padding: _Size | str = 0, dilation: _Size = 1, groups: int = 1,
) -> Tensor:  # fmt: skip
    """1-d convolution of (N, C_in, L) or (C_in, L) with weight (C_out, C_in / groups, k)."""
    r: Tensor = _tp.conv1d(input, weight, bias, stride, padding, dilation, groups)
    return r


def conv2d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _Size = 1,
    padding: _Size | str = 0, dilation: _Size = 1, groups: int = 1,
) -> Tensor:  # fmt: skip
    """2-d convolution of (N, C_in, H, W) or (C_in, H, W) with weight (C_out, C_in / groups,
    kh, kw); ``padding`` numbers, ``"valid"`` (none) or ``"same"`` (stride 1)."""
    r: Tensor = _tp.conv2d(input, weight, bias, stride, padding, dilation, groups)
    return r


def conv3d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _Size = 1,
    padding: _Size | str = 0, dilation: _Size = 1, groups: int = 1,
) -> Tensor:  # fmt: skip
    """3-d convolution of (N, C_in, D, H, W) or (C_in, D, H, W)."""
    r: Tensor = _tp.conv3d(input, weight, bias, stride, padding, dilation, groups)
    return r


def conv_transpose1d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _Size = 1,
    padding: _Size = 0, output_padding: _Size = 0, groups: int = 1, dilation: _Size = 1,
) -> Tensor:  # fmt: skip
    """Transposed 1-d convolution, weight (C_in, C_out / groups, k)."""
    r: Tensor = _tp.conv_transpose1d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )
    return r


def conv_transpose2d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _Size = 1,
    padding: _Size = 0, output_padding: _Size = 0, groups: int = 1, dilation: _Size = 1,
) -> Tensor:  # fmt: skip
    """Transposed 2-d convolution, weight (C_in, C_out / groups, kh, kw)."""
    r: Tensor = _tp.conv_transpose2d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )
    return r


def conv_transpose3d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: _Size = 1,
    padding: _Size = 0, output_padding: _Size = 0, groups: int = 1, dilation: _Size = 1,
) -> Tensor:  # fmt: skip
    """Transposed 3-d convolution, weight (C_in, C_out / groups, kd, kh, kw)."""
    r: Tensor = _tp.conv_transpose3d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )
    return r


def unfold(
    input: Tensor, kernel_size: _Size, dilation: _Size = 1, padding: _Size = 0, stride: _Size = 1
) -> Tensor:
    """The sliding blocks of (N, C, H, W) or (C, H, W) as columns: (N, C * kh * kw, L)."""
    r: Tensor = _tp.im2col(input, kernel_size, dilation, padding, stride)
    return r


def fold(
    input: Tensor, output_size: _Size, kernel_size: _Size, dilation: _Size = 1,
    padding: _Size = 0, stride: _Size = 1,
) -> Tensor:  # fmt: skip
    """Columns (N, C * kh * kw, L) or (C * kh * kw, L) summed back into (N, C, *output_size):
    the adjoint of :func:`unfold`."""
    r: Tensor = _tp.col2im(input, output_size, kernel_size, dilation, padding, stride)
    return r


# --- more activations -------------------------------------------------------------------------
# Note [Composite activations and their gradients]: these are compositions of public ops, so
# autograd differentiates the composition. Each is written so that the composition's gradient
# is PyTorch's formula everywhere, kinks included: a branch that ``where`` discards is fed an
# input clamped into its own range (``exp`` of a large discarded input would give inf, and
# 0 * inf = nan in the backward), and kinks use ops whose subgradient there is PyTorch's.


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``negative_slope * x``."""
    r: Tensor = _tp.where(_tp.gt(input, 0), input, _tp.mul(input, negative_slope))
    return _copy_into(input, r) if inplace else r


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    neg = _tp.mul(_tp.expm1(_tp.clamp_max(input, 0)), alpha)
    r: Tensor = _tp.where(_tp.gt(input, 0), input, neg)
    return _copy_into(input, r) if inplace else r


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``; ``x`` itself where ``beta * x > threshold``.

    Computed as ``max(z, 0) + log1p(exp(-|z|))`` (``z = beta * x``), which cannot overflow, not
    even in float16 (PyTorch computes in float32 there); ``max(z, 0)`` is ``(z + |z|) / 2``, whose
    gradient at 0 is 1/2, so the sum's is ``sigmoid(0)``, PyTorch's.
    """
    r: Tensor = _tp.softplus(input, beta, threshold)
    return r


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))`` as ``min(x, 0) - log1p(exp(-|x|))``, finite for every finite x.

    ``min(x, 0)`` is written ``(x - |x|) / 2`` (exact in floating point) so that the gradient at
    0 is PyTorch's 1/2: ``abs``'s subgradient there is 0.
    """
    ax = _tp.abs(input)
    r: Tensor = _tp.sub(_tp.div(_tp.sub(input, ax), 2), _tp.log1p(_tp.exp(_tp.neg(ax))))
    return r


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """``x`` clamped to ``[min_val, max_val]``; the gradient is 0 at both ends, as PyTorch's."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    # not clamp: its gradient is 1 at the bounds, hardtanh's is 0 (a NaN stays NaN here too)
    inner = _tp.where(_tp.ge(input, max_val), _tp.full_like(input, max_val), input)
    r: Tensor = _tp.where(_tp.le(input, min_val), _tp.full_like(input, min_val), inner)
    return _copy_into(input, r) if inplace else r


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``hardtanh(x, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: _dtypes.dtype | None = None
) -> Tensor:
    """``softmax(-x)``; without ``dim``, PyTorch's deprecated implicit choice (with its warning)."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim, _stacklevel)
    r: Tensor = _tp.softmax(_tp.neg(input), dim, dtype)
    return r


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's implicit softmax dimension: 0 for 0-, 1- and 3-d inputs, else 1."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. "
        "Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


# --- more losses ------------------------------------------------------------------------------


def _reduce(name: str, loss: Tensor, reduction: str) -> Tensor:
    r: Tensor
    if reduction == "none":
        return loss
    if reduction == "mean":
        r = _tp.mean(loss)
    elif reduction == "sum":
        r = _tp.sum(loss)
    else:
        raise ValueError(
            f"{name}: {reduction} is not a valid value for reduction (none, mean, sum)"
        )
    return r


def _check_reduction(name: str, reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(
            f"{name}: {reduction} is not a valid value for reduction (none, mean, sum)"
        )


def _warn_size_mismatch(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({list(target.shape)}) that is different to the input size "
            f"({list(input.shape)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _check_weight_size(weight: Tensor, input: Tensor) -> None:
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")


def l1_loss(
    input: Tensor, target: Tensor, *, reduction: str = "mean", weight: Tensor | None = None
) -> Tensor:
    """``|input - target|``; with ``weight`` (input's shape), ``mean`` is ``sum(w·l) / sum(w)``."""
    _warn_size_mismatch(input, target)
    if weight is None:
        r: Tensor = _tp.l1_loss(input, target, reduction)
        return r
    _check_reduction("l1_loss", reduction)
    _check_weight_size(weight, input)
    loss = _tp.mul(_tp.l1_loss(input, target, "none"), weight)
    if reduction == "mean":
        r = _tp.div(_tp.sum(loss), _tp.sum(weight))
        return r
    return _reduce("l1_loss", loss, reduction)


def smooth_l1_loss(
    input: Tensor, target: Tensor, *, reduction: str = "mean", beta: float = 1.0
) -> Tensor:
    """``0.5 d² / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input - target``);
    ``beta=0`` is the L1 loss."""
    _warn_size_mismatch(input, target)
    r: Tensor = _tp.smooth_l1_loss(input, target, reduction, beta)
    return r


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 d²`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``; ``weight`` (input's
    shape) multiplies each element before the reduction (``mean`` stays a plain mean)."""
    _warn_size_mismatch(input, target)
    if weight is None:
        r: Tensor = _tp.huber_loss(input, target, reduction, delta)
        return r
    _check_reduction("huber_loss", reduction)
    _check_weight_size(weight, input)
    loss = _tp.mul(_tp.huber_loss(input, target, "none", delta), weight)
    return _reduce("huber_loss", loss, reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    *,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross entropy of ``sigmoid(input)`` and ``target``, in PyTorch's stable form
    ``(1 - t) x - (1 + (pos_weight - 1) t) logsigmoid(x)``, times ``weight``."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({list(target.shape)}) must be the same as input size "
            f"({list(input.shape)})"
        )
    r: Tensor = _tp.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)
    return r


def kl_div(
    input: Tensor, target: Tensor, *, reduction: str = "mean", log_target: bool = False
) -> Tensor:
    """Pointwise KL divergence of log-probabilities ``input`` from ``target``:
    ``t (log t - x)`` (0 where ``t == 0``), or ``exp(t) (t - x)`` with ``log_target``.

    ``reduction="batchmean"`` divides the sum by the batch size (the first dimension), which is
    the KL divergence's definition; ``"mean"`` (the default) divides by the number of elements
    and warns, as PyTorch does.
    """
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            stacklevel=2,
        )
    elif reduction not in ("batchmean", "none", "sum"):
        raise ValueError(
            f"kl_div: {reduction} is not a valid value for reduction (none, batchmean, mean, sum)"
        )
    if reduction == "batchmean":
        total: Tensor = _tp.kl_div(input, target, "sum", log_target=log_target)
        if input.ndim == 0:
            return total
        r: Tensor = _tp.div(total, input.shape[0])
        return r
    r = _tp.kl_div(input, target, reduction, log_target=log_target)
    return r


# --- tensor utilities -------------------------------------------------------------------------


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """``input / max(‖input‖_p, eps)``, the norm taken over ``dim``."""
    denom = _tp.clamp_min(_tp.linalg.vector_norm(input, p, [dim], True), eps)
    if out is not None:
        o: Tensor = _tp.div(input, denom.expand_as(input), out=out)
        return o
    r: Tensor = _tp.div(input, denom)
    return r


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor of shape ``tensor.shape + (num_classes,)`` with a 1 at each index;
    ``num_classes=-1`` takes ``tensor.max() + 1``."""
    if tensor.dtype is not _dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(_tp.max(tensor).item()) + 1
    if tensor.numel() > 0:
        if int(_tp.min(tensor).item()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(_tp.max(tensor).item()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = _tp.arange(num_classes, dtype=_dtypes.int64, device=tensor.device)
    r: Tensor = _tp.eq(_tp.unsqueeze(tensor, -1), classes).to(_dtypes.int64)
    return r


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``Σ (x1 / max(‖x1‖, eps)) (x2 / max(‖x2‖, eps))`` over ``dim``, after broadcasting."""
    r: Tensor = _tp.cosine_similarity(x1, x2, dim, eps)
    return r


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """``‖x1 - x2 + eps‖_p`` over the last dimension."""
    d = _tp.add(_tp.sub(x1, x2), eps)
    r: Tensor = _tp.linalg.vector_norm(d, p, [max(x1.ndim, x2.ndim) - 1], keepdim)
    return r


# Every function above takes part in __tensorplug_function__ with itself as ``func``, as
# torch.nn.functional's do (overrides.get_overridable_functions() lists them).
for _name in __all__:
    globals()[_name] = _overridable_function("tensorplug.nn.functional", globals()[_name])
del _name


def __getattr__(name: str) -> Any:
    """The functions of yaml entries marked ``python_module: nn`` (Note [Python modules] in
    _opset/api.py), made on first use, beside the hand-written ones above."""
    from .._opset import api as _api

    fn = _api.generated_function(name, "nn")
    if fn is None:
        raise AttributeError(f"module 'tensorplug.nn.functional' has no attribute '{name}'")
    globals()[name] = fn
    return fn


def __dir__() -> list[str]:
    from .._opset import api as _api

    return sorted({*globals(), *_api.module_function_names("nn")})
