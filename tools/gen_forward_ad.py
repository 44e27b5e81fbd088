"""Write tests/autograd/data/forward_ad.json: forward-mode results computed with torch, so the
tests compare tensorplug's forward mode with PyTorch's where torch is not installed (CI).

Each case is a function written as a Python expression over a module ``T`` (torch here,
tensorplug in the test), the same text for both, with float64 inputs and tangents drawn from a
seeded generator. Stored: the inputs, the tangents, and torch's ``torch.func.jvp`` output and
tangent, ``torch.func.jacfwd`` and (for scalar functions) ``torch.func.hessian`` and
``torch.autograd.functional.hvp``.

Usage::

    /work/torchenv/bin/python tools/gen_forward_ad.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.autograd.functional as AF
from torch.func import hessian, jacfwd, jvp

OUT = Path(__file__).resolve().parents[1] / "tests" / "autograd" / "data" / "forward_ad.json"

# name -> (expression of a function of the inputs, input shapes, scalar output)
CASES: dict[str, tuple[str, list[list[int]], bool]] = {
    "sin_times_sum": ("lambda x: T.sin(x) * x.sum()", [[3]], False),
    "mlp_loss": (
        "lambda x, w, b: T.nn.functional.cross_entropy("
        "T.tanh(T.nn.functional.linear(x, w, b)), T.tensor([1, 0]))",
        [[2, 3], [4, 3], [4]],
        True,
    ),
    "softmax_views": (
        "lambda x: T.softmax(x.t().reshape(2, 3), 1)[:, 1:] * x.sum(0).unsqueeze(1)",
        [[3, 2]],
        False,
    ),
    "log_softmax_var": (
        "lambda x: T.log_softmax(x, -1).var(0) + x.exp().mean(1).sum()",
        [[3, 4]],
        False,
    ),
    "matmul_pow": ("lambda a, b: ((a @ b) ** 3).sum()", [[2, 3], [3, 2]], True),
    "logsumexp_max": (
        "lambda x: T.logsumexp(x, 1) + x.max(1).values * x.prod(1)",
        [[2, 3]],
        False,
    ),
}


def main() -> None:
    rng = np.random.default_rng(0)
    out: dict[str, object] = {}
    for name, (expr, shapes, scalar) in CASES.items():
        fn = eval(expr, {"T": torch})  # noqa: S307  (our own constant text)
        xs = [rng.standard_normal(s) for s in shapes]
        vs = [rng.standard_normal(s) for s in shapes]
        tx = tuple(torch.tensor(x) for x in xs)
        tv = tuple(torch.tensor(v) for v in vs)
        p, t = jvp(fn, tx, tv)
        argnums = tuple(range(len(xs)))
        jac = jacfwd(fn, argnums=argnums)(*tx)
        case: dict[str, object] = {
            "expr": expr,
            "inputs": [x.tolist() for x in xs],
            "tangents": [v.tolist() for v in vs],
            "jvp_out": p.tolist(),
            "jvp_tangent": t.tolist(),
            "jacfwd": [j.tolist() for j in jac],
        }
        if scalar:
            h = hessian(fn, argnums=0)(*tx)
            case["hessian0"] = h.tolist()
            _, hv = AF.hvp(lambda x0, fn=fn, tx=tx: fn(x0, *tx[1:]), tx[0], tv[0])
            case["hvp0"] = hv.tolist()
        out[name] = case
    OUT.write_text(json.dumps(out, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
