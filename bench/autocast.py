"""The autocast plugin's costs, in ratios (against torch where importable):

* entering and leaving a region (goal: at most torch's cost, ~3.3 us here): a region object
  made once and entered each time, and ``with tp.autocast("cpu"):`` made each time;
* what having the plugin installed costs a tiny op outside any region (goal: within 2%): the
  same measurement in separate interpreters with the plugin loaded and with
  ``TENSORPLUG_DISABLE_PLUGINS=autocast``, alternated;
* a lower precision op in a region: a 1-element ``mm`` (two casts and the product), against
  torch's;
* an MLP forward pass (784-128-10, batch 64) under bfloat16 autocast against float32.

Times are the CPU time of the process (``time.process_time``): on a loaded machine, time spent
descheduled would otherwise swamp the separate-interpreter comparison. Run:
``python bench/autocast.py`` (``--child`` is the per-interpreter measurement).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import timeit
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved, us  # noqa: E402

import tensorplug as tp  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def child() -> None:
    """One interpreter's best time of a tiny add and a tiny mm, outside any region, in CPU time
    of the process (time it spends descheduled on a loaded machine does not count)."""
    a, b = tp.ones([1]), tp.ones([1])
    m = tp.ones([1, 1])
    timers = {
        "add": timeit.Timer(lambda: tp.add(a, b), timer=time.process_time),
        "mm": timeit.Timer(lambda: tp.mm(m, m), timer=time.process_time),
    }
    best = dict.fromkeys(timers, float("inf"))
    for _ in range(25):
        for name, t in timers.items():
            best[name] = min(best[name], t.timeit(10000) / 10000)
    print(best["add"], best["mm"])


def installed_cost(runs: int = 10) -> None:
    loaded: list[tuple[float, float]] = []
    disabled: list[tuple[float, float]] = []
    env_off = {**os.environ, "TENSORPLUG_DISABLE_PLUGINS": "autocast"}
    for i in range(runs * 2):
        env = env_off if i % 2 else dict(os.environ)
        out = subprocess.run(
            [sys.executable, __file__, "--child"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        (disabled if i % 2 else loaded).append((float(out[0]), float(out[1])))
    print(f"plugin installed, outside any region ({runs} interpreters each, alternated)")
    for j, name in enumerate(("tp.add 1-element", "tp.mm 1x1")):
        on = min(x[j] for x in loaded)
        off = min(x[j] for x in disabled)
        pairs = sorted(lo[j] / do[j] for lo, do in zip(loaded, disabled, strict=True))
        print(
            f"  {name:18s} loaded {us(on)}  disabled {us(off)}  best/best {on / off:.3f}x  "
            f"(per pair {pairs[0]:.3f}-{pairs[-1]:.3f}x)"
        )


def enter_exit() -> None:
    region = tp.autocast("cpu")

    def reused() -> None:
        with region:
            pass

    def fresh() -> None:
        with tp.autocast("cpu"):
            pass

    fns: dict[str, Any] = {"tp: region reused": reused, "tp: with tp.autocast('cpu')": fresh}
    if torch is not None:
        t_region = torch.autocast("cpu")

        def t_reused() -> None:
            with t_region:
                pass

        def t_fresh() -> None:
            with torch.autocast("cpu"):
                pass

        fns["torch: region reused"] = t_reused
        fns["torch: with torch.autocast('cpu')"] = t_fresh
    t = interleaved(fns, number=20000, rounds=15, timer=time.process_time)
    print("entering and leaving a CPU region")
    for name, v in t.items():
        print(f"  {name:36s} {us(v)}")
    if torch is not None:
        reused = t["tp: region reused"] / t["torch: region reused"]
        fresh = t["tp: with tp.autocast('cpu')"] / t["torch: with torch.autocast('cpu')"]
        print(f"  goal <= torch: reused {reused:.2f}x, made each time {fresh:.2f}x")


def tiny_mm() -> None:
    a = tp.ones([1, 1])
    fns: dict[str, Any] = {"tp.mm, no region": lambda: tp.mm(a, a)}
    region = tp.autocast("cpu")

    def tp_in() -> Any:
        with region:
            return tp.mm(a, a)

    def tp_region_only() -> None:
        with region:
            pass

    fns["tp.mm in a bf16 region"] = tp_in
    fns["tp: the region alone"] = tp_region_only
    if torch is not None:
        at = torch.ones(1, 1)
        t_region = torch.autocast("cpu")

        def torch_in() -> Any:
            with t_region:
                return torch.mm(at, at)

        def torch_region_only() -> None:
            with t_region:
                pass

        fns["torch.mm, no region"] = lambda: torch.mm(at, at)
        fns["torch.mm in a bf16 region"] = torch_in
        fns["torch: the region alone"] = torch_region_only
    t = interleaved(fns, number=10000, rounds=15, timer=time.process_time)
    print("1x1 float32 mm: two casts to bfloat16 and the product")
    for name, v in t.items():
        print(f"  {name:28s} {us(v)}")
    op_tp = t["tp.mm in a bf16 region"] - t["tp: the region alone"]
    print(f"  tp: the op in a region, region excluded: {us(op_tp)}")
    if torch is not None:
        op_t = t["torch.mm in a bf16 region"] - t["torch: the region alone"]
        print(
            f"  in a region: {t['tp.mm in a bf16 region'] / t['torch.mm in a bf16 region']:.2f}x "
            f"torch; the op alone {op_tp / op_t:.2f}x torch's"
        )


def mlp() -> None:
    rng = np.random.default_rng(0)
    xn = rng.standard_normal((64, 784), dtype=np.float32)
    w1n = (rng.standard_normal((128, 784)) * 0.03).astype(np.float32)
    b1n = np.zeros(128, np.float32)
    w2n = (rng.standard_normal((10, 128)) * 0.1).astype(np.float32)
    b2n = np.zeros(10, np.float32)
    x = tp.tensor(xn)
    w1, b1, w2, b2 = (tp.tensor(p) for p in (w1n, b1n, w2n, b2n))
    F = tp.nn.functional

    def forward() -> Any:
        return F.linear(F.linear(x, w1, b1).relu(), w2, b2)

    def forward_bf16() -> Any:
        with tp.autocast("cpu"):
            return forward()

    fns: dict[str, Any] = {"tp float32": forward, "tp bf16 autocast": forward_bf16}
    if torch is not None:
        xt = torch.from_numpy(xn)
        pt = [torch.from_numpy(p) for p in (w1n, b1n, w2n, b2n)]
        tf = torch.nn.functional

        def t_forward() -> Any:
            return tf.linear(tf.linear(xt, pt[0], pt[1]).relu(), pt[2], pt[3])

        def t_forward_bf16() -> Any:
            with torch.autocast("cpu"):
                return t_forward()

        fns["torch float32"] = t_forward
        fns["torch bf16 autocast"] = t_forward_bf16
    t = interleaved(fns, number=100, rounds=15, timer=time.process_time)
    print("MLP 784-128-10 forward, batch 64 (no grad)")
    for name, v in t.items():
        print(f"  {name:22s} {us(v)}")
    print(f"  tp: bf16 autocast / float32 = {t['tp bf16 autocast'] / t['tp float32']:.2f}x")
    if torch is not None:
        print(
            f"  torch: bf16 autocast / float32 = "
            f"{t['torch bf16 autocast'] / t['torch float32']:.2f}x"
        )


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        enter_exit()
        tiny_mm()
        mlp()
        installed_cost()
