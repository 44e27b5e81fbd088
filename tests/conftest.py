"""Shared fixtures: fresh namespaces and a test backend key."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest

import tensorplug as tp

_counter = itertools.count()

if os.environ.get("TENSORPLUG_TEST_CUDA_STANDIN") == "1":
    # Opt-in (docs/cuda.md): the CuPy stand-in plays a GPU for the whole session, so the gpu
    # tests check the CUDA plugin's wiring on a machine without one. Not a GPU result.
    from tensorplug_cuda import loader
    from tests.cuda_plugin import standin_cupy

    _standin_session = loader.substitute(standin_cupy.make(devices=2))  # kept: it lasts
    _standin_session.__enter__()


@pytest.fixture
def ns() -> str:
    """A namespace no other test uses."""
    return f"t{next(_counter)}"


@pytest.fixture
def free_key() -> Iterator[str]:
    """A functionality key that no plugin serves (no kernel, no fallback), for one test."""
    name = "TestFunctionality"
    tp.keys.register_functionality(name, owner="tests")
    try:
        yield name
    finally:
        tp.keys.unregister(name)


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
