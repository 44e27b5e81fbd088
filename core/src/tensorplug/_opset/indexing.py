"""Tensor indexing: ``t[i]``, ``t[i] = v``, ``iter(t)`` (internal; installed on Tensor by
``operators.install``)."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import Any

from .. import dtypes as _dtypes
from ..ops import ops
from ..tensor import Tensor
from .construct import tensor

_SCALARS = frozenset({builtins.int, builtins.float, builtins.bool, builtins.complex})


def _iter(self: Tensor) -> Iterator[Tensor]:
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    # as PyTorch's Tensor.__iter__: the rows are the views of one unbind
    yield from ops.aten.unbind.int(self, 0)


def _parse_index(self: Tensor, index: Any) -> tuple[Tensor, list[Any]]:
    """Apply the basic parts of ``index`` (ints, slices, None, ...) as views.

    Returns the view and, per dimension of the view, the advanced index (a tensor) or None.
    """
    a = ops.aten
    if not isinstance(index, tuple):
        index = (index,)
    # expand Ellipsis
    consumed = sum(
        0 if i is None or i is Ellipsis else (i.ndim if _is_bool_tensor(i) else 1) for i in index
    )
    n_ell = sum(1 for i in index if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    out = self
    dim = 0
    advanced: list[Any] = []
    for i in index:
        if i is Ellipsis:
            fill = self.ndim - consumed
            advanced.extend([None] * fill)
            dim += fill
        elif i is None:
            out = a.unsqueeze.default(out, dim)
            advanced.append(None)
            dim += 1
        elif type(i) is builtins.int or (
            hasattr(i, "__index__") and not isinstance(i, Tensor | list)
        ):
            size = out.shape[dim]
            ii = builtins.int(i.__index__())
            if not -size <= ii < size:
                raise IndexError(
                    f"index {ii} is out of bounds for dimension {dim} with size {size}"
                )
            out = a.select.int(out, dim, ii)
        elif type(i) is slice:
            if i.step is not None and i.step <= 0:
                raise ValueError("step must be greater than zero")
            if not (i.start is None and i.stop is None and i.step is None):
                out = a.slice.Tensor(out, dim, i.start, i.stop, 1 if i.step is None else i.step)
            advanced.append(None)
            dim += 1
        elif isinstance(i, Tensor | list | tuple) or type(i) is builtins.bool:
            t = i if isinstance(i, Tensor) else tensor(i, device=self.device)
            if t.dtype.is_floating_point or t.dtype.is_complex:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            advanced.append(t)
            dim += t.ndim if t.dtype is _dtypes.bool else 1
        elif isinstance(i, str | bytes):  # PyTorch takes it for a sequence of data
            raise TypeError(f"new(): invalid data type '{type(i).__name__}' (an index)")
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                f"Variables are valid indices (got {type(i).__name__})"
            )
    return out, advanced


def _is_bool_tensor(i: Any) -> bool:
    return isinstance(i, Tensor) and i.dtype is _dtypes.bool


def getitem(self: Tensor, index: Any) -> Tensor:
    if type(index) is builtins.int:  # the common case, without parsing
        size = self.shape[0] if self.ndim else 0
        if self.ndim == 0:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` to convert a 0-dim tensor to a number"
            )
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {size}")
        r: Tensor = ops.aten.select.int(self, 0, index)
        return r
    view, advanced = _parse_index(self, index)
    if any(x is not None for x in advanced):
        r = ops.aten.index.Tensor(view, advanced)
        return r
    return view


def setitem(self: Tensor, index: Any, value: Any) -> None:
    view, advanced = _parse_index(self, index)
    a = ops.aten
    if any(x is not None for x in advanced):
        if not isinstance(value, Tensor):
            value = tensor(value, dtype=self.dtype, device=self.device)
        a.index_put_.default(view, advanced, value, False)
        return
    if isinstance(value, Tensor):
        a.copy_.default(view, value)
    elif type(value) in _SCALARS:
        a.fill_.Scalar(view, value)
    else:
        a.copy_.default(view, tensor(value, dtype=self.dtype, device=self.device))
