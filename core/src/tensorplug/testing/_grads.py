"""The gradient harness of the conformance kit: a backend's gradients against the CPU's.

For each differentiable OpInfo (not random, not ``out=``, with float64 samples), the first
float64 sample runs twice, once with its tensors on the device under test and once on CPU,
every floating tensor argument a leaf that requires grad. Each floating output is weighted by
fixed random cotangents (on the device, multiplied by the signs that align an output defined
up to sign, a singular or eigen vector, with the CPU's: :func:`_gauge`), and
``tp.autograd.grad`` gives the gradient of every leaf; the device's must equal the CPU's (the same formulas run on both; the CPU's are themselves held to
finite differences by ``gradcheck`` in tensorplug's own tests). A sample the CPU refuses, or
whose outputs do not depend on any leaf, says so as a skip.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug.tensor import Tensor

from ._harness import default_device, to_numpy
from .opinfo import DT, OP_DB, OpInfo, SampleInput


def grad_cases() -> Iterator[Any]:
    """``pytest.param(info, sample)``: the first float64 sample of each differentiable op."""
    import pytest

    for info in OP_DB:
        if info.kind in ("random", "out") or "float64" not in info.dtypes:
            continue
        rng = np.random.default_rng(zlib.crc32(f"{info.name}-grad".encode()))
        for sample in info.sample_inputs("float64", rng):
            yield pytest.param(info, sample, id=f"{info.name}-{sample.name}")
            break


def _leaves(x: Any, device: str, leaves: list[Tensor]) -> Any:
    if isinstance(x, np.ndarray):
        t = tp.tensor(x.copy(), device=device)
        if t.dtype.is_floating_point:
            t.requires_grad_()
            leaves.append(t)
        return t
    if isinstance(x, DT):
        return getattr(tp, x.name)
    if isinstance(x, list):
        return [_leaves(v, device, leaves) for v in x]
    if isinstance(x, tuple):
        return tuple(_leaves(v, device, leaves) for v in x)
    if isinstance(x, dict):
        return {k: _leaves(v, device, leaves) for k, v in x.items()}
    return x


def _floating_outputs(r: Any) -> list[Tensor]:
    items = list(r) if isinstance(r, (list, tuple)) else [r]
    return [t for t in items if isinstance(t, Tensor) and t.dtype.is_floating_point]


def gradients(info: OpInfo, sample: SampleInput, device: str) -> list[np.ndarray | None] | None:
    """The gradients of ``info``'s op at ``sample`` on ``device``, one per floating tensor
    argument (None where the output does not depend on it); None if nothing requires grad."""
    got = _gradients(info, sample, device, None)
    return None if got is None else got[0]


def _gradients(
    info: OpInfo, sample: SampleInput, device: str, like: list[np.ndarray] | None
) -> tuple[list[np.ndarray | None], list[np.ndarray]] | None:
    """``gradients`` and the floating outputs; with ``like`` (the CPU's outputs), each
    cotangent is aligned to the gauge of its output (:func:`_gauge`)."""
    leaves: list[Tensor] = []
    with default_device(device):
        args = _leaves(sample.args, device, leaves)
        kwargs = _leaves(sample.kwargs, device, leaves)
        if not leaves:
            return None
        if info.kind == "inplace":  # in place on a clone: a leaf must not be modified
            args = (args[0].clone(), *args[1:])
        outs = [t for t in _floating_outputs(info.aten()(*args, **kwargs)) if t.requires_grad]
        if not outs:
            return None
        values = [to_numpy(o.detach()) for o in outs]
        rng = np.random.default_rng(zlib.crc32(info.name.encode()))
        cots = []
        for i, o in enumerate(outs):
            c = rng.standard_normal(tuple(o.shape))
            if like is not None and i < len(like):
                c = c * _gauge(values[i], like[i])
            cots.append(tp.tensor(c, dtype=o.dtype, device=device))
        grads = tp.autograd.grad(outs, leaves, cots, allow_unused=True)
    return [None if g is None else to_numpy(g) for g in grads], values


def _gauge(got: np.ndarray, want: np.ndarray) -> Any:
    """The signs that take ``want`` to ``got`` column by column or row by row, where the two
    differ only so (else 1). Singular and eigen vectors are defined up to sign, and two LAPACKs
    (numpy's, torch's) may pick differently: a cotangent multiplied by these signs makes the
    weighted loss the same function on both, so its gradients must agree."""
    if got.ndim < 2 or got.shape != want.shape or np.allclose(got, want, rtol=1e-6, atol=1e-9):
        return 1.0
    for axis in (-2, -1):
        signs = np.where(np.sum(got * want, axis=axis, keepdims=True) < 0, -1.0, 1.0)
        if np.allclose(got, want * signs, rtol=1e-6, atol=1e-9):
            return signs
    return 1.0


def run_grad_case(info: OpInfo, sample: SampleInput, device: str) -> None:
    """The device's gradients of ``info`` at ``sample`` equal the CPU's."""
    import pytest

    from ._harness import has_special_functions, has_strides

    if info.needs_special and not has_special_functions(device):
        pytest.skip(f"the {device} backend has no special-function namespace")
    if info.needs_strides and not has_strides(device):
        pytest.skip(f"the {device} backend has no strides")
    try:
        on_cpu = _gradients(info, sample, "cpu", None)
    except Exception as e:  # noqa: BLE001 - the CPU refusing the sample is not this test's
        pytest.skip(f"the CPU refuses {info.name} {sample.name}: {type(e).__name__}: {e}")
    if on_cpu is None:
        pytest.skip(f"{info.name} {sample.name}: no output depends on a floating input")
    want, outs = on_cpu
    on_device = _gradients(info, sample, device, outs)
    assert on_device is not None, f"{info.name}: no gradient on {device}, but one on cpu"
    got = on_device[0]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if w is None:
            assert g is None, f"{info.name}: input {i} has a gradient on {device}, not on cpu"
            continue
        assert g is not None, f"{info.name}: input {i} has no gradient on {device}"
        np.testing.assert_allclose(
            g, w, rtol=1e-7, atol=1e-9, equal_nan=True,
            err_msg=f"{info.name} {sample.name}: gradient of input {i} on {device} vs cpu",
        )  # fmt: skip
