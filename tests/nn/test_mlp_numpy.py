"""A 2-layer MLP written in numpy (forward, backward by hand, SGD) against the same MLP from
tp.nn + tp.optim: losses, gradients and weights agree step by step (needs autograd)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tests import needs

needs.autograd()


def a(t: tp.Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy())


class NumpyMLP:
    """x -> relu(x W1ᵀ + b1) W2ᵀ + b2 -> mean cross entropy; SGD with momentum, by hand."""

    def __init__(self, params: dict[str, np.ndarray], lr: float, momentum: float) -> None:
        self.p = {k: v.copy() for k, v in params.items()}
        self.lr, self.momentum = lr, momentum
        self.buf: dict[str, np.ndarray] = {}

    def loss_and_grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        p = self.p
        z1 = x @ p["0.weight"].T + p["0.bias"]
        h = np.maximum(z1, 0)
        logits = h @ p["2.weight"].T + p["2.bias"]
        shifted = logits - logits.max(1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        n = len(y)
        loss = -logp[np.arange(n), y].mean()
        dlogits = np.exp(logp)
        dlogits[np.arange(n), y] -= 1
        dlogits /= n
        dh = dlogits @ p["2.weight"]
        dz1 = dh * (z1 > 0)
        grads = {
            "2.weight": dlogits.T @ h, "2.bias": dlogits.sum(0),
            "0.weight": dz1.T @ x, "0.bias": dz1.sum(0),
        }  # fmt: skip
        return float(loss), grads

    def step(self, grads: dict[str, np.ndarray]) -> None:
        for k, g in grads.items():
            b = self.buf.get(k)
            b = g.copy() if b is None else self.momentum * b + g
            self.buf[k] = b
            self.p[k] = self.p[k] - self.lr * b


def data(n: int = 60, d: int = 4, c: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, size=n)
    centers = rng.normal(scale=2.0, size=(c, d))
    return centers[y] + rng.normal(size=(n, d)), y


def test_mlp_agrees_with_numpy_step_by_step():
    x_np, y_np = data()
    tp.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(4, 8, dtype=tp.float64), nn.ReLU(), nn.Linear(8, 3, dtype=tp.float64)
    )
    ref = NumpyMLP({k: a(v) for k, v in model.state_dict().items()}, lr=0.2, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    opt = tp.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    x, y = tp.tensor(x_np), tp.tensor(y_np)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        want_loss, want_grads = ref.loss_and_grads(x_np, y_np)
        assert loss.item() == pytest.approx(want_loss, rel=1e-12)
        for name, p in model.named_parameters():
            np.testing.assert_allclose(a(p.grad), want_grads[name], rtol=1e-10, atol=1e-13)
        opt.step()
        ref.step(want_grads)
        losses.append(want_loss)
    for name, p in model.named_parameters():
        np.testing.assert_allclose(a(p), ref.p[name], rtol=1e-10, atol=1e-13)
    assert losses[-1] < 0.5 * losses[0]


def test_a_model_of_every_layer_trains():
    """Embedding, LayerNorm, GELU, Dropout, Linear and MSELoss under Adam: the loss falls."""
    tp.manual_seed(0)
    model = nn.Sequential(
        nn.Embedding(10, 8, padding_idx=0),
        nn.LayerNorm(8),
        nn.GELU(),
        nn.Dropout(0.1),
        nn.Linear(8, 1),
    )
    idx = tp.randint(0, 10, [64])
    target = (idx.to(tp.float32) / 10).unsqueeze(1)
    opt = tp.optim.Adam(model.parameters(), lr=0.02)
    loss_fn = nn.MSELoss()
    first = None
    for _ in range(150):
        opt.zero_grad()
        loss = loss_fn(model(idx), target)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    model.eval()
    with tp.no_grad():
        final = loss_fn(model(idx), target).item()
    assert final < 0.1 * first
    assert a(model[0].weight)[0].tolist() == [0.0] * 8  # the padding row never moved
    assert all(p.grad is not None for p in model.parameters())
