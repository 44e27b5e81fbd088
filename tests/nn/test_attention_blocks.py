"""A causal attention of many query rows runs in blocks of rows, each against the keys it sees
(Note [Causal blocks] in array_backend/_nn/_attention.py): the same values and gradients as the
whole attention with the causal mask given explicitly (which runs unblocked)."""

from __future__ import annotations

import pytest

import tensorplug as tp

F = tp.nn.functional


@pytest.mark.parametrize(("L", "S"), [(160, 160), (150, 100), (130, 200)])
def test_causal_blocks_match_the_explicit_mask(L: int, S: int) -> None:
    tp.manual_seed(0)
    q = tp.randn(2, 2, L, 8, dtype=tp.float64, requires_grad=True)
    k = tp.randn(1, 2, S, 8, dtype=tp.float64, requires_grad=True)  # broadcast over the batch
    v = tp.randn(2, 2, S, 4, dtype=tp.float64, requires_grad=True)
    mask = tp.ones(L, S, dtype=tp.bool).tril()
    got = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert tp.allclose(got, want, atol=1e-12)
    g = tp.randn(*got.shape, dtype=tp.float64)
    for a, b in zip(
        tp.autograd.grad(got, [q, k, v], g), tp.autograd.grad(want, [q, k, v], g), strict=True
    ):
        assert tp.allclose(a, b, atol=1e-12)
