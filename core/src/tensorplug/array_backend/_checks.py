"""What every kernel checks and raises, whatever its backend: PyTorch's argument checks
(dims, broadcasting, sizes, a scalar that fits a dtype) with PyTorch's wording, the kernel
error types, and the wrapper that names the op and the backend in every error a kernel lets
out (``_kit`` re-exports these names); and the check of the key a backend registers for
(:func:`backend_key`).

Note [Kernel errors]
~~~~~~~~~~~~~~~~~~~~
Errors leave a kernel as ``RuntimeError`` or ``IndexError`` whose message starts with the op
(``aten::add.Tensor: ...``) and whose ``__cause__`` is the array library's exception. Common
checks (broadcasting, dims, sizes) are done explicitly with PyTorch's wording; anything else the
array library raises is converted by :func:`guard` at registration time, so a user never sees a
bare numpy traceback. Hot kernels (binary pointwise) catch errors themselves and skip the
wrapper, which would cost a call level (Note [Binary fast path] in _pointwise/_elementwise.py).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes as _dt
from .. import keys as _keys
from .._op_errors import OpError, OpTypeError
from ..errors import RegistrationError

Kernel = Callable[..., Any]
Kernels = dict[str, Kernel]
Scalar = bool | int | float | complex


# --- errors ---------------------------------------------------------------------------------

_AXIS_BOUNDS = re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)")
_CONVERTED: tuple[type[BaseException], ...] = (
    ValueError,
    IndexError,
    TypeError,
    OverflowError,
    ZeroDivisionError,
    OpError,
    MemoryError,
)
# PyTorch raises NotImplementedError (a RuntimeError) for a dtype an op has no kernel for
_NOT_IMPLEMENTED = re.compile(
    r"not implemented for '|not supported for complex|^(?!arg)\w+\(\): does not support complex|"
    r"torch.sign is not intended to support complex"
)


def convert_error(qual: str, e: BaseException, key: str = "") -> BaseException:
    """The exception a kernel of ``qual`` on backend ``key`` raises for ``e`` (Note [Kernel
    errors])."""
    msg = str(e)
    if msg.startswith("aten::"):
        return e  # already named by an inner kernel
    m = _AXIS_BOUNDS.search(msg)
    if m is not None:
        msg = f"index {m[1]} is out of bounds for dimension {m[2]} with size {m[3]}"
    elif "read-only" in msg or "not writeable" in msg:
        msg = (
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    cls: type[BaseException] = IndexError if isinstance(e, IndexError) else RuntimeError
    if isinstance(e, OpError) and _NOT_IMPLEMENTED.search(msg):
        cls = NotImplementedError
    elif isinstance(e, MemoryError):  # the array library's: a RuntimeError naming op and size
        msg = f"out of memory: {msg or 'the allocation failed'}"
    if isinstance(e, OpTypeError):
        cls = TypeError
    elif isinstance(e, NotImplementedError):
        cls = NotImplementedError  # PyTorch's "... not implemented for 'Float'" of some ops
    if isinstance(e, (OpError, OpTypeError, MemoryError)) or cls is IndexError:
        out = cls(f"{qual}: {msg}")
    else:
        where = f" of the {key} backend" if key else ""
        out = cls(f"{qual}: {msg} ({type(e).__name__} from the array library{where})")
    out.__cause__ = e
    return out


def qualified(name: str) -> str:
    """The operator a kit kernel name means: ``"add.Tensor"`` is aten's, a name with its
    namespace (``"tensorplug::cross_entropy_loss_backward"``) is that namespace's."""
    return name if "::" in name else "aten::" + name


def backend_key(caller: str, key: str, device_type: str | None) -> tuple[_keys.DispatchKey, str]:
    """The backend key named ``key`` and its device type (``device_type``, else the key's);
    a RegistrationError naming ``caller`` (``register``, ``register_lazy``) for a key that is
    no backend or has no device type."""
    k = _keys.get(key)
    if k.kind is not _keys.KeyKind.BACKEND:
        raise RegistrationError(
            f"array_backend.{caller}: {key!r} is a {k.kind.value} key, not a backend key; "
            "create one with tensorplug.keys.register_backend(name, device_type)"
        )
    dev_type = device_type or k.device_type
    if dev_type is None:
        raise RegistrationError(f"array_backend.{caller}: backend {key!r} has no device type")
    return k, dev_type


def guard(name: str, fn: Kernel, key: str = "") -> Kernel:
    """``fn`` with its errors converted (Note [Kernel errors]); hot kernels opt out. An
    internal failure (an AttributeError or KeyError: a namespace without a function a kernel
    calls) becomes a RuntimeError naming the op and the backend ``key``."""
    if getattr(fn, "_tp_guarded", False):
        return fn
    qual = qualified(name)

    @functools.wraps(fn)
    def kernel(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except _CONVERTED as e:
            raise convert_error(qual, e, key) from e
        except _INTERNAL as e:
            raise _internal_error(qual, e, key) from e

    return kernel


_INTERNAL = (AttributeError, KeyError)


def _internal_error(qual: str, e: BaseException, key: str) -> RuntimeError:
    where = f"the {key} backend's" if key else "its"
    return RuntimeError(
        f"{qual}: the kernel failed on {where} array namespace: {type(e).__name__}: {e}. "
        "The namespace may lack a function of the array API standard; pass a kernel of your "
        "own with array_backend.register(..., overrides={...})"
    )


def guarded(fn: Kernel) -> Kernel:
    """Mark ``fn`` as converting its own errors."""
    fn._tp_guarded = True  # type: ignore[attr-defined]
    return fn


def full_index(idx: tuple[Any, ...]) -> tuple[Any, ...]:
    """``idx`` with a trailing ``...`` where it has none: the standard indexes every dimension
    or says where the rest go (numpy fills them in itself)."""
    if any(e is Ellipsis for e in idx):
        return idx
    return (*idx, Ellipsis)


def optional(xp: Any, name: str, fallback: Callable[..., Any]) -> Callable[..., Any]:
    """``xp.<name>`` where the namespace has that function beyond the standard, else
    ``fallback``, written in standard functions (Note [Optional extensions])."""
    fn = getattr(xp, name, None)
    return fallback if fn is None else fn


def wrap_dim(dim: int, ndim: int) -> int:
    """``dim`` in ``[0, ndim)``; a 0-d tensor accepts -1 and 0 (PyTorch's wording)."""
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
        )
    if ndim == 0:
        return 0
    return dim + ndim if dim < 0 else dim


def wrap_dims(dims: Sequence[int] | None, ndim: int) -> tuple[int, ...] | None:
    """Reduction dims: ``None`` or ``[]`` is every dim (returned as None); duplicates raise."""
    if not dims:
        return None
    out = tuple(wrap_dim(d, ndim) for d in dims)
    seen: set[int] = set()
    for d in out:
        if d in seen:
            raise OpError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return out if ndim else None


def check_broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast shape, or PyTorch's error naming the first mismatching dimension."""
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for si, s in enumerate(shapes):
        for i, n in enumerate(s):
            j = ndim - len(s) + i
            if out[j] == 1:
                out[j] = n
            elif n != 1 and n != out[j]:
                which = "a" if si == 0 else "b"
                other = "b" if si == 0 else "a"
                raise OpError(
                    f"The size of tensor {other} ({out[j]}) must match the size of tensor "
                    f"{which} ({n}) at non-singleton dimension {j}"
                )
    return tuple(out)


def check_sizes(size: Sequence[int]) -> tuple[int, ...]:
    for n in size:
        if n < 0:
            raise OpError(
                f"Trying to create tensor with negative dimension {n}: [{', '.join(map(str, size))}]"
            )
    return tuple(size)


def scalar_dtype(value: Scalar) -> _dt.dtype:
    """The dtype a Python scalar gives a factory (``full``): bool, int64, default, complex."""
    if isinstance(value, bool):
        return _dt.bool
    if isinstance(value, int):
        return _dt.int64
    if isinstance(value, float):
        return _dt.get_default_dtype()
    return _dt.get_default_dtype().to_complex()


def check_fits(value: Scalar, d: _dt.dtype, *, wrap_unsigned: bool = True) -> None:
    """PyTorch's overflow check for a scalar written into dtype ``d`` (``full``, ``fill_``,
    ``masked_fill``). As c10's ``overflows``: a float must lie within the integer range as it
    is (255.5 and -0.5 do not fit uint8, though they truncate into it), and an unsigned type
    takes negative integers down to ``-max``, which wrap (``fill_(-1)`` of uint8 gives 255)
    unless ``wrap_unsigned`` is False."""
    if d.kind in "ui" and not isinstance(value, complex):
        info = _dt.iinfo(d)
        lo = (
            -info.max
            if d.kind == "u" and wrap_unsigned and not isinstance(value, float)
            else info.min
        )
        if not lo <= value <= info.max:  # NaN compares false: it does not fit either
            raise OpError(f"value cannot be converted to type {d.name} without overflow")
    elif d.kind == "f" and not isinstance(value, complex):
        fv = float(value)
        if math.isfinite(fv) and abs(fv) > _dt.finfo(d).max:
            raise OpError(f"value cannot be converted to type {d.name} without overflow")
    if isinstance(value, complex) and d.kind != "c":
        raise OpError(f"value cannot be converted to type {d.name} without overflow")


def wrap_int(value: int, d: _dt.dtype) -> int:
    """A Python int wrapped into the range of integer dtype ``d`` (two's complement, as C)."""
    info = _dt.iinfo(d)
    if info.min <= value <= info.max:
        return value
    span = info.max - info.min + 1
    return (value - info.min) % span + info.min
