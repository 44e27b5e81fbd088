"""``tensorplug.cond``: functional control flow (``torch.cond``) (internal; re-exported by the
package).

Eagerly, ``cond(pred, true_fn, false_fn, operands)`` runs one branch: ``true_fn(*operands)``
when ``pred`` (a bool, or a one-element tensor) is true, else ``false_fn(*operands)``.

Under tracing (``tp.compile``, ``tp.tracer.trace``), reading ``pred``'s value would fix the
trace to one branch. So ``cond`` runs both branches and selects each output with ``where``
(``where(pred, t, f)``): the graph computes both and picks at run time, which is right for
branches without side effects whose outputs have the same structure, shapes and dtypes ("simple"
branches); others raise, naming what differs. A Python-bool ``pred`` is a constant of the trace
and runs one branch, as eagerly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dispatch, keys
from ..ops import ops
from ..tensor import Tensor

__all__ = ["cond"]


def _tracing() -> bool:
    try:
        tracer = keys.get("Tracer")
    except (KeyError, ValueError, LookupError):  # the tracer plugin is not loaded
        return False
    return tracer in dispatch.included()


def cond(
    pred: bool | Tensor,
    true_fn: Callable[..., Any],
    false_fn: Callable[..., Any],
    operands: tuple[Any, ...] | list[Any] = (),
) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (module docstring)."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(
                f"Expected pred to be bool or single-element tensor, but got {pred!r}."
            )
    elif not isinstance(pred, bool):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple or list, but got {type(operands)}.")
    if isinstance(pred, Tensor) and _tracing():
        return _select(pred, true_fn(*operands), false_fn(*operands))
    return true_fn(*operands) if bool(pred) else false_fn(*operands)


def _select(pred: Tensor, t: Any, f: Any, where: str = "output") -> Any:
    """``where(pred, t, f)`` leaf by leaf over the branches' outputs."""
    if isinstance(t, Tensor) and isinstance(f, Tensor):
        if t.shape != f.shape or t.dtype is not f.dtype:
            raise RuntimeError(
                f"cond: traced branches must return tensors of the same shape and dtype; "
                f"{where} is {tuple(t.shape)} {t.dtype} in true_fn and {tuple(f.shape)} "
                f"{f.dtype} in false_fn"
            )
        p = ops.aten.reshape.default(pred, [])
        return ops.aten.where.self(p, t, f)
    if isinstance(t, (tuple, list)) and type(t) is type(f) and len(t) == len(f):
        pairs = enumerate(zip(t, f, strict=True))
        return type(t)(_select(pred, a, b, f"{where}[{i}]") for i, (a, b) in pairs)
    raise RuntimeError(
        f"cond: traced branches must return the same structure of tensors; {where} is "
        f"{type(t).__name__} in true_fn and {type(f).__name__} in false_fn"
    )
