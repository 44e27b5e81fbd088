"""The __tensorplug_function__ protocol, with the examples of PyTorch's "Extending torch" note."""

from __future__ import annotations

import functools

import pytest

import tensorplug as tp

np = pytest.importorskip("numpy")

HANDLED_FUNCTIONS = {}


class ScalarTensor:
    """A diagonal matrix N x N whose diagonal is a single value (the note's ScalarTensor)."""

    def __init__(self, N, value):
        self._N = N
        self._value = value

    def __repr__(self):
        return f"ScalarTensor(N={self._N}, value={self._value})"

    def tensor(self):
        return self._value * tp.eye(self._N)

    @classmethod
    def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        if func not in HANDLED_FUNCTIONS or not all(issubclass(t, (tp.Tensor, ScalarTensor)) for t in types):
            return NotImplemented
        return HANDLED_FUNCTIONS[func](*args, **kwargs)


def implements(tp_function):
    def decorator(func):
        functools.update_wrapper(func, tp_function)
        HANDLED_FUNCTIONS[tp_function] = func
        return func

    return decorator


@implements(tp.mean)
def mean(input):
    return float(input._value) / input._N


def ensure_tensor(data):
    if isinstance(data, ScalarTensor):
        return data.tensor()
    return tp.as_tensor(data)


@implements(tp.add)
def add(input, other):
    try:
        if input._N == other._N:
            return ScalarTensor(input._N, input._value + other._value)
        raise ValueError("Shape mismatch!")
    except AttributeError:
        return tp.add(ensure_tensor(input), ensure_tensor(other))


def test_scalar_tensor_handled_functions():
    d = ScalarTensor(5, 2)
    assert tp.mean(d) == 0.4
    s = tp.add(d, d)
    assert (s._N, s._value) == (5, 4)
    r = tp.add(d, tp.ones(5, 5))
    np.testing.assert_allclose(r.numpy(), 2 * np.eye(5) + 1)


def test_unhandled_function_raises_type_error():
    with pytest.raises(TypeError, match=r"no implementation found for 'tensorplug.sum' on types that implement __tensorplug_function__: \[ScalarTensor\]"):
        tp.sum(ScalarTensor(2, 1))


class MetadataTensor:
    """A wrapper that carries metadata through every function (the note's MetadataTensor)."""

    def __init__(self, data, metadata=None, **kwargs):
        self._t = tp.as_tensor(data, **kwargs)
        self._metadata = metadata

    def __repr__(self):
        return f"Metadata:\n{self._metadata}\n\ndata:\n{self._t}"

    @classmethod
    def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        metadatas = tuple(a._metadata for a in args if hasattr(a, "_metadata"))
        args = [getattr(a, "_t", a) for a in args]
        assert len(metadatas) > 0
        ret = func(*args, **kwargs)
        return MetadataTensor(ret, metadata=metadatas[0])


def test_metadata_wrapper():
    metadata = {"owner": "Ministry of Silly Walks"}
    m = MetadataTensor([[1, 2], [3, 4]], metadata=metadata)
    t = tp.tensor([[1, 2], [1, 2]])
    r = tp.add(t, m)
    assert r._metadata is metadata
    np.testing.assert_array_equal(r._t.numpy(), [[2, 4], [4, 6]])
    # Tensor methods and Python operators reach the protocol too
    r2 = t + m
    assert isinstance(r2, MetadataTensor) and r2._metadata is metadata


def test_order_subclasses_first_and_not_implemented_passes():
    calls = []

    class A:
        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            calls.append(("A", types))
            return NotImplemented

    class B(A):
        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            calls.append(("B", types))
            return NotImplemented

    class C:
        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            calls.append(("C", types))
            return "from C"

    assert tp.add(A(), B(), alpha=C()) == "from C"
    assert [c[0] for c in calls] == ["B", "A", "C"]
    assert calls[0][1] == (B, A, C)
    calls.clear()
    assert tp.cat([tp.ones(1), C()]) == "from C"  # found inside a Tensor[] argument
    assert calls == [("C", (C,))]


def test_overridable_listing_and_testing_overrides():
    funcs = tp.overrides.get_overridable_functions()
    assert tp.add in funcs["tensorplug"] and tp.sum in funcs["tensorplug"]
    assert any(f.__name__ == "add" for f in funcs["Tensor"])
    ignored = tp.overrides.get_ignored_functions()
    assert tp.zeros in ignored and tp.add not in ignored
    dummies = tp.overrides.get_testing_overrides()
    assert dummies[tp.add](1, 2) == -1
    import inspect

    assert list(inspect.signature(dummies[tp.add]).parameters)[:2] == ["self", "other"]


def test_tensor_subclasses_take_part_only_when_they_define_the_protocol():
    # a subclass without __tensorplug_function__ (nn.Parameter) dispatches like Tensor, and
    # its calls share the public function's signature cache
    p = tp.nn.Parameter(tp.ones([2]), requires_grad=False)
    for _ in range(2):
        np.testing.assert_array_equal(tp.mul(p, tp.ones([2]) * 3).numpy(), [3.0, 3.0])
    assert (tp.nn.Parameter, tp.Tensor) in tp.mul._choice

    class Logged(tp.nn.Parameter):
        seen: list = []

        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            cls.seen.append(func.__name__)
            return "intercepted"

    q = Logged(tp.ones([2]), requires_grad=False)
    for _ in range(2):
        assert tp.mul(q, tp.ones([2])) == "intercepted"
    assert Logged.seen == ["mul", "mul"]
    assert (Logged, tp.Tensor) not in tp.mul._choice
