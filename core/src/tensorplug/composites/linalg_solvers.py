"""The ``linalg`` family of the composites, second part: the functions of ``torch.linalg``
that PyTorch writes in terms of its factorizations (``linalg.inv`` of ``inv_ex``, ``svdvals``
of ``_linalg_svd``, norms, ranks, pseudo-inverses, tensor solves, ...), and the top-level
names torch keeps for them (``det``, ``inverse``, ``svd`` with its ``V``, ``qr(some=)``, ...).

Each ``*_ex`` operator returns ``info`` and the function without ``_ex`` raises for it: the
kernels raise when ``check_errors=True`` (``tensorplug.linalg.LinAlgError``, PyTorch's
messages), so these composites pass ``check_errors=True``.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as _dt
from .._op_errors import torch_name
from ..ops import ops

aten = ops.aten


def _fail(qual: str, msg: str) -> RuntimeError:
    return RuntimeError(f"aten::{qual}: {msg}")


def _mH(x: Any) -> Any:
    """The conjugate transpose of the last two dims (the transpose of a real matrix)."""
    xt = aten.transpose.int(x, -2, -1)
    if x.dtype.is_complex:
        return aten.conj.default(xt)
    return xt


def _eye_like(x: Any, n: int) -> Any:
    return aten.eye.default(n, dtype=x.dtype, device=x.device)


def _real_dtype(d: Any) -> Any:
    return {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}.get(d, d)


def _check_matrix(qual: str, name: str, x: Any, *, square: bool = False) -> None:
    if x.ndim < 2:
        raise _fail(qual, f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and x.shape[-1] != x.shape[-2]:
        raise _fail(
            qual,
            f"{name}: A must be batches of square matrices, but they are {x.shape[-2]} by "
            f"{x.shape[-1]} matrices",
        )


def _check_float(qual: str, name: str, x: Any, *, low: bool = True) -> None:
    if x.dtype.kind not in "fc":
        raise _fail(
            qual,
            f"{name}: Expected a floating point or complex tensor as input. Got "
            f"{torch_name(x.dtype)}",
        )
    if low and x.dtype in (_dt.float16, _dt.bfloat16):
        raise _fail(qual, f"{name}: Low precision dtypes not supported. Got {torch_name(x.dtype)}")


# --- the functions over their *_ex operators --------------------------------------------------


def linalg_cholesky(self: Any, *, upper: bool = False) -> Any:
    return aten.linalg_cholesky_ex.default(self, upper=upper, check_errors=True)[0]


def linalg_inv(A: Any) -> Any:
    return aten.linalg_inv_ex.default(A, check_errors=True)[0]


def linalg_solve(A: Any, B: Any, *, left: bool = True) -> Any:
    return aten.linalg_solve_ex.default(A, B, left=left, check_errors=True)[0]


def linalg_lu_factor(A: Any, *, pivot: bool = True) -> Any:
    LU, pivots, _ = aten.linalg_lu_factor_ex.default(A, pivot=pivot, check_errors=True)
    return LU, pivots


def linalg_ldl_factor(self: Any, *, hermitian: bool = False) -> Any:
    LD, pivots, _ = aten.linalg_ldl_factor_ex.default(self, hermitian=hermitian, check_errors=True)
    return LD, pivots


def lu_with_info(self: Any, pivot: bool = True, check_errors: bool = True) -> Any:
    return aten.linalg_lu_factor_ex.default(self, pivot=pivot, check_errors=check_errors)


# --- spectra ----------------------------------------------------------------------------------


def linalg_svd(A: Any, full_matrices: bool = True, *, driver: str | None = None) -> Any:
    return aten._linalg_svd.default(A, full_matrices, True, driver=driver)


def linalg_svdvals(A: Any, *, driver: str | None = None) -> Any:
    # the singular vectors only where a gradient will need them (PyTorch's rule)
    return aten._linalg_svd.default(A, False, bool(A.requires_grad), driver=driver)[1]


def linalg_eigh(self: Any, UPLO: str = "L") -> Any:
    return aten._linalg_eigh.default(self, UPLO, True)


def linalg_eigvalsh(self: Any, UPLO: str = "L") -> Any:
    return aten._linalg_eigh.default(self, UPLO, bool(self.requires_grad))[0]


def linalg_eigvals(self: Any) -> Any:
    return aten.linalg_eig.default(self)[0]


# --- products, powers, householder ------------------------------------------------------------


def linalg_matrix_power(self: Any, n: int) -> Any:
    q = "linalg_matrix_power"
    _check_matrix(q, "linalg.matrix_power", self, square=True)
    if n == 0:
        eye = _eye_like(self, self.shape[-1])
        return aten.clone.default(aten.expand.default(eye, list(self.shape)))
    if n < 0:
        self = linalg_inv(self)
        n = -n
    result: Any = None
    base = self
    while n:  # binary powering, as PyTorch's
        if n & 1:
            result = base if result is None else aten.matmul.default(result, base)
        n >>= 1
        if n:
            base = aten.matmul.default(base, base)
    return result


def linalg_multi_dot(tensors: Any) -> Any:
    q = "linalg_multi_dot"
    n = len(tensors)
    if n < 2:
        raise _fail(q, f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        want = "1D or 2D" if i in (0, n - 1) else "2D"
        ok = t.ndim == 2 or (t.ndim == 1 and i in (0, n - 1))
        if not ok:
            raise _fail(q, f"multi_dot(): tensor {i} must be {want} but got {t.ndim}D")
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dtype:
            raise _fail(
                q,
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{torch_name(dtype)} and tensor {tensors.index(t)} {torch_name(t.dtype)}",
            )
    mats = list(tensors)
    first_vec, last_vec = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_vec:
        mats[0] = aten.unsqueeze.default(mats[0], 0)
    if last_vec:
        mats[-1] = aten.unsqueeze.default(mats[-1], -1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise _fail(
                q,
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                f"{list(tensors[i + 1].shape)} cannot be multiplied",
            )
    out = _chain(mats)
    if first_vec and last_vec:
        return aten.reshape.default(out, [])
    if first_vec:
        return aten.squeeze.dim(out, 0)
    if last_vec:
        return aten.squeeze.dim(out, -1)
    return out


def _chain(mats: list[Any]) -> Any:
    """The product of ``mats`` in the order of fewest multiplications (dynamic programming,
    the matrix-chain order PyTorch's multi_dot uses)."""
    n = len(mats)
    if n == 2:
        return aten.mm.default(mats[0], mats[1])
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf  # type: ignore[call-overload]
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j] = c
                    split[i][j] = k

    def product(i: int, j: int) -> Any:
        if i == j:
            return mats[i]
        k = split[i][j]
        return aten.mm.default(product(i, k), product(k + 1, j))

    return product(0, n - 1)


def chain_matmul(matrices: Any) -> Any:
    if len(matrices) == 1:
        return aten.clone.default(matrices[0])
    for m in matrices:
        if m.ndim != 2:
            raise _fail("chain_matmul", f"Tensor dimension is {m.ndim}, expected 2 instead.")
    return linalg_multi_dot(matrices)


def linalg_householder_product(input: Any, tau: Any) -> Any:
    """``H_1 H_2 ... H_k`` restricted to the first ``n`` columns, ``H_i = I - tau_i v_i v_i^H``
    with ``v_i`` the ``i``-th column of ``input`` below the diagonal and 1 on it (LAPACK's
    orgqr), built from products so that its gradient is autograd's."""
    q = "linalg_householder_product"
    name = "torch.linalg.householder_product"
    if input.ndim < 2:
        raise _fail(q, f"{name}: input must have at least 2 dimensions.")
    m, n = input.shape[-2], input.shape[-1]
    if m < n:
        raise _fail(q, f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.ndim != input.ndim - 1:
        raise _fail(
            q, f"{name}: input.dim() - tau.dim() must be equal to 1 but got {input.ndim - tau.ndim}"
        )
    k = tau.shape[-1]
    if k > n:
        raise _fail(q, f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    _check_float(q, "linalg.householder_product", input)
    if tau.dtype is not input.dtype:
        raise _fail(
            q,
            f"{name}: tau dtype {torch_name(tau.dtype)} does not match input dtype "
            f"{torch_name(input.dtype)}",
        )
    eye = _eye_like(input, m)
    below = aten.tril.default(input, -1)
    unit = aten.add.Tensor(below, aten.narrow.default(eye, -1, 0, n))  # the v_i as columns
    q_mat = aten.expand.default(eye, [*input.shape[:-2], m, m])
    for i in range(k):
        v = aten.narrow.default(unit, -1, i, 1)  # (..., m, 1)
        t = aten.unsqueeze.default(aten.select.int(tau, -1, i), -1)
        t = aten.unsqueeze.default(t, -1)
        # Q H_i = Q - tau_i (Q v_i) v_i^H
        qv = aten.matmul.default(q_mat, v)
        q_mat = aten.sub.Tensor(q_mat, aten.mul.Tensor(aten.matmul.default(qv, _mH(v)), t))
    return aten.narrow.default(q_mat, -1, 0, n)


def orgqr(self: Any, input2: Any) -> Any:
    return linalg_householder_product(self, input2)


def ormqr(self: Any, input2: Any, input3: Any, left: bool = True, transpose: bool = False) -> Any:
    """``op(Q) @ C`` (or ``C @ op(Q)``) with ``Q`` the full ``m x m`` product of the
    reflectors of ``self`` and ``input2`` (extra reflectors with ``tau = 0`` are identities)."""
    m, n = self.shape[-2], self.shape[-1]
    if m > n:
        pad = aten.zeros.default([*self.shape[:-1], m - n], dtype=self.dtype, device=self.device)
        self = aten.cat.default([self, pad], -1)
    k = input2.shape[-1]
    if k < m:
        tpad = aten.zeros.default(
            [*input2.shape[:-1], m - k], dtype=input2.dtype, device=input2.device
        )
        input2 = aten.cat.default([input2, tpad], -1)
    q_full = linalg_householder_product(aten.narrow.default(self, -1, 0, m), input2)
    if transpose:
        q_full = _mH(q_full)
    return aten.matmul.default(q_full, input3) if left else aten.matmul.default(input3, q_full)


def linalg_vecdot(x: Any, y: Any, *, dim: int = -1) -> Any:
    if x.dtype is not y.dtype:
        raise _fail(
            "linalg_vecdot",
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{torch_name(x.dtype)} and y of type {torch_name(y.dtype)} instead",
        )
    xc = aten.conj.default(x) if x.dtype.is_complex else x
    return aten.sum.dim_IntList(aten.mul.Tensor(xc, y), [dim])


def vdot(self: Any, other: Any) -> Any:
    if self.ndim != 1 or other.ndim != 1:
        raise _fail(
            "vdot",
            f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors",
        )
    return linalg_vecdot(self, other)


def linalg_diagonal(A: Any, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    return aten.diagonal.default(A, offset, dim1, dim2)


def linalg_vander(x: Any, *, N: int | None = None) -> Any:
    q = "linalg_vander"
    if x.ndim < 1:
        raise _fail(q, "linalg.vander: x must have at least one dimension.")
    n = x.shape[-1] if N is None else N
    if n <= 1 and N is not None and N < 2:
        raise _fail(q, "N must be greater than 1.")
    if n == 0:
        return aten.zeros.default([*x.shape, 0], dtype=x.dtype, device=x.device)
    # x^0 = 1, then the running products (cumprod of x repeated n-1 times), as PyTorch
    ones = aten.ones.default([*x.shape, 1], dtype=x.dtype, device=x.device)
    if n == 1:
        return ones
    reps = aten.expand.default(aten.unsqueeze.default(x, -1), [*x.shape, n - 1])
    return aten.cat.default([ones, aten.cumprod.default(reps, -1)], -1)


# --- norms, conditioning, rank ----------------------------------------------------------------


def _matrix_norm(self: Any, ord: Any, dim: Any, keepdim: bool, dtype: Any, qual: str) -> Any:
    name = "linalg.matrix_norm"
    if self.ndim < 2:
        raise _fail(qual, f"{name}: The input tensor A must have at least 2 dimensions.")
    if len(dim) != 2:
        raise _fail(qual, f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = (d % self.ndim for d in dim)
    if d0 == d1:
        raise _fail(qual, f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    _check_float(qual, name, self, low=False)  # the SVD orders refuse half precision
    x = self if dtype is None else aten._to_copy.default(self, dtype=dtype)
    if isinstance(ord, str):
        if ord == "fro":
            return aten.linalg_vector_norm.default(x, 2, [d0, d1], keepdim)
        if ord == "nuc":
            return _svd_norm(x, d0, d1, keepdim, "sum")
        raise _fail(qual, f"{name}: Order {ord} not supported.")
    if ord in (2, -2):
        return _svd_norm(x, d0, d1, keepdim, "amax" if ord == 2 else "amin")
    if ord in (1, -1, math.inf, -math.inf):
        # 1: the largest column sum (over d0), inf: the largest row sum (over d1)
        summed, other = (d0, d1) if abs(ord) == 1 else (d1, d0)
        sums = aten.sum.dim_IntList(aten.abs.default(x), [summed], True)
        red = aten.amax.default if ord > 0 else aten.amin.default
        out = red(sums, [other], True)
        if not keepdim:
            for d in sorted((d0, d1), reverse=True):
                out = aten.squeeze.dim(out, d)
        return out
    raise _fail(qual, f"{name}: Order {ord} not supported.")


def _svd_norm(x: Any, d0: int, d1: int, keepdim: bool, how: str) -> Any:
    moved = _move_pair(x, d0, d1)
    s = linalg_svdvals(moved)
    if how == "sum":
        out = aten.sum.dim_IntList(s, [-1])
    elif how == "amax":
        out = aten.amax.default(s, [-1])
    else:
        out = aten.amin.default(s, [-1])
    if keepdim:
        for d in sorted((d0, d1)):
            out = aten.unsqueeze.default(out, d)
    return out


def _move_pair(x: Any, d0: int, d1: int) -> Any:
    rest = [d for d in range(x.ndim) if d not in (d0, d1)]
    return aten.permute.default(x, [*rest, d0, d1])


def linalg_matrix_norm(
    self: Any, ord: Any, dim: Any = (-2, -1), keepdim: bool = False, *, dtype: Any = None
) -> Any:
    return _matrix_norm(self, ord, list(dim), keepdim, dtype, "linalg_matrix_norm")


def linalg_matrix_norm_str_ord(
    self: Any, ord: str = "fro", dim: Any = (-2, -1), keepdim: bool = False, *, dtype: Any = None
) -> Any:
    return _matrix_norm(self, ord, list(dim), keepdim, dtype, "linalg_matrix_norm.str_ord")


def linalg_norm(
    self: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Any:
    q = "linalg_norm"
    if dim is not None:
        dim = [dim] if isinstance(dim, int) else list(dim)
    if ord is not None and dim is None and self.ndim not in (1, 2):
        raise _fail(
            q,
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {self.ndim}D.",
        )
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and self.ndim == 2):
        return _matrix_norm(self, ord, dim or [-2, -1], keepdim, dtype, q)
    if ord is None:
        ord = 2
    return aten.linalg_vector_norm.default(self, ord, dim, keepdim, dtype=dtype)


def linalg_norm_ord_str(
    self: Any, ord: str, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Any:
    q = "linalg_norm.ord_str"
    if dim is not None:
        dim = [dim] if isinstance(dim, int) else list(dim)
    if (dim is None and self.ndim != 2) or (dim is not None and len(dim) != 2):
        raise _fail(
            q,
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {self.ndim}D.",
        )
    return _matrix_norm(self, ord, dim or [-2, -1], keepdim, dtype, q)


def _cond(self: Any, p: Any, qual: str) -> Any:
    name = "linalg.cond"
    if self.ndim < 2:
        raise _fail(qual, f"{name}: The input tensor A must have at least 2 dimensions.")
    _check_float(qual, name, self)
    if p is None or p in (2, -2):
        s = linalg_svdvals(self)
        big, small = aten.amax.default(s, [-1]), aten.amin.default(s, [-1])
        return aten.div.Tensor(big, small) if p != -2 else aten.div.Tensor(small, big)
    if self.shape[-1] != self.shape[-2]:
        raise _fail(
            qual,
            f"{name}: A must be batches of square matrices, but they are {self.shape[-2]} by "
            f"{self.shape[-1]} matrices",
        )
    inv, _ = aten.linalg_inv_ex.default(self)
    return aten.mul.Tensor(
        _matrix_norm(self, p, [-2, -1], False, None, qual),
        _matrix_norm(inv, p, [-2, -1], False, None, qual),
    )


def linalg_cond(self: Any, p: Any = None) -> Any:
    return _cond(self, p, "linalg_cond")


def linalg_cond_p_str(self: Any, p: str) -> Any:
    return _cond(self, p, "linalg_cond.p_str")


def _tolerance(s: Any, atol: Any, rtol: Any, A: Any) -> Any:
    """PyTorch's ``max(atol, rtol * sigma_max)``, ``rtol`` defaulting to ``eps * max(m, n)``
    when neither is given and to 0 when only ``atol`` is."""
    smax = (
        aten.amax.default(s, [-1], True)
        if s.shape[-1]
        else aten.zeros_like.default(aten.narrow.default(aten.unsqueeze.default(s, -1), -2, 0, 0))
    )
    if rtol is None:
        eps = _dt.finfo(_real_dtype(A.dtype)).eps
        rtol = 0.0 if atol is not None else eps * max(A.shape[-1], A.shape[-2])
    atol = 0.0 if atol is None else atol
    rt = rtol if not hasattr(rtol, "ndim") else aten.unsqueeze.default(rtol, -1)
    at = atol if not hasattr(atol, "ndim") else aten.unsqueeze.default(atol, -1)
    scaled = aten.mul.Tensor(smax, rt) if hasattr(rt, "ndim") else aten.mul.Scalar(smax, rt)
    if hasattr(at, "ndim"):
        return aten.maximum.default(scaled, aten._to_copy.default(at, dtype=scaled.dtype))
    return aten.clamp_min.default(scaled, at)


def _spectrum(A: Any, hermitian: bool) -> Any:
    if hermitian:
        return aten.abs.default(aten._linalg_eigh.default(A, "L", False)[0])
    return aten._linalg_svd.default(A, False, False)[1]


def _rank(A: Any, atol: Any, rtol: Any, hermitian: bool, qual: str) -> Any:
    name = "torch.linalg.matrix_rank"
    if A.ndim < 2:
        raise _fail(qual, f"{name}: The input tensor input must have at least 2 dimensions.")
    _check_float(qual, "linalg.matrix_rank", A)
    s = _spectrum(A, hermitian)
    tol = _tolerance(s, atol, rtol, A)
    return aten.sum.dim_IntList(aten.gt.Tensor(s, tol), [-1])


def linalg_matrix_rank_atol_rtol_tensor(
    input: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False
) -> Any:
    return _rank(input, atol, rtol, hermitian, "linalg_matrix_rank.atol_rtol_tensor")


def linalg_matrix_rank_atol_rtol_float(
    self: Any, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False
) -> Any:
    return _rank(self, atol, rtol, hermitian, "linalg_matrix_rank.atol_rtol_float")


def linalg_matrix_rank(self: Any, tol: float, hermitian: bool = False) -> Any:
    return _rank(self, tol, 0.0, hermitian, "linalg_matrix_rank")


def linalg_matrix_rank_tol_tensor(input: Any, tol: Any, hermitian: bool = False) -> Any:
    return _rank(input, tol, 0.0, hermitian, "linalg_matrix_rank.tol_tensor")


def _pinv(A: Any, atol: Any, rtol: Any, hermitian: bool, qual: str) -> Any:
    """The pseudo-inverse from the SVD (or, for ``hermitian``, the eigendecomposition), the
    singular values at most the tolerance dropped; differentiable through the factorization
    where the singular values are distinct."""
    if A.ndim < 2:
        raise _fail(qual, "linalg.pinv: The input tensor A must have at least 2 dimensions.")
    _check_float(qual, "linalg.pinv", A)
    if A.numel() == 0:
        shape = [*A.shape[:-2], A.shape[-1], A.shape[-2]]
        return aten.zeros.default(shape, dtype=A.dtype, device=A.device)
    if hermitian:
        w, V = aten._linalg_eigh.default(A, "L", True)
        s = aten.abs.default(w)
        tol = _tolerance(s, atol, rtol, A)
        keep = aten.gt.Tensor(s, tol)
        inv = aten.where.self(keep, aten.reciprocal.default(w), aten.zeros_like.default(w))
        inv = aten._to_copy.default(inv, dtype=A.dtype) if A.dtype.is_complex else inv
        return aten.matmul.default(aten.mul.Tensor(V, aten.unsqueeze.default(inv, -2)), _mH(V))
    U, S, Vh = aten._linalg_svd.default(A, False, True)
    tol = _tolerance(S, atol, rtol, A)
    keep = aten.gt.Tensor(S, tol)
    inv = aten.where.self(keep, aten.reciprocal.default(S), aten.zeros_like.default(S))
    inv = aten._to_copy.default(inv, dtype=A.dtype) if A.dtype.is_complex else inv
    return aten.matmul.default(aten.mul.Tensor(_mH(Vh), aten.unsqueeze.default(inv, -2)), _mH(U))


def linalg_pinv_atol_rtol_tensor(
    self: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False
) -> Any:
    return _pinv(self, atol, rtol, hermitian, "linalg_pinv.atol_rtol_tensor")


def linalg_pinv_atol_rtol_float(
    self: Any, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False
) -> Any:
    return _pinv(self, atol, rtol, hermitian, "linalg_pinv.atol_rtol_float")


def linalg_pinv(self: Any, rcond: float, hermitian: bool = False) -> Any:
    return _pinv(self, 0.0, rcond, hermitian, "linalg_pinv")


def linalg_pinv_rcond_tensor(self: Any, rcond: Any, hermitian: bool = False) -> Any:
    return _pinv(self, 0.0, rcond, hermitian, "linalg_pinv.rcond_tensor")


def pinverse(self: Any, rcond: float = 1e-15) -> Any:
    return _pinv(self, 0.0, rcond, False, "pinverse")


# --- tensor solves ----------------------------------------------------------------------------


def linalg_tensorinv(self: Any, ind: int = 2) -> Any:
    q = "linalg_tensorinv"
    if ind <= 0:
        raise _fail(q, f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape = list(self.shape[ind:]) + list(self.shape[:ind])
    rows = math.prod(self.shape[:ind])
    cols = math.prod(self.shape[ind:])
    if rows != cols:
        raise _fail(
            q,
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {cols} != {rows}",
        )
    inv = linalg_inv(aten.reshape.default(self, [rows, cols]))
    return aten.reshape.default(inv, out_shape)


def linalg_tensorsolve(self: Any, other: Any, dims: Any = None) -> Any:
    q = "linalg_tensorsolve"
    if dims is not None:
        nd = self.ndim
        src = [d % nd for d in dims]
        dst = list(range(nd - len(src), nd))
        self = aten.movedim.intlist(self, src, dst)
    result_shape = list(self.shape[other.ndim :])
    rows = other.numel()
    cols = math.prod(result_shape)
    if rows != cols:
        raise _fail(
            q,
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {cols} != {rows}",
        )
    x = linalg_solve(aten.reshape.default(self, [rows, cols]), aten.reshape.default(other, [rows]))
    return aten.reshape.default(x, result_shape)


# --- the top-level names ----------------------------------------------------------------------


def det(self: Any) -> Any:
    return aten.linalg_det.default(self)


def slogdet(self: Any) -> Any:
    return aten.linalg_slogdet.default(self)


def logdet(self: Any) -> Any:
    """``log(det(A))``: nan for a negative determinant, -inf for a singular matrix (real
    inputs); ``log(sign) + logabsdet`` for complex ones."""
    sign, logabs = aten.linalg_slogdet.default(self)
    if self.dtype.is_complex:
        return aten.add.Tensor(aten.log.default(sign), logabs)
    nan = aten.full_like.default(logabs, math.nan)
    return aten.where.self(aten.lt.Scalar(sign, 0), nan, logabs)


def inverse(self: Any) -> Any:
    return linalg_inv(self)


def cholesky(self: Any, upper: bool = False) -> Any:
    return aten.linalg_cholesky_ex.default(self, upper=upper, check_errors=True)[0]


def cholesky_solve(self: Any, input2: Any, upper: bool = False) -> Any:
    """``A^{-1} B`` for ``A = L L^H`` (``U^H U`` with ``upper``): two triangular solves."""
    q = "cholesky_solve"
    if self.ndim < 2 or input2.ndim < 2:
        raise _fail(
            q, f"b should have at least 2 dimensions, but has {self.ndim} dimensions instead"
        )
    if self.dtype is not input2.dtype:
        raise _fail(
            q,
            f"Expected b and A to have the same dtype, but found b of type "
            f"{torch_name(self.dtype)} and A of type {torch_name(input2.dtype)} instead.",
        )
    L = _mH(input2) if upper else input2
    y = aten.linalg_solve_triangular.default(L, self, upper=False)
    return aten.linalg_solve_triangular.default(_mH(L), y, upper=True)


def cholesky_inverse(self: Any, upper: bool = False) -> Any:
    _check_matrix("cholesky_inverse", "cholesky_inverse", self, square=True)
    eye = aten.expand.default(_eye_like(self, self.shape[-1]), list(self.shape))
    return cholesky_solve(eye, self, upper)


def svd(self: Any, some: bool = True, compute_uv: bool = True) -> Any:
    """torch.svd: ``V`` rather than ``Vh``; with ``compute_uv=False``, zero ``U`` and ``V``
    of the full shapes (PyTorch's legacy behaviour)."""
    _check_matrix("svd", "linalg.svd", self)
    if compute_uv:
        U, S, Vh = aten._linalg_svd.default(self, not some, True)
        return U, S, _mH(Vh)
    S = aten._linalg_svd.default(self, False, False)[1]
    m, n = self.shape[-2], self.shape[-1]
    batch = list(self.shape[:-2])
    U = aten.zeros.default([*batch, m, m], dtype=self.dtype, device=self.device)
    V = aten.zeros.default([*batch, n, n], dtype=self.dtype, device=self.device)
    return U, S, V


def qr(self: Any, some: bool = True) -> Any:
    return aten.linalg_qr.default(self, "reduced" if some else "complete")


def matrix_power(self: Any, n: int) -> Any:
    return linalg_matrix_power(self, n)


def matrix_exp(self: Any) -> Any:
    return aten.linalg_matrix_exp.default(self)


def triangular_solve(
    self: Any, A: Any, upper: bool = True, transpose: bool = False, unitriangular: bool = False
) -> Any:
    """torch.triangular_solve: ``op(A) X = b`` with ``b = self``; returns ``(X, A.clone())``."""
    q = "triangular_solve"
    if self.ndim < 2:
        raise _fail(
            q,
            f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {self.ndim} dimensions instead",
        )
    if A.ndim < 2:
        raise _fail(
            q,
            f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {A.ndim} dimensions instead",
        )
    M = aten.transpose.int(A, -2, -1) if transpose else A
    up = upper != transpose
    X = aten.linalg_solve_triangular.default(M, self, upper=up, unitriangular=unitriangular)
    return X, aten.clone.default(A)


def lu_solve(self: Any, LU_data: Any, LU_pivots: Any) -> Any:
    return aten.linalg_lu_solve.default(LU_data, LU_pivots, self)
