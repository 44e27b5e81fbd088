"""PyTorch's errors and result types of tensorplug.linalg: singular and non-positive-definite
matrices (LinAlgError, with the batch element), ``*_ex`` infos, dtype and shape refusals, the
named tuples, and the "not supported by this backend" refusal of a namespace without linalg."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorplug as tp

L = tp.linalg


def f64(x: Any) -> tp.Tensor:
    return tp.tensor(np.asarray(x, dtype=np.float64))


SINGULAR = [[1.0, 2, 3], [2, 4, 6], [1, 1, 1]]
NOT_PD = [[1.0, 2], [2, 1]]


def test_inv_of_a_singular_matrix_names_the_zero_pivot() -> None:
    msg = (
        "linalg.inv: The diagonal element 3 is zero, the inversion could not be completed "
        "because the input matrix is singular."
    )
    with pytest.raises(L.LinAlgError, match=msg):
        L.inv(f64(SINGULAR))
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The diagonal element 1 is zero"):
        tp.inverse(f64(np.stack([np.eye(3), np.zeros((3, 3))])))


def test_inv_ex_reports_info_without_raising() -> None:
    inv, info = L.inv_ex(f64(np.stack([np.eye(3), np.zeros((3, 3)), SINGULAR])))
    assert info.tolist() == [0, 1, 3] and info.dtype is tp.int32
    np.testing.assert_allclose(inv[0].numpy(), np.eye(3))


def test_cholesky_of_a_matrix_that_is_not_positive_definite() -> None:
    msg = (
        "linalg.cholesky: The factorization could not be completed because the input is not "
        r"positive-definite \(the leading minor of order 2 is not positive-definite\)."
    )
    with pytest.raises(L.LinAlgError, match=msg):
        L.cholesky(f64(NOT_PD))
    L_, info = L.cholesky_ex(f64(np.stack([np.eye(2), NOT_PD])))
    assert info.tolist() == [0, 2]
    np.testing.assert_allclose(L_[0].numpy(), np.eye(2))


def test_solve_and_lu_factor_of_singular_matrices() -> None:
    with pytest.raises(L.LinAlgError, match=r"torch.linalg.solve: \(Batch element 0\): The "
                       "solver failed because the input matrix is singular."):  # fmt: skip
        L.solve(tp.zeros(2, 3, 3, dtype=tp.float64), tp.ones(2, 3, dtype=tp.float64))
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero and using it on lu_solve"):
        L.lu_factor(tp.zeros(3, 3))
    LU, piv, info = L.lu_factor_ex(tp.zeros(3, 3))
    assert info.item() == 1 and piv.tolist() == [1, 2, 3]


@pytest.mark.parametrize(
    ("call", "msg"),
    [
        (lambda: L.inv(tp.ones(2, 3)), "A must be batches of square matrices, but they are 2 by 3"),
        (lambda: L.det(tp.ones(3)), "The input tensor A must have at least 2 dimensions."),
        (
            lambda: L.inv(tp.ones(2, 2, dtype=tp.int64)),
            "Expected a floating point or complex tensor as input. Got Long",
        ),  # fmt: skip
        (
            lambda: L.inv(tp.ones(2, 2, dtype=tp.float16)),
            "Low precision dtypes not supported. Got Half",
        ),  # fmt: skip
        (
            lambda: L.solve(tp.eye(3), tp.ones(4)),
            r"Incompatible shapes of A and B for the "
            r"equation AX = B \(3x3 and 4x1\)",
        ),  # fmt: skip
        (
            lambda: L.solve(tp.eye(3), tp.ones(3, dtype=tp.float64)),
            "Expected A and B to have "
            "the same dtype, but found A of type Float and B of type Double instead",
        ),  # fmt: skip
        (lambda: L.qr(tp.ones(3, 2), mode="x"), "qr received unrecognized mode 'x'"),
        (lambda: L.eigh(tp.eye(2), UPLO="X"), "Expected UPLO argument to be 'L' or 'U'"),
        (
            lambda: L.lstsq(tp.ones(3, 2), tp.ones(4, 1)),
            r"input.size\(-2\) should match "
            r"other.size\(-2\)",
        ),  # fmt: skip
        (
            lambda: L.lstsq(tp.ones(3, 2), tp.ones(3, 1), driver="foo"),
            "parameter `driver` should be one of",
        ),  # fmt: skip
        (lambda: L.cross(tp.ones(2), tp.ones(2)), "inputs dimension -1 must have length 3"),
        (lambda: L.svd(tp.ones(2, 3), driver="gesvd"), "only supported on CUDA inputs"),
        (
            lambda: L.lu_factor(tp.eye(3), pivot=False),
            "LU without pivoting is not implemented on the CPU",
        ),  # fmt: skip
    ],
)
def test_argument_errors_are_pytorchs(call: Any, msg: str) -> None:
    with pytest.raises(RuntimeError, match=msg):
        call()


def test_named_tuples() -> None:
    a = tp.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    assert L.svd(a, full_matrices=False).S.shape == (3,)
    assert L.eigh(a.mT @ a).eigenvalues.shape == (3,)
    assert L.qr(a).R.shape == (3, 3)
    assert L.slogdet(a.mT @ a).logabsdet.ndim == 0
    r = L.lstsq(a, a[:, :1], driver="gelsd")
    assert (r.solution.shape, r.residuals.shape, r.rank.dtype) == ((3, 1), (1,), tp.int64)
    assert L.lu_factor(a).pivots.dtype is tp.int32
    u, s, v = tp.svd(a)  # the legacy form gives V, not V^H
    np.testing.assert_allclose((u * s @ v.mT).numpy(), a.numpy(), atol=1e-5)


def test_a_namespace_without_linalg_is_not_supported() -> None:
    from tensorplug.array_backend import _linalg_solvers

    class NoLinalg:
        __name__ = "nolinalg"

    class FakeKit:
        xp = NoLinalg()
        key_name = "Fake"

    with pytest.raises(NotImplementedError, match="aten::linalg_det: not supported by the Fake "
                       "backend: its array namespace 'nolinalg' has no linalg.det"):  # fmt: skip
        _linalg_solvers._linalg(FakeKit(), "linalg_det", "det")  # type: ignore[arg-type]


def test_meta_tensors_get_shapes_and_dtypes() -> None:
    m = tp.empty(2, 4, 3, device="meta")
    U, S, Vh = L.svd(m, full_matrices=False)
    assert (U.shape, S.shape, Vh.shape) == ((2, 4, 3), (2, 3), (2, 3, 3))
    w, v = L.eig(tp.empty(3, 3, device="meta"))
    assert w.dtype is tp.complex64 and v.shape == (3, 3)
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        L.inv(m)


def test_lu_gives_two_or_three_results_as_torch_lu() -> None:
    a = tp.tensor([[0.0, 1.0], [2.0, 3.0]])
    LU, piv = tp.lu(a)
    assert piv.tolist() == [2, 2] and LU.shape == (2, 2)
    _, _, infos = a.lu(get_infos=True)
    assert infos.item() == 0
    _, _, infos = tp.lu(tp.zeros(2, 2), get_infos=True)  # no error: the info says it
    assert infos.item() == 1
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        tp.lu(tp.zeros(2, 2))
