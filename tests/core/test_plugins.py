"""Plugins: in-process register/unregister, rollback of failures, and discovery through real
entry points (fake distributions on PYTHONPATH, in subprocesses) with the selection variables."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest

import tensorplug as tp
from fakes import FakeTensor
from tensorplug import _backends, dispatcher, plugins
from tensorplug._opset import api as _api
from tensorplug._opset import repr as _repr
from tensorplug.errors import MissingPluginError
from tensorplug.hookspecs import hookimpl
from tensorplug.plugins import PluginError
from tensorplug.tensor import Tensor
from tests import needs

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
CORE_SRC = Path(tp.__file__).resolve().parents[1]  # the core this process imported


# --- helpers --------------------------------------------------------------------------------


def snapshot() -> dict[str, Any]:
    """Every global table a plugin can change."""
    return {
        "keys": [(k.name, k.bit, k.owner) for k in tp.keys.all_keys()],
        "ops": sorted(op.name for op in dispatcher.all_ops()),
        "fallbacks": dispatcher.fallbacks(),
        "module": {
            n: v
            for n, v in vars(tp).items()
            if not _dunder_or_submodule(n, v) and n not in _api.function_names
        },
        "tensor": {n: _standard_method_or(n, v) for n, v in Tensor.__dict__.items()},
        "storage": dict(_backends._by_key),
        "key listeners": sorted(tp.keys._state.listeners, key=id),  # unloaded() reorders
        "repr suffixes": list(_repr.suffix_hooks),
        "plugins": plugins.list(),
        "pluggy": sorted(n for n, _ in plugins._state.pm.list_name_plugin()),
    }


def _standard_method_or(name: str, value: object) -> object:
    # standard functions and methods are made on first use (Note [Lazy public functions]):
    # being made is not a registration
    if isinstance(value, _api._PendingMethod) or value is _api._methods.get(name):
        return ("standard method", name)
    return value


def _dunder_or_submodule(name: str, value: object) -> bool:
    # importing a submodule (tensorplug.array_backend) sets an attribute: not a registration
    return name.startswith("__") or getattr(value, "__name__", None) == f"tensorplug.{name}"


class FakeStorage:
    key_name = "Probe"
    device_type = "probe"
    plugin = "probe"

    def from_python(self, data: Any, dtype: Any, device: Any) -> Any:
        return data, dtype

    def to_host(self, data: Any) -> Any:
        return data

    def from_host(self, host: Any, device: Any) -> Any:
        return host


class ProbePlugin:
    """A fresh plugin using every hook and every kind of registration."""

    def __init__(self, fail_in: str = "") -> None:
        self.fail_in = fail_in
        self.calls: list[str] = []

    @hookimpl
    def tensorplug_add_keys(self, keys: Any) -> None:
        self.calls.append("add_keys")
        keys.register_backend("Probe", "probe")
        keys.register_functionality("ProbeTrace", after="Tracer")
        if self.fail_in == "add_keys":
            raise ValueError("probe failed in add_keys")

    @hookimpl
    def tensorplug_register_kernels(self, registry: Any) -> None:
        self.calls.append("register_kernels")
        assert registry.plugin_name == "probe"
        lib = registry.library("probe", "DEF")
        lib.define("double(Tensor x) -> Tensor")
        lib.impl("double", lambda x: ("doubled", x.tag), "Probe")
        lib.impl("double", lambda x: ("cpu", x.tag), "CPU")
        registry.library("_", "IMPL").fallback(tp.library.fallthrough_kernel, "ProbeTrace")
        registry.add_storage_backend(FakeStorage())
        if self.fail_in == "register_kernels":
            raise RuntimeError("probe failed in register_kernels")

    @hookimpl
    def tensorplug_add_names(self) -> dict[str, Any]:
        self.calls.append("add_names")
        return {"probe_fn": probe_fn}

    @hookimpl
    def tensorplug_add_tensor_methods(self) -> dict[str, Any]:
        self.calls.append("add_tensor_methods")
        if self.fail_in == "add_tensor_methods":
            raise KeyError("probe failed in add_tensor_methods")
        # replaces a core placeholder: must be restored afterwards
        return {"probe_method": lambda self: "probed", "element_size": lambda s: -1}


def probe_fn() -> str:
    return "probe"


def make_plugin(**hooks: Any) -> object:
    """A plugin object from hook functions given by name."""
    return type("Plugin", (), {n: staticmethod(hookimpl(f)) for n, f in hooks.items()})


@pytest.fixture
def clean():
    before = snapshot()
    yield before
    for info in plugins.list():
        if info.name not in {p.name for p in before["plugins"]}:
            plugins.unregister(info.name)
    assert snapshot() == before


# --- the plugin API handed to hooks (docs/plugins.md) ----------------------------------------


def test_key_listener_follows_the_plugin(clean):
    seen: list[str] = []

    def listener() -> None:
        seen.append("changed")

    def tensorplug_add_keys(keys: Any) -> None:
        keys.register_backend("ListenerProbe", "listenerprobe")

    def tensorplug_register_kernels(registry: Any) -> None:
        registry.add_key_listener(listener)

    plugin = make_plugin(
        tensorplug_add_keys=tensorplug_add_keys,
        tensorplug_register_kernels=tensorplug_register_kernels,
    )
    plugins.register(plugin, name="listener_probe")
    assert seen == []
    with tp.Library("_", "IMPL"):
        pass
    tp.keys.register_functionality("ListenerProbeKey")
    try:
        assert seen == ["changed"]
    finally:
        tp.keys.unregister("ListenerProbeKey")
    assert seen == ["changed", "changed"]
    plugins.unregister("listener_probe")  # removes the key: the listener is gone first
    n = len(seen)
    tp.keys.register_functionality("ListenerProbeKey")
    tp.keys.unregister("ListenerProbeKey")
    assert len(seen) == n


def test_repr_suffix_follows_the_plugin(clean):
    def tensorplug_register_kernels(registry: Any) -> None:
        registry.add_repr_suffix(lambda t: ["probe=1"])

    plugin = make_plugin(tensorplug_register_kernels=tensorplug_register_kernels)
    plugins.register(plugin, name="repr_probe")
    assert repr(tp.tensor([1.0])).endswith(", probe=1)")
    plugins.unregister("repr_probe")
    assert "probe=1" not in repr(tp.tensor([1.0]))


# --- in-process register / unregister -------------------------------------------------------


def test_register_runs_every_hook_in_order_and_unregister_restores_everything(clean):
    before = clean
    p = ProbePlugin()
    info = plugins.register(p, name="probe")
    assert p.calls == ["add_keys", "register_kernels", "add_names", "add_tensor_methods"]
    assert info.status == "loaded"
    assert info.distribution is None and info.version is None
    assert info.keys == ("Probe", "ProbeTrace")
    assert info.op_count == 2 and info.fallbacks == 1
    assert info.names == ("probe_fn",)
    assert info.tensor_methods == ("probe_method", "element_size")
    assert plugins.get("probe") == info
    assert "probe" in plugins.loaded_names()

    assert tp.keys.get("Probe").owner == "probe"
    assert tp.keys.get("AutogradProbe").owner == "probe"
    assert tp.probe_fn() == "probe"
    assert Tensor.probe_method(None) == "probed"
    assert _backends.for_device_type("probe").key_name == "Probe"
    table = dispatcher.dispatch_table("probe::double")
    assert table["Probe"] == "Probe" and table["ProbeTrace"] == "fallthrough"
    assert dispatcher.registrations("probe::double") == {"Probe": "probe", "CPU": "probe"}
    assert tp.ops.probe.double(FakeTensor("Probe", tag="a")) == ("doubled", "a")

    last = plugins.unregister("probe")
    assert last == info
    assert snapshot() == before
    assert "probe" not in plugins.loaded_names()
    assert Tensor.__dict__["element_size"] is before["tensor"]["element_size"]
    with pytest.raises(tp.keys.KeyError_, match="Unknown dispatch key 'Probe'"):
        tp.keys.get("Probe")


def test_register_again_after_unregister(clean):
    plugins.register(ProbePlugin(), name="probe")
    plugins.unregister("probe")
    info = plugins.register(ProbePlugin(), name="probe")
    assert info.status == "loaded" and info.op_count == 2


def test_default_name_is_the_object_name(clean):
    plug = make_plugin(tensorplug_add_names=lambda: {"named_by_default": 1})
    plug.__name__ = "my_notebook_plugin"
    assert plugins.register(plug).name == "my_notebook_plugin"
    assert tp.named_by_default == 1


def test_backend_plugins_register_and_unregister_without_limit(clean):
    """Every cycle frees the bits of its keys; they are reused (Note [Bit reuse])."""
    for i in range(100):
        name = f"Cycling{i}"
        plug = make_plugin(
            tensorplug_add_keys=lambda keys, n=name: keys.register_backend(n, n.lower())
        )
        info = plugins.register(plug, name="cycling")
        assert info.keys == (name,)
        t = FakeTensor(name)  # a tensor of the backend, gone before the plugin is
        del t
        plugins.unregister("cycling")


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_plugins_overriding_one_kernel_unregistered_in_any_order(clean, ns, order, free_key):
    """Kernels and fallbacks of plugins form a stack per (op, key), as libraries' do."""

    def overriding(i: int) -> object:
        def register_kernels(registry: Any) -> None:
            registry.library(ns, "IMPL").impl("f", lambda x: f"p{i}", "CPU", override=True)
            fb = lambda op, ks, *a: f"fb{i}"
            registry.library("_", "IMPL").fallback(fb, free_key, override=True)

        return make_plugin(tensorplug_register_kernels=register_kernels)

    with tp.Library(ns, "DEF") as lib, tp.Library("_", "IMPL") as base_fb:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "base", "CPU")
        base_fb.fallback(lambda op, ks, *a: "base fb", free_key)
        f = getattr(tp.ops, ns).f
        for i in range(3):
            plugins.register(overriding(i), name=f"over{i}")
        loaded = [0, 1, 2]
        for i in order:
            plugins.unregister(f"over{i}")
            loaded.remove(i)
            assert f(FakeTensor("CPU")) == (f"p{loaded[-1]}" if loaded else "base")
            assert f(FakeTensor("CPU", free_key)) == (f"fb{loaded[-1]}" if loaded else "base fb")


@pytest.mark.parametrize(
    ("phase", "exc"),
    [
        ("add_keys", "ValueError: probe failed in add_keys"),
        ("register_kernels", "RuntimeError: probe failed in register_kernels"),
        ("add_tensor_methods", "KeyError: 'probe failed in add_tensor_methods'"),
    ],
)
def test_failing_plugin_is_rolled_back_and_others_keep_working(clean, phase, exc):
    good = make_plugin(tensorplug_add_names=lambda: {"survivor": "still here"})
    plugins.register(good, name="good")
    with_good = snapshot()

    with pytest.raises(PluginError) as ei:
        plugins.register(ProbePlugin(fail_in=phase), name="probe")
    assert str(ei.value) == (
        f"tensorplug plugin 'probe' (in-process plugin) failed to load in tensorplug_{phase}: "
        f"{exc}. Everything it registered was rolled back."
    )
    assert ei.value.plugin == "probe"
    assert isinstance(ei.value.__cause__, ValueError | RuntimeError | KeyError)

    after = snapshot()
    failed = [i for i in after.pop("plugins") if i.name == "probe"]
    assert after == {k: v for k, v in with_good.items() if k != "plugins"}
    assert failed[0].status == "failed" and failed[0].error == exc
    assert failed[0].keys == () and failed[0].op_count == 0
    assert "probe" not in plugins.loaded_names()
    assert tp.survivor == "still here"
    with pytest.raises(tp.keys.KeyError_):
        tp.keys.get("Probe")
    with pytest.raises(tp.RegistrationError, match="No operator named 'probe::double.default'"):
        dispatcher.find_op("probe::double")

    # a failed record can be forgotten, and the name reused
    assert plugins.unregister("probe").status == "failed"
    assert plugins.register(ProbePlugin(), name="probe").status == "loaded"


class Interrupted(ProbePlugin):
    """Registers everything ProbePlugin does, then ``raise_`` raises, the way a user's Ctrl-C
    or a plugin's ``sys.exit()`` would arrive; it also overrides a kernel others use."""

    def __init__(self, ns: str, error: BaseException) -> None:
        super().__init__()
        self.ns = ns
        self.error = error

    @hookimpl
    def tensorplug_register_kernels(self, registry: Any) -> None:
        super().tensorplug_register_kernels(registry)
        registry.library(self.ns, "IMPL").impl("f", lambda x: "hijacked", "CPU", override=True)
        raise self.error


def test_keyboard_interrupt_in_a_hook_rolls_back_then_goes_on(clean, ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "own", "CPU")
        with_f = snapshot()
        with pytest.raises(KeyboardInterrupt):
            plugins.register(Interrupted(ns, KeyboardInterrupt()), name="probe")
        after = snapshot()
        (failed,) = [i for i in after.pop("plugins") if i.name == "probe"]
        assert failed.status == "failed" and failed.error == "KeyboardInterrupt"
        assert after == {k: v for k, v in with_f.items() if k != "plugins"}
        assert getattr(tp.ops, ns).f(FakeTensor("CPU")) == "own"
        assert "probe" not in plugins.loaded_names()
        plugins.unregister("probe")


def test_system_exit_in_a_hook_is_that_plugins_failure(clean, ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "own", "CPU")
        with_f = snapshot()
        with pytest.raises(PluginError) as ei:
            plugins.register(Interrupted(ns, SystemExit(2)), name="probe")
        assert str(ei.value) == (
            "tensorplug plugin 'probe' (in-process plugin) failed to load in "
            "tensorplug_register_kernels: SystemExit: the plugin called sys.exit(2). "
            "Everything it registered was rolled back."
        )
        after = snapshot()
        after.pop("plugins")
        assert after == {k: v for k, v in with_f.items() if k != "plugins"}
        assert getattr(tp.ops, ns).f(FakeTensor("CPU")) == "own"
        plugins.unregister("probe")


def test_failure_message_of_an_error_that_ends_with_a_period(clean):
    def names() -> dict[str, Any]:
        raise ValueError("bad value.")

    with pytest.raises(PluginError) as e:
        plugins.register(make_plugin(tensorplug_add_names=names), name="dotted")
    assert str(e.value) == (
        "tensorplug plugin 'dotted' (in-process plugin) failed to load in "
        "tensorplug_add_names: ValueError: bad value. Everything it registered was rolled back."
    )  # once: "bad value.. Everything"


def test_name_conflict_between_plugins_names_both(clean):
    plugins.register(make_plugin(tensorplug_add_names=lambda: {"shared": 1}), name="first")
    with pytest.raises(PluginError) as ei:
        plugins.register(make_plugin(tensorplug_add_names=lambda: {"shared": 2}), name="second")
    assert str(ei.value) == (
        "tensorplug plugin 'second' (in-process plugin) failed to load in tensorplug_add_names: "
        "PluginError: plugins 'first' and 'second' both add the name tensorplug.shared; "
        "disable one of them (TENSORPLUG_DISABLE_PLUGINS=second). "
        "Everything it registered was rolled back."
    )
    assert tp.shared == 1


def test_a_module_name_is_importable_until_the_plugin_goes(clean):
    import importlib
    import sys
    import types

    ns = types.ModuleType("probe_namespace")
    ns.answer = 42  # type: ignore[attr-defined]
    plugins.register(make_plugin(tensorplug_add_names=lambda: {"probe_ns": ns}), name="probe")
    assert importlib.import_module("tensorplug.probe_ns") is ns
    from tensorplug.probe_ns import answer  # type: ignore[import-not-found]

    assert answer == 42
    plugins.unregister("probe")
    assert "tensorplug.probe_ns" not in sys.modules


def test_tensor_method_conflict_between_plugins_names_both(clean):
    plugins.register(make_plugin(tensorplug_add_tensor_methods=lambda: {"m": 1}), name="first")
    with pytest.raises(PluginError, match=r"plugins 'first' and 'second' both set Tensor\.m; "):
        plugins.register(make_plugin(tensorplug_add_tensor_methods=lambda: {"m": 2}), name="second")
    assert Tensor.m == 1


def test_plugin_cannot_replace_a_core_name(clean):
    with pytest.raises(PluginError) as ei:
        plugins.register(make_plugin(tensorplug_add_names=lambda: {"Library": 1}), name="bad")
    assert (
        "PluginError: plugin 'bad' adds tensorplug.Library, which the core already defines; "
        "a plugin may add names, not replace them." in str(ei.value)
    )
    assert tp.Library is tp.library.Library


def test_bad_hook_results_are_errors(clean):
    with pytest.raises(
        PluginError, match="tensorplug_add_names must return a dict of str -> object, got list"
    ):
        plugins.register(make_plugin(tensorplug_add_names=lambda: ["x"]), name="bad")
    with pytest.raises(PluginError, match="returned 'not a name', which is not an identifier"):
        plugins.register(make_plugin(tensorplug_add_names=lambda: {"not a name": 1}), name="bad2")


def test_unknown_hook_is_an_error(clean):
    with pytest.raises(PluginError) as ei:
        plugins.register(make_plugin(tensorplug_add_kyes=lambda keys: None), name="typo")
    assert (
        "failed to load while registering it: PluginError: plugin 'typo' implements unknown hook "
        "'tensorplug_add_kyes'; the tensorplug hooks are: tensorplug_add_keys, "
        "tensorplug_add_names, tensorplug_add_tensor_methods, tensorplug_register_kernels"
    ) in str(ei.value)


def test_wrong_hook_arguments_are_an_error(clean):
    with pytest.raises(PluginError, match=r"PluginValidationError: .*'registy'"):
        plugins.register(make_plugin(tensorplug_register_kernels=lambda registy: None), name="x")


def test_register_twice_and_unregister_unknown(clean):
    plugins.register(make_plugin(), name="once")
    with pytest.raises(PluginError) as ei:
        plugins.register(make_plugin(), name="once")
    assert str(ei.value) == (
        "a plugin named 'once' is already loaded (in-process plugin); call "
        "tensorplug.plugins.unregister('once') first, or pass another name="
    )
    obj = make_plugin()
    plugins.register(obj, name="obj1")
    with pytest.raises(PluginError, match="this plugin object is already registered as 'obj1'"):
        plugins.register(obj, name="obj2")
    with pytest.raises(PluginError) as ei:
        plugins.unregister("nope")
    assert str(ei.value).startswith("no tensorplug plugin named 'nope'; known plugins: ")
    assert "obj1, once" in str(ei.value)
    with pytest.raises(PluginError, match="no tensorplug plugin named 'nope'"):
        plugins.get("nope")


def test_storage_backend_conflict(clean):
    def kernels(registry: Any) -> None:
        registry.add_storage_backend(FakeStorage())

    plugins.register(make_plugin(tensorplug_register_kernels=kernels), name="s1")
    with pytest.raises(
        PluginError,
        match="adds a storage backend for key 'Probe', which already "
        "has one from plugin 'probe'; unregister that plugin first",
    ):
        plugins.register(make_plugin(tensorplug_register_kernels=kernels), name="s2")


def test_dispatch_error_remedy_uses_loaded_names(clean, ns):
    """The dispatcher asks plugins.loaded_names() whether the provider of a key is loaded."""
    with needs.unloaded("batched"), tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        op = getattr(tp.ops, ns).f
        with pytest.raises(
            tp.DispatchError,
            match="served by the tensorplug-batched plugin, "
            "which is not loaded: `pip install tensorplug-batched`",
        ):
            op(FakeTensor("Batched", "CPU"))
        plugins.register(make_plugin(), name="batched")
        with pytest.raises(tp.DispatchError, match="No kernel is registered for 'Batched'"):
            op(FakeTensor("Batched", "CPU"))


# --- names only an absent first-party plugin provides ---------------------------------------


@pytest.mark.parametrize(
    ("name", "dist"),
    [
        ("vmap", "tensorplug-batched"),
        ("autocast", "tensorplug-autocast"),
        ("tracer", "tensorplug-tracer"),
        ("compile", "tensorplug-tracer"),
        ("amp", "tensorplug-autocast"),
        ("is_autocast_enabled", "tensorplug-autocast"),
        ("get_autocast_dtype", "tensorplug-autocast"),
        ("set_autocast_dtype", "tensorplug-autocast"),
        ("no_grad", "tensorplug-autograd"),
        ("enable_grad", "tensorplug-autograd"),
        ("set_grad_enabled", "tensorplug-autograd"),
        ("autograd", "tensorplug-autograd"),
    ],
)
def test_missing_name_names_the_distribution(clean, name, dist):
    with needs.unloaded(dist.removeprefix("tensorplug-")):
        err = plugins.missing_name(name)
    assert isinstance(err, MissingPluginError)
    assert err.distribution == dist
    assert str(err) == (
        f"tensorplug.{name} is provided by the {dist} plugin, which is not installed "
        f"(or not loaded): pip install {dist}"
    )


def test_missing_name_unknown_or_loaded_is_none(clean):
    assert plugins.missing_name("no_such_thing") is None
    assert plugins.missing_name("cuda") is None  # tp.cuda is the core's (it answers everywhere)
    with needs.unloaded("batched"):
        plugins.register(make_plugin(), name="batched")
        assert plugins.missing_name("vmap") is None


def test_missing_name_of_a_failed_plugin(clean):
    def boom(keys: Any) -> None:
        raise RuntimeError("boom")

    plugin, name, dist = _NAMED[0]
    with needs.unloaded(plugin):  # installed or not, it fails to load here
        with pytest.raises(PluginError):
            plugins.register(make_plugin(tensorplug_add_keys=boom), name=plugin)
        err = plugins.missing_name(name)
        assert str(err) == (
            f"tensorplug.{name} is provided by the {dist} plugin, which failed to load "
            "(RuntimeError: boom); see the PluginLoadWarning at import, or run `tensorplug plugins`"
        )


# (plugin, a name it adds, its distribution)
_NAMED = [
    ("tracer", "tracer", "tensorplug-tracer"),
    ("batched", "vmap", "tensorplug-batched"),
    ("autocast", "autocast", "tensorplug-autocast"),
]


# --- real entry points, in subprocesses -----------------------------------------------------


def install_fake(site: Path, project: Path) -> None:
    """Put ``project``'s package on ``site`` with a dist-info importlib.metadata discovers."""
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    for pkg in (project / "src").iterdir():
        shutil.copytree(pkg, site / pkg.name)
    write_dist_info(site, meta["name"], meta["version"], meta["entry-points"]["tensorplug"])


def write_dist_info(site: Path, dist: str, version: str, eps: dict[str, str]) -> None:
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = "".join(f"{n} = {v}\n" for n, v in eps.items())
    (info / "entry_points.txt").write_text(f"[tensorplug]\n{lines}")


PROBE_SCRIPT = textwrap.dedent(
    """
    import dataclasses, json, warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import tensorplug as tp
        import tensorplug.plugins as plugins
        plugins.load_entry_points()
        plugins.load_entry_points()  # discovery happens once
    out = {
        "plugins": {i.name: dataclasses.asdict(i) for i in plugins.list()},
        "warnings": [str(w.message) for w in caught
                     if issubclass(w.category, plugins.PluginLoadWarning)],
        "keys": [k.name for k in tp.keys.priority_order()],
        "names": sorted(n for n in ("tiny_hello", "broken_name") if hasattr(tp, n)),
    }
    print(json.dumps(out))
    """
)


def run_probe(site: Path, *more_sites: Path, **env: str) -> dict[str, Any]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    full_env["PYTHONPATH"] = os.pathsep.join([str(site), *map(str, more_sites), str(CORE_SRC)])
    full_env.update(env)
    r = subprocess.run(
        [sys.executable, "-c", PROBE_SCRIPT],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    # only what this test installed (the environment may hold real plugins too)
    out["plugins"] = {n: i for n, i in out["plugins"].items() if n.startswith("fixture_")}
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    install_fake(site, FIXTURES / "good_plugin")
    install_fake(site, FIXTURES / "broken_plugin")
    return site


BROKEN_MSG = (
    "tensorplug plugin 'fixture_broken' (distribution tensorplug-fixture-broken 0.1) failed to "
    "load in tensorplug_register_kernels: RuntimeError: the broken fixture plugin fails on "
    "purpose. Everything it registered was rolled back; "
    "set TENSORPLUG_DISABLE_PLUGINS=fixture_broken to skip it."
)
IMPORT_MSG = (
    "tensorplug plugin 'fixture_import_error' (distribution tensorplug-fixture-broken 0.1) "
    "failed to load while importing it: ModuleNotFoundError: No module named "
    "'tensorplug_fixture_missing_dependency'. Everything it registered was rolled back; "
    "set TENSORPLUG_DISABLE_PLUGINS=fixture_import_error to skip it."
)


def test_entry_points_failure_isolation(site):
    out = run_probe(site)
    ps = out["plugins"]
    assert sorted(ps) == ["fixture_broken", "fixture_good", "fixture_import_error"]
    good = ps["fixture_good"]
    assert good["status"] == "loaded"
    assert good["distribution"] == "tensorplug-fixture-good" and good["version"] == "0.1"
    assert good["keys"] == ["Tiny", "TinyProbe"]
    assert good["op_count"] == 1 and good["fallbacks"] == 1
    assert good["names"] == ["tiny_hello"] and good["tensor_methods"] == ["tiny_tag"]
    broken = ps["fixture_broken"]
    assert broken["status"] == "failed"
    assert broken["error"] == "RuntimeError: the broken fixture plugin fails on purpose"
    assert broken["keys"] == [] and broken["op_count"] == 0
    assert ps["fixture_import_error"]["status"] == "failed"
    assert ps["fixture_import_error"]["error"] == (
        "ModuleNotFoundError: No module named 'tensorplug_fixture_missing_dependency'"
    )
    assert sorted(out["warnings"]) == [BROKEN_MSG, IMPORT_MSG]
    # the broken plugin's key was rolled back; the good one's stays
    assert "Broken" not in out["keys"] and "AutogradBroken" not in out["keys"]
    assert "Tiny" in out["keys"] and "TinyProbe" in out["keys"]
    assert out["keys"].index("TinyProbe") == out["keys"].index("Tracer") + 1
    assert out["names"] == ["tiny_hello"]


def test_entry_points_selection_only(site):
    out = run_probe(site, TENSORPLUG_PLUGINS="fixture_good")
    ps = out["plugins"]
    assert ps["fixture_good"]["status"] == "loaded"
    for n in ("fixture_broken", "fixture_import_error"):
        assert ps[n]["status"] == "disabled"
        assert ps[n]["reason"] == "not listed in TENSORPLUG_PLUGINS='fixture_good'"
    assert out["warnings"] == []


def test_entry_points_selection_empty_means_none(site):
    out = run_probe(site, TENSORPLUG_PLUGINS="")
    assert {i["status"] for i in out["plugins"].values()} == {"disabled"}
    assert "Tiny" not in out["keys"]
    assert out["warnings"] == []


def test_entry_points_disable(site):
    out = run_probe(site, TENSORPLUG_DISABLE_PLUGINS="fixture_broken, fixture_import_error")
    ps = out["plugins"]
    assert ps["fixture_good"]["status"] == "loaded"
    assert ps["fixture_broken"]["status"] == "disabled"
    assert ps["fixture_broken"]["reason"] == (
        "listed in TENSORPLUG_DISABLE_PLUGINS=fixture_broken, fixture_import_error"
    )
    assert out["warnings"] == []


def test_entry_points_autoload_off(site):
    out = run_probe(site, TENSORPLUG_AUTOLOAD="0")
    assert {i["reason"] for i in out["plugins"].values()} == {"TENSORPLUG_AUTOLOAD=0"}
    assert {i["status"] for i in out["plugins"].values()} == {"disabled"}
    assert "Tiny" not in out["keys"] and out["names"] == []


def test_entry_points_unknown_selection_warns(site):
    out = run_probe(site, TENSORPLUG_PLUGINS="fixture_good,fixture_goood")
    [msg] = out["warnings"]
    assert msg.startswith(
        "TENSORPLUG_PLUGINS names 'fixture_goood', which no installed distribution provides; "
        "installed plugins: "
    )
    assert "fixture_broken, fixture_good, fixture_import_error" in msg
    assert out["plugins"]["fixture_good"]["status"] == "loaded"


def test_entry_points_keys_of_all_plugins_come_before_kernels(tmp_path):
    """Plugin 'a_user' registers a kernel for a key that plugin 'b_maker' (loaded after it,
    alphabetically) creates: that works because every add_keys runs first."""
    (tmp_path / "order_a.py").write_text(
        textwrap.dedent(
            """
        from tensorplug.hookspecs import hookimpl
        @hookimpl
        def tensorplug_register_kernels(registry):
            lib = registry.library("order", "DEF")
            lib.define("f(Tensor x) -> Tensor")
            lib.impl("f", lambda x: x, "Late")
        """
        )
    )
    (tmp_path / "order_b.py").write_text(
        textwrap.dedent(
            """
        from tensorplug.hookspecs import hookimpl
        @hookimpl
        def tensorplug_add_keys(keys):
            keys.register_backend("Late", "late")
        """
        )
    )
    write_dist_info(tmp_path, "fixture-order-a", "1.0", {"fixture_a_user": "order_a"})
    write_dist_info(tmp_path, "fixture-order-b", "2.0", {"fixture_b_maker": "order_b"})
    out = run_probe(tmp_path)
    assert out["warnings"] == []
    assert out["plugins"]["fixture_a_user"]["op_count"] == 1
    assert out["plugins"]["fixture_b_maker"]["keys"] == ["Late"]
    assert out["plugins"]["fixture_b_maker"]["version"] == "2.0"


HOOK_THAT_DOES_NOTHING = """
from tensorplug.hookspecs import hookimpl
@hookimpl
def tensorplug_add_keys(keys):
    pass
"""


def test_entry_points_without_hooks_are_reported(tmp_path):
    # an empty namespace package, as an incomplete install or uninstall leaves: it imports,
    # but would do nothing, so it is not reported as loaded
    (tmp_path / "fixture_hollow").mkdir()
    write_dist_info(tmp_path, "fixture-hollow", "1.0", {"fixture_hollow": "fixture_hollow"})
    out = run_probe(tmp_path)
    assert out["plugins"]["fixture_hollow"]["status"] == "failed"
    assert out["warnings"] == [
        "tensorplug plugin 'fixture_hollow' (distribution fixture-hollow 1.0) failed to load "
        "while importing it: PluginError: its entry point 'fixture_hollow' gives the empty "
        "package 'fixture_hollow' (a namespace package), which implements none of the "
        "tensorplug hooks (tensorplug_add_keys, tensorplug_add_names, "
        "tensorplug_add_tensor_methods, tensorplug_register_kernels), so the plugin would do "
        "nothing; reinstall its distribution. Everything it registered was rolled back; set "
        "TENSORPLUG_DISABLE_PLUGINS=fixture_hollow to skip it."
    ]


def test_entry_points_one_plugin_from_two_distributions(tmp_path):
    """The distribution in the earlier sys.path directory wins; both are named."""
    first, second = tmp_path / "first", tmp_path / "second"
    for site, dist in ((first, "fixture-dup-one"), (second, "fixture-dup-two")):
        site.mkdir()
        module = dist.replace("-", "_")
        (site / f"{module}.py").write_text(HOOK_THAT_DOES_NOTHING)
        write_dist_info(site, dist, "1.0", {"fixture_dup": module})
    out = run_probe(first, second)
    assert out["warnings"] == [
        "the tensorplug plugin 'fixture_dup' is provided by 2 distributions: fixture-dup-one "
        "(fixture_dup_one) and fixture-dup-two (fixture_dup_two); loading fixture-dup-one, the "
        "first on sys.path. Uninstall the others."
    ]
    assert out["plugins"]["fixture_dup"]["distribution"] == "fixture-dup-one"
    assert out["plugins"]["fixture_dup"]["status"] == "loaded"


@pytest.mark.parametrize("made_first", ["fixture-dup-b", "fixture-dup-a"])
def test_entry_points_two_distributions_in_one_directory(tmp_path, made_first):
    """Not the order the file system lists them in: the distribution name decides."""
    dists = sorted(["fixture-dup-a", "fixture-dup-b"], key=lambda d: d != made_first)
    for dist in dists:
        module = dist.replace("-", "_")
        (tmp_path / f"{module}.py").write_text(HOOK_THAT_DOES_NOTHING)
        write_dist_info(tmp_path, dist, "1.0", {"fixture_dup": module})
    out = run_probe(tmp_path)
    assert out["plugins"]["fixture_dup"]["distribution"] == "fixture-dup-a"
    assert len(out["warnings"]) == 1 and "loading fixture-dup-a" in out["warnings"][0]


def test_entry_points_first_party_name_prefers_the_first_party_distribution(tmp_path):
    """A distribution that claims the name 'cpu' before tensorplug-cpu on sys.path loses."""
    pytest.importorskip("tensorplug_cpu")
    (tmp_path / "fixture_impostor.py").write_text(HOOK_THAT_DOES_NOTHING)
    write_dist_info(tmp_path, "fixture-impostor", "1.0", {"cpu": "fixture_impostor"})
    out = run_probe(tmp_path)
    (warning,) = [w for w in out["warnings"] if "'cpu'" in w]
    assert warning.startswith(
        "the tensorplug plugin 'cpu' is provided by 2 distributions: tensorplug-cpu "
        "(tensorplug_cpu) and fixture-impostor (fixture_impostor); loading tensorplug-cpu, "
        "the first-party one."
    )
    assert "CPU" in out["keys"]


def test_entry_points_plugin_calling_sys_exit_at_import_fails_alone(tmp_path):
    """`import tensorplug` goes on; the plugin is reported like any other failure."""
    (tmp_path / "fixture_exits.py").write_text("import sys\nsys.exit(3)\n")
    write_dist_info(tmp_path, "fixture-exits", "1.0", {"fixture_exits": "fixture_exits"})
    out = run_probe(tmp_path)
    assert out["plugins"]["fixture_exits"]["status"] == "failed"
    assert out["warnings"] == [
        "tensorplug plugin 'fixture_exits' (distribution fixture-exits 1.0) failed to load "
        "while importing it: SystemExit: the plugin called sys.exit(3). Everything it "
        "registered was rolled back; set TENSORPLUG_DISABLE_PLUGINS=fixture_exits to skip it."
    ]


@pytest.mark.parametrize(
    ("env", "warning"),
    [
        (
            {"TENSORPLUG_DISABLE_PLUGINS": "fixture_good,fixture_nope"},
            "TENSORPLUG_DISABLE_PLUGINS names 'fixture_nope', which no installed distribution "
            "provides; installed plugins: ",
        ),
        (
            {"TENSORPLUG_AUTOLOAD": "maybe"},
            "TENSORPLUG_AUTOLOAD='maybe' is not understood; it takes 0/false/no/off to load no "
            "plugin, or 1/true/yes/on to load them (the default). Loading them.",
        ),
        (  # contradictory settings (issue 32, item 5)
            {"TENSORPLUG_PLUGINS": "fixture_good", "TENSORPLUG_DISABLE_PLUGINS": "fixture_good"},
            "'fixture_good' is both listed in TENSORPLUG_PLUGINS and disabled by "
            "TENSORPLUG_DISABLE_PLUGINS; disabling wins, so it is not loaded.",
        ),
        (
            {"TENSORPLUG_AUTOLOAD": "0", "TENSORPLUG_PLUGINS": "fixture_good"},
            "TENSORPLUG_AUTOLOAD=0 loads no plugin, so TENSORPLUG_PLUGINS is ignored; unset "
            "TENSORPLUG_AUTOLOAD to load the plugins they select.",
        ),
    ],
)
def test_entry_points_bogus_selection_values_warn(site, env, warning):
    out = run_probe(site, **env)
    assert [w for w in out["warnings"] if w.startswith(warning[:30])][0].startswith(warning)


def test_autoload_off_says_the_backend_is_installed_but_not_loaded():
    pytest.importorskip("tensorplug_cpu")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    env["TENSORPLUG_AUTOLOAD"] = "0"
    code = "import tensorplug as tp\ntry:\n    tp.ones(2)\nexcept Exception as e:\n    print(e)"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.stdout.strip() == (
        "No backend is loaded for device type 'cpu': it is provided by the tensorplug-cpu "
        "plugin, which is installed but not loaded (TENSORPLUG_AUTOLOAD=0): change that setting."
    )


# --- the plugin API version (Note [Plugin API version]) -------------------------------------


def versioned(version: object) -> object:
    """A plugin that declares ``version`` and adds a key, so a load is visible."""

    def tensorplug_add_keys(keys: Any) -> None:
        keys.register_functionality("VersionProbe")

    plugin = make_plugin(tensorplug_add_keys=tensorplug_add_keys)
    plugin.PLUGIN_API_VERSION = version  # type: ignore[attr-defined]
    return plugin


def test_plugin_api_version_is_major_dot_minor():
    major, minor = tp.PLUGIN_API_VERSION.split(".")
    assert (
        major.isdigit()
        and minor.isdigit()
        and tp.plugins.PLUGIN_API_VERSION is tp.PLUGIN_API_VERSION
    )


def test_compatible_plugin_api_versions_load(clean):
    major, minor = map(int, tp.PLUGIN_API_VERSION.split("."))
    for version in (tp.PLUGIN_API_VERSION, f"{major}.0"):
        info = plugins.register(versioned(version), name="versioned")
        assert info.status == "loaded" and info.api_version == version
        assert info.keys == ("VersionProbe",)
        plugins.unregister("versioned")
    info = plugins.register(make_plugin(), name="undeclared")  # written for 1.0
    assert info.status == "loaded" and info.api_version is None
    plugins.unregister("undeclared")


@pytest.mark.parametrize(
    ("version", "remedy"),
    [
        ("99.0", "upgrade tensorplug to a release with plugin API 99.0 or a later 99.x "
                 "(pip install -U tensorplug), or install a release of the plugin written for "
                 "plugin API {major}.x"),
        ("{major}.{next_minor}", "upgrade tensorplug to a release with plugin API "
                                 "{major}.{next_minor} or a later {major}.x (pip install -U "
                                 "tensorplug), or install a release of the plugin written for "
                                 "plugin API {major}.x"),
        ("0.9", "upgrade the plugin to a release written for plugin API {major}.x, or install "
                "a tensorplug with plugin API 0.x"),
    ],
)  # fmt: skip
def test_incompatible_plugin_is_refused_before_it_registers(clean, version, remedy):
    major, minor = map(int, tp.PLUGIN_API_VERSION.split("."))
    fill = {"major": major, "next_minor": minor + 1}
    version, remedy = version.format(**fill), remedy.format(**fill)
    with pytest.raises(PluginError) as err:
        plugins.register(versioned(version), name="versioned")
    assert str(err.value) == (
        f"tensorplug plugin 'versioned' (in-process plugin) was not loaded: plugin 'versioned' "
        f"was written for plugin API {version}, but tensorplug {tp.__version__} provides "
        f"plugin API {tp.PLUGIN_API_VERSION}: {remedy}."
    )
    assert isinstance(err.value.__cause__, plugins.IncompatiblePluginError)
    info = plugins.get("versioned")
    assert info.status == "failed" and info.api_version == version and info.keys == ()
    assert "VersionProbe" not in {k.name for k in tp.keys.all_keys()}


@pytest.mark.parametrize("version", ["1", "one.zero", 1.0, "1.0.0"])
def test_malformed_plugin_api_version_is_refused(clean, version):
    with pytest.raises(PluginError, match=rf"plugin 'versioned' declares PLUGIN_API_VERSION = "
                       rf"{re.escape(repr(version))}, which is not 'MAJOR.MINOR'; set it to the "
                       rf"tensorplug.PLUGIN_API_VERSION it was written for \(this tensorplug's is "
                       rf"'{tp.PLUGIN_API_VERSION}'\)"):  # fmt: skip
        plugins.register(versioned(version), name="versioned")


def test_entry_point_plugin_of_another_api_version_is_refused_with_a_warning(tmp_path):
    for name, version in (("fixture_newer", "99.1"), ("fixture_current", tp.PLUGIN_API_VERSION)):
        (tmp_path / f"{name}.py").write_text(
            f"PLUGIN_API_VERSION = {version!r}\n" + HOOK_THAT_DOES_NOTHING
        )
        write_dist_info(tmp_path, name.replace("_", "-"), "2.3", {name: name})
    out = run_probe(tmp_path)
    assert out["warnings"] == [
        "tensorplug plugin 'fixture_newer' (distribution fixture-newer 2.3) was not loaded: "
        f"plugin 'fixture_newer' was written for plugin API 99.1, but tensorplug "
        f"{tp.__version__} provides plugin API {tp.PLUGIN_API_VERSION}: upgrade tensorplug to "
        "a release with plugin API 99.1 or a later 99.x (pip install -U tensorplug), or "
        f"install a release of fixture-newer written for plugin API "
        f"{tp.PLUGIN_API_VERSION.split('.')[0]}.x; set TENSORPLUG_DISABLE_PLUGINS=fixture_newer "
        "to skip it."
    ]
    newer, current = out["plugins"]["fixture_newer"], out["plugins"]["fixture_current"]
    assert newer["status"] == "failed" and newer["api_version"] == "99.1"
    assert newer["error"].startswith("IncompatiblePluginError: plugin 'fixture_newer' was")
    assert current["status"] == "loaded" and current["api_version"] == tp.PLUGIN_API_VERSION


def test_older_plugin_remedy_names_its_distribution(tmp_path):
    (tmp_path / "fixture_older.py").write_text(
        'PLUGIN_API_VERSION = "0.3"\n' + HOOK_THAT_DOES_NOTHING
    )
    write_dist_info(tmp_path, "fixture-older", "0.1", {"fixture_older": "fixture_older"})
    [msg] = run_probe(tmp_path)["warnings"]
    major = tp.PLUGIN_API_VERSION.split(".")[0]
    assert msg.endswith(
        f"upgrade fixture-older to a release written for plugin API {major}.x (pip install -U "
        "fixture-older), or install a tensorplug with plugin API 0.x; set "
        "TENSORPLUG_DISABLE_PLUGINS=fixture_older to skip it."
    ), msg


def test_first_party_plugins_declare_the_api_and_a_compatible_tensorplug_range():
    """Every plugin and example declares the plugin API it was written for, and depends on a
    range of tensorplug releases that holds this one and stops before the next that may
    change the plugin API's MAJOR (docs/plugins.md, "Versions")."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    dists = sorted(
        p.parent for base in ("plugins", "examples") for p in (ROOT / base).glob("*/pyproject.toml")
    )
    assert {d.name for d in dists} >= {"cpu", "autograd", "foo_backend"}
    core = Version(tp.__version__)
    next_breaking = Version(
        f"{core.major}.{core.minor + 1}" if core.major == 0 else f"{core.major + 1}"
    )
    for dist in dists:
        project = tomllib.loads((dist / "pyproject.toml").read_text())["project"]
        [req] = [
            Requirement(r) for r in project["dependencies"] if Requirement(r).name == "tensorplug"
        ]
        assert req.specifier.contains(core), f"{dist.name}: {req} excludes tensorplug {core}"
        assert not req.specifier.contains(next_breaking), (
            f"{dist.name}: {req} admits tensorplug {next_breaking}, whose plugin API may differ; "
            f"bound it (tensorplug>={core.major}.{core.minor},<{next_breaking})"
        )
        for module in project["entry-points"]["tensorplug"].values():
            source = (dist / "src" / module.split(".")[0] / "__init__.py").read_text()
            declared = re.search(r'^PLUGIN_API_VERSION = "(\d+)\.(\d+)"', source, re.M)
            assert declared, f"{dist.name}: {module} declares no PLUGIN_API_VERSION"
            have = tuple(map(int, tp.PLUGIN_API_VERSION.split(".")))
            assert int(declared[1]) == have[0] and int(declared[2]) <= have[1], dist.name


# --- the third-party template (examples/foo_backend) ----------------------------------------


def test_foo_example_plugin(monkeypatch):
    pytest.importorskip("numpy")  # the example's array library
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "foo_backend" / "src"))
    with needs.unloaded("foo"):  # installed here or not: this test registers it itself
        before = snapshot()
        _foo_example_plugin()
        assert snapshot() == before


def _foo_example_plugin() -> None:
    import tensorplug_foo

    info = plugins.register(tensorplug_foo, name="foo")
    assert info.keys == ("Foo", "FooCount") and info.op_count > 100
    assert info.names == ("foo_counting",) and info.tensor_methods == ("is_foo",)
    x = tp.tensor([1.0, 2.0], device="foo")
    assert x.is_foo and x.device.type == "foo"
    with tp.foo_counting() as counts:
        y = tp.ops.foo.scale_shift(x, 2.0, 1.0)
    assert y.tolist() == [3.0, 5.0] and y.is_foo
    assert counts["foo::scale_shift.default"] == 1 and len(counts) >= 3
    assert dispatcher.dispatch_table("foo::scale_shift")["Foo"] == "CompositeImplicitAutograd"
    plugins.unregister("foo")


@pytest.mark.skipif("batched" not in tp.plugins.loaded_names(), reason="needs tensorplug-batched")
def test_a_plugin_imported_before_tensorplug_says_so():
    # tensorplug_batched imports tensorplug before it defines its hooks, so the entry point
    # meets a half-imported module: the failure says what happened and what to do
    code = textwrap.dedent(
        """
        import warnings
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as caught:
            import tensorplug_batched
            import tensorplug as tp
        print(tp.plugins.get("batched").status)
        print([str(w.message) for w in caught if "batched" in str(w.message)][0])
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    status, message = r.stdout.splitlines()[:2]
    assert status == "failed"
    assert (
        "its module 'tensorplug_batched' was still being imported when tensorplug loaded its "
        "plugins (it was imported before tensorplug); import tensorplug first" in message
    )


# --- issue 32, item 5 -------------------------------------------------------------------------


def test_own_library_of_a_failing_plugin_is_rolled_back(clean, ns):
    """A plugin that registers through a tp.Library it creates itself, then fails: the
    warning says everything was rolled back, and it was."""
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "own", "CPU")

        def register_kernels(registry: Any) -> None:
            tp.Library(ns, "IMPL").impl("f", lambda x: "hijacked", "CPU", override=True)
            raise RuntimeError("failed after registering")

        with pytest.raises(plugins.PluginError, match="Everything it registered was rolled back"):
            plugins.register(make_plugin(tensorplug_register_kernels=register_kernels), "own_lib")
        assert getattr(tp.ops, ns).f(FakeTensor("CPU")) == "own"
        plugins.unregister("own_lib")


def test_override_survives_the_owner_registered_again(clean, ns):
    """Plugin 'over' overrides plugin 'owner''s op; 'owner' is unregistered and registered
    again: the override holds again, as 'over' is still loaded."""

    def owner_kernels(registry: Any) -> None:
        lib = registry.library(ns, "DEF")
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "owner", "CPU")

    def over_kernels(registry: Any) -> None:
        registry.library(ns, "IMPL").impl("f", lambda x: "override", "CPU", override=True)

    owner = make_plugin(tensorplug_register_kernels=owner_kernels)
    plugins.register(owner, "owner")
    plugins.register(make_plugin(tensorplug_register_kernels=over_kernels), "over")
    assert getattr(tp.ops, ns).f(FakeTensor("CPU")) == "override"
    plugins.unregister("owner")
    plugins.register(make_plugin(tensorplug_register_kernels=owner_kernels), "owner")
    assert "over" in plugins.loaded_names()
    assert getattr(tp.ops, ns).f(FakeTensor("CPU")) == "override"
    plugins.unregister("over")
    assert getattr(tp.ops, ns).f(FakeTensor("CPU")) == "owner"
    plugins.unregister("owner")
