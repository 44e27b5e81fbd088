"""``conv2d`` forward alone against torch and against the best hand-written numpy, measured in
one process with one thread for each (issue 35).

Sizes: LeNet-5's first layer (1 -> 6 channels, 5x5, batch 64 of 28x28), a ResNet basic
block's 3x3 convolution (64 -> 64 channels, padding 1, batch 32 of 32x32) and a depthwise 3x3
one (64 groups of 1 channel, padding 1, batch 32 of 32x32), in float32.

The numpy floor is the best of four hand-written versions on the same arrays, each padding
the input as the layer asks: im2col (a strided view, reshaped into one copy) and one batched
``matmul`` per group (the weight broadcast over the batch), the same a few samples at a time
(about 4 MB of columns per product, written into one output), im2col laid out for one single
``matmul`` over the whole batch (then the result transposed to (N, C, H, W), left as a view),
and ``sliding_window_view`` + ``tensordot``. That is what any numpy convolution pays; the
ratio to it is what tensorplug adds.

Each dense case also runs on channels_last input and weight (tensorplug's Note
[Channels-last convolution]: the windows read from (N, H, W, C) memory, the result left in
it), and the ResNet case's forward + backward (both gradients) runs in both layouts.

Run: ``python bench/vision.py`` (with torch importable for the torch column, e.g.
``PYTHONPATH=<a torch venv's site-packages> uv run python bench/vision.py``).
"""

from __future__ import annotations

import os

# one thread for numpy's BLAS, set before numpy loads it (torch: set_num_threads below)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved  # noqa: E402
from numpy.lib.stride_tricks import as_strided, sliding_window_view  # noqa: E402

import tensorplug as tp  # noqa: E402
import tensorplug.nn.functional as F  # noqa: E402

# name, input shape, weight shape, padding, groups
CASES = [
    ("LeNet conv1: 64x1x28x28, 1->6, 5x5", (64, 1, 28, 28), (6, 1, 5, 5), 0, 1),
    ("ResNet 3x3: 32x64x32x32, 64->64, pad 1", (32, 64, 32, 32), (64, 64, 3, 3), 1, 1),
    ("depthwise 3x3: 32x64x32x32, groups 64", (32, 64, 32, 32), (64, 1, 3, 3), 1, 64),
]


def _padded(x: np.ndarray, p: int) -> np.ndarray:
    if not p:
        return x
    n, c, h, w = x.shape
    z = np.zeros((n, c, h + 2 * p, w + 2 * p), x.dtype)
    z[:, :, p : p + h, p : p + w] = x
    return z


def numpy_versions(x: np.ndarray, w: np.ndarray, b: np.ndarray, p: int, groups: int) -> Any:
    """The hand-written numpy convolutions (each returns (N, O, OH, OW) with the bias)."""
    o, cg, kh, kw = w.shape

    def windows() -> tuple[np.ndarray, int, int]:
        a = _padded(x, p)
        n, c, h, wd = a.shape
        oh, ow = h - kh + 1, wd - kw + 1
        s = a.strides
        return as_strided(a, (n, c, kh, kw, oh, ow), (*s[:2], *s[2:], *s[2:])), oh, ow

    def batched_matmul() -> np.ndarray:
        v, oh, ow = windows()
        n = v.shape[0]
        cols = v.reshape(n, groups, cg * kh * kw, oh * ow)
        y = np.matmul(w.reshape(groups, o // groups, cg * kh * kw), cols)
        y = y.reshape(n, o, oh, ow)
        y += b.reshape(1, o, 1, 1)
        return y

    def one_matmul() -> np.ndarray:
        v, oh, ow = windows()
        n = v.shape[0]
        cols = v.transpose(1, 2, 3, 0, 4, 5).reshape(groups, cg * kh * kw, n * oh * ow)
        y = np.matmul(w.reshape(groups, o // groups, cg * kh * kw), cols)
        y = y.reshape(o, n, oh, ow)
        y += b.reshape(o, 1, 1, 1)
        return y.transpose(1, 0, 2, 3)

    def window_tensordot() -> np.ndarray:
        v = sliding_window_view(_padded(x, p), (kh, kw), axis=(2, 3))  # N, C, OH, OW, kh, kw
        y = np.tensordot(v, w, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)
        return y + b.reshape(1, o, 1, 1)

    def chunked_matmul(per: int = 4 << 20) -> np.ndarray:
        # im2col of a few samples at a time (about ``per`` bytes of columns), written into one
        # output: the columns stay in cache and in reused memory
        v, oh, ow = windows()
        n = v.shape[0]
        k = max(1, min(n, per // (v[0].size * 4)))
        y = np.empty((n, groups, o // groups, oh * ow), np.float32)
        wm = w.reshape(groups, o // groups, cg * kh * kw)
        for i in range(0, n, k):
            cols = v[i : i + k].reshape(-1, groups, cg * kh * kw, oh * ow)
            np.matmul(wm, cols, out=y[i : i + k])
        y = y.reshape(n, o, oh, ow)
        y += b.reshape(1, o, 1, 1)
        return y

    out = {
        "numpy im2col + batched matmul": batched_matmul,
        "numpy im2col + one matmul": one_matmul,
        "numpy im2col in chunks + matmul": chunked_matmul,
    }
    if groups == 1:
        out["numpy sliding_window_view + tensordot"] = window_tensordot
    return out


def run_case(name: str, xs: Any, ws: Any, p: int, groups: int, torch: Any) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs, dtype=np.float32)
    w = rng.standard_normal(ws, dtype=np.float32)
    b = rng.standard_normal(ws[0], dtype=np.float32)
    fns = numpy_versions(x, w, b, p, groups)
    ref = fns["numpy im2col + batched matmul"]()
    tx, tw, tb = tp.tensor(x), tp.tensor(w), tp.tensor(b)
    fns["tensorplug F.conv2d"] = lambda: F.conv2d(tx, tw, tb, 1, p, 1, groups)
    got = fns["tensorplug F.conv2d"]().numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-3, atol=1e-3)
    if torch is not None:
        cx, cw, cb = torch.tensor(x), torch.tensor(w), torch.tensor(b)
        tf = torch.nn.functional.conv2d
        fns["torch F.conv2d"] = lambda: tf(cx, cw, cb, 1, p, 1, groups)
        np.testing.assert_allclose(fns["torch F.conv2d"]().numpy(), ref, rtol=1e-3, atol=1e-3)
    if groups == 1 and xs[1] > 1:  # channels_last input and weight, result channels_last
        lx, lw = (t.contiguous(memory_format=tp.channels_last) for t in (tx, tw))
        fns["tensorplug F.conv2d channels_last"] = lambda: F.conv2d(lx, lw, tb, 1, p, 1, groups)
        got = fns["tensorplug F.conv2d channels_last"]()
        assert got.is_contiguous(memory_format=tp.channels_last)
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-3, atol=1e-3)
        if torch is not None:
            mx, mw = (t.contiguous(memory_format=torch.channels_last) for t in (cx, cw))
            fns["torch F.conv2d channels_last"] = lambda: tf(mx, mw, cb, 1, p, 1, groups)
    number = 20 if xs[1] == 1 else 2
    # CPU time of this process: a loaded machine descheduling it adds nothing
    t = interleaved(fns, number=number, rounds=9, timer=time.process_time)
    floor = min(v for k, v in t.items() if k.startswith("numpy"))
    ours = t["tensorplug F.conv2d"]
    print(f"\n{name}")
    for k, v in t.items():
        extra = f"  {v / t['torch F.conv2d']:5.2f}x torch" if "torch F.conv2d" in t else ""
        print(f"  {k:40s} {v * 1e3:8.3f} ms  {v / floor:5.2f}x floor{extra}")
    summary = f"  tensorplug: {ours / floor:.2f}x the numpy floor"
    if "torch F.conv2d" in t:
        summary += f", {ours / t['torch F.conv2d']:.2f}x torch"
    print(summary)


def run_training(torch: Any) -> None:
    """The ResNet case's ``conv2d(x, w).backward(g)`` (input and weight gradients), row-major
    and channels_last, in each framework."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64, 32, 32), dtype=np.float32)
    w = rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05
    g = rng.standard_normal((32, 64, 32, 32), dtype=np.float32)
    fns = {}
    for fw, name in ((tp, "tensorplug"), (torch, "torch")):
        if fw is None:
            continue
        for fmt in ("contiguous_format", "channels_last"):
            f = getattr(fw, fmt)
            xx = fw.tensor(x).contiguous(memory_format=f).requires_grad_()
            ww = fw.tensor(w).contiguous(memory_format=f).requires_grad_()
            gg = fw.tensor(g).contiguous(memory_format=f)
            conv = fw.nn.functional.conv2d

            def step(xx: Any = xx, ww: Any = ww, gg: Any = gg, conv: Any = conv) -> None:
                xx.grad = ww.grad = None
                conv(xx, ww, None, 1, 1).backward(gg)

            fns[f"{name} {fmt}"] = step
    t = interleaved(fns, number=1, rounds=7, timer=time.process_time)
    print("\nResNet 3x3 conv2d forward + backward (input and weight gradients)")
    for k, v in t.items():
        extra = ""
        if "torch contiguous_format" in t:
            extra = f"  {v / t['torch contiguous_format']:5.2f}x torch row-major"
        print(f"  {k:40s} {v * 1e3:8.3f} ms{extra}")


def main() -> None:
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    print("conv2d forward, float32, one thread each (best per-call time; ratios in one process)")
    for case in CASES:
        run_case(*case, torch)
    run_training(torch)


if __name__ == "__main__":
    main()
