"""numpy's numeric functions that PyTorch has too: the integer functions gcd, lcm and the
bitwise shifts; copysign, logaddexp / logaddexp2, nextafter and frexp on floating point;
logical_xor. Each with PyTorch's dtypes (integer-only ops refuse floats and bool with
``NotImplementedError``, as PyTorch's dispatch macros do) and its in-place form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import (
    _CONVERTED,
    Kernels,
    Kit,
    OpError,
    Scalar,
    bind,
    check_broadcast,
    guarded,
    optional,
    torch_name,
)
from ._elementwise import binary, general, inplace
from ._rules import Rule, shape_error, to_bool, to_float


class NotImplementedForDtype(OpError, NotImplementedError):
    """PyTorch's ``"gcd_cpu" not implemented for 'Float'``: a ``NotImplementedError`` there
    (the dispatch macros), which ``convert_error`` keeps."""


def _kinds_only(kernel: str, kinds: str) -> Rule:
    def rule(d: _dt.dtype) -> _dt.dtype:
        if d.kind not in kinds:
            raise NotImplementedForDtype(f"\"{kernel}\" not implemented for '{torch_name(d)}'")
        return d

    return rule


def real_only(kernel: str) -> Rule:
    """Every dtype but complex (ordering comparisons: complex numbers have no order)."""
    return _kinds_only(kernel, "buif")


# --- gcd, lcm ------------------------------------------------------------------------------


def _euclid(xp: Any) -> Callable[[Any, Any], Any]:
    """gcd in the standard's functions: Euclid's algorithm on whole arrays."""

    def gcd(a: Any, b: Any) -> Any:
        a, b = xp.abs(a), xp.abs(b)
        a, b = xp.broadcast_arrays(a, b)
        while bool(xp.any(b != 0)):
            nz = b != 0
            r = xp.remainder(a, xp.where(nz, b, xp.ones_like(b)))
            a, b = xp.where(nz, b, a), xp.where(nz, r, xp.zeros_like(b))
        return a

    return gcd


def _lcm_by_gcd(xp: Any, gcd: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def lcm(a: Any, b: Any) -> Any:
        g = gcd(a, b)
        safe = xp.where(g == 0, xp.ones_like(g), g)
        return xp.where(g == 0, xp.zeros_like(g), xp.abs(xp.floor_divide(a, safe) * b))

    return lcm


# --- shifts --------------------------------------------------------------------------------


def _shift(kit: Kit, left: bool) -> Callable[[Any, Any], Any]:
    """PyTorch's shifts: a shift by a negative amount or by the width of the type or more
    gives 0 to the left, and the sign (0 or -1) to the right (its kernels' guards; numpy's
    and C's are undefined there)."""
    xp = kit.xp
    kind = kit.kind

    def shift(a: Any, b: Any) -> Any:
        if not hasattr(b, "dtype"):
            b = xp.asarray(b, dtype=a.dtype)
        bits = 8 * kit.dtype_of(a).itemsize
        out_of_range = (b < 0) | (b >= bits)
        if kind(b) == "u":
            out_of_range = b >= bits
        safe = xp.where(out_of_range, xp.zeros_like(b), b)
        if left:
            return xp.where(out_of_range, xp.zeros_like(a), xp.bitwise_left_shift(a, safe))
        full = xp.bitwise_right_shift(a, xp.asarray(bits - 1, dtype=a.dtype))
        return xp.where(out_of_range, full, xp.bitwise_right_shift(a, safe))

    return shift


# --- logaddexp, logaddexp2 -----------------------------------------------------------------


def _logaddexp2(xp: Any) -> Callable[[Any, Any], Any]:
    """``log2(2**a + 2**b)`` without overflow: the larger plus ``log2(1 + 2**-|a - b|)``;
    equal infinities give themselves (their difference is NaN)."""

    def f(a: Any, b: Any) -> Any:
        m = xp.maximum(a, b)
        d = xp.abs(a - b)
        r = m + xp.log1p(xp.exp(-d * _LN2)) / _LN2
        return xp.where(xp.isinf(a) & (a == b), a, r)

    return f


_LN2 = 0.6931471805599453


def _complex_logaddexp(xp: Any) -> Callable[[Any, Any], Any]:
    """logaddexp of complex numbers: the one of larger real part plus ``log1p(exp(-|d|))``,
    as PyTorch's kernel (finite inputs; equal infinite real parts give that infinity)."""

    def f(a: Any, b: Any) -> Any:
        first = xp.real(a) >= xp.real(b)
        hi = xp.where(first, a, b)
        lo = xp.where(first, b, a)
        r = hi + xp.log1p(xp.exp(lo - hi))
        same_inf = xp.isinf(xp.real(a)) & (a == b)
        return xp.where(same_inf, a, r)

    return f


# --- nextafter -----------------------------------------------------------------------------

# (significand bits, frexp exponent of the smallest normal) of the floating types a kit may
# compute in a wider type (bfloat16 and float16 in float32)
_FORMAT = {"bfloat16": (8, -125), "float16": (11, -13)}


def _nextafter_in(xp: Any, frexp: Callable[[Any], Any], p: int, emin: int) -> Any:
    """nextafter for a type of ``p`` significand bits computed in a wider one: one unit in
    the last place of the narrow type, from its frexp exponent (``2**(e - p)``, half that
    below an exact power of two, the subnormal step below the smallest normal)."""

    def f(x: Any, y: Any) -> Any:
        m, e = frexp(x)
        e = xp.maximum(xp.astype(e, x.dtype), xp.asarray(emin, dtype=x.dtype))
        up = y > x
        toward_zero = up != (x > 0)
        at_power = (xp.abs(m) == 0.5) & (e > emin) & toward_zero
        step = xp.pow(xp.asarray(2.0, dtype=x.dtype), e - p - xp.astype(at_power, x.dtype))
        step = xp.where(x == 0, xp.asarray(2.0 ** (emin - p), dtype=x.dtype), step)
        r = xp.where(up, x + step, x - step)
        r = xp.where(x == y, y, r)
        return xp.where(xp.isnan(x) | xp.isnan(y), xp.asarray(float("nan"), dtype=x.dtype), r)

    return f


# --- frexp ---------------------------------------------------------------------------------


def _frexp_standard(xp: Any) -> Callable[[Any], tuple[Any, Any]]:
    """frexp in the standard's functions: ``x = m * 2**e`` with ``0.5 <= |m| < 1``; zeros,
    infinities and NaN give themselves and exponent 0 (C's frexp)."""

    def frexp(x: Any) -> tuple[Any, Any]:
        finite = xp.isfinite(x) & (x != 0)
        ax = xp.where(finite, xp.abs(x), xp.ones_like(x))
        e = xp.floor(xp.log2(ax)) + 1
        m = x / xp.pow(xp.asarray(2.0, dtype=x.dtype), e)
        # log2's rounding may leave |m| at 1 or just under 0.5
        big = xp.abs(m) >= 1
        m, e = xp.where(big, m / 2, m), xp.where(big, e + 1, e)
        small = finite & (xp.abs(m) < 0.5)
        m, e = xp.where(small, m * 2, m), xp.where(small, e - 1, e)
        m = xp.where(finite, m, x)
        return m, xp.astype(xp.where(finite, e, xp.zeros_like(e)), xp.int32)

    return frexp


def _frexp_fn(kit: Kit) -> Callable[[Any], tuple[Any, Any]]:
    return optional(kit.xp, "frexp", _frexp_standard(kit.xp))


def frexp(kit: Kit, self: Tensor) -> tuple[Tensor, Tensor]:
    d = self._dtype
    if d.kind != "f":
        raise OpError("torch.frexp() only supports floating-point dtypes")
    m, e = _frexp_fn(kit)(kit.as_compute(self, d))
    device = self._device
    return kit.wrap(m, d, device), kit.wrap(e, _dt.int32, device)


KERNELS: dict[str, Callable[..., Any]] = {"frexp.Tensor": frexp}


def build(kit: Kit) -> Kernels:
    xp = kit.xp
    k: Kernels = {name: bind(kit, fn) for name, fn in KERNELS.items()}
    key_name = kit.key_name

    # --- integers: gcd, lcm, shifts ---------------------------------------------------

    gcd = optional(xp, "gcd", _euclid(xp))
    lcm = optional(xp, "lcm", _lcm_by_gcd(xp, gcd))
    for name, f in (("gcd", gcd), ("lcm", lcm)):
        binary(
            kit,
            k,
            name,
            f,
            rule=_kinds_only(f"{name}_cpu", "ui"),
            fast_kinds="ui",
            scalar=False,
            inplace=False,
            overload="",
        )
        inplace(kit, k, f"{name}_", name, promoted=True)

    for name, left in (("bitwise_left_shift", True), ("bitwise_right_shift", False)):
        f = _shift(kit, left)
        rule = _kinds_only("lshift_cpu" if left else "rshift_cpu", "ui")
        binary(kit, k, name, f, rule=rule, fast_kinds="ui", scalar=False, inplace=False)
        k[f"{name}.Tensor_Scalar"] = _tensor_scalar(kit, f"aten::{name}.Tensor_Scalar", f, rule)
        k[f"{name}.Scalar_Tensor"] = _scalar_tensor(kit, f"aten::{name}.Scalar_Tensor", f, rule)
        inplace(kit, k, f"{name}_.Tensor", f"{name}.Tensor", promoted=True)
        inplace(kit, k, f"{name}_.Tensor_Scalar", f"{name}.Tensor_Scalar")

    # --- floating point ---------------------------------------------------------------

    refuse_complex = real_only("copysign_cpu")

    def copysign_rule(d: _dt.dtype) -> _dt.dtype:
        return to_float(refuse_complex(d))

    binary(kit, k, "copysign", xp.copysign, rule=copysign_rule, fast_kinds="f", inplace=False)
    inplace(kit, k, "copysign_.Tensor", "copysign.Tensor", promoted=True)
    inplace(kit, k, "copysign_.Scalar", "copysign.Scalar")

    real_logaddexp = xp.logaddexp
    complex_logaddexp = _complex_logaddexp(xp)

    def logaddexp(a: Any, b: Any) -> Any:
        if kit.kind(a) == "c":
            return complex_logaddexp(a, b)
        return real_logaddexp(a, b)

    binary(
        kit,
        k,
        "logaddexp",
        logaddexp,
        rule=_kinds_only("logaddexp_cpu", "fc"),
        fast_kinds="f",
        scalar=False,
        inplace=False,
        quiet=True,
        overload="",
    )
    binary(
        kit,
        k,
        "logaddexp2",
        _logaddexp2(xp),
        rule=_kinds_only("logaddexp2_cpu", "f"),
        fast_kinds="f",
        scalar=False,
        inplace=False,
        quiet=True,
        overload="",
    )

    native_nextafter = xp.nextafter
    frexp_fn = _frexp_fn(kit)
    narrow = {
        d: _nextafter_in(xp, frexp_fn, *_FORMAT[d.name])
        for d in kit.storage
        if d.name in _FORMAT and d not in kit.native
    }
    nextafter_rule = _kinds_only("nextafter_cpu", "f")

    def nextafter(self: Tensor, other: Tensor) -> Tensor:
        try:
            od = nextafter_rule(kit.result_dtype(self, other))
            f = narrow.get(od, native_nextafter)
            r, od = general(kit, "aten::nextafter", f, nextafter_rule, self, other)
            return kit.wrap(r, od, self._device)
        except _CONVERTED as e:
            raise shape_error("aten::nextafter", e, self, other, key=key_name) from e

    k["nextafter"] = guarded(nextafter)
    inplace(kit, k, "nextafter_", "nextafter", promoted=True)

    # --- logic --------------------------------------------------------------------------

    b_t = kit.storage[_dt.bool]

    def logical_xor(a: Any, b: Any) -> Any:
        return xp.logical_xor(kit.cast(a, b_t), kit.cast(b, b_t))

    binary(
        kit,
        k,
        "logical_xor",
        logical_xor,
        out_rule=to_bool,
        scalar=False,
        inplace=False,
        overload="",
    )
    inplace(kit, k, "logical_xor_", "logical_xor")
    return k


def _tensor_scalar(
    kit: Kit, qual: str, f: Callable[[Any, Any], Any], rule: Rule
) -> Callable[[Tensor, Scalar], Tensor]:
    def kernel(self: Tensor, other: Scalar) -> Tensor:
        try:
            r, od = general(kit, qual, f, rule, self, other)
            return kit.wrap(r, od, self._device)
        except _CONVERTED as e:
            raise shape_error(qual, e, self, key=kit.key_name) from e

    return guarded(kernel)


def _scalar_tensor(
    kit: Kit, qual: str, f: Callable[[Any, Any], Any], rule: Rule
) -> Callable[[Scalar, Tensor], Tensor]:
    """``self`` a Python scalar, promoted as PyTorch's wrapped scalar tensor."""

    def kernel(self: Scalar, other: Tensor) -> Tensor:
        try:
            od = rule(kit.result_dtype(self, other))
            kit.check_dtype(od)
            device = other._device
            with kit.on(device):
                a = kit.xp.asarray(kit.scalar(self, od), dtype=kit.compute[od])
            b = kit.operand(other, od, device)
            check_broadcast(tuple(other._data.shape))
            return kit.wrap(f(a, b), od, device)
        except _CONVERTED as e:
            raise shape_error(qual, e, other, key=kit.key_name) from e

    return guarded(kernel)
