"""tensorplug.utils.checkpoint: gradients equal to the plain run's, recomputation in backward
through the autograd plugin's saved-tensor hooks, random state replayed, memory saved."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from tests import needs

needs.autograd()

import tensorplug as tp  # noqa: E402
from tensorplug import nn  # noqa: E402
from tensorplug.utils.checkpoint import (  # noqa: E402
    CheckpointError,
    checkpoint,
    checkpoint_sequential,
)


def mlp() -> nn.Sequential:
    tp.manual_seed(0)
    return nn.Sequential(
        nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 4)
    )


def grads(loss, tensors):
    return tp.autograd.grad(loss, tensors)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_equal_the_plain_runs(use_reentrant):
    m = mlp()
    x = tp.randn(5, 8, requires_grad=True)
    params = [x, *m.parameters()]
    want = grads(m(x).pow(2).sum(), params)
    if use_reentrant:
        for p in params:
            p.grad = None
        checkpoint(m, x, use_reentrant=True).pow(2).sum().backward()
        got = [p.grad for p in params]
    else:
        got = grads(checkpoint(m, x, use_reentrant=False).pow(2).sum(), params)
    assert all(tp.allclose(a, b, atol=1e-6) for a, b in zip(want, got, strict=True))


def test_parameters_get_gradients_without_an_input_that_requires_grad_and_kwargs_pass():
    m = mlp()
    x = tp.randn(3, 8)

    def f(x, *, scale):
        return m(x) * scale

    checkpoint(f, x, use_reentrant=False, scale=3.0).sum().backward()
    got = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    f(x, scale=3.0).sum().backward()
    assert all(tp.allclose(a, p.grad) for a, p in zip(got, m.parameters(), strict=True))


def test_the_forward_runs_again_in_backward_only():
    calls = []

    def f(x):
        calls.append(tp.is_grad_enabled())
        return x.sin().cos()

    x = tp.randn(4, requires_grad=True)
    y = checkpoint(f, x, use_reentrant=False)
    assert calls == [True]
    y.sum().backward()
    assert calls == [True, True]
    assert tp.allclose(x.grad, -tp.sin(tp.sin(x)) * tp.cos(x))


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_random_state_is_replayed(use_reentrant):
    drop = nn.Dropout(0.5)
    x = tp.ones(200, requires_grad=True)
    y = checkpoint(drop, x, use_reentrant=use_reentrant)
    y.sum().backward()
    assert tp.equal(x.grad, (y != 0).to(tp.float32) * 2.0)  # the same mask as forward's


def test_determinism_check_and_wrong_recomputations():
    state = {"n": 0}

    def changing(x):
        state["n"] += 1
        return x.sin() if state["n"] == 1 else x[:2].sin()

    x = tp.randn(3, requires_grad=True)
    with pytest.raises(CheckpointError, match="have different metadata than during the forward"):
        checkpoint(changing, x, use_reentrant=False).sum().backward()
    state["n"] = 0

    def fewer(x):
        state["n"] += 1
        return x.sin().cos() if state["n"] == 1 else x.clone()

    with pytest.raises(CheckpointError, match="A different number of tensors was saved"):
        checkpoint(fewer, x, use_reentrant=False).sum().backward()
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda x, scale: x, x, use_reentrant=True, scale=1)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(tp.sin, x)


def test_checkpoint_sequential_and_no_grad():
    m = mlp()
    x = tp.randn(2, 8, requires_grad=True)
    want = grads(m(x).sum(), [x])[0]
    got = grads(checkpoint_sequential(m, 2, x, use_reentrant=False).sum(), [x])[0]
    assert tp.allclose(want, got, atol=1e-6)
    with tp.no_grad():
        assert tp.allclose(checkpoint(m, x, use_reentrant=False), m(x))


def test_saved_tensor_hooks_see_every_saved_tensor():
    packed = []

    def pack(t):
        packed.append(t.shape)
        return t.clone()

    x = tp.randn(3, requires_grad=True)
    with tp.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = (x * x).sin().sum()
    assert packed  # x (twice) and x*x were saved through the hooks
    y.backward()
    assert tp.allclose(x.grad, tp.cos(x * x) * 2 * x)


def traced(fn) -> tuple[int, int]:
    """(bytes held when ``fn`` returns, peak bytes while it ran), numpy's arrays included."""
    gc.collect()
    tracemalloc.start()
    try:
        out = fn()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del out
    return held, peak


def test_checkpointing_a_deep_stack_saves_memory():
    """Transformer-style MLP blocks: between forward and backward the plain graph keeps each
    block's hidden activations, the checkpointed one only the blocks' outputs (bench/
    checkpoint.py measures the same with time)."""
    tp.manual_seed(0)
    blocks = [
        nn.Sequential(nn.LayerNorm(64), nn.Linear(64, 256), nn.Tanh(), nn.Linear(256, 64))
        for _ in range(4)
    ]
    x = tp.randn(128, 64, requires_grad=True)

    def forward(ck):
        h = x
        for b in blocks:
            h = h + (checkpoint(b, h, use_reentrant=False) if ck else b(h))
        return h

    plain_held, _ = traced(lambda: forward(False))
    ck_held, _ = traced(lambda: forward(True))
    assert ck_held < 0.35 * plain_held, (plain_held, ck_held)
