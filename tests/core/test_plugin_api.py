"""The public plugin API beyond hooks and libraries (docs/plugins.md, "The plugin API"):
kernel lookup for a key set, the registry generation, key listeners and repr suffixes."""

from __future__ import annotations

import pytest

import tensorplug as tp
from fakes import FakeTensor
from tensorplug import dispatcher


def test_kernel_for_is_what_a_call_runs(ns):
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
        with pytest.raises(
            tp.DispatchError,
            match=rf"Could not run '{ns}::f.default' with arguments from the 'Batched'",
        ):
            op.kernel_for(tp.keys.keyset("CPU", "Batched"))


def test_kernel_for_boxed_fallback_gets_op_and_keyset(ns):
    with tp.Library(ns, "DEF") as lib, tp.Library("_", "IMPL") as fb:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "cpu", "CPU")
        fb.fallback(lambda op, ks, *a: (op.name, ks), "Batched")
        op = getattr(tp.ops, ns).f.default
        ks = tp.keys.keyset("CPU", "Batched")
        assert op.kernel_for(ks)(FakeTensor("CPU")) == (f"{ns}::f.default", ks)


def test_has_kernel_counts_direct_registrations_only(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CompositeImplicitAutograd")
        op = getattr(tp.ops, ns).f.default
        assert op.has_kernel("CompositeImplicitAutograd")
        assert not op.has_kernel("CPU")  # the CPU entry comes from the alias
        assert dispatcher.dispatch_table(op)["CPU"] == "CompositeImplicitAutograd"


def test_generation_changes_with_every_registration(ns):
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
            fb.fallback(lambda op, ks, *a: None, "Batched")
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
