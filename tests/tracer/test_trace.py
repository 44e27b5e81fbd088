"""tp.tracer.trace: what a graph records, prints and replays, checked against eager runs."""

from __future__ import annotations

import re
import shutil
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.tracer()

trace = tp.tracer.trace


def same(a: tp.Tensor, b: tp.Tensor) -> bool:
    """Bitwise equality: replays run the same kernels as eager calls."""
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and np.array_equal(
            np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()), equal_nan=True
        )
    )


def test_ir_one_line_per_node_and_replay_on_new_inputs() -> None:
    def f(x, w):
        return (x @ w).relu().sum()

    g = trace(f, tp.randn([4, 3]), tp.randn([3, 2]))
    text = str(g)
    assert text.splitlines()[0] == "graph f(%x: float32[4, 3], %w: float32[3, 2]):"
    assert re.search(
        r"^  %0 = aten::matmul\(%x, %w\)  # float32\[4, 2\]; test_trace\.py:\d+$", text, re.M
    )
    assert "  %1 = aten::relu(%0)" in text and "  return %2" in text
    assert [n.op.name for n in g.nodes] == [
        "aten::matmul.default", "aten::relu.default", "aten::sum.default",
    ]  # fmt: skip
    assert g.nodes[0].inputs == g.inputs and g.nodes[1].inputs == [g.nodes[0].outputs[0]]
    x2, w2 = tp.randn([4, 3]), tp.randn([3, 2])
    assert same(g(x2, w2), f(x2, w2))


def test_code_is_equivalent_python_calling_tp_ops() -> None:
    def f(x, y):
        return tp.add(x, y, alpha=2).mul(3.5), x.sum(dtype=tp.float64)

    g = trace(f, tp.randn([3]), tp.randn([3]))
    code = g.code
    assert code.startswith("def f(x, y):\n")
    assert "v0 = tp.ops.aten.add.Tensor(x, y, alpha=2)" in code
    assert "tp.ops.aten.sum.default(x, dtype=tp.float64)" in code
    ns = g.globals()
    exec(code, ns)
    x, y = tp.randn([3]), tp.randn([3])
    got, want = ns["f"](x, y), f(x, y)
    assert all(same(a, b) for a, b in zip(got, want, strict=True))


def test_pytrees_in_and_out() -> None:
    def f(batch, params, *, scale):
        h = batch["x"] @ params[0] + params[1]
        return {"h": h * scale, "parts": [h.sum(), (h.max(),)]}

    batch = {"x": tp.randn([2, 3])}
    params = (tp.randn([3, 4]), tp.randn([4]))
    g = trace(f, batch, params, scale=2.0)
    assert [v.name for v in g.inputs] == ["batch_x", "params_0", "params_1"]
    assert "batch_x = batch['x']" in g.code
    b2, p2 = {"x": tp.randn([2, 3])}, (tp.randn([3, 4]), tp.randn([4]))
    got, want = g(b2, p2, scale=2.0), f(b2, p2, scale=2.0)
    assert same(got["h"], want["h"]) and same(got["parts"][1][0], want["parts"][1][0])
    with pytest.raises(TypeError, match=r"graph f was traced with arguments structured as"):
        g([b2], p2, scale=2.0)
    with pytest.raises(
        ValueError, match=r"traced with 2\.0 at argument leaf 3 and keeps it as a constant"
    ):
        g(b2, p2, scale=3.0)


def test_closed_over_tensors_are_constants_by_reference() -> None:
    w = tp.randn([3, 3])

    def f(x):
        return x @ w

    g = trace(f, tp.randn([2, 3]))
    assert len(g.constants) == 1 and g.constants[0].tensor is w
    assert "%c0: float32[3, 3] = constant" in str(g)
    w.mul_(2)  # the graph sees the weight as it is when it runs
    x = tp.randn([2, 3])
    assert same(g(x), f(x))


def test_factories_are_recorded() -> None:
    def f(x):
        return x + tp.ones([3]) + tp.arange(3, dtype=tp.float32)

    g = trace(f, tp.zeros([3]))
    assert {"aten::ones.default", "aten::arange.default"} <= {n.op.name for n in g.nodes}
    assert not g.constants
    assert same(g(tp.full([3], 2.0)), tp.tensor([3.0, 4.0, 5.0]))


def test_random_ops_draw_again_on_replay() -> None:
    g = trace(lambda x: x + tp.randn([4]), tp.zeros([4]))
    tp.manual_seed(7)
    a = g(tp.zeros([4]))
    tp.manual_seed(7)
    assert same(a, tp.randn([4]))


def test_inplace_on_an_input_is_replayed_on_the_new_input() -> None:
    def f(x):
        x.mul_(2)
        x[0] = 5.0  # a view written in place
        return x.sum()

    g = trace(f, tp.ones([3]))
    ops = [n.op.name for n in g.nodes]
    assert "aten::mul_.Tensor" in ops or "aten::mul_.Scalar" in ops
    assert "aten::select.int" in ops and "aten::fill_.Scalar" in ops
    x = tp.tensor([1.0, 2.0, 3.0])
    assert same(g(x), tp.tensor(15.0))
    assert same(x, tp.tensor([5.0, 4.0, 6.0]))


def test_views_alias_their_base_in_a_replay() -> None:
    def f(x):
        v = x.view([2, 2]).t()
        v.add_(1)
        return v

    g = trace(f, tp.zeros([4]))
    x = tp.arange(4, dtype=tp.float32)
    out = g(x)
    assert same(x, tp.tensor([1.0, 2.0, 3.0, 4.0]))
    out.fill_(0)  # the returned view still aliases the new input
    assert same(x, tp.zeros([4]))


def test_custom_op_defined_after_the_plugin_loaded(ns: str) -> None:
    with tp.Library(ns, "DEF") as lib:
        lib.define("scale(Tensor x, float s) -> Tensor")
        lib.impl("scale", lambda x, s: tp.mul(x, s), "CompositeExplicitAutograd")
        op = getattr(tp.ops, ns).scale

        def f(x):
            return op(x, 3.0).exp()

        g = trace(f, tp.randn([3]))
        assert g.nodes[0].op.name == f"{ns}::scale.default"
        assert str(g).splitlines()[1].startswith(f"  %0 = {ns}::scale(%x, 3.0)")
        x = tp.randn([3])
        assert same(g(x), f(x))


def test_composite_is_one_node_unless_decompose() -> None:
    x, w, b = tp.randn([2, 3]), tp.randn([4, 3]), tp.randn([4])
    assert tp.ops.aten.linear.default.has_kernel("CompositeImplicitAutograd")
    g = trace(tp.linear, x, w, b)
    assert [n.op.name for n in g.nodes] == ["aten::linear.default"]
    d = trace(tp.linear, x, w, b, decompose=True)
    names = [n.op.name for n in d.nodes]
    assert "aten::linear.default" not in names and "aten::addmm.default" in names
    for graph in (g, d):
        assert same(graph(x, w, b), tp.linear(x, w, b))


def test_nodes_list_ops_inputs_outputs_constants() -> None:
    g = trace(lambda x: tp.sum(x, [0], keepdim=True), tp.randn([2, 3]))
    (n,) = g.nodes
    assert n.op is tp.ops.aten.sum.dim_IntList
    assert n.inputs == [g.inputs[0]] and len(n.outputs) == 1
    assert n.constants["dim"] == (0,) and n.constants["keepdim"] is True
    assert n.outputs[0].meta.shape == (1, 3)


# --- data-dependent Python -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("read", "what"),
    [
        (lambda t: t.sum().item(), "item"),
        (lambda t: bool(t.sum() > 0), "bool"),
        (lambda t: int(t.sum()), "int"),
        (lambda t: float(t.sum()), "float"),
        (lambda t: t.tolist(), ".tolist()"),
    ],
)
def test_value_reads_warn_naming_the_users_line(read, what) -> None:
    def f(x):
        read(x)
        return x * 2

    line = read.__code__.co_firstlineno  # the user's line is the lambda that reads the value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = trace(f, tp.ones([2]))
    ws = [w for w in caught if w.category is tp.tracer.TracerWarning]
    assert len(ws) == 1, [str(w.message) for w in caught]
    assert ws[0].filename == __file__ and ws[0].lineno == line
    assert f"test_trace.py:{line}" in str(ws[0].message)
    assert "may be wrong for other inputs" in str(ws[0].message)
    assert g.data_reads == [f"test_trace.py:{line}"]


def test_printing_a_tensor_is_not_a_data_read() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", tp.tracer.TracerWarning)
        trace(lambda x: repr(x) and x + 1, tp.ones([2]))


def test_check_inputs_catches_control_flow_on_values() -> None:
    def f(x):
        if x.sum() > 0:
            return x * 2
        return -x

    with pytest.raises(
        tp.tracer.TracingCheckError,
        match=r"check_inputs\[0\]: the function records a different graph on these inputs: "
        r"node 3 is aten::mul\.Scalar \(test_trace\.py:\d+\) in the traced graph and "
        r"aten::neg \(test_trace\.py:\d+\) on these inputs.*read tensor values at test_trace\.py:\d+",
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", tp.tracer.TracerWarning)
            trace(f, tp.ones([2]), check_inputs=[(-tp.ones([2]),)])


def test_check_inputs_catches_values_kept_as_constants() -> None:
    def f(x):
        return x * x.max().item()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tp.tracer.TracerWarning)
        trace(f, tp.ones([2]), check_inputs=[tp.ones([2])])  # same value: passes
        with pytest.raises(tp.tracer.TracingCheckError, match=r"output leaf 0 differs"):
            trace(f, tp.ones([2]), check_inputs=[tp.full([2], 3.0)])


# --- the graph as data -----------------------------------------------------------------------


def test_dead_code_elimination_keeps_writes_and_draws() -> None:
    def f(x, buf):
        x.exp()  # dead
        buf.add_(1)  # a write: kept
        tp.rand([2])  # a draw: kept (the generator moves on)
        return x.sin()

    g = trace(f, tp.ones([2]), tp.zeros([2]))
    assert g.eliminate_dead_code() == 1
    assert [n.op.name for n in g.nodes] == [
        "aten::add_.Scalar", "aten::rand.default", "aten::sin.default",
    ]  # fmt: skip
    buf = tp.zeros([2])
    g(tp.ones([2]), buf)
    assert same(buf, tp.ones([2]))


def test_to_dot_and_render(tmp_path) -> None:
    g = trace(lambda x, y: (x * y).sum(), tp.ones([2]), tp.ones([2]))
    dot = g.to_dot()
    assert dot.startswith("digraph graph_ {") and dot.rstrip().endswith("}")
    assert 'label="%0 = aten::mul.Tensor"' in dot and "-> ret;" in dot
    if shutil.which("dot") is None:
        with pytest.raises(RuntimeError, match=r"Graph\.render needs Graphviz's `dot` program"):
            g.render(tmp_path / "g.svg")
    else:
        assert "<svg" in g.render(tmp_path / "g.svg").read_text()


def test_nested_trace_is_refused() -> None:
    with pytest.raises(
        RuntimeError, match=r"tp\.tracer\.trace was called while this thread is already tracing"
    ):
        trace(lambda x: trace(lambda y: y + 1, x), tp.ones([1]))


def test_replaying_a_graph_inside_a_trace_records_its_nodes() -> None:
    inner = trace(lambda x: x.exp() + 1, tp.ones([2]))
    outer = trace(lambda x: inner(x) * 2, tp.ones([2]))
    assert [n.op.op_name for n in outer.nodes] == ["exp", "add", "mul"]


# --- under autograd ----------------------------------------------------------------------------


@needs.needs_autograd
def test_joint_graph_of_autograd_grad_equals_eager() -> None:
    w = tp.randn([3, 4], requires_grad=True)
    b = tp.randn([4], requires_grad=True)

    def f(x):
        loss = tp.linear(x, w.t(), b).tanh().pow(2).mean()
        return tp.autograd.grad(loss, [w, b])

    g = trace(f, tp.randn([5, 3]))
    ops = [n.op.op_name for n in g.nodes]
    assert "tanh_backward" in ops or "mul" in ops
    assert any(n.excluded for n in g.nodes), "the backward nodes ran with Autograd excluded"
    x = tp.randn([5, 3])
    got, want = g(x), f(x)
    assert all(same(a, b) for a, b in zip(got, want, strict=True))
    assert not any(t.requires_grad for t in got)


@needs.needs_autograd
def test_backward_and_requires_grad_inside_the_function() -> None:
    def f(x):
        x.requires_grad_()
        (x.sin() * x).sum().backward()
        return x.grad

    g = trace(f, tp.randn([3]))
    assert [e.what for e in g.effects] == ["grad", "requires_grad"]
    assert "%x.grad = " in str(g) and "%x.requires_grad_(True)" in str(g)
    x1, x2 = tp.randn([3]), None
    x2 = x1.detach().clone()
    got, want = g(x1), f(x2)
    assert same(got, want) and same(x1.grad, x2.grad) and x1.requires_grad


@needs.needs_autograd
def test_replay_under_autograd_differentiates_the_graph() -> None:
    g = trace(lambda x, w: (x @ w).relu().sum(), tp.randn([2, 3]), tp.randn([3, 2]))
    x, w = tp.randn([2, 3]), tp.randn([3, 2], requires_grad=True)
    (gw,) = tp.autograd.grad(g(x, w), [w])
    w2 = w.detach().clone().requires_grad_()
    (want,) = tp.autograd.grad((x @ w2).relu().sum(), [w2])
    assert same(gw, want)


@needs.needs_autograd
def test_composite_internals_read_by_backward_become_nodes() -> None:
    # linear (one node) computes w.t() inside; its backward reads that transposed weight, so
    # the graph must compute it from the weight, not keep the traced value as a constant
    w = tp.randn([4, 3], requires_grad=True)

    def f(x):
        y = tp.linear(x, w).sum()
        return tp.autograd.grad(y, [x])[0]

    x = tp.randn([2, 3], requires_grad=True)
    g = trace(f, x)
    assert any(
        n.op.name == "aten::transpose.int"
        and n.inputs[0].kind == "constant"
        and n.inputs[0].tensor is w
        for n in g.nodes
    )
    with tp.no_grad():
        w.mul_(3)
    x2 = tp.randn([2, 3], requires_grad=True)
    assert same(g(x2), f(x2))


@needs.needs_autograd
def test_an_inputs_existing_grad_is_read_at_each_replay() -> None:
    def f(x):
        x.grad.mul_(0.5)  # an optimizer's zero_grad(set_to_none=False) would write it so
        (x * x).sum().backward()  # accumulates into it in place
        return x.grad

    x = tp.ones([2], requires_grad=True)
    x.grad = tp.ones([2])
    g = tp.tracer.trace(f, x)
    assert "%x.grad: float32[2] = the .grad it had when the call began" in str(g)
    x2 = tp.full([2], 3.0, requires_grad=True)
    x2.grad = tp.full([2], 4.0)
    before = x2.grad
    out = g(x2)
    assert out is before and same(x2.grad, tp.full([2], 8.0))  # 0.5 * 4 + 2 * 3


@pytest.mark.skipif("foo" not in tp.plugins.loaded_names(), reason="needs examples/foo_backend")
def test_a_replay_runs_on_the_backend_of_its_inputs() -> None:
    def f(x, y):
        return (x * y).exp().sum(0)

    g = tp.tracer.trace(f, tp.randn([3, 2]), tp.randn([3, 2]))  # traced on CPU
    xs, ys = tp.randn([3, 2]), tp.randn([3, 2])
    out = g(xs.to("foo"), ys.to("foo"))
    assert out.device.type == "foo"
    assert same(out.cpu(), f(xs, ys))


# --- replay plans (Note [Replay plans] in codegen.py) ------------------------------------------


def _plans(g: tp.tracer.Graph):
    g(*[tp.randn(list(v.meta.shape)) for v in g.inputs])  # makes the replay function
    return g._replay.plans  # the plugin's own cache of lowered plans


def test_a_replay_runs_a_lowered_plan_traced_once_per_call_key() -> None:
    w = tp.randn([3, 2])

    def f(x):
        return tp.linear(x, w.t()).relu().sum(0)

    g = trace(f, tp.randn([4, 3]))
    plans = _plans(g)
    for _ in range(3):
        x = tp.randn([4, 3])
        assert same(g(x), f(x))
    assert plans.trace_count == 1  # the first call traced the plan; the others ran it
    (graph,) = plans.graphs
    # linear decomposed (into t and matmul), and w.t().t() read as w
    assert [n.op.op_name for n in graph.nodes] == ["matmul", "relu", "sum"]
    x = tp.randn([5, 3])  # another shape: another plan
    assert same(g(x), f(x)) and plans.trace_count == 2


def test_a_replay_plan_follows_a_later_registration(ns: str) -> None:
    with tp.Library(ns, "DEF") as lib:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: tp.mul(x, 2), "CPU")
        op = getattr(tp.ops, ns).twice.default
        g = trace(lambda x: op(x) + 1, tp.ones([2]))
        x = tp.ones([2])
        assert same(g(x), tp.full([2], 3.0)) and same(g(x), tp.full([2], 3.0))
        lib.impl("twice", lambda x: tp.mul(x, 10), "CPU", override=True)
        assert same(g(x), tp.full([2], 11.0))
    with pytest.raises(tp.RegistrationError, match=f"{ns}::twice.default was removed"):
        g(x)


@needs.needs_autograd
def test_a_replay_that_records_autograd_history_dispatches() -> None:
    w = tp.randn([3, 2], requires_grad=True)
    g = trace(lambda x: (x @ w).tanh().sum(), tp.randn([4, 3]))
    plans = _plans(g)
    x = tp.randn([4, 3])
    out = g(x)  # grad mode on and a weight that requires grad: through the dispatcher
    assert out.requires_grad and out.grad_fn is not None
    (gw,) = tp.autograd.grad(out, [w])
    w2 = w.detach().clone().requires_grad_()
    (want,) = tp.autograd.grad((x @ w2).tanh().sum(), [w2])
    assert same(gw, want)
    with tp.no_grad():
        assert same(g(x), (x @ w).tanh().sum())
    assert plans.trace_count == 1  # only the no_grad call has a plan


@pytest.mark.skipif("batched" not in tp.plugins.loaded_names(), reason="needs tensorplug-batched")
def test_a_replay_under_vmap_dispatches() -> None:
    w = tp.randn([3, 3])

    def f(x):
        return (x @ w).relu().sum(0)

    g = trace(f, tp.randn([4, 3]))
    plans = _plans(g)
    xs = tp.randn([5, 4, 3])
    assert same(tp.vmap(g)(xs), tp.stack([f(xs[i]) for i in range(5)]))
    assert plans.trace_count == 1  # no plan traced under vmap


@pytest.mark.skipif("autocast" not in tp.plugins.loaded_names(), reason="needs tensorplug-autocast")
def test_a_replay_in_an_autocast_region_dispatches() -> None:
    w = tp.randn([3, 3])

    def f(x):
        return (x @ w).relu()

    g = trace(f, tp.randn([4, 3]))
    plans = _plans(g)
    x = tp.randn([4, 3])
    with tp.autocast("cpu"):
        got, want = g(x), f(x)
    assert got.dtype == tp.bfloat16 and same(got, want)
    assert plans.trace_count == 1
