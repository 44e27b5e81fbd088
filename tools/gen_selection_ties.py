"""Record PyTorch's indices for kthvalue, median and nanmedian on rows with ties (and NaNs):
the index among tied elements is the one its CPU kernels return (kthvalue: ATen's
quick_select_template). tests/core/test_selection_ties.py compares tensorplug with the frozen
file, and with torch itself where it is importable.

Usage::

    /work/torchenv/bin/python tools/gen_selection_ties.py  # writes tests/core/data/selection_ties.json
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "selection_ties.json"


def rows() -> list[list[float]]:
    """Rows of few distinct values (many ties), some with NaNs; fixed, so no RNG is needed."""
    out = [[1.0, 1.0, 1.0], [2.0, 1.0, 2.0, 1.0, 2.0], [3.0, 3.0, 1.0, 3.0, 2.0, 3.0], [0.0] * 8]
    for n in (5, 8, 17, 33, 64):
        for s in range(4):
            row = [float((i * (7 + s) + s * s) % 3) for i in range(n)]
            if s % 2:
                row[(3 * s) % n] = float("nan")
                row[(5 * s + 1) % n] = float("nan")
            out.append(row)
    return out


def record(T: Any) -> list[list[int]]:
    """Per row: the nanmedian and median indices, then kthvalue's index for every k."""
    got = []
    for row in rows():
        t = T.tensor(row, dtype=T.float64)
        r = [int(T.nanmedian(t, 0)[1]), int(T.median(t, 0)[1])]
        r += [int(T.kthvalue(t, k)[1]) for k in range(1, len(row) + 1)]
        got.append(r)
    return got


def main() -> None:
    import torch

    OUT.write_text(json.dumps({"torch": torch.__version__, "indices": record(torch)}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
