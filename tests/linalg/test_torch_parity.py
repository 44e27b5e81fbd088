"""tensorplug.linalg against torch.linalg in one process (skipped without torch): values,
dtypes and shapes of every function on float64, float32 and complex128 inputs, the legacy
top-level names, and the error messages."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

rng = np.random.default_rng(3)
A = rng.standard_normal((2, 4, 4)) + 4 * np.eye(4)
PD = A @ np.swapaxes(A, -1, -2) + 4 * np.eye(4)
B = rng.standard_normal((2, 4, 3))
R = rng.standard_normal((3, 5, 3))
V = rng.standard_normal(4)
AC = A + 1j * rng.standard_normal(A.shape)


def _lu() -> tuple[Any, Any]:
    return torch.linalg.lu_factor(torch.tensor(A))


# (id, function of the module m, arrays, keyword arguments)
CASES: list[tuple[str, Any, tuple[Any, ...], dict[str, Any]]] = [
    ("cholesky", lambda m: m.linalg.cholesky, (PD,), {}),
    ("cholesky_upper", lambda m: m.linalg.cholesky, (PD,), {"upper": True}),
    ("cholesky_ex", lambda m: m.linalg.cholesky_ex, (PD,), {}),
    ("inv", lambda m: m.linalg.inv, (A,), {}),
    ("inv_ex", lambda m: m.linalg.inv_ex, (A,), {}),
    ("solve", lambda m: m.linalg.solve, (A, B), {}),
    ("solve_vector", lambda m: m.linalg.solve, (A[0], V), {}),
    ("solve_right", lambda m: m.linalg.solve, (A, np.swapaxes(B, -1, -2)), {"left": False}),
    ("solve_ex", lambda m: m.linalg.solve_ex, (A, B), {}),
    ("det", lambda m: m.linalg.det, (A,), {}),
    ("slogdet", lambda m: m.linalg.slogdet, (A,), {}),
    ("svdvals", lambda m: m.linalg.svdvals, (R,), {}),
    ("eigvalsh", lambda m: m.linalg.eigvalsh, (PD,), {}),
    ("eigvalsh_upper", lambda m: m.linalg.eigvalsh, (A,), {"UPLO": "U"}),
    ("qr", lambda m: m.linalg.qr, (R,), {}),
    ("qr_complete", lambda m: m.linalg.qr, (R,), {"mode": "complete"}),
    ("qr_r", lambda m: m.linalg.qr, (R,), {"mode": "r"}),
    *[
        (f"lstsq_{d}", lambda m: m.linalg.lstsq, (R, R[..., :2]), {"driver": d})
        for d in ("gels", "gelsy", "gelsd", "gelss")
    ],  # fmt: skip
    ("lstsq_vector", lambda m: m.linalg.lstsq, (R[0], R[0, :, 0]), {}),
    ("lu_factor", lambda m: m.linalg.lu_factor, (R,), {}),
    ("lu_factor_ex", lambda m: m.linalg.lu_factor_ex, (A,), {}),
    ("lu", lambda m: m.linalg.lu, (R,), {}),
    ("solve_triangular", lambda m: m.linalg.solve_triangular, (A, B), {"upper": True}),
    (
        "solve_triangular_right_unit",
        lambda m: m.linalg.solve_triangular,
        (A, np.swapaxes(B, -1, -2)),
        {"upper": False, "left": False, "unitriangular": True},
    ),  # fmt: skip
    ("matrix_exp", lambda m: m.linalg.matrix_exp, (A * 0.7,), {}),
    ("cross", lambda m: m.linalg.cross, (R[..., :3, :], R[..., 1:4, :]), {"dim": -2}),
    ("householder_product", lambda m: m.linalg.householder_product, (R, R[:, 0, :]), {}),
    ("matrix_power", lambda m: m.linalg.matrix_power, (A,), {"n": -2}),
    *[
        (f"matrix_norm_{o}", lambda m: m.linalg.matrix_norm, (R,), {"ord": o})
        for o in ("fro", "nuc", 2, -2, 1, -1, float("inf"), -float("inf"))
    ],  # fmt: skip
    ("norm", lambda m: m.linalg.norm, (R,), {}),
    ("norm_matrix_2", lambda m: m.linalg.norm, (R[0],), {"ord": 2}),
    ("cond", lambda m: m.linalg.cond, (A,), {}),
    ("cond_fro", lambda m: m.linalg.cond, (A,), {"p": "fro"}),
    ("matrix_rank", lambda m: m.linalg.matrix_rank, (R,), {}),
    ("matrix_rank_hermitian", lambda m: m.linalg.matrix_rank, (PD,), {"hermitian": True}),
    ("pinv", lambda m: m.linalg.pinv, (R,), {}),
    ("pinv_hermitian", lambda m: m.linalg.pinv, (PD,), {"hermitian": True}),
    ("tensorinv", lambda m: m.linalg.tensorinv, (A[0].reshape(4, 2, 2),), {"ind": 1}),
    (
        "tensorsolve",
        lambda m: m.linalg.tensorsolve,
        (A[0].reshape(2, 2, 4), B[0, :, 0].reshape(2, 2)),
        {},
    ),
    ("vander", lambda m: m.linalg.vander, (B[0],), {"N": 5}),
    ("vecdot", lambda m: m.linalg.vecdot, (R, R), {}),
    ("diagonal", lambda m: m.linalg.diagonal, (R,), {"offset": 1}),
    ("det_top", lambda m: m.det, (A,), {}),
    ("logdet", lambda m: m.logdet, (A,), {}),
    ("inverse", lambda m: m.inverse, (A,), {}),
    ("cholesky_solve", lambda m: m.cholesky_solve, (B, np.linalg.cholesky(PD)), {}),
    ("cholesky_inverse", lambda m: m.cholesky_inverse, (np.linalg.cholesky(PD[0]),), {}),
    ("svd_legacy_values", lambda m: lambda a: m.svd(a)[1], (R,), {}),
    ("svd_no_uv", lambda m: m.svd, (R,), {"compute_uv": False}),
    ("qr_legacy", lambda m: m.qr, (R,), {"some": False}),
    ("pinverse", lambda m: m.pinverse, (R,), {}),
    ("matrix_exp_top", lambda m: m.matrix_exp, (A,), {}),
    ("triangular_solve", lambda m: m.triangular_solve, (B, A), {"upper": False, "transpose": True}),
    ("geqrf", lambda m: m.geqrf, (R,), {}),
    ("vdot", lambda m: m.vdot, (V, V), {}),
    ("complex_inv", lambda m: m.linalg.inv, (AC,), {}),
    ("complex_det", lambda m: m.linalg.det, (AC,), {}),
    ("complex_slogdet", lambda m: m.linalg.slogdet, (AC,), {}),
    ("complex_solve", lambda m: m.linalg.solve, (AC, B + 0j), {}),
    ("complex_svdvals", lambda m: m.linalg.svdvals, (AC,), {}),
    ("complex_eigvalsh", lambda m: m.linalg.eigvalsh, (AC,), {}),
    ("complex_matrix_exp", lambda m: m.linalg.matrix_exp, (AC * 0.5,), {}),
    ("complex_lu_factor", lambda m: m.linalg.lu_factor, (AC,), {}),
    ("float32_solve", lambda m: m.linalg.solve, (A.astype(np.float32), B.astype(np.float32)), {}),
]


def _flat(r: Any) -> list[Any]:
    return list(r) if isinstance(r, tuple) else [r]


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's deprecation warnings
@pytest.mark.parametrize(("name", "fn", "arrays", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name: str, fn: Any, arrays: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    got = _flat(fn(tp)(*(tp.tensor(a) for a in arrays), **kwargs))
    want = _flat(fn(torch)(*(torch.tensor(a) for a in arrays), **kwargs))
    assert len(got) == len(want)
    tol = 1e-4 if "float32" in name else 1e-8
    for g, w in zip(got, want, strict=True):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], (g.dtype, w.dtype)
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=tol, atol=tol)


def test_lu_solve_and_lu_unpack_match_torch() -> None:
    LU, piv = _lu()
    tLU, tpiv = tp.tensor(LU.numpy()), tp.tensor(piv.numpy())
    for kw in ({}, {"adjoint": True}):
        np.testing.assert_allclose(
            tp.linalg.lu_solve(tLU, tpiv, tp.tensor(B), **kw).numpy(),
            torch.linalg.lu_solve(LU, piv, torch.tensor(B), **kw).numpy(),
            rtol=1e-10,
        )
    for g, w in zip(tp.lu_unpack(tLU, tpiv), torch.lu_unpack(LU, piv), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy())


def test_gradients_match_torch() -> None:
    def grads(m: Any, fn: Any, *arrays: Any) -> list[Any]:
        xs = [m.tensor(a, requires_grad=True) for a in arrays]
        out = fn(m, *xs)
        total = sum((o * o).sum() for o in _flat(out) if o.dtype.is_floating_point)
        total.backward()
        return [x.grad.numpy() for x in xs]

    cases = [
        (lambda m, a: m.linalg.det(a), A),
        (lambda m, a: m.linalg.svd(a, full_matrices=False), R),
        (lambda m, a: m.linalg.eigh(a + a.mT), A),
        (lambda m, a: m.linalg.qr(a), R),
        (lambda m, a: m.linalg.cholesky(a @ a.mT + m.eye(4, dtype=a.dtype)), A),
        (lambda m, a: m.linalg.matrix_exp(a * 0.3), A),
        (lambda m, a: m.linalg.lu_factor(a).LU, R),
        (lambda m, a: m.linalg.lstsq(a, a[..., :2] * 2 + 1).solution, R),
    ]
    for fn, a in cases:
        for g, w in zip(grads(tp, fn, a), grads(torch, fn, a), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)
