"""The ``nn`` family of the composites: the losses (mse_loss, cross_entropy, l1_loss, smooth_l1_loss,
huber_loss, kl_div, binary_cross_entropy_with_logits), the convolutions (conv1d/2d/3d, their
padding="same"/"valid" overloads and conv_transpose1d/2d/3d, over ``convolution``), dropout,
embedding, layer_norm, the resampling composites (the upsampling operators' ``.vec``
overloads, grid_sampler, affine_grid_generator) and the activations mish, softplus,
cosine_similarity."""

from __future__ import annotations

import math
import warnings
from typing import Any

from .. import dtypes as _dt
from .._op_errors import torch_name
from ..ops import ops

aten = ops.aten


# --- neural network functions ---------------------------------------------------------------

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"aten::{op}: {reduction} is not a valid value for reduction (none, mean, sum)"
        )


def mse_loss(self: Any, target: Any, reduction: str = "mean") -> Any:
    _check_reduction("mse_loss", reduction)
    diff = aten.sub.Tensor(self, target)
    sq = aten.mul.Tensor(diff, diff)
    if reduction == "mean":
        return aten.mean.default(sq)
    if reduction == "sum":
        return aten.sum.default(sq)
    return sq


def cross_entropy(
    self: Any,
    target: Any,
    weight: Any = None,
    reduction: str = "mean",
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Any:
    _check_reduction("cross_entropy_loss", reduction)
    if label_smoothing > 1.0:  # (a negative one is accepted and unused, as in PyTorch)
        raise RuntimeError(
            "aten::cross_entropy_loss: label_smoothing must be between 0.0 and 1.0. Got: "
            f"{label_smoothing:g}"
        )
    class_dim = 0 if self.ndim == 1 else 1
    # PyTorch's rule: a target shaped like the input holds class probabilities, any other
    # holds class indices (nll_loss checks those, with its messages)
    probabilities = tuple(target.shape) == tuple(self.shape)
    if probabilities and not target.dtype.is_floating_point:
        raise RuntimeError(
            "aten::cross_entropy_loss: Expected floating point type for target with class "
            f"probabilities, got {torch_name(target.dtype)}"
        )
    logp = aten.log_softmax.int(self, class_dim)
    if probabilities:
        if label_smoothing > 0:
            n = self.shape[class_dim]
            target = aten.add.Scalar(
                aten.mul.Scalar(target, 1 - label_smoothing), label_smoothing / n
            )
        w = (
            logp
            if weight is None
            else aten.mul.Tensor(logp, _class_shaped(weight, self.ndim, class_dim))
        )
        loss = aten.neg.default(aten.sum.dim_IntList(aten.mul.Tensor(w, target), [class_dim]))
        if reduction == "mean":
            n = loss.numel() if loss.ndim else 1
            return aten.div.Scalar(aten.sum.default(loss), n)
        return aten.sum.default(loss) if reduction == "sum" else loss
    nll = aten.nll_loss.default(logp, target, weight, reduction, ignore_index)
    if label_smoothing <= 0:
        return nll
    # smoothing term: mean over classes of -log p, weighted like torch
    n = self.shape[class_dim]
    w = (
        logp
        if weight is None
        else aten.mul.Tensor(logp, _class_shaped(weight, self.ndim, class_dim))
    )
    smooth = aten.neg.default(aten.sum.dim_IntList(w, [class_dim]))
    keep = aten.ne.Scalar(target, ignore_index)
    smooth = aten.where.ScalarOther(keep, smooth, 0.0)
    if reduction == "mean":
        if weight is None:
            denom: Any = aten.sum.default(keep)
        else:
            safe = aten.where.ScalarOther(keep, target, 0)
            denom = aten.sum.default(
                aten.where.ScalarOther(keep, aten.index.Tensor(weight, [safe]), 0.0)
            )
        smooth = aten.div.Tensor(aten.sum.default(smooth), denom)
    elif reduction == "sum":
        smooth = aten.sum.default(smooth)
    return aten.add.Tensor(
        aten.mul.Scalar(nll, 1 - label_smoothing), aten.mul.Scalar(smooth, label_smoothing / n)
    )


def cross_entropy_loss_backward(
    grad_output: Any, log_probs: Any, target: Any, reduction: str = "mean", ignore_index: int = -100
) -> Any:
    """``tensorplug::cross_entropy_loss_backward`` (Note [tensorplug operators] in _opset/own_ops.py):
    the two backward operators of ``cross_entropy``'s parts."""
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"tensorplug::cross_entropy_loss_backward: {reduction} is not a valid value for "
            "reduction (none, mean, sum)"
        )
    if log_probs.ndim not in (1, 2):
        raise RuntimeError(
            "tensorplug::cross_entropy_loss_backward: log_probs must be 1-D (classes) or 2-D "
            f"(batch, classes), got {log_probs.ndim}-D"
        )
    g = aten.nll_loss_backward.default(
        grad_output, log_probs, target, None, reduction, ignore_index
    )
    dim = 0 if log_probs.ndim == 1 else 1
    return aten._log_softmax_backward_data.default(g, log_probs, dim, log_probs.dtype)


def _class_shaped(weight: Any, ndim: int, class_dim: int) -> Any:
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return aten.reshape.default(weight, shape)


# --- convolution ----------------------------------------------------------------------------
# PyTorch's structure: each public convolution adds the batch dimension of an unbatched input
# and calls the one ``convolution`` kernel (its backward is ``convolution_backward``).


def _conv_batchify(input: Any, k: int, name: str, op: str) -> tuple[Any, bool]:
    """``input`` with a batch dimension, and whether it had one: PyTorch's ``batchify``
    (``name`` the function in its message, ``op`` the overload raising it)."""
    n = input.ndim
    if n not in (k + 1, k + 2):
        raise RuntimeError(
            f"aten::{op}: Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to {name}, "
            f"but got input of size: {list(input.shape)}"
        )
    if n == k + 1:
        return aten.unsqueeze.default(input, 0), False
    return input, True


def _unbatch(out: Any, batched: bool) -> Any:
    return out if batched else aten.squeeze.dim(out, 0)


def _conv(name: str, k: int) -> Any:
    def conv(
        input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
        dilation: Any = 1, groups: int = 1,
    ) -> Any:  # fmt: skip
        x, batched = _conv_batchify(input, k, name, name)
        out = aten.convolution.default(
            x, weight, bias, stride, padding, dilation, False, [0] * k, groups
        )
        return _unbatch(out, batched)

    conv.__name__ = conv.__qualname__ = name
    return conv


def _conv_padding(name: str, k: int) -> Any:
    def conv(
        input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: str = "valid",
        dilation: Any = 1, groups: int = 1,
    ) -> Any:  # fmt: skip
        """PyTorch's ``_convolution_mode``: "valid" is no padding; "same" pads each side by
        half the kernel's dilated extent, the odd one out on the right (by an explicit
        ``constant_pad_nd``, as PyTorch does)."""
        op = f"{name}.padding"
        if padding == "valid":
            x, batched = _conv_batchify(input, k, name, op)
            out = aten.convolution.default(
                x, weight, bias, stride, [0] * k, dilation, False, [0] * k, groups
            )
            return _unbatch(out, batched)
        if padding != "same":
            raise RuntimeError(f"aten::{op}: Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError(
                f"aten::{op}: padding='same' is not supported for strided convolutions"
            )
        x, batched = _conv_batchify(input, k, name, op)
        dil = list(dilation) * k if len(dilation) == 1 else list(dilation)
        kernel = weight.shape[2:]
        if len(kernel) != k or len(dil) != k:  # convolution's own checks say what is wrong
            return _unbatch(
                aten.convolution.default(
                    x, weight, bias, stride, [0] * k, dilation, False, [0] * k, groups
                ),
                batched,
            )
        total = [d * (q - 1) for d, q in zip(dil, kernel, strict=True)]
        left = [t // 2 for t in total]
        extra = [t - 2 * lft for t, lft in zip(total, left, strict=True)]
        if any(extra):
            warnings.warn(
                "Using padding='same' with even kernel lengths and odd dilation may require a "
                "zero-padded copy of the input be created",
                UserWarning,
                stacklevel=2,
            )
            pad: list[int] = []
            for e in reversed(extra):  # the last dimension first
                pad += [0, e]
            x = aten.constant_pad_nd.default(x, pad, 0)
        out = aten.convolution.default(x, weight, bias, stride, left, dil, False, [0] * k, groups)
        return _unbatch(out, batched)

    conv.__name__ = conv.__qualname__ = f"{name}_padding"
    return conv


def _conv_transpose(name: str, k: int) -> Any:
    def conv_transpose(
        input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
        output_padding: Any = 0, groups: int = 1, dilation: Any = 1,
    ) -> Any:  # fmt: skip
        x, batched = _conv_batchify(input, k, name, name if k == 1 else f"{name}.input")
        out = aten.convolution.default(
            x, weight, bias, stride, padding, dilation, True, output_padding, groups
        )
        return _unbatch(out, batched)

    conv_transpose.__name__ = conv_transpose.__qualname__ = name
    return conv_transpose


conv1d = _conv("conv1d", 1)
conv2d = _conv("conv2d", 2)
conv3d = _conv("conv3d", 3)
conv1d_padding = _conv_padding("conv1d", 1)
conv2d_padding = _conv_padding("conv2d", 2)
conv3d_padding = _conv_padding("conv3d", 3)
conv_transpose1d = _conv_transpose("conv_transpose1d", 1)
conv_transpose2d = _conv_transpose("conv_transpose2d", 2)
conv_transpose3d = _conv_transpose("conv_transpose3d", 3)


# --- padding --------------------------------------------------------------------------------
# F.pad: PyTorch's ``pad``/``_pad_enum`` checks, then one operator per mode.

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(self: Any, pad: Any, mode: str = "constant", value: float | None = None) -> Any:
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dimensions: ``pad =
    (last_left, last_right, second_last_left, ...)``. ``"constant"`` pads any number of
    dimensions with ``value`` (0 by default); ``"reflect"``, ``"replicate"`` and ``"circular"``
    the last 1, 2 or 3 dimensions of an input with one or two more."""
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"aten::pad: Unrecognised padding mode {mode}")
    if len(pad) % 2 != 0:
        raise RuntimeError("aten::pad: Padding length must be divisible by 2")
    n_dims = len(pad) // 2
    if n_dims > self.ndim:
        raise RuntimeError(
            "aten::pad: Padding length should be less than or equal to two times the input "
            f"dimension but got padding length {len(pad)} and input of dimension {self.ndim}"
        )
    if mode == "constant":
        return aten.constant_pad_nd.default(self, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'aten::pad: Padding mode "{mode}" doesn\'t take in value argument')
    if not 1 <= n_dims <= 3 or self.ndim not in (n_dims + 1, n_dims + 2):
        raise NotImplementedError(
            f"aten::pad: Padding size {len(pad)} is not supported for {self.ndim}D input "
            "tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode == "circular":
        return aten._pad_circular.default(self, pad)
    op = "reflection" if mode == "reflect" else "replication"
    return getattr(aten, f"{op}_pad{n_dims}d").default(self, pad)


def _pad_circular(self: Any, pad: Any) -> Any:
    """Circular padding of the last ``len(pad) // 2`` dimensions: negative amounts crop first,
    then each side wraps around what is left (slices and ``cat``)."""
    out = self
    for i in range(len(pad) // 2):
        dim = self.ndim - 1 - i
        left, right = int(pad[2 * i]), int(pad[2 * i + 1])
        size = out.shape[dim]
        if size + left + right < 0:
            raise RuntimeError(
                f"aten::_pad_circular: The input size {size}, plus negative padding {left} and "
                f"{right} resulted in a negative output size, which is invalid. Check dimension "
                f"{dim} of your input."
            )
        start, stop = max(-left, 0), size - max(-right, 0)
        if start or stop != size:
            out = aten.narrow.default(out, dim, start, max(stop - start, 0))
        left, right, n = max(left, 0), max(right, 0), out.shape[dim]
        if not (left or right):
            continue
        if left > n or right > n:
            raise RuntimeError(
                "aten::_pad_circular: Padding value causes wrapping around more than once."
            )
        parts = []
        if left:
            parts.append(aten.narrow.default(out, dim, n - left, left))
        parts.append(out)
        if right:
            parts.append(aten.narrow.default(out, dim, 0, right))
        out = aten.cat.default(parts, dim)
    return out


def dropout(input: Any, p: float, train: bool) -> Any:
    if not 0.0 <= p <= 1.0:
        raise ValueError(
            f"aten::dropout: dropout probability has to be between 0 and 1, but got {p}"
        )
    if not train or p == 0.0:
        return input
    floating = input.dtype.is_floating_point or input.dtype.is_complex
    if p == 1.0:
        return aten.mul.Scalar(input, 0.0) if floating else aten.zeros_like.default(input)
    if not floating:
        # PyTorch scales the kept values in place: a float result into an integer tensor
        raise RuntimeError(
            f"aten::dropout: result type Float can't be cast to the desired output type "
            f"{torch_name(input.dtype)}; dropout needs a floating point input"
        )
    keep = aten.ge.Scalar(aten.rand_like.default(input), p)
    return aten.mul.Scalar(aten.where.ScalarOther(keep, input, 0.0), 1.0 / (1.0 - p))


def embedding(
    weight: Any,
    indices: Any,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Any:
    if weight.ndim != 2:
        raise RuntimeError("aten::embedding: 'weight' must be 2-D")
    if indices.dtype.is_floating_point or indices.dtype.is_complex:
        raise RuntimeError(
            f"aten::embedding: Expected tensor for argument #1 'indices' to have one of the following "
            f"scalar types: Long, Int; but got {indices.dtype} instead"
        )
    # as PyTorch's: index_select of the flat indices, whose kernel refuses an index outside
    # [0, rows) with PyTorch's "index out of range in self" (no value read into Python here, so
    # a trace keeps the lookup in its graph)
    flat = aten.reshape.default(indices, [-1])
    rows = aten.view.default(
        aten.index_select.default(weight, 0, flat), [*indices.shape, weight.shape[1]]
    )
    # PyTorch's embedding_backward skips the rows of padding_idx and, with scale_grad_by_freq,
    # divides each row's gradient by how often its index occurs in indices. As compositions
    # with the same values: where(keep, rows, rows.detach()), and d + (rows - d) / count with
    # d = rows.detach(), exact since rows - d is 0 (taken on finite values only)
    if scale_grad_by_freq:
        counts = aten.scatter_add.default(
            aten.zeros.default([weight.shape[0]], dtype=weight.dtype, device=weight.device),
            0,
            flat,
            aten.ones_like.default(flat, dtype=weight.dtype),
        )
        inverse = aten.unsqueeze.default(
            aten.pow.Tensor_Scalar(aten.index.Tensor(counts, [indices]), -1), -1
        )
        finite = aten.lt.Scalar(aten.abs.default(rows), math.inf)  # no inf - inf below
        safe = aten.where.ScalarOther(finite, rows, 0.0)
        fixed = aten.detach.default(safe)
        scaled = aten.add.Tensor(fixed, aten.mul.Tensor(aten.sub.Tensor(safe, fixed), inverse))
        rows = aten.where.self(finite, scaled, rows)
    if padding_idx >= 0:
        keep = aten.unsqueeze.default(aten.ne.Scalar(indices, padding_idx), -1)
        rows = aten.where.self(keep, rows, aten.detach.default(rows))
    return rows


# --- embedding bags ---------------------------------------------------------------------------
# Note [Embedding bags]
# ~~~~~~~~~~~~~~~~~~~~~
# embedding_bag reduces the rows of ``weight`` that ``indices`` picks over bags: bag b holds
# the indices from offsets[b] up to the next offset (the last bag up to the end, or up to the
# extra last offset with include_last_offset). As PyTorch's, without reading values into
# Python: the bag of position j is searchsorted(starts, j, right=True) - 1; the rows come from
# embedding (index_select, whose kernel refuses an index outside the table, and whose gradient
# skips padding_idx and scales by frequency); sum and mean add them into their bags with
# index_add (mean divides by the bag's count of non-padding indices, an empty bag gives 0);
# max takes the amax over a (bags, indices, dim) array of the rows masked to -inf outside the
# bag, so it costs bags x indices x dim memory (PyTorch's kernel loops instead), and an empty
# bag gives 0. The other outputs are PyTorch's CPU kernel's: offset2bag (the bag of each
# index; empty for sum without padding_idx), bag_size (the count per bag; zeros for sum),
# max_indices (for max the index of the maximal row per bag and column, 0 for an empty bag;
# for mean bag_size; for sum zeros).


def embedding_bag(
    weight: Any,
    indices: Any,
    offsets: Any,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Any = None,
    include_last_offset: bool = False,
) -> Any:
    return embedding_bag_padding_idx(
        weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
        include_last_offset, None,
    )  # fmt: skip


def embedding_bag_padding_idx(
    weight: Any,
    indices: Any,
    offsets: Any,
    scale_grad_by_freq: bool,
    mode: int,
    sparse: bool,
    per_sample_weights: Any,
    include_last_offset: bool,
    padding_idx: int | None,
) -> Any:
    name = "aten::embedding_bag"
    if weight.ndim != 2:
        raise RuntimeError(
            f"{name}: weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}"
        )
    for what, t in (("indices", indices), ("offsets", offsets)):
        if t.dtype not in (_dt.int32, _dt.int64):
            raise RuntimeError(
                f"{name}: expected {what} to have one of the following scalar types: Long, Int; "
                f"but got {torch_name(t.dtype)} instead"
            )
        if t.ndim != 1:
            raise RuntimeError(
                f"{name}: {what} has to be a 1D Tensor, but got Tensor of dimension {t.ndim}"
            )
    if mode not in (0, 1, 2):
        raise RuntimeError(f"{name}: mode has to be 0 (sum), 1 (mean) or 2 (max), got {mode}")
    if per_sample_weights is not None:
        if mode != 0:
            raise RuntimeError(
                f"{name}: per_sample_weights only supported with mode='sum' (mode 0), got mode {mode}"
            )
        if per_sample_weights.dtype is not weight.dtype:
            raise RuntimeError(
                f"{name}: expected per_sample_weights to have the dtype of weight "
                f"({torch_name(weight.dtype)}), but got {torch_name(per_sample_weights.dtype)}"
            )
        if list(per_sample_weights.shape) != list(indices.shape):
            raise RuntimeError(
                f"{name}: expected per_sample_weights.shape to be {list(indices.shape)}, but "
                f"got {list(per_sample_weights.shape)}"
            )
    rows_n, dim = weight.shape
    if padding_idx is not None and not -rows_n <= padding_idx < rows_n:
        raise RuntimeError(
            f"{name}: padding_idx must be within the number of embeddings, -{rows_n} through "
            f"{rows_n - 1}, but got {padding_idx}"
        )
    if padding_idx is not None and padding_idx < 0:
        padding_idx += rows_n
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    if bags < 0:
        raise RuntimeError(f"{name}: include_last_offset needs at least one offset")
    n = indices.shape[0]
    long_idx = (
        indices if indices.dtype is _dt.int64 else aten._to_copy.default(indices, dtype=_dt.int64)
    )
    starts = aten._to_copy.default(aten.slice.Tensor(offsets, 0, 0, bags), dtype=_dt.int64)
    positions = aten.arange.start_step(0, n, 1, dtype=_dt.int64, device=weight.device)
    offset2bag = aten.sub.Scalar(aten.searchsorted.Tensor(starts, positions, right=True), 1)
    rows = embedding(
        weight, long_idx, -1 if padding_idx is None else padding_idx, scale_grad_by_freq
    )
    if per_sample_weights is not None:
        rows = aten.mul.Tensor(rows, aten.unsqueeze.default(per_sample_weights, 1))
    keep = None if padding_idx is None else aten.ne.Scalar(long_idx, padding_idx)
    zeros_b = aten.zeros.default([bags], dtype=_dt.int64, device=weight.device)
    if mode == 0 or mode == 1:
        if keep is not None:
            rows = aten.where.ScalarOther(aten.unsqueeze.default(keep, 1), rows, 0.0)
        out = aten.index_add.default(
            aten.zeros.default([bags, dim], dtype=weight.dtype, device=weight.device),
            0, offset2bag, rows,
        )  # fmt: skip
        if mode == 0:  # PyTorch's CPU kernel returns offset2bag for sum only with padding_idx
            if padding_idx is None:
                offset2bag = aten.zeros.default([0], dtype=_dt.int64, device=weight.device)
            return out, offset2bag, zeros_b, zeros_b
    member = aten.eq.Tensor(
        aten.unsqueeze.default(offset2bag, 0),
        aten.unsqueeze.default(
            aten.arange.start_step(0, bags, 1, dtype=_dt.int64, device=weight.device), 1
        ),
    )  # (bags, n)
    if keep is not None:
        member = aten.logical_and.default(member, aten.unsqueeze.default(keep, 0))
    bag_size = aten.sum.dim_IntList(member, [1], False, dtype=_dt.int64)
    nonempty = aten.unsqueeze.default(aten.gt.Scalar(bag_size, 0), 1)
    if mode == 1:
        count = aten.clamp_min.default(aten.unsqueeze.default(bag_size, 1), 1)
        return (
            aten.div.Tensor(out, aten._to_copy.default(count, dtype=weight.dtype)),
            offset2bag,
            bag_size,
            bag_size,
        )
    masked = aten.where.self(
        aten.unsqueeze.default(member, 2),
        aten.unsqueeze.default(rows, 0),
        aten.full.default([], -math.inf, dtype=weight.dtype, device=weight.device),
    )  # (bags, n, dim)
    out = aten.where.ScalarOther(nonempty, aten.amax.default(masked, [1], False), 0.0)
    position = aten.argmax.default(masked, 1, False)  # (bags, dim): the first maximal index
    if n:
        picked = aten.index_select.default(long_idx, 0, aten.reshape.default(position, [-1]))
        position = aten.reshape.default(picked, [bags, dim])
    max_indices = aten.where.ScalarOther(nonempty, position, 0)
    return out, offset2bag, bag_size, max_indices


def layer_norm(
    input: Any,
    normalized_shape: Any,
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-05,
    cudnn_enable: bool = True,
) -> Any:
    n = len(normalized_shape)
    if n == 0:
        raise RuntimeError(
            "aten::layer_norm: Expected normalized_shape to be at least 1-dimensional, i.e., "
            "containing at least one element, but got normalized_shape = []"
        )
    if tuple(input.shape[input.ndim - n :]) != tuple(normalized_shape):
        raise RuntimeError(
            f"aten::layer_norm: Given normalized_shape={list(normalized_shape)}, expected input "
            f"with shape [*, {', '.join(map(str, normalized_shape))}], but got input of size "
            f"{list(input.shape)}"
        )
    out, _, _ = aten.native_layer_norm.default(input, normalized_shape, weight, bias, eps)
    return out


# --- resampling ---------------------------------------------------------------------------------

_NO_ISSUE = (
    " to be true, but got false.  (Could this error message be improved?  If so, please report "
    "an enhancement request to PyTorch.)"
)


def _upsample_size(
    op: str, input: Any, output_size: Any, scale_factors: Any
) -> tuple[list[int], list[Any]]:
    """PyTorch's ``compute_output_size`` for a ``.vec`` overload: the output size, and the scale
    of each spatial dim (the scale factors, or None where a size was given)."""
    n = input.ndim - 2
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError(
            f"aten::{op}.vec: Must specify exactly one of output_size and scale_factors"
        )
    if output_size is not None:
        if len(output_size) != n:
            raise RuntimeError(
                f"aten::{op}.vec: Expected static_cast<int64_t>(output_size->size()) == "
                f"spatial_dimensions{_NO_ISSUE}"
            )
        return [int(s) for s in output_size], [None] * n
    if len(scale_factors) != n:
        raise RuntimeError(
            f"aten::{op}.vec: Expected static_cast<int64_t>(scale_factors->size()) == "
            f"spatial_dimensions{_NO_ISSUE}"
        )
    sizes = [int(input.shape[i + 2] * float(scale_factors[i])) for i in range(n)]
    return sizes, [float(f) for f in scale_factors]


def _upsample_vec(op: str, aligned: bool) -> Any:
    if aligned:

        def vec_aligned(
            input: Any, output_size: Any, align_corners: bool, scale_factors: Any
        ) -> Any:
            sizes, scales = _upsample_size(op, input, output_size, scale_factors)
            return getattr(aten, op).default(input, sizes, align_corners, *scales)

        vec_aligned.__name__ = vec_aligned.__qualname__ = op.lstrip("_") + "_vec"
        return vec_aligned

    def vec(input: Any, output_size: Any, scale_factors: Any) -> Any:
        sizes, scales = _upsample_size(op, input, output_size, scale_factors)
        return getattr(aten, op).default(input, sizes, *scales)

    vec.__name__ = vec.__qualname__ = op.lstrip("_") + "_vec"
    return vec


upsample_nearest1d_vec = _upsample_vec("upsample_nearest1d", False)
upsample_nearest2d_vec = _upsample_vec("upsample_nearest2d", False)
upsample_nearest3d_vec = _upsample_vec("upsample_nearest3d", False)
upsample_nearest_exact1d_vec = _upsample_vec("_upsample_nearest_exact1d", False)
upsample_nearest_exact2d_vec = _upsample_vec("_upsample_nearest_exact2d", False)
upsample_nearest_exact3d_vec = _upsample_vec("_upsample_nearest_exact3d", False)
upsample_linear1d_vec = _upsample_vec("upsample_linear1d", True)
upsample_bilinear2d_vec = _upsample_vec("upsample_bilinear2d", True)
upsample_bilinear2d_aa_vec = _upsample_vec("_upsample_bilinear2d_aa", True)
upsample_bicubic2d_vec = _upsample_vec("upsample_bicubic2d", True)
upsample_bicubic2d_aa_vec = _upsample_vec("_upsample_bicubic2d_aa", True)
upsample_trilinear3d_vec = _upsample_vec("upsample_trilinear3d", True)


def grid_sampler(
    input: Any, grid: Any, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Any:
    if input.ndim == 4:
        return aten.grid_sampler_2d.default(
            input, grid, interpolation_mode, padding_mode, align_corners
        )
    return aten.grid_sampler_3d.default(
        input, grid, interpolation_mode, padding_mode, align_corners
    )


def _linspace_from_neg_one(theta: Any, steps: int, align_corners: bool) -> Any:
    if steps <= 1:
        return aten.zeros.default([steps], dtype=theta.dtype, device=theta.device)
    r = aten.linspace.default(-1, 1, steps, dtype=theta.dtype, device=theta.device)
    if not align_corners:
        r = aten.mul.Scalar(r, (steps - 1) / steps)
    return r


def affine_grid_generator(theta: Any, size: Any, align_corners: bool) -> Any:
    """The base grid of ``size`` (x, y[, z] in [-1, 1], then 1) times ``theta`` transposed:
    ``(N, H, W, 2)`` for a 4-d size, ``(N, D, H, W, 3)`` for a 5-d one."""
    if len(size) not in (4, 5):
        raise RuntimeError(
            "aten::affine_grid_generator: AffineGridGenerator needs 4d (spatial) or 5d "
            "(volumetric) inputs."
        )
    n, spatial = int(size[0]), [int(s) for s in size[2:]]
    k = len(spatial)
    full = [*spatial, 1]
    axes = []
    for j in range(k):  # x runs along the last spatial dim, y the one before, ...
        steps = spatial[k - 1 - j]
        line = _linspace_from_neg_one(theta, steps, align_corners)
        shape = [1] * k
        shape[k - 1 - j] = max(steps, 1)
        line = aten.reshape.default(line, [*shape, 1]) if steps >= 1 else line
        axes.append(aten.expand.default(line, full))
    axes.append(aten.ones.default(full, dtype=theta.dtype, device=theta.device))
    base = aten.cat.default(axes, -1)  # (*spatial, k + 1)
    rows = math.prod(spatial)
    base = aten.expand.default(aten.reshape.default(base, [1, rows, k + 1]), [n, rows, k + 1])
    grid = aten.bmm.default(base, aten.transpose.int(theta, 1, 2))
    return aten.reshape.default(grid, [n, *spatial, k])


# --- pooling ------------------------------------------------------------------------------
# The 1-d pooling operators are their 2-d forms over a height of 1, max_pool2d/3d the values of
# max_pool{2,3}d_with_indices, adaptive_avg_pool2d/3d a mean where the output is one element
# per plane (PyTorch's shortcut, differentiated as a mean) and _adaptive_avg_pool2d/3d else.


def _one_int(op: str, what: str, value: Any) -> list[int]:
    v = [int(x) for x in value]
    if len(v) != 1:
        raise RuntimeError(
            f"aten::{op}: {op}() argument '{what}' should contain one int (got {len(v)})"
        )
    return v


def _dims_2_to_3(op: str, self: Any) -> None:
    if self.ndim not in (2, 3):
        raise RuntimeError(
            f"aten::{op}: Expected 2 to 3 dimensions, but got {self.ndim}-dimensional tensor "
            f"for argument #1 'self' (while checking arguments for {op})"
        )


def _pool1d_args(op: str, self: Any, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any) -> tuple[list[int], list[int], list[int], list[int]]:  # fmt: skip
    _dims_2_to_3(op, self)
    k = [int(x) for x in kernel_size]
    if len(k) != 1:
        raise RuntimeError(
            f"aten::{op}: {op}() kernel_size must be an int, list of ints or tuple of ints of "
            f"size 1 but got size {len(k)}"
        )
    s = [int(x) for x in stride] or k
    p = [int(x) for x in padding]
    d = [int(x) for x in dilation]
    for what, v in (("stride", s), ("padding", p), ("dilation", d)):
        if len(v) != 1:
            raise RuntimeError(
                f"aten::{op}: {op}() {what} must be an int, list of ints or tuple of ints of "
                f"size 1 but got size {len(v)}"
            )
    if k[0] <= 0:
        raise RuntimeError(
            f"aten::{op}: {op}() kernel_size must be greater than zero, but got {k[0]}"
        )
    if s[0] <= 0:
        raise RuntimeError(f"aten::{op}: {op}() stride must be greater than zero, but got {s[0]}")
    if p[0] < 0:
        raise RuntimeError(f"aten::{op}: {op}() padding must be non-negative, but got {p[0]}")
    if p[0] > k[0] // 2:
        raise RuntimeError(
            f"aten::{op}: {op}() padding should be at most half of kernel size, but got "
            f"padding={p[0]} and kernel_size={k[0]}"
        )
    if d[0] <= 0:
        raise RuntimeError(f"aten::{op}: {op}() dilation must be greater than zero, but got {d[0]}")
    return k, s, p, d


def max_pool1d_with_indices(self: Any, kernel_size: Any, stride: Any = (), padding: Any = (0,),
                            dilation: Any = (1,), ceil_mode: bool = False) -> Any:  # fmt: skip
    k, s, p, d = _pool1d_args(
        "max_pool1d_with_indices", self, kernel_size, stride, padding, dilation
    )
    values, indices = aten.max_pool2d_with_indices.default(
        aten.unsqueeze.default(self, -2), [1, k[0]], [1, s[0]], [0, p[0]], [1, d[0]], ceil_mode
    )
    return aten.squeeze.dim(values, -2), aten.squeeze.dim(indices, -2)


def max_pool1d(self: Any, kernel_size: Any, stride: Any = (), padding: Any = (0,),
               dilation: Any = (1,), ceil_mode: bool = False) -> Any:  # fmt: skip
    k, s, p, d = _pool1d_args("max_pool1d", self, kernel_size, stride, padding, dilation)
    values, _ = aten.max_pool2d_with_indices.default(
        aten.unsqueeze.default(self, -2), [1, k[0]], [1, s[0]], [0, p[0]], [1, d[0]], ceil_mode
    )
    return aten.squeeze.dim(values, -2)


def max_pool2d(self: Any, kernel_size: Any, stride: Any = (), padding: Any = (0,),
               dilation: Any = (1,), ceil_mode: bool = False) -> Any:  # fmt: skip
    return aten.max_pool2d_with_indices.default(
        self, kernel_size, stride, padding, dilation, ceil_mode
    )[0]


def max_pool3d(self: Any, kernel_size: Any, stride: Any = (), padding: Any = (0,),
               dilation: Any = (1,), ceil_mode: bool = False) -> Any:  # fmt: skip
    return aten.max_pool3d_with_indices.default(
        self, kernel_size, stride, padding, dilation, ceil_mode
    )[0]


def avg_pool1d(self: Any, kernel_size: Any, stride: Any = (), padding: Any = (0,),
               ceil_mode: bool = False, count_include_pad: bool = True) -> Any:  # fmt: skip
    _dims_2_to_3("avg_pool1d", self)
    k = _one_int("avg_pool1d", "kernel_size", kernel_size)
    s = _one_int("avg_pool1d", "stride", stride) if len(stride) else k
    p = _one_int("avg_pool1d", "padding", padding)
    out = aten.avg_pool2d.default(
        aten.unsqueeze.default(self, -2), [1, k[0]], [1, s[0]], [0, p[0]], ceil_mode,
        count_include_pad,
    )  # fmt: skip
    return aten.squeeze.dim(out, -2)


def adaptive_avg_pool1d(self: Any, output_size: Any) -> Any:
    _dims_2_to_3("adaptive_avg_pool1d", self)
    o = _one_int("adaptive_avg_pool1d", "output_size", output_size)
    out = aten._adaptive_avg_pool2d.default(aten.unsqueeze.default(self, -2), [1, o[0]])
    return aten.squeeze.dim(out, -2)


def _adaptive_avg(op: Any, nd: int, self: Any, output_size: Any) -> Any:
    if (
        self.ndim in (nd + 1, nd + 2)
        and all(int(o) == 1 for o in output_size)
        and (len(output_size) == nd and self.numel())
    ):
        return aten.mean.dim(self, list(range(-nd, 0)), True)
    return op(self, output_size)


def adaptive_avg_pool2d(self: Any, output_size: Any) -> Any:
    return _adaptive_avg(aten._adaptive_avg_pool2d.default, 2, self, output_size)


def adaptive_avg_pool3d(self: Any, output_size: Any) -> Any:
    return _adaptive_avg(aten._adaptive_avg_pool3d.default, 3, self, output_size)


def adaptive_max_pool1d(self: Any, output_size: Any) -> Any:
    _dims_2_to_3("adaptive_max_pool1d", self)
    o = _one_int("adaptive_max_pool1d", "output_size", output_size)
    values, indices = aten.adaptive_max_pool2d.default(aten.unsqueeze.default(self, -2), [1, o[0]])
    return aten.squeeze.dim(values, -2), aten.squeeze.dim(indices, -2)


# --- normalization --------------------------------------------------------------------------
# batch_norm is native_batch_norm's output, after PyTorch's checks; instance_norm is batch_norm of
# the input with its batch folded into the channels (each sample's channels their own group),
# the running statistics averaged back over the batch; group_norm checks its arguments and
# calls native_group_norm; rms_norm is PyTorch's composite, in float32 for half precision.


def _check_channels(op: str, what: str, t: Any, c: int) -> None:
    if t is not None and t.numel() != c:
        raise RuntimeError(f"aten::{op}: {what} should contain {c} elements not {t.numel()}")


def batch_norm(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool = True,
) -> Any:
    if input.ndim < 2:
        raise IndexError(
            f"aten::batch_norm: Dimension out of range (expected to be in range of "
            f"[-{max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got 1)"
        )
    c = input.shape[1]
    for what, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):  # fmt: skip
        _check_channels("batch_norm", what, t, c)
    if not training and (running_mean is None or running_var is None):
        which = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"aten::batch_norm: {which} must be defined in evaluation mode")
    return aten.native_batch_norm.default(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )[0]


def _repeat(t: Any, n: int) -> Any:
    return None if t is None else aten.repeat.default(t, [n])


def instance_norm(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool = True,
) -> Any:
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "aten::instance_norm: Expected running_mean and running_var to be defined when "
            "use_input_stats is false"
        )
    shape = list(input.shape)
    b, c = shape[0], shape[1]
    folded = aten.reshape.default(input, [1, b * c, *shape[2:]])
    rm, rv = _repeat(running_mean, b), _repeat(running_var, b)
    out = batch_norm(
        folded, _repeat(weight, b), _repeat(bias, b), rm, rv, use_input_stats, momentum, eps
    )
    # the averaged statistics go back in training only (PyTorch copies them back in evaluation
    # too, unchanged: only its version counters move)
    for stat, repeated in ((running_mean, rm), (running_var, rv)):
        if stat is not None and use_input_stats:
            aten.copy_.default(stat, aten.mean.dim(aten.reshape.default(repeated, [b, c]), [0]))
    return aten.reshape.default(out, shape)


def group_norm(
    input: Any,
    num_groups: int,
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-05,
    cudnn_enabled: bool = True,
) -> Any:
    if input.ndim < 2:
        raise IndexError(
            "aten::group_norm: Dimension out of range (expected to be in range of "
            f"[-{max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got 1)"
        )
    shape = list(input.shape)
    n, c = shape[0], shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(
            "aten::group_norm: Expected number of channels in input to be divisible by "
            f"num_groups, but got input of shape {shape} and num_groups={num_groups}"
        )
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(
                f"aten::group_norm: Expected {what} to be a vector of size equal to the number "
                f"of channels in input, but got {what} of shape {list(t.shape)} and input of "
                f"shape {shape}"
            )
    hxw = math.prod(shape[2:])
    return aten.native_group_norm.default(input, weight, bias, n, c, hxw, num_groups, eps)[0]


def rms_norm(input: Any, normalized_shape: Any, weight: Any = None, eps: Any = None) -> Any:
    norm = [int(v) for v in normalized_shape]
    k = len(norm)
    if k == 0 or tuple(input.shape[input.ndim - k :]) != tuple(norm) or input.ndim < k:
        raise RuntimeError(
            f"aten::rms_norm: Given normalized_shape={norm}, expected input with shape "
            f"[*{', '.join(map(str, norm))}], but got input of size{list(input.shape)}"
        )
    if weight is not None and tuple(weight.shape) != tuple(norm):
        raise RuntimeError(
            "aten::rms_norm: Expected weight to be of same shape as normalized_shape, but got "
            f"weight of shape {list(weight.shape)} and normalized_shape = {norm}"
        )
    x = input
    if input.dtype in (_dt.float16, _dt.bfloat16):
        x = aten._to_copy.default(input, dtype=_dt.float32)
    if eps is None:
        eps = _dt.finfo(x.dtype).eps
    dims = list(range(input.ndim - k, input.ndim))
    ms = aten.mean.dim(aten.mul.Tensor(x, x), dims, True)
    out = aten.mul.Tensor(x, aten.rsqrt.default(aten.add.Scalar(ms, eps)))
    if out.dtype != input.dtype:
        out = aten._to_copy.default(out, dtype=input.dtype)
    if weight is not None:
        out = aten.mul.Tensor(out, weight)
    return out


# --- feature and alpha dropout ------------------------------------------------------------------
# PyTorch's _dropout_impl: a Bernoulli(1 - p) mask, per element or (feature dropout) per (N, C)
# channel, the kept values scaled by 1 / (1 - p); alpha dropout keeps the mean and variance of
# SELU's output instead (dropped values go to SELU's negative saturation, then an affine map).
# The mask is rand_like of the input (or of its first element per channel, a view), so vmap's
# randomness modes apply as for dropout.

_SELU_ALPHA_SCALED = 1.7580993408473766  # SELU's alpha * scale, PyTorch's constant


def _dropout_impl(op: str, input: Any, p: float, train: bool, feature: bool, alpha: bool) -> Any:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"aten::{op}: dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError(
            f"aten::{op}: Feature dropout requires at least 2 dimensions in the input"
        )
    if p == 1:
        return aten.mul.Scalar(input, 0.0)
    like = input
    if feature:
        for d in range(2, input.ndim):
            like = aten.slice.Tensor(like, d, 0, 1)
    keep = aten.ge.Scalar(aten.rand_like.default(like, dtype=input.dtype), p)
    noise = aten._to_copy.default(keep, dtype=input.dtype)
    if not alpha:
        return aten.mul.Tensor(input, aten.div.Scalar(noise, 1.0 - p))
    a = 1.0 / math.sqrt((_SELU_ALPHA_SCALED**2 * p + 1) * (1 - p))
    b = aten.add.Scalar(
        aten.mul.Scalar(aten.sub.Scalar(noise, 1), _SELU_ALPHA_SCALED * a),
        _SELU_ALPHA_SCALED * a * p,
    )
    return aten.add.Tensor(aten.mul.Tensor(input, aten.mul.Scalar(noise, a)), b)


def feature_dropout(input: Any, p: float, train: bool) -> Any:
    return _dropout_impl("feature_dropout", input, p, train, True, False)


def alpha_dropout(input: Any, p: float, train: bool) -> Any:
    return _dropout_impl("alpha_dropout", input, p, train, False, True)


def feature_alpha_dropout(input: Any, p: float, train: bool) -> Any:
    return _dropout_impl("feature_alpha_dropout", input, p, train, True, True)


# --- more activations --------------------------------------------------------------------------
# Each is written so that the composition's gradient is PyTorch's formula, kinks included (Note
# [Composite activations and their gradients] in nn/functional.py): ``where`` picks the branch
# whose derivative PyTorch's backward kernel uses at the kink, and a branch it discards is fed
# an input clamped into its own range.


def prelu(self: Any, weight: Any) -> Any:
    if weight.ndim > 1:
        raise RuntimeError(
            "aten::prelu: prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
            f"ndim = {weight.ndim}"
        )
    n = weight.numel()
    channels = self.shape[1] if self.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(
            "aten::prelu: Mismatch of parameter numbers and input channel size. Found parameter "
            f"numbers = {n} and channel size = {channels}."
        )
    w = weight
    if self.ndim >= 2:
        shape = [1] * self.ndim
        shape[1] = n
        w = aten.reshape.default(weight, shape)
    elif n == 1:
        w = aten.reshape.default(weight, [])
    # PyTorch's _prelu_kernel_backward: x > 0 ? g : w g; and x g for the weight where x <= 0
    return aten.where.self(aten.gt.Scalar(self, 0), self, aten.mul.Tensor(w, self))


def _elu_branch(self: Any, alpha: Any, scale: float, input_scale: float) -> Any:
    neg = aten.mul.Scalar(
        aten.expm1.default(aten.mul.Scalar(aten.clamp_max.default(self, 0), input_scale)),
        alpha * scale,
    )
    if neg.dtype != self.dtype:  # expm1 ran in float32 (autocast's CUDA list): not celu
        neg = aten._to_copy.default(neg, dtype=self.dtype)
    pos = aten.mul.Scalar(self, scale) if scale != 1 else self
    return aten.where.self(aten.gt.Scalar(self, 0), pos, neg)


def celu(self: Any, alpha: Any = 1.0) -> Any:
    if alpha == 0:
        raise RuntimeError("aten::celu: ZeroDivisionError")
    return _elu_branch(self, alpha, 1.0, 1.0 / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(self: Any) -> Any:
    return _elu_branch(self, _SELU_ALPHA, _SELU_SCALE, 1.0)


def threshold(self: Any, threshold: Any, value: Any) -> Any:
    return aten.where.self(
        aten.gt.Scalar(self, threshold), self, aten.full_like.default(self, value)
    )


def hardshrink(self: Any, lambd: Any = 0.5) -> Any:
    keep = aten.gt.Scalar(aten.abs.default(self), lambd)
    return aten.where.self(keep, self, aten.zeros_like.default(self))


def softshrink(self: Any, lambd: Any = 0.5) -> Any:
    if lambd < 0:
        raise RuntimeError(
            f"aten::softshrink: lambda must be greater or equal to 0, but found to be {lambd}."
        )
    lower = aten.where.self(
        aten.lt.Scalar(self, -lambd), aten.add.Scalar(self, lambd), aten.zeros_like.default(self)
    )
    return aten.where.self(aten.gt.Scalar(self, lambd), aten.sub.Scalar(self, lambd), lower)


def hardswish(self: Any) -> Any:
    # x * clamp(x + 3, 0, 6) / 6: clamp's gradient is 1 at its bounds, which gives PyTorch's
    # hardswish_backward at -3 and 3 ((x / 3 + 1/2) on the closed interval)
    return aten.div.Scalar(
        aten.mul.Tensor(self, aten.clamp.default(aten.add.Scalar(self, 3), 0, 6)), 6
    )


def hardsigmoid(self: Any) -> Any:
    # (x + 3) / 6 inside (-3, 3), 0 and 1 outside: gradient 1/6 inside, 0 at the ends (PyTorch)
    inside = aten.logical_and.default(aten.gt.Scalar(self, -3), aten.lt.Scalar(self, 3))
    outside = aten._to_copy.default(aten.ge.Scalar(self, 3), dtype=self.dtype)
    return aten.where.self(inside, aten.div.Scalar(aten.add.Scalar(self, 3), 6), outside)


def glu(self: Any, dim: int = -1) -> Any:
    if self.ndim == 0:
        raise RuntimeError(
            "aten::glu: glu does not support scalars because halving size must be even"
        )
    d = dim % self.ndim if -self.ndim <= dim < self.ndim else dim
    n = self.shape[d]
    if n % 2:
        raise RuntimeError(
            f"aten::glu: Halving dimension must be even, but dimension {d} is size {n}"
        )
    a, b = aten.split.Tensor(self, n // 2, d)
    return aten.mul.Tensor(a, aten.sigmoid.default(b))


def rrelu(self: Any, lower: Any = 0.125, upper: Any = 1.0 / 3.0, training: bool = False,
          generator: Any = None) -> Any:  # fmt: skip
    if not training:  # leaky_relu with the mean slope
        slope = (lower + upper) / 2
        return aten.where.self(aten.gt.Scalar(self, 0), self, aten.mul.Scalar(self, slope))
    if generator is not None:
        noise = aten.uniform_.default(
            aten.empty_like.default(self), lower, upper, generator=generator
        )
    else:
        noise = aten.add.Scalar(aten.mul.Scalar(aten.rand_like.default(self), upper - lower), lower)
    return aten.where.self(aten.gt.Scalar(self, 0), self, aten.mul.Tensor(self, noise))


def channel_shuffle(self: Any, groups: int) -> Any:
    if groups <= 0:
        raise RuntimeError(
            "aten::channel_shuffle: Number of groups to divide channels in must be positive. "
            f"Value of groups:{groups}"
        )
    if self.ndim <= 2:
        raise RuntimeError(
            "aten::channel_shuffle: channel_shuffle expects input with > 2 dims, but got input "
            f"with sizes {list(self.shape)}"
        )
    c = self.shape[1]
    if c % groups:
        raise RuntimeError(
            "aten::channel_shuffle: Number of channels must be divisible by groups. Got "
            f"{c} channels and {groups} groups."
        )
    shape = list(self.shape)
    grouped = aten.reshape.default(self, [shape[0], groups, c // groups, *shape[2:]])
    return aten.reshape.default(aten.transpose.int(grouped, 1, 2), shape)


def mish(self: Any) -> Any:
    """``x * tanh(softplus(x))``, with softplus written ``max(x, 0) + log1p(exp(-|x|))`` so
    that neither the value nor its gradient overflows for large ``|x|``."""
    softplus = aten.add.Tensor(
        aten.relu.default(self),
        aten.log1p.default(aten.exp.default(aten.neg.default(aten.abs.default(self)))),
    )
    return aten.mul.Tensor(self, aten.tanh.default(softplus))


# The losses and activations below are operators, not Python compositions in nn.functional, so
# that the autocast plugin can give them PyTorch's float32 policy (a composition would run in its
# inputs' dtype: Note [Entries PyTorch does not have] in tensorplug_autocast.policy).


def _reduced(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return aten.mean.default(loss)
    if reduction == "sum":
        return aten.sum.default(loss)
    return loss


def l1_loss(self: Any, target: Any, reduction: str = "mean") -> Any:
    _check_reduction("l1_loss", reduction)
    return _reduced(aten.abs.default(aten.sub.Tensor(self, target)), reduction)


def smooth_l1_loss(self: Any, target: Any, reduction: str = "mean", beta: float = 1.0) -> Any:
    _check_reduction("smooth_l1_loss", reduction)
    if beta < 0:
        raise RuntimeError(
            "aten::smooth_l1_loss: smooth_l1_loss does not support negative values for beta."
        )
    d = aten.sub.Tensor(self, target)
    ad = aten.abs.default(d)
    if beta == 0:
        return _reduced(ad, reduction)
    quad = aten.div.Scalar(aten.mul.Scalar(aten.mul.Tensor(d, d), 0.5), beta)
    loss = aten.where.self(aten.lt.Scalar(ad, beta), quad, aten.sub.Scalar(ad, 0.5 * beta))
    return _reduced(loss, reduction)


def huber_loss(self: Any, target: Any, reduction: str = "mean", delta: float = 1.0) -> Any:
    _check_reduction("huber_loss", reduction)
    if delta <= 0:
        raise RuntimeError(
            "aten::huber_loss: huber_loss does not support non-positive values for delta."
        )
    d = aten.sub.Tensor(self, target)
    ad = aten.abs.default(d)
    quad = aten.mul.Scalar(aten.mul.Tensor(d, d), 0.5)
    lin = aten.mul.Scalar(aten.sub.Scalar(ad, 0.5 * delta), delta)
    return _reduced(aten.where.self(aten.lt.Scalar(ad, delta), quad, lin), reduction)


def kl_div(self: Any, target: Any, reduction: str = "mean", *, log_target: bool = False) -> Any:
    _check_reduction("kl_div", reduction)
    if log_target:
        loss = aten.mul.Tensor(aten.exp.default(target), aten.sub.Tensor(target, self))
    else:
        # xlogy(t, t) - t x: 0 where t == 0; log of 1 there keeps the discarded branch's
        # gradient finite
        zero = aten.eq.Scalar(target, 0)
        safe = aten.where.self(zero, aten.ones_like.default(target), target)
        t_log_t = aten.mul.Tensor(target, aten.log.default(safe))
        t_log_t = aten.where.self(zero, aten.zeros_like.default(t_log_t), t_log_t)
        loss = aten.sub.Tensor(t_log_t, aten.mul.Tensor(target, self))
    return _reduced(loss, reduction)


def _log_sigmoid(x: Any) -> Any:
    # min(x, 0) - log1p(exp(-|x|)), finite for every finite x; min(x, 0) as (x - |x|) / 2 so
    # that the gradient at 0 is PyTorch's 1/2
    ax = aten.abs.default(x)
    return aten.sub.Tensor(
        aten.div.Scalar(aten.sub.Tensor(x, ax), 2),
        aten.log1p.default(aten.exp.default(aten.neg.default(ax))),
    )


def binary_cross_entropy_with_logits(
    self: Any, target: Any, weight: Any = None, pos_weight: Any = None, reduction: str = "mean"
) -> Any:
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    if tuple(target.shape) != tuple(self.shape):
        raise ValueError(
            f"aten::binary_cross_entropy_with_logits: Target size ({list(target.shape)}) must be "
            f"the same as input size ({list(self.shape)})"
        )
    # PyTorch's stable form: (1 - t) x - (1 + (pos_weight - 1) t) logsigmoid(x)
    log_sig = _log_sigmoid(self)
    if pos_weight is not None:
        log_sig = aten.mul.Tensor(
            log_sig, aten.add.Scalar(aten.mul.Tensor(aten.sub.Scalar(pos_weight, 1), target), 1)
        )
    loss = aten.sub.Tensor(aten.mul.Tensor(aten.rsub.Scalar(target, 1), self), log_sig)
    if weight is not None:
        loss = aten.mul.Tensor(loss, weight)
    return _reduced(loss, reduction)


def softplus(self: Any, beta: Any = 1, threshold: Any = 20) -> Any:
    # max(z, 0) + log1p(exp(-|z|)) with z = beta x cannot overflow; max(z, 0) is (z + |z|) / 2,
    # whose gradient at 0 is 1/2, so the sum's is sigmoid(0), PyTorch's
    bx = aten.mul.Scalar(self, beta)
    abx = aten.abs.default(bx)
    smooth = aten.add.Tensor(
        aten.div.Scalar(aten.add.Tensor(bx, abx), 2),
        aten.log1p.default(aten.exp.default(aten.neg.default(abx))),
    )
    return aten.where.self(aten.gt.Scalar(bx, threshold), self, aten.div.Scalar(smooth, beta))


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-08) -> Any:
    x1, x2 = aten.broadcast_tensors.default([x1, x2])
    n1 = aten.clamp_min.default(aten.linalg_vector_norm.default(x1, 2, [dim], True), eps)
    n2 = aten.clamp_min.default(aten.linalg_vector_norm.default(x2, 2, [dim], True), eps)
    return aten.sum.dim_IntList(
        aten.mul.Tensor(aten.div.Tensor(x1, n1), aten.div.Tensor(x2, n2)), [dim]
    )


# --- attention ----------------------------------------------------------------------------------


def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Any:
    """The fused kernel (Note [Fused attention] in array_backend/_nn/_attention.py), or the
    composition of public ops PyTorch calls its math path, for dropout and for a mask that
    requires grad (the fused kernel has no gradient for the mask)."""
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(
            "aten::scaled_dot_product_attention: Expected query, key, and value to all be  at "
            f"least 2 dimensional, but got query.dim: {query.ndim} key.dim: {key.ndim} and "
            f"value.dim: {value.ndim} instead."
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "aten::scaled_dot_product_attention: Expected query, key, and value to have the same "
            f"dtype, but got query.dtype: {torch_name(query.dtype)} key.dtype: "
            f"{torch_name(key.dtype)} and value.dtype: {torch_name(value.dtype)} instead."
        )
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(
            "aten::scaled_dot_product_attention: dropout probability has to be between 0 and 1, "
            f"but got {dropout_p}"
        )
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise RuntimeError(
                "aten::scaled_dot_product_attention: Number of heads in key and value must "
                f"divide the number of heads in query (query {hq}, key {hk}, value {hv})"
            )
        if hk != hq:
            key = aten.repeat_interleave.self_int(key, hq // hk, -3)
        if hv != hq:
            value = aten.repeat_interleave.self_int(value, hq // hv, -3)
    if attn_mask is not None and attn_mask.dtype != _dt.bool and attn_mask.dtype != query.dtype:
        raise RuntimeError(
            "aten::scaled_dot_product_attention: Expected attn_mask dtype to be bool or float or "
            f"to match query dtype, but got attn_mask.dtype: {torch_name(attn_mask.dtype)} and "
            f"query.dtype: {torch_name(query.dtype)} instead."
        )
    mask_grad = attn_mask is not None and getattr(attn_mask, "requires_grad", False)
    if dropout_p == 0.0 and not mask_grad:
        out, _ = aten._scaled_dot_product_flash_attention_for_cpu.default(
            query, key, value, 0.0, is_causal, attn_mask=attn_mask, scale=scale
        )
        return out
    return _attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale)


def _attention_math(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any,
    dropout_p: float,
    is_causal: bool,
    scale: float | None,
) -> Any:
    """Attention as public ops: the scores, the masks, a softmax that gives zero weights on a
    row every key is masked from (PyTorch's safe softmax), dropout, the weighted values."""
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = aten.mul.Scalar(aten.matmul.default(query, aten.transpose.int(key, -2, -1)), sc)
    L, S = query.shape[-2], key.shape[-2]
    if is_causal:
        ones = aten.ones.default([L, S], dtype=_dt.bool, device=query.device)
        scores = aten.masked_fill.Scalar(
            scores, aten.logical_not.default(aten.tril.default(ones)), -math.inf
        )
    if attn_mask is not None:
        if attn_mask.dtype == _dt.bool:
            scores = aten.masked_fill.Scalar(scores, aten.logical_not.default(attn_mask), -math.inf)
        else:
            scores = aten.add.Tensor(scores, attn_mask)
    weights = aten.softmax.int(scores, -1)
    masked_out = aten.eq.Scalar(aten.amax.default(scores, [-1], True), -math.inf)
    weights = aten.where.ScalarOther(aten.logical_not.default(masked_out), weights, 0.0)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return aten.matmul.default(weights, value)
