"""channels_last through the vision kernels (issue 35; Note [Channels last through the kernels]
in array_backend/_nn/_layout.py): which results and input gradients keep a channels_last
(channels_last_3d) input's format, frozen from torch 2.13's CPU kernels in ``FORMATS`` (and
compared with torch itself where it is importable), with the values unchanged against the same
call on a row-major input; ``Module.to(memory_format=)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn

needs_autograd = pytest.mark.skipif(
    not hasattr(tp, "autograd") or not hasattr(tp.autograd, "gradcheck"),
    reason="needs tensorplug-autograd",
)

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((2, 4, 6, 6)).astype(np.float32)
X5 = RNG.standard_normal((2, 4, 4, 6, 6)).astype(np.float32)
W4 = RNG.standard_normal((3, 4, 3, 3)).astype(np.float32)
WT4 = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
W5 = RNG.standard_normal((3, 4, 3, 3, 3)).astype(np.float32)


def cases(fw: Any) -> dict[str, tuple[int, Callable[[Any], Any]]]:
    """name -> (rank of the input, the call), written once for both frameworks."""
    F = fw.nn.functional
    t = fw.tensor
    return {
        "conv2d": (4, lambda x: F.conv2d(x, t(W4), padding=1)),
        "conv2d_stride2": (4, lambda x: F.conv2d(x, t(W4), stride=2)),
        "conv_transpose2d": (4, lambda x: F.conv_transpose2d(x, t(WT4), stride=2)),
        "relu": (4, lambda x: F.relu(x)),
        "add": (4, lambda x: x + x),
        "batch_norm_train": (4, lambda x: F.batch_norm(x, None, None, training=True)),
        "batch_norm_eval": (
            4,
            lambda x: F.batch_norm(x, fw.zeros(4), fw.ones(4), fw.ones(4), fw.zeros(4)),
        ),
        "group_norm": (4, lambda x: F.group_norm(x, 2)),
        "instance_norm": (4, lambda x: F.instance_norm(x)),
        "max_pool2d": (4, lambda x: F.max_pool2d(x, 2)),
        "max_pool2d_indices": (4, lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True)[1]),
        "avg_pool2d": (4, lambda x: F.avg_pool2d(x, 2)),
        "adaptive_avg_pool2d": (4, lambda x: F.adaptive_avg_pool2d(x, (3, 2))),
        "adaptive_max_pool2d": (4, lambda x: F.adaptive_max_pool2d(x, (3, 2))),
        "lp_pool2d": (4, lambda x: F.lp_pool2d(x, 2, 2)),
        "interpolate_nearest": (4, lambda x: F.interpolate(x, scale_factor=2)),
        "interpolate_bilinear": (4, lambda x: F.interpolate(x, scale_factor=2, mode="bilinear")),
        "interpolate_bicubic": (4, lambda x: F.interpolate(x, size=(7, 5), mode="bicubic")),
        "pad_constant": (4, lambda x: F.pad(x, (1, 2, 0, 1))),
        "pad_reflect": (4, lambda x: F.pad(x, (1, 1, 2, 1), mode="reflect")),
        "pad_replicate": (4, lambda x: F.pad(x, (1, 1, 2, 1), mode="replicate")),
        "pixel_shuffle": (4, lambda x: F.pixel_shuffle(x, 2)),
        "conv3d": (5, lambda x: F.conv3d(x, t(W5), padding=1)),
        "max_pool3d": (5, lambda x: F.max_pool3d(x, 2)),
        "avg_pool3d": (5, lambda x: F.avg_pool3d(x, 2)),
        "adaptive_avg_pool3d": (5, lambda x: F.adaptive_avg_pool3d(x, 2)),
        "batch_norm3d": (5, lambda x: F.batch_norm(x, None, None, training=True)),
        "interpolate_trilinear": (5, lambda x: F.interpolate(x, scale_factor=2, mode="trilinear")),
        "interpolate_nearest3d": (5, lambda x: F.interpolate(x, scale_factor=2)),
        "adaptive_max_pool3d": (5, lambda x: F.adaptive_max_pool3d(x, 2)),
        "pad_reflect3d": (5, lambda x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="reflect")),
    }


# torch 2.13 CPU: the result's format for a channels_last(_3d) input ("cl" or "c"), and the
# input gradient's from ``autograd.grad`` with a channels_last(_3d) incoming gradient
FORMATS = {
    "conv2d": ("cl", "cl"),
    "conv2d_stride2": ("cl", "cl"),
    "conv_transpose2d": ("cl", "cl"),
    "relu": ("cl", "cl"),
    "add": ("cl", "cl"),
    "batch_norm_train": ("cl", "cl"),
    "batch_norm_eval": ("cl", "cl"),
    "group_norm": ("cl", "cl"),
    "instance_norm": ("c", "c"),
    "max_pool2d": ("cl", "cl"),
    "max_pool2d_indices": ("cl", None),
    "avg_pool2d": ("cl", "cl"),
    "adaptive_avg_pool2d": ("cl", "cl"),
    "adaptive_max_pool2d": ("cl", "cl"),
    "lp_pool2d": ("cl", "cl"),
    "interpolate_nearest": ("cl", "cl"),
    "interpolate_bilinear": ("cl", "cl"),
    "interpolate_bicubic": ("cl", "c"),
    "pad_constant": ("cl", "cl"),
    "pad_reflect": ("cl", "cl"),
    "pad_replicate": ("cl", "cl"),
    "pixel_shuffle": ("c", "c"),
    "conv3d": ("cl", "cl"),
    "max_pool3d": ("cl", "cl"),
    "avg_pool3d": ("c", "c"),
    "adaptive_avg_pool3d": ("c", "c"),
    "batch_norm3d": ("cl", "cl"),
    "interpolate_trilinear": ("cl", "cl"),
    "interpolate_nearest3d": ("cl", "c"),
    "adaptive_max_pool3d": ("c", "c"),
    "pad_reflect3d": ("cl", "cl"),
}


def fmt_of(fw: Any, t: Any, rank: int) -> str:
    f = fw.channels_last if rank == 4 else fw.channels_last_3d
    if t.is_contiguous(memory_format=f) and not t.is_contiguous():
        return "cl"
    return "c" if t.is_contiguous() else "other"


def run(fw: Any, name: str, layout: bool = True) -> tuple[Any, Any, Any]:
    """(result, input gradient or None, the channels_last input) of case ``name``."""
    rank, call = cases(fw)[name]
    a = X4 if rank == 4 else X5
    x = fw.tensor(a)
    if layout:
        x = x.to(memory_format=fw.channels_last if rank == 4 else fw.channels_last_3d)
    if not name.endswith("_indices"):
        x.requires_grad_()
    y = call(x)
    if not y.dtype.is_floating_point:
        return y, None, x
    go = fw.tensor(np.arange(y.numel(), dtype=np.float32).reshape(tuple(y.shape)) % 7 - 3)
    if layout:
        go = go.contiguous(memory_format=fw.channels_last if rank == 4 else fw.channels_last_3d)
    (gx,) = fw.autograd.grad(y, x, go)
    return y, gx, x


@needs_autograd
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_formats_frozen(name: str) -> None:
    rank = cases(tp)[name][0]
    y, gx, _ = run(tp, name)
    want_y, want_g = FORMATS[name]
    assert fmt_of(tp, y, rank) == want_y, f"{name}: result"
    if want_g is not None:
        assert fmt_of(tp, gx, rank) == want_g, f"{name}: input gradient"
    # the values are the row-major call's
    y0, g0, _ = run(tp, name, layout=False)
    np.testing.assert_allclose(y.detach().numpy(), y0.detach().numpy(), rtol=1e-5, atol=1e-5)
    if gx is not None:
        np.testing.assert_allclose(gx.numpy(), g0.numpy(), rtol=1e-5, atol=1e-5)


@needs_autograd
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_formats_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    rank = cases(torch)[name][0]
    ty, tg, _ = run(torch, name)
    want = (fmt_of(torch, ty, rank), None if tg is None else fmt_of(torch, tg, rank))
    assert want == FORMATS[name], f"torch gives {want}: refreeze FORMATS"
    y, gx, _ = run(tp, name)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    if gx is not None:
        np.testing.assert_allclose(gx.numpy(), tg.numpy(), rtol=1e-4, atol=1e-4)


@needs_autograd
def test_conv_weight_channels_last() -> None:
    # PyTorch's CPU convolution: channels_last when the weight suggests it, too; each gradient
    # in its argument's format
    x = tp.tensor(X4).requires_grad_()
    w = tp.tensor(W4).to(memory_format=tp.channels_last).requires_grad_()
    y = tp.nn.functional.conv2d(x, w)
    assert y.is_contiguous(memory_format=tp.channels_last) and not y.is_contiguous()
    y.sum().backward()
    assert x.grad.is_contiguous()
    assert w.grad.is_contiguous(memory_format=tp.channels_last) and not w.grad.is_contiguous()
    # a channels_last input with a row-major weight: a row-major weight gradient
    x2 = tp.tensor(X4).contiguous(memory_format=tp.channels_last).requires_grad_()
    w2 = tp.tensor(W4).requires_grad_()
    tp.nn.functional.conv2d(x2, w2, padding=1).sum().backward()
    assert w2.grad.is_contiguous() and x2.grad.is_contiguous(memory_format=tp.channels_last)


def test_module_to_memory_format() -> None:
    m = nn.Sequential(nn.Conv2d(4, 3, 3), nn.BatchNorm2d(3), nn.Linear(4, 2))
    m.to(memory_format=tp.channels_last)
    assert m[0].weight.is_contiguous(memory_format=tp.channels_last)
    assert not m[0].weight.is_contiguous()
    assert isinstance(m[0].weight, nn.Parameter) and m[0].weight.requires_grad
    assert m[0].bias.is_contiguous() and m[2].weight.is_contiguous()  # not 4-d: unchanged
    y = m[:2](tp.tensor(X4).to(memory_format=tp.channels_last))
    assert y.is_contiguous(memory_format=tp.channels_last)
    m.to(tp.float64, memory_format=tp.contiguous_format)
    assert m[0].weight.is_contiguous() and m[0].weight.dtype == tp.float64


@needs_autograd
def test_resnet_block_channels_last_step() -> None:
    # a channels_last model and input: the same loss and gradients as row-major
    def block() -> Any:
        tp.manual_seed(0)
        return nn.Sequential(
            nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
            nn.MaxPool2d(2), nn.AdaptiveAvgPool2d(1),
        )  # fmt: skip

    a, b = block(), block().to(memory_format=tp.channels_last)
    xa = tp.tensor(X4)
    xb = xa.contiguous(memory_format=tp.channels_last)
    ya, yb = a(xa), b(xb)
    ya.square().sum().backward()
    yb.square().sum().backward()
    np.testing.assert_allclose(yb.detach().numpy(), ya.detach().numpy(), rtol=1e-5, atol=1e-6)
    ga, gb = a[0].weight.grad, b[0].weight.grad
    assert gb.is_contiguous(memory_format=tp.channels_last)
    np.testing.assert_allclose(gb.numpy(), ga.numpy(), rtol=1e-4, atol=1e-5)


@needs_autograd
@pytest.mark.parametrize(
    "kw",
    [
        {"padding": 1},
        {"stride": 2, "padding": 1},
        {"dilation": 2, "padding": 2},
        {"padding": 0, "bias": True},
        {"groups": 2, "padding": 1},
        {"padding": 1, "nd": 3},
    ],
    ids=["pad1", "stride2", "dilation2", "bias", "groups2", "conv3d"],
)
def test_channels_last_convolution_path(kw: dict[str, Any]) -> None:
    # Note [Channels-last convolution]: the (N, *S, C)-order kernels give the row-major path's
    # values and gradients
    kw = dict(kw)
    nd = kw.pop("nd", 2)
    bias = kw.pop("bias", False)
    g = kw.get("groups", 1)
    a = X4 if nd == 2 else X5
    w = (W4 if nd == 2 else W5)[:, : 4 // g]
    fmt = tp.channels_last if nd == 2 else tp.channels_last_3d
    conv = tp.nn.functional.conv2d if nd == 2 else tp.nn.functional.conv3d
    out = []
    for layout in (False, True):
        x = tp.tensor(a)
        wt = tp.tensor(np.concatenate([w, w]) if g == 2 else w)
        if layout:
            x, wt = x.contiguous(memory_format=fmt), wt.contiguous(memory_format=fmt)
        x.requires_grad_()
        wt.requires_grad_()
        b = tp.tensor(np.arange(wt.shape[0], dtype=np.float32)).requires_grad_() if bias else None
        y = conv(x, wt, b, **kw)
        go = tp.tensor(np.cos(np.arange(y.numel(), dtype=np.float32)).reshape(tuple(y.shape)))
        y.backward(go)
        if layout:
            assert y.is_contiguous(memory_format=fmt) and x.grad.is_contiguous(memory_format=fmt)
            assert wt.grad.is_contiguous(memory_format=fmt)
        else:
            assert x.grad.is_contiguous() and wt.grad.is_contiguous()
        out.append([y.detach(), x.grad, wt.grad] + ([b.grad] if bias else []))
    for r, c in zip(out[0], out[1], strict=True):
        np.testing.assert_allclose(c.numpy(), r.numpy(), rtol=1e-4, atol=1e-4)
