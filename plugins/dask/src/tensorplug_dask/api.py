"""``tp.dask``: dask tensors in and out, chunks, persisting and computing, the scheduler.

* :func:`from_dask` / :func:`to_dask`: a tensor over a dask array and back, no copy;
* :func:`rechunk`: a tensor's chunks, set in place (its values and autograd history unchanged);
* :func:`compute`: the values of several tensors as numpy arrays, computed together;
* :func:`persist`: tensors' chunks computed and kept (in memory, or on the cluster's workers),
  so later reads and ops start from them instead of recomputing their whole history;
* :func:`step`: an optimizer step that persists the parameters, their gradients, the
  optimizer's state and any tensor given (the loss): a training loop that reads
  ``loss.item()`` each step computes each step once;
* :func:`use` / :func:`current_client`: the scheduler (Note [Scheduler choice] in
  scheduler.py); :func:`show_progress`: progress bars (Note [Progress]);
* :func:`chunk_bytes` / :func:`default_chunks`: the default chunking (Note [Default chunks]
  in chunks.py); :func:`task_count`: the size of the graph behind tensors.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tensorplug import array_backend, keys
from tensorplug.tensor import Tensor, new_tensor

from .chunks import chunk_bytes, default_chunks
from .scheduler import (
    compute_arrays,
    current_client,
    persist_arrays,
    progress_enabled,
    show_progress,
    use,
)

__all__ = [
    "chunk_bytes",
    "chunks",
    "compute",
    "current_client",
    "default_chunks",
    "from_dask",
    "is_available",
    "persist",
    "progress_enabled",
    "rechunk",
    "show_progress",
    "step",
    "task_count",
    "to_dask",
    "use",
]

LAZY: array_backend.LazyArrayBackend | None = None  # set while the plugin is loaded


def is_available() -> bool:
    """Whether dask tensors can be made (dask.array imports)."""
    try:
        import dask.array  # noqa: F401
    except ImportError:
        return False
    return True


def _backend() -> Any:
    if LAZY is None:
        raise RuntimeError("tp.dask: the tensorplug-dask plugin is not loaded")
    return LAZY.load()


def from_dask(array: Any) -> Tensor:
    """A tensor on ``"dask"`` over dask array ``array`` itself (no copy, no compute); its dtype
    is the array's (``float64`` stays ``float64``)."""
    import numpy

    storage = _backend().storage
    host = numpy.empty((0,), dtype=array.dtype)  # a dtype probe: host_dtype reads .dtype
    d = storage.host_dtype(host)
    dev = storage.device(_device())
    return new_tensor(array, d, dev, keys.tensor_keyset("Dask"))


def _device() -> Any:
    from tensorplug.device import device

    return device("dask")


def to_dask(t: Tensor) -> Any:
    """The dask array a ``"dask"`` tensor holds (no copy, no compute)."""
    _check(t, "to_dask")
    return t.tp_data


def _check(t: Any, caller: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"tp.dask.{caller}: expected a Tensor, got {type(t).__name__}")
    if t.tp_device.type != "dask":
        raise ValueError(
            f"tp.dask.{caller}: expected a tensor on 'dask', got one on {str(t.tp_device)!r}; "
            "move it with .to('dask')"
        )


def chunks(t: Tensor) -> tuple[tuple[int, ...], ...]:
    """The chunk sizes of a ``"dask"`` tensor along each dimension (dask's ``.chunks``)."""
    _check(t, "chunks")
    return tuple(tuple(int(n) for n in c) for c in t.tp_data.chunks)


def rechunk(t: Tensor, chunks: Any = "auto") -> Tensor:
    """Set the chunks of ``t`` in place (dask's ``rechunk``: ``"auto"``, ``-1`` for one
    chunk per dimension, a size per dimension, or explicit sizes) and return ``t``. The values,
    the version counter and the autograd history are unchanged: it is where the values are cut,
    not what they are."""
    _check(t, "rechunk")
    t.tp_data = t.tp_data.rechunk(chunks)
    return t


def compute(*tensors: Tensor) -> tuple[Any, ...]:
    """The values of ``tensors`` as numpy arrays, computed together (tasks they share run
    once), on the current scheduler."""
    for t in tensors:
        _check(t, "compute")
    return compute_arrays(*(t.tp_data for t in tensors))


def persist(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Compute ``tensors`` together and keep their chunks (in memory locally, on the workers
    of a cluster): each tensor's array is replaced in place by the persisted one, so reads and
    ops from then on start there. Returns the tensors."""
    ts = [t for t in tensors if t is not None]
    for t in ts:
        _check(t, "persist")
    if not ts:
        return ()
    done = persist_arrays(*(t.tp_data for t in ts))
    for t, a in zip(ts, done, strict=True):
        t.tp_data = a
    return tuple(ts)


def _optimizer_tensors(optimizer: Any) -> list[Tensor]:
    out: list[Tensor] = []
    seen: set[int] = set()

    def add(x: Any) -> None:
        if isinstance(x, Tensor) and x.tp_device.type == "dask" and id(x) not in seen:
            seen.add(id(x))
            out.append(x)

    for group in optimizer.param_groups:
        for p in group["params"]:
            add(p)
            add(getattr(p, "grad", None))
    for state in optimizer.state.values():
        for v in state.values():
            add(v)
    return out


def step(optimizer: Any, *tensors: Tensor, closure: Any = None) -> Any:
    """``optimizer.step()``, then :func:`persist` of its parameters, their gradients, its state
    and ``tensors`` (the step's loss), all in one compute: the parameters of the next step start
    from computed chunks instead of the graph of every step before, and ``loss.item()`` reads a
    persisted value, so each step computes once. Returns what ``optimizer.step`` returns."""
    result = optimizer.step() if closure is None else optimizer.step(closure)
    persist(*_optimizer_tensors(optimizer), *(t for t in tensors if t.tp_device.type == "dask"))
    return result


def task_count(*tensors: Tensor | Iterable[Tensor], optimized: bool = False) -> int:
    """The number of tasks in the graph behind ``tensors`` (shared tasks counted once), as
    built; with ``optimized``, after dask's graph optimization (blockwise and linear fusion,
    culling): what a compute of them runs."""
    arrays = []
    for t in tensors:
        items = [t] if isinstance(t, Tensor) else list(t)
        for x in items:
            _check(x, "task_count")
            arrays.append(x.tp_data)
    if optimized:
        import dask

        arrays = list(dask.optimize(*arrays))
    graphs: dict[Any, Any] = {}
    for a in arrays:
        graphs.update(dict(a.__dask_graph__()))
    return len(graphs)
