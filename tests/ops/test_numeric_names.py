"""The issue-29 names against torch 2.13's answers, recorded by tools/gen_numeric_names.py
(tests/ops/data/numeric_names.json): numpy's names of the pointwise ops, the numeric functions
(gcd, shifts, copysign, logaddexp, nextafter, frexp, ...), the statistics (nanmedian, mode,
quantile, logcumsumexp, renorm, ...), poisson, randint_like and range. Each case gives torch's
dtype, shape and values, or torch's exception type (``NotImplementedError`` where its dispatch
macros refuse a dtype)."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

DATA = json.loads((Path(__file__).parent / "data" / "numeric_names.json").read_text())
EXCEPTIONS = {"RuntimeError": RuntimeError, "NotImplementedError": NotImplementedError,
              "IndexError": IndexError, "TypeError": TypeError}  # fmt: skip


def _run(case: str) -> Any:
    env = {"L": tp, "T": tp.tensor, "nan": math.nan, "inf": math.inf, "math": math}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(case, env)


def _values(t: Any) -> np.ndarray:
    a = np.asarray(t.tolist()) if t.numel() else np.zeros(tuple(t.shape))
    return a.astype(np.complex128) if t.dtype.is_complex else a


def _want(values: Any, dtype: str) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64 if dtype != "bool" else bool)
    if dtype.startswith("complex"):
        a = a[..., 0] + 1j * a[..., 1]
    return a


def _check(got: Any, want: dict[str, Any], case: str) -> None:
    if "repr" in want:
        assert str(got).rsplit(".", 1)[-1] == want["repr"], case
        return
    assert isinstance(got, tp.Tensor), case
    assert str(got.dtype).rsplit(".", 1)[-1] == want["dtype"], case
    assert list(got.shape) == want["shape"], case
    w = _want(want["values"], want["dtype"]).reshape(want["shape"])
    tol = 1e-2 if want["dtype"] in ("float16", "bfloat16") else 1e-6
    np.testing.assert_allclose(_values(got), w, rtol=tol, atol=tol, equal_nan=True, err_msg=case)


@pytest.mark.parametrize("record", DATA["cases"], ids=lambda r: r["case"][:60])
def test_gives_torchs_answer(record: dict[str, Any]) -> None:
    case = record["case"]
    if "raises" in record:
        with pytest.raises(EXCEPTIONS[record["raises"]]):
            _run(case)
        return
    got, want = _run(case), record["result"]
    if isinstance(want, list):
        assert isinstance(got, tuple) and len(got) == len(want), case
        for g, w in zip(got, want, strict=True):
            _check(g, w, case)
    else:
        _check(got, want, case)


def test_range_is_deprecated_as_in_pytorch() -> None:
    with pytest.warns(UserWarning, match="range is deprecated"):
        tp.range(0, 3)


def test_the_shift_operators_reflect_and_work_in_place() -> None:
    x = tp.tensor([1, 2, 3])
    x <<= 2
    assert x.tolist() == [4, 8, 12]
    x >>= tp.tensor([1, 2, 3])
    assert x.tolist() == [2, 2, 1]
    assert (1 << tp.tensor([0, 3])).tolist() == [1, 8]
