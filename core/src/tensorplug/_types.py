"""The types of the schema grammar: ``Tensor``, ``int[2]``, ``Tensor?``, ``Tensor?[]``.

``tensorplug.schema`` parses them and re-exports them (their public home); they live here, below
both the parser and binding (``tensorplug._binding``, which decides what values fit them), so
that neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

__all__ = ["BaseType", "ListType", "OptionalType", "Type"]


@dataclass(frozen=True)
class BaseType:
    """A named type: ``Tensor``, ``int``, ``ScalarType``, or any other identifier."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class OptionalType:
    """``T?``: a value of ``elem`` or ``None``."""

    elem: Type

    def __str__(self) -> str:
        return f"{self.elem}?"


@dataclass(frozen=True)
class ListType:
    """``T[]``, or ``T[N]`` when ``size`` is given."""

    elem: Type
    size: int | None

    def __str__(self) -> str:
        return f"{self.elem}[{'' if self.size is None else self.size}]"


Type: TypeAlias = BaseType | OptionalType | ListType
