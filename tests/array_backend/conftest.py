"""Fixtures for the tests of ``tensorplug.array_backend`` (its kernels, bound to numpy as the
CPU backend, and its ``register``): the numpy array backend, registered for the module.

When the installed tensorplug-cpu plugin already serves ``CPU``, the tests use it; otherwise
they register ``tensorplug.array_backend`` for ``CPU`` in a library of their own and close it
afterwards, so no registration outlives the module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import _backends, array_backend


class FakeRegistry:
    """The two methods of the plugin registry that array_backend.register uses."""

    plugin_name = "tests.array_backend"

    def __init__(self) -> None:
        self.libraries: list[tp.Library] = []

    def library(self, ns: str, kind: Any) -> tp.Library:
        lib = tp.Library(ns, kind, owner=self.plugin_name)
        self.libraries.append(lib)
        return lib

    def add_storage_backend(self, sb: Any) -> None:
        _backends.register(sb)


@pytest.fixture(scope="module", autouse=True)
def cpu_backend() -> Iterator[Any]:
    if "CPU" in tp.dispatcher.registrations("aten::add.Tensor"):
        yield None  # the installed plugin serves CPU
        return
    previous = _backends._by_key.get("CPU")
    backend = array_backend.register(FakeRegistry(), "CPU", np)
    try:
        yield backend
    finally:
        backend.close()
        if previous is not None:
            _backends.register(previous)


def arr(t: tp.Tensor) -> Any:
    """The numpy array behind a CPU tensor."""
    return t._data
