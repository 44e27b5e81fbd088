"""Dispatch keys: kinds, stable bits, the priority order, key sets."""

from __future__ import annotations

import re

import pytest

import tensorplug as tp
from fakes import FakeTensor
from tensorplug import keys
from tensorplug.keys import DispatchKeySet, KeyKind


def names(order):
    return [k.name for k in order]


def builtin(order):
    """Keys created by the core (installed plugins, like the foo example, may add more)."""
    return [k.name for k in order if k.owner == "tensorplug"]


def test_builtin_order_matches_design():
    order = builtin(keys.priority_order())
    expected_groups = [
        ["Batched"],
        ["AutocastMeta", "AutocastCUDA", "AutocastCPU"],
        ["Tracer"],
        ["AutogradMeta", "AutogradCUDA", "AutogradCPU"],
        ["ADInplaceOrView"],
        ["Functionalize"],
        ["BackendSelect"],
        ["Meta"],
        ["CUDA"],
        ["CPU"],
    ]
    pos = 0
    for group in expected_groups:
        assert sorted(order[pos : pos + len(group)]) == sorted(group), order
        pos += len(group)
    assert pos == len(order)


def test_kinds_and_aliases():
    assert keys.get("CPU").kind is KeyKind.BACKEND and keys.get("CPU").device_type == "cpu"
    assert keys.get("AutogradCPU").kind is KeyKind.PER_BACKEND
    assert keys.get("AutogradCPU").backend is keys.get("CPU")
    assert keys.get("Tracer").kind is KeyKind.FUNCTIONALITY
    assert keys.get("Autograd").is_alias
    assert set(builtin(keys.expand("Autograd"))) == {"AutogradCPU", "AutogradCUDA", "AutogradMeta"}
    assert set(builtin(keys.expand("CompositeExplicitAutograd"))) == {"CPU", "CUDA", "Meta"}
    assert set(builtin(keys.expand("CompositeImplicitAutograd"))) == {
        "CPU",
        "CUDA",
        "Meta",
        "AutogradCPU",
        "AutogradCUDA",
        "AutogradMeta",
    }
    assert all(k.kind is KeyKind.BACKEND for k in keys.expand("CompositeExplicitAutograd"))


def test_register_backend_creates_per_backend_keys_and_places_them(backend):
    n = backend.name
    order = names(keys.priority_order())
    assert f"Autograd{n}" in order and f"Autocast{n}" in order
    assert order.index("BackendSelect") < order.index(n) < order.index("Meta")
    assert order.index("Tracer") < order.index(f"Autograd{n}") < order.index("ADInplaceOrView")
    assert order.index("Batched") < order.index(f"Autocast{n}") < order.index("Tracer")
    assert keys.backend_for_device_type("testdev") is backend
    assert set(keys.expand("Autograd").names()) >= {f"Autograd{n}"}


def test_builtin_backends_declare_pytorchs_autocast_dtypes():
    cpu, cuda, meta = keys.get("CPU"), keys.get("CUDA"), keys.get("Meta")
    assert (cpu.autocast_dtype, cpu.autocast_dtypes) == (tp.bfloat16, (tp.bfloat16, tp.float16))
    assert (cuda.autocast_dtype, cuda.autocast_dtypes) == (tp.float16, (tp.float16, tp.bfloat16))
    assert (meta.autocast_dtype, meta.autocast_dtypes) == (None, ())  # no autocast on meta


@pytest.mark.parametrize(
    ("default", "supported", "want"),
    [
        (None, None, (None, ())),
        ("bfloat16", None, ("bfloat16", ("bfloat16",))),  # only the default: only it
        (None, ("float16", "float32"), ("float16", ("float16", "float32"))),  # the first
        ("float32", ("float16", "float32"), ("float32", ("float16", "float32"))),
    ],
)
def test_register_backend_autocast_dtypes(default, supported, want):
    dt = lambda n: None if n is None else getattr(tp, n)
    k = keys.register_backend(
        "AmpProbe",
        "ampprobe",
        owner="tests",
        autocast_dtype=dt(default),
        autocast_dtypes=None if supported is None else [dt(n) for n in supported],
    )
    try:
        assert k.autocast_dtype is dt(want[0])
        assert k.autocast_dtypes == tuple(dt(n) for n in want[1])
    finally:
        keys.unregister("AmpProbe")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"autocast_dtype": "float64"}, "autocast dtypes must be tensorplug floating dtypes"),
        ({"autocast_dtypes": ["int32"]}, "autocast dtypes must be tensorplug floating dtypes"),
        (
            {"autocast_dtype": "float16", "autocast_dtypes": ["bfloat16"]},
            "autocast_dtype=tensorplug.float16 is not one of autocast_dtypes=(tensorplug.bfloat16)",
        ),
    ],
)
def test_register_backend_rejects_bad_autocast_dtypes(kwargs, message):
    args = {
        k: [getattr(tp, n) for n in v] if isinstance(v, list) else getattr(tp, v)
        for k, v in kwargs.items()
    }
    with pytest.raises(keys.KeyError_, match=re.escape(f"register_backend('AmpBad'): {message}")):
        keys.register_backend("AmpBad", "ampbad", owner="tests", **args)
    assert "AmpBad" not in names(keys.all_keys())


def test_bits_are_stable_across_unregister():
    k = keys.register_functionality("StableBit", before="Tracer", owner="tests")
    bit = k.bit
    t_bits = {kk.name: kk.bit for kk in keys.all_keys()}
    keys.unregister("StableBit")
    other = keys.register_functionality("OtherKey", after="Tracer", owner="tests")
    again = keys.register_functionality("StableBit", after="Batched", owner="tests")
    try:
        assert again.bit == bit and other.bit != bit
        for kk in keys.all_keys():
            if kk.name in t_bits:
                assert kk.bit == t_bits[kk.name]
    finally:
        keys.unregister("StableBit")
        keys.unregister("OtherKey")


def test_bits_of_unregistered_keys_are_reused_so_cycles_never_run_out():
    """A backend costs two bits and an Autocast bit; 200 cycles would need 600 (Note [Bit
    reuse]): each cycle's bits come back once no live tensor carries them."""
    for i in range(200):
        b = keys.register_backend(f"Cycle{i}", f"cycle{i}", owner="tests")
        assert b.bit < keys.AUTOCAST_BIT_BASE
        assert keys.per_backend("Autocast", b).bit < 2 * keys.AUTOCAST_BIT_BASE
        keys.unregister(b)


def test_a_bit_a_live_tensor_carries_is_not_reused():
    held = keys.register_backend("HeldBits", "heldbits", owner="tests")
    carried = {held.bit, keys.per_backend("Autograd", held).bit}
    bits = {*carried, keys.per_backend("Autocast", held).bit}
    t = FakeTensor("HeldBits", "AutogradHeldBits")
    keys.unregister(held)

    def cycle(name: str) -> set[int]:
        b = keys.register_backend(name, name.lower(), owner="tests")
        got = {b.bit, *(keys.per_backend(f, b).bit for f in ("Autograd", "Autocast"))}
        keys.unregister(b)
        return got

    # enough cycles to use up the never-used bits and reuse freed ones several times over
    for i in range(100):
        assert not cycle(f"Other{i}") & carried
    del t
    assert any(cycle(f"Later{i}") & bits for i in range(100))


def test_running_out_of_bits_names_the_cause():
    made = []
    try:
        with pytest.raises(keys.DispatchKeyError, match=r"all 64 dispatch key bits are in use"):
            for i in range(100):
                made.append(keys.register_functionality(f"Filler{i}", owner="tests"))
    finally:
        for k in made:
            keys.unregister(k)


def test_functionality_placement_before_after_and_default():
    a = keys.register_functionality("AboveTracer", before="Tracer", owner="tests")
    b = keys.register_functionality(
        "BelowAutograd", after="Autograd", before="ADInplaceOrView", owner="tests"
    )
    c = keys.register_functionality("NoConstraint", owner="tests")
    try:
        order = names(keys.priority_order())
        assert order.index("AboveTracer") == order.index("Tracer") - 1
        assert all(
            order.index(x) < order.index("BelowAutograd") for x in keys.expand("Autograd").names()
        )
        assert order.index("BelowAutograd") < order.index("ADInplaceOrView")
        assert order.index("NoConstraint") == order.index("BackendSelect") - 1
        assert (a.kind, b.kind, c.kind) == (KeyKind.FUNCTIONALITY,) * 3
    finally:
        for n in ("AboveTracer", "BelowAutograd", "NoConstraint"):
            keys.unregister(n)
    assert "AboveTracer" not in names(keys.priority_order())


def test_cycle_and_unknown_anchor_errors():
    before = names(keys.priority_order())
    with pytest.raises(keys.KeyError_) as e:
        keys.register_functionality("Impossible", after="Tracer", before="Batched")
    assert str(e.value).startswith(
        "cannot place dispatch key 'Impossible' before ['Batched'] and after ['Tracer']: "
        "the constraints form a cycle with the current order "
    )
    assert "Batched > " in str(e.value)
    with pytest.raises(keys.KeyError_, match=r"Unknown dispatch key 'Nope'\. Known keys: .*Tracer"):
        keys.register_functionality("Dangling", before="Nope")
    assert names(keys.priority_order()) == before
    with pytest.raises(keys.KeyError_, match="already exists"):
        keys.register_functionality("Tracer")
    with pytest.raises(keys.KeyError_, match="cannot unregister built-in dispatch key 'CPU'"):
        keys.unregister("CPU")
    with pytest.raises(keys.KeyError_, match="device type 'cpu' already belongs to backend 'CPU'"):
        keys.register_backend("MyCPU", "cpu")


def test_keyset_operations():
    ks = keys.keyset("AutogradCPU", "CPU", "Tracer")
    assert isinstance(ks, int) and isinstance(ks, DispatchKeySet)
    assert ks.highest() is keys.get("Tracer")
    assert names(ks) == ["Tracer", "AutogradCPU", "CPU"]
    assert ks.below("Tracer") == keys.keyset("AutogradCPU", "CPU")
    assert ks.below("CPU") == DispatchKeySet()
    assert "CPU" in ks and "CUDA" not in ks
    assert ks.remove("Tracer").add("Batched").highest() is keys.get("Batched")
    assert (ks | keys.keyset("CUDA")).names() == ["Tracer", "AutogradCPU", "CUDA", "CPU"]
    assert DispatchKeySet().highest() is None
    assert repr(ks) == "DispatchKeySet(Tracer, AutogradCPU, CPU)"
    with pytest.raises(keys.KeyError_, match="below\\(\\) needs a runtime key"):
        ks.below("Autograd")


def test_tensor_keyset_and_plain_mask():
    ks = keys.tensor_keyset("CPU")
    assert set(DispatchKeySet(ks).names()) == {"CPU", "AutocastCPU"}
    grad = ks | keys.get("AutogradCPU").mask
    assert grad & keys.plain_mask() == ks


def test_get_accepts_keys_and_lists_known():
    k = keys.get("CPU")
    assert keys.get(k) is k
    with pytest.raises(keys.KeyError_) as e:
        keys.get("cpu")
    # sorted by name; installed plugins add theirs (the autograd plugin's ADView)
    assert "Known keys: ADInplaceOrView, " in str(e.value) and ", Autocast, " in str(e.value)
    # a traceback prints the type's name: once "KeyError_"
    assert type(e.value) is keys.DispatchKeyError and type(e.value).__name__ == "DispatchKeyError"
    assert tp.keys is keys
