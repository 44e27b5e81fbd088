"""The Dask backend's kernels: tensorplug's array kit over ``dask.array``.

:func:`load` is what ``tensorplug.array_backend.register_lazy`` calls on the first dask kernel
or tensor: it imports dask (never at ``import tensorplug``) and returns the arguments of
``array_backend.register``. Everything else is the kit's: the kernels are the same generic ones
the CPU backend runs, written against the array API namespace (``dask.array`` through
array-api-compat), so every op builds a task graph and nothing computes until a value is read.

Values are read through :func:`to_host` alone (``item()``, ``tolist()``, ``repr``, ``.cpu()``,
``bool()``, ``numpy()``): it computes on the scheduler ``tp.dask`` has chosen (:mod:`.scheduler`),
with a progress bar where one is wanted. Host arrays come in through :func:`from_host`, chunked by
:func:`.chunks.default_chunks` (Note [Default chunks] there).
"""

from __future__ import annotations

from typing import Any

from . import chunks, scheduler

__all__ = ["from_host", "load", "to_host"]


def load() -> dict[str, Any]:
    """``array_backend.register``'s arguments over ``dask.array``."""
    import dask.array as da

    from .fft import FFT
    from .special import SpecialFunctions

    return {
        "xp": da,
        "to_host": to_host,
        "from_host": from_host,
        "make_rng": make_rng,
        "special": SpecialFunctions(),
        "fft": FFT(),  # each transformed axis in one chunk, as dask.array.fft requires
        "views": False,  # dask arrays share no memory: functionalization gives views
    }


def to_host(a: Any) -> Any:
    """A host numpy array of dask array ``a``: computed on the current scheduler."""
    import numpy

    if not hasattr(a, "dask"):  # a numpy scalar or array already
        return numpy.array(a, copy=True)
    (host,) = scheduler.compute_arrays(a)
    # a copy: a one-chunk array computes to its source array itself (``from_dask``'s or
    # ``from_host``'s), which the host tensor must not share
    return numpy.array(host, copy=True)


def from_host(host: Any, device: Any) -> Any:
    """A dask array over host array ``host`` (no copy: dask keeps the numpy array as its
    chunks' source), chunked by the default (Note [Default chunks] in chunks.py)."""
    import dask.array as da

    return da.from_array(host, chunks=chunks.default_chunks(host.shape, host.dtype.itemsize))


def make_rng(seed: int) -> Any:
    """The random state of a seed: dask's own generator (``dask.array.random.default_rng``),
    drawing lazily, chunk by chunk."""
    import dask.array as da

    return da.random.default_rng(seed)
