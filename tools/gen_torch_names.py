"""Write the frozen lists of torch.fft's and torch.special's functions that the coverage tests
compare against (run with a Python that has torch: /work/torchenv/bin/python)."""

from __future__ import annotations

from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]


def names(module: object) -> list[str]:
    return sorted(
        n
        for n in dir(module)
        if not n.startswith("_") and n != "Tensor" and callable(getattr(module, n))
    )


for mod, path in ((torch.fft, "tests/fft/data/torch_fft_names.txt"),
                  (torch.special, "tests/special/data/torch_special_names.txt")):  # fmt: skip
    head = f"# {mod.__name__}'s functions in torch {torch.__version__.split('+')[0]} (tools/gen_torch_names.py)\n"
    (ROOT / path).write_text(head + "\n".join(names(mod)) + "\n")
