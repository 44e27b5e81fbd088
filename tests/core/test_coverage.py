"""How much of torch 2.13's surface tensorplug has, by name, against frozen lists
(tests/core/data/torch_*.txt, written by tools/gen_torch_names.py with torch installed).

Each test prints its coverage and the names still missing, and fails when coverage falls below
its floor. The floors only rise: raise one when names land. The goal (issue 29) is 95% for
Tensor methods and the docs index."""

from __future__ import annotations

from pathlib import Path

import tensorplug as tp

DATA = Path(__file__).parent / "data"

# Fractions present today; the floor each test holds.
FLOORS = {"methods": 0.996, "properties": 1.0, "index": 0.969}


def frozen(name: str) -> list[str]:
    text = (DATA / name).read_text()
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def coverage(kind: str, names: list[str], present) -> None:
    missing = [n for n in names if not present(n)]
    share = 1 - len(missing) / len(names)
    print(f"{kind}: {len(names) - len(missing)} of {len(names)} ({share:.1%}); missing: {missing}")
    assert share >= FLOORS[kind], (
        f"{kind} coverage fell to {share:.1%}, below its floor {FLOORS[kind]:.1%}; missing: {missing}"
    )


def test_tensor_methods():
    coverage(
        "methods",
        frozen("torch_tensor_methods.txt"),
        lambda n: callable(getattr(tp.Tensor, n, None)),
    )


def test_tensor_properties():
    coverage("properties", frozen("torch_tensor_properties.txt"), lambda n: hasattr(tp.Tensor, n))


def test_docs_index():
    coverage("index", frozen("torch_docs_index.txt"), lambda n: hasattr(tp, n))
