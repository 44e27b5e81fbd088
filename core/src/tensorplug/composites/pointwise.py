"""The ``pointwise`` family of the composites: clip, clamp under numpy's name, as in PyTorch
(grad_fn ClampBackward1, clamp's messages), and the copies contiguous and zero_."""

from __future__ import annotations

from typing import Any

from .. import _strides
from .. import storage as _storage
from ..ops import ops
from ..tensor import is_wrapper

aten = ops.aten


def clip(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp.default(self, min, max)


def clip_tensor(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp.Tensor(self, min, max)


def clip_(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp_.default(self, min, max)


def clip_tensor_(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp_.Tensor(self, min, max)


# --- copies ---------------------------------------------------------------------------------


def contiguous(self: Any, *, memory_format: Any = "contiguous_format") -> Any:
    """``self`` where it is already laid out as ``memory_format`` asks, else a copy that is
    (Note [Strided layout] in _strides.py); a backend without strides has row-major order."""
    fmt = _strides.check_format(memory_format, "contiguous")
    if not _storage.is_strided(self) and not is_wrapper(self):
        # its order is the array library's own business: a row-major copy is what a view
        # needs (is_contiguous() answers True there, as for PyTorch's XLA tensors)
        if fmt != "contiguous_format":
            _strides.strides_for(tuple(self.shape), fmt)  # the rank error
        return aten.clone.default(self, memory_format="contiguous_format")
    if self.is_contiguous(memory_format=fmt):
        return self
    if fmt == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return aten.clone.default(self, memory_format=fmt)


def zero_(self: Any) -> Any:
    return aten.fill_.Scalar(self, 0)


# --- complex numbers ---------------------------------------------------------------------------


def conj(self: Any) -> Any:
    """The complex conjugate: ``self`` itself for a real tensor (as PyTorch's), and for a
    complex one an eager copy (``conj_physical``): tensorplug keeps no lazy conjugate bit, so
    ``tp.is_conj`` would always be False and writes to the result do not reach ``self``
    (PyTorch's conj is a view with the bit set)."""
    if not self.dtype.is_complex:
        return self
    return aten.conj_physical.default(self)


def resolve_conj(self: Any) -> Any:
    """``self``: tensorplug's conj is eager (no conjugate bit to resolve)."""
    return self


def resolve_neg(self: Any) -> Any:
    """``self``: tensorplug keeps no lazy negative bit."""
    return self


def real(self: Any) -> Any:
    """The real parts, a view (PyTorch's: ``view_as_real(self)[..., 0]``); ``self`` itself
    for a real tensor."""
    if not self.dtype.is_complex:
        return self
    return aten.select.int(aten.view_as_real.default(self), -1, 0)


def imag(self: Any) -> Any:
    """The imaginary parts, a view of a complex tensor."""
    if not self.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return aten.select.int(aten.view_as_real.default(self), -1, 1)
