"""Tensor's sparse-layout and quantized-dtype methods, on a library that has neither
(internal; installed on Tensor by :func:`install`, from ``_startup``).

Note [No sparse layouts, no quantized dtypes]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
tensorplug's tensors are dense (PyTorch's strided layout) and its dtypes are not quantized.
The names PyTorch gives Tensor for those features exist so that code written for PyTorch
fails the way PyTorch fails on a backend without them, instead of with an AttributeError:

* the queries of a sparse tensor's parts (``indices()``, ``values()``, ``crow_indices()``,
  ``coalesce()``, ...) raise PyTorch's RuntimeError for a dense tensor, exactly as PyTorch
  does when handed one; ``dense_dim()``, ``sparse_dim()``, ``to_dense()`` and ``dequantize()``
  give PyTorch's answers for a dense (non-quantized) tensor;
* the conversions to a sparse layout (``to_sparse*``, ``to_mkldnn``) and the operators of
  sparse, nested and quantized tensors raise NotImplementedError naming the missing layout
  or dtype, as PyTorch does on a backend that lacks them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor import Tensor

__all__ = ["REFUSING", "install"]

# query -> the layout PyTorch's error says it expected
_LAYOUT_QUERIES = {
    "indices": "sparse coordinate",
    "values": "sparse",
    "coalesce": "sparse coordinate",
    "is_coalesced": "sparse coordinate",
    "crow_indices": "sparse row compressed",
    "col_indices": "sparse row compressed",
    "ccol_indices": "sparse column compressed",
    "row_indices": "sparse column compressed",
}


def _layout_query(name: str, layout: str) -> Callable[..., Any]:
    def query(self: Tensor) -> Any:
        raise RuntimeError(f"{name} expected {layout} tensor layout but got Strided")

    return query


def _refuse(name: str, what: str) -> Callable[..., Any]:
    def refuse(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"aten::{name}: tensorplug has no {what} (Note [No sparse layouts, no quantized "
            "dtypes]); its tensors are dense: keep the dense tensor, or use PyTorch for this"
        )

    return refuse


def _sparse_only(name: str) -> Callable[..., Any]:
    def sparse_only(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"tensor.{name}(...) can only be called on sparse tensors")

    return sparse_only


_SPARSE = "sparse layouts (torch.sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)"
_QUANTIZED = "quantized dtypes (torch.qint8, quint8, qint32) or quantized tensors"

# the names that exist only to refuse (reported apart from the working ones)
REFUSING: dict[str, Callable[..., Any]] = {
    **{n: _layout_query(n, layout) for n, layout in _LAYOUT_QUERIES.items()},
    **{
        n: _refuse(n, _SPARSE)
        for n in (
            "to_sparse",
            "to_sparse_coo",
            "to_sparse_csr",
            "to_sparse_csc",
            "to_sparse_bsr",
            "to_sparse_bsc",
            "sparse_mask",
            "sparse_resize_",
            "sparse_resize_and_clear_",
            "resize_as_sparse_",
        )
    },  # fmt: skip
    "smm": _sparse_only("sspaddmm"),  # PyTorch's smm reports the op it calls
    "sspaddmm": _sparse_only("sspaddmm"),
    "to_mkldnn": _refuse("to_mkldnn", "MKL-DNN (torch._mkldnn) layout"),
    "to_padded_tensor": _refuse("to_padded_tensor", "nested tensors (torch.nested)"),
    **{
        n: _refuse(n, _QUANTIZED)
        for n in (
            "q_scale",
            "q_zero_point",
            "q_per_channel_scales",
            "q_per_channel_zero_points",
            "q_per_channel_axis",
            "qscheme",
            "int_repr",
        )
    },  # fmt: skip
}

# PyTorch's answers for a dense, non-quantized tensor
DENSE: dict[str, Callable[..., Any]] = {
    "to_dense": lambda self, dtype=None, *, masked_grad=None: (
        self if dtype is None or dtype is self.dtype else self.to(dtype)
    ),
    "dense_dim": lambda self: self.dim(),
    "sparse_dim": lambda self: 0,
    "dequantize": lambda self: self,
}


def install() -> None:
    for name, fn in {**REFUSING, **DENSE}.items():
        fn.__name__ = name
        fn.__qualname__ = f"Tensor.{name}"
        setattr(Tensor, name, fn)
