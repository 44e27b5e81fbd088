"""In-place operations and views under autograd (issue scope 5): version counters, leaves,
views of tensors that require grad (CopySlices), and their error messages."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()


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
    with pytest.raises(
        RuntimeError,
        match=r"which is output 0 of ExpBackward0, is at version 1; expected version 0",
    ):
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
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad is being used in an in-place operation",
    ):
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
    with pytest.raises(
        RuntimeError,
        match="a view of a leaf Variable that requires grad is being used in an in-place operation",
    ):
        x[0:1].mul_(2)


# --- views of plain tensors (Note [Views of plain tensors]) -----------------------------------


def test_setitem_of_a_grad_value_into_a_plain_tensor_gives_it_a_history():
    w = t64([1.0, 2.0])
    x = tp.zeros([3, 2], dtype=tp.float64)
    x[0] = w * 2  # x[0] is a view of x that recorded nothing
    assert x.requires_grad and x.grad_fn.name() == "CopySlices"
    np.testing.assert_array_equal(x.detach().numpy(), [[2.0, 4.0], [0.0, 0.0], [0.0, 0.0]])
    (x * x).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 8 * np.array([1.0, 2.0]))  # d(4 w^2)/dw


def test_in_place_ops_on_views_of_plain_tensors_against_finite_differences():
    def f(w, u):
        x = tp.zeros([4, 3], dtype=tp.float64)
        x[1] = w * 2  # select
        x[:, 2].mul_(u[0:4])  # a column: x requires grad by now, the ordinary path
        y = tp.arange(12, dtype=tp.float64).reshape([3, 4])
        y.t()[1:3].add_(x[0:2] * u[0:3])  # a transposed, sliced view of a plain tensor
        z = tp.ones([8], dtype=tp.float64)
        z[1::3].copy_(w)  # strided
        f_order = tp.ones([4, 3], dtype=tp.float64).t() * 1  # its array is column-major
        f_order[1:3, 1].mul_(u[0:2])
        return x.sum() + (y * y).sum() + (z**3).sum() + (f_order * y).sum()

    w, u = t64([0.5, -1.0, 2.0]), t64([1.5, 0.3, -0.7, 2.0])
    assert tp.autograd.gradcheck(f, (w, u))
    assert tp.autograd.gradgradcheck(f, (w, u))


def test_the_written_view_itself_gets_a_history():
    w = t64([[1.0, 2.0], [3.0, 4.0]])
    x = tp.zeros([3, 2], dtype=tp.float64)
    v = x[1:3]
    v.copy_(w)
    assert v.requires_grad and v.grad_fn is not None
    (v * 3).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.full((2, 2), 3.0))


def test_several_views_of_one_plain_tensor_taken_before_the_writes():
    w, u = t64([1.0, 2.0]), t64([3.0, 4.0])
    x = tp.zeros([2, 2], dtype=tp.float64)
    first, second = x[0], x[1]  # both recorded nothing
    first.copy_(w)
    second.copy_(u * u)  # x requires grad now; second still has no view chain
    (x * tp.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tp.float64)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])
    np.testing.assert_allclose(u.grad.numpy(), [3.0 * 2 * 3.0, 4.0 * 2 * 4.0])


def test_the_other_views_of_a_plain_base_follow_its_new_history():
    w = t64([1.0, 2.0, 3.0, 4.0])
    y = tp.zeros([12], dtype=tp.float64).reshape([3, 4])  # y is a view of the zeros
    col = y[:, 1]
    y[0] = w  # writes through a third view: y and col must follow the base
    assert y.requires_grad and col.requires_grad
    ((y * 2).sum() + (col * col).sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 2.0 + 2 * 2.0, 2.0, 2.0])


def test_the_views_of_a_plain_tensor_written_in_place_follow_it():
    w = t64([1.0, 2.0, 3.0])
    x = tp.ones([2, 3], dtype=tp.float64)
    row = x[1]
    x.mul_(w)
    assert row.requires_grad
    (row * row).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.array([1.0, 2.0, 3.0]))


def test_views_are_looked_for_only_when_the_base_has_others(monkeypatch):
    from tensorplug import storage

    scans = []
    real = storage.views_of
    monkeypatch.setattr(storage, "views_of", lambda base: scans.append((base,)) or real(base))
    w = t64([1.0, 2.0])
    buf = tp.zeros([3, 2], dtype=tp.float64)
    buf[0] = w  # the only view of buf is the one written
    acc = tp.zeros([2], dtype=tp.float64)
    acc.zero_()
    acc.add_(w)  # written in place before, but never viewed
    assert scans == []
    buf = tp.zeros([3, 2], dtype=tp.float64)
    held = buf[2]
    buf[0] = w
    # one scan for buf's views
    assert [objs for objs in scans if objs[0] is buf] == [(buf,)] and held.requires_grad


def test_writing_a_grad_value_into_an_expanded_plain_tensor_is_refused():
    w = t64([1.0, 2.0, 3.0])
    x = tp.zeros([1], dtype=tp.float64)
    with pytest.raises(
        RuntimeError,
        match=r"aten::copy_.default: in-place operation on a view of a tensor that does not "
        r"require grad \(base of shape \[1\]\), with an argument that requires grad: "
        r"tensorplug-autograd cannot make the base part of the graph, because several elements "
        r"of the view are one element of the base\. Build the result out of place instead",
    ):
        x.expand([3]).copy_(w)
    assert x._version == 0 and not x.requires_grad  # nothing happened


def test_views_whose_place_in_the_base_cannot_be_worked_out_are_refused():
    # the first two do not arise through the cpu plugin's public API; a backend's kernels could
    # make them
    w = t64([1.0, 2.0])
    gappy = tp.zeros([2, 2], dtype=tp.float64)
    gappy._data = np.zeros((4, 2))[::2]  # a root whose array skips every other row
    with pytest.raises(
        RuntimeError,
        match=r"because the base does not fill its memory densely \(it has gaps or overlaps; a view of base\.contiguous\(\) would do\)\. Build the result out of place",
    ):
        gappy[0].copy_(w)
    base = tp.zeros([4], dtype=tp.float64)
    halves = base._alias(base._data.view(np.float32), tp.float32)  # a dtype reinterpretation
    with pytest.raises(RuntimeError, match="because the view reinterprets the base's dtype"):
        halves[0:2].copy_(w.float())
    scalar = tp.zeros([], dtype=tp.float64)
    with pytest.raises(
        RuntimeError,
        match=r"because the base is 0-dimensional\. Build the result out of place instead \(tp\.cat, tp\.stack, tp\.where, index_put\)\.$",
    ):
        scalar.unsqueeze(0).copy_(w[0:1])


def test_a_view_of_a_leaf_taken_under_no_grad_is_refused():
    w = t64([1.0, 2.0])
    with tp.no_grad():
        leaf = tp.zeros([3], dtype=tp.float64, requires_grad=True)
        v = leaf[0:2]  # taken under no_grad: as in PyTorch, its own message
    with pytest.raises(
        RuntimeError, match="A view was created in no_grad mode and is being modified inplace"
    ):
        v.mul_(w)


def test_version_counter_bumped_once_per_in_place_call():
    x = t64([1.0])
    y = x * 1
    v0 = y._version
    y.add_(1)
    assert y._version == v0 + 1
    # under no_grad the ADInplaceOrView kernel runs alone (an SGD update): the dispatcher's
    # call bumps, once, a leaf and a view of it alike (they share the counter)
    w = t64([1.0, 2.0])
    w.requires_grad_()
    view = w[0:1]
    with tp.no_grad():
        w.sub_(t64([1.0, 1.0]), alpha=0.5)
        assert w._version == 1 and view._version == 1
        view.mul_(2)
        w.add_(t64([1.0, 1.0]))
    assert w._version == 3
    np.testing.assert_array_equal(w.detach().numpy(), [2.0, 2.5])


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


# --- Note [The ADView key] --------------------------------------------------------------------


def _has_adview(t) -> bool:
    return "ADView" in tp.keys.DispatchKeySet(t._tp_keyset).names()


def test_exactly_the_tensors_with_view_information_carry_adview():
    w = t64([1.0, 2.0, 3.0, 4.0])
    assert not _has_adview(w) and not _has_adview(w * 1)  # a parameter, a result
    assert _has_adview(w[1:3]) and _has_adview(w[1:3][0:1])  # views, views of views
    assert all(_has_adview(p) for p in (w * 1).split(2))
    with tp.no_grad():
        v = w.view([2, 2])  # recorded under no_grad, refused later
        plain = tp.zeros([2, 2], dtype=tp.float64)
    assert _has_adview(v) and not v.requires_grad
    assert not _has_adview(plain[0])  # a view of a plain tensor records nothing
    row = plain[1]
    row.copy_(w[0:2] * 2)  # until it is written with a value that requires grad
    assert _has_adview(row) and row.grad_fn is not None
    v.requires_grad_(False)  # a leaf: drops its autograd keys, ADView with them
    assert v._tp_keyset == tp.keys.tensor_keyset("CPU")
    assert not _has_adview(w[1:3].detach())

    class Same(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    assert _has_adview(Same.apply(w * 1))  # an input returned as is: a view (as PyTorch's)


def test_an_in_place_op_on_a_parameter_under_no_grad_calls_the_backend_kernel():
    from tensorplug.dispatch import local_state

    op = tp.ops.aten.sub_.Tensor
    w = t64([1.0, 2.0])
    backend = op.kernel_for(tp.keys.tensor_keyset("CPU") & local_state.masks.nexc)
    with tp.no_grad():
        m = local_state.masks
        assert op.kernel_for((w._tp_keyset | m.inc) & m.nexc) is backend
        assert op.kernel_for((w[0:1]._tp_keyset | m.inc) & m.nexc) is not backend  # a view


def _sgd(p, g):
    with tp.no_grad():
        p.sub_(g, alpha=0.5)


def _no_grad_view(p, g):
    with tp.no_grad():
        p[0:2].sub_(g[0:2], alpha=0.5)


def _view_as_other(p, g):
    with tp.no_grad():
        p.sub_(g.view([4]), alpha=0.5)  # only the other argument carries ADView


def _out_into_a_view(p, g):
    with tp.no_grad():
        tp.sub(p, g, alpha=0.5, out=p.view([2, 2]).view([4]))


def _redispatch(p, g):
    with tp.no_grad():
        tp.ops.aten.sub_.Tensor.redispatch(tp.keys.tensor_keyset("CPU"), p, g, alpha=0.5)


@pytest.mark.parametrize(
    "path",
    [_sgd, _no_grad_view, _view_as_other, _out_into_a_view, _redispatch],
)
def test_version_counters_bump_once_per_call_through_every_path(path):
    p = t64([1.0, 2.0, 3.0, 4.0])
    g = t64([2.0, 2.0, 2.0, 2.0])
    view = p[1:2]  # shares the counter
    v0, g0 = p._version, g._version
    path(p, g)
    assert (p._version, view._version, g._version) == (v0 + 1, v0 + 1, g0)
    expected = [0.0, 1.0, 3.0, 4.0] if path is _no_grad_view else [0.0, 1.0, 2.0, 3.0]
    np.testing.assert_array_equal(p.detach().numpy(), expected)


@pytest.mark.parametrize("what", ["non_leaf", "view_of_non_leaf"])
def test_an_in_place_op_with_grad_bumps_the_written_tensor_once(what):
    x = t64([1.0, 2.0, 3.0, 4.0])
    y = x * 1
    target = y if what == "non_leaf" else y[0:2]
    v0 = y._version
    target.sub_(t64([1.0] * target.numel()), alpha=0.5)  # with a value that requires grad
    assert y._version == target._version == v0 + 1
    assert y.grad_fn.name() == ("SubBackward0" if what == "non_leaf" else "CopySlices")
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0, 1.0])


def test_a_function_alias_refuses_in_place_changes_under_no_grad_too():
    class Same(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    y = Same.apply(t64([1.0, 2.0]) * 1)
    with tp.no_grad():
        with pytest.raises(
            RuntimeError,
            match="aten::add_.Scalar: an output of Same is a view and is being modified inplace",
        ):
            y.add_(1)


def test_copy_slices_after_sgd_steps_against_finite_differences():
    # views and in-place ops of a parameter updated under no_grad, through every kind of path
    def f(w, u):
        y = w * 1
        y[1:3].mul_(u[0:2])  # CopySlices
        z = (w * 2).reshape([2, 2])
        z[:, 0].add_(u[0:2])  # a strided view
        z.t()[1].mul_(u[2:4])  # a view of a view
        return (y * y).sum() + (z**3).sum()

    w, u = t64([0.5, -1.0, 2.0, 1.5]), t64([1.5, 0.3, -0.7, 2.0])
    for _ in range(2):
        f(w, u).backward()
        with tp.no_grad():
            w.sub_(w.grad, alpha=0.01)
            u[0:2].sub_(u.grad[0:2], alpha=0.01)  # a view of a leaf, written under no_grad
        w.grad = u.grad = None
        assert tp.autograd.gradcheck(f, (w, u))
        assert tp.autograd.gradgradcheck(f, (w, u))


def test_in_place_fast_kernel_on_a_non_view_with_history_against_numpy():
    # Note [In-place fast kernel]: add_, relu_ (saves its result) and addcmul_ (saves its
    # other arguments) on a non-leaf that is no view; one version bump per call; the gradient
    # against numpy's derivative of the same chain
    xs = np.array([-1.5, -0.25, 0.5, 2.0])
    zs = np.array([0.5, -2.0, 1.5, 3.0])
    x, z = t64(xs), t64(zs)
    y = x * 2.0
    v = y._version
    y.add_(1.0)
    y.addcmul_(z, z, value=0.5)
    y.relu_()
    assert y._version == v + 3
    assert y.grad_fn.name() == "ReluBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "AddcmulBackward0"
    (y * y).sum().backward()
    pre = 2 * xs + 1 + 0.5 * zs * zs
    out = np.maximum(pre, 0)
    np.testing.assert_allclose(x.grad.numpy(), 2 * out * (pre > 0) * 2)
    np.testing.assert_allclose(z.grad.numpy(), 2 * out * (pre > 0) * zs)


def test_in_place_fast_kernel_keeps_the_saved_value_checks():
    # a saved result written again, and an argument that is the written tensor itself, are
    # caught as the generic kernel catches them (PyTorch's "modified by an inplace operation")
    x = t64([1.0, -2.0, 3.0])
    y = x * 1.0
    y.relu_()  # saves its result, at version 1
    y.add_(1.0)  # writes it: version 2
    with pytest.raises(RuntimeError, match=r"which is output 0 of ReluBackward0, is at version 2"):
        y.sum().backward()
    y = x * 1.0
    w = t64([1.0, 1.0, 1.0])
    y.addcmul_(y, w)  # tensor1 is y, read before the write
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*expected version 0"):
        y.sum().backward()


def test_in_place_fast_kernel_leaves_leaves_and_views_to_the_generic_kernel():
    x = t64([1.0, 2.0])
    with pytest.raises(
        RuntimeError, match=r"aten::add_.Scalar: a leaf Variable that requires grad"
    ):
        x.add_(1.0)
    y = x * 1.0
    y[0:1].mul_(3.0)  # a view of y: CopySlices
    assert y.grad_fn.name() == "CopySlices"
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 1.0]
