"""F.embedding_bag and nn.EmbeddingBag (issue 30, item 4): PyTorch's values and gradients for
every mode, gradcheck, the module's arguments, and one compiled graph."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F

W = np.random.default_rng(0).standard_normal((10, 3))
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9])
OFFS = np.array([0, 4, 4])

CASES = [
    {"mode": "sum"},
    {"mode": "mean"},
    {"mode": "max"},
    {"mode": "mean", "padding_idx": 2},
    {"mode": "max", "padding_idx": -8},
    {"mode": "sum", "per_sample_weights": True},
    {"mode": "mean", "include_last_offset": True},
    {"mode": "mean", "two_d": True},
]


def _run(lib, case):  # noqa: ANN001, ANN202
    case = dict(case)
    w = lib.tensor(W, requires_grad=True)
    idx, offs = lib.tensor(IDX), lib.tensor(OFFS)
    if case.pop("two_d", False):
        idx, offs = idx.reshape(2, 4), None
    psw = None
    if case.pop("per_sample_weights", False):
        psw = lib.tensor(np.linspace(0.5, 2.0, 8), requires_grad=True)
        case["per_sample_weights"] = psw
    out = F_of(lib).embedding_bag(idx, w, offs, **case)
    out.backward(lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(out.shape)))
    grads = [w.grad.numpy()] + ([] if psw is None else [psw.grad.numpy()])
    return out.detach().numpy(), grads


def F_of(lib):  # noqa: ANN001, ANN201, N802
    return lib.nn.functional


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_matches_torch(case: dict) -> None:
    torch = pytest.importorskip("torch")
    out, grads = _run(tp, case)
    t_out, t_grads = _run(torch, case)
    np.testing.assert_allclose(out, t_out, rtol=1e-12, atol=1e-12)
    for g, tg in zip(grads, t_grads, strict=True):
        np.testing.assert_allclose(g, tg, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_gradcheck(mode: str) -> None:
    w = tp.tensor(W, requires_grad=True)
    idx, offs = tp.tensor(IDX), tp.tensor(OFFS)
    assert tp.autograd.gradcheck(
        lambda w: F.embedding_bag(idx, w, offs, mode=mode, padding_idx=3), (w,)
    )
    assert tp.autograd.gradgradcheck(lambda w: F.embedding_bag(idx, w, offs, mode=mode), (w,))


def test_scale_grad_by_freq_divides_by_the_count_of_each_index() -> None:
    # as F.embedding's gradient does; torch 2.13's CPU embedding_bag backward gives rows 3, 5
    # and 9 (each once in IDX) 0.5 and row 4 (twice) 2.0 here, which is not the documented
    # "scale gradients by the inverse of frequency of the words in the mini-batch"
    w = tp.tensor(np.ones((10, 1)), requires_grad=True)
    F.embedding_bag(
        tp.tensor(IDX), w, tp.tensor(OFFS), mode="sum", scale_grad_by_freq=True
    ).sum().backward()
    expected = np.zeros(10)
    expected[[1, 2, 3, 4, 5, 9]] = 1.0
    np.testing.assert_allclose(w.grad.numpy()[:, 0], expected)


def test_errors() -> None:
    w = tp.randn(10, 3)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(tp.tensor([1, 2]), w)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(tp.tensor([[1, 2]]), w, tp.tensor([0]))
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(tp.tensor([1, 2]), w, tp.tensor([0]), per_sample_weights=tp.ones(2))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(tp.tensor([1, 2]), w, tp.tensor([0]), mode="foo")
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding_bag(tp.tensor([1, 10]), w, tp.tensor([0]))


def test_module_and_from_pretrained() -> None:
    bag = tp.nn.EmbeddingBag(5, 3, max_norm=1.0, mode="max", padding_idx=0)
    assert repr(bag) == "EmbeddingBag(5, 3, max_norm=1.0, mode='max', padding_idx=0)"
    assert repr(tp.nn.EmbeddingBag(5, 3)) == "EmbeddingBag(5, 3, mode='mean')"
    assert list(bag.state_dict()) == ["weight"]
    assert np.all(bag.weight.detach().numpy()[0] == 0)
    table = tp.tensor(W)
    pre = tp.nn.EmbeddingBag.from_pretrained(table, mode="sum")
    assert not pre.weight.requires_grad
    out = pre(tp.tensor([[1, 2], [3, 4]]))
    np.testing.assert_allclose(out.numpy(), [W[1] + W[2], W[3] + W[4]])
    assert tp.nn.EmbeddingBag.from_pretrained(table, freeze=False).weight.requires_grad


def test_compiled_is_one_graph() -> None:
    bag = tp.nn.EmbeddingBag(10, 3, mode="max")
    step = tp.compile(lambda i, o: bag(i, o).sum())
    idx, offs = tp.tensor(IDX), tp.tensor(OFFS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", tp.tracer.TracerWarning)
        for _ in range(3):
            step(idx, offs)
    assert len(step.graphs) == 1 and step.trace_count == 2
