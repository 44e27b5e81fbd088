"""tp.autograd.functional (functional.py; torch.autograd.functional, PyTorch 2.13): values
against closed forms and torch, return structures (a tuple where a tuple was given, a tensor
where one was), strategies, create_graph, strict mode and every error with PyTorch's message."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()

import tensorplug.autograd.functional as AF  # noqa: E402

DATA = json.loads((Path(__file__).parent / "data" / "forward_ad.json").read_text())


def close(a, b, tol=1e-9):
    a = np.asarray(a.tolist()) if isinstance(a, tp.Tensor) else np.asarray(a)
    b = np.asarray(b.tolist()) if isinstance(b, tp.Tensor) else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


rng = np.random.default_rng(2)


def r(*shape):
    return tp.tensor(rng.standard_normal(shape))


def f2(a, b):
    return a.sin().sum() * b, a * 2


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"vectorize": True},
        {"strategy": "forward-mode"},
        {"strategy": "forward-mode", "vectorize": True},
        {"create_graph": True},
    ],
)
def test_jacobian_structures_and_values(kwargs):
    x, y = r(3), r(2)
    jac = AF.jacobian(f2, (x, y), **kwargs)
    assert isinstance(jac, tuple) and len(jac) == 2 and all(len(j) == 2 for j in jac)
    close(jac[0][0], np.outer(y.numpy(), np.cos(x.numpy())))
    close(jac[0][1], np.eye(2) * np.sin(x.numpy()).sum())
    close(jac[1][0], 2 * np.eye(3))
    close(jac[1][1], np.zeros((3, 2)))
    single = AF.jacobian(tp.sin, x, **kwargs)
    assert isinstance(single, tp.Tensor)
    close(single, np.diag(np.cos(x.numpy())))
    one_out = AF.jacobian(lambda a: (a.exp(),), x, **kwargs)
    assert isinstance(one_out, tuple) and isinstance(one_out[0], tp.Tensor)
    in_tuple = AF.jacobian(lambda a: a.exp(), (x,), **kwargs)
    assert isinstance(in_tuple, tuple) and isinstance(in_tuple[0], tp.Tensor)
    assert single.requires_grad == bool(kwargs.get("create_graph"))


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_hessian(strategy):
    x = r(3)
    h = AF.hessian(lambda a: (a**3).sum() * a[0], x, outer_jacobian_strategy=strategy)
    xn = x.numpy()
    want = np.diag(6 * xn * xn[0])
    want[0, :] += 3 * xn**2
    want[:, 0] += 3 * xn**2
    close(h, want)
    hh = AF.hessian(lambda a, b: (a * b).sum(), (x, x))
    assert len(hh) == 2 and len(hh[0]) == 2
    close(hh[0][1], np.eye(3))


def test_vjp_jvp_hvp_vhp():
    x, v = r(3), r(3)
    xn, vn = x.numpy(), v.numpy()
    out, g = AF.vjp(tp.sin, x, v)
    close(out, np.sin(xn))
    close(g, np.cos(xn) * vn)
    out, t = AF.jvp(tp.sin, x, v)
    close(t, np.cos(xn) * vn)
    f = lambda a: (a**3).sum()  # noqa: E731
    out, hv = AF.hvp(f, x, v)
    close(out, (xn**3).sum())
    close(hv, 6 * xn * vn)
    close(AF.vhp(f, x, v)[1], 6 * xn * vn)
    # tuples in, tuples out; v may be omitted for one-element inputs or outputs
    o, (ga, gb) = AF.vjp(lambda a, b: (a * b).sum(), (x, x))
    close(ga, xn)
    _, (ha, hb) = AF.hvp(lambda a, b: (a * a * b).sum(), (x, x), (v, v))
    close(ha, 2 * xn * vn + 2 * xn * vn)
    one = tp.tensor([0.5], dtype=tp.float64)
    close(AF.jvp(tp.exp, one)[1], np.exp([0.5]))
    _, g = AF.vjp(tp.sin, x, v, create_graph=True)
    assert g.requires_grad


def test_committed_torch_values():
    case = DATA["mlp_loss"]
    fn = eval(case["expr"], {"T": tp})  # noqa: S307  (tools/gen_forward_ad.py's text)
    xs = [tp.tensor(np.asarray(a)) for a in case["inputs"]]
    v = tp.tensor(np.asarray(case["tangents"][0]))
    _, hv = AF.hvp(lambda x0: fn(x0, *xs[1:]), xs[0], v)
    close(hv, case["hvp0"])
    close(AF.hessian(lambda x0: fn(x0, *xs[1:]), xs[0]), case["hessian0"])


def test_against_torch():
    torch = pytest.importorskip("torch")
    import torch.autograd.functional as TAF

    x, v = r(2, 3), r(2, 3)
    g = lambda T: lambda a: (T.tanh(a) * a.sum(1, keepdim=True)).exp().sum()  # noqa: E731
    tx, tv = torch.tensor(x.numpy()), torch.tensor(v.numpy())
    close(AF.hessian(g(tp), x), TAF.hessian(g(torch), tx).numpy())
    close(AF.vhp(g(tp), x, v)[1], TAF.vhp(g(torch), tx, tv)[1].numpy())
    h = lambda T: lambda a: T.softmax(a, 1) * a  # noqa: E731
    close(
        AF.jacobian(h(tp), x, strategy="forward-mode", vectorize=True),
        TAF.jacobian(h(torch), tx, strategy="forward-mode", vectorize=True).numpy(),
    )


def test_errors():
    x = r(3)
    with pytest.raises(
        TypeError,
        match="The inputs given to vjp must be either a Tensor or a tuple of Tensors but the given inputs has type <class 'int'>",
    ):
        AF.vjp(tp.sin, 3, 3)
    with pytest.raises(TypeError, match="but the value at index 1 has type"):
        AF.vjp(lambda a, b: a, (x, 3))
    with pytest.raises(
        TypeError,
        match="The outputs of the user-provided function given to jacobian must be either a Tensor",
    ):
        AF.jacobian(lambda a: 3, x)
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be \[3\] but got \[4\]"):
        AF.vjp(tp.sin, x, r(4))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but got 1"):
        AF.jvp(lambda a, b: a, (x, x), (x,))
    with pytest.raises(
        RuntimeError,
        match="The vector v can only be None if the user-provided function returns a single Tensor with a single element",
    ):
        AF.vjp(tp.sin, x)
    with pytest.raises(
        RuntimeError,
        match="The vector v can only be None if the input to the user-provided function is a single Tensor with a single element",
    ):
        AF.jvp(tp.sin, x)
    with pytest.raises(
        RuntimeError,
        match="The Tensor returned by the function given to hvp should contain a single element",
    ):
        AF.hvp(lambda a: a, x, x)
    with pytest.raises(
        RuntimeError, match="The function given to vhp should return a single Tensor"
    ):
        AF.vhp(lambda a: (a.sum(),), x, x)
    with pytest.raises(
        RuntimeError,
        match="The Tensor returned by the function given to hessian should contain a single element",
    ):
        AF.hessian(lambda a: a.sum() * a, x)
    with pytest.raises(
        AssertionError,
        match='Expected strategy to be either "forward-mode" or "reverse-mode". Hint',
    ):
        AF.jacobian(tp.sin, x, strategy="bad")
    with pytest.raises(
        AssertionError, match='Expected strategy to be either "forward-mode" or "reverse-mode".'
    ):
        AF.hessian(lambda a: a.sum(), x, outer_jacobian_strategy="bad")
    with pytest.raises(
        NotImplementedError,
        match='`create_graph=True` and `strategy="forward-mode"` are not supported together',
    ):
        AF.jacobian(tp.sin, x, strategy="forward-mode", create_graph=True)
    with pytest.raises(
        RuntimeError, match="`strict=True` and `vectorized=True` are not supported together"
    ):
        AF.jacobian(tp.sin, x, strict=True, vectorize=True)


def test_strict_mode():
    x = r(3)
    msg = "Output 0 of the user-provided function does not require gradients"
    with pytest.raises(RuntimeError, match=msg):
        AF.jacobian(lambda a: tp.ones(3), x, strict=True)
    close(AF.jacobian(lambda a: tp.ones(3), x), np.zeros((3, 3)))
    with pytest.raises(RuntimeError, match=msg):
        AF.vjp(lambda a: a.detach(), x, x, strict=True)
    with pytest.raises(
        RuntimeError, match="The output of the user-provided function is independent of input 1"
    ):
        AF.vjp(lambda a, b: a * 2, (x, x), x, strict=True)
    with pytest.raises(
        RuntimeError,
        match="found that the jacobian of the user-provided function with respect to input 0 is independent of the input",
    ):
        AF.vhp(lambda a: a.sum(), x, x, strict=True)
    with pytest.raises(
        RuntimeError, match="Output 0 of the user-provided function is independent of input 1"
    ):
        AF.jacobian(lambda a, b: a * 2, (x, x), strict=True)


def test_vectorized_forward_mode_without_the_batched_plugin():
    x = r(3)
    with needs.unloaded("batched"):
        jac = AF.jacobian(tp.sin, x, strategy="forward-mode", vectorize=True)
    close(jac, np.diag(np.cos(x.numpy())))
