"""The worker processes of a ``DataLoader`` (internal): what each runs, and what it knows about
itself (:func:`get_worker_info`).

Note [Worker seeding]
~~~~~~~~~~~~~~~~~~~~~
As in PyTorch: the loader draws one ``base_seed`` per iterator from its ``generator`` (or the
default generator), and worker ``i`` seeds Python's ``random`` and tensorplug's default
generators with ``base_seed + i`` before ``worker_init_fn(i)`` runs; numpy's global generator
gets a state derived from both (``SeedSequence([i, base_seed])``), so workers never share
numpy's stream either. ``get_worker_info().seed`` is ``base_seed + i``.
"""

from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ... import random as _random
from . import _shared

__all__ = ["ExceptionWrapper", "WorkerInfo", "get_worker_info"]

# how often a worker waiting for work checks that the loader is not shutting down and that its
# parent is alive (seconds): a shutdown reaches it through the done event even when the None
# task cannot (the iterator collected inside a queue's own feeder thread)
STATUS_CHECK_INTERVAL = 0.2


@dataclass(frozen=True)
class WorkerInfo:
    """What :func:`get_worker_info` returns inside a worker process."""

    id: int
    num_workers: int
    seed: int
    dataset: Any

    def __repr__(self) -> str:
        return (
            f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
            f"dataset={self.dataset!r})"
        )


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a ``DataLoader`` worker process: its ``id``, ``num_workers``, ``seed`` and its copy of
    the ``dataset``; ``None`` in the main process. An ``IterableDataset`` reads it to split its
    stream among the workers."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback."""

    def __init__(self, exc_info: Any = None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        """Raise the exception again, as its own type when it can be built from a message
        (PyTorch's text: "Caught ValueError in DataLoader worker process 0. Original
        Traceback ..."), else as a ``RuntimeError``."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """A KeyError's message shown as written (KeyError would repr it)."""

    def __repr__(self) -> str:
        return str(self)


class IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class ResumeIteration:
    """A persistent worker starts a new epoch."""


def _seed_worker(base_seed: int, worker_id: int) -> int:
    seed = base_seed + worker_id
    random.seed(seed)
    _random.manual_seed(seed)
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy comes with the CPU backend
        return seed
    state = numpy.random.SeedSequence([worker_id, base_seed]).generate_state(4)
    numpy.random.seed(state)
    return seed


def worker_loop(
    fetcher_factory: Callable[[], Any],
    dataset: Any,
    is_iterable: bool,
    index_queue: Any,
    data_queue: Any,
    done_event: Any,
    base_seed: int,
    init_fn: Callable[[int], None] | None,
    worker_id: int,
    num_workers: int,
    shm_prefix: str | None,
) -> None:
    """A worker process: fetch and collate the batches ``index_queue`` asks for, put them on
    ``data_queue`` as ``(task index, payload)``, until a None task or the done event."""
    global _worker_info
    # names unique across the workers: <loader prefix><worker>_<counter>
    pool = None if shm_prefix is None else _shared.WorkerPool(f"{shm_prefix}{worker_id}_")
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        init_exception: ExceptionWrapper | None = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = fetcher_factory()
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        parent = os.getppid()
        iteration_end = False
        while True:
            try:
                task = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set() or os.getppid() != parent:  # shut down, or orphaned
                    break
                continue
            if task is None:
                break
            if isinstance(task, _shared.Freed):
                if pool is not None:
                    pool.give_back(task.names)
                continue
            if isinstance(task, ResumeIteration):
                data_queue.put((task, None))
                iteration_end = False
                try:
                    fetcher = fetcher_factory()
                except Exception:
                    init_exception = ExceptionWrapper(
                        where=f"in DataLoader worker process {worker_id}"
                    )
                continue
            if done_event.is_set() or iteration_end:
                continue
            idx, index = task
            data: Any
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)  # type: ignore[union-attr]
                except Exception as e:
                    if isinstance(e, StopIteration) and is_iterable:
                        data = IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            if isinstance(data, ExceptionWrapper | IterableDatasetStopIteration):
                data_queue.put((idx, data))
            else:
                try:
                    payload = _shared.dumps(data, pool)
                except Exception:
                    data_queue.put(
                        (idx, ExceptionWrapper(where=f"in DataLoader worker process {worker_id}"))
                    )
                    continue
                data_queue.put((idx, payload))
            del data
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
