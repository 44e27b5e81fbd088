"""tensorplug.special: coverage of torch.special by name, the special-function namespace a
backend hands the kit (and the error without one), gradients, and torch parity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp

NAMES = Path(__file__).parent / "data" / "torch_special_names.txt"


def test_coverage_of_torch_special() -> None:
    names = [n for n in NAMES.read_text().splitlines() if n and not n.startswith("#")]
    have = [n for n in names if callable(getattr(tp.special, n, None))]
    print(f"torch.special coverage: {len(have)} of {len(names)}")
    assert len(names) == 56
    assert sorted(set(names) - set(have)) == []


def test_top_level_aliases() -> None:
    for name in ("erfinv", "lgamma", "digamma", "polygamma", "i0", "sinc", "xlogy", "logit",
                 "erfc", "igamma", "igammac", "mvlgamma", "softmax", "log_softmax", "round"):  # fmt: skip
        assert callable(getattr(tp, name)), name


def test_a_backend_without_a_special_namespace_says_so() -> None:
    from tensorplug.array_backend import _special

    class Kit:
        key_name = "Toy"
        special = None

    with pytest.raises(
        tp.array_backend.OpError, match=r"i0e is not supported by this backend \(Toy\)"
    ):
        _special.special_function(Kit(), "i0e")  # type: ignore[arg-type]
    Kit.special = object()
    with pytest.raises(tp.array_backend.OpError, match="has no i0e"):
        _special.special_function(Kit(), "i0e")  # type: ignore[arg-type]


def test_the_message_names_the_op_and_the_backend() -> None:
    """Through the kit's error conversion (what register wraps every kernel in): the
    RuntimeError names the operator and the backend."""
    from tensorplug.array_backend import _special
    from tensorplug.array_backend._checks import guard

    class Kit:
        key_name = "Toy"
        special = None

    kernel = guard("special_i0e", lambda: _special.special_function(Kit(), "i0e"), "Toy")  # type: ignore[arg-type]
    with pytest.raises(
        RuntimeError, match=r"aten::special_i0e: i0e is not supported by this backend \(Toy\)"
    ):
        kernel()


def test_gradcheck() -> None:
    def x(lo: float, hi: float) -> tp.Tensor:
        return (tp.rand(4, dtype=tp.float64) * (hi - lo) + lo).requires_grad_()

    s = tp.special
    for f, args in (
        (tp.lgamma, [x(0.5, 3)]), (tp.digamma, [x(0.5, 3)]), (lambda t: tp.polygamma(2, t), [x(0.5, 3)]),
        (tp.erfinv, [x(-0.9, 0.9)]), (tp.erfc, [x(-2, 2)]), (tp.i0, [x(-2, 2)]), (s.i0e, [x(-2, 2)]),
        (s.i1, [x(-2, 2)]), (s.i1e, [x(-2, 2)]), (tp.xlogy, [x(-2, 2), x(0.5, 3)]),
        (s.xlog1py, [x(-2, 2), x(0.5, 3)]), (lambda q: s.zeta(3.0, q), [x(0.5, 3)]),
        (lambda q: tp.igamma(tp.full([4], 1.5, dtype=tp.float64), q), [x(0.5, 3)]),
        (lambda t: tp.mvlgamma(t, 3), [x(2, 4)]), (s.entr, [x(0.1, 2)]), (s.ndtri, [x(0.1, 0.9)]),
        (s.log_ndtr, [x(-3, 3)]), (s.erfcx, [x(-2, 2)]), (tp.sinc, [x(-2, 2)]),
    ):  # fmt: skip
        assert tp.autograd.gradcheck(f, args)
    assert tp.autograd.gradgradcheck(tp.lgamma, [x(0.5, 3)])


def test_not_implemented_derivatives() -> None:
    a = tp.rand(3, dtype=tp.float64).add(0.5).requires_grad_()
    with pytest.raises(
        NotImplementedError, match="the derivative for 'igamma: input' is not implemented"
    ):
        tp.igamma(a, a.detach()).sum().backward()
    assert not tp.special.bessel_j0(a).requires_grad


def test_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.linspace(0.1, 3, 7)
    for name in ("i0e", "i1", "ndtri", "log_ndtr", "bessel_y1", "modified_bessel_k1", "airy_ai",
                 "spherical_bessel_j0", "entr", "erfcx", "gammaln", "digamma", "sinc"):  # fmt: skip
        arg = x / 4 if name == "ndtri" else x
        want = getattr(torch.special, name)(torch.tensor(arg)).numpy()
        got = getattr(tp.special, name)(tp.tensor(arg)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)
    for name in ("chebyshev_polynomial_v", "hermite_polynomial_h", "laguerre_polynomial_l"):
        n = np.array([0, 1, 2, 5, 7, -1, 3.0])
        want = getattr(torch.special, name)(torch.tensor(x / 3), torch.tensor(n)).numpy()
        got = getattr(tp.special, name)(tp.tensor(x / 3), tp.tensor(n)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, err_msg=name)
