"""The rule table (tensorplug_batched/rules/): which operators have a batching rule, and which.

The pointwise rules are built from the yaml's ``pointwise`` tag (Note [Pointwise rules from the
tag] in rules/pointwise.py); the other families list theirs. data/batched_rules.txt records,
per ``aten`` overload with a ``Batched`` kernel, the kernel the rules registered (the name of
the function a ``def*`` helper or a ``defrule`` maker made) as it stood before the rules were
re-cut by op family: the same operators get a rule, the same kind of rule, and every other
operator keeps the loop fallback. An operator given a rule, or a rule changed on purpose,
updates the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tensorplug as tp

pytest.importorskip("tensorplug_batched")

DATA = Path(__file__).parent / "data" / "batched_rules.txt"


def recorded() -> dict[str, str]:
    out = {}
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, kernel = line.split()
            out[name] = kernel
    return out


def registered() -> dict[str, str]:
    """``aten`` overload -> the qualified name of its Batched kernel, for those with one."""
    keyset = tp.keys.DispatchKeySet(tp.keys.get("Batched").mask | tp.keys.get("CPU").mask)
    out = {}
    for op in tp.dispatcher.ops_in("aten"):
        if "Batched" in tp.dispatcher.registrations(op):
            assert tp.dispatcher.dispatch_table(op)["Batched"] == "Batched"
            kernel = op.kernel_for(keyset)
            out[op.name.partition("::")[2]] = kernel.__qualname__.replace("<locals>.", "")
    return out


def test_the_same_operators_have_the_same_rules() -> None:
    want, got = recorded(), registered()
    assert sorted(set(want) - set(got)) == [], "operators that lost their rule"
    assert sorted(set(got) - set(want)) == [], "operators that gained a rule"
    assert {n: (want[n], got[n]) for n in want if want[n] != got[n]} == {}


def test_every_other_operator_reaches_the_fallback() -> None:
    rules = recorded()
    for op in tp.dispatcher.ops_in("aten"):
        if op.name.partition("::")[2] not in rules:
            assert tp.dispatcher.dispatch_table(op)["Batched"] == "fallback", op.name


def test_every_pointwise_operator_has_a_rule_or_decomposes() -> None:
    rules = registered()
    tagged = [op for op in tp.dispatcher.ops_in("aten") if "pointwise" in op.tags]
    assert len(tagged) > 150
    for op in tagged:
        name = op.name.partition("::")[2]
        assert (name in rules) != op.has_kernel("CompositeImplicitAutograd"), name


def test_the_pointwise_exceptions_name_pointwise_operators() -> None:
    from tensorplug_batched.rules import pointwise

    for name in [*pointwise._OWN_RULE, *pointwise._PROMOTE]:
        op = tp.dispatcher.find_op(f"aten::{name}")
        assert "pointwise" in op.tags, name
