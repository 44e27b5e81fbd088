"""tensorplug.testing, the conformance kit: the tests it defines for a device, its expected
failures, and that its cases fail on a backend that computes wrong values or gradients."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import array_backend, testing
from tests import needs
from tests.array_backend.conftest import FakeRegistry

aten = tp.ops.aten


@pytest.fixture
def wrong(backend: tp.keys.DispatchKey) -> Iterator[Any]:
    """numpy as ``TestBackend`` (device ``testdev``), with a wrong ``neg`` and a wrong
    ``threshold_backward`` (relu's gradient)."""

    def bad_neg(self: tp.Tensor) -> tp.Tensor:
        return aten.clone.default(self)  # forgets the sign

    def bad_threshold_backward(g: tp.Tensor, x: tp.Tensor, threshold: Any) -> tp.Tensor:
        return aten.clone.default(g)  # lets every gradient through

    b = array_backend.register(
        FakeRegistry(),
        backend.name,
        np,
        overrides={"neg": bad_neg, "threshold_backward": bad_threshold_backward},
    )
    try:
        yield b
    finally:
        b.close()


def _case(op: str, dtype: str) -> tuple[Any, str, Any]:
    info = testing.OPS_BY_NAME[op]
    sample = next(iter(info.sample_inputs(dtype, np.random.default_rng(0))))
    return info, dtype, sample


def test_instantiate_defines_the_device_tests() -> None:
    scope: dict[str, Any] = {}
    testing.instantiate_device_type_tests(scope, "cpu", dtypes=("float32",))
    test = scope["test_op_cpu"]
    params = next(m for m in test.pytestmark if m.name == "parametrize").args[1]
    assert len(params) > 500 and all("-float32-" in p.id for p in params)
    assert ("test_grad_cpu" in scope) == needs.HAS_AUTOGRAD


def test_expected_failures_become_xfails_and_must_name_a_case() -> None:
    scope: dict[str, Any] = {}
    testing.instantiate_device_type_tests(
        scope, "cpu", dtypes=("float64",), expected_failures={"neg": "why"}, grads=False
    )
    params = next(m for m in scope["test_op_cpu"].pytestmark if m.name == "parametrize").args[1]
    marked = [p for p in params if p.marks]
    assert marked and all(p.id.startswith("neg-float64-") for p in marked)
    assert all(m.name == "xfail" and m.kwargs["reason"] == "why" for p in marked for m in p.marks)
    with pytest.raises(ValueError, match="expected_failures name no case: nge"):
        testing.instantiate_device_type_tests({}, "cpu", expected_failures=["nge"])


def test_a_case_passes_on_a_right_backend_and_fails_on_a_wrong_one(wrong) -> None:
    testing.run_op_case(*_case("neg", "float64"), "cpu")
    with pytest.raises(pytest.fail.Exception, match=r"neg float64 .* on testdev:\n\[public\]"):
        testing.run_op_case(*_case("neg", "float64"), "testdev")
    testing.run_op_case(*_case("add.Tensor", "float64"), "testdev")  # the rest is right


def test_samples_asking_for_a_dtype_the_backend_lacks_are_skipped(backend) -> None:
    dtypes = {d: getattr(np, d.name) for d in (tp.float32, tp.float64, tp.int64, tp.bool)}
    b = array_backend.register(FakeRegistry(), backend.name, np, dtypes=dtypes)
    try:
        assert testing.supported_dtypes("testdev") == {"bool", "int64", "float32", "float64"}
        info = testing.OPS_BY_NAME["_to_copy"]
        sample = next(
            s for s in info.sample_inputs("float64", np.random.default_rng(0))
            if s.name == "to_float16"
        )  # fmt: skip
        with pytest.raises(pytest.skip.Exception, match="the testdev backend has no float16"):
            testing.run_op_case(info, "float64", sample, "testdev")
    finally:
        b.close()


@needs.needs_autograd
def test_gradients_are_compared_with_the_cpu_s(wrong) -> None:
    info = testing.OPS_BY_NAME["relu"]
    sample = next(
        s for s in info.sample_inputs("float64", np.random.default_rng(0))
        if (np.asarray(s.args[0]) < 0).any()
    )  # fmt: skip
    testing.run_grad_case(info, sample, "cpu")
    with pytest.raises(AssertionError, match="relu .*gradient of input 0 on testdev vs cpu"):
        testing.run_grad_case(info, sample, "testdev")
