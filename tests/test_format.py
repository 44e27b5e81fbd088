"""The repository's Python sources are as ``ruff format`` writes them (with the settings of the
root pyproject.toml), so the test command checks formatting too: ``uv run ruff format`` fixes
what this reports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_sources_are_formatted():
    r = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "No module named ruff" not in r.stderr, (
        "ruff is not installed: it is in the dev dependency group (uv sync --all-packages)"
    )
    assert r.returncode == 0, (
        "files that `uv run ruff format` would change:\n" + r.stdout + r.stderr
    )
