"""The generated code of a graph against its plain-Python reference (interpret.py), on OpInfo
samples: each sample is traced, then run through the generated replay function (``graph.code``
compiled, codegen.graph_function), the generated lowered function (codegen.lowered_function)
and the node-by-node interpreter, each on fresh copies of the inputs; outputs and mutated inputs
must agree bitwise. Two dtypes per op (the first and the last) keep it short;
test_opinfo_replay.py runs every dtype against eager execution.
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
from tensorplug_tracer.codegen import graph_function, lowered_function  # noqa: E402
from tensorplug_tracer.interpret import interpret  # noqa: E402


def _flat(x: Any) -> list[Any]:
    return optree.tree_leaves(x, none_is_leaf=True)


def _same(a: Any, b: Any, where: str, values: bool) -> None:
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


def _run(how: str, g: Any, sample: Any, random: bool) -> tuple[Any, Any]:
    """``g`` run ``how`` on fresh copies of the sample: (outputs, inputs after the run)."""
    args, kwargs = to_tp(sample.args), to_tp(sample.kwargs)
    if random:
        tp.manual_seed(1234)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if how == "interpreted":
            out = interpret(g, *args, **kwargs)
        elif how == "generated":
            fn = graph_function(g)
            out = fn(*args, **{g.kwarg_names[k]: v for k, v in kwargs.items()})
        else:  # the lowered form: the tensor leaves in, the output leaves (or the one) out
            fn, _ = lowered_function(g)
            leaves = [x for x in optree.tree_leaves((args, kwargs)) if isinstance(x, tp.Tensor)]
            flat = fn(*leaves)
            out = flat if optree.treespec_is_leaf(g.out_spec) else g.out_spec.unflatten(flat)
    return out, (args, kwargs)


def _check(info: OpInfo, sample: Any) -> None:
    random = info.kind == "random"
    args, kwargs = to_tp(sample.args), to_tp(sample.kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tp.tracer.TracerWarning)
        if random:
            tp.manual_seed(1234)
        g = tp.tracer.trace(info.op, *args, **kwargs)
    assert g.nodes, "nothing was recorded"
    want, want_inputs = _run("interpreted", g, sample, random)
    for how in ("generated", "lowered"):
        got, got_inputs = _run(how, g, sample, random)
        for i, (a, b) in enumerate(zip(_flat(got), _flat(want), strict=True)):
            _same(a, b, f"{how} output {i}", info.check_values)
        for i, (a, b) in enumerate(zip(_flat(got_inputs), _flat(want_inputs), strict=True)):
            _same(a, b, f"input {i} after the {how} run", True)


def _cases() -> list[Any]:
    # out= ops trace a wrapper with an out tensor (test_opinfo_replay.py's _check_out)
    chosen = [i for i in OP_DB if i.kind != "out"]
    return [pytest.param(info, id=info.name) for info in chosen]


@pytest.mark.parametrize("info", _cases())
def test_generated_code_equals_the_interpreter(info: OpInfo) -> None:
    dtypes = [d for d in info.dtypes if d != "bfloat16" or ml_dtypes is not None]
    failures = []
    checked = 0
    for dtype in dict.fromkeys([dtypes[0], dtypes[-1]]):
        rng = np.random.default_rng(zlib.crc32(f"{info.name}-{dtype}".encode()))
        for sample in info.sample_inputs(dtype, rng):
            try:
                _check(info, sample)
                checked += 1
            except Exception as e:  # noqa: BLE001 - every sample is reported, not just the first
                failures.append(f"{dtype} {sample.name}: {type(e).__name__}: {e}")
    if failures:
        pytest.fail(f"{info.name}:\n" + "\n".join(failures[:10]), pytrace=False)
    assert checked > 0
