"""``Embedding``: a lookup table of vectors indexed by integers; ``EmbeddingBag``: sums,
means or maxima over bags of its rows."""

from __future__ import annotations

from typing import Any

import tensorplug

from .. import dtypes as _dtypes
from ..ops import ops
from ..tensor import Tensor
from . import functional as F
from . import init
from ._autograd import no_grad
from .module import Module
from .parameter import Parameter

__all__ = ["Embedding", "EmbeddingBag"]

_tp: Any = tensorplug


class Embedding(Module):
    """``num_embeddings`` vectors of size ``embedding_dim``, drawn from N(0, 1).

    The row ``padding_idx`` (if given; negative counts from the end) starts at zero and gets
    no gradient, so it stays what it is set to. With ``max_norm``, each row looked up is first
    rescaled in place to a ``norm_type``-norm of at most ``max_norm``; with
    ``scale_grad_by_freq``, each row's gradient is divided by how often its index occurs in the
    batch. ``_weight`` (the table itself, shared, not copied) and ``_freeze`` are what
    :meth:`from_pretrained` passes. ``sparse=True`` is refused: there are no sparse tensors.
    """

    weight: Parameter

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: _dtypes.dtype | None = None,
    ) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"Embedding: padding_idx must be within num_embeddings ({num_embeddings}), "
                    f"got {padding_idx}"
                )
            if padding_idx < 0:
                padding_idx += num_embeddings
        _refuse_sparse(sparse)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(
                _tp.empty([num_embeddings, embedding_dim], dtype=dtype, device=device),
                requires_grad=not _freeze,
            )
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise ValueError(
                    f"Embedding: the shape of _weight, {list(_weight.shape)}, does not match "
                    f"num_embeddings and embedding_dim ({num_embeddings}, {embedding_dim})"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                ops.aten.fill_.Scalar(ops.aten.select.int(self.weight, 0, self.padding_idx), 0)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose table is the 2-d ``embeddings`` (shared, not copied); with
        ``freeze`` (the default) it gets no gradient. The padding row is left as it is."""
        if embeddings.ndim != 2:
            raise ValueError(
                "Embedding.from_pretrained: embeddings are expected to be 2-dimensional, got "
                f"shape {list(embeddings.shape)}"
            )
        rows, cols = embeddings.shape
        return cls(
            rows,
            cols,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight=embeddings,
            _freeze=freeze,
        )


class EmbeddingBag(Module):
    """``num_embeddings`` vectors of size ``embedding_dim``, drawn from N(0, 1), reduced over
    bags of indices by ``mode`` (``"sum"``, ``"mean"`` or ``"max"``) without materializing the
    rows of each bag as a user-visible tensor (:func:`F.embedding_bag`). The row
    ``padding_idx`` starts at zero, is left out of every bag and gets no gradient."""

    weight: Parameter

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _refuse_sparse(sparse)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"EmbeddingBag: padding_idx must be within num_embeddings ({num_embeddings}), "
                    f"got {padding_idx}"
                )
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(
                _tp.empty([num_embeddings, embedding_dim], dtype=dtype, device=device)
            )
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise ValueError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                ops.aten.fill_.Scalar(ops.aten.select.int(self.weight, 0, self.padding_idx), 0)

    def forward(
        self, input: Tensor, offsets: Tensor | None = None, per_sample_weights: Tensor | None = None
    ) -> Tensor:
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An EmbeddingBag whose table is the 2-d ``embeddings`` (shared, not copied); with
        ``freeze`` (the default) it gets no gradient."""
        if embeddings.ndim != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            rows,
            cols,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            mode,
            sparse,
            embeddings,
            include_last_offset,
            padding_idx,
        )
        bag.weight.requires_grad_(not freeze)
        return bag


def _refuse_sparse(sparse: bool) -> None:
    if sparse:
        raise NotImplementedError(
            "Embedding: sparse=True asks for sparse gradients, but tensorplug has no sparse "
            "tensors; use sparse=False (dense gradients)"
        )
