"""Copies and conversions: _to_copy, clone, copy_, fill_, _local_scalar_dense (the
``pointwise`` family: each output element is the input element at its position).

Note [Copies across backends]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Moving data between backends goes through the host: the source backend's storage backend
gives a host (numpy) array and the target's builds its array from it
(``tensorplug._backends``), so any two array backends can exchange tensors without knowing
each other. The copies are the kit's only kernels that call operators (the other backend's),
so they are listed in :data:`DISPATCHING` (Note [Kernels that do not dispatch] in
_register.py).
"""

from __future__ import annotations

import functools
import math
from typing import Any

from ... import _backends
from ... import dtypes as _dt
from ..._opset.overlap import overlap_error, partially_overlap
from ...device import canonical
from ...device import device as Device
from ...tensor import Tensor
from .. import _standard
from .._kit import Kernel, Kernels, Kit, OpError, Scalar, bind, check_broadcast, check_fits, lowers
from .._strided import conform


def convert(kit: Kit, a: Any, src: _dt.dtype, d: _dt.dtype) -> Any:
    """``a`` (of dtype ``src``) as a new array of storage dtype ``d``."""
    if src.kind == "c" and d.kind != "c":
        a = kit.xp.real(a)  # PyTorch discards the imaginary part (with a warning)
    if src is d:
        return kit.copy(a)
    out = kit.cast(a, kit.storage[d])
    return kit.copy(out) if out is a else out


def to_copy(
    kit: Kit,
    self: Tensor,
    *,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
    non_blocking: bool = False,
    memory_format: Any = None,
) -> Tensor:
    d = self._dtype if dtype is None else dtype
    dev = self._device if device is None else canonical(device)
    if dev.type == kit.device_type:
        dev = kit.device(dev)  # "cuda" is the current device
    if dev == self._device:
        kit.check_dtype(d)
        r = convert(kit, self._data, self._dtype, d)
        if kit.strided or memory_format is not None:
            r = conform(kit, self._data, r, memory_format, "aten::_to_copy", self._device)
        return kit.new(r, d, self._device, kit.keyset)
    # another device: through the host (Note in the module docstring)
    target = _backends.for_device_type(dev.type)
    if d in kit.storage:
        arr = convert(kit, self._data, self._dtype, d) if d is not self._dtype else self._data
        host = kit.to_host(arr)
        if host is self._data:
            # the target may keep host memory (CPU does); order K keeps the layout, as
            # preserve_format asks (a strided target takes it: Meta, the CPU)
            keep = memory_format is None or memory_format == "preserve_format"
            host = host.copy(order="K") if keep else host.copy()
        out: Tensor = target.from_host(host, dev)
        return out
    host = kit.to_host(self._data)
    moved: Tensor = target.from_host(host.copy() if host is self._data else host, dev)
    from ...ops import ops

    res: Tensor = ops.aten._to_copy.default(moved, dtype=d)
    return res


def clone(kit: Kit, self: Tensor, *, memory_format: Any = None) -> Tensor:
    # preserve_format (the default) keeps the source's strides where they are dense, as
    # PyTorch's clone does; contiguous_format gives row-major data (what contiguous() asks
    # for), channels_last(_3d) NHWC order (Note [Strided layout] in tensorplug/_strides.py)
    a = self._data
    if memory_format == "contiguous_format":
        return kit.new(kit.contiguous_copy(a), self._dtype, self._device, kit.keyset)
    out = kit.copy(a)
    if kit.strided or memory_format is not None:
        out = conform(kit, a, out, memory_format, "aten::clone", self._device)
    return kit.new(out, self._dtype, self._device, kit.keyset)


def lower_clone(kit: Kit, self: Any, *, memory_format: Any = None) -> Any:
    """Note [Raw lowerings] in _kit.py: ``clone``'s copy, preserving the layout; its
    ``tp_unshared`` returns an array no one else holds itself where the copy would have its
    layout (dense: a permutation of a fresh array)."""
    if memory_format is not None:
        return None
    copy = kit.copy
    device = self.device
    if not kit.strided:
        clone_arrays = functools.partial(_copy_arrays, copy)
        clone_arrays.tp_unshared = _same_array  # type: ignore[attr-defined]
        return clone_arrays, kit.keyset

    def strided_clone_arrays(a: Any) -> Any:
        return conform(kit, a, copy(a), None, "aten::clone", device)

    def unshared(a: Any) -> Any:
        # row- or column-major with no dimension of size 0 or 1: its strides are the dense
        # ones the copy gets (dense_strides_like keeps them); else copy
        shape = a.shape
        if 1 not in shape and 0 not in shape:
            flags = getattr(a, "flags", None)
            if flags is not None and (flags.c_contiguous or flags.f_contiguous):
                return a
        return strided_clone_arrays(a)

    strided_clone_arrays.tp_unshared = unshared  # type: ignore[attr-defined]
    return strided_clone_arrays, kit.keyset


def _copy_arrays(copy: Any, a: Any) -> Any:
    return copy(a)


def _same_array(a: Any) -> Any:
    return a


def copy_(kit: Kit, self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    if self._device.type != kit.device_type:
        # We are the source's backend (it ranks higher): hand the data to self's backend.
        here = _backends.for_device_type(self._device.type).from_host(
            kit.to_host(src._data), self._device
        )
        from ...ops import ops

        ops.aten.copy_.default(self, here)
        return self
    v = src._data
    if src._device != self._device and src._device.type != kit.device_type:
        v = kit.from_host_array(
            _backends.for_device_type(src._device.type).to_host(v), self._device
        )
    elif src._device != self._device:
        v = kit.from_host_array(kit.to_host(v), self._device)
    base = getattr(v, "base", None)  # Note [Memory overlap] in _opset/overlap.py
    if base is not None and (base is self._data or base is getattr(self._data, "base", None)):
        if partially_overlap(self._data, v):
            raise overlap_error("aten::copy_")
    check_broadcast(tuple(self._data.shape), tuple(v.shape))
    if tuple(_standard.broadcast_shapes(kit.xp, tuple(self._data.shape), tuple(v.shape))) != tuple(
        self._data.shape
    ):
        raise OpError(
            f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
            f"{list(_standard.broadcast_shapes(kit.xp, tuple(self._data.shape), tuple(v.shape)))}"
        )
    if src._dtype.kind == "c" and self._dtype.kind != "c":
        v = kit.xp.real(v)
    if (
        math.prod(self._data.shape) == 0
    ):  # nothing to write (dask's a[...] = v refuses a 0-length dim)
        return self
    kit.assign(self._data, kit.cast(v, kit.storage[self._dtype]))
    return self


def fill_(kit: Kit, self: Tensor, value: Scalar) -> Tensor:
    d = self._dtype
    a = _fillable(self._data)
    if d.kind == "f" and d.itemsize == 2 and not isinstance(value, complex):
        with kit.quiet():  # PyTorch's float16 and bfloat16 fills round to inf, unchecked
            kit.assign(a, kit.scalar(value, d))
        return self
    check_fits(value, d)
    if d.kind in "ui" and isinstance(value, float):
        value = int(value)
    kit.assign(a, bool(value) if d.kind == "b" else kit.scalar(value, d))
    return self


def _fillable(a: Any) -> Any:
    """``a``, or where it is a read-only NumPy view of writable memory (an expanded tensor:
    ``broadcast_to``), a writable view of the same memory: PyTorch fills an expanded tensor
    (``v.expand(2, 3).fill_(0)``, ``zero_()``), every element of one location taking the one
    value, where it refuses other in-place writes to it."""
    flags = getattr(a, "flags", None)
    # CuPy's flags (and the stand-in's) have no writeable: their arrays always are
    if flags is None or getattr(flags, "writeable", True) or type(a).__module__ != "numpy":
        return a
    owner = a.base
    while owner is not None and not getattr(owner, "flags", flags).writeable:
        owner = getattr(owner, "base", None)
    if owner is None or type(owner) is not type(a) or not owner.flags.c_contiguous:
        return a
    offset = a.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    if offset < 0 or offset >= owner.nbytes:
        return a
    return type(a)(a.shape, a.dtype, buffer=owner, offset=offset, strides=a.strides)


def local_scalar_dense(kit: Kit, self: Tensor) -> Scalar:
    a = self._data
    n = int(math.prod(a.shape))
    if n != 1:
        raise OpError(f"a Tensor with {n} elements cannot be converted to Scalar")
    return kit.item(a, self._dtype)


KERNELS: dict[str, Kernel] = {
    "_to_copy": to_copy,
    "clone": clone,
    "copy_": copy_,
    "fill_.Scalar": fill_,
    "_local_scalar_dense": local_scalar_dense,
}

# the kernels that call operators (Note [Copies across backends])
DISPATCHING = frozenset(KERNELS)


def build(kit: Kit) -> Kernels:
    k = {name: bind(kit, fn) for name, fn in KERNELS.items()}
    lowers(kit, k["clone"], functools.partial(lower_clone, kit))
    return k
