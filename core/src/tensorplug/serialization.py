"""Saving and loading tensors: ``tp.save(obj, f)`` and ``tp.load(f, weights_only=True)``.

Note [Tensor pickles]
~~~~~~~~~~~~~~~~~~~~~
A pickled tensor records what it *is*, never how this process dispatches it: its device
(``"cpu"``, ``"foo:1"``), dtype name, shape, and its data as bytes (with numpy's type string,
byte order included; bfloat16 as float32, which holds it exactly), plus ``requires_grad`` and
its subclass (``nn.Parameter``). Key sets are not recorded: bits belong to the process that
assigned them (Note [Bit reuse] in keys.py), so loading rebuilds the tensor through the storage
backend its device type has *in the loading process* -- a device type no loaded plugin
provides is an error naming it. A tensor that requires grad is saved as a leaf: its data,
without the graph that made it (as PyTorch does). Attributes a user set on a tensor are kept;
the state plugins keep under the names they declare on ``Tensor`` (``tp_autograd``), and
anything starting with ``_``, is not.

``tp.load`` reads with ``weights_only=True`` by default: an unpickler that builds only what a
checkpoint holds -- tensors (and ``nn.Parameter``), ``dict``/``list``/``tuple``/``set``,
``collections.OrderedDict``, numbers, strings, bytes, ``None``, dtypes and devices -- and
refuses any other global with an error naming it, so a file cannot run code. Pass
``weights_only=False`` only for files you trust.

Usage::

    tp.save(model.state_dict(), "model.tp")
    model.load_state_dict(tp.load("model.tp"))
"""

from __future__ import annotations

import collections
import importlib
import os
import pickle
import re
from collections.abc import Callable
from typing import IO, Any

from . import _backends
from . import dtypes as _dtypes
from .device import canonical as _canonical_device
from .device import device as _Device
from .errors import MissingPluginError
from .tensor import Tensor

__all__ = ["load", "save"]

FileLike = str | os.PathLike[str] | IO[bytes]

# numpy type strings (``<f4``, ``|b1``, ``>c16``) of the dtypes a tensor pickle may hold
_TYPESTR = re.compile(r"[<>|][biufc][0-9]{1,2}")


def reduce_tensor(t: Tensor) -> tuple[Any, ...]:
    """``Tensor.__reduce_ex__``: Note [Tensor pickles]."""
    host = _backends.for_device_type(t._device.type).to_host(t._data)
    if t._dtype is _dtypes.bfloat16:
        host = host.astype("float32")
    cls = type(t)
    # a user's attributes; not the state plugins keep in names they declare on Tensor
    # (``tp_autograd``, through tensorplug_add_tensor_methods), nor private ones
    state = {
        k: v
        for k, v in getattr(t, "__dict__", {}).items()
        if not k.startswith("_") and not hasattr(cls, k)
    }
    return (
        rebuild_tensor,
        (
            None if cls is Tensor else cls,
            str(t._device),
            t._dtype.name,
            tuple(int(n) for n in host.shape),
            host.dtype.str,
            host.tobytes(),
            bool(t.requires_grad),
            state or None,
        ),
    )


class _HostBuffer:
    """Bytes that numpy (every storage backend's ``from_python``) reads as an array, so that
    the core builds a tensor from them without importing numpy itself."""

    def __init__(self, shape: tuple[int, ...], typestr: str, data: bytes) -> None:
        self.__array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": data,
            "version": 3,
        }


def _reduce_ex(self: Tensor, protocol: Any) -> tuple[Any, ...]:
    """Pickle (and copy) by device type, dtype and data, never key bits (Note [Tensor
    pickles])."""
    return reduce_tensor(self)


_reduce_ex.__qualname__ = "Tensor.__reduce_ex__"
Tensor.__reduce_ex__ = _reduce_ex  # type: ignore[method-assign, assignment]


def rebuild_tensor(
    cls: type[Tensor] | None,
    device: str,
    dtype: str,
    shape: tuple[int, ...],
    typestr: str,
    data: bytes,
    requires_grad: bool,
    state: dict[str, Any] | None,
) -> Tensor:
    """The tensor :func:`reduce_tensor` described, built in this process (Note [Tensor pickles]).

    Everything is checked first: under ``weights_only=True`` the arguments come from an
    untrusted file.
    """
    d = _DTYPES.get(dtype) if type(dtype) is str else None
    if d is None:
        raise pickle.UnpicklingError(f"a tensor in this file has an unknown dtype {dtype!r}")
    if not (
        type(device) is str
        and type(shape) is tuple
        and all(type(n) is int and n >= 0 for n in shape)
        and type(typestr) is str
        and _TYPESTR.fullmatch(typestr)
        and type(data) is bytes
        and type(requires_grad) is bool
        and (state is None or type(state) is dict)
    ):
        raise pickle.UnpicklingError("a tensor in this file is malformed")
    count = 1
    for n in shape:
        count *= n
    if len(data) != count * int(typestr[2:]):
        raise pickle.UnpicklingError(
            f"a tensor in this file holds {len(data)} bytes, not the {count * int(typestr[2:])} "
            f"its shape {list(shape)} and type {typestr} need"
        )
    dev = _canonical_device(device)
    try:
        storage = _backends.for_device_type(dev.type)
    except Exception as e:  # MissingPluginError, or an unknown device type
        raise type(e)(
            f"cannot load a tensor of device type '{dev.type}' ({dtype}, shape {list(shape)}): {e}",
            **({"distribution": e.distribution} if hasattr(e, "distribution") else {}),
        ) from None
    t: Tensor = storage.from_python(_HostBuffer(shape, typestr, data), d, dev)
    if cls is not None:
        t = _as_class(t, cls, requires_grad)
    elif requires_grad:
        _requires_grad(t)
    for name, value in (state or {}).items():
        if type(name) is str and not name.startswith("_"):
            setattr(t, name, value)
    return t


# Tensor subclasses that rebuild themselves (``nn.Parameter``): class -> build(t, requires_grad).
# A layer above registers its class here (serialization never imports nn).
_rebuilders: dict[type, Callable[[Tensor, bool], Tensor]] = {}


def register_tensor_class(cls: type, build: Callable[[Tensor, bool], Tensor]) -> None:
    """``build(tensor, requires_grad)`` makes the ``cls`` a checkpoint recorded (``nn.Parameter``
    registers itself)."""
    _rebuilders[cls] = build


def _as_class(t: Tensor, cls: Any, requires_grad: bool) -> Tensor:
    build = _rebuilders.get(cls)
    if build is not None:
        return build(t, requires_grad)
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise pickle.UnpicklingError(f"{cls!r} is not a Tensor subclass")
    if requires_grad:
        _requires_grad(t)
    t.__class__ = cls
    return t


def _requires_grad(t: Tensor) -> None:
    """As ``nn.Parameter`` does (Note [nn without autograd] in nn/_autograd.py): without the
    autograd plugin, the weights load and nothing requires grad."""
    try:
        t.requires_grad_()
    except MissingPluginError:
        pass


_DTYPES = {d.name: d for d in _dtypes.all_dtypes()}


# --- tp.save / tp.load ----------------------------------------------------------------------


def save(obj: Any, f: FileLike) -> None:
    """Write ``obj`` (tensors, containers of them, a ``state_dict``) to a path or binary file."""
    if isinstance(f, str | os.PathLike):
        with open(f, "wb") as out:
            pickle.dump(obj, out, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)


def load(f: FileLike, *, weights_only: bool = True) -> Any:
    """Read what :func:`save` wrote. ``weights_only=True`` (the default) builds only tensors,
    containers, numbers, strings, dtypes, devices and ``OrderedDict``, and refuses anything
    else with :class:`pickle.UnpicklingError`; ``weights_only=False`` unpickles anything, and
    so runs whatever code the file names: only for files you trust."""
    if isinstance(f, str | os.PathLike):
        with open(f, "rb") as src:
            return _load(src, weights_only)
    return _load(f, weights_only)


def _load(f: IO[bytes], weights_only: bool) -> Any:
    if not weights_only:
        return pickle.load(f)  # noqa: S301 - the caller asked for it
    return _WeightsUnpickler(f).load()


class _WeightsUnpickler(pickle.Unpickler):
    """Builds the allow-listed types only (Note [Tensor pickles])."""

    def find_class(self, module: str, name: str) -> Any:
        allowed = _allowed(module, name)
        if allowed is None:
            raise pickle.UnpicklingError(
                f"tp.load(weights_only=True) refuses to load '{module}.{name}': it builds only "
                "tensors, containers, numbers, strings, dtypes, devices and OrderedDict. If you "
                "trust the file, load it with tp.load(f, weights_only=False), which runs any "
                "code the file names."
            )
        return allowed

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError(
            "tp.load(weights_only=True) refuses persistent references: tp.save never writes them"
        )


def _allowed(module: str, name: str) -> Any:
    if module == "tensorplug.serialization" and name == "rebuild_tensor":
        return rebuild_tensor
    if module == "tensorplug.dtypes" and name in _DTYPES:
        return _DTYPES[name]
    if module == "tensorplug.device" and name == "device":
        return _Device
    if (module, name) in _SAFE_CLASSES:
        # a class of a layer above, found by the name the file records, as pickle finds
        # any class: importing its module registers its rebuilder (_rebuilders)
        cls = getattr(importlib.import_module(module), name)
        return cls if cls in _rebuilders else None
    if module == "collections" and name == "OrderedDict":
        return collections.OrderedDict
    if module in ("builtins", "__builtin__") and name in _BUILTINS:
        return _BUILTINS[name]
    return None


# Tensor subclasses of tensorplug that weights-only loading builds, by the name files record
_SAFE_CLASSES = frozenset({("tensorplug.nn.parameter", "Parameter")})

# what older pickle protocols name as globals (protocol 4+ has opcodes for sets)
_BUILTINS: dict[str, Any] = {
    "complex": complex,
    "set": set,
    "frozenset": frozenset,
    "bytearray": bytearray,
    "slice": slice,
    "range": range,
}
