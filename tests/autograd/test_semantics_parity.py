"""Autograd semantics that PyTorch users rely on, beyond per-op formulas: the autograd.grad
API's checks, hooks (order, checks, where they run), grad modes, in-place and view rules,
custom Functions.

Each test pins down what PyTorch does in the same scenario (values from closed forms, error
messages from PyTorch's text); none imports torch.
"""

from __future__ import annotations

import pytest

import tensorplug as tp
from tests import needs

needs.autograd()


def vec(*values: float) -> tp.Tensor:
    return tp.tensor(list(values), requires_grad=True)


def values(t: tp.Tensor | None) -> list[float]:
    assert t is not None
    return [float(v) for v in t.tolist()]


# --- autograd.grad and backward -------------------------------------------------------------


def test_unused_input_message_names_its_index():
    x, z = vec(1.0, 2.0), vec(1.0, 2.0)
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to not"):
        tp.autograd.grad((x * x).sum(), [x, z])


def test_materialize_grads_refuses_allow_unused_false():
    x = vec(1.0, 2.0)
    with pytest.raises(
        ValueError,
        match="Expected allow_unused to be True or not passed when "
        "materialize_grads=True, but got: allow_unused=False",
    ):
        tp.autograd.grad((x * x).sum(), [x], allow_unused=False, materialize_grads=True)


def test_backward_with_empty_inputs_message():
    x = vec(1.0, 2.0)
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be empty"):
        (x * 2).sum().backward(inputs=[])


# --- hooks ----------------------------------------------------------------------------------


def test_retained_grad_is_the_gradient_after_every_hook_whenever_registered():
    # m = 2x; d(sum m)/dm = 1, the hook makes it 10, whether registered before or after
    for hook_first in (True, False):
        x = vec(1.0, 2.0)
        m = x * 2
        if hook_first:
            m.register_hook(lambda g: g * 10)
            m.retain_grad()
        else:
            m.retain_grad()
            m.register_hook(lambda g: g * 10)
        m.sum().backward()
        assert values(m.grad) == [10.0, 10.0]
        assert values(x.grad) == [20.0, 20.0]


@pytest.mark.parametrize("leaf", [True, False])
def test_a_hook_that_changes_the_shape_is_refused(leaf):
    x = vec(1.0, 2.0)
    t = x if leaf else x * 2
    t.register_hook(lambda g: tp.ones([3]))
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the size of value"):
        (t * 3).sum().backward()
    assert x.grad is None


@pytest.mark.parametrize("leaf", [True, False])
def test_a_hook_that_changes_the_dtype_is_refused(leaf):
    x = vec(1.0, 2.0)
    t = x if leaf else x * 2

    def to_double(g):
        return g.to(tp.float64)

    t.register_hook(to_double)
    with pytest.raises(
        RuntimeError,
        match="hook 'to_double' has changed the type of value \\(was float32 got float64\\)",
    ):
        (t * 3).sum().backward()


def test_leaf_hooks_run_on_the_gradient_autograd_grad_returns():
    # PyTorch runs a leaf's tensor hooks on the gradient captured for it, and returns their
    # result: d(sum x²)/dx = 2x, doubled by the hook
    x = vec(1.0, 2.0)
    seen = []
    x.register_hook(lambda g: seen.append(values(g)) or g * 2)
    (g,) = tp.autograd.grad((x * x).sum(), x)
    assert seen == [[2.0, 4.0]]
    assert values(g) == [4.0, 8.0]
    assert x.grad is None


def test_leaf_hooks_run_once_for_backward_with_inputs():
    x, z = vec(1.0, 2.0), vec(3.0, 4.0)
    calls = []
    x.register_hook(lambda g: calls.append(1) or g * 2)
    (x * z).sum().backward(inputs=[x])
    assert calls == [1]
    assert values(x.grad) == [6.0, 8.0]
    assert z.grad is None


def test_post_hooks_of_an_accumulate_grad_node_run():
    x = vec(1.0, 2.0)
    y = x * 3
    acc = y.grad_fn.next_functions[0][0]
    seen = []
    acc.register_hook(lambda gi, go: seen.append((gi, [values(g) for g in go])))
    y.sum().backward()
    assert seen == [((), [[3.0, 3.0]])]


def test_post_accumulate_grad_hook_sees_the_accumulated_grad():
    x = vec(1.0, 2.0)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(values(t.grad)))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0], [6.0, 6.0]]
    handle.remove()
    (x * 3).sum().backward()
    assert len(seen) == 2
    tp.autograd.grad((x * 3).sum(), x)  # autograd.grad accumulates nothing: no call
    assert len(seen) == 2


def test_post_accumulate_grad_hook_refuses_non_leaves():
    x = vec(1.0, 2.0)
    with pytest.raises(
        RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"
    ):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(
        RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"
    ):
        tp.ones([2]).register_post_accumulate_grad_hook(lambda t: None)


# --- in-place ops and views -----------------------------------------------------------------


@pytest.mark.parametrize("op", ["mul_", "div_"])
def test_an_in_place_op_reading_its_own_output_raises_the_version_error(op):
    # y.mul_(y) saves y to differentiate, then overwrites it: PyTorch refuses to go on with
    # the new values (tensorplug used to give x.grad == [2, 6] for x == [1, 2])
    x = vec(1.0, 2.0)
    y = x * 1
    getattr(y, op)(y)
    with pytest.raises(
        RuntimeError,
        match="modified by an inplace operation: .* is at version 1; expected version 0 instead",
    ):
        y.sum().backward()


def test_an_in_place_op_on_an_alias_it_does_not_save_gives_its_gradient():
    x = vec(1.0, 2.0)
    y = x * 1
    y.add_(y)  # y = 2 y: d/dx = 2, nothing saved
    y.sum().backward()
    assert values(x.grad) == [2.0, 2.0]


_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled"
)


@pytest.mark.parametrize("leaf", [True, False])
def test_a_view_taken_under_no_grad_refuses_in_place_changes_with_grad_mode_on(leaf):
    x = vec(1.0, 2.0, 3.0)
    y = x if leaf else x * 1
    with tp.no_grad():
        v = y[:2]
    with pytest.raises(RuntimeError, match=_NO_GRAD_VIEW):
        v.mul_(2)
    with pytest.raises(RuntimeError, match=_NO_GRAD_VIEW):
        v.mul_(vec(2.0, 2.0))  # through the autograd kernel
    with pytest.raises(RuntimeError, match=_NO_GRAD_VIEW):
        v[:1].mul_(2)  # a view of it (taken with grad mode on) too
    with tp.no_grad():  # under no_grad, as in PyTorch, it may be written
        v.mul_(2)
    assert values(y) == [2.0, 4.0, 3.0]


def test_detach_is_not_a_view_for_autograd():
    # writing a value that requires grad into a detached tensor gives it a history of its own;
    # the tensor it was detached from keeps its history (it used to get a CopySlices node)
    x, w = vec(1.0, 2.0), vec(3.0, 4.0)
    y = x * 1
    y_history = y.grad_fn
    d = y.detach()
    d.mul_(w)
    assert d.requires_grad and d.grad_fn.name().startswith("MulBackward")
    assert y.grad_fn is y_history
    y.sum().backward()
    assert values(x.grad) == [1.0, 1.0]
    d.sum().backward()
    assert values(w.grad) == [1.0, 2.0]
    leaf = vec(1.0, 2.0)
    e = leaf.detach()
    e.copy_(w)  # a leaf's detached alias may be written with a value that requires grad
    assert e.grad_fn is not None and leaf.is_leaf
    assert leaf._version == 1  # the data and the version counter are still shared


def test_outputs_of_split_may_be_written_in_place():
    # PyTorch refuses this; here each piece replays its own part of the split, and the
    # gradient is right: y = [2, 4, 3, 4], d(sum y²)/dx = 2 y * [2, 2, 1, 1]
    x = vec(1.0, 2.0, 3.0, 4.0)
    y = x * 1
    a, _ = y.split(2)
    a.mul_(2)
    (y * y).sum().backward()
    assert values(x.grad) == [8.0, 16.0, 6.0, 8.0]


# --- custom Functions -----------------------------------------------------------------------

_FUNCTION_VIEW = (
    "is a view and is being modified inplace. This view was created inside a custom Function"
)


def test_a_view_returned_by_a_function_refuses_in_place_changes():
    class Head(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:1]

        @staticmethod
        def backward(ctx, g):
            return tp.cat([g * 100, tp.zeros([1])])

    x = vec(1.0, 2.0)
    y = Head.apply(x * 1)
    with pytest.raises(RuntimeError, match="an output of Head " + _FUNCTION_VIEW):
        y.mul_(2)  # a CopySlices would go around Head's backward
    with pytest.raises(RuntimeError, match=_FUNCTION_VIEW):
        y[:1].mul_(2)
    y.sum().backward()
    assert values(x.grad) == [100.0, 0.0]


def test_an_input_returned_as_is_refuses_in_place_changes():
    class Same(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = vec(1.0, 2.0)
    a = x * 1
    y = Same.apply(a)
    assert y is not a and y.grad_fn.name() == "SameBackward"
    with pytest.raises(RuntimeError, match=_FUNCTION_VIEW):
        y.add_(1)
    y.sum().backward()
    assert values(x.grad) == [5.0, 5.0]


def test_mark_dirty_refuses_a_leaf_that_requires_grad():
    class Double(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = vec(1.0, 2.0)
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad has been used in an in-place operation",
    ):
        Double.apply(x)  # (after the forward ran: x is now [2, 4], as in PyTorch)
    x = vec(1.0, 2.0)
    a = x * 1
    y = Double.apply(a)  # a non-leaf is fine: it becomes the output
    assert y is a and y.grad_fn.name() == "DoubleBackward"
    (y * y).sum().backward()
    assert values(x.grad) == [8.0, 16.0]  # d(4x²)/dx


def test_mark_dirty_of_a_tensor_not_returned_is_refused():
    class Hidden(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with pytest.raises(
        RuntimeError,
        match="Some elements marked as dirty during the forward method were not returned as output",
    ):
        Hidden.apply(vec(1.0, 2.0) * 1)


def test_save_for_backward_names_the_argument_that_is_not_a_tensor():
    class Saves(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    # it used to fail comparing tensors while looking for the argument's position
    with pytest.raises(
        TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"
    ):
        Saves.apply(vec(1.0, 2.0))


# --- grad modes and .data -------------------------------------------------------------------


def test_grad_mode_classes_decorate_without_parentheses():
    x = vec(1.0, 2.0)

    @tp.no_grad
    def frozen(t):
        return t * 2

    @tp.enable_grad
    def recorded(t):
        return t * 2

    @tp.inference_mode
    def inferred(t):
        return t * 2

    assert frozen.__name__ == "frozen"
    assert not frozen(x).requires_grad and not inferred(x).requires_grad
    with tp.no_grad():
        assert recorded(x).requires_grad
    assert tp.is_grad_enabled()


@pytest.mark.parametrize(
    "mode, inside",
    [(tp.no_grad, False), (tp.enable_grad, True), (lambda: tp.set_grad_enabled(False), False)],
)
def test_a_decorated_generator_runs_each_step_in_the_mode(mode, inside):
    seen = []

    @mode()
    def steps():
        try:
            sent = yield tp.is_grad_enabled()
            seen.append((sent, tp.is_grad_enabled()))
            while True:
                try:
                    yield tp.is_grad_enabled()
                except ValueError:
                    seen.append(("thrown", tp.is_grad_enabled()))
        finally:
            seen.append(("closed", tp.is_grad_enabled()))

    outer = not inside
    with tp.set_grad_enabled(outer):
        g = steps()
        assert next(g) is inside
        assert tp.is_grad_enabled() is outer  # the caller's mode between steps
        assert g.send(5) is inside
        assert g.throw(ValueError("x")) is inside
        g.close()
        assert tp.is_grad_enabled() is outer
    assert seen == [(5, inside), ("thrown", inside), ("closed", inside)]
    assert tp.is_grad_enabled()


def test_a_decorated_generator_gives_its_return_value():
    @tp.no_grad()
    def counted():
        yield 1
        return "done"

    def outer():
        result = yield from counted()
        return result

    gen = outer()
    assert next(gen) == 1
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert stop.value.value == "done"


def test_writes_through_data_do_not_invalidate_saved_tensors():
    # .data has a version counter of its own, as in PyTorch (old optimizer code writes
    # p.data in place between forward and backward)
    x, w = vec(1.0, 2.0), vec(3.0, 4.0)
    y = (x * w).sum()  # saves x and w
    x.data.mul_(10)
    assert x._version == 0
    y.backward()
    assert values(w.grad) == [10.0, 20.0]  # the saved x is the same memory
    assert values(x.grad) == [3.0, 4.0]


def test_autograd_grad_of_one_output_given_twice_sums_both():
    x = vec(1.0, 2.0)
    y = (x * x).sum()
    (g,) = tp.autograd.grad([y, y], x, retain_graph=True)  # it used to report x as unused
    assert values(g) == [4.0, 8.0]
    tp.autograd.backward([y, y], inputs=[x])
    assert values(x.grad) == [4.0, 8.0]


def test_once_differentiable_backward_records_nothing():
    class Square(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @tp.autograd.function.once_differentiable
        def backward(ctx, g):
            assert not tp.is_grad_enabled()
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = vec(1.0, 2.0)
    (g,) = tp.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert values(g) == [2.0, 4.0]
    assert not g.requires_grad and g.grad_fn is None
    with pytest.raises(
        RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"
    ):
        g.sum().backward()


def test_one_gradient_per_output():
    x = tp.ones([2], requires_grad=True)
    y1, y2 = x * 2, x * 3
    with pytest.raises(
        RuntimeError, match="got 2 tensors and 1 gradients: give one gradient per output"
    ):
        tp.autograd.grad([y1, y2], x, grad_outputs=[tp.ones([2])])
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        tp.autograd.backward([y1, y2], grad_tensors=[tp.ones([2])])
    (g,) = tp.autograd.grad([y1, y2], x, grad_outputs=[tp.ones([2]), tp.ones([2])])
    assert g.tolist() == [5.0, 5.0]
