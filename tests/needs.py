"""Skips for tests that need a plugin: ``pytest.importorskip`` alone sees only whether it is
installed, not whether ``TENSORPLUG_PLUGINS`` left it out of this process."""

from __future__ import annotations

import pytest

import tensorplug as tp


def autograd() -> None:
    """Skip the calling module (at import) or test unless tensorplug-autograd is loaded."""
    pytest.importorskip("tensorplug_autograd")
    if "autograd" not in tp.plugins.loaded_names():
        pytest.skip(
            "needs the tensorplug-autograd plugin, which TENSORPLUG_PLUGINS leaves out",
            allow_module_level=True,
        )
