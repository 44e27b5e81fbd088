"""Autocast regions: PyTorch's names and behaviour (torch.autocast, torch.is_autocast_enabled,
torch.get/set_autocast_dtype), nesting, exceptions, threads, decorators and the warnings."""

from __future__ import annotations

import re
import threading
import warnings
from typing import Any

import pytest
from needs import autocast

import tensorplug as tp

autocast()


def mm_dtype(device: str = "cpu") -> Any:
    a = tp.ones([2, 2], device=device)
    return (a @ a).dtype


def test_default_dtypes_are_pytorchs() -> None:
    assert tp.get_autocast_dtype("cpu") is tp.bfloat16
    assert tp.get_autocast_dtype("cuda") is tp.float16


def test_a_region_turns_autocast_on_and_restores_it() -> None:
    assert not tp.is_autocast_enabled("cpu")
    assert mm_dtype() is tp.float32
    with tp.autocast("cpu") as region:
        assert isinstance(region, tp.autocast)
        assert tp.is_autocast_enabled("cpu")
        assert not tp.is_autocast_enabled("cuda")
        assert tp.get_autocast_dtype("cpu") is tp.bfloat16
        assert mm_dtype() is tp.bfloat16
    assert not tp.is_autocast_enabled("cpu")
    assert mm_dtype() is tp.float32


def test_amp_autocast_is_the_same_object() -> None:
    assert tp.amp.autocast is tp.autocast
    with tp.amp.autocast("cpu", dtype=tp.float16):
        assert mm_dtype() is tp.float16


def test_nested_regions_restore_the_outer_state() -> None:
    with tp.autocast("cpu"):
        with tp.autocast("cpu", dtype=tp.float16):
            assert tp.get_autocast_dtype("cpu") is tp.float16
            assert mm_dtype() is tp.float16
            with tp.autocast("cpu", enabled=False):
                assert not tp.is_autocast_enabled("cpu")
                assert mm_dtype() is tp.float32
                # a disabled region still sets the dtype, as PyTorch's does
                assert tp.get_autocast_dtype("cpu") is tp.float16
            assert tp.is_autocast_enabled("cpu")
            assert mm_dtype() is tp.float16
        assert tp.get_autocast_dtype("cpu") is tp.bfloat16
        assert mm_dtype() is tp.bfloat16
    assert not tp.is_autocast_enabled("cpu")
    assert tp.get_autocast_dtype("cpu") is tp.bfloat16


def test_an_exception_restores_the_outer_state() -> None:
    with tp.autocast("cpu", dtype=tp.float16):
        with pytest.raises(ZeroDivisionError), tp.autocast("cpu", enabled=False):
            assert not tp.is_autocast_enabled("cpu")
            1 / 0  # noqa: B018
        assert tp.is_autocast_enabled("cpu")
        assert tp.get_autocast_dtype("cpu") is tp.float16
    with pytest.raises(ValueError, match="inside"), tp.autocast("cpu"):
        raise ValueError("inside")
    assert not tp.is_autocast_enabled("cpu")
    assert mm_dtype() is tp.float32


def test_a_region_leaves_other_dispatch_state_alone() -> None:
    before = tp.dispatch.excluded()
    with tp.autocast("cpu"):
        assert "AutocastCPU" not in tp.dispatch.excluded()
        assert "AutocastCUDA" in tp.dispatch.excluded()
        with tp.dispatch.exclude("AutocastCPU"):  # a kernel's guard inside the region
            assert mm_dtype() is tp.float32
        assert mm_dtype() is tp.bfloat16
    assert tp.dispatch.excluded() == before


def test_decorator() -> None:
    @tp.autocast("cpu")
    def f(x: Any) -> Any:
        assert tp.is_autocast_enabled("cpu")
        return x @ x

    x = tp.ones([2, 2])
    assert f(x).dtype is tp.bfloat16
    assert f.__name__ == "f"
    assert not tp.is_autocast_enabled("cpu")


def test_one_decorator_object_reentered_by_recursion() -> None:
    region = tp.autocast("cpu", dtype=tp.float16)

    @region
    def depth(n: int) -> int:
        assert tp.get_autocast_dtype("cpu") is tp.float16
        return 0 if n == 0 else 1 + depth(n - 1)

    with tp.autocast("cpu", dtype=tp.bfloat16):
        assert depth(3) == 3
        assert tp.get_autocast_dtype("cpu") is tp.bfloat16  # restored by the outermost exit
        assert tp.is_autocast_enabled("cpu")
    assert not tp.is_autocast_enabled("cpu")


def test_decorating_a_non_callable_is_torchs_type_error() -> None:
    with pytest.raises(
        TypeError, match=re.escape("autocast()(func) requires a callable, but got int.")
    ):
        tp.autocast("cpu")(3)  # type: ignore[arg-type]


def test_the_state_is_per_thread_and_a_new_thread_starts_off() -> None:
    seen: dict[str, Any] = {}
    inside = threading.Event()
    release = threading.Event()

    def worker() -> None:
        seen["enabled_at_start"] = tp.is_autocast_enabled("cpu")
        seen["dtype_at_start"] = tp.get_autocast_dtype("cpu")
        seen["mm_at_start"] = mm_dtype()
        with tp.autocast("cpu", dtype=tp.float16):
            inside.set()
            release.wait(10)
            seen["mm_inside"] = mm_dtype()

    with tp.autocast("cpu", dtype=tp.bfloat16):
        t = threading.Thread(target=worker)
        t.start()
        assert inside.wait(10)
        # the worker's region does not leak into this thread
        assert tp.get_autocast_dtype("cpu") is tp.bfloat16
        assert mm_dtype() is tp.bfloat16
        release.set()
        t.join(10)
    assert seen == {
        "enabled_at_start": False,
        "dtype_at_start": tp.bfloat16,
        "mm_at_start": tp.float32,
        "mm_inside": tp.float16,
    }


def test_set_autocast_dtype_and_enabled_are_per_thread_and_restored_by_regions() -> None:
    tp.set_autocast_dtype("cpu", tp.float16)
    try:
        assert tp.get_autocast_dtype("cpu") is tp.float16
        with tp.autocast("cpu"):  # dtype=None: the thread's
            assert mm_dtype() is tp.float16
        assert tp.get_autocast_dtype("cpu") is tp.float16
        other: list[Any] = []
        t = threading.Thread(target=lambda: other.append(tp.get_autocast_dtype("cpu")))
        t.start()
        t.join(10)
        assert other == [tp.bfloat16]
    finally:
        tp.set_autocast_dtype("cpu", tp.bfloat16)
    tp.set_autocast_enabled("cpu", True)
    try:
        assert tp.is_autocast_enabled("cpu")
        assert mm_dtype() is tp.bfloat16
        with tp.autocast("cpu", enabled=False):
            assert mm_dtype() is tp.float32
        assert tp.is_autocast_enabled("cpu")
    finally:
        tp.set_autocast_enabled("cpu", False)
    assert mm_dtype() is tp.float32


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_unsupported_dtype_warns_with_torchs_message_and_disables(dtype: str) -> None:
    with pytest.warns(UserWarning) as caught:
        region = tp.autocast("cpu", dtype=getattr(tp, dtype))
    assert str(caught[0].message) == (
        "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
        "CPU Autocast only supports dtypes of tensorplug.bfloat16, tensorplug.float16 currently."
    )
    assert caught[0].filename == __file__  # stacklevel: the user's line
    with region:
        assert not tp.is_autocast_enabled("cpu")
        assert mm_dtype() is tp.float32


def test_cuda_without_a_gpu_warns_and_disables() -> None:
    if tp.cuda.is_available():
        pytest.skip("a GPU is available here")
    with pytest.warns(UserWarning, match=r"^CUDA is not available .*Disabling autocast\.$"):
        region = tp.autocast("cuda")
    with region:
        assert not tp.is_autocast_enabled("cuda")


def test_no_warning_when_disabled() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tp.autocast("cpu", dtype=tp.float64, enabled=False):
            pass


def test_device_type_errors() -> None:
    with pytest.raises(
        ValueError, match=re.escape("Expected `device_type` of type `str`, got: `<class 'int'>`")
    ):
        tp.autocast(1)  # type: ignore[arg-type]
    with pytest.raises(
        RuntimeError,
        match=r"^autocast: unknown device type 'nope'; the known device types are .*cpu.*cuda.*meta",
    ):
        tp.autocast("nope")
    with pytest.raises(RuntimeError, match="unknown device type 'nope'"):
        tp.is_autocast_enabled("nope")
    with pytest.raises(RuntimeError, match="unknown device type 'nope'"):
        tp.get_autocast_dtype("nope")
    # meta exists but declares no autocast dtypes, as in PyTorch
    message = (
        "User specified an unsupported autocast device_type 'meta': its backend 'Meta' "
        "(registered by tensorplug) declares no autocast dtypes. A backend declares them when "
        "it creates its key: keys.register_backend(name, device_type, autocast_dtype=..., "
        "autocast_dtypes=(...))."
    )
    with pytest.raises(RuntimeError, match=re.escape(message)):
        tp.autocast("meta")
    with pytest.raises(RuntimeError, match=re.escape(message)):
        tp.get_autocast_dtype("meta")
    with pytest.raises(RuntimeError, match=re.escape(message)):
        tp.set_autocast_dtype("meta", tp.float16)
    assert tp.is_autocast_enabled("meta") is False
    assert not tp.amp.is_autocast_available("meta")
    assert not tp.amp.is_autocast_available("nope")
    assert tp.amp.is_autocast_available("cpu") and tp.amp.is_autocast_available("cuda")
    with pytest.raises(TypeError, match="argument 'dtype' must be tensorplug.dtype, not str"):
        tp.set_autocast_dtype("cpu", "float16")  # type: ignore[arg-type]


def test_is_autocast_enabled_defaults_to_cuda() -> None:
    assert tp.is_autocast_enabled() is False
    with tp.autocast("cpu"):
        assert tp.is_autocast_enabled() is False


def test_cache_enabled_flag_is_set_and_restored() -> None:
    assert tp.is_autocast_cache_enabled()
    with tp.autocast("cpu", cache_enabled=False):
        assert not tp.is_autocast_cache_enabled()
        with tp.autocast("cpu"):  # None: inherits the current setting
            assert not tp.is_autocast_cache_enabled()
    assert tp.is_autocast_cache_enabled()


def test_repr() -> None:
    assert repr(tp.autocast("cpu")) == "tp.autocast('cpu', dtype=tensorplug.bfloat16, enabled)"
    region = tp.autocast("cpu", enabled=False)
    assert repr(region) == "tp.autocast('cpu', dtype=tensorplug.bfloat16, disabled)"
