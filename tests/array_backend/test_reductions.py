"""Reduction kernels: output dtypes, dim handling, errors, NaN and half precision."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp
from tests.array_backend.conftest import arr

aten = tp.ops.aten


def t(data, dtype=None):
    return tp.tensor(data, dtype=dtype)


def test_sum_of_ints_and_bools_is_int64():
    assert aten.sum.default(t([1, 2], tp.int8)).dtype is tp.int64
    assert aten.sum.default(t([True, True])).dtype is tp.int64
    assert int(arr(aten.sum.default(t([True, True, False])))) == 2
    assert aten.sum.default(t([1.0], tp.float16)).dtype is tp.float16
    assert aten.sum.default(t([1, 2]), dtype=tp.float64).dtype is tp.float64


@pytest.mark.parametrize("dim", [None, [], [0, 1]])
def test_sum_none_or_empty_dims_reduce_all(dim):
    x = np.arange(6.0).reshape(2, 3)
    r = aten.sum.dim_IntList(t(x), dim)
    assert r.shape == () and float(arr(r)) == 15.0


def test_sum_keepdim_and_negative_dims():
    x = np.arange(24.0).reshape(2, 3, 4)
    r = aten.sum.dim_IntList(t(x), [-1, 0], True)
    np.testing.assert_array_equal(arr(r), x.sum(axis=(2, 0), keepdims=True))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        aten.sum.dim_IntList(t(x), [0, -3])
    with pytest.raises(
        IndexError,
        match=r"^aten::sum.dim_IntList: Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)",
    ):
        aten.sum.dim_IntList(t(x), [3])


def test_half_precision_accumulates_in_float32():
    x = np.full(4096, 0.1, dtype=np.float16)
    r = aten.sum.default(t(x))
    assert r.dtype is tp.float16
    assert float(arr(r)) == float(np.float16(x.astype(np.float32).sum()))


def test_mean_requires_floating():
    with pytest.raises(
        RuntimeError,
        match=r"^aten::mean: mean\(\): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long",
    ):
        aten.mean.default(t([1, 2]))
    assert float(arr(aten.mean.default(t([1, 2]), dtype=tp.float64))) == 1.5
    np.testing.assert_allclose(arr(aten.mean.dim(t([[1.0, 2.0], [3.0, 5.0]]), [1])), [1.5, 4.0])


def test_var_correction():
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 9.0]])
    np.testing.assert_allclose(arr(aten.var.correction(t(x))), x.var(ddof=1))
    np.testing.assert_allclose(arr(aten.var.correction(t(x), [1], correction=0)), x.var(axis=1))
    np.testing.assert_allclose(
        arr(aten.var.correction(t(x), [0], keepdim=True)), x.var(axis=0, ddof=1, keepdims=True)
    )
    c = aten.var.correction(t([1 + 1j, 2 - 1j]))
    assert c.dtype is tp.float32
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        aten.var.correction(t([1, 2]))


def test_prod():
    assert aten.prod.default(t([2, 3], tp.int32)).dtype is tp.int64
    np.testing.assert_array_equal(arr(aten.prod.dim_int(t([[1, 2], [3, 4]]), 1)), [2, 12])


def test_amax_amin_and_max_all():
    x = np.array([[1.0, 5.0], [math.nan, 2.0]])
    assert math.isnan(float(arr(aten.amax.default(t(x)))))
    np.testing.assert_array_equal(arr(aten.amin.default(t([[1, 5], [0, 2]]), [1])), [1, 0])
    assert float(arr(aten.max.default(t([1.0, 7.0])))) == 7.0
    with pytest.raises(
        RuntimeError,
        match=r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0",
    ):
        aten.max.default(tp.zeros([0]))
    with pytest.raises(
        IndexError, match=r"amax\(\): Expected reduction dim 0 to have non-zero size"
    ):
        aten.amax.default(tp.zeros([0, 2]), [0])


def test_max_dim_returns_values_and_int64_indices():
    x = np.array([[1.0, 9.0, 3.0], [7.0, 2.0, 7.0]])
    values, indices = aten.max.dim(t(x), 1)
    np.testing.assert_array_equal(arr(values), [9.0, 7.0])
    np.testing.assert_array_equal(arr(indices), [1, 0])
    assert indices.dtype is tp.int64
    v, i = aten.min.dim(t(x), 0, True)
    assert v.shape == (1, 3) and i.shape == (1, 3)
    v0, i0 = aten.max.dim(t(3.0), 0)
    assert v0.shape == () and int(arr(i0)) == 0


def test_argmax_argmin():
    x = np.array([[1, 9, 3], [7, 2, 8]])
    assert int(arr(aten.argmax.default(t(x)))) == 1
    np.testing.assert_array_equal(arr(aten.argmin.default(t(x), 1)), [0, 1])
    assert aten.argmax.default(t(x), None, True).shape == (1, 1)


def test_logsumexp_is_stable():
    x = np.array([[1000.0, 1000.0], [-math.inf, 0.0]])
    r = arr(aten.logsumexp.default(t(x, tp.float64), [1]))
    np.testing.assert_allclose(r, [1000.0 + math.log(2.0), 0.0])
    assert aten.logsumexp.default(t([1, 2]), [0]).dtype is tp.float32


def test_softmax_and_log_softmax():
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, 1000.0]])
    s = arr(aten.softmax.int(t(x, tp.float64), 1))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(s, e / e.sum(axis=1, keepdims=True))
    ls = arr(aten.log_softmax.int(t(x, tp.float64), -1))
    np.testing.assert_allclose(ls, np.log(e / e.sum(axis=1, keepdims=True)))
    assert aten.softmax.int(t([1.0, 2.0], tp.float16), 0).dtype is tp.float16
    assert aten.softmax.int(t([1, 2]), 0, tp.float64).dtype is tp.float64
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        aten.softmax.int(t([1, 2]), 0)
