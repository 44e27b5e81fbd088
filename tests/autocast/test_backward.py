"""Backward through autocast: each cast is an aten::_to_copy node, so a gradient flows back in
the dtype of the forward and reaches a float32 leaf as float32."""

from __future__ import annotations

from typing import Any

import numpy as np
from needs import autocast, autograd

import tensorplug as tp

autocast()
autograd()

F = tp.nn.functional


def leaves(seed: int = 0) -> tuple[Any, Any, Any]:
    rng = np.random.default_rng(seed)
    x = tp.tensor(rng.standard_normal((4, 3)).astype(np.float32)).requires_grad_()
    w = tp.tensor(rng.standard_normal((5, 3)).astype(np.float32)).requires_grad_()
    b = tp.tensor(rng.standard_normal((5,)).astype(np.float32)).requires_grad_()
    return x, w, b


def target() -> Any:
    return tp.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5))


def test_gradients_come_back_in_the_dtype_of_the_forward() -> None:
    x, w, b = leaves()
    seen: dict[str, Any] = {}
    with tp.autocast("cpu"):
        y = F.linear(x, w, b)
        y.register_hook(lambda g: seen.update(y=g.dtype))
        loss = F.mse_loss(y, target())  # float32 policy: a cast back up
    assert (y.dtype, loss.dtype) == (tp.bfloat16, tp.float32)
    loss.backward()
    assert seen["y"] is tp.bfloat16  # the linear's output gets a bfloat16 gradient
    for leaf_ in (x, w, b):
        assert leaf_.grad is not None and leaf_.grad.dtype is tp.float32


def test_gradients_equal_the_same_graph_written_with_explicit_casts() -> None:
    x, w, b = leaves()
    with tp.autocast("cpu"):
        loss = F.mse_loss(F.linear(x, w, b), target())
        loss2 = F.mse_loss(x @ w.t(), target())  # x again: its cached cast
    (loss + loss2).backward()
    x2, w2, b2 = (t.detach().clone().requires_grad_() for t in (x, w, b))
    bf = tp.bfloat16
    xb, wb = x2.to(bf), w2.to(bf)  # leaves that require grad: one cast each, shared
    y = F.linear(xb, wb, b2.to(bf))
    ref = F.mse_loss(y.to(tp.float32), target())
    # w.t() is a view, not a leaf: it is cast by itself
    ref2 = F.mse_loss((xb @ w2.t().to(bf)).to(tp.float32), target())
    (ref + ref2).backward()
    assert loss.item() == ref.item() and loss2.item() == ref2.item()
    for got, want in ((x, x2), (w, w2), (b, b2)):
        np.testing.assert_array_equal(got.grad.numpy(), want.grad.numpy())


def test_gradients_match_a_float64_oracle_within_bfloat16_precision() -> None:
    x, w, b = leaves(1)
    with tp.autocast("cpu"):
        loss = (F.linear(x, w, b).float() ** 2).sum()
    loss.backward()
    xs, ws, bs = (t.detach().numpy().astype(np.float64) for t in (x, w, b))
    y = xs @ ws.T + bs
    gy = 2 * y
    np.testing.assert_allclose(w.grad.numpy(), gy.T @ xs, rtol=0.05, atol=0.1)
    np.testing.assert_allclose(x.grad.numpy(), gy @ ws, rtol=0.05, atol=0.1)
    np.testing.assert_allclose(b.grad.numpy(), gy.sum(0), rtol=0.05, atol=0.1)


def test_a_float16_region_and_a_promote_op() -> None:
    x, w, _ = leaves(2)
    with tp.autocast("cpu", dtype=tp.float16):
        h = x @ w.t()  # float16
        both = tp.cat([h, h.float()])  # promote: float32
    assert (h.dtype, both.dtype) == (tp.float16, tp.float32)
    both.sum().backward()
    assert x.grad.dtype is tp.float32 and w.grad.dtype is tp.float32


def test_baddbmm_and_addbmm_differentiate_through_their_parts() -> None:
    rng = np.random.default_rng(3)

    def t(*shape: int) -> Any:
        return tp.tensor(rng.standard_normal(shape)).requires_grad_()  # float64

    for op, self_shape in ((tp.baddbmm, (3, 2, 4)), (tp.addbmm, (2, 4))):
        inputs = (t(*self_shape), t(3, 2, 5), t(3, 5, 4))
        assert tp.autograd.gradcheck(
            lambda s, a, b, op=op: op(s, a, b, beta=0.5, alpha=2.0), inputs
        )
