"""How tensors made from host data are chunked.

Note [Default chunks]
~~~~~~~~~~~~~~~~~~~~~
A tensor made from host data on ``"dask"`` (``tp.tensor(..., device="dask")``, ``.to("dask")``,
``tp.dask.from_numpy``) is split along its first dimension only, into chunks of at most
``tp.dask.chunk_bytes()`` bytes (dask's ``array.chunk-size`` setting, 128 MiB unless configured),
every other dimension whole. The reasons:

* the first dimension is the batch in almost every tensor a model sees, and the ops along the
  batch (elementwise ops, a ``Linear``, a loss's mean) then run chunk by chunk with no
  communication between chunks;
* a matrix product contracts the last dimension of its left operand: kept whole, the product of
  a row chunk needs no sum across chunks (dask adds a tree reduction for split contractions);
* one task per chunk costs about 0.1-1 ms of scheduling, so anything smaller than the target
  size is one chunk: a model's weights, a small batch. Many chunks pay only on large arrays,
  where the work per chunk outweighs the scheduling.

A row larger than the target (a huge trailing dimension) leaves the choice to dask's ``"auto"``
over every dimension. Factories (``tp.ones(..., device="dask")``) and random tensors take
dask's own ``"auto"`` chunks; ``tp.dask.rechunk`` sets any tensor's chunks, and ``from_dask``
keeps a dask array's.
"""

from __future__ import annotations

from typing import Any

__all__ = ["chunk_bytes", "default_chunks"]


def chunk_bytes() -> int:
    """The target size of one chunk in bytes: dask's ``array.chunk-size`` (128 MiB default)."""
    import dask
    from dask.utils import parse_bytes

    return int(parse_bytes(dask.config.get("array.chunk-size")))


def default_chunks(shape: tuple[int, ...], itemsize: int) -> Any:
    """The chunks of a host array of ``shape`` (Note [Default chunks])."""
    if not shape:
        return ()
    target = chunk_bytes()
    row = itemsize
    for n in shape[1:]:
        row *= n
    if row * shape[0] <= target:
        return tuple(max(n, 1) for n in shape)  # one chunk
    if row > target:
        return "auto"
    rows = max(1, target // max(row, 1))
    return (rows, *(max(n, 1) for n in shape[1:]))
