"""kthvalue, median and nanmedian on ties: the index among tied elements is PyTorch's
(kthvalue: ATen's quick_select_template), against values frozen by
tools/gen_selection_ties.py and against torch itself where it is importable."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import tensorplug as tp

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((Path(__file__).parent / "data" / "selection_ties.json").read_text())
sys.path.insert(0, str(ROOT / "tools"))
from gen_selection_ties import record  # noqa: E402

sys.path.remove(str(ROOT / "tools"))


def test_tie_indices_match_pytorch_frozen() -> None:
    assert record(tp) == DATA["indices"]


def test_tie_indices_match_pytorch_live() -> None:
    torch = pytest.importorskip("torch")
    assert record(tp) == record(torch)


def test_kthvalue_ties_along_a_dim_and_on_meta() -> None:
    x = tp.tensor([[1.0, 1.0, 1.0], [2.0, 1.0, 2.0]])
    v, i = x.kthvalue(2, dim=1)
    assert (v.tolist(), i.tolist()) == ([1.0, 2.0], [0, 0])  # torch 2.13's
    v, i = x.t().kthvalue(1, dim=0, keepdim=True)
    assert (v.tolist(), i.tolist()) == ([[1.0, 1.0]], [[1, 1]])
    m = x.to("meta").kthvalue(2, dim=1)
    assert m[1].shape == (2,) and m[1].device.type == "meta"
