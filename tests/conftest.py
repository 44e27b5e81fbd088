"""Shared fixtures: fresh namespaces and a test backend key."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

import tensorplug as tp

_counter = itertools.count()


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
