"""Loading data for training (``tensorplug.utils.data``), in the image of ``torch.utils.data``.

Datasets (``Dataset``, ``IterableDataset``, ``TensorDataset``, ``StackDataset``,
``ConcatDataset``, ``ChainDataset``, ``Subset``, ``random_split``), samplers, the collate
functions, and ``DataLoader`` with worker processes that hand CPU tensors over in shared memory.
docs/data.md describes them, workers and seeding included.

Usage::

    from tensorplug.utils.data import DataLoader, TensorDataset

    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, num_workers=2)
    for xb, yb in loader:
        ...
"""

from __future__ import annotations

from ._collate import default_collate, default_convert
from ._worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
    "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler",
    "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
    "WorkerInfo", "default_collate", "default_convert", "get_worker_info", "random_split",
]  # fmt: skip
