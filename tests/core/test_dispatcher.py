"""Calls through the dispatcher: key order, guards, redispatch, fallbacks, errors, tracing."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import tensorplug as tp
from fakes import FakeTensor
from tensorplug.dispatch import exclude, include


def test_backend_kernel_receives_arguments(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor self, Tensor other, int n=2, *, float alpha=1.0) -> Tensor")
        lib.impl("f", lambda s, o, n, alpha: (s.tag, o.tag, n, alpha), "CPU")
        a, b = FakeTensor("CPU", tag="a"), FakeTensor("CPU", tag="b")
        op = getattr(tp.ops, ns).f
        assert op(a, b) == ("a", "b", 2, 1.0)
        assert op.default(a, b, 3, alpha=0.5) == ("a", "b", 3, 0.5)
        assert op(other=b, self=a, n=4) == ("a", "b", 4, 1.0)


def test_order_through_functionality_stack(ns):
    """Batched > Tracer > AutogradCPU > CPU, each layer redispatching below itself."""
    log: list[str] = []
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor self) -> Tensor")
        op = getattr(tp.ops, ns).f.default

        def layer(name: str):
            def k(ks, x):
                log.append(name)
                return op.redispatch(ks.below(name), x)

            return k

        for name in ("Batched", "Tracer", "AutogradCPU"):
            lib.impl("f", layer(name), name, with_keyset=True)
        lib.impl("f", lambda x: log.append("CPU") or "done", "CPU")
        x = FakeTensor("CPU", "AutogradCPU", "Batched")
        with include("Tracer"):
            assert op(x) == "done"
        assert log == ["Batched", "Tracer", "AutogradCPU", "CPU"]
        log.clear()
        with exclude("Batched"):
            op(x)
        assert log == ["AutogradCPU", "CPU"]


def test_tutorial_pattern_reenters_under_exclude(ns):
    """An autograd-style kernel calls the op again under exclude('Autograd'): no recursion."""
    calls: list[str] = []
    with tp.Library(ns, "DEF") as lib:
        lib.define("mul2(Tensor self) -> Tensor")
        op = getattr(tp.ops, ns).mul2

        def autograd_kernel(x):
            calls.append("autograd")
            with exclude("Autograd"):
                return op(x)

        lib.impl("mul2", autograd_kernel, "Autograd")
        lib.impl("mul2", lambda x: calls.append("cpu") or "r", "CPU")
        assert op(FakeTensor("CPU", "AutogradCPU")) == "r"
        assert calls == ["autograd", "cpu"]
        calls.clear()
        op(FakeTensor("CPU"))  # plain tensors never see the Autograd kernel
        assert calls == ["cpu"]


def test_boxed_fallback_and_fallthrough(ns):
    seen = []

    def tracer_fallback(op, ks, *args, **kwargs):
        seen.append((op.name, [k.name for k in ks]))
        return op.redispatch(ks.below("Tracer"), *args, **kwargs)

    with tp.Library(ns, "DEF") as lib, tp.Library("_", "IMPL") as fb:
        lib.define("f(Tensor self, *, int k=1) -> Tensor")
        lib.define("g(Tensor self) -> Tensor")
        lib.impl("f", lambda x, k: k, "CPU")
        lib.impl("g", lambda x: "g", "CPU")
        fb.fallback(tracer_fallback, "Tracer", override=True)  # over the tracer plugin's
        lib.impl("g", tp.library.fallthrough_kernel, "Tracer")  # per-op fallthrough wins
        f, g = getattr(tp.ops, ns).f, getattr(tp.ops, ns).g
        with include("Tracer"):
            assert f(FakeTensor("CPU"), k=5) == 5
            assert g(FakeTensor("CPU")) == "g"
        assert seen == [(f"{ns}::f.default", ["Tracer", "BackendSelect", "CPU"])]
        assert tp.dispatcher.dispatch_table(f"{ns}::g")["Tracer"] == "fallthrough"
        assert tp.dispatcher.dispatch_table(f"{ns}::f")["Tracer"] == "fallback"


def test_include_exclude_are_per_thread(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor self) -> str")
        lib.impl("f", lambda x: "tracer", "Tracer")
        lib.impl("f", lambda x: "cpu", "CPU")
        f = getattr(tp.ops, ns).f
        x = FakeTensor("CPU")
        results: dict[str, str] = {}
        inside = threading.Event()
        checked = threading.Event()

        def other():
            inside.wait()
            results["other"] = f(x)
            results["other_included"] = repr(tp.dispatch.included())
            checked.set()

        t = threading.Thread(target=other)
        t.start()
        with include("Tracer"):
            results["main"] = f(x)
            inside.set()
            checked.wait(10)
        t.join()
        assert results == {
            "main": "tracer",
            "other": "cpu",
            "other_included": "DispatchKeySet()",
        }
        assert f(x) == "cpu"


def test_guards_restore_on_exception():
    before = (tp.dispatch.included(), tp.dispatch.excluded())
    with pytest.raises(ValueError):
        with include("Tracer"), exclude("Autograd"):
            raise ValueError
    assert (tp.dispatch.included(), tp.dispatch.excluded()) == before


def test_autocast_keys_excluded_by_default(backend):
    excluded = {k.name for k in tp.dispatch.excluded()}
    assert {"AutocastCPU", "AutocastCUDA", f"Autocast{backend.name}"} <= excluded


def test_close_leaves_no_trace(ns):
    def fb(op, ks, *a, **k):
        return None

    table_before = tp.dispatcher.fallbacks()
    lib = tp.Library(ns, "DEF")
    lib.define("f(Tensor self) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    fb_lib = tp.Library("_", "IMPL")
    fb_lib.fallback(fb, "Tracer", override=True)
    other = tp.Library("aten_like_" + ns, "DEF")
    other.define("h(Tensor self) -> Tensor")
    impl_lib = tp.Library("aten_like_" + ns, "IMPL")
    impl_lib.impl("h", lambda x: x, "CPU")
    assert tp.dispatcher.dispatch_table(f"aten_like_{ns}::h")["Tracer"] == "fallback"
    fb_lib.close()
    impl_lib.close()
    assert tp.dispatcher.registrations(f"aten_like_{ns}::h") == {}
    # what was there before (the tracer plugin's fallback, when it is loaded)
    before = "fallback" if "Tracer" in table_before else "missing"
    assert tp.dispatcher.dispatch_table(f"aten_like_{ns}::h")["Tracer"] == before
    lib.close()
    other.close()
    lib.close()  # twice is harmless
    assert tp.dispatcher.fallbacks() == table_before
    assert not [op for op in tp.dispatcher.all_ops() if ns in op.namespace]
    with pytest.raises(AttributeError, match="no operator"):
        getattr(tp.ops, ns).f
    # the namespace can be defined again
    with tp.Library(ns, "DEF") as again:
        again.define("f(Tensor self) -> Tensor")


def test_override_restores_previous_on_close(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor self) -> str")
        lib.impl("f", lambda x: "first", "CPU")
        f = getattr(tp.ops, ns).f
        with tp.Library(ns, "IMPL") as patch:
            patch.impl("f", lambda x: "second", "CPU", override=True)
            assert f(FakeTensor("CPU")) == "second"
        assert f(FakeTensor("CPU")) == "first"


def test_version_counter_bumped_once_for_written_args(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("add_(Tensor(a!) self, Tensor other) -> Tensor(a!)")
        lib.define("out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
        lib.define("read(Tensor self) -> Tensor")
        op = getattr(tp.ops, ns)

        def autograd_add_(x, y):  # nested dispatch of the same in-place call
            with exclude("Autograd"):
                return op.add_(x, y)

        lib.impl("add_", autograd_add_, "Autograd")
        lib.impl("add_", lambda x, y: x, "CPU")
        lib.impl("out", lambda x, out: out, "CPU")
        lib.impl("read", lambda x: x, "CPU")
        a, b = FakeTensor("CPU", "AutogradCPU"), FakeTensor("CPU")
        view = FakeTensor("CPU", version=a._tp_version)  # shares the counter, like a view
        op.add_(a, b)
        assert (a._version, b._version, view._version) == (1, 0, 1)
        op.add_(view, b)
        assert a._version == 2
        o = FakeTensor("CPU")
        op.out(b, out=o)
        assert (o._version, a._version) == (1, 2)
        op.read(b)
        assert a._version == 2


def test_redispatch_of_with_keyset_kernel_gets_full_keyset(ns):
    got = []
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor self, Tensor? other=None, Tensor[] rest=[]) -> Tensor")

        def ag(ks, x, other, rest):
            got.append(ks)
            return op.redispatch(ks.below("AutogradCPU"), x, other, rest)

        op = getattr(tp.ops, ns).f.default
        lib.impl("f", ag, "AutogradCPU", with_keyset=True)
        lib.impl("f", lambda x, o, r: len(r), "CPU")
        x = FakeTensor("CPU")
        assert op(x, None, [FakeTensor("CPU", "AutogradCPU")]) == 1
        assert isinstance(got[0], tp.keys.DispatchKeySet)
        assert "AutogradCPU" in got[0] and "CPU" in got[0]
        assert op(x, FakeTensor("CPU")) == 0
        assert len(got) == 1


# --- overload packets -----------------------------------------------------------------------


def test_packet_resolves_overloads(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
        lib.define("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
        lib.define("add.list(Tensor self, int[] sizes) -> Tensor")
        lib.impl("add.Tensor", lambda s, o, alpha: "tensor", "CPU")
        lib.impl("add.Scalar", lambda s, o, alpha: "scalar", "CPU")
        lib.impl("add.list", lambda s, sizes: sizes, "CPU")
        add = getattr(tp.ops, ns).add
        x = FakeTensor("CPU")
        assert add(x, x) == "tensor"
        assert add(x, 2.5) == "scalar"
        assert add(x, 2) == "scalar"
        assert add(x, x, alpha=2) == "tensor"
        assert add(x, [1, 2]) == (1, 2)
        assert sorted(add.overloads()) == ["Scalar", "Tensor", "list"]
        with pytest.raises(TypeError) as e:
            add(x, "nope")
        msg = str(e.value)
        assert (
            f"{ns}::add() received an invalid combination of arguments - got (FakeTensor, str)"
            in msg
        )
        assert "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor" in msg
        with pytest.raises(AttributeError, match="has no overload 'nope'; its overloads are"):
            add.nope


# --- errors ---------------------------------------------------------------------------------


def test_missing_kernel_error_and_remedy(ns, backend):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor self) -> Tensor")
        lib.impl("f", lambda x: x, "CPU")
        lib.impl("f", lambda x: x, "Autograd")
        f = getattr(tp.ops, ns).f
        with pytest.raises(tp.DispatchError) as e:
            f(FakeTensor(backend.name))
        msg = str(e.value)
        assert msg.startswith(
            f"Could not run '{ns}::f.default' with arguments from the '{backend.name}' backend. "
            f"'{ns}::f.default' is only available for these keys: [Autograd, CPU]."
        )
        assert f"tp.Library('{ns}', 'IMPL').impl('f', fn, '{backend.name}')" in msg
        assert "(plugin tests)" in msg
        assert isinstance(e.value, NotImplementedError)
        assert e.value.key == backend.name and e.value.op == f"{ns}::f.default"
        # a first-party key whose plugin is not loaded names the distribution to install
        loaded = "cuda" in tp.plugins.loaded_names()
        remedy = "No kernel is registered for 'CUDA'" if loaded else "pip install tensorplug-cuda"
        with pytest.raises(tp.DispatchError, match=remedy):
            f(FakeTensor("CUDA"))
        loaded = tp.plugins.loaded_names()
        free = [
            (k, p) for k, p in (("Tracer", "tracer"), ("Batched", "batched")) if p not in loaded
        ]
        for key, plugin in free[:1]:  # a functionality key whose first-party plugin is absent
            with pytest.raises(tp.DispatchError, match=rf"pip install tensorplug-{plugin}"):
                with include(key):
                    f(FakeTensor("CPU"))


def test_wrong_argument_type_and_count(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor self, Tensor other, int[2] size=1, *, bool flag=False) -> Tensor")
        lib.impl("f", lambda s, o, size, flag: size, "CPU")
        f = getattr(tp.ops, ns).f.default
        x = FakeTensor("CPU")
        assert f(x, x, 3) == (3, 3)
        assert f(x, x, [1, 2]) == (1, 2)
        name = f"{ns}::f.default"
        cases = [
            ((x, 1), {}, f"{name}(): argument 'other' (position 2) must be Tensor, not int"),
            ((x,), {}, f"{name}() missing required argument 'other' (Tensor)"),
            ((x, x, 1, 2), {}, f"{name}() takes 3 positional arguments but 4 were given"),
            ((x, x), {"nope": 1}, f"{name}() got an unexpected keyword argument 'nope'"),
            ((x, x, "a"), {}, f"{name}(): argument 'size' (position 3) must be int[2], not str"),
            ((x, x), {"flag": 1}, f"{name}(): argument 'flag' must be bool, not int"),
            ((x, x, 1, True), {}, f"{name}() takes 3 positional arguments but 4 were given"),
            # which element of a list did not fit (once: "must be int[2], not list")
            (
                (x, x, [2, None]),
                {},
                f"{name}(): argument 'size' (position 3) must be int[2], but found element of "
                "type NoneType at pos 1",
            ),
        ]
        for args, kwargs, message in cases:
            with pytest.raises(TypeError) as e:
                f(*args, **kwargs)
            assert str(e.value) == message


def test_impl_for_undefined_op(ns):
    with tp.Library(ns, "DEF") as lib:
        with pytest.raises(tp.RegistrationError) as e:
            lib.impl("nope", lambda x: x, "CPU")
    assert str(e.value) == (
        f"cannot register a kernel for '{ns}::nope.default': that operator was never defined. "
        f"Define it first: tp.Library('{ns}', 'DEF').define('nope(...) -> ...')"
    )


def test_fallback_outside_underscore_namespace(ns):
    with tp.Library(ns, "DEF") as lib:
        with pytest.raises(
            tp.RegistrationError,
            match=r"registered on the '_' namespace: tp.Library\('_', 'IMPL'\).fallback\(fn, 'Tracer'\)",
        ):
            lib.fallback(lambda op, ks, *a: None, "Tracer")


def test_duplicate_kernel_names_both_registrants(ns):
    def first(x):
        return x

    def second(x):
        return x

    with tp.Library(ns, "DEF") as lib, tp.Library(ns, "IMPL", owner="plugin-b") as other:
        lib.define("f(Tensor self) -> Tensor")
        lib.impl("f", first, "CPU")
        with pytest.raises(tp.RegistrationError) as e:
            other.impl("f", second, "CPU")
    msg = str(e.value)
    assert (
        f"{ns}::f.default: a kernel for key 'CPU' is already registered by test_dispatcher:test_duplicate_kernel_names_both_registrants"
        in msg
    )
    assert "plugin-b tried to register another" in msg
    assert "override=True" in msg


def test_duplicate_fallback_and_def_library(ns):
    with tp.Library("_", "IMPL", owner="a") as l1, tp.Library("_", "IMPL", owner="b") as l2:
        l1.fallback(lambda *a: None, "Tracer", override=True)
        with pytest.raises(
            tp.RegistrationError, match="a fallback for key 'Tracer' is already registered by a"
        ):
            l2.fallback(lambda *a: None, "Tracer")
    with tp.Library(ns, "DEF"):
        with pytest.raises(
            tp.RegistrationError,
            match=f"Only one DEF library per namespace: namespace '{ns}' is already defined",
        ):
            tp.Library(ns, "DEF")
        with tp.Library(ns, "FRAGMENT") as frag:
            frag.define("extra(Tensor self) -> Tensor")
        with tp.Library(ns, "IMPL") as impl_lib:
            with pytest.raises(tp.RegistrationError, match="cannot define operators"):
                impl_lib.define("g(Tensor self) -> Tensor")


def test_unknown_key_lists_known_keys(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor self) -> Tensor")
        with pytest.raises(tp.keys.KeyError_) as e:
            lib.impl("f", lambda x: x, "CPUU")
    assert "Unknown dispatch key 'CPUU'. Known keys: " in str(e.value)
    assert "AutogradCPU" in str(e.value) and "CompositeImplicitAutograd" in str(e.value)


def test_unparseable_schema_in_define(ns):
    with tp.Library(ns, "DEF") as lib:
        with pytest.raises(tp.SchemaError) as e:
            lib.define("f(Tensor self -> Tensor")
    assert "column" in str(e.value)


# --- introspection --------------------------------------------------------------------------


def test_explain_reports_keys_choice_and_steps(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor self, Tensor other) -> Tensor")
        op = getattr(tp.ops, ns).f.default

        def ag(ks, x, y):
            return op.redispatch(ks.below("AutogradCPU"), x, y)

        lib.impl("f", ag, "Autograd", with_keyset=True)
        lib.impl("f", lambda x, y: "r", "CPU")
        lib.impl("f", tp.library.fallthrough_kernel, "Tracer")
        a, b = FakeTensor("CPU", "AutogradCPU"), FakeTensor("CPU")
        with include("Tracer"):
            text = tp.dispatcher.explain(getattr(tp.ops, ns).f, a, b)
        # after explain the generated fast path is back
        assert type(op).__call__ is not tp.dispatcher._traced_call
        op(FakeTensor("CPU"), b)
        assert type(op).__call__.__qualname__ == f"{ns}::f.default"
    assert f"explain {ns}::f(Tensor self, Tensor other) -> Tensor" in text
    assert "argument self: keyset DispatchKeySet(AutogradCPU, CPU)" in text
    assert "argument other: keyset DispatchKeySet(CPU)" in text
    assert "thread included: DispatchKeySet(Tracer)" in text
    assert "skip Tracer: fallthrough" in text
    assert "chosen key: AutogradCPU (entry from Autograd)" in text
    assert "registered by test_dispatcher:test_explain_reports_keys_choice_and_steps" in text
    assert (
        "redispatch " + f"{ns}::f.default keyset=DispatchKeySet(BackendSelect, CPU) -> CPU" in text
    )


def test_show_dispatch_trace_env_var(tmp_path):
    script = (
        "import tensorplug as tp\n"
        "from tensorplug._protocol import VersionCounter\n"
        "class T:\n"
        "    __slots__=('_tp_keyset','_tp_version')\n"
        "    def __init__(self): self._tp_keyset=int(tp.keys.keyset('CPU')); self._tp_version=VersionCounter()\n"
        "lib = tp.Library('envtrace', 'DEF')\n"
        "lib.define('f(Tensor self) -> Tensor')\n"
        "lib.impl('f', lambda x: 1, 'CPU')\n"
        "print(tp.ops.envtrace.f(T()))\n"
    )
    env = {**os.environ, "TENSORPLUG_SHOW_DISPATCH_TRACE": "1", "TENSORPLUG_AUTOLOAD": "0"}
    r = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert r.stdout.strip() == "1"
    assert (
        "[dispatch] call envtrace::f.default keyset=DispatchKeySet(BackendSelect, CPU) -> CPU"
        in r.stderr
    )


def test_int_list_arguments_reach_kernels_as_tuples_of_ints(ns):
    import numpy as np

    seen = []
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor self, int[] dims, int[1]? dim=None) -> Tensor")
        lib.impl("f", lambda x, dims, dim=None: seen.append((dims, dim)) or x, "CPU")
        op = getattr(tp.ops, ns).f.default
        a = FakeTensor("CPU")
        given = (0, 2)
        op(a, given)
        assert seen[-1][0] is given  # already what it binds to: passed as it is
        op(a, [1, 2], [0])
        assert seen[-1] == ((1, 2), (0,)) and type(seen[-1][0]) is tuple
        op(a, [np.int64(3), 4], 5)  # numpy ints and a bare int for int[1]: the binder
        assert seen[-1] == ((3, 4), (5,)) and all(type(v) is int for v in seen[-1][0])
        with pytest.raises(TypeError, match="dims"):
            op(a, [1, "x"])


def test_factory_backend_select_calls_the_backend_kernel_and_traces_it():
    # BackendSelect calls the backend's cache entry directly, and redispatches while tracing
    # so the trace shows the step
    z = tp.zeros([2, 3], dtype=tp.float64)
    assert z.dtype is tp.float64 and z.device.type == "cpu"
    np.testing.assert_array_equal(z.numpy(), np.zeros((2, 3)))
    lines: list[str] = []
    with tp.dispatcher.tracing(lines.append):
        traced = tp.zeros([2, 3], dtype=tp.float64)
    np.testing.assert_array_equal(traced.numpy(), np.zeros((2, 3)))
    assert lines[0].startswith("[dispatch] call aten::zeros.default keyset=DispatchKeySet(")
    assert "-> BackendSelect" in lines[0]
    assert lines[1].startswith("  [dispatch] redispatch aten::zeros.default keyset=")
    assert lines[1].split(" -> ")[1].startswith("CPU: ")
    cpu = tp.ops.aten.zeros.default.kernel_for(tp.keys.keyset("CPU"))
    seen = []

    def counting(*args, **kwargs):
        seen.append(kwargs["device"])
        return cpu(*args, **kwargs)

    with tp.Library("aten", "IMPL") as lib:
        lib.impl("zeros", counting, "CPU", override=True)
        assert tp.zeros([4]).shape == (4,)
        assert seen == [tp.device("cpu")]  # the canonical device, passed on as it is
    tp.zeros([4])
    assert seen == [tp.device("cpu")]  # closed: the CPU plugin's kernel again
