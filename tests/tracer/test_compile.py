"""tp.compile: guards, retracing, the bounded cache, invalidation, the eager fallback, and a
training step bitwise equal to eager execution."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.tracer()


def same(a: tp.Tensor, b: tp.Tensor) -> bool:
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and np.array_equal(
            np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()), equal_nan=True
        )
    )


def counted(fn):
    """``fn`` wrapped to count how often its Python body runs (each trace runs it once)."""
    calls = []

    def wrapper(*args, **kwargs):
        calls.append(1)
        return fn(*args, **kwargs)

    wrapper.calls = calls
    return wrapper


def test_traces_until_two_calls_agree_then_runs_the_lowered_graph() -> None:
    f = counted(lambda x, y: (x * y + 1).exp().sum(1))
    c = tp.compile(f)
    x, y = tp.randn([3, 4]), tp.randn([3, 4])
    assert same(c(x, y), f(x, y))
    for _ in range(3):
        x, y = tp.randn([3, 4]), tp.randn([3, 4])
        assert same(c(x, y), (x * y + 1).exp().sum(1))
    # two traces (Note [Confirmed graphs]), one eager call above; then the lowered graph
    assert c.trace_count == 2 and len(f.calls) == 3
    (g,) = c.graphs
    assert [n.op.op_name for n in g.nodes] == ["mul", "add", "exp", "sum"]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda x: tp.randn([5, 4]), "shape"),
        (lambda x: x.to(tp.float64), "dtype"),
        (lambda x: (x, 1), "structure"),
    ],
)
def test_guards_retrace(change, why) -> None:
    c = tp.compile(lambda x: x.sum() if isinstance(x, tp.Tensor) else x[0].sum() * x[1])
    x = tp.randn([3, 4])
    c(x)
    c(tp.randn([3, 4]))
    c(x)
    assert c.trace_count == 2
    y = change(x)
    want = y.sum() if isinstance(y, tp.Tensor) else y[0].sum()
    for _ in range(3):
        assert same(c(y), want)
    assert c.trace_count == 4, why
    c(x)  # the first graph is still cached
    assert c.trace_count == 4 and len(c.graphs) == 2


@needs.needs_autograd
def test_requires_grad_and_grad_mode_are_guarded() -> None:
    c = tp.compile(lambda x: (x * 2).sum())
    x = tp.randn([3])
    for _ in range(3):
        assert not c(x).requires_grad
    xg = tp.randn([3], requires_grad=True)
    for _ in range(3):
        out = c(xg)
        assert (
            out.requires_grad
        )  # the lowered graph keeps autograd for what the caller differentiates
        (gx,) = tp.autograd.grad(out, [xg])
        assert same(gx, tp.full([3], 2.0))
    assert c.trace_count == 4
    with tp.no_grad():
        for _ in range(3):
            assert not c(xg).requires_grad
    assert c.trace_count == 6 and len(c.graphs) == 3


def test_non_tensor_arguments_are_part_of_the_key() -> None:
    c = tp.compile(lambda x, k: x * k)
    x = tp.ones([2])
    assert same(c(x, 2.0), tp.full([2], 2.0))
    assert same(c(x, 3.0), tp.full([2], 3.0))
    assert same(c(x, k=3.0), tp.full([2], 3.0))
    assert c.trace_count == 3


def test_cache_is_bounded_least_recently_used_first() -> None:
    c = tp.compile(lambda x: x + 1, cache_size=2)
    a, b, d = tp.ones([1]), tp.ones([2]), tp.ones([3])
    for t in (a, a, b, b, a, d, d):  # b is the least recently used when d arrives
        c(t)
    assert len(c.graphs) == 2 and c.evictions == 1 and c.trace_count == 6
    c(a)
    assert c.trace_count == 6
    c(b)
    assert c.trace_count == 7
    with pytest.raises(ValueError, match=r"tp\.compile: cache_size must be at least 1, got 0"):
        tp.compile(lambda x: x, cache_size=0)


def test_a_changed_closed_over_tensor_retraces() -> None:
    w = tp.ones([2])
    c = tp.compile(lambda x: x * w)
    c(tp.ones([2]))
    c(tp.ones([2]))
    w.mul_(3)  # values: seen, no retrace (held by reference)
    assert same(c(tp.ones([2])), tp.full([2], 3.0)) and c.trace_count == 2


def test_registration_change_of_a_used_op_invalidates(ns: str) -> None:
    with tp.Library(ns, "DEF") as lib:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: tp.mul(x, 2), "CPU")
        op = getattr(tp.ops, ns).twice.default
        c = tp.compile(lambda x: op(x) + 1)
        x = tp.ones([2])
        assert same(c(x), tp.full([2], 3.0)) and same(c(x), tp.full([2], 3.0))
        with tp.Library("aten", "FRAGMENT") as other:  # an unrelated registration
            other.define(f"{ns}_unrelated(Tensor x) -> Tensor")
        assert same(c(x), tp.full([2], 3.0)) and c.trace_count == 2
        lib.impl("twice", lambda x: tp.mul(x, 10), "CPU", override=True)
        assert same(c(x), tp.full([2], 11.0))
        assert c.trace_count == 3


def test_unregistering_a_plugin_invalidates(ns: str) -> None:
    class Plugin:
        @staticmethod
        @tp.hookimpl
        def tensorplug_register_kernels(registry):
            registry.library("aten", "IMPL").impl(
                "exp", lambda x: tp.zeros_like(x), "CPU", override=True
            )

    c = tp.compile(lambda x: x.exp())
    x = tp.zeros([2])
    tp.plugins.register(Plugin, name=f"{ns}_plugin")
    try:
        assert same(c(x), tp.zeros([2]))
    finally:
        tp.plugins.unregister(f"{ns}_plugin")
    assert same(c(x), tp.ones([2]))
    assert c.trace_count == 2


def test_data_dependent_function_runs_eagerly_with_one_warning() -> None:
    f = counted(lambda x: x * x.sum().item())
    c = tp.compile(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for v in (1.0, 2.0, 3.0):
            x = tp.full([2], v)
            assert same(c(x), x * (2 * v))
    msgs = [str(w.message) for w in caught if w.category is tp.tracer.TracerWarning]
    assert len(msgs) == 1, msgs
    assert "reads tensor values into Python (at test_compile.py:" in msgs[0]
    assert "it runs eagerly for calls like this one" in msgs[0]
    assert c.trace_count == 1 and len(f.calls) == 3


def test_compiled_function_inside_a_trace_is_recorded_inline() -> None:
    c = tp.compile(lambda x: x.exp())
    g = tp.tracer.trace(lambda x: c(x) + 1, tp.ones([2]))
    assert [n.op.op_name for n in g.nodes] == ["exp", "add"]
    assert c.trace_count == 0


def test_outputs_keep_their_structure() -> None:
    c = tp.compile(lambda x: {"a": x + 1, "b": [x * 2, 3]})
    for _ in range(2):
        out = c(tp.ones([2]))
        assert set(out) == {"a", "b"} and out["b"][1] == 3 and same(out["b"][0], tp.full([2], 2.0))


def test_decorator_form() -> None:
    @tp.compile(cache_size=1)
    def f(x):
        return x - 1

    assert same(f(tp.ones([1])), tp.zeros([1])) and f.cache_size == 1 and f.__name__ == "f"


# --- the headline: a training step -----------------------------------------------------------


def _mlp(seed: int):
    r = np.random.default_rng(seed)
    arrays = [
        r.standard_normal((128, 784)) * 0.03,
        np.zeros(128),
        r.standard_normal((10, 128)) * 0.1,
        np.zeros(10),
    ]
    return [tp.tensor(a.astype(np.float32), requires_grad=True) for a in arrays]


def _step(params, lr=0.1):
    w1, b1, w2, b2 = params

    def step(x, y):
        z = tp.linear(tp.linear(x, w1, b1).relu(), w2, b2)
        loss = tp.nn.functional.cross_entropy(z, y)
        grads = tp.autograd.grad(loss, params)
        with tp.no_grad():
            for p, g in zip(params, grads, strict=True):
                p.sub_(g, alpha=lr)
        return loss.detach()

    return step


@needs.needs_autograd
def test_training_step_is_bitwise_equal_to_eager_over_50_steps() -> None:
    eager_params, compiled_params = _mlp(0), _mlp(0)
    eager, compiled = _step(eager_params), tp.compile(_step(compiled_params))
    rng = np.random.default_rng(1)
    for i in range(50):
        x = tp.tensor(rng.standard_normal((64, 784)).astype(np.float32))  # the MLP of bench/
        y = tp.tensor(rng.integers(0, 10, 64))
        assert same(compiled(x, y), eager(x, y)), f"loss differs at step {i}"
    for a, b in zip(eager_params, compiled_params, strict=True):
        assert same(a, b)
    assert compiled.trace_count in (2, 3)  # 3: the engine's first backward seeds its cache
    (g,) = compiled.graphs
    assert not any(n.op.op_name == "linear" for n in g.nodes), "compile decomposes composites"
    assert eager_params[0]._version == compiled_params[0]._version  # writes bump versions


@needs.needs_autograd
def test_training_step_with_backward_and_an_optimizer() -> None:
    def make(seed):
        tp.manual_seed(seed)
        model = tp.nn.Sequential(tp.nn.Linear(6, 8), tp.nn.Tanh(), tp.nn.Linear(8, 3))
        opt = tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)  # buffers made at step 1

        def step(x, y):
            opt.zero_grad()
            loss = tp.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        return model, step

    (m1, s1), (m2, s2) = make(3), make(3)
    s2 = tp.compile(s2)
    rng = np.random.default_rng(2)
    for _ in range(10):
        x = tp.tensor(rng.standard_normal((4, 6)).astype(np.float32))
        y = tp.tensor(rng.integers(0, 3, 4))
        assert same(s1(x, y), s2(x, y))
    for a, b in zip(m1.parameters(), m2.parameters(), strict=True):
        assert same(a, b) and same(a.grad, b.grad)


@needs.needs_autograd
def test_a_step_count_kept_in_python_runs_eagerly_with_one_warning() -> None:
    def make():
        count = [0]

        def step(x):
            count[0] += 1  # a Python step count in the arithmetic: a new constant each call
            return x * (1 - 0.9 ** count[0])

        return step

    eager, compiled = make(), tp.compile(make())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(8):
            x = tp.full([3, 4], float(i))
            assert same(compiled(x), eager(x)), f"step {i}"
    msgs = [str(w.message) for w in caught if w.category is tp.tracer.TracerWarning]
    assert len(msgs) == 1 and "records a different graph at each of 4 calls" in msgs[0], msgs
    assert compiled.trace_count == 4
    with pytest.raises(tp.tracer.CompileError, match="records a different graph at each of 4"):
        full = tp.compile(make(), fullgraph=True)
        for i in range(8):
            full(tp.full([3, 4], float(i)))


@needs.needs_autograd
def test_a_compiled_forward_of_fused_ops_returns_a_loss_to_differentiate() -> None:
    # autograd records linear and cross_entropy as one node each, except under the tracer
    # (Note [Fused nodes of composite ops]): the lowered graph keeps the parts' autograd kernels
    w = tp.randn([4, 3], requires_grad=True)
    b = tp.zeros([4], requires_grad=True)
    y = tp.tensor([0, 2, 1])

    def f(x):
        return tp.cross_entropy(tp.linear(x, w, b), y)

    compiled = tp.compile(f)
    x = tp.randn([3, 3])
    f(x).backward()
    want = w.grad.clone()
    for _ in range(3):  # traced, then lowered
        w.grad = None
        loss = compiled(x)
        assert loss.requires_grad
        loss.backward()
        assert same(w.grad, want)


def test_a_lowered_write_bumps_the_version_counter_once_as_eager() -> None:
    w, w_eager = tp.zeros([3]), tp.zeros([3])
    view = w[1:]  # shares the counter
    c = tp.compile(lambda x: w.add_(x).mul_(2))
    x = tp.ones([3])
    for _ in range(4):
        before, before_eager = w.tp_version.value, w_eager.tp_version.value
        c(x)
        w_eager.add_(x).mul_(2)
        assert w.tp_version.value - before == w_eager.tp_version.value - before_eager == 2
    assert c.trace_count == 2 and same(w, w_eager) and view.tp_version is w.tp_version


def test_a_lowered_write_does_not_hold_the_version_counter_during_its_kernel(ns: str) -> None:
    # a kernel may tell a tensor with views by its counter's reference count (the autograd
    # plugin's in-place kernels do): the lowered form must not hold one more than eager does
    seen = []

    def bump(x):
        seen.append(sys.getrefcount(x.tp_version))
        return x

    with tp.Library(ns, "DEF") as lib:
        lib.define("bump_(Tensor(a!) x) -> Tensor(a!)")
        lib.impl("bump_", bump, "CPU")
        op = getattr(tp.ops, ns).bump_.default
        c = tp.compile(lambda x: op(x * 2))
        x = tp.ones([2])
        op(x * 2)
        eager = seen.pop()
        for _ in range(4):  # traced, then lowered
            c(x)
        assert seen == [eager] * 4 and c.trace_count == 2


@needs.needs_autograd
def test_a_copy_only_read_is_dropped_and_a_written_one_kept() -> None:
    w = tp.randn([3, 4], requires_grad=True)
    y = tp.tensor([1, 3])

    def step(x):
        loss = tp.nn.functional.cross_entropy(x @ w, y)
        (g,) = tp.autograd.grad(loss, [w])  # the seed gradient: a clone of a constant
        return g

    c = tp.compile(step)
    x = tp.randn([2, 3])
    for _ in range(3):
        assert same(c(x), step(x))
    (graph,) = c.graphs
    assert "clone" not in [n.op.op_name for n in graph.nodes]

    def written(x):
        y = x.clone()
        y.add_(1)  # the clone's result is written: it must stay a copy
        return x * y

    c = tp.compile(written)
    for _ in range(3):
        x = tp.randn([3])
        x0 = x.clone()
        assert same(c(x), written(x0.clone())) and same(x, x0)
    (graph,) = c.graphs
    assert "clone" in [n.op.op_name for n in graph.nodes]
