"""Complex numbers: views that write through, eager conj, complex arithmetic against numpy,
autocast leaving complex tensors alone, and torch parity where torch is importable."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp


def _z() -> tp.Tensor:
    return tp.complex(tp.tensor([1.0, 2.0, 3.0]), tp.tensor([4.0, 5.0, 6.0]))


def test_view_as_real_and_complex_write_through() -> None:
    z = _z()
    r = tp.view_as_real(z)
    assert r.shape == (3, 2) and r.dtype == tp.float32
    v0 = z._version
    r[1, 1] = -1.0
    assert z.tolist()[1] == 2 - 1j
    assert z._version == v0 + 1  # one version counter
    x = tp.zeros(2, 2)
    c = tp.view_as_complex(x)
    c.fill_(3 + 4j)
    assert x.tolist() == [[3.0, 4.0], [3.0, 4.0]]


def test_real_and_imag_are_views_and_settable() -> None:
    z = _z()
    z.real = 0.0
    z.imag[0] = 9.0
    assert z.tolist() == [9j, 5j, 6j]
    assert tp.real(tp.ones(2)).dtype == tp.float32
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex"):
        tp.imag(tp.ones(2))


def test_view_as_complex_checks() -> None:
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        tp.view_as_complex(tp.ones(3, 3))
    with pytest.raises(RuntimeError, match="last dimension with stride 1"):
        tp.view_as_complex(tp.ones(2, 4).t())
    with pytest.raises(RuntimeError, match="only supported for float and double"):
        tp.view_as_complex(tp.ones(3, 2, dtype=tp.int64))
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex tensors"):
        tp.view_as_real(tp.ones(2))


def test_conj_is_an_eager_copy() -> None:
    z = _z()
    c = tp.conj(z)
    assert c.tolist() == [1 - 4j, 2 - 5j, 3 - 6j]
    assert not c.is_conj() and tp.resolve_conj(c) is c
    c.fill_(0)
    assert z.tolist()[0] == 1 + 4j  # a copy: z is unchanged
    x = tp.ones(2)
    assert tp.conj(x) is x


def test_complex_arithmetic_matches_numpy() -> None:
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    b = (rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))).astype(np.complex64)
    ta, tb = tp.tensor(a), tp.tensor(b)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-5)
    np.testing.assert_allclose((ta * ta).exp().numpy(), np.exp(a * a), rtol=1e-5)
    np.testing.assert_allclose(tp.angle(ta).numpy(), np.angle(a), rtol=1e-6)
    np.testing.assert_allclose(tp.polar(ta.abs(), tp.angle(ta)).numpy(), a, rtol=1e-5, atol=1e-6)


def test_autocast_leaves_complex_alone() -> None:
    pytest.importorskip("tensorplug_autocast")
    z = _z().reshape(3, 1)
    with tp.autocast("cpu", dtype=tp.bfloat16):
        assert (z @ z.t()).dtype == tp.complex64
        assert (tp.ones(2, 2) @ tp.ones(2, 2)).dtype == tp.bfloat16


def test_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.arange(12.0).reshape(3, 2, 2)
    assert np.array_equal(
        tp.view_as_complex(tp.tensor(x)).numpy(), torch.view_as_complex(torch.tensor(x)).numpy()
    )
    c = np.array([1 + 2j, -3 + 0.5j])
    for name in ("angle", "conj_physical"):
        np.testing.assert_allclose(
            getattr(tp, name)(tp.tensor(c)).numpy(), getattr(torch, name)(torch.tensor(c)).numpy()
        )
    np.testing.assert_allclose(
        tp.angle(tp.tensor([-1.0, 0.0, 2.0])).numpy(),
        torch.angle(torch.tensor([-1.0, 0.0, 2.0])).numpy(),
    )


def test_conjugate_transposes() -> None:
    z = tp.tensor(np.arange(12).reshape(2, 3, 2) * (1 + 2j))
    want = np.conj(np.swapaxes(z.numpy(), -1, -2))
    np.testing.assert_array_equal(z.mH.numpy(), want)
    np.testing.assert_array_equal(z.adjoint().numpy(), want)
    np.testing.assert_array_equal(z[0].H.numpy(), want[0])
    x = tp.ones(2, 3)
    assert x.mH.shape == (3, 2) and x.mH.dtype == tp.float32
    with pytest.raises(RuntimeError, match=r"tensor.H is only supported on matrices \(2-D"):
        z.H
