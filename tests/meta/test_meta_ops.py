"""Every standard operator on Meta tensors against the same call on CPU tensors (the oracle):
the OpInfo samples (``tensorplug.testing.opinfo``), each run through the overload on CPU and
on Meta copies of its inputs. Where CPU gives results, Meta gives tensors of the same shapes
and dtypes on the meta device; where CPU raises, Meta raises the same exception type with the
same message (Note [Kernel errors] in array_backend/_checks.py: both come from one kernel).
Ops whose results depend on values refuse on Meta, by message.

One test per op overload, its samples in a loop (all dtypes), to keep the suite fast.
"""

from __future__ import annotations

import re
import warnings
import zlib
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.tensor import Tensor
from tensorplug.testing._harness import to_tp
from tensorplug.testing.opinfo import OP_DB, OpInfo, ml_dtypes, np_dtype

# overloads whose result depends on values: they refuse on Meta (as PyTorch's meta kernels do)
READS_VALUES = {
    "nonzero", "masked_select", "_unique2", "unique_dim", "unique_consecutive", "equal",
    "allclose", "_local_scalar_dense", "where",
    "repeat_interleave.Tensor", "repeat_interleave.self_Tensor", "narrow.Tensor",
    "index.Tensor", "index_put", "index_put_",  # with boolean masks
    "istft",  # its window-envelope check reads a value (item()), as PyTorch's
    # issue 29: lengths from values (combinations picks with nonzero of a mask, as PyTorch's
    # masked_select), indices given as a tensor, weights checked by value
    "bincount", "argwhere", "combinations", "tensor_split.tensor_indices_or_sections", "cov",
    "is_nonzero",  # bool() of the one value
}  # fmt: skip
REFUSAL = re.compile(r"depends on the values of its inputs|cannot be called on meta tensors|"
                     r"without output_size")  # fmt: skip


def _overload(info: OpInfo) -> Any:
    return getattr(getattr(tp.ops.aten, info.op_name), info.overload_name)


def _samples(info: OpInfo) -> list[tuple[str, Any]]:
    out = []
    for dtype in info.dtypes:
        if dtype == "bfloat16" and ml_dtypes is None:
            continue
        rng = np.random.default_rng(zlib.crc32(f"{info.name}-{dtype}".encode()))
        out.extend((dtype, s) for s in info.sample_inputs(dtype, rng))
    return out


def _meta_args(x: Any) -> Any:
    """CPU call arguments -> the same with every tensor a meta tensor of its shape and dtype."""
    if isinstance(x, Tensor):
        return x.to("meta")
    if isinstance(x, list):
        return [_meta_args(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_meta_args(v) for v in x)
    if isinstance(x, dict):
        return {k: _meta_args(v) for k, v in x.items()}
    return x


def _metadata(x: Any) -> Any:
    if isinstance(x, Tensor):
        return ("tensor", tuple(x.shape), x.dtype)
    if isinstance(x, (list, tuple)):
        return [_metadata(v) for v in x]
    return ("value", type(x).__name__)


def _run(call: Any, args: Any, kwargs: Any) -> tuple[Any, BaseException | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return None, e


def meta_case_failures(info: OpInfo, dtype: str, sample: Any) -> list[str]:
    """What differs between CPU and Meta for one sample (empty: nothing)."""
    op = _overload(info)
    args, kwargs = to_tp(sample.args, "cpu"), to_tp(sample.kwargs, "cpu")
    if info.kind == "out":
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exp = np.asarray(info.ref(*sample.args, **sample.kwargs))
        kwargs["out"] = tp.tensor(np.zeros(exp.shape, np_dtype(info.result_dtype(sample, dtype))))
    if "device" in {a.name for a in op.schema.arguments}:
        meta_kwargs = {**_meta_args(kwargs), "device": "meta"}
    else:
        meta_kwargs = _meta_args(kwargs)
    meta_args = _meta_args(args)
    want, werr = _run(op, args, kwargs)
    got, gerr = _run(op, meta_args, meta_kwargs)
    where = f"{info.name} {dtype} {sample.name}"
    if info.kind in ("inplace", "mutating") and werr is None:
        want, got = args, meta_args  # what was written
    elif info.kind == "out" and werr is None:
        want, got = kwargs["out"], meta_kwargs["out"]
    if gerr is not None and info.name in READS_VALUES and REFUSAL.search(str(gerr)):
        return []
    if isinstance(werr, NotImplementedError) and "not supported by the CPU backend" in str(werr):
        return []  # the CPU kernel needs a library that is not installed (LDL: scipy); Meta not
    if werr is not None or gerr is not None:
        if werr is None:
            return [f"{where}: CPU gives a result, Meta raises {type(gerr).__name__}: {gerr}"]
        if gerr is None:
            return [f"{where}: CPU raises {type(werr).__name__}: {werr}; Meta gives a result"]
        if type(werr) is not type(gerr) or _msg(werr) != _msg(gerr):
            return [f"{where}: CPU raises {type(werr).__name__}: {werr}; "
                    f"Meta raises {type(gerr).__name__}: {gerr}"]  # fmt: skip
        return []
    if _metadata(want) != _metadata(got):
        return [f"{where}: CPU gives {_metadata(want)}, Meta {_metadata(got)}"]
    for t in _tensors(got):
        if t.device.type != "meta":
            return [f"{where}: a result is on {t.device}, not meta"]
    return []


def _msg(e: BaseException) -> str:
    """The message without the array library's own wording (numpy's and the meta namespace's
    texts for one error differ; PyTorch's, which kernels raise themselves, are compared)."""
    text = str(e)
    return re.sub(r": [^:]*\((\w+) from the array library of the (CPU|Meta) backend\)$",
                  r": (\1 from the array library)", text)  # fmt: skip


def _tensors(x: Any) -> list[Tensor]:
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v)]
    return []


@pytest.mark.parametrize("info", OP_DB, ids=lambda i: i.name)
def test_meta_matches_cpu(info: OpInfo) -> None:
    failures = [f for dtype, s in _samples(info) for f in meta_case_failures(info, dtype, s)]
    assert not failures, "\n".join(failures[:10])
