"""Batch normalization modules, torch.nn's: ``BatchNorm1d/2d/3d`` and ``SyncBatchNorm``, with
PyTorch's arguments, parameters (``weight``, ``bias``), buffers (``running_mean``,
``running_var``, ``num_batches_tracked``), ``extra_repr`` and momentum rules: ``momentum=None``
keeps a cumulative average (the factor ``1 / num_batches_tracked``).

``LazyBatchNorm1d/2d/3d`` take ``num_features`` from their first input (dim 1) and then
become the ``BatchNorm`` they stand for (nn/lazy.py).

Usage::

    bn = nn.BatchNorm2d(64)
    y = bn(x)                   # training: the batch's statistics, running ones updated
    bn.eval(); y = bn(x)        # evaluation: the running statistics
    list(bn.state_dict())       # weight, bias, running_mean, running_var, num_batches_tracked
"""

from __future__ import annotations

from typing import Any

import tensorplug

from .. import dtypes as _dtypes
from ..tensor import Tensor
from . import functional as F
from ._autograd import no_grad
from .lazy import LazyModuleMixin, UninitializedBuffer, UninitializedParameter
from .module import Module
from .parameter import Parameter

__all__ = [
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "SyncBatchNorm",
]  # fmt: skip

_tp: Any = tensorplug


class _NormBase(Module):
    """What batch and instance norm share: parameters, buffers and their reset."""

    weight: Parameter | None
    bias: Parameter | None
    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: _dtypes.dtype | None = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        kw = {"device": device, "dtype": dtype}
        if affine:
            self.weight = Parameter(_tp.empty(num_features, **kw))
            if bias:
                self.bias = Parameter(_tp.empty(num_features, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _tp.zeros(num_features, **kw))
            self.register_buffer("running_var", _tp.ones(num_features, **kw))
            self.register_buffer(
                "num_batches_tracked", _tp.tensor(0, dtype=_dtypes.int64, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            assert self.running_mean is not None and self.running_var is not None
            assert self.num_batches_tracked is not None
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            assert self.weight is not None
            with no_grad():
                self.weight.fill_(1.0)
                if self.bias is not None:
                    self.bias.zero_()

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        # the batch's statistics in training, and in evaluation when there are no running ones
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        # running statistics are passed where they are updated (training, tracked) or read
        tracked = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if tracked else None,
            self.running_var if tracked else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization of ``(N, C)`` or ``(N, C, L)`` inputs, per channel ``C``."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of ``(N, C, H, W)`` inputs, per channel ``C``."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization of ``(N, C, D, H, W)`` inputs, per channel ``C``."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class SyncBatchNorm(_BatchNorm):
    """torch's ``SyncBatchNorm`` takes its training statistics over every process of a
    distributed group. tensorplug has no distributed backend, so in training (where the
    statistics would be synchronized) it raises; in evaluation it is batch norm with the
    running statistics (which are the same on every process). Construction, ``state_dict``
    and loading take torch's arguments and keys, so a checkpoint can be read."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device: Any = None,
        dtype: _dtypes.dtype | None = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)  # fmt: skip
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        if self.training:
            raise RuntimeError(
                "SyncBatchNorm needs a distributed backend (torch.distributed's process "
                "groups) to share batch statistics across processes in training, and "
                "tensorplug has none. Use BatchNorm1d/2d/3d (statistics of the local batch) "
                "or call .eval() to normalize with the running statistics."
            )
        return super().forward(input)


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """torch's ``_LazyNormBase``: parameters and running statistics uninitialized until the
    first input gives ``num_features`` (its dim 1); shared by the lazy batch and instance
    norms (instancenorm.py)."""

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: _dtypes.dtype | None = None,
        *,
        bias: bool = True,
    ) -> None:
        # num_features 0, nothing made: the uninitialized ones take their places below
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=bias)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _tp.tensor(0, dtype=_dtypes.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            self.num_features = int(input.shape[1])
            with no_grad():
                for name in ("weight", "bias", "running_mean", "running_var"):
                    t = getattr(self, name)
                    if t is not None:
                        t.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A ``BatchNorm1d`` whose ``num_features`` is its first input's size in dim 1."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A ``BatchNorm2d`` whose ``num_features`` is its first input's size in dim 1."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A ``BatchNorm3d`` whose ``num_features`` is its first input's size in dim 1."""

    cls_to_become = BatchNorm3d
