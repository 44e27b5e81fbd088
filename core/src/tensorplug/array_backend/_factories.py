"""The ``factories`` family of the array kit: the kernels that make tensors from sizes (zeros,
ones, empty, full, arange, linspace, logspace, eye, tril_indices, triu_indices). The random
factories (rand, randn, randint, randperm, ...) are the ``random`` family's (``_random``), the
copies of tensors (clone, _to_copy, ...) the ``pointwise`` family's (``_pointwise._copy``).

Factories reach a backend through ``BackendSelect`` with ``device=`` already naming it. Default
dtypes follow PyTorch: the default floating dtype, except ``arange`` with integer arguments
(int64) and ``full``, whose dtype follows the fill value (bool, int64, default float, default
complex).

Note [Factory fast path]
~~~~~~~~~~~~~~~~~~~~~~~~
``zeros``, ``ones``, ``empty`` and ``full`` first try the common call: a dtype the backend
stores natively, a device it has seen before (``Kit.device`` interns devices, so one dict
lookup finds it), no device context to enter (CPU), and for ``full`` a finite float or int that
fits the floating dtype. Then the array is made with one call (``ones`` and ``full`` as
``empty`` + ``fill``, what ``np.ones``/``np.full`` do below their Python layer) and wrapped. A
negative size makes the array library refuse; the general path then raises PyTorch's message.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import _strides
from .. import dtypes as _dt
from ..device import canonical
from ..device import device as Device
from ..tensor import Tensor
from ._kit import (
    Kernels,
    Kit,
    OpError,
    Scalar,
    bind,
    check_fits,
    check_sizes,
    guard,
    guarded,
    scalar_dtype,
    torch_name,
)


def target(
    kit: Kit, dtype: _dt.dtype | None, device: str | Device | None
) -> tuple[_dt.dtype, Device]:
    d = _dt.get_default_dtype() if dtype is None else dtype
    kit.check_dtype(d)
    return d, kit.device(canonical(device))


def make(kit: Kit, fn: Any, shape: tuple[int, ...], d: _dt.dtype, dev: Device) -> Tensor:
    ks = kit.keyset
    with kit.on(dev):
        if d in kit.native:
            arr = fn(shape, dtype=kit.storage[d])
        else:
            arr = kit.cast(fn(shape, dtype=kit.compute[d]), kit.storage[d])
    return kit.new(arr, d, dev, ks)


# --- ranges --------------------------------------------------------------------------


def arange_start_step(
    kit: Kit,
    start: Scalar,
    end: Scalar,
    step: Scalar = 1,
    *,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    xp = kit.xp
    all_int = all(isinstance(x, int) for x in (start, end, step))
    if dtype is None:
        dtype = _dt.int64 if all_int else _dt.get_default_dtype()
    d, dev = target(kit, dtype, device)
    real: list[int | float] = []
    for x in (start, end, step):
        if isinstance(x, complex):
            raise OpError("arange does not support complex arguments")
        if not math.isfinite(x):
            raise OpError(f"unsupported range: {start} -> {end}")
        real.append(x)
    lo, hi, st = real
    integral = d.kind in "ui"
    n_given: int | None = None
    if integral and not all_int:
        # an integer dtype first converts start, end and step toward zero, as PyTorch
        # (arange(kit, -2.5, 2, dtype=int64) is [-2, -1, 0, 1]); int64 counts its elements
        # from the converted values, the narrower types (as PyTorch's) from the given ones
        if d is not _dt.int64 and int(st):
            n_given = math.ceil((hi - lo) / st)
        lo, hi, st = int(lo), int(hi), int(st)
    if st == 0:
        raise OpError("step must be nonzero")
    if (st > 0 and hi < lo) or (st < 0 and hi > lo):
        raise OpError("upper bound and larger bound inconsistent with step sign")
    if n_given is not None:
        n = max(0, n_given)
    elif isinstance(lo, int) and isinstance(hi, int) and isinstance(st, int):
        n = max(0, -(-(hi - lo) // st))
    else:
        n = max(0, math.ceil((hi - lo) / st))
    with kit.on(dev):
        if integral:
            arr = xp.arange(lo, lo + n * st, st, dtype=kit.storage[_dt.int64])[:n]
        else:
            acc = kit.compute[_dt.float64] if _dt.float64 in kit.compute else kit.compute[d]
            arr = xp.arange(n, dtype=acc) * st + lo
    return kit.wrap(arr, d, dev)


def arange(
    kit: Kit,
    end: Scalar,
    *,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    return arange_start_step(kit, 0, end, 1, dtype=dtype, device=device)


def spaced_target(
    kit: Kit, start: Scalar, end: Scalar, steps: int, dtype: _dt.dtype | None, device: Any
) -> tuple[_dt.dtype, Device]:
    """linspace's and logspace's checks and dtype: complex ends give the default complex."""
    if steps < 0:
        raise OpError("number of steps must be non-negative")
    if dtype is None and (isinstance(start, complex) or isinstance(end, complex)):
        dtype = _dt.get_default_dtype().to_complex()
    return target(kit, dtype, device)


def spaced(kit: Kit, start: Scalar, end: Scalar, steps: int, acc: Any) -> Any:
    """``steps`` values from ``start`` to ``end`` in ``acc``, by PyTorch's symmetric formula:
    the first half counts up from start, the second half down from end, so both ends are
    exact."""
    xp = kit.xp
    if steps == 1:
        return xp.full((1,), start, dtype=acc)
    i = xp.arange(steps, dtype=acc)
    step = (end - start) / (steps - 1)
    half = steps // 2
    return xp.where(i < half, start + step * i, end - step * (steps - 1 - i))


def linspace(
    kit: Kit,
    start: Scalar,
    end: Scalar,
    steps: int,
    *,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    xp = kit.xp
    d, dev = spaced_target(kit, start, end, steps, dtype, device)
    acc_d = _dt.complex128 if d.kind == "c" else _dt.float64
    acc = kit.compute[acc_d] if acc_d in kit.compute else kit.compute[d]
    with kit.on(dev):
        arr = spaced(kit, start, end, steps, acc)
    if d.kind in "ui":
        arr = xp.trunc(xp.real(arr)) if acc_d is _dt.complex128 else xp.trunc(arr)
    return kit.wrap(arr, d, dev)


def logspace(
    kit: Kit,
    start: Scalar,
    end: Scalar,
    steps: int,
    base: float = 10.0,
    *,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    xp = kit.xp
    d, dev = spaced_target(kit, start, end, steps, dtype, device)
    if d.kind == "b":
        raise NotImplementedError("aten::logspace: \"logspace_cpu\" not implemented for 'Bool'")
    acc = kit.compute[_dt.complex128 if d.kind == "c" else _dt.float64]
    with kit.on(dev), kit.quiet():
        # base ** linspace's exponents; integers truncate the double result and wrap
        # around, as PyTorch's cast
        arr = xp.asarray(base, dtype=acc) ** spaced(kit, start, end, steps, acc)
        if d.kind in "ui":
            arr = kit.cast(xp.trunc(xp.real(arr)), kit.storage[_dt.int64])
    return kit.wrap(arr, d, dev)


def eye_m(
    kit: Kit,
    n: int,
    m: int,
    *,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    xp = kit.xp
    if n < 0:
        raise OpError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise OpError(f"m must be greater or equal to 0, got {m}")
    d, dev = target(kit, dtype, device)
    with kit.on(dev):
        arr = xp.eye(n, m, dtype=kit.compute[d])
    return kit.wrap(arr, d, dev)


def eye(
    kit: Kit,
    n: int,
    *,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    return eye_m(kit, n, n, dtype=dtype, device=device)


def triangle_indices(
    kit: Kit,
    name: str,
    lower: bool,
    row: int,
    col: int,
    offset: int,
    dtype: _dt.dtype | None,
    device: str | Device | None,
) -> Tensor:
    """``tril_indices`` (``lower``) and ``triu_indices`` (``name``)."""
    xp = kit.xp
    if row < 0:
        raise OpError(f"row must be non-negative, got{row}")
    if col < 0:
        raise OpError(f"col must be non-negative, got{col}")
    d = _dt.int64 if dtype is None else dtype  # PyTorch's default here is long
    if d not in (_dt.int32, _dt.int64):
        raise NotImplementedError(f"\"{name}\" not implemented for '{torch_name(d)}'")
    dev = kit.device(canonical(device))
    with kit.on(dev):
        r, c = triangle(kit, row, offset, col, lower)
        arr = xp.stack([r, c]) if row and col else xp.zeros((2, 0), dtype=kit.storage[d])
    return kit.wrap(kit.cast(arr, kit.storage[d]), d, dev)


def tril_indices(
    kit: Kit,
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    return triangle_indices(kit, "tril_indices", True, row, col, offset, dtype, device)


def triu_indices(
    kit: Kit,
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    return triangle_indices(kit, "triu_indices", False, row, col, offset, dtype, device)


def standard_triangle(kit: Kit, row: int, offset: int, col: int, lower: bool) -> tuple[Any, Any]:
    """numpy's ``tril_indices`` / ``triu_indices`` (row-major order) in standard
    functions: the nonzero positions of the triangle's mask."""
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    r = xp.reshape(xp.arange(row, dtype=i64), (row, 1))
    c = xp.reshape(xp.arange(col, dtype=i64), (1, col))
    mask = (c - r <= offset) if lower else (c - r >= offset)
    rr, cc = kit.nonzero(mask)
    return rr, cc


def triangle(kit: Kit, row: int, offset: int, col: int, lower: bool) -> tuple[Any, Any]:
    xp = kit.xp
    fn = getattr(xp, "tril_indices" if lower else "triu_indices", None)
    if fn is None or not _numpy_triangle_signature(kit, fn, lower):  # Note [Optional extensions]
        return standard_triangle(kit, row, offset, col, lower)
    r, c = fn(row, offset, col)
    return kit.known(r), kit.known(c)  # Note [Value-dependent shapes] (dask leaves them nan)


_NUMPY_SIGNATURE: dict[Any, bool] = {}


def _numpy_triangle_signature(kit: Kit, fn: Any, lower: bool) -> bool:
    """Whether ``fn`` takes numpy's ``(n, k, m)`` (torch's ``tril_indices`` takes ``(row, col,
    offset)`` and would give other indices, silently): probed once, on a 3x2 matrix's lower
    (upper) triangle, which has 5 (3) positions under numpy's order of arguments and none under
    torch's."""
    got = _NUMPY_SIGNATURE.get(fn)
    if got is None:
        try:
            r, _ = fn(3, 0, 2)
            got = int(kit.known(r).shape[0]) == (5 if lower else 3)
        except (TypeError, ValueError):
            got = False
        _NUMPY_SIGNATURE[fn] = got
    return got


def creation(kit: Kit) -> Kernels:
    """The kernels of zeros, ones, empty and full, each trying Note [Factory fast path] before
    the general path. The fast path raises nothing, so each kernel converts its own errors
    (Note [Kernel errors]): only its general path runs under the conversion."""
    xp = kit.xp
    ks = kit.keyset
    new = kit.new
    seen_device = kit.interned_device
    device_ids = kit._device_ids  # Note [Devices by identity] in _kit.py
    fast_store = {d: kit.storage[d] for d in kit.native} if kit.device_context is None else {}
    fill = getattr(kit.array_type, "fill", None)
    xp_zeros, xp_empty = xp.zeros, xp.empty
    # floating dtype -> the largest finite value ``full`` may write without a check
    fmax = {d: float(_dt.finfo(d).max) for d in fast_store if d.kind == "f"}

    def quick(
        fn: Any, size: Sequence[int], dtype: _dt.dtype | None, device: Any, value: Any = None
    ) -> Tensor | None:
        """The array ``fn(size)`` (filled with ``value`` if given) on the fast path, or None."""
        d = _dt._default_dtype if dtype is None else dtype  # (get_default_dtype, not called)
        xd = fast_store.get(d)
        got = device_ids.get(id(device))  # seen_device's first lookup, not called
        dev = got[1] if got is not None and got[0] is device else seen_device(device)
        if xd is None or dev is None:
            return None
        try:
            arr = fn(size, dtype=xd)
        except (ValueError, TypeError):  # a negative size: the general path's message
            return None
        if value is not None:
            fill(arr, value)  # type: ignore[misc]
        return new(arr, d, dev, ks)

    def general(fn: Any) -> Any:
        def make_general(size: Sequence[int], dtype: Any, device: Any) -> Tensor:
            d, dev = target(kit, dtype, device)
            return make(kit, fn, check_sizes(size), d, dev)

        return make_general

    zeros_general = guard("zeros", general(xp.zeros), kit.key_name)
    ones_general = guard("ones", general(xp.ones), kit.key_name)
    empty_general = guard("empty.memory_format", general(xp.empty), kit.key_name)

    @guarded
    def zeros(
        size: Sequence[int],
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        r = quick(xp_zeros, size, dtype, device)
        return zeros_general(size, dtype, device) if r is None else r

    @guarded
    def ones(
        size: Sequence[int],
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        r = quick(xp_empty, size, dtype, device, 1) if fill is not None else None
        return ones_general(size, dtype, device) if r is None else r

    @guarded
    def empty(
        size: Sequence[int],
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
        memory_format: Any = None,
    ) -> Tensor:
        if memory_format is not None and memory_format != "contiguous_format":
            return _empty_in_format(kit, size, dtype, device, memory_format)
        r = quick(xp_empty, size, dtype, device)
        return empty_general(size, dtype, device) if r is None else r

    def full_general(size: Sequence[int], fill_value: Scalar, dtype: Any, device: Any) -> Tensor:
        d, dev = target(kit, scalar_dtype(fill_value) if dtype is None else dtype, device)
        shape = check_sizes(size)
        check_fits(fill_value, d)
        arr = kit.fill_array(shape, fill_value, d, dev)
        return kit.new(arr, d, dev, ks)

    full_checked = guard("full", full_general, kit.key_name)

    @guarded
    def full(
        size: Sequence[int],
        fill_value: Scalar,
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        if fill is not None and type(fill_value) is float:
            top = fmax.get(_dt._default_dtype if dtype is None else dtype)
            if top is not None and -top <= fill_value <= top:  # finite, and no overflow check
                r = quick(xp_empty, size, dtype, device, fill_value)
                if r is not None:
                    return r
        return full_checked(size, fill_value, dtype, device)  # type: ignore[no-any-return]

    # Note [Factory fast path], for arange: int start, end and step (bool is no int here),
    # the default dtype of ints (int64) or int64 given, a step whose sign agrees with the
    # range; anything else, or an array library that refuses (beyond int64), takes the
    # general path, which raises PyTorch's messages
    int64 = fast_store.get(_dt.int64)
    xp_arange: Any = getattr(xp, "arange", None)
    arange_general = guard("arange", bind(kit, arange), kit.key_name)
    start_step_general = guard("arange.start_step", bind(kit, arange_start_step), kit.key_name)

    def quick_range(start: int, end: int, step: int, device: Any) -> Tensor | None:
        got = device_ids.get(id(device))
        dev = got[1] if got is not None and got[0] is device else seen_device(device)
        if dev is None or int64 is None:
            return None
        if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
            return None  # step 0, or a sign against the range: the general path's message
        n = -(-(end - start) // step)
        try:
            arr = xp_arange(start, start + n * step, step, dtype=int64)
        except (ValueError, TypeError, OverflowError):
            return None
        return new(arr, _dt.int64, dev, ks)

    @guarded
    def arange_end(
        end: Scalar,
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        if type(end) is int and (dtype is None or dtype is _dt.int64):
            r = quick_range(0, end, 1, device)
            if r is not None:
                return r
        return arange_general(  # type: ignore[no-any-return]
            end, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
        )

    @guarded
    def arange_start_step_(
        start: Scalar,
        end: Scalar,
        step: Scalar = 1,
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        if (
            type(start) is int
            and type(end) is int
            and type(step) is int
            and (dtype is None or dtype is _dt.int64)
        ):
            r = quick_range(start, end, step, device)
            if r is not None:
                return r
        return start_step_general(  # type: ignore[no-any-return]
            start, end, step, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory
        )

    arange_end.__name__ = arange_end.__qualname__ = "arange"
    arange_start_step_.__name__ = arange_start_step_.__qualname__ = "arange_start_step"
    kernels: Kernels = {"zeros": zeros, "ones": ones, "empty.memory_format": empty, "full": full}
    if xp_arange is not None:
        kernels.update({"arange": arange_end, "arange.start_step": arange_start_step_})
    return kernels


def _empty_in_format(
    kit: Kit, size: Sequence[int], dtype: _dt.dtype | None, device: Any, memory_format: Any
) -> Tensor:
    """``empty(size, memory_format=)`` for channels_last(_3d): their strides on a strided
    backend (row-major elsewhere); preserve_format refused, as PyTorch refuses it."""
    op = "aten::empty.memory_format"
    fmt = _strides.check_format(memory_format, op)
    if fmt == "preserve_format":
        raise OpError("unsupported memory format Preserve")
    d, dev = target(kit, dtype, device)
    shape = check_sizes(size)
    st = _strides.strides_for(shape, fmt)  # the rank check, on every backend
    if not kit.strided or kit.as_strided is None:
        return make(kit, kit.xp.empty, shape, d, dev)
    n = 0 if 0 in shape else 1 + sum((k - 1) * s for k, s in zip(shape, st, strict=True))
    with kit.on(dev):
        flat = kit.xp.empty((n,), dtype=kit.storage[d])
    item = int(flat.itemsize)
    arr = kit.as_strided(flat, shape, tuple(s * item for s in st))
    return kit.new(arr, d, dev, kit.keyset)


KERNELS: dict[str, Callable[..., Any]] = {
    "tril_indices": tril_indices,
    "triu_indices": triu_indices,
    "arange": arange,
    "arange.start_step": arange_start_step,
    "linspace": linspace,
    "logspace": logspace,
    "eye": eye,
    "eye.m": eye_m,
}


def build(kit: Kit) -> Kernels:
    k: Kernels = creation(kit)
    k.update((name, bind(kit, fn)) for name, fn in KERNELS.items() if name not in k)
    return k
