"""nn.utils.parametrizations.orthogonal against PyTorch 2.13 (its values recorded by
tools/gen_orthogonal_fixtures.py, and torch itself where installed), the orthogonality of
every map, assignment through right_inverse, and the errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from needs import autograd

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn.utils.parametrizations import orthogonal

autograd()

CASES = json.loads((Path(__file__).parent / "data" / "orthogonal.json").read_text())


@pytest.mark.parametrize("key", sorted(CASES))
def test_matches_pytorch(key: str) -> None:
    m, shape, triv = key.split("-")
    rows, cols = map(int, shape.split("x"))
    case = CASES[key]
    lin = nn.Linear(cols, rows)
    orthogonal(lin, orthogonal_map=m, use_trivialization=triv == "True")
    assert list(lin.state_dict()) == list(case["state"])
    lin.load_state_dict({k: tp.tensor(v) for k, v in case["state"].items()})
    y = lin(tp.tensor(case["x"]))
    np.testing.assert_allclose(lin.weight.detach().numpy(), case["weight"], atol=1e-5)
    np.testing.assert_allclose(y.detach().numpy(), case["y"], atol=1e-5)
    y.pow(2).sum().backward()
    grad = lin.parametrizations.weight.original.grad
    np.testing.assert_allclose(grad.numpy(), case["grad"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("m", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_every_map_gives_orthonormal_columns_or_rows(m: str, shape: tuple[int, int]) -> None:
    lin = nn.Linear(shape[1], shape[0], dtype=tp.float64)
    orthogonal(lin, orthogonal_map=m)
    w = lin.weight.detach()
    q = w if shape[0] >= shape[1] else w.mT
    np.testing.assert_allclose((q.mT @ q).numpy(), np.eye(q.shape[1]), atol=1e-12)


def test_assigning_an_orthogonal_matrix_keeps_it() -> None:
    lin = nn.Linear(3, 3, dtype=tp.float64)
    orthogonal(lin)
    q, _ = tp.linalg.qr(tp.randn(3, 3, dtype=tp.float64))
    lin.weight = q
    np.testing.assert_allclose(lin.weight.detach().numpy(), q.numpy(), atol=1e-12)
    h = nn.Linear(3, 5, dtype=tp.float64)
    orthogonal(h, orthogonal_map="householder", use_trivialization=False)
    q5, _ = tp.linalg.qr(tp.randn(5, 3, dtype=tp.float64))
    h.weight = q5
    np.testing.assert_allclose(h.weight.detach().numpy(), q5.numpy(), atol=1e-12)


def test_errors() -> None:
    with pytest.raises(
        ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1"
    ):
        orthogonal(nn.Linear(3, 3), name="bias")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp"'):
        orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        orthogonal(nn.Linear(3, 3), name="w")
    lin = nn.Linear(3, 3)
    orthogonal(lin, orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="It is not possible to assign to the matrix"):
        lin.weight = tp.eye(3)


def test_against_torch_itself() -> None:
    torch = pytest.importorskip("torch")
    t = torch.nn.Linear(4, 6)
    torch.nn.utils.parametrizations.orthogonal(t)
    lin = nn.Linear(4, 6)
    orthogonal(lin)
    lin.load_state_dict({k: tp.tensor(v.numpy()) for k, v in t.state_dict().items()})
    np.testing.assert_allclose(lin.weight.detach().numpy(), t.weight.detach().numpy(), atol=1e-5)
