"""The tensor protocol the dispatcher relies on (internal).

Note [Tensor protocol]
~~~~~~~~~~~~~~~~~~~~~~
The dispatcher never imports the Tensor class. An object is a tensor for dispatch purposes when
its *type* has the attribute ``_tp_keyset`` (a slot or class attribute): an ``int`` bitmask of
the dispatch keys the tensor carries (DESIGN §3). A tensor also carries ``_tp_version``, a
:class:`VersionCounter` shared with all its views, which the dispatcher bumps for arguments the
schema marks as written ``(a!)``. Test doubles follow the same protocol, so the core can be
tested without any backend installed.
"""

from __future__ import annotations

from typing import Any


class VersionCounter:
    """A mutable counter shared by a tensor and its views."""

    __slots__ = ("value",)

    def __init__(self, value: int = 0) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"VersionCounter({self.value})"


def is_tensor(x: Any) -> bool:
    """True when ``x`` follows the tensor protocol (Note [Tensor protocol])."""
    return hasattr(type(x), "_tp_keyset")
