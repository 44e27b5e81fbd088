"""The ``indexing`` family of the composites: index_put (the in-place kernel on a copy) and
where(condition), which is nonzero(condition, as_tuple=True)."""

from __future__ import annotations

from typing import Any

from ..ops import ops

aten = ops.aten


def index_put(self: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
    return aten.index_put_.default(aten.clone.default(self), indices, values, accumulate)


def where_condition(condition: Any) -> Any:
    """``nonzero(condition, as_tuple=True)``: one index tensor per dim (PyTorch's
    nonzero_numpy; a 0-d condition counts as 1-d)."""
    c = aten.reshape.default(condition, [1]) if condition.ndim == 0 else condition
    return aten.unbind.int(aten.nonzero.default(c), 1)
