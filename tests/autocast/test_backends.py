"""Autocast on third-party backends: the dtypes a backend declares, the Autocast alias covering
keys of backends registered later, and the plugin itself loaded and removed in-process."""

from __future__ import annotations

import re
from typing import Any

import pytest
from needs import autocast, unloaded

import tensorplug as tp

autocast()


def test_a_declared_backend_gets_its_default_dtype_and_the_cuda_lists(accel: str) -> None:
    assert tp.get_autocast_dtype(accel) is tp.float16
    assert tp.amp.is_autocast_available(accel)
    table = tp.dispatcher.dispatch_table("aten::mm")
    assert table["AutocastAccel"] == "Autocast"  # registered after the plugin: the alias
    assert tp.dispatcher.dispatch_table("aten::add.Tensor")["AutocastAccel"] == "fallthrough"
    a = tp.ones([2, 2], device=accel)
    with tp.autocast(accel):
        assert tp.is_autocast_enabled(accel) and not tp.is_autocast_enabled("cpu")
        assert (a @ a).dtype is tp.float16
        assert a.exp().dtype is tp.float32  # CUDA's list
    with tp.autocast(accel, dtype=tp.bfloat16):
        assert (a @ a).dtype is tp.bfloat16


def test_the_declared_dtypes_limit_a_region(accel: str) -> None:
    with pytest.warns(UserWarning) as caught:
        region = tp.autocast(accel, dtype=tp.float32)
    assert str(caught[0].message) == (
        "In ACCEL autocast, but the target dtype is not supported. Disabling autocast.\n"
        "ACCEL Autocast only supports dtypes of tensorplug.float16, tensorplug.bfloat16 currently."
    )
    with region:
        assert not tp.is_autocast_enabled(accel)


def test_a_backend_without_autocast_dtypes_cannot_be_autocast() -> None:
    class Plain:
        @tp.hookimpl
        def tensorplug_add_keys(self, keys: Any) -> None:
            keys.register_backend("PlainDev", "plaindev")

    tp.plugins.register(Plain(), name="test_plain_dev")
    try:
        with pytest.raises(
            RuntimeError,
            match=re.escape(
                "User specified an unsupported autocast device_type 'plaindev': its backend "
                "'PlainDev' (registered by test_plain_dev) declares no autocast dtypes."
            ),
        ):
            tp.autocast("plaindev")
        assert not tp.amp.is_autocast_available("plaindev")
        assert not tp.is_autocast_enabled("plaindev")
    finally:
        tp.plugins.unregister("test_plain_dev")
    with pytest.raises(RuntimeError, match="unknown device type 'plaindev'"):
        tp.autocast("plaindev")  # the key listener dropped what it knew


def test_the_foo_example_backend() -> None:
    if "foo" not in tp.plugins.loaded_names():
        pytest.skip("tensorplug-foo (examples/foo_backend) is not installed and loaded")
    assert tp.get_autocast_dtype("foo") is tp.bfloat16
    a = tp.ones([2, 2], device="foo")
    with tp.autocast("foo"):
        assert (a @ a).dtype is tp.bfloat16
        assert (a @ a).device.type == "foo"
    with tp.autocast("foo", dtype=tp.float16):
        assert tp.softmax(a.half(), 1).dtype is tp.float32


def test_without_the_plugin_everything_it_registered_is_gone() -> None:
    with unloaded("autocast"):
        with pytest.raises(tp.MissingPluginError, match="pip install tensorplug-autocast") as e:
            tp.autocast  # noqa: B018
        assert e.value.distribution == "tensorplug-autocast"
        with pytest.raises(tp.MissingPluginError, match="tensorplug-autocast"):
            tp.library.register_autocast("aten::mm", "cpu", tp.float16)
        assert tp.dispatcher.dispatch_table("aten::mm")["AutocastCPU"] == "missing"
        with (
            tp.dispatch.unexclude("AutocastCPU"),
            pytest.raises(
                tp.DispatchError,
                match="served by the tensorplug-autocast plugin, which is not loaded",
            ),
        ):
            tp.ones([1]) + 1
    with tp.autocast("cpu"):  # loaded again as it was
        a = tp.ones([2, 2])
        assert (a @ a).dtype is tp.bfloat16
