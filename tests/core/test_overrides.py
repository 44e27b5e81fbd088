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
        if func not in HANDLED_FUNCTIONS or not all(
            issubclass(t, (tp.Tensor, ScalarTensor)) for t in types
        ):
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
    with pytest.raises(
        TypeError,
        match=r"no implementation found for 'tensorplug.sum' on types that implement __tensorplug_function__: \[ScalarTensor\]",
    ):
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


def test_method_with_one_keyword_uses_the_signature_cache():
    # Note [Public function fast path]: p.sub_(g, alpha=lr) looks (Tensor, Tensor, 'alpha',
    # float) up directly; the first call fills the cache through the general path
    p, g = tp.tensor([1.0, 2.0]), tp.tensor([10.0, 20.0])
    for expected in ([0.0, 0.0], [-1.0, -2.0]):
        assert p.sub_(g, alpha=0.1) is p
        np.testing.assert_allclose(p.numpy(), expected)
    for _ in range(2):  # x.add shares tp.add's cache
        np.testing.assert_array_equal(p.add(g, alpha=2).numpy(), p.numpy() + 2 * g.numpy())
    assert (tp.Tensor, tp.Tensor, "alpha", int) in tp.add._choice
    np.testing.assert_array_equal(p.add(g, alpha=True).numpy(), p.numpy() + g.numpy())
    # a keyword the cache has not seen, or a bad one, takes the general path and its errors
    with pytest.raises(TypeError, match="alpha"):
        p.add(g, alpha="x")
    with pytest.raises(TypeError, match="beta"):
        p.add(g, beta=2)
    # an argument that defines __tensorplug_function__ is asked, with the keyword
    seen = []

    class Asked:
        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            seen.append(dict(kwargs or {}))
            return "asked"

    assert p.add(g, alpha=Asked()) == "asked" and list(seen[0]) == ["alpha"]


def test_methods_taking_alpha_bind_it_as_a_parameter():
    # add/sub and their in-place forms take ``alpha`` as a parameter of the method (no
    # **kwargs dict): the cached signature is general's, so a parameter (a plain subclass) and
    # a Python scalar ``other`` hit it too; the rest takes the general path as before
    w = tp.nn.Parameter(tp.tensor([1.0, 2.0]))
    g = tp.tensor([10.0, 20.0])
    with tp.no_grad():
        for expected in ([0.0, 0.0], [-1.0, -2.0]):
            assert w.sub_(g, alpha=0.1) is w
            np.testing.assert_allclose(w.detach().numpy(), expected)
    np.testing.assert_allclose(w.add(g, alpha=0.5).detach().numpy(), [4.0, 8.0])
    assert (tp.nn.Parameter, tp.Tensor, "alpha", float) in tp.add._choice
    x = tp.tensor([1.0, 2.0])
    for _ in range(2):
        np.testing.assert_array_equal(x.sub(3.0, alpha=2).numpy(), [-5.0, -4.0])
        np.testing.assert_array_equal(x.add(3.0, 2).numpy(), [7.0, 8.0])  # alpha positional
        np.testing.assert_array_equal(x.add(g).numpy(), [11.0, 22.0])  # no alpha
    out = tp.empty([2])
    assert x.add(g, alpha=2, out=out) is out  # another keyword: the general path
    np.testing.assert_array_equal(out.numpy(), [21.0, 42.0])
    with pytest.raises(TypeError, match="other"):
        x.add(alpha=2)
    with pytest.raises(TypeError, match="beta"):
        x.sub(g, alpha=2, beta=1)
    seen = []

    class Asked(tp.Tensor):
        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            seen.append((func.__name__, dict(kwargs or {})))
            return "asked"

    a = tp.ones([2]).as_subclass(Asked)
    for _ in range(2):
        assert a.sub_(g, alpha=0.5) == "asked" and g.sub(a, alpha=0.5) == "asked"
    assert seen == [("sub_", {"alpha": 0.5}), ("sub", {"alpha": 0.5})] * 2


def test_function_of_three_tensors_uses_the_signature_cache():
    # Note [Public function fast path]: tp.linear(x, w, b) looks (Tensor,) * 3 up directly
    x, w, b = tp.tensor([[1.0, 2.0]]), tp.tensor([[3.0, 4.0]]), tp.tensor([0.5])
    for _ in range(2):
        np.testing.assert_allclose(tp.addmm(b, x, w.t()).numpy(), [[11.5]])
        np.testing.assert_allclose(tp.where(x > 1.5, x, w).numpy(), [[3.0, 2.0]])
    assert (tp.Tensor, tp.Tensor, tp.Tensor) in tp.where._choice
    # a third argument that defines __tensorplug_function__ is still asked
    seen = []

    class Asked(tp.Tensor):
        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return "asked"

    c = tp.ones([1]).as_subclass(Asked)
    assert tp.where(x > 1.5, x, c) == "asked" and seen == ["where"]
    with pytest.raises(TypeError, match="where"):
        tp.where(x, x, x, x)


# --- the note's examples as the note writes them: a plain method -------------------------------


class PlainScalarTensor(ScalarTensor):
    """The note's ScalarTensor, its __tensorplug_function__ a plain method."""

    def __tensorplug_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        if func not in HANDLED_FUNCTIONS or not all(
            issubclass(t, (tp.Tensor, ScalarTensor)) for t in types
        ):
            return NotImplemented
        return HANDLED_FUNCTIONS[func](*args, **kwargs)


class PlainMetadataTensor:
    """The note's metadata tensor, its __tensorplug_function__ a plain method."""

    def __init__(self, data, metadata=None, **kwargs):
        self._t = tp.as_tensor(data, **kwargs)
        self._metadata = metadata

    def __tensorplug_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        metadatas = tuple(a._metadata for a in args if hasattr(a, "_metadata"))
        args = [getattr(a, "_t", a) for a in args]
        assert len(metadatas) > 0
        ret = func(*args, **kwargs)
        return PlainMetadataTensor(ret, metadata=metadatas[0])


def test_plain_method_examples_run_with_pytorchs_warning():
    d = PlainScalarTensor(5, 2)
    with pytest.warns(UserWarning) as record:
        assert tp.mean(d) == 0.4
        s = tp.add(d, d)
        assert tp.mean(PlainScalarTensor(2, 1)) == 0.5
    assert (s._N, s._value) == (5, 4)
    assert [str(w.message) for w in record] == [
        "PlainScalarTensor.__tensorplug_function__ is a plain method; PyTorch deprecates that "
        "form of __torch_function__ and will make it an error, please define it as a classmethod"
    ]  # once per class
    assert record[0].filename == __file__  # pointing at the call
    metadata = {"owner": "Ministry of Silly Walks"}
    m = PlainMetadataTensor([[1, 2], [3, 4]], metadata=metadata)
    t = tp.tensor([[1, 2], [1, 2]])
    with pytest.warns(UserWarning, match="PlainMetadataTensor.__tensorplug_function__ is a plain"):
        r = tp.add(t, m)
    assert r._metadata is metadata
    np.testing.assert_array_equal(r._t.numpy(), [[2, 4], [4, 6]])
    for r in (t + m, t * m, m.__tensorplug_function__(tp.mul, (), (t, m))):  # operators too
        assert isinstance(r, PlainMetadataTensor) and r._metadata is metadata
    np.testing.assert_array_equal((t * m)._t.numpy(), [[1, 4], [3, 8]])


# --- Tensor subclasses through every path ----------------------------------------------------


class Logged(tp.Tensor):
    """A subclass that logs every call it takes over, then runs it on plain tensors."""

    log: list = []

    @classmethod
    def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
        cls.log.append(func)
        plain = [a.as_subclass(tp.Tensor) if isinstance(a, tp.Tensor) else a for a in args]
        result = func(*plain, **(kwargs or {}))
        return result.as_subclass(cls) if isinstance(result, tp.Tensor) else result


def test_python_operators_honour_the_protocol_of_a_subclass():
    T = tp.Tensor
    x = np.array([0.0, 1.0, 2.0], np.float32)
    q = tp.tensor(x).as_subclass(Logged)
    assert type(q) is Logged and q.tolist() == [0.0, 1.0, 2.0]
    Logged.log.clear()
    cases = [
        (lambda: q + 1, T.__add__, x + 1),
        (lambda: 1 + q, T.__radd__, 1 + x),
        (lambda: q * q, T.__mul__, x * x),
        (lambda: 2 - q, T.__rsub__, 2 - x),
        (lambda: q / 2, T.__truediv__, x / 2),
        (lambda: q**2, T.__pow__, x**2),
        (lambda: -q, T.__neg__, -x),
        (lambda: abs(-q), T.__abs__, x),
        (lambda: q[1], T.__getitem__, x[1]),
        (lambda: q[tp.tensor([0, 2])], T.__getitem__, x[[0, 2]]),
        (lambda: q == 1, T.__eq__, x == 1),
        (lambda: q @ q, T.__matmul__, x @ x),
    ]
    for make, func, expected in cases:
        Logged.log.clear()
        r = make()
        assert type(r) is Logged, func
        assert Logged.log[-1] is func, (func, Logged.log)
        np.testing.assert_allclose(np.asarray(r.tolist()), expected)
    Logged.log.clear()
    q2 = tp.tensor(x).as_subclass(Logged)
    q2[0] = 5.0
    assert Logged.log == [T.__setitem__] and q2.tolist() == [5.0, 1.0, 2.0]
    Logged.log.clear()
    q2 += 1
    assert Logged.log == [T.__iadd__] and q2.tolist() == [6.0, 2.0, 3.0]
    # functions and methods took part before; they still do
    Logged.log.clear()
    assert tp.sum(q).item() == 3.0 and Logged.log == [tp.sum]


class Declines:
    @classmethod
    def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


class DeclinesTensor(tp.Tensor):
    @classmethod
    def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def test_operators_when_every_handler_declines():
    t = tp.ones(2)
    with pytest.raises(
        TypeError, match=r"unsupported operand type\(s\) for \+: 'Tensor' and 'Declines'"
    ):
        t + Declines()  # NotImplemented, so Python tried Declines.__radd__ and gave up
    d = tp.ones(2).as_subclass(DeclinesTensor)
    with pytest.raises(
        TypeError, match=r"unsupported operand type\(s\) for \*: 'DeclinesTensor' and 'int'"
    ):
        d * 2
    with pytest.raises(TypeError) as e:
        -d
    assert str(e.value) == (
        "no implementation found for 'tensorplug.Tensor.__neg__' on types that implement "
        "__tensorplug_function__: [DeclinesTensor]"
    )
    with pytest.raises(
        TypeError, match="no implementation found for 'tensorplug.Tensor.__getitem__'"
    ):
        d[0]


def test_as_subclass():
    t = tp.tensor([1.0, 2.0])
    s = t.as_subclass(Logged)
    assert type(s) is Logged and s.tolist() == [1.0, 2.0]
    s.as_subclass(tp.Tensor).mul_(2)  # a view: writes reach t, and its version counter
    assert t.tolist() == [2.0, 4.0] and t._version == s._version == 1
    assert type(s.as_subclass(tp.Tensor)) is tp.Tensor
    with pytest.raises(TypeError) as e:
        t.as_subclass(int)
    assert str(e.value) == (
        "Creating a Tensor subclass from a class that does not inherit from Tensor is not "
        "possible (got <class 'int'>). Make sure your class inherits from Tensor."
    )
    assert tp.Tensor.as_subclass in tp.overrides.get_ignored_functions()


def test_as_subclass_stays_on_the_autograd_graph():
    pytest.importorskip("tensorplug_autograd")
    from tests.needs import HAS_AUTOGRAD

    if not HAS_AUTOGRAD:
        pytest.skip("needs tensorplug-autograd loaded")
    x = tp.tensor([1.0, 2.0], requires_grad=True)
    s = x.as_subclass(Logged)
    assert s.requires_grad and not s.is_leaf and s.grad_fn is not None
    (s.as_subclass(tp.Tensor) * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


# --- tensorplug.nn.functional, linalg, special; resolve_name ---------------------------------


def test_nn_functional_takes_part_with_itself_as_func():
    import tensorplug.nn.functional as F

    seen = []

    class Wrapped:
        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return "handled"

    assert F.relu(Wrapped()) == "handled" and seen == [F.relu]
    assert F.cross_entropy(tp.ones(2, 3), target=Wrapped()) == "handled"  # found among kwargs
    assert F.mish(Wrapped()) == "handled" and seen[-1] is F.mish  # made from the yaml
    assert tp.linalg.vector_norm(Wrapped()) == "handled" and seen[-1] is tp.linalg.vector_norm
    np.testing.assert_allclose(F.relu(tp.tensor([-1.0, 2.0])).numpy(), [0.0, 2.0])  # plain path

    funcs = tp.overrides.get_overridable_functions()
    assert set(funcs) == {"tensorplug", "Tensor", "tensorplug.nn.functional",
                          "tensorplug.linalg", "tensorplug.special", "tensorplug.fft"}  # fmt: skip
    names = {f.__name__ for f in funcs["tensorplug.nn.functional"]}
    from tensorplug._opset import api

    generated = set(api.module_function_names("nn"))  # the yaml's python_module: nn entries
    assert {"mish", "scaled_dot_product_attention"} <= generated
    assert set(F.__all__) | generated == names
    assert {f.__name__ for f in funcs["tensorplug.special"]} >= {"expit", "erf", "logsumexp"}
    assert {f.__name__ for f in funcs["tensorplug.fft"]} >= {"fft", "rfft", "fftshift"}
    assert tp.Tensor.__add__ in funcs["Tensor"] and tp.Tensor.__getitem__ in funcs["Tensor"]
    dummies = tp.overrides.get_testing_overrides()
    import inspect

    assert dummies[F.relu](1) == -1
    assert list(inspect.signature(dummies[F.relu]).parameters) == ["input", "inplace"]
    assert list(inspect.signature(dummies[tp.Tensor.__add__]).parameters) == ["self", "other"]


def test_resolve_name():
    import tensorplug.nn.functional as F

    resolve = tp.overrides.resolve_name
    assert resolve(tp.add) == "tensorplug.add"
    assert resolve(tp.Tensor.add) == "tensorplug.Tensor.add"
    assert resolve(tp.Tensor.__add__) == "tensorplug.Tensor.__add__"
    assert resolve(F.relu) == "tensorplug.nn.functional.relu"
    assert resolve(tp.linalg.vector_norm) == "tensorplug.linalg.vector_norm"
    assert resolve(tp.ops.aten.add.Tensor) == "aten::add.Tensor"
    assert resolve(len) is None and resolve(lambda x: x) is None
    for f in (tp.add, tp.Tensor.add, F.relu, tp.special.expit):  # the name gives f back
        assert eval(resolve(f), {"tensorplug": tp}) is f


# --- Tensor's default __tensorplug_function__ (PyTorch's Tensor.__torch_function__) ---------


class Sub(tp.Tensor):
    pass


class Counted(tp.Tensor):
    calls: list = []

    @classmethod
    def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(tp.overrides.resolve_name(func))
        return super().__tensorplug_function__(func, types, args, kwargs)


def test_a_subclass_keeps_its_class_through_functions_methods_and_operators():
    s = tp.tensor([[1.0, 2.0], [3.0, 4.0]]).as_subclass(Sub)
    for r in (s + 1, tp.sum(s), s.mul(2), -s, s[0], tp.add(s, tp.ones(2)), 1 - s):
        assert type(r) is Sub
    values, indices = s.max(0)  # a named tuple of results: each converted, the tuple kept
    assert type(values) is Sub and type(indices) is Sub
    assert type(s.max(0)).__name__ == "max"
    parts = tp.split(s, 1)
    assert type(parts) is type(tp.split(tp.ones(2), 1)) and all(type(p) is Sub for p in parts)
    assert s.tolist() == [[1.0, 2.0], [3.0, 4.0]] and (s + 1).tolist() == [[2.0, 3.0], [4.0, 5.0]]
    assert type(tp.Tensor.__tensorplug_function__(tp.add, (tp.Tensor,), (s, s))) is tp.Tensor


def test_super_call_runs_the_function_once_with_the_protocol_disabled():
    Counted.calls.clear()
    c = tp.ones(2).as_subclass(Counted)
    r = c * 3 + tp.ones(2)
    assert type(r) is Counted and r.tolist() == [4.0, 4.0]
    # one call each for * and +: inside the default the protocol is off, so the operator's own
    # dispatch does not come back to the handler
    assert Counted.calls == ["tensorplug.Tensor.__mul__", "tensorplug.Tensor.__add__"]


def test_default_declines_types_it_is_not_a_subclass_of():
    class Other(tp.Tensor):
        pass

    assert Sub.__tensorplug_function__(tp.add, (Sub, Other), (), {}) is NotImplemented
    a, b = tp.ones(1).as_subclass(Sub), tp.ones(1).as_subclass(Other)
    with pytest.raises(TypeError, match="no implementation found for 'tensorplug.add'"):
        tp.add(a, b)  # as in PyTorch: neither class is a subclass of the other


def test_disabled_impl_and_the_disable_guard():
    class Plain(tp.Tensor):
        __tensorplug_function__ = tp.overrides.disabled_tensorplug_function_impl

    p = tp.ones(2).as_subclass(Plain)
    assert type(p + 1) is tp.Tensor and type(tp.sum(p)) is tp.Tensor
    assert type(tp.nn.Parameter(tp.ones(2)) * 2) is tp.Tensor
    s = tp.ones(2).as_subclass(Sub)
    with tp.overrides.DisableTensorplugFunctionSubclass():
        assert type(s + 1) is tp.Tensor and type(tp.mul(s, 2)) is tp.Tensor
    assert type(s + 1) is Sub
    assert tp.overrides.disabled_tensorplug_function_impl(tp.add, (), (s, s)).tolist() == [2, 2]
