"""Python operators, indexing and conversions of Tensor (internal).

Installed on :class:`~tensorplug.tensor.Tensor` after the standard operators are defined
(``_api.install``): each Python operator calls one operator overload directly, chosen by the
type of the other operand, so ``a + b`` costs no overload resolution.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable
from typing import Any

from .. import dtypes as _dtypes
from .. import overrides
from ..ops import ops
from ..tensor import Tensor
from .construct import _as_subclass, _converter, _cuda, _new_factory, _new_tensor, _tensor_new, to
from .indexing import _iter, getitem, setitem
from .interop import dlpack, dlpack_device
from .python_args import _scalar_tensor
from .values import _array, _index, _one_value, item, numpy, tolist

_SCALARS = frozenset({builtins.int, builtins.float, builtins.bool, builtins.complex})
# indices and values that never take part in __tensorplug_function__
_PLAIN = _SCALARS | {Tensor, slice, type(None), type(Ellipsis)}


# Note [Operators and the protocol]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A Python operator whose operand takes part in __tensorplug_function__ (a tensor-like, or a
# Tensor subclass that defines it) hands the call over with ``func`` the operator method itself
# (``Tensor.__add__``) and ``args`` as Python gave them (``(self, other)``), so a handler that
# unwraps its arguments and calls ``func`` again gets the plain result. When every handler
# declines, a binary operator returns NotImplemented (Python then tries the reflected one) and
# a unary one raises TypeError. The hot path pays one ``type(self) is Tensor`` test for this.


def _protocol(func: Callable[..., Any], *args: Any) -> Any:
    """The protocol's answer for a binary operator, or NotImplemented."""
    return overrides._offer(func, overrides._candidates(args), args, {})


def _takes_part(*values: Any) -> bool:
    # a loop, not any(genexpr): Tensor subclasses (nn.Parameter, wrappers) pass here per operator
    for v in values:
        t = type(v)
        # overrides._takes_part_type, inline: a parameter's class attribute is found at once
        if (
            t is not Tensor
            and getattr(t, "__tensorplug_function__", _DISABLED) is not _DISABLED
            and not overrides._state.disabled
        ):
            return True
    return False


_DISABLED = overrides.disabled_tensorplug_function_impl


# Operators call ``op.__call__(...)`` rather than ``op(...)``: calling the instance goes through
# the type's call slot, which builds an argument tuple, while the method call runs the generated
# function directly (one lookup per call, so tracing's swap of ``__call__`` is still seen).


def _binary(tensor_op: Any, scalar_op: Any) -> Callable[[Tensor, Any], Any]:
    def op(self: Tensor, other: Any) -> Any:
        t = type(other)
        if type(self) is Tensor:
            if t is Tensor:
                return tensor_op.__call__(self, other)
            if t in _SCALARS:
                return scalar_op.__call__(self, other)
        if _takes_part(self, other):  # Note [Operators and the protocol]
            return _protocol(op, self, other)
        if isinstance(other, Tensor):
            return tensor_op(self, other)
        if t in _SCALARS:
            return scalar_op(self, other)
        if hasattr(other, "__index__") or hasattr(other, "__float__"):
            try:
                return scalar_op(self, other)
            except TypeError:
                pass
        return NotImplemented

    return op


def _reflected(tensor_op: Any, scalar_op: Any | None) -> Callable[[Tensor, Any], Any]:
    """``other <op> self`` where ``other`` is not a Tensor."""

    def op(self: Tensor, other: Any) -> Any:
        t = type(other)
        if (type(self) is not Tensor or t not in _PLAIN) and _takes_part(self, other):
            return _protocol(op, self, other)  # Note [Operators and the protocol]
        if t in _SCALARS:
            if scalar_op is not None:
                return scalar_op(self, other)
            return tensor_op(_scalar_tensor(other, self), self)
        if isinstance(other, Tensor):
            return tensor_op(other, self)
        return NotImplemented

    return op


def _unary(fn: Callable[[Tensor], Any]) -> Callable[[Tensor], Any]:
    def op(self: Tensor) -> Any:
        if type(self) is not Tensor and _takes_part(self):  # Note [Operators and the protocol]
            return overrides.handle_tensorplug_function(op, (self,), self)
        return fn(self)

    op.__name__ = op.__qualname__ = fn.__name__
    return op


def _inplace(tensor_op: Any, scalar_op: Any) -> Callable[[Tensor, Any], Any]:
    def op(self: Tensor, other: Any) -> Any:
        if (type(self) is not Tensor or type(other) not in _PLAIN) and _takes_part(self, other):
            return _protocol(op, self, other)  # Note [Operators and the protocol]
        if isinstance(other, Tensor):
            return tensor_op(self, other)
        if type(other) in _SCALARS:
            return scalar_op(self, other)
        return NotImplemented

    return op


def install() -> None:
    a = ops.aten
    T: Any = Tensor  # methods are attached below (typed as Any: mypy cannot see setattr)
    T.__new__ = _tensor_new  # type.__setattr__ updates the constructor slot
    T.as_subclass = _as_subclass
    T.__tensorplug_function__ = classmethod(overrides.default_tensorplug_function)
    for name, top, sop in (
        ("add", a.add.Tensor, a.add.Scalar),
        ("sub", a.sub.Tensor, a.sub.Scalar),
        ("mul", a.mul.Tensor, a.mul.Scalar),
        ("truediv", a.div.Tensor, a.div.Scalar),
        ("floordiv", a.floor_divide.default, a.floor_divide.Scalar),
        ("mod", a.remainder.Tensor, a.remainder.Scalar),
        ("pow", a.pow.Tensor_Tensor, a.pow.Tensor_Scalar),
        ("eq", a.eq.Tensor, a.eq.Scalar),
        ("ne", a.ne.Tensor, a.ne.Scalar),
        ("lt", a.lt.Tensor, a.lt.Scalar),
        ("le", a.le.Tensor, a.le.Scalar),
        ("gt", a.gt.Tensor, a.gt.Scalar),
        ("ge", a.ge.Tensor, a.ge.Scalar),
    ):
        _install(f"__{name}__", _binary(top, sop))
    for name, fn in (
        ("and", a.bitwise_and.Tensor),
        ("or", a.bitwise_or.Tensor),
        ("xor", a.bitwise_xor.Tensor),
    ):
        _install(f"__{name}__", _binary_tensor_only(fn))
        _install(f"__r{name}__", _reflected(fn, None))
    _install("__radd__", _reflected(a.add.Tensor, a.add.Scalar))
    _install("__rmul__", _reflected(a.mul.Tensor, a.mul.Scalar))
    _install("__rsub__", _reflected(a.sub.Tensor, a.rsub.Scalar))
    _install("__rtruediv__", _reflected(a.div.Tensor, a.rdiv.Scalar))
    _install("__rfloordiv__", _reflected(a.floor_divide.default, None))
    _install("__rmod__", _reflected(a.remainder.Tensor, None))
    _install("__rpow__", _reflected(a.pow.Tensor_Tensor, lambda s, o: a.pow.Scalar(o, s)))
    # the shifts (PyTorch's __lshift__ / __rshift__ run the kernels of its bitwise shifts)
    for name, op in (("lshift", a.bitwise_left_shift), ("rshift", a.bitwise_right_shift)):
        _install(f"__{name}__", _binary(op.Tensor, op.Tensor_Scalar))
        _install(f"__r{name}__", _reflected(op.Tensor, lambda s, o, op=op: op.Scalar_Tensor(o, s)))
    _install("__matmul__", _binary_tensor_only(a.matmul.default))
    _install("__rmatmul__", _reflected(a.matmul.default, None))
    _install("__iadd__", _inplace(a.add_.Tensor, a.add_.Scalar))
    _install("__isub__", _inplace(a.sub_.Tensor, a.sub_.Scalar))
    _install("__imul__", _inplace(a.mul_.Tensor, a.mul_.Scalar))
    _install("__itruediv__", _inplace(a.div_.Tensor, a.div_.Scalar))
    _install(
        "__ilshift__", _inplace(a.bitwise_left_shift_.Tensor, a.bitwise_left_shift_.Tensor_Scalar)
    )
    _install(
        "__irshift__", _inplace(a.bitwise_right_shift_.Tensor, a.bitwise_right_shift_.Tensor_Scalar)
    )

    def __neg__(self: Tensor) -> Any:
        return a.neg.default(self)

    def __pos__(self: Tensor) -> Any:
        return self

    def __abs__(self: Tensor) -> Any:
        return a.abs.default(self)

    for unary in (__neg__, __pos__, __abs__, _invert):
        _install(f"__{unary.__name__.strip('_')}__", _unary(unary))
    T.__hash__ = object.__hash__
    overrides._ignored.add(T.as_subclass)  # takes no tensor-like but self, as in PyTorch
    _install("__getitem__", _getitem)
    _install("__setitem__", _setitem)
    T.__iter__ = _iter
    T.__bool__ = lambda self: builtins.bool(_one_value(self, "Boolean"))
    T.__float__ = lambda self: builtins.float(_one_value(self, "float"))
    T.__int__ = lambda self: builtins.int(_one_value(self, "int"))
    T.__complex__ = lambda self: builtins.complex(_one_value(self, "complex"))
    T.__index__ = _index
    T.__array__ = _array
    T.item = item
    T.tolist = tolist
    T.numpy = numpy
    T.__dlpack__ = dlpack  # Note [Memory sharing] in _opset/interop.py
    T.__dlpack_device__ = dlpack_device
    T.to = to
    T.cpu = lambda self: to(self, "cpu")
    T.cuda = _cuda
    T.T = property(lambda self: a.permute.default(self, list(range(self.ndim - 1, -1, -1))))
    T.mT = property(lambda self: a.transpose.int(self, -2, -1))
    # the conjugate transposes (conj is eager here: a copy for complex tensors, self for real)
    T.mH = property(lambda self: a.conj.default(a.transpose.int(self, -2, -1)))
    T.adjoint = lambda self: a.conj.default(a.transpose.int(self, -2, -1))
    T.H = property(_conj_t)
    # complex numbers: x.real / x.imag are views (settable: x.real = v writes through them)
    T.real = property(lambda self: a.real.default(self), _set_part(a.real.default))
    T.imag = property(lambda self: a.imag.default(self), _set_part(a.imag.default))
    T.is_conj = lambda self: False  # conj is eager: no conjugate bit (composites/pointwise.py)
    T.is_neg = lambda self: False
    T.type_as = lambda self, other: to(self, other.dtype)
    for name, dt in (
        ("float", _dtypes.float32),
        ("double", _dtypes.float64),
        ("half", _dtypes.float16),
        ("bfloat16", _dtypes.bfloat16),
        ("long", _dtypes.int64),
        ("int", _dtypes.int32),
        ("short", _dtypes.int16),
        ("bool", _dtypes.bool),
    ):
        setattr(T, name, _converter(dt))
    for name in ("zeros", "ones", "empty", "full"):
        setattr(T, f"new_{name}", _new_factory(name))
    T.new_tensor = _new_tensor


def _conj_t(self: Tensor) -> Any:
    """``Tensor.H``: the conjugate transpose of a matrix (PyTorch's, for 0-D and 2-D only)."""
    a = ops.aten
    if self.ndim not in (0, 2):
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
            " Use tensor.mH for the conjugate transpose of the last two dims of a batch"
        )
    return a.conj.default(self if self.ndim == 0 else a.transpose.int(self, 0, 1))


def _set_part(part: Any) -> Callable[[Tensor, Any], None]:
    """The setter of ``Tensor.real`` / ``Tensor.imag``: writes ``value`` through the view."""

    def setter(self: Tensor, value: Any) -> None:
        view = part(self)
        if isinstance(value, Tensor):
            view.copy_(value)
        else:
            view.fill_(value)

    return setter


def _binary_tensor_only(fn: Any) -> Callable[[Tensor, Any], Any]:
    def op(self: Tensor, other: Any) -> Any:
        if (type(self) is not Tensor or type(other) not in _PLAIN) and _takes_part(self, other):
            return _protocol(op, self, other)  # Note [Operators and the protocol]
        if isinstance(other, Tensor):
            return fn(self, other)
        if type(other) in _SCALARS:
            return fn(self, _scalar_tensor(other, self))
        return NotImplemented

    return op


# ``q[i]`` and ``q[i] = v``: the protocol sees the tensor, the index and the value (Note
# [Operators and the protocol]).


def _getitem(self: Tensor, index: Any) -> Any:
    if type(self) is not Tensor or not (type(index) in _PLAIN or _plain_index(index)):
        if overrides.has_tensorplug_function((self, index)):
            return overrides.handle_tensorplug_function(_getitem, (self, index), self, index)
    return getitem(self, index)


def _setitem(self: Tensor, index: Any, value: Any) -> Any:
    if type(self) is not Tensor or not (_plain_index(index) and type(value) in _PLAIN):
        if overrides.has_tensorplug_function((self, index, value)):
            args = (self, index, value)
            return overrides.handle_tensorplug_function(_setitem, args, *args)
    return setitem(self, index, value)


def _plain_index(index: Any) -> bool:
    t = type(index)
    return t in _PLAIN or (t is tuple and all(type(i) in _PLAIN for i in index))


def _install(name: str, fn: Callable[..., Any]) -> None:
    """``Tensor.<name> = fn``, listed among the functions the protocol covers."""
    fn.__name__ = name
    fn.__qualname__ = f"Tensor.{name}"
    setattr(Tensor, name, fn)
    overrides._overridable.setdefault("Tensor", []).append(fn)
    overrides._signatures[fn] = inspect.signature(fn)


def _invert(self: Tensor) -> Any:
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError(
            "aten::bitwise_not.default: ~ (bitwise_not) is only supported for integer and "
            f"boolean tensors, got {self.dtype}"
        )
    return ops.aten.bitwise_not.default(self)
