"""``Identity``: a placeholder layer that returns its input."""

from __future__ import annotations

from typing import Any

from .module import Module

__all__ = ["Identity"]


class Identity(Module):
    """Returns its input unchanged (the same object). The constructor accepts and ignores any
    arguments, so that ``Identity`` can stand in for a layer without changing the call that
    builds it: ``norm = nn.LayerNorm(d) if use_norm else nn.Identity(d)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input
