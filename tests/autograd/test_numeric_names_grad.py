"""Gradients of the issue-29 composites (their formulas are those of the operators they are
written in, as PyTorch's CompositeImplicitAutograd ops): gradcheck and gradgradcheck in
float64, and the subgradients PyTorch picks where the functions have kinks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()


def _leaf(shape: tuple[int, ...], seed: int, low: float = -2.0, high: float = 2.0) -> tp.Tensor:
    rng = np.random.default_rng(seed)
    return tp.tensor(rng.uniform(low, high, shape), dtype=tp.float64, requires_grad=True)


CASES: dict[str, tuple[Callable[..., Any], list[tuple[tuple[int, ...], float, float]]]] = {
    "quantile_linear": (lambda x, q: tp.quantile(x, q, dim=1), [((3, 5), -2, 2), ((2,), 0.1, 0.9)]),
    "quantile_midpoint_all": (
        lambda x: tp.quantile(x, 0.3, interpolation="midpoint"),
        [((2, 4), -2, 2)],
    ),
    "nanquantile_keepdim": (
        lambda x: tp.nanquantile(x, 0.6, dim=0, keepdim=True),
        [((4, 3), -2, 2)],
    ),
    "nansum": (lambda x: tp.nansum(x, 1), [((3, 4), -2, 2)]),
    "nanmean": (lambda x: tp.nanmean(x), [((3, 4), -2, 2)]),
    "dist_p3": (lambda a, b: tp.dist(a, b, 3), [((3, 4), -2, 2), ((4,), -2, 2)]),
    "renorm": (lambda x: tp.renorm(x, 2, 0, 1.5), [((3, 4), -2, 2)]),
    "renorm_": (lambda x: (x * 1).renorm_(1, 1, 2.0), [((3, 4), -2, 2)]),
    "ldexp": (lambda x: tp.ldexp(x, tp.tensor([1, -2, 3])), [((2, 3), -2, 2)]),
    "float_power": (lambda x, y: tp.float_power(x, y), [((3,), 0.5, 2), ((3,), -1, 2)]),
    "deg2rad": (lambda x: tp.deg2rad(x), [((3,), -90, 90)]),
    "std_dim_unbiased": (lambda x: tp.std(x, 1, True, True), [((3, 4), -2, 2)]),
    "max_other": (lambda a, b: tp.max(a, b), [((3,), -2, 2), ((3,), 3, 4)]),
    "msort": (lambda x: tp.msort(x), [((4, 2), -2, 2)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name: str) -> None:
    fn, shapes = CASES[name]
    leaves = tuple(_leaf(s, i, lo, hi) for i, (s, lo, hi) in enumerate(shapes))
    assert tp.autograd.gradcheck(fn, leaves)
    assert tp.autograd.gradgradcheck(fn, leaves)


def test_nansum_gives_nan_positions_zero_gradient() -> None:
    x = tp.tensor([1.0, float("nan"), 2.0], requires_grad=True)
    tp.nansum(x).backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


def test_nanmedian_shares_the_gradient_among_ties_as_median() -> None:
    x = tp.tensor([2.0, float("nan"), 2.0, 1.0, 5.0], requires_grad=True)
    tp.nanmedian(x).backward()  # PyTorch's evenly_distribute_backward
    assert x.grad.tolist() == [0.5, 0.0, 0.5, 0.0, 0.0]


def test_renorm_leaves_small_slices_alone_and_differentiates_through_the_norm() -> None:
    x = tp.tensor([[3.0, 4.0], [0.3, 0.4]], dtype=tp.float64, requires_grad=True)
    y = tp.renorm(x, 2, 0, 1.0)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy()[1], [0.3, 0.4])
    np.testing.assert_allclose(x.grad.numpy()[1], [1.0, 1.0])
    # the first row is x / (|x| + 1e-7): d/dx_i of its sum is 1/n - x_i * sum(x) / (n^2 |x|)
    n = 5.0 + 1e-7
    want = [1 / n - 3 * 7 / (n * n * 5), 1 / n - 4 * 7 / (n * n * 5)]
    np.testing.assert_allclose(x.grad.numpy()[0], want, rtol=1e-6)
