"""Every OpInfo sample, traced and replayed: the replay on new inputs equals eager execution.

For each op and dtype, the harness traces ``op(*sample)`` (the public function, as a user calls
it) on the samples drawn with one seed and replays each graph on the sample drawn at the same
place with another seed, when it has the same structure (tensor shapes and dtypes, and equal
non-tensor arguments); otherwise on fresh copies of its own sample. The oracle is the eager call
on those same inputs, compared bitwise (the same kernels run), mutated inputs included. It also
runs the lowered form (``tp.compile``), whose kernels come from ``op.kernel_for``.
A function that reads tensor values into Python while traced (``TracerWarning``) is only
replayed on its own sample: its graph keeps what it read.
"""

from __future__ import annotations

import warnings
import zlib
from typing import Any

import numpy as np
import optree
import pytest

import tensorplug as tp
from tests import needs

needs.tracer()

from tensorplug.testing import to_tp  # noqa: E402
from tensorplug.testing.opinfo import OP_DB, OpInfo, ml_dtypes  # noqa: E402


def _structure(sample: Any) -> Any:
    """What must match for a graph traced on one sample to stand for another."""

    def leaf(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            return ("array", x.shape, x.dtype.str)
        return ("value", type(x).__name__, repr(x))

    return optree.tree_map(leaf, (sample.args, sample.kwargs), none_is_leaf=True)


def _flat(x: Any) -> list[Any]:
    return optree.tree_leaves(x, none_is_leaf=True)


def _same(a: Any, b: Any, where: str, values: bool = True) -> None:
    if isinstance(a, tp.Tensor):
        assert isinstance(b, tp.Tensor), f"{where}: {type(b).__name__} where a Tensor was"
        assert (a.shape, a.dtype) == (b.shape, b.dtype), (
            f"{where}: {a.shape} {a.dtype} != {b.shape} {b.dtype}"
        )
        if not values:  # empty(): no values to compare
            return
        x, y = np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy())
        if x.dtype.name == "bfloat16":
            x, y = x.astype(np.float32), y.astype(np.float32)
        assert np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"), f"{where}: values differ"
    else:
        assert type(a) is type(b) and (a == b or a != a), f"{where}: {a!r} != {b!r}"


def _call(info: OpInfo, args: Any, kwargs: Any, random: bool) -> Any:
    if random:
        tp.manual_seed(1234)
    return info.op(*args, **kwargs)


def _check(info: OpInfo, dtype: str, traced: Any, target: Any, lower: bool) -> str:
    """Trace on ``traced``, replay (and run lowered) on ``target``; returns how it replayed."""
    if info.kind == "out":
        return _check_out(info, traced, target)
    random = info.kind == "random"
    args, kwargs = to_tp(traced.args), to_tp(traced.kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", tp.tracer.TracerWarning)
        if random:
            tp.manual_seed(1234)
        g = tp.tracer.trace(info.op, *args, **kwargs)
    reads = any(w.category is tp.tracer.TracerWarning for w in caught)
    if reads:
        target = traced
    new_args, new_kwargs = to_tp(target.args), to_tp(target.kwargs)
    eager_args, eager_kwargs = to_tp(target.args), to_tp(target.kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _call(info, eager_args, eager_kwargs, random)
        if random:
            tp.manual_seed(1234)
        got = g(*new_args, **new_kwargs)
    for i, (a, b) in enumerate(zip(_flat(got), _flat(want), strict=True)):
        _same(a, b, f"replay output {i}", info.check_values)
    for i, (a, b) in enumerate(
        zip(_flat((new_args, new_kwargs)), _flat((eager_args, eager_kwargs)), strict=True)
    ):
        _same(a, b, f"input {i} after the replay")
    if lower and not reads:  # the lowered form, on the same inputs
        low_args, low_kwargs = to_tp(target.args), to_tp(target.kwargs)
        c = tp.compile(info.op)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(2):  # two traces that agree (Note [Confirmed graphs] in compile.py)
                c(*to_tp(traced.args), **to_tp(traced.kwargs))
            assert len(c.graphs) == 1, "the graph was not confirmed: nothing lowered"
            if random:
                tp.manual_seed(1234)
            lowered = c(*low_args, **low_kwargs)
        for i, (a, b) in enumerate(zip(_flat(lowered), _flat(want), strict=True)):
            _same(a, b, f"lowered output {i}", info.check_values)
        for i, (a, b) in enumerate(
            zip(_flat((low_args, low_kwargs)), _flat((eager_args, eager_kwargs)), strict=True)
        ):
            _same(a, b, f"input {i} after the lowered run")
    return "own" if reads or target is traced else "new"


def _check_out(info: OpInfo, traced: Any, target: Any) -> str:
    """``out=`` ops: traced with an out tensor shaped like the result, replayed into another."""

    def inputs(sample: Any) -> tuple[Any, Any, Any]:
        args, kwargs = to_tp(sample.args), to_tp(sample.kwargs)
        shape = np.asarray(info.ref(*sample.args, **sample.kwargs)).shape  # type: ignore[misc]
        dt = getattr(tp, info.result_dtype(sample, _dtype_of(sample)))
        return args, kwargs, tp.zeros(list(shape), dtype=dt)

    def call(a: Any, k: Any, o: Any) -> Any:
        return info.op(*a, **k, out=o)

    g = tp.tracer.trace(call, *inputs(traced))
    a1, k1, out_g = inputs(target)
    a2, k2, out_w = inputs(target)
    g(a1, k1, out_g)
    call(a2, k2, out_w)
    _same(out_g, out_w, "out")
    return "new"


def _dtype_of(sample: Any) -> str:
    arrays = [x for x in _flat((sample.args, sample.kwargs)) if isinstance(x, np.ndarray)]
    return str(arrays[0].dtype) if arrays else "float32"


def _cases() -> list[Any]:
    return [pytest.param(info, id=info.name) for info in OP_DB]


@pytest.mark.parametrize("info", _cases())
def test_replay_equals_eager(info: OpInfo) -> None:
    failures = []
    counts = {"new": 0, "own": 0}
    for dtype in info.dtypes:
        if dtype == "bfloat16" and ml_dtypes is None:
            continue
        seed = zlib.crc32(f"{info.name}-{dtype}".encode())
        first = list(info.sample_inputs(dtype, np.random.default_rng(seed)))
        second = list(info.sample_inputs(dtype, np.random.default_rng(seed + 1)))
        for i, sample in enumerate(first):
            other = second[i] if i < len(second) else None
            target = (
                other if other is not None and _structure(other) == _structure(sample) else sample
            )
            try:
                # the lowered form on the first sample of each dtype (it is slower to build)
                counts[_check(info, dtype, sample, target, i == 0)] += 1
            except Exception as e:  # noqa: BLE001 - every sample is reported, not just the first
                failures.append(f"{dtype} {sample.name}: {type(e).__name__}: {e}")
    if failures:
        pytest.fail(f"{info.name}:\n" + "\n".join(failures[:10]), pytrace=False)
    assert sum(counts.values()) > 0
