"""Every standard operator under vmap against the loop oracle, driven by the OpInfo registry.

For each op overload (one dtype: float32 where the op takes it, so the promotion samples run)
and each sample, a batch of 3 variants of the sample is made (variant ``b`` rolls each array's
elements by ``b``, so values stay in the op's domain), and the overload
``tp.ops.aten.<op>.<overload>`` runs

* under ``tp.vmap`` with every tensor batched at ``in_dims`` 0, 1 and -1 (1 and -1 clamp to
  what a tensor's rank allows), and with one tensor batched and the others unbatched (None);
* once per variant, the results stacked: the oracle.

Results must match in dtype, shape and values (exact for integers and bools), and so must the
batched inputs afterwards (what in-place and mutating ops wrote into them). Where the oracle cannot run (a result
shape that depends on values, a per-sample error), vmap must raise too. vmap may refuse what
PyTorch refuses (dynamic shapes, writing a batched value into an unbatched ``self``) with
PyTorch's messages. Random ops are covered by test_randomness.py, factories (no tensor inputs)
have nothing to map.
"""

from __future__ import annotations

import warnings
import zlib
from typing import Any

import numpy as np
import optree
import pytest

import tensorplug as tp
from tensorplug.testing.opinfo import DT, OP_DB, OpInfo, SampleInput

pytest.importorskip("tensorplug_batched")
if "batched" not in tp.plugins.loaded_names():
    pytest.skip("needs the tensorplug-batched plugin loaded", allow_module_level=True)

B = 3
VARIANTS = ("0", "1", "-1", "none")
REFUSALS = (
    "vmap: We do not support batching operators that can",
    "vmap: inplace arithmetic(self, *extra_args) is not possible",
    "vmap: It looks like you're calling .item() on a Tensor.",  # narrow.Tensor's start
    "aten::view: view size is not compatible",  # a batch not first, as PyTorch
    "vmap: Calling Tensor.as_strided",  # a batch not first in memory, or as_strided_
    "vmap: Calling aten::resize_",  # the storage ops, refused as PyTorch's vmap refuses them
    "vmap: Calling aten::set_",
)


def _dtype(info: OpInfo) -> str:
    for d in ("float32", "float64", "int64", "bool"):
        if d in info.dtypes:
            return d
    return info.dtypes[0]


def _cases() -> list[Any]:
    out = []
    for info in OP_DB:
        if info.kind in ("random", "factory"):
            continue
        for variant in VARIANTS:
            out.append(pytest.param(info, variant, id=f"{info.name}-{variant}"))
    return out


def _variant(x: Any, b: int) -> Any:
    if isinstance(x, np.ndarray) and x.size > 1:
        return np.roll(x.reshape(-1), b).reshape(x.shape)
    return x


def _tp(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        if x.dtype.name == "bfloat16":
            return tp.tensor(x.astype(np.float32), dtype=tp.bfloat16)
        return tp.tensor(np.array(x, copy=True))
    if isinstance(x, DT):
        return getattr(tp, x.name)
    return x


def _leaves(sample: SampleInput) -> tuple[list[Any], Any]:
    return optree.tree_flatten((sample.args, sample.kwargs), none_is_leaf=True)


def _call(fn: Any, spec: Any, leaves: list[Any]) -> Any:
    args, kwargs = optree.tree_unflatten(spec, leaves)
    return fn(*args, **kwargs)


def _np(t: Any) -> np.ndarray:
    a = np.asarray(t.numpy())
    return a.astype(np.float64) if a.dtype.name in ("float16", "bfloat16") else np.array(a)


def _stack(results: list[Any]) -> Any:
    first = results[0]
    if isinstance(first, tp.Tensor):
        arrays = [_np(r) for r in results]
        if len({a.shape for a in arrays}) != 1:
            raise ValueError("per-sample results differ in shape")
        return (first.dtype, np.stack(arrays))
    if isinstance(first, (list, tuple)):
        out: list[Any] = []
        for k in range(len(first)):
            column = [r[k] for r in results]
            if all(c is None for c in column):  # an output the call asked not to compute
                out.append(None)
            elif all(isinstance(c, tp.Tensor) for c in column) or all(
                isinstance(c, (list, tuple)) for c in column
            ):  # a tensor, or a list of them (histogramdd's edges)
                out.append(_stack(column))
            else:
                raise ValueError("a non-tensor result")
        return out
    raise ValueError(f"a non-tensor result: {type(first).__name__}")


def _compare(got: Any, want: Any, what: str) -> None:
    if want is None:  # an op that returns nothing (it writes its inputs)
        assert got is None, f"{what}: expected None, got {type(got).__name__}"
        return
    if isinstance(want, list):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), what
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            _compare(g, w, f"{what}[{k}]")
        return
    dtype, arr = want
    assert isinstance(got, tp.Tensor) and type(got) is tp.Tensor, f"{what}: got {type(got)}"
    assert got.dtype == dtype, f"{what}: dtype {got.dtype} != {dtype}"
    g = _np(got)
    assert g.shape == arr.shape, f"{what}: shape {g.shape} != {arr.shape}"
    if arr.dtype.kind in "biu":
        np.testing.assert_array_equal(g, arr, err_msg=what)
    else:
        tol = (
            1e-5
            if dtype in (tp.float32,)
            else 2e-3
            if dtype in (tp.float16, tp.bfloat16)
            else 1e-10
        )
        np.testing.assert_allclose(g, arr, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def _shapes_only(want: Any) -> Any:
    dtype, arr = want
    return (dtype, np.zeros_like(arr))


def _dims_for(variant: str, leaves: list[Any], arrays: list[int], which: int) -> dict[int, int]:
    dims = {}
    for k, i in enumerate(arrays):
        n = leaves[i].ndim
        if variant == "0":
            dims[i] = 0
        elif variant == "1":
            dims[i] = min(1, n)
        elif variant == "-1":
            dims[i] = -1
        elif k == which:
            dims[i] = 0
    return dims


def _overload(info: OpInfo) -> Any:
    return getattr(getattr(tp.ops.aten, info.op_name), info.overload_name)


def run(info: OpInfo, sample: SampleInput, variant: str, which: int = 0) -> None:
    fn = info.aten()
    leaves, spec = _leaves(sample)
    arrays = [i for i, x in enumerate(leaves) if isinstance(x, np.ndarray)]
    if not arrays or (variant == "none" and len(arrays) < 2):
        return
    dims = _dims_for(variant, leaves, arrays, which)
    per_sample = [
        [_variant(x, b) if i in dims else x for i, x in enumerate(leaves)] for b in range(B)
    ]
    # the oracle: one call per variant, on fresh tensors
    oracle_error = None
    expected: Any = None
    written: dict[int, Any] = {}  # each batched input after the calls (in-place ops write them)
    try:
        results, inputs = [], []
        for b in range(B):
            ts = [_tp(x) for x in per_sample[b]]
            results.append(_call(fn, spec, ts))
            inputs.append(ts)
        expected = None if all(r is None for r in results) else _stack(results)
        written = {i: _stack([ts[i] for ts in inputs]) for i in dims}
    except (RuntimeError, ValueError, IndexError, TypeError) as e:
        oracle_error = e
    # vmap: batched leaves are the stacked variants, the others the sample's own values
    phys = [_tp(np.stack([per_sample[b][i] for b in range(B)], axis=dims[i])) if i in dims else _tp(x)
            for i, x in enumerate(leaves)]  # fmt: skip
    mapped = list(dims)
    in_dims = tuple(dims[i] for i in mapped)

    def f(*xs: Any) -> Any:
        call = list(phys)
        for i, x in zip(mapped, xs, strict=True):
            call[i] = x
        return _call(fn, spec, call)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = tp.vmap(f, in_dims=in_dims)(*(phys[i] for i in mapped))
    except (RuntimeError, ValueError, IndexError, TypeError) as e:
        if oracle_error is not None or any(str(e).startswith(r) for r in REFUSALS):
            return
        raise AssertionError(f"{sample.name}: vmap raised {type(e).__name__}: {e}") from e
    assert oracle_error is None, f"{sample.name}: vmap ran, the loop raised {oracle_error!r}"
    if not info.check_values:  # empty_like: only dtype and shape are defined
        expected = _shapes_only(expected)
        got = tp.zeros_like(got) if isinstance(got, tp.Tensor) else got
    _compare(got, expected, f"{sample.name} (in_dims={in_dims})")
    if "inplace_view" in _overload(info).tags:
        # squeeze_, transpose_, ...: the caller's tensor takes a shape where its batch dim
        # lands as the op's rule places it (functorch's rules move it too); the result, the
        # batched tensor itself, was compared above
        return
    for i, want in written.items():  # what the op wrote into its batched inputs, if anything
        after = tp.ops.aten.movedim.int(phys[i], dims[i], 0)
        _compare(after, want, f"{sample.name}: input {i} after the call")


@pytest.mark.parametrize(("info", "variant"), _cases())
def test_vmap_matches_loop(info: OpInfo, variant: str) -> None:
    d = _dtype(info)
    rng = np.random.default_rng(zlib.crc32(f"{info.name}-{d}".encode()))
    for sample in info.sample_inputs(d, rng):
        if variant == "none":
            n = sum(isinstance(x, np.ndarray) for x in _leaves(sample)[0])
            for which in range(min(n, 3)):
                run(info, sample, variant, which)
        else:
            run(info, sample, variant)
