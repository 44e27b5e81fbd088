"""Indexing kernels: advanced indexing, index_put_ with accumulate, gather, scatter_add."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tests.array_backend.conftest import arr

aten = tp.ops.aten


def x34():
    return tp.tensor(np.arange(12.0).reshape(3, 4))


def test_index_with_none_masks_and_ints():
    x = x34()
    n = arr(x)
    r = aten.index.Tensor(x, [None, tp.tensor([3, 0])])
    np.testing.assert_array_equal(arr(r), n[:, [3, 0]])
    m = tp.tensor([True, False, True])
    np.testing.assert_array_equal(arr(aten.index.Tensor(x, [m])), n[[True, False, True]])
    r2 = aten.index.Tensor(x, [tp.tensor([0, 2]), tp.tensor([1, 3])])
    np.testing.assert_array_equal(arr(r2), n[[0, 2], [1, 3]])
    full = aten.index.Tensor(x, [None])
    assert not np.shares_memory(arr(full), n)


def test_index_errors():
    with pytest.raises(
        IndexError,
        match=r"^aten::index.Tensor: index 5 is out of bounds for dimension 0 with size 3",
    ):
        aten.index.Tensor(x34(), [tp.tensor([5])])
    with pytest.raises(
        IndexError, match="tensors used as indices must be long, int, byte or bool tensors"
    ):
        aten.index.Tensor(x34(), [tp.tensor([1.0])])
    with pytest.raises(IndexError, match=r"The shape of the mask \[2\] at index 0 does not match"):
        aten.index.Tensor(x34(), [tp.tensor([True, False])])
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        aten.index.Tensor(x34(), [None, None, tp.tensor([0])])


def test_index_put_and_accumulate():
    x = tp.zeros([5])
    idx = tp.tensor([1, 1, 3])
    aten.index_put_.default(x, [idx], tp.tensor([1.0, 2.0, 3.0]), True)
    np.testing.assert_array_equal(arr(x), [0, 3, 0, 3, 0])
    aten.index_put_.default(x, [tp.tensor([True, False, False, False, True])], tp.tensor(7.0))
    np.testing.assert_array_equal(arr(x), [7, 3, 0, 3, 7])
    with pytest.raises(
        RuntimeError,
        match="Index put requires the source and destination dtypes match, got Float for the destination and Double for the source.",
    ):
        aten.index_put_.default(x, [idx], tp.tensor([1.0, 1.0, 1.0], dtype=tp.float64))


def test_index_put_accumulate_bfloat16():
    x = tp.zeros([3], dtype=tp.bfloat16)
    aten.index_put_.default(x, [tp.tensor([0, 0])], tp.tensor([1.5, 1.5], dtype=tp.bfloat16), True)
    assert x.dtype is tp.bfloat16 and float(arr(x)[0]) == 3.0


def test_gather():
    x = x34()
    i = tp.tensor([[0, 3], [1, 1]])
    r = aten.gather.default(x, 1, i)
    np.testing.assert_array_equal(arr(r), [[0.0, 3.0], [5.0, 5.0]])
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
        aten.gather.default(x, 1, tp.tensor([[4]]))
    # int32 indices are taken as PyTorch 2.13 takes them; other integer dtypes are not
    np.testing.assert_array_equal(arr(aten.gather.default(x, 1, i.int())), arr(r))
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        aten.gather.default(x, 1, tp.tensor([[0]], dtype=tp.int16))


def test_scatter_add():
    x = tp.zeros([2, 3])
    i = tp.tensor([[0, 1, 0], [2, 2, 2]])
    src = tp.ones([2, 3])
    r = aten.scatter_add.default(x, 1, i, src)
    np.testing.assert_array_equal(arr(r), [[2, 1, 0], [0, 0, 3]])
    np.testing.assert_array_equal(arr(x), np.zeros((2, 3)))  # out of place
