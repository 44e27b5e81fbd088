"""``Flatten`` and ``Unflatten``: modules that merge dimensions into one, or split one up.

``Flatten`` returns a view where the layout allows it (``tp.flatten``), ``Unflatten`` always
(``tp.unflatten``), as PyTorch's do.

Usage::

    nn.Flatten()(tp.zeros(32, 1, 28, 28)).shape                 # (32, 784)
    nn.Unflatten(1, (1, 28, 28))(tp.zeros(32, 784)).shape       # (32, 1, 28, 28)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorplug

from ..tensor import Tensor
from .module import Module

__all__ = ["Flatten", "Unflatten"]

_tp: Any = tensorplug  # the generated functions are invisible to the type checker


class Flatten(Module):
    """Merge dimensions ``start_dim`` to ``end_dim`` (both included) into one; the default
    keeps the first (batch) dimension and flattens the rest."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        r: Tensor = _tp.flatten(input, self.start_dim, self.end_dim)
        return r

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (a tuple or list of ints whose product
    is that dimension's size; one entry may be -1, inferred)."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if not isinstance(unflattened_size, tuple | list):
            raise TypeError(
                "Unflatten: unflattened_size must be a tuple or list of ints, but is a "
                f"{type(unflattened_size).__name__}"
            )
        for i, size in enumerate(unflattened_size):
            if not isinstance(size, int) or isinstance(size, bool):
                raise TypeError(
                    "Unflatten: unflattened_size must be a tuple or list of ints, but element "
                    f"{i} is a {type(size).__name__}"
                )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        r: Tensor = _tp.unflatten(input, self.dim, list(self.unflattened_size))  # as PyTorch's
        return r

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
