"""The autograd kernels' generated source (tensorplug_autograd/codegen.py): compiled through
``tensorplug.codegen``, so tracebacks and ``source_of`` show its lines under a stable filename."""

from __future__ import annotations

import traceback

import pytest

import tensorplug as tp
from tensorplug import codegen
from tests import needs

needs.autograd()


def _frames(exc: BaseException, filename: str) -> list[traceback.FrameSummary]:
    """The frames of ``exc``'s traceback (its causes' included) that ran from ``filename``."""
    out = []
    seen: BaseException | None = exc
    while seen is not None:
        out += [f for f in traceback.extract_tb(seen.__traceback__) if f.filename == filename]
        seen = seen.__cause__ or seen.__context__
    return out


def test_a_traceback_through_add_with_grad_shows_the_autograd_kernels_lines() -> None:
    a = tp.ones([2, 3], requires_grad=True)
    b = tp.ones([4])
    with pytest.raises(RuntimeError, match="must match the size") as info:
        tp.add(a, b)
    frames = _frames(info.value, "<tensorplug: autograd aten::add.Tensor>")
    assert frames, "".join(traceback.format_exception(info.value))
    # the line text is there: the call of the kernel below autograd
    assert frames[-1].line is not None and "_k(self, other" in frames[-1].line
    text = "".join(traceback.format_exception(info.value))
    assert 'File "<tensorplug: autograd aten::add.Tensor>", line' in text
    assert frames[-1].line in text


def test_a_traceback_through_an_inplace_op_with_grad_shows_its_kernels_lines() -> None:
    x = tp.ones([2, 3], requires_grad=True).clone()  # a history, no view: the fast kernel
    with pytest.raises(RuntimeError, match="must match the size") as info:
        x.add_(tp.ones([5]))
    frames = _frames(info.value, "<tensorplug: autograd aten::add_.Tensor>")
    assert frames and frames[-1].line and "_k(self, other" in frames[-1].line


def test_the_kernel_of_a_key_set_has_its_source() -> None:
    a = tp.ones([3], requires_grad=True)
    op = tp.ops.aten.mul.Tensor
    op(a, a)  # builds the kernel
    kernel = op.kernel_for(a.tp_keyset)
    source = codegen.source_of(kernel)
    assert source is not None
    assert codegen.filename_of(kernel) == "<tensorplug: autograd aten::mul.Tensor>"
    assert "def kernel(self, other):" in source  # the per-key-set kernel, inside its factory
