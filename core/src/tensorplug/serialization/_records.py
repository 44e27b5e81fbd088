"""What a checkpoint's pickle may build, and how each is checked (internal).

The reconstructors here are the only functions ``tp.load(weights_only=True)`` calls (Note
[Weights-only unpickling] in _unpickler.py). Each checks its arguments before it builds
anything: a tensor's dtype is known, its shape and strides are non-negative ints, and every
element they reach lies inside the storage the archive holds (whose byte count the loader
checked against the file's size); the attributes a record sets on a tensor are user attributes,
never a name ``Tensor`` declares (``tp_dtype``, ``tp_data``, ``requires_grad``, ...).

Two families of records: tensorplug's (:func:`rebuild_tensor`, the self-contained pickle of
``pickle.dumps(t)`` and of checkpoints before the archive format; :func:`rebuild_from_storage`,
a tensor of an archive) and PyTorch's (``torch._utils._rebuild_tensor_v2`` and
``_rebuild_parameter`` over ``torch.FloatStorage``-typed storages, ``torch.Size``, dtypes),
read without importing torch.
"""

from __future__ import annotations

import collections
import importlib
import pickle
import re
from collections.abc import Callable
from typing import Any

from .. import _backends
from .. import dtypes as _dtypes
from ..device import canonical as _canonical_device
from ..device import device as _Device
from ..errors import MissingPluginError
from ..tensor import Tensor
from ._unpickler import Globals, _refused

__all__ = [
    "CheckpointGlobals", "LoadedStorage", "StorageType", "add_safe_globals",
    "clear_safe_globals", "get_safe_globals", "reduce_tensor", "rebuild_tensor",
    "rebuild_from_storage", "register_tensor_class", "TORCH_STORAGE_DTYPES",
]  # fmt: skip

DTYPES = {d.name: d for d in _dtypes.all_dtypes()}

# numpy type strings (``<f4``, ``|b1``, ``>c16``) of the dtypes a tensor pickle may hold
_TYPESTR = re.compile(r"[<>|][biufc][0-9]{1,2}")

# PyTorch's typed storages, by the name its pickles give them
TORCH_STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}  # fmt: skip


# --- tensors pickled on their own (pickle.dumps, copy.deepcopy, checkpoints of <= 0.1.2) --


def reduce_tensor(t: Tensor) -> tuple[Any, ...]:
    """``Tensor.__reduce_ex__``: a self-contained record (Note [Tensor pickles] in
    serialization/__init__.py)."""
    if t._device.type == "meta":
        return reduce_meta(t)
    host = _backends.for_device_type(t._device.type).to_host(t._data)
    if t._dtype is _dtypes.bfloat16:
        host = host.astype("float32")
    cls = type(t)
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
            user_state(t),
        ),
    )


def user_state(t: Tensor) -> dict[str, Any] | None:
    """The attributes a user set on ``t``: not the state plugins keep under names they declare
    on Tensor (``tp_autograd``), nor private ones."""
    cls = type(t)
    state = {
        k: v
        for k, v in getattr(t, "__dict__", {}).items()
        if not k.startswith("_") and not hasattr(cls, k)
    }
    return state or None


class _HostBuffer:
    """Bytes that numpy (every storage backend's ``from_python``) reads as an array, so that
    the core builds a tensor from them without importing numpy itself."""

    def __init__(self, shape: tuple[int, ...], typestr: str, data: bytes) -> None:
        self.__array_interface__ = {"shape": shape, "typestr": typestr, "data": data, "version": 3}


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
    """The tensor :func:`reduce_tensor` described, built in this process. Everything is checked
    first: under ``weights_only=True`` the arguments come from an untrusted file."""
    d = DTYPES.get(dtype) if type(dtype) is str else None
    if d is None:
        raise pickle.UnpicklingError(f"a tensor in this file has an unknown dtype {dtype!r}")
    if not (
        type(device) is str
        and _is_shape(shape)
        and type(typestr) is str
        and _TYPESTR.fullmatch(typestr)
        and type(data) is bytes
        and type(requires_grad) is bool
        and (state is None or type(state) is dict)
    ):
        raise pickle.UnpicklingError("a tensor in this file is malformed")
    count = _numel(shape)
    if len(data) != count * int(typestr[2:]):
        raise pickle.UnpicklingError(
            f"a tensor in this file holds {len(data)} bytes, not the {count * int(typestr[2:])} "
            f"its shape {list(shape)} and type {typestr} need"
        )
    _check_state(cls, state)
    dev = file_device(device)
    storage = _backend_for(dev, f"({dtype}, shape {list(shape)})")
    t: Tensor = storage.from_python(_HostBuffer(shape, typestr, data), d, dev)
    return _finish(t, cls, requires_grad, state)


# --- meta tensors: shape and dtype, no data (as torch's _rebuild_meta_tensor_no_storage) ----


def reduce_meta(t: Tensor) -> tuple[Any, ...]:
    cls = type(t)
    return (
        rebuild_meta_tensor,
        (
            None if cls is Tensor else cls,
            t._dtype.name,
            tuple(int(n) for n in t.shape),
            bool(t.requires_grad),
            user_state(t),
        ),
    )


class _MetaShape:
    """What the meta backend's ``from_python`` reads: a shape and a dtype name."""

    def __init__(self, shape: tuple[int, ...], dtype: str) -> None:
        self.shape, self.dtype = shape, dtype


def rebuild_meta_tensor(
    cls: type[Tensor] | None,
    dtype: str,
    shape: tuple[int, ...],
    requires_grad: bool,
    state: dict[str, Any] | None,
) -> Tensor:
    """A meta tensor of ``shape`` and ``dtype`` (it holds no data, so nothing to check against
    the file's size)."""
    d = DTYPES.get(dtype) if type(dtype) is str else None
    if d is None or not _is_shape(shape) or type(requires_grad) is not bool:
        raise pickle.UnpicklingError("a meta tensor record in this file is malformed")
    _check_state(cls, state)
    meta = _backend_for(_Device("meta"), f"({dtype}, shape {list(shape)})")
    t: Tensor = meta.from_python(_MetaShape(shape, d.name), d, "meta")
    return _finish(t, cls, requires_grad, state)


def _rebuild_meta_tensor_no_storage(
    dtype: Any, size: Any, stride: Any, requires_grad: Any = False
) -> Tensor:
    """``torch._utils._rebuild_meta_tensor_no_storage``."""
    if not isinstance(dtype, _dtypes.dtype):
        raise pickle.UnpicklingError("a PyTorch meta tensor record is malformed")
    return rebuild_meta_tensor(None, dtype.name, tuple(size), requires_grad, None)


# --- tensors of an archive: views of its storages -------------------------------------------


class StorageType:
    """A storage type a pickle names (``torch.FloatStorage``): its dtype, nothing else."""

    def __init__(self, dtype: _dtypes.dtype, name: str) -> None:
        self.dtype = dtype
        self.name = name

    def __repr__(self) -> str:
        return f"<storage type {self.name} ({self.dtype.name})>"


class LoadedStorage:
    """A storage record of the archive, loaded: a 1-D tensor of ``numel`` elements, where the
    loader placed it (``map_location``)."""

    def __init__(self, tensor: Tensor, key: str) -> None:
        self.tensor = tensor
        self.numel = int(tensor.numel())
        self.key = key


def rebuild_from_storage(
    storage: LoadedStorage,
    offset: int,
    shape: tuple[int, ...],
    stride: tuple[int, ...],
    requires_grad: bool,
    cls: type[Tensor] | None = None,
    state: dict[str, Any] | None = None,
) -> Tensor:
    """A tensor over ``storage`` (tensorplug's archive record; PyTorch's ``_rebuild_tensor_v2``
    reduces to it): ``shape`` and ``stride`` in elements from ``offset``. Tensors of one
    storage share its memory and version counter, as PyTorch's views of one storage do."""
    if type(storage) is not LoadedStorage:
        raise pickle.UnpicklingError("a tensor record of this file names no storage record")
    if not (
        type(offset) is int
        and offset >= 0
        and _is_shape(shape)
        and _is_shape(stride)
        and len(stride) == len(shape)
        and type(requires_grad) is bool
    ):
        raise pickle.UnpicklingError(
            f"a tensor record over storage {storage.key!r} is malformed (offset {offset!r}, "
            f"shape {shape!r}, stride {stride!r})"
        )
    if _numel(shape) and offset + sum((n - 1) * s for n, s in zip(shape, stride, strict=True)) >= (
        storage.numel
    ):
        raise pickle.UnpicklingError(
            f"a tensor record reaches past the end of storage {storage.key!r} ({storage.numel} "
            f"elements): offset {offset}, shape {list(shape)}, stride {list(stride)}"
        )
    _check_state(cls, state)
    base = storage.tensor
    backend = _backends.for_device_type(base._device.type)
    as_strided = getattr(backend, "as_strided", None)
    if as_strided is None:  # a backend without strided views: a copy through the CPU
        cpu = base.to("cpu")
        cpu_backend = _backends.for_device_type("cpu")
        data = cpu_backend.as_strided(cpu._data, shape, stride, offset)  # type: ignore[attr-defined]
        t = Tensor._new(data, base._dtype, cpu._device, cpu._tp_keyset).to(base._device)
    else:
        data = as_strided(base._data, tuple(shape), tuple(stride), offset)
        t = Tensor._new(data, base._dtype, base._device, base._tp_keyset)
        t._vc = base._tp_version  # one storage, one version counter (as PyTorch's)
    return _finish(t, cls, requires_grad, state)


def _rebuild_tensor_v2(
    storage: LoadedStorage,
    offset: int,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    requires_grad: bool,
    backward_hooks: Any,
    metadata: Any = None,
) -> Tensor:
    """``torch._utils._rebuild_tensor_v2``: hooks and metadata are not weights; a file with
    either is refused rather than loaded without them."""
    if backward_hooks or metadata:
        raise _refused("a PyTorch tensor with backward hooks or metadata")
    return rebuild_from_storage(storage, offset, tuple(size), tuple(stride), requires_grad)


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Tensor:
    """``torch._utils._rebuild_parameter``: an ``nn.Parameter``."""
    if not isinstance(data, Tensor) or type(requires_grad) is not bool or backward_hooks:
        raise pickle.UnpicklingError("a PyTorch Parameter record is malformed")
    cls = _tensor_class("tensorplug.nn.parameter", "Parameter")
    if cls is None:
        raise pickle.UnpicklingError("nn.Parameter is not available to rebuild")
    return _rebuilders[cls](data, requires_grad)


def _rebuild_parameter_with_state(
    data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any
) -> Tensor:
    if state:
        raise _refused("a PyTorch Parameter with attributes")
    return _rebuild_parameter(data, requires_grad, backward_hooks)


def _torch_size(*args: Any) -> tuple[int, ...]:
    """``torch.Size(...)``: a tuple of non-negative ints."""
    dims = tuple(args[0]) if len(args) == 1 and type(args[0]) in (tuple, list) else None
    if dims is None or not _is_shape(dims):
        raise pickle.UnpicklingError("a torch.Size record is malformed")
    return dims


def _torch_device(kind: Any, index: Any = None) -> _Device:
    """``torch.device`` and ``tensorplug.device.device`` records: ``(type, index)``."""
    return file_device(kind, index)


# --- the checks -----------------------------------------------------------------------------


def file_device(text: Any, index: Any = None) -> _Device:
    """A device a file names: malformed is the file's fault (an UnpicklingError); a well-formed
    device of a type no plugin provides is the loading process's (its RuntimeError, later)."""
    if type(text) is not str or not (index is None or type(index) is int):
        raise pickle.UnpicklingError(f"a device in this file is malformed: {text!r:.40}")
    try:
        return _canonical_device(text) if index is None else _Device(text, index)
    except (RuntimeError, ValueError, TypeError) as e:
        raise pickle.UnpicklingError(f"a device in this file is malformed: {e}") from None


def _is_shape(shape: Any) -> bool:
    return type(shape) is tuple and all(type(n) is int and n >= 0 for n in shape)


def _numel(shape: tuple[int, ...]) -> int:
    count = 1
    for n in shape:
        count *= n
    return count


def _check_state(cls: Any, state: Any) -> None:
    """A record's user attributes: identifiers that ``Tensor`` (or ``cls``) does not declare,
    so a file cannot relabel a tensor (``tp_dtype``) or replace its data (``tp_data``)."""
    if state is None:
        return
    if type(state) is not dict:
        raise pickle.UnpicklingError("a tensor record's attributes are malformed")
    klass = Tensor if cls is None else cls
    for name in state:
        if type(name) is not str or not name.isidentifier() or name.startswith("_"):
            raise _refused(f"setting attribute {name!r} on a tensor")
        if hasattr(klass, name):
            raise _refused(f"setting attribute {name!r} on a tensor: {klass.__name__} declares it")


def _finish(t: Tensor, cls: Any, requires_grad: bool, state: dict[str, Any] | None) -> Tensor:
    if cls is not None:
        t = _as_class(t, cls, requires_grad)
    elif requires_grad:
        _requires_grad(t)
    for name, value in (state or {}).items():
        setattr(t, name, value)
    return t


def _backend_for(dev: _Device, what: str) -> Any:
    try:
        return _backends.for_device_type(dev.type)
    except Exception as e:  # MissingPluginError, or an unknown device type
        raise type(e)(
            f"cannot load a tensor of device type '{dev.type}' {what}: {e}",
            **({"distribution": e.distribution} if hasattr(e, "distribution") else {}),
        ) from None


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


# Tensor subclasses of tensorplug that weights-only loading builds, by the name files record
_TENSOR_CLASSES = frozenset({("tensorplug.nn.parameter", "Parameter")})


def _tensor_class(module: str, name: str) -> type | None:
    if (module, name) not in _TENSOR_CLASSES:
        return None
    # a class of a layer above, found by the name the file records, as pickle finds any
    # class: importing its module registers its rebuilder (_rebuilders)
    cls = getattr(importlib.import_module(module), name)
    return cls if cls in _rebuilders else None


# --- the allow-list -------------------------------------------------------------------------


def _checked(fn: Callable[..., Any], check: Callable[..., bool], what: str) -> Callable[..., Any]:
    def build(*args: Any) -> Any:
        if not check(*args):
            raise _refused(f"{what} with arguments {_short(args)}")
        return fn(*args)

    build.__qualname__ = build.__name__ = what
    return build


def _short(args: tuple[Any, ...]) -> str:
    text = repr(args)
    return text if len(text) < 80 else text[:77] + "..."


def _is_number(x: Any) -> bool:
    return type(x) in (int, float, bool)


_MATERIAL = (list, tuple, set, frozenset, dict)

# REDUCE-able builtins, each with the arguments it accepts: already-built containers only
# (``range``, an iterator, or a count is refused: ``frozenset(range(3 * 10**7))`` is 49 bytes)
_BUILTINS: dict[str, Callable[..., Any]] = {
    "set": _checked(set, lambda *a: a == () or (len(a) == 1 and type(a[0]) in _MATERIAL), "set"),
    "frozenset": _checked(
        frozenset, lambda *a: a == () or (len(a) == 1 and type(a[0]) in _MATERIAL), "frozenset"
    ),
    "complex": _checked(
        complex, lambda *a: 1 <= len(a) <= 2 and all(map(_is_number, a)), "complex"
    ),
    "slice": _checked(
        slice, lambda *a: 1 <= len(a) <= 3 and all(x is None or type(x) is int for x in a), "slice"
    ),
    "bytearray": _checked(
        bytearray, lambda *a: a == () or (len(a) == 1 and type(a[0]) is bytes), "bytearray"
    ),
}


def _ordered_dict(*args: Any) -> collections.OrderedDict[Any, Any]:
    if args == ():
        return collections.OrderedDict()
    if len(args) == 1 and type(args[0]) in (list, tuple, dict):
        return collections.OrderedDict(args[0])
    raise _refused(f"OrderedDict with arguments {_short(args)}")


class CheckpointGlobals(Globals):
    """The globals of tensorplug's and PyTorch's checkpoints, and the user's safe globals."""

    def __init__(self) -> None:
        self._callables: set[int] = {id(f) for f in _RECONSTRUCTORS.values()}
        self._callables |= {id(f) for f in _BUILTINS.values()}
        self._callables.add(id(_ordered_dict))
        self._user = _user_globals()

    def find(self, module: str, name: str) -> Any:
        key = f"{module}.{name}"
        if key in _RECONSTRUCTORS:
            return _RECONSTRUCTORS[key]
        if module in ("builtins", "__builtin__") and name in _BUILTINS:
            return _BUILTINS[name]
        if key == "collections.OrderedDict":
            return _ordered_dict
        if module == "tensorplug.dtypes" and name in DTYPES:
            return DTYPES[name]
        if module == "torch" and name in DTYPES:  # dtypes: torch.float16
            return DTYPES[name]
        if module == "torch" and name in TORCH_STORAGE_DTYPES:
            return StorageType(DTYPES[TORCH_STORAGE_DTYPES[name]], name)
        if key == "tensorplug.device.device":
            return _torch_device
        cls = _tensor_class(module, name)
        if cls is not None:
            return cls
        if key in self._user:
            return self._user[key]
        raise _refused(
            f"to load '{key}': it builds only tensors, containers, numbers, strings, dtypes, "
            "devices and OrderedDict"
        )

    def callable(self, obj: Any) -> bool:
        return id(obj) in self._callables or self.is_user_type(obj) or self._is_user(obj)

    def is_user_type(self, obj: Any) -> bool:
        return isinstance(obj, type) and self._is_user(obj)

    def _is_user(self, obj: Any) -> bool:
        return any(obj is v for v in self._user.values())


def _codecs_encode(text: Any, encoding: Any = "utf-8") -> bytes:
    """``_codecs.encode(str, "latin1")``: how protocol 2 (``torch.save``) writes ``bytes``."""
    if type(text) is not str or encoding != "latin1":
        raise _refused(f"_codecs.encode with arguments {_short((text, encoding))}")
    return text.encode("latin1")


_RECONSTRUCTORS: dict[str, Callable[..., Any]] = {
    "_codecs.encode": _codecs_encode,
    "tensorplug.serialization.rebuild_tensor": rebuild_tensor,  # checkpoints of <= 0.1.2
    "tensorplug.serialization._records.rebuild_tensor": rebuild_tensor,
    "tensorplug.serialization._records.rebuild_from_storage": rebuild_from_storage,
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
    "tensorplug.serialization._records.rebuild_meta_tensor": rebuild_meta_tensor,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
    "torch.Size": _torch_size,
    "torch.device": _torch_device,
}


# --- add_safe_globals ------------------------------------------------------------------------

_safe_globals: list[Any] = []


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow ``tp.load(weights_only=True)`` to build these classes and call these functions, as
    ``torch.serialization.add_safe_globals``: each entry is the object, or ``(object, "module.
    name")`` for one a file names otherwise. Only add types you trust with any arguments a file
    gives them."""
    for g in safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2 or type(g[1]) is not str:
                raise TypeError(f"a safe global is an object or (object, 'module.name'), not {g!r}")
        elif not callable(g):
            raise TypeError(f"a safe global is a class or a function, not {g!r}")
        _safe_globals.append(g)


def get_safe_globals() -> list[Any]:
    """The user's safe globals (``add_safe_globals``), in the order added."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forget every safe global ``add_safe_globals`` added."""
    _safe_globals.clear()


def _user_globals() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for g in _safe_globals:
        if isinstance(g, tuple):
            out[g[1]] = g[0]
        else:
            out[f"{g.__module__}.{g.__qualname__}"] = g
    return out
