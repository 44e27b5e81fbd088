"""Tests for tensorplug.dtypes: the dtype singletons, promotion, casting, defaults and limits.

The oracle is PyTorch: PROMOTE_TABLE below was generated with torch 2.13.0
(``torch.promote_types`` over all 12x12 pairs), and ``test_matches_torch_*`` re-check the rules
against torch itself when it is importable.
"""

from __future__ import annotations

import copy
import math
import pickle
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import tensorplug.dtypes as dt

b, u8, i8, i16, i32, i64 = dt.bool, dt.uint8, dt.int8, dt.int16, dt.int32, dt.int64
f16, bf16, f32, f64, c64, c128 = (
    dt.float16,
    dt.bfloat16,
    dt.float32,
    dt.float64,
    dt.complex64,
    dt.complex128,
)
ORDER = (b, u8, i8, i16, i32, i64, f16, bf16, f32, f64, c64, c128)
NAMES = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)

# torch.promote_types(row, column), generated with torch 2.13.0.
# fmt: off
PROMOTE_TABLE = (
    #    b   u8   i8  i16  i32  i64  f16 bf16  f32  f64  c64 c128
    (   b,   u8,   i8,  i16,  i32,  i64,  f16, bf16,  f32,  f64,  c64, c128),  # bool
    (  u8,   u8,  i16,  i16,  i32,  i64,  f16, bf16,  f32,  f64,  c64, c128),  # uint8
    (  i8,  i16,   i8,  i16,  i32,  i64,  f16, bf16,  f32,  f64,  c64, c128),  # int8
    ( i16,  i16,  i16,  i16,  i32,  i64,  f16, bf16,  f32,  f64,  c64, c128),  # int16
    ( i32,  i32,  i32,  i32,  i32,  i64,  f16, bf16,  f32,  f64,  c64, c128),  # int32
    ( i64,  i64,  i64,  i64,  i64,  i64,  f16, bf16,  f32,  f64,  c64, c128),  # int64
    ( f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  c64, c128),  # float16
    (bf16, bf16, bf16, bf16, bf16, bf16,  f32, bf16,  f32,  f64,  c64, c128),  # bfloat16
    ( f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  c64, c128),  # float32
    ( f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64, c128, c128),  # float64
    ( c64,  c64,  c64,  c64,  c64,  c64,  c64,  c64,  c64, c128,  c64, c128),  # complex64
    (c128, c128, c128, c128, c128, c128, c128, c128, c128, c128, c128, c128),  # complex128
)
# fmt: on


@dataclass
class FakeTensor:
    """Just enough of a tensor for result_type: a dtype and a number of dimensions."""

    dtype: dt.dtype
    ndim: int


def T(d: dt.dtype) -> FakeTensor:
    """A tensor with dimensions."""
    return FakeTensor(d, 1)


def Z(d: dt.dtype) -> FakeTensor:
    """A zero-dimensional tensor."""
    return FakeTensor(d, 0)


@pytest.fixture
def default_dtype() -> Iterator[None]:
    """Restore the default dtype after a test that changes it."""
    saved = dt.get_default_dtype()
    try:
        yield
    finally:
        dt.set_default_dtype(saved)


# --- the dtype objects -------------------------------------------------------------------------


def test_all_dtypes_order_and_names() -> None:
    assert dt.all_dtypes() == ORDER
    assert tuple(d.name for d in ORDER) == NAMES
    for d in ORDER:
        assert getattr(dt, d.name) is d


@pytest.mark.parametrize(
    ("d", "itemsize", "kind", "floating", "complex_", "signed"),
    [
        (b, 1, "b", False, False, False),
        (u8, 1, "u", False, False, False),
        (i8, 1, "i", False, False, True),
        (i16, 2, "i", False, False, True),
        (i32, 4, "i", False, False, True),
        (i64, 8, "i", False, False, True),
        (f16, 2, "f", True, False, True),
        (bf16, 2, "f", True, False, True),
        (f32, 4, "f", True, False, True),
        (f64, 8, "f", True, False, True),
        (c64, 8, "c", False, True, True),
        (c128, 16, "c", False, True, True),
    ],
)
def test_dtype_attributes(
    d: dt.dtype, itemsize: int, kind: str, floating: bool, complex_: bool, signed: bool
) -> None:
    assert d.itemsize == itemsize
    assert d.kind == kind
    assert d.is_floating_point is floating
    assert dt.is_floating_point(d) is floating
    assert d.is_complex is complex_
    assert dt.is_complex(d) is complex_
    assert d.is_signed is signed


def test_repr_and_str() -> None:
    assert repr(f32) == "tensorplug.float32"
    assert str(b) == "tensorplug.bool"


def test_dtypes_are_immutable_singletons() -> None:
    with pytest.raises(TypeError, match="cannot create tensorplug.dtype"):
        dt.dtype("float32", 4, "f")
    with pytest.raises(AttributeError, match="immutable"):
        f32.name = "float64"
    with pytest.raises(AttributeError, match="immutable"):
        del f32.itemsize
    assert {f32: 1}[dt.from_name("float32")] == 1
    assert len(set(ORDER)) == 12


@pytest.mark.parametrize("d", ORDER, ids=NAMES)
def test_pickle_and_copy_give_the_singleton(d: dt.dtype) -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(d, protocol)) is d
    assert copy.copy(d) is d
    assert copy.deepcopy(d) is d


def test_aliases() -> None:
    assert dt.half is f16
    assert dt.float is f32
    assert dt.double is f64
    assert dt.short is i16
    assert dt.int is i32
    assert dt.long is i64
    assert dt.cfloat is c64
    assert dt.cdouble is c128
    # An alias pickles as its canonical name.
    assert pickle.loads(pickle.dumps(dt.double)) is f64


def test_to_real_and_to_complex() -> None:
    assert c64.to_real() is f32
    assert c128.to_real() is f64
    for d in (b, u8, i64, f16, f32, f64):
        assert d.to_real() is d
    # float16 -> complex64, not complex32 (Note [No complex32]); bfloat16 -> complex64 as torch.
    assert f16.to_complex() is c64
    assert bf16.to_complex() is c64
    assert f32.to_complex() is c64
    assert f64.to_complex() is c128
    assert c64.to_complex() is c64
    assert c128.to_complex() is c128
    for d in (b, u8, i32):
        with pytest.raises(TypeError, match="has no complex counterpart"):
            d.to_complex()


# --- from_name ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [(n, d) for n, d in zip(NAMES, ORDER, strict=True)]
    + [
        ("half", f16),
        ("float", f32),
        ("double", f64),
        ("short", i16),
        ("int", i32),
        ("long", i64),
        ("cfloat", c64),
        ("cdouble", c128),
    ],
)
def test_from_name(name: str, expected: dt.dtype) -> None:
    assert dt.from_name(name) is expected


@pytest.mark.parametrize("name", ["foo", "Float32", "float32 ", "complex32", ""])
def test_from_name_unknown(name: str) -> None:
    with pytest.raises(TypeError) as info:
        dt.from_name(name)
    message = str(info.value)
    assert message.startswith(
        f"Unknown dtype {name!r}. Known dtypes: bool, uint8, int8, int16, int32, int64, "
        "float16, bfloat16, float32, float64, complex64, complex128 (aliases: half, float, "
        "double, short, int, long, cfloat, cdouble)."
    )


def test_from_name_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="Unknown dtype 3"):
        dt.from_name(3)  # type: ignore[arg-type]


# --- promote_types -----------------------------------------------------------------------------


def test_promote_table_is_complete_and_symmetric() -> None:
    assert len(PROMOTE_TABLE) == 12
    for i, row in enumerate(PROMOTE_TABLE):
        assert len(row) == 12
        for j in range(12):
            assert row[j] is PROMOTE_TABLE[j][i]


@pytest.mark.parametrize("a", ORDER, ids=NAMES)
def test_promote_types_full_table(a: dt.dtype) -> None:
    row = PROMOTE_TABLE[ORDER.index(a)]
    got = tuple(dt.promote_types(a, other) for other in ORDER)
    assert got == row


@pytest.mark.parametrize(
    ("a", "other", "expected"),
    [
        (u8, i8, i16),
        (b, c128, c128),
        (f16, bf16, f32),
        (i64, f16, f16),
        (c64, f64, c128),
        (u8, i64, i64),
    ],
)
def test_promote_types_examples(a: dt.dtype, other: dt.dtype, expected: dt.dtype) -> None:
    assert dt.promote_types(a, other) is expected
    assert dt.promote_types(other, a) is expected


def test_promote_types_rejects_non_dtypes() -> None:
    with pytest.raises(TypeError, match="expects two tensorplug dtypes, got 'float32'"):
        dt.promote_types(f32, "float32")  # type: ignore[arg-type]


# --- result_type -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operands", "expected"),
    [
        # One category: plain promotion inside it.
        ((T(i32), T(i64)), i64),
        ((T(u8), T(i8)), i16),
        ((Z(u8), Z(i8)), i16),
        ((3, 4.5), f32),
        ((True, 5), i64),
        ((True, False), b),
        ((2.0, 1j), c64),
        # Python scalars: bool -> bool, int -> int64, float -> default, complex -> its complex.
        ((5,), i64),
        ((5.0,), f32),
        ((1j,), c64),
        ((True,), b),
        # A lower category of the same or a lower kind does not change the result.
        ((T(u8), 5), u8),
        ((T(i8), Z(i64)), i8),
        ((T(f16), 5.5), f16),
        ((T(f16), Z(f64)), f16),
        ((T(i32), Z(i64), 7), i32),
        ((T(c64), Z(c128)), c64),
        ((T(c64), 1.5), c64),
        ((Z(i32), 5), i32),
        # ... except that bool in a higher category promotes with the lower one.
        ((T(b), 5), i64),
        ((Z(b), 5), i64),
        ((T(b), Z(u8)), u8),
        # A lower category of a higher kind uses that category's own dtype.
        ((T(i32), Z(f64)), f64),
        ((T(i64), Z(f16)), f16),
        ((T(i32), 5.5), f32),
        ((Z(i32), 5.5), f32),
        ((T(u8), Z(c128)), c128),
        ((T(i32), 1j), c64),
        # ... but a floating higher category keeps its precision when it turns complex.
        ((T(f32), Z(c128)), c64),
        ((T(f64), 1j), c128),
        ((Z(f64), 1j), c128),
        # float16 with a Python complex: complex32 in PyTorch, complex64 here.
        ((T(f16), 1j), c64),
        ((T(bf16), 1j), c64),
        # Three categories at once.
        ((T(i8), Z(i16), 2.5), f32),
        ((T(i8), Z(f64), 2.5), f64),
        ((T(i8), Z(f16), 1j), c64),
        ((T(b), Z(b), True), b),
    ],
)
def test_result_type(operands: tuple[Any, ...], expected: dt.dtype) -> None:
    assert dt.result_type(*operands) is expected
    assert dt.result_type(*reversed(operands)) is expected


@pytest.mark.usefixtures("default_dtype")
def test_result_type_follows_default_dtype() -> None:
    dt.set_default_dtype(f64)
    assert dt.result_type(T(i32), 5.5) is f64
    assert dt.result_type(T(i32), 1j) is c128
    assert dt.result_type(T(f32), 5.5) is f32
    dt.set_default_dtype(f16)
    assert dt.result_type(T(i32), 5.5) is f16
    assert dt.result_type(T(i32), 1j) is c64  # complex32 in PyTorch (Note [No complex32])
    dt.set_default_dtype(bf16)
    assert dt.result_type(1.0) is bf16
    assert dt.result_type(1j) is c64


def test_result_type_duck_typed_operands() -> None:
    class Slotted:
        __slots__ = ("dtype", "ndim")

        def __init__(self, d: dt.dtype, ndim: int) -> None:
            self.dtype = d
            self.ndim = ndim

    assert dt.result_type(Slotted(i32, 2), Slotted(f64, 0)) is f64


@pytest.mark.parametrize(
    "bad",
    ["float32", None, FakeTensor("float32", 1), FakeTensor(f32, None)],  # type: ignore[arg-type]
)
def test_result_type_rejects_other_operands(bad: object) -> None:
    with pytest.raises(TypeError, match="result_type\\(\\) expects tensors"):
        dt.result_type(T(f32), bad)


def test_result_type_needs_an_operand() -> None:
    with pytest.raises(TypeError, match="at least one"):
        dt.result_type()


# --- can_cast ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("from_", "to", "expected"),
    [
        (i64, u8, True),  # within a kind any size is fine
        (f64, f16, True),
        (c128, c64, True),
        (b, f32, True),
        (b, c64, True),
        (u8, c128, True),
        (i32, f16, True),
        (f32, c64, True),
        (f32, i64, False),  # no floating -> integer
        (f16, u8, False),
        (f32, b, False),  # no non-bool -> bool
        (i8, b, False),
        (c64, f64, False),  # no complex -> non-complex
        (c128, i64, False),
        (b, b, True),
    ],
)
def test_can_cast(from_: dt.dtype, to: dt.dtype, expected: bool) -> None:
    assert dt.can_cast(from_, to) is expected


def test_can_cast_rules_over_all_pairs() -> None:
    rank = "buifc"
    for a in ORDER:
        for other in ORDER:
            # Casting is allowed exactly when it does not lower the kind, with unsigned and
            # signed integers counting as one kind.
            kind_a = rank.index(a.kind.replace("u", "i"))
            kind_b = rank.index(other.kind.replace("u", "i"))
            assert dt.can_cast(a, other) is (kind_a <= kind_b), (a, other)


# --- default dtype -----------------------------------------------------------------------------


def test_default_dtype_is_float32() -> None:
    assert dt.get_default_dtype() is f32


@pytest.mark.usefixtures("default_dtype")
@pytest.mark.parametrize("d", [f16, bf16, f32, f64])
def test_set_default_dtype(d: dt.dtype) -> None:
    dt.set_default_dtype(d)
    assert dt.get_default_dtype() is d
    assert dt.result_type(2.5) is d


@pytest.mark.usefixtures("default_dtype")
@pytest.mark.parametrize("d", [b, u8, i32, i64, c64, c128, "float64"])
def test_set_default_dtype_rejects_non_floating(d: Any) -> None:
    with pytest.raises(TypeError, match="^only floating-point types are supported as the default"):
        dt.set_default_dtype(d)
    assert dt.get_default_dtype() is f32


# --- finfo / iinfo -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("d", "bits", "eps", "max_", "tiny", "resolution"),
    [
        (f16, 16, 2.0**-10, 65504.0, 2.0**-14, 1e-3),
        (bf16, 16, 2.0**-7, 3.3895313892515355e38, 2.0**-126, 1e-2),
        (f32, 32, 2.0**-23, 3.4028234663852886e38, 1.1754943508222875e-38, 1e-6),
        (f64, 64, sys.float_info.epsilon, sys.float_info.max, sys.float_info.min, 1e-15),
    ],
)
def test_finfo(
    d: dt.dtype, bits: int, eps: float, max_: float, tiny: float, resolution: float
) -> None:
    info = dt.finfo(d)
    assert info.dtype is d
    assert info.bits == bits
    assert info.eps == eps
    assert info.max == max_
    assert info.min == -max_
    assert info.tiny == tiny
    assert info.smallest_normal == tiny
    assert info.resolution == resolution


def test_finfo_eps_is_the_gap_above_one() -> None:
    # Independent check for float64, which Python floats are.
    eps = dt.finfo(f64).eps
    assert 1.0 + eps != 1.0
    assert 1.0 + eps / 2 == 1.0
    assert math.nextafter(1.0, 2.0) == 1.0 + eps


@pytest.mark.usefixtures("default_dtype")
def test_finfo_complex_and_default() -> None:
    assert dt.finfo(c64) is dt.finfo(f32)
    assert dt.finfo(c128) is dt.finfo(f64)
    assert dt.finfo() is dt.finfo(f32)
    dt.set_default_dtype(f64)
    assert dt.finfo().dtype is f64


@pytest.mark.parametrize("d", [b, u8, i64])
def test_finfo_rejects_integers(d: dt.dtype) -> None:
    with pytest.raises(TypeError, match="finfo\\(\\) requires a floating-point or complex dtype"):
        dt.finfo(d)


@pytest.mark.parametrize(
    ("d", "bits", "min_", "max_"),
    [
        (u8, 8, 0, 255),
        (i8, 8, -128, 127),
        (i16, 16, -32768, 32767),
        (i32, 32, -2147483648, 2147483647),
        (i64, 64, -9223372036854775808, 9223372036854775807),
    ],
)
def test_iinfo(d: dt.dtype, bits: int, min_: int, max_: int) -> None:
    info = dt.iinfo(d)
    assert (info.dtype, info.bits, info.min, info.max) == (d, bits, min_, max_)


@pytest.mark.parametrize("d", [b, f32, c64])
def test_iinfo_rejects_non_integers(d: dt.dtype) -> None:
    with pytest.raises(TypeError, match=f"iinfo\\(\\) requires an integer dtype, got {d!r}"):
        dt.iinfo(d)


def test_info_objects_are_frozen() -> None:
    with pytest.raises(AttributeError):
        dt.finfo(f32).eps = 1.0  # type: ignore[misc]


# --- against PyTorch itself, when it is installed ----------------------------------------------


def test_matches_torch_promote_and_can_cast() -> None:
    torch = pytest.importorskip("torch")
    for a in ORDER:
        for other in ORDER:
            expected = torch.promote_types(getattr(torch, a.name), getattr(torch, other.name))
            assert str(expected) == f"torch.{dt.promote_types(a, other).name}", (a, other)
            expected_cast = torch.can_cast(getattr(torch, a.name), getattr(torch, other.name))
            assert dt.can_cast(a, other) is expected_cast, (a, other)


@pytest.mark.usefixtures("default_dtype")
def test_matches_torch_result_type_pairs() -> None:
    torch = pytest.importorskip("torch")
    saved = torch.get_default_dtype()
    operands: list[tuple[Any, Any]] = [(s, s) for s in (True, 3, 2.5, 1j)]
    for d in ORDER:
        for ndim in (0, 1):
            real = torch.zeros((1,) * ndim, dtype=getattr(torch, d.name))
            operands.append((real, FakeTensor(d, ndim)))
    try:
        for default in (f32, f64, f16, bf16):
            torch.set_default_dtype(getattr(torch, default.name))
            dt.set_default_dtype(default)
            for real_a, fake_a in operands:
                for real_b, fake_b in operands:
                    expected = str(torch.result_type(real_a, real_b)).removeprefix("torch.")
                    if expected == "complex32":  # Note [No complex32]
                        expected = "complex64"
                    assert dt.result_type(fake_a, fake_b).name == expected, (
                        fake_a,
                        fake_b,
                        default,
                    )
    finally:
        torch.set_default_dtype(saved)
