"""``torch.lu``, which PyTorch writes in Python over ``aten::_lu_with_info`` (``torch/functional.py``):
its result has two or three tensors as ``get_infos`` says, which no schema can say.

Usage::

    LU, pivots = tp.lu(A)
    LU, pivots, infos = A.lu(get_infos=True)       # infos: nonzero where U has a zero pivot
"""

from __future__ import annotations

from typing import Any

from ..ops import ops
from ..tensor import Tensor

__all__ = ["lu"]


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> Any:
    """The LU factorization of ``A`` in LAPACK's compact form (``linalg.lu_factor``'s),
    ``(LU, pivots)`` or, with ``get_infos``, ``(LU, pivots, infos)``; without ``get_infos`` a
    singular matrix raises, as ``torch.lu``."""
    if out is not None:
        raise TypeError("tensorplug.lu: out= is not supported (torch.lu's is deprecated)")
    LU, pivots, infos = ops.aten._lu_with_info.default(A, pivot, not get_infos)
    return (LU, pivots, infos) if get_infos else (LU, pivots)
