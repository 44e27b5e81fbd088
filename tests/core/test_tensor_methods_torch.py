"""Issue 29's Tensor methods and properties against torch 2.13's answers, frozen in
data/tensor_methods_expected.json by tools/gen_tensor_methods_expected.py: each expression,
evaluated with ``T`` bound to ``tensorplug``, gives torch's values, dtype and shape, or raises
torch's exception type. (Python ``type()`` names read ``tensorplug.`` where torch's read
``torch.``.)"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import pytest

import tensorplug as tp

DATA = json.loads((Path(__file__).parent / "data" / "tensor_methods_expected.json").read_text())
CASES = DATA["cases"]


def encode(r: Any) -> Any:
    if isinstance(r, tp.Tensor):
        out: dict[str, Any] = {
            "tensor": True,
            "dtype": str(r.dtype).split(".")[-1],
            "shape": list(r.shape),
        }
        if r.device.type != "meta":
            flat = r.detach().reshape(-1).tolist()
            if r.dtype.is_complex:
                out["values"] = [[z.real, z.imag] for z in flat]
            else:
                out["values"] = [
                    None if isinstance(f, float) and math.isnan(f) else f for f in flat
                ]
        return out
    if isinstance(r, tp.dtype):
        return {"dtype_value": str(r).split(".")[-1]}
    if isinstance(r, (list, tuple)):
        return {"sequence": [encode(e) for e in r]}
    if isinstance(r, str):
        return {"str": r}
    return {"value": r}


def same(got: Any, want: Any) -> bool:
    if "size" in want:  # torch.Size; tensorplug's shape is a tuple
        return got == {"sequence": [{"value": s} for s in want["size"]]}
    if want.keys() != got.keys():
        return False
    if "values" in want:
        g, w = got["values"], want["values"]
        if len(g) != len(w):
            return False
        for a, b in zip(g, w, strict=True):
            a, b = (a, b) if isinstance(b, list) else ([a], [b])
            for p, q in zip(a, b, strict=True):
                if q is None or p is None:
                    if p is not q:
                        return False
                elif not math.isclose(p, q, rel_tol=1e-4, abs_tol=1e-5):
                    return False
        return got["dtype"] == want["dtype"] and got["shape"] == want["shape"]
    if "sequence" in want:
        return len(got["sequence"]) == len(want["sequence"]) and all(
            same(g, w) for g, w in zip(got["sequence"], want["sequence"], strict=True)
        )
    return bool(got == want)


@pytest.mark.parametrize("case", CASES, ids=[c["expr"] for c in CASES])
def test_expression_agrees_with_torch(case: dict[str, Any]) -> None:
    expr = case["expr"]
    env: dict[str, Any] = {"T": tp}
    exec(DATA["setup"], env)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "error" in case:
            with pytest.raises(BaseException) as info:
                eval(expr.removeprefix("shape:"), env)
            assert type(info.value).__name__ == case["error"], (expr, info.value)
            return
        r = eval(expr.removeprefix("shape:"), env)
    got = encode(r)
    if expr.startswith("shape:"):
        got.pop("values", None)
    assert same(got, case["result"]), f"{expr}: {got} != {case['result']}"
