"""Making tensors from Python data and moving them: ``tp.tensor``, ``tp.as_tensor``,
``Tensor(...)`` (the legacy constructor), ``to``/``cpu``/``cuda``, the dtype conversions
(``t.float()``) and ``new_*`` (internal; installed on Tensor by ``operators.install``)."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from .. import _backends, _strides
from .. import dtypes as _dtypes
from .. import storage as _storage
from ..device import canonical as _canonical_device
from ..device import device as _Device
from ..ops import ops
from ..tensor import Tensor
from . import api as _api

_PY_DTYPES: dict[Any, _dtypes.dtype] = {
    float: _dtypes.float64, builtins.int: _dtypes.int64, builtins.bool: _dtypes.bool,
    complex: _dtypes.complex128,
}  # fmt: skip


def parse_to(
    args: tuple[Any, ...], kwargs: dict[str, Any], *, copy_allowed: bool = True
) -> tuple[Any, Any, bool, bool]:
    """``(device, dtype, non_blocking, copy)`` of a ``to(...)`` call: ``to(dtype)``,
    ``to(device)``, ``to(device, dtype)``, ``to(other)``, with ``non_blocking`` and, where
    ``copy_allowed``, ``copy`` (``memory_format`` is accepted and ignored); ``Tensor.to`` and
    ``nn.Module.to`` share it."""
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False) if copy_allowed else False
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    dtype = _PY_DTYPES.get(dtype, dtype) if type(dtype) is type else dtype
    for a in args:
        if isinstance(a, _dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, str | _Device):
            dev = a
        elif type(a) is builtins.bool:
            non_blocking = a
        elif type(a) is type and a in _PY_DTYPES:  # to(float) is float64, as in PyTorch
            dtype = _PY_DTYPES[a]
        else:
            raise TypeError(
                f"to() received an invalid argument of type {type(a).__name__}; expected a "
                "dtype, a device (or its string), or a Tensor"
            )
    return dev, dtype, non_blocking, copy


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; ``copy=``,
    ``memory_format=`` (a copy unless the strides already suggest that format, as PyTorch's
    ``to_will_alias``)."""
    fmt = kwargs.pop("memory_format", None)
    dev, dtype, non_blocking, copy = parse_to(args, kwargs)
    target_dev = _canonical_device(dev) if dev is not None else self.device
    if target_dev.index is None and target_dev.type == self.device.type != "cpu":
        target_dev = _backends.resolve_device(target_dev)  # "cuda": the current device
    target_dtype = dtype if dtype is not None else self.dtype
    if fmt is not None:
        fmt = _strides.check_format(fmt, "to")
    if target_dev == self.device and target_dtype is self.dtype and not copy:
        if fmt is None or fmt == "preserve_format" or _suggested_format(self) == fmt:
            return self
    r: Tensor = ops.aten._to_copy.default(
        self, dtype=target_dtype, device=target_dev, non_blocking=non_blocking, memory_format=fmt
    )
    return r


def _suggested_format(self: Tensor) -> str:
    """The memory format ``self``'s strides suggest (row-major without strides)."""
    if not _storage.is_strided(self):
        return "contiguous_format"
    return _strides.suggest_memory_format(tuple(self.shape), self.stride())


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays, tensors)."""
    if dtype is not None and not isinstance(dtype, _dtypes.dtype):
        raise TypeError(
            f"tensor(): argument 'dtype' must be tensorplug.dtype, not {type(dtype).__name__}"
        )
    if isinstance(data, Tensor):
        t = to(
            ops.aten.clone.default(data),
            dtype=dtype or data.dtype,
            device=device if device is not None else data.device,
        )
        t = ops.aten.detach.default(t)
    else:
        dev = _canonical_device(device)
        t = _backends.for_device_type(dev.type).from_python(data, dtype, dev)
    if requires_grad:
        t.requires_grad_()
    result: Tensor = t
    return result


def _tensor_new(cls: type[Tensor], *args: Any, device: Any = None) -> Tensor:
    """PyTorch's legacy constructor: ``Tensor(2, 3)`` is an uninitialized tensor of that
    shape, ``Tensor([1, 2])`` a copy of the data, both of the default dtype;
    ``Tensor(t)`` shares ``t``'s data; ``Tensor()`` is empty. A subclass ``S([1, 2])``
    gives an ``S``. Prefer the factories (``tp.tensor``, ``tp.empty``)."""
    t = legacy_new(args, device)
    return t if cls is Tensor else t._retyped(cls)


_tensor_new.__name__ = "__new__"
_tensor_new.__qualname__ = "Tensor.__new__"


def _as_subclass(self: Tensor, cls: type[Tensor]) -> Tensor:
    """This tensor as an instance of the Tensor subclass ``cls``: a view sharing its data
    and version counter, attached to its autograd graph (PyTorch's ``as_subclass``)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(
            "Creating a Tensor subclass from a class that does not inherit from Tensor is "
            f"not possible (got {cls!r}). Make sure your class inherits from Tensor."
        )
    view: Tensor = ops.aten.view.default(self, list(self.shape))
    return view._retyped(cls)


_as_subclass.__name__ = "as_subclass"
_as_subclass.__qualname__ = "Tensor.as_subclass"


def legacy_new(args: tuple[Any, ...], device: Any) -> Tensor:
    """``Tensor(*args, device=None)``, as PyTorch's legacy constructor (``Tensor.__new__``)."""
    if not args:
        return _new_empty([0], device)
    if all(type(a) is builtins.int for a in args):
        return _new_empty(list(args), device)
    if len(args) == 1:
        (data,) = args
        if isinstance(data, Tensor):
            if device is not None and _canonical_device(device) != data.device:
                raise RuntimeError(
                    f"Tensor(other, device=...): other is on {data.device}, not {device}; use "
                    "other.to(device)"
                )
            r: Tensor = ops.aten.view.default(data, list(data.shape))  # shares data
            return r
        if not isinstance(data, str | bytes) and hasattr(data, "__len__"):
            return tensor(data, dtype=_dtypes.get_default_dtype(), device=device)
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    got = ", ".join(type(a).__name__ for a in args)
    raise TypeError(
        f"new(): expected a size of ints (Tensor(2, 3)) or one sequence of data "
        f"(Tensor([1, 2])), got ({got})"
    )


def _new_empty(size: list[int], device: Any) -> Tensor:
    r: Tensor = ops.aten.empty.memory_format(size, dtype=_dtypes.get_default_dtype(),
                                             device=_canonical_device(device))  # fmt: skip
    return r


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` itself when it is a Tensor of that dtype and device, else ``tensor(data)``."""
    if isinstance(data, Tensor):
        return to(data, dtype=dtype or data.dtype, device=device or data.device)
    return tensor(data, dtype=dtype, device=device)


def _cuda(self: Tensor, device: Any = None, non_blocking: bool = False) -> Tensor:
    """``to(device)`` for a CUDA device: None is the current one, an int its index."""
    if device is None:
        device = "cuda"
    elif type(device) is builtins.int:
        device = _Device("cuda", device)
    elif _canonical_device(device).type != "cuda":
        raise RuntimeError(f"Invalid device, must be cuda device, got {device}")
    return to(self, device, non_blocking=non_blocking)


def _converter(dt: _dtypes.dtype) -> Callable[[Tensor], Tensor]:
    def convert(self: Tensor) -> Tensor:
        return to(self, dt)

    convert.__name__ = dt.name
    return convert


def _new_factory(name: str) -> Callable[..., Tensor]:
    def new(
        self: Tensor, *args: Any, dtype: Any = None, device: Any = None, **kwargs: Any
    ) -> Tensor:
        fn: Any = _api.generated_function(name)  # tp.zeros, ...
        if len(args) >= 1 and type(args[0]) is builtins.int and name != "full":
            args = (list(args),)
        r: Tensor = fn(*args, dtype=dtype or self.dtype, device=device or self.device, **kwargs)
        return r

    new.__name__ = f"new_{name}"
    return new


def _new_tensor(self: Tensor, data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device)
