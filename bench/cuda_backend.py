"""The CUDA backend against CuPy called directly (and torch CUDA when importable), in one
process. Runs only where ``tp.cuda.is_available()``; elsewhere it says why and exits.

* 4096x4096 float32 ``add`` and ``matmul``: ``tp`` against ``cupy`` on the arrays the tensors
  hold (goal: at most 1.05x CuPy), and against torch;
* tiny-op overhead: ``tp.add`` on 1-element CUDA tensors against ``cupy.add`` and ``torch.add``
  (launches are asynchronous: this is the host-side cost of a call);
* the autocast float16 matmul speed-up (``with tp.autocast("cuda")``), when the autocast
  plugin is installed.

GPU work is timed as batches of calls closed by a device synchronize, best of interleaved
rounds (bench/_timing.py's reasoning: noise only adds time).

Run: ``uv run --all-packages --extra cuda12 python bench/cuda_backend.py``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _timing import interleaved, us  # noqa: E402

import tensorplug as tp  # noqa: E402


def gpu_interleaved(
    fns: dict[str, Callable[[], Any]], sync: Callable[[], None], *, number: int, rounds: int
) -> dict[str, float]:
    """Best per-call time of each function, ``number`` calls then a synchronize, interleaved."""
    best = {name: float("inf") for name in fns}
    for fn in fns.values():  # warm-up: kernel compilation, memory pool
        fn()
    sync()
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            sync()
            best[name] = min(best[name], (time.perf_counter() - t0) / number)
    return best


def torch_cuda() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def large(cp: Any, torch: Any) -> None:
    n = 4096
    rng = cp.random.default_rng(0)
    a_cp = rng.standard_normal((n, n), dtype=cp.float32)
    b_cp = rng.standard_normal((n, n), dtype=cp.float32)
    a, b = tp.tensor(cp.asnumpy(a_cp), device="cuda"), tp.tensor(cp.asnumpy(b_cp), device="cuda")
    ad, bd = a._data, b._data  # the arrays the tensors hold, for CuPy itself
    for op, cp_fn, tp_fn, torch_name in (
        ("add", lambda: cp.add(ad, bd), lambda: tp.add(a, b), "add"),
        ("matmul", lambda: cp.matmul(ad, bd), lambda: tp.matmul(a, b), "matmul"),
    ):
        fns = {"cupy": cp_fn, "tp": tp_fn}
        if torch is not None:
            at = torch.as_tensor(ad, device="cuda")
            bt = torch.as_tensor(bd, device="cuda")
            tf = getattr(torch, torch_name)
            fns["torch"] = lambda at=at, bt=bt, tf=tf: tf(at, bt)
        sync = cp.cuda.Device().synchronize
        number = 20 if op == "add" else 5
        t = gpu_interleaved(fns, sync, number=number, rounds=9)
        t2 = gpu_interleaved(dict(reversed(fns.items())), sync, number=number, rounds=9)
        t = {k: min(t[k], t2[k]) for k in t}
        print(f"{n}x{n} float32 {op}")
        for name, v in t.items():
            print(f"  {name:8s} {us(v)}  {v / t['cupy']:.3f}x cupy")
        print(f"  goal: tp <= 1.05x cupy: {t['tp'] / t['cupy']:.3f}x")


def tiny(cp: Any, torch: Any) -> None:
    a_cp = cp.ones(1, cp.float32)
    a = tp.ones([1], device="cuda")
    ad = a._data
    fns = {"cupy.add": lambda: cp.add(ad, ad), "tp.add": lambda: tp.add(a, a)}
    if torch is not None:
        at = torch.ones(1, device="cuda")
        fns["torch.add"] = lambda: torch.add(at, at)
    del a_cp
    t = interleaved(fns, number=5000, rounds=11)
    cp.cuda.Device().synchronize()
    print("1-element float32 CUDA tensors (host-side cost per call)")
    for name, v in t.items():
        ref = f"  {v / t['torch.add']:.2f}x torch.add" if "torch.add" in t else ""
        print(f"  {name:10s} {us(v)}  {v / t['cupy.add']:.2f}x cupy.add{ref}")


def autocast_matmul(cp: Any) -> None:
    if "autocast" not in tp.plugins.loaded_names():
        print("autocast float16 matmul: the autocast plugin is not installed; skipped")
        return
    n = 4096
    a, b = tp.randn([n, n], device="cuda"), tp.randn([n, n], device="cuda")

    def amp() -> Any:
        with tp.autocast("cuda"):
            return a @ b

    with tp.autocast("cuda"):
        assert (a @ b).dtype is tp.float16, "autocast on cuda should run matmul in float16"
    sync = cp.cuda.Device().synchronize
    t = gpu_interleaved({"float32": lambda: a @ b, "autocast": amp}, sync, number=5, rounds=9)
    print(f"{n}x{n} matmul under tp.autocast('cuda') (float16)")
    print(f"  float32 {us(t['float32'])}   autocast {us(t['autocast'])}   "
          f"speed-up {t['float32'] / t['autocast']:.2f}x")  # fmt: skip


def main() -> int:
    if not tp.cuda.is_available():
        from tensorplug import _backends

        rt = _backends.runtime("cuda")
        why = "tensorplug-cuda is not loaded" if rt is None else rt.unavailable_reason()
        print(f"bench/cuda_backend.py needs a CUDA device: {why}")
        return 0
    from tensorplug_cuda import loader

    cp = loader.cupy()  # CuPy, as the plugin imported it
    torch = torch_cuda()
    print(f"device: {tp.cuda.get_device_name()}; torch CUDA: {'yes' if torch else 'no'}")
    large(cp, torch)
    tiny(cp, torch)
    autocast_matmul(cp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
