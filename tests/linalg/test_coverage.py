"""tensorplug.linalg against torch.linalg by name: the frozen list of torch 2.13's public names
(tests/linalg/data/torch_linalg_names.txt, tools/gen_torch_linalg_names.py); prints the
coverage and requires all of it."""

from __future__ import annotations

from pathlib import Path

import pytest

import tensorplug as tp

DATA = Path(__file__).parent / "data" / "torch_linalg_names.txt"


def torch_names() -> list[str]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return [n for n in lines if n and not n.startswith("#")]


def test_every_torch_linalg_name_is_in_tensorplug_linalg(
    capsys: pytest.CaptureFixture[str],
) -> None:
    names = torch_names()
    present = [n for n in names if hasattr(tp.linalg, n)]
    missing = sorted(set(names) - set(present))
    with capsys.disabled():
        print(f"\ntorch.linalg coverage: {len(present)} of {len(names)}", end="")
        if missing:
            print(f"; missing: {', '.join(missing)}", end="")
    assert not missing
    assert len(names) == 42  # 41 functions and LinAlgError


def test_the_names_are_callable_and_appear_in_dir() -> None:
    for n in torch_names():
        obj = getattr(tp.linalg, n)
        assert callable(obj), n
        assert n in dir(tp.linalg), n
    assert issubclass(tp.linalg.LinAlgError, RuntimeError)


def test_the_frozen_list_matches_torch_where_importable() -> None:
    torch = pytest.importorskip("torch")
    live = sorted(n for n in dir(torch.linalg) if not n.startswith("_") and n != "common_notes")
    assert live == sorted(torch_names())
