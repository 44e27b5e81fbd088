"""A GPT-style block's training step (batch 8, T 64, d 128, 4 heads, vocab 256, one block,
AdamW; the model of tests/models/gpt.py, causal attention through
``F.scaled_dot_product_attention``), tensorplug eagerly and with the whole step under
``tp.compile``, against torch eagerly: one process, one thread each, in CPU time (``time.process_time``).

Goal: at most 1.0x torch eager. Two floors: the numpy floor, the same step hand-written in
numpy (Note [numpy floor]; checked against tensorplug's loss, gradients and AdamW update
before the timing), and the step's matrix products alone, as raw numpy calls of the same
shapes and layouts (recorded from one eager step). Run with torch importable (HELPERS.md):
``PYTHONPATH=<torch site-packages> python bench/gpt.py [--mha] [--profile]``; ``--profile``
prints cProfile's top functions of tensorplug's eager step (with ``--compiled``: the
compiled step).
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from _timing import interleaved  # noqa: E402

# The floor: the step's matrix products alone. numpy's matmul is wrapped before tensorplug's
# kernels bind it, so that one step's products (operand shapes, dtypes and layouts) can be
# recorded and replayed as raw numpy calls (the wrapper costs a Python call per product, ~100
# a step, well under 1% of it).
_GEMMS: list[tuple[Any, Any]] | None = None
_matmul = np.matmul


def _layout(a: Any) -> Any:
    transposed = a.ndim >= 2 and not a.flags.c_contiguous and a.swapaxes(-1, -2).flags.c_contiguous
    return tuple(a.shape), a.dtype, transposed


def _recording_matmul(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
    if _GEMMS is not None and isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        _GEMMS.append((_layout(a), _layout(b)))
    return _matmul(a, b, *args, **kwargs)


np.matmul = _recording_matmul  # type: ignore[assignment]

import tensorplug as tp  # noqa: E402
from tests.models import gpt  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:
    torch = None

CONFIG = {"vocab": 256, "block_size": 64, "d": 128, "heads": 4, "layers": 1}
BATCH = 8


def make_step(lib: Any, attention: str, compiled: bool) -> Any:
    model = gpt.make_model(lib, attention, **CONFIG)
    gpt.copy_weights(lib, model)
    opt = gpt.optimizer(lib, model)
    step = gpt.train_step(lib, model, opt)
    if compiled:
        step = lib.compile(step)
    x, y = gpt.batches(1, BATCH, CONFIG["block_size"], CONFIG["vocab"])[0]
    xt, yt = lib.tensor(x), lib.tensor(y)
    for _ in range(3):  # AdamW's state; tp.compile's confirming traces
        step(xt, yt)
    return lambda: step(xt, yt)


def gemm_floor(step: Any) -> Any:
    """The matrix products one call of ``step`` makes, replayed on numpy arrays of the same
    shapes, dtypes and layouts (transposed views where the kernel passed one)."""
    global _GEMMS
    _GEMMS = []
    step()
    recorded, _GEMMS = _GEMMS, None
    rng = np.random.default_rng(0)

    def make(layout: Any) -> Any:
        shape, dtype, transposed = layout
        if transposed:
            shape = (*shape[:-2], shape[-1], shape[-2])
        a = rng.standard_normal(shape).astype(dtype)
        return a.swapaxes(-1, -2) if transposed else a

    pairs = [(make(a), make(b)) for a, b in recorded]
    return lambda: [_matmul(a, b) for a, b in pairs]


# The numpy floor: a hand-written GPT step ------------------------------------------------------
# Note [numpy floor]: the model of tests/models/gpt.py written directly in numpy, float32, one
# thread: forward, a hand-written backward and AdamW, the least work a numpy program does for
# the step. Parameters, gradients and AdamW's moments are each one flat buffer (the
# parameters views of it), so AdamW is a dozen passes over one array; the attention runs on
# strided views of the qkv product (BLAS takes them), GELU keeps Phi(x) for its backward and
# computes it with the float32 erfc of the kit (Note [erfc], the same accuracy), the
# cross-entropy's gradient is softmax - onehot, and the embedding's backward sums rows by a
# sort and add.reduceat.

_ERFCC = (
    -1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
    0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277,
)  # fmt: skip


class NumpyGPT:
    """The step of ``gpt.make_model(...)`` with ``gpt.optimizer``'s AdamW, from the parameters
    ``named`` (``model.named_parameters()`` as numpy arrays, the tied table once)."""

    def __init__(self, named: dict[str, Any], heads: int, lr: float = 3e-3,
                 weight_decay: float = 0.1, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:  # fmt: skip
        total = sum(a.size for a in named.values())
        self.flat = np.empty(total, np.float32)
        self.grads = np.zeros(total, np.float32)
        self.m = np.zeros(total, np.float32)
        self.v = np.zeros(total, np.float32)
        self.p: dict[str, Any] = {}
        self.g: dict[str, Any] = {}
        i = 0
        for name, a in named.items():
            short = name.replace("blocks.0.", "").replace("attn.", "").replace(".weight", ".w")
            short = short.replace(".bias", ".b")
            self.p[short] = self.flat[i : i + a.size].reshape(a.shape)
            self.p[short][...] = a
            self.g[short] = self.grads[i : i + a.size].reshape(a.shape)
            i += a.size
        self.heads = heads
        self.lr, self.wd, self.betas, self.eps = lr, weight_decay, betas, eps
        self.t = 0
        T = self.p["wpe.w"].shape[0]
        self.mask = np.triu(np.full((T, T), -np.inf, np.float32), 1)

    @staticmethod
    def _ln(x: Any, w: Any, b: Any) -> tuple[Any, Any, Any]:
        mu = x.mean(axis=1, keepdims=True)
        xh = x - mu
        var = np.square(xh).mean(axis=1, keepdims=True)
        var += 1e-5
        rstd = np.sqrt(var, out=var)
        np.divide(1.0, rstd, out=rstd)
        xh *= rstd
        out = xh * w
        out += b
        return out, xh, rstd

    @staticmethod
    def _ln_back(dout: Any, xh: Any, rstd: Any, w: Any, gw: Any, gb: Any) -> Any:
        np.sum(dout * xh, axis=0, out=gw)
        np.sum(dout, axis=0, out=gb)
        u = dout * w
        a = u.mean(axis=1, keepdims=True)
        c = (u * xh).mean(axis=1, keepdims=True)
        xh *= c
        u -= a
        u -= xh
        u *= rstd
        return u

    @staticmethod
    def _erfc(x: Any) -> Any:
        z = np.abs(x)
        t = 0.5 * z
        t += 1.0
        np.divide(1.0, t, out=t)
        p = t * _ERFCC[9]
        p += _ERFCC[8]
        for c in _ERFCC[7::-1]:
            p *= t
            p += c
        z *= z
        p -= z
        np.exp(p, out=p)
        p *= t
        q = 1.0 - p
        q *= 2.0
        q *= x < 0
        p += q
        return p

    def forward_backward(self, idx: Any, targets: Any) -> float:
        p, g = self.p, self.g
        B, T = idx.shape
        N = B * T
        V, d = p["wte.w"].shape
        H = self.heads
        hd = d // H
        ids = idx.reshape(-1)
        # forward
        x0 = p["wte.w"].take(ids, axis=0).reshape(B, T, d)
        x0 += p["wpe.w"][:T]
        x0 = x0.reshape(N, d)
        h1, xh1, rs1 = self._ln(x0, p["ln_1.w"], p["ln_1.b"])
        qkv = h1 @ p["qkv.w"].T
        qkv += p["qkv.b"]
        q, k, v = qkv.reshape(B, T, 3, H, hd).transpose(2, 0, 3, 1, 4)
        scale = 1.0 / math.sqrt(hd)
        P = q @ k.swapaxes(-1, -2)
        P *= scale
        P += self.mask[:T, :T]
        P -= P.max(axis=-1, keepdims=True)
        np.exp(P, out=P)
        P /= P.sum(axis=-1, keepdims=True)
        y = P @ v
        yc = y.transpose(0, 2, 1, 3).reshape(N, d)
        x1 = yc @ p["proj.w"].T
        x1 += p["proj.b"]
        x1 += x0
        h2, xh2, rs2 = self._ln(x1, p["ln_2.w"], p["ln_2.b"])
        m1 = h2 @ p["mlp.0.w"].T
        m1 += p["mlp.0.b"]
        cdf = self._erfc(m1 * -math.sqrt(0.5))
        cdf *= 0.5
        act = m1 * cdf
        x2 = act @ p["mlp.2.w"].T
        x2 += p["mlp.2.b"]
        x2 += x1
        hf, xhf, rsf = self._ln(x2, p["ln_f.w"], p["ln_f.b"])
        logits = hf @ p["wte.w"].T
        logits -= logits.max(axis=1, keepdims=True)
        rows, tgt = np.arange(N), targets.reshape(-1)
        picked = logits[rows, tgt]
        np.exp(logits, out=logits)  # the shifted logits' exponentials
        s = logits.sum(axis=1, keepdims=True)
        loss = float(np.log(s).sum() - picked.sum()) / N  # mean(logsumexp - logit[target])
        # backward
        logits *= 1.0 / N / s  # dlogits = (softmax - onehot) / N
        logits[rows, tgt] -= 1.0 / N
        _matmul(logits.T, hf, out=g["wte.w"])
        dx = logits @ p["wte.w"]
        dx = self._ln_back(dx, xhf, rsf, p["ln_f.w"], g["ln_f.w"], g["ln_f.b"])
        _matmul(dx.T, act, out=g["mlp.2.w"])
        np.sum(dx, axis=0, out=g["mlp.2.b"])
        dm = dx @ p["mlp.2.w"]
        # gelu'(x) = Phi(x) + x phi(x)
        pdf = np.square(m1)
        pdf *= -0.5
        np.exp(pdf, out=pdf)
        pdf *= m1
        pdf *= 1.0 / math.sqrt(2 * math.pi)
        pdf += cdf
        dm *= pdf
        _matmul(dm.T, h2, out=g["mlp.0.w"])
        np.sum(dm, axis=0, out=g["mlp.0.b"])
        dh = dm @ p["mlp.0.w"]
        dh = self._ln_back(dh, xh2, rs2, p["ln_2.w"], g["ln_2.w"], g["ln_2.b"])
        dx += dh  # dx1
        _matmul(dx.T, yc, out=g["proj.w"])
        np.sum(dx, axis=0, out=g["proj.b"])
        dy = (dx @ p["proj.w"]).reshape(B, T, H, hd).transpose(0, 2, 1, 3)
        dqkv = np.empty((B, T, 3, H, hd), np.float32)
        dq, dk, dv = dqkv.transpose(2, 0, 3, 1, 4)
        dv[...] = P.swapaxes(-1, -2) @ dy
        dP = dy @ v.swapaxes(-1, -2)
        dP -= np.einsum("bhtd,bhtd->bht", dy, y)[..., None]  # rowsum(dO * O)
        dP *= P
        dP *= scale
        dq[...] = dP @ k
        dk[...] = dP.swapaxes(-1, -2) @ q
        dqkv = dqkv.reshape(N, 3 * d)
        _matmul(dqkv.T, h1, out=g["qkv.w"])
        np.sum(dqkv, axis=0, out=g["qkv.b"])
        dh = dqkv @ p["qkv.w"]
        dh = self._ln_back(dh, xh1, rs1, p["ln_1.w"], g["ln_1.w"], g["ln_1.b"])
        dx += dh  # dx0
        np.sum(dx.reshape(B, T, d), axis=0, out=g["wpe.w"][:T])
        g["wpe.w"][T:] = 0.0
        order = np.argsort(ids, kind="stable")
        sorted_ids = ids[order]
        starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
        g["wte.w"][sorted_ids[starts]] += np.add.reduceat(dx[order], starts, axis=0)
        return loss

    def adamw(self) -> None:
        beta1, beta2 = self.betas
        self.t += 1
        P, G, M, V = self.flat, self.grads, self.m, self.v
        P *= 1.0 - self.lr * self.wd
        buf = G - M  # exp_avg.lerp_(grad, 1 - beta1)
        buf *= 1.0 - beta1
        M += buf
        np.multiply(G, G, out=buf)
        buf *= 1.0 - beta2
        V *= beta2
        V += buf
        np.sqrt(V, out=buf)
        buf *= 1.0 / math.sqrt(1.0 - beta2**self.t)
        buf += self.eps
        np.divide(M, buf, out=buf)
        buf *= self.lr / (1.0 - beta1**self.t)
        P -= buf

    def step(self, idx: Any, targets: Any) -> float:
        loss = self.forward_backward(idx, targets)
        self.adamw()
        return loss


def check_numpy_floor(steps: int = 2, verbose: bool = False) -> tuple[float, float]:
    """Compare the floor (Note [numpy floor]) with tensorplug's step from the same weights for
    ``steps`` steps: the largest relative difference (of each array's largest element) of the
    loss and gradients, computed from the same parameters, and of the parameters after AdamW,
    applied to the same gradients (AdamW's first steps amplify rounding where a gradient is
    noise, such as the key bias's, 0 in exact arithmetic: ``g / (|g| + eps)`` is its sign)."""
    model = gpt.make_model(tp, "sdpa", **CONFIG)
    gpt.copy_weights(tp, model)
    named = {name: p.detach().numpy().copy() for name, p in model.named_parameters()}
    floor = NumpyGPT(named, CONFIG["heads"])
    opt = gpt.optimizer(tp, model)
    worst_grads = worst_params = 0.0
    for i, (x, y) in enumerate(gpt.batches(steps, BATCH, CONFIG["block_size"], CONFIG["vocab"])):
        loss = model(tp.tensor(x), tp.tensor(y))
        loss.backward()
        got = floor.forward_backward(x, y)
        grads = [abs(got - float(loss)) / abs(float(loss))]
        for (_, p), g in zip(model.named_parameters(), floor.g.values(), strict=True):
            ref = p.grad.numpy()
            grads.append(float(np.abs(g - ref).max() / np.abs(ref).max()))
            g[...] = ref
        opt.step()
        opt.zero_grad()
        floor.adamw()
        params = [
            float(np.abs(a - p.detach().numpy()).max() / np.abs(a).max())
            for (_, p), a in zip(model.named_parameters(), floor.p.values(), strict=True)
        ]
        if verbose:
            print(
                f"numpy floor vs tensorplug, step {i + 1}: loss {got:.6f} vs {float(loss):.6f}; "
                f"largest relative difference: loss and gradients {max(grads):.1e}, "
                f"parameters after AdamW {max(params):.1e}"
            )
        worst_grads, worst_params = max(worst_grads, *grads), max(worst_params, *params)
    return worst_grads, worst_params


def numpy_floor(check: bool = True) -> Any:
    """The floor's step (Note [numpy floor]) from the copied weights, after 3 steps as
    ``make_step``'s; with ``check``, first :func:`check_numpy_floor`, failing loudly if the
    floor does not compute tensorplug's step (to float32 tolerance)."""
    if check:
        grads, params = check_numpy_floor(verbose=True)
        if grads > 1e-4 or params > 1e-6:
            raise SystemExit("the numpy floor does not compute tensorplug's step")
    model = gpt.make_model(tp, "sdpa", **CONFIG)
    gpt.copy_weights(tp, model)
    named = {name: p.detach().numpy().copy() for name, p in model.named_parameters()}
    floor = NumpyGPT(named, CONFIG["heads"])
    x, y = gpt.batches(1, BATCH, CONFIG["block_size"], CONFIG["vocab"])[0]
    for _ in range(3):
        floor.step(x, y)
    return lambda: floor.step(x, y)


def main() -> None:
    attention = "mha" if "--mha" in sys.argv else "sdpa"
    fns = {
        "tensorplug eager": make_step(tp, attention, False),
        "tensorplug compiled": make_step(tp, attention, True),
    }
    if torch is not None:
        fns["torch eager"] = make_step(torch, attention, False)
    fns["numpy floor"] = numpy_floor()
    fns["floor: the GEMMs"] = gemm_floor(fns["tensorplug eager"])
    if "--profile" in sys.argv:
        import cProfile
        import pstats

        fn = fns["tensorplug compiled" if "--compiled" in sys.argv else "tensorplug eager"]
        prof = cProfile.Profile()
        prof.runcall(lambda: [fn() for _ in range(20)])
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return
    # CPU time of this process: the shared machine deschedules it for long stretches
    best = interleaved(fns, number=5, rounds=7, timer=time.process_time)
    print(
        f"GPT-style block training step ({attention}): batch {BATCH}, T {CONFIG['block_size']}, "
        f"d {CONFIG['d']}, {CONFIG['heads']} heads, vocab {CONFIG['vocab']}, AdamW"
    )
    for name, t in best.items():
        ratio = f"  {t / best['torch eager']:.2f}x torch eager" if "torch eager" in best else ""
        print(f"  {name:20s} {t * 1e3:8.2f} ms{ratio}")
    for floor in ("numpy floor", "floor: the GEMMs"):
        for name in ("tensorplug eager", "tensorplug compiled"):
            print(f"  {name} / {floor}: {best[name] / best[floor]:.2f}x")


if __name__ == "__main__":
    main()
