"""Sorting, selection and the reductions that return indices, bools or norms: the behaviours
PyTorch 2.13 shows on CPU, pinned with hard-coded answers (PyTorch is not a test dependency).

Tie orders (Note [Tie order of sort and topk] in array_backend/_reductions/_sorting.py): every sort, topk
and median keep ties in their original order (PyTorch promises an order only for stable=True).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

TIES = [3, 1, 2, 1, 3, 0, 1, 2, 3, 1, 0, 2, 1, 1, 3, 0, 2, 2, 1, 0]  # 20 > 16: past insertion sort


def f64(values: object, requires_grad: bool = False) -> tp.Tensor:
    return tp.tensor(values, dtype=tp.float64, requires_grad=requires_grad)


# --- tie orders ---------------------------------------------------------------------------------


def test_unstable_sort_orders_ties_as_the_stable_one() -> None:
    """PyTorch leaves the order of ties unspecified unless stable=True; here it is the stable
    order, whatever the row length (Note [Tie order of sort and topk])."""
    t = tp.tensor(TIES)
    for descending in (False, True):
        unstable = tp.sort(t, descending=descending)
        stable = tp.sort(t, stable=True, descending=descending)
        assert unstable.indices.tolist() == stable.indices.tolist()
        assert unstable.values.tolist() == sorted(TIES, reverse=descending)
        assert tp.argsort(t, descending=descending).tolist() == stable.indices.tolist()


def test_stable_sort_keeps_ties_in_order_in_both_directions() -> None:
    t = tp.tensor(TIES)
    asc = tp.sort(t, stable=True).indices.tolist()
    assert asc == sorted(range(20), key=lambda i: TIES[i])
    desc = tp.sort(t, stable=True, descending=True).indices.tolist()
    assert desc == [0, 4, 8, 14, 2, 7, 11, 16, 17, 1, 3, 6, 9, 12, 13, 18, 5, 10, 15, 19]
    assert tp.argsort(t, stable=True, descending=True).tolist() == desc


def test_sort_puts_nans_last_ascending_and_first_descending() -> None:
    t = f64([1.0, math.nan, 0.0, math.nan, 1.0])
    assert tp.sort(t).indices.tolist() == [2, 0, 4, 1, 3]
    assert tp.sort(t, descending=True).indices.tolist() == [1, 3, 0, 4, 2]


def test_topk_takes_tied_values_in_their_original_order() -> None:
    t = tp.tensor([1, 2, 2, 1, 2, 1])
    assert tp.topk(t, 2).indices.tolist() == [1, 2]
    assert tp.topk(t, 2, largest=False).indices.tolist() == [0, 3]
    assert tp.topk(t, 4, sorted=False).indices.tolist() == [1, 2, 4, 0]  # any order is allowed
    long = tp.tensor([i % 3 for i in range(130)])
    assert tp.topk(long, 2).indices.tolist() == [2, 5]
    assert tp.topk(long, 2, largest=False).indices.tolist() == [0, 3]


def test_topk_counts_nan_as_largest() -> None:
    t = f64([1.0, math.nan, 3.0, math.nan])
    assert tp.topk(t, 3).indices.tolist() == [1, 3, 2]
    assert tp.topk(t, 3, largest=False).indices.tolist() == [0, 2, 1]  # tied NaNs: the first


def test_median_is_the_lower_median_at_its_first_stable_position() -> None:
    values, indices = tp.median(tp.tensor([[2, 1, 2, 2, 1], [1, 1, 1, 3, 3]]), 1)
    assert values.tolist() == [2, 1] and indices.tolist() == [0, 2]
    assert tp.median(f64([1.0, 2.0, 3.0, 4.0])).item() == 2.0
    v, i = tp.median(f64([[1.0, math.nan, 2.0, math.nan]]), 1)
    assert math.isnan(v.item()) and i.tolist() == [1]


def test_median_of_nothing_is_nan_converted_to_the_dtype() -> None:
    assert math.isnan(tp.median(tp.zeros([0])).item())
    assert tp.median(tp.zeros([0], dtype=tp.int64)).item() == -(2**63)
    assert tp.median(tp.zeros([0], dtype=tp.int32)).item() == -(2**31)
    assert tp.median(tp.zeros([0], dtype=tp.bool)).item() is True


# --- dtypes and Python results ------------------------------------------------------------------


def test_integer_scans_accumulate_in_int64() -> None:
    for d in (tp.bool, tp.uint8, tp.int8, tp.int32):
        assert tp.cumsum(tp.ones([3], dtype=d), 0).dtype == tp.int64
        assert tp.cumprod(tp.ones([3], dtype=d), 0).dtype == tp.int64
    assert tp.cumsum(tp.ones([3]), 0, dtype=tp.int32).tolist() == [1, 2, 3]
    assert tp.ones([2, 2], dtype=tp.int32).cumsum(1, dtype=tp.int32).dtype == tp.int32


def test_any_and_all_give_bool_but_uint8_for_uint8() -> None:
    x = tp.tensor([[0, 2], [0, 0]], dtype=tp.uint8)
    assert tp.any(x).dtype == tp.uint8 and tp.any(x, 1).tolist() == [1, 0]
    assert tp.all(x.to(tp.int8)).dtype == tp.bool
    assert tp.any(tp.zeros([0])).item() is False and tp.all(tp.zeros([0])).item() is True
    assert tp.any(x, []).shape == (2, 2)  # an empty dim list reduces nothing


def test_norm_results_are_real_and_keep_half_precision() -> None:
    assert tp.norm(tp.ones([4], dtype=tp.complex64)).dtype == tp.float32
    assert tp.norm(tp.ones([4], dtype=tp.float16)).dtype == tp.float16
    assert tp.linalg.vector_norm(tp.ones([4]), dtype=tp.float64).dtype == tp.float64
    assert tp.norm(tp.zeros([0])).item() == 0.0


def test_allclose_and_equal_return_python_bools() -> None:
    a = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert tp.allclose(a, a + 1e-7) is True and a.allclose(a + 1) is False
    assert tp.equal(a, a.to(tp.int64)) is True  # equal promotes; allclose refuses
    assert tp.equal(a, a[0]) is False and tp.equal(f64([math.nan]), f64([math.nan])) is False
    assert tp.allclose(f64([math.nan]), f64([math.nan]), equal_nan=True) is True


def test_nelement_is_numel() -> None:
    assert tp.zeros([2, 3]).nelement() == 6 and tp.zeros([0, 3]).nelement() == 0


def test_var_mean_and_std_mean_are_tuples() -> None:
    x = f64([[1.0, 2.0], [3.0, 4.0]])
    var, mean = tp.var_mean(x, 1)
    assert var.tolist() == [0.5, 0.5] and mean.tolist() == [1.5, 3.5]
    std, mean = tp.std_mean(x, correction=0, keepdim=True)
    assert std.shape == (1, 1) and std.item() == pytest.approx(math.sqrt(1.25))


# --- gradients at PyTorch's conventions ----------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "row"),
    [
        (2, [0.6, -0.8, 0.0]),
        (1, [1.0, -1.0, 0.0]),
        (3, [0.4448513517305356, -0.7908468475209521, 0.0]),
        (0.5, [2.154700538379252, -1.8660254037844386, 0.0]),
        (math.inf, [0.0, -1.0, 0.0]),
    ],
)
def test_norm_gradient_is_zero_where_the_norm_is_zero(p: float, row: list[float]) -> None:
    needs.autograd()
    x = f64([[0.0, 0.0, 0.0], [3.0, -4.0, 0.0]], requires_grad=True)
    (g,) = tp.autograd.grad(tp.linalg.vector_norm(x, p, 1).sum(), x)
    np.testing.assert_allclose(g.numpy(), [[0.0, 0.0, 0.0], row], rtol=1e-12)


def test_cumprod_gradient_with_zeros() -> None:
    needs.autograd()
    x = f64([2.0, 0.0, 3.0, 0.0, 4.0], requires_grad=True)
    (g,) = tp.autograd.grad(x.cumprod(0).sum(), x)
    assert g.tolist() == [1.0, 8.0, 0.0, 0.0, 0.0]


def test_sort_and_topk_send_the_gradient_to_the_chosen_elements() -> None:
    needs.autograd()
    x = f64([3.0, 1.0, 2.0], requires_grad=True)
    (g,) = tp.autograd.grad((tp.topk(x, 2).values * f64([10.0, 1.0])).sum(), x)
    assert g.tolist() == [10.0, 0.0, 1.0]
    (g,) = tp.autograd.grad((tp.sort(x).values * f64([1.0, 2.0, 3.0])).sum(), x)
    assert g.tolist() == [3.0, 1.0, 2.0]
    assert tp.sort(x).indices.requires_grad is False


# --- errors: PyTorch's types and texts, naming the op ------------------------------------------


@pytest.mark.parametrize(
    ("call", "exc", "text"),
    [
        (
            lambda: tp.cumsum(tp.ones([2]), 1),
            IndexError,
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        ),
        (lambda: tp.topk(tp.ones([3]), 4), RuntimeError, "selected index k out of range"),
        (lambda: tp.topk(tp.ones([3]), -1), RuntimeError, "selected index k out of range"),
        (
            lambda: tp.topk(tp.ones([3], dtype=tp.bool), 1),
            RuntimeError,
            "topk does not support bool dtypes on CPU",
        ),
        (
            lambda: tp.sort(tp.ones([2], dtype=tp.complex64)),
            RuntimeError,
            "Sort does not support complex dtypes on CPU",
        ),
        (
            lambda: tp.median(tp.ones([2], dtype=tp.bool), 0),
            RuntimeError,
            "\"median_out\" not implemented for 'Bool'",
        ),
        (
            lambda: tp.median(tp.ones([2], dtype=tp.bool)),
            RuntimeError,
            "\"median_cpu\" not implemented for 'Bool'",
        ),
        (
            lambda: tp.median(tp.zeros([2, 0]), 1),
            IndexError,
            "median(): Expected reduction dim 1 to have non-zero size.",
        ),
        (
            lambda: tp.norm(tp.ones([2], dtype=tp.int64)),
            RuntimeError,
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
        ),
        (
            lambda: tp.linalg.vector_norm(tp.ones([2]), dtype=tp.int64),
            RuntimeError,
            "linalg.vector_norm: dtype should be floating point or complex, but got Long",
        ),
        (
            lambda: tp.norm(tp.zeros([0, 2]), math.inf),
            RuntimeError,
            "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation does not have an identity",
        ),
        (
            lambda: tp.norm(tp.zeros([0, 2]), -math.inf, 0),
            RuntimeError,
            "linalg.vector_norm cannot compute the -inf norm on the dimension 0because this dimension is empty and the operation does not have an identity",
        ),
        (
            lambda: tp.allclose(tp.ones([2]), tp.ones([2], dtype=tp.float64)),
            RuntimeError,
            "Float did not match Double",
        ),
        (
            lambda: tp.allclose(tp.ones([2]), tp.ones([2]), rtol=-1),
            RuntimeError,
            "rtol must be greater than or equal to zero, but got -1",
        ),
        (
            lambda: tp.allclose(tp.ones([2, 2]), tp.ones([3])),
            RuntimeError,
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1",
        ),
        (
            lambda: tp.count_nonzero(tp.ones([2, 2]), [0, 0]),
            RuntimeError,
            "dim 0 appears multiple times in the list of dims",
        ),
        (
            lambda: tp.any(tp.ones([2]), 1),
            IndexError,
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        ),
        (
            lambda: tp.var_mean(tp.ones([2], dtype=tp.int64)),
            RuntimeError,
            "var_mean only support floating point and complex dtypes",
        ),
        (
            lambda: tp.std_mean(tp.ones([2], dtype=tp.int64)),
            RuntimeError,
            "std_mean only support floating point and complex dtypes",
        ),
    ],
)
def test_errors(call: object, exc: type[BaseException], text: str) -> None:
    with pytest.raises(exc, match=re.escape(text)) as info:
        call()  # type: ignore[operator]
    assert "aten::" in str(info.value)
