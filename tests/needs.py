"""Skips for tests that need a plugin: ``pytest.importorskip`` alone sees only whether it is
installed, not whether ``TENSORPLUG_PLUGINS`` left it out of this process."""

from __future__ import annotations

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
