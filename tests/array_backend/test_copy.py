"""Copies and conversions: _to_copy, clone, copy_, fill_, _local_scalar_dense, tensor()."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tensorplug as tp
from tests.array_backend.conftest import arr

aten = tp.ops.aten


def test_to_copy_dtype_and_bfloat16_rounding():
    x = tp.tensor([1.0001, 3.14159, -2.5e-3], dtype=tp.float32)
    b = aten._to_copy.default(x, dtype=tp.bfloat16)
    assert b.dtype is tp.bfloat16 and arr(b).dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(arr(b), arr(x).astype(ml_dtypes.bfloat16))
    back = aten._to_copy.default(b, dtype=tp.float32)
    assert not np.shares_memory(arr(back), arr(x))
    i = aten._to_copy.default(tp.tensor([1.7, -1.7]), dtype=tp.int64)
    np.testing.assert_array_equal(arr(i), [1, -1])


def test_bfloat16_arithmetic_computes_in_float32():
    a = tp.tensor([1.0, 2.0, 3.0], dtype=tp.bfloat16)
    b = tp.tensor([0.1, 0.2, 0.3], dtype=tp.bfloat16)
    r = aten.add.Tensor(a, b)
    assert r.dtype is tp.bfloat16
    expect = (arr(a).astype(np.float32) + arr(b).astype(np.float32)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(arr(r), expect)
    assert aten.add.Tensor(a, tp.tensor([1.0], dtype=tp.float16)).dtype is tp.float32
    assert aten.exp.default(a).dtype is tp.bfloat16
    assert (
        aten.mm.default(
            tp.ones([2, 2], dtype=tp.bfloat16), tp.ones([2, 2], dtype=tp.bfloat16)
        ).dtype
        is tp.bfloat16
    )


def test_float16_is_native():
    h = tp.tensor([1.0, 2.0], dtype=tp.float16)
    r = aten.mul.Tensor(h, h)
    assert r.dtype is tp.float16 and arr(r).dtype == np.float16


def test_clone_and_detach():
    x = tp.tensor([1.0, 2.0])
    c = aten.clone.default(x)
    assert not np.shares_memory(arr(c), arr(x)) and c._tp_version is not x._tp_version
    d = aten.detach.default(x)
    assert np.shares_memory(arr(d), arr(x)) and d._tp_version is x._tp_version


def test_copy_broadcasts_and_casts():
    x = tp.zeros([2, 3], dtype=tp.int32)
    aten.copy_.default(x, tp.tensor([1.9, 2.9, 3.9]))
    np.testing.assert_array_equal(arr(x), [[1, 2, 3], [1, 2, 3]])
    with pytest.raises(RuntimeError, match="must match the size"):
        aten.copy_.default(x, tp.zeros([4]))


def test_local_scalar_dense():
    assert aten._local_scalar_dense.default(tp.tensor([3])) == 3
    v = aten._local_scalar_dense.default(tp.tensor(1.5, dtype=tp.bfloat16))
    assert type(v) is float and v == 1.5
    assert aten._local_scalar_dense.default(tp.tensor(True)) is True
    with pytest.raises(
        RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"
    ):
        aten._local_scalar_dense.default(tp.tensor([1, 2]))


def test_from_python_infers_like_torch():
    assert tp.tensor([True, False]).dtype is tp.bool
    assert tp.tensor([1, 2]).dtype is tp.int64
    assert tp.tensor([1, 2.5]).dtype is tp.float32
    assert tp.tensor([1 + 2j]).dtype is tp.complex64
    assert tp.tensor(np.zeros(2, dtype=np.float64)).dtype is tp.float64
    src = np.zeros(2)
    t = tp.tensor(src)
    assert not np.shares_memory(arr(t), src)  # tensor() copies
    assert tp.tensor([[1, 2], [3, 4]], dtype=tp.float16).dtype is tp.float16


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        ([1, "a"], TypeError, "tensor(): invalid data type 'str'"),
        ([[1], [b"a"]], TypeError, "tensor(): invalid data type 'bytes'"),
        ("a", TypeError, "tensor(): invalid data type 'str'"),
        ([None], RuntimeError, "Could not infer dtype of NoneType"),
        ([1, None], RuntimeError, "Could not infer dtype of NoneType"),
        (None, RuntimeError, "Could not infer dtype of NoneType"),
        ([1, object()], RuntimeError, "Could not infer dtype of object"),
        ([1, {}], RuntimeError, "Could not infer dtype of dict"),
    ],
)
def test_from_python_names_the_element_that_is_no_number(data, error, message):
    """PyTorch 2.13's errors: the type of the offending element (once: 'of list')."""
    with pytest.raises(error) as e:
        tp.tensor(data)
    assert str(e.value) == message


def test_contiguous_gives_row_major_data_that_view_accepts():
    """``x.t().contiguous().view(-1)`` and the attention idiom ``y.transpose(1, 2)
    .contiguous().view(B, T, C)``: contiguous() copies into row-major order (clone with
    contiguous_format), so view() finds the strides it needs."""
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = tp.tensor(a)
    flat = x.t().contiguous().view(-1)
    np.testing.assert_array_equal(flat.numpy(), a.T.ravel())
    assert x.t().contiguous().numpy().flags["C_CONTIGUOUS"]
    y = tp.tensor(np.arange(24.0).reshape(2, 3, 4))  # (B, heads, T) -> (B, T, heads)
    merged = y.transpose(1, 2).contiguous().view(2, 4, 3)
    np.testing.assert_array_equal(merged.numpy(), np.arange(24.0).reshape(2, 3, 4).swapaxes(1, 2))


def test_clone_keeps_the_memory_order_unless_contiguous_format_is_asked():
    """PyTorch's clone defaults to preserve_format: a transposed tensor's copy keeps its
    order; memory_format=contiguous_format gives row-major data."""
    x = tp.tensor(np.arange(6.0).reshape(2, 3)).t()
    kept = x.clone()
    assert kept.numpy().flags["F_CONTIGUOUS"] and not kept.numpy().flags["C_CONTIGUOUS"]
    made = tp.ops.aten.clone.default(x, memory_format="contiguous_format")
    assert made.numpy().flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(made.numpy(), np.arange(6.0).reshape(2, 3).T)


def test_contiguous_view_backward_reaches_the_leaf():
    a = tp.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    w = tp.tensor(np.arange(6.0))
    (a.t().contiguous().view(-1) * w).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.arange(6.0).reshape(3, 2).T)
