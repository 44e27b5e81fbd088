"""Samples and oracles of the ``special`` family: the functions of ``tensorplug.special``,
PyTorch's aliases of standard ops, which take the samples and oracles of those ops under their
own names."""

from __future__ import annotations

from . import nn, pointwise, reductions  # noqa: F401 - the OpInfos aliased below
from ._core import alias

for _name in ("expm1", "exp2", "log1p", "erf", "logit", "logsumexp"):
    alias(f"special_{_name}", _name, f"special.{_name}")
alias("special_expit", "sigmoid", "special.expit")
alias("special_softmax", "softmax.int", "special.softmax")
alias("special_log_softmax", "log_softmax.int", "special.log_softmax")


# --- special functions (kernels: array_backend/_special.py) ----------------------------------
# Oracles: scipy.special in float64 (imported when a case runs: the conformance kit imports
# without scipy); the orthogonal polynomials by scipy's eval_* or, for the Chebyshev
# polynomials of the third and fourth kinds, by V_n = U_n - U_(n-1), W_n = U_n + U_(n-1).

from collections.abc import Callable, Iterator  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from ._core import (  # noqa: E402
    FLOATS,
    OpInfo,
    S,
    SampleInput,
    fn,
    make,
    meth,
    np_dtype,
    promoted,
    unary_float,
    unary_samples,
)
from ._core import add as _add  # noqa: E402


def _sp(name: str) -> Callable[..., Any]:
    def ref(*args: Any) -> Any:
        import scipy.special

        f = getattr(scipy.special, name)
        arrays = [np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) else a for a in args]
        with np.errstate(all="ignore"):
            r = f(*arrays)
        return r[0] if name == "airy" else r

    ref.__name__ = f"scipy.special.{name}"
    return ref


_LOOSE = {"float32": (2e-5, 1e-5)}
# the functions whose kernel is the same scipy call for every dtype run one (the suite's time)
_F64 = ("float64",)  # scipy's float32 loops: a few ulps from float64 rounded

# (op name, public name, scipy name, low, high, dtypes, method)
_SPECIAL_UNARY: tuple[tuple[str, str, str, float, float, tuple[str, ...], bool], ...] = (
    ("lgamma", "lgamma", "gammaln", 0.1, 5, (*FLOATS, "int64"), True),
    ("digamma", "digamma", "psi", 0.1, 5, (*FLOATS, "int64"), True),
    ("erfinv", "erfinv", "erfinv", -0.95, 0.95, FLOATS, True),
    ("erfc", "erfc", "erfc", -3, 3, (*FLOATS, "int64"), True),
    ("i0", "i0", "i0", -3, 3, FLOATS, True),
    ("special_i0e", "special.i0e", "i0e", -3, 3, FLOATS, False),
    ("special_i1", "special.i1", "i1", -3, 3, FLOATS, False),
    ("special_i1e", "special.i1e", "i1e", -3, 3, _F64, False),
    ("special_ndtri", "special.ndtri", "ndtri", 0.02, 0.98, FLOATS, False),
    ("special_log_ndtr", "special.log_ndtr", "log_ndtr", -5, 5, _F64, False),
    ("special_erfcx", "special.erfcx", "erfcx", -2, 5, _F64, False),
    ("special_airy_ai", "special.airy_ai", "airy", -3, 3, _F64, False),
    ("special_bessel_j0", "special.bessel_j0", "j0", -5, 5, _F64, False),
    ("special_bessel_j1", "special.bessel_j1", "j1", -5, 5, _F64, False),
    ("special_bessel_y0", "special.bessel_y0", "y0", 0.1, 5, _F64, False),
    ("special_bessel_y1", "special.bessel_y1", "y1", 0.1, 5, _F64, False),
    ("special_modified_bessel_i0", "special.modified_bessel_i0", "i0", -3, 3, _F64, False),
    ("special_modified_bessel_i1", "special.modified_bessel_i1", "i1", -3, 3, _F64, False),
    ("special_modified_bessel_k0", "special.modified_bessel_k0", "k0", 0.1, 5, _F64, False),
    ("special_modified_bessel_k1", "special.modified_bessel_k1", "k1", 0.1, 5, _F64, False),
    (
        "special_scaled_modified_bessel_k0", "special.scaled_modified_bessel_k0", "k0e", 0.1, 5,
        FLOATS, False,
    ),
    (
        "special_scaled_modified_bessel_k1", "special.scaled_modified_bessel_k1", "k1e", 0.1, 5,
        FLOATS, False,
    ),
)  # fmt: skip

for _op, _public, _scipy, _low, _high, _dtypes, _method in _SPECIAL_UNARY:
    _add(
        OpInfo(
            _op,
            op=fn(_public),
            method=meth(_op) if _method else None,
            sample_inputs=unary_samples(low=_low, high=_high),
            ref=_sp(_scipy),
            dtypes=_dtypes,
            result_dtype=unary_float,
            tol=_LOOSE,
            needs_special=True,
        )
    )


def _ref_sinc(x: Any) -> Any:
    return np.sinc(np.asarray(x, dtype=np.float64))


def _ref_entr(x: Any) -> Any:
    return _sp("entr")(x)


def _ref_spherical_j0(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        return np.where(x == 0, 1.0, np.sin(x) / np.where(x == 0, 1.0, x))


def _with_points(
    points: list[float], low: float, high: float
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield from unary_samples(low=low, high=high)(d, rng)
        yield S("special_points", np.array(points).astype(np_dtype(d)))

    return gen


for _op, _public, _ref, _gen, _method in (
    ("sinc", "sinc", _ref_sinc, _with_points([0.0, 1.0, -2.0, 0.5], -3, 3), True),
    ("special_entr", "special.entr", _ref_entr, _with_points([0.0, -1.0, 1.0], 0.1, 3), False),
    (
        "special_spherical_bessel_j0", "special.spherical_bessel_j0", _ref_spherical_j0,
        _with_points([0.0, 1.0, -1.0], -6, 6), False,
    ),
):  # fmt: skip
    _add(
        OpInfo(
            _op,
            op=fn(_public),
            method=meth(_op) if _method else None,
            sample_inputs=_gen,
            ref=_ref,
            dtypes=(*FLOATS, "int64") if _op != "special_spherical_bessel_j0" else FLOATS,
            result_dtype=unary_float,
            tol=_LOOSE,
        )
    )


def _polygamma_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for n in (0, 1, 3):
        yield S(f"n{n}", n, make((3, 4), d, rng, 0.2, 5))
    yield S("0dim", 2, make((), d, rng, 0.2, 5))


def _ref_polygamma(n: int, x: Any) -> Any:
    return _sp("psi")(x) if n == 0 else _sp("polygamma")(n, x)


def _polygamma_dtype(s: SampleInput, d: str) -> str:
    return d if d in FLOATS else "float32"


_add(
    OpInfo(
        "polygamma",
        op=fn("polygamma"),
        sample_inputs=_polygamma_samples,
        ref=_ref_polygamma,
        dtypes=FLOATS,
        result_dtype=_polygamma_dtype,
        tol={"float32": (1e-4, 1e-5)},
        needs_special=True,
    )
)


def _mvlgamma_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for p in (1, 3):
        yield S(f"p{p}", make((3, 4), d, rng, 2, 5), p)
    yield S("p_kw", make((2,), d, rng, 2, 5), p=2)


def _ref_mvlgamma(x: Any, p: int) -> Any:
    import scipy.special

    x = np.asarray(x, dtype=np.float64)
    return np.vectorize(lambda v: scipy.special.multigammaln(v, p), otypes=[np.float64])(x)


_add(
    OpInfo(
        "mvlgamma",
        op=fn("mvlgamma"),
        method=meth("mvlgamma"),
        sample_inputs=_mvlgamma_samples,
        ref=_ref_mvlgamma,
        dtypes=FLOATS,
        result_dtype=unary_float,
        tol=_LOOSE,
        needs_special=True,
    )
)


def _binary_special_samples(
    low: float, high: float, rlow: float, rhigh: float, form: str
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    """``form``: "tensor" (two tensors), "self_scalar", "other_scalar"."""

    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        def a(shape: tuple[int, ...], dd: str = d) -> Any:
            return make(shape, dd, rng, low, high)

        def b(shape: tuple[int, ...], dd: str = d) -> Any:
            return make(shape, dd, rng, rlow, rhigh)

        if form == "self_scalar":
            yield S("scalar_self", (low + high) / 2, b((2, 3)))
            yield S("scalar_self_0dim", (low + high) / 2, b(()))
            return
        if form == "other_scalar":
            yield S("scalar_other", a((2, 3)), (rlow + rhigh) / 2)
            return
        yield S("same_shape", a((2, 3)), b((2, 3)))
        yield S("broadcast", a((3, 1)), b((1, 4)))
        yield S("0dim_other", a((2, 3)), b(()))
        yield S("empty", a((0,)), b((0,)))
        if d == "float32":
            yield S("promote_float32_float64", a((3, 1)), b((1, 2), "float64"))

    return gen


def _swap_scalar(ref: Callable[..., Any]) -> Callable[..., Any]:
    def call(a: Any, b: Any) -> Any:
        return ref(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))

    return call


def _binary_dtype(s: SampleInput, d: str) -> str:
    arrays = [x for x in s.args if isinstance(x, np.ndarray)]
    if len(arrays) == 2:
        return str(promoted(0, 1, floating=True)(s, d))
    return unary_float(s, d)


# (op name, public name, method, scipy name, self range, other range, tensor forms)
for _op, _public, _method, _scipy, (_lo, _hi), (_rlo, _rhi), _forms in (
    ("xlogy", "xlogy", True, "xlogy", (-2, 2), (0.1, 4),
     {"Tensor": "tensor", "Scalar_Self": "self_scalar", "Scalar_Other": "other_scalar"}),
    ("special_xlog1py", "special.xlog1py", False, "xlog1py", (-2, 2), (-0.9, 4),
     {"": "tensor", "self_scalar": "self_scalar", "other_scalar": "other_scalar"}),
    ("special_zeta", "special.zeta", False, "zeta", (1.5, 4), (0.5, 3),
     {"": "tensor", "self_scalar": "self_scalar", "other_scalar": "other_scalar"}),
    ("igamma", "igamma", True, "gammainc", (0.5, 3), (0.1, 4), {"": "tensor"}),
    ("igammac", "igammac", True, "gammaincc", (0.5, 3), (0.1, 4), {"": "tensor"}),
):  # fmt: skip
    for _overload, _form in _forms.items():
        _add(
            OpInfo(
                f"{_op}.{_overload}" if _overload else _op,
                op=fn(_public),
                method=meth(_op) if _method and _form != "self_scalar" else None,
                sample_inputs=_binary_special_samples(_lo, _hi, _rlo, _rhi, _form),
                ref=_swap_scalar(_sp(_scipy)),
                dtypes=FLOATS,
                result_dtype=_binary_dtype,
                tol=_LOOSE,
                needs_special=True,
            )
        )


def _chebyshev_u(n: Any, x: Any) -> Any:
    import scipy.special

    return np.where(n < 0, 0.0, scipy.special.eval_chebyu(np.maximum(n, 0), x))


def _poly_ref(name: str) -> Callable[[Any, Any], Any]:
    def ref(x: Any, n: Any) -> Any:
        import scipy.special

        x = np.asarray(x, dtype=np.float64)
        n = np.trunc(np.asarray(n, dtype=np.float64)).astype(np.int64)
        shifted = name.startswith("shifted_")
        base = name.removeprefix("shifted_")
        if shifted:
            x = 2 * x - 1
        if base in ("chebyshev_polynomial_v", "chebyshev_polynomial_w"):
            sign = -1 if base.endswith("v") else 1
            r = _chebyshev_u(n, x) + sign * _chebyshev_u(n - 1, x)
            return np.where(n < 0, 0.0, r)
        f = {
            "chebyshev_polynomial_t": scipy.special.eval_chebyt,
            "chebyshev_polynomial_u": scipy.special.eval_chebyu,
            "hermite_polynomial_h": scipy.special.eval_hermite,
            "hermite_polynomial_he": scipy.special.eval_hermitenorm,
            "laguerre_polynomial_l": scipy.special.eval_laguerre,
            "legendre_polynomial_p": scipy.special.eval_legendre,
        }[base]
        return np.where(n < 0, 0.0, f(np.maximum(n, 0), x))

    return ref


def _poly_samples(form: str) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = make((2, 3), d, rng, -1, 1)
        if form == "tensor":
            yield S("degrees", x, np.array([[0], [4]]).astype(np.int64))
            yield S(
                "negative_and_float_degree",
                make((3,), d, rng, -1, 1),
                np.array([-1.0, 2.7, 5.0]).astype(np_dtype(d)),
            )
        elif form == "x_scalar":
            yield S("x_scalar", 0.25, np.array([0, 1, 3, 6]).astype(np.int64))
        else:
            yield S("n_scalar", x, 3)

    return gen


def _poly_dtype(s: SampleInput, d: str) -> str:
    arrays = [x for x in s.args if isinstance(x, np.ndarray)]
    if len(arrays) == 2:
        return str(promoted(0, 1, floating=True)(s, d))
    return d if arrays[0].dtype.kind == "f" else "float32"


for _poly in (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
):  # fmt: skip
    for _overload in ("", "x_scalar", "n_scalar"):
        _add(
            OpInfo(
                f"special_{_poly}.{_overload}" if _overload else f"special_{_poly}",
                op=fn(f"special.{_poly}"),
                sample_inputs=_poly_samples(_overload or "tensor"),
                ref=_poly_ref(_poly),
                # one dtype: the recurrence is dtype-generic (float32 runs in tests/special)
                dtypes=("float32",) if _poly == "chebyshev_polynomial_t" else _F64,
                result_dtype=_poly_dtype,
                tol={"float32": (1e-5, 1e-5)},
            )
        )

# the aliases (composites) take their kernels' samples
for _alias, _of in (
    ("psi", "digamma"), ("digamma", "digamma"), ("gammaln", "lgamma"), ("erfc", "erfc"),
    ("erfinv", "erfinv"), ("i0", "i0"), ("sinc", "sinc"), ("polygamma", "polygamma"),
    ("gammainc", "igamma"), ("gammaincc", "igammac"), ("multigammaln", "mvlgamma"),
):  # fmt: skip
    alias(f"special_{_alias}", _of, f"special.{_alias}")
alias("special_xlogy", "xlogy.Tensor", "special.xlogy")
alias("special_xlogy.self_scalar", "xlogy.Scalar_Self", "special.xlogy")
alias("special_xlogy.other_scalar", "xlogy.Scalar_Other", "special.xlogy")
alias("special_round", "round.decimals", "special.round")


def _ref_ndtr(x: Any) -> Any:
    return _sp("ndtr")(x)


_add(
    OpInfo(
        "special_ndtr",
        op=fn("special.ndtr"),
        sample_inputs=unary_samples(),
        ref=_ref_ndtr,
        dtypes=(*FLOATS, "int64"),
        result_dtype=unary_float,
        tol=_LOOSE,
    )
)


# --- in-place forms (issue 29) ----------------------------------------------------------------

from ._core import OP_DB, inplace_samples, same  # noqa: E402


def _special_inplace(
    base_name: str,
    name: str,
    function: bool,
    samples: Callable[[str, np.random.Generator], Iterator[SampleInput]] | None = None,
    ref: Callable[..., Any] | None = None,
) -> None:
    base = next(info for info in OP_DB if info.name == base_name)
    op = name.split(".")[0]
    _add(
        OpInfo(
            name,
            op=fn(op) if function else meth(op),
            method=meth(op) if function else None,
            sample_inputs=samples or inplace_samples(base),
            ref=ref or base.ref,
            dtypes=base.dtypes,
            result_dtype=same,
            kind="inplace",
            tol=base.tol,
            needs_special=base.needs_special,
        )
    )


for _base_name, _name, _function in (
    ("lgamma", "lgamma_", False),
    ("digamma", "digamma_", False),
    ("erfinv", "erfinv_", False),
    ("erfc", "erfc_", True),
    ("i0", "i0_", True),
    ("sinc", "sinc_", True),
    ("mvlgamma", "mvlgamma_", False),
    ("igamma", "igamma_", False),
    ("igammac", "igammac_", False),
    ("xlogy.Tensor", "xlogy_.Tensor", True),
    ("xlogy.Scalar_Other", "xlogy_.Scalar_Other", True),
):
    _special_inplace(_base_name, _name, _function)


def _polygamma_inplace_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    """polygamma's samples with self first: ``x.polygamma_(n)``."""
    for s in _polygamma_samples(d, rng):
        yield S(s.name, s.args[1], s.args[0])


_special_inplace(
    "polygamma",
    "polygamma_",
    False,
    samples=_polygamma_inplace_samples,
    ref=lambda x, n: _ref_polygamma(n, x),
)
