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
