"""Memory formats through the vision kernels: results laid out as channels_last (or
channels_last_3d) where PyTorch's CPU kernels give them so (internal, no kernels of its own).

Note [Channels last through the kernels]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
On a strided backend (Note [Strided layout] in tensorplug/_strides.py) PyTorch's CPU kernels of
convolution, pooling, batch and group norm, padding and upsampling return a result in the memory
format their input's strides suggest (``suggest_memory_format``), and their backward kernels
give the input's gradient in the input's format (upsampling's, which has no input, in the
incoming gradient's). :func:`keeps_format` wraps such a kernel: the kernel computes on the
strided array as it is (numpy reads any strides), and a 4-d (5-d) result is copied once into
channels_last (channels_last_3d) strides when the source suggests that format. A row-major
source costs one flag test. Which kernels do this is PyTorch's behaviour, checked against torch
2.13 (tests/nn/test_channels_last.py): not ``avg_pool3d``, ``_adaptive_avg_pool3d``,
``adaptive_max_pool3d``, ``pixel_shuffle``, the grid samplers or the fractional max pools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import _strides
from ...tensor import Tensor
from .._kit import Kit
from .._strided import element_strides, strided_array

__all__ = ["channels_last_of", "keeps_format", "keeps_format_bound", "relayout"]


def channels_last_of(kit: Kit, t: Any) -> str | None:
    """``channels_last`` / ``channels_last_3d`` when ``t``'s strides suggest it (and it is not
    also row-major), else None."""
    if not kit.strided or not isinstance(t, Tensor):
        return None
    a = t._data
    flags = getattr(a, "flags", None)
    if flags is None or flags.c_contiguous or a.ndim not in (4, 5):
        return None
    f = _strides.suggest_memory_format(tuple(a.shape), element_strides(a))
    return None if f == _strides.contiguous_format else f


def relayout(kit: Kit, r: Any, fmt: str | None) -> Any:
    """``r`` (a tensor, a tuple of them, or None) with each 4-d (``channels_last``) or 5-d
    (``channels_last_3d``) tensor copied into that format's strides where it is not already
    (``contiguous_format``: every tensor, into row-major strides)."""
    if fmt is None or r is None:
        return r
    if isinstance(r, tuple):
        return tuple(relayout(kit, x, fmt) for x in r)
    a = r._data
    if fmt == "contiguous_format":
        flags = getattr(a, "flags", None)
        if flags is None or flags.c_contiguous:
            return r
        return kit.new(kit.contiguous_copy(a), r._dtype, r._device, kit.keyset)
    nd = 4 if fmt == "channels_last" else 5
    if a.ndim != nd:
        return r
    shape = tuple(a.shape)
    strides = _strides.strides_for(shape, fmt)
    if _strides.is_contiguous_for(shape, element_strides(a), fmt):
        return r
    out = strided_array(kit, shape, strides, a.dtype, r._device)
    out[...] = a
    return kit.new(out, r._dtype, r._device, kit.keyset)


def keeps_format(
    fn: Callable[..., Any], source: int = 0, row_major: bool = False
) -> Callable[..., Any]:
    """Kernel ``fn(kit, ...)`` whose results take the memory format of its argument at
    position ``source`` (Note [Channels last through the kernels]); ``row_major``: results in
    row-major order whatever the input's (the kernels PyTorch does not keep the format in,
    whose strided arithmetic would follow the input's order)."""

    def kernel(kit: Kit, *args: Any, **kwargs: Any) -> Any:
        r = fn(kit, *args, **kwargs)
        if not kit.strided:
            return r
        if row_major:
            return relayout(kit, r, "contiguous_format")
        src = args[source] if len(args) > source else next(iter(kwargs.values()), None)
        return relayout(kit, r, channels_last_of(kit, src))

    kernel.__name__ = fn.__name__
    kernel.__qualname__ = fn.__qualname__
    kernel.__doc__ = fn.__doc__
    kernel.__module__ = fn.__module__
    return kernel


def keeps_format_bound(
    kit: Kit, kernel: Callable[..., Any], source: int = 0, row_major: bool = False
) -> Any:
    """:func:`keeps_format` for a kernel already bound to ``kit`` (a closure of a builder)."""
    if not kit.strided:
        return kernel

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        r = kernel(*args, **kwargs)
        if row_major:
            return relayout(kit, r, "contiguous_format")
        src = args[source] if len(args) > source else next(iter(kwargs.values()), None)
        return relayout(kit, r, channels_last_of(kit, src))

    wrapped.__name__ = getattr(kernel, "__name__", "kernel")
    wrapped.__qualname__ = getattr(kernel, "__qualname__", wrapped.__name__)
    wrapped.__doc__ = kernel.__doc__
    wrapped.__module__ = getattr(kernel, "__module__", __name__)
    return wrapped
