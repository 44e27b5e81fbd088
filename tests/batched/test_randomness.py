"""Random operators inside vmap under randomness="error", "different" and "same" (PyTorch's
modes and messages), nested levels with different modes."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp

pytest.importorskip("tensorplug_batched")
if "batched" not in tp.plugins.loaded_names():
    pytest.skip("needs the tensorplug-batched plugin loaded", allow_module_level=True)

B = 6
P = tp.tensor([[0.2, 0.3, 0.5]] * B)

# (name, function of one sample of X (shape [3]) or P's row)
RANDOM = [
    ("rand", lambda a: a + tp.rand(3)),
    ("randn", lambda a: a + tp.randn(3)),
    ("randint", lambda a: a + tp.randint(0, 1000, [3])),
    ("normal.float_float", lambda a: a + tp.normal(0.0, 1.0, [3])),
    ("randperm", lambda a: a + tp.randperm(3)),
    ("rand_like", lambda a: tp.rand_like(a)),
    ("randn_like", lambda a: tp.randn_like(a)),
    ("bernoulli", lambda a: tp.bernoulli(a * 0 + 0.5)),
    ("bernoulli.p", lambda a: tp.bernoulli(a, 0.5)),
    ("normal.Tensor_float", lambda a: tp.normal(a, 1.0)),
    ("normal.float_Tensor", lambda a: tp.normal(0.0, a + 1)),
    ("normal.Tensor_Tensor", lambda a: tp.normal(a, a + 1)),
    ("multinomial", lambda a: tp.multinomial(a.abs() + 0.1, 2)),
    ("multinomial_replacement", lambda a: tp.multinomial(a.abs() + 0.1, 5, replacement=True)),
    ("uniform_", lambda a: a.clone().uniform_()),
    ("normal_", lambda a: a.clone().normal_()),
    ("exponential_", lambda a: a.clone().exponential_()),
    ("bernoulli_", lambda a: a.clone().bernoulli_(0.5)),
    ("random_", lambda a: a.clone().random_(0, 1000)),
    ("dropout", lambda a: tp.nn.functional.dropout(a + 1, 0.5)),
]


DISCRETE = {"randperm", "bernoulli", "bernoulli.p", "bernoulli_", "multinomial", "dropout"}


def rows(t):
    return {tuple(r) for r in np.asarray(t.tolist()).reshape(t.shape[0], -1).tolist()}


@pytest.fixture
def X():
    tp.manual_seed(3)
    return tp.rand(B, 3)


@pytest.mark.parametrize(("name", "f"), RANDOM, ids=[n for n, _ in RANDOM])
def test_error_mode_refuses_random_ops(name, f, X):
    with pytest.raises(RuntimeError) as e:
        tp.vmap(f)(X)
    assert str(e.value).startswith(
        "vmap: called random operation while in randomness error mode. Please either use the "
        "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
        "of vmap (aten::"
    )


@pytest.mark.parametrize(("name", "f"), RANDOM, ids=[n for n, _ in RANDOM])
def test_different_draws_per_sample(name, f, X):
    x = X * 0 if name in ("rand", "randn", "randint", "normal.float_float", "randperm") else X
    out = tp.vmap(f, randomness="different")(x)
    assert out.shape[0] == B
    if name in DISCRETE:  # few possible draws: check they are not all one
        assert len(rows(out)) > 1
    else:
        assert len(rows(out)) == B


@pytest.mark.parametrize(("name", "f"), RANDOM, ids=[n for n, _ in RANDOM])
def test_same_shares_the_draw(name, f, X):
    # with equal inputs, every sample gets the same result
    x = X[:1].expand(B, 3).clone()
    out = tp.vmap(f, randomness="same")(x)
    assert out.shape[0] == B and len(rows(out)) == 1


def test_same_with_batched_parameters_shares_the_noise():
    tp.manual_seed(0)
    means = tp.arange(float(B)).unsqueeze(1).expand(B, 3)
    out = tp.vmap(lambda m: tp.normal(m, 1.0), randomness="same")(means)
    noise = (out - means).numpy()
    np.testing.assert_allclose(noise, np.broadcast_to(noise[0], noise.shape), atol=1e-6)
    # bernoulli(p) with one uniform draw u: samples are 1 exactly where u < p
    p = tp.tensor([[0.0] * 4, [1.0] * 4, [0.25] * 4, [0.5] * 4, [0.75] * 4, [0.9] * 4])
    bits = tp.vmap(tp.bernoulli, randomness="same")(p).numpy()
    assert bits[0].sum() == 0 and bits[1].sum() == 4
    assert (bits[2] <= bits[3]).all() and (bits[3] <= bits[4]).all() and (bits[4] <= bits[5]).all()
    # multinomial: a category of probability 0 is never drawn
    probs = tp.tensor([[0.0, 0.5, 0.5], [0.5, 0.0, 0.5]])
    draws = tp.vmap(lambda q: tp.multinomial(q, 2), randomness="same")(probs).numpy()
    assert 0 not in draws[0] and 1 not in draws[1]


def test_multinomial_same_follows_the_distribution():
    tp.manual_seed(1)
    probs = tp.tensor([0.1, 0.2, 0.7])
    draws = tp.vmap(lambda q: tp.multinomial(q, 4000, replacement=True), randomness="same")(
        probs.expand(2, 3)
    )[0].numpy()
    freq = np.bincount(draws, minlength=3) / 4000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.03)


def test_nested_levels_each_apply_their_mode():
    z = tp.zeros(4, 5)
    out = tp.vmap(tp.vmap(lambda a: a + tp.rand([]), randomness="same"), randomness="different")(z)
    a = out.numpy()
    assert (a == a[:, :1]).all() and len(set(a[:, 0])) == 4
    out = tp.vmap(tp.vmap(lambda a: a + tp.rand([]), randomness="different"), randomness="same")(z)
    a = out.numpy()
    assert (a == a[:1]).all() and len(set(a[0])) == 5
    with pytest.raises(RuntimeError, match="randomness error mode"):
        tp.vmap(tp.vmap(lambda a: a + tp.rand([]), randomness="same"))(z)


def test_inplace_randomness_on_an_unbatched_tensor():
    with pytest.raises(RuntimeError) as e:
        tp.vmap(lambda a: tp.zeros(3).uniform_() + a, randomness="different")(tp.zeros(4, 3))
    assert str(e.value) == (
        "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will "
        "appear like same randomness. If this is necessary for your usage, please file an issue "
        "with functorch. (aten::uniform_.default)"
    )
    out = tp.vmap(lambda a: tp.zeros(3).uniform_() + a, randomness="same")(tp.zeros(4, 3))
    assert len(rows(out)) == 1


def test_generator_argument_is_used():
    g1 = tp.Generator().manual_seed(7)
    g2 = tp.Generator().manual_seed(7)
    a = tp.vmap(lambda r: r + tp.rand(3, generator=g1), randomness="different")(tp.zeros(4, 3))
    b = tp.vmap(lambda r: r + tp.rand(3, generator=g2), randomness="different")(tp.zeros(4, 3))
    assert a.tolist() == b.tolist()
