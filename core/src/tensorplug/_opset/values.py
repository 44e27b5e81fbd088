"""A tensor's values handed to Python: ``item()``, ``tolist()``, ``numpy()``, ``__array__``,
``bool()``/``int()``/``float()`` (internal; installed on Tensor by ``operators.install``)."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from .. import _backends, dispatch
from .. import dtypes as _dtypes
from ..keys import DispatchKeySet, KeyKind
from ..ops import ops
from ..tensor import LogicalShape, Tensor, no_storage_error
from .functionalize import sync

# Functions ``fn(tensor, method)`` called before ``tolist()`` / ``numpy()`` hand a tensor's values
# to Python outside the dispatcher (plugins add them: KernelRegistry.add_value_read_hook).
value_read_hooks: list[Callable[[Tensor, str], None]] = []


# --- values ---------------------------------------------------------------------------------


def _one_value(self: Tensor, what: str) -> Any:
    if self.numel() != 1:
        if what == "Boolean":
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        raise ValueError(f"only one element tensors can be converted to Python scalars ({what}())")
    return item(self)


def _index(self: Tensor) -> int:
    if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return builtins.int(item(self))


def item(self: Tensor) -> Any:
    if self.numel() != 1:
        raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
    return ops.aten._local_scalar_dense.default(self)


def _host(self: Tensor) -> Any:
    if self._fz_view is not None:  # a view of a backend without views (Note [Functionalization])
        sync(self)
    data = self._data
    if type(data) is LogicalShape:  # Note [Wrapper tensors] in tensor.py
        raise no_storage_error()
    return _backends.for_key(_backend_name(self)).to_host(data)


def _backend_name(self: Tensor) -> str:
    from .. import keys

    k = keys.backend_for_device_type(self.device.type)
    return k.name if k is not None else self.device.type.upper()


def tolist(self: Tensor) -> Any:
    for hook in value_read_hooks:
        hook(self, "tolist")
    return host_list(self)


def host_list(self: Tensor) -> Any:
    """The values of ``self`` as nested Python lists (``tolist()`` without the read hooks)."""
    host = _host(self)
    if self.dtype is _dtypes.bfloat16:
        host = host.astype("float32")
    return host.tolist()


def numpy(self: Tensor, *, force: bool = False) -> Any:
    """The tensor's values as a numpy array sharing its memory (CPU). As in PyTorch, it refuses
    a tensor that requires grad while grad mode would record (``no_grad`` lets it through) and
    a tensor off the CPU; ``force=True`` gives a detached host copy where sharing is not
    possible (``detach().cpu().resolve_conj().resolve_neg().numpy()``)."""
    for hook in value_read_hooks:
        hook(self, "numpy")
    if not force and self.requires_grad and _recording(self):
        raise RuntimeError(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
        )
    if self.device.type != "cpu":
        if not force:
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                "copy the tensor to host memory first."
            )
        return _host(self)
    if self._fz_view is not None:
        sync(self)
    data = self._data
    if type(data) is LogicalShape:
        raise no_storage_error()
    return data


def _recording(self: Tensor) -> bool:
    """Whether grad mode would record an operation on ``self``: one of its autograd keys is
    not excluded on this thread (``no_grad`` excludes them all)."""
    live = self._tp_keyset & ~int(dispatch.excluded())
    return any(k.kind is KeyKind.PER_BACKEND and k.name.startswith("Autograd")
               for k in DispatchKeySet(live))  # fmt: skip


def _array(self: Tensor, dtype: Any = None, copy: Any = None) -> Any:
    host = numpy(self, force=True)
    return host.astype(dtype) if dtype is not None else host
