"""``tensorplug new-plugin``: the packages it writes install into a fresh venv and pass their
own tests there, as written (a backend's run the conformance kit)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import UvVenvs
from tensorplug import _scaffold, cli

pytestmark = pytest.mark.venv


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[UvVenvs, list[Path]]:
    where = tmp_path_factory.mktemp("scaffold")
    assert cli.main(["new-plugin", "bar", "--backend", "--dir", str(where)]) == 0
    assert cli.main(["new-plugin", "count_ops", "--functionality", "--dir", str(where)]) == 0
    plugins = [where / "tensorplug-bar", where / "tensorplug-count-ops"]
    projects = ["core", "plugins/cpu", "plugins/autograd", *map(str, plugins)]
    venvs = UvVenvs(tmp_path_factory.mktemp("venvs"), {"scaffold": projects})
    venv = venvs.path("scaffold")
    uv = shutil.which("uv")
    assert uv is not None
    venvs._uv(uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
              "pytest>=8", "numpy>=1.26")  # fmt: skip
    return venvs, plugins


@pytest.mark.parametrize("which", [0, 1], ids=["backend", "functionality"])
def test_the_generated_tests_pass_in_a_fresh_venv(generated, which: int) -> None:
    venvs, plugins = generated
    r = venvs.command("scaffold", "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                      str(plugins[which] / "tests"))  # fmt: skip
    assert r.returncode == 0, f"stdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-3000:]}"
    assert " passed" in r.stdout and "failed" not in r.stdout


def test_a_bad_name_or_an_existing_directory_is_refused(tmp_path: Path, capsys) -> None:
    assert cli.main(["new-plugin", "My-Plugin", "--backend", "--dir", str(tmp_path)]) == 2
    assert "plugin name 'My-Plugin': use lower-case letters" in capsys.readouterr().err
    assert cli.main(["new-plugin", "bar", "--backend", "--dir", str(tmp_path)]) == 0
    assert cli.main(["new-plugin", "bar", "--functionality", "--dir", str(tmp_path)]) == 2
    assert "tensorplug-bar exists already" in capsys.readouterr().err
    with pytest.raises(_scaffold.ScaffoldError, match="choose 'backend' or 'functionality'"):
        _scaffold.new_plugin("baz", "frontend", tmp_path)


def test_the_generated_code_is_lint_clean_and_uses_only_public_api(tmp_path: Path) -> None:
    tool = Path(__file__).resolve().parents[2] / "tools" / "plugin_api_check.py"
    for kind in ("backend", "functionality"):
        root = _scaffold.new_plugin(f"lint_{kind}", kind, tmp_path)
        for path in root.rglob("*.py"):
            compile(path.read_text(), str(path), "exec")
        r = subprocess.run([sys.executable, str(tool), str(root)], capture_output=True, text=True)
        assert r.returncode == 0 and "0 uses of private API" in r.stdout, r.stdout + r.stderr
    ruff = shutil.which("ruff")
    if ruff is not None:
        r = subprocess.run([ruff, "check", "--no-cache", "--isolated", str(tmp_path)],
                           capture_output=True, text=True)  # fmt: skip
        assert r.returncode == 0, r.stdout
