"""Test doubles: a tensor-like object that follows the dispatcher's tensor protocol."""

from __future__ import annotations

import tensorplug as tp
from tensorplug._protocol import VersionCounter


class FakeTensor:
    """Follows Note [Tensor protocol]: a key set and a shared version counter."""

    __slots__ = ("_tp_keyset", "_tp_version", "tag")

    def __init__(self, *keys: str, tag: str = "", version: VersionCounter | None = None) -> None:
        self._tp_keyset = int(tp.keys.keyset(*keys))
        self._tp_version = version if version is not None else VersionCounter()
        self.tag = tag

    @property
    def _version(self) -> int:
        return self._tp_version.value

    def __repr__(self) -> str:
        return f"FakeTensor({tp.keys.DispatchKeySet(self._tp_keyset)!r}, tag={self.tag!r})"
