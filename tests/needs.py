"""Skips for tests that need a plugin (``pytest.importorskip`` alone sees only whether it is
installed, not whether ``TENSORPLUG_PLUGINS`` left it out of this process), and
:func:`unloaded` for tests of what happens without one, so they run wherever it is installed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

import tensorplug as tp
import tensorplug._opset.repr

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
    again as it was, from the same module and entry point, in its place in ``plugins.list()``
    (and its key listeners and repr suffixes in their places among the other plugins')."""
    state = tp.plugins._state
    record = state.records.get(name)
    if record is None:
        yield
        return
    order = list(state.records)
    hooks = (
        tp.keys._state.listeners,
        tensorplug._opset.repr.suffix_hooks,
    )  # plugins append to these
    hook_order = [list(h) for h in hooks]
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
        for h, before in zip(hooks, hook_order, strict=True):  # its hooks back in their place
            now = list(h)
            h[:] = [f for f in before if f in now] + [f for f in now if f not in before]


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


# --- backend devices, for the device-generic tests (tests/ops/test_ops.py, autograd formulas) --

HAS_CUDA_PLUGIN = "cuda" in tp.plugins.loaded_names()
HAS_GPU = HAS_CUDA_PLUGIN and tp.cuda.is_available()  # imports CuPy where it is installed
_NO_GPU = "needs a visible NVIDIA GPU, CuPy and tensorplug-cuda (the GPU run: docs/cuda.md)"
gpu = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason=_NO_GPU)]  # a GPU test's marks


def backend_devices() -> list[tuple[str, str]]:
    """``(device, coverage)`` for every loaded backend with a device: ``cpu`` and ``cuda``
    (where a GPU is visible) run every case ("all"); third-party backends run the first sample
    of each op and dtype ("first": they share the array kit with cpu, and doubling the CPU run
    would double the suite's time), but for dask, whose own test module runs them; ``cuda``
    without a GPU is listed as "unavailable", for one skipped placeholder per test."""
    out = [("cpu", "all")]
    for info in tp.plugins.list():
        # dask runs the kit in tests/dask/test_dask_conformance.py, sampled: each of its cases
        # costs dask's graph building and computes (a tenth of a second), not the kit's
        if info.status != "loaded" or info.name in ("cpu", "cuda", "dask"):
            continue
        for name in info.keys:
            key = tp.keys.get(name)
            if key.kind is tp.keys.KeyKind.BACKEND and key.device_type is not None:
                out.append((key.device_type, "first"))
    if HAS_CUDA_PLUGIN:
        out.append(("cuda", "all" if HAS_GPU else "unavailable"))
    return out


_dtypes_seen: dict[tuple[str, str], bool] = {}


def device_has_dtype(device: str, dtype: str) -> bool:
    """Whether the backend of ``device`` stores ``dtype`` (CUDA has no bfloat16)."""
    key = (device, dtype)
    if key not in _dtypes_seen:
        try:
            tp.zeros([0], dtype=getattr(tp, dtype), device=device)
        except RuntimeError as e:
            if "is not supported by the" not in str(e):
                raise
            _dtypes_seen[key] = False
        else:
            _dtypes_seen[key] = True
    return _dtypes_seen[key]


def device_params(cases: list[Any], first_of: Any) -> list[Any]:
    """``cases`` (pytest.params) once per backend device, the device as their last value.

    ``first_of(param)`` is the group a case belongs to ("first" coverage keeps the first case
    of each group). Ids keep the CPU cases' ids; other devices append ``-<device>``. ``cuda``
    cases carry the ``gpu`` mark."""
    out: list[Any] = []
    for device, coverage in backend_devices():
        marks = gpu if device == "cuda" else []
        if coverage == "unavailable":
            n = len(cases[0].values)
            out.append(pytest.param(*([None] * n), device, marks=marks, id=f"{device}-unavailable"))
            continue
        seen: set[Any] = set()
        for p in cases:
            if coverage == "first":
                group = first_of(p)
                if group in seen:
                    continue
                seen.add(group)
            suffix = "" if device == "cpu" else f"-{device}"
            out.append(pytest.param(*p.values, device, marks=[*p.marks, *marks], id=p.id + suffix))
    return out


HAS_AUTOCAST = "autocast" in tp.plugins.loaded_names()
_WHY_AUTOCAST = "needs the tensorplug-autocast plugin loaded (installed, and not left out by TENSORPLUG_PLUGINS)"


def autocast() -> None:
    """Skip the calling module (at import) or test unless tensorplug-autocast is loaded."""
    pytest.importorskip("tensorplug_autocast")
    if not HAS_AUTOCAST:
        pytest.skip(_WHY_AUTOCAST, allow_module_level=True)
