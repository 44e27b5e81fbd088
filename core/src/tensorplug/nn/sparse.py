"""``Embedding``: a lookup table of vectors indexed by integers."""

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

__all__ = ["Embedding"]

_tp: Any = tensorplug


class Embedding(Module):
    """``num_embeddings`` vectors of size ``embedding_dim``, drawn from N(0, 1).

    The row ``padding_idx`` (if given; negative counts from the end) starts at zero and gets
    no gradient, so it stays what it is set to.
    """

    weight: Parameter

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 device: Any = None, dtype: _dtypes.dtype | None = None) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"Embedding: padding_idx must be within num_embeddings ({num_embeddings}), "
                    f"got {padding_idx}"
                )
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.weight = Parameter(_tp.empty([num_embeddings, embedding_dim], dtype=dtype,
                                          device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                ops.aten.fill_.Scalar(ops.aten.select.int(self.weight, 0, self.padding_idx), 0)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        return s if self.padding_idx is None else f"{s}, padding_idx={self.padding_idx}"
