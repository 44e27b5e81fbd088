"""Skips for tests that need a plugin (``pytest.importorskip`` alone sees only whether it is
installed, not whether ``TENSORPLUG_PLUGINS`` left it out of this process), and
:func:`unloaded` for tests of what happens without one, so they run wherever it is installed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

import tensorplug as tp

HAS_AUTOGRAD = "autograd" in tp.plugins.loaded_names()
_WHY = "needs the tensorplug-autograd plugin loaded (installed, and not left out by TENSORPLUG_PLUGINS)"
needs_autograd = pytest.mark.skipif(not HAS_AUTOGRAD, reason=_WHY)  # as a test's decorator


def autograd() -> None:
    """Skip the calling module (at import) or test unless tensorplug-autograd is loaded."""
    pytest.importorskip("tensorplug_autograd")
    if not HAS_AUTOGRAD:
        pytest.skip(_WHY, allow_module_level=True)


@contextlib.contextmanager
def unloaded(name: str) -> Iterator[None]:
    """Run the block as if plugin ``name`` were not installed, whatever this environment holds:
    it is unregistered (everything it registered goes) and its record forgotten, then loaded
    again as it was, from the same module and entry point, in its place in ``plugins.list()``."""
    state = tp.plugins._state
    record = state.records.get(name)
    if record is None:
        yield
        return
    order = list(state.records)
    if record.status == "loaded":
        tp.plugins.unregister(name)
    else:
        del state.records[name]
    try:
        yield
    finally:
        if name in state.records:  # the block registered one of that name and left it
            tp.plugins.unregister(name)
        if record.status == "loaded":
            again = tp.plugins._Plugin(name, record.obj, entry_point=record.entry_point)
            state.records[name] = again
            tp.plugins._load([again], raise_errors=True)
        else:
            state.records[name] = record
        records = state.records
        state.records = {n: records[n] for n in order if n in records}
        state.records.update(records)  # any the block left behind, after


HAS_TRACER = "tracer" in tp.plugins.loaded_names()


def tracer() -> None:
    """Skip the calling module (at import) or test unless tensorplug-tracer is loaded."""
    pytest.importorskip("tensorplug_tracer")
    if not HAS_TRACER:
        pytest.skip(
            "needs the tensorplug-tracer plugin loaded (installed, and not left out by "
            "TENSORPLUG_PLUGINS)",
            allow_module_level=True,
        )
