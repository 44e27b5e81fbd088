"""The ``linalg`` family, second part: the factorizations, solvers and spectra of
``torch.linalg`` (cholesky, inv, solve, det, slogdet, svd, eigh, eig, qr, lstsq, the LU family,
solve_triangular, matrix_exp, cross, geqrf and the LDL pair).

Note [Linear algebra through the linalg extension]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The kernels call the array API's ``linalg`` extension (``xp.linalg``: numpy, CuPy through
array-api-compat, torch, dask), which works on stacks of matrices: every kernel here batches
over the leading dimensions in one call. What the standard lacks is written in standard
functions: the LU factorization (partial pivoting, one vectorized step per column, so every
backend gets ``lu_factor``, ``lu``, ``lu_solve`` and the singular-matrix ``info`` of ``inv``
and ``solve``), the matrix exponential (Pade 13 with scaling and squaring), triangular solves
(``solve`` on the triangle), the Hermitian matrix an ``UPLO`` names, least squares (the SVD,
which gives every driver's minimum-norm solution) and the Cholesky factor of a failed
factorization (for ``info``). Where the namespace has more, the kit takes it: numpy's
``eigh(UPLO=)``, ``eig``, ``qr(mode="r"/"raw")``; ``geqrf`` and ``eig`` need those and the LDL
pair needs scipy's LAPACK wrappers. A namespace without what an operator needs gets a
``NotImplementedError`` naming the operator and the backend.

``info`` follows LAPACK as PyTorch reports it: the order of the first leading minor that is not
positive-definite (Cholesky), the index of the first zero on ``U``'s diagonal (LU); the
library's own failure (numpy's ``LinAlgError``) only tells that some matrix of the stack
failed, so the kernels then compute ``info`` with the standard-function factorizations.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as _dt
from ..errors import LinAlgError
from ..tensor import Tensor
from ._kit import Kernels, Kit, OpError, bind, torch_name
from ._standard import matrix_transpose

_F32, _F64, _C64, _C128 = _dt.float32, _dt.float64, _dt.complex64, _dt.complex128
_REAL = {_F32: _F32, _F64: _F64, _C64: _F32, _C128: _F64}
_COMPLEX = {_F32: _C64, _F64: _C128, _C64: _C64, _C128: _C128}


# --- checks -----------------------------------------------------------------------------------


def _shape(t: Tensor) -> tuple[int, ...]:
    return tuple(t._data.shape)


def _check_float(name: str, t: Tensor) -> None:
    d = t._dtype
    if d.kind not in "fc":
        raise OpError(
            f"{name}: Expected a floating point or complex tensor as input. Got {torch_name(d)}"
        )
    if d not in _REAL:
        raise OpError(f"{name}: Low precision dtypes not supported. Got {torch_name(d)}")


def _check_matrix(name: str, t: Tensor, *, square: bool = False, what: str = "A") -> None:
    s = _shape(t)
    if len(s) < 2:
        raise OpError(f"{name}: The input tensor {what} must have at least 2 dimensions.")
    if square and s[-1] != s[-2]:
        raise OpError(
            f"{name}: A must be batches of square matrices, but they are {s[-2]} by {s[-1]} "
            "matrices"
        )


def _check_input(name: str, t: Tensor, *, square: bool = False) -> None:
    _check_matrix(name, t, square=square)
    _check_float(name, t)


def _same_dtype(name: str, a: Tensor, b: Tensor, an: str = "A", bn: str = "B") -> None:
    if a._dtype is not b._dtype:
        raise OpError(
            f"{name}: Expected {an} and {bn} to have the same dtype, but found {an} of type "
            f"{torch_name(a._dtype)} and {bn} of type {torch_name(b._dtype)} instead"
        )


def _linalg(kit: Kit, qual: str, fn: str = "") -> Any:
    """``xp.linalg`` (and its function ``fn``), or the "not supported" error."""
    la = getattr(kit.xp, "linalg", None)
    if la is None or (fn and getattr(la, fn, None) is None):
        lib = getattr(kit.xp, "__name__", "its array namespace")
        what = f"linalg.{fn}" if fn else "the linalg extension"
        raise NotImplementedError(
            f"aten::{qual}: not supported by the {kit.key_name} backend: its array namespace "
            f"{lib!r} has no {what}. Use a backend whose namespace has it (CPU: numpy), or "
            "register a kernel with array_backend.register(..., overrides={...})"
        )
    return la


def _failed(e: BaseException) -> bool:
    """Whether ``e`` is the array library's "the factorization failed" (numpy's and CuPy's
    ``LinAlgError``)."""
    return type(e).__name__ == "LinAlgError"


def _raise_info(
    kit: Kit, info: Any, batched: bool, message: Any, cls: type[Exception] = LinAlgError
) -> None:
    """Raise ``message(code)`` for the first nonzero ``info`` (PyTorch's
    ``_linalg_check_errors``), prefixed by the batch element when the input was a stack."""
    xp = kit.xp
    flat = xp.reshape(info, (-1,))
    if not bool(xp.any(flat != 0)):
        return
    host = kit.to_host(flat)
    first = next(i for i, v in enumerate(host.tolist()) if v != 0)
    where = f"(Batch element {first}): " if batched else ""
    raise cls(message(where, int(host[first])))


def _mH(xp: Any, a: Any) -> Any:
    t = matrix_transpose(xp, a)
    return xp.conj(t) if xp.isdtype(a.dtype, "complex floating") else t


def _eye(kit: Kit, n: int, xd: Any, device: Any) -> Any:
    with kit.on(device):
        return kit.xp.eye(n, dtype=xd)


def _info_array(kit: Kit, batch: tuple[int, ...], device: Any) -> Any:
    with kit.on(device):
        return kit.xp.zeros(batch, dtype=kit.storage[_dt.int32])


def _wrap(kit: Kit, r: Any, d: _dt.dtype, t: Tensor) -> Tensor:
    return kit.wrap(r, d, t._device)


def _empty(kit: Kit, d: _dt.dtype, t: Tensor) -> Tensor:
    with kit.on(t._device):
        return kit.wrap(kit.xp.zeros((0,), dtype=kit.storage[d]), d, t._device)


# --- factorizations in standard functions -----------------------------------------------------


def lu_xp(kit: Kit, a: Any, pivot: bool = True) -> tuple[Any, Any, Any]:
    """The LU factorization with partial pivoting of a stack of matrices ``a`` (..., m, n),
    in LAPACK's compact form: ``(LU, pivots, info)``, pivots 1-based int32 (row ``i`` was
    swapped with row ``pivots[i] - 1``), info the 1-based index of the first zero pivot.
    One vectorized step per column, over the whole stack (Note [Linear algebra through the
    linalg extension])."""
    xp = kit.xp
    shape = tuple(a.shape)
    m, n = shape[-2], shape[-1]
    batch = shape[:-2]
    nb = math.prod(batch)
    k = min(m, n)
    i32 = kit.storage[_dt.int32]
    a = xp.reshape(a, (nb, m, n))
    pivots = []
    info = xp.zeros((nb,), dtype=i32)
    rows = xp.reshape(xp.arange(m), (1, m, 1))
    for j in range(k):
        if pivot:
            p = xp.argmax(xp.abs(a[:, j:, j]), axis=1) + j  # first largest, as LAPACK's i?amax
        else:
            p = xp.full((nb,), j, dtype=xp.int64)
        pivots.append(xp.astype(p + 1, i32))
        pr = xp.reshape(p, (nb, 1, 1))
        row_j = a[:, j : j + 1, :]
        row_p = xp.sum(xp.where(rows == pr, a, xp.zeros_like(a)), axis=1, keepdims=True)
        a = xp.where(rows == j, row_p, xp.where(rows == pr, row_j, a))
        d = a[:, j, j]
        zero = d == 0
        info = xp.where((info == 0) & zero, xp.asarray(j + 1, dtype=i32), info)
        safe = xp.where(zero, xp.ones_like(d), d)
        below = a[:, j + 1 :, j] / xp.reshape(safe, (nb, 1))
        below = xp.where(xp.reshape(zero, (nb, 1)), a[:, j + 1 :, j], below)
        update = a[:, j + 1 :, j + 1 :] - below[:, :, None] * a[:, j : j + 1, j + 1 :]
        lower = xp.concat([a[:, j + 1 :, :j], below[:, :, None], update], axis=2)
        a = xp.concat([a[:, : j + 1, :], lower], axis=1)
    if pivots:
        piv = xp.stack(pivots, axis=1)
    else:
        piv = xp.zeros((nb, 0), dtype=i32)
    return (
        xp.reshape(a, shape),
        xp.reshape(piv, (*batch, k)),
        xp.reshape(info, batch),
    )


def _permutation(kit: Kit, pivots: Any, m: int) -> Any:
    """The row order ``perm`` (int64, (..., m)) the LAPACK pivots apply: ``A[perm] = L U``."""
    xp = kit.xp
    batch = tuple(pivots.shape[:-1])
    idx = xp.reshape(xp.arange(m), (1,) * len(batch) + (m,))
    perm = xp.broadcast_to(idx, (*batch, m))
    for j in range(pivots.shape[-1]):
        p = xp.astype(pivots[..., j : j + 1], xp.int64) - 1
        at_j = perm[..., j : j + 1]
        at_p = xp.sum(xp.where(idx == p, perm, xp.zeros_like(perm)), axis=-1, keepdims=True)
        perm = xp.where(idx == j, at_p, xp.where(idx == p, at_j, perm))
    return perm


def _permutation_matrix(kit: Kit, perm: Any, xd: Any) -> Any:
    """``P`` with ``A = P L U``: ``P[perm[i], i] = 1``."""
    xp = kit.xp
    m = perm.shape[-1]
    rows = xp.reshape(xp.arange(m), (1,) * (perm.ndim - 1) + (m, 1))
    return xp.astype(rows == perm[..., None, :], xd)


def _cholesky_xp(kit: Kit, a: Any) -> tuple[Any, Any]:
    """The lower Cholesky factor of a stack, column by column, and LAPACK's ``info`` (the
    order of the first leading minor that is not positive-definite; the factor stops there)."""
    xp = kit.xp
    shape = tuple(a.shape)
    n = shape[-1]
    nb = math.prod(shape[:-2])
    a = xp.reshape(a, (nb, n, n))
    cplx = xp.isdtype(a.dtype, "complex floating")
    L = xp.zeros_like(a)
    info = xp.zeros((nb,), dtype=kit.storage[_dt.int32])
    cols = xp.reshape(xp.arange(n), (1, 1, n))
    rows = xp.reshape(xp.arange(n), (1, n, 1))
    for j in range(n):
        lj = L[:, j, :j]
        sq = xp.real(lj * xp.conj(lj)) if cplx else lj * lj
        d = (xp.real(a[:, j, j]) if cplx else a[:, j, j]) - xp.sum(sq, axis=-1)
        bad = ~(d > 0) | (info != 0)
        info = xp.where((info == 0) & bad, xp.asarray(j + 1, dtype=info.dtype), info)
        root = xp.sqrt(xp.where(bad, xp.ones_like(d), d))
        rhs = a[:, :, j]
        if j:
            row = xp.reshape(xp.conj(lj) if cplx else lj, (nb, 1, j))
            rhs = rhs - xp.sum(L[:, :, :j] * row, axis=-1)
        col = rhs / xp.astype(xp.reshape(root, (nb, 1)), a.dtype)
        col = xp.where(rows[:, :, 0] == j, xp.astype(xp.reshape(root, (nb, 1)), a.dtype), col)
        col = xp.where((rows[:, :, 0] >= j) & ~xp.reshape(bad, (nb, 1)), col, xp.zeros_like(col))
        L = xp.where(cols == j, col[:, :, None], L)
    return xp.reshape(L, shape), xp.reshape(info, shape[:-2])


def _hermitian(kit: Kit, a: Any, upper: bool) -> Any:
    """The Hermitian matrix the ``UPLO`` triangle of ``a`` describes (the diagonal's
    imaginary part ignored, as LAPACK does)."""
    xp = kit.xp
    tri = xp.triu(a, k=1) if upper else xp.tril(a, k=-1)
    n = a.shape[-1]
    eye = xp.eye(n, dtype=a.dtype)
    diag = a * eye
    if xp.isdtype(a.dtype, "complex floating"):
        diag = xp.astype(xp.real(diag), a.dtype)
    return tri + _mH(xp, tri) + diag


def _triangle(kit: Kit, a: Any, upper: bool, unit: bool) -> Any:
    xp = kit.xp
    t = xp.triu(a) if upper else xp.tril(a)
    if unit:
        n = a.shape[-1]
        eye = xp.eye(n, dtype=a.dtype)
        t = t - t * eye + eye
    return t


def _solve_or_nan(kit: Kit, la: Any, a: Any, b: Any) -> Any:
    """``solve(a, b)``; nan where the library finds a matrix singular (the triangular solves
    divide by the zero and give inf/nan, as LAPACK's trtrs-free path in PyTorch does)."""
    try:
        return la.solve(a, b)
    except Exception as e:
        if not _failed(e):
            raise
    xp = kit.xp
    _, _, info = lu_xp(kit, a)
    ok = info == 0
    eye = xp.eye(a.shape[-1], dtype=a.dtype)
    safe = xp.where(ok[..., None, None], a, eye)
    r = la.solve(safe, b)
    return xp.where(ok[..., None, None], r, xp.full_like(r, math.nan))


# --- the kernels ------------------------------------------------------------------------------


_UPPER: dict[type, bool] = {}


def _cholesky_gives_upper(kit: Kit, la: Any) -> bool:
    """Whether the namespace's ``linalg.cholesky`` gives the upper factor where the standard
    says lower (array-api-compat's dask adapter does: dask's own default): probed once per
    array type on a 2x2 matrix, so a namespace that differs is detected, never silently
    wrong."""
    t = kit.array_type
    got = _UPPER.get(t)
    if got is None:
        xp = kit.xp
        probe = la.cholesky(xp.asarray([[4.0, 2.0], [2.0, 3.0]]))
        try:
            got = float(kit.to_host(probe)[0, 1]) != 0.0
        except NotImplementedError:  # values that cannot be read (Meta): shapes only, as lower
            got = False
        _UPPER[t] = got
    return got


def linalg_cholesky_ex(
    kit: Kit, self: Tensor, *, upper: bool = False, check_errors: bool = False
) -> tuple[Tensor, Tensor]:
    name = "linalg.cholesky"
    _check_input(name, self, square=True)
    la = _linalg(kit, "linalg_cholesky_ex", "cholesky")
    xp = kit.xp
    a = kit.as_compute(self, self._dtype)
    batch = _shape(self)[:-2]
    L = None
    if a.shape[-1] and math.prod(batch) != 0:
        try:
            L = la.cholesky(a)
        except Exception as e:
            if not _failed(e):
                raise
        if L is not None and _cholesky_gives_upper(kit, la):
            L = matrix_transpose(xp, L)
        if L is not None and not kit.lazy and bool(xp.any(xp.isnan(L))):
            L = None  # a library that signals failure with nan (CuPy)
    else:
        L = xp.asarray(a, copy=True)
    failed = L is None
    if failed:
        L, info = _cholesky_xp(kit, a)
    else:
        info = _info_array(kit, batch, self._device)
    if check_errors and failed:
        _raise_info(
            kit,
            info,
            len(batch) > 0,
            lambda w, i: (
                f"aten::linalg_cholesky_ex: {name}: {w}The factorization could not be completed "
                f"because the input is not positive-definite (the leading minor of order {i} is "
                "not positive-definite)."
            ),
        )
    if upper:
        L = _mH(xp, L)
    return _wrap(kit, L, self._dtype, self), _wrap(kit, info, _dt.int32, self)


def _singular_message(qual: str, name: str) -> Any:
    return lambda w, i: (
        f"aten::{qual}: {name}: {w}The diagonal element {i} is zero, the inversion could not "
        "be completed because the input matrix is singular."
    )


def linalg_inv_ex(kit: Kit, A: Tensor, *, check_errors: bool = False) -> tuple[Tensor, Tensor]:
    name = "linalg.inv"
    _check_input(name, A, square=True)
    la = _linalg(kit, "linalg_inv_ex", "inv")
    xp = kit.xp
    a = kit.as_compute(A, A._dtype)
    batch = _shape(A)[:-2]
    failed = False
    try:
        r = la.inv(a) if a.shape[-1] and math.prod(batch) else xp.asarray(a, copy=True)
        info = _info_array(kit, batch, A._device)
    except Exception as e:
        if not _failed(e):
            raise
        failed = True
        _, _, info = lu_xp(kit, a)
        ok = (info == 0)[..., None, None]
        eye = xp.eye(a.shape[-1], dtype=a.dtype)
        r = la.inv(xp.where(ok, a, eye))
        r = xp.where(ok, r, xp.full_like(r, math.nan))
    if check_errors and failed:
        _raise_info(kit, info, len(batch) > 0, _singular_message("linalg_inv_ex", name))
    return _wrap(kit, r, A._dtype, A), _wrap(kit, info, _dt.int32, A)


def is_vector_rhs(A_shape: tuple[int, ...], B_shape: tuple[int, ...]) -> bool:
    """PyTorch's ``linalg_solve_is_vector_rhs``: ``B`` is a (batch of) vector(s)."""
    return len(B_shape) == 1 or (len(A_shape) - 1 == len(B_shape) and B_shape == A_shape[:-1])


def linalg_solve_ex(
    kit: Kit, A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False
) -> tuple[Tensor, Tensor]:
    name = "linalg.solve"
    _check_input(name, A, square=True)
    sa, sb = _shape(A), _shape(B)
    if len(sb) < 1:
        raise OpError(f"{name}: The input tensor B must have at least 1 dimensions.")
    _same_dtype(name, A, B)
    kit.same_device(A, B)
    vector = is_vector_rhs(sa, sb)
    n = sa[-1]
    eq = "AX = B" if left else "XA = B"
    if not left and vector:
        raise (
            OpError(
                f"{name}: Vector broadcasting of the left hand side is not supported for "
                "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)"
            )
            if len(sb) != 1
            else OpError(
                f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                f"{sb[0]}x1)"
            )
        )
    rows = sb[-1] if vector else (sb[-2] if left else sb[-1])
    if rows != n:
        shown = f"{sb[-1]}x1" if vector else f"{sb[-2]}x{sb[-1]}"
        raise OpError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {shown})"
        )
    la = _linalg(kit, "linalg_solve_ex", "solve")
    xp = kit.xp
    a = kit.as_compute(A, A._dtype)
    b = kit.as_compute(B, A._dtype)
    if vector:
        b = b[..., None]
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a, b = xp.matrix_transpose(a), xp.matrix_transpose(b)
    batch = sa[:-2]
    info = _info_array(kit, batch, A._device)
    failed = False  # the library solved every matrix: info is all zeros, nothing to check
    try:
        if n == 0 or 0 in b.shape:
            shape = (*_broadcast(a.shape[:-2], b.shape[:-2]), n, b.shape[-1])
            r = xp.zeros(shape, dtype=a.dtype)
        else:
            r = la.solve(a, b)
    except Exception as e:
        if not _failed(e):
            raise
        failed = True
        _, _, info = lu_xp(kit, a)
        ok = (info == 0)[..., None, None]
        eye = xp.eye(n, dtype=a.dtype)
        r = la.solve(xp.where(ok, a, eye), b)
        r = xp.where(ok, r, xp.full_like(r, math.nan))
    if check_errors and failed:
        _raise_info(
            kit,
            info,
            len(batch) > 0,
            lambda w, i: (
                f"aten::linalg_solve_ex: torch.linalg.solve: {w}The solver failed because the "
                "input matrix is singular."
            ),
        )
    if not left:
        r = xp.matrix_transpose(r)
    if vector:
        r = r[..., 0]
    return _wrap(kit, r, A._dtype, A), _wrap(kit, info, _dt.int32, A)


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y and x != 1 and y != 1:
            raise OpError(f"The size of tensor a ({x}) must match the size of tensor b ({y})")
        out.append(y if x == 1 else x)
    return tuple(out)


def linalg_det(kit: Kit, A: Tensor) -> Tensor:
    _check_input("linalg.det", A, square=True)
    la = _linalg(kit, "linalg_det", "det")
    return _wrap(kit, la.det(kit.as_compute(A, A._dtype)), A._dtype, A)


def linalg_slogdet(kit: Kit, A: Tensor) -> tuple[Tensor, Tensor]:
    _check_input("linalg.slogdet", A, square=True)
    la = _linalg(kit, "linalg_slogdet", "slogdet")
    sign, logabs = la.slogdet(kit.as_compute(A, A._dtype))
    return _wrap(kit, sign, A._dtype, A), _wrap(kit, logabs, _REAL[A._dtype], A)


def _linalg_svd(
    kit: Kit,
    A: Tensor,
    full_matrices: bool = False,
    compute_uv: bool = True,
    *,
    driver: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    name = "linalg.svd"
    _check_input(name, A)
    if driver is not None:
        if kit.device_type != "cuda":
            raise OpError(
                "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs "
                "with cuSOLVER backend."
            )
        if driver not in ("gesvd", "gesvdj", "gesvda"):
            raise OpError(
                f"torch.linalg.svd: driver must be one of gesvd, gesvdj, gesvda, but got {driver}"
            )
    la = _linalg(kit, "_linalg_svd", "svd")
    xp = kit.xp
    d = A._dtype
    a = kit.as_compute(A, d)
    *batch, m, n = _shape(A)
    k = min(m, n)
    if not compute_uv:
        if k == 0 or math.prod(batch) == 0:
            s = xp.zeros((*batch, k), dtype=kit.compute[_REAL[d]])
        else:
            svdvals = getattr(la, "svdvals", None)
            s = svdvals(a) if svdvals is not None else la.svd(a, full_matrices=False)[1]
        return _empty(kit, d, A), _wrap(kit, s, _REAL[d], A), _empty(kit, d, A)
    if k == 0 or math.prod(batch) == 0:  # the identity where a factor has rows, as LAPACK
        um = m if full_matrices else k
        vn = n if full_matrices else k
        U = xp.broadcast_to(xp.eye(m, um, dtype=a.dtype), (*batch, m, um))
        Vh = xp.broadcast_to(xp.eye(vn, n, dtype=a.dtype), (*batch, vn, n))
        s = xp.zeros((*batch, k), dtype=kit.compute[_REAL[d]])
        U, Vh = xp.asarray(U, copy=True), xp.asarray(Vh, copy=True)
    else:
        U, s, Vh = la.svd(a, full_matrices=full_matrices)
    return _wrap(kit, U, d, A), _wrap(kit, s, _REAL[d], A), _wrap(kit, Vh, d, A)


def _check_uplo(UPLO: str) -> bool:
    if UPLO not in ("L", "U", "l", "u"):
        raise OpError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO in ("U", "u")


def _linalg_eigh(
    kit: Kit, A: Tensor, UPLO: str = "L", compute_v: bool = True
) -> tuple[Tensor, Tensor]:
    name = "linalg.eigh" if compute_v else "linalg.eigvalsh"
    upper = _check_uplo(UPLO)
    _check_input(name, A, square=True)
    la = _linalg(kit, "_linalg_eigh", "eigh")
    xp = kit.xp
    d = A._dtype
    a = kit.as_compute(A, d)
    empty = a.shape[-1] == 0 or math.prod(a.shape[:-2]) == 0
    numpy_uplo = getattr(xp, "__name__", "") == "numpy"
    if not numpy_uplo:
        a = _hermitian(kit, a, upper)
    kw = {"UPLO": "U" if upper else "L"} if numpy_uplo else {}
    if not compute_v:
        if empty:
            w = xp.zeros(a.shape[:-1], dtype=kit.compute[_REAL[d]])
        else:
            w = la.eigvalsh(a, **kw) if hasattr(la, "eigvalsh") else la.eigh(a, **kw)[0]
        return _wrap(kit, w, _REAL[d], A), _empty(kit, d, A)
    if empty:
        w = xp.zeros(a.shape[:-1], dtype=kit.compute[_REAL[d]])
        v = xp.asarray(a, copy=True)
    else:
        w, v = la.eigh(a, **kw)
    return _wrap(kit, w, _REAL[d], A), _wrap(kit, v, d, A)


def linalg_eig(kit: Kit, self: Tensor) -> tuple[Tensor, Tensor]:
    _check_input("linalg.eig", self, square=True)
    la = _linalg(kit, "linalg_eig", "eig")
    xp = kit.xp
    d = self._dtype
    cd = _COMPLEX[d]
    a = kit.as_compute(self, d)
    if a.shape[-1] == 0 or math.prod(a.shape[:-2]) == 0:
        w = xp.zeros(a.shape[:-1], dtype=kit.compute[cd])
        v = xp.zeros(a.shape, dtype=kit.compute[cd])
    else:
        w, v = la.eig(a)
    w, v = kit.cast(w, kit.compute[cd]), kit.cast(v, kit.compute[cd])
    return _wrap(kit, w, cd, self), _wrap(kit, v, cd, self)


def linalg_qr(kit: Kit, A: Tensor, mode: str = "reduced") -> tuple[Tensor, Tensor]:
    if mode not in ("reduced", "complete", "r"):
        raise OpError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'"
        )
    _check_input("linalg.qr", A)
    la = _linalg(kit, "linalg_qr", "qr")
    xp = kit.xp
    d = A._dtype
    a = kit.as_compute(A, d)
    *batch, m, n = a.shape
    k = min(m, n)
    if k == 0 or math.prod(batch) == 0:
        qn = m if mode == "complete" else k
        Q = xp.asarray(xp.broadcast_to(xp.eye(m, qn, dtype=a.dtype), (*batch, m, qn)), copy=True)
        R = xp.zeros((*batch, qn, n), dtype=a.dtype)
    else:
        Q, R = la.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        return _empty(kit, d, A), _wrap(kit, R, d, A)
    return _wrap(kit, Q, d, A), _wrap(kit, R, d, A)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def linalg_lstsq(
    kit: Kit, self: Tensor, b: Tensor, rcond: float | None = None, *, driver: str | None = None
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Least squares by the SVD: the minimum-norm solution every driver gives for a matrix of
    full rank (and gelsy/gelsd/gelss give for any); the outputs each driver computes
    (PyTorch's rules): ``residuals`` when there are more rows than columns, every matrix has
    full rank and the driver is not gelsy; ``rank`` except for gels; ``singular_values`` for
    gelsd and gelss. Empty tensors otherwise."""
    name = "torch.linalg.lstsq"
    _check_matrix("torch.linalg.lstsq", self, what="input")
    _check_float("torch.linalg.lstsq", self)
    sa, sb = _shape(self), _shape(b)
    if len(sb) < 1:
        raise OpError(f"{name}: input must have at least 1 dimension.")
    if self._dtype is not b._dtype:
        raise OpError(
            f"{name}: Expected input and other to have the same dtype, but got input's dtype "
            f"{torch_name(self._dtype)} and other's dtype {torch_name(b._dtype)}"
        )
    cuda = kit.device_type == "cuda"
    if driver is None:
        driver = "gels" if cuda else "gelsy"
    if driver not in _DRIVERS:
        raise OpError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if cuda and driver != "gels":
        raise OpError(f"{name}: `driver` other than `gels` is not supported on CUDA")
    vector = len(sb) == len(sa) - 1
    if (sb[-1] if vector else sb[-2]) != sa[-2]:
        raise OpError(f"{name}: input.size(-2) should match other.size(-2)")
    la = _linalg(kit, "linalg_lstsq", "svd")
    xp = kit.xp
    d = self._dtype
    rd = _REAL[d]
    a = kit.as_compute(self, d)
    bb = kit.as_compute(b, d)
    if vector:
        bb = bb[..., None]
    m, n = sa[-2], sa[-1]
    k = min(m, n)
    batch = _broadcast(sa[:-2], tuple(bb.shape[:-2]))
    nrhs = bb.shape[-1]
    if rcond is None or rcond < 0:
        rcond = float(_dt.finfo(rd).eps) * max(m, n)  # a Python float: no host scalar on a device
    if k == 0 or math.prod(batch) == 0:
        x = xp.zeros((*batch, n, nrhs), dtype=a.dtype)
        s = xp.zeros((*batch, k), dtype=kit.compute[rd])
        rank = xp.zeros(batch, dtype=kit.storage[_dt.int64])
    else:
        U, s, Vh = la.svd(a, full_matrices=False)
        cutoff = rcond * xp.max(s, axis=-1, keepdims=True)
        keep = s > cutoff
        sinv = xp.where(keep, 1 / xp.where(keep, s, xp.ones_like(s)), xp.zeros_like(s))
        sinv = xp.astype(sinv, a.dtype)
        x = _mH(xp, Vh) @ (sinv[..., None] * (_mH(xp, U) @ bb))
        rank = xp.astype(
            xp.sum(xp.astype(keep, kit.storage[_dt.int64]), axis=-1), kit.storage[_dt.int64]
        )
    full_rank = bool(xp.all(rank == k)) if k else True
    if m > n and driver != "gelsy" and full_rank and k:
        res = a @ x - bb
        mag = xp.real(res * xp.conj(res)) if d.is_complex else res * res
        residuals = _wrap(kit, xp.sum(mag, axis=-2), rd, self)
    else:
        residuals = _empty(kit, rd, self)
    if vector:
        x = x[..., 0]
    rank_t = _wrap(kit, rank, _dt.int64, self) if driver != "gels" else _empty(kit, _dt.int64, self)
    sv = _wrap(kit, s, rd, self) if driver in ("gelsd", "gelss") else _empty(kit, rd, self)
    return _wrap(kit, x, d, self), residuals, rank_t, sv


def _lu_message(qual: str, name: str) -> Any:
    return lambda w, i: (
        f"aten::{qual}: {name}: {w}U[{i},{i}] is zero and using it on lu_solve would result in "
        "a division by zero. If you still want to perform the factorization, consider calling "
        "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
    )


def _check_pivot(kit: Kit, name: str, pivot: bool) -> None:
    if not pivot and kit.device_type == "cpu":
        raise OpError(f"{name}: LU without pivoting is not implemented on the CPU")


def linalg_lu_factor_ex(
    kit: Kit, A: Tensor, *, pivot: bool = True, check_errors: bool = False
) -> tuple[Tensor, Tensor, Tensor]:
    name = "torch.linalg.lu_factor_ex"
    _check_matrix(name, A)
    _check_float(name, A)
    _check_pivot(kit, "linalg.lu_factor", pivot)
    LU, piv, info = lu_xp(kit, kit.as_compute(A, A._dtype), pivot)
    if check_errors:
        _raise_info(kit, info, A._data.ndim > 2, _lu_message("linalg_lu_factor_ex", name), OpError)
    return (
        _wrap(kit, LU, A._dtype, A),
        _wrap(kit, piv, _dt.int32, A),
        _wrap(kit, info, _dt.int32, A),
    )


def _unpack(kit: Kit, LU: Any, m: int, n: int) -> tuple[Any, Any]:
    xp = kit.xp
    k = min(m, n)
    L = xp.tril(LU[..., :, :k], k=-1) + xp.eye(m, k, dtype=LU.dtype)
    U = xp.triu(LU[..., :k, :])
    return L, U


def linalg_lu(kit: Kit, A: Tensor, *, pivot: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    name = "linalg.lu"
    _check_matrix(name, A)
    _check_float(name, A)
    _check_pivot(kit, name, pivot)
    d = A._dtype
    LU, piv, _ = lu_xp(kit, kit.as_compute(A, d), pivot)
    m, n = _shape(A)[-2:]
    L, U = _unpack(kit, LU, m, n)
    if pivot:
        P = _permutation_matrix(kit, _permutation(kit, piv, m), LU.dtype)
    else:
        P = _empty(kit, d, A)._data
    return _wrap(kit, P, d, A), _wrap(kit, L, d, A), _wrap(kit, U, d, A)


def lu_unpack(
    kit: Kit,
    LU_data: Tensor,
    LU_pivots: Tensor,
    unpack_data: bool = True,
    unpack_pivots: bool = True,
) -> tuple[Tensor, Tensor, Tensor]:
    name = "torch.lu_unpack"
    _check_matrix(name, LU_data, what="LU_data")
    if LU_pivots._dtype is not _dt.int32:
        raise OpError(
            f"{name}: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. "
            "Note: this function is intended to be used with the output produced by "
            "torch.linalg.lu_factor"
        )
    d = LU_data._dtype
    m, n = _shape(LU_data)[-2:]
    data = kit.as_compute(LU_data, d)
    if unpack_data:
        L, U = _unpack(kit, data, m, n)
        Lt, Ut = _wrap(kit, L, d, LU_data), _wrap(kit, U, d, LU_data)
    else:
        Lt, Ut = _empty(kit, d, LU_data), _empty(kit, d, LU_data)
    if unpack_pivots:
        perm = _permutation(kit, LU_pivots._data, m)
        P = _wrap(kit, _permutation_matrix(kit, perm, data.dtype), d, LU_data)
    else:
        P = _empty(kit, d, LU_data)
    return P, Lt, Ut


def _apply_rows(kit: Kit, b: Any, perm: Any, inverse: bool) -> Any:
    """``b[perm]`` along the rows (``inverse``: the rows put back where ``perm`` took them)."""
    xp = kit.xp
    m = perm.shape[-1]
    onehot = xp.astype(
        xp.reshape(xp.arange(m), (1,) * (perm.ndim - 1) + (1, m)) == perm[..., :, None], b.dtype
    )  # onehot[i, j] = (j == perm[i]): onehot @ b = b[perm]
    if inverse:
        onehot = xp.matrix_transpose(onehot)
    return onehot @ b


def linalg_lu_solve(
    kit: Kit,
    LU: Tensor,
    pivots: Tensor,
    B: Tensor,
    *,
    left: bool = True,
    adjoint: bool = False,
) -> Tensor:
    name = "linalg.lu_solve"
    _check_matrix(name, LU, square=True, what="LU")
    _check_matrix(name, B, what="B")
    _check_float(name, LU)
    _same_dtype(name, LU, B, "LU", "B")
    if pivots._dtype is not _dt.int32:
        raise OpError(f"{name}: pivots should be a Tensor of scalar type torch.int32")
    n = _shape(LU)[-1]
    sb = _shape(B)
    if (sb[-2] if left else sb[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise OpError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
            f"{sb[-2]}x{sb[-1]})"
        )
    la = _linalg(kit, "linalg_lu_solve", "solve")
    xp = kit.xp
    d = LU._dtype
    lu = kit.as_compute(LU, d)
    b = kit.as_compute(B, d)
    L, U = _unpack(kit, lu, n, n)
    perm = _permutation(kit, pivots._data, n)
    if not left:  # X op(A) = B  <=>  op(A)^H X^H = B^H
        b = _mH(xp, b)
        adjoint = not adjoint
    if not adjoint:  # A = P L U: X = U^-1 L^-1 P^T B
        x = _solve_or_nan(kit, la, U, _solve_or_nan(kit, la, L, _apply_rows(kit, b, perm, False)))
    else:  # A^H = U^H L^H P^T: X = P L^-H U^-H B
        y = _solve_or_nan(kit, la, _mH(xp, L), _solve_or_nan(kit, la, _mH(xp, U), b))
        x = _apply_rows(kit, y, perm, True)
    if not left:
        x = _mH(xp, x)
    return _wrap(kit, x, d, LU)


def linalg_solve_triangular(
    kit: Kit,
    self: Tensor,
    B: Tensor,
    *,
    upper: bool,
    left: bool = True,
    unitriangular: bool = False,
) -> Tensor:
    name = "linalg.solve_triangular"
    _check_matrix(name, self)
    _check_matrix(name, B, what="B")
    _check_float(name, self)
    _same_dtype(name, self, B)
    sa, sb = _shape(self), _shape(B)
    if sa[-1] != sa[-2]:
        raise OpError(
            f"{name}: A must be batches of square matrices, but they are {sa[-2]} by {sa[-1]} "
            "matrices"
        )
    n = sa[-1]
    if (sb[-2] if left else sb[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise OpError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
            f"{sb[-2]}x{sb[-1]})"
        )
    la = _linalg(kit, "linalg_solve_triangular", "solve")
    xp = kit.xp
    d = self._dtype
    t = _triangle(kit, kit.as_compute(self, d), upper, unitriangular)
    b = kit.as_compute(B, d)
    if 0 in b.shape or n == 0:
        shape = (*_broadcast(sa[:-2], sb[:-2]), *sb[-2:])
        return _wrap(kit, xp.zeros(shape, dtype=t.dtype), d, self)
    if left:
        x = _solve_or_nan(kit, la, t, b)
    else:
        x = xp.matrix_transpose(
            _solve_or_nan(kit, la, xp.matrix_transpose(t), xp.matrix_transpose(b))
        )
    return _wrap(kit, x, d, self)


# Pade 13 coefficients and the 1-norm bound below which no scaling is needed (Higham 2005)
_PADE13 = (
    64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
    129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
    40840800.0, 960960.0, 16380.0, 182.0, 1.0,
)  # fmt: skip
_THETA13 = 5.371920351148152


def linalg_matrix_exp(kit: Kit, self: Tensor) -> Tensor:
    """``exp(A)`` by scaling and squaring with the [13/13] Pade approximant (Higham 2005):
    each matrix of the stack scaled by its own power of two."""
    _check_input("linalg.matrix_exp", self, square=True)
    la = _linalg(kit, "linalg_matrix_exp", "solve")
    xp = kit.xp
    d = self._dtype
    a = kit.as_compute(self, d)
    n = a.shape[-1]
    if n == 0 or math.prod(a.shape[:-2]) == 0:
        return _wrap(kit, xp.asarray(a, copy=True), d, self)
    rd = kit.compute[_REAL[d]]
    norm = xp.max(xp.sum(xp.abs(a), axis=-2), axis=-1)  # the 1-norm of each matrix
    with kit.quiet():
        s = xp.ceil(xp.log2(norm / _THETA13))
    s = xp.where(s > 0, s, xp.zeros_like(s))
    s = xp.where(xp.isfinite(s), s, xp.zeros_like(s))
    si = xp.astype(s, xp.int64)
    scale = xp.astype(xp.pow(xp.asarray(2.0, dtype=rd), -xp.astype(si, rd)), a.dtype)
    a = a * scale[..., None, None]
    eye = xp.eye(n, dtype=a.dtype)
    b = _PADE13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (
        a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
    )
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = la.solve(v - u, v + u)
    squarings = int(xp.max(si))
    for j in range(squarings):
        r = xp.where((si > j)[..., None, None], r @ r, r)
    return _wrap(kit, r, d, self)


def linalg_cross(kit: Kit, self: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    name = "linalg.cross"
    sa, sb = _shape(self), _shape(other)
    if len(sa) != len(sb):
        raise OpError(f"{name}: inputs must have the same number of dimensions.")
    if self._dtype is not other._dtype:
        raise OpError(
            f"expected scalar type {torch_name(self._dtype)} but found {torch_name(other._dtype)}"
        )
    nd = len(sa)
    if not -nd <= dim < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    ax = dim % nd
    if sa[ax] != 3 or sb[ax] != 3:
        raise OpError(
            f"{name}: inputs dimension {dim} must have length 3. Got {sa[ax]} and {sb[ax]}"
        )
    shape = _broadcast(sa, sb)
    xp = kit.xp
    d = self._dtype
    a = xp.moveaxis(xp.broadcast_to(kit.as_compute(self, d), shape), ax, -1)
    b = xp.moveaxis(xp.broadcast_to(kit.as_compute(other, d), shape), ax, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    r = xp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return _wrap(kit, xp.moveaxis(r, -1, ax), d, self)


def geqrf(kit: Kit, self: Tensor) -> tuple[Tensor, Tensor]:
    """LAPACK's geqrf: the Householder reflectors below R's diagonal and their scales, from
    the namespace's ``qr(mode="raw")`` (numpy's; others: not supported)."""
    name = "geqrf"
    _check_matrix(name, self)
    _check_float(name, self)
    la = _linalg(kit, "geqrf", "qr")
    xp = kit.xp
    d = self._dtype
    a = kit.as_compute(self, d)
    *batch, m, n = a.shape
    if min(m, n) == 0 or math.prod(batch) == 0:
        return _wrap(kit, xp.asarray(a, copy=True), d, self), _wrap(
            kit, xp.zeros((*batch, min(m, n)), dtype=a.dtype), d, self
        )
    own = getattr(xp, "geqrf", None)  # a namespace with LAPACK's geqrf itself (torch's)
    if own is not None:
        h, tau = own(a)
        return _wrap(kit, h, d, self), _wrap(kit, tau, d, self)
    try:
        h, tau = la.qr(a, mode="raw")
    except (RuntimeError, TypeError, ValueError) as e:
        raise NotImplementedError(
            f"aten::geqrf: not supported by the {kit.key_name} backend: its linalg.qr has no "
            f"mode='raw' ({e})"
        ) from e
    return _wrap(kit, xp.matrix_transpose(h), d, self), _wrap(kit, tau, d, self)


# --- LDL (scipy's LAPACK wrappers) ------------------------------------------------------------


def _lapack(kit: Kit, qual: str) -> Any:
    if getattr(kit.xp, "__name__", "") != "numpy":
        raise NotImplementedError(
            f"aten::{qual}: not supported by the {kit.key_name} backend: the LDL "
            "factorization needs LAPACK's sytrf through scipy, on numpy arrays"
        )
    try:
        from scipy.linalg import lapack  # type: ignore[import-untyped]
    except ImportError:
        raise NotImplementedError(
            f"aten::{qual}: not supported by the {kit.key_name} backend without scipy: the "
            "LDL factorization needs LAPACK's sytrf (pip install scipy)"
        ) from None
    return lapack


def linalg_ldl_factor_ex(
    kit: Kit, self: Tensor, *, hermitian: bool = False, check_errors: bool = False
) -> tuple[Tensor, Tensor, Tensor]:
    name = "torch.linalg.ldl_factor_ex"
    _check_input(name, self, square=True)
    lapack = _lapack(kit, "linalg_ldl_factor_ex")
    xp = kit.xp
    d = self._dtype
    a = kit.as_compute(self, d)
    *batch, n, _ = a.shape
    flat = xp.reshape(a, (-1, n, n))
    lds, pivs, infos = [], [], []
    herm = hermitian and d.is_complex
    (fn,) = lapack.get_lapack_funcs(("hetrf" if herm else "sytrf",), (flat,))
    for i in range(flat.shape[0]):
        ld, ipiv, info = fn(flat[i], lower=1)
        lds.append(xp.tril(ld))
        pivs.append(ipiv)
        infos.append(info)
    i32 = kit.storage[_dt.int32]
    LD = xp.reshape(xp.stack(lds), a.shape) if lds else xp.asarray(a, copy=True)
    piv = (
        xp.reshape(xp.astype(xp.stack(pivs), i32), (*batch, n))
        if pivs
        else xp.zeros((*batch, n), dtype=i32)
    )
    info = xp.reshape(xp.asarray(infos, dtype=i32), tuple(batch))
    if check_errors:
        _raise_info(
            kit,
            info,
            len(batch) > 0,
            lambda w, i: (
                f"aten::linalg_ldl_factor_ex: {name}: {w}The factorization could not be "
                f"completed because the input is singular (the diagonal element {i} is zero)."
            ),
        )
    return (
        _wrap(kit, LD, d, self),
        _wrap(kit, piv, _dt.int32, self),
        _wrap(kit, info, _dt.int32, self),
    )


def linalg_ldl_solve(
    kit: Kit, LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False
) -> Tensor:
    name = "torch.linalg.ldl_solve"
    _check_matrix(name, LD, square=True, what="LD")
    _check_matrix(name, B, what="B")
    _same_dtype(name, LD, B, "LD", "B")
    lapack = _lapack(kit, "linalg_ldl_solve")
    xp = kit.xp
    d = LD._dtype
    ld = kit.as_compute(LD, d)
    b = kit.as_compute(B, d)
    shape = (*_broadcast(ld.shape[:-2], b.shape[:-2]), *b.shape[-2:])
    n = ld.shape[-1]
    lds = xp.reshape(xp.broadcast_to(ld, (*shape[:-2], n, n)), (-1, n, n))
    piv = xp.reshape(xp.broadcast_to(pivots._data, (*shape[:-2], n)), (-1, n))
    bs = xp.reshape(xp.broadcast_to(b, shape), (-1, *shape[-2:]))
    herm = hermitian and d.is_complex
    (fn,) = lapack.get_lapack_funcs(("hetrs" if herm else "sytrs",), (lds,))
    out = [fn(lds[i], piv[i], bs[i], lower=1)[0] for i in range(lds.shape[0])]
    x = xp.reshape(xp.stack(out), shape) if out else xp.zeros(shape, dtype=ld.dtype)
    return _wrap(kit, x, d, LD)


def build(kit: Kit) -> Kernels:
    return {
        name: bind(kit, fn)
        for name, fn in (
            ("linalg_cholesky_ex", linalg_cholesky_ex),
            ("linalg_inv_ex", linalg_inv_ex),
            ("linalg_solve_ex", linalg_solve_ex),
            ("linalg_det", linalg_det),
            ("linalg_slogdet", linalg_slogdet),
            ("_linalg_svd", _linalg_svd),
            ("_linalg_eigh", _linalg_eigh),
            ("linalg_eig", linalg_eig),
            ("linalg_qr", linalg_qr),
            ("linalg_lstsq", linalg_lstsq),
            ("linalg_lu_factor_ex", linalg_lu_factor_ex),
            ("linalg_lu", linalg_lu),
            ("lu_unpack", lu_unpack),
            ("linalg_lu_solve", linalg_lu_solve),
            ("linalg_solve_triangular", linalg_solve_triangular),
            ("linalg_matrix_exp", linalg_matrix_exp),
            ("linalg_cross", linalg_cross),
            ("geqrf", geqrf),
            ("linalg_ldl_factor_ex", linalg_ldl_factor_ex),
            ("linalg_ldl_solve", linalg_ldl_solve),
        )
    }
