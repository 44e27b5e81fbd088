"""The kit: what every kernel of one array backend needs, computed once at registration.

A :class:`Kit` binds the generic kernels to one array namespace ``xp`` and one backend key:
the dtype maps (tensorplug dtype -> storage dtype, compute dtype, accumulation dtype), the
key set of the tensors it makes, the array type, and the helpers that cast, wrap and promote.
Kernels are closures over a kit, or module-level functions that take the kit first and are
bound to it by :func:`bind`, so the per-call cost is attribute reads, never a dict built or a
dtype looked up by name. A module-level kernel can be imported, read and called on its own
(``_factories.clone(kit, t)``), and keeps its name in ``explain`` and in errors.

Note [Storage and compute dtypes]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Each dtype a backend supports has a *storage* dtype (what ``Tensor._data`` holds) and a
*compute* dtype (what arithmetic runs in). They are the same except where the array library
stores a type it cannot compute well in: numpy stores bfloat16 as ``ml_dtypes.bfloat16`` and
computes in float32, then rounds the result back. Reductions also have an *accumulation* dtype
(float32 for float16 and bfloat16, as PyTorch accumulates half precision in float32). A kernel
casts inputs to the compute dtype of the result dtype (that PyTorch's promotion rules give,
``tensorplug.dtypes.result_type``) and stores the result in its storage dtype, so every output's
tensorplug dtype is exactly PyTorch's.

Note [Booleans in the standard]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The array API standard orders, adds and multiplies only numeric arrays; numpy also does it for
bools, and PyTorch defines it (``True + True`` is ``True``, the sum of a bool tensor counts).
Where the namespace refuses (array_api_strict), bool computes in uint8 (Note [Storage and
compute dtypes]): results are stored back as bool, where nonzero is True. Masks and ``where``
conditions take bool arrays again (:meth:`Kit.condition`).

Note [Optional extensions]
~~~~~~~~~~~~~~~~~~~~~~~~~~
The kernels call only functions and array methods of the array API standard (2023.12), with
Python scalar operands of elementwise functions as 2024.12 allows. Where a namespace offers
more, the kit uses it, each time with a fallback written in standard functions, found once at
registration (:func:`optional`, ``getattr``): ``a.astype`` (numpy, cupy: no Python layer),
ufunc ``out=`` (in-place fast paths), ufunc ``.reduce`` (Note [Reduction fast path] in
_reductions/_common.py), ``.accumulate`` (cummax), ``add.at`` and integer-array ``__setitem__``
(index_put, scatter), ``fmax``/``fmin``, ``fmod``, ``exp2``, ``lexsort``, ``errstate``,
``take_along_axis`` and ``cumulative_prod`` (2024.12). numpy and cupy take the fast side;
array_api_strict the standard one, and ``tests`` run the OpInfo kit on both.

Note [Value-dependent shapes]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A tensor's shape is always known (PyTorch's too: ``nonzero`` synchronizes with the GPU). A lazy
library leaves the length of a value-dependent result unknown (dask: ``nan``) until computed, so
the kernels of value-dependent shapes (``nonzero``, mask indexing, ``masked_select``,
``unique``) pass their arrays through :meth:`Kit.known`, which computes the sizes (dask's
``compute_chunk_sizes``: the values of the result's inputs, once) and costs nothing where the
sizes are known.

Note [Lazy backends read no values]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A lazy library's arrays (dask's) are graphs: reading a value on the host computes everything
it depends on. ``kit.lazy`` (``register(..., lazy=)``, detected by dask's collection protocol
``__dask_graph__``) tells the kernels so: the checks that read index values to raise PyTorch's
error early (out-of-range indices of indexing, index_put, scatter and gather; the class targets
of the losses) are skipped there, and an index out of range raises when the result is computed
(IndexError from the library); the numpy fast paths that branch on a value (the cross-entropy
and nll_loss backward ones) take the general path. What still reads a value is a shape that
depends on values (Note [Value-dependent shapes]), the number of rounds of an accumulating
scatter with repeated indices (``_standard.scatter``), and the ops docs/dask.md lists.

Note [Quiet arithmetic]
~~~~~~~~~~~~~~~~~~~~~~~
PyTorch gives inf and nan silently, where numpy warns ("divide by zero encountered"). Kernels
whose arithmetic can raise those flags run it between ``token = kit.hush()`` and
``kit.unhush(token)`` (or in ``with kit.quiet():``). ``np.errstate(all="ignore")`` does this at
about 0.9 us per use, which is most of what a small kernel costs; numpy >= 2 keeps the error
state in a context variable, so for numpy the kit sets that variable itself (two C calls, about
0.2 us), to an error state made once per state it replaces (so a user's ``np.setbufsize`` or
``np.seterrcall`` still applies inside kernels). Other array libraries use their ``errstate``
when they have one. Kernels that can prove no flag arises (a division by a finite scalar of
magnitude at least 1, a shifted exponent <= 0) skip it.

Note [Raw lowerings]
~~~~~~~~~~~~~~~~~~~~
A kernel may carry ``tp_lower`` (set by :func:`lowers`): a function of the kernel's arguments
in which each tensor is replaced by a description of it (an object with ``shape``, ``dtype``
and ``device``: what a tracer knows of a value), that returns ``(fn, keyset)`` or None. ``fn``
takes the arrays of the tensor arguments, positionally in argument order (a list of tensors
as a list of arrays), and computes what the kernel computes for any tensors so described,
bit for bit: it returns the array of the kernel's result (the kernel's tensor is
``new_tensor(array, dtype, device, keyset)`` with the result's dtype and device), a view of
its input's array for a view kernel (the caller keeps such a view for arrays only: a tensor
view needs the kernel, which records its base), or None for a kernel that writes its
arguments in place (``fn`` writes their arrays; the version counters are the caller's).
Where the result depends on more than the description (the values of a target, an array the
library refuses to write), ``fn`` calls the kernel itself on tensors made of the arrays, so it
raises and falls back as the kernel does. None means no such function for these arguments
(another dtype, an argument the fast path does not take): the caller calls the kernel. A copy's
``fn`` may carry ``tp_unshared``: the same function for a caller that proves no one else holds
or reads its argument's array, which returns that array itself where the copy would equal it
in values and layout (the gradient a ``.grad`` keeps: a clone of a transposed matrix product).

``tp.compile``'s lowered form (the tracer plugin's codegen.py) calls ``fn`` with the tensors'
arrays, so a compiled step pays neither the checks the trace has already proven nor a tensor
per intermediate value. A lowering sits beside its kernel's fast path and calls the same array
functions, so the two do not drift apart. Lazy backends and backends with several devices
(their kernels hold a device guard) have none.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

from .. import dtypes as _dt
from .. import keys as _keys
from .._op_errors import OpError, OpTypeError, cpp_name, fmt_shape, infer_size, torch_name
from ..device import device as Device
from ..tensor import Tensor, new_tensor
from . import _standard
from ._checks import (  # re-exported (__all__): the kernel modules import them from here
    _CONVERTED,
    Kernel,
    Kernels,
    Scalar,
    check_broadcast,
    check_fits,
    check_sizes,
    convert_error,
    full_index,
    guard,
    guarded,
    optional,
    scalar_dtype,
    wrap_dim,
    wrap_dims,
    wrap_int,
)

__all__ = [
    "Kit",
    "bind",
    "Kernel",
    "Kernels",
    "OpError",
    "OpTypeError",
    "Scalar",
    "_CONVERTED",
    "check_broadcast",
    "check_fits",
    "check_sizes",
    "convert_error",
    "cpp_name",
    "fmt_shape",
    "full_index",
    "guard",
    "guarded",
    "infer_size",
    "lowers",
    "optional",
    "scalar_dtype",
    "torch_name",
    "wrap_dim",
    "wrap_dims",
    "wrap_int",
]

# --- the kit --------------------------------------------------------------------------------


class Kit:
    """One backend's view of the world: ``xp``, dtype maps, and the tensor constructor."""

    def __init__(
        self,
        xp: Any,
        key_name: str,
        device_type: str,
        storage: dict[_dt.dtype, Any],
        compute: dict[_dt.dtype, Any],
        *,
        device_context: Callable[[Device], contextlib.AbstractContextManager[Any]] | None = None,
        lazy: bool | None = None,
    ) -> None:
        self.xp = xp
        self.key_name = key_name
        self.device_type = device_type
        self.keyset = _keys.tensor_keyset(key_name)
        probe = xp.asarray(0)
        self.array_type: type[Any] = type(probe)
        # Note [Lazy backends read no values]: arrays that are graphs until computed (dask's
        # collection protocol, unless the backend says)
        self.lazy: bool = hasattr(probe, "__dask_graph__") if lazy is None else lazy
        # Note [Optional extensions]: numpy's and cupy's ``a.astype(d)`` skips the Python
        # layer of the standard's ``xp.astype``
        self.astype: Callable[[Any, Any], Any] = (
            _astype_method if hasattr(probe, "astype") else xp.astype
        )
        self.device_context = device_context
        # storage and compute dtypes as the array library reports them (``arr.dtype``), so
        # kernels can compare with ``is`` (Note [Storage and compute dtypes])
        self.storage: dict[_dt.dtype, Any] = {
            d: xp.empty(0, dtype=x).dtype for d, x in storage.items()
        }
        compute = dict(compute)
        if _dt.bool in storage and _dt.bool not in compute and _dt.uint8 in storage:
            if not _bool_arithmetic(xp, storage[_dt.bool]):
                compute[_dt.bool] = storage[_dt.uint8]  # Note [Booleans in the standard]
        self.compute: dict[_dt.dtype, Any] = {
            d: xp.empty(0, dtype=compute.get(d, x)).dtype for d, x in storage.items()
        }
        self.accumulate: dict[_dt.dtype, Any] = dict(self.compute)
        if _dt.float32 in self.storage:
            for d in (_dt.float16, _dt.bfloat16):
                if d in self.storage:
                    self.accumulate[d] = self.storage[_dt.float32]
        # whether bools compute as bools (else in uint8: Note [Booleans in the standard])
        self.bools_compute = self.compute.get(_dt.bool) == self.storage.get(_dt.bool)
        self.writes_out = _writes_out(xp)  # Note [Optional extensions]
        self.fancy_setitem = getattr(xp.add, "at", None) is not None
        self.native = frozenset(d for d in self.storage if self.storage[d] == self.compute[d])
        self.from_xp: dict[Any, _dt.dtype] = {}
        for d, x in self.storage.items():
            self.from_xp.setdefault(x, d)
        self.dtypes = frozenset(self.storage)
        # array dtype -> the kind of its tensorplug dtype ("b", "u", "i", "f", "c"): the
        # standard's dtypes have no ``.kind`` (Note [Optional extensions])
        self.kinds: dict[Any, str] = {}
        for d in self.storage:
            self.kinds.setdefault(self.storage[d], d.kind)
            self.kinds.setdefault(self.compute[d], d.kind)
        self.new = new_tensor  # Note [Cheap tensors] in tensor.py
        # Note [Quiet arithmetic]
        self.hush: Callable[[], Any]
        self.unhush: Callable[[Any], Any]
        self.hush, self.unhush = _quiet_pair(xp)
        self._devices: dict[Device, Device] = {}
        # Note [Devices by identity]: hashing a device runs Python (its __hash__, about 0.15
        # us), so factories find a device object they saw before by its id; each entry holds
        # the object, so its id is not reused while the entry lives
        self._device_ids: dict[int, tuple[Any, Device]] = {}
        self._rows: tuple[Any, Any] = (None, None)  # row_numbers: ((n, device), arange(n))
        # set by register(): host transfers and the random state (see its docstring)
        self.to_host: Callable[[Any], Any] = _unset
        self.from_host_array: Callable[[Any, Device], Any] = _unset
        self.make_rng: Callable[[int], Any] = _unset
        self.from_rng: Callable[[Any, Device], Any] = _unset
        self.rng_dtype: Callable[[_dt.dtype], Any] = self.storage.__getitem__
        # the index of the current device, for devices named without one ("cuda")
        self.current_device: Callable[[], int] | None = None
        # the special-function namespace (scipy.special, cupyx.scipy.special) or None: Note
        # [Special-function namespace] in _special.py; set by register(special=...)
        self.special: Any = None
        # the FFT namespace when not xp.fft (Note [FFT kernels] in _fft.py); register(fft=...)
        self.fft: Any = None
        # Note [Strided layout] in tensorplug/_strides.py; set by register(strided=...):
        # whether the arrays are strided, and the library's as_strided(a, shape, strides)
        self.strided = False
        self.as_strided: Callable[..., Any] | None = None

    def device(self, d: Device) -> Device:
        """One device object per device, so kernels compare devices with ``is``; a device
        named without an index is the current one when the backend has several."""
        got = self._devices.get(d)
        if got is None:
            if d.type != self.device_type:
                raise OpError(
                    f"the {self.key_name} backend cannot create tensors on device {d}; its "
                    f"device type is '{self.device_type}'"
                )
            if d.index is None and self.current_device is not None:
                return self.device(Device(d.type, self.current_device()))
            got = self._devices[d] = d
        return got

    def row_numbers(self, n: int, device: Device) -> Any:
        """``arange(n)`` (int64) on ``device``, kept for the last batch size and device asked:
        the loss kernels pick ``x[rows, target]`` on every call. Read only."""
        seen, rows = self._rows
        if seen != (n, device):
            with self.on(device):
                rows = self.xp.arange(n, dtype=self.storage[_dt.int64])
            self._rows = ((n, device), rows)  # one tuple, swapped whole (threads)
        return rows

    def interned_device(self, d: Any) -> Device | None:
        """The device object for ``d`` if :meth:`device` has made it; None otherwise. Looked
        up by identity first (Note [Devices by identity])."""
        got = self._device_ids.get(id(d))
        if got is not None and got[0] is d:
            return got[1]
        dev = self._devices.get(d)
        if dev is not None:
            if len(self._device_ids) > 64:  # devices made per call: keep the memo small
                self._device_ids.clear()
            self._device_ids[id(d)] = (d, dev)
        return dev

    # --- dtypes ------------------------------------------------------------------------

    def check_dtype(self, d: _dt.dtype) -> None:
        if d not in self.storage:
            raise OpError(
                f"dtype {d.name} is not supported by the {self.key_name} backend; it supports "
                f"{', '.join(x.name for x in _dt.all_dtypes() if x in self.storage)}"
            )

    def kind(self, arr: Any) -> str:
        """The kind of ``arr``'s dtype as tensorplug spells it: "b", "u", "i", "f" or "c"."""
        k = self.kinds.get(arr.dtype)
        if k is None:
            isdtype = self.xp.isdtype
            dt = arr.dtype
            found = next((c for c, name in _KINDS if isdtype(dt, name)), None)
            if found is None:
                raise OpError(f"array dtype {dt} has no kind on the {self.key_name} backend")
            self.kinds[dt] = k = found
        return k

    def dtype_of(self, arr: Any) -> _dt.dtype:
        d = self.from_xp.get(arr.dtype)
        if d is None:
            raise OpError(
                f"array dtype {arr.dtype} has no tensorplug dtype on the {self.key_name} backend"
            )
        return d

    # --- arrays ------------------------------------------------------------------------

    def cast(self, arr: Any, xd: Any) -> Any:
        """``arr`` as array dtype ``xd``; no copy when it already is."""
        if arr.dtype is xd or arr.dtype == xd:
            return arr
        return self.astype(arr, xd)

    def copy(self, arr: Any) -> Any:
        """A new array equal to ``arr`` (in its memory order, where the library has one)."""
        return self.xp.asarray(arr, copy=True)

    def contiguous_copy(self, arr: Any) -> Any:
        """A new array equal to ``arr`` in row-major (C) order: numpy's and CuPy's ``asarray``
        keep the source's order, their ``copy()`` gives C order; a library that shows no
        memory order (no ``flags``) gets a copy of its flattened array, which is row-major."""
        flags = getattr(arr, "flags", None)
        if flags is not None and not flags["C_CONTIGUOUS"] and hasattr(arr, "copy"):
            return arr.copy()
        if flags is None and arr.ndim > 1:
            # a library that keeps an order it does not show (array_api_strict over numpy):
            # flattening copies in row-major order where the order is another
            xp = self.xp
            return xp.reshape(xp.asarray(xp.reshape(arr, (-1,)), copy=True), tuple(arr.shape))
        return self.xp.asarray(arr, copy=True)

    def as_compute(self, t: Tensor, d: _dt.dtype) -> Any:
        """The data of ``t`` in the compute dtype of ``d``."""
        return self.cast(t._data, self.compute[d])

    def acc(self, t: Tensor) -> Any:
        """The data of ``t`` in its accumulation dtype (reductions)."""
        return self.cast(t._data, self.accumulate[t._dtype])

    def wrap(self, r: Any, d: _dt.dtype, device: Device) -> Tensor:
        """A new tensor of dtype ``d`` holding result ``r`` (cast to the storage dtype)."""
        if type(r) is not self.array_type:
            r = self.xp.asarray(r)
        want = self.storage[d]
        if r.dtype is not want and r.dtype != want:
            r = self.astype(r, want)
        return self.new(r, d, device, self.keyset)

    def scalar(self, value: Scalar, d: _dt.dtype) -> Any:
        """A Python scalar as an operand that keeps the compute dtype of ``d``.

        Python scalars are weak in numpy >= 2 and the array API, so they can be passed as
        they are, except integers outside the dtype's range (numpy raises; PyTorch wraps).
        """
        if d.kind in "ui":
            if isinstance(value, bool):
                return int(value)
            if isinstance(value, int):
                return wrap_int(value, d)
            return self.astype(self.xp.asarray(value), self.compute[d])
        if d.kind == "b":
            # bool computed in uint8 takes 0 or 1 (Note [Booleans in the standard])
            return bool(value) if self.bools_compute else int(bool(value))
        if d.kind == "f" and isinstance(value, complex):
            return value.real
        return value

    def fill_array(
        self, shape: tuple[int, ...], value: Scalar, d: _dt.dtype, device: Device
    ) -> Any:
        with self.on(device):
            if d.kind in "ui" and isinstance(value, float):
                value = int(value)  # truncation toward zero, as a C cast
            return self.xp.full(shape, self.scalar(value, d), dtype=self.storage[d])

    def getitem(self, a: Any, idx: tuple[Any, ...]) -> Any:
        """``a[idx]`` as numpy reads it: the array's own indexing where it reads so (numpy,
        cupy), else :func:`_standard.getitem` (Note [Optional extensions])."""
        if self.fancy_setitem:
            return a[idx]
        return _standard.getitem(self, a, idx)

    def put(self, a: Any, idx: tuple[Any, ...], v: Any, *, accumulate: bool = False) -> None:
        """``a[idx] = v`` (with ``accumulate``, repeated indices adding up, as numpy's
        ``add.at``): numpy's and cupy's own, else :func:`_standard.put`."""
        if not self.fancy_setitem:
            _standard.put(self, a, idx, v, accumulate=accumulate)
        elif accumulate:
            self.xp.add.at(a, idx, v)
        else:
            a[idx] = v

    def assign(self, a: Any, v: Any) -> None:
        """``a[...] = v``: every element of ``a`` written in place; nothing to write into an
        empty ``a`` (dask refuses ``a[...] = v`` with a 0-length dim, whatever ``v``)."""
        if 0 not in a.shape:
            a[...] = v

    def nonzero(self, a: Any) -> tuple[Any, ...]:
        """``xp.nonzero(a)`` with known lengths (Note [Value-dependent shapes])."""
        return tuple(self.known(i) for i in self.xp.nonzero(a))

    def known(self, a: Any) -> Any:
        """``a`` with every size known (Note [Value-dependent shapes]): a lazy library's
        array of a value-dependent shape has nan sizes until computed."""
        shape = a.shape
        if any(n is None or n != n for n in shape):
            compute_sizes = getattr(a, "compute_chunk_sizes", None)
            if compute_sizes is None:
                raise NotImplementedError(
                    f"the size of this result depends on values that the {self.key_name} "
                    "backend's arrays do not know before they are computed, and its array "
                    "has no compute_chunk_sizes()"
                )
            a = compute_sizes()
        return a

    def take_along_axis(self, a: Any, idx: Any, axis: int) -> Any:
        """``take_along_axis`` (array API 2024.12) where ``xp`` has it, else by ``take``."""
        f = getattr(self.xp, "take_along_axis", None)
        if f is not None:
            return f(a, idx, axis=axis)
        return _standard.take_along_axis(self, a, idx, axis)

    def cumulative_prod(self, a: Any, *, axis: int) -> Any:
        """``cumulative_prod`` (array API 2024.12) for namespaces without it."""
        return _standard.running(self, self.xp.multiply, a, axis=axis)

    def on(self, device: Device) -> contextlib.AbstractContextManager[Any]:
        """The context that makes ``device`` current for new arrays (a no-op on CPU)."""
        if self.device_context is None:
            return contextlib.nullcontext()
        return self.device_context(device)

    def quiet(self) -> contextlib.AbstractContextManager[Any]:
        """Silence floating-point warnings (Note [Quiet arithmetic])."""
        return _Quiet(self.hush, self.unhush)

    def item(self, arr: Any, d: _dt.dtype) -> Scalar:
        """A one-element array as a Python scalar of the kind of ``d``."""
        v = self.xp.reshape(arr, ()) if hasattr(arr, "shape") else arr
        if self.lazy:  # computed by the backend's own transfer (its scheduler, its progress)
            v = self.to_host(v)
        if d.kind == "b":
            return bool(v)
        if d.kind in "ui":
            return int(v)
        if d.kind == "f":
            return float(v)
        return complex(v)

    def result_dtype(self, *operands: Any) -> _dt.dtype:
        d = _dt.result_type(*operands)
        if d not in self.storage:
            self.check_dtype(d)
        return d

    def same_device(self, a: Tensor, b: Tensor) -> None:
        """PyTorch's device check; CPU 0-dim tensors are allowed with any device."""
        da, db = a._device, b._device
        if da is db or da == db:
            return
        if (db.type == "cpu" and not b._data.ndim) or (da.type == "cpu" and not a._data.ndim):
            return
        raise OpError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{da} and {db}!"
        )

    def truth(self, a: Any) -> Any:
        """``a != 0`` as a bool array (a bool array as it is: the standard compares bools
        only with bools)."""
        return a if a.dtype == self.storage.get(_dt.bool) else a != 0

    def condition(self, t: Tensor, device: Device) -> Any:
        """A bool tensor's data as a bool array for ``where`` and masks (its compute dtype may
        be uint8: Note [Booleans in the standard])."""
        return self.cast(self.operand(t, _dt.bool, device), self.storage[_dt.bool])

    def operand(self, t: Tensor, d: _dt.dtype, device: Device) -> Any:
        """``t``'s data in the compute dtype of ``d``, moved here if it is a CPU 0-dim tensor."""
        if t._device is not device and t._device != device:
            if t._data.ndim == 0 and t._device.type == "cpu":
                return self.scalar(_host_item(t), d)
            raise OpError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{device} and {t._device}!"
            )
        return self.cast(t._data, self.compute[d])


_KINDS = (
    ("b", "bool"),
    ("u", "unsigned integer"),
    ("i", "signed integer"),
    ("f", "real floating"),
    ("c", "complex floating"),
)


class _Quiet:
    """``with kit.quiet():`` over the kit's hush/unhush (Note [Quiet arithmetic])."""

    __slots__ = ("hush", "unhush", "token")

    def __init__(self, hush: Callable[[], Any], unhush: Callable[[Any], Any]) -> None:
        self.hush = hush
        self.unhush = unhush

    def __enter__(self) -> None:
        self.token = self.hush()

    def __exit__(self, *exc: object) -> None:
        self.unhush(self.token)


def _quiet_pair(xp: Any) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    """``(hush, unhush)``: silence floating-point warnings from ``hush()`` to ``unhush(token)``."""
    if getattr(xp, "__name__", "") == "numpy":
        try:  # numpy >= 2: the error state is a context variable (Note [Quiet arithmetic])
            from numpy._core.umath import _extobj_contextvar, _make_extobj
        except ImportError:
            pass
        else:
            get, put = _extobj_contextvar.get, _extobj_contextvar.set
            # (state replaced, its silenced copy): one tuple, swapped whole (thread-safe)
            last: list[tuple[Any, Any]] = [(None, None)]

            def hush() -> Any:
                cur = get()
                seen, quiet = last[0]
                if cur is not seen:
                    quiet = _make_extobj(all="ignore")  # from ``cur``: keeps bufsize, call
                    last[0] = (cur, quiet)
                return put(quiet)

            return hush, _extobj_contextvar.reset
    errstate = getattr(xp, "errstate", None)
    if errstate is None:
        return (lambda: None), (lambda token: None)

    def hush_cm() -> Any:
        cm = errstate(all="ignore")
        cm.__enter__()
        return cm

    def unhush_cm(cm: Any) -> None:
        cm.__exit__(None, None, None)

    return hush_cm, unhush_cm


def _bool_arithmetic(xp: Any, b: Any) -> bool:
    """Whether ``xp`` adds, multiplies and orders bool arrays (numpy does; the standard
    does not promise it: Note [Booleans in the standard])."""
    t = xp.asarray(True, dtype=b)
    try:
        xp.add(t, t)
        xp.multiply(t, t)
        xp.maximum(t, t)
        xp.argsort(xp.reshape(t, (1,)))
    except (TypeError, ValueError):
        return False
    return True


def _astype_method(a: Any, d: Any) -> Any:
    return a.astype(d)  # numpy's scalars (0-d results) have it too


def _writes_out(xp: Any) -> bool:
    """Whether ``xp``'s elementwise functions write into ``out=`` (numpy's and cupy's ufuncs)."""
    a = xp.zeros((1,))
    try:
        return xp.add(a, a, out=a) is a
    except TypeError:
        return False


def _unset(*args: Any) -> Any:
    raise OpError("this kit was not set up by tensorplug.array_backend.register")


def _host_item(t: Tensor) -> Scalar:
    from .. import _backends

    host = _backends.for_key(_keys.get(_backend_key(t)).name).to_host(t._data)
    v = host.reshape(()).item()
    if t._dtype.kind == "f":
        return float(v)
    r: Scalar = v
    return r


def _backend_key(t: Tensor) -> str:
    for k in _keys.backends():
        if t._tp_keyset & (1 << k.bit):
            return k.name
    raise OpError(f"tensor on {t._device} carries no backend key")


def lowers(kit: Kit, kernel: Kernel, lower: Callable[..., Any]) -> Kernel:
    """``kernel`` with ``lower`` as its raw lowering where ``kit``'s backend has them (Note
    [Raw lowerings])."""
    if not kit.lazy and kit.device_context is None:
        kernel.tp_lower = lower  # type: ignore[attr-defined]
    return kernel


def bind(kit: Kit, fn: Callable[..., Any]) -> Kernel:
    """The kernel of one backend made from a module-level kernel ``fn(kit, ...)``: ``fn`` with
    ``kit`` bound first (a C-level ``functools.partial``), under ``fn``'s name and module."""
    kernel: Any = functools.partial(fn, kit)
    kernel.__module__ = fn.__module__
    kernel.__name__ = fn.__name__
    kernel.__qualname__ = fn.__qualname__
    kernel.__doc__ = fn.__doc__
    return kernel  # type: ignore[no-any-return]
