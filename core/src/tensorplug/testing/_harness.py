"""The op harness of the conformance kit: OpInfo samples as tensors on a device, every
variant of an op run on them, and the checks against the numpy oracle.

Per the OpInfo's kind, a case checks the result's dtype (PyTorch promotion), shape and values
(exact for ints and bools); that inputs are left untouched (values and version counters);
in place: the result *is* the mutated input and its ``_version`` went up by exactly one;
ops writing several arguments (``mutating``): each written tensor, and its version; ``out=``:
the out tensor is written, returned, and its version bumped once; views: writing
through the view changes the base; random ops: shape, dtype, range, and reproducibility under
``tp.manual_seed``. Values come back to the host with ``Tensor.cpu()``, so any backend that
registers a storage runs it.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug.tensor import Tensor

from .opinfo import DT, OP_DB, OpInfo, SampleInput, is_int, ml_dtypes, np_dtype

# (rtol, atol) by result dtype; an OpInfo's ``tol`` overrides per dtype
TOLERANCES = {
    "float16": (2e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1e-5, 1e-5),
    "complex128": (1e-7, 1e-7),
}


# --- conversions ------------------------------------------------------------------------------


def to_tp(x: Any, device: str = "cpu") -> Any:
    """Sample values -> call arguments: arrays become tensors on ``device``, DT markers
    become dtypes."""
    if isinstance(x, np.ndarray):
        if x.dtype.name == "bfloat16":
            return tp.tensor(x.astype(np.float32), dtype=tp.bfloat16, device=device)
        return tp.tensor(x.copy(), device=device)
    if isinstance(x, DT):
        return getattr(tp, x.name)
    if isinstance(x, list):
        return [to_tp(v, device) for v in x]
    if isinstance(x, tuple):
        return tuple(to_tp(v, device) for v in x)
    if isinstance(x, dict):
        return {k: to_tp(v, device) for k, v in x.items()}
    return x


def call_args(info: OpInfo, sample: SampleInput, device: str) -> tuple[Any, dict[str, Any]]:
    """The sample's arguments on ``device``; ops with a ``device=`` argument (factories) get it."""
    args, kwargs = to_tp(sample.args, device), to_tp(sample.kwargs, device)
    if device != "cpu" and "device" not in kwargs and _takes_device(info):
        kwargs["device"] = device
    return args, kwargs


def _takes_device(info: OpInfo) -> bool:
    op = getattr(getattr(tp.ops.aten, info.op_name), info.overload_name)
    return any(a.name == "device" for a in op.schema.arguments)


def check_devices(result: Any, device: str) -> None:
    """Every tensor of ``result`` is on ``device`` (a device named without an index, ``cuda``,
    is the backend's current one)."""
    want = tp.device(device)
    for i, t in enumerate(tensors_in(result)):
        got = t.device
        same = got == want or (want.index is None and got.type == want.type)
        assert same, f"result tensor #{i} is on {got}, not on {want}"


def to_ref(x: Any) -> Any:
    """Sample values -> oracle arguments: fresh copies; float16/bfloat16 computed in float64."""
    if isinstance(x, np.ndarray):
        if x.dtype.name in ("float16", "bfloat16"):
            return x.astype(np.float64)
        return x.copy()
    if isinstance(x, DT):
        return np.float64 if x.name in ("float16", "bfloat16") else np_dtype(x.name)
    if isinstance(x, list):
        return [to_ref(v) for v in x]
    if isinstance(x, tuple):
        return tuple(to_ref(v) for v in x)
    if isinstance(x, dict):
        return {k: to_ref(v) for k, v in x.items()}
    return x


def to_numpy(t: Tensor) -> np.ndarray:
    arr = np.asarray(t.cpu().numpy())
    if arr.dtype.name in ("float16", "bfloat16"):
        return arr.astype(np.float64)
    return np.array(arr, copy=True)


def tensors_in(x: Any) -> Iterator[Tensor]:
    if isinstance(x, Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from tensors_in(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from tensors_in(v)


def sentinel_for(dtype_name: str) -> Any:
    return True if dtype_name == "bool" else 42 if is_int(dtype_name) else 42.0


# --- case generation --------------------------------------------------------------------------


def cases(dtypes: Iterable[str] | None = None) -> Iterator[Any]:
    """``pytest.param(info, dtype, sample)`` for every OpInfo, dtype and sample, with ids like
    ``add.Tensor-float32-broadcast``; ``dtypes`` keeps only those dtypes."""
    import pytest

    keep = None if dtypes is None else frozenset(dtypes)
    for info in OP_DB:
        for dtype in info.dtypes:
            if dtype == "bfloat16" and ml_dtypes is None:
                continue
            if keep is not None and dtype not in keep:
                continue
            rng = np.random.default_rng(zlib.crc32(f"{info.name}-{dtype}".encode()))
            seen: dict[str, int] = {}
            for sample in info.sample_inputs(dtype, rng):
                n = seen[sample.name] = seen.get(sample.name, 0) + 1
                suffix = sample.name if n == 1 else f"{sample.name}_{n}"
                yield pytest.param(info, dtype, sample, id=f"{info.name}-{dtype}-{suffix}")


# --- checks -----------------------------------------------------------------------------------


def check_result(
    got: Any, expected: Any, expected_dtype: Any, info: OpInfo, what: str = "result"
) -> None:
    if isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)), (
            f"{what}: expected a sequence of {len(expected)} tensors, got {type(got).__name__}"
        )
        assert len(got) == len(expected), (
            f"{what}: expected {len(expected)} tensors, got {len(got)}"
        )
        dts = (
            expected_dtype
            if isinstance(expected_dtype, tuple)
            else (expected_dtype,) * len(expected)
        )
        for i, (g, e, dt) in enumerate(zip(got, expected, dts, strict=True)):
            check_result(g, e, dt, info, f"{what}[{i}]")
        return
    exp = np.asarray(expected)
    check_meta(got, exp.shape, expected_dtype, what)
    arr = to_numpy(got)
    assert arr.shape == exp.shape, f"{what}: .numpy() shape {arr.shape} != .shape {exp.shape}"
    if not info.check_values:
        return
    compare_values(arr, exp, expected_dtype, info, what)


def check_meta(got: Any, shape: tuple[int, ...], expected_dtype: str, what: str) -> None:
    assert isinstance(got, Tensor), f"{what}: expected a Tensor, got {type(got).__name__}: {got!r}"
    want_dtype = getattr(tp, expected_dtype)
    assert got.dtype == want_dtype, f"{what}: dtype {got.dtype} != expected tp.{expected_dtype}"
    assert tuple(got.shape) == tuple(shape), (
        f"{what}: shape {tuple(got.shape)} != expected {tuple(shape)}"
    )


def compare_values(arr: np.ndarray, exp: np.ndarray, dt: str, info: OpInfo, what: str) -> None:
    if dt == "bool" or is_int(dt):
        with np.errstate(invalid="ignore"):
            want = exp.astype(np_dtype(dt))
        np.testing.assert_array_equal(arr, want, err_msg=f"{what}: values differ (exact)")
        return
    rtol, atol = info.tol.get(dt, TOLERANCES[dt])
    if dt.startswith("complex"):
        np.testing.assert_allclose(
            arr.astype(np.complex128), exp.astype(dt).astype(np.complex128), rtol=rtol,
            atol=atol, equal_nan=True, err_msg=f"{what}: values differ (rtol={rtol}, atol={atol})",
        )  # fmt: skip
        return
    want64 = exp.astype(np.float64)
    if dt in ("float32", "float64"):
        want64 = want64.astype(dt).astype(np.float64)  # the oracle, rounded to the result dtype
    np.testing.assert_allclose(
        arr.astype(np.float64),
        want64,
        rtol=rtol,
        atol=atol,
        equal_nan=True,
        err_msg=f"{what}: values differ (rtol={rtol}, atol={atol})",
    )


class Snapshot:
    """The values and versions of every tensor argument, to prove an op left them alone."""

    def __init__(self, args: Any, kwargs: Any) -> None:
        self.items = [(t, to_numpy(t), t._version) for t in tensors_in((args, kwargs))]

    def assert_unchanged(self, *skip: Any) -> None:
        for i, (t, arr, version) in enumerate(self.items):
            if any(t is s for s in skip):
                continue
            np.testing.assert_array_equal(
                to_numpy(t), arr, err_msg=f"tensor argument #{i} was modified by the op"
            )
            assert t._version == version, (
                f"tensor argument #{i}: _version changed from {version} to {t._version}"
            )


def _as_wide(a: np.ndarray) -> np.ndarray:
    """``a`` in float64, or complex128 for a complex array (both parts compared)."""
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


_STRIDED: dict[tuple[str, int], bool] = {}


def has_strided_views(device: str) -> bool:
    """Whether ``device``'s backend makes ``view_as_real`` a view (numpy, CuPy) rather than a
    copy (a namespace without strided views, Note [Complex views])."""
    key = (device, tp.dispatcher.generation())
    got = _STRIDED.get(key)
    if got is None:
        c = tp.zeros(1, dtype=tp.complex64, device=device)
        tp.view_as_real(c).fill_(1.0)
        got = _STRIDED[key] = bool(c.cpu().numpy()[0] == 1 + 1j)
    return got


def check_view_write(
    info: OpInfo, sample: SampleInput, dtype: str, base: Tensor, result: Any
) -> None:
    if info.strided_view and not has_strided_views(str(base.device)):
        return  # a copy on this backend (Note [Complex views]): its values are checked
    if isinstance(result, (list, tuple)) and not result:
        return  # no view to write through (unbind of a zero-size dim)
    view = result[0] if isinstance(result, (list, tuple)) else result
    if view.numel() == 0 or base.numel() == 0:
        return
    s = sentinel_for(dtype)
    ref_args, ref_kwargs = to_ref(sample.args), to_ref(sample.kwargs)
    if info.view_write == "view":
        rv = info.ref(*ref_args, **ref_kwargs)  # type: ignore[misc]
        rv0 = rv[0] if isinstance(rv, (list, tuple)) else rv
        assert np.shares_memory(rv0, ref_args[0]), (
            "oracle bug: the oracle of a view op must return a numpy view of its input"
        )
        v0 = base._version
        view.fill_(s)
        rv0[...] = s
        np.testing.assert_array_equal(
            _as_wide(to_numpy(base)),
            _as_wide(ref_args[0]),
            err_msg="writing through the view did not change the base as a view must",
        )
        assert base._version == v0 + 1, (
            f"writing through a view must bump the shared version counter: {v0} -> {base._version}"
        )
    elif info.view_write == "base":
        base.fill_(s)
        np.testing.assert_array_equal(
            to_numpy(view).astype(np.float64),
            np.full(view.shape, float(s)),
            err_msg="writing to the base did not show through the view",
        )


def check_mutating(
    info: OpInfo,
    args: Any,
    kwargs: Any,
    call: Callable[..., Any],
    expected: Any,
    snap: Snapshot,
) -> None:
    """An op that writes several arguments: each tensor its schema marks ``(a!)`` (list
    arguments flattened, in order) must hold the oracle's value and have its version bumped
    exactly once; the result is None for ``-> ()`` and the first argument otherwise."""
    schema = getattr(getattr(tp.ops.aten, info.op_name), info.overload_name).schema
    written: list[Tensor] = []
    for a, v in zip(schema.arguments, (*args, *kwargs.values()), strict=False):
        if a.is_write:
            written.extend(tensors_in(v))
    versions = [t._version for t in written]
    result = call(*args, **kwargs)
    if schema.returns:
        assert result is args[0], "the op must return its first argument itself"
    else:
        assert result is None, f"an op returning () gave {result!r}"
    assert len(expected) == len(written), "oracle bug: one value per written tensor"
    for i, (t, v0, exp) in enumerate(zip(written, versions, expected, strict=True)):
        what = f"written tensor #{i}"
        assert t._version == v0 + 1, f"{what}: _version went from {v0} to {t._version}"
        check_result(t, exp, t.dtype.name, info, what)
    snap.assert_unchanged(*written)


def check_named_returns(info: OpInfo, result: Any) -> None:
    for i, name in enumerate(info.returns_names):
        assert getattr(result, name) is result[i], f"result.{name} is not result[{i}]"
    unpacked = tuple(result)
    assert len(unpacked) == len(info.returns_names)


def run_variant(
    info: OpInfo,
    dtype: str,
    sample: SampleInput,
    variant: str,
    call: Callable[..., Any],
    expected: Any,
    expected_dtype: Any,
    device: str = "cpu",
) -> None:
    args, kwargs = call_args(info, sample, device)
    snap = Snapshot(args, kwargs)

    if info.kind == "inplace":
        self_t = args[0]
        v0 = self_t._version
        result = call(*args, **kwargs)
        assert result is self_t, "an in-place op must return its first argument itself"
        assert self_t._version == v0 + 1, (
            f"in-place op must bump _version by exactly 1: {v0} -> {self_t._version}"
        )
        check_result(self_t, expected, expected_dtype, info, "mutated self")
        snap.assert_unchanged(self_t)
        return

    if info.kind == "mutating":
        check_mutating(info, args, kwargs, call, expected, snap)
        return

    if info.kind == "out":
        exp = np.asarray(expected)
        out = to_tp(np.zeros(exp.shape, np_dtype(expected_dtype)), device)
        v0 = out._version
        result = call(*args, **kwargs, out=out)
        assert result is out, "an out= op must return the out tensor itself"
        assert out._version == v0 + 1, (
            f"out= must bump out._version by exactly 1: {v0} -> {out._version}"
        )
        check_result(out, expected, expected_dtype, info, "out")
        snap.assert_unchanged()
        return

    result = call(*args, **kwargs)
    check_devices(result, device)
    if info.compare is not None:
        info.compare(result, expected, sample, dtype)
    else:
        check_result(result, expected, expected_dtype, info)
    if info.returns_names and variant != "aten":
        check_named_returns(info, result)
    snap.assert_unchanged()
    if info.kind == "view":
        check_view_write(info, sample, dtype, args[0], result)


def run_random_variant(
    info: OpInfo,
    dtype: str,
    sample: SampleInput,
    call: Callable[..., Any],
    expected_dtype: str,
    device: str = "cpu",
) -> None:
    args, kwargs = call_args(info, sample, device)
    snap = Snapshot(args, kwargs)
    if "size" in sample.meta:
        shape = tuple(sample.meta["size"])
    elif isinstance(sample.args[0], np.ndarray):
        shape = sample.args[0].shape
    else:
        shape = tuple(sample.args[0])
    inplace = info.op_name.endswith("_")  # uniform_, normal_...: they fill their first argument
    v0 = args[0]._version if inplace else 0
    tp.manual_seed(1234)
    first = call(*args, **kwargs)
    check_devices(first, device)
    if inplace:
        assert first is args[0], "an in-place op must return its first argument itself"
        assert args[0]._version == v0 + 1, f"_version went from {v0} to {args[0]._version}"
    check_meta(first, shape, expected_dtype, "result")
    a1 = to_numpy(first).astype(np.float64)
    assert info.random_check is not None
    info.random_check(a1, sample, dtype)
    tp.manual_seed(1234)
    a2 = to_numpy(call(*args, **kwargs)).astype(np.float64)
    np.testing.assert_array_equal(a1, a2, err_msg="the same manual_seed must give the same values")
    a3 = to_numpy(call(*args, **kwargs)).astype(np.float64)
    if a1.size >= 16 and not sample.meta.get("deterministic"):
        assert not np.array_equal(a2, a3), "two draws after one manual_seed gave identical values"
    snap.assert_unchanged(*([args[0]] if inplace else []))


def run_op_case(info: OpInfo, dtype: str, sample: SampleInput, device: str = "cpu") -> None:
    """Every variant of ``info``'s op on ``sample`` (tensors on ``device``) against its numpy
    oracle; one failure listing every variant that failed."""
    import pytest

    lacking = sorted(dtype_markers((sample.args, sample.kwargs)) - supported_dtypes(device))
    if lacking:
        pytest.skip(f"the {device} backend has no {', '.join(lacking)}")
    if info.needs_special and not has_special_functions(device):
        pytest.skip(f"the {device} backend has no special-function namespace")
    if info.needs_strides and not has_strides(device):
        pytest.skip(f"the {device} backend has no strides")
    failures = case_failures(info, dtype, sample, device)
    if failures:
        pytest.fail(
            f"{info.name} {dtype} {sample.name} on {device}:\n" + "\n".join(failures),
            pytrace=False,
        )


_SUPPORTED: dict[tuple[str, int], frozenset[str]] = {}


def supported_dtypes(device: str) -> frozenset[str]:
    """The names of the dtypes ``device``'s backend stores (it makes a tensor of each); asked
    again whenever registrations change (a backend registered anew)."""
    key = (device, tp.dispatcher.generation())
    got = _SUPPORTED.get(key)
    if got is None:
        names = []
        for name in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                     "bfloat16", "float32", "float64", "complex64", "complex128"):  # fmt: skip
            try:
                tp.empty(0, dtype=getattr(tp, name), device=device)
            except Exception:  # noqa: BLE001 - whatever the backend raises, it lacks the dtype
                continue
            names.append(name)
        got = _SUPPORTED[key] = frozenset(names)
    return got


_SPECIAL: dict[tuple[str, int], bool] = {}


def has_strides(device: str) -> bool:
    """Whether ``device``'s backend is strided (``array_backend.register(..., strided=)``)."""
    return tp.storage.is_strided(tp.zeros(1, device=device))


def has_special_functions(device: str) -> bool:
    """Whether ``device``'s backend was registered with a special-function namespace
    (``array_backend.register(..., special=...)``): without one, ``tp.special.i0e`` raises
    its "not supported by this backend" error."""
    key = (device, tp.dispatcher.generation())
    got = _SPECIAL.get(key)
    if got is None:
        try:
            tp.special.i0e(tp.zeros(1, device=device))
            got = True
        except RuntimeError as e:
            if "not supported by this backend" not in str(e):
                raise
            got = False
        _SPECIAL[key] = got
    return got


def dtype_markers(x: Any) -> set[str]:
    """The dtype names that ``DT`` markers in sample values ask for."""
    if isinstance(x, DT):
        return {x.name}
    if isinstance(x, (list, tuple)):
        return set().union(*(dtype_markers(v) for v in x)) if x else set()
    if isinstance(x, dict):
        return dtype_markers(list(x.values()))
    return set()


class default_device:
    """``with default_device("foo"):`` -- factories without ``device=`` create there."""

    def __init__(self, device: str) -> None:
        self.device = device

    def __enter__(self) -> None:
        self.prev = tp.get_default_device()
        tp.set_default_device(self.device)

    def __exit__(self, *exc: object) -> None:
        tp.set_default_device(self.prev)


def case_failures(info: OpInfo, dtype: str, sample: SampleInput, device: str) -> list[str]:
    """Run every variant of one case on ``device``; what went wrong, one line per variant."""
    failures: list[str] = []
    with default_device(device):
        _run_variants(info, dtype, sample, device, failures)
    return failures


def _run_variants(
    info: OpInfo, dtype: str, sample: SampleInput, device: str, failures: list[str]
) -> None:
    if info.kind == "random":
        expected_dtype = info.result_dtype(sample, dtype)
        for variant, call in info.variants():
            try:
                run_random_variant(info, dtype, sample, call, expected_dtype, device)
            except Exception as e:  # noqa: BLE001 - every variant is reported, not just the first
                failures.append(f"[{variant}] {type(e).__name__}: {e}")
    else:
        assert info.ref is not None
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # "Mean of empty slice"
            expected = info.ref(*to_ref(sample.args), **to_ref(sample.kwargs))
        expected_dtype = info.result_dtype(sample, dtype)
        for variant, call in info.variants():
            try:
                run_variant(info, dtype, sample, variant, call, expected, expected_dtype, device)
            except Exception as e:  # noqa: BLE001
                failures.append(f"[{variant}] {type(e).__name__}: {e}")
