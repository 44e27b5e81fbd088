"""Write tests/linalg/data/torch_linalg_names.txt: the public names of ``torch.linalg``.

Run with a Python that has torch (the frozen list is what tests/linalg/test_coverage.py
compares ``tensorplug.linalg`` with, so that CI without torch still checks the coverage)::

    /work/torchenv/bin/python tools/gen_torch_linalg_names.py
"""

from __future__ import annotations

from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[1] / "tests" / "linalg" / "data" / "torch_linalg_names.txt"

# documentation strings, not functions
NOT_FUNCTIONS = {"common_notes"}


def main() -> None:
    names = sorted(n for n in dir(torch.linalg) if not n.startswith("_") and n not in NOT_FUNCTIONS)
    header = f"# public names of torch.linalg in torch {torch.__version__.split('+')[0]} (tools/gen_torch_linalg_names.py)\n"
    OUT.write_text(header + "\n".join(names) + "\n", encoding="utf-8")
    print(f"{len(names)} names -> {OUT}")


if __name__ == "__main__":
    main()
