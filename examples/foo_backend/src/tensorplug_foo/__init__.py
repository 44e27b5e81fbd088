"""tensorplug-foo: a third-party backend ``Foo`` (device type ``"foo"``) in one file.

Its arrays are numpy arrays and its kernels the generic array-API ones; it also defines an op
``foo::scale_shift``, a ``FooCount`` key that counts the ops a block runs, and ``Tensor.is_foo``.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

import tensorplug as tp

PLUGIN_API_VERSION = "1.0"  # the tensorplug.PLUGIN_API_VERSION this plugin is written for

counts: collections.Counter[str] = collections.Counter()


@contextlib.contextmanager
def foo_counting() -> Iterator[collections.Counter[str]]:
    """``with tp.foo_counting() as c:`` -- ``c[op_name]`` is how often each op ran in the block."""
    counts.clear()
    with tp.dispatch.include("FooCount"):
        yield counts


def count_op(op: Any, keyset: Any, *args: Any, **kwargs: Any) -> Any:  # a boxed fallback
    counts[op.name] += 1
    return op.redispatch(keyset.below("FooCount"), *args, **kwargs)


@tp.hookimpl
def tensorplug_add_keys(keys: Any) -> None:
    # tp.autocast("foo") runs in bfloat16 by default and also accepts float16
    keys.register_backend(
        "Foo", "foo", autocast_dtype=tp.bfloat16, autocast_dtypes=(tp.bfloat16, tp.float16)
    )
    keys.register_functionality("FooCount", before="Batched")  # sees every call first


@tp.hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    tp.array_backend.register(registry, "Foo", np)  # every standard op, computed by numpy
    registry.library("_", "IMPL").fallback(count_op, "FooCount")
    lib = registry.library("foo", "DEF")
    lib.define("scale_shift(Tensor x, float a, float b) -> Tensor")
    lib.impl("scale_shift", lambda x, a, b: x * a + b, "CompositeImplicitAutograd")


@tp.hookimpl
def tensorplug_add_names() -> dict[str, Any]:
    return {"foo_counting": foo_counting}


@tp.hookimpl
def tensorplug_add_tensor_methods() -> dict[str, Any]:
    return {"is_foo": property(lambda self: self.device.type == "foo")}
