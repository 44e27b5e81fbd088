"""Where dask tensors compute, and the progress shown while they do.

Note [Scheduler choice]
~~~~~~~~~~~~~~~~~~~~~~~
Every compute of the backend (a value read: ``item()``, ``repr``, ``.cpu()``; ``tp.dask.compute``;
``tp.dask.persist``) goes through :func:`compute_arrays` or :func:`persist_arrays`, which run on:

1. the ``distributed.Client`` given to ``tp.dask.use(client)`` (or an address, which makes one);
2. else, where ``TENSORPLUG_DASK_SCHEDULER`` is set (``tcp://host:port``), a client connected to
   that scheduler, made on the first compute;
3. else dask's own choice: the local threaded scheduler unless ``dask.config`` says otherwise
   (``dask.config.set(scheduler="synchronous")`` is honoured), nothing to start.

``distributed`` is an optional extra (``pip install "tensorplug-dask[distributed]"``), imported only
for 1 and 2.

Note [Progress]
~~~~~~~~~~~~~~~
A compute shows progress when :func:`progress_enabled` says so: by default when standard error is
a terminal, else not; ``tp.dask.show_progress(False)`` (or ``TENSORPLUG_DASK_PROGRESS=0``)
turns it off, ``True`` (``=1``) on. Locally it is dask's ``dask.diagnostics.ProgressBar``, shown
only for computes longer than half a second (a training step's reads stay silent); on a cluster
``distributed.progress`` of the futures.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

__all__ = [
    "compute_arrays",
    "current_client",
    "persist_arrays",
    "progress_enabled",
    "show_progress",
    "use",
]

ENV_SCHEDULER = "TENSORPLUG_DASK_SCHEDULER"
ENV_PROGRESS = "TENSORPLUG_DASK_PROGRESS"

_lock = threading.Lock()
_client: Any = None  # the distributed.Client computes run on, or None (dask's own scheduler)
_env_client: Any = None  # the client made from ENV_SCHEDULER (ours to close)
_progress: bool | None = None  # None: in a terminal only (Note [Progress])
PROGRESS_MINIMUM_S = 0.5


def use(client: Any = None) -> Any:
    """Compute on ``client`` (a ``distributed.Client``, or a scheduler address such as
    ``"tcp://127.0.0.1:8786"``, which connects one); ``None`` goes back to dask's local
    scheduler. Returns the client now in use (or None)."""
    global _client
    if isinstance(client, str):
        client = _connect(client)
    with _lock:
        _client = client
    return client


def current_client() -> Any:
    """The ``distributed.Client`` computes run on, or None for dask's local scheduler
    (Note [Scheduler choice])."""
    global _env_client
    if _client is not None:
        return _client
    address = os.environ.get(ENV_SCHEDULER, "").strip()
    if not address:
        return None
    with _lock:
        if _env_client is None or getattr(_env_client, "scheduler_address", None) != address:
            _env_client = _connect(address)
        return _env_client


def _connect(address: str) -> Any:
    try:
        import distributed
    except ImportError as e:
        raise RuntimeError(
            f"tensorplug-dask: computing on the dask cluster at {address!r} needs the "
            "`distributed` package: pip install 'tensorplug-dask[distributed]'"
        ) from e
    return distributed.Client(address, set_as_default=False)


def show_progress(enabled: bool | None = True) -> None:
    """Progress bars on (True), off (False), or in a terminal only (None, the default)."""
    global _progress
    _progress = enabled


def progress_enabled() -> bool:
    """Whether computes show progress now (Note [Progress])."""
    if _progress is not None:
        return _progress
    env = os.environ.get(ENV_PROGRESS, "").strip().lower()
    if env:
        return env not in ("0", "false", "no", "off")
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def compute_arrays(*arrays: Any) -> tuple[Any, ...]:
    """The values of dask arrays (numpy arrays), computed together: tasks they share run once."""
    client = current_client()
    if client is not None:
        futures = client.compute(list(arrays))
        if progress_enabled():
            import distributed

            distributed.progress(futures)
        return tuple(client.gather(futures))
    import dask

    if progress_enabled():
        from dask.diagnostics import ProgressBar

        with ProgressBar(minimum=PROGRESS_MINIMUM_S):
            return tuple(dask.compute(*arrays))
    return tuple(dask.compute(*arrays))


def persist_arrays(*arrays: Any) -> tuple[Any, ...]:
    """Dask arrays of the same values whose chunks are computed (kept in memory, or on the
    cluster's workers), computed together: tasks they share run once."""
    client = current_client()
    if client is not None:
        out = client.persist(list(arrays))
        if progress_enabled():
            import distributed

            distributed.progress(out)
        return tuple(out)
    import dask

    if progress_enabled():
        from dask.diagnostics import ProgressBar

        with ProgressBar(minimum=PROGRESS_MINIMUM_S):
            return tuple(dask.persist(*arrays))
    return tuple(dask.persist(*arrays))
