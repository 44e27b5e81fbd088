"""The single nodes of ``linear`` and ``cross_entropy`` (tensorplug_autograd/fused.py).

Note [Fused nodes of composite ops]: both ops stay CompositeImplicitAutograd, but autograd
records each as one node. Gradients are checked against finite differences (gradcheck, in
float64), second derivatives with gradgradcheck, and the calls the node does not cover
against the decomposition they take instead.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import dispatcher
from tests import needs

needs.autograd()

gradcheck = tp.autograd.gradcheck
gradgradcheck = tp.autograd.gradgradcheck


def leaf(*shape: int, seed: int = 0) -> tp.Tensor:
    rng = np.random.default_rng(seed + len(shape))
    return tp.tensor(rng.standard_normal(shape), requires_grad=True)


# --- linear -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("input_shape", "bias_shape"),
    [
        ((4, 3), (5,)),
        ((4, 3), None),
        ((2, 4, 3), (5,)),
        ((3,), (5,)),
        ((4, 3), (4, 5)),
        ((4, 3), (1,)),
    ],
)
def test_linear_is_one_node_with_correct_gradients(input_shape, bias_shape) -> None:
    x, w = leaf(*input_shape), leaf(5, 3, seed=1)
    args = [x, w] if bias_shape is None else [x, w, leaf(*bias_shape, seed=2)]
    assert tp.linear(*args).grad_fn.name() == "LinearBackward0"
    assert gradcheck(tp.linear, args)
    assert gradgradcheck(tp.linear, args)


def test_linear_matches_its_decomposition() -> None:
    x, w, b = leaf(4, 3), leaf(5, 3, seed=1), leaf(5, seed=2)
    tp.linear(x, w, b).sin().sum().backward()
    fused = [t.grad for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    tp.addmm(b, x, w.t()).sin().sum().backward()
    for got, t in zip(fused, (x, w, b), strict=True):
        np.testing.assert_allclose(got.numpy(), t.grad.numpy(), rtol=1e-12)
    assert w.grad.shape == w.shape and b.grad.shape == b.shape


def test_linear_with_a_vector_weight_records_its_parts() -> None:
    x, v = leaf(4, 3), leaf(3, seed=1)
    assert tp.linear(x, v).grad_fn.name() != "LinearBackward0"
    assert gradcheck(tp.linear, [x, v])


def test_linear_of_plain_tensors_records_nothing_and_only_needed_grads_run() -> None:
    x, w = tp.randn([4, 3]), tp.randn([5, 3])
    assert tp.linear(x, w).grad_fn is None
    wr = w.requires_grad_()
    (gw,) = tp.autograd.grad(tp.linear(x, wr).sum(), [wr])
    np.testing.assert_allclose(gw.numpy(), np.ones((4, 5)).T @ x.numpy(), rtol=1e-6)


def test_linear_saved_weight_checks_its_version() -> None:
    x, w = leaf(4, 3), leaf(5, 3, seed=1)
    x2 = x * 1
    y = tp.linear(x2, w)
    with tp.no_grad():
        x2.mul_(2)
    with pytest.raises(RuntimeError, match="saved by LinearBackward0"):
        y.sum().backward()


def test_linear_saved_values_are_checked_on_the_direct_kernel_path() -> None:
    # Note [Saved values for a backend kernel]: the node hands the saved tensors to the
    # backend's kernel as saved, after the version check an unpack makes
    x, w = leaf(4, 3), leaf(5, 3, seed=1)
    y = tp.linear(x, w)
    with tp.no_grad():
        w.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[CPU float64 \[5, 3\]\], which is saved by Linear"):
        y.sum().backward()
    # both changed: the input is read first, as the formulas' node reads it
    x2 = x * 1
    y = tp.linear(x2, w)
    with tp.no_grad():
        x2.mul_(2)
        w.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[CPU float64 \[4, 3\]\].*is at version 1; expected"):
        y.sum().backward()
    # changed by a hook that runs before the node: the check is made when the node runs
    y = tp.linear(x, w)

    def change_weight(g: tp.Tensor) -> None:
        w.detach().mul_(3)

    y.register_hook(change_weight)
    with pytest.raises(RuntimeError, match="saved by LinearBackward0"):
        y.sum().backward()


def test_linear_freed_graph_raises_on_the_direct_kernel_path() -> None:
    x, w, b = leaf(4, 3), leaf(5, 3, seed=1), leaf(5, seed=2)
    loss = tp.linear(x, w, b).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()


def test_linear_direct_kernel_path_gives_the_dispatched_paths_bits() -> None:
    # dispatch tracing takes the node through the dispatcher with the plain values
    rng = np.random.default_rng(5)
    xn, wn, bn = (rng.standard_normal(s, dtype=np.float32) for s in ((2, 6, 7), (5, 7), (5,)))
    grads = []
    for traced in (False, True):
        x, w, b = (tp.tensor(a, requires_grad=True) for a in (xn, wn, bn))
        y = tp.linear(x, w, b)
        if traced:
            with dispatcher.tracing(lambda line: None):
                y.backward(tp.ones_like(y))
        else:
            y.backward(tp.ones_like(y))
        grads.append([t.grad.numpy().tobytes() for t in (x, w, b)])
    assert grads[0] == grads[1]


def test_linear_hooks_see_its_gradients() -> None:
    x, w, b = leaf(4, 3), leaf(5, 3, seed=1), leaf(5, seed=2)
    h = tp.linear(x, w, b)
    seen = []
    h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(len(grad_inputs)))
    h.register_hook(lambda g: g * 2)
    h.sum().backward()
    assert seen == [3]
    np.testing.assert_allclose(b.grad.numpy(), np.full(5, 8.0))


@pytest.mark.parametrize(
    ("needs_grad", "mask"),
    [
        ((True, True, True), [True, True, True]),
        ((False, True, True), [False, True, True]),
        ((True, False, False), [True, False, False]),
        ((False, False, True), [False, False, True]),
    ],
)
def test_linear_node_computes_only_the_gradients_its_edges_need(needs_grad, mask) -> None:
    # one linear_backward call per node, asked only for what is needed (PyTorch's
    # should_compute_output); seen through a CPU kernel of the op that does not promise to
    # stay off the dispatcher, so the node calls it through the dispatcher
    seen = []
    real = dispatcher.find_op("aten::linear_backward.default")._kernels["CPU"].fn

    def spy(x, g, w, output_mask):
        seen.append(list(output_mask))
        return real(x, g, w, output_mask)

    x, w, b = (
        tp.tensor(t.detach().numpy(), requires_grad=r)
        for t, r in zip((leaf(4, 3), leaf(5, 3, seed=1), leaf(5, seed=2)), needs_grad, strict=True)
    )
    out = tp.linear(x, w, b)
    with tp.Library("aten", "IMPL") as lib:
        lib.impl("linear_backward", spy, "CPU", override=True)
        out.sum().backward()
    assert seen == [mask]
    g = np.ones((4, 5))
    want = (g @ w.detach().numpy(), g.T @ x.detach().numpy(), g.sum(0))
    for t, r, expected in zip((x, w, b), needs_grad, want, strict=True):
        if r:
            np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-12)
        else:
            assert t.grad is None


def test_linear_node_under_create_graph_stays_differentiable() -> None:
    # create_graph: the node runs the formulas (operators that record), not linear_backward
    x, w, b = leaf(4, 3), leaf(5, 3, seed=1), leaf(5, seed=2)
    (gx, gw, gb) = tp.autograd.grad(tp.linear(x, w, b).pow(2).sum(), [x, w, b], create_graph=True)
    assert gx.grad_fn is not None and gw.grad_fn is not None and gb.grad_fn is not None
    (ggw,) = tp.autograd.grad(gx.sum(), [w])
    # d/dw sum(2 (x w^T + b) w) over the input gradient's entries, by numpy
    xn, wn = x.detach().numpy(), w.detach().numpy()
    ones = np.ones((4, 3))
    yn = xn @ wn.T + b.detach().numpy()
    want = 2 * (yn.T @ ones) + 2 * (ones @ wn.T).T @ xn
    np.testing.assert_allclose(ggw.numpy(), want, rtol=1e-10)


def test_linear_node_float32_matches_numpy_bit_for_bit() -> None:
    # the fast kernel's arithmetic is numpy's own expressions for the step's shapes
    rng = np.random.default_rng(3)
    xn = rng.standard_normal((64, 784), dtype=np.float32)
    wn = rng.standard_normal((128, 784), dtype=np.float32)
    gn = rng.standard_normal((64, 128), dtype=np.float32)
    x, w, b = (tp.tensor(a, requires_grad=True) for a in (xn, wn, np.zeros(128, np.float32)))
    tp.linear(x, w, b).backward(tp.tensor(gn))
    assert x.grad.numpy().tobytes() == (gn @ wn).tobytes()
    assert w.grad.numpy().tobytes() == (gn.T @ xn).tobytes()
    assert b.grad.numpy().tobytes() == gn.sum(0).tobytes()


def test_linear_keeps_the_composites_errors() -> None:
    with pytest.raises(
        RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"
    ):
        tp.linear(leaf(2, 3), leaf(5, 4))


# --- cross entropy ----------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_cross_entropy_is_one_node_with_correct_gradients(reduction, ignore_index) -> None:
    z, y = leaf(6, 4), tp.tensor([0, 1, 2, 3, 1, 2])

    def f(z):
        return tp.cross_entropy(z, y, reduction=reduction, ignore_index=ignore_index)

    assert f(z).grad_fn.name() == "CrossEntropyLossBackward0"
    assert gradcheck(f, [z])
    assert gradgradcheck(f, [z])


def test_cross_entropy_of_one_sample() -> None:
    z = leaf(4)
    assert tp.cross_entropy(z, tp.tensor(2)).grad_fn.name() == "CrossEntropyLossBackward0"
    assert gradcheck(lambda z: tp.cross_entropy(z, tp.tensor(2)), [z])


@pytest.mark.parametrize(
    "kwargs",
    [{"weight": tp.tensor([1.0, 2.0, 0.5, 1.0], dtype=tp.float64)}, {"label_smoothing": 0.1}],
)
def test_cross_entropy_calls_the_node_does_not_cover_record_the_parts(kwargs) -> None:
    z, y = leaf(6, 4), tp.tensor([0, 1, 2, 3, 1, 2])
    assert tp.cross_entropy(z, y, **kwargs).grad_fn.name() != "CrossEntropyLossBackward0"
    assert gradcheck(lambda z: tp.cross_entropy(z, y, **kwargs), [z])


def test_cross_entropy_of_class_probabilities_records_the_parts() -> None:
    z = leaf(6, 4)
    p = tp.softmax(tp.randn([6, 4], dtype=tp.float64), 1)
    assert tp.cross_entropy(z, p).grad_fn.name() != "CrossEntropyLossBackward0"
    assert gradcheck(lambda z: tp.cross_entropy(z, p), [z])


def test_cross_entropy_node_runs_the_fused_backward_op() -> None:
    # while the backward records nothing: one tensorplug::cross_entropy_loss_backward, seen
    # through a CPU kernel that does not promise to stay off the dispatcher (so the node calls
    # the op through it); with create_graph the two differentiable operators instead
    seen = []
    op = dispatcher.find_op("tensorplug::cross_entropy_loss_backward.default")
    real = op._kernels["CPU"].fn

    def spy(g, lp, t, reduction, ignore_index):
        seen.append((reduction, ignore_index))
        return real(g, lp, t, reduction, ignore_index)

    z, y = leaf(6, 4), tp.tensor([0, 1, 2, 3, 1, 2])
    with tp.Library("tensorplug", "IMPL") as lib:
        lib.impl("cross_entropy_loss_backward", spy, "CPU", override=True)
        tp.cross_entropy(z, y, reduction="sum", ignore_index=2).backward()
        assert seen == [("sum", 2)]
        (gz,) = tp.autograd.grad(tp.cross_entropy(z, y), [z], create_graph=True)
        assert seen == [("sum", 2)] and gz.grad_fn is not None


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64])
def test_cross_entropy_node_gives_the_composition_bits(dtype) -> None:
    rng = np.random.default_rng(4)
    zn, yn = rng.standard_normal((7, 5)), tp.tensor(rng.integers(0, 5, 7))
    z = tp.tensor(zn, dtype=dtype, requires_grad=True)
    tp.cross_entropy(z, yn).backward()
    lp = tp.log_softmax(tp.tensor(zn, dtype=dtype), 1)
    gl = tp.ops.aten.nll_loss_backward.default(
        tp.tensor(1.0, dtype=dtype), lp, yn, None, "mean", -100
    )
    want = tp.ops.aten._log_softmax_backward_data.default(gl, lp, 1, dtype)
    assert z.grad.numpy().tobytes() == want.numpy().tobytes()


def test_cross_entropy_keeps_the_composites_errors() -> None:
    z = leaf(6, 4)
    with pytest.raises(ValueError, match="aten::cross_entropy_loss: bad is not a valid value"):
        tp.cross_entropy(z, tp.tensor([0, 1, 2, 3, 1, 2]), reduction="bad")
    with pytest.raises(IndexError, match="aten::nll_loss: Target 7 is out of bounds"):
        tp.cross_entropy(z, tp.tensor([0, 1, 2, 3, 1, 7]))


def test_cross_entropy_saved_target_checks_its_version() -> None:
    # the node hands the saved target to the backend's kernel after the version check
    z, y = leaf(6, 4), tp.tensor([0, 1, 2, 3, 1, 2])
    loss = tp.cross_entropy(z, y)
    y.zero_()
    with pytest.raises(
        RuntimeError, match=r"\[CPU int64 \[6\]\], which is saved by CrossEntropyLossBackward0"
    ):
        loss.backward()


def test_cross_entropy_direct_kernel_path_gives_the_dispatched_paths_bits() -> None:
    rng = np.random.default_rng(6)
    zn, yn = rng.standard_normal((7, 5), dtype=np.float32), rng.integers(0, 5, 7)
    grads = []
    for traced in (False, True):
        z = tp.tensor(zn, requires_grad=True)
        loss = tp.cross_entropy(z, tp.tensor(yn), ignore_index=1)
        if traced:
            with dispatcher.tracing(lambda line: None):
                loss.backward()
        else:
            loss.backward()
        grads.append(z.grad.numpy().tobytes())
    assert grads[0] == grads[1]


def test_cross_entropy_frees_what_it_saved() -> None:
    z, y = leaf(6, 4), tp.tensor([0, 1, 2, 3, 1, 2])
    loss = tp.cross_entropy(z, y)
    loss.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()
    once = z.grad.numpy().copy()
    loss = tp.cross_entropy(z, y)
    loss.backward(retain_graph=True)
    loss.backward()  # retained: runs again and accumulates
    np.testing.assert_allclose(z.grad.numpy(), 3 * once)


def test_a_training_step_matches_numpy() -> None:
    rng = np.random.default_rng(0)
    xn, yn = rng.standard_normal((8, 5)), rng.integers(0, 3, 8)
    w1n, w2n = rng.standard_normal((4, 5)), rng.standard_normal((3, 4))
    x, y = tp.tensor(xn), tp.tensor(yn)
    w1, w2 = tp.tensor(w1n, requires_grad=True), tp.tensor(w2n, requires_grad=True)
    b1, b2 = (
        tp.zeros([4], dtype=tp.float64, requires_grad=True),
        tp.zeros([3], dtype=tp.float64, requires_grad=True),
    )
    tp.cross_entropy(tp.linear(tp.linear(x, w1, b1).relu(), w2, b2), y).backward()
    h = xn @ w1n.T
    a = np.maximum(h, 0)
    z = a @ w2n.T
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(8), yn] -= 1
    dz = p / 8
    dh = (dz @ w2n) * (h > 0)
    for got, want in (
        (w2.grad, dz.T @ a),
        (b2.grad, dz.sum(0)),
        (w1.grad, dh.T @ xn),
        (b1.grad, dh.sum(0)),
    ):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("bias", [True, False])
def test_the_fused_forwards_follow_kernels_registered_later(bias) -> None:
    # the kernels of the forwards are kept per key set until a registration changes (in the
    # ops' dispatch caches, Note [Derived cache entries]): a CPU kernel registered later runs,
    # and after its removal the one before runs again
    x, w, b = leaf(4, 3), leaf(2, 3, seed=1), leaf(2, seed=2) if bias else None
    z, y = leaf(4, 5, seed=3), tp.tensor([0, 4, 1, 2])
    tp.linear(x, w, b), tp.cross_entropy(z, y)  # the kernels are found and kept
    cpu = tp.keys.keyset("CPU")
    ops = {"linear_forward": tp.ops.tensorplug.linear_forward, "nll_loss": tp.ops.aten.nll_loss}
    real = {n: op.default.kernel_for(cpu) for n, op in ops.items()}
    calls = []

    def counted(n):
        def kernel(*args, **kwargs):
            calls.append(n)
            return real[n](*args, **kwargs)

        return tp.library.mark_no_dispatch(kernel)

    with tp.Library("aten", "IMPL") as lib, tp.Library("tensorplug", "IMPL") as own:
        lib.impl("nll_loss", counted("nll_loss"), "CPU", override=True)
        own.impl("linear_forward", counted("linear_forward"), "CPU", override=True)
        out, loss = tp.linear(x, w, b), tp.cross_entropy(z, y)
    assert calls == ["linear_forward", "nll_loss"]
    assert out.grad_fn.name() == "LinearBackward0"
    xn, wn, zn = (t.detach().numpy() for t in (x, w, z))
    want = xn @ wn.T + (b.detach().numpy() if bias else 0)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12)
    logp = zn - zn.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    np.testing.assert_allclose(loss.item(), -logp[np.arange(4), [0, 4, 1, 2]].mean(), rtol=1e-12)
    tp.linear(x, w, b), tp.cross_entropy(z, y)
    assert calls == ["linear_forward", "nll_loss"]


@pytest.mark.parametrize("bias", [True, False])
def test_linear_forward_that_may_dispatch_runs_with_autograd_excluded(bias) -> None:
    # a kernel of tensorplug::linear_forward without the promise not to dispatch runs with the
    # autograd keys excluded in the thread: here it calls aten::linear again, whose parts
    # then record nothing (else this kernel would run again, without end); the node is one
    x, w, b = leaf(4, 3), leaf(2, 3, seed=1), leaf(2, seed=2) if bias else None
    want = tp.linear(x, w, b).detach().numpy()
    calls = []

    def forward(input, weight, bias=None):
        calls.append(1)
        return tp.linear(input, weight, bias)

    with tp.Library("tensorplug", "IMPL") as own:
        own.impl("linear_forward", forward, "CPU", override=True)
        out = tp.linear(x, w, b)
    assert len(calls) == 1
    assert out.grad_fn.name() == "LinearBackward0"
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions[:2]] == ["AccumulateGrad"] * 2
    assert out.detach().numpy().tobytes() == want.tobytes()
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.ones((4, 2)).T @ x.detach().numpy())


def test_tracer_and_autocast_see_linear_as_before() -> None:
    # tensorplug::linear_forward is the node's forward only: a trace records aten::linear (or,
    # with decompose=True, its parts) and never runs it (Note [Fused nodes of composite ops]);
    # autocast casts linear's inputs by its policy, and the node runs on the casts
    x, w, b = tp.randn([4, 3]), tp.randn([2, 3], requires_grad=True), tp.randn([2]).requires_grad_()
    real = tp.ops.tensorplug.linear_forward.default.kernel_for(tp.keys.keyset("CPU"))
    calls = []

    def forward(*args):
        calls.append(args[0].dtype)
        return real(*args)

    with tp.Library("tensorplug", "IMPL") as own:
        own.impl("linear_forward", tp.library.mark_no_dispatch(forward), "CPU", override=True)
        tp.linear(x, w, b)
        assert calls == [tp.float32]  # eager: the node's forward
        if needs.HAS_TRACER:
            g = tp.tracer.trace(tp.linear, x, w, b)
            assert [n.op.name for n in g.nodes] == ["aten::linear.default"]
            d = tp.tracer.trace(tp.linear, x, w, b, decompose=True)
            names = [n.op.name for n in d.nodes]
            assert "aten::addmm.default" in names and not any("linear" in n for n in names)
            assert calls == [tp.float32]
        if needs.HAS_AUTOCAST:
            with tp.autocast("cpu"):
                y = tp.linear(x, w, b)
            assert calls[1:] == [tp.bfloat16] and y.dtype is tp.bfloat16
            assert y.grad_fn.name() == "LinearBackward0"
            bf = tp.bfloat16
            want = tp.addmm(b.detach().to(bf), x.to(bf), w.detach().to(bf).t())
            assert y.detach().numpy().tobytes() == want.numpy().tobytes()
