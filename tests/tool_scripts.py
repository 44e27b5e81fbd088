"""The scripts of tools/ for tests: tools/ is no package, so a test loads one by its file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_tool(name: str) -> ModuleType:
    """``tools/<name>.py`` as a module (entered in ``sys.modules`` under ``name`` on its first
    load, which dataclasses in a tool need)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module
