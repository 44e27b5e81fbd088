"""tensorplug_cuda.backend's fixes for where CuPy differs from numpy, against numpy (the
oracle): they are written against CuPy's API, and numpy plays CuPy here."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import HAS_CUDA_PLUGIN

pytestmark = pytest.mark.skipif(not HAS_CUDA_PLUGIN, reason="needs tensorplug-cuda loaded")


@pytest.mark.parametrize(
    ("shape", "axis"),
    [((7,), 0), ((3, 9), 1), ((3, 9), 0), ((5, 4, 2), 1), ((0, 3), 0), ((1,), 0), ((4, 17), -1)],
)
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_accumulate_by_doubling_equals_numpys_scan(shape, axis, name):
    from tensorplug_cuda.backend import ReducingUfunc

    ufunc = getattr(np, name)
    rng = np.random.default_rng(len(shape) * 10 + axis)
    floats = rng.standard_normal(shape)
    if floats.size:
        floats.flat[floats.size // 2] = np.nan  # a NaN stays NaN from where it appears
    ints = rng.integers(-5, 5, shape)
    scan = ReducingUfunc(ufunc, np.max if name == "maximum" else np.min)
    for a in (floats, ints):
        before = a.copy()
        np.testing.assert_array_equal(scan.accumulate(a, axis), ufunc.accumulate(a, axis=axis))
        np.testing.assert_array_equal(a, before)  # the input is left alone


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_is_the_matching_reduction(axis, keepdims):
    from tensorplug_cuda.backend import ReducingUfunc

    a = np.random.default_rng(0).standard_normal((3, 4))
    b = a > 0
    for name, reduction, x in (
        ("maximum", np.max, a), ("minimum", np.min, a), ("logical_and", np.all, b),
        ("logical_or", np.any, b),
    ):  # fmt: skip
        ufunc = getattr(np, name)
        got = ReducingUfunc(ufunc, reduction).reduce(x, axis, None, None, keepdims)
        np.testing.assert_array_equal(got, ufunc.reduce(x, axis, None, None, keepdims))
    assert ReducingUfunc(np.maximum, np.max)(a, 0.5).min() >= 0.5  # calls are the ufunc's


def test_argsort_takes_stable_and_permutation_is_a_permutation():
    from tensorplug_cuda.backend import DeviceGenerators, numpy_compatible

    from . import standin_cupy

    cp = standin_cupy.make(devices=1)
    ns = numpy_compatible(cp)
    a = cp.asarray([3, 1, 2, 1, 3])
    assert ns.argsort(a, axis=-1, stable=True).tolist() == [1, 3, 2, 0, 4]
    assert ns.__name__ == "cupy" and ns.add is cp.add  # the rest is CuPy's
    g = DeviceGenerators(cp, 5)
    p = g.permutation(10)
    assert (
        sorted(p.tolist()) == list(range(10))
        and p.tolist() == DeviceGenerators(cp, 5).permutation(10).tolist()
    )
