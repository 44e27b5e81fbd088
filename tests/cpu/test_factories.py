"""Factory kernels: default dtypes, overflow and size checks, and random reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import random as tprandom
from tests.cpu.conftest import arr

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
