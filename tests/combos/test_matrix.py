"""The plugin matrix a user meets: combinations of tensorplug's distributions installed from
built wheels with plain pip (see conftest.py), each running the same standard workload,
``tensorplug plugins`` and the missing-plugin errors of the plugins it lacks. docs/combinations.md
describes what each combination gives; keep the two in step.

A failure names the combination and the step: ``[cpu+autograd] step 'workload': ...``.
"""

from __future__ import annotations

import json
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from conftest import VenvPool, Venvs, entry_points, installed_projects, project_name, run_in

pytestmark = pytest.mark.venv

FIRST_PARTY = {
    "cpu": "plugins/cpu",
    "autograd": "plugins/autograd",
    "autocast": "plugins/autocast",
    "tracer": "plugins/tracer",
    "batched": "plugins/batched",
    "cuda": "plugins/cuda",
}
CORE, FOO = "core", "examples/foo_backend"
# tensorplug-dask is first-party but not in tensorplug[all] (it brings dask): its combinations
# name it, and the checks of absent plugins (FIRST_PARTY) leave it out
DASK = "plugins/dask"


def _cpu_with(*plugins: str) -> list[str]:
    return [CORE, FIRST_PARTY["cpu"], *(FIRST_PARTY[p] for p in plugins)]


# name -> what `pip install` gets (project directories; "core[all]" is `tensorplug[all]`)
COMBOS: dict[str, list[str]] = {
    "core": [CORE],
    "cpu": _cpu_with(),
    "cpu+autograd": _cpu_with("autograd"),
    "cpu+autocast": _cpu_with("autocast"),
    "cpu+tracer": _cpu_with("tracer"),
    "cpu+batched": _cpu_with("batched"),
    "cpu+cuda": _cpu_with("cuda"),  # no GPU, no CuPy: the plugin loads and says why it is idle
    "cpu+autograd+autocast": _cpu_with("autograd", "autocast"),
    "cpu+autograd+batched": _cpu_with("autograd", "batched"),
    "cpu+autograd+tracer": _cpu_with("autograd", "tracer"),
    "cpu+tracer+batched": _cpu_with("tracer", "batched"),
    "everything": ["core[all]"],
    "everything+foo": ["core[all]", FOO],
    "cpu+dask": [*_cpu_with(), DASK],
    "cpu+autograd+dask": [*_cpu_with("autograd"), DASK],
    "everything+dask": ["core[all]", DASK],
}

# The standard workload: the demo classifier of `tensorplug demo` (a small MLP from tp.nn on a
# 3-class spiral, the same data and initialisation). Its inference everywhere the CPU backend
# is; its training (Adam, 300 steps) where autograd is too. Prints digests of the exact bits.
WORKLOAD = """
import contextlib, hashlib, json
import tensorplug as tp
from tensorplug.cli import spiral_problem

def digest(values):
    return hashlib.sha256(" ".join(float(v).hex() for v in values).encode()).hexdigest()[:16]

loaded = {i.name for i in tp.plugins.list() if i.status.startswith("loaded")}
nn = tp.nn
x, y, model = spiral_problem()  # the demo's data and model
no_grad = tp.no_grad if "autograd" in loaded else contextlib.nullcontext
with no_grad():
    logits = model(x)
out = {"inference": digest(logits.flatten().tolist())}
if "autograd" in loaded:
    loss_fn = nn.CrossEntropyLoss()
    opt = tp.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for step in range(300):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with tp.no_grad():
        out["accuracy"] = (model(x).argmax(1) == y).to(tp.float32).mean().item()
    params = [v for p in model.parameters() for v in p.flatten().tolist()]
    out["training"] = digest(losses + params)
print(json.dumps(out))
"""

# Each expression (given as JSON in argv[1], with the distribution it must name) must raise
# MissingPluginError naming that distribution, in its message too.
MISSING = """
import json, sys
import tensorplug as tp
out = []
for dist, expr in json.loads(sys.argv[1]):
    try:
        eval(expr, {"tp": tp})
        got = "no error"
    except tp.MissingPluginError as e:
        got = e.distribution
        got = got if got in str(e) else f"a message without {got}: {e}"
    except Exception as e:
        got = f"{type(e).__name__}: {e}"
    out.append([dist, expr, got])
print(json.dumps(out))
"""

# What each first-party plugin gives beyond its `tp.` names (those come from tp.plugins.list()),
# as expressions that must name the plugin's distribution when it is absent; (needs the CPU
# backend, expression).
PROBES: dict[str, list[tuple[bool, str]]] = {
    "cpu": [(False, "tp.tensor([1.0])"), (False, "tp.ones([2])")],
    "autograd": [
        (True, "tp.tensor([1.0], requires_grad=True)"),
        (True, "tp.ones([1]).requires_grad_()"),
        (True, "tp.ones([1]).backward()"),
        (True, "tp.ones([1]).grad"),
        (True, "setattr(tp.ones([1]), 'requires_grad', True)"),
        (False, "tp.library.register_autograd('aten::exp', lambda ctx, g: g)"),
    ],
    "autocast": [(False, "tp.library.register_autocast('aten::mm', 'cpu', tp.float16)")],
    "tracer": [(False, "__import__('tensorplug.tracer')")],
    "batched": [
        (False, "tp.library.register_vmap('aten::exp', lambda *a: a)"),
        (False, "__import__('tensorplug.func')"),
    ],
    "cuda": [(False, "tp.cuda.current_device()")],
}

NAMES = """
import json
import tensorplug as tp
print(json.dumps({i.name: [i.distribution, list(i.names)] for i in tp.plugins.list()}))
"""


def _plugins(projects: list[str]) -> dict[str, str]:
    """plugin name -> distribution, of the installed projects."""
    return {n: project_name(p) for p in projects for n in entry_points(p)}


def _listing(stdout: str) -> list[tuple[str, str, str]]:
    """(name, distribution, status) of each row of `tensorplug plugins`."""
    lines = stdout.splitlines()
    if not lines or not lines[0].startswith("NAME"):
        return []
    rows = []
    for line in lines[1:]:
        cols = line.split()
        if len(cols) < 4 or cols[0].endswith(":"):
            break
        rows.append((cols[0], cols[1], cols[3]))
    return rows


def _fail(combo: str, step: str, why: str) -> None:
    pytest.fail(f"[{combo}] step {step!r}: {why}", pytrace=False)


def _json(combo: str, step: str, r: Any) -> Any:
    if r.returncode != 0:
        _fail(combo, step, f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return json.loads(r.stdout.splitlines()[-1])


class Runs:
    """The workload's results per venv, each run once."""

    def __init__(self) -> None:
        self.done: dict[str, dict[str, Any]] = {}

    def workload(self, combo: str, venv: Path) -> dict[str, Any]:
        if combo not in self.done:
            self.done[combo] = _json(combo, "workload", run_in(venv, "python", "-c", WORKLOAD))
        return self.done[combo]


@pytest.fixture(scope="module")
def runs() -> Runs:
    return Runs()


@pytest.fixture(scope="module")
def own_venvs(venv_pool: VenvPool) -> dict[str, Future[Path]]:
    """Venvs the tests change or build step by step, started with the module's first test."""
    order = [FIRST_PARTY[p] for p in ("cpu", "autograd", "autocast", "tracer", "batched")]
    order += [FIRST_PARTY["cuda"], FOO, CORE]
    one_by_one = [[project_name(p)] for p in order]
    return {
        "in order": venv_pool.submit("in-order", one_by_one, own=True),
        "reversed": venv_pool.submit("reversed", one_by_one[::-1], own=True),
        "uninstall": venv_pool.submit(
            "uninstall", [["tensorplug[all]", "tensorplug-foo"]], own=True
        ),
    }


@pytest.fixture(scope="module")
def names(venvs: Venvs) -> dict[str, list[Any]]:
    """plugin -> [distribution, the tp. names it adds], from the everything+foo venv."""
    return dict(_json("everything+foo", "names", venvs.python("everything+foo", NAMES)))


def _missing_probes(
    absent: list[str], has_cpu: bool, names: dict[str, list[Any]]
) -> list[list[str]]:
    probes = []
    for plugin in absent:
        dist, tp_names = names[plugin]
        probes += [[dist, f"tp.{n}"] for n in tp_names]
        probes += [[dist, e] for needs_cpu, e in PROBES[plugin] if has_cpu or not needs_cpu]
    return probes


def _check_missing(combo: str, venv: Path, absent: list[str], names: dict[str, list[Any]]) -> int:
    probes = _missing_probes(absent, "cpu" not in absent, names)
    got = _json(
        combo, "missing-plugin errors", run_in(venv, "python", "-c", MISSING, json.dumps(probes))
    )
    wrong = [
        f"{expr}: expected MissingPluginError naming {dist}, got {g}"
        for dist, expr, g in got
        if g != dist
    ]
    if wrong:
        _fail(combo, "missing-plugin errors", "\n".join(wrong))
    return len(probes)


def _check_listing(combo: str, venv: Path, expected: dict[str, str]) -> None:
    r = run_in(venv, "tensorplug", "plugins")
    if r.returncode != 0:
        _fail(combo, "tensorplug plugins", f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    rows = _listing(r.stdout)
    got = {name: dist for name, dist, _ in rows}
    if got != expected:
        _fail(combo, "tensorplug plugins", f"lists {got}, installed are {expected}:\n{r.stdout}")
    if not expected and "no tensorplug plugins are installed" not in r.stdout:
        _fail(combo, "tensorplug plugins", f"says nothing of the missing plugins:\n{r.stdout}")
    not_loaded = [(n, s) for n, _, s in rows if s != "loaded"]
    if not_loaded:
        _fail(combo, "tensorplug plugins", f"not loaded: {not_loaded}\n{r.stdout}")


def _check_workload(combo: str, result: dict[str, Any], plugins: dict[str, str]) -> None:
    if ("training" in result) != ("autograd" in plugins):
        _fail(
            combo,
            "workload",
            f"trained: {'training' in result}, with autograd: {'autograd' in plugins}",
        )
    if "training" in result and result["accuracy"] < 0.9:
        _fail(combo, "workload", f"the classifier reached an accuracy of {result['accuracy']}")


@pytest.mark.parametrize("combo", COMBOS)
def test_combination(
    venvs: Venvs, runs: Runs, names: dict[str, list[Any]], own_venvs: Any, combo: str
) -> None:
    venv = venvs.path(combo)
    plugins = _plugins(installed_projects(COMBOS[combo]))
    if "cpu" in plugins:
        _check_workload(combo, runs.workload(combo, venv), plugins)
    else:  # the workload's first tensor needs a backend
        r = run_in(venv, "python", "-c", WORKLOAD)
        last = r.stderr.strip().splitlines()[-1:]
        if (
            r.returncode == 0
            or not last
            or not last[0].startswith("tensorplug.errors.MissingPluginError")
            or "pip install tensorplug-cpu" not in last[0]
        ):
            _fail(
                combo, "workload", f"without tensorplug-cpu it must say so:\n{r.stdout}\n{r.stderr}"
            )
    _check_listing(combo, venv, plugins)
    absent = [p for p in FIRST_PARTY if p not in plugins]
    _check_missing(combo, venv, absent, names)


def test_the_numbers_are_the_same_wherever_the_same_plugins_compute_them(
    venvs: Venvs, runs: Runs
) -> None:
    results = {
        combo: runs.workload(combo, venvs.path(combo))
        for combo in COMBOS
        if "cpu" in _plugins(installed_projects(COMBOS[combo]))
    }
    for what in ("inference", "training"):
        seen: dict[str, list[str]] = {}
        for combo, result in results.items():
            if what in result:
                seen.setdefault(result[what], []).append(combo)
        assert len(seen) == 1, f"the {what} digests differ between combinations: {seen}"
    trained = [c for c, r in results.items() if "training" in r]
    with_autograd = [c for c in results if "autograd" in _plugins(installed_projects(COMBOS[c]))]
    assert trained == with_autograd and len(trained) == 8, trained  # every one with autograd


def _state(step: str, venv: Path) -> dict[str, str]:
    """What must not depend on install order: the plugins, the key order, the workload."""
    out = {}
    for args in (["plugins"], ["keys"]):
        r = run_in(venv, "tensorplug", *args)
        if r.returncode != 0:
            _fail(step, f"tensorplug {args[0]}", r.stdout + r.stderr)
        out[args[0]] = r.stdout
    out["workload"] = run_in(venv, "python", "-c", WORKLOAD).stdout
    return out


def test_install_order_does_not_matter(venvs: Venvs, own_venvs: dict[str, Future[Path]]) -> None:
    expected = _state("everything+foo", venvs.path("everything+foo"))
    assert json.loads(expected["workload"])["training"]
    for which in ("in order", "reversed"):
        got = _state(f"installed one by one, {which}", own_venvs[which].result())
        for what in expected:
            assert got[what] == expected[what], f"[installed one by one, {which}] {what} differs"


def test_uninstalling_any_plugin_leaves_the_rest_working(
    venv_pool: VenvPool,
    venvs: Venvs,
    runs: Runs,
    names: dict[str, list[Any]],
    own_venvs: dict[str, Future[Path]],
) -> None:
    uninstall_venv = own_venvs["uninstall"].result()
    everything = _plugins(installed_projects(COMBOS["everything+foo"]))
    reference = runs.workload("everything+foo", venvs.path("everything+foo"))
    for plugin, dist in sorted(everything.items()):
        step = f"everything+foo, then pip uninstall {dist}"
        venv_pool.pip(uninstall_venv, step, "uninstall", "--yes", dist)
        rest = {n: d for n, d in everything.items() if n != plugin}
        _check_listing(step, uninstall_venv, rest)
        if "cpu" in rest:
            result = _json(step, "workload", run_in(uninstall_venv, "python", "-c", WORKLOAD))
            expected = {
                k: v for k, v in reference.items() if "autograd" in rest or k == "inference"
            }
            if result != expected:
                _fail(step, "workload", f"{result} differs from everything+foo's {reference}")
        if plugin in FIRST_PARTY:
            _check_missing(step, uninstall_venv, [plugin], names)
        venv_pool.pip(uninstall_venv, step, "install", "--no-deps", dist)
