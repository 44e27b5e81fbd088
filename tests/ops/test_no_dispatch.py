"""Note [Kernels that do not dispatch]: the CPU kernels marked with
``tp.library.mark_no_dispatch`` call no operator, checked under dispatch tracing on every op's
samples (each of which must run); and the autograd kernel that relies on the mark still keeps
its guard for kernels without it."""

from __future__ import annotations

import uuid
import zlib

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import dispatcher, keys
from tensorplug.testing import to_tp
from tensorplug.testing.opinfo import OP_DB
from tests import needs

CPU = int(keys.keyset("CPU"))


def _marked(name: str) -> bool:
    op = dispatcher.find_op("aten::" + name)
    return op.has_kernel("CPU") and tp.library.is_no_dispatch(op.kernel_for(CPU))


def _cases():
    for info in OP_DB:
        if not _marked(info.name):
            continue
        dtype = info.dtypes[0]
        rng = np.random.default_rng(zlib.crc32(info.name.encode()))
        for n, sample in enumerate(info.sample_inputs(dtype, rng)):
            yield pytest.param(info, sample, id=f"{info.name}-{dtype}-{n}")


def _nested_calls(op, args, kwargs):
    """The dispatch steps below the call (the sample must run: a refusal fails the test)."""
    lines: list[str] = []
    with dispatcher.tracing(lines.append):
        op.redispatch(CPU, *args, **kwargs)
    assert lines and lines[0].startswith(f"[dispatch] redispatch {op.name} "), lines
    return lines[1:]  # the first line is the call itself


@pytest.mark.parametrize(("info", "sample"), list(_cases()))
def test_marked_cpu_kernels_call_no_operator(info, sample):
    op = dispatcher.find_op("aten::" + info.name)
    args, kwargs = to_tp(sample.args), to_tp(sample.kwargs)
    if info.kind == "out":  # the samples are the functional op's: out= is the test's to give
        kwargs["out"] = tp.zeros_like(info.op(*args, **kwargs))
    try:
        nested = _nested_calls(op, args, kwargs)
    except NotImplementedError as e:  # a kernel that needs an optional library (LDL: scipy)
        if "not supported by the CPU backend without" in str(e):
            pytest.skip(str(e))
        raise
    assert nested == []


def test_the_marks_leave_out_the_kernels_that_dispatch():
    assert _marked("add.Tensor") and _marked("mm") and _marked("threshold_backward")
    assert not _marked("_to_copy") and not _marked("copy_")  # across backends they dispatch


def test_the_tracing_check_sees_a_kernel_that_dispatches():
    ns = f"nodispatch_{uuid.uuid4().hex[:8]}"
    with tp.Library(ns, "FRAGMENT") as lib:
        op = tp.library.define(f"{ns}::twice(Tensor x) -> Tensor", lib=lib)
        lib.impl("twice", lambda x: tp.add(x, x), "CPU")
        nested = _nested_calls(op, (tp.ones([2]),), {})
    assert len(nested) == 1 and "aten::add.Tensor" in nested[0]


def test_kernels_without_the_mark_run_with_autograd_excluded():
    needs.autograd()
    inner = []
    real = dispatcher.find_op("aten::exp.default")._kernels["CPU"].fn

    def exp_via_ops(x):  # a CPU kernel that calls operators, as a third party's might
        y = tp.mul(x, 1.0)
        inner.append(y.grad_fn)
        return real(y)

    x = tp.tensor([0.5, 1.0], requires_grad=True)
    with tp.Library("aten", "IMPL") as lib:
        lib.impl("exp", exp_via_ops, "CPU", override=True)
        y = tp.exp(x)  # the autograd kernel finds a kernel below it without the mark ...
    assert inner == [None]  # ... and runs it with the autograd keys excluded: mul recorded nothing
    assert y.grad_fn.name() == "ExpBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.0]), rtol=1e-6)


def test_under_tracing_the_autograd_kernel_shows_its_call_below():
    needs.autograd()
    a, b = tp.ones([2], requires_grad=True), tp.ones([2])
    lines: list[str] = []
    with dispatcher.tracing(lines.append):
        y = tp.add(a, b)
    assert len(lines) == 2 and "-> AutogradCPU" in lines[0]
    assert lines[1].startswith("  [dispatch] redispatch aten::add.Tensor") and "-> CPU" in lines[1]
    assert y.grad_fn.name() == "AddBackward0"
