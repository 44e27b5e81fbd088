"""tensorplug.fft: coverage of torch.fft by name, PyTorch's errors, the kernels' refusal on a
namespace without the fft extension, and agreement with torch where it is importable."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp

NAMES = Path(__file__).parent / "data" / "torch_fft_names.txt"


def _frozen() -> list[str]:
    return [n for n in NAMES.read_text().splitlines() if n and not n.startswith("#")]


def test_coverage_of_torch_fft() -> None:
    names = _frozen()
    have = [n for n in names if callable(getattr(tp.fft, n, None))]
    print(f"torch.fft coverage: {len(have)} of {len(names)}")
    assert len(names) == 22
    assert sorted(set(names) - set(have)) == []


def test_real_transforms_refuse_complex_input() -> None:
    c = tp.fft.fft(tp.ones(4))
    with pytest.raises(
        RuntimeError, match="rfft expects a real input tensor, but got ComplexFloat"
    ):
        tp.fft.rfft(c)


def test_norm_and_n_are_checked() -> None:
    with pytest.raises(RuntimeError, match='Invalid normalization mode: "bad"'):
        tp.fft.fft(tp.ones(4), norm="bad")
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        tp.fft.fft(tp.ones(4), n=0)


def test_dtypes_follow_pytorch() -> None:
    assert tp.fft.rfft(tp.ones(4)).dtype == tp.complex64
    assert tp.fft.rfft(tp.ones(4, dtype=tp.float64)).dtype == tp.complex128
    assert tp.fft.fft(tp.arange(4)).dtype == tp.complex64  # integers promoted
    assert tp.fft.irfft(tp.fft.rfft(tp.ones(6))).dtype == tp.float32


def test_round_trip() -> None:
    x = tp.tensor(np.random.default_rng(0).standard_normal((3, 10)))
    np.testing.assert_allclose(tp.fft.irfft(tp.fft.rfft(x), n=10).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(tp.fft.ifftn(tp.fft.fftn(x)).numpy().real, x.numpy(), atol=1e-12)


def test_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((4, 6))
    for name, kwargs in (("rfft", {}), ("hfft", {"n": 7}), ("ihfft2", {}), ("fftn", {"s": [5, 8]}),
                         ("irfftn", {"norm": "ortho"}), ("fftshift", {})):  # fmt: skip
        want = getattr(torch.fft, name)(torch.tensor(x), **kwargs).numpy()
        got = getattr(tp.fft, name)(tp.tensor(x), **kwargs).numpy()
        np.testing.assert_allclose(got, want, atol=1e-10, err_msg=name)


def test_a_namespace_without_fft_is_refused_by_name() -> None:
    from tensorplug.array_backend import _fft

    class NoFft:
        key_name = "Toy"
        xp = object()
        fft = None  # no register(fft=...) either

    with pytest.raises(
        tp.array_backend.OpError, match=r"FFTs are not supported by this backend \(Toy\)"
    ):
        _fft._fft(NoFft())  # type: ignore[arg-type]
