"""Embedding lookups read no index values into Python (issue 30): out-of-range indices raise
PyTorch's "index out of range in self" from the index_select kernel, and tp.compile keeps the
lookup in its graph."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F


@pytest.mark.parametrize("bad", [-1, 5])
def test_out_of_range_index_raises_pytorchs_error(bad: int) -> None:
    w = tp.randn(5, 3)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(tp.tensor([[0, bad]]), w)


def test_compiled_embedding_is_one_graph_and_still_checks_bounds() -> None:
    emb = tp.nn.Embedding(6, 4, padding_idx=0)

    def f(idx: tp.Tensor) -> tp.Tensor:
        return emb(idx).sum(-1)

    step = tp.compile(f)
    idx = tp.tensor([[1, 0, 5], [2, 3, 4]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", tp.tracer.TracerWarning)
        for _ in range(3):
            out = step(idx)
    assert len(step.graphs) == 1 and step.trace_count == 2
    np.testing.assert_array_equal(out.detach().numpy(), f(idx).detach().numpy())
    assert "aten::index_select.default" in {n.op.name for n in step.graphs[0].nodes}
    with pytest.raises(IndexError, match="index out of range in self"):
        step(tp.tensor([[1, 0, 6], [2, 3, 4]]))  # the lowered graph's kernel checks too


def test_embedding_gradient_skips_padding_and_scales_by_frequency() -> None:
    w = tp.randn(4, 2, requires_grad=True)
    idx = tp.tensor([1, 1, 2, 0])
    F.embedding(idx, w, padding_idx=0, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[0, 0], [1, 1], [1, 1], [0, 0]])
