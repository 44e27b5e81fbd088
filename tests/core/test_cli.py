"""The ``tensorplug`` command, run in-process through ``main([...])`` (and once as a subprocess)."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tensorplug as tp
from tensorplug import plugins
from tensorplug.cli import main
from tensorplug.hookspecs import hookimpl
from tests import needs

CORE_SRC = Path(tp.__file__).resolve().parents[1]

needs_cpu = pytest.mark.skipif(
    "cpu" not in plugins.loaded_names(), reason="needs the tensorplug-cpu plugin"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class CliProbe:
    """An in-process plugin: a backend key, an op with two kernels, a fallback."""

    @hookimpl
    def tensorplug_add_keys(self, keys: Any) -> None:
        keys.register_backend("CliProbe", "cliprobe")

    @hookimpl
    def tensorplug_register_kernels(self, registry: Any) -> None:
        lib = registry.library("cliprobe", "DEF")
        lib.define("f(Tensor x) -> Tensor")
        lib.define("g.one(Tensor x) -> Tensor")
        lib.define("g.two(Tensor x, int n) -> Tensor")
        lib.impl("f", lambda x: x, "CliProbe")
        lib.impl("f", lambda x: x, "Autograd")
        lib.impl("g.one", lambda x: x, "CompositeImplicitAutograd")


@pytest.fixture
def probe() -> Iterator[None]:
    plugins.register(CliProbe(), name="cli_probe")
    try:
        yield
    finally:
        plugins.unregister("cli_probe")


# --- plugins / keys -------------------------------------------------------------------------


def test_plugins_table(capsys, probe):
    code, out, err = run(capsys, "plugins")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "DISTRIBUTION", "VERSION", "STATUS", "KEYS", "OPS"]
    [row] = [ln for ln in lines if ln.startswith("cli_probe ")]
    assert row.split() == ["cli_probe", "(in-process)", "-", "loaded", "CliProbe", "3"]


def test_plugins_reports_failures(capsys):
    def boom(keys: Any) -> None:
        raise ValueError("cli boom")

    plug = type("P", (), {"tensorplug_add_keys": staticmethod(hookimpl(boom))})
    with pytest.raises(plugins.PluginError):
        plugins.register(plug, name="cli_broken")
    try:
        code, out, _ = run(capsys, "plugins")
        assert code == 0
        assert "cli_broken: failed: ValueError: cli boom" in out.splitlines()
    finally:
        plugins.unregister("cli_broken")


def test_keys_in_priority_order(capsys, probe):
    code, out, _ = run(capsys, "keys")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "dispatch keys, highest priority first (alias keys last):"
    assert lines[1].split() == ["KEY", "KIND", "BIT", "OWNER"]
    rows = {ln.split()[0]: ln for ln in lines[2:]}
    names = [ln.split()[0] for ln in lines[2:]]
    assert names.index("Batched") < names.index("Tracer") < names.index("CliProbe")
    assert names.index("CliProbe") < names.index("Meta") < names.index("CUDA") < names.index("CPU")
    cpu = tp.keys.get("CPU")
    assert rows["CPU"].split() == ["CPU", "backend", str(cpu.bit), "tensorplug"]
    assert rows["CliProbe"].split()[1:] == [
        "backend",
        str(tp.keys.get("CliProbe").bit),
        "cli_probe",
    ]
    assert rows["AutogradCliProbe"].split()[1:3] == ["per-backend", "functionality"]
    assert rows["Autograd"].split() == ["Autograd", "alias", "-", "tensorplug"]
    assert names[-5:] == [
        "Autograd",
        "Autocast",
        "CompositeExplicitAutograd",
        "CompositeImplicitAutograd",
        "CompositeExplicitAutogradNonFunctional",
    ]


# --- ops / table ----------------------------------------------------------------------------


def test_ops_counts(capsys, probe):
    code, out, _ = run(capsys, "ops")
    assert code == 0
    lines = out.splitlines()
    assert (
        lines[0] == f"{len(tp.dispatcher.all_ops())} operators defined; kernels registered per key:"
    )
    rows = {ln.split()[0]: ln.split() for ln in lines[2:] if not ln.startswith("fallbacks")}
    assert rows["CliProbe"] == ["CliProbe", "backend", "1"]
    assert int(rows["Autograd"][-1]) >= 1
    assert "fallbacks (every op): " in out and "BackendSelect (tensorplug)" in out


def test_ops_key(capsys, probe):
    code, out, _ = run(capsys, "ops", "--key", "CliProbe")
    assert code == 0
    assert (
        out == "1 ops have a kernel registered for CliProbe:\n  cliprobe::f.default  (cli_probe)\n"
    )


def test_ops_missing(capsys, probe):
    code, out, _ = run(capsys, "ops", "--missing", "CliProbe", "--ns", "cliprobe")
    assert code == 0
    # f has a CliProbe kernel, g.one a CompositeImplicitAutograd one; g.two nothing
    assert out == "1 of 3 cliprobe ops have no kernel for CliProbe:\n  cliprobe::g.two\n"


@needs_cpu
def test_ops_missing_aten_for_cpu(capsys):
    code, out, _ = run(capsys, "ops", "--missing", "CPU")
    assert code == 0
    first = out.splitlines()[0]
    if first.startswith("0 of "):  # nothing listed: no dangling colon
        assert first.endswith(" aten ops have no kernel for CPU.") and len(out.splitlines()) == 1
    else:
        assert first.endswith(" aten ops have no kernel for CPU:")


def test_ops_missing_none(capsys, probe):
    code, out, _ = run(capsys, "ops", "--missing", "CliProbe", "--ns", "cliprobe")
    assert code == 0
    with tp.Library("cliprobe", "IMPL") as lib:
        lib.impl("g.two", lambda x, n: x, "CliProbe")
        code, out, _ = run(capsys, "ops", "--missing", "CliProbe", "--ns", "cliprobe")
    assert code == 0
    assert out == "0 of 3 cliprobe ops have no kernel for CliProbe.\n"


def test_table_of_an_unqualified_name_lists_every_overload(capsys, probe):
    code, out, err = run(capsys, "table", "cliprobe::g")
    assert code == 0, err
    tables = out.split("\n\n")
    assert [t.splitlines()[0] for t in tables] == [
        "cliprobe::g.one(Tensor x) -> Tensor",
        "cliprobe::g.two(Tensor x, int n) -> Tensor",
    ]
    for t, name in zip(tables, ("cliprobe::g.one", "cliprobe::g.two"), strict=True):
        code, single, _ = run(capsys, "table", name)
        assert single.rstrip("\n") == t.rstrip("\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["ops", "--key", "Nope"],
            "tensorplug ops: error: Unknown dispatch key 'Nope'. Known keys: ",
        ),
        (["ops", "--missing", "Nope"], "tensorplug ops: error: Unknown dispatch key 'Nope'. "),
        (
            ["ops", "--missing", "Autograd"],
            "tensorplug ops: error: --missing needs a runtime key; 'Autograd' is an alias key "
            "(try one of: ",
        ),
        (
            ["ops", "--missing", "CPU", "--ns", "nowhere"],
            "tensorplug ops: error: no operators are defined in namespace 'nowhere'\n",
        ),
        (
            ["table", "aten::nope.Tensor"],
            "tensorplug table: error: No operator named 'aten::nope.Tensor' is defined.",
        ),
        (
            ["table", "nope"],
            "tensorplug table: error: operator names are qualified, 'ns::op.overload': got 'nope'\n",
        ),
        (
            ["table", "aten::nope"],
            "tensorplug table: error: No operator named 'aten::nope' is defined "
            "(see `tensorplug ops`)\n",
        ),
        (
            ["explain", "aten::nope.x"],
            "tensorplug explain: error: No operator named 'aten::nope.x'",
        ),
        (
            ["explain", "aten::add.Tensor", "q7[2]", "f32[2]"],
            "tensorplug explain: error: unknown dtype 'q7' in 'q7[2]': ",
        ),
        (
            ["explain", "aten::add.Tensor", "f32[2] requires_grad", "f32[2]"],
            "tensorplug explain: error: 'f32[2] requires_grad': requires_grad needs the "
            "tensorplug-autograd plugin, which is not loaded: pip install tensorplug-autograd\n",
        ),
    ],
)
def test_errors_exit_2_without_traceback(capsys, argv, message):
    absent = "requires_grad" in " ".join(argv)  # a case about the autograd plugin's absence
    with needs.unloaded("autograd") if absent else contextlib.nullcontext():
        code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith(message)
    assert "Traceback" not in err


def test_table(capsys, probe):
    code, out, _ = run(capsys, "table", "cliprobe::f")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "cliprobe::f(Tensor x) -> Tensor"
    assert lines[1].split() == ["KEY", "ENTRY", "REGISTERED", "BY"]
    rows = {ln.split()[0]: ln.split()[1:] for ln in lines[2:]}
    assert set(rows) == set(tp.dispatcher.dispatch_table("cliprobe::f"))
    assert rows["CliProbe"] == ["CliProbe", "cli_probe"]
    assert rows["AutogradCPU"] == ["Autograd", "cli_probe"]
    assert rows["BackendSelect"] == ["fallthrough", "tensorplug"]
    assert rows["CPU"] == ["missing"]


def test_table_composite(capsys, probe):
    code, out, _ = run(capsys, "table", "cliprobe::g.one")
    rows = {ln.split()[0]: ln.split()[1:] for ln in out.splitlines()[2:]}
    assert rows["CPU"] == ["CompositeImplicitAutograd", "cli_probe"]
    assert rows["AutogradCliProbe"] == ["CompositeImplicitAutograd", "cli_probe"]


# --- explain / demo (need a backend) --------------------------------------------------------


@needs_cpu
def test_explain_add(capsys):
    code, out, err = run(capsys, "explain", "aten::add.Tensor", "f32[2,3]", "f32[3] cpu", "alpha=2")
    assert code == 0, err
    assert out.startswith("explain aten::add.Tensor(Tensor self, Tensor other, *, ")
    assert "  argument self: keyset DispatchKeySet(" in out
    assert "  chosen key: CPU (entry from CPU)" in out


@needs_cpu
def test_explain_packet_picks_overload(capsys):
    code, out, _ = run(capsys, "explain", "aten::add", "f64[2]", "1.5")
    assert code == 0
    assert out.startswith(
        "explain aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor\n"
        "  (the overload of aten::add that these arguments pick)\n"
    )


@needs_cpu
def test_explain_of_a_failing_call_shows_the_steps_then_the_error(capsys):
    code, out, err = run(capsys, "explain", "aten::add.Tensor", "f32[2,3]", "f32[4]")
    assert code == 1 and err == ""
    assert "Traceback" not in out
    lines = out.splitlines()
    assert lines[-3:-1] == [
        "  dispatch steps when run:",
        lines[-2],
    ] and lines[-2].startswith("    [dispatch] call aten::add.Tensor keyset=")
    assert lines[-1] == (
        "  -> error: RuntimeError: aten::add.Tensor: The size of tensor a (3) must match the "
        "size of tensor b (4) at non-singleton dimension 1"
    )


@needs_cpu
def test_explain_of_mixed_devices_shows_the_error_in_one_line(capsys):
    if "foo" not in plugins.loaded_names():
        pytest.skip("needs a second backend: the example tensorplug-foo plugin")
    code, out, err = run(capsys, "explain", "aten::add", "f32[2]", "f32[2] foo")
    assert code == 1 and err == "" and "Traceback" not in out
    assert out.splitlines()[-1] == (
        "  -> error: RuntimeError: aten::add.Tensor: Expected all tensors to be on the same "
        "device, but found at least two devices, cpu and foo!"
    )


@needs_cpu
def test_explain_shows_readable_kernel_names(capsys):
    code, out, _ = run(capsys, "explain", "aten::add.Tensor", "f32[2]", "f32[2]")
    assert code == 0
    assert "<locals>" not in out
    [chosen] = [ln for ln in out.splitlines() if ln.startswith("  chosen key: ")]
    assert re.fullmatch(
        r"  chosen key: CPU \(entry from CPU\) -> [\w.]+\.\w+, registered by cpu", chosen
    ), chosen


@needs_cpu
def test_explain_bad_arguments(capsys):
    code, out, err = run(capsys, "explain", "aten::add.Tensor", "f32[2]", "'text'")
    assert code == 2 and out == ""
    assert err.startswith("tensorplug explain: error: aten::add.Tensor(): argument 'other'")


def test_demo_runs_and_names_missing_plugins(capsys):
    code, out, _ = run(capsys, "demo")
    assert code == 0, out
    assert out.startswith("== core ==\ntensorplug ")
    loaded = plugins.loaded_names()
    for name, dist in [
        ("cpu", "tensorplug-cpu"),
        ("autograd", "tensorplug-autograd"),
        ("autocast", "tensorplug-autocast"),
        ("tracer", "tensorplug-tracer"),
        ("batched", "tensorplug-batched"),
        ("cuda", "tensorplug-cuda"),
    ]:
        assert (f"not installed: pip install {dist}" in out) == (name not in loaded)
    assert "this section failed" not in out


@needs_cpu
def test_demo_cpu_section(capsys):
    code, out, _ = run(capsys, "demo")
    section = out.split("== CPU backend ==\n")[1].split("==")[0]
    assert "a + 1 = tensor([[2., 3.],\n        [4., 5.]])" in section
    assert "dispatch table of aten::add.Tensor (keys with an entry):\n" in section
    assert "  CPU                  CPU\n" in section


@pytest.mark.skipif(
    not {"cpu", "autograd"} <= plugins.loaded_names(), reason="needs tensorplug-cpu and -autograd"
)
def test_demo_autograd_section_trains_a_classifier(capsys):
    code, out, _ = run(capsys, "demo")
    section = out.split("== autograd ==\n")[1].split("\n== ")[0]
    assert section.startswith("model: Sequential(\n  (0): Linear(in_features=2, out_features=16")
    losses = [float(v) for v in re.findall(r"^step +\d+: loss (\d+\.\d+)$", section, re.M)]
    assert len(losses) == 5 and losses[-1] < losses[0] / 4
    accuracy = re.search(r"3-class spiral .* accuracy (\d\.\d\d)$", section, re.M)
    assert accuracy is not None and float(accuracy.group(1)) > 0.9


@pytest.mark.skipif(
    not {"cpu", "autograd", "autocast"} <= plugins.loaded_names(),
    reason="needs tensorplug-cpu, -autograd and -autocast",
)
def test_demo_autocast_section_trains_in_bfloat16_next_to_float32(capsys):
    code, out, _ = run(capsys, "demo")
    section = out.split("== autocast ==\n")[1].split("\n== ")[0]
    assert "matmul -> tensorplug.bfloat16, sum -> tensorplug.bfloat16" in section
    assert "mse_loss -> tensorplug.float32" in section
    found = dict(re.findall(r"^  (float32|bfloat16 autocast) +accuracy (\d\.\d\d) ", section, re.M))
    assert set(found) == {"float32", "bfloat16 autocast"}, section
    assert float(found["float32"]) > 0.9 and float(found["bfloat16 autocast"]) > 0.85


def test_demo_third_party_section(capsys, probe):
    code, out, _ = run(capsys, "demo")
    section = out.split("== third-party plugin cli_probe ==\n")[1]
    assert section.startswith("keys: CliProbe; kernels: 3; names: none\n")
    # CliProbe has no storage backend: said, not crashed
    assert "a tensor on 'cliprobe' cannot be used here: " in section


def test_no_subcommand_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as ei:
        main([])
    assert ei.value.code == 2
    assert "the following arguments are required: command" in capsys.readouterr().err


def test_python_m_keys():
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(CORE_SRC), os.environ.get("PYTHONPATH", "")])
    )
    r = subprocess.run(
        [sys.executable, "-m", "tensorplug.cli", "keys"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    names = [ln.split()[0] for ln in r.stdout.splitlines()[2:]]
    # installed third-party plugins (the foo example) may add keys; the built-ins keep their order
    builtin = [n for n in names if n in {"Batched", "Tracer", "BackendSelect", "CPU"}]
    assert builtin == ["Batched", "Tracer", "BackendSelect", "CPU"]
