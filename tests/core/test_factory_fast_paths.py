"""The factories' fast paths against the paths they shortcut, over grids of arguments:

* each factory's generated ``BackendSelect`` kernel against the generic one (Note [Generated
  BackendSelect kernels] in _opset/api.py), called with the same arguments below the public
  function;
* each factory's public function (which caches specialized calls per signature, Note [Public
  factory fast path]) against its plain-Python reference, twice (the first call fills the
  cache, the second takes it);
* ``zeros_like`` & co. (the generated public function with ``requires_grad=``, the composite's
  shortcuts, Note [*_like factories]) against their references;
* ``arange`` of ints (the kit's fast path) against numpy's ``arange``, and its errors against
  the general path's.

Results are compared by dtype, device, layout, shape, requires_grad and values (random
factories drawn from one seed), errors by type and message."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import _backends
from tensorplug._opset import api as _api
from tensorplug._opset.reference import reference_function
from tensorplug.dispatcher import find_op
from tensorplug.tensor import Tensor
from tensorplug.testing._harness import to_numpy

pytestmark = pytest.mark.skipif(
    "cpu" not in tp.plugins.loaded_names(), reason="the grids run on the CPU backend"
)

RANDOM = {"rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial"}


def _outcome(call: Callable[[], Any]) -> Any:
    tp.manual_seed(0)
    try:
        r = call()
    except Exception as e:
        return ("raised", type(e), str(e))
    return ("returned", _describe(r))


def _describe(r: Any) -> Any:
    if not isinstance(r, Tensor):
        return r
    values = None if r.device.type == "meta" else to_numpy(r.detach()).tolist()
    return (
        type(r),
        r.dtype,
        r.device,
        r.layout,
        tuple(r.shape),
        r.stride() if r.device.type != "meta" else None,
        r.requires_grad,
        values,
    )


def _values_unspecified(r: Any) -> Any:
    """``empty``'s values are whatever memory held: compared without them."""
    if r[0] == "returned" and isinstance(r[1], tuple):
        return ("returned", r[1][:-1])
    return r


DEVICES: list[Any] = [None, "cpu", tp.device("cpu"), "meta", tp.device("meta"), "bogus:0"]
DTYPES: list[Any] = [None, tp.float64, tp.int32, tp.bool, tp.complex64, "float"]


# --- BackendSelect -----------------------------------------------------------------------------


def _factory_entries() -> list[Any]:
    return [e for e in _api.entries if "factory" in e.tags and e.op is not None]


def _kernels(op: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The generated and the generic BackendSelect kernels of ``op`` for a plain call's key set
    (made from their factories: nothing is registered)."""
    ks = tp.dispatch.DispatchKeySet(tp.keys.get("BackendSelect").mask)
    generated = _api._backend_select(op)(op, ks)
    generic = _api._generic_backend_select(op)(op, ks)
    return generated, generic


def test_every_factory_with_a_device_gets_a_generated_backend_select() -> None:
    for e in _factory_entries():
        op = e.op
        names = [a.name for a in op.schema.arguments]
        if "device" not in names:
            continue
        generated, generic = _kernels(op)
        assert generated.__source__.startswith("\ndef backend_select("), op.name
        assert generic.__qualname__ == generated.__qualname__ == f"backend_select[{op.name}]"


# one call per factory (arguments below the public function: sizes as the tuple they bind to)
CALLS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "aten::zeros.default": (((2, 3),), {}),
    "aten::ones.default": (((2, 3),), {}),
    "aten::empty.memory_format": (((2, 3),), {}),
    "aten::full.default": (((2, 3), 2), {}),
    "aten::arange.default": ((5,), {}),
    "aten::arange.start_step": ((1, 7, 2), {}),
    "aten::linspace.default": ((0.0, 1.0, 5), {}),
    "aten::eye.default": ((3,), {}),
    "aten::rand.default": (((2, 3),), {}),
    "aten::randn.default": (((2, 3),), {}),
    "aten::randint.default": ((5, (2, 3)), {}),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("device", DEVICES, ids=repr)
@pytest.mark.parametrize("dtype", [None, tp.float64, tp.int32], ids=repr)
def test_generated_backend_select_against_the_generic_one(
    name: str, device: Any, dtype: Any
) -> None:
    op = find_op(name)
    generated, generic = _kernels(op)
    args, kwargs = CALLS[name]
    defaults = {a.name: a.default_value for a in op.schema.kwarg_only}
    given = {**defaults, **kwargs, "device": device, "dtype": dtype}
    got = _outcome(lambda: generated(*args, **given))
    want = _outcome(lambda: generic(*args, **given))
    if name == "aten::empty.memory_format":
        got, want = _values_unspecified(got), _values_unspecified(want)
    assert got == want


def test_the_default_device_is_read_on_every_call() -> None:
    op = find_op("aten::zeros.default")
    generated, _ = _kernels(op)
    before = tp.get_default_device()
    try:
        assert generated((2,), device=None).device == tp.device("cpu")
        tp.set_default_device("meta")
        assert generated((2,), device=None).device == tp.device("meta")
        assert tp.zeros(2).device == tp.device("meta")
    finally:
        tp.set_default_device(before)
    assert generated((2,), device=None).device == tp.device("cpu")
    assert tp.zeros(2).device == tp.device("cpu")


def test_factory_targets_are_forgotten_when_the_backends_change() -> None:
    tp.zeros(2, device="cpu")
    assert _backends.factory_targets
    cpu = _backends.for_key("CPU")
    _backends.register(cpu)  # registered again: the same backend, the memo emptied
    assert not _backends.factory_targets
    assert tp.zeros(2, device="cpu").device == tp.device("cpu")
    assert _backends.factory_targets


# --- public functions --------------------------------------------------------------------------


def _reference(name: str) -> Callable[..., Any]:
    public = getattr(tp, name)
    return reference_function(name, _api._function_entries[name], public)


# (args, kwargs) per public factory; each crossed with the options below
PUBLIC: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "zeros": [((3,), {}), ((2, 3), {}), (((2, 3),), {}), (([2, 3],), {}), ((), {"size": (2,)})],
    "ones": [((3,), {}), ((2, 3), {})],
    "empty": [((3,), {}), ((2, 3), {"memory_format": tp.contiguous_format})],
    "full": [(((2,), 2.0), {}), (((2,), 3), {}), (((2,), True), {}), (((2,), 1j), {})],
    "arange": [((5,), {}), ((1, 7, 2), {}), ((0.0, 1.0, 0.25), {}), ((7, 1, -2), {})],
    "linspace": [((0.0, 1.0, 5), {})],
    "eye": [((3,), {}), ((2, 3), {})],
    "rand": [((2, 3), {})],
    "randint": [((5, (2, 3)), {})],
}
BAD: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "zeros": [
        ((2, 3.5), {}),
        ((2, "a"), {}),
        ((-1,), {}),
        ((2,), {"bogus": 1}),
        ((2,), {"out": 1}),
        ((2, tp.tensor(3)), {}),
    ],
    "arange": [((5, 1), {}), ((1, 5, 0), {}), ((2**70,), {}), ((float("inf"),), {}), ((1j,), {})],
    "full": [(((2,), 300), {"dtype": tp.uint8}), (((2,), float("nan")), {"dtype": tp.int32})],
}
OPTIONS: list[dict[str, Any]] = [
    {},
    {"dtype": tp.float64},
    {"dtype": tp.int64},
    {"device": "cpu"},
    {"device": tp.device("cpu")},
    {"device": "meta"},
    {"requires_grad": True},
    {"dtype": tp.float64, "device": "cpu", "requires_grad": True},
    {"layout": tp.strided, "pin_memory": False},
    {"dtype": tp.bool},
]


def _public_cases() -> list[Any]:
    cases = []
    for name, calls in PUBLIC.items():
        for (args, kwargs), options in itertools.product(calls, OPTIONS):
            cases.append(
                pytest.param(name, args, {**kwargs, **options}, id=f"{name}{args}{options}")
            )
    for name, calls in BAD.items():
        for args, kwargs in calls:
            cases.append(pytest.param(name, args, kwargs, id=f"bad-{name}{args}{kwargs}"))
    return cases


@pytest.mark.parametrize(("name", "args", "kwargs"), _public_cases())
def test_public_factory_against_its_reference(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    public, reference = getattr(tp, name), _reference(name)
    want = _outcome(lambda: reference(*args, **kwargs))
    for _ in range(2):  # the first call fills the signature cache, the second takes it
        got = _outcome(lambda: public(*args, **kwargs))
        if name == "empty":
            assert _values_unspecified(got) == _values_unspecified(want)
        else:
            assert got == want


@pytest.mark.parametrize("name", ["zeros", "arange", "full", "linspace"])
def test_the_default_dtype_is_read_on_every_call(name: str) -> None:
    args = {"zeros": (3,), "arange": (0.0, 1.0, 0.5), "full": ((2,), 2.0), "linspace": (0, 1, 3)}
    fn = getattr(tp, name)
    before = tp.get_default_dtype()
    try:
        assert fn(*args[name]).dtype == tp.float32
        tp.set_default_dtype(tp.float64)
        assert fn(*args[name]).dtype == tp.float64
    finally:
        tp.set_default_dtype(before)
    assert fn(*args[name]).dtype == tp.float32


# --- *_like ------------------------------------------------------------------------------------

LIKE = ["zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like"]


def _sources() -> list[Any]:
    x = tp.arange(6, dtype=tp.float32).reshape(2, 3)
    return [
        x,
        x.t(),  # not row-major: preserve_format keeps its strides
        tp.ones(2, 3, 4, 5, dtype=tp.float64).to(memory_format=tp.channels_last),
        tp.nn.Parameter(tp.ones(2)),  # a subclass: asked for its shape
        tp.ones(3, dtype=tp.int32, requires_grad=False),
        tp.ones(2, device="meta"),
    ]


LIKE_OPTIONS: list[dict[str, Any]] = [
    {},
    {"dtype": tp.float64},
    {"device": "cpu"},
    {"device": "meta"},
    {"requires_grad": True},
    {"memory_format": tp.contiguous_format},
    {"memory_format": tp.preserve_format},
    {"memory_format": tp.channels_last},
    {"memory_format": "bogus"},
    {"dtype": tp.float64, "requires_grad": True, "memory_format": tp.contiguous_format},
]


@pytest.mark.parametrize("name", LIKE)
@pytest.mark.parametrize("options", LIKE_OPTIONS, ids=repr)
def test_like_factories_against_their_references(name: str, options: dict[str, Any]) -> None:
    public, reference = getattr(tp, name), _reference(name)
    extra = (2.5,) if name == "full_like" else ()
    for x in _sources():
        if (
            options.get("dtype") is None
            and x.dtype == tp.int32
            and name in ("rand_like", "randn_like")
        ):
            continue  # no random floats of an int dtype: both refuse alike, checked below
        want = _outcome(lambda: reference(x, *extra, **options))
        for _ in range(2):
            got = _outcome(lambda: public(x, *extra, **options))
            if name == "empty_like":
                got, want = _values_unspecified(got), _values_unspecified(want)
            assert got == want, (x.shape, x.stride() if x.device.type != "meta" else None)
            want = _outcome(lambda: reference(x, *extra, **options))


def test_like_factories_refuse_alike() -> None:
    x = tp.ones(3, dtype=tp.int32)
    for name in ("rand_like", "randn_like"):
        public, reference = getattr(tp, name), _reference(name)
        want = _outcome(lambda: reference(x))
        assert want[0] == "raised"
        assert _outcome(lambda: public(x)) == want
    for bad in [(), (tp.ones(2), tp.ones(2)), ("x",)]:
        public, reference = tp.zeros_like, _reference("zeros_like")
        assert _outcome(lambda: public(*bad)) == _outcome(lambda: reference(*bad))


# --- arange of ints ----------------------------------------------------------------------------

INTS = [-7, -2, -1, 0, 1, 2, 5, 9]


@pytest.mark.parametrize("dtype", [None, tp.int64, tp.int32, tp.float32])
def test_arange_of_ints_against_numpy(dtype: Any) -> None:
    kw = {} if dtype is None else {"dtype": dtype}
    for start, end, step in itertools.product(INTS, INTS, [s for s in INTS if s]):
        if (step > 0 and end < start) or (step < 0 and end > start):
            with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent"):
                tp.arange(start, end, step, **kw)
            continue
        got = tp.arange(start, end, step, **kw)
        want = np.arange(start, end, step)
        assert got.dtype == (tp.int64 if dtype is None else dtype)
        assert to_numpy(got).tolist() == want.tolist()
    for end in INTS:
        if end < 0:
            continue
        got = tp.arange(end, **kw)
        assert got.dtype == (tp.int64 if dtype is None else dtype)
        assert to_numpy(got).tolist() == list(range(end))


def test_arange_step_zero_and_sign() -> None:
    with pytest.raises(RuntimeError) as e:
        tp.arange(1, 5, 0)
    assert str(e.value) == "aten::arange.start_step: step must be nonzero"
    with pytest.raises(RuntimeError) as e:
        tp.arange(-1)
    assert str(e.value) == "aten::arange: upper bound and larger bound inconsistent with step sign"
