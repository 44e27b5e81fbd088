"""Samples and oracles of the ``torch.linalg`` operators with kernels: factorizations, solvers,
spectra (the ``linalg`` family's second part). Inputs are well conditioned as PyTorch's OpInfo
makes them: a random matrix plus ``n I`` for solves and inverses, ``X X^T + n I`` for
positive-definite ones. Factorizations whose factors are determined only up to signs or
phases (svd, eigh, eig) are compared through what is determined: the values, the
reconstruction and the orthogonality of the vectors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._core import FLOATS, OpInfo, S, SampleInput, add, fixed, fn, make, meth

_TOL = {"float32": (1e-4, 1e-4), "float64": (1e-8, 1e-8)}


def _square(shape: tuple[int, ...], d: str, rng: np.random.Generator) -> np.ndarray:
    n = shape[-1]
    return (make(shape, d, rng, -1, 1) + n * np.eye(n)).astype(make((1,), d, rng).dtype)


def _pd(shape: tuple[int, ...], d: str, rng: np.random.Generator) -> np.ndarray:
    n = shape[-1]
    x = make(shape, d, rng, -1, 1).astype(np.float64)
    a = x @ np.swapaxes(x, -1, -2) + n * np.eye(n)
    return a.astype(make((1,), d, rng).dtype)


def _wide64(a: Any) -> np.ndarray:
    return np.asarray(a, np.float64)


def _square_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("3x3", _square((3, 3), d, rng))
    yield S("batched", _square((2, 3, 3), d, rng))


def _pd_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("pd", _pd((3, 3), d, rng))
    yield S("pd_batched", _pd((2, 3, 3), d, rng))


def _sign_free(values: Any, tol: float) -> None:
    del values, tol


def _close(got: Any, want: Any, d: str, what: str) -> None:
    rtol, atol = _TOL[d]
    np.testing.assert_allclose(
        np.asarray(got.cpu().numpy(), np.float64), want, rtol, atol, err_msg=what
    )


# --- cholesky, inv, solve, det, slogdet -------------------------------------------------------


def _ref_cholesky_ex(a: Any, *, upper: bool = False, check_errors: bool = False) -> Any:
    L = np.linalg.cholesky(_wide64(a))
    if upper:
        L = np.swapaxes(L, -1, -2)
    return L, np.zeros(a.shape[:-2], np.int32)


def _cholesky_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _pd_samples(d, rng)
    yield S("upper", _pd((3, 3), d, rng), upper=True)


add(
    OpInfo(
        "linalg_cholesky_ex",
        op=fn("linalg.cholesky_ex"),
        sample_inputs=_cholesky_samples,
        ref=_ref_cholesky_ex,
        dtypes=FLOATS,
        result_dtype=lambda s, d: (d, "int32"),
        returns_names=("L", "info"),
        tol=_TOL,
    )
)
add(
    OpInfo(
        "linalg_inv_ex",
        op=fn("linalg.inv_ex"),
        sample_inputs=_square_samples,
        ref=lambda a, **kw: (np.linalg.inv(_wide64(a)), np.zeros(a.shape[:-2], np.int32)),
        dtypes=FLOATS,
        result_dtype=lambda s, d: (d, "int32"),
        returns_names=("inverse", "info"),
        tol=_TOL,
    )
)


def _ref_solve(a: Any, b: Any, *, left: bool = True, check_errors: bool = False) -> Any:
    a, b = _wide64(a), _wide64(b)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if vector:
        x = np.linalg.solve(a, b[..., None])[..., 0]
    elif left:
        x = np.linalg.solve(a, b)
    else:
        x = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    return x, np.zeros(a.shape[:-2], np.int32)


def _solve_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("matrix", _square((3, 3), d, rng), make((3, 2), d, rng))
    yield S("vector", _square((2, 3, 3), d, rng), make((2, 3), d, rng))
    yield S("broadcast", _square((2, 3, 3), d, rng), make((3, 2), d, rng))
    yield S("right", _square((3, 3), d, rng), make((2, 3), d, rng), left=False)


add(
    OpInfo(
        "linalg_solve_ex",
        op=fn("linalg.solve_ex"),
        sample_inputs=_solve_samples,
        ref=_ref_solve,
        dtypes=FLOATS,
        result_dtype=lambda s, d: (d, "int32"),
        returns_names=("result", "info"),
        tol=_TOL,
    )
)
add(
    OpInfo(
        "linalg_det",
        op=fn("linalg.det"),
        sample_inputs=_square_samples,
        ref=lambda a: np.linalg.det(_wide64(a)),
        dtypes=FLOATS,
        tol=_TOL,
    )
)
add(
    OpInfo(
        "linalg_slogdet",
        op=fn("linalg.slogdet"),
        sample_inputs=_square_samples,
        ref=lambda a: tuple(np.linalg.slogdet(_wide64(a))),
        dtypes=FLOATS,
        returns_names=("sign", "logabsdet"),
        tol=_TOL,
    )
)


# --- svd, eigh, eig, qr -------------------------------------------------------------------------


def _rect_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("tall", make((4, 3), d, rng))
    yield S("wide_batched", make((2, 2, 3), d, rng))


def _svd_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("tall", make((4, 3), d, rng))
    yield S("wide_batched", make((2, 2, 3), d, rng))
    yield S("full", make((3, 2), d, rng), True)
    yield S("values_only", make((2, 3, 3), d, rng), False, False)


def _ref_svd(a: Any, full_matrices: bool = False, compute_uv: bool = True, **kw: Any) -> Any:
    return np.linalg.svd(_wide64(a), full_matrices=full_matrices)


def _compare_svd(got: Any, expected: Any, sample: SampleInput, d: str) -> None:
    U, S_, Vh = got
    a = _wide64(sample.args[0])
    _close(S_, expected[1], d, "S")
    compute_uv = sample.args[2] if len(sample.args) > 2 else True
    if not compute_uv:
        assert U.shape == (0,) and Vh.shape == (0,), (U.shape, Vh.shape)
        return
    u, vh, s = _wide64(U.cpu().numpy()), _wide64(Vh.cpu().numpy()), _wide64(S_.cpu().numpy())
    k = s.shape[-1]
    rec = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rec, a, *_TOL[d], err_msg="U diag(S) Vh")
    for m, what in ((u, "U"), (np.swapaxes(vh, -1, -2), "V")):
        gram = np.swapaxes(m, -1, -2) @ m
        eye = np.broadcast_to(np.eye(m.shape[-1]), gram.shape)
        np.testing.assert_allclose(gram, eye, *_TOL[d], err_msg=what)


add(
    OpInfo(
        "_linalg_svd",
        op=lambda *a, **k: _aten("_linalg_svd")(*a, **k),
        sample_inputs=_svd_samples,
        ref=_ref_svd,
        dtypes=FLOATS,
        compare=_compare_svd,
        aten_variant=False,
    )
)


def _aten(name: str) -> Any:
    import tensorplug as tp

    return getattr(tp.ops.aten, name).default


def _eigh_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("pd", _pd((3, 3), d, rng))
    yield S("upper_batched", make((2, 3, 3), d, rng), "U")
    yield S("values_only", _pd((3, 3), d, rng), "L", False)


def _ref_eigh(a: Any, UPLO: str = "L", compute_v: bool = True) -> Any:
    return np.linalg.eigh(_wide64(a), UPLO=UPLO)


def _compare_eigh(got: Any, expected: Any, sample: SampleInput, d: str) -> None:
    w, v = got
    _close(w, expected[0], d, "eigenvalues")
    compute_v = sample.args[2] if len(sample.args) > 2 else True
    if not compute_v:
        assert v.shape == (0,), v.shape
        return
    vv = _wide64(v.cpu().numpy())
    a = expected[1] * expected[0][..., None, :] @ np.swapaxes(expected[1], -1, -2)
    rec = (vv * _wide64(w.cpu().numpy())[..., None, :]) @ np.swapaxes(vv, -1, -2)
    np.testing.assert_allclose(rec, a, *_TOL[d], err_msg="V diag(w) V^T")


add(
    OpInfo(
        "_linalg_eigh",
        op=lambda *a, **k: _aten("_linalg_eigh")(*a, **k),
        sample_inputs=_eigh_samples,
        ref=_ref_eigh,
        dtypes=FLOATS,
        compare=_compare_eigh,
        aten_variant=False,
    )
)


def _compare_eig(got: Any, expected: Any, sample: SampleInput, d: str) -> None:
    w, v = got
    assert str(w.dtype).endswith("complex64" if d == "float32" else "complex128"), w.dtype
    a = _wide64(sample.args[0]).astype(complex)
    ww, vv = np.asarray(w.cpu().numpy(), complex), np.asarray(v.cpu().numpy(), complex)
    np.testing.assert_allclose(np.sort_complex(ww), np.sort_complex(expected[0]), *_TOL[d])
    np.testing.assert_allclose(a @ vv, vv * ww[..., None, :], *_TOL[d], err_msg="A V = V diag(w)")


add(
    OpInfo(
        "linalg_eig",
        op=fn("linalg.eig"),
        sample_inputs=_square_samples,
        ref=lambda a: np.linalg.eig(_wide64(a)),
        dtypes=FLOATS,
        compare=_compare_eig,
        returns_names=("eigenvalues", "eigenvectors"),
    )
)


def _qr_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("tall", make((4, 3), d, rng))
    yield S("wide_batched", make((2, 2, 3), d, rng))
    yield S("complete", make((3, 2), d, rng), "complete")


def _ref_qr(a: Any, mode: str = "reduced") -> Any:
    return tuple(np.linalg.qr(_wide64(a), mode=mode))


add(
    OpInfo(
        "linalg_qr",
        op=fn("linalg.qr"),
        sample_inputs=_qr_samples,
        ref=_ref_qr,
        dtypes=FLOATS,
        returns_names=("Q", "R"),
        tol=_TOL,
    )
)


# --- least squares ------------------------------------------------------------------------------


def _lstsq_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # gels first: the one driver CUDA has, so the first sample means the same on every device
    yield S("tall", make((3, 2), d, rng), make((3, 1), d, rng), driver="gels")
    yield S("default_driver", make((3, 2), d, rng), make((3, 1), d, rng))
    yield S("gelsd_batched", make((2, 4, 3), d, rng), make((2, 4, 1), d, rng), driver="gelsd")


def _ref_lstsq(a: Any, b: Any, rcond: Any = None, *, driver: str | None = None) -> Any:
    a, b = _wide64(a), _wide64(b)
    driver = driver or "gelsy"
    x = np.linalg.pinv(a) @ b
    m, n = a.shape[-2:]
    res = ((a @ x - b) ** 2).sum(-2) if m > n and driver != "gelsy" else np.zeros(0)
    rank = np.full(a.shape[:-2], min(m, n), np.int64)
    sv = np.linalg.svd(a, compute_uv=False) if driver in ("gelsd", "gelss") else np.zeros(0)
    return x, res, rank if driver != "gels" else np.zeros(0, np.int64), sv


add(
    OpInfo(
        "linalg_lstsq",
        op=fn("linalg.lstsq"),
        sample_inputs=_lstsq_samples,
        ref=_ref_lstsq,
        dtypes=FLOATS,
        result_dtype=lambda s, d: (d, d, "int64", d),
        returns_names=("solution", "residuals", "rank", "singular_values"),
        tol=_TOL,
    )
)


# --- LU -----------------------------------------------------------------------------------------


def _ref_lu_factor(a: Any, *, pivot: bool = True, check_errors: bool = False) -> Any:
    """Doolittle with partial pivoting, matrix by matrix (LAPACK getrf's output)."""
    a = _wide64(a)
    shape = a.shape
    flat = a.reshape(-1, *shape[-2:]).copy()
    m, n = shape[-2:]
    k = min(m, n)
    pivs = np.zeros((flat.shape[0], k), np.int32)
    for b in range(flat.shape[0]):
        x = flat[b]
        for j in range(k):
            p = j + int(np.argmax(np.abs(x[j:, j])))
            pivs[b, j] = p + 1
            x[[j, p]] = x[[p, j]]
            if x[j, j] != 0:
                x[j + 1 :, j] /= x[j, j]
                x[j + 1 :, j + 1 :] -= np.outer(x[j + 1 :, j], x[j, j + 1 :])
    return flat.reshape(shape), pivs.reshape(*shape[:-2], k), np.zeros(shape[:-2], np.int32)


def _lu_factor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("square", make((2, 2), d, rng))
    yield S("tall_batched", make((2, 3, 2), d, rng))


add(
    OpInfo(
        "linalg_lu_factor_ex",
        op=fn("linalg.lu_factor_ex"),
        sample_inputs=_lu_factor_samples,
        ref=_ref_lu_factor,
        dtypes=FLOATS,
        result_dtype=lambda s, d: (d, "int32", "int32"),
        returns_names=("LU", "pivots", "info"),
        tol=_TOL,
    )
)


def _ref_lu(a: Any, *, pivot: bool = True) -> Any:
    LU, piv, _ = _ref_lu_factor(a)
    return _ref_unpack(LU, piv)


def _ref_unpack(LU: Any, piv: Any, unpack_data: bool = True, unpack_pivots: bool = True) -> Any:
    LU = _wide64(LU)
    m, n = LU.shape[-2:]
    k = min(m, n)
    L = np.tril(LU[..., :, :k], -1) + np.eye(m, k)
    U = np.triu(LU[..., :k, :])
    perms = []
    for p in np.asarray(piv).reshape(-1, k):
        perm = list(range(m))
        for j, q in enumerate(p):
            perm[j], perm[q - 1] = perm[q - 1], perm[j]
        P = np.zeros((m, m))
        P[perm, range(m)] = 1
        perms.append(P)
    return np.stack(perms).reshape(*LU.shape[:-2], m, m), L, U


add(
    OpInfo(
        "linalg_lu",
        op=fn("linalg.lu"),
        sample_inputs=_lu_factor_samples,
        ref=_ref_lu,
        dtypes=FLOATS,
        returns_names=("P", "L", "U"),
        tol=_TOL,
    )
)


def _lu_unpack_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a = make((2, 3, 2), d, rng)
    LU, piv, _ = _ref_lu_factor(a)
    yield S("tall_batched", LU.astype(a.dtype), piv)


add(
    OpInfo(
        "lu_unpack",
        op=fn("lu_unpack"),
        sample_inputs=_lu_unpack_samples,
        ref=_ref_unpack,
        dtypes=FLOATS,
        returns_names=("P", "L", "U"),
        tol=_TOL,
    )
)


def _lu_solve_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a = _square((2, 2, 2), d, rng)
    LU, piv, _ = _ref_lu_factor(a)
    LU = LU.astype(a.dtype)
    yield S("left", LU[0], piv[0], make((2, 1), d, rng))
    yield S("right_adjoint", LU, piv, make((2, 1, 2), d, rng), left=False, adjoint=True)


def _ref_lu_solve(LU: Any, piv: Any, B: Any, *, left: bool = True, adjoint: bool = False) -> Any:
    P, L, U = _ref_unpack(LU, piv)
    A = P @ L @ U
    if adjoint:
        A = np.swapaxes(A, -1, -2)
    B = _wide64(B)
    if left:
        return np.linalg.solve(A, B)
    return np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2)), -1, -2)


add(
    OpInfo(
        "linalg_lu_solve",
        op=fn("linalg.lu_solve"),
        sample_inputs=_lu_solve_samples,
        ref=_ref_lu_solve,
        dtypes=FLOATS,
        tol=_TOL,
    )
)


def _tri_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("upper", _square((3, 3), d, rng), make((3, 2), d, rng), upper=True)
    yield S(
        "lower_unit_right",
        _square((2, 3, 3), d, rng),
        make((2, 2, 3), d, rng),
        upper=False,
        left=False,
        unitriangular=True,
    )


def _ref_tri(a: Any, b: Any, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Any:
    a = np.triu(_wide64(a)) if upper else np.tril(_wide64(a))
    if unitriangular:
        n = a.shape[-1]
        a = a - a * np.eye(n) + np.eye(n)
    b = _wide64(b)
    if left:
        return np.linalg.solve(a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


add(
    OpInfo(
        "linalg_solve_triangular",
        op=fn("linalg.solve_triangular"),
        sample_inputs=_tri_samples,
        ref=_ref_tri,
        dtypes=FLOATS,
        tol=_TOL,
    )
)


# --- matrix_exp, cross, geqrf ------------------------------------------------------------------


def _ref_expm(a: Any) -> Any:
    """exp(A) by its Taylor series after scaling (the oracle needs no scipy)."""
    a = _wide64(a)
    n = a.shape[-1]
    s = 6
    x = a / 2**s
    term = np.broadcast_to(np.eye(n), a.shape).copy()
    out = term.copy()
    for k in range(1, 30):
        term = term @ x / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


def _expm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("small", make((2, 2), d, rng, -0.5, 0.5))
    yield S("scaled_batched", make((2, 3, 3), d, rng, -2, 2))


add(
    OpInfo(
        "linalg_matrix_exp",
        op=fn("linalg.matrix_exp"),
        sample_inputs=_expm_samples,
        ref=_ref_expm,
        dtypes=FLOATS,
        tol={"float32": (1e-4, 1e-4), "float64": (1e-9, 1e-9)},
    )
)


def _cross_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("last", make((2, 3), d, rng), make((2, 3), d, rng))
    yield S("dim0_broadcast", make((3, 2), d, rng), make((3, 1), d, rng), dim=0)


add(
    OpInfo(
        "linalg_cross",
        op=fn("linalg.cross"),
        sample_inputs=_cross_samples,
        ref=lambda a, b, dim=-1: np.cross(a, b, axis=dim),
        dtypes=FLOATS + ("int64",),
        tol=_TOL,
    )
)


def _compare_geqrf(got: Any, expected: Any, sample: SampleInput, d: str) -> None:
    a, tau = got
    h, t = expected
    _close(a, np.swapaxes(h, -1, -2), d, "a")
    _close(tau, t, d, "tau")


add(
    OpInfo(
        "geqrf",
        op=fn("geqrf"),
        method=meth("geqrf"),
        sample_inputs=lambda d, rng: iter([S("tall", make((4, 3), d, rng))]),
        ref=lambda a: np.linalg.qr(_wide64(a), mode="raw"),
        dtypes=FLOATS,
        compare=_compare_geqrf,
        returns_names=("a", "tau"),
    )
)


# --- LDL (scipy's LAPACK) -----------------------------------------------------------------------
# Without scipy the kernels refuse with "not supported by this backend": the samples then check
# that refusal (the oracle too needs LAPACK's sytrf).


def _has_scipy() -> bool:
    try:
        import scipy.linalg  # noqa: F401  # type: ignore[import-untyped]
    except ImportError:
        return False
    return True


_REFUSED = "refused"


def _ldl_op(name: str) -> Any:
    call = fn(name)

    def op(*args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except NotImplementedError as e:
            assert "not supported by the" in str(e), e
            return _REFUSED

    return op


def _ldl_compare(got: Any, expected: Any, sample: SampleInput, d: str) -> None:
    import tensorplug as tp

    if got is _REFUSED:  # only without scipy, or on a backend other than numpy's (CPU)
        assert expected is _REFUSED or tp.get_default_device().type != "cpu", "refused"
        return
    assert expected is not _REFUSED, "ran without scipy"
    pairs = zip(
        got if isinstance(got, tuple) else (got,),
        expected if isinstance(expected, tuple) else (expected,),
        strict=True,
    )
    for g, e in pairs:
        _close(g, e, d, "ldl")


def _ldl_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("symmetric", _pd((3, 3), d, rng))


def _ref_ldl(a: Any, *, hermitian: bool = False, check_errors: bool = False) -> Any:
    if not _has_scipy():
        return _REFUSED
    from scipy.linalg import lapack

    ld, piv, info = lapack.dsytrf(_wide64(a), lower=1)  # the oracle in float64
    return np.tril(ld), piv.astype(np.int32), np.asarray(info, np.int32)


add(
    OpInfo(
        "linalg_ldl_factor_ex",
        op=_ldl_op("linalg.ldl_factor_ex"),
        sample_inputs=_ldl_samples,
        ref=_ref_ldl,
        dtypes=("float64",),
        compare=_ldl_compare,
        aten_variant=False,
    )
)


def _ldl_solve_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a = _pd((3, 3), d, rng)
    if _has_scipy():
        LD, piv, _ = _ref_ldl(a)
    else:  # any factors: the kernel refuses before reading them
        LD, piv = np.tril(a), np.arange(1, 4, dtype=np.int32)
    yield S("symmetric", LD.astype(a.dtype), piv, make((3, 2), d, rng))


def _ref_ldl_solve(LD: Any, piv: Any, B: Any, **kw: Any) -> Any:
    if not _has_scipy():
        return _REFUSED
    from scipy.linalg import lapack

    return lapack.dsytrs(_wide64(LD), piv, _wide64(B), lower=1)[0]


add(
    OpInfo(
        "linalg_ldl_solve",
        op=_ldl_op("linalg.ldl_solve"),
        sample_inputs=_ldl_solve_samples,
        ref=_ref_ldl_solve,
        dtypes=("float64",),
        compare=_ldl_compare,
        aten_variant=False,
    )
)


# --- the composites (torch.linalg functions and top-level names over the operators above) --------


def _composite(
    name: str,
    public: str,
    samples: Any,
    ref: Any,
    *,
    method: str | None = None,
    returns: tuple[str, ...] = (),
    result_dtype: Any = None,
    dtypes: tuple[str, ...] = FLOATS,
    compare: Any = None,
) -> None:
    kw: dict[str, Any] = {}
    if result_dtype is not None:
        kw["result_dtype"] = result_dtype
    add(
        OpInfo(
            name,
            op=fn(public),
            method=meth(method) if method else None,
            sample_inputs=samples,
            ref=ref,
            dtypes=dtypes,
            returns_names=returns,
            tol=_TOL,
            compare=compare,
            **kw,
        )
    )


def _one(*shapes: Any, kind: str = "square", **kwargs: Any) -> Any:
    makers = {"square": _square, "pd": _pd, "any": lambda s, d, r: make(s, d, r, -1, 1)}

    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield S("sample", *(makers[kind](s, d, rng) for s in shapes), **kwargs)

    return gen


def _mT(a: Any) -> Any:
    return np.swapaxes(a, -1, -2)


def _svals(a: Any) -> Any:
    return np.linalg.svd(_wide64(a), compute_uv=False)


def _compare_svd_public(got: Any, expected: Any, sample: SampleInput, d: str) -> None:
    U, S_, V = got
    _close(S_, expected[1], d, "S")
    u, v, s = _wide64(U.cpu().numpy()), _wide64(V.cpu().numpy()), _wide64(S_.cpu().numpy())
    k = s.shape[-1]
    a = _wide64(sample.args[0])
    vh = _mT(v) if expected[3] == "V" else v
    rec = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rec, a, *_TOL[d])


def _ref_svd_public(kind: str) -> Any:
    def ref(a: Any, *args: Any, **kw: Any) -> Any:
        U, s, Vh = np.linalg.svd(_wide64(a), full_matrices=False)
        return U, s, Vh, kind

    return ref


def _compare_eigh_public(got: Any, expected: Any, sample: SampleInput, d: str) -> None:
    _compare_eigh(got, expected, sample, d)


def _matrix_norm_ref(
    a: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, **kw: Any
) -> Any:
    return np.linalg.norm(_wide64(a), ord=ord, axis=tuple(dim), keepdims=keepdim)


def _cond_ref(a: Any, p: Any = None) -> Any:
    return np.linalg.cond(_wide64(a), p)


def _rank_ref(a: Any, *args: Any, hermitian: bool = False, **kw: Any) -> Any:
    return np.linalg.matrix_rank(_wide64(a), hermitian=hermitian).astype(np.int64)


def _pinv_ref(a: Any, *args: Any, hermitian: bool = False, **kw: Any) -> Any:
    return np.linalg.pinv(_wide64(a), hermitian=hermitian)


def _householder_ref(a: Any, tau: Any) -> Any:
    a, tau = _wide64(a), _wide64(tau)
    m, n = a.shape[-2:]
    out = []
    for x, t in zip(a.reshape(-1, m, n), tau.reshape(-1, tau.shape[-1]), strict=True):
        q = np.eye(m)
        for i in range(t.shape[0]):
            v = np.zeros(m)
            v[i] = 1
            v[i + 1 :] = x[i + 1 :, i]
            q = q @ (np.eye(m) - t[i] * np.outer(v, v))
        out.append(q[:, :n])
    return np.stack(out).reshape(a.shape)


def _cholesky_solve_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    L = np.linalg.cholesky(_wide64(_pd((3, 3), d, rng))).astype(make((1,), d, rng).dtype)
    yield S("lower", make((3, 2), d, rng), L)
    yield S("upper", make((3, 2), d, rng), _mT(L).copy(), True)


def _cholesky_solve_ref(b: Any, L: Any, upper: bool = False) -> Any:
    L = _wide64(L)
    A = _mT(L) @ L if upper else L @ _mT(L)
    return np.linalg.solve(A, _wide64(b))


def _lu_solve_top_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a = _square((3, 3), d, rng)
    LU, piv, _ = _ref_lu_factor(a)
    yield S("sample", make((3, 2), d, rng), LU.astype(a.dtype), piv)


def _geqrf_of(d: str, rng: np.random.Generator) -> tuple[Any, Any]:
    h, tau = np.linalg.qr(_wide64(make((4, 3), d, rng)), mode="raw")
    dt = make((1,), d, rng).dtype
    return _mT(h).astype(dt), tau.astype(dt)


def _orgqr_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a, tau = _geqrf_of(d, rng)
    yield S("sample", a, tau)


def _ormqr_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a, tau = _geqrf_of(d, rng)
    yield S("left", a, tau, make((4, 2), d, rng))
    yield S("right_transposed", a, tau, make((2, 4), d, rng), False, True)


def _ormqr_ref(a: Any, tau: Any, c: Any, left: bool = True, transpose: bool = False) -> Any:
    m = a.shape[-2]
    full = np.concatenate([_wide64(a), np.zeros((m, m - a.shape[-1]))], -1)
    t = np.concatenate([_wide64(tau), np.zeros(m - tau.shape[-1])])
    q = _householder_ref(full, t)
    if transpose:
        q = _mT(q)
    return q @ _wide64(c) if left else _wide64(c) @ q


def _triangular_solve_ref(
    b: Any, a: Any, upper: bool = True, transpose: bool = False, unitriangular: bool = False
) -> Any:
    t = np.triu(_wide64(a)) if upper else np.tril(_wide64(a))
    if transpose:
        t = _mT(t)
    return np.linalg.solve(t, _wide64(b)), _wide64(a)


def _tensorsolve_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a = _square((6, 6), d, rng).reshape(2, 3, 6)
    yield S("sample", a, make((2, 3), d, rng))


def _tensorinv_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("sample", _square((6, 6), d, rng).reshape(6, 2, 3), ind=1)


def _tol_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("sample", make((3, 4), d, rng, -1, 1), np.asarray(1e-6, make((1,), d, rng).dtype))


def _power_ref(a: Any, n: int) -> Any:
    return np.linalg.matrix_power(_wide64(a), n)


def _logdet_ref(a: Any) -> Any:
    sign, logabs = np.linalg.slogdet(_wide64(a))
    return np.where(sign < 0, np.nan, logabs)


def _svdvals_result(s: SampleInput, d: str) -> Any:
    return d


_composite(
    "linalg_cholesky", "linalg.cholesky", _pd_samples, lambda a, **k: _ref_cholesky_ex(a, **k)[0]
)
_composite("linalg_inv", "linalg.inv", _square_samples, lambda a: np.linalg.inv(_wide64(a)))
_composite(
    "linalg_solve", "linalg.solve", _solve_samples, lambda a, b, **k: _ref_solve(a, b, **k)[0]
)
_composite(
    "linalg_svd",
    "linalg.svd",
    _one((4, 3), kind="any", full_matrices=False),
    _ref_svd_public("Vh"),
    returns=("U", "S", "Vh"),
    compare=_compare_svd_public,
)
_composite("linalg_svdvals", "linalg.svdvals", _one((2, 4, 3), kind="any"), _svals)
_composite(
    "linalg_eigh",
    "linalg.eigh",
    _pd_samples,
    _ref_eigh,
    returns=("eigenvalues", "eigenvectors"),
    compare=_compare_eigh_public,
)
_composite(
    "linalg_eigvalsh",
    "linalg.eigvalsh",
    _pd_samples,
    lambda a, UPLO="L": np.linalg.eigvalsh(_wide64(a), UPLO=UPLO),
)


def _compare_eigvals(got: Any, expected: Any, sample: SampleInput, d: str) -> None:
    assert str(got.dtype).endswith("complex64" if d == "float32" else "complex128"), got.dtype
    w = np.asarray(got.cpu().numpy(), complex)
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(expected), *_TOL[d])


_composite(
    "linalg_eigvals",
    "linalg.eigvals",
    _one((3, 3), kind="pd"),
    lambda a: np.linalg.eigvals(_wide64(a)),
    compare=_compare_eigvals,
)
_composite(
    "linalg_lu_factor",
    "linalg.lu_factor",
    _lu_factor_samples,
    lambda a, **k: _ref_lu_factor(a)[:2],
    returns=("LU", "pivots"),
    result_dtype=lambda s, d: (d, "int32"),
)
_composite(
    "_lu_with_info",
    "_lu_with_info",
    _lu_factor_samples,
    lambda a, *r, **k: _ref_lu_factor(a),
    result_dtype=lambda s, d: (d, "int32", "int32"),
)
add(
    OpInfo(
        "linalg_ldl_factor",
        op=_ldl_op("linalg.ldl_factor"),
        sample_inputs=_ldl_samples,
        ref=lambda a, **k: _ref_ldl(a)[:2] if _has_scipy() else _REFUSED,
        dtypes=FLOATS,
        compare=_ldl_compare,
        aten_variant=False,
    )
)
_composite(
    "linalg_householder_product", "linalg.householder_product", _orgqr_samples, _householder_ref
)
_composite("linalg_matrix_power", "linalg.matrix_power", _one((2, 3, 3), n=3), _power_ref)
_composite(
    "linalg_matrix_norm", "linalg.matrix_norm", _one((2, 3, 4), kind="any", ord=2), _matrix_norm_ref
)
_composite(
    "linalg_matrix_norm.str_ord",
    "linalg.matrix_norm",
    _one((3, 4), kind="any", ord="nuc"),
    _matrix_norm_ref,
)
_composite(
    "linalg_norm",
    "linalg.norm",
    _one((3, 4), kind="any"),
    lambda a, **k: np.linalg.norm(_wide64(a)),
)
_composite(
    "linalg_norm.ord_str",
    "linalg.norm",
    _one((3, 4), kind="any", ord="fro"),
    lambda a, ord, **k: np.linalg.norm(_wide64(a), ord),
)
_composite("linalg_cond", "linalg.cond", _square_samples, _cond_ref)
_composite("linalg_cond.p_str", "linalg.cond", _one((3, 3), p="fro"), _cond_ref)
_rank = lambda s, d: "int64"  # noqa: E731
_composite(
    "linalg_matrix_rank.atol_rtol_tensor",
    "linalg.matrix_rank",
    _one((2, 4, 3), kind="any"),
    _rank_ref,
    result_dtype=_rank,
)
_composite(
    "linalg_matrix_rank.atol_rtol_float",
    "linalg.matrix_rank",
    _one((4, 3), kind="any", atol=1e-6, rtol=0.0),
    _rank_ref,
    result_dtype=_rank,
)
_composite(
    "linalg_matrix_rank",
    "linalg.matrix_rank",
    _one((4, 3), kind="any", tol=1e-6),
    _rank_ref,
    result_dtype=_rank,
)
_composite(
    "linalg_matrix_rank.tol_tensor",
    "ops.aten.linalg_matrix_rank.tol_tensor",
    _tol_samples,
    lambda a, tol, **k: _rank_ref(a),
    result_dtype=_rank,
)
_composite("linalg_pinv.atol_rtol_tensor", "linalg.pinv", _one((4, 3), kind="any"), _pinv_ref)
_composite(
    "linalg_pinv.atol_rtol_float", "linalg.pinv", _one((3, 3), kind="pd", hermitian=True), _pinv_ref
)
_composite("linalg_pinv", "linalg.pinv", _one((4, 3), kind="any", rcond=1e-15), _pinv_ref)
_composite("linalg_pinv.rcond_tensor", "ops.aten.linalg_pinv.rcond_tensor", _tol_samples, _pinv_ref)
_composite(
    "linalg_multi_dot",
    "linalg.multi_dot",
    lambda d, rng: iter(
        [
            S(
                "vec_mat_vec",
                [
                    make((3,), d, rng),
                    make((3, 4), d, rng),
                    make((4, 2), d, rng),
                    make((2,), d, rng),
                ],
            )
        ]
    ),
    lambda ts: np.linalg.multi_dot([_wide64(t) for t in ts]),
)
_composite(
    "chain_matmul",
    "chain_matmul",
    lambda d, rng: iter(
        [S("three", [make((2, 3), d, rng), make((3, 4), d, rng), make((4, 2), d, rng)])]
    ),
    lambda ts: np.linalg.multi_dot([_wide64(t) for t in ts]),
)
_composite(
    "linalg_tensorinv",
    "linalg.tensorinv",
    _tensorinv_samples,
    lambda a, ind=2: np.linalg.tensorinv(_wide64(a), ind),
)
_composite(
    "linalg_tensorsolve",
    "linalg.tensorsolve",
    _tensorsolve_samples,
    lambda a, b, dims=None: np.linalg.tensorsolve(_wide64(a), _wide64(b)),
)
_composite(
    "linalg_vander",
    "linalg.vander",
    _one((2, 3), kind="any", N=4),
    lambda x, N=None: np.stack([np.vander(r, N, increasing=True) for r in _wide64(x)]),
)
_composite(
    "linalg_vecdot",
    "linalg.vecdot",
    _one((2, 3), (2, 3), kind="any"),
    lambda x, y, dim=-1: (_wide64(x) * _wide64(y)).sum(dim),
)
_composite("vdot", "vdot", _one((3,), (3,), kind="any"), lambda x, y: np.vdot(x, y), method="vdot")
_composite(
    "linalg_diagonal",
    "linalg.diagonal",
    _one((2, 3, 4), kind="any", offset=1),
    lambda a, offset=0, dim1=-2, dim2=-1: np.diagonal(a, offset, dim1, dim2),
)
_composite("det", "det", _square_samples, lambda a: np.linalg.det(_wide64(a)), method="det")
_composite("logdet", "logdet", _square_samples, _logdet_ref, method="logdet")
_composite(
    "slogdet",
    "slogdet",
    _square_samples,
    lambda a: tuple(np.linalg.slogdet(_wide64(a))),
    method="slogdet",
    returns=("sign", "logabsdet"),
)
_composite(
    "inverse", "inverse", _square_samples, lambda a: np.linalg.inv(_wide64(a)), method="inverse"
)
_composite(
    "cholesky",
    "cholesky",
    _pd_samples,
    lambda a, upper=False: _ref_cholesky_ex(a, upper=upper)[0],
    method="cholesky",
)
_composite(
    "cholesky_solve",
    "cholesky_solve",
    _cholesky_solve_samples,
    _cholesky_solve_ref,
    method="cholesky_solve",
)
_composite(
    "cholesky_inverse",
    "cholesky_inverse",
    lambda d, rng: iter(
        [
            S(
                "lower",
                np.linalg.cholesky(_wide64(_pd((3, 3), d, rng))).astype(make((1,), d, rng).dtype),
            )
        ]
    ),
    lambda L, upper=False: np.linalg.inv(_wide64(L) @ _mT(_wide64(L))),
    method="cholesky_inverse",
)
_composite(
    "svd",
    "svd",
    _one((4, 3), kind="any"),
    _ref_svd_public("V"),
    method="svd",
    returns=("U", "S", "V"),
    compare=_compare_svd_public,
)
_composite(
    "qr",
    "qr",
    _one((4, 3), kind="any"),
    lambda a, some=True: tuple(np.linalg.qr(_wide64(a))),
    method="qr",
    returns=("Q", "R"),
)
_composite(
    "pinverse",
    "pinverse",
    _one((4, 3), kind="any"),
    lambda a, rcond=1e-15: np.linalg.pinv(_wide64(a)),
    method="pinverse",
)
_composite("matrix_power", "matrix_power", _one((3, 3), n=-2), _power_ref, method="matrix_power")
_composite("matrix_exp", "matrix_exp", _expm_samples, _ref_expm, method="matrix_exp")
_composite(
    "triangular_solve",
    "triangular_solve",
    lambda d, rng: iter(
        [
            S("upper", make((3, 2), d, rng), _square((3, 3), d, rng)),
            S("lower_transposed", make((3, 2), d, rng), _square((3, 3), d, rng), False, True),
        ]
    ),
    _triangular_solve_ref,
    method="triangular_solve",
    returns=("solution", "cloned_coefficient"),
)
_composite(
    "lu_solve",
    "lu_solve",
    _lu_solve_top_samples,
    lambda b, LU, piv: _ref_lu_solve(LU, piv, b),
    method="lu_solve",
)
_composite("orgqr", "orgqr", _orgqr_samples, _householder_ref, method="orgqr")
_composite("ormqr", "ormqr", _ormqr_samples, _ormqr_ref, method="ormqr")


del fixed, _rect_samples, _sign_free
