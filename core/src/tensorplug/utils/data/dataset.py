"""Datasets: ``Dataset`` (map-style), ``IterableDataset``, and the ones built from others
(``TensorDataset``, ``StackDataset``, ``ConcatDataset``, ``ChainDataset``, ``Subset``), plus
``random_split``. Behaviour and error messages are PyTorch's.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ... import dtypes as _dtypes
from ...ops import ops
from ...random import Generator
from ...tensor import Tensor

__all__ = [
    "ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset", "Subset",
    "TensorDataset", "random_split",
]  # fmt: skip

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")


class Dataset(Generic[T_co]):
    """A map from keys (usually ``0 .. len-1``) to samples: subclasses define ``__getitem__``
    (and usually ``__len__``, which samplers and ``DataLoader`` read). A subclass may also
    define ``__getitems__(indices)`` to fetch a whole batch at once."""

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A stream of samples: subclasses define ``__iter__``. With worker processes each worker
    iterates its own copy: use :func:`get_worker_info` in ``__iter__`` (or in
    ``worker_init_fn``) to give each worker its share, or every sample comes once per worker."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; the tensors share their first size."""

    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        assert all(tensors[0].size(0) == t.size(0) for t in tensors), (
            "Size mismatch between tensors"
        )
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return int(self.tensors[0].size(0))


class StackDataset(Dataset[Any]):
    """Several datasets of one length side by side: ``StackDataset(a, b)[i]`` is
    ``(a[i], b[i])``, ``StackDataset(x=a, y=b)[i]`` is ``{"x": a[i], "y": b[i]}``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) "
                    "like input/output, but both types are given."
                )
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets: tuple[Any, ...] | dict[str, Any] = args
        elif kwargs:
            values = list(kwargs.values())
            self._length = len(values[0])
            if any(self._length != len(d) for d in values):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list[Any]) -> list[Any]:
        if isinstance(self.datasets, dict):
            out: list[Any] = [{} for _ in indices]
            for k, d in self.datasets.items():
                items = _items(d, indices)
                for sample, item in zip(out, items, strict=True):
                    sample[k] = item
            return out
        columns = [_items(d, indices) for d in self.datasets]
        return [tuple(row) for row in zip(*columns, strict=True)]

    def __len__(self) -> int:
        return self._length


def _items(dataset: Any, indices: list[Any]) -> list[Any]:
    getitems = getattr(dataset, "__getitems__", None)
    if callable(getitems):
        items = getitems(indices)
        if len(items) != len(indices):
            raise ValueError(
                f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}"
            )
        return list(items)
    return [dataset[i] for i in indices]


class ConcatDataset(Dataset[T_co]):
    """The samples of several map-style datasets, one after the other."""

    datasets: list[Dataset[T_co]]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]:
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets: Iterable[Dataset[T_co]]) -> None:
        self.datasets = list(datasets)
        assert len(self.datasets) > 0, "datasets should not be an empty iterable"
        for d in self.datasets:
            assert not isinstance(d, IterableDataset), (
                "ConcatDataset does not support IterableDataset"
            )
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset[Any]):
    """The samples of several iterable datasets, one stream after the other."""

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[T_co]:
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return list(getitems([self.indices[i] for i in indices]))
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Dataset[T],
    lengths: Sequence[int | float],
    generator: Generator | None = None,
) -> list[Subset[T]]:
    """Split ``dataset`` at random into non-overlapping :class:`Subset`\\ s of ``lengths``,
    given as counts or as fractions summing to 1 (floor of each fraction, the remainder
    handed out one by one from the first split, as PyTorch). ``generator`` (default: the
    default CPU generator) draws the permutation."""
    n = len(dataset)  # type: ignore[arg-type]
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        sizes: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, length in enumerate(sizes):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = ops.aten.randperm.default(int(sum(lengths)), generator=generator, dtype=_dtypes.int64)
    indices: list[int] = perm.tolist()
    return [
        Subset(dataset, indices[offset - int(length) : offset])
        for offset, length in zip(
            itertools.accumulate(int(x) for x in lengths), lengths, strict=True
        )
    ]
