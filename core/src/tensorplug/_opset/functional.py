"""Public functions PyTorch writes in Python over its operators (``torch/functional.py``,
``torch/_lowrank.py``, ``torch/_lobpcg.py``), written here over ``ops.aten``:

* ``unravel_index(indices, shape)``: flat indices as one index tensor per dim of ``shape``;
* ``svd_lowrank(A, q, niter, M)`` and ``pca_lowrank(A, q, center, niter)``: Halko, Martinsson
  and Tropp's randomized range finder (Algorithm 5.1 of their 2009 paper) and an SVD of the
  projection, as PyTorch's;
* ``lobpcg(A, k, B, X, n, ..., largest, tol, niter)``: Knyazev's locally optimal block
  preconditioned conjugate gradient for the ``k`` extreme eigenpairs of a symmetric (``A``,
  ``B``) pencil, by Rayleigh-Ritz on the current block, its residuals and its last step.

Usage::

    rows, cols = tp.unravel_index(tp.tensor([5, 7]), (3, 4))
    U, S, V = tp.svd_lowrank(A, q=4)
    E, X = tp.lobpcg(A, k=2)
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any

from .. import dtypes as _dt
from ..ops import ops
from ..tensor import Tensor

__all__ = ["lobpcg", "pca_lowrank", "svd_lowrank", "unravel_index"]

aten = ops.aten


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates in ``shape`` of each flat index of ``indices`` (negative ones and ones
    past the end wrap, as PyTorch's floor division and remainder make them)."""
    d = indices.dtype
    if d.is_floating_point or d.is_complex or d is _dt.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {d}")
    if isinstance(shape, int):
        dims = [shape]
    elif isinstance(shape, Sequence):
        dims = list(shape)
        for n in dims:
            if not isinstance(n, int):
                raise TypeError(
                    f"expected 'shape' sequence to only contain ints, but got {type(n)}"
                )
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if any(n < 0 for n in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(dims)}")
    coefs = list(reversed(list(itertools.accumulate(reversed([*dims[1:], 1]), operator.mul))))
    idx = aten._to_copy.default(indices, dtype=_dt.int64)
    out = []
    for c, n in zip(coefs, dims, strict=True):
        step = aten.div.Tensor_mode(idx, _long(c, idx), rounding_mode="floor")
        out.append(aten.remainder.Scalar(step, n))
    return tuple(out)


def _long(v: int, like: Tensor) -> Any:
    return aten.full.default([], v, dtype=_dt.int64, device=like.device)


# --- randomized low-rank factorizations (torch/_lowrank.py) ---------------------------------------


def _mh(x: Tensor) -> Any:
    t = aten.transpose.int(x, -2, -1)
    return aten.conj.default(t) if x.dtype.is_complex else t


def _float_dtype(a: Tensor) -> Any:
    return a.dtype if a.dtype.is_floating_point or a.dtype.is_complex else _dt.float32


def _qr_q(x: Tensor) -> Any:
    return aten.linalg_qr.default(x)[0]


def _approximate_basis(a: Tensor, q: int, niter: int, m: Tensor | None) -> Any:
    """An orthonormal basis ``Q`` (columns) of about the range of ``a - m``: a Gaussian
    sketch, then ``niter`` power iterations re-orthonormalized each half step."""

    def times(x: Tensor, y: Tensor, mx: Tensor | None) -> Any:
        r = aten.matmul.default(x, y)
        return r if mx is None else aten.sub.Tensor(r, aten.matmul.default(mx, y))

    r = aten.randn.default([a.shape[-1], q], dtype=_float_dtype(a), device=a.device)
    q_ = _qr_q(times(a, r, m))
    mh_m = None if m is None else _mh(m)
    for _ in range(niter):
        q_ = _qr_q(times(_mh(a), q_, mh_m))
        q_ = _qr_q(times(a, q_, m))
    return q_


def svd_lowrank(
    A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """``U, S, V`` with ``A - M ~ U diag(S) V^H`` of rank ``q`` (randomized: seed with
    ``tp.manual_seed`` for repeatable results)."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = aten.expand.default(M, list(A.shape))
    flip = m < n
    a = _mh(A) if flip else A
    mm = None if M is None else (_mh(M) if flip else M)
    basis = _approximate_basis(a, q, niter, mm)
    b = aten.matmul.default(_mh(basis), a)
    if mm is not None:
        b = aten.sub.Tensor(b, aten.matmul.default(_mh(basis), mm))
    u, s, vh = aten._linalg_svd.default(b, False)
    v = _mh(vh)
    u = aten.matmul.default(basis, u)
    return (v, s, u) if flip else (u, s, v)


def pca_lowrank(
    A: Tensor, q: int | None = None, center: bool = True, niter: int = 2
) -> tuple[Tensor, Tensor, Tensor]:
    """The principal components of the rows of ``A``: svd_lowrank of ``A`` less its column
    means (when ``center``)."""
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    c = aten.mean.dim(A, [-2], True)
    return svd_lowrank(aten.sub.Tensor(A, c), q, niter=niter)


# --- LOBPCG (torch/_lobpcg.py) ------------------------------------------------------------------


def _b_orthonormal(s: Tensor, b: Tensor | None) -> Any:
    """The columns of ``s`` made B-orthonormal (``s^T B s = I``) through a Cholesky factor of
    their Gram matrix, after an orthonormalization that drops their scale."""
    s = _qr_q(s)
    if b is None:
        return s
    g = aten.matmul.default(_mh(s), aten.matmul.default(b, s))
    g = aten.div.Scalar(aten.add.Tensor(g, _mh(g)), 2)
    lower = aten.linalg_cholesky.default(g)
    # s L^{-H}: solve L^H Y^T = s^T from the right
    return aten.linalg_solve_triangular.default(_mh(lower), s, upper=True, left=False)


def lobpcg(
    A: Tensor,
    k: int | None = None,
    B: Tensor | None = None,
    X: Tensor | None = None,
    n: int | None = None,
    iK: Tensor | None = None,
    niter: int | None = None,
    tol: float | None = None,
    largest: bool | None = None,
    method: str | None = None,
    tracker: Any = None,
    ortho_iparams: Any = None,
    ortho_fparams: Any = None,
    ortho_bparams: Any = None,
) -> tuple[Tensor, Tensor]:
    """The ``k`` largest (or smallest) eigenvalues of ``A x = lambda B x`` and their
    eigenvectors (columns), ``A`` and ``B`` symmetric, ``B`` positive definite; ``iK`` a
    preconditioner. Each step takes the Ritz pairs of the span of the current block, its
    (preconditioned) residuals and the previous step, until every residual norm is below
    ``tol * ||A x||`` or ``niter`` steps (the default: until converged, at most 1000)."""
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {list(A.shape)}")
    if method not in (None, "basic", "ortho"):
        raise ValueError(f"lobpcg: method must be 'basic' or 'ortho', got {method!r}")
    size = A.shape[0]
    k = 1 if k is None else k
    largest = True if largest is None else largest
    dtype = _float_dtype(A)
    if X is None:
        n = k if n is None else n
        X = aten.randn.default([size, n], dtype=dtype, device=A.device)
    else:
        n = X.shape[-1]
    if size < 3 * n:
        raise ValueError(
            f"LPBPCG algorithm is not applicable when the number of A rows (={size}) is smaller "
            f"than 3 x the number of requested eigenpairs (={n})"
        )
    tol = (1e-7 if dtype is _dt.float64 else 1e-5) if tol is None else tol
    steps = 1000 if niter is None or niter < 0 else niter
    sign = -1.0 if largest else 1.0  # minimize sign * rayleigh quotient

    def apply(mat: Tensor | None, v: Tensor) -> Tensor:
        return v if mat is None else aten.matmul.default(mat, v)

    def ritz(s: Tensor, count: int) -> tuple[Tensor, Tensor]:
        """The ``count`` extreme Ritz pairs of the pencil on the span of ``s``."""
        basis = _b_orthonormal(s, B)
        small = aten.matmul.default(_mh(basis), aten.matmul.default(A, basis))
        small = aten.div.Scalar(aten.add.Tensor(small, _mh(small)), 2)
        vals, vecs = aten.linalg_eigh.default(aten.mul.Scalar(small, sign))
        vals = aten.mul.Scalar(aten.slice.Tensor(vals, 0, 0, count), sign)
        return vals, aten.matmul.default(basis, aten.slice.Tensor(vecs, 1, 0, count))

    e, x = ritz(X, n)
    p: Tensor | None = None
    for _ in range(steps):
        ax = aten.matmul.default(A, x)
        r = aten.sub.Tensor(ax, aten.mul.Tensor(apply(B, x), e))
        norms = aten.linalg_vector_norm.default(r, 2, [0])
        scale = aten.linalg_vector_norm.default(ax, 2, [0])
        if bool(aten.all.default(aten.le.Tensor(norms, aten.mul.Scalar(scale, tol))).item()):
            break
        w = apply(iK, r)
        parts = [x, w] if p is None else [x, w, p]
        e_new, x_new = ritz(aten.cat.default(parts, 1), n)
        p = aten.sub.Tensor(x_new, x)
        e, x = e_new, x_new
    return aten.slice.Tensor(e, 0, 0, k), aten.slice.Tensor(x, 1, 0, k)
