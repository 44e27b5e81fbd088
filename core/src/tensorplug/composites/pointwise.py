"""The ``pointwise`` family of the composites: clip, clamp under numpy's name, as in PyTorch
(grad_fn ClampBackward1, clamp's messages), and the copies contiguous and zero_."""

from __future__ import annotations

import math
from typing import Any

from .. import _strides
from .. import dtypes as _dt
from .. import storage as _storage
from .._op_errors import torch_name
from ..ops import ops
from ..tensor import is_wrapper

aten = ops.aten


def clip(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp.default(self, min, max)


def clip_tensor(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp.Tensor(self, min, max)


def clip_(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp_.default(self, min, max)


def clip_tensor_(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp_.Tensor(self, min, max)


# --- numpy's names: PyTorch's aliases of the pointwise ops --------------------------------------
# Each runs the op it names (its kernel, formula, batching rule and autocast policy), as
# PyTorch's alias ops do (CompositeImplicitAutograd, aten/src/ATen/native/UnaryOps.cpp).


def absolute(self: Any) -> Any:
    return aten.abs.default(self)


def absolute_(self: Any) -> Any:
    return aten.abs_.default(self)


def arccos(self: Any) -> Any:
    return aten.acos.default(self)


def arccos_(self: Any) -> Any:
    return aten.acos_.default(self)


def arccosh(self: Any) -> Any:
    return aten.acosh.default(self)


def arccosh_(self: Any) -> Any:
    return aten.acosh_.default(self)


def arcsin(self: Any) -> Any:
    return aten.asin.default(self)


def arcsin_(self: Any) -> Any:
    return aten.asin_.default(self)


def arcsinh(self: Any) -> Any:
    return aten.asinh.default(self)


def arcsinh_(self: Any) -> Any:
    return aten.asinh_.default(self)


def arctan(self: Any) -> Any:
    return aten.atan.default(self)


def arctan_(self: Any) -> Any:
    return aten.atan_.default(self)


def arctanh(self: Any) -> Any:
    return aten.atanh.default(self)


def arctanh_(self: Any) -> Any:
    return aten.atanh_.default(self)


def arctan2(self: Any, other: Any) -> Any:
    return aten.atan2.default(self, other)


def arctan2_(self: Any, other: Any) -> Any:
    return aten.atan2_.default(self, other)


def divide_tensor(self: Any, other: Any) -> Any:
    return aten.div.Tensor(self, other)


def divide__tensor(self: Any, other: Any) -> Any:
    return aten.div_.Tensor(self, other)


def divide_scalar(self: Any, other: Any) -> Any:
    return aten.div.Scalar(self, other)


def divide__scalar(self: Any, other: Any) -> Any:
    return aten.div_.Scalar(self, other)


def true_divide_tensor(self: Any, other: Any) -> Any:
    return aten.div.Tensor(self, other)


def true_divide__tensor(self: Any, other: Any) -> Any:
    return aten.div_.Tensor(self, other)


def true_divide_scalar(self: Any, other: Any) -> Any:
    return aten.div.Scalar(self, other)


def true_divide__scalar(self: Any, other: Any) -> Any:
    return aten.div_.Scalar(self, other)


def multiply_tensor(self: Any, other: Any) -> Any:
    return aten.mul.Tensor(self, other)


def multiply__tensor(self: Any, other: Any) -> Any:
    return aten.mul_.Tensor(self, other)


def multiply_scalar(self: Any, other: Any) -> Any:
    return aten.mul.Scalar(self, other)


def multiply__scalar(self: Any, other: Any) -> Any:
    return aten.mul_.Scalar(self, other)


def divide_tensor_mode(self: Any, other: Any, *, rounding_mode: str | None) -> Any:
    return aten.div.Tensor_mode(self, other, rounding_mode=rounding_mode)


def _wrapped(value: Any, like: Any) -> Any:
    """A Python scalar as the 0-dim tensor PyTorch wraps it in: int64, the default floating
    dtype, complex64 or bool, which the tensor's dtype wins over within its category."""
    d = (
        _dt.bool if isinstance(value, bool)
        else _dt.int64 if isinstance(value, int)
        else _dt.complex64 if isinstance(value, complex)
        else _dt.get_default_dtype()
    )  # fmt: skip
    return aten.full.default([], value, dtype=d, device=like.device)


def divide_scalar_mode(self: Any, other: Any, *, rounding_mode: str | None) -> Any:
    return aten.div.Tensor_mode(self, _wrapped(other, self), rounding_mode=rounding_mode)


def _divide_into(self: Any, other: Any, rounding_mode: str | None) -> Any:
    """``div(self, other, rounding_mode)`` written into ``self``, with the checks of PyTorch's
    ``div_``: the broadcast shape is self's, the result's dtype casts to self's."""
    r = aten.div.Tensor_mode(self, other, rounding_mode=rounding_mode)
    if tuple(r.shape) != tuple(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(r.shape)}"
        )
    if not _dt.can_cast(r.dtype, self.dtype):
        raise RuntimeError(
            f"result type {torch_name(r.dtype)} can't be cast to the desired output type "
            f"{torch_name(self.dtype)}"
        )
    return aten.copy_.default(self, r)


def divide__tensor_mode(self: Any, other: Any, *, rounding_mode: str | None) -> Any:
    return _divide_into(self, other, rounding_mode)


def divide__scalar_mode(self: Any, other: Any, *, rounding_mode: str | None) -> Any:
    return _divide_into(self, _wrapped(other, self), rounding_mode)


def subtract_tensor(self: Any, other: Any, *, alpha: Any = 1) -> Any:
    return aten.sub.Tensor(self, other, alpha=alpha)


def subtract__tensor(self: Any, other: Any, *, alpha: Any = 1) -> Any:
    return aten.sub_.Tensor(self, other, alpha=alpha)


def subtract_scalar(self: Any, other: Any, alpha: Any = 1) -> Any:
    return aten.sub.Scalar(self, other, alpha)


def subtract__scalar(self: Any, other: Any, alpha: Any = 1) -> Any:
    return aten.sub_.Scalar(self, other, alpha)


def negative(self: Any) -> Any:
    return aten.neg.default(self)


def negative_(self: Any) -> Any:
    return aten.neg_.default(self)


def positive(self: Any) -> Any:
    """``self`` itself (``+x``), refused for bool as PyTorch does."""
    if self.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def fix(self: Any) -> Any:
    return aten.trunc.default(self)


def fix_(self: Any) -> Any:
    return aten.trunc_.default(self)


def greater_tensor(self: Any, other: Any) -> Any:
    return aten.gt.Tensor(self, other)


def greater_scalar(self: Any, other: Any) -> Any:
    return aten.gt.Scalar(self, other)


def greater_equal_tensor(self: Any, other: Any) -> Any:
    return aten.ge.Tensor(self, other)


def greater_equal_scalar(self: Any, other: Any) -> Any:
    return aten.ge.Scalar(self, other)


def less_tensor(self: Any, other: Any) -> Any:
    return aten.lt.Tensor(self, other)


def less_scalar(self: Any, other: Any) -> Any:
    return aten.lt.Scalar(self, other)


def less_equal_tensor(self: Any, other: Any) -> Any:
    return aten.le.Tensor(self, other)


def less_equal_scalar(self: Any, other: Any) -> Any:
    return aten.le.Scalar(self, other)


def not_equal_tensor(self: Any, other: Any) -> Any:
    return aten.ne.Tensor(self, other)


def not_equal_scalar(self: Any, other: Any) -> Any:
    return aten.ne.Scalar(self, other)


def _compare_(op: Any, self: Any, other: Any) -> Any:
    """A comparison written into ``self`` (1 and 0 in its dtype), as PyTorch's ``gt_``."""
    r = op(self, other)
    if tuple(r.shape) != tuple(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(r.shape)}"
        )
    return aten.copy_.default(self, r)


def greater__tensor(self: Any, other: Any) -> Any:
    return _compare_(aten.gt.Tensor, self, other)


def greater__scalar(self: Any, other: Any) -> Any:
    return _compare_(aten.gt.Scalar, self, other)


def greater_equal__tensor(self: Any, other: Any) -> Any:
    return _compare_(aten.ge.Tensor, self, other)


def greater_equal__scalar(self: Any, other: Any) -> Any:
    return _compare_(aten.ge.Scalar, self, other)


def less__tensor(self: Any, other: Any) -> Any:
    return _compare_(aten.lt.Tensor, self, other)


def less__scalar(self: Any, other: Any) -> Any:
    return _compare_(aten.lt.Scalar, self, other)


def less_equal__tensor(self: Any, other: Any) -> Any:
    return _compare_(aten.le.Tensor, self, other)


def less_equal__scalar(self: Any, other: Any) -> Any:
    return _compare_(aten.le.Scalar, self, other)


def not_equal__tensor(self: Any, other: Any) -> Any:
    return _compare_(aten.ne.Tensor, self, other)


def not_equal__scalar(self: Any, other: Any) -> Any:
    return _compare_(aten.ne.Scalar, self, other)


# --- numpy's numeric functions written in other operators ---------------------------------------
# deg2rad / rad2deg multiply (PyTorch's own kernels do the same); ldexp, float_power and isreal
# are PyTorch's composites; isposinf / isneginf compare with the infinity.

_DEG2RAD = math.pi / 180
_RAD2DEG = 180 / math.pi


def _angle_factor(name: str, self: Any) -> None:
    if self.dtype.is_complex:
        raise RuntimeError(f"aten::{name}: {name} is not supported for complex tensors.")


def _to_float(self: Any) -> Any:
    """Integers and bool as the default dtype, as PyTorch's floating functions take them."""
    if self.dtype.is_floating_point:
        return self
    return aten._to_copy.default(self, dtype=_dt.get_default_dtype())


def deg2rad(self: Any) -> Any:
    _angle_factor("deg2rad", self)
    return aten.mul.Scalar(_to_float(self), _DEG2RAD)


def deg2rad_(self: Any) -> Any:
    _angle_factor("deg2rad", self)
    return aten.mul_.Scalar(self, _DEG2RAD)


def rad2deg(self: Any) -> Any:
    _angle_factor("rad2deg", self)
    return aten.mul.Scalar(_to_float(self), _RAD2DEG)


def rad2deg_(self: Any) -> Any:
    _angle_factor("rad2deg", self)
    return aten.mul_.Scalar(self, _RAD2DEG)


def ldexp(self: Any, other: Any) -> Any:
    """``self * 2**other``, in the floating type of the promoted operands."""
    d = _dt.result_type(self, other)
    if not (d.is_floating_point or d.is_complex):
        d = _dt.get_default_dtype()
    r = aten.mul.Tensor(self, aten.pow.Scalar(2.0, other))
    return r if r.dtype is d else aten._to_copy.default(r, dtype=d)


def ldexp_(self: Any, other: Any) -> Any:
    return aten.mul_.Tensor(self, aten.pow.Scalar(2.0, other))


def _power_dtype(*operands: Any) -> Any:
    """float_power computes in double, complex double when an operand is complex."""
    complex_ = any(
        isinstance(x, complex) or (hasattr(x, "dtype") and x.dtype.is_complex) for x in operands
    )
    return _dt.complex128 if complex_ else _dt.float64


def _as(self: Any, d: Any) -> Any:
    return self if self.dtype is d else aten._to_copy.default(self, dtype=d)


def _scalar_as(value: Any, d: Any) -> Any:
    return complex(value) if d.is_complex else float(value)


def float_power_tensor_tensor(self: Any, exponent: Any) -> Any:
    d = _power_dtype(self, exponent)
    return aten.pow.Tensor_Tensor(_as(self, d), _as(exponent, d))


def float_power_scalar(self: Any, exponent: Any) -> Any:
    d = _power_dtype(self, exponent)
    return aten.pow.Scalar(_scalar_as(self, d), _as(exponent, d))


def float_power_tensor_scalar(self: Any, exponent: Any) -> Any:
    d = _power_dtype(self, exponent)
    return aten.pow.Tensor_Scalar(_as(self, d), _scalar_as(exponent, d))


def _check_float_power_(self: Any, d: Any) -> None:
    if self.dtype is not d:
        raise RuntimeError(
            f"aten::float_power_: the base given to float_power_ has dtype "
            f"{torch_name(self.dtype)} but the operation's result requires dtype {torch_name(d)}"
        )


def float_power__scalar(self: Any, exponent: Any) -> Any:
    d = _power_dtype(self, exponent)
    _check_float_power_(self, d)
    return aten.pow_.Scalar(self, _scalar_as(exponent, d))


def float_power__tensor(self: Any, exponent: Any) -> Any:
    d = _power_dtype(self, exponent)
    _check_float_power_(self, d)
    return aten.pow_.Tensor(self, _as(exponent, d))


def _infinity_test(name: str, self: Any, value: float) -> Any:
    if self.dtype.is_complex:
        raise RuntimeError(f"aten::{name}: {name} does not support complex inputs.")
    return aten.eq.Scalar(self, value)


def isposinf(self: Any) -> Any:
    return _infinity_test("isposinf", self, math.inf)


def isneginf(self: Any) -> Any:
    return _infinity_test("isneginf", self, -math.inf)


def isreal(self: Any) -> Any:
    """True where the imaginary part is 0; everywhere for a real tensor."""
    if not self.dtype.is_complex:
        return aten.ones_like.default(self, dtype=_dt.bool)
    return aten.eq.Scalar(imag(self), 0)


# --- copies ---------------------------------------------------------------------------------


def contiguous(self: Any, *, memory_format: Any = "contiguous_format") -> Any:
    """``self`` where it is already laid out as ``memory_format`` asks, else a copy that is
    (Note [Strided layout] in _strides.py); a backend without strides has row-major order."""
    fmt = _strides.check_format(memory_format, "contiguous")
    if not _storage.is_strided(self) and not is_wrapper(self):
        # its order is the array library's own business: a row-major copy is what a view
        # needs (is_contiguous() answers True there, as for PyTorch's XLA tensors)
        if fmt != "contiguous_format":
            _strides.strides_for(tuple(self.shape), fmt)  # the rank error
        return aten.clone.default(self, memory_format="contiguous_format")
    if self.is_contiguous(memory_format=fmt):
        return self
    if fmt == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return aten.clone.default(self, memory_format=fmt)


def zero_(self: Any) -> Any:
    return aten.fill_.Scalar(self, 0)


# --- complex numbers ---------------------------------------------------------------------------


def conj(self: Any) -> Any:
    """The complex conjugate: ``self`` itself for a real tensor (as PyTorch's), and for a
    complex one an eager copy (``conj_physical``): tensorplug keeps no lazy conjugate bit, so
    ``tp.is_conj`` would always be False and writes to the result do not reach ``self``
    (PyTorch's conj is a view with the bit set)."""
    if not self.dtype.is_complex:
        return self
    return aten.conj_physical.default(self)


def resolve_conj(self: Any) -> Any:
    """``self``: tensorplug's conj is eager (no conjugate bit to resolve)."""
    return self


def resolve_neg(self: Any) -> Any:
    """``self``: tensorplug keeps no lazy negative bit."""
    return self


def real(self: Any) -> Any:
    """The real parts, a view (PyTorch's: ``view_as_real(self)[..., 0]``); ``self`` itself
    for a real tensor."""
    if not self.dtype.is_complex:
        return self
    return aten.select.int(aten.view_as_real.default(self), -1, 0)


def imag(self: Any) -> Any:
    """The imaginary parts, a view of a complex tensor."""
    if not self.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return aten.select.int(aten.view_as_real.default(self), -1, 1)
