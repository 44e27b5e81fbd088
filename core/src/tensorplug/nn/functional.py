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

import math
import warnings
from collections.abc import Sequence
from typing import Any

import tensorplug

from .. import dtypes as _dtypes
from .._op_errors import torch_name
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
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "affine_grid",
    "alpha_dropout",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "channel_shuffle",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_similarity",
    "cross_entropy",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu",
    "embedding",
    "feature_alpha_dropout",
    "fold",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "embedding_bag",
    "gelu",
    "glu",
    "grid_sample",
    "group_norm",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "huber_loss",
    "instance_norm",
    "interpolate",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "local_response_norm",
    "log_softmax",
    "logsigmoid",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "mish",
    "mse_loss",
    "multi_head_attention_forward",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "pixel_shuffle",
    "pixel_unshuffle",
    "prelu",
    "relu",
    "relu6",
    "rms_norm",
    "rrelu",
    "selu",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
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
    if not input.dtype.is_floating_point:  # PyTorch has no integer elu
        raise NotImplementedError(
            f"elu: \"elu_cpu\" not implemented for '{torch_name(input.dtype)}'"
        )
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


# --- pooling ----------------------------------------------------------------------------------
# torch.nn.functional's pooling functions: Python arguments (ints or tuples, stride=None for
# the kernel size, return_indices) over the pooling operators (tp.max_pool2d,
# F.max_pool2d_with_indices, ...; the kit's _nn/_pooling.py).


def _tuple_arg(value: Any, n: int) -> list[int]:
    if isinstance(value, int):
        return [value] * n
    return [int(v) for v in value]


def _stride_arg(stride: Any, n: int) -> list[int]:
    return [] if stride is None else _tuple_arg(stride, n)


def _max_pool(n: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any,
              dilation: Any, ceil_mode: bool, return_indices: bool) -> Any:  # fmt: skip
    k, s = _tuple_arg(kernel_size, n), _stride_arg(stride, n)
    p, d = _tuple_arg(padding, n), _tuple_arg(dilation, n)
    aten = ops.aten
    if not return_indices:  # torch.max_pool{n}d, as torch's F calls (autocast lists it)
        op = (aten.max_pool1d, aten.max_pool2d, aten.max_pool3d)[n - 1]
        return op.default(input, k, s, p, d, ceil_mode)
    if n == 1:
        pair = aten.max_pool1d_with_indices.default(input, k, s, p, d, ceil_mode)
    elif n == 2:
        pair = aten.max_pool2d_with_indices.default(input, k, s, p, d, ceil_mode)
    else:
        pair = aten.max_pool3d_with_indices.default(input, k, s, p, d, ceil_mode)
    return tuple(pair)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:  # fmt: skip
    """The largest element of each window along the last dimension (and its index with
    ``return_indices``); ``stride`` defaults to ``kernel_size``."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:  # fmt: skip
    """2-d max pooling over ``(N, C, H, W)`` or ``(C, H, W)``; indices are flat positions in
    each ``H x W`` plane (what ``max_unpool2d`` reads)."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:  # fmt: skip
    """3-d max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> Any:  # fmt: skip
    """``max_pool1d`` with ``return_indices=True``."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> Any:  # fmt: skip
    """``max_pool2d`` with ``return_indices=True``."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> Any:  # fmt: skip
    """``max_pool3d`` with ``return_indices=True``."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _unpool_output_size(input: Tensor, kernel_size: list[int], stride: list[int],
                        padding: list[int], output_size: Any) -> list[int]:  # fmt: skip
    """torch's ``_unpool_output_size``: the size max pooling came from, or ``output_size``
    (with or without its leading N, C) when it is one of the sizes that pool to the input."""
    n = len(kernel_size)
    shape = input.shape
    default = [(shape[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        return default
    sizes = [int(v) for v in output_size]
    if len(sizes) == n + 2:
        sizes = sizes[2:]
    if len(sizes) != n:
        raise ValueError(
            f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
            f"length of '{len(sizes)}'"
        )
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < sizes[d] < hi:
            raise ValueError(
                f'invalid output_size "{sizes}" (dim {d} must be between {lo} and {hi})'
            )
    return sizes


def _max_unpool(n: int, input: Tensor, indices: Tensor, kernel_size: Any, stride: Any,
                padding: Any, output_size: Any) -> Tensor:  # fmt: skip
    k = _tuple_arg(kernel_size, n)
    s = k if stride is None else _tuple_arg(stride, n)
    p = _tuple_arg(padding, n)
    size = _unpool_output_size(input, k, s, p, output_size)
    aten = ops.aten
    r: Tensor
    if n == 1:
        r = aten.max_unpool2d.default(
            aten.unsqueeze.default(input, -1), aten.unsqueeze.default(indices, -1), [*size, 1]
        )
        return aten.squeeze.dim(r, -1)  # type: ignore[no-any-return]
    if n == 2:
        r = aten.max_unpool2d.default(input, indices, size)
    else:
        r = aten.max_unpool3d.default(input, indices, size, s, p)
    return r


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:  # fmt: skip
    """The inverse of ``max_pool1d``: each value put back at its index, zeros elsewhere."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:  # fmt: skip
    """The inverse of ``max_pool2d``: each value put back at its index, zeros elsewhere."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:  # fmt: skip
    """The inverse of ``max_pool3d``: each value put back at its index, zeros elsewhere."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:  # fmt: skip
    """The mean of each window along the last dimension."""
    r: Tensor = ops.aten.avg_pool1d.default(
        input, _tuple_arg(kernel_size, 1), _stride_arg(stride, 1), _tuple_arg(padding, 1),
        ceil_mode, count_include_pad,
    )  # fmt: skip
    return r


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:  # fmt: skip
    """The mean of each window; ``count_include_pad=False`` leaves padding out of the count,
    ``divisor_override`` replaces the count."""
    r: Tensor = ops.aten.avg_pool2d.default(
        input, _tuple_arg(kernel_size, 2), _stride_arg(stride, 2), _tuple_arg(padding, 2),
        ceil_mode, count_include_pad, divisor_override,
    )  # fmt: skip
    return r


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:  # fmt: skip
    """3-d average pooling (as ``avg_pool2d``)."""
    r: Tensor = ops.aten.avg_pool3d.default(
        input, _tuple_arg(kernel_size, 3), _stride_arg(stride, 3), _tuple_arg(padding, 3),
        ceil_mode, count_include_pad, divisor_override,
    )  # fmt: skip
    return r


def _adaptive_size(input: Tensor, output_size: Any, n: int) -> list[int]:
    """``output_size`` as ``n`` ints; ``None`` entries keep the input's size (torch's
    ``_list_with_default``)."""
    if isinstance(output_size, int):
        return [output_size] * n
    sizes = list(output_size)
    if len(sizes) == 1 and n > 1:
        sizes = sizes * n
    if len(sizes) != n:
        return [int(v) for v in sizes]  # the operator reports the length
    return [input.shape[-n + i] if v is None else int(v) for i, v in enumerate(sizes)]


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to ``output_size`` positions, each window an even share of the input."""
    r: Tensor = ops.aten.adaptive_avg_pool1d.default(input, _adaptive_size(input, output_size, 1))
    return r


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to an ``output_size`` grid (``None`` keeps that dimension's size)."""
    r: Tensor = ops.aten.adaptive_avg_pool2d.default(input, _adaptive_size(input, output_size, 2))
    return r


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """3-d adaptive average pooling (as ``adaptive_avg_pool2d``)."""
    r: Tensor = ops.aten.adaptive_avg_pool3d.default(input, _adaptive_size(input, output_size, 3))
    return r


def _adaptive_max(n: int, input: Tensor, output_size: Any, return_indices: bool) -> Any:
    size = _adaptive_size(input, output_size, n)
    aten = ops.aten
    if n == 1:
        pair = aten.adaptive_max_pool1d.default(input, size)
    elif n == 2:
        pair = aten.adaptive_max_pool2d.default(input, size)
    else:
        pair = aten.adaptive_max_pool3d.default(input, size)
    return tuple(pair) if return_indices else pair[0]


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to ``output_size`` positions (and the indices with ``return_indices``)."""
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to an ``output_size`` grid (and the indices with ``return_indices``)."""
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """3-d adaptive max pooling (as ``adaptive_max_pool2d``)."""
    return _adaptive_max(3, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> Any:  # fmt: skip
    return _adaptive_max(1, input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> Any:  # fmt: skip
    return _adaptive_max(2, input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> Any:  # fmt: skip
    return _adaptive_max(3, input, output_size, True)


# --- fractional max pooling ---
# torch.nn.functional's: output_size or output_ratio, random samples drawn with tp.rand (one
# per plane and spatial dimension, in the input's dtype) unless _random_samples gives them.


def _fractional_max(n: int, input: Tensor, kernel_size: Any, output_size: Any,
                    output_ratio: Any, return_indices: bool, _random_samples: Any) -> Any:  # fmt: skip
    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        # len() of a bare float raises TypeError, as torch's function does (its module passes
        # a tuple)
        if len(output_ratio) > n:
            raise ValueError(
                f"{name} requires output_ratio to either be a single Int or tuple of Ints."
            )
        ratio = tuple(output_ratio) if len(output_ratio) == n else tuple(output_ratio) * n
        shape = tuple(input.shape)
        output_size = [int(shape[i - n] * ratio[i]) for i in range(n)]
    if _random_samples is None:
        batch = 1 if input.dim() == n + 1 else input.size(0)
        _random_samples = tensorplug.rand(
            batch, input.size(-n - 1), n, dtype=input.dtype, device=input.device
        )
    k = _tuple_arg(kernel_size, n)
    op = ops.aten.fractional_max_pool2d if n == 2 else ops.aten.fractional_max_pool3d
    pair = op.default(input, k, _tuple_arg(output_size, n), _random_samples)
    return tuple(pair) if return_indices else pair[0]


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:  # fmt: skip
    """Max pooling over ``kernel_size`` windows at pseudo-random positions down to
    ``output_size`` (or ``output_ratio`` of the input's size); ``_random_samples`` (N, C, 2)
    in [0, 1) fixes the positions (PyTorch's interval formula: the same windows as torch)."""
    return _fractional_max(
        2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples
    )


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:  # fmt: skip
    """3-d fractional max pooling (as ``fractional_max_pool2d``; ``_random_samples`` is
    (N, C, 3))."""
    return _fractional_max(
        3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples
    )


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Any = None) -> Any:  # fmt: skip
    return _fractional_max(2, input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Any = None) -> Any:  # fmt: skip
    return _fractional_max(3, input, kernel_size, output_size, output_ratio, True, _random_samples)


def _lp_pool(n: int, input: Tensor, norm_type: float, kernel_size: Any, stride: Any,
             ceil_mode: bool) -> Tensor:  # fmt: skip
    k = _tuple_arg(kernel_size, n)
    pool = (avg_pool1d, avg_pool2d, avg_pool3d)[n - 1]
    out = pool(_tp.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    # torch's form: sign(out) * relu(|out|), times the window size, to the power 1/p
    kept = _tp.mul(_tp.sign(out), _tp.relu(_tp.abs(out)))
    r: Tensor = _tp.pow(_tp.mul(kept, math.prod(k)), 1.0 / norm_type)
    return r


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:  # fmt: skip
    """``(sum of x^p over each window)^(1/p)``: power-average pooling along the last dim."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:  # fmt: skip
    """``(sum of x^p over each window)^(1/p)`` over 2-d windows."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:  # fmt: skip
    """``(sum of x^p over each window)^(1/p)`` over 3-d windows."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# --- normalization ----------------------------------------------------------------------------


def _size_repr(input: Tensor) -> str:
    return f"torch.Size({list(input.shape)})"


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel (dim 1) by the batch's statistics (``training``, which updates
    the running statistics in place when given) or by the running ones, then scale by
    ``weight`` and shift by ``bias``."""
    if training:
        per_channel = input.numel() // input.shape[1] if input.ndim > 1 else 1
        if input.ndim > 1 and per_channel == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"{_size_repr(input)}"
            )
    r: Tensor = _tp.batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps, False
    )
    return r


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel of each sample over its own spatial elements."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(
            "Expected more than 1 spatial element when training, got input size "
            f"{_size_repr(input)}"
        )
    r: Tensor = _tp.instance_norm(
        input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False
    )
    return r


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each sample's channels in ``num_groups`` groups, then scale and shift per
    channel."""
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    r: Tensor = _tp.group_norm(input, num_groups, weight, bias, eps, False)
    return r


def rms_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """``x / sqrt(mean(x^2) + eps) * weight`` over the last dimensions; ``eps=None`` is the
    machine epsilon of the input's dtype (float32's for half precision)."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    r: Tensor = _tp.rms_norm(input, shape, weight, eps)
    return r


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """``x / (k + alpha * mean of x^2 over size neighbouring channels)^beta`` (AlexNet's),
    as torch's composition of ``avg_pool``."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(
            "Expected 3D or higher dimensionality                          input (got "
            f"{dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    div = _tp.mul(input, input)
    if dim == 3:
        div = pad(_tp.unsqueeze(div, 1), (0, 0, size // 2, (size - 1) // 2))
        div = _tp.squeeze(avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        sizes = list(input.shape)
        div = _tp.reshape(div, [sizes[0], 1, sizes[1], sizes[2], -1])
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = _tp.reshape(_tp.squeeze(avg_pool3d(div, (size, 1, 1), stride=1), 1), sizes)
    div = _tp.pow(_tp.add(_tp.mul(div, alpha), k), beta)
    r: Tensor = _tp.div(input, div)
    return r


# --- feature and alpha dropout ------------------------------------------------------------------


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                     alpha: bool = False) -> Tensor:  # fmt: skip
    r: Tensor = (_tp.feature_alpha_dropout if alpha else _tp.feature_dropout)(input, p, training)
    return _copy_into(input, r) if inplace and r is not input else r


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` with probability ``p``, scaling the
    rest by 1/(1-p)."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    if input.ndim == 2:
        r = _tp.squeeze(_feature_dropout(_tp.unsqueeze(input, 0), p, training, False), 0)
        return _copy_into(input, r) if inplace and r is not input else r
    return _feature_dropout(input, p, training, inplace)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of ``(N, C, H, W)`` (or ``(C, H, W)``, read as torch reads it: a
    batch of 1-d channels) with probability ``p``, scaling the rest by 1/(1-p)."""
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` with probability ``p``,
    scaling the rest by 1/(1-p)."""
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    if input.ndim == 4:
        r = _tp.squeeze(_feature_dropout(_tp.unsqueeze(input, 0), p, training, False), 0)
        return _copy_into(input, r) if inplace and r is not input else r
    return _feature_dropout(input, p, training, inplace)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:  # fmt: skip
    """Dropout that keeps SELU's self-normalizing mean and variance: dropped elements take
    SELU's negative saturation value, then an affine map restores the statistics."""
    _check_p(p)
    r: Tensor = _tp.alpha_dropout(input, p, training)
    return _copy_into(input, r) if inplace and r is not input else r


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:  # fmt: skip
    """``alpha_dropout`` of whole channels."""
    _check_p(p)
    return _feature_dropout(input, p, training, inplace, alpha=True)


# --- the rest of torch.nn.functional's activations ----------------------------------------------
# Over the composite operators (tp.prelu, tp.celu, ...: composites/nn.py), or compositions here
# where torch's are Python too (softsign, tanhshrink), with torch's Python arguments.


def _maybe_inplace(input: Tensor, r: Tensor, inplace: bool) -> Tensor:
    return _copy_into(input, r) if inplace else r


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``."""
    return _maybe_inplace(input, _tp.threshold(input, threshold, value), inplace)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:  # fmt: skip
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) per element in training,
    and is their mean in evaluation."""
    return _maybe_inplace(input, _tp.rrelu(input, lower, upper, training), inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``clamp((x + 3) / 6, 0, 1)``."""
    return _maybe_inplace(input, ops.aten.hardsigmoid.default(input), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * clamp(x + 3, 0, 6) / 6`` (MobileNetV3's)."""
    return _maybe_inplace(input, ops.aten.hardswish.default(input), inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    return _maybe_inplace(input, ops.aten.mish.default(input), inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    return _maybe_inplace(input, _tp.celu(input, alpha), inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalizing constants."""
    return _maybe_inplace(input, _tp.selu(input), inplace)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)``, ``a`` and ``b`` the halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    r: Tensor = ops.aten.glu.default(input, dim)
    return r


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    r: Tensor = _tp.hardshrink(input, lambd)
    return r


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    r: Tensor = ops.aten.softshrink.default(input, lambd)
    return r


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, else ``weight * x``, ``weight`` one value or one per channel."""
    r: Tensor = _tp.prelu(input, weight)
    return r


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    r: Tensor = _tp.div(input, _tp.add(_tp.abs(input), 1))
    return r


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    r: Tensor = _tp.sub(input, _tp.tanh(input))
    return r


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """ShuffleNet's channel shuffle: channels ``(g, c)`` reordered as ``(c, g)``."""
    r: Tensor = _tp.channel_shuffle(input, groups)
    return r


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
