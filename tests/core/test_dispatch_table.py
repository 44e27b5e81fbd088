"""Computed dispatch tables, checked against an oracle worked out from DESIGN §4's rules.

The oracle below is written independently of dispatcher.py: it states, for each kind of runtime
key, which registration wins, as a plain priority list.
"""

from __future__ import annotations

import itertools

import pytest

import tensorplug as tp

CHOICES = (
    "CPU",
    "CUDA",
    "<backend>",
    "Autograd",
    "AutogradCPU",
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
)
SUBSETS = [
    frozenset(c) for r in range(len(CHOICES) + 1) for c in itertools.combinations(CHOICES, r)
]
FALLBACKS = {
    "none": {},
    "tracer-fallback": {"Tracer": "fallback"},
    "autograd-fallthrough": {"Autograd": "fallthrough"},
    "autogradcpu-fallback+batched-fallthrough": {
        "AutogradCPU": "fallback",
        "Batched": "fallthrough",
    },
}


def installed_fallbacks() -> dict[str, str]:
    """Fallbacks registered before the test: the core's fallthroughs for BackendSelect and
    ADInplaceOrView, and whatever installed plugins add (registration key -> kind)."""
    return {
        key: "fallthrough" if k.is_fallthrough else "fallback"
        for key, k in tp.dispatcher._fallbacks.items()
    }


def oracle(regs: set[str], fallbacks: dict[str, str], backends: list[str]) -> dict[str, str]:
    """Expected table: runtime key -> source, following the rules of DESIGN §4 literally."""
    expected: dict[str, str] = {}
    has_cea = "CompositeExplicitAutograd" in regs
    has_cia = "CompositeImplicitAutograd" in regs
    for key in tp.keys.priority_order():
        name = key.name
        candidates: list[str] = []
        if name in regs:
            candidates.append(name)
        if name in backends:
            if has_cea:
                candidates.append("CompositeExplicitAutograd")
            if has_cia:
                candidates.append("CompositeImplicitAutograd")
        if name.startswith("Autograd"):
            backend = name[len("Autograd") :]
            backend_has_own = backend in regs or has_cea
            if has_cia and not backend_has_own:
                candidates.append("CompositeImplicitAutograd")
            if "Autograd" in regs:
                candidates.append("Autograd")
        if candidates:
            expected[name] = candidates[0]
            continue
        alias = key.family  # "Autograd" / "Autocast" for per-backend keys
        fb = fallbacks.get(name) or (fallbacks.get(alias) if alias else None)
        expected[name] = fb or "missing"
    return expected


def kernel(*args: object) -> str:
    return "k"


@pytest.mark.parametrize("fallbacks", list(FALLBACKS), ids=list(FALLBACKS))
@pytest.mark.parametrize("regs", SUBSETS, ids=lambda s: "+".join(sorted(s)) or "nothing")
def test_table_matches_rules(regs, fallbacks, backend, ns):
    regs = {backend.name if r == "<backend>" else r for r in regs}
    fallbacks_before = tp.dispatcher.fallbacks()
    # override=True: an installed plugin's fallback (autograd's) is replaced while the
    # library is open and comes back when it closes (checked at the end)
    fb_spec = FALLBACKS[fallbacks]
    with tp.Library(ns, "DEF") as lib, tp.Library("_", "IMPL") as fb_lib:
        lib.define("f(Tensor x) -> Tensor")
        for fb_key, what in fb_spec.items():
            fn = (
                tp.library.fallthrough_kernel
                if what == "fallthrough"
                else (lambda op, ks, *a: "fb")
            )
            fb_lib.fallback(fn, fb_key, override=True)
        both = {"CompositeImplicitAutograd", "CompositeExplicitAutograd"} <= regs
        for r in sorted(regs):
            if both and r == "CompositeImplicitAutograd":
                with pytest.raises(tp.RegistrationError, match="not two"):
                    lib.impl("f", kernel, r)
                continue
            lib.impl("f", kernel, r)
        if both:
            regs = regs - {"CompositeImplicitAutograd"}
        backends = [k.name for k in tp.keys.backends()]
        expected = oracle(regs, {**installed_fallbacks(), **fb_spec}, backends)
        assert tp.dispatcher.dispatch_table(f"{ns}::f") == expected
        assert set(tp.dispatcher.registrations(f"{ns}::f")) == regs
    # nothing left behind
    assert not any(op.namespace == ns for op in tp.dispatcher.all_ops())
    assert tp.dispatcher.fallbacks() == fallbacks_before


def test_both_composites_error_names_both(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("g(Tensor x) -> Tensor")
        lib.impl("g", kernel, "CompositeExplicitAutograd")
        with pytest.raises(tp.RegistrationError) as e:
            lib.impl("g", kernel, "CompositeImplicitAutograd")
    msg = str(e.value)
    assert f"{ns}::g.default" in msg
    assert "CompositeImplicitAutograd" in msg and "CompositeExplicitAutograd" in msg


@pytest.mark.parametrize(
    "regs",
    [set(), {"CPU"}, {"Autograd"}, {"CPU", "Autograd"}, {"AutogradCPU", "<backend>"}],
    ids=lambda s: "+".join(sorted(s)) or "nothing",
)
def test_explicit_nonfunctional_covers_the_backends_as_explicit_does(regs, backend, ns):
    """PyTorch's CompositeExplicitAutogradNonFunctional: the same table as
    CompositeExplicitAutograd (there is no functionalization to leave out)."""
    regs = {backend.name if r == "<backend>" else r for r in regs}
    tables = {}
    for composite in ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"):
        with tp.Library(ns, "DEF") as lib:
            lib.define("f(Tensor x) -> Tensor")
            for r in sorted(regs | {composite}):
                lib.impl("f", kernel, r)
            tables[composite] = tp.dispatcher.dispatch_table(f"{ns}::f")
    explicit = tables["CompositeExplicitAutograd"]
    nonfunctional = tables["CompositeExplicitAutogradNonFunctional"]
    renamed = {
        k: "CompositeExplicitAutogradNonFunctional" if v == "CompositeExplicitAutograd" else v
        for k, v in explicit.items()
    }
    assert nonfunctional == renamed
    backends = {k.name for k in tp.keys.backends()}
    assert {k for k, v in nonfunctional.items() if v.startswith("Composite")} == backends - regs
    assert set(tp.keys.expand("CompositeExplicitAutogradNonFunctional")) == set(
        tp.keys.expand("CompositeExplicitAutograd")
    )


@pytest.mark.parametrize(
    ("first", "second"),
    list(itertools.permutations(
        ["CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd",
         "CompositeImplicitAutograd"], 2)),
)  # fmt: skip
def test_an_op_has_one_composite_kernel(first, second, ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("g(Tensor x) -> Tensor")
        lib.impl("g", kernel, first)
        with pytest.raises(tp.RegistrationError) as e:
            lib.impl("g", kernel, second)
    assert str(e.value).startswith(
        f"{ns}::g.default: cannot register a {second} kernel ({__name__}:"
        f"test_an_op_has_one_composite_kernel) because a {first} kernel is registered by "
    )
    assert str(e.value).endswith("not two.")
