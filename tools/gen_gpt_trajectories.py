"""Freeze PyTorch's loss trajectories of the GPT-style model of tests/models/gpt.py.

Run with the torch environment, from the repository root:

    /work/torchenv/bin/python tools/gen_gpt_trajectories.py

It writes tests/models/data/gpt_trajectories.json: for each attention variant (``sdpa``,
``mha``) the float32 losses of tests/models/gpt.py's STEPS AdamW steps, eagerly and with the
forward under ``torch.autocast("cpu", dtype=torch.bfloat16)`` (``<variant>:bf16``), which
tests/models/test_gpt.py compares tensorplug against when torch is not importable.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.models import gpt  # noqa: E402


def main() -> None:
    torch.set_num_threads(1)
    out: dict[str, list[float]] = {}
    for variant in gpt.VARIANTS:
        out[variant] = gpt.trajectory(torch, variant)
        out[variant + ":bf16"] = gpt.trajectory(torch, variant, bf16=True)
    path = ROOT / "tests" / "models" / "data" / "gpt_trajectories.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(out)} trajectories to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
