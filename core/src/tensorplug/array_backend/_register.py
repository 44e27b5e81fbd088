"""``register``: bind the kit's kernels to one backend key over one array namespace (internal;
the public names are re-exported by ``tensorplug.array_backend``).

:func:`register` builds every kernel module of :data:`_MODULES` for a :class:`~._kit.Kit` over
``xp``, wraps each kernel (errors named, Note [Kernel errors]; the device guard, Note [Device
guard]), registers them into the registry's library and adds the backend's storage
(``_storage``). :func:`standard_namespace` adapts a library that is no array API namespace.

Note [Kernels that do not dispatch]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A kernel above a backend (autograd's) excludes its own keys in the thread while the backend
kernel runs, so that a backend kernel calling operators again does not reach it twice. These
kernels work on arrays and call no operator, except the copies across backends
(``_pointwise._copy.DISPATCHING``, Note [Copies across backends]); so each registered kernel but
those (and but ``overrides``, which are not known) is marked with
``tp.library.mark_no_dispatch``, and a kernel above that finds it so
(``tp.library.is_no_dispatch``) may call it without the guard (about 0.1 µs per call).
``tests/ops/test_no_dispatch.py`` checks the promise on every op's samples under dispatch
tracing.

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
from types import ModuleType
from typing import Any, Protocol

from .. import _backends
from .. import dtypes as _dt
from .. import keys as _keys
from ..device import device as Device
from ..dispatcher._library import mark_no_dispatch
from ..errors import RegistrationError
from . import (
    _backward,
    _factories,
    _fft,
    _indexing,
    _kit,
    _linalg,
    _linalg_solvers,
    _nn,
    _pointwise,
    _random,
    _reductions,
    _shape,
    _special,
    _strided,
)
from ._checks import backend_key, qualified
from ._kit import Kernel, Kit
from ._storage import (
    ArrayStorage,
    _default_storage,
    _drawn_here,
    _from_host_by_asarray,
    _from_host_through_float32,
    _host_dtypes,
    _host_itself,
    _host_rng,
    _native_bfloat16,
    _to_host_by_dlpack,
    _to_host_through_float32,
)

__all__ = [
    "ArrayBackend", "Registry", "backend_key", "override_name", "register", "standard_namespace",
]  # fmt: skip

# The modules whose ``build(kit)`` makes the kernels: one per op family (docs/extending.md),
# the parts of a family that is a package, and ``_backward`` (the backward kernels).
_MODULES: tuple[ModuleType, ...] = (
    *_pointwise.PARTS, *_reductions.PARTS, _shape, _strided, *_indexing.PARTS, _linalg, _linalg_solvers, *_nn.PARTS, _random,
    _factories, _special, _fft, _backward,
)  # fmt: skip


def _part_name(mod: ModuleType) -> str:
    """How a warning and ``ArrayBackend.unbuilt`` name a kernel module: its family, and the part
    of a family package (``"linalg"``, ``"pointwise.unary"``)."""
    path = mod.__name__.split(".")[2:]  # below tensorplug.array_backend
    return ".".join(p.lstrip("_") for p in path)


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
    special: Any = None,
    fft: Any = None,
    lazy: bool | None = None,
    strided: bool | None = None,
    views: bool = True,
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
      ``current_device()``: the index a device named without one (``"cuda"``) means;
      ``special``: the special-function namespace (``scipy.special``, ``cupyx.scipy.special``,
      any namespace with scipy.special's names) that the kernels of the special functions call
      (``kit.special``); without it those ops raise "not supported by this backend" (Note
      [Special-function namespace] in _special.py); ``fft``: the FFT namespace the FFT
      kernels call (the standard's ``fft`` extension's names and calling convention; default
      ``xp.fft``: Note [FFT kernels] in _fft.py); ``lazy``: whether ``xp``'s arrays are
      graphs computed when read (default: detected by dask's collection protocol), so kernels
      read no values for their checks (Note [Lazy backends read no values] in _kit.py);
    * ``strided``: whether the arrays are strided views of memory, with PyTorch's layout
      semantics (``stride()``, ``storage_offset()``, ``data_ptr()``, ``as_strided``, memory
      formats: Note [Strided layout] in tensorplug/_strides.py). Default: detected, true when
      the library has ``lib.stride_tricks.as_strided`` and its arrays describe their memory
      (``__array_interface__`` or ``__cuda_array_interface__``, as numpy's and CuPy's do).
    * ``views=False``: ``xp``'s arrays share no memory (its slices and transposes are copies:
      dask, array_api_strict), so the backend's tensors carry the ``Functionalize`` key, which
      gives them PyTorch's view semantics (``tp.keys.set_has_views``; Note
      [Functionalization] in _opset/functionalize.py).

    ``xp`` is used as it is when it implements the array API standard, else adapted by
    array-api-compat (:func:`standard_namespace`); the kernels call only the standard and the
    extensions of Note [Optional extensions] in _kit.py, each with a standard fallback.
    """
    k, dev_type = backend_key("register", key, device_type)
    _keys.set_has_views(k, views)  # before the kit reads the backend's tensor key set
    if dtypes is None:
        storage, compute = _default_storage(xp)
    else:
        storage, compute = dict(dtypes), {}
    if compute_dtypes is not None:
        compute.update(compute_dtypes)
    library = xp
    xp = standard_namespace(xp)
    kit = Kit(xp, k.name, dev_type, storage, compute, device_context=device_context, lazy=lazy)

    numpy = sys.modules.get("numpy")  # imported only where needed: Meta runs without it
    is_numpy = numpy is not None and library is numpy
    bf16 = _native_bfloat16(kit)  # Note [bfloat16 across transfers] in _storage.py
    if to_host is None:
        asnumpy = getattr(library, "asnumpy", None)
        to_host = _host_itself if is_numpy else (asnumpy or _to_host_by_dlpack)
        if bf16 is not None:
            to_host = functools.partial(_to_host_through_float32, kit, to_host, bf16)
    if from_host is None:
        from_host = functools.partial(_from_host_by_asarray, kit)
        if bf16 is not None:
            from_host = functools.partial(_from_host_through_float32, kit, from_host, bf16)

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
    kit.special = special
    kit.fft = fft
    tricks = getattr(getattr(library, "lib", None), "stride_tricks", None)
    kit.as_strided = getattr(tricks, "as_strided", None)
    if strided is None:
        strided = kit.as_strided is not None and _describes_memory(kit.array_type)
    elif strided and kit.as_strided is None:
        raise RegistrationError(
            f"array_backend.register: backend {k.name!r} is declared strided=True, but "
            f"{getattr(library, '__name__', library)!r} has no lib.stride_tricks.as_strided "
            "to make strided views with: pass strided=False"
        )
    kit.strided = bool(strided)
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
            part = _part_name(mod)
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
        # copies across backends call the other backend's kernels (Note [Copies across backends])
        dispatching.update(getattr(mod, "DISPATCHING", ()))
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


def _describes_memory(array_type: type) -> bool:
    """Whether arrays of ``array_type`` tell where their elements lie (numpy's and CuPy's)."""
    return any(
        hasattr(array_type, n) for n in ("__array_interface__", "__cuda_array_interface__")
    ) and hasattr(array_type, "strides")


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
