"""tp.compile's raw lowered calls (Note [Raw lowered calls] in the tracer's codegen.py, Note
[Raw lowerings] in the core's array_backend/_kit.py): training steps in every form bitwise
equal to eager execution, with the same version counters and gradient layouts; the fused
matmul + add; the kernel's fallback where a raw call meets values its fast path refuses."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.tracer()
needs.autograd()


def _data(seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((8, 12), dtype=np.float32)
    y = rng.integers(0, 5, 8)
    w1 = (rng.standard_normal((6, 12)) * 0.3).astype(np.float32)
    b1 = (rng.standard_normal(6) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((5, 6)) * 0.3).astype(np.float32)
    b2 = (rng.standard_normal(5) * 0.1).astype(np.float32)
    return x, y, w1, b1, w2, b2


def _step(model: str, grad: str, opt: str):
    xn, yn, *pn = _data()
    x, y = tp.tensor(xn), tp.tensor(yn)
    params = [tp.tensor(p, requires_grad=True) for p in pn]
    w1, b1, w2, b2 = params
    f = tp.nn.functional
    if opt == "SGD":
        o = tp.optim.SGD(params, lr=0.1, momentum=0.9)
    elif opt == "Adam":
        o = tp.optim.Adam(params, lr=1e-2)
    else:
        o = tp.optim.AdamW(params, lr=1e-2)

    def step():
        if model == "F.linear":
            z = f.linear(f.linear(x, w1, b1).relu(), w2, b2)
        else:
            z = tp.relu(x @ w1.T + b1) @ w2.T + b2
        loss = f.cross_entropy(z, y)
        if grad == "backward()":
            o.zero_grad()
            loss.backward()
        else:
            for p, g in zip(params, tp.autograd.grad(loss, params), strict=True):
                p.grad = g
        o.step()
        return loss.detach()

    return step, params


FORMS = [
    ("F.linear", "backward()", "SGD"),
    ("@ and +", "backward()", "Adam"),
    ("@ and +", "autograd.grad", "SGD"),
    ("F.linear", "autograd.grad", "AdamW"),
]


@pytest.mark.parametrize("form", FORMS, ids=["/".join(f) for f in FORMS])
def test_compiled_step_equals_eager_bit_for_bit(form: tuple[str, str, str]) -> None:
    eager, pe = _step(*form)
    fn, pc = _step(*form)
    compiled = tp.compile(fn)
    for _ in range(5):
        assert np.array_equal(compiled().numpy(), eager().numpy())
    assert len(compiled.graphs) == 1 and compiled.trace_count == 3  # the last two lowered
    for a, b in zip(pc, pe, strict=True):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
        assert np.array_equal(a.grad.numpy(), b.grad.numpy())
        assert a.grad.stride() == b.grad.stride()
        assert a._version == b._version
        assert a.grad._version == b.grad._version


def _lowered_source(compiled) -> str:
    (entry,) = compiled._cache.values()
    return entry.run.__source__


def test_the_step_runs_on_arrays() -> None:
    fn, _ = _step("F.linear", "backward()", "SGD")
    compiled = tp.compile(fn)
    for _ in range(4):
        compiled()
    src = _lowered_source(compiled)
    # every node but the last detach (its tensor is the output: a view the kernel makes)
    kernel_calls = [
        ln for ln in src.splitlines() if ln.strip().startswith(("v", "r")) and "= f" in ln
    ]
    assert len(kernel_calls) == 1 and "L0(" in src
    assert "tp_data" in src and "_new(" in src


def test_matmul_and_add_become_addmm() -> None:
    fn, _ = _step("@ and +", "backward()", "SGD")
    compiled = tp.compile(fn)
    for _ in range(4):
        compiled()
    names = [n.op.name for n in compiled.graphs[0].nodes]
    assert names.count("aten::addmm.default") == 2
    assert "aten::matmul.default" not in names[:6]  # the forward's products are fused


def test_no_fusion_where_the_add_is_not_a_bias() -> None:
    # the product is read twice: it stays
    a, b = tp.randn(3, 4), tp.randn(4, 5)

    def f(a, b):
        p = a @ b
        return p + tp.ones(5), p * 2

    compiled = tp.compile(f)
    for _ in range(3):
        r = compiled(a, b)
    names = [n.op.name for n in compiled.graphs[0].nodes]
    assert "aten::addmm.default" not in names
    assert np.array_equal(r[0].numpy(), f(a, b)[0].numpy())


def test_a_raw_call_falls_back_to_the_kernel_on_values() -> None:
    # nll_loss's fast path checks its targets' values on every call: a target past the last
    # class reaches the kernel, which raises as in eager execution
    x = tp.randn(4, 3)

    def f(x, t):
        return tp.nn.functional.nll_loss(x.log_softmax(1), t)

    compiled = tp.compile(f)
    good = tp.tensor([0, 1, 2, 1])
    for _ in range(3):
        assert np.array_equal(compiled(x, good).numpy(), f(x, good).numpy())
    assert "L0(" in _lowered_source(compiled)
    bad = tp.tensor([0, 1, 3, 1])
    with pytest.raises(IndexError) as eager_error:
        f(x, bad)
    with pytest.raises(IndexError) as compiled_error:
        compiled(x, bad)
    assert str(compiled_error.value) == str(eager_error.value)
    ignored = tp.tensor([0, -100, 2, 1])  # the kernel's general path: the ignored target
    assert np.array_equal(compiled(x, ignored).numpy(), f(x, ignored).numpy())


def test_raw_in_place_write_bumps_the_version_once() -> None:
    def f(x, y):
        x.add_(y * 2)
        return x.sum(0)

    xe, xc = tp.ones(3, 2), tp.ones(3, 2)
    y = tp.randn(3, 2)
    compiled = tp.compile(f)
    for _ in range(4):
        assert np.array_equal(compiled(xc, y).numpy(), f(xe, y).numpy())
    assert np.array_equal(xc.numpy(), xe.numpy())
    assert xc._version == xe._version == 4
