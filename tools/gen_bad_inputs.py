"""Record PyTorch's outcome of every differential bad-input case (issue 32, item 6) in
tests/core/data/bad_inputs.json, for tests/core/test_bad_inputs.py to compare tensorplug with
where torch is not installed:

    /work/torchenv/bin/python tools/gen_bad_inputs.py

The cases are tests/core/bad_input_cases.py's.
"""

from __future__ import annotations

import json
import pathlib
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "core"))

import bad_input_cases  # noqa: E402

DEST = ROOT / "tests" / "core" / "data" / "bad_inputs.json"


def main() -> None:
    torch.manual_seed(0)
    recorded = {case: bad_input_cases.outcome(torch, case) for case in bad_input_cases.CASES}
    text = json.dumps({"torch": torch.__version__, "outcomes": recorded}, indent=0, sort_keys=True)
    DEST.write_text(text + "\n")
    print(f"{len(recorded)} cases -> {DEST.relative_to(ROOT)} ({DEST.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
