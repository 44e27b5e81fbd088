"""Autocast for custom operators of a test namespace: tp.library.register_autocast, an Autocast
kernel of one's own (the dispatcher tutorial's pattern, both ways), and tp.amp.custom_fwd /
custom_bwd on a tp.autograd.Function."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from needs import autocast, needs_autograd

import tensorplug as tp

autocast()


@pytest.fixture
def my_mm(ns: str) -> Iterator[tuple[Any, tp.Library]]:
    """``<ns>::my_mm(a, b)``: a composite over aten::mm (so autograd works through it)."""
    with tp.Library(ns, "DEF") as lib:
        lib.define("my_mm(Tensor a, Tensor b) -> Tensor")
        lib.impl("my_mm", lambda a, b: tp.mm(a, b), "CompositeImplicitAutograd")
        yield getattr(tp.ops, ns).my_mm.default, lib


def bf16(*shape: int) -> Any:
    return tp.ones(list(shape), dtype=tp.bfloat16)


# --- register_autocast ----------------------------------------------------------------------


def test_without_a_policy_the_composite_s_parts_are_autocast(my_mm: Any) -> None:
    op, _ = my_mm
    with tp.autocast("cpu"):
        assert op(tp.ones([2, 2]), tp.ones([2, 2])).dtype is tp.bfloat16  # its mm is listed


def test_register_autocast_casts_inputs_and_runs_with_autocast_off(my_mm: Any) -> None:
    op, lib = my_mm
    tp.library.register_autocast(op, "cpu", tp.float32, lib=lib)
    assert tp.dispatcher.dispatch_table(op)["AutocastCPU"] == "AutocastCPU"
    with tp.autocast("cpu"):
        out = op(bf16(2, 3), bf16(3, 2))
    assert out.dtype is tp.float32  # inputs cast up, and its mm not autocast down again
    assert out.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert op(bf16(2, 2), bf16(2, 2)).dtype is tp.bfloat16  # outside a region: untouched


def test_register_autocast_leaves_ineligible_inputs_alone(ns: str) -> None:
    with tp.Library(ns, "DEF") as lib:
        lib.define("pair(Tensor a, Tensor b) -> (Tensor, Tensor)")
        lib.impl("pair", lambda a, b: (a.clone(), b.clone()), "CompositeExplicitAutograd")
        op = getattr(tp.ops, ns).pair.default
        tp.amp.register_autocast(op, "cpu", tp.float16, lib=lib)
        with tp.autocast("cpu"):
            a, b = op(tp.ones([2], dtype=tp.float64), tp.ones([2], dtype=tp.int64))
            c, _ = op(tp.ones([2]), tp.ones([2]))
    assert (a.dtype, b.dtype, c.dtype) == (tp.float64, tp.int64, tp.float16)


def test_register_autocast_errors(my_mm: Any) -> None:
    op, lib = my_mm
    with pytest.raises(TypeError, match=re.escape("cast_inputs must be a tensorplug dtype")):
        tp.library.register_autocast(op, "cpu", "float32", lib=lib)
    with pytest.raises(RuntimeError, match="unknown device type 'nope'"):
        tp.library.register_autocast(op, "nope", tp.float32, lib=lib)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        tp.library.register_autocast(op, 0, tp.float32, lib=lib)
    with pytest.raises(tp.RegistrationError, match="No operator named 'nope::op.default'"):
        tp.library.register_autocast("nope::op", "cpu", tp.float32, lib=lib)


def test_register_autocast_without_lib_is_removed_with_the_op(ns: str) -> None:
    with tp.Library(ns, "DEF") as lib:
        lib.define("ident(Tensor a) -> Tensor")
        lib.impl("ident", lambda a: a.clone(), "CompositeExplicitAutograd")
        op = getattr(tp.ops, ns).ident.default
        tp.library.register_autocast(f"{ns}::ident", "cpu", tp.float16)
        with tp.autocast("cpu"):
            assert op(tp.ones([2])).dtype is tp.float16
    # closing the DEF library removed the operator and every kernel registered for it


# --- the tutorial's pattern -----------------------------------------------------------------


def test_an_autocast_kernel_that_reenters_under_an_exclude_guard(my_mm: Any) -> None:
    op, lib = my_mm
    calls: list[Any] = []

    def my_mm_autocast(a: Any, b: Any) -> Any:
        calls.append(tp.is_autocast_enabled("cpu"))
        with tp.dispatch.exclude("AutocastCPU"):
            return op(
                tp.amp.cached_cast(tp.float16, a, "cpu"), tp.amp.cached_cast(tp.float16, b, "cpu")
            )

    lib.impl("my_mm", my_mm_autocast, "AutocastCPU")
    with tp.autocast("cpu"):
        assert op(tp.ones([2, 2]), tp.ones([2, 2])).dtype is tp.float16
    assert op(tp.ones([2, 2]), tp.ones([2, 2])).dtype is tp.float32  # not reached outside
    assert calls == [True]


def test_an_autocast_alias_kernel_that_redispatches_below_its_key(my_mm: Any, accel: str) -> None:
    op, lib = my_mm
    seen: list[str] = []

    def my_mm_autocast(ks: Any, a: Any, b: Any) -> Any:
        key = next(k for k in ks if k.family == "Autocast")  # the highest: the running one
        seen.append(key.name)
        dt = key.backend.device_type
        to = tp.get_autocast_dtype(dt)
        return op.redispatch(
            ks.below(key), tp.amp.cached_cast(to, a, dt), tp.amp.cached_cast(to, b, dt)
        )

    lib.impl("my_mm", my_mm_autocast, "Autocast", with_keyset=True)
    with tp.autocast("cpu", dtype=tp.float16):
        assert op(tp.ones([2, 2]), tp.ones([2, 2])).dtype is tp.float16
    with tp.autocast(accel):  # a backend registered after the kernel: covered by the alias
        out = op(tp.ones([2, 2], device=accel), tp.ones([2, 2], device=accel))
    assert out.dtype is tp.float16 and out.device.type == accel
    assert seen == ["AutocastCPU", "AutocastAccel"]


@needs_autograd
def test_cached_cast_keeps_weights_for_the_region(op_counts: Any) -> None:
    w = tp.ones([2, 2]).requires_grad_()
    with tp.autocast("cpu"):
        a = tp.amp.cached_cast(tp.bfloat16, w, "cpu")
        b = tp.amp.cached_cast(tp.bfloat16, [w, None], "cpu")
        c = tp.amp.cached_cast(tp.float16, w, "cpu")  # not the region's dtype: not kept
    assert a.dtype is tp.bfloat16 and b[1] is None and c.dtype is tp.float16
    assert b[0] is a
    assert op_counts["aten::_to_copy.default"] == 2
    assert tp.amp.cached_cast(tp.bfloat16, tp.ones([2], dtype=tp.int64), "cpu").dtype is tp.int64


# --- custom_fwd / custom_bwd ----------------------------------------------------------------


@needs_autograd
def test_custom_fwd_with_cast_inputs_runs_forward_in_that_dtype_with_autocast_off() -> None:
    inside: dict[str, Any] = {}

    class MyMM(tp.autograd.Function):
        @staticmethod
        @tp.amp.custom_fwd(device_type="cpu", cast_inputs=tp.float32)
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            inside["fwd"] = (a.dtype, b.dtype, tp.is_autocast_enabled("cpu"))
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        @tp.amp.custom_bwd(device_type="cpu")
        def backward(ctx: Any, g: Any) -> Any:
            inside["bwd"] = (g.dtype, tp.is_autocast_enabled("cpu"))
            a, b = ctx.saved_tensors
            return g @ b.t(), a.t() @ g

    a = bf16(2, 3).requires_grad_()
    b = bf16(3, 2).requires_grad_()
    with tp.autocast("cpu"):
        out = MyMM.apply(a, b)
    assert out.dtype is tp.float32
    assert inside["fwd"] == (tp.float32, tp.float32, False)
    out.sum().backward()
    assert inside["bwd"] == (tp.float32, False)
    assert a.grad.dtype is tp.bfloat16  # back through the cast to the input's dtype
    np.testing.assert_array_equal(a.grad.float().numpy(), np.full((2, 3), 2.0))
    outside = MyMM.apply(bf16(2, 3), bf16(3, 2))  # outside a region: nothing cast
    assert outside.dtype is tp.bfloat16 and inside["fwd"][0] is tp.bfloat16


@needs_autograd
def test_custom_bwd_runs_backward_in_the_autocast_state_of_forward() -> None:
    inside: dict[str, Any] = {}

    class Scale(tp.autograd.Function):
        @staticmethod
        @tp.amp.custom_fwd(device_type="cpu")
        def forward(ctx: Any, x: Any, w: Any) -> Any:
            ctx.save_for_backward(x, w)
            return x @ w  # autocast applies inside: bfloat16

        @staticmethod
        @tp.amp.custom_bwd(device_type="cpu")
        def backward(ctx: Any, g: Any) -> Any:
            x, w = ctx.saved_tensors
            inside["bwd"] = (tp.is_autocast_enabled("cpu"), tp.get_autocast_dtype("cpu"))
            return g @ w.t(), x.t() @ g  # autocast on again: bfloat16 products

    x = tp.ones([2, 2]).requires_grad_()
    w = tp.ones([2, 2]).requires_grad_()
    with tp.autocast("cpu", dtype=tp.float16):
        y = Scale.apply(x, w)
    assert y.dtype is tp.float16
    y.float().sum().backward()  # outside the region
    assert inside["bwd"] == (True, tp.float16)
    assert x.grad.dtype is tp.float32 and w.grad.dtype is tp.float32
    assert not tp.is_autocast_enabled("cpu")


def test_custom_fwd_bwd_errors() -> None:
    with pytest.raises(
        ValueError, match=re.escape("Expected `device_type` of type `str`, got: `<class 'int'>`")
    ):
        tp.amp.custom_fwd(device_type=0)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        tp.amp.custom_bwd(device_type=None)

    @tp.amp.custom_bwd(device_type="cpu")
    def backward(ctx: Any, g: Any) -> Any:
        return g

    with pytest.raises(
        RuntimeError,
        match="needs the forward of the same Function decorated with tp.amp.custom_fwd",
    ):
        backward(object(), 1)
