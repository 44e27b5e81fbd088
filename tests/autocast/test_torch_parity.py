"""The policy table against PyTorch 2.13 itself, where PyTorch is installed (never a dependency).

* which operators PyTorch registers ``AutocastCPU`` / ``AutocastCUDA`` kernels for is the table
  plus the operators the standard set lacks (``ABSENT_CPU`` / ``ABSENT_CUDA``), minus the
  entries PyTorch does not have (Note [Entries PyTorch does not have]);
* CUDA's categories are the ``AT_FORALL_*`` lists of the ``ATen/autocast_mode.h`` PyTorch ships;
* every case of cases.py gives the dtype PyTorch's CPU autocast gives, in bfloat16 and float16
  regions, from float32 and from lower precision inputs.
"""

from __future__ import annotations

import re
from pathlib import Path
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
    NOT_IN_PYTORCH,
    POLICIES,
    PROMOTE,
)

from .cases import CASES, UNLISTED, Case, makers

autocast()

torch = pytest.importorskip("torch")


def _registered(key: str) -> set[str]:
    names = torch._C._dispatch_get_all_op_names()
    return {
        n.removeprefix("aten::")
        for n in names
        if n.startswith("aten::") and torch._C._dispatch_has_kernel_for_dispatch_key(n, key)
    }


def _ours(column: int, device: str) -> dict[str, str]:
    return {
        name: policies[column]
        for name, policies in POLICIES.items()
        if policies[column] is not None and (name, device) not in NOT_IN_PYTORCH
    }


def _absent(absent: dict[str, tuple[str, ...]]) -> set[str]:
    return {n for names in absent.values() for n in names}


def test_cpu_list_membership() -> None:
    assert set(_ours(0, "cpu")) | _absent(ABSENT_CPU) == _registered("AutocastCPU")


def test_cuda_list_membership() -> None:
    assert set(_ours(1, "cuda")) | _absent(ABSENT_CUDA) == _registered("AutocastCUDA")


def _header_lists() -> dict[str, set[str]]:
    header = Path(torch.__file__).parent / "include" / "ATen" / "autocast_mode.h"
    if not header.exists():
        pytest.skip("this PyTorch ships no ATen headers")
    text = header.read_text()
    lists = {}
    for macro, policy in (
        ("AT_FORALL_LOWER_PRECISION_FP", LOWER),
        ("AT_FORALL_FP32", FP32),
        ("AT_FORALL_FP32_SET_OPT_DTYPE", FP32_SET_OPT_DTYPE),
        ("AT_FORALL_PROMOTE", PROMOTE),
    ):
        m = re.search(rf"#define {macro}\(_\)((?:[^\n]*\\\n)*[^\n]*)", text)
        assert m is not None, macro
        entries = re.findall(r"_\((\w+)(?:,\s*(\w+))?\)", m.group(1))
        lists[policy] = {f"{n}.{o}" if o else n for n, o in entries}
    return lists


def test_cuda_categories_are_the_header_lists() -> None:
    lists = _header_lists()
    ours = _ours(1, "cuda")
    for policy, names in lists.items():
        mine = {n for n, p in ours.items() if p == policy} | set(ABSENT_CUDA.get(policy, ()))
        # cudnn's convolutions are registered beside the macro, as lower precision
        if policy == LOWER:
            mine -= {"cudnn_convolution", "cudnn_convolution_transpose"}
        assert mine == names, policy
    others = {n for n, p in ours.items() if p in (FP32_APPEND_DTYPE, BANNED)}
    assert others == {"norm.Scalar", "norm.ScalarOpt_dim", "binary_cross_entropy"}


def _torch_dtype(case: Case, low: str, src: str) -> Any:
    t_low = getattr(torch, low)
    mk, ints = makers(torch, t_low if src == "low" else torch.float32, "cpu")
    with torch.autocast("cpu", dtype=t_low):
        return str(case.call(torch, mk, ints).dtype).removeprefix("torch.")


def _tp_dtype(case: Case, low: str, src: str) -> Any:
    t_low = getattr(tp, low)
    mk, ints = makers(tp, t_low if src == "low" else tp.float32, "cpu")
    with tp.autocast("cpu", dtype=t_low):
        return case.call(tp, mk, ints).dtype.name


# operators PyTorch has no CPU kernel for (its CUDA list names them; their CPU outcome is the
# natural dtype, which test_policies.py checks)
NO_TORCH_CPU_KERNEL = {"_thnn_fused_lstm_cell", "_thnn_fused_gru_cell"}
# operators whose PyTorch CPU kernel is oneDNN's, which refuses a low-precision dtype the CPU
# has no instructions for ("could not create a primitive descriptor": float16 on most CPUs,
# bfloat16 on CPUs without AVX512-BF16/AMX, e.g. this project's AMD EPYC machines); there the
# comparison skips, naming the CPU's refusal, and test_policies.py checks the outcome alone
ONEDNN_CPU = {"mkldnn_rnn_layer"}


@pytest.mark.parametrize("src", ["float32", "low"])
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize(
    "case", [c for c in CASES + UNLISTED if c.op not in NO_TORCH_CPU_KERNEL], ids=lambda c: c.op
)
def test_cpu_dtype_outcome_matches_pytorch(case: Case, low: str, src: str) -> None:
    ours = _tp_dtype(case, low, src)
    try:
        theirs = _torch_dtype(case, low, src)
    except RuntimeError as e:
        if case.op in ONEDNN_CPU and "could not create a primitive descriptor" in str(e):
            pytest.skip(f"PyTorch's oneDNN {case.op} refuses {low} on this CPU: {e}")
        raise
    assert ours == theirs
