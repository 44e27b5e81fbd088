"""The CPU backend against numpy (and torch when importable), measured in one process.

* ``tp.add(a, b)`` on 1-element float32 tensors vs ``np.add`` on the same arrays
  (goal: at most 3.9x np.add, i.e. no slower than torch.add here; stretch 3x);
* ``a + b`` (the Python operator) on the same tensors;
* ``tp.add`` on 1000x1000 float32 tensors (goal: within 3% of np.add);
* ``import tensorplug`` with the cpu plugin vs ``import numpy``, in fresh interpreters
  (goal: at most 60 ms more).

Run: ``python bench/cpu.py``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved, us  # noqa: E402

import tensorplug as tp  # noqa: E402


def small() -> None:
    an, bn = np.ones(1, np.float32), np.ones(1, np.float32)
    a, b = tp.tensor(an), tp.tensor(bn)
    fns = {
        "np.add": lambda: np.add(an, bn),
        "tp.add": lambda: tp.add(a, b),
        "a + b": lambda: a + b,
        "tp.ops.aten.add.Tensor": lambda: tp.ops.aten.add.Tensor(a, b),
    }
    try:
        import torch

        at, bt = torch.ones(1), torch.ones(1)
        fns["torch.add"] = lambda: torch.add(at, bt)
    except ImportError:
        pass
    t = interleaved(fns, number=20000, rounds=15)
    base = t["np.add"]
    print("1-element float32 tensors")
    for name, v in t.items():
        print(f"  {name:24s} {us(v)}  {v / base:5.2f}x np.add")
    print(f"  goal: tp.add <= 3.9x np.add (stretch 3x): {t['tp.add'] / base:.2f}x")


def large() -> None:
    rng = np.random.default_rng(0)
    an = rng.standard_normal((1000, 1000), dtype=np.float32)
    bn = rng.standard_normal((1000, 1000), dtype=np.float32)
    a, b = tp.tensor(an), tp.tensor(bn)
    t = interleaved({"np.add": lambda: np.add(an, bn), "tp.add": lambda: tp.add(a, b)}, number=20, rounds=25)
    ratio = t["tp.add"] / t["np.add"]
    print("1000x1000 float32 tensors")
    print(f"  np.add {us(t['np.add'])}   tp.add {us(t['tp.add'])}   ratio {ratio:.3f} (goal <= 1.03)")


def import_time() -> None:
    # Bytecode caches on, as on a user's machine (pip writes them); the first run writes them.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def best(code: str) -> tuple[float, float]:
        times = []
        for _ in range(8):
            r = subprocess.run(
                [sys.executable, "-c", f"import time; t=time.perf_counter(); {code}; print(time.perf_counter()-t)"],
                capture_output=True, text=True, check=True, env=env,
            )
            times.append(float(r.stdout.strip().splitlines()[-1]))
        times = times[1:]  # the first run compiles and writes the caches
        return min(times), statistics.median(times)

    np_best, np_med = best("import numpy")
    tp_best, tp_med = best("import tensorplug")
    loaded = subprocess.run(
        [sys.executable, "-c", "import tensorplug as tp; print(sorted(tp.plugins.loaded_names()))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    print(f"import time (fresh interpreters, bytecode cached, best of 7; plugins loaded: {loaded})")
    print(f"  import numpy       {np_best * 1e3:6.1f} ms (median {np_med * 1e3:.1f})")
    print(f"  import tensorplug  {tp_best * 1e3:6.1f} ms (median {tp_med * 1e3:.1f})")
    print(f"  difference         {(tp_best - np_best) * 1e3:6.1f} ms (goal <= 60 ms)")


if __name__ == "__main__":
    small()
    large()
    import_time()
