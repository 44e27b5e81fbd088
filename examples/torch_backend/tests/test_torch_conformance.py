"""tensorplug's conformance kit on the Torch backend: every op against its numpy oracle, and the
gradients against the CPU's. Skipped where torch is not importable (tensorplug's CI has none).

Installed (``pip install -e examples/torch_backend``), the plugin loads from its entry point and
the two lines of every backend's suite are all this needs. tensorplug's own workspace never
installs torch, so there the plugin is loaded in process (``tp.plugins.register``) from its
source tree while the cases are collected and while they run, and is unregistered in between,
leaving no backend behind for other tests.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

import tensorplug as tp  # noqa: E402
from tensorplug.testing import instantiate_device_type_tests  # noqa: E402

_NAME = "tensorplug_torch_example"


def _plugin() -> object | None:
    """The example's module, loaded from its source tree, or None when it is installed."""
    if "torch" in tp.plugins.loaded_names():
        return None
    spec = importlib.util.spec_from_file_location(
        "tensorplug_torch", Path(__file__).parents[1] / "src" / "tensorplug_torch" / "__init__.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.setdefault("tensorplug_torch", module)
    return module


_PLUGIN = _plugin()
if _PLUGIN is not None:
    tp.plugins.register(_PLUGIN, name=_NAME)
try:
    instantiate_device_type_tests(globals(), "torch")
finally:
    if _PLUGIN is not None:
        tp.plugins.unregister(_NAME)


@pytest.fixture(autouse=True, scope="module")
def _torch_backend() -> Iterator[None]:
    if _PLUGIN is None:
        yield
        return
    tp.plugins.register(_PLUGIN, name=_NAME)
    try:
        yield
    finally:
        tp.plugins.unregister(_NAME)
