"""The dtype rules of pointwise kernels: what dtype an op computes in for its operands'
promoted dtype (``same``, ``to_float``, ``floating_only``, ...), and the operand checks the
builders of ``_elementwise`` share (``check_alpha``, ``shape_error``). A rule either returns the
compute dtype or raises PyTorch's "not implemented for" error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import dtypes as _dt
from ..._op_errors import OpNotImplementedError
from ...tensor import Tensor
from .._kit import OpError, Scalar, check_broadcast, convert_error, torch_name

Rule = Callable[[_dt.dtype], _dt.dtype]
Check = Callable[[Tensor, Any], None]  # refuses a pair of operands (binary check=)


def same(d: _dt.dtype) -> _dt.dtype:
    return d


def to_float(d: _dt.dtype) -> _dt.dtype:
    """Integer and bool inputs of floating functions give the default dtype (PyTorch)."""
    return d if d.kind in "fc" else _dt.get_default_dtype()


def to_bool(d: _dt.dtype) -> _dt.dtype:
    return _dt.bool


def shape_error(qual: str, e: BaseException, *operands: Any, key: str = "") -> BaseException:
    """PyTorch's broadcasting message when the shapes are the cause, else the usual one."""
    shapes = [tuple(x._data.shape) for x in operands if isinstance(x, Tensor)]
    if len(shapes) > 1:
        try:
            check_broadcast(*shapes)
        except OpError as oe:
            err = RuntimeError(f"{qual}: {oe}")
            err.__cause__ = e
            return err
    return convert_error(qual, e, key)


def keeps(rule: Rule, d: _dt.dtype) -> bool:
    """Whether ``rule`` maps ``d`` to itself (a rule that rejects ``d`` does not)."""
    try:
        return rule(d) is d
    except OpError:
        return False


def check_alpha(alpha: Scalar, d: _dt.dtype) -> None:
    if isinstance(alpha, bool):
        if d is not _dt.bool:
            raise OpError("Boolean alpha only supported for Boolean results.")
    elif d.kind in "bui" and isinstance(alpha, (float, complex)):
        raise OpError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    elif d.kind == "f" and isinstance(alpha, complex):
        raise OpError("For non-complex input tensors, argument alpha must not be a complex number.")


def floating_only(name: str) -> Rule:
    def rule(d: _dt.dtype) -> _dt.dtype:
        if d.kind not in "fc":
            raise OpError(f"\"{name}_cpu\" not implemented for '{torch_name(d)}'")
        return d

    return rule


def rounding_rule(name: str, complex_message: str) -> Rule:
    """floor / ceil / trunc / round: every real dtype but bool (integers keep their dtype)."""

    def rule(d: _dt.dtype) -> _dt.dtype:
        if d.kind == "c" and complex_message:
            raise OpError(complex_message)
        if d.kind in "bc":
            raise OpError(f"\"{name}_vml_cpu\" not implemented for '{torch_name(d)}'")
        return d

    return rule


def real_floating_only(name: str) -> Rule:
    def rule(d: _dt.dtype) -> _dt.dtype:
        if d.kind != "f":
            raise OpError(f"\"{name}_cpu\" not implemented for '{torch_name(d)}'")
        return d

    return rule


def real_no_bool(kernel_name: str) -> Rule:
    """Integers and floating types keep their dtype; bool and complex are refused."""

    def rule(d: _dt.dtype) -> _dt.dtype:
        if d.kind in "bc":
            raise OpError(f"\"{kernel_name}\" not implemented for '{torch_name(d)}'")
        return d

    return rule


def real_no_complex(kernel_name: str) -> Rule:
    """Every real dtype (bool included) keeps its dtype; complex ones are refused."""

    def rule(d: _dt.dtype) -> _dt.dtype:
        if d.kind == "c":
            raise OpError(f"\"{kernel_name}\" not implemented for '{torch_name(d)}'")
        return d

    return rule


def real_float(kernel_name: str) -> Rule:
    """Integer and bool inputs give the default dtype; complex ones are refused."""

    def rule(d: _dt.dtype) -> _dt.dtype:
        if d.kind == "c":
            raise OpError(f"\"{kernel_name}\" not implemented for '{torch_name(d)}'")
        return to_float(d)

    return rule


def no_bool_pow(d: _dt.dtype) -> _dt.dtype:
    if d is _dt.bool:
        raise OpError("\"pow\" not implemented for 'Bool'")
    return d


def no_bool_abs(d: _dt.dtype) -> _dt.dtype:
    if d is _dt.bool:
        raise OpError("\"abs_cpu\" not implemented for 'Bool'")
    return d


def bool_to_long(d: _dt.dtype) -> _dt.dtype:
    return _dt.int64 if d is _dt.bool else d


def integral_only(name: str) -> Rule:
    def rule(d: _dt.dtype) -> _dt.dtype:
        if d.kind not in "bui":
            raise OpNotImplementedError(f"\"{name}_cpu\" not implemented for '{torch_name(d)}'")
        return d

    return rule
