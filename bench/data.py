"""tensorplug.utils.data's DataLoader against torch.utils.data's, in one process.

Two datasets, each in both frameworks, of the same samples built by the same operators:

* ``images``: 3x64x64 float32 images (48 KiB each) normalized per sample
  (``x[i] * s + t``), batches of 64 (3 MiB): the hand-over of large batches dominates;
* ``rows``: 32 float32 features and an int label per sample, batches of 256: the per-sample
  Python work dominates.

Each batch's values are read once (``sum``), as a training step reads them. For each: samples
per second and CPU time per sample (main process and workers together) for ``num_workers=0`` and ``num_workers=2`` (steady state: the
epochs after the first of a loader with ``persistent_workers=True``), and for tensorplug with 2
workers also with shared memory turned off (every tensor pickled through the pipe), which is
what the shared-memory hand-over (Note [Tensors through shared memory]) saves. The machine is
shared: the candidates' epochs are interleaved, and each figure is the best of 5. Run with torch importable for the torch columns:
``PYTHONPATH=/work/torchenv/lib/python3.11/site-packages uv run python bench/data.py``.
"""

from __future__ import annotations

import os
import time
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import tensorplug as tp  # noqa: E402
from tensorplug.utils.data import (  # noqa: E402
    DataLoader,
    Dataset,
    _shared,  # noqa: E402
)

try:
    import torch
    import torch.utils.data as tud

    torch.set_num_threads(1)
except ImportError:  # the torch columns are left out
    torch = None  # type: ignore[assignment]


class TpImages(Dataset):
    def __init__(self, n: int) -> None:
        self.x = tp.randn(n, 3, 64, 64)
        self.y = tp.arange(n)

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def __getitem__(self, i: int) -> Any:
        return self.x[i] * 0.5 + 0.1, self.y[i]


class TpRows(Dataset):
    def __init__(self, n: int) -> None:
        self.x = tp.randn(n, 32)
        self.y = tp.arange(n)

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def __getitem__(self, i: int) -> Any:
        return self.x[i] * 0.5 + 0.1, self.y[i]


def torch_dataset(kind: str, n: int) -> Any:
    shape = (3, 64, 64) if kind == "images" else (32,)

    class D(tud.Dataset):
        def __init__(self) -> None:
            self.x = torch.randn(n, *shape)
            self.y = torch.arange(n)

        def __len__(self) -> int:
            return n

        def __getitem__(self, i: int) -> Any:
            return self.x[i] * 0.5 + 0.1, self.y[i]

    return D()


def _worker_pids(loader: Any) -> list[int]:
    it = getattr(loader, "_iterator", None)
    return [w.pid for w in getattr(it, "_workers", [])]


def _cpu(pids: list[int]) -> float:
    """CPU seconds of this process and of ``pids`` (Linux: /proc/<pid>/stat)."""
    total = time.process_time()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return total


def epoch(loader: Any) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the main process and the workers) of one epoch."""
    pids = _worker_pids(loader)
    c, t = _cpu(pids), time.perf_counter()
    for batch in loader:
        batch[0].sum()  # read every value once, as a training step would
    return time.perf_counter() - t, _cpu(pids) - c


def rates(loaders: dict[str, Any], n: int, rounds: int = 5) -> dict[str, tuple[float, float]]:
    """(samples per second of the best epoch, CPU microseconds per sample of the cheapest), the
    loaders' epochs interleaved round by round (a slow phase of the shared machine then hits
    every candidate); each loader's first epoch, which starts its workers, is not counted. The
    CPU time (main process and workers together) is what the machine's load changes least."""
    wall = dict.fromkeys(loaders, float("inf"))
    cpu = dict.fromkeys(loaders, float("inf"))
    for _ in range(rounds):
        for name, loader in loaders.items():
            w, c = epoch(loader)
            wall[name] = min(wall[name], w)
            cpu[name] = min(cpu[name], c)
    return {name: (n / wall[name], cpu[name] / n * 1e6) for name in loaders}


def main() -> None:
    for kind, n, bs in (("images", 1024, 64), ("rows", 8192, 256)):
        compare(kind, n, bs)


def compare(kind: str, n: int, bs: int) -> None:
    ds = TpImages(n) if kind == "images" else TpRows(n)
    loaders: dict[str, Any] = {"tensorplug, 0 workers": DataLoader(ds, batch_size=bs)}
    shm = DataLoader(ds, batch_size=bs, num_workers=2, persistent_workers=True)
    epoch(shm)  # starts the workers
    loaders["tensorplug, 2 workers (shared memory)"] = shm
    saved = _shared.MIN_BYTES
    _shared.MIN_BYTES = 1 << 62  # every tensor pickled: the workers fork with this
    try:
        pickled = DataLoader(ds, batch_size=bs, num_workers=2, persistent_workers=True)
        epoch(pickled)
    finally:
        _shared.MIN_BYTES = saved
    loaders["tensorplug, 2 workers (pickled)"] = pickled
    if torch is not None:
        tds = torch_dataset(kind, n)
        loaders["torch, 0 workers"] = tud.DataLoader(tds, batch_size=bs)
        t2 = tud.DataLoader(tds, batch_size=bs, num_workers=2, persistent_workers=True)
        epoch(t2)
        loaders["torch, 2 workers"] = t2
    got = rates(loaders, n)
    print(f"\n{kind}: {n} samples, batches of {bs}")
    for name, (r, c) in got.items():
        print(f"  {name:40s} {r:10.0f} samples/s {c:8.1f} CPU us/sample")
    shm, pickled = (
        got["tensorplug, 2 workers (shared memory)"],
        got["tensorplug, 2 workers (pickled)"],
    )
    print(
        f"  shared memory / pickled: {shm[0] / pickled[0]:.2f}x the throughput, "
        f"{shm[1] / pickled[1]:.2f}x the CPU time"
    )
    if torch is not None:
        t2, t0 = got["torch, 2 workers"], got["torch, 0 workers"]
        print(
            f"  tensorplug / torch, 2 workers: {shm[0] / t2[0]:.2f}x the throughput, "
            f"{shm[1] / t2[1]:.2f}x the CPU time"
        )
        ours0 = got["tensorplug, 0 workers"]
        print(
            f"  tensorplug / torch, 0 workers: {ours0[0] / t0[0]:.2f}x the throughput, "
            f"{ours0[1] / t0[1]:.2f}x the CPU time"
        )


if __name__ == "__main__":
    main()
