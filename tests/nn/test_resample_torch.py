"""F.interpolate and F.grid_sample against torch in the same process, where torch is installed:
outputs and input gradients in float32 (PyTorch's float32 coordinate arithmetic decides which
pixel a coordinate floors to), half precision spot checks, and the size cases PyTorch's kernels
shortcut (Note [Size shortcuts] in array_backend/_nn/_resample.py). test_resample.py replays
torch's values frozen for CI."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

MODES = {
    "nearest": (1, 2, 3),
    "nearest-exact": (1, 2, 3),
    "area": (1, 2, 3),
    "linear": (1,),
    "bilinear": (2,),
    "bicubic": (2,),
    "trilinear": (3,),
}
ALIGNED = ("linear", "bilinear", "bicubic", "trilinear")
# (input side, factor): equal sizes with a factor that is not 1, a doubled size by a factor
# that is not 2, and plain shrinking and growing
SIZES = [(6, 1.03), (4, 2.1), (10, 0.6), (5, 1.7)]


def _cases() -> list[Any]:
    out = []
    for mode, dims in MODES.items():
        for n, (side, factor) in itertools.product(dims, SIZES):
            for align in (False, True) if mode in ALIGNED else (None,):
                out.append(pytest.param(mode, n, side, factor, align, id=f"{mode}-{n}d-{side}x{factor}-{align}"))  # fmt: skip
    return out


def _pair(shape: tuple[int, ...], dtype: str, seed: int) -> tuple[Any, Any]:
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    t = torch.tensor(a).to(getattr(torch, dtype)).requires_grad_()
    p = tp.tensor(a).to(getattr(tp, dtype))
    p.requires_grad_(True)
    return t, p


def _check(got: Any, want: Any, tol: float) -> None:
    np.testing.assert_allclose(
        got.detach().float().numpy(), want.detach().float().numpy(), rtol=tol, atol=tol
    )


@pytest.mark.parametrize(("mode", "n", "side", "factor", "align"), _cases())
def test_interpolate_float32(mode: str, n: int, side: int, factor: float, align: Any) -> None:
    t, p = _pair((2, 3) + (side,) * n, "float32", side)
    kw = {"scale_factor": factor, "mode": mode, "align_corners": align}
    yt, yp = TF.interpolate(t, **kw), F.interpolate(p, **kw)
    assert tuple(yp.shape) == tuple(yt.shape)
    _check(yp, yt, 1e-5)
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.tensor(g))
    yp.backward(tp.tensor(g))
    _check(p.grad, t.grad, 1e-5)


@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("size", [[3, 5], [9, 11]])
def test_interpolate_sizes_and_antialias(mode: str, size: list[int], antialias: bool) -> None:
    t, p = _pair((1, 2, 7, 8), "float32", 3)
    kw = {"size": size, "mode": mode, "align_corners": False, "antialias": antialias}
    _check(F.interpolate(p, **kw), TF.interpolate(t, **kw), 1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_interpolate_half_precision(mode: str, dtype: str) -> None:
    t, p = _pair((1, 2, 5, 6), dtype, 4)
    kw = {"size": [7, 4], "mode": mode}
    yt, yp = TF.interpolate(t, **kw), F.interpolate(p, **kw)
    assert yp.dtype == getattr(tp, dtype)
    _check(yp, yt, 2e-2)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("n", [2, 3])
def test_grid_sample_float32(n: int, mode: str, padding: str, align: bool) -> None:
    if n == 3 and mode == "bicubic":
        pytest.skip("bicubic is 2-d only")
    t, p = _pair((2, 3) + (4, 5, 6)[3 - n :], "float32", n)
    # grid points inside and outside [-1, 1], and exactly on the borders and pixel centres
    g = np.random.default_rng(n).uniform(-1.4, 1.4, (2,) + (3, 2, 4)[3 - n :] + (n,))
    g.reshape(-1)[:4] = [-1.0, 1.0, 0.0, 0.5]
    gt = torch.tensor(g.astype(np.float32)).requires_grad_()
    gp = tp.tensor(g.astype(np.float32))
    gp.requires_grad_(True)
    kw = {"mode": mode, "padding_mode": padding, "align_corners": align}
    yt, yp = TF.grid_sample(t, gt, **kw), F.grid_sample(p, gp, **kw)
    _check(yp, yt, 1e-5)
    go = np.random.default_rng(0).standard_normal(tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.tensor(go))
    yp.backward(tp.tensor(go))
    _check(p.grad, t.grad, 1e-5)
    _check(gp.grad, gt.grad, 1e-4)


def test_state_dict_free_modules_match_torch() -> None:
    t, p = _pair((1, 4, 3, 3), "float32", 5)
    for tm, pm in (
        (torch.nn.Upsample(scale_factor=2, mode="bilinear"), tp.nn.Upsample(scale_factor=2, mode="bilinear")),
        (torch.nn.UpsamplingBilinear2d(size=5), tp.nn.UpsamplingBilinear2d(size=5)),
        (torch.nn.UpsamplingNearest2d(scale_factor=3), tp.nn.UpsamplingNearest2d(scale_factor=3)),
        (torch.nn.PixelShuffle(2), tp.nn.PixelShuffle(2)),
    ):  # fmt: skip
        assert repr(pm) == repr(tm)
        assert pm.state_dict() == {} and not tm.state_dict()
        _check(pm(p), tm(t), 1e-6)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize(
    ("n", "mode"), [(2, "bilinear"), (2, "nearest"), (2, "bicubic"), (3, "bilinear")]
)
def test_grid_sample_double_backward(n: int, mode: str, padding: str, align: bool) -> None:
    # the derivatives of <r1, d/dx> + <r2, d/dgrid> in x, grid and the upstream gradient
    rng = np.random.default_rng(n)
    xa = rng.standard_normal((2, 2, *[3] * n))
    ga = rng.uniform(-1.2, 1.2, (2, *[2] * n, n))
    r0 = rng.standard_normal((2, 2, *[2] * n))
    r1, r2 = rng.standard_normal(xa.shape), rng.standard_normal(ga.shape)
    got = []
    for lib, fn, grad in ((torch, TF, torch.autograd.grad), (tp, F, tp.autograd.grad)):
        x, g, go = lib.tensor(xa), lib.tensor(ga), lib.tensor(r0)
        for t in (x, g, go):
            t.requires_grad_(True)
        y = fn.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align)
        gx, gg = grad((y * go).sum(), (x, g), create_graph=True)
        loss = (gx * lib.tensor(r1)).sum() + (gg * lib.tensor(r2)).sum()
        got.append(grad(loss, (x, g, go), allow_unused=True))
    for want, mine in zip(*got, strict=True):
        if want is None or mine is None:  # nearest: nothing flows to the grid
            other = mine if want is None else want
            assert other is None or not np.abs(other.detach().numpy()).any()
            continue
        np.testing.assert_allclose(mine.detach().numpy(), want.detach().numpy(), atol=1e-10)
