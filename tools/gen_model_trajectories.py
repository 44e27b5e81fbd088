"""Writes tests/models/data/trajectories.json: for each reference model of
tests/models/reference.py, its ``state_dict`` layout (names, shapes, dtypes) and the loss of
each of its training steps, computed by PyTorch.

Run with a Python that has torch (never a dependency of tensorplug)::

    python tools/gen_model_trajectories.py

The tests compare tensorplug's run with these figures, and with torch itself where it is
installed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from tests.models import reference  # noqa: E402

OUT = ROOT / "tests" / "models" / "data" / "trajectories.json"


def main() -> None:
    torch.set_num_threads(1)
    out = {"torch": torch.__version__, "models": {}}
    for name in reference.MODELS:
        losses, model = reference.train(torch, name)
        layout = {
            k: [list(v.shape), str(v.dtype).removeprefix("torch.")]
            for k, v in model.state_dict().items()
        }
        out["models"][name] = {"losses": losses, "state_dict": layout}
        print(name, losses[0], losses[-1])
    OUT.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
