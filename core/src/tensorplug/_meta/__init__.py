"""The ``Meta`` backend, part of the core: tensors of a shape and a dtype, with no data.

``tp.empty(2, 3, device="meta")``, ``x.to("meta")`` and every standard operator on such tensors
compute their outputs' shapes and dtypes and raise the errors the CPU kernels raise, without
touching data (docs/meta.md). The kernels are the array kit's (``tensorplug.array_backend``),
the ones CPU runs, registered on ``Meta`` over the meta array namespace of ``_namespace``: so
the checks, the type promotion and the error messages are the same code, not a copy of it.
No array library is imported: the core has no dependency for it.

Kernels whose result depends on values (``nonzero``, ``masked_select``, ``unique``, ``item()``,
a boolean mask index, ...) refuse with :class:`MetaDataError` naming the op
(Note [Meta arrays] in ``_array``); reading a meta tensor's values (``tolist()``,
``numpy()``, ``.to("cpu")``) refuses with PyTorch's messages.

Usage::

    x = tp.empty(2, 3, device="meta")
    y = (x @ tp.empty(3, 4, device="meta")).relu()    # tensor(..., device='meta', size=(2, 4))
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .. import _backends
from .. import dtypes as _dt
from .._op_errors import OpError, torch_name
from ..device import canonical
from ..device import device as Device
from ..dispatcher._library import Library, is_no_dispatch, mark_no_dispatch
from ..tensor import Tensor, new_tensor
from ._array import MetaArray, MetaValueRead, xp

__all__ = ["MetaDataError", "MetaStorage", "install", "is_meta", "kernel_names", "kernels"]

KEY = "Meta"
_DEVICE = Device("meta")


class MetaDataError(NotImplementedError):
    """An operator whose result depends on tensor values was called with Meta tensors."""


def is_meta(t: Tensor) -> bool:
    return type(t._data) is MetaArray


# --- reading values: PyTorch's refusals ----------------------------------------------------------

NO_DATA = "Cannot copy out of meta tensor; no data!"
NO_ITEM = "Tensor.item() cannot be called on meta tensors"


def _refusal(name: str) -> MetaDataError:
    return MetaDataError(
        f"aten::{name}: its result depends on the values of its inputs, which Meta tensors do "
        "not have, so it has no Meta kernel (the Meta backend computes shapes and dtypes only). "
        "Run it on tensors with data (a cpu tensor), or give the shape it produces yourself "
        "(e.g. tp.empty(n, device='meta'))"
    )


# ops that always read values (PyTorch refuses them on meta too)
_READS_VALUES = frozenset(
    ("nonzero", "masked_select", "_unique2", "unique_dim", "unique_consecutive", "equal",
     "allclose", "bincount")
)  # fmt: skip


def _item(self: Tensor) -> Any:
    raise RuntimeError(NO_ITEM)


def _repeat_interleave(repeats: Tensor, *, output_size: int | None = None) -> Tensor:
    if output_size is None:
        raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
    if repeats._data.ndim != 1:
        raise RuntimeError(
            "aten::repeat_interleave.Tensor: repeat_interleave only accept 1D vector as repeat"
        )
    return _meta_tensor(MetaArray((int(output_size),), _dt.int64), _dt.int64)


def _meta_tensor(arr: MetaArray, d: _dt.dtype) -> Tensor:
    from .. import keys

    return new_tensor(arr, d, _DEVICE, keys.tensor_keyset(KEY))


def _refuse(name: str) -> Callable[..., Any]:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        raise _refusal(name)

    kernel.__name__ = f"meta_refuses_{name}"
    return kernel


def _median(self: Tensor) -> Tensor:
    """``median()``: the CPU kernel's checks; its NaN test reads a value."""
    d = self._dtype
    if self._data.size and d.kind in "bc":
        raise OpError(f"\"median_cpu\" not implemented for '{torch_name(d)}'")
    return _meta_tensor(MetaArray((), d), d)


def _ldl_factor_ex(
    self: Tensor, *, hermitian: bool = False, check_errors: bool = False
) -> tuple[Tensor, Tensor, Tensor]:
    """``linalg.ldl_factor_ex``: the CPU kernel calls LAPACK through scipy, which meta arrays
    do not reach; its shapes are those of the input."""
    shape = self._data.shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise OpError(
            "torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are "
            f"{shape[-2] if len(shape) > 1 else 1} by {shape[-1] if shape else 1} matrices"
        )
    d = self._dtype
    return (
        _meta_tensor(MetaArray(shape, d), d),
        _meta_tensor(MetaArray(shape[:-1], _dt.int32), _dt.int32),
        _meta_tensor(MetaArray(shape[:-2], _dt.int32), _dt.int32),
    )


def _ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    a, b = LD._data.shape, B._data.shape
    batch = MetaArray(a[:-2], LD._dtype) + MetaArray(b[:-2], LD._dtype)  # broadcast the batches
    return _meta_tensor(MetaArray(tuple(batch.shape) + tuple(b[-2:]), LD._dtype), LD._dtype)


# --- strides (Note [Meta strides] in _array.py) ------------------------------------------------


def _as_strided_array(a: MetaArray, shape: Any, strides: Any) -> MetaArray:
    """``kit.as_strided`` on Meta: numpy's ``lib.stride_tricks.as_strided`` (strides in
    bytes, from ``a``'s first element)."""
    item = a.dtype.itemsize
    return a._view(tuple(int(n) for n in shape), tuple(int(s) // item for s in strides), a.addr)


# --- issue 29's kernels that read values on CPU: shapes from their arguments ------------------


def _scatter_reduce(
    self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """``scatter_reduce``: ``self``'s shape and dtype (the CPU kernel's bounds check reads the
    index)."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin", "max", "min"):
        raise OpError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if index._dtype is not _dt.int64:
        raise OpError("scatter_reduce(): Expected dtype int64 for index")
    if src._dtype is not self._dtype:
        raise OpError("scatter_reduce(): Expected self.dtype to be equal to src.dtype")
    return _meta_tensor(MetaArray(tuple(self._data.shape), self._dtype), self._dtype)


def _scatter_reduce_(
    self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    _scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
    return self


def _histc(self: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:  # noqa: A002
    """``histc``: ``bins`` counts of the input's dtype (the CPU kernel reads its range)."""
    d = self._dtype
    if not d.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{torch_name(d)}'")
    if bins <= 0:
        raise OpError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    return _meta_tensor(MetaArray((bins,), d), d)


def _histogram(self: Tensor, bins: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``histogram``: the counts and the edges, of the input's dtype."""
    d = self._dtype
    n = bins if isinstance(bins, int) else int(bins._data.shape[0]) - 1
    if not d.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{torch_name(d)}'")
    return _meta_tensor(MetaArray((n,), d), d), _meta_tensor(MetaArray((n + 1,), d), d)


def _histogramdd_bin_edges(self: Tensor, bins: Any, **kwargs: Any) -> list[Tensor]:
    """``_histogramdd_bin_edges``: ``bins[d] + 1`` edges per dim (the CPU kernel reads the
    data's extent)."""
    d = self._dtype
    if not d.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{torch_name(d)}'")
    return [_meta_tensor(MetaArray((int(b) + 1,), d), d) for b in bins]


def _histogramdd_from_bin_tensors(self: Tensor, bins: Any, **kwargs: Any) -> Tensor:
    """``_histogramdd_from_bin_tensors``: one cell per pair of consecutive edges per dim."""
    d = self._dtype
    if not d.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{torch_name(d)}'")
    shape = tuple(int(b._data.shape[0]) - 1 for b in bins)
    return _meta_tensor(MetaArray(shape, d), d)


OVERRIDES: dict[str, Callable[..., Any]] = {
    "_local_scalar_dense": _item,
    "repeat_interleave.Tensor": _repeat_interleave,
    "median": _median,
    "linalg_ldl_factor_ex": _ldl_factor_ex,
    "linalg_ldl_solve": _ldl_solve,
    "scatter_reduce.two": _scatter_reduce,
    "scatter_reduce_.two": _scatter_reduce_,
    "histc": _histc,
    "histogram.bin_ct": _histogram,
    "histogram.bins_tensor": _histogram,
    "_histogramdd_bin_edges": _histogramdd_bin_edges,
    "_histogramdd_from_bin_tensors": _histogramdd_from_bin_tensors,
}


# --- the random state of the Meta backend: draws of a shape --------------------------------------


class _MetaRng:
    """``make_rng``'s state: every draw is a meta array of the asked shape and dtype."""

    def _draw(self, size: Any, dtype: Any) -> MetaArray:
        shape = () if size is None else (size,) if isinstance(size, int) else tuple(size)
        return MetaArray(tuple(int(n) for n in shape), _dt.float64 if dtype is None else dtype)

    def random(self, size: Any = None, dtype: Any = None, **kw: Any) -> MetaArray:
        return self._draw(size, dtype)

    standard_normal = standard_exponential = random

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = None,
                 endpoint: bool = False) -> MetaArray:  # fmt: skip
        return self._draw(size, _dt.int64 if dtype is None else dtype)

    def permutation(self, n: int) -> MetaArray:
        return MetaArray((int(n),), _dt.int64)

    def poisson(self, lam: Any, size: Any = None) -> MetaArray:
        return MetaArray(tuple(lam.shape), _dt.int64)


# --- storage ------------------------------------------------------------------------------------


class MetaStorage:
    """The storage backend of ``Meta`` (``tensorplug._backends.StorageBackend``): Python data
    and host arrays become meta tensors of their shape and dtype; nothing comes back."""

    key_name = KEY
    device_type = "meta"
    plugin = "tensorplug"
    strided = True  # Note [Meta strides] in _array.py

    def device(self, d: Device) -> Device:
        return _DEVICE

    def to_host(self, data: Any) -> Any:
        raise NotImplementedError(NO_DATA)

    def memory_layout(self, data: Any) -> tuple[int, tuple[int, ...], int] | None:
        """Where a meta array's elements would lie: its storage starts at address 0, as a
        meta tensor's ``data_ptr()`` does in PyTorch (Note [Meta strides])."""
        if type(data) is not MetaArray:
            return None
        return data.addr, data.strides, data.dtype.itemsize

    def host_dtype(self, host: Any) -> _dt.dtype:
        return _dt.from_name(str(host.dtype))

    def from_host(self, host: Any, device: Any) -> Tensor:
        d = self.host_dtype(host)
        return _meta_tensor(_from_host(host, device), d)

    def from_python(self, data: Any, dtype: _dt.dtype | None, device: Any) -> Tensor:
        """``tp.tensor(data, device="meta")``: the shape of ``data``, the dtype
        ``torch.tensor`` infers (floats in the default dtype, ints in int64)."""
        if isinstance(data, Tensor):
            shape, inferred = tuple(data.shape), data.dtype
        elif hasattr(data, "shape") and hasattr(data, "dtype"):  # a host array
            shape, inferred = tuple(int(n) for n in data.shape), self.host_dtype(data)
        else:
            arr = xp.asarray(data)
            shape = arr.shape
            kind = arr.dtype.kind
            inferred = (
                _dt.get_default_dtype() if kind == "f"
                else _dt.get_default_dtype().to_complex() if kind == "c"
                else arr.dtype
            )  # fmt: skip
        d = inferred if dtype is None else dtype
        canonical(device)
        return _meta_tensor(MetaArray(shape, d), d)


# --- registration ---------------------------------------------------------------------------------
#
# ``import tensorplug`` registers one lazy kernel per operator the array kit serves (the aten
# operators without a composite kernel: ``tests/meta`` checks that they are the kit's), and the
# first call of any builds them all: ``array_backend.register`` over the meta namespace, into
# :class:`_Kernels` instead of a library (Note [Lazy kernels] in dispatcher/_library.py). Import pays about
# 2 ms for the registrations, not the 15 ms of building and registering every kernel.


def _refusing(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with a read of a value (Note [Meta arrays]) turned into :class:`MetaDataError`
    naming the op."""
    if name in _READS_VALUES:
        return _refuse(name)

    def kernel(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MetaValueRead as e:
            raise _refusal(name) from e

    kernel.__name__ = getattr(fn, "__name__", name)
    kernel.__qualname__ = getattr(fn, "__qualname__", name)
    if is_no_dispatch(fn):
        mark_no_dispatch(kernel)
    return kernel


class _Kernels:
    """The registry ``array_backend.register`` fills when the Meta kernels are built: its
    library keeps the kernels by name; the storage is :class:`MetaStorage`, registered at
    import."""

    plugin_name = owner = "tensorplug"

    def __init__(self) -> None:
        self.kernels: dict[str, Callable[..., Any]] = {}

    def library(self, ns: str, kind: Any) -> _Kernels:
        return self

    def impl(self, name: str, fn: Callable[..., Any], key: str, **kwargs: Any) -> None:
        self.kernels[name] = _refusing(name, fn)

    def add_storage_backend(self, backend: Any) -> None:
        pass


_lock = threading.Lock()
_built: dict[str, Callable[..., Any]] = {}
_installed: Library | None = None


def kernels() -> dict[str, Callable[..., Any]]:
    """The Meta kernel of every operator the array kit serves, by name (``"add.Tensor"``),
    built on first use."""
    if not _built:
        with _lock:
            if not _built:
                from .. import array_backend
                from . import _namespace  # noqa: F401 - every family's functions, into xp
                from ._special import special

                into = _Kernels()
                backend = array_backend.register(
                    into,
                    KEY,
                    xp,
                    device_type="meta",
                    dtypes={d: d for d in _dt.all_dtypes()},
                    overrides=OVERRIDES,
                    to_host=_no_data,
                    from_host=_from_host,
                    make_rng=lambda seed: _MetaRng(),
                    special=special,
                )
                backend.kit.item = _fill_value  # type: ignore[method-assign]
                backend.kit.strided = True  # Note [Meta strides] in _array.py
                backend.kit.as_strided = _as_strided_array
                into.kernels["index_select"] = _index_select(into.kernels["index_select"])
                _built.update(into.kernels)
    return _built


def kernel_names() -> list[str]:
    """The operators that get a Meta kernel: the aten operators without a composite one."""
    from .. import dispatcher

    names = []
    for op in dispatcher.ops_in("aten"):
        if not any(op.has_kernel(c) for c in _COMPOSITES):
            names.append(op.name.removeprefix("aten::").removesuffix(".default"))
    return names


_COMPOSITES = (
    "CompositeImplicitAutograd", "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
)  # fmt: skip


def install() -> Library:
    """Register the Meta backend (once; ``import tensorplug`` does it)."""
    global _installed
    if _installed is None:
        lib = Library("aten", "IMPL", owner="tensorplug")
        for name in kernel_names():
            lib.impl(name, _builder(name), KEY, lazy=True)
        _backends.register(MetaStorage())
        _installed = lib
    return _installed


def _builder(name: str) -> Callable[[], Callable[..., Any]]:
    def build() -> Callable[..., Any]:
        return kernels()[name]

    build.__qualname__ = f"meta_kernel[{name}]"
    return build


def _index_select(kernel: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``index_select`` of a 0-dim tensor: the CPU kernel's checks, then its last one, that
    the one index is 0, skipped (it reads the index) as PyTorch's meta kernel skips it."""

    def index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:
        try:
            return kernel(self, dim, index)
        except MetaDataError:
            if self._data.ndim:
                raise
            return _meta_tensor(MetaArray((), self._dtype), self._dtype)

    return index_select


def _no_data(data: Any) -> Any:
    raise NotImplementedError(NO_DATA)


def _from_host(host: Any, device: Any) -> MetaArray:
    """A meta array of a host array's shape and dtype, laid out as ``.to("meta")`` lays a
    copy out (preserve_format: its strides where dense, else dense in their order)."""
    from .. import _strides

    shape = tuple(int(n) for n in host.shape)
    d = _dt.from_name(str(host.dtype))
    st = getattr(host, "strides", None)
    if st is None or not shape:
        return MetaArray(shape, d)
    item = int(host.itemsize)
    est = tuple(int(s) // item for s in st)
    if min(est, default=0) < 0 or _strides.is_contiguous_for(shape, est, "contiguous_format"):
        return MetaArray(shape, d)
    return MetaArray(shape, d, None, _strides.dense_strides_like(shape, est))


def _fill_value(arr: Any, d: _dt.dtype) -> Any:
    """``kit.item`` on Meta: the kernels that read a 0-dim tensor's value as a scalar
    (``masked_fill.Tensor``, ``index_fill.int_Tensor``: a fill value; ``item()`` has a Meta
    kernel of its own) get a zero of its kind, which fits every dtype: the value only decides
    elements, which Meta tensors do not have."""
    return {"b": False, "u": 0, "i": 0, "f": 0.0}.get(d.kind, 0j)
