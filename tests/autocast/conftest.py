"""Fixtures of the autocast tests: a device type that follows PyTorch's CUDA lists without a GPU,
and a counter of the operators a block dispatches (to count casts)."""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorplug as tp


class AccelPlugin:
    """A third-party backend ``Accel`` (device type ``"accel"``) on numpy that declares CUDA's
    autocast dtypes: float16 by default, bfloat16 allowed. Regions on it run the lists PyTorch
    uses for CUDA and its other accelerators, so the CUDA policies are tested without a GPU."""

    @tp.hookimpl
    def tensorplug_add_keys(self, keys: Any) -> None:
        keys.register_backend(
            "Accel", "accel", autocast_dtype=tp.float16, autocast_dtypes=(tp.float16, tp.bfloat16)
        )

    @tp.hookimpl
    def tensorplug_register_kernels(self, registry: Any) -> None:
        import scipy.special

        tp.array_backend.register(registry, "Accel", np, special=scipy.special)


@pytest.fixture(scope="package")
def accel() -> Iterator[str]:
    """The device type ``"accel"``: registered for the tests of this package, removed afterwards."""
    tp.plugins.register(AccelPlugin(), name="test_accel")
    try:
        yield "accel"
    finally:
        tp.plugins.unregister("test_accel")


class CountPlugin:
    """A functionality key whose boxed fallback counts every operator call it sees."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()

    @tp.hookimpl
    def tensorplug_add_keys(self, keys: Any) -> None:
        keys.register_functionality("AmpTestCount", before="Batched")

    @tp.hookimpl
    def tensorplug_register_kernels(self, registry: Any) -> None:
        def count(op: Any, keyset: Any, *args: Any, **kwargs: Any) -> Any:
            self.counts[op.name] += 1
            return op.redispatch(keyset.below("AmpTestCount"), *args, **kwargs)

        registry.library("_", "IMPL").fallback(count, "AmpTestCount")


@pytest.fixture
def op_counts() -> Iterator[collections.Counter[str]]:
    """``counts[op name]``: how often each operator was called inside ``tp.dispatch.include
    ("AmpTestCount")`` blocks of the test (the fixture includes it for the whole test)."""
    plugin = CountPlugin()
    tp.plugins.register(plugin, name="test_amp_count")
    try:
        with tp.dispatch.include("AmpTestCount"):
            yield plugin.counts
    finally:
        tp.plugins.unregister("test_amp_count")
