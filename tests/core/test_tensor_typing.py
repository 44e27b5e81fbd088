"""The static declarations of Tensor's run-time methods (core/src/tensorplug/_tensor_methods.pyi)
stay in sync with native_functions.yaml and the operators, so mypy sees what users call."""

from __future__ import annotations

from pathlib import Path

import tensorplug as tp
from tests.tool_scripts import load_tool

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    return load_tool("tensor_typing")


def test_the_stub_is_what_the_generator_writes() -> None:
    gen = _generator()
    assert gen.TARGET.read_text() == gen.source(), (
        "core/src/tensorplug/_tensor_methods.pyi is out of date: run python tools/tensor_typing.py"
    )


def test_every_method_and_operator_of_tensor_is_declared() -> None:
    gen = _generator()
    declared = (
        set(gen.yaml_methods()) | set(gen.OPERATORS) | set(gen.FUNCTIONAL) | set(gen.PROPERTIES)
    ) | set(gen.SERIALIZATION)
    declared |= set(gen.LAYOUT) | set(gen.LAYOUT_PROPERTIES)
    declared |= gen.defined_on_tensor() | set(gen.CLASSMETHODS)
    declared |= set(gen.ATTRIBUTES) | set(gen.ATTRIBUTE_PROPERTIES)
    for name in dir(tp):  # make every lazily made method
        getattr(tp, name, None)
    standard = {n for n in vars(tp.Tensor) if not n.startswith("_") or n.endswith("__")}
    plugin_added = {
        "requires_grad_",
        "backward",
        "register_hook",
        "retain_grad",
        "grad",
        "register_post_accumulate_grad_hook",
        "grad_fn",
        "data",
        "is_leaf",
        "requires_grad",
        "retains_grad",
        "is_foo",
        "tp_autograd",
        "tp_tangents",
    }
    dunders_of_object = set(vars(object))
    # __slotnames__: copyreg caches it on the class at the first copy or pickle of a tensor
    class_machinery = {
        "__slots__",
        "__annotations__",
        "__dict__",
        "__module__",
        "__weakref__",
        "__slotnames__",
    }
    missing = sorted(standard - declared - plugin_added - dunders_of_object - class_machinery)
    assert missing == [], f"run-time Tensor attributes without a declaration: {missing}"
