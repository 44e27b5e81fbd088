"""A tensor's values handed to Python: ``item()``, ``tolist()``, ``numpy()``, ``__array__``,
``bool()``/``int()``/``float()`` (internal; installed on Tensor by ``operators.install``)."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from .. import _backends
from .. import dtypes as _dtypes
from ..ops import ops
from ..tensor import LogicalShape, Tensor, no_storage_error

# Functions ``fn(tensor, method)`` called before ``tolist()`` / ``numpy()`` hand a tensor's values
# to Python outside the dispatcher (plugins add them: KernelRegistry.add_value_read_hook).
value_read_hooks: list[Callable[[Tensor, str], None]] = []


# --- values ---------------------------------------------------------------------------------


def _one_value(self: Tensor, what: str) -> Any:
    if self.numel() != 1:
        if what == "Boolean":
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        raise RuntimeError(
            f"only one element tensors can be converted to Python scalars ({what}())"
        )
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
    for hook in value_read_hooks:
        hook(self, "numpy")
    if self.requires_grad and not force:
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
    data = self._data
    if type(data) is LogicalShape:
        raise no_storage_error()
    return data


def _array(self: Tensor, dtype: Any = None, copy: Any = None) -> Any:
    host = numpy(self, force=True)
    return host.astype(dtype) if dtype is not None else host
