"""The dtype each listed operator produces in a region, checked against the policy table, on
CPU (bfloat16 and float16 regions) and on a device type that follows PyTorch's CUDA lists
(``accel``, conftest.py); and which tensors are cast at all."""

from __future__ import annotations

import re
from typing import Any

import pytest
from needs import autocast

import tensorplug as tp
from tensorplug_autocast.policy import (
    ABSENT_CPU,
    ABSENT_CUDA,
    BANNED,
    FP32,
    FP32_APPEND_DTYPE,
    FP32_SET_OPT_DTYPE,
    LOWER,
    POLICIES,
)

from .cases import CASES, UNLISTED, Case, makers

autocast()

LOW = ["bfloat16", "float16"]
SOURCES = ["float32", "low"]  # the inputs' dtype: float32, or the region's own lower dtype


def expected(policy: str | None, src: Any, low: Any) -> Any:
    if policy == LOWER:
        return low
    if policy in (FP32, FP32_SET_OPT_DTYPE, FP32_APPEND_DTYPE):
        return tp.float32
    return src  # promote over one input dtype, opaque, and ops outside the lists: unchanged


def run(case: Case, device: str, low: Any, src: Any) -> Any:
    mk, ints = makers(tp, src, device)
    with tp.autocast(device, dtype=low):
        return case.call(tp, mk, ints)


def test_every_table_entry_has_a_case_and_names_a_real_overload() -> None:
    assert sorted(c.op for c in CASES) == sorted(POLICIES)
    for name in POLICIES:
        tp.dispatcher.find_op("aten::" + name)  # raises for a name the op set lacks
    for absent in (ABSENT_CPU, ABSENT_CUDA):
        for names in absent.values():
            for name in names:
                with pytest.raises(tp.RegistrationError):
                    tp.dispatcher.find_op("aten::" + name)


@pytest.mark.parametrize("src_kind", SOURCES)
@pytest.mark.parametrize("low_name", LOW)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.op)
def test_cpu_policies(case: Case, low_name: str, src_kind: str) -> None:
    low = getattr(tp, low_name)
    src = tp.float32 if src_kind == "float32" else low
    policy = POLICIES[case.op][0] or case.via[0]
    assert run(case, "cpu", low, src).dtype is expected(policy, src, low)


@pytest.mark.parametrize("src_kind", SOURCES)
@pytest.mark.parametrize("low_name", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.op)
def test_cuda_list_policies(accel: str, case: Case, low_name: str, src_kind: str) -> None:
    low = getattr(tp, low_name)
    src = tp.float32 if src_kind == "float32" else low
    policy = POLICIES[case.op][1] or case.via[1]
    if policy == BANNED:
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            run(case, accel, low, src)
        return
    if case.refuses_low[1] and src is low:
        with pytest.raises(RuntimeError, match="Low precision dtypes not supported"):
            run(case, accel, low, src)
        return
    if policy is None and src is low and not case.halves:
        with pytest.raises(RuntimeError):  # no half precision kernel, as PyTorch's CPU
            run(case, accel, low, src)
        return
    assert run(case, accel, low, src).dtype is expected(policy, src, low)


@pytest.mark.parametrize("device", ["cpu", "accel"])
@pytest.mark.parametrize("case", UNLISTED, ids=lambda c: c.op)
def test_unlisted_ops_fall_through(request: Any, case: Case, device: str) -> None:
    if device == "accel":
        request.getfixturevalue("accel")
    for src in (tp.float32, tp.bfloat16, tp.float16):
        assert run(case, device, tp.bfloat16, src).dtype is src
    table = tp.dispatcher.dispatch_table("aten::" + case.op)
    assert table["AutocastCPU"] == "fallthrough"


def test_the_table_registers_cpu_kernels_and_alias_kernels() -> None:
    table = tp.dispatcher.dispatch_table("aten::mm")
    assert table["AutocastCPU"] == "AutocastCPU"
    assert table["AutocastCUDA"] == "Autocast"
    exp = tp.dispatcher.dispatch_table("aten::exp")  # only the CUDA list names exp
    assert (exp["AutocastCPU"], exp["AutocastCUDA"]) == ("fallthrough", "Autocast")
    cat = tp.dispatcher.dispatch_table("aten::cat")  # only the CPU list names cat
    assert (cat["AutocastCPU"], cat["AutocastCUDA"]) == ("AutocastCPU", "fallthrough")
    assert tp.dispatcher.registrations("aten::mm")["Autocast"] == "autocast"


# --- eligibility ----------------------------------------------------------------------------


def test_float64_and_integer_tensors_are_not_cast(accel: str) -> None:
    with tp.autocast("cpu"):
        d = tp.ones([2, 2], dtype=tp.float64)
        assert (d @ d).dtype is tp.float64
        i = tp.ones([2, 2], dtype=tp.int64)
        assert (i @ i).dtype is tp.int64
        assert tp.cat([d, tp.ones([2, 2])]).dtype is tp.float64  # double ignored, then promoted
    with tp.autocast(accel):
        assert tp.ones([3], dtype=tp.float64, device=accel).exp().dtype is tp.float64
        x = tp.ones([3], dtype=tp.float64, device=accel)
        assert x.sum().dtype is tp.float64  # first argument not eligible: dtype left alone
        assert tp.ones([3], dtype=tp.int64, device=accel).sum().dtype is tp.int64


def test_tensors_of_another_device_type_are_not_cast(accel: str, op_counts: Any) -> None:
    a = tp.ones([2, 2], device=accel)
    with tp.autocast("cpu"):
        assert (a @ a).dtype is tp.float32  # a cpu region leaves accel tensors alone
    op_counts.clear()
    half = tp.ones([3], dtype=tp.float16, device=accel)
    scalar = tp.tensor(2.0)  # a CPU 0-dim tensor may join an accel op
    with tp.autocast(accel):
        out = tp.addcmul(half, half, scalar)
    assert out.dtype is tp.float16 and out.device.type == accel
    assert op_counts["aten::_to_copy.default"] == 0


def test_given_dtype_is_respected_by_the_set_opt_dtype_ops(accel: str) -> None:
    x = tp.ones([2, 3], dtype=tp.float16, device=accel)
    with tp.autocast(accel):
        assert x.sum(dtype=tp.float16).dtype is tp.float16
        assert tp.softmax(x, 1, dtype=tp.float64).dtype is tp.float64
        assert tp.softmax(x, 1).dtype is tp.float32
        assert tp.cumsum(x, 1, dtype=tp.float16).dtype is tp.float16


def test_promote_takes_the_widest_and_refuses_two_lower_dtypes(accel: str) -> None:
    with tp.autocast("cpu"):
        bf, f32 = tp.ones([2], dtype=tp.bfloat16), tp.ones([2])
        assert tp.cat([bf, bf]).dtype is tp.bfloat16
        assert tp.cat([bf, f32]).dtype is tp.float32
        assert tp.stack([f32, bf]).dtype is tp.float32
        with pytest.raises(
            RuntimeError,
            match=re.escape(
                "aten::cat.default: in a cpu autocast region with dtype tensorplug.bfloat16, its "
                "inputs mix tensorplug.float16 with tensorplug.bfloat16, which autocast cannot "
                "promote (only float32 and tensorplug.bfloat16 take part). Cast the inputs to one "
                "dtype first."
            ),
        ):
            tp.cat([bf, tp.ones([2], dtype=tp.float16)])
    h = tp.ones([3], dtype=tp.float16, device=accel)
    with tp.autocast(accel):
        assert tp.addcmul(h, h, tp.ones([3], device=accel)).dtype is tp.float32
        assert tp.atan2(h, h).dtype is tp.float16


def test_binary_cross_entropy_is_refused_in_cuda_list_regions(accel: str) -> None:
    p = tp.full([3], 0.5, device=accel)
    with tp.autocast(accel), pytest.raises(RuntimeError) as info:
        tp.nn.functional.binary_cross_entropy(p, p)
    message = str(info.value)
    assert message.startswith(
        "aten::binary_cross_entropy.default: tp.nn.functional.binary_cross_entropy and "
        "tp.nn.BCELoss are unsafe to autocast in a accel region."
    )
    assert "binary_cross_entropy_with_logits" in message
    assert "enabled=False" in message
    with tp.autocast("cpu"):  # the CPU list runs it in float32
        q = tp.full([3], 0.5, dtype=tp.bfloat16)
        assert tp.nn.functional.binary_cross_entropy(q, q).dtype is tp.float32


@pytest.mark.parametrize("requires_grad", [False, True])
def test_cross_entropy_is_a_fallthrough_whose_parts_meet_their_policies(
    accel: str, requires_grad: bool
) -> None:
    # cross_entropy_loss is in no list (PyTorch's too): it decomposes into log_softmax, which
    # the CUDA lists run in float32, and nll_loss; autograd's single CrossEntropyLoss node must
    # not skip that (Note [Fused nodes of composite ops])
    logits = tp.randn([4, 3], device=accel).half().requires_grad_(requires_grad)
    target = tp.tensor([0, 2, 1, 0], device=accel)
    with tp.autocast(accel):
        loss = tp.nn.functional.cross_entropy(logits, target)
    assert loss.dtype is tp.float32
    expected = tp.nn.functional.cross_entropy(logits.float(), target)
    assert abs(loss.item() - expected.item()) < 1e-6
    if requires_grad:
        loss.backward()
        assert logits.grad is not None and logits.grad.dtype is tp.float16


def test_in_place_and_out_overloads_are_not_autocast() -> None:
    a, b = tp.ones([2, 2]), tp.ones([2, 2])
    with tp.autocast("cpu"):
        out = tp.empty([2, 2])
        tp.add(a, b, out=out)
        assert out.dtype is tp.float32
        a.mul_(b)
        assert a.dtype is tp.float32


def test_a_composite_op_is_autocast_once(op_counts: Any) -> None:
    x, w = tp.ones([3, 4]), tp.ones([5, 4])
    with tp.autocast("cpu"):
        y = tp.nn.functional.linear(x, w)
    assert y.dtype is tp.bfloat16
    # linear casts its two inputs; the matmul it decomposes into is not autocast again
    assert op_counts["aten::_to_copy.default"] == 2
