"""Matrix products and losses: shape errors, dtype rules, reductions."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tests.array_backend.conftest import arr

aten = tp.ops.aten


def test_mm_errors():
    with pytest.raises(
        RuntimeError, match=r"^aten::mm: mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"
    ):
        aten.mm.default(tp.zeros([2, 3]), tp.zeros([4, 5]))
    with pytest.raises(
        RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"
    ):
        aten.mm.default(tp.zeros([2, 2]), tp.zeros([2, 2], dtype=tp.float64))


def test_matmul_shapes():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4,))
    np.testing.assert_allclose(
        arr(aten.matmul.default(tp.tensor(a), tp.tensor(b))), a @ b, rtol=1e-5
    )
    assert aten.matmul.default(tp.ones([3]), tp.ones([3])).shape == ()
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
        aten.matmul.default(tp.tensor(1.0), tp.ones([3]))


def test_bmm_and_addmm():
    a, b = tp.ones([2, 3, 4]), tp.ones([2, 4, 5])
    assert aten.bmm.default(a, b).shape == (2, 3, 5)
    with pytest.raises(
        RuntimeError, match="Expected size for first two dimensions of batch2 tensor"
    ):
        aten.bmm.default(a, tp.ones([3, 4, 5]))
    bias = tp.tensor([float("nan"), 1.0])
    r = aten.addmm.default(bias, tp.ones([1, 2]), tp.ones([2, 2]), beta=0, alpha=2)
    np.testing.assert_array_equal(arr(r), [[4.0, 4.0]])  # beta=0 ignores self, nan included
    r2 = aten.addmm.default(tp.tensor([1.0, 2.0]), tp.ones([1, 2]), tp.ones([2, 2]))
    np.testing.assert_array_equal(arr(r2), [[3.0, 4.0]])


def test_nll_loss():
    logp = np.log(np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]]))
    target = np.array([1, 0, -100])
    w = np.array([1.0, 3.0])
    x = tp.tensor(logp, dtype=tp.float64)
    tt = tp.tensor(target)
    none = arr(aten.nll_loss.default(x, tt, tp.tensor(w, dtype=tp.float64), "none"))
    expect = np.array([-logp[0, 1] * 3.0, -logp[1, 0] * 1.0, 0.0])
    np.testing.assert_allclose(none, expect)
    mean = float(arr(aten.nll_loss.default(x, tt, tp.tensor(w, dtype=tp.float64))))
    np.testing.assert_allclose(mean, expect.sum() / 4.0)
    s = float(arr(aten.nll_loss.default(x, tt, None, "sum")))
    np.testing.assert_allclose(s, -logp[0, 1] - logp[1, 0])
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        aten.nll_loss.default(x, tp.tensor([5, 0, 0]))
    with pytest.raises(RuntimeError, match="is not a valid value for reduction"):
        aten.nll_loss.default(x, tt, None, "avg")


def test_binary_cross_entropy_clamps_log():
    p = tp.tensor([0.0, 1.0, 0.5], dtype=tp.float64)
    y = tp.tensor([1.0, 1.0, 0.0], dtype=tp.float64)
    r = arr(aten.binary_cross_entropy.default(p, y, None, "none"))
    np.testing.assert_allclose(r, [100.0, 0.0, np.log(2.0)])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        aten.binary_cross_entropy.default(tp.tensor([1.5]), tp.tensor([1.0]))
