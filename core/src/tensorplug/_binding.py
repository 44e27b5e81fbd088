"""Binding call arguments against a schema (internal; the public names are re-exported by
``tensorplug.schema``).

Binding maps ``(*args, **kwargs)`` onto a schema's arguments the way Python binds a call to a
``def`` (positional, keyword, defaults, keyword-only after ``*``) and checks each value
against the argument's type, following PyTorch's Python argument parser. A check may
*normalize* the value, and values that need no conversion come back unchanged (the same
object), so :func:`fast_types` can tell the dispatcher which values to pass straight through.

What fits each type (the "fast types" are those whose values come back as they are):

- ``Tensor``: tensors (Note [Tensor protocol] in ``_protocol``). ``Tensor?`` also ``None``.
  ``Tensor[]`` / ``Tensor?[]``: a list or tuple of tensors (``None`` elements for
  ``Tensor?[]``), returned as given. Tensor types have no fast types: the dispatcher reads
  their key sets instead.
- ``int``, ``SymInt``: ``int`` but not ``bool``; objects with ``__index__``, such as numpy
  integers, give an ``int``. Fast: ``int``.
- ``float``, ``SymFloat``: ``int`` and ``float`` as they are; ``bool`` and other real numbers
  (numpy floats and integers) give a ``float``, as PyTorch's parser does. Fast: ``int``,
  ``float``.
- ``bool``, ``SymBool``: ``bool``; ``numpy.bool_`` gives a ``bool``. Fast: ``bool``.
- ``complex``: ``int``, ``float``, ``complex`` as they are; other numbers give a ``complex``.
- ``Scalar``: ``bool``, ``int``, ``float``, ``complex`` as they are; numpy scalars give the
  matching Python number. An ``int`` beyond 64 bits raises ``OverflowError`` (Note [Scalar
  ints]), also from ``try_bind``: it fits the type, and no overload takes it. Fast: ``bool``,
  ``float``, ``complex`` (an ``int`` needs its range test).
- ``str``: ``str``. ``Any``: anything, ``None`` included (no fast types: nothing to check).
- ``T[]``, ``T[N]``: a list or tuple of ``T``, given as a tuple (a tuple that needs no
  conversion comes back as it is). ``int[N]`` and ``SymInt[N]`` also take one int ``v`` and
  give ``(v,) * N``. The length is not checked, as in PyTorch. No fast types.
- ``T?``: ``None`` or a ``T``. Fast: ``T``'s and ``NoneType``.
- Any other name: Note [Python types].

Note [Python types]
~~~~~~~~~~~~~~~~~~~
Base types that are not numbers, strings or tensors (``ScalarType``, ``Device``, ``Layout``,
``MemoryFormat``, ``Generator``, ``Dimname``, ``Stream``, ``Storage`` and any identifier a
schema uses) are checked against the classes registered for the name with
:func:`register_python_type` (``register_python_type("ScalarType", tensorplug.dtype)``), and
``Device`` also always accepts a ``str``. While no class is registered for a name, any
object except ``None`` is accepted, so the core can bind schemas before the module that owns
a type is imported, and test doubles bind without registering anything. The fast types of a
registered name are its classes (plus ``str`` for ``Device``), read at the time of the call:
a caller that caches them should do so after registration.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable
from functools import cache
from typing import Any, NoReturn, Protocol

from tensorplug import dtypes as _dtypes
from tensorplug._protocol import is_tensor
from tensorplug._types import BaseType, OptionalType, Type


class Argument(Protocol):
    """What binding reads of an argument (``tensorplug.schema.Argument``)."""

    @property
    def name(self) -> str: ...

    @property
    def type(self) -> Type: ...

    @property
    def has_default(self) -> bool: ...

    @property
    def default_value(self) -> Any: ...


class Schema(Protocol):
    """What binding reads of a schema (``tensorplug.schema.FunctionSchema``)."""

    @property
    def positional(self) -> tuple[Argument, ...]: ...

    @property
    def kwarg_only(self) -> tuple[Argument, ...]: ...

    @property
    def arguments(self) -> tuple[Argument, ...]: ...


Normalizer = Callable[[Any], Any]

_INT_NAMES = frozenset({"int", "SymInt"})
_FLOAT_NAMES = frozenset({"float", "SymFloat"})
_BOOL_NAMES = frozenset({"bool", "SymBool"})
# Base types whose values binding understands itself; every other name is a Python type.
_BUILTIN_NAMES = _INT_NAMES | _FLOAT_NAMES | _BOOL_NAMES | {"complex", "Scalar", "str", "Tensor"}

# Note [Python types]: name -> the classes registered for it.
_PYTHON_TYPES: dict[str, tuple[type[Any], ...]] = {}


class ArgumentTypeError(TypeError):
    """A value that does not fit a type: ``must be <expected>, <detail>``."""

    def __init__(self, expected: str, detail: str) -> None:
        self.expected = expected
        self.detail = detail
        super().__init__(f"expected {expected}, {detail}")


class _Reject(Exception):
    """Raised by normalizers; cheap, because ``try_bind`` turns it into ``None``."""

    def __init__(self, detail: str) -> None:
        self.detail = detail


def _reject(value: Any) -> NoReturn:
    raise _Reject(f"not {type(value).__name__}")


def register_python_type(type_name: str, *classes: type[Any]) -> None:
    """Accept instances of ``classes`` for the schema type ``type_name`` (Note [Python types]).

    Registering again adds classes to those already registered for the name.
    """
    for cls in classes:
        if not isinstance(cls, type):
            raise TypeError(f"register_python_type({type_name!r}): {cls!r} is not a class")
    if type_name in _BUILTIN_NAMES or type_name == "Any":
        raise ValueError(f"register_python_type: {type_name!r} is checked by the core itself")
    known = _PYTHON_TYPES.get(type_name, ())
    _PYTHON_TYPES[type_name] = known + tuple(c for c in classes if c not in known)


def unregister_python_type(type_name: str, *classes: type[Any]) -> None:
    """Undo :func:`register_python_type`: remove ``classes``, or all classes of the name."""
    left = tuple(c for c in _PYTHON_TYPES.get(type_name, ()) if classes and c not in classes)
    if left:
        _PYTHON_TYPES[type_name] = left
    else:
        _PYTHON_TYPES.pop(type_name, None)


def type_name(type: Type) -> str:
    """The type as schemas write it, for messages: ``Tensor``, ``int[2]``, ``Tensor?``."""
    return str(type)


def normalize_argument(value: Any, type: Type) -> Any:
    """``value`` as bound for an argument of ``type`` (the table above); raises
    :class:`ArgumentTypeError` when it does not fit."""
    try:
        return _normalizer(type)(value)
    except _Reject as e:
        raise ArgumentTypeError(str(type), e.detail) from None


def fast_types(type: Type) -> frozenset[type[Any]]:
    """Exact Python types whose values fit ``type`` as they are: for them,
    :func:`normalize_argument` returns the value itself. Empty for tensor types and lists."""

    if isinstance(type, OptionalType):
        inner = type.elem
        if isinstance(inner, BaseType) and inner.name == "Tensor":
            return frozenset()
        return fast_types(inner) | {_NoneType}
    if not isinstance(type, BaseType):
        return frozenset()
    name = type.name
    if name in _INT_NAMES:
        return frozenset()  # ints are range-checked: int64 only (IntOverflow)
    if name in _FLOAT_NAMES:
        return frozenset({int, float})
    if name in _BOOL_NAMES:
        return frozenset({bool})
    if name == "complex":
        return frozenset({int, float, complex})
    if name == "Scalar":
        return frozenset({bool, float, complex})  # ints are range-checked (Note [Scalar ints])
    if name == "str":
        return frozenset({str})
    if name in ("Tensor", "Any"):
        return frozenset()
    classes = _PYTHON_TYPES.get(name)
    if classes is None:
        return frozenset()
    return frozenset(classes) | ({str} if name == "Device" else set())


_NoneType = type(None)


def default_fits(value: Any, type: Type) -> bool:
    """Whether a default value fits ``type``, as far as binding can tell (the parser's check,
    Note [Default values] in ``schema``)."""
    if _base_name(type) not in _BUILTIN_NAMES:
        return True
    try:
        _normalizer(type)(value)
    except (_Reject, OverflowError):  # OverflowError: a Scalar int beyond 64 bits
        return False
    return True


def _base_name(type_: Type) -> str:
    """The innermost base name: ``int`` for ``int[2]?``."""

    while not isinstance(type_, BaseType):
        type_ = type_.elem
    return type_.name


# --------------------------------------------------------------------------------------------
# Normalizers: one closure per type, built once (types are hashable).


def _is_numpy_bool(value: Any) -> bool:
    cls = type(value)
    return cls.__module__ == "numpy" and cls.__name__ in ("bool_", "bool")


def _to_tensor(value: Any) -> Any:
    if is_tensor(value):
        return value
    _reject(value)


class IntOverflow(ValueError):
    """An ``int`` argument beyond int64: PyTorch's ``ValueError("Overflow when unpacking long
    long")`` (``x.split(2**64 + 1)``, ``linspace(0, 1, 2**63)``, ``sum(dim=2**70)``)."""


INT_MIN = -(2**63)
INT_MAX = 2**63 - 1


def _to_int(value: Any) -> Any:
    if type(value) is not int:
        if isinstance(value, bool) or _is_numpy_bool(value):
            _reject(value)
        try:
            value = operator.index(value)
        except TypeError:
            _reject(value)
    if not INT_MIN <= value <= INT_MAX:
        shown = str(value) if value.bit_length() < 200 else f"a {value.bit_length()}-bit integer"
        raise IntOverflow(f"Overflow when unpacking long long: {shown} is beyond int64")
    return value


def _to_float(value: Any) -> Any:
    cls = type(value)
    if cls is float or cls is int:
        return value
    if isinstance(value, numbers.Real):  # bool, numpy floats and integers, Fraction
        return float(value)
    _reject(value)


def _to_bool(value: Any) -> Any:
    if type(value) is bool:
        return value
    if _is_numpy_bool(value):
        return bool(value)
    _reject(value)


def _to_complex(value: Any) -> Any:
    cls = type(value)
    if cls is complex or cls is float or cls is int:
        return value
    if isinstance(value, numbers.Number) and not _is_numpy_bool(value):
        return complex(value)  # type: ignore[call-overload]
    _reject(value)


def _to_scalar(value: Any) -> Any:
    cls = type(value)
    if cls is int:
        if SCALAR_INT_MIN <= value <= SCALAR_INT_MAX:
            return value
        raise OverflowError(scalar_overflow(value))
    if cls is bool or cls is float or cls is complex:
        return value
    if _is_numpy_bool(value):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, numbers.Complex):
        return complex(value)
    _reject(value)


# Note [Scalar ints]: PyTorch converts a Python int given for a Scalar to int64 (or uint64)
# when it binds the call, and raises OverflowError ("int too big to convert") beyond that, even
# for a float tensor; kernels then wrap it into the result dtype or check that it fits, per op.
SCALAR_INT_MIN = -(2**63)
SCALAR_INT_MAX = 2**64 - 1


def scalar_overflow(value: int) -> str:
    """Why ``value`` is no Scalar (a number of thousands of digits is not printed whole)."""
    shown = str(value) if value.bit_length() < 200 else f"a {value.bit_length()}-bit integer"
    return (
        f"int too big to convert: {shown} is beyond the 64-bit integers a Scalar holds "
        "(-2**63 to 2**64 - 1)"
    )


def _to_str(value: Any) -> Any:
    if type(value) is str:
        return value
    if isinstance(value, str):
        return str(value)
    _reject(value)


def _to_any(value: Any) -> Any:
    return value


def _python_type(name: str) -> Normalizer:
    def check(value: Any) -> Any:
        classes = _PYTHON_TYPES.get(name)
        if classes is None:
            if value is None:
                _reject(value)
            return value
        if isinstance(value, classes) or (name == "Device" and isinstance(value, str)):
            return value
        if name == "ScalarType" and value in _PYTHON_DTYPES:  # dtype=float, as PyTorch
            return _PYTHON_DTYPES[value]
        _reject(value)

    return check


# the Python types PyTorch takes for a dtype (``tp.zeros(2, dtype=float)`` is float64)
_PYTHON_DTYPES: dict[Any, Any] = {
    float: _dtypes.float64, int: _dtypes.int64, bool: _dtypes.bool, complex: _dtypes.complex128,
}  # fmt: skip

_BASE_NORMALIZERS: dict[str, Normalizer] = {
    "Tensor": _to_tensor,
    "int": _to_int,
    "SymInt": _to_int,
    "float": _to_float,
    "SymFloat": _to_float,
    "bool": _to_bool,
    "SymBool": _to_bool,
    "complex": _to_complex,
    "Scalar": _to_scalar,
    "str": _to_str,
    "Any": _to_any,
}


@cache
def _normalizer(type_: Type) -> Normalizer:

    if isinstance(type_, BaseType):
        return _BASE_NORMALIZERS.get(type_.name) or _python_type(type_.name)
    if isinstance(type_, OptionalType):
        inner = _normalizer(type_.elem)
        return lambda value: None if value is None else inner(value)
    return _list_normalizer(_normalizer(type_.elem), type_.size, type_.elem)


def _list_normalizer(elem: Normalizer, size: int | None, elem_type: Type) -> Normalizer:
    # Tensor lists go to kernels as given; other lists become tuples (immutable, hashable).
    keep_as_given = _base_name(elem_type) == "Tensor"
    # int[N] takes one int for N of them (``stride=1``), as PyTorch's IntArrayRef does.
    repeat = size if size is not None and str(elem_type) in _INT_NAMES else 0

    def normalize(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            out = []
            for i, item in enumerate(value):
                try:
                    out.append(elem(item))
                except _Reject:
                    raise _Reject(
                        f"but found element of type {type(item).__name__} at pos {i}"
                    ) from None
                except IntOverflow as e:  # PyTorch: a TypeError for a list's element
                    raise _Reject(
                        f'failed to unpack the object at pos {i} with error "{e}"'
                    ) from None
            if keep_as_given:
                return value
            if type(value) is tuple and all(a is b for a, b in zip(out, value, strict=True)):
                return value
            return tuple(out)
        if repeat:
            try:
                return (elem(value),) * repeat
            except _Reject:
                pass
        _reject(value)

    return normalize


# --------------------------------------------------------------------------------------------
# Binding.


class _Slot:
    """What binding needs to know about one argument, precomputed."""

    __slots__ = ("name", "position", "expected", "normalize", "fast", "required", "default")

    def __init__(self, argument: Argument, position: int | None) -> None:
        self.name = argument.name
        self.position = position  # 1-based, None for keyword-only arguments
        self.expected = str(argument.type)
        self.normalize = _normalizer(argument.type)
        # Note [Python types]: registrations may change after this is built, so only the
        # core's own types get a fast path here.
        builtin = _base_name(argument.type) in _BUILTIN_NAMES
        self.fast = fast_types(argument.type) if builtin else frozenset()
        self.required = not argument.has_default
        self.default: Any = None
        if argument.has_default:
            # Note [Default values] in schema: normalized where the type allows, else raw.
            try:
                self.default = normalize_argument(argument.default_value, argument.type)
            except ArgumentTypeError:
                self.default = argument.default_value


class _Mismatch(Exception):
    """Why a call does not bind; formatted into a message only by ``bind``."""

    def __init__(self, kind: str, slot: _Slot | None = None, value: Any = None) -> None:
        self.kind = kind
        self.slot = slot
        self.value = value


class Binder:
    """Binds calls against one schema (``FunctionSchema.bind``)."""

    __slots__ = ("positional", "kwarg_only", "names", "op_name")

    def __init__(self, schema: Schema, op_name: str) -> None:
        self.positional = tuple(_Slot(a, i + 1) for i, a in enumerate(schema.positional))
        self.kwarg_only = tuple(_Slot(a, None) for a in schema.kwarg_only)
        self.names = frozenset(a.name for a in schema.arguments)
        self.op_name = op_name

    def bind(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], op_name: str | None = None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        try:
            return self._bind(args, kwargs)
        except _Mismatch as e:
            error = {"overflow": OverflowError, "int_overflow": ValueError}.get(e.kind, TypeError)
            raise error(self._message(e, args, op_name or self.op_name)) from None

    def try_bind(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        """``None`` where the call does not fit; a Scalar int out of range raises."""
        try:
            return self._bind(args, kwargs)
        except _Mismatch as e:
            if e.kind == "overflow":
                raise OverflowError(self._message(e, args, self.op_name)) from None
            if e.kind == "int_overflow":
                raise ValueError(self._message(e, args, self.op_name)) from None
            return None

    def _bind(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        # Python's order of complaints: too many positional, unexpected keyword; then,
        # argument by argument in schema order: multiple values, missing, wrong type.
        nargs = len(args)
        if nargs > len(self.positional):
            raise _Mismatch("too_many")
        if kwargs:
            for key in kwargs:
                if key not in self.names:
                    raise _Mismatch("unexpected", value=key)
        value = self._value
        values = tuple(
            value(slot, args[i] if i < nargs else _MISSING, kwargs)
            for i, slot in enumerate(self.positional)
        )
        return values, {slot.name: value(slot, _MISSING, kwargs) for slot in self.kwarg_only}

    @staticmethod
    def _value(slot: _Slot, value: Any, kwargs: dict[str, Any]) -> Any:
        if value is not _MISSING:
            if kwargs and slot.name in kwargs:
                raise _Mismatch("multiple", slot)
        elif kwargs and slot.name in kwargs:
            value = kwargs[slot.name]
        elif slot.required:
            raise _Mismatch("missing", slot)
        else:
            return slot.default
        if type(value) in slot.fast:
            return value
        try:
            return slot.normalize(value)
        except _Reject as e:
            raise _Mismatch("type", slot, e) from None
        except IntOverflow as e:  # not a mismatch, an error
            raise _Mismatch("int_overflow", slot, e) from None
        except OverflowError as e:  # Note [Scalar ints]: not a mismatch, an error
            raise _Mismatch("overflow", slot, e) from None

    def _message(self, e: _Mismatch, args: tuple[Any, ...], op: str) -> str:
        slot = e.slot
        if e.kind == "too_many":
            n, given = len(self.positional), len(args)
            return (
                f"{op}() takes {n} positional argument{'' if n == 1 else 's'} "
                f"but {given} {'was' if given == 1 else 'were'} given"
            )
        if e.kind == "unexpected":
            return f"{op}() got an unexpected keyword argument '{e.value}'"
        assert slot is not None
        if e.kind == "multiple":
            return f"{op}() got multiple values for argument '{slot.name}'"
        if e.kind == "missing":
            return f"{op}() missing required argument '{slot.name}' ({slot.expected})"
        where = "" if slot.position is None else f" (position {slot.position})"
        if e.kind in ("overflow", "int_overflow"):
            return f"{op}(): argument '{slot.name}'{where}: {e.value}"
        return f"{op}(): argument '{slot.name}'{where} must be {slot.expected}, {e.value.detail}"


_MISSING: Any = object()
