"""Real virtual environments holding only some tensorplug distributions.

A combination is a list of project directories (relative to the repository root) installed with
``uv pip install`` into a fresh venv built from the interpreter running the tests. Venvs are
built once per test session, on first use, under a session temporary directory. Third-party
dependencies (pluggy, PyYAML, numpy, ...) come from the package index through uv's cache.

The local projects are built as real wheels (not editable), so packaging mistakes -- a data file
left out of a wheel, a wrong entry point -- show up here. ``--refresh-package`` makes uv rebuild
them every session: uv's cache keys a local project by its pyproject.toml only.

Usage (in a test module that defines ``COMBOS = {"core+cpu": ["core", "plugins/cpu"]}``)::

    def test_x(venvs):
        r = venvs.python("core+cpu", "import tensorplug as tp; print(tp.ones([2]))")
        r = venvs.command("core+cpu", "tensorplug", "keys")
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def project_name(path: str) -> str:
    return str(tomllib.loads((ROOT / path / "pyproject.toml").read_text())["project"]["name"])


def entry_points(path: str) -> list[str]:
    """The tensorplug plugin names a project declares."""
    project = tomllib.loads((ROOT / path / "pyproject.toml").read_text())["project"]
    return sorted(project.get("entry-points", {}).get("tensorplug", {}))


class Venvs:
    def __init__(self, base: Path, combos: dict[str, list[str]]) -> None:
        self.base = base
        self.combos = combos
        self.built: dict[str, Path] = {}

    def path(self, combo: str) -> Path:
        if combo not in self.built:
            self.built[combo] = self._build(combo)
        return self.built[combo]

    def _build(self, combo: str) -> Path:
        uv = shutil.which("uv")
        if uv is None:
            pytest.skip("uv is not installed (pip install uv)")
        projects = self.combos[combo]
        for p in projects:
            if not (ROOT / p / "pyproject.toml").is_file():
                pytest.fail(f"combination {combo!r} names {p}, which has no pyproject.toml")
        venv = self.base / combo.replace("+", "_")
        self._uv(uv, "venv", "--quiet", "--python", sys.executable, str(venv))
        python = venv / "bin" / "python"
        refresh = [a for p in projects for a in ("--refresh-package", project_name(p))]
        self._uv(
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python),
            *refresh,
            *(str(ROOT / p) for p in projects),
        )
        return venv

    @staticmethod
    def _uv(*argv: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=170)
        if r.returncode != 0:
            pytest.fail(f"{' '.join(argv)} failed:\n{r.stdout}\n{r.stderr}", pytrace=False)

    def command(
        self, combo: str, program: str, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``program`` from the venv's bin/ in a clean environment (no PYTHONPATH)."""
        venv = self.path(combo)
        clean = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("TENSORPLUG_")
        }
        clean.update(env or {})
        return subprocess.run(
            [str(venv / "bin" / program), *args],
            capture_output=True,
            text=True,
            env=clean,
            cwd=self.base,
            timeout=120,
        )

    def python(
        self, combo: str, code: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.command(combo, "python", "-c", code, env=env)


@pytest.fixture(scope="module")
def venvs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Venvs:
    """The venvs of the combinations in the test module's ``COMBOS``, built on first use."""
    return Venvs(tmp_path_factory.mktemp("venvs"), request.module.COMBOS)
