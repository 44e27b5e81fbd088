"""Pointwise kernels: promotion, PyTorch semantics where numpy differs, in-place and out=."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp
from tests.array_backend.conftest import arr

aten = tp.ops.aten


def t(data, dtype=None):
    return tp.tensor(data, dtype=dtype)


@pytest.mark.parametrize(
    ("a_dtype", "other", "expected"),
    [
        (tp.int32, 2.5, tp.float32),
        (tp.int32, 2, tp.int32),
        (tp.uint8, True, tp.uint8),
        (tp.bool, 1, tp.int64),
        (tp.float16, 2.0, tp.float16),
        (tp.float32, 1j, tp.complex64),
        (tp.int64, 1j, tp.complex64),
    ],
)
def test_scalar_promotion(a_dtype, other, expected):
    a = t([1, 2, 3], a_dtype)
    r = aten.add.Scalar(a, other)
    assert r.dtype is expected
    assert arr(r).dtype == np.dtype(arr(aten.clone.default(r)).dtype)


def test_tensor_promotion_and_zero_dim():
    i32 = t([1, 2], tp.int32)
    f64_0d = t(1.5, tp.float64)
    assert aten.add.Tensor(i32, f64_0d).dtype is tp.float64  # a 0-dim tensor of a higher kind
    assert aten.add.Tensor(t([1.0], tp.float16), t([1.0], tp.float32)).dtype is tp.float32
    assert aten.mul.Tensor(t([1], tp.uint8), t([1], tp.int8)).dtype is tp.int16
    np.testing.assert_array_equal(arr(aten.add.Tensor(i32, f64_0d)), [2.5, 3.5])


def test_true_division_of_integers():
    r = aten.div.Tensor(t([1, 2, 3]), t([2, 2, 2]))
    assert r.dtype is tp.float32
    np.testing.assert_allclose(arr(r), [0.5, 1.0, 1.5])


def test_div_rounding_modes_follow_python():
    a, b = t([7, -7, 7, -7]), t([2, 2, -2, -2])
    np.testing.assert_array_equal(
        arr(aten.div.Tensor_mode(a, b, rounding_mode="floor")), [3, -4, -4, 3]
    )
    np.testing.assert_array_equal(
        arr(aten.div.Tensor_mode(a, b, rounding_mode="trunc")), [3, -3, -3, 3]
    )
    assert aten.div.Tensor_mode(a, b, rounding_mode="trunc").dtype is tp.int64
    np.testing.assert_array_equal(arr(aten.floor_divide.default(a, b)), [3, -4, -4, 3])
    np.testing.assert_array_equal(arr(aten.remainder.Tensor(a, b)), [1, 1, -1, -1])
    fa = t([7.5, -7.5])
    np.testing.assert_array_equal(
        arr(aten.div.Tensor_mode(fa, t([2.0, 2.0]), rounding_mode="trunc")), [3.0, -3.0]
    )
    with pytest.raises(RuntimeError, match="rounding_mode"):
        aten.div.Tensor_mode(a, b, rounding_mode="round")


def test_integer_division_by_zero_raises():
    with pytest.raises(RuntimeError, match=r"aten::floor_divide.*ZeroDivisionError"):
        aten.floor_divide.default(t([1]), t([0]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        aten.remainder.Scalar(t([1]), 0)


def test_float_division_by_zero_is_silent():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = aten.div.Tensor(t([1.0, -1.0, 0.0]), t([0.0, 0.0, 0.0]))
    assert arr(r)[0] == math.inf and arr(r)[1] == -math.inf and math.isnan(arr(r)[2])


def test_alpha():
    np.testing.assert_array_equal(arr(aten.add.Tensor(t([1, 2]), t([1, 1]), alpha=3)), [4, 5])
    np.testing.assert_array_equal(arr(aten.sub.Scalar(t([1.0]), 1.0, 2)), [-1.0])
    np.testing.assert_array_equal(arr(aten.rsub.Scalar(t([1.0, 2.0]), 10.0)), [9.0, 8.0])
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        aten.add.Tensor(t([1]), t([1]), alpha=0.5)


def test_bool_subtraction_and_negation_raise():
    b = t([True, False])
    with pytest.raises(RuntimeError, match=r"^aten::sub.Tensor: Subtraction, the `-` operator"):
        aten.sub.Tensor(b, b)
    with pytest.raises(RuntimeError, match=r"^aten::neg: Negation"):
        aten.neg.default(b)


def test_broadcast_error_has_pytorch_wording():
    with pytest.raises(
        RuntimeError,
        match=r"^aten::add.Tensor: The size of tensor a \(3\) must match the size of tensor b "
        r"\(4\) at non-singleton dimension 1",
    ):
        aten.add.Tensor(tp.zeros([2, 3]), tp.zeros([2, 4]))
    with pytest.raises(RuntimeError, match="must match the size"):
        aten.add.Tensor(tp.zeros([2, 3], dtype=tp.int32), tp.zeros([2, 4]))  # general path


def test_comparisons_give_bool():
    r = aten.lt.Tensor(t([1, 2, 3]), t([2.5]))
    assert r.dtype is tp.bool
    np.testing.assert_array_equal(arr(r), [True, True, False])
    assert aten.eq.Scalar(t([1, 2]), 2).dtype is tp.bool


def test_integer_scalar_wraps_like_torch():
    r = aten.add.Scalar(t([1], tp.int8), 1000)
    assert r.dtype is tp.int8
    assert arr(r)[0] == np.int8(np.int64(1001).astype(np.int8))


def test_inplace_writes_through_views_and_checks_cast():
    base = tp.zeros([2, 3])
    row = aten.select.int(base, 0, 1)
    v0 = base._version
    aten.add_.Scalar(row, 5.0)
    np.testing.assert_array_equal(arr(base), [[0, 0, 0], [5, 5, 5]])
    assert base._version == v0 + 1 and row._version == base._version
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        aten.add_.Scalar(t([1, 2]), 2.5)
    with pytest.raises(
        RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"
    ):
        aten.mul_.Tensor(tp.ones([3]), tp.ones([2, 3]))


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.float64, tp.int32])
def test_inplace_fast_path_broadcasts_other_as_the_general_path(name, dtype):
    # Note [Binary fast path]: same dtype, other broadcast to self's shape; the oracle is the
    # out-of-place op (and numpy) on the same operands
    if name == "div" and dtype is tp.int32:
        return  # true division of integers is refused in place (a float result)
    rng = np.random.default_rng(0)
    a = tp.tensor(rng.integers(1, 9, (2, 3)), dtype=dtype)
    alphas = [1, 2] if dtype is tp.int32 else [1, 0.5, 2]
    for shape in [(2, 3), (3,), (1, 3), (2, 1), ()]:
        b = tp.tensor(rng.integers(1, 9, shape), dtype=dtype)
        for alpha in alphas if name in ("add", "sub") else [1]:
            kw = {"alpha": alpha} if alpha != 1 else {}
            got = getattr(aten, f"{name}_").Tensor(a.clone(), b, **kw)
            want = getattr(aten, name).Tensor(a, b, **kw)
            assert got.dtype is dtype and got.shape == (2, 3)
            np.testing.assert_array_equal(arr(got), arr(want))
            if dtype is not tp.float16:
                f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
                other = arr(b) * alpha if alpha != 1 else arr(b)
                np.testing.assert_array_equal(arr(got), f[name](arr(a), other).astype(arr(a).dtype))
    # operands that overlap in part: refused as PyTorch refuses them
    x = tp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=dtype)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        aten.sub_.Tensor(x, aten.select.int(x, 0, 1))
    with pytest.raises(
        RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"
    ):
        aten.sub_.Tensor(tp.ones([3], dtype=dtype), tp.ones([2, 3], dtype=dtype), alpha=2)


def test_out_variant_resizes_and_casts():
    out = tp.zeros([1], dtype=tp.float64)
    r = aten.add.out(t([1.0, 2.0]), t([1.0, 1.0]), out=out)
    assert r is out and out.shape == (2,) and out.dtype is tp.float64
    np.testing.assert_array_equal(arr(out), [2.0, 3.0])
    with pytest.raises(RuntimeError, match="can't be cast"):
        aten.mul.out(t([1.5]), t([1.5]), out=tp.zeros([1], dtype=tp.int64))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "rsqrt"])
def test_float_unary_promotes_integers(name):
    r = getattr(aten, name).default(t([1, 2, 4]))
    assert r.dtype is tp.float32
    special = {"sigmoid": lambda x: 1 / (1 + np.exp(-x)), "rsqrt": lambda x: 1 / np.sqrt(x)}
    ref = special[name] if name in special else getattr(np, name)
    np.testing.assert_allclose(arr(r), ref(np.array([1.0, 2.0, 4.0])), rtol=1e-6)


def test_abs_of_complex_is_real():
    r = aten.abs.default(t([3 + 4j]))
    assert r.dtype is tp.float32 and arr(r)[0] == 5.0


def test_gelu_exact_and_tanh():
    xs = np.linspace(-12, 12, 2001)
    r = aten.gelu.default(t(xs, tp.float64))
    ref = np.array([x * 0.5 * math.erfc(-x / math.sqrt(2)) for x in xs])
    np.testing.assert_allclose(arr(r), ref, rtol=1e-12, atol=1e-300)
    rt = aten.gelu.default(t(xs, tp.float64), approximate="tanh")
    ref_t = 0.5 * xs * (1 + np.tanh(math.sqrt(2 / math.pi) * (xs + 0.044715 * xs**3)))
    np.testing.assert_allclose(arr(rt), ref_t, rtol=1e-12)
    with pytest.raises(RuntimeError, match="GeluKernelImpl"):
        aten.gelu.default(t([1]))


def test_relu_and_relu_inplace():
    x = t([-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(arr(aten.relu.default(x)), [0, 0, 2])
    assert aten.relu_.default(x) is x
    np.testing.assert_array_equal(arr(x), [0, 0, 2])


def test_clamp_scalar_and_tensor_bounds():
    x = t([-2.0, 0.5, 3.0])
    np.testing.assert_array_equal(arr(aten.clamp.default(x, -1, 1)), [-1, 0.5, 1])
    assert aten.clamp.default(t([1, 5]), 0.5).dtype is tp.float32
    r = aten.clamp.Tensor(x, t([0.0, 1.0, 0.0]), t([1.0]))
    np.testing.assert_array_equal(arr(r), [0.0, 1.0, 1.0])
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        aten.clamp.default(x)


def test_where():
    c = t([True, False])
    r = aten.where.self(c, t([1, 2]), t([1.5, 2.5]))
    assert r.dtype is tp.float32
    np.testing.assert_array_equal(arr(r), [1.0, 2.5])
    assert aten.where.ScalarOther(c, t([1.0], tp.float16), 0.0).dtype is tp.float16
    np.testing.assert_array_equal(arr(aten.where.ScalarSelf(c, 7, t([1, 2]))), [7, 2])
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        aten.where.self(t([1.0, 0.0]), t([1, 2]), t([3, 4]))


def test_masked_fill():
    r = aten.masked_fill.Scalar(t([1, 2, 3]), t([True, False, True]), 9)
    np.testing.assert_array_equal(arr(r), [9, 2, 9])
    assert r.dtype is tp.int64
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        aten.masked_fill.Scalar(t([1, 2]), t([1, 0]), 0)


def test_bitwise_and_logical():
    np.testing.assert_array_equal(arr(aten.bitwise_and.Tensor(t([6]), t([3]))), [2])
    np.testing.assert_array_equal(arr(aten.bitwise_not.default(t([True, False]))), [False, True])
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        aten.bitwise_or.Tensor(t([1.0]), t([1.0]))
    r = aten.logical_and.default(t([1.0, 0.0]), t([2, 2]))
    assert r.dtype is tp.bool
    np.testing.assert_array_equal(arr(r), [True, False])


def test_pow_integer_negative_exponent():
    # a Python int exponent is refused, as PyTorch; a tensor one gives PyTorch's integer powers
    with pytest.raises(RuntimeError, match=r"^aten::pow.Tensor_Scalar: Integers to negative"):
        aten.pow.Tensor_Scalar(t([2]), -1)
    assert aten.pow.Tensor_Tensor(t([2, 1, -1]), t([-1, -2, -3])).tolist() == [0, 1, -1]
    assert aten.pow.Scalar(2, t([1, 2])).dtype is tp.int64
    assert aten.pow.Tensor_Scalar(t([1, 2]), 0.5).dtype is tp.float32


def test_maximum_rejects_complex_and_propagates_nan():
    r = aten.maximum.default(t([1.0, math.nan]), t([2.0, 0.0]))
    assert arr(r)[0] == 2.0 and math.isnan(arr(r)[1])
    with pytest.raises(RuntimeError, match="not implemented for complex"):
        aten.maximum.default(t([1j]), t([1j]))


def test_zero_dim_results_are_arrays():
    r = aten.add.Tensor(t(1.0), t(2.0))
    assert isinstance(arr(r), np.ndarray) and r.shape == ()
