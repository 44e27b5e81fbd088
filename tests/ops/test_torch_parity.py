"""Behaviours found by differential testing against PyTorch, pinned with hard-coded answers.

Each test names the PyTorch behaviour it keeps; the expected values are closed forms or numpy,
never PyTorch itself (it is not a test dependency). The OpInfo samples cover the ordinary
values; these are the corners where tensorplug once gave a different answer.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorplug as tp
from tests import needs


def f64(values: object, requires_grad: bool = False) -> tp.Tensor:
    return tp.tensor(values, dtype=tp.float64, requires_grad=requires_grad)


# --- threshold_backward -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64, tp.float16])
def test_threshold_backward_is_where_bit_for_bit(dtype: tp.dtype) -> None:
    """PyTorch computes ``where(x <= t, 0, g)``: a -0.0, inf or NaN gradient passes unchanged
    where the input is above the threshold (or NaN), and +0.0 (never -0.0 or NaN) is given
    where it is not (torch 2.13: ``threshold_backward([-0., inf, nan, -1., 2.], [1., -1., -1.,
    0., nan], 0)`` is ``[-0., 0., 0., 0., 2.]``)."""
    g = tp.tensor([-0.0, np.inf, np.nan, -1.0, 2.0, -0.0, np.nan], dtype=dtype)
    x = tp.tensor([1.0, -1.0, -1.0, 0.0, np.nan, -3.0, 5.0], dtype=dtype)
    r = tp.threshold_backward(g, x, 0).numpy().astype(np.float64)
    np.testing.assert_array_equal(r, [-0.0, 0.0, 0.0, 0.0, 2.0, 0.0, np.nan])
    assert np.signbit(r).tolist() == [True] + [False] * 6


# --- nll_loss ---------------------------------------------------------------------------------


def test_nll_loss_backward_gives_ignored_targets_an_exact_zero() -> None:
    """PyTorch never writes the rows of ignored targets: +0.0, not -0.0, and not the NaN of
    0 * (g / 0) when every target is ignored and "mean" divides by a zero total weight."""
    needs.autograd()
    x = f64([[-1.0, -2.0], [-0.5, -3.0], [-2.0, -0.1]])
    one = f64(1.0)
    g = tp.nll_loss_backward(one, x, tp.tensor([0, -100, 1]))
    np.testing.assert_array_equal(g.numpy(), [[-0.5, 0.0], [0.0, 0.0], [0.0, -0.5]])
    assert not np.signbit(g.numpy()[1]).any()
    g = tp.nll_loss_backward(one, x, tp.tensor([-100, -100, -100]))
    assert g.numpy().tolist() == [[0.0, 0.0]] * 3 and not np.signbit(g.numpy()).any()
    # the same through autograd: the loss is NaN (0 / 0), its gradient zero
    xg = f64(x.tolist(), requires_grad=True)
    loss = tp.nll_loss(xg, tp.tensor([-100, -100, -100]))
    assert np.isnan(loss.item())
    (grad,) = tp.autograd.grad(loss, [xg])
    assert grad.tolist() == [[0.0, 0.0]] * 3


# --- std --------------------------------------------------------------------------------------


def test_nll_loss_checks_its_target_as_pytorch() -> None:
    """Dimensions first, then sizes, then dtype; int64 and uint8 targets, as PyTorch."""
    x = tp.tensor([[-1.0, -2.0, -0.5], [-0.5, -3.0, -1.0]])
    with pytest.raises(
        RuntimeError, match="0D or 1D target tensor expected, multi-target not supported"
    ):
        tp.nll_loss(x, tp.tensor([[0.0], [1.0]]))  # 2-D (and float): the dimensions speak first
    with pytest.raises(RuntimeError, match="multi-target"):
        tp.nll_loss(x[0], tp.tensor([[1]]))
    with pytest.raises(
        RuntimeError, match=r"Expected input batch_size \(2\) to match target batch_size \(3\)"
    ):
        tp.nll_loss(x, tp.tensor([0.0, 1.0, 2.0]))
    for dtype, name in ((tp.float32, "Float"), (tp.int32, "Int"), (tp.bool, "Bool")):
        with pytest.raises(
            RuntimeError, match=f"expected target dtype to be Long or Byte, but got {name}$"
        ):
            tp.nll_loss(x, tp.tensor([0, 1]).to(dtype))
    got = tp.nll_loss(x, tp.tensor([2, 0], dtype=tp.uint8), reduction="none")
    assert got.tolist() == [0.5, 0.5]
    with pytest.raises(IndexError, match="Target 255 is out of bounds"):
        tp.nll_loss(x, tp.tensor([255, 0], dtype=tp.uint8))
    # the backward kernel checks alike
    with pytest.raises(RuntimeError, match="Long or Byte, but got Float"):
        tp.nll_loss_backward(tp.tensor(1.0), x, tp.tensor([0.0, 1.0]))
    g = tp.nll_loss_backward(tp.tensor(1.0), x, tp.tensor([2, 0], dtype=tp.uint8), reduction="sum")
    assert g.tolist() == [[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]]
    # cross_entropy with uint8 class indices, as F.cross_entropy accepts them
    logits = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], np.float32)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    ce = tp.nn.functional.cross_entropy(tp.tensor(logits), tp.tensor([2, 1], dtype=tp.uint8))
    np.testing.assert_allclose(ce.item(), -(logp[0, 2] + logp[1, 1]) / 2, rtol=1e-6)


def test_std_gradient_is_zero_where_the_std_is_zero() -> None:
    """PyTorch's std_backward masks 1 / (2 std) to 0 where std == 0 (a constant slice, or one
    element with correction 0); sqrt(var) differentiated through sqrt would give NaN."""
    needs.autograd()
    x = f64([1.5, 1.5, 1.5], requires_grad=True)
    assert tp.autograd.grad(x.std(), [x])[0].tolist() == [0.0, 0.0, 0.0]
    assert tp.autograd.grad(tp.std(x, False), [x])[0].tolist() == [0.0, 0.0, 0.0]
    s = f64(2.0, requires_grad=True)
    assert tp.autograd.grad(tp.std(s, [], correction=0), [s])[0].item() == 0.0
    # only the constant row is masked: the other gets (x - mean) / ((n - 1) * std)
    m = f64([[1.0, 1.0], [1.0, 3.0]], requires_grad=True)
    (g,) = tp.autograd.grad(m.std(1).sum(), [m])
    r = 1 / np.sqrt(2.0)
    np.testing.assert_allclose(g.numpy(), [[0.0, 0.0], [-r, r]], rtol=1e-15)
    assert tp.autograd.gradcheck(lambda t: t.std(1), (f64([[1.0, 2.5], [1.0, 3.0]], True),))


# --- arange -----------------------------------------------------------------------------------


def test_arange_converts_float_arguments_of_an_integer_dtype_toward_zero() -> None:
    """PyTorch converts start, end and step to the integer type first; int64 also counts the
    elements from the converted values, the narrower integer types from the given ones."""
    assert tp.arange(-2.5, 2, 1, dtype=tp.int64).tolist() == [-2, -1, 0, 1]
    assert tp.arange(0.5, 5.7, 1.9, dtype=tp.int64).tolist() == [0, 1, 2, 3, 4]
    assert tp.arange(-2.5, 2, 1, dtype=tp.int32).tolist() == [-2, -1, 0, 1, 2]
    assert tp.arange(0.5, 5.7, 1.9, dtype=tp.int32).tolist() == [0, 1, 2]
    assert tp.arange(-2.5, 2, 1, dtype=tp.uint8).tolist() == [254, 255, 0, 1, 2]
    assert tp.arange(5.5, dtype=tp.int64).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        tp.arange(0.0, 1.0, 0.3, dtype=tp.int64)


# --- embedding --------------------------------------------------------------------------------


def test_embedding_refuses_negative_indices() -> None:
    """aten::embedding does not count from the end: PyTorch raises IndexError, where indexing
    would have quietly returned the last row."""
    w = f64([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    for bad in ([-1], [[0, 2], [1, -3]]):
        with pytest.raises(IndexError, match="index out of range in self"):
            tp.embedding(w, tp.tensor(bad))
    assert tp.embedding(w, tp.tensor([[0, 2]])).tolist() == [[[1.0, 2.0], [5.0, 6.0]]]
    assert tp.embedding(w, tp.tensor([], dtype=tp.int64)).shape == (0, 2)


# --- scalars written into integer tensors -----------------------------------------------------


def test_scalar_overflow_checks_follow_pytorch() -> None:
    """c10's overflow rule for fill_, full and masked_fill: unsigned types take negative ints
    down to -max (two's complement wrap); a float must fit as it is, before truncation."""
    u8 = tp.zeros([2], dtype=tp.uint8)
    assert u8.clone().fill_(-1).tolist() == [255, 255]
    assert u8.clone().fill_(-255).tolist() == [1, 1]
    assert tp.full([2], -1, dtype=tp.uint8).tolist() == [255, 255]
    assert u8.masked_fill(tp.tensor([True, False]), -1).tolist() == [255, 0]
    assert u8.clone().fill_(2.7).tolist() == [2, 2]  # in range: truncated
    assert tp.zeros([1], dtype=tp.int8).fill_(-128.0).tolist() == [-128]
    overflow = "value cannot be converted to type {} without overflow"
    for value in (-256, 256, -0.5, -1.0, 255.5, float("nan")):
        with pytest.raises(RuntimeError, match=overflow.format("uint8")):
            u8.clone().fill_(value)
    for value in (128, -129, 127.5):
        with pytest.raises(RuntimeError, match=overflow.format("int8")):
            tp.zeros([1], dtype=tp.int8).fill_(value)
        with pytest.raises(RuntimeError, match=overflow.format("int8")):
            tp.zeros([1], dtype=tp.int8).masked_fill(tp.tensor([True]), value)
    # random bounds do not wrap: randint(-1, 5) of uint8 is refused
    with pytest.raises(RuntimeError, match=overflow.format("uint8")):
        tp.randint(-1, 5, [3], dtype=tp.uint8)


I8 = tp.int8
TOO_BIG = r"int too big to convert: {} is beyond the 64-bit integers a Scalar holds"


@pytest.mark.parametrize(
    ("call", "value", "argument"),
    [
        (lambda v: tp.tensor([1]) * v, 2**70, "aten::mul.Scalar(): argument 'other' (position 2)"),
        (lambda v: tp.tensor([3]).mul(v), 2**65 + 3, "aten::mul.Scalar(): argument 'other'"),
        (lambda v: tp.tensor([5]) == v, 2**64 + 5, "aten::eq.Scalar(): argument 'other'"),
        (lambda v: tp.tensor([1]).clamp(max=v), 2**70, "aten::clamp.default(): argument 'max'"),
        (lambda v: tp.tensor([1]).clamp(min=v), -(2**70), "aten::clamp.default(): argument 'min'"),
        (lambda v: tp.tensor([1]) // v, 2**70, "aten::floor_divide.Scalar(): argument 'other'"),
        (lambda v: tp.tensor([1.0]) * v, 2**70, "aten::mul.Scalar(): argument 'other'"),
        (lambda v: tp.tensor([1], dtype=I8) + v, 2**64, "aten::add.Scalar(): argument 'other'"),
        (lambda v: v - tp.tensor([1]), 2**70, "aten::rsub.Scalar(): argument 'other'"),
        (lambda v: tp.full([2], v), 2**70, "aten::full.default(): argument 'fill_value'"),
        (lambda v: tp.tensor([1]).add(1, alpha=v), 2**70, "aten::add.Scalar(): argument 'alpha'"),
        (lambda v: tp.tensor([1]).fill_(v), 2**70, "aten::fill_.Scalar(): argument 'value'"),
        (
            lambda v: tp.tensor([1]).pow(v),
            10**4000,
            "aten::pow.Tensor_Scalar(): argument 'exponent'",
        ),
    ],
)
def test_python_ints_beyond_64_bits_overflow(call, value, argument) -> None:
    """PyTorch turns a Python int given for a Scalar into a 64-bit integer when it binds the
    call, and raises OverflowError beyond that, whatever the tensor's dtype (Note [Scalar
    ints]); tensorplug used to wrap (``tensor([1]) * 2**70`` gave ``tensor([0])``)."""
    shown = str(value) if value.bit_length() < 200 else f"a {value.bit_length()}-bit integer"
    with pytest.raises(OverflowError, match=re.escape(argument) + ".*" + TOO_BIG.format(shown)):
        call(value)


def test_python_ints_within_64_bits_wrap_as_pytorch() -> None:
    """int64 and uint64 values bind, then wrap into the dtype where PyTorch wraps."""
    assert (tp.tensor([1]) + 2**63).tolist() == [-(2**63) + 1]
    assert (tp.tensor([1], dtype=tp.uint8) + 2**63).tolist() == [1]
    assert (tp.tensor([1], dtype=I8) + 300).tolist() == [45]
    assert (tp.tensor([1], dtype=I8) * 300).tolist() == [44]
    assert tp.tensor([1], dtype=I8).sub(300).tolist() == [-43]
    assert tp.tensor([1], dtype=I8).eq(300).tolist() == [False]
    assert tp.tensor([1], dtype=I8).lt(300).tolist() == [True]
    assert (tp.tensor([1.0]) * (2**64 - 1)).tolist() == [float(2**64)]
    assert tp.tensor([1.0]).add(1, alpha=2**63).tolist() == [float(2**63)]
    assert tp.tensor([1], dtype=tp.uint8).clamp(min=-1).tolist() == [255]


@pytest.mark.parametrize(
    ("call", "dtype"),
    [
        (lambda: tp.tensor([1], dtype=I8).clamp(max=300), "int8"),
        (lambda: tp.tensor([1], dtype=I8).clamp(-300), "int8"),
        (lambda: tp.tensor([1], dtype=I8).clamp_max(300), "int8"),
        (lambda: tp.tensor([1]).clamp_min(2**63), "int64"),
        (lambda: tp.tensor([1]).clamp(2**63), "int64"),
        (lambda: tp.tensor([1.0], dtype=tp.float16).clamp(max=1e6), "float16"),
        (lambda: tp.tensor([1], dtype=I8).add(1, alpha=300), "int8"),
        (lambda: tp.tensor([1]).add(1, alpha=2**63), "int64"),
        (lambda: tp.tensor([1.0], dtype=tp.float16).sub(1, alpha=1e6), "float16"),
        (lambda: tp.tensor([1], dtype=I8).where(tp.tensor([True]), 300), "int8"),
        (lambda: tp.where(tp.tensor([True]), 300, tp.tensor([1], dtype=I8)), "int8"),
        (lambda: tp.tensor([1], dtype=I8).pow(300), "int8"),
        (lambda: tp.tensor([1], dtype=tp.uint8).pow(300), "uint8"),
        (lambda: tp.tensor([1.0], dtype=tp.float16).pow(1e6), "float16"),
        (lambda: tp.tensor([1], dtype=I8).addcmul(tp.tensor([1], dtype=I8), tp.tensor([1], dtype=I8), value=300), "int8"),
        (lambda: tp.tensor([1]).fill_(2**63), "int64"),
        (lambda: tp.full([1], 2**63), "int64"),
    ],
)  # fmt: skip
def test_scalars_that_do_not_fit_the_result_dtype(call, dtype) -> None:
    """Where PyTorch converts a Scalar to the result dtype with a check (clamp bounds, alpha,
    where's scalar, integer and float16 powers, addcmul's value, fills)."""
    with pytest.raises(
        RuntimeError, match=f"value cannot be converted to type {dtype} without overflow"
    ):
        call()


def test_scalars_pytorch_lets_through() -> None:
    """...and where it does not: float results of where and addcmul, float16/bfloat16 fills."""
    half = tp.float16
    assert tp.tensor([1.0], dtype=half).where(tp.tensor([True]), 1.0e4).tolist() == [1.0]
    ones = tp.tensor([1.0], dtype=half)
    assert ones.addcmul(ones, ones, value=1e6).tolist() == [float("inf")]
    assert ones.clone().fill_(1e6).tolist() == [float("inf")]
    assert tp.tensor([1.0], dtype=tp.bfloat16).fill_(1e39).tolist() == [float("inf")]
    assert tp.tensor([1.0]).pow(1e39).tolist() == [1.0]
    with pytest.raises(
        RuntimeError, match="value cannot be converted to type float32 without overflow"
    ):
        tp.tensor([1.0]).fill_(1e39)


# --- layer_norm -------------------------------------------------------------------------------


def test_layer_norm_refuses_an_empty_normalized_shape() -> None:
    with pytest.raises(RuntimeError, match=r"normalized_shape to be at least 1-dimensional"):
        tp.layer_norm(f64(2.0), [])
    with pytest.raises(RuntimeError, match=r"but got normalized_shape = \[\]"):
        tp.layer_norm(f64([[1.0, 2.0]]), [])


# --- shape and indexing ops: views, iteration -------------------------------------------------


def test_the_view_ops_return_views_and_the_shape_ops_copies() -> None:
    """PyTorch's ``_base``: unbind, narrow, movedim, swapaxes, unflatten, view_as, expand_as
    (and reshape_as where the strides allow) are views; flip, roll, repeat, tril, triu, diag,
    index_select, masked_select and nonzero copy."""
    x = tp.zeros(3, 4)
    views = [
        *x.unbind(1),
        x.narrow(0, 1, 2),
        x.narrow(0, tp.tensor(1), 2),
        x.movedim(0, 1),
        x.movedim([0, 1], [1, 0]),
        x.swapaxes(0, 1),
        x.unflatten(1, (2, 2)),
        x.view_as(tp.zeros(12)),
        x.reshape_as(tp.zeros(12)),
        x[:, :1].expand_as(x),
    ]
    assert all(v._base is x for v in views)
    copies = [
        x.flip([0]),
        x.roll(1),
        x.repeat(1, 1),
        x.tril(),
        x.triu(),
        x.diag(),
        x.index_select(0, tp.tensor([0])),
        x.masked_select(x == 0),
        x.nonzero(),
        x.t().reshape_as(tp.zeros(12)),  # a transpose cannot be flattened without a copy
    ]
    assert all(c._base is None for c in copies)


def test_iterating_a_tensor_gives_the_views_of_one_unbind() -> None:
    """PyTorch's ``Tensor.__iter__`` is ``iter(self.unbind(0))``: views, UnbindBackward0."""
    needs.autograd()
    w = f64([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    rows = list(w * 1)
    assert [r.grad_fn.name() for r in rows] == ["UnbindBackward0"] * 2
    (rows[1] * 3).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[0.0, 0.0], [3.0, 3.0]])
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(tp.zeros(()))
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(tp.zeros(()))
    assert list(tp.zeros(0, 3)) == [] and len(tp.zeros(0, 3)) == 0


def test_writes_into_the_new_views_give_the_base_a_history() -> None:
    """In-place changes through narrow, movedim, unflatten and view_as of a tensor in a graph
    reach its leaf as PyTorch's CopySlices gives them (closed forms)."""
    needs.autograd()
    g = np.arange(12.0).reshape(3, 4)
    columns = np.ones((3, 4))
    rows = np.ones((3, 1))
    cases = [  # (the write, how it scales the gradient of each element of the leaf)
        (lambda y: y.narrow(1, 1, 2).mul_(10), columns * [1, 10, 10, 1]),
        (lambda y: y.movedim(0, 1)[1].mul_(3), columns * [1, 3, 1, 1]),
        (lambda y: y.unflatten(1, (2, 2))[:, 1].mul_(5), columns * [1, 1, 5, 5]),
        (lambda y: y.swapaxes(0, 1).narrow(1, 2, 1).mul_(2), columns * (rows * [[1], [1], [2]])),
        (lambda y: y.view_as(tp.zeros(12))[4:8].mul_(2), columns * (rows * [[1], [2], [1]])),
    ]
    for write, scale in cases:
        w = f64(np.ones((3, 4)).tolist(), requires_grad=True)
        y = w * 1.0
        write(y)
        (y * f64(g.tolist())).sum().backward()
        np.testing.assert_array_equal(w.grad.numpy(), g * scale)


def test_a_value_written_into_an_unbind_view_of_a_plain_tensor_is_differentiated() -> None:
    """``buf = zeros(...); buf.unbind(0)[i].copy_(f(w))`` (Note [Views of plain tensors]); here
    the outputs of unbind may be written, where PyTorch refuses (docs/autograd.md)."""
    needs.autograd()
    w = f64([1.0, 2.0, 3.0], requires_grad=True)
    buf = tp.zeros(2, 3, dtype=tp.float64)
    buf.unbind(0)[1].copy_(w * 2)
    buf.narrow(0, 0, 1).squeeze(0).copy_(w * w)
    (buf * f64([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2 * 1 * 1 + 8, 2 * 2 * 2 + 10, 2 * 3 * 3 + 12])


def test_diag_of_a_matrix_that_is_not_square_has_its_gradient_on_the_diagonal() -> None:
    """PyTorch's diag backward for a wide or tall matrix: zeros with the k-th diagonal set."""
    needs.autograd()
    x = f64(np.zeros((2, 4)).tolist(), requires_grad=True)
    (tp.diag(x, 1) * f64([5.0, 7.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 5, 0, 0], [0, 0, 7, 0]])
    x = f64(np.zeros((4, 2)).tolist(), requires_grad=True)
    (tp.diag(x, -2) * f64([5.0, 7.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0], [0, 0], [5, 0], [0, 7]])
