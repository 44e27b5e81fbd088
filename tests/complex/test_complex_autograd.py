"""Complex autograd with PyTorch's conjugate Wirtinger convention: gradcheck and gradgradcheck of
every case of cases.py on complex inputs, their gradients against PyTorch's (frozen by
tools/gen_complex_grads.py, and torch itself where installed), the engine's rules for complex
roots and real inputs, autocast leaving complex alone under autograd, and a spectral model's
SGD trajectory."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp

from . import cases

pytest.importorskip("tensorplug_autograd")
from tensorplug_autograd.gradcheck import GradcheckError  # noqa: E402

DATA = Path(__file__).parent / "data"


def _inputs(name: str) -> list[tp.Tensor]:
    return [tp.tensor(a).requires_grad_() for a in cases.input_arrays(name)]


@pytest.mark.parametrize("name", list(cases.CASES))
def test_gradcheck(name: str) -> None:
    fn = cases.CASES[name][0]
    assert tp.autograd.gradcheck(lambda *xs: fn(tp, *xs), tuple(_inputs(name)))


@pytest.mark.parametrize("name", cases.SECOND_ORDER)
def test_gradgradcheck(name: str) -> None:
    fn = cases.CASES[name][0]
    assert tp.autograd.gradgradcheck(lambda *xs: fn(tp, *xs), tuple(_inputs(name)))


@pytest.fixture(scope="module")
def frozen() -> dict[str, np.ndarray]:
    with np.load(DATA / "complex_grads.npz") as f:
        return dict(f)


@pytest.mark.parametrize("name", list(cases.CASES))
def test_gradients_match_frozen_torch(name: str, frozen: dict[str, np.ndarray]) -> None:
    outs, grads = cases.run(tp, name)
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o, frozen[f"{name}/out{i}"], rtol=1e-7, atol=1e-10)
    for i, (g, x) in enumerate(zip(grads, cases.input_arrays(name), strict=True)):
        want = frozen[f"{name}/grad{i}"]
        # a real input's gradient is real (PyTorch's handle_r_to_c), a complex one's complex
        assert np.iscomplexobj(g) == np.iscomplexobj(x) == np.iscomplexobj(want), (name, i)
        np.testing.assert_allclose(g, want, rtol=1e-7, atol=1e-10, err_msg=f"{name} input {i}")


def test_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    for name in cases.CASES:
        mine, theirs = cases.run(tp, name), cases.run(torch, name)
        for a, b in zip(mine[0] + mine[1], theirs[0] + theirs[1], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=name)


# --- the engine's rules ------------------------------------------------------------------------


def _z(values: list[complex]) -> tp.Tensor:
    return tp.tensor(np.array(values, dtype=np.complex128)).requires_grad_()


def test_convention_is_pytorchs() -> None:
    # L = |z|^2 = x^2 + y^2: dL/dx + i dL/dy = 2z
    z = _z([1 + 2j, -0.5j])
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [2 + 4j, -1j])
    assert z.grad.dtype == tp.complex128


def test_complex_root_needs_a_gradient() -> None:
    z = _z([1 + 2j])
    with pytest.raises(RuntimeError, match="implicitly created only for real scalar outputs"):
        z.sum().backward()
    with pytest.raises(RuntimeError, match="implicitly created only for real scalar outputs"):
        tp.autograd.grad(z.sum() * 2, z)
    (g,) = tp.autograd.grad(z.sum() * 2, z, tp.tensor(1j, dtype=tp.complex128))
    np.testing.assert_allclose(g.numpy(), [2j])


def test_real_leaf_through_complex_values_gets_a_real_gradient() -> None:
    x = tp.tensor([0.5, 2.0], dtype=tp.float64, requires_grad=True)
    w = _z([1 + 1j, 2 - 1j])
    (x * w).abs().sum().backward()
    assert x.grad.dtype == tp.float64 and w.grad.dtype == tp.complex128
    xn, wn = np.array([0.5, 2.0]), np.array([1 + 1j, 2 - 1j])
    np.testing.assert_allclose(x.grad.numpy(), np.abs(wn))
    np.testing.assert_allclose(w.grad.numpy(), xn * wn / np.abs(wn))


def test_in_place_writes_through_complex_views() -> None:
    """view_as_real, .real and .imag written in place inside the graph; PyTorch's gradient."""
    c = _z([1 + 2j, 3 - 1j, -0.5 + 0.25j])
    z = c * 1
    r = tp.view_as_real(z)
    r[..., 0].mul_(2)
    z.real.add_(1)
    w = z * (2 - 1j)
    w.imag.mul_(3)
    ((w.abs() ** 2).sum() + tp.fft.fft(z).real.sum()).backward()
    np.testing.assert_allclose(c.grad.numpy(), [34 + 52j, 428 - 298j, -16 + 18.5j])


def test_gradcheck_fails_on_a_missing_conjugate() -> None:
    class HolomorphicMulWithoutConj(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):  # type: ignore[no-untyped-def]
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            x, y = ctx.saved_tensors
            return g * y, g * x  # the real formula: wrong for complex inputs

    a, b = _z([1 + 2j, 3 - 1j]), _z([0.5j, -2 + 1j])
    with pytest.raises(GradcheckError, match="real and imaginary parts"):
        tp.autograd.gradcheck(HolomorphicMulWithoutConj.apply, (a, b))
    assert tp.autograd.gradcheck(lambda x, y: x * y, (a, b))


def test_autocast_leaves_complex_alone_under_autograd() -> None:
    pytest.importorskip("tensorplug_autocast")
    z = tp.tensor(np.array([[1 + 1j, 2], [0.5j, -1]], dtype=np.complex64), requires_grad=True)
    w = tp.ones(2, 2, requires_grad=True)
    with tp.autocast("cpu", dtype=tp.bfloat16):
        y = z @ z  # complex: not eligible, stays complex64
        r = w @ w  # float32: bfloat16, as usual
        assert y.dtype == tp.complex64 and r.dtype == tp.bfloat16
        f = tp.fft.fft(z)  # fft_* run in float32 on CPU: complex64 stays complex64
        assert f.dtype == tp.complex64
    (y.abs().sum() + f.abs().sum()).backward()
    assert z.grad.dtype == tp.complex64


def test_spectral_model_matches_torch_trajectory() -> None:
    want = json.loads((DATA / "spectral.json").read_text(encoding="utf-8"))
    losses, model = cases.train_spectral(tp)
    np.testing.assert_allclose(losses, want["losses"], rtol=1e-5)
    for k, v in model.state_dict().items():
        expected = want["state_dict"][k]
        if v.dtype.is_complex:
            expected = np.array(expected[0]) + 1j * np.array(expected[1])
        np.testing.assert_allclose(v.numpy(), expected, rtol=1e-4, atol=1e-6, err_msg=k)


FORWARD = (
    "mul", "mul_real_complex", "div", "exp", "log", "sin", "tanh", "sqrt", "abs", "angle", "sgn",
    "conj", "real_imag", "view_as_real", "view_as_complex", "complex", "polar", "to_complex",
    "sum", "prod", "mm", "matmul", "fft", "rfft", "irfft", "fft2", "inv", "solve",
)  # fmt: skip


def _real_dot(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.real(np.sum(np.conj(a) * b)))


@pytest.mark.parametrize("name", FORWARD)
def test_forward_mode_tangent_is_the_adjoint_of_the_gradient(name: str) -> None:
    """The dot-product test in the real inner product: <u, J v> = <J^T u, v> (J^T u: the
    gradients of reverse mode, checked above against PyTorch's)."""
    import tensorplug.autograd.forward_ad as fwAD

    fn = cases.CASES[name][0]
    xs = cases.input_arrays(name)
    rng = np.random.default_rng(3)
    vs = [
        rng.standard_normal(x.shape)
        + (1j * rng.standard_normal(x.shape) if np.iscomplexobj(x) else 0)
        for x in xs
    ]  # noqa: E501
    outs, grads = cases.run(tp, name)  # J^T u, u = cases.grad_output_arrays
    us = cases.grad_output_arrays(name, outs)
    with fwAD.dual_level():
        duals = [fwAD.make_dual(tp.tensor(x), tp.tensor(v)) for x, v in zip(xs, vs, strict=True)]
        tangents = [fwAD.unpack_dual(o).tangent for o in cases.as_tuple(fn(tp, *duals))]
    lhs = sum(
        _real_dot(u, t.resolve_conj().numpy())
        for u, t in zip(us, tangents, strict=True)
        if t is not None
    )
    rhs = sum(_real_dot(g, v) for g, v in zip(grads, vs, strict=True))
    assert np.isclose(lhs, rhs, rtol=1e-9, atol=1e-9), (lhs, rhs)
