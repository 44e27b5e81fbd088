"""Shared test helpers: a tensor-like double that follows the dispatcher's tensor protocol."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

import tensorplug as tp
from tensorplug._protocol import VersionCounter

_counter = itertools.count()


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


@pytest.fixture
def ns() -> str:
    """A namespace no other test uses."""
    return f"t{next(_counter)}"


@pytest.fixture
def backend() -> Iterator[tp.keys.DispatchKey]:
    """A third-party backend key registered for one test, removed afterwards."""
    # one fixed name: a key registered again gets its old bit back (Note [Bits and priority])
    name = "TestBackend"
    key = tp.keys.register_backend(name, "testdev", owner="tests")
    try:
        yield key
    finally:
        tp.keys.unregister(name)
