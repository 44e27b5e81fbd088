"""Specialized calls (Note [Specialized calls] in dispatcher/_callgen.py) and the public functions and
methods that run them inline (Note [Public function fast path] in _opset/functions.py).

The oracle of each test is the general path: the same call with the public function's cache
empty (``_choice.clear()``) goes through ``general`` and the operator's generated ``__call__``;
the fast path must give the same bits, the same errors and the same side effects."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.dispatch import include
from tensorplug.tensor import Tensor

T1, T2, T3 = (Tensor,), (Tensor, Tensor), (Tensor, Tensor, Tensor)
T2A = (Tensor, Tensor, "alpha", float)


def _choice(fn):
    """The signature cache of a public function or method (the generated code's global)."""
    return fn.__globals__["choice"]


def _warm(call, *args, **kwargs):
    """Call twice: the first fills the public function's cache, the second hits it."""
    call(*args, **kwargs)
    return call(*args, **kwargs)


def _cold(choice, call, *args, **kwargs):
    """The call through the general path: the cache emptied first, and again after."""
    choice.clear()
    try:
        return call(*args, **kwargs)
    finally:
        choice.clear()


def _error(call, *args, **kwargs) -> tuple[type, str]:
    with pytest.raises(Exception) as e:
        call(*args, **kwargs)
    return type(e.value), str(e.value)


def test_the_caches_hold_the_specialized_calls_that_the_public_functions_inline():
    a, b, c = tp.ones([2]), tp.ones([2]), tp.ones([3, 2])
    _warm(tp.add, a, b)
    _warm(tp.linear, c, tp.ones([4, 2]), tp.ones([4]))
    _warm(Tensor.relu, a)
    with tp.no_grad():
        _warm(Tensor.sub_, tp.ones([2]), b, alpha=0.5)
    assert tp.add._choice.t2 is tp.ops.aten.add.Tensor._specialization(T2)
    assert tp.linear._choice.t3 is tp.ops.aten.linear.default._specialization(T3)
    assert tp.relu._choice.t1 is tp.ops.aten.relu.default._specialization(T1)
    assert _choice(Tensor.sub_).t2a is tp.ops.aten.sub_.Tensor._specialization(T2A)
    # what they run: the kernel with the schema's defaults, without __call__'s checks
    src = tp.ops.aten.add.Tensor._specialization(T2).__source__
    assert "_k(self, other, alpha=_D2)" in src and "_extra" not in src
    assert "if choice.s2 is _op_2:" in tp.add.__source__
    assert "if choice.s2a is _op_2a:" in tp.Tensor.sub_.__source__


@pytest.mark.parametrize("grad", [False, True])
def test_fast_and_general_paths_give_the_same_bits(grad):
    rng = np.random.default_rng(0)
    xn, wn, bn = (rng.standard_normal(s).astype(np.float32) for s in ((5, 3), (4, 3), (4,)))
    calls = [
        (tp.add, lambda x, w, b: (x, x * 2)),
        (tp.mul, lambda x, w, b: (x, x)),
        (tp.linear, lambda x, w, b: (x, w, b)),
        (tp.relu, lambda x, w, b: (x,)),
        (Tensor.relu, lambda x, w, b: (x,)),
        (Tensor.add, lambda x, w, b: (x, x)),
        (tp.sub, lambda x, w, b: (x, x * 3)),
    ]
    for fn, make in calls:
        results = []
        for path in ("general", "fast", "fast"):
            x = tp.tensor(xn, requires_grad=grad)
            w, b = tp.tensor(wn, requires_grad=grad), tp.tensor(bn)
            args = make(x, w, b)
            choice = _choice(fn)
            r = _cold(choice, fn, *args) if path == "general" else _warm(fn, *args)
            grads = []
            if grad:
                r.sum().backward()
                grads = [x.grad.numpy(), w.grad.numpy() if w.grad is not None else None]
            results.append((r.detach().numpy(), grads))
        for got in results[1:]:
            np.testing.assert_array_equal(got[0], results[0][0])
            for g, e in zip(got[1], results[0][1], strict=True):
                if e is not None:
                    np.testing.assert_array_equal(g, e)
    # and against numpy
    x, w, b = tp.tensor(xn), tp.tensor(wn), tp.tensor(bn)
    np.testing.assert_allclose(_warm(tp.linear, x, w, b).numpy(), xn @ wn.T + bn, rtol=1e-6)
    np.testing.assert_array_equal(_warm(tp.add, x, x).numpy(), xn + xn)
    np.testing.assert_array_equal(_warm(Tensor.relu, x).numpy(), np.maximum(xn, 0))


def test_sub_with_alpha_fast_path_matches_the_general_one_and_bumps_versions_once():
    gn = np.array([10.0, 20.0, 30.0], np.float32)
    for alpha in (0.1, 2, True):
        out = []
        for path in ("general", "fast", "fast"):
            p, g = tp.tensor([1.0, 2.0, 3.0]), tp.tensor(gn)
            view = p[1:]
            v0 = p._version
            if path == "general":
                r = _cold(_choice(Tensor.sub_), p.sub_, g, alpha=alpha)
            else:
                p.sub_(g, alpha=alpha)  # fills the cache (a first in-place write)
                p.copy_(tp.tensor([1.0, 2.0, 3.0]))
                v0 = p._version
                r = p.sub_(g, alpha=alpha)
            assert r is p
            assert p._version == v0 + 1 and view._version == p._version  # views share it
            out.append(p.numpy())
        for got in out[1:]:
            np.testing.assert_array_equal(got, out[0])
        np.testing.assert_array_equal(out[0], np.float32([1, 2, 3]) - np.float32(alpha) * gn)
        assert (Tensor, Tensor, "alpha", type(alpha)) in _choice(Tensor.sub_)


def test_a_write_through_the_fast_path_invalidates_saved_tensors():
    w = tp.ones([3], requires_grad=True)
    p = tp.ones([3])
    y = (w * p).sum()  # saves p
    with tp.no_grad():
        _warm(Tensor.sub_, p, tp.ones([3]), alpha=0.5)
    assert _choice(Tensor.sub_).t2a is tp.ops.aten.sub_.Tensor._specialization(T2A)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_errors_are_the_general_paths_errors():
    a, b = tp.ones([2]), tp.ones([2])
    bad_calls = [
        (tp.add, (a, "x"), {}),
        (tp.add, (a, b, 1, 2), {}),
        (tp.add, (a, b), {"alph": 1}),
        (tp.add, (a,), {}),
        (tp.add, (a, b), {"alpha": 2**70}),
        (tp.linear, (a, b, b, b), {}),
        (tp.linear, (a, b, "x"), {}),
        (tp.relu, (a, 1), {}),
        (Tensor.relu, (a, 1), {}),
        (Tensor.relu, (a,), {"foo": 1}),
        (Tensor.sub_, (tp.ones([2]), b), {"alpha": "x"}),
        (Tensor.sub_, (tp.ones([2]), b), {"alpha": 2**70}),
        (Tensor.sub_, (tp.ones([2]), b, 1), {"alpha": 0.5}),
        (Tensor.sub_, (tp.ones([2]), b), {"alpha": 0.5, "beta": 1}),
    ]
    for fn, args, kwargs in bad_calls:
        choice = _choice(fn)
        expected = _cold(choice, _error, fn, *args, **kwargs)
        # warm every cache the call could hit: plain tensors, alpha int and float
        _warm(tp.add, a, b, alpha=2)
        _warm(tp.linear, tp.ones([1, 2]), tp.ones([2, 2]), b)
        for f in (tp.add, tp.relu, Tensor.relu, Tensor.add):
            _warm(f, *((a, b) if "add" in f.__name__ else (a,)))
        with tp.no_grad():
            _warm(Tensor.sub_, tp.ones([2]), b, alpha=0.5)
            _warm(Tensor.sub_, tp.ones([2]), b, alpha=2)
        assert _error(fn, *args, **kwargs) == expected, (fn, args, kwargs)


def test_a_missing_kernel_raises_the_dispatchers_error_naming_the_op(free_key):
    a, b = tp.ones([2]), tp.ones([2])
    _warm(tp.add, a, b)
    _warm(Tensor.relu, a)
    with include(free_key):
        with pytest.raises(tp.DispatchError, match=r"Could not run 'aten::add\.Tensor' with"):
            tp.add(a, b)
        with pytest.raises(tp.DispatchError, match=r"Could not run 'aten::relu\.default' with"):
            a.relu()
    assert tp.add._choice.t2 is tp.ops.aten.add.Tensor._specialization(T2)


def test_registration_changes_are_seen_by_the_next_call(free_key, ns):
    a, b = tp.ones([2]), tp.ones([2])
    _warm(tp.add, a, b)
    with tp.Library("aten", "IMPL") as lib:
        lib.impl("add.Tensor", lambda self, other, alpha: "mine", free_key)
        with include(free_key):
            assert tp.add(a, b) == "mine"
            assert a.add(b) == "mine"
    with include(free_key), pytest.raises(tp.DispatchError, match="aten::add.Tensor"):
        tp.add(a, b)
    np.testing.assert_array_equal(tp.add(a, b).numpy(), [2.0, 2.0])
    # defining an operator empties the caches; the next call fills them with the same call
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor self) -> Tensor")
        assert tp.add._choice.t2 is None
        _warm(tp.add, a, b)
        assert tp.add._choice.t2 is tp.ops.aten.add.Tensor._specialization(T2)


def test_tracing_sees_calls_through_the_fast_path():
    a, b = tp.ones([2]), tp.ones([2])
    x, w = tp.ones([1, 2]), tp.ones([3, 2])
    _warm(tp.add, a, b)
    _warm(tp.linear, x, w, tp.ones([3]))
    _warm(Tensor.relu, a)
    lines: list[str] = []
    with tp.dispatcher.tracing(lines.append):
        for _ in range(2):
            tp.add(a, b)
            tp.linear(x, w, tp.ones([3]))
            a.relu()
            with tp.no_grad():
                tp.ones([2]).sub_(b, alpha=0.5)
    calls = [ln.split()[2] for ln in lines if ln.startswith("[dispatch] call")]
    for name in ("aten::add.Tensor", "aten::linear.default", "aten::relu.default"):
        assert calls.count(name) == 2, (name, calls)
    assert calls.count("aten::sub_.Tensor") == 2
    # and after tracing, the fast path again
    _warm(tp.add, a, b)
    assert tp.add._choice.t2 is tp.ops.aten.add.Tensor._specialization(T2)


def test_the_protocol_is_still_asked_when_the_fast_path_is_warm():
    a, b = tp.ones([2]), tp.ones([2])
    _warm(tp.add, a, b)
    _warm(tp.linear, tp.ones([1, 2]), tp.ones([2, 2]), b)
    _warm(Tensor.relu, a)
    seen = []

    class Asked(tp.Tensor):
        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return "asked"

    s = tp.ones([2]).as_subclass(Asked)
    assert tp.add(a, s) == "asked" and tp.add(s, b) == "asked"
    assert tp.linear(tp.ones([1, 2]), tp.ones([2, 2]), s) == "asked"
    assert s.relu() == "asked"
    with tp.no_grad():
        assert s.sub_(b, alpha=0.5) == "asked"
    assert seen == ["add", "add", "linear", "relu", "sub_"]


def test_a_kernel_that_assigns_data_is_bumped_once(ns):
    # the generated and the specialized call of an in-place operator bump the written
    # tensor's counter once; assigning .data keeps the counter (views still share it)
    x = tp.zeros([3])
    vc = x._tp_version
    x.data = tp.ones([3])
    assert x._tp_version is vc
    with tp.Library(ns, "DEF") as lib:
        lib.define("fill_ones_(Tensor(a!) self) -> Tensor(a!)")

        def kernel(self):
            self.data = tp.ones(self.shape)
            return self

        lib.impl("fill_ones_", kernel, "CPU")
        op = getattr(tp.ops, ns).fill_ones_.default
        for call in (op, op._specialization(T1)):
            x = tp.zeros([3])
            view = x[1:]
            vc, v0 = x._tp_version, x._version
            assert call(x) is x
            assert x._tp_version is vc and x._version == v0 + 1 == view._version
            np.testing.assert_array_equal(x.numpy(), [1.0, 1.0, 1.0])


def test_no_reference_to_the_written_counter_is_held_during_the_kernel(ns):
    # the autograd plugin counts a counter's references to tell whether a tensor has views
    # (_written_lines in dispatcher/_callgen.py): the dispatcher's calls hold none while the kernel runs
    import sys

    seen = []
    with tp.Library(ns, "DEF") as lib:
        lib.define("probe_(Tensor(a!) self, Tensor other) -> Tensor(a!)")

        def kernel(self, other):
            seen.append(sys.getrefcount(self._tp_version))
            return self

        lib.impl("probe_", kernel, "CPU")
        op = getattr(tp.ops, ns).probe_.default
        x, y = tp.zeros([3]), tp.zeros([3])
        x._tp_version  # noqa: B018 - created before the calls
        kernel(x, y)
        for call in (op, op._specialization(T2)):
            call(x, y)
    assert seen == [seen[0]] * 3
