"""``tensorplug::linear_forward`` (Note [tensorplug operators] in _opset/own_ops.py): ``aten::linear``'s
value in one kernel, bit for bit against the decomposition (``addmm(b, x, w.t())``, ``mm``,
``matmul`` and ``add``) and against a float64 numpy oracle; and ``tp.linear`` with grad, whose
autograd node computes its forward with it (Note [Linear forward] in array_backend/_linalg.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.testing.opinfo import ml_dtypes
from tests import needs

OP = tp.ops.tensorplug.linear_forward.default
_aten = tp.ops.aten
DTYPES = ["float16", "float32", "float64"] + (["bfloat16"] if ml_dtypes is not None else [])


def composed(x: Any, w: Any, b: Any) -> Any:
    """linear's decomposition, each part through the dispatcher."""
    wt = _aten.t.default(w)
    if b is not None and x.ndim == 2:
        return _aten.addmm.default(b, x, wt)
    out = _aten.mm.default(x, wt) if x.ndim == 2 and w.ndim == 2 else _aten.matmul.default(x, wt)
    return out if b is None else _aten.add.Tensor(out, b)


def cases(dtype: str) -> Any:
    rng = np.random.default_rng(2)
    d = getattr(tp, dtype)

    def t(*shape: int) -> Any:
        return tp.tensor(rng.standard_normal(shape)).to(d)

    w = t(10, 128)
    for x in (t(64, 128), t(3, 64, 128), t(128), t(0, 128)):  # 2-D, batched, one row, empty
        yield x, w, t(10)
        yield x, w, None
    yield t(64, 128), w, t(64, 10)  # a bias shaped like the result
    yield t(64, 128), w, t(1)  # broadcast
    yield t(128, 64).t(), t(128, 10).t(), t(10)  # neither contiguous
    yield t(4, 5), t(5), None  # a vector weight


def bits(t: Any) -> bytes:
    return np.ascontiguousarray(t.detach().to(tp.float64).numpy()).tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
def test_against_the_decomposition_bit_for_bit_and_numpy(dtype: str) -> None:
    tol = {"float64": 1e-12, "float32": 1e-4, "float16": 5e-2, "bfloat16": 0.5}[dtype]
    for x, w, b in cases(dtype):
        got = OP(x, w, b)
        want = composed(x, w, b)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert bits(got) == bits(want), (tuple(x.shape), tuple(w.shape), b is None)
        ref = x.to(tp.float64).numpy() @ w.to(tp.float64).numpy().T
        if b is not None:
            ref = ref + b.to(tp.float64).numpy()
        np.testing.assert_allclose(got.to(tp.float64).numpy(), ref, rtol=tol, atol=tol)


@needs.needs_autograd
@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_with_grad_gives_the_decompositions_bits(dtype: str) -> None:
    # the autograd node's forward (this operator) against linear without grad (the
    # CompositeImplicitAutograd kernel) and addmm(b, x, w.t())
    for x, w, b in cases(dtype):
        if w.ndim != 2:
            continue
        plain = tp.linear(x, w, b)
        wg = w.detach().requires_grad_()
        got = tp.linear(x, wg, b)
        assert got.grad_fn.name() == "LinearBackward0"
        assert bits(got) == bits(plain) == bits(composed(x, w, b))
        if x.ndim == 2 and b is not None:
            assert bits(got) == bits(tp.addmm(b, x, w.t()))


def test_meta_runs_the_composite() -> None:
    x, w, b = (tp.empty(*s, device="meta") for s in ((2, 7, 3), (5, 3), (5,)))
    assert tp.dispatcher.dispatch_table("tensorplug::linear_forward")["Meta"] == (
        "CompositeExplicitAutograd"
    )
    out = OP(x, w, b)
    assert out.device.type == "meta" and tuple(out.shape) == (2, 7, 5)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_errors_name_the_parts_as_the_decomposition(device: str) -> None:
    def z(*shape: int, dtype: Any = tp.float32) -> Any:
        return tp.zeros(*shape, dtype=dtype, device=device)

    with pytest.raises(RuntimeError, match=r"^aten::addmm: mat1 and mat2 shapes cannot be mul"):
        OP(z(4, 3), z(5, 2), z(5))
    # without a bias: mm, as the autograd node always called it; Meta's composite, linear's
    # own, calls matmul
    mm = "mm" if device == "cpu" else "matmul"
    with pytest.raises(RuntimeError, match=rf"^aten::{mm}: mat1 and mat2 shapes cannot be mul"):
        OP(z(4, 3), z(5, 2))
    with pytest.raises(RuntimeError, match=r"^aten::matmul: mat1 and mat2 shapes cannot be mul"):
        OP(z(2, 4, 3), z(5, 2))
    with pytest.raises(RuntimeError, match=r"^aten::t.default: t\(\) expects a tensor with <= 2"):
        OP(z(4, 3), z(2, 5, 3))
    with pytest.raises(RuntimeError, match=r"^aten::add.Tensor: The size of tensor a \(5\)"):
        OP(z(2, 4, 3), z(5, 3), z(4))
    with pytest.raises(RuntimeError, match=r"^aten::addmm: expected m1 and m2 to have the same"):
        OP(z(4, 3), z(5, 3, dtype=tp.float64), z(5))


@needs.needs_autograd
def test_linear_with_grad_keeps_its_errors() -> None:
    # the node's forward raises what linear's decomposition raised before it
    w = tp.zeros(5, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^aten::addmm: mat1 and mat2 shapes cannot be mul"):
        tp.linear(tp.zeros(4, 3), w, tp.zeros(5))
    with pytest.raises(RuntimeError, match=r"^aten::mm: mat1 and mat2 shapes cannot be mul"):
        tp.linear(tp.zeros(4, 3), w)
    with pytest.raises(RuntimeError, match=r"^aten::matmul: mat1 and mat2 shapes cannot be mul"):
        tp.linear(tp.zeros(2, 4, 3), w, tp.zeros(5))
