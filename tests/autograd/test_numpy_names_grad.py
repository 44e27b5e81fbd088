"""Gradients of issue 29's composites (CompositeImplicitAutograd here: tests/autograd/
test_formulas.py gradchecks the operators with formulas only), checked with ``gradcheck``
(float64 finite differences) on their first two OpInfo samples, and ``gradgradcheck`` on the
first; the inputs of floating dtype are the ones differentiated."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.testing.opinfo import OPS_BY_NAME, SampleInput
from tests import needs

needs.autograd()

# issue 29's differentiable composites (bincount, histc, histogram(dd), isin, argwhere and
# unique_consecutive count or compare: not differentiable, as in PyTorch)
COMPOSITES = (
    "tensor_split.sections", "tensor_split.indices", "hsplit.int", "vsplit.array",
    "dsplit.int", "concat", "concatenate", "row_stack", "swapdims", "adjoint", "diagflat",
    "rot90", "vander", "cartesian_prod", "combinations", "block_diag", "narrow_copy",
    "select_scatter", "slice_scatter", "diagonal_scatter", "diag_embed", "index_copy",
    "take_along_dim", "index_reduce", "mv", "addmv", "addr", "ger", "inner", "cross", "cdist",
    "trapezoid.x", "trapezoid.dx", "trapz.dx", "cumulative_trapezoid.x",
    "cumulative_trapezoid.dx", "gradient.scalarint", "gradient.scalarrayint",
    "gradient.tensorarray", "cov", "corrcoef",
)  # fmt: skip

# samples where finite differences meet a kink: cdist's p=0 (piecewise constant) and inf (a
# max of absolute differences)
SKIP = {("cdist", "p0"), ("cdist", "pinf")}


def _leaf(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        t = tp.tensor(np.array(x, copy=True))
        if x.dtype.kind == "f":
            t.requires_grad_()
        return t
    if isinstance(x, list) and x and all(isinstance(v, np.ndarray) for v in x):
        return [_leaf(v) for v in x]
    return x


def _flat(args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for v in [*args, *kwargs.values()]:
        for t in v if isinstance(v, list) else [v]:
            if isinstance(t, tp.Tensor) and t.requires_grad:
                out.append(t)
    return out


def _cases() -> list[Any]:
    out = []
    for name in COMPOSITES:
        info = OPS_BY_NAME[name]
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        for k, s in enumerate(info.sample_inputs("float64", rng)):
            if (name, s.name) not in SKIP and k < 2:
                out.append(pytest.param(name, s, k == 0, id=f"{name}-{s.name}"))
    return out


@pytest.mark.parametrize(("name", "sample", "second"), _cases())
def test_gradcheck(name: str, sample: SampleInput, second: bool) -> None:
    info = OPS_BY_NAME[name]
    args = [_leaf(a) for a in sample.args]
    kwargs = {k: _leaf(v) for k, v in sample.kwargs.items()}
    leaves = _flat(args, kwargs)
    if not leaves:
        pytest.skip("no floating input")
    op = info.aten()

    def fn(*xs: Any) -> Any:
        it = iter(xs)

        def put(v: Any) -> Any:
            if isinstance(v, list):
                return [put(t) for t in v]
            return next(it) if isinstance(v, tp.Tensor) and v.requires_grad else v

        r = op(*[put(a) for a in args], **{k: put(v) for k, v in kwargs.items()})
        return tuple(r) if isinstance(r, (list, tuple)) else r

    assert tp.autograd.gradcheck(fn, tuple(leaves))
    if second:
        assert tp.autograd.gradgradcheck(fn, tuple(leaves))
