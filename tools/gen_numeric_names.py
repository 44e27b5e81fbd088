"""Record torch 2.13's answers to the issue-29 names (numpy's names of the pointwise ops, the
numeric functions, the statistics, ...) in tests/ops/data/numeric_names.json, which
tests/ops/test_numeric_names.py compares tensorplug with.

Each case is an expression in ``L`` (the library: torch here, tensorplug in the test), ``T``
(``L.tensor``), ``nan`` and ``inf``; its record is the result's dtype, shape and values (a tuple
of them for several results), or the exception type. Run with torch installed:

    /work/torchenv/bin/python tools/gen_numeric_names.py
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "tests" / "ops" / "data" / "numeric_names.json"

CASES = """
L.absolute(T([-1.5, 2.0]))
L.arccos(T([0.5, -1.0]))
L.arcsinh(T([1, 2]))
L.arctan2(T([1.0, -1.0]), T([-2.0, 0.5]))
L.divide(T([7, -7]), T([2, 2]), rounding_mode='floor')
L.true_divide(T([1, 2]), 4)
L.divide(T([7, -7], dtype=L.int32), 2, rounding_mode='floor')
T([7, -7]).divide_(2.5, rounding_mode='floor')
T([7.0, -7.0]).divide_(T([2.0, 4.0]), rounding_mode='trunc')
L.multiply(T([1, 2]), 2.5)
L.subtract(T([5, 6]), T([1, 2]), alpha=3)
L.negative(T([True]))
L.positive(T([True]))
L.fix(T([-1.5, 2.7]))
L.greater(T([1, 2, 3]), 2)
L.not_equal(T([1.0, 2.0]), T([1.0, 3.0]))
T([1.0, 2.0, 3.0]).less_equal_(2)
L.lt(T([1j]), T([2j]))
L.ge(T([1j]), 1)
L.gcd(T([1, 2, 3, -4, 0]), T([4, 6, 9, 6, 0]))
L.lcm(T([-4, 0, 3]), T([6, 5, -4]))
L.gcd(T([1.0]), T([2.0]))
L.gcd(T([True]), T([False]))
T([12, 18]).gcd_(T([8, 12]))
L.bitwise_left_shift(T([1, 2, 3, -4]), T([1, 2, 63, 70]))
L.bitwise_right_shift(T([-8, 16, -1, 5]), T([1, 2, 70, -1]))
T([1, 2, 3]) << 2
T([-8, 8]) >> 1
2 << T([1, 2, 3])
T([1.0]) << 1
T([True, False]) << 1
L.bitwise_left_shift(3, T([1, 2], dtype=L.int32))
L.copysign(T([1.5, -2.0, 3.0, 0.0]), T([0.5, 2.0, -1.0, -0.0]))
L.copysign(T([1, 2]), -1)
L.copysign(T([1j]), T([1.0]))
L.deg2rad(T([180, 90]))
L.rad2deg(T([math.pi], dtype=L.float64))
L.deg2rad(T([1j]))
T([1, 2]).deg2rad_()
L.float_power(T([1, 2, 3]), 2)
L.float_power(2, T([1.0, -1.0]))
L.float_power(T([1j]), 2)
T([2]).float_power_(2)
L.frexp(T([1.5, -2.0, 3.0, 0.0, 1024.0, inf]))
L.frexp(T([1.5, -2.0], dtype=L.float16))
L.frexp(T([1, 2]))
L.ldexp(T([1.5, -2.0]), T([2, -1]))
L.ldexp(T([1, 2]), T([1, 2]))
L.ldexp(T([1.5], dtype=L.float16), T([3]))
L.logaddexp(T([1.0, -inf, 1000.0]), T([2.0, -inf, 1000.0]))
L.logaddexp(T([1 + 1j, 2j]), T([0.5 + 0j, 1j]))
L.logaddexp(T([1, 2]), T([1, 2]))
L.logaddexp2(T([1.0, inf, -3.0]), T([2.0, inf, 5.0]))
L.logaddexp2(T([1j]), T([1j]))
L.logical_xor(T([1.0, 0.0, 2.0]), T([1, 1, 0]))
L.nextafter(T([1.0, 0.0, -1.0]), T([2.0, -1.0, -2.0]))
L.nextafter(T([1.0, 0.0, -1.0, 65504.0], dtype=L.float16), T([0.0, 1.0, -2.0, inf], dtype=L.float16))
L.nextafter(T([1.0, 0.0, -1.0], dtype=L.bfloat16), T([2.0, -1.0, 0.0], dtype=L.bfloat16))
L.nextafter(T([1, 2]), T([2, 3]))
L.isposinf(T([1.0, inf, -inf, nan]))
L.isneginf(T([1, 2]))
L.isneginf(T([1j]))
L.isreal(T([1 + 1j, 2 + 0j]))
L.isreal(T([1.0]))
L.nansum(T([[1.0, nan], [2.0, 3.0]]), 1)
L.nansum(T([1, 2]))
L.nansum(T([1j]))
L.nanmean(T([[1.0, nan], [nan, nan]]), 1, True)
L.nanmean(T([1, 2]))
L.nanmedian(T([1.0, nan, 3.0, 2.0]))
L.nanmedian(T([[1.0, nan, 3.0, 2.0], [2.0, nan, 2.0, 1.0]]), 1)
L.nanmedian(T([True]))
L.mode(T([3, 1, 2, 1, 3, 5]))
L.mode(T([[1.0, 2.0, 2.0, 1.0, nan, nan], [0.0, 5.0, 5.0, 5.0, 1.0, 0.0]]), 1, True)
L.mode(T([]))
L.quantile(T([1.0, 2.0, 3.0, 4.0]), 0.4)
L.quantile(T([[1.0, 5.0, 2.0], [3.0, 0.0, 4.0]]), T([0.3, 0.7]), dim=0, keepdim=True)
L.quantile(T([1.0, 2.0, 3.0, 4.0, 5.0]), T([0.1, 0.375, 0.5, 0.9]), interpolation='midpoint')
L.quantile(T([1.0, 2.0, 3.0, 4.0, 5.0]), T([0.125, 0.375, 0.625]), interpolation='nearest')
L.quantile(T([1.0, 2.0, 3.0, 4.0, 5.0]), T([0.1, 0.9]), interpolation='lower')
L.quantile(T([1.0, 2.0, 3.0, 4.0, 5.0]), T([0.1, 0.9]), interpolation='higher')
L.quantile(T([[1.0, nan], [1.0, 2.0]]), 0.5, dim=1)
L.nanquantile(T([[1.0, nan, 2.0], [nan, nan, nan]]), T([0.25, 0.5]), dim=1)
L.quantile(T([1, 2]), 0.5)
L.quantile(T([1.0, 2.0]), 1.5)
L.quantile(T([1.0, 2.0]), T([0.5], dtype=L.float64))
L.quantile(T([1.0, 2.0]), 0.5, interpolation='foo')
L.msort(T([[3, 1], [2, 4]]))
L.logcumsumexp(T([-1000.0, 0.0, -inf, 3.0]), 0)
L.logcumsumexp(T([[1.0, 2.0], [0.5, -1.0]]), 0)
L.logcumsumexp(T([1, 2]), 0)
L.dist(T([1.0, 2.0]), T([3.0, 5.0]))
L.dist(T([1.0, 2.0]), T([3.0, 3.0]), inf)
L.dist(T([1, 2]), T([3, 3]))
L.renorm(T([[1.0, 2.0], [3.0, 4.0]]), 2, 0, 3)
L.renorm(T([[1.0, 2.0], [3.0, 4.0]]), 1, 1, 3.5)
L.renorm(T([1.0, 2.0]), 2, 0, 1)
T([[1.0, 2.0], [3.0, 5.0]]).std(0, True)
T([[1.0, 2.0], [3.0, 5.0]]).var(1, unbiased=False, keepdim=True)
L.var_mean(T([[1.0, 2.0], [3.0, 5.0]]), 1, False)
L.std_mean(T([[1.0, 2.0], [3.0, 5.0]]), dim=0, unbiased=False)
L.max(T([1, 5]), T([3.0, 2.0]))
T([1, 5]).min(T([3, 2]))
L.poisson(T([1, 2]))
L.poisson(T([-1.0]))
L.poisson(T([0.0, 0.0]))
L.randint_like(T([[0, 0, 0]], dtype=L.int32), 2, 5).dtype
L.range(0, 1, 0.25)
L.range(1, 4, dtype=L.int64)
L.range(5, 0, -2)
L.range(5, 0)
L.kthvalue(T([3.0, 1.0, nan, 1.0]), 4)
L.kthvalue(T([[3, 1], [2, 5]]), 1, 0, True)
L.kthvalue(T([True]), 1)
L.kthvalue(T([3, 1]), 3)
""".strip().splitlines()


def _encode(r: Any) -> Any:
    if isinstance(r, tuple):
        return [_encode(x) for x in r]
    if hasattr(r, "tolist") and hasattr(r, "shape"):
        return {"dtype": str(r.dtype).rsplit(".", 1)[-1], "shape": list(r.shape),
                "values": r.to(dtype=_wide(r)).tolist() if r.numel() else []}  # fmt: skip
    return {"repr": str(r).rsplit(".", 1)[-1]}


def _wide(r: Any) -> Any:
    import torch

    if r.dtype.is_complex:
        return torch.complex128
    return torch.float64 if r.dtype.is_floating_point else r.dtype


def record(case: str) -> dict[str, Any]:
    import torch

    env = {"L": torch, "T": torch.tensor, "nan": math.nan, "inf": math.inf, "math": math}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = eval(case, env)
    except Exception as e:  # noqa: BLE001 - the exception type is the record
        return {"case": case, "raises": type(e).__name__}
    out = _encode(r)
    if isinstance(out, dict) and isinstance(out.get("values"), list):
        out["values"] = _complex_pairs(out["values"])
    elif isinstance(out, list):
        for o in out:
            o["values"] = _complex_pairs(o["values"])
    return {"case": case, "result": out}


def _complex_pairs(v: Any) -> Any:
    if isinstance(v, list):
        return [_complex_pairs(x) for x in v]
    if isinstance(v, complex):
        return [v.real, v.imag]
    return v


def main() -> None:
    import torch

    records = [record(c) for c in CASES]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"torch": torch.__version__, "cases": records}, indent=1) + "\n")
    print(f"wrote {len(records)} cases to {OUT}")


if __name__ == "__main__":
    main()
