"""vmap over tensorplug.linalg against a loop over the batch (Note [Batched linear algebra] in
tensorplug_batched/rules/linalg.py): the rules, and the calls that take the loop fallback."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

pytest.importorskip("tensorplug_batched")

L = tp.linalg
rng = np.random.default_rng(5)
A = tp.tensor(rng.standard_normal((3, 4, 4)) + 4 * np.eye(4))
B = tp.tensor(rng.standard_normal((3, 4, 2)))
C = tp.tensor(rng.standard_normal((3, 5, 4)))  # cross's length-3 dim first, batched at 1


def looped(fn: Any, in_dims: tuple[Any, ...], *xs: tp.Tensor) -> list[Any]:
    n = next(x.shape[d] for x, d in zip(xs, in_dims, strict=True) if d is not None)
    outs = []
    for k in range(n):
        r = fn(*(x if d is None else x.select(d, k) for x, d in zip(xs, in_dims, strict=True)))
        outs.append(r if isinstance(r, tuple) else (r,))
    return [tp.stack([o[i] for o in outs]) for i in range(len(outs[0]))]


CASES = [
    ("inv", L.inv, (0,), (A,)),
    ("det", L.det, (0,), (A,)),
    ("slogdet", L.slogdet, (0,), (A,)),
    ("cholesky", lambda a: L.cholesky(a @ a.mT), (0,), (A,)),
    ("eigh", lambda a: L.eigh(a + a.mT)[0], (0,), (A,)),
    ("svdvals", L.svdvals, (0,), (A,)),
    ("qr", L.qr, (0,), (A,)),
    ("lu_factor", L.lu_factor, (0,), (A,)),
    ("matrix_exp", lambda a: L.matrix_exp(a * 0.1), (0,), (A,)),
    ("solve_both", L.solve, (0, 0), (A, B)),
    ("solve_A_only", L.solve, (0, None), (A, B[0])),
    ("solve_B_only", L.solve, (None, 0), (A[0], B)),
    ("solve_vector", L.solve, (0, 0), (A, B[..., 0])),
    ("solve_triangular", lambda a, b: L.solve_triangular(a, b, upper=True), (0, 0), (A, B)),
    ("lstsq", lambda a, b: L.lstsq(a, b).solution, (0, 0), (A, B)),
    ("cross_dim0", lambda a, b: L.cross(a, b, dim=0), (1, 1), (C, C.flip(0))),
    ("pinv", L.pinv, (2,), (A,)),
]


@pytest.mark.parametrize(("name", "fn", "in_dims", "xs"), CASES, ids=[c[0] for c in CASES])
def test_vmap_matches_a_loop(name: str, fn: Any, in_dims: tuple[Any, ...], xs: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the loop fallback's performance warning
        got = tp.vmap(fn, in_dims=in_dims)(*xs)
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, looped(fn, in_dims, *xs), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_the_factorizations_have_rules_not_the_loop() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the loop fallback warns
        tp.vmap(L.inv)(A)
        tp.vmap(L.solve)(A, B)
        tp.vmap(L.svd)(A)
