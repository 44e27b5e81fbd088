"""Samples and oracles of the pointwise unary ops, comparisons and logic."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._core import (
    ALL,
    BOOL,
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
    binary_samples,
    fixed,
    fn,
    is_float,
    is_int,
    make,
    meth,
    np_dtype,
    promoted,
    same,
    scalar_for,
    unary_float,
    unary_samples,
)

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


def _info(name: str) -> OpInfo:
    return next(info for info in OP_DB if info.name == name)


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
