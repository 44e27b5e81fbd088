"""Fixtures for the CUDA plugin's tests: the CuPy stand-in in CuPy's place, and skips."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

import tensorplug as tp

from . import standin_cupy

HAS_CUDA_PLUGIN = "cuda" in tp.plugins.loaded_names()


def reset_cuda_generator() -> None:
    """Forget the default CUDA generator's backend state (it holds the CuPy it was made by)."""
    g = tp.random.default_generator("cuda")
    g.manual_seed(g.initial_seed())


@pytest.fixture
def standin() -> Iterator[ModuleType]:
    """The CUDA plugin running on the CuPy stand-in with two fake devices (no GPU needed).

    The plugin's lazy backend is unloaded before and after, so the stand-in never outlives the
    test; skipped where a real GPU is visible (it would hide the GPU) or the plugin is absent.
    """
    if not HAS_CUDA_PLUGIN:
        pytest.skip("needs the tensorplug-cuda plugin loaded")
    import tensorplug_cuda
    from tensorplug_cuda import loader

    if tp.cuda.is_available():
        pytest.skip("a real GPU is visible: these tests use the CuPy stand-in instead")
    lazy = tensorplug_cuda.LAZY
    assert lazy is not None
    cp = standin_cupy.make(devices=2)
    lazy.unload()
    reset_cuda_generator()
    try:
        with loader.substitute(cp):
            yield cp
            lazy.unload()
    finally:
        lazy.unload()
        reset_cuda_generator()
