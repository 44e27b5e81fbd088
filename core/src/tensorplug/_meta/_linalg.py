"""The ``linalg`` family of the meta namespace: matmul, vecdot and tensordot, and the ``linalg``
extension (the shapes and dtypes of the factorizations) (Note [Meta arrays] in _array.py).
"""

from __future__ import annotations

from typing import Any

from ._array import (
    MetaArray,
    _api,
    _axes,
    _axis,
    _broadcast,
    _c64,
    _c128,
    _f32,
    _f64,
    _promote,
    xp,
)


@_api
def matmul(a: MetaArray, b: MetaArray, /) -> MetaArray:
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    sa = (1,) + a.shape if a.ndim == 1 else a.shape
    sb = b.shape + (1,) if b.ndim == 1 else b.shape
    if sa[-1] != sb[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {sb[-2]} is different from {sa[-1]})"
        )
    shape = _broadcast(sa[:-2], sb[:-2]) + (sa[-2], sb[-1])
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if b.ndim == 1:
        shape = shape[:-1]
    return MetaArray(shape, _promote(a, b))


@_api
def vecdot(a: MetaArray, b: MetaArray, /, *, axis: int = -1) -> MetaArray:
    shape = _broadcast(a.shape, b.shape)
    ax = _axis(axis, len(shape))
    return MetaArray(shape[:ax] + shape[ax + 1 :], _promote(a, b))


@_api
def tensordot(a: MetaArray, b: MetaArray, /, *, axes: Any = 2) -> MetaArray:
    if isinstance(axes, int):
        xa, xb = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    else:
        xa, xb = _axes(axes[0], a.ndim), _axes(axes[1], b.ndim)
    shape = tuple(n for j, n in enumerate(a.shape) if j not in xa)
    shape += tuple(n for j, n in enumerate(b.shape) if j not in xb)
    return MetaArray(shape, _promote(a, b))


# --- the linalg extension: shapes and dtypes of the factorizations ------------------------------
# What numpy.linalg returns for stacks of matrices, without computing anything: the kit's
# factorization kernels (array_backend/_linalg_solvers.py) run on meta arrays through these.

_REAL_OF = {_c64: _f32, _c128: _f64}
_COMPLEX_OF = {_f32: _c64, _f64: _c128}


def _stack(a: MetaArray, what: str, *, square: bool = False) -> tuple[tuple[int, ...], int, int]:
    if a.ndim < 2:
        raise ValueError(
            f"{a.ndim}-dimensional array given. Array must be at least two-dimensional"
        )
    m, n = a.shape[-2:]
    if square and m != n:
        raise ValueError(f"Last 2 dimensions of the array must be square ({what})")
    return a.shape[:-2], m, n


class _Linalg:
    """``xp.linalg`` of the meta namespace."""

    __name__ = "tensorplug.meta.linalg"

    @staticmethod
    def cholesky(a: MetaArray, /, *, upper: bool = False) -> MetaArray:
        _stack(a, "cholesky", square=True)
        return MetaArray(a.shape, a.dtype)

    @staticmethod
    def inv(a: MetaArray, /) -> MetaArray:
        _stack(a, "inv", square=True)
        return MetaArray(a.shape, a.dtype)

    @staticmethod
    def solve(a: MetaArray, b: MetaArray, /) -> MetaArray:
        batch, n, _ = _stack(a, "solve", square=True)
        if b.ndim < 2 or b.shape[-2] != n:
            raise ValueError("solve: Input operand 1 has a mismatch in its core dimension 0")
        return MetaArray(_broadcast(batch, b.shape[:-2]) + b.shape[-2:], _promote(a, b))

    @staticmethod
    def det(a: MetaArray, /) -> MetaArray:
        batch, _, _ = _stack(a, "det", square=True)
        return MetaArray(batch, a.dtype)

    @staticmethod
    def slogdet(a: MetaArray, /) -> tuple[MetaArray, MetaArray]:
        batch, _, _ = _stack(a, "slogdet", square=True)
        return MetaArray(batch, a.dtype), MetaArray(batch, _REAL_OF.get(a.dtype, a.dtype))

    @staticmethod
    def svd(
        a: MetaArray, /, *, full_matrices: bool = True
    ) -> tuple[MetaArray, MetaArray, MetaArray]:
        batch, m, n = _stack(a, "svd")
        k = min(m, n)
        um, vn = (m, n) if full_matrices else (k, k)
        real = _REAL_OF.get(a.dtype, a.dtype)
        return (
            MetaArray(batch + (m, um), a.dtype),
            MetaArray(batch + (k,), real),
            MetaArray(batch + (vn, n), a.dtype),
        )

    @staticmethod
    def svdvals(a: MetaArray, /) -> MetaArray:
        batch, m, n = _stack(a, "svdvals")
        return MetaArray(batch + (min(m, n),), _REAL_OF.get(a.dtype, a.dtype))

    @staticmethod
    def eigh(a: MetaArray, /, **kw: Any) -> tuple[MetaArray, MetaArray]:
        batch, n, _ = _stack(a, "eigh", square=True)
        return MetaArray(batch + (n,), _REAL_OF.get(a.dtype, a.dtype)), MetaArray(a.shape, a.dtype)

    @staticmethod
    def eigvalsh(a: MetaArray, /, **kw: Any) -> MetaArray:
        batch, n, _ = _stack(a, "eigvalsh", square=True)
        return MetaArray(batch + (n,), _REAL_OF.get(a.dtype, a.dtype))

    @staticmethod
    def eig(a: MetaArray, /) -> tuple[MetaArray, MetaArray]:
        batch, n, _ = _stack(a, "eig", square=True)
        c = _COMPLEX_OF.get(a.dtype, a.dtype)
        return MetaArray(batch + (n,), c), MetaArray(a.shape, c)

    @staticmethod
    def qr(a: MetaArray, /, *, mode: str = "reduced") -> tuple[MetaArray, MetaArray]:
        batch, m, n = _stack(a, "qr")
        k = min(m, n)
        if mode == "raw":  # numpy's: the reflectors transposed, and tau
            return MetaArray(batch + (n, m), a.dtype), MetaArray(batch + (k,), a.dtype)
        qn = m if mode == "complete" else k
        return MetaArray(batch + (m, qn), a.dtype), MetaArray(batch + (qn, n), a.dtype)


xp.linalg = _Linalg()
