"""Formulas of the ``torch.linalg`` factorizations and solvers (Note [Formula table]).

Each follows the derivation PyTorch's derivatives.yaml cites (FunctionsManual.cpp): Murray
(2016) for Cholesky, Giles (2008) for inverse, solve and determinant, Townsend (2016) and
Seeger et al. for the SVD and eigendecompositions, Walter and Lehmann / Liao et al. (2019) for
QR, Al-Mohy and Higham's block matrix for ``matrix_exp``, and PyTorch's own LU derivations.
Formulas call public operators only, so double backward works. Complex inputs follow the
conjugate Wirtinger convention (``_mH`` and ``_conj`` conjugate only complex tensors).

The gauge checks are PyTorch's: a loss that depends on the phase of complex singular vectors
or eigenvectors raises. Repeated singular values or eigenvalues divide by zero (inf or nan in
the gradient), as in PyTorch, whose documentation warns of it.
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp
from tensorplug import Tensor

from ._table import OUTPUT_DIFFERENTIABILITY, defderiv


def _lin() -> Any:
    return tp.linalg


def _conj(x: Tensor) -> Tensor:
    return tp.conj(x) if x.dtype.is_complex else x


def _mH(x: Tensor) -> Tensor:
    return _conj(x.transpose(-2, -1))


def _real(x: Tensor) -> Tensor:
    return tp.real(x) if x.dtype.is_complex else x


def _imag(x: Tensor) -> Tensor:
    return tp.imag(x)


def _eye(x: Tensor, n: int) -> Tensor:
    return tp.eye(n, dtype=x.dtype, device=x.device)


def _diag_embed(v: Tensor, like: Tensor) -> Tensor:
    """The square matrices with ``v`` (..., n) on their diagonals, of ``like``'s dtype."""
    return v.unsqueeze(-1) * _eye(like, v.shape[-1])


def _diagonal(x: Tensor) -> Tensor:
    return x.diagonal(0, -2, -1)


def _undefined(g: Tensor | None) -> bool:
    """Whether ``g`` is an output's gradient that no loss reached: the engine gives zeros where
    PyTorch has an undefined tensor, and the SVD and eigh formulas take PyTorch's value-only
    path for it (``svdvals``, ``eigvalsh``), whose result stays finite at repeated values. A
    gradient that requires grad is a variable of a higher derivative (double backward, forward
    mode by the double-vjp construction), defined whatever its value."""
    return g is None or (not g.requires_grad and not bool((g != 0).any()))


def _not_implemented(name: str) -> Any:
    raise NotImplementedError(
        f"the derivative for '{name}' is not implemented (PyTorch has none either)"
    )


# --- Cholesky, inverse, solve, determinants -----------------------------------------------------


def _cholesky_backward(gL: Tensor, upper: bool, L: Tensor) -> Tensor:
    """gA = L^{-H} Phi(L^H gL) L^{-1}, Phi taking the lower triangle with the diagonal halved,
    then made Hermitian (Murray 2016)."""
    if upper:
        L, gL = _mH(L), _mH(gL)
    phi = (_mH(L) @ gL).tril()
    phi = phi - 0.5 * phi * _eye(phi, phi.shape[-1])
    gA = _lin().solve_triangular(L, phi, upper=False, left=False)
    gA = _lin().solve_triangular(_mH(L), gA, upper=True)
    return 0.5 * (gA + _mH(gA))


defderiv(
    "linalg_cholesky_ex",
    self=lambda g, s: _cholesky_backward(g[0], s.upper, s.result[0]),
)
OUTPUT_DIFFERENTIABILITY["linalg_cholesky_ex"] = (True, False)


def _inv_backward(g: Tensor, inv: Tensor) -> Tensor:
    ih = _mH(inv)
    return -(ih @ g @ ih)


defderiv("linalg_inv_ex", A=lambda g, s: _inv_backward(g[0], s.result[0]))
OUTPUT_DIFFERENTIABILITY["linalg_inv_ex"] = (True, False)


def _is_vector_rhs(a_shape: Any, b_shape: Any) -> bool:
    return len(b_shape) == 1 or (
        len(a_shape) - 1 == len(b_shape) and tuple(b_shape) == tuple(a_shape[:-1])
    )


def _solve_backward(
    g: Tensor, A: Tensor, X: Tensor, left: bool, b_shape: Any, which: str
) -> Tensor:
    """X = A^{-1} B (left) or B A^{-1}: gB = A^{-H} g (g A^{-H}), gA = -gB X^H (-X^H gB)."""
    vector = _is_vector_rhs(A.shape, b_shape)
    gB = _lin().solve(_mH(A), g, left=left)
    if which == "B":
        return gB
    if vector:
        return -(gB.unsqueeze(-1) * _conj(X).unsqueeze(-2))
    return -(gB @ _mH(X)) if left else -(_mH(X) @ gB)


defderiv(
    "linalg_solve_ex",
    A=lambda g, s: _solve_backward(g[0], s.A, s.result[0], s.left, s.B_shape, "A"),
    B=lambda g, s: _solve_backward(g[0], s.A, s.result[0], s.left, s.B_shape, "B"),
)
OUTPUT_DIFFERENTIABILITY["linalg_solve_ex"] = (True, False)


def _det_backward(g: Tensor, A: Tensor, det: Tensor) -> Tensor:
    """d det(A) = det(A) tr(A^{-1} dA): gA = (g det^*) A^{-H}. At a singular matrix, through
    the SVD A = U S V^H: gA = g^* ... = (g (det U det V^H)^*) U diag(prod_{j != i} s_j) V^H,
    the cofactor matrix, as PyTorch does."""
    n = A.shape[-1]
    if n == 0:
        return tp.zeros_like(A)
    scaled = (g * _conj(det)).unsqueeze(-1).unsqueeze(-2)
    if not bool((det == 0).any()):
        return _lin().solve(_mH(A), scaled * _eye(A, n))
    U, S, Vh = _lin().svd(A)
    eye = _eye(S, n) != 0
    others = tp.where(eye, tp.ones_like(S).unsqueeze(-1), S.unsqueeze(-2).expand(*S.shape, n))
    cof = others.prod(-1)  # prod_{j != i} s_j
    phase = _lin().det(U) * _lin().det(Vh)
    gA = (U * cof.to(A.dtype).unsqueeze(-2)) @ Vh
    return (
        _conj(phase).unsqueeze(-1).unsqueeze(-2) * scaled * gA
        if A.dtype.is_complex
        else ((g * phase).unsqueeze(-1).unsqueeze(-2) * gA)
    )


defderiv("linalg_det", A=lambda g, s: _det_backward(g, s.A, s.result))


def _slogdet_backward(g: tuple[Tensor, Tensor], A: Tensor, sign: Tensor) -> Tensor:
    """logabsdet: gA = g A^{-H}; for complex A the sign's gradient adds
    i Im(g_sign sign^*) to the coefficient (sign = e^{i theta}, d theta = Im tr(A^{-1} dA))."""
    g_sign, g_abs = g
    n = A.shape[-1]
    if A.dtype.is_complex:
        coef = g_abs.to(A.dtype) + 1j * _imag(g_sign * _conj(sign))
    else:
        coef = g_abs
    return _lin().solve(_mH(A), coef.unsqueeze(-1).unsqueeze(-2) * _eye(A, n))


defderiv("linalg_slogdet", A=lambda g, s: _slogdet_backward(g, s.A, s.result[0]))


# --- SVD and eigendecompositions ---------------------------------------------------------------


def _svd_backward(
    g: tuple[Tensor | None, Tensor, Tensor | None],
    full: bool,
    result: tuple[Tensor, Tensor, Tensor],
) -> Tensor:
    """PyTorch's svd_backward (Townsend 2016), with its gauge check for complex inputs."""
    gU, gS, gVh = g
    U, S, Vh = result
    k = S.shape[-1]
    if full:
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = gU.narrow(-1, 0, k) if gU is not None else None
        gVh = gVh.narrow(-2, 0, k) if gVh is not None else None
    m, n = U.shape[-2], Vh.shape[-1]
    if U.numel() == 0 and k > 0:  # compute_uv=False: svdvals' gradient needs U and V
        raise RuntimeError(
            "linalg.svd: the derivative needs the singular vectors, which were not computed "
            "(compute_uv=False): use linalg.svd or linalg.svdvals"
        )
    gU = None if _undefined(gU) else gU
    gVh = None if _undefined(gVh) else gVh
    if gU is None and gVh is None:
        gS_ = gS.to(U.dtype)
        return U @ (gS_.unsqueeze(-1) * Vh) if m >= n else (U * gS_.unsqueeze(-2)) @ Vh
    gU = gU if gU is not None else tp.zeros_like(U)
    gVh = gVh if gVh is not None else tp.zeros_like(Vh)
    cplx = U.dtype.is_complex
    UhgU = _mH(U) @ gU
    UhgU = UhgU - _mH(UhgU)
    VhgV = Vh @ _mH(gVh)
    VhgV = VhgV - _mH(VhgV)
    if cplx:
        im_u = _imag(_diagonal(UhgU))
        im_v = _imag(_diagonal(VhgV))
        if not bool(tp.allclose(im_u, -im_v, rtol=1e-2, atol=1e-2)):
            raise RuntimeError(
                "svd_backward: The singular vectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this phase "
                "term, making it ill-defined."
            )
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    eye = _eye(S, k)
    E = E + eye  # 1 on the diagonal (where the numerators are 0 or only imaginary)
    Sd = S.to(U.dtype)
    ret = (UhgU * Sd.unsqueeze(-2) + Sd.unsqueeze(-1) * VhgV) / E.to(U.dtype)
    ret = ret * (1 - eye).to(U.dtype) if not cplx else ret - _diag_embed(_diagonal(ret), ret)
    ret = ret + _diag_embed(gS.to(U.dtype), ret)
    if cplx:
        ret = ret + _diag_embed((1j * _imag(_diagonal(UhgU)) / (2 * S)).to(U.dtype), ret)
    if m > n:
        gA = U @ ret
        gUSinv = gU / Sd.unsqueeze(-2)
        gA = gA + gUSinv - U @ (_mH(U) @ gUSinv)
        return gA @ Vh
    if m < n:
        gA = ret @ Vh
        SinvgVh = gVh / Sd.unsqueeze(-1)
        gA = gA + SinvgVh - (SinvgVh @ _mH(Vh)) @ Vh
        return U @ gA
    return U @ ret @ Vh


def _svd_grads(g: Any) -> tuple[Any, Any, Any]:
    return g[0], g[1], g[2]


defderiv(
    "_linalg_svd",
    A=lambda g, s: _svd_backward(_svd_grads(g), s.full_matrices, s.result),
)


def _eigh_backward(g: tuple[Tensor, Tensor], result: tuple[Tensor, Tensor]) -> Tensor:
    """A = V diag(L) V^H: gA = V (diag(gL) + skew(V^H gV) / E) V^H, E_ij = L_j - L_i."""
    gL, gV = g
    L, V = result
    if V.numel() == 0 and L.numel() > 0:
        raise RuntimeError(
            "linalg.eigh: the derivative needs the eigenvectors, which were not computed "
            "(compute_v=False): use linalg.eigh or linalg.eigvalsh"
        )
    n = L.shape[-1]
    if _undefined(gV):
        return (V * gL.to(V.dtype).unsqueeze(-2)) @ _mH(V)
    VhgV = _mH(V) @ gV
    if V.dtype.is_complex and not bool(
        tp.allclose(_imag(_diagonal(VhgV)), tp.zeros_like(L), rtol=1e-2, atol=1e-2)
    ):
        raise RuntimeError(
            "linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
            "so it is ill-defined."
        )
    VhgV = 0.5 * (VhgV - _mH(VhgV))
    eye = _eye(L, n)
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye
    ret = VhgV / E.to(V.dtype)
    ret = ret - ret * eye.to(V.dtype)
    if gL is not None:
        ret = ret + _diag_embed(gL.to(V.dtype), ret)
    return V @ ret @ _mH(V)


defderiv("_linalg_eigh", A=lambda g, s: _eigh_backward((g[0], g[1]), s.result))


def _eig_backward(g: tuple[Tensor, Tensor], A: Tensor, result: tuple[Tensor, Tensor]) -> Tensor:
    """A = V diag(L) V^{-1} (PyTorch's linalg_eig_backward): gA = V^{-H} (diag(gL) +
    (V^H gV - V^H V Re(diag(V^H gV))) / E^*) V^H, real part for a real A."""
    gL, gV = g
    L, V = result
    n = L.shape[-1]
    eye = _eye(L, n)
    Vh = _mH(V)
    if gV is not None:
        VhgV = Vh @ gV
        if not bool(
            tp.allclose(_imag(_diagonal(VhgV)), tp.zeros_like(_real(L)), rtol=1e-2, atol=1e-2)
        ):
            raise RuntimeError(
                "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this "
                "quantity, so it is ill-defined."
            )
        VhgV = VhgV - Vh @ (V * _real(_diagonal(VhgV)).to(V.dtype).unsqueeze(-2))
        E = _conj(L.unsqueeze(-2) - L.unsqueeze(-1)) + eye
        ret = VhgV / E
        ret = ret - ret * eye
        if gL is not None:
            ret = ret + _diag_embed(gL, ret)
    else:
        ret = _diag_embed(gL, V)
    gA = _lin().solve(Vh, ret @ Vh)
    return gA if A.dtype.is_complex else _real(gA)


defderiv("linalg_eig", self=lambda g, s: _eig_backward((g[0], g[1]), s.self, s.result))


# --- QR -------------------------------------------------------------------------------------------


def _qr_square_or_tall(gQ: Tensor, gR: Tensor, Q: Tensor, R: Tensor) -> Tensor:
    """m >= n: gA = [gQ + Q copyltu(M)] R^{-H}, M = R gR^H - gQ^H Q (Walter and Lehmann)."""
    M = gR @ _mH(R) - _mH(Q) @ gQ
    M = M.triu()
    sym = M + _mH(M)
    sym = sym - 0.5 * _real(_diagonal(sym)).to(sym.dtype).unsqueeze(-1) * _eye(sym, sym.shape[-1])
    gA = Q @ sym + gQ
    return _lin().solve_triangular(_mH(R), gA, upper=False, left=False)


def _qr_backward(g: tuple[Tensor, Tensor], mode: str, result: tuple[Tensor, Tensor]) -> Tensor:
    gQ, gR = g
    Q, R = result
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
            "linalg.qr."
        )
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )
    gQ = gQ if gQ is not None else tp.zeros_like(Q)
    gR = gR if gR is not None else tp.zeros_like(R)
    if m >= n:
        return _qr_square_or_tall(gQ, gR, Q, R)
    # m < n: A = [X | Y] with X = Q R1 square, Y = Q R2 (Liao et al. 2019)
    R1, R2 = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
    gR1, gR2 = gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
    Y = Q @ R2
    gX = _qr_square_or_tall(gQ + Y @ _mH(gR2), gR1, Q, R1)
    gY = Q @ gR2
    return tp.cat([gX, gY], -1)


defderiv("linalg_qr", A=lambda g, s: _qr_backward((g[0], g[1]), s.mode, s.result))


# --- least squares and the pseudo-inverse -------------------------------------------------------


def pinv_backward(grad: Tensor, pinvA: Tensor, A: Tensor) -> Tensor:
    """The gradient of ``pinvA = pinv(A)`` (Golub and Pereyra), as PyTorch's pinv_backward."""
    m, n = A.shape[-2], A.shape[-1]
    pinvAh = _mH(pinvA)
    gradh = _mH(grad)
    if m <= n:
        K = gradh @ pinvA
        KpinvAh = K @ pinvAh
        return (
            -_mH(pinvA @ K) + KpinvAh - (A @ pinvA) @ KpinvAh + (pinvAh @ pinvA) @ (gradh - K @ A)
        )
    K = pinvA @ gradh
    pinvAhK = pinvAh @ K
    return -_mH(K @ pinvA) + (gradh - A @ K) @ pinvA @ pinvAh + pinvAhK - pinvAhK @ pinvA @ A


def _lstsq_backward(
    g: tuple[Tensor, Tensor], A: Tensor, B: Tensor, X: Tensor, which: str
) -> Tensor | None:
    """solution = pinv(A) B: gB = pinv(A)^H g, gA = pinv_backward(g B^H, pinv(A), A).
    residuals = sum over rows of |A X - B|^2 at the minimizer X: its gradient through X
    vanishes, so gA = 2 R diag(g_res) X^H and gB = -2 R diag(g_res), R = A X - B."""
    g_sol, g_res = g
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    Xm = X.unsqueeze(-1) if vector else X
    out = None
    if g_sol is not None:
        pinvA = _lin().pinv(A)
        gm = g_sol.unsqueeze(-1) if vector else g_sol
        if which == "b":
            out = _mH(pinvA) @ gm
        else:
            out = pinv_backward(gm @ _mH(Bm), pinvA, A)
    if g_res is not None and g_res.numel():
        R = A @ Xm - Bm
        weighted = 2 * R * g_res.unsqueeze(-2).to(R.dtype)
        part = -weighted if which == "b" else weighted @ _mH(Xm)
        out = part if out is None else out + part
    if out is not None and which == "b" and vector:
        out = out.squeeze(-1)
    return out


defderiv(
    "linalg_lstsq",
    self=lambda g, s: _lstsq_backward((g[0], g[1]), s.self, s.b, s.result[0], "self"),
    b=lambda g, s: _lstsq_backward((g[0], g[1]), s.self, s.b, s.result[0], "b"),
)
OUTPUT_DIFFERENTIABILITY["linalg_lstsq"] = (True, True, False, False)


# --- LU -------------------------------------------------------------------------------------------


def lu_backward(
    gL: Tensor | None, gU: Tensor | None, P: Tensor, L: Tensor, U: Tensor, pivot: bool
) -> Tensor:
    """PyTorch's linalg_lu_backward: A = P L U, square, wide (m < n) and tall (m > n)."""
    m, n = L.shape[-2], U.shape[-1]
    lin = _lin()
    if m == n:
        gA = None
        if gL is not None:
            gA = (_mH(L) @ gL).tril(-1)
        if gU is not None:
            t = (gU @ _mH(U)).triu()
            gA = t if gA is None else gA + t
        assert gA is not None
        gA = lin.solve_triangular(_mH(U), gA, upper=False, left=False)
        gA = lin.solve_triangular(_mH(L), gA, upper=True, unitriangular=True)
    elif m < n:
        U1, U2 = U.narrow(-1, 0, m), U.narrow(-1, m, n - m)
        gA = _mH(L) @ gL if gL is not None else tp.zeros_like(L)
        if gU is not None:
            gA = gA - gU.triu() @ _mH(U)
        gA = lin.solve_triangular(_mH(U1), gA.tril(-1), upper=False, left=False)
        if gU is not None:
            gA = tp.cat([gA + gU.narrow(-1, 0, m).triu(), gU.narrow(-1, m, n - m)], -1)
        else:
            gA = tp.cat([gA, tp.zeros_like(U2)], -1)
        gA = lin.solve_triangular(_mH(L), gA, upper=True, unitriangular=True)
    else:
        L1, L2 = L.narrow(-2, 0, n), L.narrow(-2, n, m - n)
        gA = gU @ _mH(U) if gU is not None else tp.zeros_like(U)
        if gL is not None:
            gA = gA - _mH(L) @ gL.tril(-1)
        gA = lin.solve_triangular(_mH(L1), gA.triu(), upper=True, unitriangular=True)
        if gL is not None:
            gA = tp.cat([gA + gL.narrow(-2, 0, n).tril(-1), gL.narrow(-2, n, m - n)], -2)
        else:
            gA = tp.cat([gA, tp.zeros_like(L2)], -2)
        gA = lin.solve_triangular(_mH(U), gA, upper=False, left=False)
    return P @ gA if pivot else gA


def _lu_backward_of(g: Any, result: Any, pivot: bool) -> Tensor:
    P, L, U = result
    return lu_backward(g[1], g[2], P, L, U, pivot)


defderiv(
    "linalg_lu",
    A=lambda g, s: _lu_backward_of(g, s.result, s.pivot),
)
OUTPUT_DIFFERENTIABILITY["linalg_lu"] = (False, True, True)


def _lu_factor_backward(g: Tensor, LU: Tensor, pivots: Tensor, pivot: bool) -> Tensor:
    P, L, U = tp.lu_unpack(LU, pivots)
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    gL = g.narrow(-1, 0, k).tril(-1)
    gU = g.narrow(-2, 0, k).triu()
    return lu_backward(gL, gU, P, L, U, pivot)


defderiv(
    "linalg_lu_factor_ex",
    A=lambda g, s: _lu_factor_backward(g[0], s.result[0], s.result[1], s.pivot),
)
OUTPUT_DIFFERENTIABILITY["linalg_lu_factor_ex"] = (True, False, False)


def _lu_unpack_backward(g: tuple[Tensor, Tensor, Tensor], shape: Any) -> Tensor:
    _, gL, gU = g
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    out = None
    if gL is not None and gL.numel():
        out = gL.tril(-1)
        if n > k:
            out = tp.cat([out, gL.new_zeros([*gL.shape[:-1], n - k])], -1)
    if gU is not None and gU.numel():
        u = gU.triu()
        if m > k:
            u = tp.cat([u, gU.new_zeros([*gU.shape[:-2], m - k, n])], -2)
        out = u if out is None else out + u
    return out if out is not None else g[1].new_zeros(list(shape))


defderiv(
    "lu_unpack",
    LU_data=lambda g, s: _lu_unpack_backward((g[0], g[1], g[2]), s.LU_data_shape),
)
OUTPUT_DIFFERENTIABILITY["lu_unpack"] = (False, True, True)


def _lu_solve_B(g: Tensor, LU: Tensor, pivots: Tensor, left: bool, adjoint: bool) -> Tensor:
    return _lin().lu_solve(LU, pivots, g, left=left, adjoint=not adjoint)


def _lu_solve_LU(
    gX: Tensor, LU: Tensor, pivots: Tensor, X: Tensor, left: bool, adjoint: bool
) -> Tensor:
    """PyTorch's linalg_lu_solve_LU: the gradient with respect to the packed factors."""
    P, L, U = tp.lu_unpack(LU, pivots)
    lin = _lin()
    if left != adjoint:
        rhs = -(gX if left else _mH(gX)) @ (_mH(X) if left else X)
        gR = lin.solve_triangular(_mH(U), rhs, upper=False)
        gL = lin.solve_triangular(_mH(L), gR @ _mH(U), upper=True, unitriangular=True).tril(-1)
        return gL + gR.triu()
    gR = -(P.mT @ (X if left else _mH(X)) @ (_mH(gX) if left else gX)) @ P
    gR = lin.solve_triangular(_mH(L), gR, upper=True, left=False, unitriangular=True)
    gU = lin.solve_triangular(_mH(U), _mH(L) @ gR, upper=False, left=False).triu()
    return gR.tril(-1) + gU


defderiv(
    "linalg_lu_solve",
    LU=lambda g, s: _lu_solve_LU(g, s.LU, s.pivots, s.result, s.left, s.adjoint),
    B=lambda g, s: _lu_solve_B(g, s.LU, s.pivots, s.left, s.adjoint),
)


def _solve_triangular_backward(
    g: Tensor, A: Tensor, X: Tensor, upper: bool, left: bool, unit: bool, which: str
) -> Tensor:
    gB = _lin().solve_triangular(_mH(A), g, upper=not upper, left=left, unitriangular=unit)
    if which == "B":
        return gB
    gA = -(gB @ _mH(X)) if left else -(_mH(X) @ gB)
    return gA.triu(1 if unit else 0) if upper else gA.tril(-1 if unit else 0)


defderiv(
    "linalg_solve_triangular",
    self=lambda g, s: _solve_triangular_backward(
        g, s.self, s.result, s.upper, s.left, s.unitriangular, "self"
    ),
    B=lambda g, s: _solve_triangular_backward(
        g, s.self, s.result, s.upper, s.left, s.unitriangular, "B"
    ),
)


# --- matrix_exp and cross -----------------------------------------------------------------------


def _matrix_exp_backward(g: Tensor, A: Tensor) -> Tensor:
    """The block matrix trick: exp([[A^H, G], [0, A^H]]) holds the gradient in its upper
    right block (Al-Mohy and Higham; PyTorch's differential_analytic_matrix_function)."""
    n = A.shape[-1]
    Ah = _mH(A)
    top = tp.cat([Ah, g], -1)
    bottom = tp.cat([tp.zeros_like(Ah), Ah], -1)
    big = _lin().matrix_exp(tp.cat([top, bottom], -2))
    return big.narrow(-2, 0, n).narrow(-1, n, n)


defderiv("linalg_matrix_exp", self=lambda g, s: _matrix_exp_backward(g, s.self))

defderiv(
    "linalg_cross",
    self=lambda g, s: _lin().cross(_conj(s.other), g, dim=s.dim),
    other=lambda g, s: _lin().cross(g, _conj(s.self), dim=s.dim),
)

# PyTorch has no derivative for these: backward through them raises, as PyTorch's does
defderiv("geqrf", self=lambda g, s: _not_implemented("geqrf"))
defderiv("linalg_ldl_factor_ex", self=lambda g, s: _not_implemented("linalg_ldl_factor_ex"))
OUTPUT_DIFFERENTIABILITY["linalg_ldl_factor_ex"] = (True, False, False)
defderiv(
    "linalg_ldl_solve",
    LD=lambda g, s: _not_implemented("linalg_ldl_solve"),
    B=lambda g, s: _not_implemented("linalg_ldl_solve"),
)
