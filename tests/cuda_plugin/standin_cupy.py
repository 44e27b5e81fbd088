"""A stand-in for CuPy, for testing tensorplug-cuda on machines without a GPU. TEST DOUBLE.

It is NOT CuPy: its "device arrays" are numpy arrays (a subclass that remembers the device it
was made on) and its kernels are numpy's. It has just enough of CuPy's API for the plugin
(``cuda.runtime``, ``cuda.Device``, ``cuda.Stream``, ``cuda.Event``, the memory pool and
allocator, ``random.default_rng``, ``asnumpy``) and follows the CuPy rules that numpy does not
have, so the plugin's wiring is checked against them:

* an operation on arrays of a device other than the current one raises, as CuPy without peer
  access does (so kernels must run on their tensors' device);
* host (numpy) arrays are refused as operands, as CuPy refuses them (``asarray`` and ``array``
  take them: that is the host-to-device copy);
* results are arrays, never numpy scalars; ``asnumpy`` copies; there is no ``errstate`` and no
  floating-point warnings; its generators have no ``permutation``; ``argsort`` takes no
  ``stable=`` (and is always stable);
* ``flags`` as CuPy's: ``c_contiguous``, ``f_contiguous``, ``owndata``, no ``writeable``;
* ufunc methods as CuPy 14 has them: ``reduce`` and ``accumulate`` only for ``add`` and
  ``multiply``, ``at`` only for the scatter ufuncs; the others raise NotImplementedError;
* several devices (``make(devices=2)``), each with its own current stream.

CuPy's numerics, kernels and memory behaviour are not modelled: those are checked on a GPU
(``pytest -m gpu``, docs/cuda.md).

Usage::

    cp = make(devices=2)
    with tensorplug_cuda.loader.substitute(cp): ...
"""

from __future__ import annotations

import itertools
import time
import types
import weakref
from typing import Any

import numpy

__version__ = "0.0+standin"

# numpy names CuPy does not have (the array kit must not rely on them)
_NOT_IN_CUPY = frozenset({"errstate", "seterr", "geterr"})


class CUDARuntimeError(RuntimeError):
    pass


def make(devices: int = 2, *, count_error: str | None = None) -> types.ModuleType:
    """A fresh stand-in module named ``cupy`` with ``devices`` fake GPUs (0: none visible);
    ``count_error``: ``getDeviceCount`` raises CUDARuntimeError with that text (no driver)."""
    state = _State(devices, count_error)
    mod = _Module("cupy", state)
    return mod


class _SpecialModule(types.ModuleType):
    def __init__(self, cp: Any) -> None:
        super().__init__("cupyx.scipy.special", "cupyx.scipy.special stand-in (tests only)")
        self._cp = cp

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        import scipy.special

        value = getattr(scipy.special, name)
        cls = self._cp.ndarray
        state = self._cp._state

        def function(*args: Any) -> Any:
            _check_device(state, args)
            with numpy.errstate(all="ignore"):
                r = value(*_unwrap(args))
            return tuple(_wrap(x, cls) for x in r) if isinstance(r, tuple) else _wrap(r, cls)

        function.__name__ = name
        setattr(self, name, function)
        return function


class _NumpySubmodule(types.ModuleType):
    """``cupy.linalg`` / ``cupy.fft``'s stand-in: numpy's submodule, its functions taking and
    giving device arrays as the module's do."""

    def __init__(self, cp: Any, name: str) -> None:
        super().__init__(f"cupy.{name}", f"cupy.{name} stand-in (tests only)")
        self._cp = cp
        self._numpy = getattr(numpy, name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._numpy, name)
        if not callable(value) or isinstance(value, type):
            return value
        cls = self._cp.ndarray
        state = self._cp._state

        def function(*args: Any, **kwargs: Any) -> Any:
            _check_device(state, (args, kwargs))
            with numpy.errstate(all="ignore"):
                r = value(*_unwrap(args), **_unwrap(kwargs))
            if isinstance(r, tuple):
                items = [_wrap(x, cls) for x in r]
                return type(r)(*items) if hasattr(r, "_fields") else tuple(items)
            return _wrap(r, cls)

        function.__name__ = name
        setattr(self, name, function)
        return function


class _State:
    def __init__(self, devices: int, count_error: str | None) -> None:
        self.devices = devices
        self.count_error = count_error
        self.current = 0
        self.streams: dict[int, list[Any]] = {}  # device -> stack of current streams
        self.used: dict[int, int] = {}  # device -> bytes in use (memory pool)
        self.cached: dict[int, int] = {}  # device -> bytes freed but kept by the pool
        self.allocator: Any = None
        self.ptrs = itertools.count(0x1000, 0x100)
        self.synchronized: list[int] = []


class _Module(types.ModuleType):
    def __init__(self, name: str, state: _State) -> None:
        super().__init__(name, "CuPy stand-in (tests only)")
        self._state = state
        self.__version__ = __version__
        self.ndarray = _array_class(state)
        self.cuda = _cuda_module(state)
        self.random = _random_module(self)
        pool = _MemoryPool(state)
        self._pool = pool
        state.allocator = pool.malloc
        # cupyx.scipy.special's stand-in: scipy.special's functions, wrapped as the module's
        # (tensorplug_cuda.backend.special_functions takes it)
        self.scipy_special = _SpecialModule(self)
        self.linalg = _NumpySubmodule(self, "linalg")
        self.fft = _NumpySubmodule(self, "fft")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in _NOT_IN_CUPY:
            raise AttributeError(name)
        value = getattr(numpy, name)
        if isinstance(value, numpy.ufunc):
            wrapped = _UFunc(value)
            setattr(self, name, wrapped)
            return wrapped
        if isinstance(value, (type, numpy.dtype)):
            return value  # dtypes and scalar types as numpy
        if callable(value):
            cls = self.ndarray
            state = self._state
            takes_host = name in _TAKES_HOST

            def function(*args: Any, **kwargs: Any) -> Any:
                if not takes_host:
                    _check_device(state, (args, kwargs))
                with numpy.errstate(all="ignore"):
                    return _wrap(value(*_unwrap(args), **_unwrap(kwargs)), cls)

            function.__name__ = name
            setattr(self, name, function)
            return function
        return value

    def diagonal(self, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        _check_device(self._state, a)
        d = numpy.diagonal(_unwrap(a), offset, axis1, axis2)
        if d.base is not None and d.base.flags.writeable:
            d.flags.writeable = True  # numpy's diagonal is read-only by caution; CuPy's is not
        return _wrap(d, self.ndarray)

    def asnumpy(self, a: Any) -> Any:
        if isinstance(a, self.ndarray):
            return numpy.array(a.view(numpy.ndarray), copy=True)
        return numpy.asarray(a)

    def argsort(self, a: Any, axis: int | None = -1, kind: str | None = None) -> Any:
        """CuPy's signature (no ``stable=``); always stable, as CuPy's radix sort."""
        return _wrap(numpy.argsort(_unwrap(a), axis=axis, kind="stable"), self.ndarray)

    def sort(self, a: Any, axis: int | None = -1, kind: str | None = None) -> Any:
        return _wrap(numpy.sort(_unwrap(a), axis=axis, kind="stable"), self.ndarray)

    def get_default_memory_pool(self) -> Any:
        return self._pool

    def get_default_pinned_memory_pool(self) -> Any:
        return self._pool


class _Flags:
    """CuPy's ``ndarray.flags``: three attributes, also readable as ``flags["C_CONTIGUOUS"]``."""

    def __init__(self, f: Any) -> None:
        self.c_contiguous, self.f_contiguous, self.owndata = (
            f.c_contiguous,
            f.f_contiguous,
            f.owndata,
        )

    def __getitem__(self, name: str) -> bool:
        return bool(getattr(self, name.lower()))


def _array_class(state: _State) -> type:
    class ndarray(numpy.ndarray):
        """A "device array": numpy data that remembers its device."""

        device_id: int

        def __array_finalize__(self, obj: Any) -> None:
            d = getattr(obj, "device_id", None)
            self.device_id = state.current if d is None else d

        def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
            _check_device(state, (inputs, kwargs))
            with numpy.errstate(all="ignore"):
                out = getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))
            return _wrap(out, type(self))

        def __array_function__(self, func: Any, types_: Any, args: Any, kwargs: Any) -> Any:
            _check_device(state, (args, kwargs))
            with numpy.errstate(all="ignore"):
                out = func(*_unwrap(args), **_unwrap(kwargs))
            return _wrap(out, type(self))

        @property
        def device(self) -> Any:  # type: ignore[override]
            return _Device(state, self.device_id)

        @property
        def flags(self) -> Any:  # type: ignore[override]
            # CuPy's Flags: c_contiguous, f_contiguous and owndata, no writeable (its arrays
            # are always writable)
            return _Flags(self.view(numpy.ndarray).flags)

        def get(self) -> Any:
            return numpy.array(self.view(numpy.ndarray), copy=True)

    return ndarray


# CuPy 14's ufunc methods (cupy/_core/_kernel.pyx): reduce and accumulate exist for add and
# multiply only; at for the ufuncs with a scatter operation
_REDUCING = frozenset({"add", "multiply"})
_SCATTERING = frozenset({"add", "subtract", "maximum", "minimum"})


class _UFunc:
    """A numpy ufunc with CuPy's methods: calls dispatch on the device arrays as numpy's do."""

    def __init__(self, ufunc: Any) -> None:
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ufunc(*args, **kwargs)

    def _supported(self, method: str, names: frozenset[str]) -> Any:
        if self.__name__ not in names:
            raise NotImplementedError(f"`cupy_{self.__name__}.{method}` is not supported yet")
        return getattr(self._ufunc, method)

    def reduce(self, *args: Any, **kwargs: Any) -> Any:
        return self._supported("reduce", _REDUCING)(*args, **kwargs)

    def accumulate(self, *args: Any, **kwargs: Any) -> Any:
        return self._supported("accumulate", _REDUCING)(*args, **kwargs)

    def at(self, *args: Any, **kwargs: Any) -> Any:
        return self._supported("at", _SCATTERING)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ufunc, name)


_TAKES_HOST = frozenset({"asarray", "array", "asanyarray", "ascontiguousarray"})


def _check_device(state: _State, values: Any) -> None:
    for a in _arrays(values, host=True):
        if not hasattr(a, "device_id"):
            raise TypeError(f"Unsupported type {type(a)}")  # CuPy's words for a host array
        if a.device_id != state.current:
            raise ValueError(
                f"The device where the array resides ({a.device_id}) is different from the "
                f"current device ({state.current}). Peer access is unavailable between these "
                "devices."
            )


def _arrays(x: Any, host: bool = False) -> Any:
    """The device arrays in ``x`` (nested lists, tuples, dicts); with ``host``, numpy's too."""
    if isinstance(x, numpy.ndarray) and (host or hasattr(x, "device_id")):
        yield x
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _arrays(v, host)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _arrays(v, host)


def _unwrap(x: Any) -> Any:
    if isinstance(x, numpy.ndarray) and hasattr(x, "device_id"):
        return x.view(numpy.ndarray)
    if type(x) is list:
        return [_unwrap(v) for v in x]
    if type(x) is tuple:
        return tuple(_unwrap(v) for v in x)
    if type(x) is dict:
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _wrap(x: Any, cls: type) -> Any:
    if isinstance(x, numpy.ndarray):
        return x if isinstance(x, cls) else x.view(cls)
    if isinstance(x, numpy.generic):  # CuPy gives 0-d arrays, never scalars
        return numpy.asarray(x).view(cls)
    if type(x) is tuple or type(x) is list:
        return type(x)(_wrap(v, cls) for v in x)
    return x


# --- cupy.cuda ------------------------------------------------------------------------------


class _Device:
    def __init__(self, state: _State, index: int | None = None) -> None:
        self._state = state
        self.id = state.current if index is None else int(index)
        self._previous: list[int] = []

    def __enter__(self) -> _Device:
        self._previous.append(self._state.current)
        self._state.current = self.id
        return self

    def __exit__(self, *exc: object) -> None:
        self._state.current = self._previous.pop()

    def use(self) -> None:
        self._state.current = self.id

    def synchronize(self) -> None:
        self._state.synchronized.append(self.id)

    @property
    def compute_capability(self) -> str:
        return "90"


def _cuda_module(state: _State) -> types.ModuleType:
    cuda = types.ModuleType("cupy.cuda")
    runtime = types.ModuleType("cupy.cuda.runtime")
    runtime.CUDARuntimeError = CUDARuntimeError  # type: ignore[attr-defined]

    def getDeviceCount() -> int:  # noqa: N802 - CuPy's names
        if state.count_error is not None:
            raise CUDARuntimeError(state.count_error)
        return state.devices

    def getDevice() -> int:  # noqa: N802
        return state.current

    def setDevice(i: int) -> None:  # noqa: N802
        if not 0 <= i < state.devices:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        state.current = i

    def getDeviceProperties(i: int) -> dict[str, Any]:  # noqa: N802
        return {"name": f"Stand-in GPU {i}".encode()}

    runtime.getDeviceCount = getDeviceCount  # type: ignore[attr-defined]
    runtime.getDevice = getDevice  # type: ignore[attr-defined]
    runtime.setDevice = setDevice  # type: ignore[attr-defined]
    runtime.getDeviceProperties = getDeviceProperties  # type: ignore[attr-defined]
    cuda.runtime = runtime  # type: ignore[attr-defined]
    cuda.Device = lambda index=None: _Device(state, index)  # type: ignore[attr-defined]

    class Stream:
        def __init__(
            self, null: bool = False, non_blocking: bool = False, ptds: bool = False,
            priority: int | None = None,
        ) -> None:  # fmt: skip
            self.ptr = 0 if null else next(state.ptrs)
            self.device_id = state.current
            self.priority = priority
            self.done = True
            self.waited: list[Any] = []

        def synchronize(self) -> None:
            state.synchronized.append(self.device_id)

        def wait_event(self, event: Any) -> None:
            self.waited.append(event)

        def record(self, event: Any = None) -> Any:
            e = event if event is not None else Event()
            e.record(self)
            return e

        def __enter__(self) -> Stream:
            state.streams.setdefault(state.current, []).append(self)
            return self

        def __exit__(self, *exc: object) -> None:
            state.streams[state.current].pop()

    null_streams: dict[int, Stream] = {}

    def get_current_stream() -> Stream:
        stack = state.streams.get(state.current)
        if stack:
            return stack[-1]
        s = null_streams.get(state.current)
        if s is None:
            s = null_streams[state.current] = Stream(null=True)
        return s

    class Event:
        def __init__(
            self, block: bool = False, disable_timing: bool = False, interprocess: bool = False
        ) -> None:
            self.disable_timing = disable_timing
            self.time: float | None = None
            self.stream: Any = None
            self.done = True

        def record(self, stream: Any = None) -> None:
            self.stream = stream if stream is not None else get_current_stream()
            self.time = time.perf_counter()

        def synchronize(self) -> None:
            pass

    def get_elapsed_time(start: Event, end: Event) -> float:
        if start.disable_timing or end.disable_timing or start.time is None or end.time is None:
            raise CUDARuntimeError("cudaErrorInvalidResourceHandle: invalid resource handle")
        return (end.time - start.time) * 1000.0

    cuda.Stream = Stream  # type: ignore[attr-defined]
    cuda.Event = Event  # type: ignore[attr-defined]
    cuda.get_current_stream = get_current_stream  # type: ignore[attr-defined]
    cuda.get_elapsed_time = get_elapsed_time  # type: ignore[attr-defined]
    cuda.get_allocator = lambda: state.allocator  # type: ignore[attr-defined]

    def set_allocator(fn: Any = None) -> None:
        state.allocator = fn

    cuda.set_allocator = set_allocator  # type: ignore[attr-defined]
    cuda.alloc = lambda size: state.allocator(size)  # type: ignore[attr-defined]
    return cuda


class _MemoryPointer:
    def __init__(self, state: _State, size: int) -> None:
        self.device_id = state.current
        self.size = size
        self.ptr = next(state.ptrs)


class _MemoryPool:
    """Bytes in use per device, rounded up to 512 as CuPy's pool does; freed blocks are kept
    (reserved) until ``free_all_blocks``."""

    def __init__(self, state: _State) -> None:
        self._state = state

    def malloc(self, size: int) -> _MemoryPointer:
        s = self._state
        size = -(-size // 512) * 512
        mem = _MemoryPointer(s, size)
        dev = mem.device_id
        s.used[dev] = s.used.get(dev, 0) + size
        reuse = min(size, s.cached.get(dev, 0))
        s.cached[dev] = s.cached.get(dev, 0) - reuse
        weakref.finalize(mem, self._free, dev, size)
        return mem

    def _free(self, dev: int, size: int) -> None:
        s = self._state
        s.used[dev] -= size
        s.cached[dev] = s.cached.get(dev, 0) + size

    def used_bytes(self) -> int:
        return self._state.used.get(self._state.current, 0)

    def total_bytes(self) -> int:
        s = self._state
        return s.used.get(s.current, 0) + s.cached.get(s.current, 0)

    def free_all_blocks(self) -> None:
        self._state.cached.clear()


# --- cupy.random ----------------------------------------------------------------------------


def _random_module(cp: Any) -> types.ModuleType:
    random = types.ModuleType("cupy.random")

    class Generator:
        """numpy's generator, giving device arrays; like CuPy's, it has no ``permutation``."""

        def __init__(self, seed: int) -> None:
            self._g = numpy.random.default_rng(seed)
            self.device_id = cp._state.current

        def _out(self, a: Any) -> Any:
            if cp._state.current != self.device_id:
                raise ValueError("a CuPy generator draws on the device it was made on")
            return _wrap(numpy.asarray(a), cp.ndarray)

        def random(self, size: Any = None, dtype: Any = numpy.float64) -> Any:
            return self._out(self._g.random(size, dtype=dtype))

        def standard_normal(self, size: Any = None, dtype: Any = numpy.float64) -> Any:
            return self._out(self._g.standard_normal(size, dtype=dtype))

        def standard_exponential(self, size: Any = None) -> Any:
            return self._out(self._g.standard_exponential(size))

        def poisson(self, lam: Any = 1.0, size: Any = None) -> Any:
            return self._out(self._g.poisson(_unwrap(lam), size))

        def integers(
            self,
            low: int,
            high: int | None = None,
            size: Any = None,
            dtype: Any = numpy.int64,
            endpoint: bool = False,
        ) -> Any:
            return self._out(self._g.integers(low, high, size=size, dtype=dtype, endpoint=endpoint))

    random.Generator = Generator  # type: ignore[attr-defined]
    random.default_rng = lambda seed=None: Generator(seed)  # type: ignore[attr-defined]
    return random
