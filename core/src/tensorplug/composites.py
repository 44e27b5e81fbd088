"""Composite kernels: operators written in terms of other operators.

native_functions.yaml names these under ``dispatch: CompositeImplicitAutograd``. They run for
every backend and, where the backend has no kernel of its own, for ``Autograd<B>`` too (DESIGN
§4 step 3), so autograd, batching and tracing see the operators they decompose into. They call
operators through ``tensorplug.ops.aten`` and never touch backend arrays.
"""

from __future__ import annotations

import math
from typing import Any

from . import dtypes as _dt
from .ops import ops
from .tensor import _wrap_dim

aten = ops.aten

__all__ = [
    "argsort",
    "argsort_stable",
    "chunk",
    "contiguous",
    "cross_entropy",
    "dropout",
    "embedding",
    "empty_like",
    "expand_as",
    "flatten",
    "full_like",
    "index_put",
    "layer_norm",
    "linear",
    "movedim",
    "movedim_int",
    "mse_loss",
    "narrow",
    "narrow_tensor",
    "norm",
    "norm_dim",
    "ones_like",
    "outer",
    "rand_like",
    "randn_like",
    "reshape_as",
    "stack",
    "std_mean",
    "std_mean_unbiased",
    "std_unbiased",
    "swapaxes",
    "t",
    "unflatten",
    "var_mean",
    "var_mean_unbiased",
    "var_unbiased",
    "view_as",
    "zero_",
    "zeros_like",
]


def linear(input: Any, weight: Any, bias: Any = None) -> Any:
    # a 2-D weight's t() is transpose(0, 1) (what t decomposes into): one dispatch fewer
    wt = aten.transpose.int(weight, 0, 1) if weight.ndim == 2 else aten.t.default(weight)
    if bias is not None and input.ndim == 2:  # one fused op (and one backward node), as torch
        return aten.addmm.default(bias, input, wt)
    out = aten.matmul.default(input, wt)
    return out if bias is None else aten.add.Tensor(out, bias)


def outer(self: Any, vec2: Any) -> Any:
    for name, x in (("self", self), ("vec2", vec2)):
        if x.ndim != 1:
            raise RuntimeError(
                f"aten::outer: outer: Expected 1-D argument {name}, but got {x.ndim}-D"
            )
    return aten.mul.Tensor(aten.reshape.default(self, [self.shape[0], 1]), vec2)


def t(self: Any) -> Any:
    nd = self.ndim
    if nd == 2:
        return aten.transpose.int(self, 0, 1)
    if nd > 2:
        raise RuntimeError(f"aten::t.default: t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return aten.view.default(self, list(self.shape))  # a view with the same shape, as torch


def flatten(self: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    shape = list(self.shape)
    if self.ndim == 0:  # the dims must still be valid for a 0-d tensor: -1 or 0
        _wrap_dim(start_dim, 0, "flatten.using_ints")
        _wrap_dim(end_dim, 0, "flatten.using_ints")
        return aten.reshape.default(self, [1])
    s = _wrap_dim(start_dim, len(shape), "flatten.using_ints")
    e = _wrap_dim(end_dim, len(shape), "flatten.using_ints")
    if s > e:
        raise RuntimeError("aten::flatten.using_ints: flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return aten.reshape.default(self, shape)
    n = 1
    for d in shape[s : e + 1]:
        n *= d
    return aten.reshape.default(self, [*shape[:s], n, *shape[e + 1 :]])


def unflatten(self: Any, dim: int, sizes: Any) -> Any:
    if self.ndim == 0:  # PyTorch wraps the dim error this way
        raise RuntimeError(
            "aten::unflatten.int: unflatten got an unexpected error:\n"
            f"Dimension specified as {dim} but tensor has no dimensions"
        )
    d = _wrap_dim(dim, self.ndim, "unflatten.int")
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("aten::unflatten.int: unflatten: sizes must be non-empty")
    shape = list(self.shape)
    known = math.prod(s for s in sizes if s != -1)
    n = shape[d]
    if (known != n) if -1 not in sizes else (n != 0 if known == 0 else n % known != 0):
        raise RuntimeError(
            f"aten::unflatten.int: unflatten: Provided sizes {sizes} don't multiply up to "
            f"the size of dim {dim} ({n}) in the input tensor"
        )
    from .array_backend._shape import infer_size  # the -1, with view's messages

    try:
        sizes = list(infer_size(sizes, n))
    except RuntimeError as e:
        raise RuntimeError(f"aten::unflatten.int: unflatten got an unexpected error:\n{e}") from e
    return aten.view.default(self, [*shape[:d], *sizes, *shape[d + 1 :]])


def view_as(self: Any, other: Any) -> Any:
    return aten.view.default(self, list(other.shape))


def reshape_as(self: Any, other: Any) -> Any:
    return aten.reshape.default(self, list(other.shape))


def expand_as(self: Any, other: Any) -> Any:
    return aten.expand.default(self, list(other.shape))


def swapaxes(self: Any, axis0: int, axis1: int) -> Any:
    return aten.transpose.int(self, axis0, axis1)


def movedim(self: Any, source: Any, destination: Any) -> Any:
    """PyTorch's movedim: the moved dims go to their destinations, the others keep their order
    in the remaining places."""
    nd = self.ndim
    if len(source) != len(destination):
        raise RuntimeError(
            f"aten::movedim.intlist: movedim: Invalid source or destination dims: source "
            f"({list(source)} dims) should contain the same number of dims as destination "
            f"({list(destination)} dims)"
        )
    src = [_wrap_dim(d, nd, "movedim.intlist") for d in source]
    dst = [_wrap_dim(d, nd, "movedim.intlist") for d in destination]
    for what, given, wrapped in (("source", source, src), ("destination", destination, dst)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(
                f"aten::movedim.intlist: movedim: repeated dim in `{what}` ({list(given)})"
            )
    if nd == 0:  # the dims were checked; nothing moves
        return aten.permute.default(self, [])
    order = [-1] * nd
    for s, d in zip(src, dst, strict=True):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in set(src))
    perm = [next(rest) if o == -1 else o for o in order]
    return aten.permute.default(self, perm)


def movedim_int(self: Any, source: int, destination: int) -> Any:
    return movedim(self, [source], [destination])


def narrow(self: Any, dim: int, start: int, length: int) -> Any:
    if self.ndim == 0:
        raise RuntimeError("aten::narrow: narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("aten::narrow: narrow(): length must be non-negative.")
    d = _wrap_dim(dim, self.ndim, "narrow")
    n = self.shape[d]
    if not -n <= start <= n:
        raise IndexError(
            f"aten::narrow: start out of range (expected to be in range of [{-n}, {n}], but got "
            f"{start})"
        )
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(
            f"aten::narrow: start ({start}) + length ({length}) exceeds dimension size ({n})."
        )
    return aten.slice.Tensor(self, d, start, start + length)


def narrow_tensor(self: Any, dim: int, start: Any, length: int) -> Any:
    if start.ndim != 0 or start.dtype.is_floating_point or start.dtype.is_complex:
        raise RuntimeError("aten::narrow.Tensor: start must be an 0-dim integral Tensor.")
    return narrow(self, dim, int(start.item()), length)


def chunk(self: Any, chunks: int, dim: int = 0) -> Any:
    if chunks <= 0:
        raise RuntimeError(f"aten::chunk: chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap_dim(dim, self.ndim, "chunk")
    size = self.shape[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        sizes = [0] * chunks
        return aten.split_with_sizes.default(self, sizes, d)
    return aten.split.Tensor(self, max(split_size, 1), d)


def stack(tensors: Any, dim: int = 0) -> Any:
    if len(tensors) == 0:
        raise RuntimeError("aten::stack: stack expects a non-empty TensorList")
    shape = tuple(tensors[0].shape)
    for i, x in enumerate(tensors):
        if tuple(x.shape) != shape:
            raise RuntimeError(
                f"aten::stack: stack expects each tensor to be equal size, but got {list(shape)} "
                f"at entry 0 and {list(x.shape)} at entry {i}"
            )
    d = _wrap_dim(dim, len(shape) + 1, "stack")
    return aten.cat.default([aten.unsqueeze.default(x, d) for x in tensors], d)


def var_unbiased(self: Any, unbiased: bool = True) -> Any:
    return aten.var.correction(self, None, correction=1 if unbiased else 0)


def std_unbiased(self: Any, unbiased: bool = True) -> Any:
    return aten.std.correction(self, None, correction=1 if unbiased else 0)


def _check_floating(name: str, overload: str, self: Any) -> None:
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(
            f"aten::{name}.{overload}: {name} only support floating point and complex dtypes"
        )


def _with_mean(
    name: str, stat: Any, self: Any, dim: Any, correction: Any, keepdim: bool
) -> tuple[Any, Any]:
    """``(stat(self), mean(self))`` over ``dim``: var_mean and std_mean."""
    _check_floating(name, "correction", self)
    return (
        stat(self, dim, correction=correction, keepdim=keepdim),
        aten.mean.dim(self, dim, keepdim),
    )


def var_mean(
    self: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Any, Any]:
    return _with_mean("var_mean", aten.var.correction, self, dim, correction, keepdim)


def var_mean_unbiased(self: Any, unbiased: bool = True) -> tuple[Any, Any]:
    return var_mean(self, None, correction=1 if unbiased else 0)


def std_mean(
    self: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Any, Any]:
    return _with_mean("std_mean", aten.std.correction, self, dim, correction, keepdim)


def std_mean_unbiased(self: Any, unbiased: bool = True) -> tuple[Any, Any]:
    return std_mean(self, None, correction=1 if unbiased else 0)


def norm(self: Any, p: Any = 2) -> Any:
    # torch.norm of a number p is linalg.vector_norm over every element
    return aten.linalg_vector_norm.default(self, p)


def norm_dim(self: Any, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Any:
    return aten.linalg_vector_norm.default(self, 2 if p is None else p, dim, keepdim)


def argsort(self: Any, dim: int = -1, descending: bool = False) -> Any:
    return aten.sort.default(self, dim, descending)[1]


def argsort_stable(self: Any, *, stable: bool, dim: int = -1, descending: bool = False) -> Any:
    return aten.sort.stable(self, stable=stable, dim=dim, descending=descending)[1]


# --- *_like factories -----------------------------------------------------------------------


def _like(self: Any, dtype: Any, device: Any) -> dict[str, Any]:
    return {"dtype": dtype or self.dtype, "device": device or self.device}


def zeros_like(self: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.zeros.default(list(self.shape), **_like(self, dtype, device))


def ones_like(self: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
              pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.ones.default(list(self.shape), **_like(self, dtype, device))


def empty_like(self: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.empty.memory_format(list(self.shape), **_like(self, dtype, device))


def full_like(self: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.full.default(list(self.shape), fill_value, **_like(self, dtype, device))


def rand_like(self: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
              pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.rand.default(list(self.shape), **_like(self, dtype, device))


def randn_like(self: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.randn.default(list(self.shape), **_like(self, dtype, device))


# --- copies ---------------------------------------------------------------------------------


def contiguous(self: Any, *, memory_format: Any = "contiguous_format") -> Any:
    data = self._data
    flags = getattr(data, "flags", None)
    if flags is not None and flags["C_CONTIGUOUS"]:
        return self
    return aten.clone.default(self)


def zero_(self: Any) -> Any:
    return aten.fill_.Scalar(self, 0)


def index_put(self: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
    return aten.index_put_.default(aten.clone.default(self), indices, values, accumulate)


# --- neural network functions ---------------------------------------------------------------

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"aten::{op}: {reduction} is not a valid value for reduction (none, mean, sum)")


def mse_loss(self: Any, target: Any, reduction: str = "mean") -> Any:
    _check_reduction("mse_loss", reduction)
    diff = aten.sub.Tensor(self, target)
    sq = aten.mul.Tensor(diff, diff)
    if reduction == "mean":
        return aten.mean.default(sq)
    if reduction == "sum":
        return aten.sum.default(sq)
    return sq


def cross_entropy(self: Any, target: Any, weight: Any = None, reduction: str = "mean",
                  ignore_index: int = -100, label_smoothing: float = 0.0) -> Any:
    _check_reduction("cross_entropy_loss", reduction)
    class_dim = 0 if self.ndim == 1 else 1
    # PyTorch's rule: a target shaped like the input holds class probabilities, any other
    # holds class indices (nll_loss checks those, with its messages)
    probabilities = tuple(target.shape) == tuple(self.shape)
    if probabilities and not target.dtype.is_floating_point:
        from .array_backend._kit import torch_name

        raise RuntimeError(
            "aten::cross_entropy_loss: Expected floating point type for target with class "
            f"probabilities, got {torch_name(target.dtype)}"
        )
    logp = aten.log_softmax.int(self, class_dim)
    if probabilities:
        if label_smoothing > 0:
            n = self.shape[class_dim]
            target = aten.add.Scalar(aten.mul.Scalar(target, 1 - label_smoothing), label_smoothing / n)
        w = logp if weight is None else aten.mul.Tensor(logp, _class_shaped(weight, self.ndim, class_dim))
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
    w = logp if weight is None else aten.mul.Tensor(logp, _class_shaped(weight, self.ndim, class_dim))
    smooth = aten.neg.default(aten.sum.dim_IntList(w, [class_dim]))
    keep = aten.ne.Scalar(target, ignore_index)
    smooth = aten.where.ScalarOther(keep, smooth, 0.0)
    if reduction == "mean":
        if weight is None:
            denom: Any = aten.sum.default(keep)
        else:
            safe = aten.where.ScalarOther(keep, target, 0)
            denom = aten.sum.default(aten.where.ScalarOther(keep, aten.index.Tensor(weight, [safe]), 0.0))
        smooth = aten.div.Tensor(aten.sum.default(smooth), denom)
    elif reduction == "sum":
        smooth = aten.sum.default(smooth)
    return aten.add.Tensor(
        aten.mul.Scalar(nll, 1 - label_smoothing), aten.mul.Scalar(smooth, label_smoothing / n)
    )


def _class_shaped(weight: Any, ndim: int, class_dim: int) -> Any:
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return aten.reshape.default(weight, shape)


def dropout(input: Any, p: float, train: bool) -> Any:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"aten::dropout: dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0.0:
        return input
    floating = input.dtype.is_floating_point or input.dtype.is_complex
    if p == 1.0:
        return aten.mul.Scalar(input, 0.0) if floating else aten.zeros_like.default(input)
    if not floating:
        # PyTorch scales the kept values in place: a float result into an integer tensor
        from .array_backend._kit import torch_name

        raise RuntimeError(
            f"aten::dropout: result type Float can't be cast to the desired output type "
            f"{torch_name(input.dtype)}; dropout needs a floating point input"
        )
    keep = aten.ge.Scalar(aten.rand_like.default(input), p)
    return aten.mul.Scalar(aten.where.ScalarOther(keep, input, 0.0), 1.0 / (1.0 - p))


def embedding(weight: Any, indices: Any, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    if weight.ndim != 2:
        raise RuntimeError("aten::embedding: 'weight' must be 2-D")
    if indices.dtype.is_floating_point or indices.dtype.is_complex:
        raise RuntimeError(
            f"aten::embedding: Expected tensor for argument #1 'indices' to have one of the following "
            f"scalar types: Long, Int; but got {indices.dtype} instead"
        )
    # index.Tensor would count negative indices from the end; PyTorch's lookup refuses them
    if indices.numel() and aten.min.default(indices).item() < 0:
        raise IndexError("aten::embedding: index out of range in self")
    rows = aten.index.Tensor(weight, [indices])
    # PyTorch's embedding_backward skips the rows of padding_idx and, with scale_grad_by_freq,
    # divides each row's gradient by how often its index occurs in indices. As compositions
    # with the same values: where(keep, rows, rows.detach()), and d + (rows - d) / count with
    # d = rows.detach(), exact since rows - d is 0 (taken on finite values only)
    if scale_grad_by_freq:
        flat = aten.reshape.default(indices, [-1])
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


def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-05, cudnn_enable: bool = True) -> Any:
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
    dims = list(range(input.ndim - n, input.ndim))
    # half precision is normalized in float32 and rounded once at the end, as PyTorch's kernel
    # does: step by step in bfloat16 the result was several ulps off
    result_dtype = input.dtype
    for t in (weight, bias):
        if t is not None:
            result_dtype = _dt.promote_types(result_dtype, t.dtype)
    x = input
    if input.dtype in (_dt.float16, _dt.bfloat16):
        x = aten._to_copy.default(input, dtype=_dt.float32)
    mean = aten.mean.dim(x, dims, True)
    centered = aten.sub.Tensor(x, mean)
    var = aten.mean.dim(aten.mul.Tensor(centered, centered), dims, True)
    out = aten.mul.Tensor(centered, aten.rsqrt.default(aten.add.Scalar(var, eps)))
    if weight is not None:
        out = aten.mul.Tensor(out, weight)
    if bias is not None:
        out = aten.add.Tensor(out, bias)
    if out.dtype != result_dtype:
        out = aten._to_copy.default(out, dtype=result_dtype)
    return out

