"""Samplers: which dataset indices a ``DataLoader`` loads, and in which order.

``SequentialSampler``, ``RandomSampler`` (with or without replacement, ``num_samples``,
``generator``), ``SubsetRandomSampler``, ``WeightedRandomSampler``, ``BatchSampler`` (indices
in lists of ``batch_size``) and ``DistributedSampler`` (one replica's share, reshuffled per
``set_epoch``). Arguments and errors are PyTorch's.

A seeded ``generator`` gives the same order on every run. The random orders come from
tensorplug's ``randperm`` / ``randint`` / ``multinomial`` on the CPU generator, whose stream is
numpy's, not PyTorch's: the same seed gives a fixed order here and another fixed order in
PyTorch (docs/data.md).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

from ... import dtypes as _dtypes
from ...ops import ops
from ...random import Generator
from ...tensor import Tensor

__all__ = [
    "BatchSampler", "DistributedSampler", "RandomSampler", "Sampler", "SequentialSampler",
    "SubsetRandomSampler", "WeightedRandomSampler",
]  # fmt: skip

_aten = ops.aten
T_co = TypeVar("T_co", covariant=True)


def fresh_seed(generator: Generator | None = None) -> int:
    """A 63-bit seed drawn from ``generator`` (default: the default CPU generator), as
    PyTorch's ``torch.empty((), dtype=torch.int64).random_(generator=g).item()``."""
    t = _aten.empty.memory_format([], dtype=_dtypes.int64)
    seed: int = _aten.random_.default(t, generator=generator).item()
    return seed


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` (indices, or lists of them) and usually
    ``__len__``."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _check_num_samples(num_samples: Any) -> None:
    if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
        raise ValueError(
            f"num_samples should be a positive integer value, but got num_samples={num_samples}"
        )


class RandomSampler(Sampler[int]):
    """A random permutation of the indices (``replacement=False``), or ``num_samples``
    indices drawn with replacement. Without a ``generator`` each iteration draws a fresh seed
    from the default generator (so ``tp.manual_seed`` fixes the orders)."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        _check_num_samples(self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = Generator().manual_seed(fresh_seed())
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _aten.randint.low(0, n, [32], generator=generator).tolist()
            rest = self.num_samples % 32
            yield from _aten.randint.low(0, n, [rest], generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _aten.randperm.default(n, generator=generator).tolist()
            yield from _aten.randperm.default(n, generator=generator).tolist()[
                : self.num_samples % n
            ]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a random order."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _aten.randperm.default(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(
        self,
        weights: Sequence[float] | Tensor,
        num_samples: int,
        replacement: bool = True,
        generator: Generator | None = None,
    ) -> None:
        _check_num_samples(num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        from ..._opset.construct import as_tensor

        w = as_tensor(weights, dtype=_dtypes.float64)
        if w.dim() != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        rand = _aten.multinomial.default(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from rand.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """The indices of ``sampler`` in lists of ``batch_size`` (the last one shorter, unless
    ``drop_last``)."""

    def __init__(
        self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)
        size = self.batch_size
        while True:
            batch = list(itertools.islice(it, size))
            if not batch or (self.drop_last and len(batch) < size):
                return
            yield batch
            if len(batch) < size:
                return

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size


class DistributedSampler(Sampler[int]):
    """Replica ``rank``'s share (every ``num_replicas``-th index) of a dataset, padded by
    repetition to equal shares (or cut, with ``drop_last``), shuffled with ``seed + epoch``:
    call :meth:`set_epoch` before each epoch for a new order.

    tensorplug has no process-group package yet: ``num_replicas`` and ``rank`` default to 1
    and 0 (one process) instead of being read from it; pass them to shard by hand.
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None:
            num_replicas = 1
        if rank is None:
            rank = 0
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            g = Generator().manual_seed(self.seed + self.epoch)
            indices: list[int] = _aten.randperm.default(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[: self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank : self.total_size : self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next iteration's shuffle is seeded with (``seed + epoch``)."""
        self.epoch = epoch
