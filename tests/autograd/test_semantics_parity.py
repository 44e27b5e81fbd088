"""Autograd semantics that PyTorch users rely on, beyond per-op formulas: the autograd.grad
API's checks, hooks (order, checks, where they run), grad modes, in-place and view rules,
custom Functions.

Each test pins down what PyTorch does in the same scenario (values from closed forms, error
messages from PyTorch's text); none imports torch.
"""

from __future__ import annotations

import pytest

import tensorplug as tp

pytest.importorskip("tensorplug_autograd")


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
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed when "
                       "materialize_grads=True, but got: allow_unused=False"):
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
    with pytest.raises(RuntimeError, match="hook 'to_double' has changed the type of value "
                       "\\(was float32 got float64\\)"):
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
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on "
                       "non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                       "require gradient"):
        tp.ones([2]).register_post_accumulate_grad_hook(lambda t: None)
