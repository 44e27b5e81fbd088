"""The generated templates against their plain-Python references (Note [Template references]
in dispatcher/_reference.py): the OpInfo samples run through an operator's generated
``__call__`` and ``redispatch``, its specialized call and its public function and method, and
through the reference of each; results, dtypes, what the call wrote and the errors it raised
must be the same."""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug._opset import api as _api
from tensorplug._opset.native import OpEntry
from tensorplug._opset.reference import reference_function, reference_method
from tensorplug.dispatcher import OpOverload, _callgen, find_op
from tensorplug.dispatcher._reference import (
    reference_call,
    reference_redispatch,
    reference_specialized,
)
from tensorplug.tensor import Tensor
from tensorplug.testing._harness import to_numpy, to_tp
from tensorplug.testing.opinfo import OP_DB, OpInfo, SampleInput

pytestmark = pytest.mark.skipif(
    "cpu" not in tp.plugins.loaded_names(), reason="the samples run on the CPU backend"
)

# One dtype per op (its first), two samples, one op in EVERY-th: the run stays within seconds;
# which ops changes with nothing but the OpInfo database (a stable hash of the name decides).
EVERY = 2
SAMPLES = 2


def _chosen(info: OpInfo) -> bool:
    return zlib.crc32(info.name.encode()) % EVERY == 0


def _cases() -> list[Any]:
    params = []
    for info in OP_DB:
        if not _chosen(info) or not info.aten_variant:
            continue
        dtype = info.dtypes[0]
        samples = info.sample_inputs(dtype, np.random.default_rng(0))
        for sample in itertools.islice(samples, SAMPLES):
            params.append(
                pytest.param(info, dtype, sample, id=f"{info.name}-{dtype}-{sample.name}")
            )
    return params


CASES = _cases()


# --- running one call and describing what it did ---------------------------------------------


def _outcome(call: Callable[..., Any], info: OpInfo, sample: SampleInput) -> Any:
    """What ``call`` did with fresh tensors from ``sample``: its result and the values of its
    tensor arguments afterwards (in-place and out= ops write them), or the error it raised."""
    args, kwargs = _arguments(info, sample)
    tp.manual_seed(0)  # random ops draw the same numbers
    try:
        result = call(args, kwargs)
    except Exception as e:
        return ("raised", type(e), str(e))
    return (
        "returned",
        _describe(result, info.check_values),
        _describe((args, kwargs), info.check_values),
    )


def _arguments(info: OpInfo, sample: SampleInput) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Fresh tensors for ``sample``'s call; ``out=`` ops get an empty ``out`` (resized)."""
    args, kwargs = to_tp(sample.args), to_tp(sample.kwargs)
    if info.kind == "out":
        kwargs["out"] = tp.empty(0, dtype=args[0].dtype)
    return args, kwargs


def _describe(x: Any, values: bool = True) -> Any:
    """What a result (or the arguments after a call) holds: dtypes, shapes, values (not for
    ops whose values are unspecified: ``empty``)."""
    if isinstance(x, Tensor):
        data = to_numpy(x).tolist() if values else None
        return ("Tensor", x.dtype, tuple(x.shape), data)
    if isinstance(x, tuple):
        return (type(x).__name__, tuple(_describe(v, values) for v in x))
    if isinstance(x, list):
        return [_describe(v, values) for v in x]
    if isinstance(x, dict):
        return {k: _describe(v, values) for k, v in x.items()}
    return x


def _same(got: Any, want: Any) -> None:
    assert _nan_safe(got) == _nan_safe(want)


def _nan_safe(x: Any) -> Any:
    """NaN compares unequal to itself: a marker stands for it."""
    if isinstance(x, float) and x != x:
        return "nan"
    if isinstance(x, list | tuple):
        return type(x)(_nan_safe(v) for v in x)
    if isinstance(x, dict):
        return {k: _nan_safe(v) for k, v in x.items()}
    return x


def _overload(info: OpInfo) -> OpOverload:
    return find_op(f"aten::{info.op_name}.{info.overload_name}")


def _entry(op: OpOverload) -> OpEntry:
    (entry,) = [e for e in _api.entries if e.op is op]
    return entry


def _signature(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The signature a public function caches a call under (Note [Public function fast path])."""
    return (*map(type, args), *kwargs, *map(type, kwargs.values()))


# --- the templates -----------------------------------------------------------------------------


@pytest.mark.parametrize(("info", "dtype", "sample"), CASES)
def test_dispatch_call(info: OpInfo, dtype: str, sample: SampleInput) -> None:
    op = _overload(info)
    op._generate()
    assert op._fast is not None
    generated = op._fast[0]
    _same(
        _outcome(lambda a, k: generated(op, *a, **k), info, sample),
        _outcome(lambda a, k: reference_call(op, *a, **k), info, sample),
    )


@pytest.mark.parametrize(("info", "dtype", "sample"), CASES)
def test_redispatch(info: OpInfo, dtype: str, sample: SampleInput) -> None:
    op = _overload(info)
    op._generate()
    assert op._fast is not None
    redispatch = op._fast[1]
    ks = tp.keys.keyset("CPU")
    _same(
        _outcome(lambda a, k: redispatch(op, ks, *a, **k), info, sample),
        _outcome(lambda a, k: reference_redispatch(op, ks, *a, **k), info, sample),
    )


@pytest.mark.parametrize(("info", "dtype", "sample"), CASES)
def test_specialized_call(info: OpInfo, dtype: str, sample: SampleInput) -> None:
    """For the signature of the sample's call, as a public function would cache it once the
    generated ``__call__`` accepted that call."""
    op = _overload(info)
    sig = _signature(*_arguments(info, sample))
    specialized = op._specialization(sig) if _callgen.usable_names(op.schema) else None
    reference = reference_specialized(op, sig)
    if specialized is None:
        pytest.skip("no specialized call for this signature (lists of tensors, the generic path)")
    assert reference is not None
    _same(
        _outcome(lambda a, k: specialized(*a, *k.values()), info, sample),
        _outcome(lambda a, k: reference(*a, *k.values()), info, sample),
    )


@pytest.mark.parametrize(("info", "dtype", "sample"), CASES)
def test_public_function(info: OpInfo, dtype: str, sample: SampleInput) -> None:
    entry = _entry(_overload(info))
    if "function" not in entry.variants and entry.python_module is None:
        pytest.skip("no public function")
    name, module = entry.public_name, entry.python_module
    public = _api.generated_function(name, module)
    assert public is not None
    entries = _api._function_entries[name] if module is None else _api._module_entries[module][name]
    reference = reference_function(name, entries, public, public.__module__)
    for _ in range(2):  # the first call fills the signature cache, the second takes it
        _same(
            _outcome(lambda a, k: public(*a, **k), info, sample),
            _outcome(lambda a, k: reference(*a, **k), info, sample),
        )


@pytest.mark.parametrize(("info", "dtype", "sample"), CASES)
def test_method(info: OpInfo, dtype: str, sample: SampleInput) -> None:
    entry = _entry(_overload(info))
    if "method" not in entry.variants:
        pytest.skip("no Tensor method")
    name = entry.public_name
    reference = reference_method(name, _api._method_entries[name], _api.generated_function(name))
    positional = [a.name for a in entry.op.schema.positional] if entry.op else []
    at = positional.index("self") if "self" in positional else 0

    def method(a: tuple[Any, ...], k: dict[str, Any]) -> Any:
        return getattr(a[at], name)(*a[:at], *a[at + 1 :], **k)

    def by_reference(a: tuple[Any, ...], k: dict[str, Any]) -> Any:
        return reference(a[at], *a[:at], *a[at + 1 :], **k)

    for _ in range(2):
        _same(_outcome(method, info, sample), _outcome(by_reference, info, sample))


# --- errors -----------------------------------------------------------------------------------

# the OpInfo samples are calls that succeed: each op (its first sample) is also called wrongly
ERROR_CASES = list({p.values[0].name: p for p in CASES}.values())


def _bad_calls(
    op: OpOverload, info: OpInfo, sample: SampleInput
) -> list[tuple[str, tuple[Any, ...], Any]]:
    """Calls of ``op`` that its schema refuses, made from a good one: one positional argument
    too many (the others all positional), an unknown keyword, a string for the first tensor or
    for the first positional non-tensor argument, and no argument at all."""
    args, kwargs = op.schema.bind(*_arguments(info, sample), op.name)
    calls = [
        ("one too many", (*args, 0), kwargs),
        ("unknown keyword", args, {**kwargs, "bogus": 1}),
        ("nothing", (), {}),
    ]
    for i, a in enumerate(op.schema.positional):
        if i < len(args) and (i == 0 or a.tensor_kind is None):
            calls.append((f"a str for {a.name}", (*args[:i], "x", *args[i + 1 :]), kwargs))
    return calls


def _raised(call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        call(*args, **kwargs)
    except Exception as e:
        return (type(e), str(e))
    return "no error"


@pytest.mark.parametrize(("info", "dtype", "sample"), ERROR_CASES)
def test_errors_of_the_dispatch_call_and_the_public_function(
    info: OpInfo, dtype: str, sample: SampleInput
) -> None:
    op = _overload(info)
    op._generate()
    assert op._fast is not None
    entry = _entry(op)
    public: Any = None
    if ("function" in entry.variants or entry.python_module) and "factory" not in entry.tags:
        name, module = entry.public_name, entry.python_module
        public = _api.generated_function(name, module)
        entries = (
            _api._function_entries[name] if module is None else _api._module_entries[module][name]
        )
        reference = reference_function(name, entries, public, public.__module__)
    checked = 0
    for what, args, kwargs in _bad_calls(op, info, sample):
        want = _raised(lambda *a, **k: reference_call(op, *a, **k), args, kwargs)
        assert want != "no error", what
        got = _raised(lambda *a, **k: op._fast[0](op, *a, **k), args, kwargs)
        assert got == want, what
        if public is not None:
            assert _raised(public, args, kwargs) == _raised(reference, args, kwargs), what
        checked += 1
    assert checked >= 4


def test_an_int_scalar_beyond_64_bits_in_a_specialized_call() -> None:
    """The specialized call's range test of an int ``Scalar`` (Note [Scalar ints] in
    _binding.py) against the binder's."""
    op = find_op("aten::add.Tensor")
    x = tp.tensor([1, 2])
    sig = (Tensor, Tensor, "alpha", int)
    specialized, reference = op._specialization(sig), reference_specialized(op, sig)
    assert specialized is not None and reference is not None
    assert _raised(specialized, (x, x, 2**70), {}) == _raised(reference, (x, x, 2**70), {})
    assert _raised(reference, (x, x, 2**70), {})[0] is OverflowError
    _same(_describe(specialized(x, x, 3)), _describe(reference(x, x, 3)))


def test_too_many_positional_arguments_and_one_repeated_by_keyword() -> None:
    """The one known difference: given one positional argument too many *and* a keyword that
    repeats a positional one, the generated call's interpreter reports the repeated argument
    (it binds parameters before the template's ``*_extra`` test runs), the binder the count.
    Both are TypeErrors naming the op; each names one of the call's two faults."""
    op = find_op("aten::dropout")
    op._generate()
    assert op._fast is not None
    x = tp.ones(2)
    args, kwargs = (x, 0.5, True, 0), {"p": 0.5}
    assert _raised(lambda *a, **k: op._fast[0](op, *a, **k), args, kwargs) == (
        TypeError,
        "aten::dropout.default() got multiple values for argument 'p'",
    )
    assert _raised(lambda *a, **k: reference_call(op, *a, **k), args, kwargs) == (
        TypeError,
        "aten::dropout.default() takes 3 positional arguments but 4 were given",
    )


def test_specialized_references_exist_where_specialized_calls_can() -> None:
    op = find_op("aten::add.Tensor")
    assert reference_specialized(op, (Tensor, Tensor, Tensor, Tensor)) is None  # too many
    assert reference_specialized(op, (Tensor, Tensor, "bogus", int)) is None  # unknown keyword
    assert reference_specialized(op, (Tensor,)) is None  # `other` is required
    assert reference_specialized(op, (Tensor, "other", Tensor)) is not None
