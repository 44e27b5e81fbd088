"""The engine's fused backward steps (tensorplug_autograd/fused_steps.py).

Note [Fused backward steps]: ``x @ w.T + b`` keeps its three nodes, and the engine may run
them as one ``linear_backward`` call. Each test runs the same graph twice, with the step and
with it switched off for the ``add`` node's class (the nodes one by one, the oracle), and
checks the gradients bit for bit, their layouts, that the step ran (or did not, where
something could tell it apart), and against finite differences (gradcheck, float64).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()

from tensorplug_autograd import fused_steps  # noqa: E402


def leaf(*shape: int, seed: int = 0, dtype: Any = np.float32) -> tp.Tensor:
    rng = np.random.default_rng(seed + 7 * len(shape))
    return tp.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)


def data(*shape: int, seed: int = 5) -> tp.Tensor:
    return tp.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _add_class() -> type:
    a, b = leaf(2, seed=1), leaf(2, seed=2)
    return type((a + b).grad_fn)


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Counts the fused steps taken; ``steps.off()`` switches the step off (the oracle)."""

    class Steps:
        taken = 0

        def off(self) -> None:
            monkeypatch.setattr(_add_class(), "_fuse", None)

    s = Steps()

    def counting(*args: Any) -> Any:
        r = fused_steps.add_step(*args)
        s.taken += r is not None
        return r

    monkeypatch.setattr(_add_class(), "_fuse", counting)
    return s


def _grads(
    build: Callable[[], tuple[Any, list[tp.Tensor]]], how: str
) -> tuple[list[np.ndarray], list[bool]]:
    """The gradients of ``sum(out**2)`` for ``build()``'s parameters, and whether each is
    row-major."""
    out, params = build()
    loss = (out * out).sum()
    if how == "backward":
        loss.backward()
        got = [p.grad for p in params]
    else:
        got = list(tp.autograd.grad(loss, params))
    for g, p in zip(got, params, strict=True):
        assert g.shape == p.shape
    return [g.numpy().copy() for g in got], [g.numpy().flags.c_contiguous for g in got]


def _mlp(transpose: str, bias_first: bool = False) -> Callable[[], Any]:
    def build() -> Any:
        w1, b1, w2, b2 = leaf(16, 12, seed=1), leaf(16, seed=2), leaf(3, 16, seed=3), leaf(3)
        x = data(8, 12)

        def wT(w: tp.Tensor) -> tp.Tensor:
            return {
                "T": w.T,
                "t": w.t(),
                "transpose": w.transpose(0, 1),
                "permute": w.permute(1, 0),
            }[transpose]

        def layer(h: tp.Tensor, w: tp.Tensor, b: tp.Tensor) -> tp.Tensor:
            prod = h @ wT(w) if transpose != "t" else tp.mm(h, wT(w))
            return b + prod if bias_first else prod + b

        return layer(tp.relu(layer(x, w1, b1)), w2, b2), [w1, b1, w2, b2]

    return build


@pytest.mark.parametrize("how", ["backward", "grad"])
@pytest.mark.parametrize(
    ("transpose", "bias_first"),
    [("T", False), ("T", True), ("t", False), ("transpose", False), ("permute", True)],
)
def test_the_step_gives_the_nodes_gradients_bit_for_bit(steps, how, transpose, bias_first) -> None:
    build = _mlp(transpose, bias_first)
    fused, fused_layout = _grads(build, how)
    assert steps.taken == 2  # one per layer
    steps.off()
    plain, plain_layout = _grads(build, how)
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_array_equal(a, b)
    assert fused_layout == plain_layout


def test_a_right_operand_that_is_no_transpose(steps) -> None:
    """``x @ W + b`` with ``W`` (in, out): the step still runs, the weight's gradient in the
    formula's layout (row-major, like ``W``); the input requires grad too."""

    def build() -> Any:
        x, w, b = leaf(6, 4, seed=1), leaf(4, 5, seed=2), leaf(5, seed=3)
        return (x @ w + b).sin(), [x, w, b]

    fused, layout = _grads(build, "backward")
    assert steps.taken == 1
    steps.off()
    plain, plain_layout = _grads(build, "backward")
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_array_equal(a, b)
    assert layout == plain_layout == [True, True, True]


@pytest.mark.parametrize("bias_shape", [(5,), (1, 5), (6, 5), (1,), ()])
def test_biases_of_every_broadcast(steps, bias_shape) -> None:
    def build() -> Any:
        x, w = leaf(6, 4, seed=1), leaf(5, 4, seed=2)
        b = leaf(*bias_shape, seed=3)
        return (x @ w.T + b).tanh(), [x, w, b]

    fused, _ = _grads(build, "backward")
    assert steps.taken == 1
    steps.off()
    plain, _ = _grads(build, "backward")
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_finite_differences(steps) -> None:
    x, w = leaf(5, 3, dtype=np.float64), leaf(4, 3, seed=1, dtype=np.float64)
    b = leaf(4, seed=2, dtype=np.float64)
    assert tp.autograd.gradcheck(lambda x, w, b: (x @ w.T + b).sin(), [x, w, b])
    assert steps.taken > 0


def test_no_bias_gradient_and_no_input_gradient(steps) -> None:
    x, w = data(6, 4), leaf(5, 4, seed=2)
    b = tp.tensor(np.ones(5, np.float32))
    (x @ w.T + b).sum().backward()
    assert steps.taken == 1
    np.testing.assert_allclose(w.grad.numpy(), np.ones((6, 5), np.float32).T @ x.numpy(), rtol=1e-5)


def test_hooks_and_retain_grad_keep_the_nodes(steps) -> None:
    """A hook or ``retain_grad`` on the product, a hook on ``w.T`` or on the bias: what they
    see is the nodes' own, so the nodes run (or the step leaves the hooked one out)."""
    x, w, b = data(6, 4), leaf(5, 4, seed=2), leaf(5, seed=3)
    seen: list[Any] = []
    h = x @ w.T
    h.retain_grad()
    (h + b).sum().backward()
    assert steps.taken == 0
    np.testing.assert_array_equal(h.grad.numpy(), np.ones((6, 5), np.float32))

    w.grad = b.grad = None
    wt = w.T
    wt.register_hook(lambda g: seen.append(g.shape))
    (x @ wt + b).sum().backward()
    assert seen == [(4, 5)]
    assert steps.taken == 1  # the product folded, the hooked transpose ran as a node
    np.testing.assert_allclose(w.grad.numpy(), np.ones((5, 6), np.float32) @ x.numpy(), rtol=1e-5)

    steps.taken = 0
    handle = b.register_hook(lambda g: seen.append("b") or g * 2)
    (x @ w.T + b).sum().backward()
    handle.remove()
    assert steps.taken == 0 and seen[-1] == "b"
    np.testing.assert_array_equal(b.grad.numpy(), np.full(5, 6 + 12, np.float32))

    steps.taken = 0
    node_seen: list[Any] = []
    y = x @ w.T + b
    y.grad_fn.next_functions[0][0].register_hook(lambda gi, go: node_seen.append(len(gi)))
    y.sum().backward()
    assert node_seen == [2] and steps.taken == 0


def test_grad_fn_names_are_the_recorded_nodes(steps) -> None:
    x, w, b = data(6, 4), leaf(5, 4, seed=2), leaf(5, seed=3)
    y = x @ w.T + b
    add = y.grad_fn
    prod = add.next_functions[0][0]
    assert add.name() == "AddBackward0"
    assert prod.name() == "MatmulBackward0"
    assert prod.next_functions[1][0].name() == "PermuteBackward0"


def test_in_place_after_use_raises_as_the_nodes_do(steps) -> None:
    errors = []
    for fuse in (True, False):
        if not fuse:
            steps.off()
        x, w, b = data(6, 4), leaf(5, 4, seed=2), leaf(5, seed=3)
        y = x @ w.T + b
        with tp.no_grad():
            w.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
            y.sum().backward()
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert steps.taken == 0


def test_a_second_backward_raises_and_retain_graph_keeps_the_step(steps) -> None:
    x, w, b = data(6, 4), leaf(5, 4, seed=2), leaf(5, seed=3)
    y = (x @ w.T + b).sum()
    y.backward(retain_graph=True)
    once = w.grad.numpy().copy()
    y.backward(retain_graph=True)
    assert steps.taken == 2
    np.testing.assert_allclose(w.grad.numpy(), 2 * once, rtol=1e-6)
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_double_backward_takes_the_nodes(steps) -> None:
    x, w = leaf(6, 4, seed=1, dtype=np.float64), leaf(5, 4, seed=2, dtype=np.float64)
    b = leaf(5, seed=3, dtype=np.float64)
    assert tp.autograd.gradgradcheck(lambda x, w, b: (x @ w.T + b).sin(), [x, w, b])
    steps.taken = 0
    y = ((x @ w.T + b) ** 2).sum()
    (gw,) = tp.autograd.grad(y, [w], create_graph=True)
    assert steps.taken == 0  # the first backward records: the nodes run
    (ggx,) = tp.autograd.grad(gw.sum(), [x])  # against the nodes one by one
    steps.off()
    y2 = ((x @ w.T + b) ** 2).sum()
    (gw2,) = tp.autograd.grad(y2, [w], create_graph=True)
    (ggx2,) = tp.autograd.grad(gw2.sum(), [x])
    np.testing.assert_array_equal(ggx.numpy(), ggx2.numpy())


def test_a_product_used_twice_or_given_as_a_root_runs_as_a_node(steps) -> None:
    x, w, b = data(6, 4), leaf(5, 4, seed=2), leaf(5, seed=3)
    h = x @ w.T
    ((h + b).sum() + h.sum()).backward()
    assert steps.taken == 0
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.ones((5, 6)) @ x.numpy(), rtol=1e-5)
    w.grad = None
    h = x @ w.T
    tp.autograd.backward([(h + b).sum(), h], [None, tp.ones_like(h)])
    assert steps.taken == 0
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.ones((5, 6)) @ x.numpy(), rtol=1e-5)


def test_autograd_grad_of_the_product_or_the_transpose(steps) -> None:
    """A target inside the chain: the node runs, so its gradient is captured."""
    x, w, b = data(6, 4), leaf(5, 4, seed=2), leaf(5, seed=3)
    wt = w.T
    h = x @ wt
    gh, gwt = tp.autograd.grad((h + b).sum(), [h, wt])
    assert steps.taken == 0
    np.testing.assert_array_equal(gh.numpy(), np.ones((6, 5), np.float32))
    np.testing.assert_allclose(gwt.numpy(), x.numpy().T @ np.ones((6, 5)), rtol=1e-5)
