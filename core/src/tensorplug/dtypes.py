"""Data types and PyTorch's type-promotion rules (DESIGN §6).

A :class:`dtype` is an immutable singleton describing the element type of a tensor. There are
exactly twelve: ``bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
complex64, complex128``, plus PyTorch's aliases (``half, float, double, short, int, long, cfloat,
cdouble``). Type promotion is computed here, in the core, so that every backend agrees on the
dtype of a result (Note [Type promotion]).

This module deliberately shadows the builtins ``bool``, ``int`` and ``float`` with dtype
constants, the way ``torch.bool`` does; inside it, the Python types are always spelled
``builtins.bool`` and so on.

Usage::

    from tensorplug import dtypes

    dtypes.promote_types(dtypes.uint8, dtypes.int8)       # tensorplug.int16
    dtypes.result_type(int32_tensor, 5.5)                 # tensorplug.float32 (the default)
    dtypes.can_cast(dtypes.float32, dtypes.int64)         # False
    dtypes.from_name("double")                            # tensorplug.float64
    dtypes.finfo(dtypes.float16).eps                      # 0.0009765625
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any, NoReturn

__all__ = [
    "bfloat16",
    "bool",
    "can_cast",
    "cdouble",
    "cfloat",
    "complex64",
    "complex128",
    "double",
    "dtype",
    "finfo",
    "FloatInfo",
    "float",
    "float16",
    "float32",
    "float64",
    "from_name",
    "get_default_dtype",
    "half",
    "iinfo",
    "IntInfo",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_complex",
    "is_floating_point",
    "long",
    "promote_types",
    "result_type",
    "set_default_dtype",
    "short",
    "uint8",
    "all_dtypes",
]

# Kinds in promotion order: a kind later in this string always wins over an earlier one.
_KINDS = "buifc"


class dtype:
    """The element type of a tensor: an immutable, hashable, picklable singleton.

    Instances are created only by this module; compare them with ``is`` or ``==``.
    """

    __slots__ = ("name", "itemsize", "kind")

    name: str
    itemsize: builtins.int
    kind: str  # "b" bool, "u" unsigned, "i" signed integer, "f" floating, "c" complex

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Only ``_make`` creates dtypes (it bypasses ``__init__``), so they stay singletons.
        raise TypeError(
            "cannot create tensorplug.dtype instances; use a constant such as "
            "tensorplug.float32 or tensorplug.dtypes.from_name('float32')"
        )

    @classmethod
    def _make(cls, name: str, itemsize: builtins.int, kind: str) -> dtype:
        self = object.__new__(cls)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "itemsize", itemsize)
        object.__setattr__(self, "kind", kind)
        return self

    def __setattr__(self, key: str, value: object) -> NoReturn:
        raise AttributeError(f"tensorplug.dtype is immutable; cannot set {key!r}")

    def __delattr__(self, key: str) -> NoReturn:
        raise AttributeError(f"tensorplug.dtype is immutable; cannot delete {key!r}")

    @property
    def is_floating_point(self) -> builtins.bool:
        """True for float16, bfloat16, float32 and float64 (not complex)."""
        return self.kind == "f"

    @property
    def is_complex(self) -> builtins.bool:
        return self.kind == "c"

    @property
    def is_signed(self) -> builtins.bool:
        """False only for bool and uint8, as in PyTorch (floats and complex are signed)."""
        return self.kind not in ("b", "u")

    def to_real(self) -> dtype:
        """The real counterpart of a complex dtype; any other dtype is returned unchanged."""
        return _TO_REAL.get(self, self)

    def to_complex(self) -> dtype:
        """The complex counterpart of a floating or complex dtype.

        float16 maps to complex64 because there is no complex32 here (Note [No complex32]).
        Integer and bool dtypes have no complex counterpart and raise ``TypeError``.
        """
        if self.kind == "c":
            return self
        if self.kind == "f":
            return complex128 if self is float64 else complex64
        raise TypeError(
            f"{self!r} has no complex counterpart; only floating-point and complex dtypes do"
        )

    def __repr__(self) -> str:
        return f"tensorplug.{self.name}"

    def __str__(self) -> str:
        return self.__repr__()

    def __reduce__(self) -> str:
        # Pickle by reference to the module-level constant, so unpickling (and copy/deepcopy)
        # gives back the singleton itself.
        return self.name


_BOOL = dtype._make("bool", 1, "b")
_UINT8 = dtype._make("uint8", 1, "u")
_INT8 = dtype._make("int8", 1, "i")
_INT16 = dtype._make("int16", 2, "i")
_INT32 = dtype._make("int32", 4, "i")
_INT64 = dtype._make("int64", 8, "i")
_FLOAT16 = dtype._make("float16", 2, "f")
_BFLOAT16 = dtype._make("bfloat16", 2, "f")
_FLOAT32 = dtype._make("float32", 4, "f")
_FLOAT64 = dtype._make("float64", 8, "f")
_COMPLEX64 = dtype._make("complex64", 8, "c")
_COMPLEX128 = dtype._make("complex128", 16, "c")

_ALL: tuple[dtype, ...] = (
    _BOOL,
    _UINT8,
    _INT8,
    _INT16,
    _INT32,
    _INT64,
    _FLOAT16,
    _BFLOAT16,
    _FLOAT32,
    _FLOAT64,
    _COMPLEX64,
    _COMPLEX128,
)

# The public constants. ``bool``, ``int`` and ``float`` shadow the builtins from here on.
bool = _BOOL
uint8 = _UINT8
int8 = _INT8
int16 = _INT16
int32 = _INT32
int64 = _INT64
float16 = _FLOAT16
bfloat16 = _BFLOAT16
float32 = _FLOAT32
float64 = _FLOAT64
complex64 = _COMPLEX64
complex128 = _COMPLEX128

# PyTorch's aliases.
half = _FLOAT16
float = _FLOAT32
double = _FLOAT64
short = _INT16
int = _INT32
long = _INT64
cfloat = _COMPLEX64
cdouble = _COMPLEX128

_ALIASES: dict[str, dtype] = {
    "half": half,
    "float": float,
    "double": double,
    "short": short,
    "int": int,
    "long": long,
    "cfloat": cfloat,
    "cdouble": cdouble,
}
_BY_NAME: dict[str, dtype] = {d.name: d for d in _ALL} | _ALIASES

_TO_REAL: dict[dtype, dtype] = {_COMPLEX64: _FLOAT32, _COMPLEX128: _FLOAT64}


def all_dtypes() -> tuple[dtype, ...]:
    """Every dtype, in the canonical order ``bool, uint8, int8, ..., complex128``."""
    return _ALL


def from_name(name: str) -> dtype:
    """The dtype called ``name``: a canonical name ("float32") or a PyTorch alias ("double")."""
    found = _BY_NAME.get(name) if isinstance(name, str) else None
    if found is None:
        known = ", ".join(d.name for d in _ALL)
        aliases = ", ".join(_ALIASES)
        raise TypeError(
            f"Unknown dtype {name!r}. Known dtypes: {known} (aliases: {aliases}). "
            "Pass one of these names."
        )
    return found


def is_floating_point(d: dtype) -> builtins.bool:
    """True for float16, bfloat16, float32 and float64."""
    return d.kind == "f"


def is_complex(d: dtype) -> builtins.bool:
    return d.kind == "c"


# --------------------------------------------------------------------------------------------
# Note [Type promotion]
# ~~~~~~~~~~~~~~~~~~~~~
# ``promote_types`` is PyTorch's pairwise table (torch.promote_types); the test suite holds the
# full 12x12 table as a literal, checked against torch 2.13. It follows from four rules:
#   1. bool promotes to the other dtype.
#   2. Two integers give the smallest signed integer holding both ranges; uint8 with a signed
#      integer therefore needs one size more than uint8 (uint8 + int8 -> int16).
#   3. An integer with a floating or complex dtype gives that floating or complex dtype, however
#      small (int64 + float16 -> float16).
#   4. Floats give the larger; float16 + bfloat16 give float32, the smallest holding both. A
#      float with a complex gives the complex dtype whose parts are at least that float
#      (float64 + complex64 -> complex128).
#
# ``result_type`` then applies PyTorch's categories to a mix of operands: tensors with
# dimensions, zero-dimensional tensors, and Python scalars. Each category is first promoted on
# its own; a lower category only matters when its kind (bool < integer < floating < complex)
# is higher than that of the category above it.
#
# Note [No complex32]
# ~~~~~~~~~~~~~~~~~~~
# PyTorch has complex32 (chalf) as the counterpart of float16. tensorplug has no complex32, so
# wherever PyTorch would produce complex32 (float16.to_complex(), a float16 tensor with a
# Python complex, a float16 default dtype with a Python complex) tensorplug produces complex64.
# --------------------------------------------------------------------------------------------


def _promote_rule(a: dtype, b: dtype) -> dtype:
    """Rules 1-4 of Note [Type promotion] for one pair."""
    if a is b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    rank_a, rank_b = _KINDS.index(a.kind), _KINDS.index(b.kind)
    if rank_a < rank_b:
        a, b = b, a  # from here on ``a`` has the higher kind
    if a.kind in "ui":
        if a.kind == b.kind:
            return a if a.itemsize >= b.itemsize else b
        # One uint8 and one signed integer: the signed one must be wider than a byte.
        signed = a if a.kind == "i" else b
        return signed if signed.itemsize > 1 else _INT16
    if b.kind in "ui":
        return a
    if a.kind == "f":  # two different floats
        if a.itemsize == b.itemsize:  # float16 and bfloat16
            return _FLOAT32
        return a if a.itemsize > b.itemsize else b
    # ``a`` is complex, ``b`` is floating or complex.
    return _COMPLEX128 if _COMPLEX128 in (a, b) or b is _FLOAT64 else _COMPLEX64


_PROMOTE: dict[tuple[dtype, dtype], dtype] = {
    (a, b): _promote_rule(a, b) for a in _ALL for b in _ALL
}


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype to which both ``a`` and ``b`` can be promoted (torch.promote_types)."""
    try:
        return _PROMOTE[a, b]
    except KeyError:
        bad = a if not isinstance(a, dtype) else b
        raise TypeError(f"promote_types() expects two tensorplug dtypes, got {bad!r}") from None


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """Whether a cast from ``from_`` to ``to`` is allowed by the promotion rules (torch.can_cast).

    Casting never goes down a kind: no complex to non-complex, no floating to integer or bool,
    and nothing but bool to bool. Within a kind any size is allowed (int64 -> uint8 is fine).
    """
    if from_.kind == "c" and to.kind != "c":
        return False
    if from_.kind == "f" and to.kind in "bui":
        return False
    return not (from_.kind != "b" and to.kind == "b")


# --------------------------------------------------------------------------------------------
# Default dtype
# --------------------------------------------------------------------------------------------

_default_dtype: dtype = _FLOAT32


def get_default_dtype() -> dtype:
    """The dtype of Python floats in factories and type promotion (initially float32)."""
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    """Set the default floating-point dtype, process-wide (as torch.set_default_dtype)."""
    global _default_dtype
    if not isinstance(d, dtype) or d.kind != "f":
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype = d


def _default_complex_dtype() -> dtype:
    """Complex counterpart of the default dtype (complex64 for float16, Note [No complex32])."""
    return _default_dtype.to_complex()


# --------------------------------------------------------------------------------------------
# result_type
# --------------------------------------------------------------------------------------------


def _scalar_dtype(x: builtins.bool | builtins.int | builtins.float | complex) -> dtype:
    # bool is tested first: it is a subclass of int.
    if isinstance(x, builtins.bool):
        return _BOOL
    if isinstance(x, builtins.int):
        return _INT64
    if isinstance(x, builtins.float):
        return _default_dtype
    return _default_complex_dtype()


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Merge a lower category into a higher one (Note [Type promotion])."""
    if higher is None:
        return lower
    if lower is None or higher.kind == "c":
        return higher
    if lower.kind == "c":
        # A floating higher category keeps its precision and becomes complex; an integer or
        # bool one takes the lower category's complex dtype.
        return higher.to_complex() if higher.kind == "f" else lower
    if higher.kind == "f":
        return higher
    if higher.kind == "b" or lower.kind == "f":
        return promote_types(higher, lower)
    return higher


def result_type(*operands: Any) -> dtype:
    """The dtype PyTorch would give an operation on ``operands`` (torch.result_type).

    Each operand is a tensor (anything with a ``dtype`` that is a tensorplug dtype and an
    ``ndim``) or a Python ``bool``, ``int``, ``float`` or ``complex``. Python floats take the
    default dtype, Python ints int64, Python complex numbers the complex counterpart of the
    default dtype (Note [No complex32]).
    """
    if not operands:
        raise TypeError("result_type() needs at least one tensor or Python scalar")
    dim: dtype | None = None
    zero_dim: dtype | None = None
    scalar: dtype | None = None
    for x in operands:
        if isinstance(x, (builtins.bool, builtins.int, builtins.float, complex)):
            d = _scalar_dtype(x)
            scalar = d if scalar is None else promote_types(scalar, d)
            continue
        tensor_dtype = getattr(x, "dtype", None)
        ndim = getattr(x, "ndim", None)
        if not isinstance(tensor_dtype, dtype) or not isinstance(ndim, builtins.int):
            raise TypeError(
                "result_type() expects tensors (with a tensorplug dtype and an ndim) or Python "
                f"bool/int/float/complex scalars, got {type(x).__name__} {x!r}"
            )
        if ndim > 0:
            dim = tensor_dtype if dim is None else promote_types(dim, tensor_dtype)
        else:
            zero_dim = tensor_dtype if zero_dim is None else promote_types(zero_dim, tensor_dtype)
    result = _combine_categories(dim, _combine_categories(zero_dim, scalar))
    assert result is not None  # at least one operand
    return result


# --------------------------------------------------------------------------------------------
# finfo / iinfo
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FloatInfo:
    """Numerical limits of a floating-point dtype (what :func:`finfo` returns)."""

    dtype: dtype
    bits: builtins.int
    eps: builtins.float  # distance from 1.0 to the next representable value
    max: builtins.float
    min: builtins.float  # == -max
    tiny: builtins.float  # smallest positive normal number
    smallest_normal: builtins.float  # same as tiny
    resolution: builtins.float  # approximate decimal resolution, 10 ** -precision


@dataclass(frozen=True)
class IntInfo:
    """Limits of an integer dtype (what :func:`iinfo` returns)."""

    dtype: dtype
    bits: builtins.int
    min: builtins.int
    max: builtins.int


def _ieee_info(
    d: dtype, mantissa_bits: builtins.int, exponent_bits: builtins.int, decimal_digits: builtins.int
) -> FloatInfo:
    # An IEEE-754 style binary format with an implicit leading bit; all values below are exact
    # powers of two or sums of them, so they are computed, not typed in.
    max_exponent = 2 ** (exponent_bits - 1) - 1
    largest = (2.0 - 2.0**-mantissa_bits) * 2.0**max_exponent
    tiny = 2.0 ** (1 - max_exponent)
    return FloatInfo(
        dtype=d,
        bits=d.itemsize * 8,
        eps=2.0**-mantissa_bits,
        max=largest,
        min=-largest,
        tiny=tiny,
        smallest_normal=tiny,
        resolution=10.0**-decimal_digits,
    )


_FINFO: dict[dtype, FloatInfo] = {
    _FLOAT16: _ieee_info(_FLOAT16, mantissa_bits=10, exponent_bits=5, decimal_digits=3),
    _BFLOAT16: _ieee_info(_BFLOAT16, mantissa_bits=7, exponent_bits=8, decimal_digits=2),
    _FLOAT32: _ieee_info(_FLOAT32, mantissa_bits=23, exponent_bits=8, decimal_digits=6),
    _FLOAT64: _ieee_info(_FLOAT64, mantissa_bits=52, exponent_bits=11, decimal_digits=15),
}


def _int_info(d: dtype) -> IntInfo:
    bits = d.itemsize * 8
    if d.kind == "u":
        return IntInfo(dtype=d, bits=bits, min=0, max=2**bits - 1)
    return IntInfo(dtype=d, bits=bits, min=-(2 ** (bits - 1)), max=2 ** (bits - 1) - 1)


_IINFO: dict[dtype, IntInfo] = {d: _int_info(d) for d in _ALL if d.kind in "ui"}


def finfo(d: dtype | None = None) -> FloatInfo:
    """Limits of a floating dtype; a complex dtype gives its real part's, None the default's."""
    d = _default_dtype if d is None else d
    info = _FINFO.get(_TO_REAL.get(d, d))
    if info is None:
        raise TypeError(
            f"finfo() requires a floating-point or complex dtype, got {d!r}; use iinfo() for "
            "integer dtypes"
        )
    return info


def iinfo(d: dtype) -> IntInfo:
    """Limits of an integer dtype (not bool, as in PyTorch)."""
    info = _IINFO.get(d)
    if info is None:
        raise TypeError(
            f"iinfo() requires an integer dtype, got {d!r}; use finfo() for floating-point and "
            "complex dtypes"
        )
    return info
