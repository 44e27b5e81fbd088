"""tensorplug.unique (core/src/tensorplug/_functional.py): torch.unique's Python API over
aten::_unique2 and aten::unique_dim (whose values the OpInfo samples check)."""

from __future__ import annotations

import numpy as np

import tensorplug as tp
from tests import needs


def test_unique_returns_what_the_flags_ask_for() -> None:
    x = tp.tensor([3, 1, 2, 3, 1])
    u = tp.unique(x)
    assert isinstance(u, tp.Tensor) and u.tolist() == [1, 2, 3]
    u, inv = tp.unique(x, return_inverse=True)
    assert inv.tolist() == [2, 0, 1, 2, 0]
    u, counts = x.unique(return_counts=True)
    assert counts.tolist() == [2, 1, 2]
    u, inv, counts = tp.unique(x, sorted=False, return_inverse=True, return_counts=True)
    assert (u.tolist(), inv.tolist(), counts.tolist()) == ([1, 2, 3], [2, 0, 1, 2, 0], [2, 1, 2])


def test_unique_along_a_dim() -> None:
    x = tp.tensor(np.array([[1, 2], [1, 2], [0, 3]]))
    rows, inv, counts = x.unique(dim=0, return_inverse=True, return_counts=True)
    assert rows.tolist() == [[0, 3], [1, 2]]
    assert (inv.tolist(), counts.tolist()) == ([1, 1, 0], [1, 2])
    assert tp.unique(x, dim=-1).tolist() == [[1, 2], [1, 2], [0, 3]]


def test_unique_is_not_differentiable() -> None:
    needs.autograd()
    x = tp.tensor([2.0, 1.0, 2.0], requires_grad=True)
    assert not tp.unique(x).requires_grad
