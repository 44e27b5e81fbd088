"""What ``import tensorplug`` loads and makes (issue 34, start-up): counted, not timed.

A whole-process time is too noisy for the suite (docs/performance.md has the figures); what
makes it slow is counted instead, in a fresh interpreter with the first-party plugins only:
the modules the import brings in beyond numpy, the modules it must leave for first use, the
operators whose class it made (Note [Per-op classes on first call]), and the collector's young
generation it leaves behind (Note [Start-up objects are old]). A change that makes start-up
import or build more trips a budget here; raise the budget only for a reason the commit says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points

import tensorplug as tp

# modules ``import tensorplug`` (with numpy already imported) may add, all plugins' included;
# 2026-12-02: 263 (231 of tensorplug and its plugins), after the start-up work of issue 34;
# then 215 (187), the CPU backend registered lazily (the array kit's modules on first use)
MODULE_BUDGET = 220

# imported on first use only: each costs milliseconds (or more) that most programs never need
FIRST_USE_ONLY = (
    # standard library and third party
    "zipfile", "secrets", "subprocess", "shutil", "pathlib", "optree", "typing_extensions",
    "yaml", "scipy", "hashlib", "ipaddress", "urllib.parse", "difflib",
    # tensorplug's own front ends and checkpoint archive
    "tensorplug.nn", "tensorplug.optim", "tensorplug.linalg", "tensorplug.fft",
    "tensorplug.special", "tensorplug.utils", "tensorplug.serialization._archive",
    # the array kit's kernels (Note [Lazy backends] in array_backend/_lazy.py)
    "tensorplug.array_backend._register", "tensorplug.array_backend._kit",
    "tensorplug.array_backend._pointwise", "tensorplug.array_backend._nn",
)  # fmt: skip

_PROBE = """
import gc, json, sys
import numpy
before = set(sys.modules)
import tensorplug
from tensorplug.dispatcher import _registry
ops = _registry.all_ops()
print(json.dumps({
    "new": sorted(set(sys.modules) - before),
    "ops": len(ops),
    "own_classes": [op.name for op in ops if op._own_class],
    "young": gc.get_count()[0],
    "plugins": [p.name for p in tensorplug.plugins.list() if p.status == "loaded"],
}))
"""


def _run_fresh(probe: str) -> subprocess.CompletedProcess[str]:
    """``probe`` in a fresh interpreter, with only the first-party plugins."""
    others = sorted(
        {ep.name for ep in entry_points(group="tensorplug")} - set(tp.plugins.FIRST_PARTY_PLUGINS)
    )
    env = {**os.environ, "TENSORPLUG_DISABLE_PLUGINS": ",".join(others)}
    return subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )


def _start_up() -> dict[str, object]:
    """``import tensorplug`` in a fresh interpreter, with only the first-party plugins."""
    r = _run_fresh(_PROBE)
    found: dict[str, object] = json.loads(r.stdout.splitlines()[-1])
    return found


def test_import_tensorplug_stays_within_its_module_budget_and_makes_no_operator_class():
    found = _start_up()
    new = found["new"]
    assert isinstance(new, list)
    assert len(new) <= MODULE_BUDGET, (
        f"import tensorplug imports {len(new)} modules beyond numpy (budget {MODULE_BUDGET}); "
        "import what is needed on first use (a module __getattr__, an import inside the "
        "function), or raise the budget for a reason"
    )
    early = [m for m in FIRST_USE_ONLY if m in new]
    assert early == [], f"imported by import tensorplug, but meant for first use: {early}"
    # operators are defined, none is called: no per-op class is made yet
    assert isinstance(found["ops"], int) and found["ops"] > 1000
    assert found["own_classes"] == []
    # the start-up's objects were moved to the oldest generation, not left young
    assert isinstance(found["young"], int) and found["young"] < 2000


def test_a_program_that_froze_objects_keeps_them_frozen():
    probe = (
        "import gc; gc.freeze(); n = gc.get_freeze_count(); import tensorplug; "
        "print(n > 0 and gc.get_freeze_count() > n - 100)"  # a few of them die
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "True"


def test_an_operator_gets_its_class_on_first_call_and_redispatch():
    with tp.Library("startup_probe", "DEF") as lib:
        op = lib.define("twice(Tensor x) -> Tensor")
        lib.impl(op, lambda x: x + x, "CPU")
        assert type(op) is tp.OpOverload  # the shared class until the first call
        bound = op.redispatch  # bound before the first call: it forwards afterwards
        assert op(tp.ones(2)).tolist() == [2.0, 2.0]
        assert type(op) is not tp.OpOverload and isinstance(op, tp.OpOverload)
        assert type(op).__name__ == "OpOverload_startup_probe_twice_"
        assert bound(tp.keys.keyset("CPU"), tp.ones(1)).tolist() == [2.0, 2.0][:1]
    with tp.Library("startup_probe", "DEF") as lib:
        op = lib.define("twice(Tensor x) -> Tensor")
        lib.impl(op, lambda x: x + x, "CPU")
        assert op.redispatch(tp.keys.keyset("CPU"), tp.ones(3)).tolist() == [2.0] * 3
        assert type(op) is not tp.OpOverload  # redispatch first gives it its class too


def test_save_and_load_are_there_before_the_archive_is_imported():
    assert "save" in dir(tp) and "load" in dir(tp)
    assert tp.save is tp.serialization.save and tp.load is tp.serialization.load
    assert tp.serialization.FORMAT_VERSION >= 1


# The CPU backend registers stubs at import and its kernels on first use (Note [Lazy backends]
# in array_backend/_lazy.py): two threads making the first call at once, then the plugin
# unloaded and loaded again, in a fresh interpreter where the first call is still to come.
_CPU_FIRST_USE = """
import sys, threading
import numpy
import tensorplug as tp
import tensorplug_cpu
from tensorplug import dispatcher

def cpu_table():
    ks = tp.keys.keyset("CPU")
    return {
        op.name: (dispatcher.dispatch_table(op)["CPU"], dispatcher.registrations(op)["CPU"])
        for op in dispatcher.all_ops() if "CPU" in dispatcher.registrations(op)
    }

assert "tensorplug.array_backend._register" not in sys.modules
lazy = tensorplug_cpu.LAZY
assert not lazy.loaded
stubs = cpu_table()
assert len(stubs) > 600 and stubs["aten::add.Tensor"] == ("CPU", "cpu"), stubs["aten::add.Tensor"]
assert tp.ops.aten.add.Tensor.kernel_for(tp.keys.keyset("CPU")).__name__ == "lazy[CPU:add.Tensor]"
start = threading.Barrier(2)
results = [None, None]
def first_call(i):
    start.wait()
    results[i] = tp.add(tp.ones(3), float(i)).tolist()
threads = [threading.Thread(target=first_call, args=(i,)) for i in range(2)]
for t in threads: t.start()
for t in threads: t.join()
assert results == [[1.0] * 3, [2.0] * 3], results
assert lazy.loaded and cpu_table() == stubs
real = tp.ops.aten.add.Tensor.kernel_for(tp.keys.keyset("CPU"))
assert real is lazy.backend.kernels["add.Tensor"] and tp.library.is_no_dispatch(real)

kept = tp.tensor([1.0, 2.0])
tp.plugins.unregister("cpu")
assert not any("CPU" in dispatcher.registrations(o) for o in dispatcher.all_ops())
try:
    tp.add(kept, kept)
except tp.DispatchError as e:
    print("unloaded:", type(e).__name__, str(e).splitlines()[0])
again = tp.plugins._Plugin("cpu", tensorplug_cpu)
tp.plugins._load([again], raise_errors=True)
assert tensorplug_cpu.LAZY is not lazy and not tensorplug_cpu.LAZY.loaded
assert cpu_table() == stubs
assert (kept * 3).tolist() == [3.0, 6.0] and tensorplug_cpu.LAZY.loaded
assert cpu_table() == stubs
print("ok")
"""


def test_the_cpu_kernels_register_on_first_use_once_and_again_after_a_reload():
    r = _run_fresh(_CPU_FIRST_USE)
    lines = r.stdout.splitlines()
    assert lines[-1] == "ok", r.stdout + r.stderr
    assert lines[0].startswith("unloaded: "), lines  # a missing kernel, as without the plugin
