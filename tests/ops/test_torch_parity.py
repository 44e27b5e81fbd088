"""Behaviours found by differential testing against PyTorch, pinned with hard-coded answers.

Each test names the PyTorch behaviour it keeps; the expected values are closed forms or numpy,
never PyTorch itself (it is not a test dependency). The OpInfo samples cover the ordinary
values; these are the corners where tensorplug once gave a different answer.
"""

from __future__ import annotations

import numpy as np

import tensorplug as tp


def f64(values: object, requires_grad: bool = False) -> tp.Tensor:
    return tp.tensor(values, dtype=tp.float64, requires_grad=requires_grad)


# --- nll_loss ---------------------------------------------------------------------------------


def test_nll_loss_backward_gives_ignored_targets_an_exact_zero() -> None:
    """PyTorch never writes the rows of ignored targets: +0.0, not -0.0, and not the NaN of
    0 * (g / 0) when every target is ignored and "mean" divides by a zero total weight."""
    x = f64([[-1.0, -2.0], [-0.5, -3.0], [-2.0, -0.1]])
    one = f64(1.0)
    g = tp.nll_loss_backward(one, x, tp.tensor([0, -100, 1]))
    np.testing.assert_array_equal(g.numpy(), [[-0.5, 0.0], [0.0, 0.0], [0.0, -0.5]])
    assert not np.signbit(g.numpy()[1]).any()
    g = tp.nll_loss_backward(one, x, tp.tensor([-100, -100, -100]))
    assert g.numpy().tolist() == [[0.0, 0.0]] * 3 and not np.signbit(g.numpy()).any()
    # the same through autograd: the loss is NaN (0 / 0), its gradient zero
    xg = f64(x.tolist(), requires_grad=True)
    loss = tp.nll_loss(xg, tp.tensor([-100, -100, -100]))
    assert np.isnan(loss.item())
    (grad,) = tp.autograd.grad(loss, [xg])
    assert grad.tolist() == [[0.0, 0.0]] * 3

