"""The conformance kit: tensorplug's device-generic op and gradient tests, for any backend.

Every standard operator has an OpInfo (``tensorplug.testing.opinfo``): samples, a numpy oracle
written from PyTorch's documented semantics, and the dtype PyTorch's promotion gives. The same
tests tensorplug runs on its CPU backend run on any device, in the spirit of PyTorch's
``instantiate_device_type_tests``: a backend's test suite gets them with two lines
(it needs pytest and numpy, the oracle)::

    # tests/test_conformance.py of a plugin
    from tensorplug.testing import instantiate_device_type_tests

    instantiate_device_type_tests(globals(), "foo")

That defines ``test_op_foo`` (every op, dtype and sample: values, dtypes, shapes, in-place and
``out=`` semantics, views, version counters, random ops' reproducibility) and, when
tensorplug-autograd is loaded, ``test_grad_foo`` (the gradients of every differentiable op
equal the CPU's). Cases run in the dtypes the backend stores (``dtypes=`` keeps fewer), and
a sample that asks for a dtype it lacks (``.to(float16)``) is skipped as such.
``expected_failures=`` names cases known to fail (``"op"``, ``"op-dtype"`` or a whole case id
``"op-dtype-sample"``, or a pattern such as ``"diagonal-*-batched_dims"``; ``"grad:op"`` for a
gradient case): they run as strict xfails (a case of them that passes fails, so a fix shows),
and a name that matches no case is an error. ``select=`` keeps the cases whose id it accepts
(a sample, for a backend whose cases are slow: tensorplug-dask's). Usage::

    instantiate_device_type_tests(
        globals(), "foo", dtypes=("float32", "float64", "int64", "bool"),
        expected_failures={"nonzero": "data-dependent shapes"},
    )
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._grads import grad_cases, gradients, run_grad_case
from ._harness import (
    case_failures,
    cases,
    has_special_functions,
    has_strides,
    run_op_case,
    supported_dtypes,
    to_numpy,
    to_tp,
)
from .opinfo import OP_DB, OPS_BY_NAME, OpInfo, SampleInput

__all__ = [
    "OP_DB",
    "OPS_BY_NAME",
    "OpInfo",
    "SampleInput",
    "case_failures",
    "cases",
    "grad_cases",
    "gradients",
    "instantiate_device_type_tests",
    "run_grad_case",
    "run_op_case",
    "has_special_functions",
    "has_strides",
    "supported_dtypes",
    "to_numpy",
    "to_tp",
]


def _marked(params: Iterable[Any], expected: Mapping[str, str] | Iterable[str]) -> list[Any]:
    """``params`` with those ``expected`` names (an op, op-dtype or a whole id) as strict
    xfails; a name that matches no case is an error (a typo would hide nothing)."""
    import pytest

    reasons = dict(expected) if isinstance(expected, Mapping) else dict.fromkeys(expected, "")
    patterns = [k for k in reasons if any(c in k for c in "*?[")]
    used: set[str] = set()
    out = []
    for p in params:
        name = p.id
        parts = name.split("-")
        hit = next((k for k in (name, "-".join(parts[:2]), parts[0]) if k in reasons), None)
        if hit is None:  # patterns: "diagonal-*-batched_dims"
            hit = next((k for k in patterns if fnmatch.fnmatchcase(name, k)), None)
        if hit is None:
            out.append(p)
            continue
        used.add(hit)
        mark = pytest.mark.xfail(strict=True, reason=reasons[hit] or "expected failure")
        out.append(pytest.param(*p.values, id=p.id, marks=mark))
    unknown = sorted(set(reasons) - used)
    if unknown:
        raise ValueError(f"expected_failures name no case: {', '.join(unknown)}")
    return out


def instantiate_device_type_tests(
    scope: dict[str, Any],
    device: str,
    *,
    dtypes: Iterable[str] | None = None,
    expected_failures: Mapping[str, str] | Iterable[str] = (),
    grads: bool = True,
    select: Callable[[str], bool] | None = None,
) -> None:
    """Define ``test_op_<device>`` (and ``test_grad_<device>``) in ``scope`` (a test module's
    ``globals()``), parametrized over the OpInfo cases (see the module docstring)."""
    import pytest

    import tensorplug as tp

    name = device.replace(":", "_")
    expected = (
        dict(expected_failures)
        if isinstance(expected_failures, Mapping)
        else dict.fromkeys(expected_failures, "")
    )
    op_expected = {k: v for k, v in expected.items() if not k.startswith("grad:")}
    grad_expected = {k[5:]: v for k, v in expected.items() if k.startswith("grad:")}

    if dtypes is None:
        dtypes = supported_dtypes(device)
    else:
        dtypes = frozenset(dtypes) & supported_dtypes(device)

    op_cases = list(cases(dtypes))
    if select is not None:  # a sample of the cases, by their ids
        op_cases = [p for p in op_cases if select(p.id)]

    @pytest.mark.parametrize(("info", "dtype", "sample"), _marked(op_cases, op_expected))
    def test_op(info: OpInfo, dtype: str, sample: SampleInput) -> None:
        run_op_case(info, dtype, sample, device)

    test_op.__name__ = f"test_op_{name}"
    scope[test_op.__name__] = test_op
    if not grads or "autograd" not in tp.plugins.loaded_names():
        return

    g_cases = list(grad_cases())
    if select is not None:
        g_cases = [p for p in g_cases if select(p.id)]

    @pytest.mark.parametrize(("info", "sample"), _marked(g_cases, grad_expected))
    def test_grad(info: OpInfo, sample: SampleInput) -> None:
        run_grad_case(info, sample, device)

    test_grad.__name__ = f"test_grad_{name}"
    scope[test_grad.__name__] = test_grad
