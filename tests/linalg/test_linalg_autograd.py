"""Gradients of tensorplug.linalg where the OpInfo gradchecks (tests/autograd/test_formulas.py)
cannot reach, checked as PyTorch's OpInfo does: Hermitian inputs made inside the function
(cholesky, eigh), only the determined columns of a full SVD, the determinant at a singular
matrix (through the SVD), the refusals PyTorch has (qr's mode='r', backward through geqrf),
and composites (householder_product, pinv, matrix_norm, ...) through their parts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()

L = tp.linalg
gradcheck = tp.autograd.gradcheck
gradgradcheck = tp.autograd.gradgradcheck
rng = np.random.default_rng(7)


def leaf(a: Any) -> tp.Tensor:
    return tp.tensor(np.asarray(a, np.float64), requires_grad=True)


def sym(a: tp.Tensor) -> tp.Tensor:
    return a + a.mT


SQUARE = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
TALL = rng.standard_normal((4, 3))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_on_hermitian_inputs(upper: bool) -> None:
    x = leaf(rng.standard_normal((2, 3, 3)))

    def f(a: tp.Tensor) -> tp.Tensor:
        pd = a @ a.mT + 3 * tp.eye(3, dtype=tp.float64)
        return L.cholesky(pd, upper=upper)

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_eigh_and_eigvalsh_on_hermitian_inputs() -> None:
    x = leaf(SQUARE)
    assert gradcheck(lambda a: L.eigh(sym(a)), (x,))
    assert gradgradcheck(lambda a: L.eigh(sym(a), UPLO="U"), (x,))
    assert gradcheck(lambda a: L.eigvalsh(sym(a)), (x,))


def test_full_svd_through_its_determined_columns() -> None:
    x = leaf(TALL)

    def f(a: tp.Tensor) -> tuple[tp.Tensor, ...]:
        U, S, Vh = L.svd(a)  # full_matrices=True: U is 4x4
        return U[:, :3], S, Vh

    assert gradcheck(f, (x,))


def test_det_at_a_singular_matrix_is_the_cofactor_matrix() -> None:
    a = np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])
    x = leaf(a)
    L.det(x).backward()
    cof = np.array(
        [[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j) for j in range(3)]
         for i in range(3)]
    )  # fmt: skip
    np.testing.assert_allclose(x.grad.numpy(), cof, atol=1e-10)
    assert gradcheck(L.det, (leaf(a[:2, :2] * [[1, 1], [1, 1]]),))


@pytest.mark.parametrize(
    ("name", "fn", "shapes"),
    [
        ("householder_product", lambda a, t: L.householder_product(a, t), [(4, 3), (3,)]),
        ("pinv", L.pinv, [(4, 3)]),
        ("matrix_norm_nuc", lambda a: L.matrix_norm(a, "nuc"), [(3, 4)]),
        ("matrix_norm_2", lambda a: L.matrix_norm(a, 2), [(3, 4)]),
        ("cond", L.cond, [(3, 3)]),
        ("multi_dot", lambda a, b, c: L.multi_dot([a, b, c]), [(3,), (3, 4), (4,)]),
        ("tensorsolve", lambda a, b: L.tensorsolve(a, b), [(2, 3, 6), (2, 3)]),
        ("vander", lambda x: L.vander(x, N=4), [(3,)]),
        (
            "cholesky_solve",
            lambda b, c: tp.cholesky_solve(b, c.tril() + 3 * tp.eye(3, dtype=tp.float64)),
            [(3, 2), (3, 3)],
        ),
        ("logdet", lambda a: tp.logdet(a @ a.mT + tp.eye(3, dtype=tp.float64)), [(3, 3)]),
    ],
)
def test_composites_differentiate_through_their_parts(name: str, fn: Any, shapes: Any) -> None:
    xs = tuple(
        leaf(rng.standard_normal(s) + (2 * np.eye(s[-1]) if name in ("cond",) else 0))
        for s in shapes
    )
    if name == "tensorsolve":
        xs = (
            leaf(rng.standard_normal((6, 6)).reshape(2, 3, 6) + np.eye(6).reshape(2, 3, 6) * 3),
            xs[1],
        )
    assert gradcheck(fn, xs)


def test_qr_mode_r_and_geqrf_refuse_backward_as_pytorch() -> None:
    x = leaf(TALL)
    with pytest.raises(RuntimeError, match="The derivative of linalg.qr depends on Q"):
        L.qr(x, mode="r").R.sum().backward()
    with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not implemented"):
        tp.geqrf(x)[0].sum().backward()


def test_repeated_singular_values_give_nonfinite_vector_gradients() -> None:
    x = leaf(np.eye(3))
    U, S, Vh = L.svd(x)
    (U.sum() + Vh.sum()).backward()
    assert not np.isfinite(x.grad.numpy()).all()  # PyTorch's documented instability
    y = leaf(np.eye(3))
    L.svdvals(y).sum().backward()  # the values alone stay defined
    np.testing.assert_allclose(y.grad.numpy(), np.eye(3))
