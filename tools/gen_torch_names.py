"""Write the frozen lists of torch names that the coverage tests compare against (run with a
Python that has torch: /work/torchenv/bin/python):

- torch.fft's and torch.special's functions;
- torch.Tensor's public methods and properties, and the functions of the torch.* docs index
  (tools/data/torch_docs_index.txt, less names this torch lacks), for tests/core/test_coverage.py.
"""

from __future__ import annotations

from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
VERSION = ".".join(torch.__version__.split(".")[:2])


def names(module: object) -> list[str]:
    return sorted(
        n
        for n in dir(module)
        if not n.startswith("_") and n != "Tensor" and callable(getattr(module, n))
    )


def write(path: str, what: str, items: list[str]) -> None:
    head = f"# {what} in torch {VERSION} (tools/gen_torch_names.py)\n"
    (ROOT / path).write_text(head + "\n".join(items) + "\n")


for mod, path in ((torch.fft, "tests/fft/data/torch_fft_names.txt"),
                  (torch.special, "tests/special/data/torch_special_names.txt")):  # fmt: skip
    write(path, f"{mod.__name__}'s functions", names(mod))

public = [n for n in dir(torch.Tensor) if not n.startswith("_")]
write(
    "tests/core/data/torch_tensor_methods.txt",
    "torch.Tensor's public methods",
    sorted(n for n in public if callable(getattr(torch.Tensor, n))),
)
write(
    "tests/core/data/torch_tensor_properties.txt",
    "torch.Tensor's public properties",
    sorted(n for n in public if not callable(getattr(torch.Tensor, n))),
)
index_text = (ROOT / "tools/data/torch_docs_index.txt").read_text()
index = [w for line in index_text.splitlines() if not line.startswith("#") for w in line.split()]
write(
    "tests/core/data/torch_docs_index.txt",
    "the torch.* docs index's functions",
    sorted({n for n in index if hasattr(torch, n)}),
)
