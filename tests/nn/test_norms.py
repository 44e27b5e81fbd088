"""Normalization, dropout and activation behaviour the OpInfo harness does not reach: masked
backward results, running statistics updated in place (and their version counters, as in
PyTorch), vmap's randomness modes for the feature dropouts, rrelu's random slopes."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F
from tests.needs import needs_autograd

aten = tp.ops.aten


def a(t: tp.Tensor) -> np.ndarray:
    return np.asarray(tp.detach(t).numpy())


def test_backward_kernels_compute_only_what_the_mask_asks() -> None:
    x, g = tp.randn(4, 3, 2), tp.randn(4, 3, 2)
    _, mean, invstd = aten.native_batch_norm.default(x, None, None, None, None, True, 0.1, 1e-5)
    gi, gw, gb = aten.native_batch_norm_backward.default(
        g, x, tp.ones(3), None, None, mean, invstd, True, 1e-5, [True, False, False]
    )
    assert gi.shape == (4, 3, 2) and gw is None and gb is None
    _, mean, rstd = aten.native_group_norm.default(x, None, None, 4, 3, 2, 3, 1e-5)
    gi, gw, gb = aten.native_group_norm_backward.default(
        g, x, mean, rstd, None, 4, 3, 2, 3, [False, True, False]
    )
    assert gi is None and gw.shape == (3,) and gb is None


def test_running_statistics_update_in_place_without_moving_versions() -> None:
    xn = np.random.default_rng(0).standard_normal((5, 2, 3))
    x = tp.tensor(xn)
    rm, rv = tp.zeros(2, dtype=tp.float64), tp.ones(2, dtype=tp.float64)
    versions = (rm._version, rv._version)
    F.batch_norm(x, rm, rv, training=True, momentum=0.3)
    mean = xn.mean(axis=(0, 2))
    var = xn.var(axis=(0, 2), ddof=1)
    np.testing.assert_allclose(a(rm), 0.3 * mean, rtol=1e-12)
    np.testing.assert_allclose(a(rv), 0.7 + 0.3 * var, rtol=1e-12)
    assert (rm._version, rv._version) == versions  # as torch's batch_norm


def test_instance_norm_averages_its_running_statistics_over_the_batch() -> None:
    xn = np.random.default_rng(1).standard_normal((3, 2, 4))
    rm, rv = tp.zeros(2, dtype=tp.float64), tp.ones(2, dtype=tp.float64)
    F.instance_norm(tp.tensor(xn), rm, rv, use_input_stats=True, momentum=0.5)
    np.testing.assert_allclose(a(rm), 0.5 * xn.mean(axis=2).mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(a(rv), 0.5 + 0.5 * xn.var(axis=2, ddof=1).mean(axis=0), rtol=1e-12)


def _dropped_channels(y: tp.Tensor) -> np.ndarray:
    return a(y).reshape(*y.shape[:2], -1)[..., 0] == 0


def test_feature_dropout_under_vmap_follows_the_randomness_mode() -> None:
    x = tp.ones(6, 8, 16, 2, 2)  # 6 samples of (8, 16, 2, 2)

    def f(t: tp.Tensor) -> tp.Tensor:
        return F.dropout2d(t, 0.5)

    different = _dropped_channels(tp.vmap(f, randomness="different")(x).reshape(48, 16, 4))
    assert not all(np.array_equal(different[:8], different[8 * i : 8 * i + 8]) for i in range(6))
    same = tp.vmap(f, randomness="same")(x)
    assert all(np.array_equal(a(same[0]), a(same[i])) for i in range(6))
    with pytest.raises(RuntimeError, match="randomness"):
        tp.vmap(f)(x)


def test_rrelu_draws_slopes_between_its_bounds_reproducibly() -> None:
    x = -tp.ones(1000, dtype=tp.float64)
    tp.manual_seed(3)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -a(y)
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    tp.manual_seed(3)
    np.testing.assert_array_equal(a(F.rrelu(x, 0.1, 0.3, training=True)), a(y))
    np.testing.assert_allclose(a(F.rrelu(x, 0.1, 0.3)), 0.2 * a(x))  # evaluation: the mean


@needs_autograd
def test_alpha_dropout_keeps_mean_and_variance_of_a_standard_input() -> None:
    tp.manual_seed(0)
    x = tp.randn(200_000)
    y = F.alpha_dropout(x, 0.2, training=True)
    assert abs(float(y.mean())) < 0.02 and abs(float(y.std()) - 1) < 0.02
