"""Note [Deferred change listeners]: inside ``deferred_changes()`` every definition still
bumps the generation, and the change listeners run once, when the block ends."""

from __future__ import annotations

import pytest

import tensorplug as tp
from tensorplug.dispatcher import _registry


def _count_listener_calls() -> tuple[list[int], object]:
    calls: list[int] = []

    def listener() -> None:
        calls.append(tp.dispatcher.generation())

    return calls, listener


def test_listeners_run_once_at_the_end_and_the_generation_grows_per_change(ns: str) -> None:
    calls, listener = _count_listener_calls()
    tp.dispatcher._change_listeners.append(listener)
    try:
        with tp.Library(ns, "DEF") as lib:
            before = tp.dispatcher.generation()
            with _registry.deferred_changes():
                lib.define("f(Tensor x) -> Tensor")
                lib.define("g(Tensor x) -> Tensor")
                assert calls == []
                inside = tp.dispatcher.generation()
                assert inside >= before + 2  # each definition changes it, listeners or not
            assert calls == [inside]
            lib.define("h(Tensor x) -> Tensor")  # outside the block: at once
            assert len(calls) == 2 and calls[1] > inside
    finally:
        tp.dispatcher._change_listeners.remove(listener)


def test_listeners_run_when_the_block_raises_and_not_when_nothing_changed(ns: str) -> None:
    calls, listener = _count_listener_calls()
    tp.dispatcher._change_listeners.append(listener)
    try:
        with _registry.deferred_changes():
            pass
        assert calls == []
        with tp.Library(ns, "DEF") as lib:
            with pytest.raises(ValueError, match="boom"):
                with _registry.deferred_changes():
                    lib.define("f(Tensor x) -> Tensor")
                    raise ValueError("boom")
            assert len(calls) == 1
            assert getattr(tp.ops, ns).f  # the packet sees the operator defined in the block
    finally:
        tp.dispatcher._change_listeners.remove(listener)
