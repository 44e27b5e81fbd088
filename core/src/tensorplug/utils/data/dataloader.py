"""``DataLoader``: batches of a dataset, loaded in the main process or in worker processes.

Note [DataLoader workers]
~~~~~~~~~~~~~~~~~~~~~~~~~
With ``num_workers=0`` the main process fetches and collates each batch when it is asked for.
With ``num_workers > 0`` it starts that many processes (``multiprocessing``, the default start
method or ``multiprocessing_context``), each with its own copy of the dataset, an index queue
and one shared result queue. The main process samples the indices (so the order is the
sampler's, whatever the workers' speed) and keeps ``prefetch_factor`` tasks per worker in
flight, handed round-robin to the workers that are not exhausted. Results come back tagged
with their task number; with ``in_order=True`` (the default) they are yielded in task order,
so a seeded loader gives the same batches with any number of workers; ``in_order=False``
yields each as it arrives. Tensors come back through shared memory (Note [Tensors through
shared memory] in _shared.py). An exception in a worker is raised again in the main process
with the worker's traceback; a worker that dies, or a ``timeout`` with nothing received,
raises ``RuntimeError``.

The workers stop when the iterator is exhausted, deleted or garbage-collected (the iterator
sends each a None task, joins it, terminates what is left after a grace period and unlinks
any shared memory never received), unless ``persistent_workers=True``: then they live as long
as the loader and each new epoch resumes them.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from ...random import Generator
from . import _shared, _worker
from ._collate import default_collate, default_convert
from ._fetch import FetcherSpec
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, fresh_seed

__all__ = ["DataLoader"]

T_co = TypeVar("T_co", covariant=True)

# how long the main process waits on the result queue before checking the workers are alive
_STATUS_CHECK_INTERVAL = 5.0
_JOIN_TIMEOUT = 5.0


class _InfiniteConstantSampler(Sampler[None]):
    """The "indices" of an iterable dataset: None, forever."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class DataLoader(Generic[T_co]):
    """Batches of ``dataset``, in the order of a sampler, optionally loaded by worker
    processes. Arguments, defaults and errors are PyTorch's (docs/data.md):

    - ``batch_size`` (default 1; None turns batching off), ``shuffle`` (a ``RandomSampler``
      drawing from ``generator``), ``sampler`` / ``batch_sampler`` (exclusive with them),
      ``drop_last``, ``collate_fn`` (default :func:`default_collate`, or
      :func:`default_convert` without batching);
    - ``num_workers``, ``prefetch_factor`` (tasks in flight per worker, default 2),
      ``persistent_workers``, ``worker_init_fn``, ``multiprocessing_context``, ``timeout``,
      ``in_order`` (Note [DataLoader workers]);
    - ``generator``: draws the shuffle order and the workers' base seed (Note [Worker
      seeding]);
    - ``pin_memory`` / ``pin_memory_device``: accepted, and a no-op: tensorplug's CPU memory
      needs no pinning for its backends' copies.
    """

    dataset: Any
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    drop_last: bool
    timeout: float
    sampler: Any
    prefetch_factor: int | None
    _iterator: Any

    __initialized = False

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler[Any] | Iterable[Any] | None = None,
        batch_sampler: Sampler[list[Any]] | Iterable[list[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set "
                "prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        self._is_iterable = isinstance(dataset, IterableDataset)

        if self._is_iterable:
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None:
            sampler_: Any
            if self._is_iterable:
                sampler_ = _InfiniteConstantSampler()
            elif shuffle:
                sampler_ = RandomSampler(dataset, generator=generator)
            else:
                sampler_ = SequentialSampler(dataset)
            sampler = sampler_
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self._iterator = None
        self.__initialized = True

    # --- PyTorch's guards --------------------------------------------------------------------

    @property
    def multiprocessing_context(self) -> Any:
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context: Any) -> None:
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if isinstance(context, str):
                valid = multiprocessing.get_all_start_methods()
                if context not in valid:
                    raise ValueError(
                        "multiprocessing_context option should specify a valid start method "
                        f"in {valid!r}, but got multiprocessing_context={context!r}"
                    )
                context = multiprocessing.get_context(context)
            elif not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a "
                    "string specifying the start method, but got "
                    f"multiprocessing_context={context}"
                )
        self.__multiprocessing_context = context

    def __setattr__(self, attr: str, val: Any) -> None:
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {type(self).__name__} is initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def _fetcher_spec(self) -> FetcherSpec:
        return FetcherSpec(
            self.dataset, self._is_iterable, self._auto_collation, self.collate_fn, self.drop_last
        )

    # --- iteration ---------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset(self)
            it: Iterator[Any] = self._iterator
            return it
        return _MultiProcessIter(self)

    def __len__(self) -> int:
        if self._is_iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return int(length)
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """PyTorch's check of ``num_workers`` against the CPUs; here it only exists."""


class _BaseIter:
    def __init__(self, loader: DataLoader[Any]) -> None:
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._index_sampler = loader._index_sampler
        self._num_yielded = 0
        self._base_seed = fresh_seed(loader.generator)
        self._sampler_iter = iter(self._index_sampler)

    def __iter__(self) -> _BaseIter:
        return self

    def _reset(self, loader: DataLoader[Any]) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self) -> Any:
        return next(self._sampler_iter)

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        return data

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader: DataLoader[Any]) -> None:
        super().__init__(loader)
        self._fetcher = loader._fetcher_spec()()

    def _next_data(self) -> Any:
        index = self._next_index()  # may raise StopIteration
        return self._fetcher.fetch(index)


class _MultiProcessIter(_BaseIter):
    """Note [DataLoader workers]."""

    def __init__(self, loader: DataLoader[Any]) -> None:
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor or 0
        self._timeout = loader.timeout
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._shm_prefix: str | None = (
            f"tp_dl_{os.getpid()}_{uuid.uuid4().hex[:12]}_" if _shared.shm_available() else None
        )
        self._freed = None if self._shm_prefix is None else _shared.register(self._shm_prefix)
        self._data_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues: list[Any] = []
        self._workers: list[Any] = []
        self._shutdown = False
        self._lock = threading.Lock()
        self._owner = os.getpid()  # a forked child's copy never shuts the workers down
        spec = loader._fetcher_spec()
        try:
            for i in range(self._num_workers):
                iq = ctx.Queue()
                iq.cancel_join_thread()
                w = ctx.Process(
                    target=_worker.worker_loop,
                    args=(
                        spec,
                        self._dataset,
                        self._is_iterable,
                        iq,
                        self._data_queue,
                        self._done_event,
                        self._base_seed,
                        loader.worker_init_fn,
                        i,
                        self._num_workers,
                        self._shm_prefix,
                    ),
                    daemon=True,
                )
                w.start()
                self._index_queues.append(iq)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader[Any], first_iter: bool = False) -> None:
        super()._reset(loader)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, tuple[Any, ...]] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: resume each, drain what an early stop left
            for iq in self._index_queues:
                iq.put(_worker.ResumeIteration())
            resumed = 0
            while resumed < self._num_workers:
                tag, data = self._get_data()
                if isinstance(tag, _worker.ResumeIteration):
                    resumed += 1
                elif isinstance(data, bytes):
                    _shared.loads(data)  # its files go back to the pool as it is dropped
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _give_back_files(self) -> None:
        """Hand the shared-memory files whose tensors went back to the workers that wrote
        them (Note [Tensors through shared memory])."""
        freed = self._freed
        if not freed:
            return
        by_worker: dict[int, list[str]] = {}
        n = len(self._shm_prefix or "")
        while freed:
            name = freed.popleft()
            by_worker.setdefault(int(name[n:].split("_", 1)[0]), []).append(name)
        for w, names in by_worker.items():
            if self._workers_status[w]:
                self._index_queues[w].put(_shared.Freed(names))
            else:  # an exhausted worker takes no more tasks: the files go
                for name in names:
                    _shared.unlink(name)

    def _try_put_index(self) -> None:
        self._give_back_files()
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_cycle)
            if self._workers_status[worker]:
                break
        else:
            return  # every worker is exhausted
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self) -> tuple[Any, Any]:
        if self._timeout > 0:
            try:
                item: tuple[Any, Any] = self._data_queue.get(timeout=self._timeout)
            except queue.Empty:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
            return item
        while True:
            try:
                item = self._data_queue.get(timeout=_STATUS_CHECK_INTERVAL)
                return item
            except queue.Empty:
                dead = [
                    w
                    for i, w in enumerate(self._workers)
                    if self._workers_status[i] and not w.is_alive()
                ]
                if dead:
                    pids = ", ".join(str(w.pid) for w in dead)
                    self._shutdown_workers()
                    raise RuntimeError(
                        f"DataLoader worker (pid(s) {pids}) exited unexpectedly"
                    ) from None

    def _next_data(self) -> Any:
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process_data(info[1])
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker.IterableDatasetStopIteration):
                if self._persistent:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if isinstance(data, bytes):
                data = _shared.loads(data)
            if idx != self._rcvd_idx:
                if self._in_order:
                    self._task_info[idx] += (data,)
                    continue
                del self._task_info[idx]
                return self._process_data(data)
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process_data(data)

    def _process_data(self, data: Any) -> Any:
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_unavailable(self, worker_id: int) -> None:
        """An exhausted iterable worker: no more tasks for it; it exits."""
        self._workers_status[worker_id] = False
        self._index_queues[worker_id].put(None)

    def _shutdown_workers(self) -> None:
        with self._lock:
            if self._shutdown or os.getpid() != self._owner:
                return
            self._shutdown = True
        try:
            self._done_event.set()
            for iq in self._index_queues:
                try:
                    iq.put(None)
                except (OSError, ValueError):
                    pass
            for w in self._workers:
                w.join(timeout=_JOIN_TIMEOUT)
                if w.is_alive():
                    w.terminate()
                    w.join()
            while True:  # results never received: drop them (the cleanup below unlinks)
                try:
                    _, data = self._data_queue.get_nowait()
                except (queue.Empty, OSError, ValueError, EOFError):
                    break
            for q in (*self._index_queues, self._data_queue):
                q.cancel_join_thread()
                q.close()
        finally:
            if self._shm_prefix is not None:
                _shared.unregister(self._shm_prefix)
                _shared.cleanup(self._shm_prefix)

    def __del__(self) -> None:
        if getattr(self, "_workers", None) is not None:
            self._shutdown_workers()
