"""Batched linear algebra: ``tp.linalg.solve``, ``svd`` and ``eigh`` on stacks of matrices
against numpy's ``linalg`` (the kernels' own library) and torch.linalg, in one process, one
BLAS/LAPACK thread each.

Goal: within 1.05x numpy where the work dominates (the sizes below; at tiny sizes the
dispatcher's microseconds show). Each ratio is the range over several rounds of the median of
back-to-back pairs (``_timing.paired_ratio``), so a neighbour's burst on the shared machine
hits both sides of a pair. Run: ``python bench/linalg.py`` (with torch importable for its
column: ``PYTHONPATH=<torch site-packages> uv run python bench/linalg.py``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

# one BLAS/LAPACK thread for numpy (and so tensorplug) and torch alike
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import paired_ratio, per_call  # noqa: E402

import tensorplug as tp  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:
    torch = None

ROUNDS = 3


def ratio_range(fn: Any, base: Any, *, pairs: int) -> tuple[float, float]:
    rs = [paired_ratio(fn, base, pairs=pairs) for _ in range(ROUNDS)]
    return min(rs), max(rs)


def cases(batch: int, n: int) -> list[tuple[str, Any, Any, Any]]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((batch, n, n)) + n * np.eye(n)
    sym = a + np.swapaxes(a, -1, -2)
    b = rng.standard_normal((batch, n, 4))
    ta, tsym, tb = tp.tensor(a), tp.tensor(sym), tp.tensor(b)
    out = [
        ("solve", lambda: tp.linalg.solve(ta, tb), lambda: np.linalg.solve(a, b), None),
        (
            "svd",
            lambda: tp.linalg.svd(ta, full_matrices=False),
            lambda: np.linalg.svd(a, full_matrices=False),
            None,
        ),  # fmt: skip
        ("eigh", lambda: tp.linalg.eigh(tsym), lambda: np.linalg.eigh(sym), None),
    ]
    if torch is not None:
        xa, xsym, xb = torch.tensor(a), torch.tensor(sym), torch.tensor(b)
        torch_fns = {
            "solve": lambda: torch.linalg.solve(xa, xb),
            "svd": lambda: torch.linalg.svd(xa, full_matrices=False),
            "eigh": lambda: torch.linalg.eigh(xsym),
        }
        out = [(name, f, g, torch_fns[name]) for name, f, g, _ in out]
    return out


def main() -> None:
    print(f"numpy {np.__version__}, torch {torch.__version__ if torch else '(absent)'}; "
          "one thread each; float64")  # fmt: skip
    print(f"{'op':6} {'batch x n':>10} {'numpy':>10} {'tp/numpy':>14} {'torch/numpy':>14}")
    for batch, n in ((256, 8), (64, 32), (16, 64), (4, 128), (2, 256)):
        for name, mine, base, theirs in cases(batch, n):
            pairs = 300 if n <= 32 else (60 if n <= 128 else 20)
            t_np = per_call(base, number=5, repeat=5)
            lo, hi = ratio_range(mine, base, pairs=pairs)
            if theirs is not None:
                tlo, thi = ratio_range(theirs, base, pairs=pairs)
                t_col = f"{tlo:.2f}-{thi:.2f}"
            else:
                t_col = "-"
            print(
                f"{name:6} {batch:>4} x {n:<4} {t_np * 1e3:8.2f}ms {lo:6.2f}-{hi:<6.2f} {t_col:>14}"
            )


if __name__ == "__main__":
    main()
