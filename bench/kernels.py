"""CPU kernels against the equivalent numpy expression, per call, measured in one process.

The kernels a training step runs (the MLP 784-128-10 of bench/autograd.py: batch 64, float32)
on its own shapes: 64x10 logits, 64x128 activations, 128x784 weights. Each line times the
public tensorplug call and the numpy expression that computes the same thing, alternating
between the two (best of N, bench/_timing.py), and prints both and their ratio. The standard
to aim at is ``tp.add`` on tensors: roughly the numpy time plus 1 us of dispatch.

Run: ``python bench/kernels.py [substring ...]`` (only the cases whose name contains one of the
substrings); ``--quick`` for fewer rounds.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# One BLAS thread, as bench/autograd.py: the matmuls measure the code, not the neighbours.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved  # noqa: E402

import tensorplug as tp  # noqa: E402

Case = tuple[str, Callable[[], Any], Callable[[], Any]]


def cases() -> list[Case]:
    rng = np.random.default_rng(0)
    f32 = np.float32
    zn = rng.standard_normal((64, 10), dtype=f32)  # logits
    gn = rng.standard_normal((64, 10), dtype=f32)  # a gradient of the logits' shape
    hn = rng.standard_normal((64, 128), dtype=f32)  # activations
    xn = rng.standard_normal((64, 784), dtype=f32)  # inputs
    w1n = rng.standard_normal((128, 784), dtype=f32)
    w2n = rng.standard_normal((10, 128), dtype=f32)
    bn = rng.standard_normal(10, dtype=f32)
    b1n = rng.standard_normal(128, dtype=f32)
    yn = rng.integers(0, 10, 64)
    cn = hn > 0
    rows = np.arange(64)
    pn = w2n.copy()
    z, g, h, x, w1, w2, b, b1, y, c = (
        tp.tensor(a) for a in (zn, gn, hn, xn, w1n, w2n, bn, b1n, yn, cn)
    )
    p = tp.tensor(pn)
    near1n = (1 + rng.standard_normal((10, 128)) * 1e-6).astype(f32)
    near1 = tp.tensor(near1n)
    col = tp.tensor(rng.standard_normal((64, 1), dtype=f32))
    coln = col.numpy()
    b1row = b1.unsqueeze(0)
    idx = tp.tensor(rng.integers(0, 64, 32))
    idxn = idx.numpy()
    v32 = tp.tensor(rng.standard_normal((32, 10), dtype=f32))
    v32n = v32.numpy()
    y2 = y.unsqueeze(1)
    y2n = yn[:, None]
    w2t = w2.t()
    w2tn = w2n.T
    zc = z.clone()
    zcn = zc.numpy()
    lr = 0.01

    def np_log_softmax(a: np.ndarray) -> np.ndarray:
        s = a - a.max(1, keepdims=True)
        return s - np.log(np.exp(s).sum(1, keepdims=True))

    def np_softmax(a: np.ndarray) -> np.ndarray:
        e = np.exp(a - a.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    lsm = tp.log_softmax(z, 1)
    lsmn = lsm.numpy()

    def np_scatter_add() -> np.ndarray:
        out = np.zeros((64, 10), f32)
        np.add.at(out, (rows[:, None], y2n), coln)
        return out

    def np_index_put() -> np.ndarray:
        zcn[idxn] = v32n
        return zcn

    def np_index_put_acc() -> np.ndarray:
        np.add.at(zcn, idxn, v32n)
        return zcn

    return [
        # the standard: the binary fast path
        ("add (64x10 + 64x10)", lambda: tp.add(z, g), lambda: np.add(zn, gn)),
        # matrix products
        ("linear 64x128 @ 10x128.T + b", lambda: tp.linear(h, w2, b), lambda: hn @ w2n.T + bn),
        ("addmm 64x128 @ 128x10 + b", lambda: tp.addmm(b, h, w2t), lambda: hn @ w2tn + bn),
        ("linear 64x784 @ 128x784.T + b", lambda: tp.linear(x, w1, b1), lambda: xn @ w1n.T + b1n),
        ("mm 64x128 @ 128x10", lambda: tp.mm(h, w2t), lambda: hn @ w2tn),
        ("matmul 64x128 @ 128x10", lambda: tp.matmul(h, w2t), lambda: hn @ w2tn),
        # softmax and losses
        ("log_softmax(z, 1)", lambda: tp.log_softmax(z, 1), lambda: np_log_softmax(zn)),
        ("softmax(z, 1)", lambda: tp.softmax(z, 1), lambda: np_softmax(zn)),
        ("nll_loss(lsm, y)", lambda: tp.nll_loss(lsm, y), lambda: -lsmn[rows, yn].mean()),
        (
            "cross_entropy(z, y)",
            lambda: tp.cross_entropy(z, y),
            lambda: -np_log_softmax(zn)[rows, yn].mean(),
        ),
        # reductions
        ("sum(g)", lambda: tp.sum(g), lambda: np.sum(gn)),
        ("sum(g, [1], True)", lambda: g.sum([1], True), lambda: np.sum(gn, 1, keepdims=True)),
        ("sum(g, [0])", lambda: g.sum([0]), lambda: np.sum(gn, 0)),
        ("mean(g)", lambda: tp.mean(g), lambda: np.mean(gn)),
        ("mean(g, [1], True)", lambda: g.mean([1], True), lambda: np.mean(gn, 1, keepdims=True)),
        ("amax(z, [1], True)", lambda: tp.amax(z, [1], True), lambda: np.max(zn, 1, keepdims=True)),
        # pointwise with scalars
        ("where(c, h, 0.0)", lambda: tp.where(c, h, 0.0), lambda: np.where(cn, hn, 0.0)),
        ("g * 0.5", lambda: g * 0.5, lambda: gn * 0.5),
        ("g + 1.0", lambda: g + 1.0, lambda: gn + 1.0),
        ("g - 1.0", lambda: g - 1.0, lambda: gn - 1.0),
        ("g / 64", lambda: g / 64, lambda: gn / 64),
        ("-g / 64", lambda: -g / 64, lambda: -gn / 64),
        ("tp.mul(g, 0.5)", lambda: tp.mul(g, 0.5), lambda: np.multiply(gn, 0.5)),
        ("g > 0", lambda: g > 0, lambda: gn > 0),
        ("y != -100", lambda: y != -100, lambda: yn != -100),
        ("relu(h)", lambda: tp.relu(h), lambda: np.maximum(hn, 0)),
        ("exp(g)", lambda: tp.exp(g), lambda: np.exp(gn)),
        ("neg(g)", lambda: tp.neg(g), lambda: np.negative(gn)),
        # in place
        (
            "p.sub_(g, alpha=lr)",
            lambda: p.sub_(w2, alpha=lr),
            lambda: np.subtract(pn, lr * w2n, out=pn),
        ),
        ("p.add_(g)", lambda: p.add_(w2), lambda: np.add(pn, w2n, out=pn)),
        ("p.add_(g, alpha=lr)", lambda: p.add_(w2, alpha=lr), lambda: np.add(pn, lr * w2n, out=pn)),
        # (factors near 1: the values neither vanish nor overflow over the runs)
        ("p.mul_(1.0001)", lambda: p.mul_(1.0001), lambda: np.multiply(pn, 1.0001, out=pn)),
        ("p.div_(1.0001)", lambda: p.div_(1.0001), lambda: np.divide(pn, 1.0001, out=pn)),
        ("p.mul_(g)", lambda: p.mul_(near1), lambda: np.multiply(pn, near1n, out=pn)),
        # factories
        ("zeros([64, 10])", lambda: tp.zeros([64, 10]), lambda: np.zeros((64, 10), f32)),
        ("ones([64, 10])", lambda: tp.ones([64, 10]), lambda: np.ones((64, 10), f32)),
        ("empty([64, 10])", lambda: tp.empty([64, 10]), lambda: np.empty((64, 10), f32)),
        (
            "full([64, 10], 2.0)",
            lambda: tp.full([64, 10], 2.0),
            lambda: np.full((64, 10), 2.0, f32),
        ),
        ("zeros_like(g)", lambda: tp.zeros_like(g), lambda: np.zeros_like(gn)),
        ("ones_like(g)", lambda: tp.ones_like(g), lambda: np.ones_like(gn)),
        ("g.new_zeros([64, 10])", lambda: g.new_zeros([64, 10]), lambda: np.zeros((64, 10), f32)),
        # views
        ("g.t()", lambda: g.t(), lambda: gn.T),
        ("transpose(g, 0, 1)", lambda: g.transpose(0, 1), lambda: gn.transpose(1, 0)),
        ("b1.unsqueeze(0)", lambda: b1.unsqueeze(0), lambda: b1n[None]),
        (
            "expand(b1[None], [64, 128])",
            lambda: b1row.expand([64, 128]),
            lambda: np.broadcast_to(b1n[None], (64, 128)),
        ),
        ("reshape(h, [64, 8, 16])", lambda: h.reshape([64, 8, 16]), lambda: hn.reshape(64, 8, 16)),
        ("view(h, [-1])", lambda: h.view([-1]), lambda: hn.reshape(-1)),
        # indexing
        (
            "scatter_add(zeros, 1, y[:, None], col)",
            lambda: tp.scatter_add(tp.zeros([64, 10]), 1, y2, col),
            np_scatter_add,
        ),
        ("index(z, [idx])", lambda: tp.ops.aten.index.Tensor(z, [idx]), lambda: zn[idxn]),
        ("index_put_(z, [idx], v)", lambda: zc.index_put_([idx], v32), np_index_put),
        (
            "index_put_(z, [idx], v, True)",
            lambda: zc.index_put_([idx], v32, True),
            np_index_put_acc,
        ),
    ]


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    wanted = [a for a in argv if not a.startswith("--")]
    chosen = [c for c in cases() if not wanted or any(w in c[0] for w in wanted)]
    rounds = 5 if quick else 11
    print(f"{'kernel (float32)':40s} {'tensorplug':>10s} {'numpy':>9s} {'ratio':>6s} {'+us':>6s}")
    for name, tp_fn, np_fn in chosen:
        tp_fn(), np_fn()  # warm up (caches, lazy kernels)
        probe = interleaved({"tp": tp_fn}, number=50, rounds=1)["tp"]
        number = max(200, min(5000, int(0.02 / max(probe, 1e-7))))
        t = interleaved({"tp": tp_fn, "np": np_fn}, number=number, rounds=rounds)
        a, b = t["tp"] * 1e6, t["np"] * 1e6
        print(f"{name:40s} {a:8.2f}us {b:7.2f}us {a / b:5.2f}x {a - b:6.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
