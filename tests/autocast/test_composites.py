"""Composite operators outside the table keep the dtype they have outside a region.

A composite (CompositeImplicitAutograd) that no list names still runs its parts through the
dispatcher inside a region, and those parts may be listed. Where PyTorch's operator is one
kernel, or decomposes differently, that would change the result dtype; policy.py lists the
composites where it did (Note [Entries PyTorch does not have]). This test runs every other
composite's OpInfo samples in a CPU region and in a region on a device type that follows the
CUDA lists, and compares the result dtype with the one outside.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from needs import autocast

import tensorplug as tp
from tensorplug.testing import to_tp
from tensorplug.testing.opinfo import OP_DB, OpInfo
from tensorplug_autocast.policy import POLICIES

autocast()

# composites whose parts are listed in PyTorch too, so they change dtype in a region there
# as well: (overload, device type) -> why
EXPECTED_CHANGES = {
    ("tensordot.int", "cpu"): "PyTorch's CPU tensordot runs mm",
    ("cross_entropy_loss", "accel"): "CUDA lists its log_softmax and nll_loss",
    # PyTorch's affine_grid_generator is an unlisted kernel that calls bmm, which both list
    ("affine_grid_generator", "cpu"): "its base grid times theta is a bmm",
    ("affine_grid_generator", "accel"): "its base grid times theta is a bmm",
    # PyTorch's linalg and special aliases are composites of the listed operators too
    ("linalg_matmul", "cpu"): "an alias of matmul",
    ("linalg_matmul", "accel"): "an alias of matmul",
    ("special_expm1", "accel"): "an alias of expm1",
    ("special_log1p", "accel"): "an alias of log1p",
    ("special_softmax", "accel"): "an alias of softmax",
    ("special_log_softmax", "accel"): "an alias of log_softmax",
    # numpy's names of the pointwise ops (PyTorch's aliases run the listed op)
    ("arccos", "accel"): "an alias of acos",
    ("arcsin", "accel"): "an alias of asin",
    # PyTorch's inner runs tensordot, its cov and corrcoef mm
    ("inner", "cpu"): "its tensordot runs mm",
    ("cov", "cpu"): "it runs mm",
    ("cov", "accel"): "it runs mm",
    ("corrcoef", "cpu"): "its cov runs mm",
    ("corrcoef", "accel"): "its cov runs mm",
    # PyTorch's matrix_power and pinv multiply with matmul as well
    **{
        (op, dev): "PyTorch's runs matmul"
        for op in (
            "linalg_matrix_power",
            "matrix_power",
            "linalg_pinv",
            "linalg_pinv.atol_rtol_tensor",
            "linalg_pinv.atol_rtol_float",
            "linalg_pinv.rcond_tensor",
        )
        for dev in ("cpu", "accel")
    },  # fmt: skip
}
# composites this test cannot run: (overload, device type) -> why
SKIPPED = {
    # float16 beside bfloat16 raises in a region, as atan2 does (the promote policy's tests)
    ("arctan2", "accel"): "an alias of atan2, which CUDA promotes",
    **{
        (op, dev): "float_power_ writes float64 self only: no lower-precision sample"
        for op in ("float_power_.Scalar", "float_power_.Tensor")
        for dev in ("cpu", "accel")
    },
}
FLOAT_DTYPES = ("float32", "float16", "bfloat16")


def _composites() -> list[OpInfo]:
    out = []
    for info in OP_DB:
        if info.name in POLICIES or info.kind in ("random", "factory"):
            continue
        if tp.dispatcher.find_op("aten::" + info.name).has_kernel("CompositeImplicitAutograd"):
            out.append(info)
    return out


def _move(x: Any, device: str) -> Any:
    if isinstance(x, tp.Tensor):
        return x.to(device)
    if isinstance(x, list | tuple):
        return type(x)(_move(v, device) for v in x)
    if isinstance(x, dict):
        return {k: _move(v, device) for k, v in x.items()}
    return x


def _dtypes(r: Any) -> Any:
    if isinstance(r, tp.Tensor):
        return r.dtype
    if isinstance(r, list | tuple):
        return tuple(_dtypes(v) for v in r)
    return type(r)


@pytest.mark.parametrize("device", ["cpu", "accel"])
@pytest.mark.parametrize("info", _composites(), ids=lambda i: i.name)
def test_composite_keeps_its_dtype_in_a_region(request: Any, info: OpInfo, device: str) -> None:
    if (info.name, device) in SKIPPED:
        pytest.skip(SKIPPED[info.name, device])
    if device == "accel":
        request.getfixturevalue("accel")
    changed = []
    ran = 0
    for d in info.dtypes:
        if d not in FLOAT_DTYPES:
            continue
        for sample in info.sample_inputs(d, np.random.default_rng(0)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecation warnings of some samples
                try:
                    outside = _dtypes(
                        info.op(
                            *_move(to_tp(sample.args), device),
                            **_move(to_tp(sample.kwargs), device),
                        )
                    )
                except (RuntimeError, TypeError, IndexError, ValueError):
                    continue  # an error sample: the error tests cover it
                for low in (tp.bfloat16, tp.float16):
                    with tp.autocast(device, dtype=low):
                        inside = _dtypes(
                            info.op(
                                *_move(to_tp(sample.args), device),
                                **_move(to_tp(sample.kwargs), device),
                            )
                        )
                    ran += 1
                    if inside != outside:
                        changed.append(f"{d} {sample.name} in {low}: {outside} -> {inside}")
    assert ran, "no sample ran"
    if (info.name, device) in EXPECTED_CHANGES:
        assert changed, f"{info.name} on {device} was expected to change dtype"
    else:
        assert not changed, "\n".join(changed)
