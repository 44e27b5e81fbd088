"""Fetching one batch from a dataset (internal): by indices from a map-style dataset, or by
drawing the next samples of an iterable one; the same in the main process and in workers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["FetcherSpec"]


class _MapFetcher:
    def __init__(self, spec: FetcherSpec) -> None:
        self.dataset = spec.dataset
        self.auto_collation = spec.auto_collation
        self.collate_fn = spec.collate_fn

    def fetch(self, index: Any) -> Any:
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems:
                data = getitems(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, spec: FetcherSpec) -> None:
        self.it: Iterator[Any] = iter(spec.dataset)
        self.auto_collation = spec.auto_collation
        self.collate_fn = spec.collate_fn
        self.drop_last = spec.drop_last
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.it))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.it)
        return self.collate_fn(data)


@dataclass
class FetcherSpec:
    """What a fetcher needs; calling it makes a fresh fetcher (picklable, for workers)."""

    dataset: Any
    is_iterable: bool
    auto_collation: bool
    collate_fn: Callable[[Any], Any]
    drop_last: bool

    def __call__(self) -> _MapFetcher | _IterableFetcher:
        if self.is_iterable:
            return _IterableFetcher(self)
        return _MapFetcher(self)
