"""In-place operations and views under autograd (issue scope 5): version counters, leaves,
views of tensors that require grad (CopySlices), and their error messages."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp

pytest.importorskip("tensorplug_autograd")


def t64(values, requires_grad=True):
    return tp.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def test_modifying_a_saved_input_is_detected():
    a = t64([1.0, 2.0])
    b = a * 1  # a non-leaf
    c = b * b  # saves b
    b.add_(1)
    with pytest.raises(
        RuntimeError,
        match=r"one of the variables needed for gradient computation has been modified by an "
        r"inplace operation: \[CPU float64 \[2\]\], which is saved by MulBackward0 .* is at "
        r"version 1; expected version 0 instead",
    ):
        c.sum().backward()


def test_modifying_a_saved_output_is_detected():
    a = t64([1.0, 2.0])
    b = a.exp()  # saves its result
    b.mul_(2)
    with pytest.raises(RuntimeError, match=r"which is output 0 of ExpBackward0, is at version 1; expected version 0"):
        b.sum().backward()


def test_modifying_an_unsaved_input_is_fine():
    a = t64([1.0, 2.0])
    b = a * 1
    c = b + 3  # add saves nothing
    b.mul_(5)
    c.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [1.0, 1.0])


def test_in_place_on_a_leaf_that_requires_grad():
    a = t64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        a.add_(1)
    with tp.no_grad():
        a.add_(1)  # fine: the optimizer's pattern
    np.testing.assert_allclose(a.detach().numpy(), [2.0, 3.0])


def test_in_place_on_a_non_leaf_rebases_history():
    x = t64([1.0, 2.0, 3.0])
    y = x * 2
    y.mul_(x)  # y = 2x * x
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.array([1.0, 2.0, 3.0]))
    assert y._version == 1


def test_in_place_with_a_value_that_requires_grad():
    w = t64([1.0, 2.0])
    buf = tp.zeros([2], dtype=tp.float64)
    buf.add_(w * 3)
    assert buf.requires_grad and not buf.is_leaf
    buf.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 3.0])


def test_in_place_on_a_view_of_a_non_leaf_copy_slices():
    x = t64([1.0, 2.0, 3.0, 4.0])
    y = x * 1
    v = y[1:3]
    v.mul_(10)
    assert y.grad_fn.name() == "CopySlices"
    (y * t64([1.0, 2.0, 3.0, 4.0], requires_grad=False)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 20.0, 30.0, 4.0])


def test_item_assignment_into_a_non_leaf():
    x = t64([1.0, 2.0, 3.0])
    w = t64([5.0])
    y = x * 2
    y[0] = w[0] * 3  # copy_ into a select view
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 2.0, 2.0])
    np.testing.assert_allclose(w.grad.numpy(), [3.0])


def test_in_place_on_a_view_then_gradient_of_the_view():
    x = t64([[1.0, 2.0], [3.0, 4.0]])
    y = x * 1
    row = y[0]
    row.add_(1)
    assert row.requires_grad and row.grad_fn is not None
    (row * row).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[4.0, 6.0], [0.0, 0.0]])


def test_in_place_on_a_view_of_a_leaf():
    x = t64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place operation"):
        x[0:1].mul_(2)


def test_in_place_on_a_view_of_a_plain_tensor_with_a_grad_value():
    base = tp.zeros([3], dtype=tp.float64)
    w = t64([1.0])
    with pytest.raises(RuntimeError, match=r"in-place operation on a view of a tensor that does not require grad .* Build the result out of place"):
        base[0:1].copy_(w * 2)


def test_version_counter_bumped_once_per_in_place_call():
    x = t64([1.0])
    y = x * 1
    v0 = y._version
    y.add_(1)
    assert y._version == v0 + 1


def test_views_taken_before_an_inplace_change_of_their_base_follow_it() -> None:
    # Note [Stale views]: the view's grad_fn is made fresh from the base's new history
    w = tp.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = w * 1
    v = x[0:2]
    x.mul_(2)
    assert v.grad_fn.next_functions[0][0].name() == "MulBackward1"  # through the mul_
    v.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0, 0.0])

    w.grad = None
    x = w * 1
    v = x[1:]
    x[0] = 5.0  # through another view of the base (CopySlices)
    (v * 3).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 3.0, 3.0])

    w.grad = None
    x = w * 1
    v = x.view([3])
    x.add_(1)
    (v * v).sum().backward()  # d/dw (w + 1)^2
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 6.0, 8.0])


def test_a_view_kept_across_optimizer_steps_stays_correct() -> None:
    # a view of a leaf kept while the leaf is updated in place under no_grad
    w = tp.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    wt = w.t()
    for _ in range(2):
        x = tp.tensor([[1.0, 1.0]])
        (x @ wt).sum().backward()
        with tp.no_grad():
            w.sub_(w.grad, alpha=0.5)
        np.testing.assert_array_equal(w.grad.numpy(), np.ones((2, 2)))
        w.grad = None
    np.testing.assert_array_equal(wt.detach().numpy(), [[0.0, 2.0], [1.0, 3.0]])  # w.t(), updated
