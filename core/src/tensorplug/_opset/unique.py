"""Public functions that PyTorch writes in Python over its operators (``torch/functional.py``),
for results whose kind depends on the arguments, which no schema can say: ``unique``.

Usage::

    values = tp.unique(x)
    values, inverse, counts = tp.unique(x, return_inverse=True, return_counts=True)
    rows = x.unique(dim=0)
"""

from __future__ import annotations

from typing import Any

from ..ops import ops
from ..tensor import Tensor

__all__ = ["unique"]


def unique(
    input: Tensor,
    sorted: bool = True,  # noqa: A002 - torch.unique's name
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The unique elements (``dim=None``) or slices along ``dim`` of ``input``, sorted.

    As ``torch.unique``: ``aten::_unique2`` or ``aten::unique_dim`` computes all three results;
    the tensor alone comes back, or a tuple with the inverse indices and/or counts asked for.
    """
    if dim is None:
        output, inverse, counts = ops.aten._unique2.default(
            input, sorted, return_inverse, return_counts
        )
    else:
        output, inverse, counts = ops.aten.unique_dim.default(
            input, dim, sorted, return_inverse, return_counts
        )
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output
