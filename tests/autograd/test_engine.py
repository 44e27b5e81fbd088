"""The autograd engine and the Tensor API: graphs, backward, autograd.grad, hooks, grad modes.

Gradients are checked against closed forms or central finite differences in float64.
"""

from __future__ import annotations

import functools
import re
import threading
import weakref
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()

from tensorplug_autograd.accumulate import AccumulateGrad  # noqa: E402
from tensorplug_autograd.codegen import takes_positionally  # noqa: E402


def t64(values, requires_grad=True):
    return tp.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def numeric_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


# --- graph structure -------------------------------------------------------------------------


def test_plain_tensors_carry_no_autograd_key_and_record_nothing():
    a, b = tp.ones([2]), tp.ones([2])
    c = a * b + 1
    assert not c.requires_grad and c.grad_fn is None and c.is_leaf
    assert "AutogradCPU" not in tp.keys.DispatchKeySet(c._tp_keyset).names()
    x = tp.ones([2], requires_grad=True)
    assert "AutogradCPU" in tp.keys.DispatchKeySet(x._tp_keyset).names()
    assert tp.dispatcher.dispatch_table("aten::mul.Tensor")["AutogradCPU"] == "Autograd"
    # views of tensors that require grad pass through ADInplaceOrView; in-place ops on the
    # views recorded there pass through ADView (Note [The ADView key])
    assert "ADInplaceOrView" in tp.keys.DispatchKeySet(x._tp_keyset).names()
    assert "ADInplaceOrView" not in tp.keys.DispatchKeySet(a._tp_keyset).names()
    assert "ADView" not in tp.keys.DispatchKeySet(x._tp_keyset).names()
    assert {"ADInplaceOrView", "ADView"} <= set(tp.keys.DispatchKeySet(x[0:1]._tp_keyset).names())
    assert (
        tp.dispatcher.dispatch_table("aten::transpose.int")["ADInplaceOrView"] == "ADInplaceOrView"
    )
    assert tp.dispatcher.dispatch_table("aten::transpose.int")["ADView"] == "fallthrough"
    assert tp.dispatcher.dispatch_table("aten::add_.Tensor")["ADInplaceOrView"] == "fallthrough"
    assert tp.dispatcher.dispatch_table("aten::add_.Tensor")["ADView"] == "ADView"
    assert tp.dispatcher.dispatch_table("aten::add.out")["ADView"] == "fallthrough"
    assert tp.dispatcher.dispatch_table("aten::add.Tensor")["ADInplaceOrView"] == "fallthrough"
    x.requires_grad_(False)
    assert x._tp_keyset == a._tp_keyset


def test_grad_fn_names_and_next_functions():
    a = t64([1.0, 2.0])
    b = t64([3.0, 4.0])
    c = a * b
    assert c.grad_fn.name() == "MulBackward0"
    assert (a * 2.0).grad_fn.name() == "MulBackward1"
    assert repr(c).endswith("grad_fn=<MulBackward0>)")
    assert repr(a).endswith("requires_grad=True)")
    (na, ia), (nb, ib) = c.grad_fn.next_functions
    assert isinstance(na, AccumulateGrad) and na.variable is a and ia == 0
    assert isinstance(nb, AccumulateGrad) and nb.variable is b
    d = c.sum()
    assert d.grad_fn.next_functions[0][0] is c.grad_fn
    assert not c.is_leaf and a.is_leaf
    # a leaf keeps one accumulator for all its uses
    assert (a + 1).grad_fn.next_functions[0][0] is na


def test_recorded_output_key_set_and_edges_of_mixed_inputs():
    # the fast kernel tests each input's Autograd bits once, takes the output's key set from a
    # cache (M.with_ag), and sets the input metadata only for inputs with an edge
    x = tp.ones([2], requires_grad=True)
    p = tp.ones([2])
    for _ in range(2):  # the second output's key set comes from what the first one cached
        y = tp.add(p, x)
        assert y._tp_keyset == x._tp_keyset and y.requires_grad
        (n0, i0), (n1, i1) = y.grad_fn.next_functions
        assert n0 is None and i0 == 0 and isinstance(n1, AccumulateGrad) and i1 == 0
    z = tp.ones([3, 1], requires_grad=True)
    w = tp.add(tp.ones([3, 2]), z)  # broadcast: z's gradient is reduced to z's shape
    assert w.grad_fn.next_functions[0] == (None, 0)
    assert w.grad_fn._input_meta == (None, ((3, 1), z.dtype, z.device))
    w.sum().backward()
    assert z.grad.shape == (3, 1) and z.grad.tolist() == [[2.0], [2.0], [2.0]]
    assert tp.add(z, z).grad_fn.next_functions[0] == tp.add(z, z).grad_fn.next_functions[1]


def test_autograd_meta_is_made_without_python_code_and_defaults_every_field():
    # Note [Autograd state of a tensor]: the recording makes an output's meta with
    # AutogradMeta() and stores grad_fn alone
    from tensorplug_autograd.meta import AutogradMeta, set_history

    assert AutogradMeta.__init__ is object.__init__ and AutogradMeta.__new__ is object.__new__
    m = AutogradMeta()
    assert m.grad_fn is None and m.output_nr == 0 and m.grad is None and m.acc is None
    assert m.hooks is None and m.view is None
    assert not m.retains_grad
    x = tp.ones([2], requires_grad=True)
    y = x * 2.0
    assert x.tp_autograd is None or x.tp_autograd.grad_fn is None
    assert y.tp_autograd.grad_fn is y.grad_fn and y.tp_autograd.output_nr == 0
    t = tp.ones([2])
    set_history(t, y.grad_fn, 1)  # a fresh meta, then one that exists
    assert (t.tp_autograd.grad_fn, t.tp_autograd.output_nr) == (y.grad_fn, 1) and t.requires_grad
    set_history(t, x.grad_fn or y.grad_fn, 0)
    assert t.tp_autograd.output_nr == 0


def test_a_leaf_adds_one_edge_tuple_to_every_node_that_uses_it():
    # Note [Graph edges]: the (accumulator, 0) edge is made once per leaf, with the
    # accumulator, by the fast kernels (add, mul) and the generic recording (cat) alike
    from tensorplug_autograd.accumulate import leaf_edge

    x = tp.ones([2], requires_grad=True)
    e = tp.add(x, 1.0).grad_fn.next_functions[0]
    assert isinstance(e[0], AccumulateGrad) and e[1] == 0
    assert tp.mul(x, x).grad_fn.next_functions == (e, e)
    assert tp.cat([x, x]).grad_fn.next_functions == (e, e)
    assert leaf_edge(x) is e and x.tp_autograd.acc is e[0]
    y = tp.ones([2], requires_grad=True)  # no meta yet: leaf_edge makes it
    assert y.tp_autograd is None or y.tp_autograd.acc is None
    assert tp.mul(x, y).grad_fn.next_functions[1] is leaf_edge(y)
    (tp.add(x, y) * tp.mul(x, y)).sum().backward()  # d/dx (x+y)xy = 2xy + y^2
    assert x.grad.tolist() == [3.0, 3.0] and y.grad.tolist() == [3.0, 3.0]


def test_a_leaf_keeps_its_input_metadata_while_its_data_is_the_same_array():
    # Note [Graph edges]: the (shape, dtype, device) of a leaf is made once per array; an
    # in-place update keeps it, new data (x.data = ...) makes it again, and the engine
    # reduces each gradient to the shape recorded when its node was made
    x = tp.ones([3], requires_grad=True)
    b = tp.ones([2, 3])
    n1 = tp.add(x, b).grad_fn
    n2 = tp.add(x, b).grad_fn
    assert n1._input_meta[0] == ((3,), x.dtype, x.device)
    assert n2._input_meta[0] is n1._input_meta[0]
    with tp.no_grad():
        x.mul_(2.0)  # the same array
    assert tp.add(x, b).grad_fn._input_meta[0] is n1._input_meta[0]
    tp.add(x, b).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    x.data = tp.ones([2, 1])
    y = tp.add(x, b)
    assert y.grad_fn._input_meta[0] == ((2, 1), x.dtype, x.device)
    x.grad = None
    y.sum().backward()
    assert x.grad.tolist() == [[3.0], [3.0]]
    x.data = tp.ones([2, 1], dtype=tp.float64)
    z = tp.add(x, b)
    assert z.grad_fn._input_meta[0] == ((2, 1), tp.float64, x.device)
    x.grad = None
    z.sum().backward()
    assert x.grad.dtype == tp.float64 and x.grad.tolist() == [[3.0], [3.0]]


def test_a_node_that_saves_only_default_arguments_shares_one_args_tuple():
    # add and sub save no tensor: with alpha at its default their nodes take one tuple made
    # once; another alpha gets its own, and each gradient follows its node's alpha
    x = tp.ones([2], requires_grad=True)
    b = tp.ones([2])
    n1, n2 = tp.add(x, b).grad_fn, tp.add(b, x).grad_fn
    assert n1._args is n2._args
    n3 = tp.add(b, x, alpha=3).grad_fn
    assert n3._args is not n1._args and n3._args[2] == 3
    for alpha, want in ((1, 1.0), (3, 3.0), (0.5, 0.5), (-2, -2.0)):
        x.grad = None
        tp.sub(b, x, alpha=alpha).sum().backward()
        assert x.grad.tolist() == [-want, -want]
        x.grad = None
        tp.add(b, x, alpha=alpha).sum().backward()
        assert x.grad.tolist() == [want, want]


def test_fast_kernel_per_key_set_follows_tracing_and_registrations():
    # Note [Per-key-set kernels]: the Autograd kernel of add binds the CPU kernel for its key
    # set; tracing and a registration below autograd each make it again
    from tensorplug import dispatcher

    rng = np.random.default_rng(3)
    an, bn = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    results = []
    for traced in (False, True, False):
        a, b = t64(an), t64(bn, requires_grad=False)
        lines: list[str] = []
        if traced:
            with dispatcher.tracing(lines.append):
                y = tp.mul(a, b)
            # the trace shows the redispatch below autograd, as before the kernel was bound
            assert "-> AutogradCPU" in lines[0] and "redispatch aten::mul.Tensor" in lines[1]
            assert "-> CPU" in lines[1]
        else:
            y = tp.mul(a, b)
        y.sum().backward()
        results.append((y.detach().numpy().tobytes(), a.grad.numpy().tobytes()))
    assert results[0] == results[1] == results[2]
    np.testing.assert_array_equal(np.frombuffer(results[0][1]).reshape(2, 3), bn)
    cpu = tp.ops.aten.mul.Tensor.kernel_for(tp.keys.keyset("CPU"))
    seen = []

    def counting(self, other):
        seen.append(1)
        return cpu(self, other)

    a = t64(an)
    tp.mul(a, t64(bn, requires_grad=False))  # the entry of a's key set is made
    with tp.Library("aten", "IMPL") as lib:
        lib.impl("mul.Tensor", counting, "CPU", override=True)
        y = tp.mul(a, t64(bn, requires_grad=False))
        assert seen == [1] and y.grad_fn is not None  # the new kernel, below autograd
    tp.mul(a, t64(bn, requires_grad=False))
    assert seen == [1]  # closed: the old kernel again


def test_kernel_below_autograd_gets_keyword_only_arguments_by_position_if_it_takes_them():
    # Note [Positional calls below autograd]: the fast kernel passes alpha by position to a
    # kernel whose positional parameters are the schema's arguments, else by keyword
    names = ("self", "other", "alpha")
    tp.ones(1)  # the CPU kernels register on first use (Note [Lazy backends]): stubs until then
    cpu = tp.ops.aten.add.Tensor.kernel_for(tp.keys.keyset("CPU"))
    assert takes_positionally(cpu, names)  # the array kit's binary kernel

    # calling the CPU kernel, they dispatch nothing: bound as they are, with no guard around
    @tp.library.mark_no_dispatch
    def by_position(self, other, alpha=1, /):  # a keyword call raises TypeError
        seen.append(("position", alpha))
        return cpu(self, other, alpha)

    @tp.library.mark_no_dispatch
    def by_keyword(self, other, *, alpha=1):  # a positional call raises TypeError
        seen.append(("keyword", alpha))
        return cpu(self, other, alpha=alpha)

    def longer(self, other, alpha=1, beta=0):
        return cpu(self, other, alpha)

    assert takes_positionally(by_position, names)
    assert not takes_positionally(by_keyword, names)
    assert not takes_positionally(longer, names)  # more parameters than the schema's
    assert not takes_positionally(functools.partial(by_position), names)  # not a function
    an, bn = np.array([1.0, -2.0, 3.5]), np.array([0.5, 4.0, -1.0])
    for kernel, how in ((by_position, "position"), (by_keyword, "keyword")):
        seen: list[tuple[str, Any]] = []
        with tp.Library("aten", "IMPL") as lib:
            lib.impl("add.Tensor", kernel, "CPU", override=True)
            a, b = t64(an), t64(bn)
            y = tp.add(a, b, alpha=2.5)
            y.sum().backward()
        assert seen == [(how, 2.5)] and y.grad_fn is not None
        np.testing.assert_array_equal(y.detach().numpy(), an + 2.5 * bn)
        np.testing.assert_array_equal(a.grad.numpy(), np.ones(3))
        np.testing.assert_array_equal(b.grad.numpy(), np.full(3, 2.5))


def test_backward_matches_finite_differences():
    xn = np.array([[0.3, -1.2, 2.0], [0.5, 0.1, -0.7]])
    wn = np.array([0.2, -0.4, 1.5])

    def f_np(x):
        return float(np.sum(np.tanh(x * wn) ** 2 + np.exp(x).sum(1, keepdims=True) / (1 + x**2)))

    x, w = t64(xn), t64(wn, requires_grad=False)
    y = ((x * w).tanh() ** 2 + x.exp().sum(1, keepdim=True) / (1 + x * x)).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(f_np, xn), rtol=1e-6, atol=1e-8)
    assert w.grad is None


def test_broadcast_gradients_are_reduced_to_the_input_shape():
    a = t64(np.ones((2, 3)))
    b = t64([1.0, 2.0, 3.0])
    c = t64(2.0)
    (a * b * c).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [4.0, 4.0, 4.0])
    assert c.grad.shape == () and c.grad.item() == 12.0
    np.testing.assert_allclose(a.grad.numpy(), np.full((2, 3), 1.0) * [1, 2, 3] * 2)


def test_gradients_accumulate_across_backward_calls():
    x = t64([1.0, 2.0])
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2 + 3, 4 + 3])
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_stolen_gradient_is_not_shared_between_leaves():
    a, b = t64([1.0]), t64([2.0])
    (a + b).sum().backward()  # AddBackward hands the same gradient to both leaves
    a.grad.add_(10.0)
    assert b.grad.item() == 1.0


def test_gradient_given_to_backward_is_not_aliased():
    x = t64([1.0, 2.0])
    g = tp.tensor([1.0, 1.0], dtype=tp.float64)
    x.backward(g)
    x.grad.mul_(5)
    np.testing.assert_allclose(g.numpy(), [1.0, 1.0])


def test_backward_twice_needs_retain_graph():
    x = t64([1.0, 2.0])
    y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_backward_frees_the_saved_tensors():
    # Note [Saved tensors]: a graph that is not retained lets go of what its nodes saved
    # (here the intermediate h, saved twice by h * h), as PyTorch frees its saved variables
    x = t64([1.0, 2.0])
    h = x * 3
    y = (h * h).sum()
    ref = weakref.ref(h)
    del h
    assert ref() is not None  # the graph holds it
    y.backward()
    assert ref() is None
    np.testing.assert_allclose(x.grad.numpy(), 18 * np.array([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_loss_backward_from_an_output_of_a_multi_output_node():
    # loss.backward()'s one-root entry with a root node of two outputs (values, indices):
    # the same gradient as the general path (a list of outputs)
    x = t64([1.0, 5.0, 3.0])
    v, _ = tp.max(x, 0)
    v.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0])
    v, _ = tp.max(x * 2, 0)
    tp.autograd.backward([v])
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 3.0, 0.0])


def test_backward_errors():
    x = t64([1.0, 2.0])
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        tp.ones([1]).backward()
    with pytest.raises(
        RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of \[3\]"
    ):
        (x * 2).backward(tp.ones([3], dtype=tp.float64))


# --- autograd.grad ---------------------------------------------------------------------------


def test_autograd_grad_does_not_touch_dot_grad():
    x = t64([1.0, 2.0, 3.0])
    y = (x * x).sum()
    (g,) = tp.autograd.grad(y, x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0, 6.0])
    assert x.grad is None


def test_autograd_grad_of_non_leaf_and_several_inputs():
    x = t64([1.0, 2.0])
    h = x * 3
    y = (h * h).sum()
    gh, gx = tp.autograd.grad(y, [h, x])
    np.testing.assert_allclose(gh.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(gx.numpy(), [18.0, 36.0])


def test_autograd_grad_does_not_run_the_node_of_a_target_it_need_not_pass():
    # as PyTorch: the gradient of h is captured where it arrives; h's own node does not run,
    # unless another input is reached through it
    ran = []

    class Tracked(tp.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 3.0

        @staticmethod
        def backward(ctx, g):
            ran.append(1)
            return g * 3.0

    x = t64([1.0, 2.0])
    h = Tracked.apply(x)
    y = (h * h).sum()
    (gh,) = tp.autograd.grad(y, [h], retain_graph=True)
    np.testing.assert_allclose(gh.numpy(), [6.0, 12.0])
    assert ran == []
    gh, gx = tp.autograd.grad(y, [h, x])
    np.testing.assert_allclose(gx.numpy(), [18.0, 36.0])
    assert ran == [1]


def _grad_walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which walk ``autograd.grad`` takes to find the nodes to run, per call: "one" (all
    targets leaves and every leaf reached a target) or "needed" (the general one)."""
    from tensorplug_autograd import engine

    walks: list[str] = []
    leaf_targets, needed = engine._leaf_targets, engine._needed

    def one(*args: Any) -> Any:
        r = leaf_targets(*args)
        if r is not None:
            walks.append("one")
        return r

    def general(*args: Any) -> Any:
        walks.append("needed")
        return needed(*args)

    monkeypatch.setattr(engine, "_leaf_targets", one)
    monkeypatch.setattr(engine, "_needed", general)
    return walks


def test_autograd_grad_of_leaves_in_one_walk_and_the_general_walk_agree(monkeypatch):
    """Every leaf reached is a target: one walk; a leaf reached that is no target, or a
    target that is no leaf: the general walk. The gradients are the closed forms either way,
    and the leaf that is no target gets nothing (its ``.grad`` and hooks untouched)."""
    walks = _grad_walks(monkeypatch)
    x, w, z = t64([1.0, 2.0]), t64([3.0, -1.0]), t64([0.5, 0.25])
    hooked: list[Any] = []
    z.register_hook(hooked.append)
    y = ((x * w).sum() * 2 + (z * x).sum()) * 1.0
    gx, gw, gx2 = tp.autograd.grad(y, [x, w, x], retain_graph=True)  # x given twice
    np.testing.assert_allclose(gx.numpy(), 2 * w.detach().numpy() + z.detach().numpy())
    np.testing.assert_allclose(gx2.numpy(), gx.numpy())
    np.testing.assert_allclose(gw.numpy(), 2 * x.detach().numpy())
    assert walks == ["needed"]  # z is reached and is no target
    gx, gw, gz = tp.autograd.grad(y, [x, w, z], retain_graph=True)
    np.testing.assert_allclose(gz.numpy(), x.detach().numpy())
    assert walks == ["needed", "one"] and len(hooked) == 1  # z's hook ran for its capture
    (gz,) = tp.autograd.grad(y, [z])
    assert walks == ["needed", "one", "needed"]
    assert x.grad is None and w.grad is None and z.grad is None


def test_autograd_grad_captures_a_leaf_with_hooks_after_them(monkeypatch):
    walks = _grad_walks(monkeypatch)
    x, w = t64([1.0, 2.0]), t64([3.0, -1.0])
    x.register_hook(lambda g: g * 10)
    ran: list[Any] = []
    y = (x * w).sum()
    y.grad_fn.register_prehook(lambda gs: ran.append("pre"))
    gx, gw = tp.autograd.grad(y, [x, w])
    np.testing.assert_allclose(gx.numpy(), 10 * w.detach().numpy())
    np.testing.assert_allclose(gw.numpy(), x.detach().numpy())
    assert walks == ["one"] and ran == ["pre"]


def test_autograd_grad_unused_inputs():
    x, z = t64([1.0]), t64([2.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        tp.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = tp.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None and gx.item() == 2.0
    _, gz = tp.autograd.grad(y, [x, z], materialize_grads=True)
    assert gz.item() == 0.0
    with pytest.raises(RuntimeError, match="does not require grad"):
        tp.autograd.grad((x * 2).sum(), tp.ones([1]))


def test_create_graph_gives_higher_derivatives():
    x = t64([0.5, -1.5, 2.0])
    y = (x**3).sum()
    (g,) = tp.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    assert g.requires_grad
    (gg,) = tp.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(gg.detach().numpy(), 6 * x.detach().numpy())
    (ggg,) = tp.autograd.grad(gg.sum(), x)
    np.testing.assert_allclose(ggg.numpy(), [6.0, 6.0, 6.0])


def test_create_graph_through_saved_outputs():
    x = t64([0.3, 1.2])
    (g,) = tp.autograd.grad(x.exp().sum(), x, create_graph=True)  # exp saves its result
    (gg,) = tp.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.exp([0.3, 1.2]))


def test_backward_with_create_graph_then_grad_of_grad():
    x = t64([2.0])
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (gg,) = tp.autograd.grad(x.grad.sum(), x)
    assert gg.item() == pytest.approx(12.0)


# --- hooks -----------------------------------------------------------------------------------


def test_tensor_hooks_on_leaf_and_non_leaf():
    x = t64([1.0, 2.0])
    seen = []
    h = x * 2
    h.register_hook(lambda g: seen.append(g.numpy().copy()))
    handle = x.register_hook(lambda g: g * 10)
    h.sum().backward()
    np.testing.assert_allclose(seen[0], [1.0, 1.0])
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 20.0])
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_retain_grad():
    x = t64([1.0, 2.0])
    h = x * x
    h.retain_grad()
    assert h.retains_grad
    (h * 3).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), [3.0, 3.0])
    h2 = x * x
    (h2 * 3).sum().backward()
    assert h2.grad is None


def test_node_hooks():
    x = t64([1.0, 2.0])
    y = x * 2
    calls = []
    y.grad_fn.register_hook(lambda gi, go: calls.append((len(gi), len(go))))
    y.grad_fn.register_prehook(lambda go: (go[0] * 0.5,))
    y.sum().backward()
    assert calls == [(1, 1)]
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])


def test_hook_needs_requires_grad():
    with pytest.raises(
        RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"
    ):
        tp.ones([1]).register_hook(lambda g: g)


# --- grad mode -------------------------------------------------------------------------------


def test_no_grad_and_enable_grad():
    x = t64([1.0])
    with tp.no_grad():
        assert not tp.is_grad_enabled()
        y = x * 2
        with tp.enable_grad():
            assert tp.is_grad_enabled()
            z = x * 2
    assert tp.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad


def test_grad_modes_as_decorators_and_set_grad_enabled():
    x = t64([1.0])

    @tp.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad
    assert tp.is_grad_enabled()

    @tp.set_grad_enabled(False)
    def g(t):
        return t * 2

    assert tp.is_grad_enabled()  # decorating does not change the mode
    assert not g(x).requires_grad
    tp.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        tp.set_grad_enabled(True)
    with tp.set_grad_enabled(False):
        assert not tp.is_grad_enabled()
    assert tp.is_grad_enabled()
    with tp.inference_mode():
        assert not (x * 2).requires_grad


def test_one_grad_mode_object_nests_and_refuses_arguments():
    # the mode objects are made by __new__ alone (an instance keeps a stack of the modes it
    # replaced); torch's no_grad() takes no arguments either
    x = t64([1.0])
    off = tp.no_grad()
    with off:
        with tp.enable_grad():
            with off:
                assert not tp.is_grad_enabled()
            assert tp.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert tp.is_grad_enabled()
    with tp.inference_mode(False):
        assert tp.is_grad_enabled()
    for mode in (tp.no_grad, tp.enable_grad):
        with pytest.raises(TypeError, match=rf"^{mode.__name__}\(\) takes no arguments$"):
            mode(1)
        with pytest.raises(TypeError, match="takes no arguments"):
            mode(fn=len)
    with pytest.raises(TypeError):
        tp.set_grad_enabled()


def test_one_grad_mode_object_restores_each_mode_it_replaced():
    # an instance remembers the modes of its open entries: three deep, left by an exception,
    # then entered again
    off, on = tp.no_grad(), tp.enable_grad()
    seen = []
    with pytest.raises(ValueError, match="inside"):
        with off:
            with on:
                with off:
                    with on:
                        with off:
                            seen.append(tp.is_grad_enabled())
                        seen.append(tp.is_grad_enabled())
                    seen.append(tp.is_grad_enabled())
                    raise ValueError("inside")
    assert seen == [False, True, False] and tp.is_grad_enabled()
    with tp.no_grad():
        with on:
            with off:
                assert not tp.is_grad_enabled()
            assert tp.is_grad_enabled()
        assert not tp.is_grad_enabled()
    assert tp.is_grad_enabled()


def test_grad_mode_is_per_thread():
    x = t64([1.0])
    result = {}

    def other():
        result["req"] = (x * 2).requires_grad

    with tp.no_grad():
        th = threading.Thread(target=other)
        th.start()
        th.join()
    assert result["req"] is True


# --- tensor API ------------------------------------------------------------------------------


def test_requires_grad_rules():
    with pytest.raises(
        RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"
    ):
        tp.tensor([1, 2], requires_grad=True)
    x = t64([1.0])
    y = x * 2
    with pytest.raises(
        RuntimeError, match="you can only change requires_grad flags of leaf variables"
    ):
        y.requires_grad_(False)
    z = tp.ones([2])
    z.requires_grad = True
    assert z.requires_grad and z.is_leaf
    z.requires_grad_(False)
    assert not z.requires_grad


def test_detach_and_data():
    x = t64([1.0, 2.0])
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d.mul_(2)  # shares storage
    np.testing.assert_allclose(x.detach().numpy(), [2.0, 4.0])
    assert not x.data.requires_grad


def test_grad_setter_checks():
    x = t64([1.0, 2.0])
    with pytest.raises(
        RuntimeError,
        match=r"attempting to assign a gradient of size '\[3\]' to a tensor of size '\[2\]'",
    ):
        x.grad = tp.ones([3], dtype=tp.float64)
    with pytest.raises(
        RuntimeError,
        match="attempting to assign a gradient with dtype 'float32' to a tensor with dtype 'float64'",
    ):
        x.grad = tp.ones([2], dtype=tp.float32)
    x.grad = tp.ones([2], dtype=tp.float64)
    del x.grad
    assert x.grad is None


def test_assign_grad_sets_what_the_setter_would():
    # tp.autograd.graph.assign_grad: the setter without its checks (a compiled step's .grad)
    x = t64([1.0, 2.0])
    tp.autograd.graph.assign_grad(x, None)  # no state made for it
    assert x.grad is None
    g = tp.ones([2], dtype=tp.float64)
    tp.autograd.graph.assign_grad(x, g)
    assert x.grad is g
    tp.autograd.graph.assign_grad(x, None)
    assert x.grad is None


def test_integer_outputs_do_not_require_grad():
    x = t64([1.0, 3.0, 2.0])
    assert not x.argmax().requires_grad
    assert not (x > 1).requires_grad
    values, indices = x.max(0)
    assert values.requires_grad and not indices.requires_grad


def test_out_variant_refuses_grad():
    x = t64([1.0])
    out = tp.empty([1], dtype=tp.float64)
    with pytest.raises(
        RuntimeError,
        match=r"aten::add\.out\(\): functions with out=\.\.\. arguments don't support automatic differentiation",
    ):
        tp.add(x, x, out=out)
    with tp.no_grad():
        tp.add(x, x, out=out)
    assert out.item() == 2.0


def test_leaf_grads_are_stolen_not_copied() -> None:
    # Note [Stealing gradients]: the first gradient reaching a leaf becomes its .grad when
    # nothing else holds it. A weight used as w.t() (addmm) gets (g.t() @ x).t().t(): a view
    # of the product, row-major like the weight, so an optimizer step runs over one layout
    x = tp.randn([4, 3])
    w = tp.randn([5, 3], requires_grad=True)
    tp.addmm(tp.zeros([5]), x, w.t()).sum().backward()
    wd = w.grad._data
    assert wd.flags.c_contiguous and wd.base is not None  # a copy would own its array
    # linear's single node (Note [Fused nodes of composite ops]) computes g.t() @ x directly
    v = w.detach().clone().requires_grad_()
    tp.linear(x, v, tp.zeros([5])).sum().backward()
    assert v.grad._data.flags.c_contiguous
    np.testing.assert_allclose(v.grad.numpy(), w.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), np.ones((4, 5)).T @ x.numpy(), rtol=1e-6)
    # a leaf used directly as mat2 gets a row-major product as well
    m = tp.randn([3, 5], requires_grad=True)
    tp.mm(x, m).sum().backward()
    assert m.grad._data.flags.c_contiguous
    np.testing.assert_allclose(m.grad.numpy(), x.numpy().T @ np.ones((4, 5)), rtol=1e-6)


def test_leaf_grads_obey_the_layout_contract() -> None:
    # Note [Stealing gradients]: a gradient laid out otherwise than its leaf is copied into the
    # leaf's layout (PyTorch's AccumulateGrad): a batched matmul with w.t() (linear's
    # decomposition, as tp.compile's graphs hold it) gives w.t()'s gradient, transposed back:
    # a column-major product; the row-major weight gets a row-major .grad, as in torch 2.13
    x = tp.randn([2, 4, 3])
    w = tp.randn([5, 3], requires_grad=True)
    tp.matmul(x, w.t()).sum().backward()
    assert w.grad.stride() == w.stride() == (3, 1)
    rows = x.numpy().reshape(8, 3)
    np.testing.assert_allclose(w.grad.numpy(), np.ones((8, 5)).T @ rows, rtol=1e-5)
    # a column-major leaf keeps its strides (torch 2.13: its .grad has strides (1, 5))
    c = tp.randn([3, 5]).t().detach().requires_grad_()
    (tp.matmul(tp.randn([4, 5]), c) * 1).sum().backward()
    assert c.grad.stride() == c.stride() == (1, 5)
    # an existing .grad keeps its layout as the next gradient is added into it
    tp.matmul(x, w.t()).sum().backward()
    assert w.grad.stride() == (3, 1)


@pytest.mark.parametrize("hooked", [False, True])
def test_leaf_accumulates_before_other_ready_nodes(hooked: bool) -> None:
    # Note [Engine order]: as PyTorch's AccumulateGrad, a leaf's accumulator runs as soon as
    # its gradient is complete, before an older node that is ready too (torch 2.13: u's
    # pre-hook sees w.grad == 3, with or without a hook on w); w's accumulator is older than
    # u's node, so the creation order alone would run it last
    x = tp.tensor([1.0], requires_grad=True)
    w = tp.tensor([2.0], requires_grad=True)
    w * 1  # makes w's accumulator now
    u, v = x * 2, w * 3
    seen: list[Any] = []
    u.grad_fn.register_prehook(lambda g: seen.append(w.grad))
    if hooked:  # the accumulator runs from the ready queue instead of the inline path
        w.register_hook(lambda g: g * 1)
    (u + v).sum().backward()
    assert len(seen) == 1 and seen[0] is not None and seen[0].item() == 3.0
    assert x.grad.item() == 2.0


def test_nodes_run_newest_first_through_chains_and_branches() -> None:
    # Note [Engine order]: among ready nodes the most recently created runs first (PyTorch's
    # CPU ready queue, torch 2.13 runs the hooks below in this order); a node made ready
    # while the queue is empty runs next without a trip through it (_run), one made
    # ready while older ones wait goes through the queue
    x = tp.tensor([0.5], requires_grad=True)
    a = x.exp()  # oldest
    b = x.sin()
    b2 = b.cos()  # a chain below d
    c = a * 2
    d = b2 * 3  # newest of the four muls' inputs
    seen: list[str] = []
    for name, t in (("a", a), ("b", b), ("b2", b2), ("c", c), ("d", d)):
        t.register_hook(lambda g, name=name: seen.append(name))
    (c + d).sum().backward()
    # the add makes c's and d's nodes ready at once: d's (newer) first; then b2's node
    # (made ready by d's) is older than c's, which runs next, then b2, b, a
    assert seen == ["d", "c", "b2", "b", "a"]
    xn = 0.5
    want = 2 * np.exp(xn) - 3 * np.sin(np.sin(xn)) * np.cos(xn)
    np.testing.assert_allclose(x.grad.numpy(), [want], rtol=1e-6)


def test_gradient_made_for_one_leaf_is_stolen() -> None:
    # Note [Stealing gradients]: a gradient nothing else holds becomes the leaf's .grad as is
    made: list[Any] = []

    class Twice(tp.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            r = g * 2
            made.append(weakref.ref(r))
            return r

    a = tp.tensor([1.0, 2.0], requires_grad=True)
    Twice.apply(a).sum().backward()
    assert a.grad is made[0]()
    keep: list[Any] = []

    class Kept(Twice):
        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            keep.append(g * 2)  # the function keeps its result: a copy goes into .grad
            return keep[-1]

    b = tp.tensor([1.0, 2.0], requires_grad=True)
    Kept.apply(b).sum().backward()
    assert b.grad is not keep[0]
    b.grad.add_(1.0)
    np.testing.assert_allclose(keep[0].numpy(), [2.0, 2.0])


def test_implicit_gradient_is_a_fresh_one_each_time() -> None:
    # the implicit ones of a scalar backward may become a leaf's .grad and be added into
    x = tp.tensor(3.0, requires_grad=True)
    x.backward()
    x.backward()
    (x * 2).backward()
    assert x.grad.item() == 4.0
    y = tp.tensor(1.0, requires_grad=True)
    (y * 5).backward()
    assert y.grad.item() == 5.0


@pytest.mark.parametrize(
    ("call", "op", "arg"),
    [
        (lambda x, w: tp.nll_loss(x, tp.tensor([0, 2]), w), "nll_loss", "weight"),
        (
            lambda x, w: tp.binary_cross_entropy(x.sigmoid(), tp.ones([2, 3]), w),
            "binary_cross_entropy",
            "weight",
        ),
    ],
)
def test_weights_without_a_formula_refuse_requires_grad(call: Any, op: str, arg: str) -> None:
    # PyTorch's check_no_requires_grad: a gradient it cannot compute is an error, not a zero
    x = tp.randn([2, 3], requires_grad=True)
    w = tp.rand([3], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            f"The function '{op}' is not differentiable with respect to argument '{arg}'. "
            "This input cannot have requires_grad True."
        ),
    ):
        call(x, w)
    call(x, w.detach()).backward()  # what the message suggests works
    assert x.grad is not None


def test_detach_in_place_makes_a_leaf_that_does_not_require_grad():
    x = tp.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * 3
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])  # the values stay
    assert (y * 1).grad_fn is None  # later ops on it record nothing
    z.sum().backward()  # the graph already recorded through y still runs
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])


def test_detach_in_place_refuses_views_in_a_graph():
    x = tp.tensor([1.0, 2.0], requires_grad=True)
    v = (x * 2)[0:1]
    with pytest.raises(
        RuntimeError, match=r"detach_\(\): can't detach views in-place: .* Use detach\(\) instead\."
    ):
        v.detach_()
    assert v.requires_grad


def test_detach_in_place_refuses_views_of_plain_tensors_too():
    base = tp.zeros([3])
    v = base[0:2]
    with pytest.raises(
        RuntimeError, match=r"detach_\(\): can't detach views in-place: .* Use detach\(\) instead\."
    ):
        v.detach_()
    d = base.detach()  # not a view for autograd: detaching it in place is fine
    assert d.detach_() is d


def test_detach_of_a_plain_tensor_shares_data_but_is_no_view():
    base = tp.zeros([3])
    d = base.detach()
    assert d._base is None and d._tp_version is base._tp_version
    d.add_(1.0)  # the data is shared
    assert base.tolist() == [1.0, 1.0, 1.0]
    w = tp.tensor([2.0, 3.0, 4.0], requires_grad=True)
    d[0] = w[1] * 2  # a write into d gives d its history, not base (as in PyTorch)
    assert d.grad_fn is not None and base.grad_fn is None
    d.sum().backward()
    assert w.grad.tolist() == [0.0, 2.0, 0.0]


def test_outputs_a_formula_does_not_read_are_not_saved() -> None:
    """Note [Saved outputs]: batch norm's formula reads its mean and invstd, not its output, so
    writing the output in place (a residual ``out += identity``) is no error, as in PyTorch;
    an output that is read stays checked."""
    x = tp.randn(2, 3, 4, 4, requires_grad=True)
    w, b = tp.ones(3, requires_grad=True), tp.zeros(3, requires_grad=True)
    out = tp.ops.aten.native_batch_norm.default(x, w, b, None, None, True, 0.1, 1e-5)[0]
    out += 1.0
    out.sum().backward()
    assert x.grad is not None and w.grad is not None
    y = tp.randn(3, 5, requires_grad=True)
    s = tp.softmax(y, 1)  # its formula reads the result
    s.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()
