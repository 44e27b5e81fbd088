"""Record torch's answers to issue 29's expressions (tests/ops/numpy_names_cases.py) into
tests/ops/data/numpy_names_torch.json, which tests/ops/test_numpy_names.py compares with
where torch is not installed.

Run with a Python that has torch (not tensorplug's environment):

    /work/torchenv/bin/python tools/gen_numpy_names.py
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
CASES_PATH = ROOT / "tests" / "ops" / "numpy_names_cases.py"
OUT = ROOT / "tests" / "ops" / "data" / "numpy_names_torch.json"


def frozen(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        values = np.asarray(x.tolist(), dtype=float).reshape(-1)
        return [str(x.dtype).split(".")[-1], list(x.shape), [None if v != v else v for v in values]]
    if isinstance(x, (list, tuple)):
        return [frozen(v) for v in x]
    return x


def main() -> None:
    spec = importlib.util.spec_from_file_location("numpy_names_cases", CASES_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    out: dict[str, Any] = {}
    for name, expr in module.CASES.items():
        try:
            out[name] = frozen(expr(torch))
        except Exception as e:  # noqa: BLE001 - the exception's type is the answer recorded
            out[name] = {"error": type(e).__name__}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"{len(out)} answers of torch {torch.__version__} -> {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
