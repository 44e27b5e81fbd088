"""The ``pointwise`` family of the meta namespace: the unary and binary elementwise functions
(a result shaped by broadcasting, typed by numpy's promotion), ``add.at``, clip and where
(Note [Meta arrays] in _array.py).
"""

from __future__ import annotations

from typing import Any

from ._array import (
    MetaArray,
    _api,
    _b,
    _broadcast,
    _elementwise,
    _f32,
    _f64,
    _i32,
    _promote,
    _shp,
    asarray,
    xp,
)

_SAME = (
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "arccos", "arccosh", "arcsin",
    "arcsinh", "arctan", "arctanh", "bitwise_invert", "bitwise_not", "invert", "ceil", "conj",
    "cos", "cosh", "exp", "exp2", "expm1", "floor", "log", "log1p", "log2", "log10", "negative",
    "positive", "round", "rint", "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh",
    "trunc", "reciprocal", "fix",
)  # fmt: skip
_TO_BOOL = ("isfinite", "isinf", "isnan", "signbit", "logical_not")
_TO_REAL = ("real", "imag")
_BINARY = (
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "pow",
    "power", "maximum", "minimum", "atan2", "arctan2", "hypot", "copysign", "nextafter",
    "logaddexp", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "left_shift", "right_shift", "fmod", "fmax", "fmin",
)  # fmt: skip
_COMPARE = (
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor",
)  # fmt: skip


def _unary_fn(name: str, kind: str) -> Any:
    def fn(x: Any, /, **kwargs: Any) -> MetaArray:
        x = asarray(x) if not isinstance(x, MetaArray) else x
        d = x.dtype
        if kind == "b":
            d = _b
        elif kind == "r":
            d = d.to_real() if d.kind == "c" else d
        elif name in ("abs",) and d.kind == "c":
            d = d.to_real()
        elif d.kind in "biu" and name in _FLOAT_RESULT:
            d = _f32 if d.itemsize <= 2 and d.kind != "b" or d is _b else _f64
        return _elementwise(x.shape, d, x)

    fn.__name__ = name
    return fn


# numpy's float functions of integer arrays give float64 (float16 for int8/uint8, float32
# for int16); kernels cast to a float compute dtype first, so only the shape matters here
_FLOAT_RESULT = frozenset(
    ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "exp2", "expm1",
     "log", "log1p", "log2", "log10", "sin", "sinh", "sqrt", "tan", "tanh", "reciprocal")
)  # fmt: skip


def _binary_fn(name: str, compare: bool) -> Any:
    def fn(a: Any, b: Any, /, **kwargs: Any) -> MetaArray:
        if "out" in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        shape = _broadcast(_shp(a), _shp(b))
        if compare:
            return _elementwise(shape, _b, a, b)
        d = _promote(a, b)
        if name in ("divide", "true_divide") and d.kind in "biu":
            d = _f64
        return _elementwise(shape, d, a, b)

    fn.__name__ = name
    return fn


for _n in _SAME:
    setattr(xp, _n, _unary_fn(_n, "s"))
for _n in _TO_BOOL:
    setattr(xp, _n, _unary_fn(_n, "b"))
for _n in _TO_REAL:
    setattr(xp, _n, _unary_fn(_n, "r"))
for _n in _BINARY:
    setattr(xp, _n, _binary_fn(_n, False))
for _n in _COMPARE:
    setattr(xp, _n, _binary_fn(_n, True))


def _add_at(a: MetaArray, idx: Any, v: Any) -> None:
    """numpy's ``add.at``: only the shapes are checked."""
    a[idx] = v


xp.add.at = _add_at


@_api
def clip(x: MetaArray, /, min: Any = None, max: Any = None) -> MetaArray:  # noqa: A002
    return _elementwise(_broadcast(x.shape, _shp(min), _shp(max)), x.dtype, x, min, max)


@_api
def where(cond: Any, a: Any, b: Any, /) -> MetaArray:
    return _elementwise(_broadcast(_shp(cond), _shp(a), _shp(b)), _promote(a, b), cond, a, b)


# gcd and lcm (integers: their operands' dtype), frexp (the mantissa and int32 exponents)
for _n in ("gcd", "lcm"):
    setattr(xp, _n, _binary_fn(_n, False))


@_api
def frexp(x: MetaArray, /) -> tuple[MetaArray, MetaArray]:
    return MetaArray(x.shape, x.dtype), MetaArray(x.shape, _i32)


del _n
