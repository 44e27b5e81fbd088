"""Freeze PyTorch's optimizer trajectories and learning-rate schedules for tests/optim.

Run with the torch environment, from the repository root:

    /work/torchenv/bin/python tools/gen_optim_trajectories.py

It runs every case of tests/optim/cases.py on torch and writes
tests/optim/data/trajectories.npz (keys: ``opt:<case id>``, ``sched:<name>``,
``closed:<name>``), which tests/optim/test_parity.py compares tensorplug against when torch is
not importable, and tests/optim/data/signatures.json: the constructor signature of each
optimizer, scheduler and swa_utils callable (parameter names, kinds, defaults as repr).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.optim import cases  # noqa: E402


def main() -> None:
    torch.set_num_threads(1)
    out: dict[str, np.ndarray] = {}
    for name, kwargs in cases.OPTIMIZERS:
        out["opt:" + cases.case_id(name, kwargs)] = cases.run_optimizer(torch, name, kwargs)
    for name in cases.SCHEDULERS:
        out["sched:" + name] = cases.run_scheduler(torch, name)
    for name in cases.CLOSED_FORM:
        out["closed:" + name] = cases.run_scheduler(torch, name, closed_form=True)
    path = ROOT / "tests" / "optim" / "data" / "trajectories.npz"
    np.savez_compressed(path, **out)
    print(f"wrote {len(out)} arrays to {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")
    sigs = {name: cases.signature_of(torch, name) for name in cases.SIGNATURES}
    path = ROOT / "tests" / "optim" / "data" / "signatures.json"
    path.write_text(json.dumps(sigs, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(sigs)} signatures to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
