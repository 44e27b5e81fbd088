"""The public plugin API beyond hooks and libraries (docs/plugins.md, "The plugin API"):
kernel lookup for a key set, the dispatch cache, the registry generation, key listeners and
repr suffixes, lazy, boxed and no-dispatch kernels, the tracing state, the tensor protocol and
the storage queries."""

from __future__ import annotations

import re

import pytest

import tensorplug as tp
from fakes import FakeTensor
from tensorplug import dispatcher, storage
from tensorplug.tensor import data_id, is_wrapper, make_wrapper, new_tensor, wrapper_factory
from tests.tool_scripts import load_tool


def test_kernel_for_is_what_a_call_runs(ns, probe_key):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        cpu = lambda x: "cpu"
        lib.impl("f", cpu, "CPU")
        lib.impl("f", lambda ks, x: ("ag", ks), "AutogradCPU", with_keyset=True)
        lib.impl("f", tp.library.fallthrough_kernel, "Tracer")
        op = getattr(tp.ops, ns).f.default
        cpu_ks = tp.keys.keyset("CPU")
        assert op.kernel_for(cpu_ks) is cpu
        # fallthrough keys are skipped, as a call skips them
        assert op.kernel_for(tp.keys.keyset("CPU", "Tracer")) is cpu
        # a with_keyset kernel comes with the key set bound
        ks = tp.keys.keyset("CPU", "AutogradCPU")
        tag, got = op.kernel_for(ks)(FakeTensor("CPU"))
        assert tag == "ag" and got == ks
        # a key with neither kernel nor fallback (the batched plugin has a Batched fallback)
        with pytest.raises(
            tp.DispatchError,
            match=rf"Could not run '{ns}::f.default' with arguments from the 'FallbackProbe'",
        ):
            op.kernel_for(tp.keys.keyset("CPU", "FallbackProbe"))


@pytest.fixture
def probe_key():
    """A functionality key of this test only (Batched has the batched plugin's fallback)."""
    key = tp.keys.register_functionality("FallbackProbe", owner="tests")
    try:
        yield key
    finally:
        tp.keys.unregister("FallbackProbe")


def test_kernel_for_boxed_fallback_gets_op_and_keyset(ns, probe_key):
    with tp.Library(ns, "DEF") as lib, tp.Library("_", "IMPL") as fb:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "cpu", "CPU")
        fb.fallback(lambda op, ks, *a: (op.name, ks), "FallbackProbe")
        op = getattr(tp.ops, ns).f.default
        ks = tp.keys.keyset("CPU", "FallbackProbe")
        assert op.kernel_for(ks)(FakeTensor("CPU")) == (f"{ns}::f.default", ks)


def test_has_kernel_counts_direct_registrations_only(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CompositeImplicitAutograd")
        op = getattr(tp.ops, ns).f.default
        assert op.has_kernel("CompositeImplicitAutograd")
        assert not op.has_kernel("CPU")  # the CPU entry comes from the alias
        assert dispatcher.dispatch_table(op)["CPU"] == "CompositeImplicitAutograd"


def test_generation_changes_with_every_registration(ns, probe_key):
    g0 = dispatcher.generation()
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        g1 = dispatcher.generation()
        assert g1 != g0
        lib.impl("f", lambda x: x, "CPU")
        g2 = dispatcher.generation()
        assert g2 != g1
        op = getattr(tp.ops, ns).f.default
        op(FakeTensor("CPU"))  # calls do not change it
        op.kernel_for(tp.keys.keyset("CPU"))
        assert dispatcher.generation() == g2
        with tp.Library("_", "IMPL") as fb:
            fb.fallback(lambda op, ks, *a: None, "FallbackProbe")
        assert dispatcher.generation() != g2
    assert dispatcher.generation() not in (g0, g1, g2)


def test_keys_add_and_remove_listener():
    seen: list[int] = []
    fn = lambda: seen.append(1)
    tp.keys.add_listener(fn)
    tp.keys.add_listener(fn)  # once only
    try:
        tp.keys.register_functionality("ListenerProbeKey2")
        tp.keys.unregister("ListenerProbeKey2")
        assert seen == [1, 1]
    finally:
        tp.keys.remove_listener(fn)
    tp.keys.remove_listener(fn)  # unknown: ignored
    tp.keys.register_functionality("ListenerProbeKey2")
    tp.keys.unregister("ListenerProbeKey2")
    assert seen == [1, 1]


def test_kernel_cache_is_the_dispatch_cache_for_the_ops_life(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        cpu = lambda x: "cpu"
        lib.impl("f", cpu, "CPU")
        op = getattr(tp.ops, ns).f.default
        cache = op.kernel_cache
        ks = int(tp.keys.keyset("CPU"))
        assert cache == {}
        assert op(FakeTensor("CPU")) == "cpu" and list(cache.values()) == [cpu]  # a call fills it
        # Note [Derived cache entries]: made once, kept under -ks
        derived = op.derived_kernel(ks, lambda: ("derived", op.kernel_for(ks)))
        assert derived == ("derived", cpu) and cache[-ks] is derived
        assert op.derived_kernel(ks, lambda: "made again") is derived
        other = lambda x: "other"
        lib.impl("f", other, "CPU", override=True)
        assert op.kernel_cache is cache and cache == {}  # emptied, derived entries too
        assert op.kernel_for(ks) is other and cache == {ks: other}
        assert op.derived_kernel(ks, lambda: "made again") == "made again"


def test_trace_state_is_on_while_dispatch_tracing():
    assert dispatcher.trace_state.enabled is False
    with dispatcher.tracing(lambda line: None):
        assert dispatcher.trace_state.enabled is True
    assert dispatcher.trace_state.enabled is False


def test_lazy_kernel_is_built_on_its_first_call(ns):
    built = []

    def kernel(ks, x):
        return ("built", int(ks))

    def build():
        built.append(kernel)
        return kernel

    build.__qualname__ = "my_kernel[f]"
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", build, "CPU", with_keyset=True, lazy=True)
        op = getattr(tp.ops, ns).f.default
        assert built == [] and dispatcher.dispatch_table(op)["CPU"] == "CPU"
        assert "my_kernel[f]" in dispatcher.explain(op, FakeTensor("CPU"), run=False)
        ks = int(tp.keys.keyset("CPU", "BackendSelect"))  # BackendSelect: always included
        assert op(FakeTensor("CPU")) == ("built", ks) and built == [kernel]
        assert op(FakeTensor("CPU")) == ("built", ks) and built == [kernel]
        # the built kernel took the registration's place: the cache holds it, not the stand-in
        assert op.kernel_cache[ks].func is kernel
        assert f"-> {__name__}.kernel, registered by" in (
            dispatcher.explain(op, FakeTensor("CPU"), run=False)
        )
    assert built == [kernel]


def test_per_keyset_factory_is_called_once_per_key_set(ns):
    made = []

    def factory(op, ks):  # Note [Per-key-set kernels]: the kernel of ks, ks bound by it
        made.append(int(ks))
        traced = dispatcher.trace_state.enabled
        return lambda x: ("made", int(ks), traced)

    factory.__qualname__ = "my_factory[f]"
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", factory, "CPU", per_keyset=True)
        op = getattr(tp.ops, ns).f.default
        ks = int(tp.keys.keyset("CPU", "BackendSelect"))  # BackendSelect: always included
        assert made == [] and dispatcher.dispatch_table(op)["CPU"] == "CPU"
        assert op(FakeTensor("CPU")) == ("made", ks, False)
        assert op(FakeTensor("CPU")) == ("made", ks, False) and made == [ks]
        assert op.kernel_for(ks) is op.kernel_cache[ks]  # the factory's kernel, unwrapped
        assert op.kernel_for(ks)(None) == ("made", ks, False) and made == [ks]
        other = int(tp.keys.keyset("CPU"))
        assert op.kernel_for(other)(None) == ("made", other, False) and made == [ks, other]
        # explain and traces name the factory
        text = dispatcher.explain(op, FakeTensor("CPU"))
        assert f"chosen key: CPU (entry from CPU) -> {__name__}.my_factory[f], registered" in text
        assert f"-> CPU (skipped fallthrough BackendSelect): {__name__}.my_factory[f]" in text
        # switching tracing drops every entry: the factory makes the traced mode's kernel
        lines: list[str] = []
        with dispatcher.tracing(lines.append):
            assert op(FakeTensor("CPU")) == ("made", ks, True)
        assert f"{__name__}.my_factory[f]" in lines[0]
        assert op(FakeTensor("CPU")) == ("made", ks, False)
        # explain's traced run, the traced call, this call: made again for each mode
        assert made == [ks, other, ks, ks, ks]
        # a registration change drops the factory's entries with the rest
        lib.impl("f", lambda x: "plain", "AutogradCPU")
        assert op.kernel_cache == {}
        assert op(FakeTensor("CPU")) == ("made", ks, False) and made[5:] == [ks]


def test_per_keyset_factory_answer_is_not_kept_across_a_registration(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        op = getattr(tp.ops, ns).f.default

        def factory(op, ks):  # a registration happens while the factory runs
            lib.impl("f", lambda x: "plain", "AutogradCPU")
            return lambda x: "made"

        lib.impl("f", factory, "CPU", per_keyset=True)
        ks = int(tp.keys.keyset("CPU", "BackendSelect"))
        assert op(FakeTensor("CPU")) == "made"  # it serves this call ...
        assert ks not in op.kernel_cache  # ... but an entry from the older table is not kept


def test_per_keyset_factory_errors_name_the_op_key_and_plugin(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        op = getattr(tp.ops, ns).f.default
        lib.impl("f", lambda op, ks: None, "CPU", per_keyset=True)
        with pytest.raises(
            tp.RegistrationError,
            match=rf"{ns}::f.default: the kernel factory for key 'CPU' \(.*registered by "
            r".*\) returned NoneType None for key set .*; a per_keyset factory must return",
        ):
            op(FakeTensor("CPU"))
        for flag in ("with_keyset", "boxed"):
            with pytest.raises(
                tp.RegistrationError,
                match=rf"{ns}::f.default: the kernel factory for key 'CPU' .* per_keyset=True "
                rf"with {flag}=True",
            ):
                lib.impl("f", lambda op, ks: None, "CPU", per_keyset=True, **{flag: True})
        # what a factory raises reaches the caller, and nothing is cached
        lib.impl("f", _raising_factory, "CPU", override=True, per_keyset=True)
        with pytest.raises(ValueError, match="no kernel for this key set"):
            op(FakeTensor("CPU"))
        assert op.kernel_cache == {}


def _raising_factory(op, ks):
    raise ValueError("no kernel for this key set")


def test_per_keyset_factory_can_be_built_lazily(ns):
    built = []

    def build():
        built.append(1)
        return lambda op, ks: lambda x: ("made", int(ks))

    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", build, "CPU", per_keyset=True, lazy=True)
        op = getattr(tp.ops, ns).f.default
        ks = int(tp.keys.keyset("CPU", "BackendSelect"))
        assert built == []
        assert op(FakeTensor("CPU")) == ("made", ks) and built == [1]
        assert op(FakeTensor("CPU")) == ("made", ks) and built == [1]


def test_mark_boxed_makes_impl_call_the_kernel_boxed(ns):
    @tp.library.mark_boxed
    def boxed(op, ks, *args, **kwargs):
        return (op.name, int(ks), len(args))

    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.define("g(Tensor x) -> Tensor")
        lib.impl("f", boxed, "CPU")
        lib.impl("g", lambda x: "unboxed", "CPU", boxed=False)
        ks = int(tp.keys.keyset("CPU", "BackendSelect"))
        assert getattr(tp.ops, ns).f.default(FakeTensor("CPU")) == (f"{ns}::f.default", ks, 1)
        assert getattr(tp.ops, ns).g.default(FakeTensor("CPU")) == "unboxed"


def test_mark_no_dispatch_is_what_is_no_dispatch_reads():
    def kernel(x):
        return x

    assert not tp.library.is_no_dispatch(kernel)
    assert tp.library.mark_no_dispatch(kernel) is kernel and tp.library.is_no_dispatch(kernel)
    if "cpu" in tp.plugins.loaded_names():  # the array kernels carry the mark, copies do not
        cpu = int(tp.keys.keyset("CPU"))
        assert tp.library.is_no_dispatch(tp.ops.aten.add.Tensor.kernel_for(cpu))
        assert not tp.library.is_no_dispatch(tp.ops.aten.copy_.default.kernel_for(cpu))


needs_cpu = pytest.mark.skipif(
    "cpu" not in tp.plugins.loaded_names(), reason="needs the tensorplug-cpu plugin"
)


@needs_cpu
def test_tensor_protocol_names_are_the_tensors_fields():
    np = pytest.importorskip("numpy")
    t = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert isinstance(t.tp_data, np.ndarray) and t.tp_data.shape == (2, 2)
    assert t.tp_dtype is tp.float32 and t.tp_device == tp.device("cpu")
    assert t.tp_keyset == tp.keys.tensor_keyset("CPU") and t.tp_base is None
    v = t[1]
    assert v.tp_base is t and v.tp_version is t.tp_version
    before = t.tp_version.value
    v.add_(1.0)
    assert t.tp_version.value == before + 1 and t.tolist() == [[1.0, 2.0], [4.0, 5.0]]
    # writing them is what a plugin does: the key set decides where calls go
    with tp.Library("_", "IMPL") as fb:
        fb.fallback(lambda op, ks, *a, **k: "tracer saw " + op.name, "Tracer", override=True)
        u = tp.tensor([1.0])
        u.tp_keyset |= tp.keys.get("Tracer").mask
        assert tp.neg(u) == "tracer saw aten::neg.default"
    v.tp_base = None
    assert v.tp_base is None


@needs_cpu
def test_alias_shares_data_and_version_but_is_not_a_view():
    t = tp.tensor([1.0, 2.0])
    a = storage.alias(t, t.tp_keyset)
    assert a is not t and a.tp_data is t.tp_data and a.tp_base is None
    assert a.tp_version is t.tp_version and a.tp_keyset == t.tp_keyset
    a.mul_(2.0)
    assert t.tolist() == [2.0, 4.0] and t.tp_version.value == 1
    fresh = new_tensor(t.tp_data, t.tp_dtype, t.tp_device, t.tp_keyset)
    assert fresh.tp_version is not t.tp_version and fresh.tp_version.value == 0


@needs_cpu
def test_memory_layout_of_views():
    base = tp.zeros(4, 3, dtype=tp.float64)
    whole = storage.memory_layout(base)
    assert whole is not None and whole.strides == (24, 8) and whole.itemsize == 8
    v = base[1:, ::2]
    lv = storage.memory_layout(v)
    assert lv.address - whole.address == 24 and lv.strides == (24, 16)
    tr = storage.memory_layout(base.t())
    assert tr.address == whole.address and tr.strides == (8, 24)


@needs_cpu
def test_memory_layout_is_none_where_the_storage_cannot_tell(monkeypatch):
    t = tp.zeros(2)
    storage_backend = type(storage._backends.for_device_type("cpu"))
    monkeypatch.setattr(storage_backend, "memory_layout", lambda self, data: None)
    assert storage.memory_layout(t) is None
    monkeypatch.delattr(storage_backend, "memory_layout")
    assert storage.memory_layout(t) is None


@needs_cpu
def test_views_of_finds_the_live_views_of_a_base():
    base = tp.zeros(3, 2)
    assert storage.views_of(base) == []
    row, col = base[1], base[:, 0]
    other = tp.zeros(2)
    assert {id(v) for v in storage.views_of(base)} == {id(row), id(col)}
    del col
    assert [v is row for v in storage.views_of(base)] == [True]
    assert storage.views_of(other) == []


# --- plugins use only the public API (tools/plugin_api_check.py) --------------------------------


def _checker():
    return load_tool("plugin_api_check")


def test_every_plugin_uses_only_the_public_api():
    check = _checker()
    core_names = check.core_private_names()
    assert {"_data", "_tp_keyset", "_cache", "_schema", "_tp_no_dispatch"} <= set(core_names)
    dists = check.distributions([check.ROOT / "plugins", check.ROOT / "examples"])
    names = {d.name for d in dists}
    assert {"cpu", "autograd", "foo_backend"} <= names, names
    report = []
    for dist in dists:
        found, modules = check.check_plugin(dist, core_names)
        assert modules > 0, f"{dist}: no modules under src/"
        report += [str(v) for v in found]
    assert report == [], "plugins use private tensorplug API:\n" + "\n".join(report)


PRIVATE_USES = """\
import tensorplug as tp
import tensorplug._repr
from tensorplug import _api, dispatcher as d
from tensorplug._backends import for_key
from tensorplug.dispatcher import OpOverload, _trace
from tensorplug.tensor import Tensor


def kernel(t, op):
    t._tp_keyset |= 1                    # 10: a core attribute, written
    x = t._data.shape                    # 11
    op._cache.get(3)                     # 12
    getattr(op, "_schema")               # 13: by name
    d._trace.enabled                     # 14: a private name through a tensorplug module
    Tensor._new(x, None, None, 0)        # 15
    tp.dispatcher._ops                   # 16
    tp._softmax_backward_data(x)         # 17: a private-named function of tensorplug
    return ctx._dirty                    # 18: the plugin's own, but named like the core's


class Ctx:
    def __init__(self):
        self._dirty = ()                 # the plugin's own, on self: fine
        self._mine = 1                   # a name the core does not use: fine


class MyLibrary(tp.Library):
    def close(self):
        self._check_open()               # 29: inherited from a core class
        op.kernel_cache[-3] = None       # 30: plugins only read the dispatch cache
        op.kernel_cache.clear()          # 31
        op.kernel_cache.get(3), op.derived_kernel(3, list)
        return tp.ops.aten._softmax_backward_data.default, op.name, t.tp_keyset, t._version
"""


def test_the_check_reports_each_kind_of_private_use(tmp_path):
    check = _checker()
    dist = tmp_path / "tensorplug-probe"
    (dist / "src" / "probe").mkdir(parents=True)
    (dist / "pyproject.toml").write_text("[project]\nname = 'tensorplug-probe'\n")
    (dist / "src" / "probe" / "__init__.py").write_text(PRIVATE_USES)
    found, modules = check.check_plugin(dist)
    assert modules == 1
    assert [(v.line, v.name) for v in found] == [
        (2, "tensorplug._repr"),
        (3, "tensorplug._api"),
        (4, "tensorplug._backends"),
        (5, "tensorplug.dispatcher._trace"),
        (10, "t._tp_keyset"),
        (11, "t._data"),
        (12, "op._cache"),
        (13, "op._schema"),
        (14, "d._trace"),
        (15, "Tensor._new"),
        (16, "tp.dispatcher._ops"),
        (17, "tp._softmax_backward_data"),
        (18, "ctx._dirty"),
        (29, "self._check_open"),
        (30, "op.kernel_cache[-3]"),
        (31, "op.kernel_cache.clear"),
    ]
    by_line = {v.line: str(v) for v in found}
    assert re.search(
        r"probe/__init__\.py:11: t\._data: _data is a private attribute of a core object "
        r"\(tensorplug/tensor\.py:\d+\); use the public API \(docs/plugins\.md\), or, if it is "
        r"the plugin's own, give it another name$",
        by_line[11],
    ), by_line[11]
    assert "a private name of tensorplug" in by_line[14]
    assert check.main([str(dist)]) == 1
    assert check.main([str(check.ROOT / "plugins" / "cpu")]) == 0


def test_data_id_is_shared_by_aliases_of_one_array_only():
    pytest.importorskip("tensorplug_cpu")
    t = tp.ones([3])
    alias = tp.Tensor._new(
        t._data, t.dtype, t.device, int(tp.keys.keyset("CPU"))
    )  # as autograd does
    assert data_id(alias) == data_id(t)
    assert data_id(t.clone()) != data_id(t)
    assert data_id(t.view([3, 1])) != data_id(t)  # a view holds its own array


def test_value_read_hook_sees_tolist_and_numpy_and_follows_the_plugin():
    pytest.importorskip("tensorplug_cpu")
    seen: list[tuple[int, str]] = []

    class Plugin:
        @staticmethod
        @tp.hookimpl
        def tensorplug_register_kernels(registry):
            registry.add_value_read_hook(lambda t, method: seen.append((id(t), method)))

    t = tp.tensor([1.0, 2.0])
    tp.plugins.register(Plugin, name="value_read_probe")
    try:
        assert t.tolist() == [1.0, 2.0]
        t.numpy()
        repr(t)  # printing is not a read
        assert seen == [(id(t), "tolist"), (id(t), "numpy")]
    finally:
        tp.plugins.unregister("value_read_probe")
    t.tolist()
    assert len(seen) == 2


# --- device runtimes (tp.cuda) --------------------------------------------------------------


class ProbeRuntime:
    device_type = "probedev"

    def unavailable_reason(self) -> str | None:
        return "the probe has no devices"


def _runtime_plugin(rt: ProbeRuntime) -> object:
    @tp.hookimpl
    def tensorplug_register_kernels(registry):
        registry.add_device_runtime(rt)

    return type("RuntimePlugin", (), {"tensorplug_register_kernels": staticmethod(
        tensorplug_register_kernels)})  # fmt: skip


def test_device_runtime_follows_the_plugin(capsys):
    from tensorplug import _backends, cli

    rt = ProbeRuntime()
    tp.plugins.register(_runtime_plugin(rt), name="runtime_probe")
    try:
        assert tp.plugins.get("runtime_probe").devices == ("probedev",)
        assert _backends.runtime("probedev") is rt
        assert cli.main(["plugins"]) == 0
        out = capsys.readouterr().out
        assert "runtime_probe: no probedev device is available: the probe has no devices" in out
        row = next(ln for ln in out.splitlines() if ln.startswith("runtime_probe "))
        assert row.split()[1:4] == ["(in-process)", "-", "loaded"] and "(no device)" in row
        with pytest.raises(
            tp.plugins.PluginError, match="already has one from another plugin"
        ) as e:
            tp.plugins.register(_runtime_plugin(ProbeRuntime()), name="runtime_probe_2")
        assert "'runtime_probe_2' adds a device runtime for device type 'probedev'" in str(e.value)
        assert "runtime_probe_2" not in tp.plugins.loaded_names()  # rolled back
    finally:
        tp.plugins.unregister("runtime_probe")
        tp.plugins.unregister("runtime_probe_2")
    assert _backends.runtime("probedev") is None


def test_a_plugin_backend_declares_its_autocast_dtypes():
    class Plugin:
        @tp.hookimpl
        def tensorplug_add_keys(self, keys):
            keys.register_backend(
                "AmpDeclared", "ampdeclared", autocast_dtype=tp.float16,
                autocast_dtypes=(tp.float16, tp.bfloat16),
            )  # fmt: skip

    tp.plugins.register(Plugin(), name="amp_declared")
    try:
        key = tp.keys.get("AmpDeclared")
        assert key.autocast_dtype is tp.float16
        assert key.autocast_dtypes == (tp.float16, tp.bfloat16)
        assert key.owner == "amp_declared"
    finally:
        tp.plugins.unregister("amp_declared")


# --- wrapper tensors (Note [Wrapper tensors] in tensor.py) -------------------------------------

needs_cpu = pytest.mark.skipif(
    "cpu" not in tp.plugins.loaded_names(), reason="needs the tensorplug-cpu plugin loaded"
)


class Boxed(tp.Tensor):
    """A wrapper a third-party functionality key might define: it stands for ``inner``."""

    inner: tp.Tensor


def _box(inner: tp.Tensor, key: tp.keys.DispatchKey) -> Boxed:
    ks = tp.keys.tensor_keyset("CPU") | key.mask
    t = make_wrapper(Boxed, inner.shape, inner.dtype, inner.device, ks, version_of=inner)
    t.inner = inner
    return t


@needs_cpu
def test_make_wrapper_has_logical_metadata_and_no_data():
    inner = tp.zeros([2, 3], dtype=tp.float64)
    ks = tp.keys.tensor_keyset("CPU") | tp.keys.get("Batched").mask
    w = make_wrapper(Boxed, (3,), tp.float64, inner.device, ks)
    assert type(w) is Boxed and isinstance(w, tp.Tensor)
    assert w.shape == (3,) and w.size() == (3,) and w.size(-1) == 3
    assert w.ndim == 1 and w.dim() == 1 and w.numel() == 3 and len(w) == 3
    assert w.dtype is tp.float64 and w.device == inner.device
    assert is_wrapper(w) and not is_wrapper(inner)
    for read in (w.tolist, w.numpy, lambda: repr(w)):
        with pytest.raises(
            RuntimeError, match="Cannot access data pointer of Tensor that doesn't have storage"
        ):
            read()
    with pytest.raises(TypeError, match="make_wrapper: cls must be tensorplug.Tensor"):
        make_wrapper(int, (3,), tp.float64, inner.device, ks)  # type: ignore[type-var]


@needs_cpu
def test_wrapper_factory_builds_what_make_wrapper_builds():
    inner = tp.zeros([2, 3], dtype=tp.float64)
    ks = tp.keys.tensor_keyset("CPU") | tp.keys.get("Batched").mask
    make = wrapper_factory(Boxed)
    w, ref = (
        make((3,), tp.float64, inner.device, ks),
        make_wrapper(Boxed, (3,), tp.float64, inner.device, ks),
    )
    for t in (w, ref):
        assert type(t) is Boxed and is_wrapper(t) and t.tp_keyset == ks
        assert t.shape == (3,) and t.dtype is tp.float64 and t.device == inner.device
        assert t._version == 0
    assert w.tp_version is not ref.tp_version  # a counter of its own
    assert make((2, 5), tp.float32, inner.device, ks).shape == (2, 5)
    with pytest.raises(TypeError, match="make_wrapper: cls must be tensorplug.Tensor"):
        wrapper_factory(int)  # type: ignore[type-var]


@needs_cpu
def test_wrapper_dispatches_to_its_key_and_shares_the_version_counter():
    class BoxPlugin:
        @staticmethod
        @tp.hookimpl
        def tensorplug_add_keys(keys):
            keys.register_functionality("BoxProbe", before="Batched")

        @staticmethod
        @tp.hookimpl
        def tensorplug_register_kernels(registry):
            def unbox(op, ks, *args, **kwargs):
                key = tp.keys.get("BoxProbe")
                plain = [a.inner if isinstance(a, Boxed) else a for a in args]
                out = op(*plain, **kwargs)
                return (
                    _box(out, key)
                    if isinstance(out, tp.Tensor) and out is not plain[0]
                    else args[0]
                )

            registry.library("_", "IMPL").fallback(unbox, "BoxProbe")

    tp.plugins.register(BoxPlugin, name="boxprobe")
    try:
        key = tp.keys.get("BoxProbe")
        inner = tp.tensor([1.0, 2.0])
        w = _box(inner, key)
        assert key in tp.keys.DispatchKeySet(w._tp_keyset)
        out = tp.add(w, w)
        assert isinstance(out, Boxed) and out.inner.tolist() == [2.0, 4.0]
        v0 = inner._version
        r = w.add_(1.0)  # written through the inner tensor, bumped once
        assert r is w and inner.tolist() == [2.0, 3.0]
        assert inner._version == w._version == v0 + 1
    finally:
        tp.plugins.unregister("boxprobe")
