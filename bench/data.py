"""tensorplug.utils.data's DataLoader against torch.utils.data's, in one process.

Two datasets, each in both frameworks, of the same samples built by the same operators:

* ``images``: 3x64x64 float32 images (48 KiB each) normalized per sample
  (``x[i] * s + t``), batches of 64 (3 MiB): the hand-over of large batches dominates;
* ``rows``: 32 float32 features and an int label per sample, batches of 256: the per-sample
  Python work dominates.

For each: samples per second for ``num_workers=0`` and ``num_workers=2`` (steady state: the
second epoch of a loader with ``persistent_workers=True``), and for tensorplug with 2 workers
also with shared memory turned off (every tensor pickled through the pipe), which is what the
shared-memory hand-over (Note [Tensors through shared memory]) saves. The machine is shared:
each figure is the best of a few epochs. Run with torch importable for the torch columns:
``PYTHONPATH=/work/torchenv/lib/python3.11/site-packages uv run python bench/data.py``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
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


def rate(make_loader: Callable[[], Any], n: int, epochs: int = 3) -> float:
    """Samples per second of the best steady-state epoch (the first one starts workers)."""
    loader = make_loader()
    best = float("inf")
    for e in range(epochs + 1):
        t = time.perf_counter()
        for _ in loader:
            pass
        if e:
            best = min(best, time.perf_counter() - t)
    return n / best


def main() -> None:
    for kind, n, bs in (("images", 1024, 64), ("rows", 8192, 256)):
        compare(kind, n, bs)


def compare(kind: str, n: int, bs: int) -> None:
    ds = TpImages(n) if kind == "images" else TpRows(n)
    rows: list[tuple[str, float]] = []
    rows.append(("tensorplug, 0 workers", rate(lambda: DataLoader(ds, batch_size=bs), n)))

    def tp2() -> Any:
        return DataLoader(ds, batch_size=bs, num_workers=2, persistent_workers=True)

    rows.append(("tensorplug, 2 workers (shared memory)", rate(tp2, n)))
    saved = _shared.MIN_BYTES
    _shared.MIN_BYTES = 1 << 62  # every tensor pickled (workers fork after this)
    try:
        rows.append(("tensorplug, 2 workers (pickled)", rate(tp2, n)))
    finally:
        _shared.MIN_BYTES = saved
    if torch is not None:
        tds = torch_dataset(kind, n)
        rows.append(("torch, 0 workers", rate(lambda: tud.DataLoader(tds, batch_size=bs), n)))
        rows.append(
            (
                "torch, 2 workers",
                rate(
                    lambda: tud.DataLoader(
                        tds, batch_size=bs, num_workers=2, persistent_workers=True
                    ),
                    n,
                ),
            )
        )
    print(f"\n{kind}: {n} samples, batches of {bs}")
    for name, r in rows:
        print(f"  {name:40s} {r:10.0f} samples/s")
    if torch is not None:
        ours = dict(rows)["tensorplug, 2 workers (shared memory)"]
        theirs = dict(rows)["torch, 2 workers"]
        print(f"  tensorplug / torch with 2 workers: {ours / theirs:.2f}x the throughput")


if __name__ == "__main__":
    main()
