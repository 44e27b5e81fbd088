"""Forward mode on the OpInfo samples of every operator with a derivative (its in-place
variants on clones included): the tangent forward mode computes (a forward formula, the
transposed reverse formula of a pointwise op, or the double-vjp construction) passes the
dot-product test against reverse mode, ``<u, J v> == <J^T u, v>`` for random ``u`` and ``v``,
one forward and one backward pass per sample (test_formulas.py gradchecks the reverse
formulas themselves against finite differences)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()

import tensorplug.autograd.forward_ad as fwAD  # noqa: E402
from tensorplug.testing.opinfo import OPS_BY_NAME  # noqa: E402
from tests.autograd.test_formulas import (  # noqa: E402
    FUNCTIONAL,
    INPLACE,
    _caller,
    _differentiable_names,
    _prepare,
    _samples,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Mean of empty slice:RuntimeWarning", "ignore:invalid value:RuntimeWarning"
)


def _cases():
    for key in FUNCTIONAL:
        for s in list(_samples(OPS_BY_NAME[key]))[:2]:
            yield pytest.param(key, key, s, id=f"{key}-{s.name}")
    for key, formula in sorted(INPLACE.items()):
        for s in list(_samples(OPS_BY_NAME[key]))[:1]:
            yield pytest.param(key, formula, s, id=f"{key}-{s.name}")


def _tensors(out):
    return [out] if isinstance(out, tp.Tensor) else [o for o in out if isinstance(o, tp.Tensor)]


def _dot(a, b):
    return float((a.double() * b.double()).sum())


@pytest.mark.parametrize(("key", "formula", "sample"), list(_cases()))
def test_tangent_passes_the_dot_product_test(key, formula, sample):
    info = OPS_BY_NAME[key]
    leaves, args, kwargs = _prepare(key, sample, _differentiable_names(formula))
    if not leaves:
        pytest.skip("no floating-point input the formula differentiates")
    call = _caller(info, args, kwargs, inplace=key in INPLACE)
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    vs = [tp.tensor(rng.standard_normal(tuple(x.shape)), dtype=x.dtype) for x in leaves]
    outs = _tensors(call(*leaves))
    diff = [o.requires_grad for o in outs]
    us = [tp.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype) for o in outs]
    grads = tp.autograd.grad(
        [o for o, d in zip(outs, diff, strict=True) if d],
        leaves,
        [u for u, d in zip(us, diff, strict=True) if d],
        allow_unused=True,
    )
    rhs = sum(_dot(g, v) for g, v in zip(grads, vs, strict=True) if g is not None)
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x.detach(), v) for x, v in zip(leaves, vs, strict=True)]
        touts = [fwAD.unpack_dual(o).tangent for o in _tensors(call(*duals))]
    lhs = 0.0
    for t, u, d in zip(touts, us, diff, strict=True):
        if not d:
            assert t is None or not bool(t.ne(0).any()), "a non-differentiable output moved"
        elif t is not None:
            lhs += _dot(t, u)
    assert np.isclose(lhs, rhs, rtol=1e-7, atol=1e-7, equal_nan=True), (lhs, rhs)
