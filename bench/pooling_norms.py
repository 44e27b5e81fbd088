"""Pooling and batch normalization, forward + backward, against PyTorch and a numpy floor,
measured in one process with one thread each (issue 35).

Shapes: LeNet-5's first pooling (batch 64, 6 channels, 28x28, 2x2/2) and a ResNet basic
block's activations (batch 32, 64 channels, 32x32) for max_pool2d, avg_pool2d and batch_norm
(training mode). Each case times the forward and the backward of one call (``y.backward(g)``
with a fixed gradient), for tensorplug, torch (when importable: run with
``PYTHONPATH=/work/torchenv/lib/python3.11/site-packages``) and the shortest numpy code that
computes the same values (the floor: the windows' four strided slices, the closed-form
batch-norm gradient), alternating between them (best of N, bench/_timing.py).

Run: ``python bench/pooling_norms.py [--quick]``
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved  # noqa: E402

import tensorplug as tp  # noqa: E402
import tensorplug.nn.functional as F  # noqa: E402

try:
    import torch
    import torch.nn.functional as TF

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover - the figures without torch
    torch = None


_OFFSETS = ((0, 0), (0, 1), (1, 0), (1, 1))


def _np_max_pool(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """2x2/2 max pooling and its gradient in numpy: the four strided slices of the windows,
    their maximum, and the gradient written where each window's maximum is (the first)."""
    views = [x[..., i::2, j::2] for i, j in _OFFSETS]
    y = np.maximum(np.maximum(views[0], views[1]), np.maximum(views[2], views[3]))
    gx = np.zeros_like(x)
    left = np.ones(y.shape, dtype=bool)
    for (i, j), v in zip(_OFFSETS, views, strict=True):
        hit = left & (v == y)
        gx[..., i::2, j::2] = np.where(hit, g, 0)
        left &= ~hit
    return gx


def _np_avg_pool(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """2x2/2 average pooling and its gradient in numpy: the sum of the four strided slices,
    and a quarter of the gradient written into each."""
    views = [x[..., i::2, j::2] for i, j in _OFFSETS]
    (views[0] + views[1] + views[2] + views[3]) * 0.25
    gx = np.empty_like(x)
    q = g * 0.25
    for i, j in _OFFSETS:
        gx[..., i::2, j::2] = q
    return gx


def _np_batch_norm(x: np.ndarray, w: np.ndarray, g: np.ndarray) -> np.ndarray:
    axes = (0, 2, 3)
    mean = x.mean(axis=axes, keepdims=True)
    xc = x - mean
    invstd = 1 / np.sqrt((xc * xc).mean(axis=axes, keepdims=True) + 1e-5)
    xh = xc * invstd
    _ = xh * w[None, :, None, None]
    gw = (g * xh).sum(axis=axes)
    gb = g.sum(axis=axes)
    n = x.size // x.shape[1]
    k = (invstd * w[None, :, None, None]) / n
    gx = k * (n * g - gb[None, :, None, None] - xh * gw[None, :, None, None])
    return gx


def cases() -> list[tuple[str, dict[str, Callable[[], Any]]]]:
    rng = np.random.default_rng(0)
    out = []
    for label, shape in (
        ("lenet 64x6x28x28", (64, 6, 28, 28)),
        ("resnet 32x64x32x32", (32, 64, 32, 32)),
    ):
        xn = rng.standard_normal(shape, dtype=np.float32)
        half = (shape[0], shape[1], shape[2] // 2, shape[3] // 2)
        gh = rng.standard_normal(half, dtype=np.float32)
        gf = rng.standard_normal(shape, dtype=np.float32)
        wn = rng.standard_normal(shape[1], dtype=np.float32)
        x = tp.tensor(xn).requires_grad_()
        w = tp.tensor(wn).requires_grad_()
        b = tp.zeros(shape[1]).requires_grad_()
        gh_t, gf_t = tp.tensor(gh), tp.tensor(gf)
        rm, rv = tp.zeros(shape[1]), tp.ones(shape[1])

        def tp_max(x: Any = x, g: Any = gh_t) -> None:
            F.max_pool2d(x, 2).backward(g)

        def tp_avg(x: Any = x, g: Any = gh_t) -> None:
            F.avg_pool2d(x, 2).backward(g)

        def tp_bn(
            x: Any = x, g: Any = gf_t, w: Any = w, b: Any = b, rm: Any = rm, rv: Any = rv
        ) -> None:
            F.batch_norm(x, rm, rv, w, b, True).backward(g)

        fns: dict[str, dict[str, Callable[[], Any]]] = {
            "max_pool2d": {"tensorplug": tp_max, "numpy": lambda xn=xn, g=gh: _np_max_pool(xn, g)},
            "avg_pool2d": {"tensorplug": tp_avg, "numpy": lambda xn=xn, g=gh: _np_avg_pool(xn, g)},
            "batch_norm": {
                "tensorplug": tp_bn, "numpy": lambda xn=xn, wn=wn, g=gf: _np_batch_norm(xn, wn, g)
            },
        }  # fmt: skip
        if torch is not None:
            tx = torch.tensor(xn, requires_grad=True)
            tw = torch.tensor(wn, requires_grad=True)
            tb = torch.zeros(shape[1], requires_grad=True)
            tgh, tgf = torch.tensor(gh), torch.tensor(gf)
            trm, trv = torch.zeros(shape[1]), torch.ones(shape[1])
            fns["max_pool2d"]["torch"] = lambda tx=tx, g=tgh: TF.max_pool2d(tx, 2).backward(g)
            fns["avg_pool2d"]["torch"] = lambda tx=tx, g=tgh: TF.avg_pool2d(tx, 2).backward(g)
            fns["batch_norm"]["torch"] = lambda tx=tx, g=tgf, a=(trm, trv, tw, tb): TF.batch_norm(
                tx, *a, True
            ).backward(g)
        for op, f in fns.items():
            out.append((f"{op} fwd+bwd {label}", f))
    return out


def main() -> None:
    quick = "--quick" in sys.argv
    print(
        f"{'case':44s} {'tensorplug':>11s} {'torch':>9s} {'numpy':>9s} {'tp/torch':>9s} {'tp/numpy':>9s}"
    )
    for name, fns in cases():
        t = interleaved(fns, number=3 if quick else 10, rounds=3 if quick else 7)
        tt = t.get("torch")
        print(
            f"{name:44s} {t['tensorplug'] * 1e3:9.2f}ms "
            + (f"{tt * 1e3:7.2f}ms " if tt else f"{'-':>9s} ")
            + f"{t['numpy'] * 1e3:7.2f}ms "
            + (f"{t['tensorplug'] / tt:9.2f} " if tt else f"{'-':>9s} ")
            + f"{t['tensorplug'] / t['numpy']:9.2f}"
        )


if __name__ == "__main__":
    main()
