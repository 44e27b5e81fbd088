"""Turn an array-API library into a tensorplug backend: one kernel set, any ``xp``.

Every standard operator of ``native_functions.yaml`` that is not a composite gets a kernel
written once against an array namespace ``xp`` (numpy for CPU, cupy for CUDA, any array-API
library for a third party). :func:`register` binds those kernels to one backend key and
registers them, plus the backend's storage (``tensorplug._backends.StorageBackend``: Python
data in, host arrays out, transfers between backends).

The kernels live in sibling modules by kind: ``_arithmetic``, ``_unary``, ``_where`` (elementwise,
built by the builders of ``_elementwise``), ``_reductions``, ``_sorting``, ``_linalg``, ``_shape``,
``_indexing``, ``_factories``, ``_sampling``, ``_copy``, ``_nn``, ``_backward``, ``_amp``; ``_kit``
holds what they share (dtype maps, wrapping, promotion helpers; see its Notes), ``_checks``
PyTorch's argument checks and the kernel errors, ``_standard`` the fallbacks in standard
functions. Nothing here imports numpy at module level: the core does not depend on it.
:func:`register_lazy` (``_lazy``) registers a backend whose array library is imported on first
use (CUDA: CuPy).

Usage (what ``tensorplug-cpu`` does in its ``tensorplug_register_kernels`` hook)::

    import numpy
    from tensorplug import array_backend

    backend = array_backend.register(registry, "CPU", numpy)
    backend.dtypes                      # frozenset of the tensorplug dtypes it supports
    array_backend.register(registry, "XLA", my_xp, device_type="xla",
                           overrides={"mm": my_fast_mm})

Note [Kernels that do not dispatch]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A kernel above a backend (autograd's) excludes its own keys in the thread while the backend
kernel runs, so that a backend kernel calling operators again does not reach it twice. These
kernels work on arrays and call no operator, except the copies across backends in ``_copy``;
so each registered kernel but those (and but ``overrides``, which are not known) is marked
with ``tp.library.mark_no_dispatch``, and a kernel above that finds it so
(``tp.library.is_no_dispatch``) may call it without the guard (about 0.1 µs per call). ``tests/ops/test_no_dispatch.py`` checks the promise on every op's samples under
dispatch tracing.

Note [Device guard]
~~~~~~~~~~~~~~~~~~~
A backend with several devices (``device_context`` given) runs each kernel with the device of
its first tensor argument current, as PyTorch's generated CUDA kernels hold a DeviceGuard: an
op on ``cuda:1`` tensors computes on device 1 whatever device the thread has made current
(CuPy launches on the current device). Factories have no tensor argument; they enter
``kit.on(device)`` themselves. A backend with one device passes no ``device_context`` and pays
nothing.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .. import _backends
from .. import dtypes as _dt
from .. import keys as _keys
from ..device import canonical
from ..device import device as Device
from ..dispatcher._library import mark_no_dispatch
from ..errors import RegistrationError
from ..tensor import Tensor
from . import (
    _amp,
    _arithmetic,
    _backward,
    _copy,
    _factories,
    _indexing,
    _kit,
    _linalg,
    _nn,
    _reductions,
    _sampling,
    _shape,
    _sorting,
    _unary,
    _where,
)
from ._checks import qualified
from ._kit import Kernel, Kit, OpError

__all__ = [
    "ArrayBackend", "ArrayStorage", "LazyArrayBackend", "OpError", "Registry", "register",
    "register_lazy",
]  # fmt: skip

_MODULES = (
    _arithmetic, _unary, _where, _reductions, _sorting, _linalg, _shape, _indexing, _factories,
    _sampling, _copy, _nn, _backward, _amp,
)  # fmt: skip


class Registry(Protocol):
    """What :func:`register` needs from the plugin registry (``tensorplug.plugins``)."""

    def library(self, ns: str, kind: Any) -> Any: ...

    def add_storage_backend(self, backend: Any) -> None: ...


class ArrayBackend:
    """A registered array backend: its kit, its library of kernels and its storage."""

    def __init__(
        self,
        kit: Kit,
        library: Any,
        storage: ArrayStorage,
        kernels: dict[str, Kernel],
        skipped: list[str],
        unbuilt: dict[str, str] | None = None,
    ) -> None:
        self.kit = kit
        self.library = library
        self.storage = storage
        # op name ("add.Tensor"; another namespace's with it: "tensorplug::...") -> the kernel
        self.kernels = kernels
        self.skipped = skipped  # kernels of ops not defined when registering
        # kernel modules that could not be built for this namespace -> why
        self.unbuilt: dict[str, str] = dict(unbuilt or {})

    @property
    def key(self) -> str:
        return self.kit.key_name

    @property
    def xp(self) -> Any:
        return self.kit.xp

    @property
    def dtypes(self) -> frozenset[_dt.dtype]:
        """The tensorplug dtypes this backend stores."""
        return self.kit.dtypes

    def supports(self, d: _dt.dtype) -> bool:
        return d in self.kit.dtypes

    def close(self) -> None:
        """Remove the kernels and the storage backend (the registry normally does this)."""
        self.library.close()
        _backends.unregister(self.storage)

    def __repr__(self) -> str:
        return (
            f"<ArrayBackend {self.key} ({getattr(self.xp, '__name__', self.xp)}): "
            f"{len(self.kernels)} kernels, dtypes {sorted(d.name for d in self.dtypes)}>"
        )


class ArrayStorage:
    """The storage backend of an array backend (tensorplug._backends.StorageBackend)."""

    def __init__(
        self, kit: Kit, plugin: str, host_dtypes: dict[_dt.dtype, Any] | None = None
    ) -> None:
        self.kit = kit
        self.key_name = kit.key_name
        self.device_type = kit.device_type
        self.plugin = plugin
        self._host: dict[_dt.dtype, Any] | None = host_dtypes  # numpy's, made on first use
        self._from_host: dict[Any, _dt.dtype] | None = None

    @property
    def _host_dtypes(self) -> dict[_dt.dtype, Any]:
        if self._host is None:
            self._host = _host_dtypes()
        return self._host

    @property
    def _from_host_dtype(self) -> dict[Any, _dt.dtype]:
        if self._from_host is None:
            self._from_host = {}
            for d, x in self._host_dtypes.items():
                self._from_host.setdefault(x, d)
        return self._from_host

    def to_host(self, data: Any) -> Any:
        return self.kit.to_host(data)

    def memory_layout(self, data: Any) -> tuple[int, tuple[int, ...], int] | None:
        """``(address, strides, itemsize)`` of array ``data``, in bytes, from the array
        interface numpy and cupy describe their memory with; None for arrays without one."""
        i = getattr(data, "__array_interface__", None)
        if i is None:
            i = getattr(data, "__cuda_array_interface__", None)
        if i is None:
            return None
        shape = tuple(i["shape"])
        item = int(data.itemsize)
        strides = i.get("strides")
        if strides is None:  # row-major
            acc, out = item, []
            for n in reversed(shape):
                out.append(acc)
                acc *= max(n, 1)
            strides = tuple(reversed(out))
        return int(i["data"][0]), tuple(int(x) for x in strides), item

    def device(self, d: Device) -> Device:
        """The device tensors made for ``d`` live on (``cuda`` is the current device)."""
        return self.kit.device(d)

    def host_dtype(self, host: Any) -> _dt.dtype:
        d = self._from_host_dtype.get(host.dtype)
        if d is None:
            names = ", ".join(d.name for d in _dt.all_dtypes() if d in self._host_dtypes)
            raise TypeError(
                f"can't convert an array of dtype {host.dtype} to a tensor on the "
                f"{self.key_name} backend. The only supported types are: {names}."
            )
        return d

    def from_host(self, host: Any, device: Any) -> Tensor:
        """A tensor over host array ``host`` (no copy where the backend can share it)."""
        kit = self.kit
        dev = kit.device(canonical(device))
        d = self.host_dtype(host)
        kit.check_dtype(d)
        return kit.new(kit.from_host_array(host, dev), d, dev, kit.keyset)

    def from_python(self, data: Any, dtype: _dt.dtype | None, device: Any) -> Tensor:
        """``tp.tensor(data)``: always a copy; dtype inferred as ``torch.tensor`` does."""
        import numpy

        kit = self.kit
        dev = kit.device(canonical(device))
        host, inferred = self._host_of(data)
        d = inferred if dtype is None else dtype
        kit.check_dtype(d)
        want = self._host_dtypes[d]
        if inferred.kind == "c" and d.kind != "c":
            host = numpy.real(host)
        out = host.astype(want) if host.dtype != want else host.copy()
        return kit.new(kit.from_host_array(out, dev), d, dev, kit.keyset)

    def _host_of(self, data: Any) -> tuple[Any, _dt.dtype]:
        import numpy

        if isinstance(data, Tensor):
            host = _backends.for_device_type(data._device.type).to_host(data._data)
            return numpy.asarray(host), data._dtype
        if type(data) is self.kit.array_type and not isinstance(data, numpy.ndarray):
            host = self.kit.to_host(data)
            return host, self.host_dtype(host)
        if isinstance(data, (numpy.ndarray, numpy.generic)) or hasattr(data, "__array_interface__"):
            host = numpy.asarray(data)  # (the buffers of tp.load, Note [Tensor pickles])
            return host, self.host_dtype(host)
        if isinstance(data, (list, tuple)):
            data = _plain(data)
        try:
            host = numpy.asarray(data)
        except (OverflowError, ValueError) as e:
            raise TypeError(f"Could not convert {type(data).__name__} to a tensor: {e}") from e
        kind = host.dtype.kind
        if kind == "b":
            return host, _dt.bool
        if kind in "iu":
            if kind == "u" or host.dtype.itemsize > 8:
                raise OverflowError("Overflow when unpacking long")
            return host.astype(numpy.int64), _dt.int64
        if kind == "f":
            return host, _dt.get_default_dtype()
        if kind == "c":
            return host, _dt.get_default_dtype().to_complex()
        if kind == "O" and host.size and all(isinstance(x, int) for x in host.reshape(-1)):
            raise OverflowError("Overflow when unpacking long")
        raise _no_dtype(data)


def _no_dtype(data: Any) -> Exception:
    """PyTorch's error for data with an element that is no number: the first such element's
    type, not the type of the list around it."""
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
        elif not isinstance(x, (bool, int, float, complex, Tensor)) and not hasattr(x, "dtype"):
            name = type(x).__name__
            if isinstance(x, (str, bytes)):
                return TypeError(f"tensor(): invalid data type '{name}'")
            return RuntimeError(f"Could not infer dtype of {name}")
    return RuntimeError(f"Could not infer dtype of {type(data).__name__}")


def _plain(data: Any) -> Any:
    """Nested sequences with tensors (0-dim or not) replaced by Python values."""
    if isinstance(data, Tensor):
        host = _backends.for_device_type(data._device.type).to_host(data._data)
        return host.tolist() if data._dtype is not _dt.bfloat16 else host.astype("float32").tolist()
    if isinstance(data, (list, tuple)):
        return [_plain(x) for x in data]
    return data


def _default_storage(xp: Any) -> tuple[dict[_dt.dtype, Any], dict[_dt.dtype, Any]]:
    """Every dtype ``xp`` has by name; bfloat16 through ml_dtypes for numpy."""
    storage: dict[_dt.dtype, Any] = {}
    for d in _dt.all_dtypes():
        names = (d.name, "bool_") if d is _dt.bool else (d.name,)
        for n in names:
            x = getattr(xp, n, None)
            if x is not None:
                storage[d] = x
                break
    compute: dict[_dt.dtype, Any] = {}
    if _dt.bfloat16 not in storage and getattr(xp, "__name__", "") == "numpy":
        try:
            import ml_dtypes
        except ImportError:  # bfloat16 unsupported; the kit says so on use
            pass
        else:
            storage[_dt.bfloat16] = ml_dtypes.bfloat16
            compute[_dt.bfloat16] = xp.float32
    return storage, compute


def _to_host_by_dlpack(a: Any) -> Any:
    """A host numpy copy of array ``a``: through DLPack where its library and device export it,
    else through ``numpy.asarray`` (the ``__array__`` protocol or the buffer)."""
    import numpy

    try:
        host = numpy.from_dlpack(a)
    except (AttributeError, BufferError, RuntimeError, TypeError, ValueError):
        return numpy.array(a, copy=True)
    return numpy.array(host, copy=True)


def _host_dtypes() -> dict[_dt.dtype, Any]:
    import numpy

    out: dict[_dt.dtype, Any] = {}
    for d in _dt.all_dtypes():
        if d is _dt.bfloat16:
            try:
                import ml_dtypes
            except ImportError:
                continue
            out[d] = numpy.dtype(ml_dtypes.bfloat16)
        else:
            out[d] = numpy.dtype(d.name)
    return out


def _host_itself(a: Any) -> Any:
    """``to_host`` of a numpy backend: its arrays are host arrays."""
    return a


def _from_host_by_asarray(kit: Kit, host: Any, device: Device) -> Any:
    """The default ``from_host``: ``xp.asarray`` with ``device`` current."""
    with kit.on(device):
        return kit.xp.asarray(host)


def _host_rng(seed: int) -> Any:
    """The default random state where ``xp`` has none: numpy's PCG64 on the host."""
    import numpy

    return numpy.random.Generator(numpy.random.PCG64(seed))


def _drawn_here(arr: Any, device: Device) -> Any:
    """``from_rng`` of a backend that draws with its own random state: nothing to move."""
    return arr


def override_name(name: str) -> str:
    """The kernel name of an ``overrides`` key: ``"mm"``, ``"mm.default"``,
    ``"aten::mm"`` and ``"add.Tensor"`` alike; a name that is no aten operator is an error."""
    from .. import dispatcher

    bare = name.removeprefix("aten::")
    if bare.endswith(".default"):
        bare = bare[: -len(".default")]
    try:
        dispatcher.find_op("aten::" + bare)
    except RegistrationError:
        import difflib

        known = sorted(o.name.removeprefix("aten::") for o in dispatcher.ops_in("aten"))
        close = difflib.get_close_matches(bare, known, n=3)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise RegistrationError(
            f"array_backend.register: overrides names {name!r}, which is no aten operator "
            f"overload ('op' or 'op.overload', e.g. 'mm' or 'add.Tensor').{hint}"
        ) from None
    return bare


def standard_namespace(xp: Any) -> Any:
    """``xp`` itself when it implements the array API standard (it says which version in
    ``__array_api_version__``: numpy >= 2, array_api_strict, ...), else its array-api-compat
    adapter (numpy 1.x, cupy, torch, dask). A namespace of a plugin's own around a library
    (functions replaced, as tensorplug-cuda's around CuPy) keeps its functions, and takes the
    adapter's only for names it lacks. array-api-compat is imported only here: the core needs
    it only once an array backend registers."""
    if getattr(xp, "__array_api_version__", None) is not None:
        return xp
    import array_api_compat

    try:
        compat = array_api_compat.array_namespace(xp.asarray(0))
    except TypeError as e:
        raise RegistrationError(
            f"array_backend.register: {getattr(xp, '__name__', xp)!r} is not an array API "
            "namespace (no __array_api_version__) and array-api-compat does not know it; "
            "pass a namespace that follows the array API standard"
        ) from e
    if xp is sys.modules.get(getattr(xp, "__name__", "")):
        return compat  # the library module itself: its adapter throughout
    return _Layered(xp, compat)


class _Layered:
    """A plugin's namespace first, array-api-compat's adapter for the names it lacks."""

    def __init__(self, own: Any, compat: Any) -> None:
        self._own = own
        self._compat = compat
        self.__name__ = getattr(own, "__name__", "namespace")
        self.__array_api_version__ = getattr(compat, "__array_api_version__", None)

    def __getattr__(self, name: str) -> Any:
        got = getattr(self._own, name, _MISSING)
        return getattr(self._compat, name) if got is _MISSING else got


_MISSING = object()


def register(
    registry: Registry,
    key: str,
    xp: Any,
    *,
    device_type: str | None = None,
    overrides: Mapping[str, Kernel] | None = None,
    dtypes: Mapping[_dt.dtype, Any] | None = None,
    compute_dtypes: Mapping[_dt.dtype, Any] | None = None,
    to_host: Callable[[Any], Any] | None = None,
    from_host: Callable[[Any, Device], Any] | None = None,
    device_context: Callable[[Device], contextlib.AbstractContextManager[Any]] | None = None,
    make_rng: Callable[[int], Any] | None = None,
    current_device: Callable[[], int] | None = None,
) -> ArrayBackend:
    """Register the array kernels for backend ``key`` over array namespace ``xp``.

    ``registry`` gives the library (``registry.library("aten", "IMPL")``) and takes the storage
    backend (``registry.add_storage_backend``). Optional arguments:

    * ``device_type``: defaults to the key's (``"cpu"`` for ``CPU``);
    * ``overrides``: ``{"op.overload": kernel}`` replacing single kernels (``"mm"``,
      ``"mm.default"`` and ``"add.Tensor"`` alike; an unknown name is a RegistrationError);
    * ``dtypes``: tensorplug dtype -> ``xp`` dtype to store it in (default: every dtype ``xp``
      names, plus bfloat16 via ml_dtypes for numpy); ``compute_dtypes``: where arithmetic
      should run in another dtype (default: bfloat16 in float32 when stored by ml_dtypes);
    * ``to_host``/``from_host``: array <-> host numpy array (defaults: ``xp.asnumpy``, else
      DLPack, else ``numpy.asarray``; and ``xp.asarray``); ``device_context``: a context
      manager making a device current (cupy's ``Device``), given by backends with several
      devices, whose kernels then run on their tensors' device (Note [Device guard]);
      ``make_rng(seed)``: the backend's random state (default: ``xp.random.default_rng`` where
      ``xp`` has one, else numpy's PCG64 on the host, its draws transferred by ``from_host``);
      ``current_device()``: the index a device named without one (``"cuda"``) means.

    ``xp`` is used as it is when it implements the array API standard, else adapted by
    array-api-compat (:func:`standard_namespace`); the kernels call only the standard and the
    extensions of Note [Optional extensions] in _kit.py, each with a standard fallback.
    """
    k = _keys.get(key)
    if k.kind is not _keys.KeyKind.BACKEND:
        raise RegistrationError(
            f"array_backend.register: {key!r} is a {k.kind.value} key, not a backend key; "
            "create one with tensorplug.keys.register_backend(name, device_type)"
        )
    dev_type = device_type or k.device_type
    if dev_type is None:
        raise RegistrationError(f"array_backend.register: backend {key!r} has no device type")
    if dtypes is None:
        storage, compute = _default_storage(xp)
    else:
        storage, compute = dict(dtypes), {}
    if compute_dtypes is not None:
        compute.update(compute_dtypes)
    library = xp
    xp = standard_namespace(xp)
    kit = Kit(xp, k.name, dev_type, storage, compute, device_context=device_context)

    numpy = sys.modules.get("numpy")  # imported only where needed: Meta runs without it
    is_numpy = numpy is not None and library is numpy
    if to_host is None:
        asnumpy = getattr(library, "asnumpy", None)
        to_host = _host_itself if is_numpy else (asnumpy or _to_host_by_dlpack)
    if from_host is None:
        from_host = functools.partial(_from_host_by_asarray, kit)

    rng_on_host = False
    if make_rng is None:
        if is_numpy or getattr(getattr(library, "random", None), "default_rng", None) is None:
            rng_on_host = not is_numpy
            make_rng = _host_rng
        else:
            make_rng = library.random.default_rng
    kit.to_host = to_host
    kit.from_host_array = from_host
    kit.make_rng = make_rng
    kit.current_device = current_device
    if rng_on_host:
        host_dtypes = _host_dtypes()
        kit.from_rng = from_host
        kit.rng_dtype = host_dtypes.__getitem__
    else:
        kit.from_rng = _drawn_here

    from .. import dispatcher

    kernels: dict[str, Kernel] = {}
    dispatching: set[str] = set()  # Note [Kernels that do not dispatch]
    unbuilt: dict[str, str] = {}
    for mod in _MODULES:
        try:
            built = mod.build(kit)
        except (AttributeError, TypeError, NotImplementedError) as e:
            # a namespace without a function the module needs: its ops stay missing, and
            # `tensorplug ops --missing KEY` lists them (Note [Optional extensions] in _kit.py)
            part = mod.__name__.rpartition(".")[2].lstrip("_")
            unbuilt[part] = f"{type(e).__name__}: {e}"
            warnings.warn(
                f"array_backend.register: the {part} kernels of backend {k.name!r} could not be "
                f"built for {getattr(library, '__name__', library)!r} ({type(e).__name__}: {e}); "
                f"their ops have no {k.name} kernel (`tensorplug ops --missing {k.name}` lists "
                "them): pass overrides={...} for them",
                stacklevel=2,
            )
            continue
        kernels.update(built)
        if mod is _copy:  # copies across backends call the other backend's kernels
            dispatching.update(built)
    if overrides:
        for name, fn in overrides.items():
            op = override_name(name)
            kernels[op] = fn
            dispatching.add(op)

    # one library for every namespace: a name with its namespace registers there (qualified)
    lib = registry.library("aten", "IMPL")
    registered: dict[str, Kernel] = {}
    skipped: list[str] = []
    for name, fn in kernels.items():
        try:
            dispatcher.find_op(qualified(name))
        except RegistrationError:
            skipped.append(name)
            continue
        kern = _kit.guard(name, fn, k.name)
        if device_context is not None:
            kern = _device_guard(kern, kit)
        if name not in dispatching:
            mark_no_dispatch(kern)
        lib.impl(name, kern, k.name)
        registered[name] = kern
    plugin = str(getattr(registry, "plugin_name", "") or getattr(lib, "owner", "?"))
    store = ArrayStorage(kit, plugin, None)
    registry.add_storage_backend(store)
    return ArrayBackend(kit, lib, store, registered, skipped, unbuilt)


def _device_guard(fn: Kernel, kit: Kit) -> Kernel:
    """``fn`` run with its first tensor argument's device current (Note [Device guard])."""
    on = kit.on
    current = kit.current_device

    def kernel(*args: Any, **kwargs: Any) -> Any:
        dev = _first_device(args)
        if dev is None or dev.index is None or (current is not None and dev.index == current()):
            return fn(*args, **kwargs)
        with on(dev):
            return fn(*args, **kwargs)

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    kernel.__qualname__ = getattr(fn, "__qualname__", kernel.__name__)
    return kernel


def _first_device(args: tuple[Any, ...]) -> Any:
    for a in args:
        d = getattr(a, "_device", None)
        if d is not None:
            return d
        if type(a) is list or type(a) is tuple:
            for x in a:
                d = getattr(x, "_device", None)
                if d is not None:
                    return d
    return None


# register_lazy (``_lazy``) builds on register and the classes above, and imports them from
# here: its names are loaded on first use.
if TYPE_CHECKING:
    from ._lazy import LazyArrayBackend, register_lazy


def __getattr__(name: str) -> Any:
    if name not in ("LazyArrayBackend", "register_lazy"):
        raise AttributeError(f"module 'tensorplug.array_backend' has no attribute {name!r}")
    from . import _lazy

    value = getattr(_lazy, name)
    globals()[name] = value
    return value
