"""FFTs and special functions against numpy/scipy and torch, per call, in one process.

``rfft``/``irfft`` over the last dim of float32 batches (64 x 256 ... 16 x 65536), ``fft2`` of
a complex64 image, and special functions (``lgamma``, ``i0e``, ``erfinv``, ``ndtri``) on 10^6
float32 elements: tensorplug's public call, the numpy / scipy.special expression that computes
the same thing, and torch's (when importable), alternating (best of N, bench/_timing.py). One
thread each (numpy's pocketfft is single-threaded; torch is told to use one). Prints times, the
ratio tensorplug/numpy of best times and the median ratio of back-to-back pairs ("paired",
steadier on a shared machine), and tensorplug/torch.

Run: ``PYTHONPATH=<torch's site-packages> uv run python bench/fft.py [--quick]``.
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
import scipy.special as sp  # noqa: E402
from _timing import interleaved, paired_ratio, us  # noqa: E402

import tensorplug as tp  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover - the torch column is left out
    torch = None

Case = tuple[str, Callable[[], Any], Callable[[], Any], Callable[[], Any] | None]


def cases() -> list[Case]:
    rng = np.random.default_rng(0)
    out: list[Case] = []
    for rows, n in ((64, 256), (64, 4096), (16, 65536)):
        xn = rng.standard_normal((rows, n), dtype=np.float32)
        x = tp.tensor(xn)
        xt = torch.from_numpy(xn) if torch is not None else None
        out.append((f"rfft {rows}x{n}", lambda x=x: tp.fft.rfft(x), lambda xn=xn: np.fft.rfft(xn),
                    (lambda xt=xt: torch.fft.rfft(xt)) if xt is not None else None))  # fmt: skip
        cn = np.fft.rfft(xn)
        c = tp.tensor(cn)
        ct = torch.from_numpy(cn) if torch is not None else None
        out.append((f"irfft {rows}x{n}", lambda c=c, n=n: tp.fft.irfft(c, n),
                    lambda cn=cn, n=n: np.fft.irfft(cn, n),
                    (lambda ct=ct, n=n: torch.fft.irfft(ct, n)) if ct is not None else None))  # fmt: skip
    im = (rng.standard_normal((512, 512)) + 1j * rng.standard_normal((512, 512))).astype(
        np.complex64
    )
    t = tp.tensor(im)
    tt = torch.from_numpy(im) if torch is not None else None
    out.append(("fft2 512x512 c64", lambda: tp.fft.fft2(t), lambda: np.fft.fft2(im),
                (lambda: torch.fft.fft2(tt)) if tt is not None else None))  # fmt: skip
    vn = rng.uniform(0.05, 0.95, 1_000_000).astype(np.float32)
    v = tp.tensor(vn)
    vt = torch.from_numpy(vn) if torch is not None else None
    for name, ours, ref, theirs in (
        ("lgamma", tp.lgamma, sp.gammaln, "lgamma"),
        ("special.i0e", tp.special.i0e, sp.i0e, "special.i0e"),
        ("erfinv", tp.erfinv, sp.erfinv, "erfinv"),
        ("special.ndtri", tp.special.ndtri, sp.ndtri, "special.ndtri"),
    ):
        fn_t = None
        if vt is not None:
            f = torch
            for part in theirs.split("."):
                f = getattr(f, part)
            fn_t = lambda f=f: f(vt)  # noqa: E731
        out.append((f"{name} 1e6 f32", lambda ours=ours: ours(v), lambda ref=ref: ref(vn), fn_t))
    return out


def main() -> None:
    quick = "--quick" in sys.argv
    print(
        f"{'case':<22}{'tensorplug':>14}{'numpy/scipy':>14}{'torch':>14}{'tp/np':>8}{'tp/torch':>10}"
    )
    for name, ours, ref, theirs in cases():
        fns = {"tp": ours, "np": ref}
        if theirs is not None:
            fns["torch"] = theirs
        ours()  # warm up: first-call setup (function creation, scipy import)
        best = interleaved(fns, number=3 if quick else 10, rounds=3 if quick else 7)
        t_torch = best.get("torch")
        # the median ratio of back-to-back calls: steadier than best times on a loaded machine
        pairs = max(10, min(400, int((0.05 if quick else 0.4) / best["np"])))
        paired = paired_ratio(ours, ref, pairs=pairs)
        print(
            f"{name:<22}{us(best['tp']):>14}{us(best['np']):>14}"
            f"{us(t_torch) if t_torch else '-':>14}{best['tp'] / best['np']:>8.3f}{paired:>8.3f}"
            f"{best['tp'] / t_torch if t_torch else float('nan'):>10.3f}"
        )


if __name__ == "__main__":
    main()
