"""Questions about tensors and Python values with PyTorch's names: ``is_tensor``,
``is_storage``, ``is_complex``, ``is_floating_point``, ``is_conj``, ``is_nonzero``, ``numel``,
``_assert``, the ``sym_*`` functions on plain numbers, and ``Size`` (internal; re-exported by
the package).

The ones that take a tensor honour ``__tensorplug_function__`` as torch's honour
``__torch_function__``; they check their argument's type with PyTorch's ``TypeError``.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Iterable
from typing import Any

from .. import overrides
from ..tensor import Size, Tensor

__all__ = [
    "Size",
    "broadcast_shapes",
    "STORAGE_CLASSES",
    "is_complex",
    "is_conj",
    "is_floating_point",
    "is_nonzero",
    "is_storage",
    "is_tensor",
    "numel",
    "sym_float",
    "sym_fresh_size",
    "sym_int",
    "sym_ite",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_sum",
]


def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a tensorplug Tensor (of any subclass): ``isinstance(obj, Tensor)``."""
    return isinstance(obj, Tensor)


# Classes whose instances are storages (filled from above: a storage class registers itself).
STORAGE_CLASSES: list[type] = []


def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is a storage object (an instance of a registered storage class); a
    tensor is not one."""
    return builtins.bool(STORAGE_CLASSES) and isinstance(obj, tuple(STORAGE_CLASSES))


def _tensor_arg(fn: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}"
        )
    return x


def _is_complex(input: Tensor) -> bool:
    return _tensor_arg("is_complex", input).dtype.is_complex


def _is_floating_point(input: Tensor) -> bool:
    return _tensor_arg("is_floating_point", input).dtype.is_floating_point


def _is_conj(input: Tensor) -> bool:
    """False: conjugation is eager here, so no tensor carries a conjugate bit."""
    _tensor_arg("is_conj", input)
    return False


def _is_nonzero(input: Tensor) -> bool:
    """The truth of a one-element tensor; PyTorch's errors for none or more."""
    n = _tensor_arg("is_nonzero", input).numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


def _numel(input: Tensor) -> int:
    return _tensor_arg("numel", input).numel()


def _assert(condition: Any, message: str) -> None:
    """``assert condition, message`` as a function (what tracing keeps as a check)."""
    assert condition, message


_assert.__name__ = "_assert"
is_complex = overrides._overridable_function("tensorplug", _is_complex)
is_floating_point = overrides._overridable_function("tensorplug", _is_floating_point)
is_conj = overrides._overridable_function("tensorplug", _is_conj)
is_nonzero = overrides._overridable_function("tensorplug", _is_nonzero)
numel = overrides._overridable_function("tensorplug", _numel)
for _f, _name in (
    (is_complex, "is_complex"),
    (is_floating_point, "is_floating_point"),
    (is_conj, "is_conj"),
    (is_nonzero, "is_nonzero"),
    (numel, "numel"),
):
    _f.__name__ = _f.__qualname__ = _name
assert_ = overrides._overridable_function("tensorplug", _assert)


# --- symbolic-number functions, on plain Python numbers ----------------------------------------
# PyTorch's sym_* work on SymInt/SymFloat under tracing and fall back to Python's semantics on
# plain numbers; tensorplug's tracer records tensors, not Python numbers, so these are the
# fallbacks.


def sym_int(a: Any) -> int:
    """``int(a)`` rounding toward zero (``math.trunc``), as ``torch.sym_int`` on numbers."""
    if isinstance(a, builtins.int):
        return a
    return builtins.int(math.trunc(a))


def sym_float(a: Any) -> float:
    return builtins.float(a)


def sym_not(a: Any) -> bool:
    return not a


def sym_max(a: Any, b: Any) -> Any:
    """``max(a, b)``, a float when either is (``sym_max(2, 3.0)`` is ``3.0``)."""
    r = builtins.max(a, b)
    return builtins.float(r) if isinstance(a, float) or isinstance(b, float) else r


def sym_min(a: Any, b: Any) -> Any:
    r = builtins.min(a, b)
    return builtins.float(r) if isinstance(a, float) or isinstance(b, float) else r


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """``t if b else f``."""
    return t if b else f


def sym_sum(args: Iterable[Any]) -> Any:
    """``sum(args)``."""
    return builtins.sum(args)


def sym_fresh_size(expr: Any) -> Any:
    """``expr`` itself on a plain number."""
    return expr


# --- Size -------------------------------------------------------------------------------------


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape that tensors of ``shapes`` (each an int or a sequence of ints) broadcast to,
    as ``torch.broadcast_shapes``, with its errors."""
    lists = [[s] if isinstance(s, builtins.int) else list(s) for s in shapes]
    ndim = builtins.max((len(s) for s in lists), default=0)
    out = [1] * ndim
    for i, shape in enumerate(lists):
        for k in builtins.range(-1, -len(shape) - 1, -1):
            n = shape[k]
            if n < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if n == 1 or n == out[k]:
                continue
            if out[k] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {n} at {k}! Mismatching "
                    f"argument at index {i} had {tuple(shape)}; but expected shape should be "
                    f"broadcastable to {out}"
                )
            out[k] = n
    return Size(out)
