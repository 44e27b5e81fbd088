"""The kit's shared helpers: erfc accuracy, error conversion, dims and broadcasting."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tensorplug.array_backend import _kit
from tensorplug.array_backend._pointwise._unary import erfc


def test_erfc_relative_accuracy():
    xs = np.linspace(-9.0, 9.0, 40001)
    ref = np.array([math.erfc(x) for x in xs])
    assert np.max(np.abs(erfc(np, xs) - ref) / ref) < 1e-12


def test_convert_error_names_the_op_and_keeps_the_cause():
    cause = ValueError("operands could not be broadcast together")
    e = _kit.convert_error("aten::foo.bar", cause)
    assert isinstance(e, RuntimeError) and str(e).startswith("aten::foo.bar: ")
    assert e.__cause__ is cause
    ie = _kit.convert_error(
        "aten::x", IndexError("index 5 is out of bounds for axis 0 with size 3")
    )
    assert isinstance(ie, IndexError)
    assert str(ie) == "aten::x: index 5 is out of bounds for dimension 0 with size 3"


def test_guard_wraps_numpy_errors():
    def kernel():
        return np.ones(2) + np.ones(3)

    with pytest.raises(RuntimeError, match=r"^aten::k: ") as info:
        _kit.guard("k", kernel)()
    assert isinstance(info.value.__cause__, ValueError)


def test_wrap_dim_and_broadcast():
    assert _kit.wrap_dim(-1, 3) == 2 and _kit.wrap_dim(-1, 0) == 0
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        _kit.wrap_dim(1, 0)
    assert _kit.check_broadcast((2, 1), (3,)) == (2, 3)
    with pytest.raises(
        _kit.OpError,
        match=r"tensor a \(3\) must match the size of tensor b \(4\) at non-singleton dimension 1",
    ):
        _kit.check_broadcast((2, 3), (2, 4))


def test_wrap_int():
    from tensorplug import dtypes

    assert _kit.wrap_int(1000, dtypes.int8) == np.int64(1000).astype(np.int8)
    assert _kit.wrap_int(-1, dtypes.uint8) == 255
