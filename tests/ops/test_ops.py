"""Every standard operator against its numpy oracle, driven by the OpInfo registry: the
conformance kit's cases (``tensorplug.testing``, whose harness does the checks below) on every
loaded backend device.

One test case per (op overload, dtype, sample), with ids like ``add.Tensor-float32-broadcast``.
Each case runs every variant of the op (public function, Tensor method, and the overload
``tp.ops.aten.<op>.<overload>``) on fresh tensors and checks, per the OpInfo's kind:

* the result's dtype (PyTorch promotion), shape and values (exact for ints and bools);
* that inputs are left untouched (values and version counters);
* in-place: the result *is* the mutated input and its ``_version`` went up by exactly one;
* ops writing several arguments (``mutating``): each written tensor, and its version;
* ``out=``: the out tensor is written, returned, and its version bumped once;
* views: writing through the view changes the base (and bumps the shared version counter);
* random ops: shape, dtype, range, and reproducibility under ``tp.manual_seed``.

The cases run on every loaded backend device (``tests/needs.py``, ``backend_devices``): cpu
and cuda (marked ``gpu``; one skipped placeholder without a GPU) run them all, a third-party
backend such as the example ``foo`` the first sample of each op and dtype. Inputs are made on
the device, factories get ``device=``, and every result must be on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import tensorplug as tp
from tensorplug.tensor import Tensor
from tensorplug.testing import case_failures, cases, has_special_functions, has_strides
from tensorplug.testing.opinfo import (
    OP_DB,
    OPS_BY_NAME,
    OpInfo,
    SampleInput,
    is_float,
    is_int,
    ml_dtypes,
)
from tests import needs

YAML_PATH = (
    Path(__file__).resolve().parents[2] / "core" / "src" / "tensorplug" / "native_functions.yaml"
)

CASES = list(cases())


@pytest.mark.parametrize(
    ("info", "dtype", "sample", "device"),
    needs.device_params(CASES, lambda p: (p.values[0].name, p.values[1])),
)
def test_op(info: OpInfo, dtype: str, sample: SampleInput, device: str) -> None:
    if not needs.device_has_dtype(device, dtype):
        pytest.skip(f"the {device} backend has no {dtype} (docs/cuda.md)")
    if info.needs_special and not has_special_functions(device):
        pytest.skip(f"the {device} backend has no special-function namespace")
    if info.needs_strides and not has_strides(device):
        pytest.skip(f"the {device} backend has no strides")
    failures = case_failures(info, dtype, sample, device)
    if failures:
        head = f"{info.name} {dtype} {sample.name} on {device}"
        pytest.fail(f"{head}:\n" + "\n".join(failures), pytrace=False)


# --- coverage of the yaml ---------------------------------------------------------------------


def _yaml_entries() -> list[dict[str, Any]]:
    return list(yaml.safe_load(YAML_PATH.read_text()))


def _key(func: str) -> str:
    return func.split("(", 1)[0].strip()


def test_every_yaml_op_has_samples() -> None:
    problems = []
    for entry in _yaml_entries():
        key = _key(entry["func"])
        info = OPS_BY_NAME.get(key)
        if info is None:
            problems.append(f"{key}: no OpInfo")
            continue
        n = sum(
            len(list(info.sample_inputs(d, np.random.default_rng(0))))
            for d in info.dtypes
            if d != "bfloat16" or ml_dtypes is not None
        )
        if n == 0:
            problems.append(f"{key}: no samples")
    assert not problems, "op overloads without an OpInfo or samples:\n" + "\n".join(problems)


def test_no_opinfo_without_a_yaml_op() -> None:
    keys = {_key(e["func"]) for e in _yaml_entries()}
    extra = sorted(set(OPS_BY_NAME) - keys)
    assert not extra, f"OpInfos for ops the yaml does not declare: {extra}"


def test_public_names_exist() -> None:
    """Every yaml op has its public function (variant function) and Tensor method (variant method)."""
    missing = []
    for entry in _yaml_entries():
        key = _key(entry["func"])
        base = key.split(".")[0]
        variants = [v.strip() for v in str(entry.get("variants", "function")).split(",")]
        module = entry.get("python_module")
        if module is not None:  # tp.linalg.vector_norm for linalg_vector_norm
            path = {"nn": "nn.functional"}.get(module, module)
            name = entry.get("python", base.removeprefix(f"{module}_"))
            found: Any = tp
            for part in (*path.split("."), name):
                found = getattr(found, part, None)
            if not callable(found) or hasattr(tp, base):
                missing.append(f"tp.{path}.{name}, and no tp.{base} ({key})")
        elif "function" in variants:
            name = entry.get("python", base)
            if not callable(getattr(tp, name, None)):
                missing.append(f"tp.{name} ({key})")
        if "method" in variants:
            if not callable(getattr(Tensor, base, None)):
                missing.append(f"Tensor.{base} ({key})")
    assert not missing, "public names missing:\n" + "\n".join(sorted(set(missing)))


def test_every_dtype_is_valid() -> None:
    for info in OP_DB:
        for d in info.dtypes:
            assert is_float(d) or is_int(d) or d == "bool", (info.name, d)


@pytest.mark.parametrize(
    ("dtype", "largest"), [("float16", 65504.0), ("bfloat16", 3.3895313892515355e38)]
)
def test_nan_to_num_replaces_infinities_with_the_dtype_s_largest(
    dtype: str, largest: float
) -> None:
    x = tp.tensor([float("nan"), float("inf"), -float("inf"), 1.0], dtype=getattr(tp, dtype))
    assert tp.nan_to_num(x).tolist() == [0.0, largest, -largest, 1.0]
