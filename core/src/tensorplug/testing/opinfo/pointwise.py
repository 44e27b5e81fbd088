"""Samples and oracles of the ``pointwise`` family: binary arithmetic, unary functions,
clamp and where, comparisons and logic, and the copies and conversions."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from ._core import (
    ALL,
    BOOL,
    DT,
    FLOATS,
    INTS,
    LOWP,
    NUMERIC,
    OP_DB,
    DtypeRule,
    OpInfo,
    S,
    SampleInput,
    add,
    add_inplace,
    add_out,
    binary_samples,
    dtype_kwarg,
    fixed,
    fn,
    is_float,
    is_int,
    make,
    meth,
    np_dtype,
    promoted,
    result_type,
    same,
    scalar_for,
    scalar_samples,
    to_float,
    unary_float,
    unary_samples,
)

# --- pointwise binary arithmetic --------------------------------------------------------------


def _ref_add(a: Any, b: Any, alpha: Any = 1) -> Any:
    return np.add(a, np.multiply(alpha, b))


def _ref_sub(a: Any, b: Any, alpha: Any = 1) -> Any:
    return np.subtract(a, np.multiply(alpha, b))


def _true_div(a: Any, b: Any) -> Any:
    return np.true_divide(np.asarray(a, dtype=np.float64) if _intlike(a) else a, b)


def _intlike(a: Any) -> bool:
    arr = np.asarray(a)
    return arr.dtype.kind in "biu"


def _ref_div_mode(a: Any, b: Any, rounding_mode: str | None = None) -> Any:
    if rounding_mode is None:
        return _true_div(a, b)
    if rounding_mode == "trunc":
        if _intlike(a) and _intlike(b):
            q = np.abs(a) // np.abs(b)
            return np.sign(a) * np.sign(b) * q
        return np.trunc(np.true_divide(a, b))
    if rounding_mode == "floor":
        if _intlike(a) and _intlike(b):
            return np.floor_divide(a, b)
        return np.floor(np.true_divide(a, b))
    raise ValueError(rounding_mode)


add_T = add(
    OpInfo(
        "add.Tensor",
        op=fn("add"),
        method=meth("add"),
        sample_inputs=binary_samples(alpha=True),
        ref=_ref_add,
        dtypes=ALL + LOWP,
        result_dtype=promoted(0, 1),
    )
)
add_S = add(
    OpInfo(
        "add.Scalar",
        op=fn("add"),
        method=meth("add"),
        sample_inputs=scalar_samples(alpha=True),
        ref=_ref_add,
        dtypes=ALL + LOWP,
        result_dtype=promoted(0, 1),
    )
)
add_out(add_T, "add.out", "add")
add_inplace(add_T, "add_.Tensor", "add_")
add_inplace(add_S, "add_.Scalar", "add_")

sub_T = add(
    OpInfo(
        "sub.Tensor",
        op=fn("sub"),
        method=meth("sub"),
        sample_inputs=binary_samples(alpha=True, bool_promotion=False),
        ref=_ref_sub,
        dtypes=NUMERIC + LOWP,
        result_dtype=promoted(0, 1),
    )
)
sub_S = add(
    OpInfo(
        "sub.Scalar",
        op=fn("sub"),
        method=meth("sub"),
        sample_inputs=scalar_samples(alpha=True),
        ref=_ref_sub,
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)
add_out(sub_T, "sub.out", "sub")
add_inplace(sub_T, "sub_.Tensor", "sub_")
add_inplace(sub_S, "sub_.Scalar", "sub_")

add(
    OpInfo(
        "rsub.Scalar",
        op=fn("rsub"),
        sample_inputs=scalar_samples(alpha=True),
        ref=lambda a, other, alpha=1: np.subtract(other, np.multiply(alpha, a)),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)

mul_T = add(
    OpInfo(
        "mul.Tensor",
        op=fn("mul"),
        method=meth("mul"),
        sample_inputs=binary_samples(),
        ref=lambda a, b: np.multiply(a, b),
        dtypes=ALL + LOWP,
        result_dtype=promoted(0, 1),
    )
)
mul_S = add(
    OpInfo(
        "mul.Scalar",
        op=fn("mul"),
        method=meth("mul"),
        sample_inputs=scalar_samples(),
        ref=lambda a, b: np.multiply(a, b),
        dtypes=ALL,
        result_dtype=promoted(0, 1),
    )
)
add_out(mul_T, "mul.out", "mul")
add_inplace(mul_T, "mul_.Tensor", "mul_")
add_inplace(mul_S, "mul_.Scalar", "mul_")


def _div_scalars(d: str) -> list[tuple[str, Any]]:
    return [("int_scalar", 4), ("float_scalar", 2.5), ("neg_float_scalar", -0.5)]


div_T = add(
    OpInfo(
        "div.Tensor",
        op=fn("div"),
        method=meth("div"),
        sample_inputs=binary_samples(nonzero_rhs=True, bool_promotion=False),
        ref=_true_div,
        dtypes=NUMERIC + LOWP,
        result_dtype=promoted(0, 1, floating=True),
    )
)
div_S = add(
    OpInfo(
        "div.Scalar",
        op=fn("div"),
        method=meth("div"),
        sample_inputs=scalar_samples(scalars=_div_scalars),
        ref=_true_div,
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1, floating=True),
    )
)


def _div_mode_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for mode in ("trunc", "floor", None):
        m = mode or "true"
        a, b = make((2, 3), d, rng), make((2, 3), d, rng, nonzero=True)
        yield S(f"{m}", a, b, rounding_mode=mode)
        yield S(
            f"{m}_broadcast",
            make((3, 1), d, rng),
            make((1, 4), d, rng, nonzero=True),
            rounding_mode=mode,
        )
        yield S(f"{m}_0dim", make((), d, rng), make((), d, rng, nonzero=True), rounding_mode=mode)
    # negative operands: trunc rounds toward zero, floor toward -inf
    yield S(
        "trunc_negative",
        np.array([-7, 7, -7, 7]).astype(np_dtype(d)),
        np.array([2, -2, -2, 2]).astype(np_dtype(d)),
        rounding_mode="trunc",
    )
    yield S(
        "floor_negative",
        np.array([-7, 7, -7, 7]).astype(np_dtype(d)),
        np.array([2, -2, -2, 2]).astype(np_dtype(d)),
        rounding_mode="floor",
    )


def _div_mode_dtype(s: SampleInput, d: str) -> str:
    r = result_type(s.args[0], s.args[1])
    return to_float(r) if s.kwargs.get("rounding_mode") is None else r


add(
    OpInfo(
        "div.Tensor_mode",
        op=fn("div"),
        method=meth("div"),
        sample_inputs=_div_mode_samples,
        ref=_ref_div_mode,
        dtypes=NUMERIC,
        result_dtype=_div_mode_dtype,
    )
)
add_out(div_T, "div.out", "div")
add_inplace(div_T, "div_.Tensor", "div_")
add_inplace(div_S, "div_.Scalar", "div_")


def _rdiv_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # the tensor is the divisor here, so it holds no zeros
    for label, sc in (("int_scalar", 3), ("float_scalar", 2.5)):
        yield S(label, make((2, 3), d, rng, nonzero=True), sc)
        yield S(f"{label}_0dim", make((), d, rng, nonzero=True), sc)
    yield S("empty", make((0, 2), d, rng), 1.5)


add(
    OpInfo(
        "rdiv.Scalar",
        op=fn("rdiv"),
        sample_inputs=_rdiv_samples,
        ref=lambda a, other: np.true_divide(other, np.asarray(a, np.float64)),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1, floating=True),
    )
)
add(
    OpInfo(
        "floor_divide",
        op=fn("floor_divide"),
        method=meth("floor_divide"),
        sample_inputs=binary_samples(nonzero_rhs=True, bool_promotion=False),
        ref=lambda a, b: np.floor_divide(a, b),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)
add(
    OpInfo(
        "floor_divide.Scalar",
        op=fn("floor_divide"),
        method=meth("floor_divide"),
        sample_inputs=scalar_samples(
            scalars=lambda d: [("int_scalar", 3), ("float_scalar", 2.5), ("neg_int_scalar", -2)]
        ),
        ref=lambda a, b: np.floor_divide(a, b),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)
add(
    OpInfo(
        "remainder.Tensor",
        op=fn("remainder"),
        method=meth("remainder"),
        sample_inputs=binary_samples(nonzero_rhs=True, bool_promotion=False),
        ref=lambda a, b: np.remainder(a, b),  # Python semantics: the sign of the divisor
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)
add(
    OpInfo(
        "remainder.Scalar",
        op=fn("remainder"),
        method=meth("remainder"),
        sample_inputs=scalar_samples(
            scalars=lambda d: [("int_scalar", 3), ("float_scalar", 2.5), ("neg_int_scalar", -2)]
        ),
        ref=lambda a, b: np.remainder(a, b),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)


def _ref_int_pow(a: Any, b: Any) -> Any:
    """Integer powers as PyTorch's: a negative exponent gives the integer part of
    1 / a ** -b, so 1 for a base of 1, +-1 for -1 (by the exponent's parity) and 0 otherwise."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    r = np.power(a, np.where(b < 0, 0, b))
    small = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 1, -1, 1), 0))
    return np.where(b < 0, small, r).astype(r.dtype)


def _pow_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    if is_int(d):
        base = lambda shape: make(shape, d, rng, -3, 3)  # noqa: E731
        expo = lambda shape: make(shape, d, rng, 0, 3)  # noqa: E731
    else:
        base = lambda shape: make(shape, d, rng, 0.5, 2.0)  # noqa: E731
        expo = lambda shape: make(shape, d, rng, -2.0, 2.0)  # noqa: E731
    yield S("same_shape", base((2, 3)), expo((2, 3)))
    yield S("broadcast", base((3, 1)), expo((1, 4)))
    yield S("0dim_exponent", base((2, 3)), expo(()))
    yield S("0dim", base(()), expo(()))
    yield S("empty", base((0,)), expo((0,)))
    if is_int(d):  # numpy refuses these; PyTorch gives 0, 1 or -1
        base_ = np.array([2, 0, -2, 1, -1, -1, 3, -3], dtype=d)
        yield S("negative_exponent", base_, np.array([-1, -1, -2, -3, -3, -4, 2, -1], dtype=d))
        yield S("negative_0dim_exponent", base_, np.array(-1, dtype=d))
    if d == "float32":
        yield S("promote_int64_float32", make((2, 3), "int64", rng, 0, 3), expo((2, 3)))


add(
    OpInfo(
        "pow.Tensor_Tensor",
        op=fn("pow"),
        method=meth("pow"),
        sample_inputs=_pow_tensor_samples,
        ref=lambda a, b: (
            np.power(a.astype(np.float64), b)
            if a.dtype.kind == "f" or b.dtype.kind == "f"
            else _ref_int_pow(a, b)
        ),
        dtypes=NUMERIC + LOWP,
        result_dtype=promoted(0, 1),
    )
)


def _pow_scalar_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    if is_int(d):
        x = make((2, 3), d, rng, -3, 3)
        yield S("square", x, 2)
        yield S("zero", x, 0)
        yield S("float_exponent", make((2, 3), d, rng, 1, 5), 0.5)  # -> float32
        yield S("0dim", make((), d, rng, -3, 3), 3)
    else:
        x = make((2, 3), d, rng, 0.5, 2.0)
        yield S("square", x, 2)
        yield S("sqrt", x, 0.5)
        yield S("reciprocal", x, -1.0)
        yield S("0dim", make((), d, rng, 0.5, 2.0), 3)
        yield S("empty", make((0, 2), d, rng), 2)


add(
    OpInfo(
        "pow.Tensor_Scalar",
        op=fn("pow"),
        method=meth("pow"),
        sample_inputs=_pow_scalar_samples,
        ref=lambda a, e: (
            np.power(a.astype(np.float64), e)
            if isinstance(e, float) or a.dtype.kind == "f"
            else np.power(a, e)
        ),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)


def _pow_scalar_self_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    if is_int(d):
        yield S("int_base", 2, make((2, 3), d, rng, 0, 4))
        yield S("float_base", 1.5, make((2, 3), d, rng, -2, 3))  # -> float32
        yield S("int_base_negative_exponent", 2, np.array([1, 2, -1, -3], dtype=d))
        yield S("minus_one_negative_exponent", -1, np.array([1, 2, -1, -2, -3], dtype=d))
    else:
        yield S("float_base", 2.0, make((2, 3), d, rng, -2, 2))
        yield S("int_base", 3, make((2, 3), d, rng, -2, 2))
        yield S("0dim", 0.5, make((), d, rng, -2, 2))
        yield S("empty", 2.0, make((0,), d, rng))


add(
    OpInfo(
        "pow.Scalar",
        op=fn("pow"),
        sample_inputs=_pow_scalar_self_samples,
        ref=lambda b, e: (
            np.power(np.float64(b), e)
            if isinstance(b, float) or e.dtype.kind == "f"
            else _ref_int_pow(np.int64(b), e)
        ),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)
for _name, _np in (("maximum", np.maximum), ("minimum", np.minimum)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=binary_samples(),
            ref=_np,
            dtypes=ALL + LOWP,
            result_dtype=promoted(0, 1),
        )
    )


def _nan_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from binary_samples()(d, rng)
    if d in FLOATS:  # a NaN beside a number gives the number; two NaNs give NaN
        nan = np.nan
        a, b = np.array([nan, 1.0, nan, -2.0]), np.array([3.0, nan, nan, -2.0])
        yield S("nan", a.astype(d), b.astype(d))


for _name, _np in (("fmax", np.fmax), ("fmin", np.fmin)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_nan_samples,
            ref=_np,
            dtypes=ALL + LOWP,
            result_dtype=promoted(0, 1),
        )
    )


def _f64_binary(f: Any) -> Any:
    return lambda a, b: f(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))


atan2 = add(
    OpInfo(
        "atan2",
        op=fn("atan2"),
        method=meth("atan2"),
        sample_inputs=binary_samples(),
        ref=_f64_binary(np.arctan2),
        dtypes=ALL + LOWP,
        result_dtype=promoted(0, 1, floating=True),
    )
)
hypot = add(
    OpInfo(
        "hypot",
        op=fn("hypot"),
        method=meth("hypot"),
        sample_inputs=binary_samples(bool_promotion=False),
        ref=_f64_binary(np.hypot),
        dtypes=FLOATS + LOWP,
        result_dtype=promoted(0, 1),
    )
)


def _heaviside_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from binary_samples(promotion=False)(d, rng)
    zeros = np.array([0, 1, 0, -1, 0]).astype(np_dtype(d))  # values where self is 0
    yield S("zeros", zeros, make((5,), d, rng))
    yield S("zeros_0dim_values", zeros, make((), d, rng))
    if d in FLOATS:  # NaN is neither 0 nor positive: 0 (numpy's heaviside gives NaN)
        yield S("nan", np.array([np.nan, -0.0, 2.0]).astype(d), np.array([0.5, 0.5, 0.5]).astype(d))


def _ref_heaviside(x: Any, values: Any) -> Any:
    x, values = np.asarray(x), np.asarray(values)
    return np.where(x == 0, values, (x > 0).astype(values.dtype))


heaviside = add(
    OpInfo(
        "heaviside",
        op=fn("heaviside"),
        method=meth("heaviside"),
        sample_inputs=_heaviside_samples,
        ref=_ref_heaviside,
        dtypes=ALL + LOWP,
    )
)
add_inplace(atan2, "atan2_", "atan2_")
add_inplace(hypot, "hypot_", "hypot_")
add_inplace(heaviside, "heaviside_", "heaviside_")


def _fmod_scalars(d: str) -> list[tuple[str, Any]]:
    return [("int_scalar", 3), ("float_scalar", 2.5), ("neg_scalar", -2)]


def _fmod_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from binary_samples(nonzero_rhs=True, bool_promotion=False)(d, rng)
    if d in FLOATS:  # the dividend's sign, a zero divisor gives NaN
        yield S(
            "signs",
            np.array([-5.0, 5.0, -5.0, -0.0, 1.0]).astype(d),
            np.array([3.0, -3.0, -3.0, 2.0, 0.0]).astype(d),
        )
    if is_int(d):
        yield S("signs", np.array([-5, 5, -5, 7]).astype(d), np.array([3, -3, -3, 7]).astype(d))


fmod_T = add(
    OpInfo(
        "fmod.Tensor",
        op=fn("fmod"),
        method=meth("fmod"),
        sample_inputs=_fmod_samples,
        ref=np.fmod,
        dtypes=NUMERIC + LOWP,
        result_dtype=promoted(0, 1),
    )
)
fmod_S = add(
    OpInfo(
        "fmod.Scalar",
        op=fn("fmod"),
        method=meth("fmod"),
        sample_inputs=scalar_samples(scalars=_fmod_scalars),
        ref=np.fmod,
        dtypes=NUMERIC + LOWP,
        result_dtype=promoted(0, 1),
    )
)
add_inplace(fmod_T, "fmod_.Tensor", "fmod_")
add_inplace(fmod_S, "fmod_.Scalar", "fmod_")


def _info(name: str) -> OpInfo:
    return next(info for info in OP_DB if info.name == name)


add_inplace(_info("pow.Tensor_Scalar"), "pow_.Scalar", "pow_")
add_inplace(_info("pow.Tensor_Tensor"), "pow_.Tensor", "pow_")


def _ref_lerp(a: Any, end: Any, weight: Any) -> Any:
    # PyTorch's formula: from self below |weight| 1/2, from end above
    a, end, w = (np.asarray(x, dtype=np.float64) for x in (a, end, weight))
    diff = end - a
    return np.where(np.abs(w) < 0.5, a + w * diff, end - diff * (1 - w))


def _lerp_scalar_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for label, w in (("quarter", 0.25), ("three_quarters", 0.75), ("int", 2), ("neg", -0.5)):
        yield S(label, make((2, 3), d, rng), make((2, 3), d, rng), w)
    yield S("broadcast", make((3, 1), d, rng), make((1, 4), d, rng), 0.3)
    yield S("broadcast_self", make((2, 3), d, rng), make((3,), d, rng), 0.6)
    yield S("0dim", make((), d, rng), make((), d, rng), 0.4)
    yield S("empty", make((0, 2), d, rng), make((0, 2), d, rng), 0.5)


def _lerp_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same_shape", make((2, 3), d, rng), make((2, 3), d, rng), make((2, 3), d, rng, -1, 2))
    yield S("broadcast", make((3, 1), d, rng), make((1, 4), d, rng), make((4,), d, rng, -1, 2))
    yield S("0dim_weight", make((2, 3), d, rng), make((2, 3), d, rng), make((), d, rng, 0, 1))
    yield S("0dim", make((), d, rng), make((), d, rng), make((), d, rng, 0, 1))
    yield S("empty", make((0, 2), d, rng), make((0, 2), d, rng), make((2,), d, rng))
    if d == "float32":  # a 0-dim weight of another dtype takes part in promotion
        yield S("0dim_float64_weight", make((2, 3), d, rng), make((2, 3), d, rng), np.array(0.7))
        yield S(
            "int_0dim_float_weight",
            make((3,), "int64", rng),
            make((3,), "int64", rng),
            np.array(0.25, d),
        )


for _name, _samples in (
    ("lerp.Scalar", _lerp_scalar_samples),
    ("lerp.Tensor", _lerp_tensor_samples),
):
    _base = add(
        OpInfo(
            _name,
            op=fn("lerp"),
            method=meth("lerp"),
            sample_inputs=_samples,
            ref=_ref_lerp,
            dtypes=FLOATS + LOWP,
            result_dtype=promoted(0, 1, 2) if _name == "lerp.Tensor" else same,
        )
    )
    add_inplace(_base, _name.replace("lerp", "lerp_"), "lerp_")


def _addc_samples(divide: bool) -> Any:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        def t(shape: tuple[int, ...], dd: str = d, denominator: bool = False) -> np.ndarray:
            return make(shape, dd, rng, nonzero=divide and denominator)

        value = 2 if is_int(d) else 0.5
        yield S("same_shape", t((2, 3)), t((2, 3)), t((2, 3), denominator=True))
        yield S("value", t((2, 3)), t((2, 3)), t((2, 3), denominator=True), value=value)
        yield S("neg_value", t((3,)), t((3,)), t((3,), denominator=True), value=-1)
        yield S("broadcast", t((3, 1)), t((1, 4)), t((4,), denominator=True), value=value)
        yield S("broadcast_self", t((4,)), t((2, 4)), t((2, 1), denominator=True))
        yield S("0dim", t(()), t(()), t((), denominator=True), value=value)
        yield S("empty", t((0, 3)), t((3,)), t((0, 1), denominator=True))
        if d == "float32":
            yield S(
                "promote_int64_self", t((2, 3), "int64"), t((2, 3)), t((2, 3), denominator=True)
            )
            yield S(
                "promote_0dim_float64", t((2, 3)), t((), "float64"), t((2, 3), denominator=True)
            )
            if not divide:  # addcdiv refuses two integer operands
                yield S("promote_int_operands", t((2, 3)), t((2, 3), "int64"), t((2, 3), "int64"))
        if is_int(d) and not divide:
            yield S("float_value_truncates", t((2, 3)), t((2, 3)), t((2, 3)), value=1.5)

    return gen


def _ref_addcmul(a: Any, t1: Any, t2: Any, value: Any = 1) -> Any:
    if np.result_type(a, t1, t2).kind in "iu":  # an integer result takes value as an integer
        return a + int(value) * t1 * t2
    return a + value * np.asarray(t1, np.float64) * t2


def _ref_addcdiv(a: Any, t1: Any, t2: Any, value: Any = 1) -> Any:
    return a + value * np.asarray(t1, np.float64) / t2


for _name, _ref, _dtypes in (
    ("addcmul", _ref_addcmul, NUMERIC + LOWP),
    ("addcdiv", _ref_addcdiv, FLOATS + LOWP),
):
    _base = add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_addc_samples(_name == "addcdiv"),
            ref=_ref,
            dtypes=_dtypes,
            result_dtype=promoted(0, 1, 2),
        )
    )
    add_inplace(_base, f"{_name}_", f"{_name}_")


# --- pointwise unary --------------------------------------------------------------------------


def _erf(x: Any) -> Any:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sigmoid(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    return 1.0 / (1.0 + np.exp(-x))


def _gelu(x: Any, approximate: str = "none") -> Any:
    x = np.asarray(x, dtype=np.float64)
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _unary(
    name: str,
    ref: Callable[..., Any],
    *,
    dtypes: tuple[str, ...] = NUMERIC + LOWP,
    result_dtype: DtypeRule = same,
    low: float | None = None,
    high: float | None = None,
    method: bool = True,
) -> OpInfo:
    return add(
        OpInfo(
            name,
            op=fn(name),
            method=meth(name) if method else None,
            sample_inputs=unary_samples(low=low, high=high),
            ref=ref,
            dtypes=dtypes,
            result_dtype=result_dtype,
        )
    )


def _f64(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda x: f(np.asarray(x, dtype=np.float64))


_unary("neg", np.negative)
_unary("abs", np.abs)
_unary("sign", np.sign)
_unary("exp", _f64(np.exp), result_dtype=unary_float)
_unary("log", _f64(np.log), result_dtype=unary_float, low=0.1, high=5)
_unary("log1p", _f64(np.log1p), result_dtype=unary_float, low=-0.9, high=5)
_unary("sqrt", _f64(np.sqrt), result_dtype=unary_float, low=0, high=9)
_unary("rsqrt", _f64(lambda x: 1.0 / np.sqrt(x)), result_dtype=unary_float, low=0.1, high=9)
_unary("sin", _f64(np.sin), result_dtype=unary_float)
_unary("cos", _f64(np.cos), result_dtype=unary_float)
_unary("tanh", _f64(np.tanh), result_dtype=unary_float)
_unary("sigmoid", _sigmoid, result_dtype=unary_float)
relu = _unary("relu", lambda x: np.maximum(x, 0).astype(np.asarray(x).dtype))
_unary(
    "silu", lambda x: np.asarray(x, np.float64) * _sigmoid(x), dtypes=FLOATS + LOWP, method=False
)
add_inplace(relu, "relu_", "relu_", function=True)


for _name in ("neg", "abs", "exp", "sqrt", "tanh", "sigmoid"):
    add_inplace(_info(_name), f"{_name}_", f"{_name}_", function=True)


def _rounding_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from unary_samples()(d, rng)
    if not is_int(d):  # halves round to even (as numpy's round and PyTorch's)
        yield S("halves", np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5]).astype(np_dtype(d)))


for _name, _np in (
    ("floor", np.floor),
    ("ceil", np.ceil),
    ("trunc", np.trunc),
    ("round", np.round),
):
    _base = add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_rounding_samples,
            ref=_np,  # integers come back as they are, in their dtype
            dtypes=NUMERIC + LOWP,
        )
    )
    add_inplace(_base, f"{_name}_", f"{_name}_", function=True)


def _ref_round_decimals(x: Any, decimals: int) -> Any:
    # PyTorch: nearbyint(x * 10^n) / 10^n, or nearbyint(x / 10^-n) * 10^-n for n < 0
    x = np.asarray(x, dtype=np.float64)
    if decimals < 0:
        return np.round(x / 10.0**-decimals) * 10.0**-decimals
    return np.round(x * 10.0**decimals) / 10.0**decimals


def _round_decimals_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("one", make((3, 4), d, rng), decimals=1)
    yield S("three", make((3, 4), d, rng), decimals=3)
    yield S("negative", make((5,), d, rng, -300, 300), decimals=-2)
    yield S("zero", make((5,), d, rng), decimals=0)
    yield S("0dim", make((), d, rng), decimals=2)
    yield S("empty", make((0, 2), d, rng), decimals=2)
    # 0.125 and 0.375 are exact halves at two decimals: to even
    yield S("halves", np.array([0.125, 0.375, -0.125, 2.5]).astype(np_dtype(d)), decimals=2)


round_decimals = add(
    OpInfo(
        "round.decimals",
        op=fn("round"),
        method=meth("round"),
        sample_inputs=_round_decimals_samples,
        ref=_ref_round_decimals,
        dtypes=FLOATS + LOWP,
    )
)
add_inplace(round_decimals, "round_.decimals", "round_", function=True)

frac = _unary("frac", lambda x: x - np.trunc(x), dtypes=FLOATS + LOWP)
add_inplace(frac, "frac_", "frac_", function=True)


def _square_dtype(s: SampleInput, d: str) -> str:
    return "int64" if d == "bool" else d  # pow(x, 2): a bool squares to int64


square = add(
    OpInfo(
        "square",
        op=fn("square"),
        method=meth("square"),
        sample_inputs=unary_samples(),
        ref=lambda x: np.square(x.astype(np.int64) if x.dtype == np.bool_ else x),
        dtypes=ALL + LOWP,
        result_dtype=_square_dtype,
    )
)
add_inplace(square, "square_", "square_")
for _name, _np, _low, _high in (
    ("reciprocal", np.reciprocal, 0.5, 4),
    ("log2", np.log2, 0.1, 5),
    ("exp2", np.exp2, None, None),
    ("expm1", np.expm1, None, None),
    ("erf", _erf, None, None),
):
    _base = _unary(_name, _f64(_np), result_dtype=unary_float, low=_low, high=_high)
    add_inplace(_base, f"{_name}_", f"{_name}_", function=True)


# trigonometric and hyperbolic functions, log10: integers and bools give the default dtype
for _name, _np, _low, _high in (
    ("log10", np.log10, 0.1, 5),
    ("tan", np.tan, -1.2, 1.2),
    ("asin", np.arcsin, -0.9, 0.9),
    ("acos", np.arccos, -0.9, 0.9),
    ("atan", np.arctan, None, None),
    ("sinh", np.sinh, None, None),
    ("cosh", np.cosh, None, None),
    ("asinh", np.arcsinh, None, None),
    ("acosh", np.arccosh, 1.1, 5),
    ("atanh", np.arctanh, -0.9, 0.9),
):
    _base = _unary(_name, _f64(_np), result_dtype=unary_float, low=_low, high=_high)
    add_inplace(_base, f"{_name}_", f"{_name}_", function=True)
for _name in ("log", "sin", "cos"):
    add_inplace(_info(_name), f"{_name}_", f"{_name}_", function=True)

sgn = _unary("sgn", lambda x: np.nan_to_num(np.sign(x)))  # sign, for real numbers; NaN -> 0
add_inplace(sgn, "sgn_", "sgn_")


def _signbit_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from unary_samples()(d, rng)
    if is_float(d):  # -0.0 and -nan have the sign bit set
        special = np.array([-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf]).astype(np_dtype(d))
        yield S("signed_zeros_nan", special)


def _ref_signbit(x: Any) -> Any:
    x = np.asarray(x)
    return np.zeros(x.shape, bool) if x.dtype == np.bool_ else np.signbit(x.astype(np.float64))


add(
    OpInfo(
        "signbit",
        op=fn("signbit"),
        method=meth("signbit"),
        sample_inputs=_signbit_samples,
        ref=_ref_signbit,
        dtypes=ALL + LOWP,
        result_dtype=fixed("bool"),
    )
)


def _logit_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from unary_samples(low=0.05, high=0.95)(d, rng)
    yield S("eps", make((3, 4), d, rng, -0.5, 1.5), 0.2)
    yield S("eps_kw", make((5,), d, rng, 0.05, 0.95), eps=0.01)
    if is_float(d):  # outside [0, 1]: NaN; at 0 and 1: -inf and inf
        yield S("domain_ends", np.array([-0.5, 0.0, 1.0, 1.5]).astype(np_dtype(d)))


def _ref_logit(x: Any, eps: Any = None) -> Any:
    x = np.asarray(x, dtype=np.float64)
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (1 - x))


logit = add(
    OpInfo(
        "logit",
        op=fn("logit"),
        method=meth("logit"),
        sample_inputs=_logit_samples,
        ref=_ref_logit,
        dtypes=NUMERIC + LOWP,
        result_dtype=unary_float,
    )
)
add_inplace(logit, "logit_", "logit_", function=True)


def _float_class_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from unary_samples()(d, rng)
    if is_float(d):
        special = [np.nan, np.inf, -np.inf, 0.0, -1.5, np.finfo(np.float16).max]
        yield S("nonfinite", np.array(special).astype(np_dtype(d)))


for _name, _np in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_float_class_samples,
            ref=_np,
            dtypes=ALL + LOWP,
            result_dtype=fixed("bool"),
        )
    )


def _gelu_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from unary_samples()(d, rng)
    yield S("tanh", make((3, 4), d, rng), approximate="tanh")
    yield S("none_explicit", make((5,), d, rng), approximate="none")


add(
    OpInfo(
        "gelu",
        op=fn("gelu"),
        sample_inputs=_gelu_samples,
        ref=_gelu,
        dtypes=FLOATS + LOWP,
    )
)


def _ref_clamp(x: Any, min: Any = None, max: Any = None) -> Any:
    out = np.asarray(x)
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)  # min > max gives max everywhere, as in PyTorch
    return out


def _clamp_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    lo, hi = (-2, 3) if is_int(d) else (-1.5, 0.5)
    yield S("both", make((3, 4), d, rng), lo, hi)
    yield S("min_only", make((3, 4), d, rng), min=lo)
    yield S("max_only", make((3, 4), d, rng), max=hi)
    yield S("max_kw_min_none", make((5,), d, rng), None, hi)
    yield S("min_gt_max", make((5,), d, rng), hi, lo)
    yield S("0dim", make((), d, rng), lo, hi)
    yield S("empty", make((0, 3), d, rng), lo, hi)


clamp = add(
    OpInfo(
        "clamp",
        op=fn("clamp"),
        method=meth("clamp"),
        sample_inputs=_clamp_samples,
        ref=_ref_clamp,
        dtypes=NUMERIC + LOWP,
    )
)
add_inplace(clamp, "clamp_", "clamp_", function=True)


def _clamp_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("both", make((3, 4), d, rng), make((3, 4), d, rng, -3, 0), make((3, 4), d, rng, 0, 3))
    yield S(
        "broadcast", make((3, 4), d, rng), make((3, 1), d, rng, -3, 0), make((4,), d, rng, 0, 3)
    )
    yield S("min_only", make((3, 4), d, rng), min=make((4,), d, rng))
    yield S("max_only", make((3, 4), d, rng), max=make((), d, rng))
    yield S("empty", make((0, 4), d, rng), make((4,), d, rng, -3, 0), make((4,), d, rng, 0, 3))


clamp_tensor = add(
    OpInfo(
        "clamp.Tensor",
        op=fn("clamp"),
        method=meth("clamp"),
        sample_inputs=_clamp_tensor_samples,
        ref=_ref_clamp,
        dtypes=NUMERIC,
    )
)
add_inplace(clamp_tensor, "clamp_.Tensor", "clamp_", function=True)

# clip is clamp under numpy's name: clamp's samples and oracle
for _base, _name in ((clamp, "clip"), (clamp_tensor, "clip.Tensor")):
    _alias = add(
        OpInfo(
            _name,
            op=fn("clip"),
            method=meth("clip"),
            sample_inputs=_base.sample_inputs,
            ref=_ref_clamp,
            dtypes=_base.dtypes,
        )
    )
    add_inplace(_alias, _name.replace("clip", "clip_"), "clip_", function=True)


def _nan_to_num_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from unary_samples()(d, rng)
    if is_float(d):
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -1.5, 2.0]).astype(np_dtype(d))
        yield S("nonfinite_values", special, 1.5, 100.0, -7.0)
        if d in FLOATS:  # the oracle sees half precision as float64: test_ops pins their max
            yield S("nonfinite", special)
            yield S("nonfinite_kw", special, posinf=3.0)
    if is_int(d) or d == "bool":  # a copy, whatever the replacements
        yield S("int_values", make((3,), d, rng), nan=1.5)


def _ref_nan_to_num(x: Any, nan: Any = None, posinf: Any = None, neginf: Any = None) -> Any:
    x = np.asarray(x)
    if x.dtype.kind != "f":
        return x.copy()
    big = np.finfo(x.dtype).max
    x = x.astype(np.float64)
    out = np.where(np.isnan(x), 0.0 if nan is None else nan, x)
    out = np.where(x == np.inf, big if posinf is None else posinf, out)
    return np.where(x == -np.inf, -big if neginf is None else neginf, out)


nan_to_num = add(
    OpInfo(
        "nan_to_num",
        op=fn("nan_to_num"),
        method=meth("nan_to_num"),
        sample_inputs=_nan_to_num_samples,
        ref=_ref_nan_to_num,
        dtypes=ALL + LOWP,
    )
)
add_inplace(nan_to_num, "nan_to_num_", "nan_to_num_", function=True)


def _clamp_one_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    bound = 2 if is_int(d) else -0.5
    yield S("scalar", make((3, 4), d, rng), bound)
    yield S("int_bound", make((3, 4), d, rng), 1)
    yield S("0dim", make((), d, rng), bound)
    yield S("empty", make((0, 3), d, rng), bound)
    if is_int(d):
        yield S("float_bound_promotes", make((4,), d, rng), 0.5)  # -> float32, as PyTorch


def _clamp_one_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from binary_samples()(d, rng)
    if d == "float32":
        yield S("float_tensor_int_bound", make((2, 3), d, rng), make((2, 3), "int64", rng, -2, 2))


for _name, _np in (("clamp_min", np.maximum), ("clamp_max", np.minimum)):
    _base = add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_clamp_one_samples,
            ref=_np,
            dtypes=NUMERIC + LOWP,
            result_dtype=promoted(0, 1),
        )
    )
    add_inplace(_base, f"{_name}_", f"{_name}_", function=True)
    _base = add(
        OpInfo(
            f"{_name}.Tensor",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_clamp_one_tensor_samples,
            ref=_np,
            dtypes=NUMERIC,
            result_dtype=promoted(0, 1),
        )
    )
    add_inplace(_base, f"{_name}_.Tensor", f"{_name}_", function=True)


def _where_method(cond: Any, self: Any, other: Any) -> Any:
    return self.where(cond, other)  # PyTorch: x.where(condition, y)


def _where_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same_shape", make((2, 3), "bool", rng), make((2, 3), d, rng), make((2, 3), d, rng))
    yield S("broadcast", make((3, 1), "bool", rng), make((1, 4), d, rng), make((), d, rng))
    yield S("0dim", make((), "bool", rng), make((), d, rng), make((), d, rng))
    yield S("empty", make((0,), "bool", rng), make((0,), d, rng), make((0,), d, rng))
    if d == "float32":
        yield S(
            "promote_int64_float32",
            make((4,), "bool", rng),
            make((4,), "int64", rng),
            make((4,), d, rng),
        )


add(
    OpInfo(
        "where.self",
        op=fn("where"),
        method=_where_method,
        sample_inputs=_where_samples,
        ref=lambda c, a, b: np.where(c, a, b),
        dtypes=ALL,
        result_dtype=promoted(1, 2),
    )
)


def _where_scalar_other_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    sc = scalar_for(d)
    yield S("scalar", make((2, 3), "bool", rng), make((2, 3), d, rng), sc)
    yield S("broadcast", make((3, 1), "bool", rng), make((1, 4), d, rng), sc)
    yield S("0dim", make((), "bool", rng), make((), d, rng), sc)
    if is_int(d):
        yield S("float_scalar_promotes", make((4,), "bool", rng), make((4,), d, rng), 0.5)


add(
    OpInfo(
        "where.ScalarOther",
        op=fn("where"),
        method=_where_method,
        sample_inputs=_where_scalar_other_samples,
        ref=lambda c, a, b: np.where(c, a, b),
        dtypes=ALL,
        result_dtype=promoted(1, 2),
    )
)


def _where_scalar_self_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    sc = scalar_for(d)
    yield S("scalar", make((2, 3), "bool", rng), sc, make((2, 3), d, rng))
    yield S("broadcast", make((3, 1), "bool", rng), sc, make((1, 4), d, rng))
    yield S("0dim", make((), "bool", rng), sc, make((), d, rng))


add(
    OpInfo(
        "where.ScalarSelf",
        op=fn("where"),
        sample_inputs=_where_scalar_self_samples,
        ref=lambda c, a, b: np.where(c, a, b),
        dtypes=ALL,
        result_dtype=promoted(1, 2),
    )
)

# --- comparisons and logic --------------------------------------------------------------------


def _compare_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # small integers cast to the dtype, so equal elements are common
    yield from binary_samples(low=-2, high=2, promotion=True)(d, rng)


def _compare_scalar_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    sc: list[tuple[str, Any]] = [("int_scalar", 1), ("float_scalar", 0.5)]
    if d == "bool":
        sc.append(("bool_scalar", True))
    for label, v in sc:
        yield S(label, make((3, 4), d, rng, -2, 2), v)
        yield S(f"{label}_0dim", make((), d, rng, -2, 2), v)
    yield S("empty", make((0,), d, rng), 1)


for _name, _np in (
    ("eq", np.equal),
    ("ne", np.not_equal),
    ("lt", np.less),
    ("le", np.less_equal),
    ("gt", np.greater),
    ("ge", np.greater_equal),
):
    add(
        OpInfo(
            f"{_name}.Tensor",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_compare_tensor_samples,
            ref=_np,
            dtypes=ALL,
            result_dtype=fixed("bool"),
        )
    )
    add(
        OpInfo(
            f"{_name}.Scalar",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_compare_scalar_samples,
            ref=_np,
            dtypes=ALL,
            result_dtype=fixed("bool"),
        )
    )

for _name, _np in (("logical_and", np.logical_and), ("logical_or", np.logical_or)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=binary_samples(low=-1, high=1),
            ref=_np,
            dtypes=ALL,
            result_dtype=fixed("bool"),
        )
    )
add(
    OpInfo(
        "logical_not",
        op=fn("logical_not"),
        method=meth("logical_not"),
        sample_inputs=unary_samples(low=-1, high=1),
        ref=np.logical_not,
        dtypes=ALL,
        result_dtype=fixed("bool"),
    )
)
add(
    OpInfo(
        "bitwise_not",
        op=fn("bitwise_not"),
        method=meth("bitwise_not"),
        sample_inputs=unary_samples(),
        ref=np.invert,  # ~x for ints, logical not for bool
        dtypes=INTS + BOOL,
    )
)
for _name, _np in (
    ("bitwise_and", np.bitwise_and),
    ("bitwise_or", np.bitwise_or),
    ("bitwise_xor", np.bitwise_xor),
):
    add(
        OpInfo(
            f"{_name}.Tensor",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=binary_samples(promotion=False),
            ref=_np,
            dtypes=INTS + BOOL,
            result_dtype=promoted(0, 1),
        )
    )


# --- numpy's names: aliases of the pointwise ops ------------------------------------------------
# PyTorch's alias ops (absolute, arccos, divide, greater, ...) run the op they name: its
# oracle, on the first few of its samples (the op itself runs them all).


def _take(
    gen: Callable[[str, np.random.Generator], Iterator[SampleInput]] | Any, n: int
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    """The first ``n`` samples of ``gen`` (dtype-generic kernels: a few cases suffice)."""

    def first(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for i, s in enumerate(gen(d, rng)):
            if i == n:
                return
            yield s

    return first


def _first(base: OpInfo, n: int = 1) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    return _take(base.sample_inputs, n)


def _alias_of(of: str, name: str, public: str, *, function: bool = True) -> None:
    """``name`` (public as ``tp.<public>`` when ``function``, and ``Tensor.<public>``): the
    op ``of`` under PyTorch's alias."""
    base = _info(of)
    call = fn(public) if function else meth(public)
    method = meth(public) if function else None
    add(
        replace(
            base,
            name=name,
            op=call,
            method=method,
            sample_inputs=_first(base),
            # one dtype, and float16 where autocast lists the op (arccos is acos in a region)
            dtypes=base.dtypes[:1] + (("float16",) if "float16" in base.dtypes else ()),
        )
    )


for _alias, _of in (
    ("absolute", "abs"),
    ("arccos", "acos"),
    ("arccosh", "acosh"),
    ("arcsin", "asin"),
    ("arcsinh", "asinh"),
    ("arctan", "atan"),
    ("arctanh", "atanh"),
    ("arctan2", "atan2"),
    ("negative", "neg"),
    ("fix", "trunc"),
):
    _alias_of(_of, _alias, _alias)
    # absolute_ and arctan2_ are methods only, as in PyTorch
    _alias_of(f"{_of}_", f"{_alias}_", f"{_alias}_", function=_alias not in ("absolute", "arctan2"))
for _alias, _of in (
    ("divide", "div"),
    ("true_divide", "div"),
    ("multiply", "mul"),
    ("subtract", "sub"),
):
    for _overload in ("Tensor", "Scalar"):
        _alias_of(f"{_of}.{_overload}", f"{_alias}.{_overload}", _alias)
        _alias_of(f"{_of}_.{_overload}", f"{_alias}_.{_overload}", f"{_alias}_", function=False)
_alias_of("div.Tensor_mode", "divide.Tensor_mode", "divide")
add_inplace(_info("divide.Tensor_mode"), "divide_.Tensor_mode", "divide_")


def _divide_scalar_mode_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for mode in ("trunc", "floor", None):
        m = mode or "true"
        yield S(f"{m}_int", make((2, 3), d, rng), -3, rounding_mode=mode)
        yield S(f"{m}_float", make((4,), d, rng), 2.5, rounding_mode=mode)


divide_scalar_mode = add(
    OpInfo(
        "divide.Scalar_mode",
        op=fn("divide"),
        method=meth("divide"),
        sample_inputs=_divide_scalar_mode_samples,
        ref=_ref_div_mode,
        dtypes=NUMERIC,
        result_dtype=_div_mode_dtype,
    )
)
add_inplace(divide_scalar_mode, "divide_.Scalar_mode", "divide_")
for _alias, _of in (
    ("greater", "gt"),
    ("greater_equal", "ge"),
    ("less", "lt"),
    ("less_equal", "le"),
    ("not_equal", "ne"),
):
    for _overload in ("Tensor", "Scalar"):
        _alias_of(f"{_of}.{_overload}", f"{_alias}.{_overload}", _alias)
        # in place: the bools written into self (PyTorch's gt_, ...)
        add_inplace(_info(f"{_alias}.{_overload}"), f"{_alias}_.{_overload}", f"{_alias}_")


def _positive_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((3, 4), d, rng))
    yield S("0dim", make((), d, rng))


positive = add(
    OpInfo(
        "positive",
        op=fn("positive"),
        method=meth("positive"),
        sample_inputs=_positive_samples,
        ref=lambda x: x,
        dtypes=NUMERIC,
    )
)


# --- numpy's numeric functions: gcd, shifts, copysign, logaddexp, frexp, ... ----------------------


def _gcd_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _take(binary_samples(promotion=False), 5)(d, rng)
    yield S("zeros_and_signs", np.array([0, 0, -4, 12, -18]), np.array([0, 5, 6, -8, -12]))


for _name, _np in (("gcd", np.gcd), ("lcm", np.lcm)):
    _base = add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_gcd_samples,
            ref=_np,
            dtypes=INTS,
        )
    )
    add_inplace(_base, f"{_name}_", f"{_name}_", function=True)


def _shift_ref(left: bool) -> Callable[[Any, Any], Any]:
    """PyTorch's shifts of int64: by a negative amount or 64 or more, 0 to the left and the
    sign to the right."""

    def ref(a: Any, b: Any) -> Any:
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype == bool:
            a = a.astype(np.int64)
        a, b = np.broadcast_arrays(a, np.asarray(b, dtype=a.dtype))
        out = (b < 0) | (b >= 64)
        safe = np.where(out, 0, b)
        if left:
            return np.where(out, 0, np.left_shift(a, safe))
        return np.where(out, np.right_shift(a, 63), np.right_shift(a, safe))

    return ref


def _shift_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _take(binary_samples(rhs_low=0, rhs_high=8, promotion=False), 5)(d, rng)
    yield S("out_of_range", make((4,), d, rng), np.array([-1, 63, 64, 70]))


def _shift_scalars(d: str) -> list[tuple[str, Any]]:
    return [("shift", 3), ("past_width", 70)]


def _shift_scalar_self(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("scalar_self", 5, make((2, 3), d, rng, 0, 8))
    yield S("scalar_self_negative", -7, make((4,), d, rng, 0, 70))


for _name, _left in (("bitwise_left_shift", True), ("bitwise_right_shift", False)):
    _ref = _shift_ref(_left)
    _T = add(
        OpInfo(
            f"{_name}.Tensor",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_shift_samples,
            ref=_ref,
            dtypes=INTS,
        )
    )
    _S = add(
        OpInfo(
            f"{_name}.Tensor_Scalar",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=scalar_samples(scalars=_shift_scalars),
            ref=_ref,
            dtypes=INTS,
        )
    )
    add(
        OpInfo(
            f"{_name}.Scalar_Tensor",
            op=fn(_name),
            sample_inputs=_shift_scalar_self,
            ref=_ref,
            dtypes=INTS,
        )
    )
    add_inplace(_T, f"{_name}_.Tensor", f"{_name}_")
    add_inplace(_S, f"{_name}_.Tensor_Scalar", f"{_name}_")


def _copysign_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _take(binary_samples(bool_promotion=False), 5)(d, rng)
    if d in FLOATS:
        signed_zeros = np.array([0.0, -0.0, 1.5, -2.0]).astype(d)
        yield S("signed_zeros", signed_zeros, signed_zeros[::-1].copy())


copysign_T = add(
    OpInfo(
        "copysign.Tensor",
        op=fn("copysign"),
        method=meth("copysign"),
        sample_inputs=_copysign_samples,
        ref=_f64_binary(np.copysign),
        dtypes=("float32", "int64", "bool", "float16"),
        result_dtype=promoted(0, 1, floating=True),
    )
)
copysign_S = add(
    OpInfo(
        "copysign.Scalar",
        op=fn("copysign"),
        method=meth("copysign"),
        sample_inputs=_take(scalar_samples(scalars=lambda d: [("neg_int", -3), ("float", 2.5)]), 4),
        ref=_f64_binary(np.copysign),
        dtypes=("float32", "int64", "bool"),
        result_dtype=promoted(0, 1, floating=True),
    )
)
add_inplace(copysign_T, "copysign_.Tensor", "copysign_")
add_inplace(copysign_S, "copysign_.Scalar", "copysign_")


def _logaddexp_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _take(binary_samples(promotion=False), 5)(d, rng)
    if d in FLOATS:
        inf = np.array([np.inf, -np.inf, -np.inf, 1.0]).astype(d)
        yield S("infinities", inf, np.array([np.inf, -np.inf, 2.0, -np.inf]).astype(d))


for _name, _np in (("logaddexp", np.logaddexp), ("logaddexp2", np.logaddexp2)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_logaddexp_samples,
            ref=_f64_binary(_np),
            dtypes=("float32", "float64", "bfloat16"),
        )
    )


def _nextafter_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _take(binary_samples(promotion=False), 5)(d, rng)
    yield S("specials", np.array([0.0, 0.0, 1.0, -1.0, 2.0]).astype(d), np.array(
        [1.0, -1.0, 1.0, -2.0, np.inf]).astype(d))  # fmt: skip


nextafter = add(
    OpInfo(
        "nextafter",
        op=fn("nextafter"),
        method=meth("nextafter"),
        sample_inputs=_nextafter_samples,
        ref=np.nextafter,  # in the sample's own type (float16 / bfloat16: tests/ops)
        dtypes=FLOATS,
    )
)
add_inplace(nextafter, "nextafter_", "nextafter_")

logical_xor = add(
    OpInfo(
        "logical_xor",
        op=fn("logical_xor"),
        method=meth("logical_xor"),
        sample_inputs=_take(binary_samples(), 5),
        ref=np.logical_xor,
        dtypes=("float32", "int64", "bool"),
        result_dtype=fixed("bool"),
    )
)
add_inplace(logical_xor, "logical_xor_", "logical_xor_")


def _frexp_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _take(unary_samples(), 3)(d, rng)
    yield S("specials", np.array([0.0, -0.0, 1.0, -1024.0, 0.75, np.inf, -np.inf]).astype(
        np_dtype(d)))  # fmt: skip


def _ref_frexp(x: Any) -> Any:
    m, e = np.frexp(np.asarray(x, dtype=np.float64))
    return m, e.astype(np.int32)


add(
    OpInfo(
        "frexp.Tensor",
        op=fn("frexp"),
        method=meth("frexp"),
        sample_inputs=_frexp_samples,
        ref=_ref_frexp,
        dtypes=FLOATS + LOWP,
        result_dtype=lambda s, d: (d, "int32"),
        returns_names=("mantissa", "exponent"),
    )
)

for _name, _np in (("deg2rad", np.deg2rad), ("rad2deg", np.rad2deg)):
    _base = add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_take(unary_samples(), 3),
            ref=lambda x, _np=_np: _np(np.asarray(x, dtype=np.float64)),
            dtypes=("float32", "int64", "bool", "bfloat16"),
            result_dtype=unary_float,
        )
    )
    add_inplace(_base, f"{_name}_", f"{_name}_", function=True)


def _ldexp_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same_shape", make((2, 3), d, rng), make((2, 3), "int64", rng, -4, 4))
    yield S("broadcast", make((3, 1), d, rng), make((1, 4), "int64", rng, -4, 4))
    yield S("0dim_other", make((2, 3), d, rng), np.array(3))
    yield S("float_exponent", make((2, 3), d, rng), make((2, 3), d, rng, -2, 2))


def _ref_ldexp(a: Any, b: Any) -> Any:
    return np.asarray(a, dtype=np.float64) * 2.0 ** np.asarray(b, dtype=np.float64)


ldexp = add(
    OpInfo(
        "ldexp.Tensor",
        op=fn("ldexp"),
        method=meth("ldexp"),
        sample_inputs=_ldexp_samples,
        ref=_ref_ldexp,
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1, floating=True),
    )
)
add_inplace(ldexp, "ldexp_", "ldexp_", function=True)


def _float_power_ref(a: Any, b: Any) -> Any:
    return np.power(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))


def _float_power_scalar_base(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("scalar_base", 2.5, make((2, 3), d, rng, -2, 2))
    yield S("int_base", 3, make((4,), d, rng, -2, 2))


_FLOAT_POWER = (
    ("Tensor_Tensor", _take(binary_samples(low=1, high=3, rhs_low=-2, rhs_high=2), 5)),
    ("Tensor_Scalar", _take(scalar_samples(low=1, high=3), 4)),
    ("Scalar", _float_power_scalar_base),
)
for _overload, _samples in _FLOAT_POWER:
    add(
        OpInfo(
            f"float_power.{_overload}",
            op=fn("float_power"),
            method=None if _overload == "Scalar" else meth("float_power"),
            sample_inputs=_samples,
            ref=_float_power_ref,
            dtypes=NUMERIC,
            result_dtype=fixed("float64"),
        )
    )
for _overload, _other in (("Tensor", "Tensor_Tensor"), ("Scalar", "Tensor_Scalar")):
    _base = replace(_info(f"float_power.{_other}"), dtypes=("float64",))
    add_inplace(_base, f"float_power_.{_overload}", "float_power_")


def _infinity_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _take(unary_samples(), 3)(d, rng)
    if is_float(d):
        yield S("infinities", np.array([np.inf, -np.inf, np.nan, 0.0, 1.0]).astype(np_dtype(d)))


for _name, _np in (("isposinf", np.isposinf), ("isneginf", np.isneginf)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_infinity_samples,
            ref=lambda x, _np=_np: _np(np.asarray(x, dtype=np.float64)),
            dtypes=("float32", "int64", "float16"),
            result_dtype=fixed("bool"),
        )
    )


def _isreal_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _take(unary_samples(), 3)(d, rng)
    if d == "float32":
        yield S("complex", np.array([1 + 1j, 2 + 0j, -0.0 + 0j, 1j], dtype=np.complex64))


add(
    OpInfo(
        "isreal",
        op=fn("isreal"),
        method=meth("isreal"),
        sample_inputs=_isreal_samples,
        ref=np.isreal,
        dtypes=("float32", "int64"),
        result_dtype=fixed("bool"),
    )
)


# --- copies and conversion --------------------------------------------------------------------


def _to_copy_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for target in ("float32", "float64", "int64", "bool"):
        yield S(f"to_{target}", make((3, 4), d, rng, -2.7, 2.7), dtype=DT(target))
    yield S("no_dtype", make((2, 3), d, rng))
    yield S("0dim_to_float64", make((), d, rng), dtype=DT("float64"))
    yield S("empty_to_int64", make((0, 2), d, rng), dtype=DT("int64"))
    if is_float(d):
        yield S("to_float16", make((3,), d, rng), dtype=DT("float16"))


def _ref_to_copy(x: Any, *, dtype: Any = None) -> Any:
    x = np.asarray(x)
    if dtype is None:
        return x.copy()
    return x.astype(dtype)  # float -> int truncates toward zero, nonzero -> True


add(
    OpInfo(
        "_to_copy",
        op=fn("_to_copy"),
        sample_inputs=_to_copy_samples,
        ref=_ref_to_copy,
        dtypes=ALL + LOWP,
        result_dtype=dtype_kwarg(same),
    )
)
add(
    OpInfo(
        "clone",
        op=fn("clone"),
        method=meth("clone"),
        sample_inputs=unary_samples(),
        ref=lambda x: np.array(x, copy=True),
        dtypes=ALL + LOWP,
    )
)
add(
    OpInfo(
        "contiguous",
        op=meth("contiguous"),
        sample_inputs=unary_samples(),
        ref=lambda x: x,
        dtypes=ALL,
    )
)
add(
    OpInfo(
        "detach",
        op=fn("detach"),
        method=meth("detach"),
        sample_inputs=unary_samples(),
        ref=lambda x: x,
        dtypes=ALL,
        kind="view",
    )
)


def _copy_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same_shape", make((2, 3), d, rng), make((2, 3), d, rng))
    yield S("broadcast_src", make((2, 3), d, rng), make((1, 3), d, rng))
    yield S("0dim_src", make((2, 3), d, rng), make((), d, rng))
    yield S("0dim", make((), d, rng), make((), d, rng))
    yield S("empty", make((0, 3), d, rng), make((0, 3), d, rng))
    other = "int64" if d != "int64" else "float64"
    yield S(f"from_{other}", make((2, 3), d, rng), make((2, 3), other, rng, -2.7, 2.7))
    yield S("non_blocking_kw", make((2,), d, rng), make((2,), d, rng), non_blocking=False)


add(
    OpInfo(
        "copy_",
        op=meth("copy_"),
        sample_inputs=_copy_samples,
        ref=lambda x, src, non_blocking=False: np.broadcast_to(
            np.asarray(src).astype(x.dtype), x.shape
        ),
        dtypes=ALL,
        kind="inplace",
    )
)


def _fill_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    v = scalar_for(d)
    yield S("2d", make((2, 3), d, rng), v)
    yield S("0dim", make((), d, rng), v)
    yield S("empty", make((0,), d, rng), v)
    if is_float(d):
        yield S("int_value", make((3,), d, rng), 7)
    if is_int(d):
        yield S("negative", make((3,), d, rng), -4)


add(
    OpInfo(
        "fill_.Scalar",
        op=fn("fill_"),
        method=meth("fill_"),
        sample_inputs=_fill_samples,
        ref=lambda x, v: np.full(x.shape, v, x.dtype),
        dtypes=ALL + LOWP,
        kind="inplace",
    )
)
add(
    OpInfo(
        "zero_",
        op=fn("zero_"),
        method=meth("zero_"),
        sample_inputs=unary_samples(),
        ref=lambda x: np.zeros(x.shape, x.dtype),
        dtypes=ALL,
        kind="inplace",
    )
)


def _local_scalar_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("0dim", make((), d, rng))
    yield S("1d_one_element", make((1,), d, rng))
    yield S("2d_one_element", make((1, 1), d, rng))


def _compare_local_scalar(got: Any, expected: Any, s: SampleInput, d: str) -> None:
    want_type = bool if d == "bool" else int if is_int(d) else float
    assert type(got) is want_type, (
        f"expected a Python {want_type.__name__}, got {type(got).__name__}"
    )
    if want_type is float:
        assert math.isclose(got, float(expected), rel_tol=1e-6), (got, expected)
    else:
        assert got == expected.item(), (got, expected)


add(
    OpInfo(
        "_local_scalar_dense",
        op=fn("_local_scalar_dense"),
        sample_inputs=_local_scalar_samples,
        ref=lambda x: np.asarray(x).reshape(()),
        dtypes=ALL,
        compare=_compare_local_scalar,
    )
)


# --- more in-place forms (issue 29) -----------------------------------------------------------
# the base op's samples whose result fits in self; the comparisons and logical ops write their
# 0/1 results in self's dtype

for _base_name, _name, _function in (
    *((f"{c}.{o}", f"{c}_.{o}", False) for c in ("eq", "ne", "lt", "le", "gt", "ge") for o in ("Tensor", "Scalar")),
    ("floor_divide", "floor_divide_.Tensor", False),
    ("floor_divide.Scalar", "floor_divide_.Scalar", False),
    ("remainder.Tensor", "remainder_.Tensor", False),
    ("remainder.Scalar", "remainder_.Scalar", False),
    ("logical_and", "logical_and_", False),
    ("logical_or", "logical_or_", False),
    ("logical_not", "logical_not_", False),
    ("bitwise_not", "bitwise_not_", False),
    ("bitwise_and.Tensor", "bitwise_and_.Tensor", False),
    ("bitwise_or.Tensor", "bitwise_or_.Tensor", False),
    ("bitwise_xor.Tensor", "bitwise_xor_.Tensor", False),
    ("sign", "sign_", False),
    ("log1p", "log1p_", True),
    ("rsqrt", "rsqrt_", True),
    ("conj_physical", "conj_physical_", True),
):  # fmt: skip
    add_inplace(_info(_base_name), _name, _name.split(".")[0], function=_function)


def _bitwise_scalar_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((3, 4), d, rng), scalar_for(d))
    yield S("0dim", make((), d, rng), scalar_for(d))
    if d != "bool":
        yield S("negative", make((5,), d, rng), -6)


for _bw, _np_bw in (("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)):
    add(
        OpInfo(
            f"bitwise_{_bw}_.Scalar",
            op=meth(f"bitwise_{_bw}_"),
            sample_inputs=_bitwise_scalar_samples,
            ref=lambda x, v, f=_np_bw: f(x, np.asarray(v, x.dtype)),
            dtypes=INTS + BOOL,
            result_dtype=same,
            kind="inplace",
        )
    )
