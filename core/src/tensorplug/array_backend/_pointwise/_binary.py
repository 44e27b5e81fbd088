"""Binary arithmetic kernels: add, sub, mul, div (and their modes), pow, remainder, fmod,
floor_divide, maximum / minimum / fmax / fmin, atan2, hypot, heaviside, lerp, addcmul /
addcdiv, comparisons, logical and bitwise ops, with their in-place and ``out=`` forms, built by
``_elementwise.binary`` (Note [Binary fast path] there).
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
    check_fits,
    cpp_name,
    guarded,
    optional,
    torch_name,
)
from ._elementwise import (
    binary,
    check_inplace_shape,
    general,
    inplace,
    write_result,
)
from ._numeric import real_only
from ._rules import (
    integral_only,
    no_bool_pow,
    real_float,
    real_floating_only,
    real_no_bool,
    same,
    shape_error,
    to_bool,
    to_float,
)

# --- lerp, addcmul, addcdiv --------------------------------------------------------


def same_dtype(self: Tensor, other: Tensor, arg: str) -> None:
    if other._dtype is not self._dtype:
        raise OpError(
            f"expected dtype {cpp_name(self._dtype)} for `{arg}` but got dtype {cpp_name(other._dtype)}"
        )


def scalar_in(kit: Kit, value: Scalar, d: _dt.dtype, math_t: Any) -> Any:
    """``value`` as a 0-dim array of ``math_t`` for a result of dtype ``d``, as PyTorch's
    ``value.to<scalar_t>()``: refused if complex for a real type, truncated for integers."""
    xp = kit.xp
    if isinstance(value, complex) and d.kind != "c":
        raise OpError(f"value cannot be converted to type {_C_SCALAR[d.name]} without overflow")
    if d.kind in "ui":
        check_fits(value, d)  # PyTorch: value=300 for int8 is an error, not a wrap
    if d.kind in "ui" and isinstance(value, float):
        value = int(value)
    return xp.asarray(kit.scalar(value, d), dtype=math_t)


def lerp(kit: Kit, a: Any, b: Any, w: Any) -> Any:
    xp = kit.xp
    # PyTorch's formula, exact at both ends: from self below 1/2, from end above
    diff = b - a
    return xp.where(xp.abs(w) < 0.5, a + w * diff, b - diff * (1 - w))


def lerp_scalar(kit: Kit, self: Tensor, end: Tensor, weight: Scalar) -> Tensor:
    same_dtype(self, end, "end")
    d = self._dtype
    if d.kind not in "fc":
        raise OpError(f"\"lerp_kernel_scalar\" not implemented for '{torch_name(d)}'")
    device = self._device
    check_broadcast(tuple(self._data.shape), tuple(end._data.shape))
    math_t = kit.accumulate[d]
    w = scalar_in(kit, weight, d, math_t)
    a = kit.cast(self._data, math_t)
    b = kit.cast(kit.operand(end, d, device), math_t)
    with kit.quiet():
        r = lerp(kit, a, b, w)
    return kit.wrap(r, d, device)


def lerp_tensor(kit: Kit, self: Tensor, end: Tensor, weight: Tensor) -> Tensor:
    check_lerp_tensor(self, end, weight)
    # a 0-dim weight of another dtype is promoted with self and end, as a scalar would be
    d = self._dtype if weight._dtype is self._dtype else kit.result_dtype(self, end, weight)
    if d.kind not in "fc":
        raise OpError(f"\"lerp_kernel_tensor\" not implemented for '{torch_name(d)}'")
    device = self._device
    check_broadcast(*(tuple(t._data.shape) for t in (self, end, weight)))
    math_t = kit.accumulate[d]
    a = kit.cast(self._data, math_t)
    b = kit.cast(kit.operand(end, d, device), math_t)
    w = kit.cast(kit.operand(weight, d, device), math_t)
    with kit.quiet():
        r = lerp(kit, a, b, w)
    return kit.wrap(r, d, device)


def check_lerp_tensor(self: Tensor, end: Tensor, weight: Tensor) -> None:
    same_dtype(self, end, "end")
    if weight._data.ndim != 0:
        same_dtype(self, weight, "weight")


def addc(
    kit: Kit,
    name: str,
    combine: Callable[[Any, Any, Any], Any],
    self: Tensor,
    tensor1: Tensor,
    tensor2: Tensor,
    value: Scalar,
) -> Tensor:
    """``self + combine(value, tensor1, tensor2)`` in the promoted dtype of the three."""
    check_broadcast(*(tuple(t._data.shape) for t in (self, tensor1, tensor2)))
    od = kit.result_dtype(self, tensor1, tensor2)
    if od is _dt.bool:
        raise OpError(f"\"{name}_cpu_out\" not implemented for 'Bool'")
    device = self._device
    math_t = kit.accumulate[od]
    v = scalar_in(kit, value, od, math_t)
    # a CPU 0-dim operand of another backend's call comes back as a Python scalar
    a, t1, t2 = (
        o if type(o) in _PY_SCALARS else kit.cast(o, math_t)
        for o in (kit.operand(t, od, device) for t in (self, tensor1, tensor2))
    )
    with kit.quiet():  # the cast back to float16 may overflow, silently as in PyTorch
        r = a + combine(v, t1, t2)
        return kit.wrap(r, od, device)


def addcmul(
    kit: Kit, self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Scalar = 1
) -> Tensor:
    return addc(kit, "addcmul", _mul3, self, tensor1, tensor2, value)


def addcdiv(
    kit: Kit, self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Scalar = 1
) -> Tensor:
    check_addcdiv(self, tensor1, tensor2)
    return addc(kit, "addcdiv", _div3, self, tensor1, tensor2, value)


def check_addcdiv(self: Tensor, tensor1: Tensor, tensor2: Tensor, **_: Any) -> None:
    if tensor1._dtype.kind in "biu" and tensor2._dtype.kind in "biu":
        raise OpError(_ADDCDIV_INTEGER)


def _mul3(v: Any, t1: Any, t2: Any) -> Any:
    return v * t1 * t2


def _div3(v: Any, t1: Any, t2: Any) -> Any:
    return v * t1 / t2


KERNELS: dict[str, Callable[..., Any]] = {
    "lerp.Scalar": lerp_scalar,
    "lerp.Tensor": lerp_tensor,
    "addcmul": addcmul,
    "addcdiv": addcdiv,
}


def build(kit: Kit) -> Kernels:
    xp = kit.xp
    k: Kernels = {name: bind(kit, fn) for name, fn in KERNELS.items()}
    asarray = xp.asarray
    storage = kit.storage
    kind = kit.kind
    key_name = kit.key_name

    # --- arithmetic --------------------------------------------------------------------

    def sub_fn(a: Any, b: Any) -> Any:
        return xp.subtract(a, b)

    def no_bool_sub(d: _dt.dtype) -> None:
        if d is _dt.bool:
            raise OpError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. "
                "Use the `^` or `logical_xor()` operator instead."
            )

    def sub_rule(d: _dt.dtype) -> _dt.dtype:
        no_bool_sub(d)
        return d

    def no_bool_operand(self: Tensor, other: Tensor | Scalar) -> None:
        """PyTorch refuses ``-`` with any bool operand, a Python bool included."""
        a = self._dtype is _dt.bool
        b = other._dtype is _dt.bool if isinstance(other, Tensor) else type(other) is bool
        if a and b:
            no_bool_sub(_dt.bool)
        if a or b:
            raise OpError(
                "Subtraction, the `-` operator, with a bool tensor is not supported. "
                "If you are trying to invert a mask, use the `~` or `logical_not()` operator "
                "instead."
            )

    binary(kit, k, "add", xp.add, alpha=True, out=True, ufunc=xp.add)
    binary(
        kit,
        k,
        "sub",
        sub_fn,
        rule=sub_rule,
        fast_kinds="uifc",
        alpha=True,
        out=True,
        reverse=True,
        ufunc=xp.subtract,
        check=no_bool_operand,
    )
    binary(kit, k, "mul", xp.multiply, out=True, ufunc=xp.multiply)
    binary(
        kit,
        k,
        "div",
        xp.divide,
        rule=to_float,
        fast_kinds="fc",
        out=True,
        reverse=True,
        quiet=True,
        ufunc=xp.divide,
    )
    binary(
        kit,
        k,
        "maximum",
        _no_complex(xp, xp.maximum, "maximum"),
        scalar=False,
        inplace=False,
        overload="",
    )
    binary(
        kit,
        k,
        "minimum",
        _no_complex(xp, xp.minimum, "minimum"),
        scalar=False,
        inplace=False,
        overload="",
    )
    # fmax / fmin ignore a NaN beside a number (maximum / minimum propagate it)
    for name, pick in (("fmax", xp.maximum), ("fmin", xp.minimum)):
        fn = _no_complex(xp, optional(xp, name, _ignoring_nan(xp, pick)), name)
        binary(kit, k, name, fn, scalar=False, inplace=False, overload="")
    atan2 = getattr(xp, "atan2", None) or xp.arctan2
    binary(
        kit,
        k,
        "atan2",
        atan2,
        rule=real_float("atan2_cpu"),
        scalar=False,
        inplace=False,
        overload="",
    )
    binary(
        kit,
        k,
        "hypot",
        xp.hypot,
        rule=real_floating_only("hypot"),
        scalar=False,
        inplace=False,
        quiet=True,
        overload="",
    )

    def heaviside(a: Any, values: Any) -> Any:
        # PyTorch's kernel: self == 0 ? values : self > 0 (a NaN gives 0, numpy's gives NaN)
        return xp.where(a == 0, values, kit.cast(a > 0, values.dtype))

    def check_heaviside(self: Tensor, values: Tensor | Scalar) -> None:
        d = self._dtype
        v = values._dtype if isinstance(values, Tensor) else d
        if d.kind == "c" or v.kind == "c":
            raise OpError("heaviside is not yet implemented for complex tensors.")
        if d is not v:
            raise OpError("heaviside is not yet implemented for tensors with different dtypes.")

    binary(
        kit,
        k,
        "heaviside",
        heaviside,
        fast_kinds="buif",
        scalar=False,
        inplace=False,
        overload="",
        check=check_heaviside,
    )

    def int_pow(a: Any, b: Any) -> Any:
        """``xp.pow``, with PyTorch's integer powers for negative integer exponents, where
        numpy raises: ``1 ** -n`` is 1, ``(-1) ** -n`` is -1 for odd n and 1 for even n, and
        any other base (0 included) gives 0, the integer part of ``1 / base ** n``."""
        if kind(a) not in "iu" or kind(b) != "i" or not bool(xp.any(b < 0)):
            return xp.pow(a, b)
        neg = b < 0
        r = xp.pow(a, xp.where(neg, xp.zeros((), dtype=b.dtype), b))
        one = xp.ones((), dtype=r.dtype)
        zero = xp.zeros((), dtype=r.dtype)
        # odd exponents keep -1; even ones make it 1 (b % 2 is 0 or 1 for negative b too)
        minus_one = xp.where(xp.remainder(b, 2) == 1, -one, one) if kind(r) == "i" else one
        small = xp.where(a == 1, one, xp.where(a == -1, minus_one, zero))
        return xp.where(neg, small, r)

    binary(
        kit,
        k,
        "pow",
        int_pow,
        rule=no_bool_pow,
        fast_kinds="fc",
        scalar=False,
        inplace=False,
        quiet=True,
        overload="Tensor_Tensor",
    )

    def int_division(mode: str) -> Callable[[Any, Any], Any]:
        def fn(a: Any, b: Any) -> Any:
            if kind(a) in "iub" and getattr(b, "dtype", None) is not None and kind(b) in "iub":
                if bool(xp.any(b == 0)):
                    raise OpError("ZeroDivisionError")
                if mode == "trunc":
                    q = xp.floor_divide(a, b)
                    fix = (xp.remainder(a, b) != 0) & ((a < 0) != (b < 0))
                    return q + kit.cast(fix, q.dtype)
                if mode == "remainder":
                    return xp.remainder(a, b)
                return xp.floor_divide(a, b)
            if mode == "trunc":
                return xp.trunc(xp.divide(a, b))
            if mode == "remainder":
                return xp.remainder(a, b)
            return xp.floor_divide(a, b)

        return fn

    def scalar_to_array(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        # integer division checks for zero divisors on arrays; make Python scalars arrays
        def g(a: Any, b: Any) -> Any:
            if not hasattr(b, "dtype"):
                b = asarray(b, dtype=a.dtype)
            return fn(a, b)

        return g

    floor_fn = scalar_to_array(int_division("floor"))
    trunc_fn = scalar_to_array(int_division("trunc"))
    rem_fn = scalar_to_array(int_division("remainder"))
    binary(kit, k, "floor_divide", floor_fn, fast_kinds="f", quiet=True, overload="")
    binary(kit, k, "remainder", rem_fn, rule=real_no_bool("remainder_cpu"), fast_kinds="f",
           quiet=True)  # fmt: skip
    # floor_divide.Scalar is registered under "floor_divide.Scalar" by binary(kit, k, scalar=True)

    def fmod_fn(a: Any, b: Any) -> Any:
        """C's fmod: the sign of the dividend (remainder takes the divisor's); integers
        refuse a zero divisor, as PyTorch."""
        if kind(a) in "iu":
            if not hasattr(b, "dtype"):
                b = asarray(b, dtype=a.dtype)
            if kind(b) in "iub" and bool(xp.any(b == 0)):
                raise OpError("ZeroDivisionError")
        return fmod(a, b)

    fmod = optional(xp, "fmod", _fmod_by_remainder(xp))
    binary(kit, k, "fmod", fmod_fn, rule=real_no_bool("fmod_cpu"), fast_kinds="f", quiet=True)

    def div_mode(self: Tensor, other: Tensor, *, rounding_mode: str | None = None) -> Tensor:
        if rounding_mode is None:
            return k["div.Tensor"](self, other)  # type: ignore[no-any-return]
        if rounding_mode not in ("trunc", "floor"):
            raise OpError(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                f"'{rounding_mode}'"
            )
        fn = trunc_fn if rounding_mode == "trunc" else floor_fn
        r, od = general(kit, "aten::div.Tensor_mode", fn, same, self, other, quiet=True)
        return kit.wrap(r, od, self._device)

    k["div.Tensor_mode"] = div_mode

    def check_exponent(self: Tensor, exponent: Scalar) -> None:
        """PyTorch converts the exponent to the result dtype for integers and float16."""
        _check_integer_power(self, exponent)
        od = kit.result_dtype(self, exponent)
        if od.kind in "ui" or od is _dt.float16:
            check_fits(exponent, od)

    def pow_scalar_exp(self: Tensor, exponent: Scalar) -> Tensor:
        check_exponent(self, exponent)
        r, od = general(kit, "aten::pow.Tensor_Scalar", xp.pow, same, self, exponent, quiet=True)
        return kit.wrap(r, od, self._device)

    def pow_scalar_base(self: Scalar, exponent: Tensor) -> Tensor:
        od = kit.result_dtype(self, exponent)
        with kit.quiet():
            base = asarray(kit.scalar(self, od), dtype=kit.compute[od])
            r = int_pow(base, kit.as_compute(exponent, od))
        return kit.wrap(r, od, exponent._device)

    k["pow.Tensor_Scalar"] = pow_scalar_exp
    k["pow.Scalar"] = pow_scalar_base

    def pow_scalar_(self: Tensor, exponent: Scalar) -> Tensor:
        check_exponent(self, exponent)
        r, od = general(kit, "aten::pow_.Scalar", xp.pow, same, self, exponent, quiet=True)
        write_result(kit, self, r, od, in_place=True)
        return self

    def pow_tensor_(self: Tensor, exponent: Tensor) -> Tensor:
        try:
            check_inplace_shape(self, exponent)
            r, od = general(
                kit, "aten::pow_.Tensor", int_pow, no_bool_pow, self, exponent, quiet=True
            )
            write_result(kit, self, r, od, in_place=True)
            return self
        except _CONVERTED as e:
            raise shape_error("aten::pow_.Tensor", e, self, exponent, key=key_name) from e

    k["pow_.Scalar"] = pow_scalar_
    k["pow_.Tensor"] = guarded(pow_tensor_)

    # --- comparisons and logic ---------------------------------------------------------

    for cmp, fn in (("eq", xp.equal), ("ne", xp.not_equal)):
        binary(kit, k, cmp, fn, out_rule=to_bool)
    # complex numbers have no order: PyTorch refuses them ("lt_cpu" not implemented ...)
    for cmp, fn in (
        ("lt", xp.less),
        ("le", xp.less_equal),
        ("gt", xp.greater),
        ("ge", xp.greater_equal),
    ):
        rule = real_only(f"{cmp}_cpu")
        binary(kit, k, cmp, fn, rule=rule, out_rule=to_bool, fast_kinds="buif")

    def logical(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        b_t = storage[_dt.bool]

        def g(a: Any, b: Any) -> Any:
            return fn(kit.cast(a, b_t), kit.cast(b, b_t))

        return g

    binary(
        kit,
        k,
        "logical_and",
        logical(xp.logical_and),
        out_rule=to_bool,
        scalar=False,
        inplace=False,
        overload="",
    )
    binary(
        kit,
        k,
        "logical_or",
        logical(xp.logical_or),
        out_rule=to_bool,
        scalar=False,
        inplace=False,
        overload="",
    )

    for bw, fn in (
        ("bitwise_and", xp.bitwise_and),
        ("bitwise_or", xp.bitwise_or),
        ("bitwise_xor", xp.bitwise_xor),
    ):
        binary(kit, k, bw, fn, rule=integral_only(bw), fast_kinds="bui", scalar=False)

    # --- in-place logic (issue 29): the result (bool) is written in self's dtype, as PyTorch
    # writes 1 and 0 into a floating self
    inplace(kit, k, "logical_and_", "logical_and")
    inplace(kit, k, "logical_or_", "logical_or")

    inplace(kit, k, "atan2_", "atan2", promoted=True)
    inplace(kit, k, "hypot_", "hypot", promoted=True)
    inplace(kit, k, "heaviside_", "heaviside", check_heaviside, promoted=True)
    inplace(kit, k, "addcmul_", "addcmul", promoted=True)
    inplace(kit, k, "addcdiv_", "addcdiv", check_addcdiv, promoted=True)
    inplace(
        kit,
        k,
        "lerp_.Scalar",
        "lerp.Scalar",
        lambda self, end, weight: same_dtype(self, end, "end"),
    )
    inplace(kit, k, "lerp_.Tensor", "lerp.Tensor", check_lerp_tensor)
    return k


def _ignoring_nan(xp: Any, pick: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """fmax / fmin from maximum / minimum: a NaN beside a number gives the number."""

    def f(a: Any, b: Any) -> Any:
        return xp.where(xp.isnan(a), b, xp.where(xp.isnan(b), a, pick(a, b)))

    return f


def _fmod_by_remainder(xp: Any) -> Callable[[Any, Any], Any]:
    """C's fmod from the standard's remainder (the divisor's sign): where the remainder is
    not zero and its sign differs from the dividend's, take one divisor back."""

    def f(a: Any, b: Any) -> Any:
        r = xp.remainder(a, b)
        return xp.where((r != 0) & ((r < 0) != (a < 0)), r - b, r)

    return f


def _no_complex(xp: Any, f: Callable[[Any, Any], Any], name: str) -> Callable[[Any, Any], Any]:
    def g(a: Any, b: Any) -> Any:
        if getattr(a, "dtype", None) is not None and xp.isdtype(a.dtype, "complex floating"):
            raise OpError(f"{name} not implemented for complex tensors.")
        return f(a, b)

    return g


def _check_integer_power(self: Tensor, exponent: Scalar) -> None:
    if self._dtype.kind in "biu" and isinstance(exponent, int) and exponent < 0:
        raise OpError("Integers to negative integer powers are not allowed.")


# the C type PyTorch names when a Scalar argument does not convert (addcmul's value=)
_C_SCALAR = {
    "bool": "bool",
    "uint8": "uint8_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int",
    "int64": "int64_t",
    "float16": "float",  # half precision computes in float
    "bfloat16": "float",
    "float32": "float",
    "float64": "double",
}


_PY_SCALARS = frozenset({bool, int, float, complex})

_ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes."
)
