"""The ``special`` family of the array kit: the special functions of ``tensorplug.special``
and their top-level names (``lgamma``, ``digamma``, ``polygamma``, ``erfinv``, ``erfc``,
``i0``, ``sinc``, ``xlogy``, ``igamma``/``igammac``, ``mvlgamma``) that are kernels in PyTorch.

Note [Special-function namespace]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The array API has no gamma, Bessel or error-function inverse. They come from a well-kept
library that the backend plugin hands over at registration:
``array_backend.register(..., special=scipy.special)`` (tensorplug-cpu) or
``special=cupyx.scipy.special`` (tensorplug-cuda); it is ``kit.special``, any namespace with
scipy.special's names and ufunc calling convention (``gammaln(x)``, ``polygamma(n, x)``,
``airy(x)[0]``). The core imports no such library. A backend registered without one still gets
these kernels; a call raises ``RuntimeError("aten::special_i0e: i0e is not supported by this
backend: ...")`` naming the backend and the ``special=`` argument, so ``tensorplug ops`` lists
the op as present and the error says what is missing.

The functions that the standard's functions compute well (``sinc``, ``entr``,
``spherical_bessel_j0`` and the orthogonal polynomials, by their three-term recurrences) are
written in ``xp`` and need no such namespace.

Dtypes follow PyTorch: integer and bool inputs compute in the default dtype; complex inputs are
refused with PyTorch's "not implemented for" message; the functions PyTorch has no half
precision kernel for (the Bessel family, ``ndtri``, ``log_ndtr``, ``erfcx``, the polynomials)
refuse float16 and bfloat16 too. Half precision computes in float32 and rounds back.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor
from ._kit import Kernels, Kit, OpError, Scalar, torch_name
from ._pointwise._elementwise import inplace, write_result

# op -> (scipy.special name, PyTorch's kernel name in its dtype errors, half precision taken)
_UNARY: dict[str, tuple[str, str, bool]] = {
    "lgamma": ("gammaln", "lgamma_vml_cpu", True),
    "digamma": ("psi", "digamma", True),
    "erfinv": ("erfinv", "erfinv_vml_cpu", True),
    "erfc": ("erfc", "erfc_vml_cpu", True),
    "i0": ("i0", "i0_vml_cpu", True),
    "special_i0e": ("i0e", "i0e_cpu", True),
    "special_i1": ("i1", "i1_cpu", True),
    "special_i1e": ("i1e", "i1e_cpu", True),
    "special_ndtri": ("ndtri", "ndtri_cpu", False),
    "special_log_ndtr": ("log_ndtr", "log_ndtr_cpu", False),
    "special_erfcx": ("erfcx", "erfcx_cpu", False),
    "special_airy_ai": ("airy", "airy_ai_cpu", False),
    "special_bessel_j0": ("j0", "bessel_j0_cpu", False),
    "special_bessel_j1": ("j1", "bessel_j1_cpu", False),
    "special_bessel_y0": ("y0", "bessel_y0_cpu", False),
    "special_bessel_y1": ("y1", "bessel_y1_cpu", False),
    "special_modified_bessel_i0": ("i0", "modified_bessel_i0_cpu", False),
    "special_modified_bessel_i1": ("i1", "modified_bessel_i1_cpu", False),
    "special_modified_bessel_k0": ("k0", "modified_bessel_k0_cpu", False),
    "special_modified_bessel_k1": ("k1", "modified_bessel_k1_cpu", False),
    "special_scaled_modified_bessel_k0": ("k0e", "scaled_modified_bessel_k0_cpu", False),
    "special_scaled_modified_bessel_k1": ("k1e", "scaled_modified_bessel_k1_cpu", False),
}

# op -> (scipy.special name, kernel name, whether integer operands are refused)
_BINARY: dict[str, tuple[str, str, bool]] = {
    "xlogy.Tensor": ("xlogy", "xlogy_cpu", False),
    "special_xlog1py": ("xlog1py", "xlog1py_cpu", False),
    "special_zeta": ("zeta", "zeta_cpu", False),
    "igamma": ("gammainc", "igamma_cpu", True),
    "igammac": ("gammaincc", "igammac_cpu", True),
}

# the orthogonal polynomials: op -> (P_0, P_1 as functions of x, the recurrence
# P_{k+1} = f(k, x, P_k, P_{k-1}))
Recurrence = Callable[[int, Any, Any, Any], Any]
_POLYNOMIALS: dict[str, tuple[Callable[[Any], Any], Recurrence, bool]] = {
    # name: (P_1(x), step, shifted: evaluated at 2x - 1)
    "chebyshev_polynomial_t": (lambda x: x, lambda k, x, p, q: 2 * x * p - q, False),
    "chebyshev_polynomial_u": (lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - q, False),
    "chebyshev_polynomial_v": (lambda x: 2 * x - 1, lambda k, x, p, q: 2 * x * p - q, False),
    "chebyshev_polynomial_w": (lambda x: 2 * x + 1, lambda k, x, p, q: 2 * x * p - q, False),
    "hermite_polynomial_h": (lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - 2 * k * q, False),
    "hermite_polynomial_he": (lambda x: x, lambda k, x, p, q: x * p - k * q, False),
    "laguerre_polynomial_l": (
        lambda x: 1 - x,
        lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1),
        False,
    ),
    "legendre_polynomial_p": (
        lambda x: x,
        lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1),
        False,
    ),
    "shifted_chebyshev_polynomial_t": (lambda x: x, lambda k, x, p, q: 2 * x * p - q, True),
    "shifted_chebyshev_polynomial_u": (lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - q, True),
    "shifted_chebyshev_polynomial_v": (
        lambda x: 2 * x - 1,
        lambda k, x, p, q: 2 * x * p - q,
        True,
    ),
    "shifted_chebyshev_polynomial_w": (
        lambda x: 2 * x + 1,
        lambda k, x, p, q: 2 * x * p - q,
        True,
    ),
}


def special_function(kit: Kit, name: str) -> Callable[..., Any]:
    """``kit.special.<name>``, or the error of Note [Special-function namespace]."""
    ns = kit.special
    fn = getattr(ns, name, None) if ns is not None else None
    if fn is None:
        why = (
            "it registered no special-function namespace"
            if ns is None
            else f"its special-function namespace {getattr(ns, '__name__', ns)!r} has no {name}"
        )
        raise OpError(
            f"{name} is not supported by this backend ({kit.key_name}): {why}. A backend plugin "
            "hands one over as tensorplug.array_backend.register(..., special=scipy.special) "
            "(or cupyx.scipy.special, or any namespace with scipy.special's functions)"
        )
    return fn  # type: ignore[no-any-return]


def _float_rule(d: _dt.dtype, kernel: str, halves: bool) -> _dt.dtype:
    """The result dtype of a special function of ``d``: the default dtype for integers and
    bools; complex, and half precision where PyTorch has no kernel for it, refused."""
    if d.kind == "c" or (not halves and d in (_dt.float16, _dt.bfloat16)):
        raise OpError(f"\"{kernel}\" not implemented for '{torch_name(d)}'")
    return d if d.kind == "f" else _dt.get_default_dtype()


def _unary(
    kit: Kit, name: str, kernel: str, halves: bool, f: Callable[[Kit, Any], Any]
) -> Callable[[Tensor], Tensor]:
    def unary(self: Tensor) -> Tensor:
        od = _float_rule(self._dtype, kernel, halves)
        kit.check_dtype(od)
        x = kit.cast(self._data, kit.accumulate[od])  # half precision in float32
        with kit.quiet():
            r = f(kit, x)
        return kit.wrap(kit.cast(kit.xp.asarray(r), x.dtype), od, self._device)

    unary.__name__ = unary.__qualname__ = name
    return unary


def _scipy_unary(fname: str) -> Callable[[Kit, Any], Any]:
    def f(kit: Kit, x: Any) -> Any:
        r = special_function(kit, fname)(x)
        if fname == "airy":
            return r[0]  # (Ai, Ai', Bi, Bi')
        if fname == "gammaln":  # PyTorch's lgamma(-inf) is +inf (scipy: -inf)
            return kit.xp.where(x == -math.inf, math.inf, r)
        return r

    return f


def _sinc(kit: Kit, x: Any) -> Any:
    xp = kit.xp
    px = x * math.pi
    zero = x == 0
    return xp.where(zero, 1.0, xp.sin(px) / xp.where(zero, 1.0, px))


def _entr(kit: Kit, x: Any) -> Any:
    xp = kit.xp
    pos = x > 0
    r = xp.where(pos, -x * xp.log(xp.where(pos, x, 1.0)), 0.0)
    return xp.where(x < 0, -math.inf, xp.where(xp.isnan(x), x, r))


def _spherical_j0(kit: Kit, x: Any) -> Any:
    xp = kit.xp
    zero = x == 0
    r = xp.where(zero, 1.0, xp.sin(x) / xp.where(zero, 1.0, x))
    return xp.where(xp.isinf(x), 0.0, r)


def _binary_operands(
    kit: Kit, self: Tensor | Scalar, other: Tensor | Scalar, kernel: str, ints: bool
) -> tuple[Any, Any, _dt.dtype, Any]:
    """The two operands in the compute dtype of the result (PyTorch's promotion, then the
    default dtype for integers), the result dtype and the device."""
    t = self if isinstance(self, Tensor) else other
    assert isinstance(t, Tensor)
    device = t._device
    d = kit.result_dtype(self, other)
    if d.kind == "c" or (ints and d.kind in "bui"):
        raise OpError(f"\"{kernel}\" not implemented for '{torch_name(d)}'")
    od = d if d.kind == "f" else _dt.get_default_dtype()
    kit.check_dtype(od)
    cd = kit.accumulate[od]

    def operand(v: Tensor | Scalar) -> Any:
        if isinstance(v, Tensor):
            return kit.cast(kit.operand(v, od, device), cd)
        with kit.on(device):
            return kit.xp.asarray(float(v), dtype=cd)  # type: ignore[arg-type]

    return operand(self), operand(other), od, device


def _binary(kit: Kit, fname: str, kernel: str, ints: bool) -> Callable[..., Tensor]:
    def binary(self: Tensor | Scalar, other: Tensor | Scalar) -> Tensor:
        a, b, od, device = _binary_operands(kit, self, other, kernel, ints)
        with kit.quiet():
            r = special_function(kit, fname)(a, b)
        return kit.wrap(kit.cast(kit.xp.asarray(r), a.dtype), od, device)

    return binary


def polygamma(kit: Kit, n: int, self: Tensor) -> Tensor:
    if n < 0:
        raise OpError("polygamma(n, x) does not support negative n.")
    od = _float_rule(self._dtype, "polygamma", True)
    kit.check_dtype(od)
    x = kit.cast(self._data, kit.accumulate[od])
    with kit.quiet():
        if n == 0:
            r = special_function(kit, "psi")(x)
        else:
            r = special_function(kit, "polygamma")(n, x)
    return kit.wrap(kit.cast(kit.xp.asarray(r), x.dtype), od, self._device)


def mvlgamma(kit: Kit, self: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``: ``p (p - 1) / 4 log(pi) +
    sum_{j < p} lgamma(x - j / 2)``."""
    if p < 1:
        raise OpError("p has to be greater than or equal to 1")
    od = _float_rule(self._dtype, "mvlgamma", True)
    kit.check_dtype(od)
    x = kit.cast(self._data, kit.accumulate[od])
    gammaln = special_function(kit, "gammaln")
    with kit.quiet():
        r = x * 0 + (p * (p - 1) / 4) * math.log(math.pi)
        for j in range(p):
            r = r + gammaln(x - j / 2)
    return kit.wrap(kit.cast(kit.xp.asarray(r), x.dtype), od, self._device)


def _polynomial(kit: Kit, name: str) -> Callable[..., Tensor]:
    first, step, shifted = _POLYNOMIALS[name]
    kernel = f"{name}_cpu"

    def polynomial(x: Tensor | Scalar, n: Tensor | Scalar) -> Tensor:
        xp = kit.xp
        xa, na, od, device = _binary_operands(kit, x, n, kernel, False)
        if od in (_dt.float16, _dt.bfloat16):
            raise OpError(f"\"{kernel}\" not implemented for '{torch_name(od)}'")
        with kit.quiet():
            if shifted:
                xa = 2 * xa - 1
            # n as PyTorch reads it: truncated to an integer; P_n is 0 for n < 0
            ni = xp.trunc(na)
            xa, ni = xp.broadcast_arrays(xa, ni)
            # the recurrence runs to the largest degree asked; Meta arrays have no values, and
            # the result's shape and dtype do not depend on them
            top = 0
            if kit.device_type != "meta" and math.prod(ni.shape) and bool(xp.all(xp.isfinite(ni))):
                top = int(xp.max(ni))
            prev = xp.ones_like(xa)
            r = xp.where(ni == 0, prev, xp.zeros_like(xa))
            if top >= 1:
                cur = first(xa)
                r = xp.where(ni == 1, cur, r)
                for k in range(1, top):
                    prev, cur = cur, step(k, xa, cur, prev)
                    r = xp.where(ni == k + 1, cur, r)
            r = xp.where(xp.isnan(na) | xp.isnan(xa), math.nan, r)
        return kit.wrap(kit.cast(r, xa.dtype), od, device)

    polynomial.__name__ = polynomial.__qualname__ = name
    return polynomial


def _polygamma_inplace(kit: Kit, polygamma: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``self.polygamma_(n)``: ``polygamma(n, self)`` written into self (the in-place form
    takes ``self`` first, as PyTorch's schema does)."""

    def polygamma_(self: Tensor, n: int) -> Tensor:
        r = polygamma(n, self)
        write_result(kit, self, r._data, r._dtype, in_place=True)
        return self

    return polygamma_


KERNELS: dict[str, Callable[..., Any]] = {
    "polygamma": polygamma,
    "mvlgamma": mvlgamma,
}


def build(kit: Kit) -> Kernels:
    from ._kit import bind

    k: Kernels = {name: bind(kit, fn) for name, fn in KERNELS.items()}
    for name, (fname, kernel, halves) in _UNARY.items():
        k[name] = _unary(kit, name, kernel, halves, _scipy_unary(fname))
    k["sinc"] = _unary(kit, "sinc", "sinc_cpu", True, _sinc)
    k["special_entr"] = _unary(kit, "special_entr", "entr_cpu", True, _entr)
    k["special_spherical_bessel_j0"] = _unary(
        kit, "special_spherical_bessel_j0", "spherical_bessel_j0_cpu", False, _spherical_j0
    )
    for name, (fname, kernel, ints) in _BINARY.items():
        k[name] = _binary(kit, fname, kernel, ints)
    # the Scalar overloads: the same kernels (their operands may be Python scalars)
    k["xlogy.Scalar_Self"] = k["xlogy.Scalar_Other"] = k["xlogy.Tensor"]
    for name in ("special_xlog1py", "special_zeta"):
        k[f"{name}.self_scalar"] = k[f"{name}.other_scalar"] = k[name]
    for name in _POLYNOMIALS:
        poly = k[f"special_{name}"] = _polynomial(kit, name)
        k[f"special_{name}.x_scalar"] = k[f"special_{name}.n_scalar"] = poly
    # --- in-place forms (issue 29): the functional kernel, written into self ---
    for name in ("lgamma", "digamma", "erfinv", "erfc", "i0", "sinc", "mvlgamma"):
        inplace(kit, k, f"{name}_", name)
    for name in ("igamma", "igammac", "xlogy.Tensor", "xlogy.Scalar_Other"):
        op, _, overload = name.partition(".")
        inplace(kit, k, f"{op}_.{overload}" if overload else f"{op}_", name, promoted=True)
    k["polygamma_"] = _polygamma_inplace(kit, k["polygamma"])
    return k
