"""Real virtual environments holding only some tensorplug distributions.

Two kinds:

- ``Venvs`` (the ``venvs`` fixture): what a user gets from ``pip``. Every distribution of the
  repository is built once per run with ``uv build`` (an sdist, and a wheel built from it) into
  a cache under ``.pytest_cache`` keyed by a hash of the sources; its third-party dependencies
  (numpy, optree, ...) are downloaded once by ``pip download`` into a cache keyed by the
  requirements. A combination's venv is a plain ``python -m venv`` in which ``pip install
  --no-index --find-links <those two folders>`` installs the combination's distributions by
  name: no uv, nothing editable, no pip configuration of this machine. Venvs with the same
  distributions are shared by every test module of the session, and are built in parallel
  threads (``TENSORPLUG_VENV_JOBS``, default 3) ahead of the tests that use them.
- ``UvVenvs``: ``uv pip install`` of project directories given as paths, for projects that are
  not part of the repository (``tensorplug new-plugin``'s output, in test_scaffold.py).

Usage (in a test module that defines ``COMBOS = {"core+cpu": ["core", "plugins/cpu"]}``; an
entry ``"core[all]"`` installs ``tensorplug[all]``)::

    def test_x(venvs):
        r = venvs.python("core+cpu", "import tensorplug as tp; print(tp.ones([2]))")
        r = venvs.command("core+cpu", "tensorplug", "keys")
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def project_name(path: str) -> str:
    return str(tomllib.loads((ROOT / path / "pyproject.toml").read_text())["project"]["name"])


def entry_points(path: str) -> list[str]:
    """The tensorplug plugin names a project declares."""
    project = tomllib.loads((ROOT / path / "pyproject.toml").read_text())["project"]
    return sorted(project.get("entry-points", {}).get("tensorplug", {}))


class UvVenvs:
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
        return run_in(self.path(combo), program, *args, env=env, cwd=self.base)

    def python(
        self, combo: str, code: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.command(combo, "python", "-c", code, env=env)


# ---- venvs from built wheels, with pip ----------------------------------------------------------

WORKSPACE = ["core", "plugins/autocast", "plugins/autograd", "plugins/batched", "plugins/cpu",
             "plugins/cuda", "plugins/dask", "plugins/tracer", "examples/foo_backend",
             "examples/strict_backend"]  # fmt: skip
FIXTURES = ["tests/fixtures/good_plugin", "tests/fixtures/broken_plugin"]
_SKIP_PARTS = {"__pycache__", ".pytest_cache", "dist", "build", ".mypy_cache", ".ruff_cache"}


def requirement(entry: str) -> str:
    """``"plugins/cpu"`` -> ``"tensorplug-cpu"``; ``"core[all]"`` -> ``"tensorplug[all]"``."""
    path, _, extra = entry.partition("[")
    return project_name(path) + (f"[{extra}" if extra else "")


def installed_projects(entries: Iterable[str]) -> list[str]:
    """The project directories a combination installs: ``core[all]`` brings the plugins its
    ``all`` extra names."""
    by_name = {project_name(p): p for p in WORKSPACE}
    out: set[str] = set()
    for entry in entries:
        path, _, extra = entry.partition("[")
        out.add(path)
        if extra:
            extras = tomllib.loads((ROOT / path / "pyproject.toml").read_text())["project"]
            for req in extras["optional-dependencies"][extra.rstrip("]")]:
                name = req.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip()
                out.add(by_name[name])
    return sorted(out)


def _sources_hash(projects: list[str]) -> str:
    h = hashlib.sha256()
    for project in projects:
        for f in sorted((ROOT / project).rglob("*")):
            rel = f.relative_to(ROOT)
            if f.is_file() and not _SKIP_PARTS & set(rel.parts) and f.suffix != ".pyc":
                h.update(str(rel).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _third_party_requirements() -> list[str]:
    reqs = set()
    for project in WORKSPACE + FIXTURES:
        meta = tomllib.loads((ROOT / project / "pyproject.toml").read_text())["project"]
        reqs.update(r for r in meta.get("dependencies", []) if not r.startswith("tensorplug"))
    return sorted(reqs)


def _run(argv: list[str], what: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> None:
    r = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    if r.returncode != 0:
        pytest.fail(f"{what}: {' '.join(argv)} failed:\n{r.stdout}\n{r.stderr}", pytrace=False)


def _pip_env() -> dict[str, str]:
    """This machine's environment without any pip, uv or tensorplug settings: a venv's pip sees
    only the command line (PIP_CONFIG_FILE=os.devnull: no pip.conf either)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "UV_", "TENSORPLUG_"))
        and k not in ("VIRTUAL_ENV", "PYTHONPATH")
    }
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


class Dists:
    """The wheels (and sdists) of every distribution of the repository, and the third-party
    wheels they need, each built or downloaded once into ``cache`` and reused while the sources
    (or the requirements) stay the same."""

    def __init__(self, cache: Path, scratch: Path) -> None:
        self.cache, self.scratch = cache, scratch
        self._lock = threading.Lock()
        self._ready: tuple[Path, Path] | None = None

    def folders(self) -> tuple[Path, Path, Path]:
        """(the repository's wheels and sdists, the third-party wheels, the python of a venv
        with pip), made on first use."""
        with self._lock:
            if self._ready is None:
                pip = self.scratch / "pip"
                _run([sys.executable, "-m", "venv", str(pip)], "python -m venv")
                python = pip / "bin" / "python"
                self._ready = (self._build(), self._download(python), python)
            return self._ready

    def _fresh(self, prefix: str, key: str) -> tuple[Path, Path | None]:
        final = self.cache / f"{prefix}-{key}"
        if (final / ".complete").is_file():
            return final, None
        for old in self.cache.glob(f"{prefix}-*"):
            shutil.rmtree(old, ignore_errors=True)
        work = self.scratch / f"{prefix}-{key}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        return final, work

    def _finish(self, work: Path, final: Path) -> Path:
        (work / ".complete").write_text("")
        shutil.rmtree(final, ignore_errors=True)
        shutil.copytree(work, final)
        return final

    def _build(self) -> Path:
        final, work = self._fresh("dists", _sources_hash(WORKSPACE + FIXTURES))
        if work is None:
            return final
        uv = shutil.which("uv")
        if uv is None:
            pytest.skip("uv is not installed (pip install uv): it builds the distributions")
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        _run([uv, "build", "--quiet", "--all-packages", "-o", str(work)], "uv build", env)
        for fixture in FIXTURES:
            _run([uv, "build", "--quiet", "--wheel", "-o", str(work), fixture], "uv build", env)
        return self._finish(work, final)

    def _download(self, pip_python: Path) -> Path:
        reqs = _third_party_requirements()
        tag = f"{sys.version_info[:2]}-{platform.machine()}-{sys.platform}"
        key = hashlib.sha256(" ".join([tag, *reqs]).encode()).hexdigest()[:16]
        final, work = self._fresh("thirdparty", key)
        if work is None:
            return final
        # pip from a fresh venv, with this machine's pip configuration (index, proxy, certs)
        pip_venv = self.scratch / "pip-download"
        _run([sys.executable, "-m", "venv", str(pip_venv)], "python -m venv")
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        _run([str(pip_venv / "bin" / "python"), "-m", "pip", "download", "--quiet",
              "--disable-pip-version-check", "--only-binary=:all:", "-d", str(work), *reqs],
             "downloading the third-party dependencies", env)  # fmt: skip
        return self._finish(work, final)


class VenvPool:
    """Venvs by the requirements installed in them, built in worker threads."""

    def __init__(self, dists: Dists, base: Path, jobs: int) -> None:
        self.dists, self.base = dists, base
        self._executor = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="venv")
        self._futures: dict[tuple[str, ...], Future[Path]] = {}
        self._lock = threading.Lock()

    def submit(self, name: str, steps: list[list[str]], own: bool = False) -> Future[Path]:
        """The venv made by ``pip install <step>`` for each step in turn (first use builds it).
        Venvs with the same steps are one venv, but for ``own=True``: one the caller may change."""
        key = (name if own else "", *("\0".join(s) for s in steps))
        with self._lock:
            if key not in self._futures:
                folder = self.base / f"{len(self._futures)}-{name.replace('+', '_')}"
                self._futures[key] = self._executor.submit(self._build, name, folder, steps)
            return self._futures[key]

    def _build(self, name: str, venv: Path, steps: list[list[str]]) -> Path:
        # no pip inside: one pip (the Dists') installs into every venv with --python, which
        # saves ensurepip's seconds per venv; --no-compile saves compiling numpy's sources
        _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], f"[{name}] python -m venv")
        for step in steps:
            self.pip(venv, name, "install", "--no-compile", *step)
        return venv

    def pip(self, venv: Path, name: str, command: str, *args: str) -> None:
        """``pip <command> <args>`` in ``venv``: only the built wheels and the third-party ones
        (``--no-index``), none of this machine's pip settings. Fails naming ``name``."""
        wheels, third_party, pip_python = self.dists.folders()
        argv = [str(pip_python), "-m", "pip", "--python", str(venv / "bin" / "python"), command]
        if command == "install":
            argv += ["--no-index", "--find-links", str(wheels), "--find-links", str(third_party)]
        _run(
            [*argv, "--quiet", *args],
            f"[{name}] pip {command} {' '.join(args)}",
            _pip_env(),
            venv.parent,
        )

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)


class Venvs:
    """The venvs of one test module's ``COMBOS`` (name -> project directories)."""

    def __init__(self, pool: VenvPool, combos: dict[str, list[str]]) -> None:
        self.pool, self.combos = pool, combos

    def prefetch(self, combos: Iterable[str]) -> None:
        for combo in combos:
            self._future(combo)

    def _future(self, combo: str) -> Future[Path]:
        return self.pool.submit(combo, [[requirement(e) for e in self.combos[combo]]])

    def path(self, combo: str) -> Path:
        return self._future(combo).result()

    def command(
        self, combo: str, program: str, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``program`` from the venv's bin/ in a clean environment (no PYTHONPATH)."""
        return run_in(self.path(combo), program, *args, env=env)

    def python(
        self, combo: str, code: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.command(combo, "python", "-c", code, env=env)


def run_in(
    venv: Path,
    program: str,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``program`` from the venv's bin/ in a clean environment (no PYTHONPATH, no
    TENSORPLUG_ settings), in ``cwd`` (the venv's folder by default)."""
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
        cwd=venv.parent if cwd is None else cwd,
        timeout=120,
    )


@pytest.fixture(scope="session")
def venv_pool(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    where = (
        cache.mkdir("tensorplug-dists") if cache is not None else tmp_path_factory.mktemp("dists")
    )
    dists = Dists(Path(where), tmp_path_factory.mktemp("dist-work"))
    pool = VenvPool(
        dists, tmp_path_factory.mktemp("venvs"), int(os.environ.get("TENSORPLUG_VENV_JOBS", "3"))
    )
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def venvs(request: pytest.FixtureRequest, venv_pool: VenvPool) -> Venvs:
    """The venvs of the combinations in the test module's ``COMBOS``. Those that the selected
    tests of the module name (a ``combo`` parameter) start building now, in order."""
    v = Venvs(venv_pool, request.module.COMBOS)
    wanted = [
        item.callspec.params["combo"]
        for item in request.session.items
        if getattr(item, "module", None) is request.module
        and "combo" in getattr(getattr(item, "callspec", None), "params", {})
    ]
    v.prefetch(dict.fromkeys(c for c in wanted if c in v.combos))
    return v
