"""Complex numbers: ``complex``, ``polar``, ``angle``, and the views ``view_as_real`` and
``view_as_complex`` (``real`` and ``imag`` are composites of them, as PyTorch's).

Note [Complex views]
~~~~~~~~~~~~~~~~~~~~
``view_as_real`` reads a complex array as a real one with a trailing dimension of 2 (real,
imaginary), and ``view_as_complex`` the other way: views of the same memory, so a write through
either shows in the other (``Tensor._alias``: one version counter). The array API standard has
no strided views, so the kit takes them where the array library has them: an array with
``strides`` and ``.view`` (numpy, CuPy) is re-typed: ``a[..., None].view(float)`` (a trailing
axis of one complex read as two reals; else the real parts re-strided by
``lib.stride_tricks.as_strided``) and ``a.view(complex)[..., 0]``. A namespace without
them (array_api_strict, the Meta arrays) gets arrays of the same values that are copies, as
``diagonal`` there. PyTorch's argument checks (a complex input; float32/float64, a last
dimension of size 2 and stride 1, other strides even) run on every backend.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernels, Kit, OpError, bind, torch_name

_REAL_OF = {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}
_COMPLEX_OF = {_dt.float32: _dt.complex64, _dt.float64: _dt.complex128}


def _as_strided(kit: Kit) -> Any:
    lib = getattr(kit.xp, "lib", None)
    tricks = getattr(lib, "stride_tricks", None)
    return getattr(tricks, "as_strided", None)


def view_as_real(kit: Kit, self: Tensor) -> Tensor:
    d = self._dtype
    if d.kind != "c":
        raise OpError("view_as_real is only supported for complex tensors")
    od = _REAL_OF[d]
    a = self._data
    rd = kit.storage[od]
    if hasattr(a, "strides") and hasattr(a, "view"):
        try:  # a trailing axis of one complex, read as two reals: numpy's, CuPy's view
            return self._alias(a[..., None].view(rd), od)
        except (TypeError, ValueError):
            pass
        strided = _as_strided(kit)
        if strided is not None:  # the real parts' view, re-strided
            re = a.real
            r = strided(re, shape=(*a.shape, 2), strides=(*re.strides, re.itemsize))
            return self._alias(r, od)
    xp = kit.xp
    r = xp.stack([xp.real(a), xp.imag(a)], axis=-1)  # Note [Complex views]: a copy
    return self._alias(kit.cast(r, kit.storage[od]), od)


def view_as_complex(kit: Kit, self: Tensor) -> Tensor:
    d = self._dtype
    if d not in _COMPLEX_OF:
        raise OpError(
            "view_as_complex is only supported for float and double tensors, but got a tensor "
            f"of scalar type: {torch_name(d)}"
        )
    a = self._data
    if a.ndim == 0:
        raise OpError("Input tensor must have one or more dimensions")
    if a.shape[-1] != 2:
        raise OpError("Tensor must have a last dimension of size 2")
    od = _COMPLEX_OF[d]
    strides = getattr(a, "strides", None)
    if strides is not None and hasattr(a, "view"):
        item = a.itemsize
        if a.size and strides[-1] != item:
            raise OpError("Tensor must have a last dimension with stride 1")
        if a.size and any(s % (2 * item) for s in strides[:-1]):
            raise OpError("Tensor must have a stride divisible by 2 for all but last dimension")
        if a.size:
            return self._alias(a.view(kit.storage[od])[..., 0], od)
    cd = kit.storage[od]
    r = kit.cast(a[..., 0], cd) + kit.cast(a[..., 1], cd) * 1j  # Note [Complex views]: a copy
    return self._alias(kit.cast(r, cd), od)


def _same_real_dtypes(kit: Kit, a: Tensor, b: Tensor, what: tuple[str, str]) -> _dt.dtype:
    d = a._dtype
    if d not in _COMPLEX_OF:
        raise OpError(
            f"Expected both inputs to be Half, Float or Double tensors but got {torch_name(d)} "
            f"and {torch_name(b._dtype)}"
        )
    if b._dtype is not d:
        raise OpError(
            f"Expected object of scalar type {torch_name(d)} but got scalar type "
            f"{torch_name(b._dtype)} for second argument"
        )
    return _COMPLEX_OF[d]


def complex_(kit: Kit, real: Tensor, imag: Tensor) -> Tensor:
    od = _same_real_dtypes(kit, real, imag, ("real", "imag"))
    kit.same_device(real, imag)
    cd = kit.storage[od]
    re = kit.cast(real._data, cd)
    im = kit.cast(imag._data, cd)
    return kit.wrap(re + im * 1j, od, real._device)


def polar(kit: Kit, abs: Tensor, angle: Tensor) -> Tensor:
    od = _same_real_dtypes(kit, abs, angle, ("abs", "angle"))
    kit.same_device(abs, angle)
    xp = kit.xp
    cd = kit.storage[od]
    r, t = abs._data, angle._data
    with kit.quiet():
        out = kit.cast(r * xp.cos(t), cd) + kit.cast(r * xp.sin(t), cd) * 1j
    return kit.wrap(out, od, abs._device)


def angle(kit: Kit, self: Tensor) -> Tensor:
    """The argument of a complex number; 0 or pi for a real one (pi for negatives, NaN
    kept); integers and bools give the default dtype."""
    xp = kit.xp
    d = self._dtype
    if d.kind == "c":
        a = self._data
        od = _REAL_OF[d]
        return kit.wrap(xp.atan2(xp.imag(a), xp.real(a)), od, self._device)
    od = d if d.kind == "f" else _dt.get_default_dtype()
    x = kit.cast(self._data, kit.compute[od])
    with kit.quiet():
        r = xp.where(x < 0, math.pi, xp.where(xp.isnan(x), x, 0.0))
    return kit.wrap(kit.cast(r, x.dtype), od, self._device)


KERNELS: dict[str, Callable[..., Any]] = {
    "view_as_real": view_as_real,
    "view_as_complex": view_as_complex,
    "complex": complex_,
    "polar": polar,
    "angle": angle,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
