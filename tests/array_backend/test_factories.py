"""Factory kernels: default dtypes, overflow and size checks, and random reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import random as tprandom
from tests.array_backend.conftest import arr

aten = tp.ops.aten


def test_default_dtypes():
    assert aten.zeros.default([2]).dtype is tp.float32
    assert aten.full.default([2], 3).dtype is tp.int64
    assert aten.full.default([2], True).dtype is tp.bool
    assert aten.full.default([2], 1.5).dtype is tp.float32
    assert aten.full.default([2], 1j).dtype is tp.complex64
    assert aten.arange.default(5).dtype is tp.int64
    assert aten.arange.start_step(0, 1, 0.25).dtype is tp.float32
    assert aten.randint.default(5, [3]).dtype is tp.int64


def test_default_dtype_follows_set_default_dtype():
    tp.set_default_dtype(tp.float64)
    try:
        assert aten.ones.default([1]).dtype is tp.float64
        assert tp.tensor([1.5]).dtype is tp.float64
    finally:
        tp.set_default_dtype(tp.float32)


def test_full_overflow_and_negative_sizes():
    with pytest.raises(
        RuntimeError, match=r"^aten::full: value cannot be converted to type uint8 without overflow"
    ):
        aten.full.default([2], 300, dtype=tp.uint8)
    with pytest.raises(
        RuntimeError, match=r"Trying to create tensor with negative dimension -1: \[-1, 2\]"
    ):
        aten.zeros.default([-1, 2])
    with pytest.raises(
        RuntimeError, match="value cannot be converted to type int8 without overflow"
    ):
        aten.fill_.Scalar(tp.zeros([1], dtype=tp.int8), 1000)


def test_arange_and_linspace():
    np.testing.assert_array_equal(arr(aten.arange.start_step(1, 10, 3)), [1, 4, 7])
    np.testing.assert_allclose(
        arr(aten.arange.start_step(0, 1, 0.1)), np.arange(0, 1, 0.1), rtol=1e-6
    )
    assert aten.arange.start_step(10, 0, -3).shape == (4,)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        aten.arange.start_step(0, 1, 0)
    with pytest.raises(
        RuntimeError, match="upper bound and larger bound inconsistent with step sign"
    ):
        aten.arange.start_step(0, 5, -1)
    ls = arr(aten.linspace.default(0, 1, 5, dtype=tp.float64))
    np.testing.assert_array_equal(ls, [0, 0.25, 0.5, 0.75, 1.0])
    assert aten.linspace.default(0, 1, 0).shape == (0,)


def test_eye():
    np.testing.assert_array_equal(arr(aten.eye.m(2, 3, dtype=tp.int32)), np.eye(2, 3))
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        aten.eye.default(-1)


def test_bfloat16_factories_store_bfloat16():
    import ml_dtypes

    x = aten.full.default([2], 1.1, dtype=tp.bfloat16)
    assert x.dtype is tp.bfloat16 and arr(x).dtype == ml_dtypes.bfloat16
    assert float(arr(x)[0]) == float(np.float32(1.1).astype(ml_dtypes.bfloat16))


def test_manual_seed_reproducible():
    tp.manual_seed(123)
    a = arr(aten.rand.default([4]))
    b = arr(aten.randn.default([4]))
    tp.manual_seed(123)
    np.testing.assert_array_equal(arr(aten.rand.default([4])), a)
    np.testing.assert_array_equal(arr(aten.randn.default([4])), b)
    assert aten.rand.default([2]).dtype is tp.float32


def test_generator_streams_are_independent():
    g1 = tprandom.Generator().manual_seed(7)
    g2 = tprandom.Generator().manual_seed(7)
    tp.manual_seed(0)
    x = arr(aten.randint.low(0, 100, [8], generator=g1))
    aten.rand.default([3])  # the default generator does not disturb g2
    y = arr(aten.randint.low(0, 100, [8], generator=g2))
    np.testing.assert_array_equal(x, y)
    assert g1.initial_seed() == 7
    assert ((x >= 0) & (x < 100)).all()


def test_random_dtype_checks():
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        aten.rand.default([2], dtype=tp.int64)
    with pytest.raises(
        RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=5"
    ):
        aten.randint.low(5, 5, [1])
    h = aten.randn.default([3], dtype=tp.float16)
    assert h.dtype is tp.float16
    c = aten.randn.default([1000], dtype=tp.complex64)
    assert c.dtype is tp.complex64 and 0.7 < float(np.var(arr(c))) < 1.3


def test_default_generator_per_device_type_and_seed():
    g = tprandom.default_generator("cpu")
    assert tprandom.manual_seed(5) is g and g.initial_seed() == 5
    s = g.seed()
    assert g.initial_seed() == s


# --- randperm, normal, bernoulli, multinomial and the in-place random fills ----------------------

# Each op with a generator=: (name, call(generator) -> Tensor)
_GENERATOR_CALLS = [
    ("randperm", lambda g: tp.randperm(50, generator=g)),
    ("normal.float_float", lambda g: tp.normal(1.0, 2.0, [50], generator=g)),
    ("normal.Tensor_float", lambda g: tp.normal(tp.zeros(50), 2.0, generator=g)),
    ("normal.float_Tensor", lambda g: tp.normal(0.0, tp.ones(50), generator=g)),
    ("normal.Tensor_Tensor", lambda g: tp.normal(tp.zeros(50), tp.ones(50), generator=g)),
    ("bernoulli", lambda g: tp.bernoulli(tp.full([50], 0.5), generator=g)),
    ("bernoulli.p", lambda g: tp.zeros(50).bernoulli(0.5, generator=g)),
    ("multinomial", lambda g: tp.multinomial(tp.ones(50), 20, generator=g)),
    ("multinomial_replacement", lambda g: tp.ones(5).multinomial(50, True, generator=g)),
    ("bernoulli_", lambda g: tp.zeros(50).bernoulli_(0.5, generator=g)),
    ("uniform_", lambda g: tp.zeros(50).uniform_(-1.0, 1.0, generator=g)),
    ("normal_", lambda g: tp.zeros(50).normal_(generator=g)),
    ("exponential_", lambda g: tp.zeros(50).exponential_(generator=g)),
    ("random_", lambda g: tp.zeros(50, dtype=tp.int64).random_(generator=g)),
    ("random_.to", lambda g: tp.zeros(50).random_(1000, generator=g)),
    ("random_.from", lambda g: tp.zeros(50, dtype=tp.int8).random_(-100, None, generator=g)),
]


@pytest.mark.parametrize(("name", "call"), _GENERATOR_CALLS, ids=[c[0] for c in _GENERATOR_CALLS])
def test_random_ops_follow_their_generator(name, call):
    """The same seed gives the same draw, whatever the default generator did in between; the
    stream moves on between draws."""
    g1, g2 = tprandom.Generator().manual_seed(11), tprandom.Generator().manual_seed(11)
    first = arr(call(g1))
    tp.manual_seed(0)
    aten.rand.default([7])
    np.testing.assert_array_equal(arr(call(g2)), first)
    assert not np.array_equal(arr(call(g1)), first)


def test_randperm_positions_are_uniform():
    """Over 4000 permutations of 5, each value lands in each position a fifth of the time."""
    g = tprandom.Generator().manual_seed(3)
    counts = np.zeros((5, 5))
    for _ in range(4000):
        p = arr(tp.randperm(5, generator=g))
        counts[p, np.arange(5)] += 1
    np.testing.assert_allclose(counts / 4000, 0.2, atol=0.03)
    assert tp.randperm(4).dtype is tp.int64 and tp.randperm(0).shape == (0,)


def test_multinomial_without_replacement_draws_in_proportion():
    """The first draw without replacement is distributed as p; the second, given the first,
    as p renormalized over the rest (p = [0.5, 0.3, 0.2]: second is 0 with probability
    0.3 * 0.5/0.7 + 0.2 * 0.5/0.8 = 0.339)."""
    g = tprandom.Generator().manual_seed(5)
    p = tp.tensor([0.5, 0.3, 0.2], dtype=tp.float64)
    draws = arr(tp.multinomial(p.expand(20000, 3), 2, generator=g))
    first = np.bincount(draws[:, 0], minlength=3) / len(draws)
    np.testing.assert_allclose(first, [0.5, 0.3, 0.2], atol=0.015)
    assert abs(np.mean(draws[:, 1] == 0) - (0.3 * 0.5 / 0.7 + 0.2 * 0.5 / 0.8)) < 0.015
    assert np.all(draws[:, 0] != draws[:, 1])


def test_multinomial_zero_weights_come_last_without_replacement():
    """PyTorch fills with zero-weight categories once the others are used up."""
    out = arr(tp.multinomial(tp.tensor([0.0, 2.0, 0.0, 1.0]), 4))
    assert sorted(out[:2]) == [1, 3] and sorted(out[2:]) == [0, 2]
    assert tp.multinomial(tp.ones(0, 3), 2).shape == (0, 2)


def test_normal_tensor_moments_per_element():
    """Each element has its own mean and std: the draws of column j have mean j, std j + 1."""
    g = tprandom.Generator().manual_seed(9)
    mean = tp.arange(4, dtype=tp.float64)
    std = mean + 1
    x = arr(tp.normal(mean.expand(5000, 4), std, generator=g))
    np.testing.assert_allclose(x.mean(0), [0, 1, 2, 3], atol=0.15)
    np.testing.assert_allclose(x.std(0), [1, 2, 3, 4], rtol=0.05)
    assert tp.normal(mean, tp.ones(4)).dtype is tp.float64  # mean's dtype
    assert tp.normal(tp.zeros(3), tp.ones(3, dtype=tp.float64)).dtype is tp.float32
    assert tp.normal(0.0, 1.0, [2, 3]).shape == (2, 3)


def test_in_place_fills_keep_dtype_and_write_through_views():
    base = tp.zeros(4, 6, dtype=tp.float64)
    col = base[:, 1]
    col.uniform_(5.0, 6.0)
    b = arr(base)
    assert np.all((b[:, 1] >= 5) & (b[:, 1] < 6)) and np.all(np.delete(b, 1, axis=1) == 0)
    ints = tp.zeros(1000, dtype=tp.int64).bernoulli_(0.25)
    assert ints.dtype is tp.int64 and abs(arr(ints).mean() - 0.25) < 0.05
    h = tp.zeros(1000, dtype=tp.float16).exponential_(2.0)
    assert h.dtype is tp.float16 and abs(float(arr(h).astype(np.float64).mean()) - 0.5) < 0.06


def test_nn_init_uses_the_in_place_random_fills():
    w = tp.empty(200, 50)
    tp.nn.init.uniform_(w, -2.0, 2.0, generator=tprandom.Generator().manual_seed(1))
    expect = tp.empty(200, 50).uniform_(-2.0, 2.0, generator=tprandom.Generator().manual_seed(1))
    np.testing.assert_array_equal(arr(w), arr(expect))
    tp.nn.init.normal_(w, 3.0, 0.5)
    assert abs(arr(w).mean() - 3.0) < 0.05 and abs(arr(w).std() - 0.5) < 0.05


def test_random_warns_beyond_the_exact_integers_of_a_float():
    """PyTorch's warning: float32 holds every integer only up to 2^24."""
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
        tp.zeros(3).random_(0, 2**25)
