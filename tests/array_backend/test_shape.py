"""View kernels share memory and the version counter; shape errors use PyTorch's wording."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tests.array_backend.conftest import arr

aten = tp.ops.aten


def base():
    return tp.tensor(np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize(
    "make",
    [
        lambda x: aten.view.default(x, [3, 2]),
        lambda x: aten.reshape.default(x, [-1]),
        lambda x: aten.transpose.int(x, 0, 1),
        lambda x: aten.permute.default(x, [1, 0]),
        lambda x: aten.unsqueeze.default(x, 0),
        lambda x: aten.squeeze.default(aten.unsqueeze.default(x, 1)),
        lambda x: aten.select.int(x, 1, 2),
        lambda x: aten.slice.Tensor(x, 1, 0, 3, 2),
        lambda x: aten.split.Tensor(x, 1)[1],
        lambda x: aten.split_with_sizes.default(x, [1, 2], 1)[1],
        lambda x: aten.detach.default(x),
    ],
)
def test_views_share_memory_and_version(make):
    x = base()
    v = make(x)
    assert np.shares_memory(arr(v), arr(x))
    assert v._tp_version is x._tp_version
    before = x._version
    aten.fill_.Scalar(v, 42.0)  # written through the view
    assert x._version == before + 1
    assert (arr(x) == 42.0).sum() == arr(v).size


def test_reshape_copies_when_it_must():
    x = aten.transpose.int(base(), 0, 1)
    r = aten.reshape.default(x, [6])
    assert not np.shares_memory(arr(r), arr(x))
    np.testing.assert_array_equal(arr(r), arr(x).reshape(6))
    with pytest.raises(
        RuntimeError, match="view size is not compatible with input tensor's size and stride"
    ):
        aten.view.default(x, [6])


def test_view_size_errors():
    with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
        aten.view.default(base(), [4, 2])
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        aten.reshape.default(base(), [-1, -1])


def test_dim_errors():
    with pytest.raises(
        IndexError,
        match=r"^aten::transpose.int: Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
    ):
        aten.transpose.int(base(), 0, 2)
    with pytest.raises(
        IndexError,
        match=r"select\(\): index 5 out of range for tensor of size \[2, 3\] at dimension 1",
    ):
        aten.select.int(base(), 1, 5)
    with pytest.raises(RuntimeError, match="duplicate dims"):
        aten.permute.default(base(), [0, 0])
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        aten.slice.Tensor(base(), 0, None, None, 0)


def test_expand_is_a_readonly_broadcast_view():
    x = tp.tensor([[1.0], [2.0]])
    e = aten.expand.default(x, [3, 2, 4])
    assert e.shape == (3, 2, 4) and np.shares_memory(arr(e), arr(x))
    assert aten.expand.default(x, [-1, 5]).shape == (2, 5)
    with pytest.raises(
        RuntimeError,
        match=r"The expanded size of the tensor \(3\) must match the existing size \(2\) at non-singleton dimension 0",
    ):
        aten.expand.default(x, [3, 1])
    aten.fill_.Scalar(e, 0.0)  # PyTorch fills an expanded view: one value, every alias
    np.testing.assert_array_equal(arr(x), [[0.0], [0.0]])


def test_split_sizes():
    x = tp.tensor(np.arange(7))
    assert [p.shape for p in aten.split.Tensor(x, 3)] == [(3,), (3,), (1,)]
    with pytest.raises(
        RuntimeError, match="split_with_sizes expects split_sizes to sum exactly to 7"
    ):
        aten.split_with_sizes.default(x, [3, 3])


def test_cat_promotes_and_checks():
    r = aten.cat.default([tp.tensor([1, 2]), tp.tensor([1.5])])
    assert r.dtype is tp.float32
    np.testing.assert_array_equal(arr(r), [1.0, 2.0, 1.5])
    r2 = aten.cat.default(
        [tp.zeros([2, 2]), tp.zeros([0]), tp.ones([1, 2])]
    )  # legacy empty skipped
    assert r2.shape == (3, 2)
    with pytest.raises(
        RuntimeError,
        match="Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 for tensor number 1 in the list.",
    ):
        aten.cat.default([tp.zeros([2, 2]), tp.zeros([1, 3])])


def test_squeeze_dim_noop_is_alias():
    x = base()
    s = aten.squeeze.dim(x, 0)
    assert s.shape == (2, 3) and s is not x and np.shares_memory(arr(s), arr(x))
