"""tensorplug.nn.functional against numpy oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.nn import functional as F
from tests.needs import needs_autograd


def a(t: tp.Tensor) -> np.ndarray:
    return np.asarray(tp.detach(t).numpy())


def log_softmax_np(x: np.ndarray, axis: int) -> np.ndarray:
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


@pytest.fixture
def x() -> tp.Tensor:
    tp.manual_seed(0)
    return tp.randn(4, 5, dtype=tp.float64)


def test_pointwise(x):
    xn = a(x)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(a(F.relu(x)), np.maximum(xn, 0))
    np.testing.assert_allclose(a(F.gelu(x)), 0.5 * xn * (1 + erf(xn / math.sqrt(2))), rtol=1e-12)
    approx = 0.5 * xn * (1 + np.tanh(math.sqrt(2 / math.pi) * (xn + 0.044715 * xn**3)))
    np.testing.assert_allclose(a(F.gelu(x, approximate="tanh")), approx, rtol=1e-12)
    np.testing.assert_allclose(a(F.sigmoid(x)), 1 / (1 + np.exp(-xn)), rtol=1e-12)
    np.testing.assert_allclose(a(F.tanh(x)), np.tanh(xn), rtol=1e-12)
    np.testing.assert_allclose(a(F.silu(x)), xn / (1 + np.exp(-xn)), rtol=1e-12)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(x, approximate="erf")


def test_inplace_forms(x):
    y = x.clone()
    assert F.relu(y, inplace=True) is y
    np.testing.assert_allclose(a(y), np.maximum(a(x), 0))
    z = x.clone()
    assert F.silu(z, inplace=True) is z
    np.testing.assert_allclose(a(z), a(F.silu(x)))


def test_softmax_and_log_softmax(x):
    xn = a(x)
    np.testing.assert_allclose(a(F.log_softmax(x, 1)), log_softmax_np(xn, 1), rtol=1e-12)
    np.testing.assert_allclose(a(F.softmax(x, dim=0)), np.exp(log_softmax_np(xn, 0)), rtol=1e-12)
    assert F.softmax(x.float(), -1, dtype=tp.float64).dtype is tp.float64


def test_linear(x):
    w, b = tp.randn(3, 5, dtype=tp.float64), tp.randn(3, dtype=tp.float64)
    np.testing.assert_allclose(a(F.linear(x, w, b)), a(x) @ a(w).T + a(b), rtol=1e-12)
    np.testing.assert_allclose(a(F.linear(x, w)), a(x) @ a(w).T, rtol=1e-12)


def test_layer_norm(x):
    w, b = tp.randn(5, dtype=tp.float64), tp.randn(5, dtype=tp.float64)
    xn = a(x)
    norm = (xn - xn.mean(1, keepdims=True)) / np.sqrt(xn.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(a(F.layer_norm(x, 5, w, b)), norm * a(w) + a(b), rtol=1e-10)
    np.testing.assert_allclose(a(F.layer_norm(x, [5])), norm, rtol=1e-10)
    with pytest.raises(RuntimeError, match="Given normalized_shape=\\[4\\]"):
        F.layer_norm(x, (4,))


def test_dropout():
    tp.manual_seed(0)
    x = tp.ones(20_000)
    y = a(F.dropout(x, 0.5))
    assert abs((y == 0).mean() - 0.5) < 0.02 and set(np.unique(y)) == {0.0, 2.0}
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    z = tp.ones(1000)
    assert F.dropout(z, 0.3, inplace=True) is z and a(z).min() == 0.0
    with pytest.raises(
        ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"
    ):
        F.dropout(x, -0.1, training=False)


def test_embedding():
    w = tp.arange(12, dtype=tp.float32).reshape(4, 3)
    idx = tp.tensor([[0, 2], [3, 3]])
    np.testing.assert_array_equal(a(F.embedding(idx, w)), a(w)[a(idx)])
    np.testing.assert_array_equal(a(F.embedding(idx, w, padding_idx=3)), a(w)[a(idx)])
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        F.embedding(tp.tensor([0.0]), w)


@needs_autograd
def test_embedding_padding_idx_gets_no_gradient():
    w = tp.randn(4, 3, requires_grad=True)
    idx = tp.tensor([0, 2, 2, -1 + 4])
    F.embedding(idx, w, padding_idx=-2).sum().backward()  # -2 is row 2
    np.testing.assert_array_equal(a(w.grad), [[1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 1, 1]])


@needs_autograd
def test_aten_embedding_padding_and_scale_grad_by_freq_gradients():
    # tp.embedding is aten::embedding: PyTorch's embedding_backward skips padding_idx and,
    # with scale_grad_by_freq, divides each row's gradient by its index's count
    w = tp.randn([5, 3], dtype=tp.float64, requires_grad=True)
    idx = tp.tensor([[0, 2, 2], [1, 4, 2]])
    g = np.arange(18, dtype=np.float64).reshape(2, 3, 3)
    ii = a(idx)
    for padding_idx, by_freq in ((-1, False), (1, False), (-1, True), (2, True)):
        w.grad = None
        out = tp.embedding(w, idx, padding_idx, by_freq)
        np.testing.assert_array_equal(a(out.detach()), a(w.detach())[ii])  # values unchanged
        (out * tp.tensor(g)).sum().backward()
        expected = np.zeros((5, 3))
        counts = np.bincount(ii.reshape(-1), minlength=5)
        for pos, row in np.ndenumerate(ii):
            if row != padding_idx:
                expected[row] += g[pos] / (counts[row] if by_freq else 1)
        np.testing.assert_allclose(a(w.grad), expected, rtol=1e-12)


@needs_autograd
def test_embedding_scale_grad_by_freq_keeps_non_finite_rows():
    w = tp.tensor([[1.0, float("inf")], [float("nan"), 2.0]], requires_grad=True)
    out = tp.embedding(w, tp.tensor([0, 1, 1]), -1, True)
    np.testing.assert_array_equal(a(out.detach()), a(w.detach())[[0, 1, 1]])


def test_mse_loss(x):
    y = tp.randn(4, 5, dtype=tp.float64)
    d = a(x) - a(y)
    np.testing.assert_allclose(a(F.mse_loss(x, y)), (d**2).mean(), rtol=1e-12)
    np.testing.assert_allclose(a(F.mse_loss(x, y, reduction="sum")), (d**2).sum(), rtol=1e-12)
    np.testing.assert_allclose(a(F.mse_loss(x, y, reduction="none")), d**2, rtol=1e-12)
    with pytest.raises(ValueError, match="aten::mse_loss: avg is not a valid value for reduction"):
        F.mse_loss(x, y, reduction="avg")


def cross_entropy_np(
    logits, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0
):
    """The documented formula, for class-index targets."""
    n, c = logits.shape
    logp = log_softmax_np(logits, 1)
    w = np.ones(c) if weight is None else weight
    keep = target != ignore_index
    t = np.where(keep, target, 0)
    nll = -w[t] * logp[np.arange(n), t] * keep
    smooth = -(w * logp).sum(1) / c * keep
    loss = (1 - label_smoothing) * nll + label_smoothing * smooth
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / (w[t] * keep).sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy(x, reduction, label_smoothing, weighted):
    target = tp.tensor([1, 4, -100, 0])
    weight = tp.tensor([0.5, 1.0, 2.0, 1.5, 0.25], dtype=tp.float64) if weighted else None
    got = F.cross_entropy(x, target, weight, reduction=reduction, label_smoothing=label_smoothing)
    want = cross_entropy_np(
        a(x),
        a(target),
        None if weight is None else a(weight),
        reduction=reduction,
        label_smoothing=label_smoothing,
    )
    np.testing.assert_allclose(a(got), want, rtol=1e-12)


def test_cross_entropy_with_probabilities_and_nll(x):
    probs = F.softmax(tp.randn(4, 5, dtype=tp.float64), 1)
    logp = log_softmax_np(a(x), 1)
    np.testing.assert_allclose(
        a(F.cross_entropy(x, probs)), -(a(probs) * logp).sum(1).mean(), rtol=1e-12
    )
    target = tp.tensor([1, 4, 3, 0])
    np.testing.assert_allclose(
        a(F.nll_loss(F.log_softmax(x, 1), target)),
        -logp[np.arange(4), a(target)].mean(),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        a(F.nll_loss(F.log_softmax(x, 1), target, ignore_index=4, reduction="sum")),
        -logp[[0, 2, 3], [1, 3, 0]].sum(),
        rtol=1e-12,
    )


def test_binary_cross_entropy(x):
    p = F.sigmoid(x)
    t = tp.tensor(np.random.default_rng(0).uniform(size=(4, 5)))
    pn, tn = a(p), a(t)
    want = -(tn * np.log(pn) + (1 - tn) * np.log(1 - pn))
    np.testing.assert_allclose(a(F.binary_cross_entropy(p, t)), want.mean(), rtol=1e-10)
    w = tp.full([5], 2.0, dtype=tp.float64)
    np.testing.assert_allclose(
        a(F.binary_cross_entropy(p, t, w, reduction="none")), 2 * want, rtol=1e-10
    )


def test_functions_honour_the_override_protocol():
    class Logged:
        calls: list[str] = []

        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            cls.calls.append(func.__name__)
            return "handled"

    w = tp.ones(2, 2)
    assert F.linear(Logged(), w) == "handled"
    assert F.relu(Logged()) == "handled"
    assert F.cross_entropy(Logged(), tp.tensor([0])) == "handled"
    assert Logged.calls == ["linear", "relu", "cross_entropy"]
