"""``tp.autograd.forward_ad``: forward-mode automatic differentiation, as
``torch.autograd.forward_ad``.

Inside a dual level, :func:`make_dual` pairs a tensor with a tangent; every operator then
computes its output's tangent as well (the Jacobian-vector product), and :func:`unpack_dual`
takes it back. Leaving the level takes the tangents away. How tangents propagate: Note
[Forward-mode kernel] in forward.py; what a dual tensor is: Note [Dual tensors] in dual.py.

Usage::

    import tensorplug as tp
    import tensorplug.autograd.forward_ad as fwAD

    x, v = tp.randn(3), tp.ones(3)
    with fwAD.dual_level():
        y = fwAD.make_dual(x, v).sin()
        primal, tangent = fwAD.unpack_dual(y)      # sin(x), cos(x) * v
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, NamedTuple

import tensorplug as tp
from tensorplug.tensor import Tensor

from . import dual

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "primal",
    "transform_level",
    "unpack_dual",
]


def _current() -> int:
    public = dual._Levels.public
    return public[-1] if public else -1


def enter_dual_level() -> int:
    """Enter a new forward-AD level and return its number (PyTorch allows one at a time)."""
    if dual._Levels.public:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = dual.enter()
    dual._Levels.public.append(level)
    return level


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the current forward-AD level: every tangent made at it is dropped."""
    current = _current()
    if level is None:
        level = current
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != current:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    dual._Levels.public.pop()
    dual.leave(level)


class dual_level:  # noqa: N801  (PyTorch's name)
    """Context manager of a forward-AD level: ``with dual_level(): ...``. Tangents made inside
    are dropped on exit."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        exit_dual_level()


def _batched(t: Tensor) -> bool:
    try:
        return bool(t.tp_keyset & tp.keys.get("Batched").mask)
    except Exception:  # noqa: BLE001  (no batched plugin: nothing is batched)
        return False


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` that carries ``tangent`` at ``level`` (default: the current one).
    ``tangent`` must have ``tensor``'s shape; both must be floating point."""
    if level is None:
        level = _current()
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if level not in dual.active():
        raise RuntimeError("Invalid level given to _make_dual")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(
            "make_dual(tensor, tangent): expected Tensors, got "
            f"{type(tensor).__name__} and {type(tangent).__name__}"
        )
    for what, t in (("primal", tensor), ("tangent", tangent)):
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise ValueError(f"Expected {what} to be floating point or complex, but got: {t.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}."
        )
    if tangent.device != tensor.device:
        raise RuntimeError(
            f"Expected tangent to be on the primal's device {tensor.device}, got "
            f"{tangent.device}: move it with tangent.to(primal.device)."
        )
    if _batched(tensor) or _batched(tangent):
        raise NotImplementedError(
            "make_dual of a tensor batched by tp.vmap is not supported: call tp.func.jvp "
            "inside vmap instead."
        )
    if dual.tangent(tensor, level) is not None:
        raise RuntimeError(
            f"Making a dual Tensor based on a Tensor that already has a forward gradient at "
            f"the same level {level} is not supported."
        )
    with dual.hide(level):
        out = tp.ops.aten.view.default(tensor, list(tensor.shape))
    dual.set_tangent(out, level, tangent)
    return out


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal (a view without the tangent) and the
    tangent (None when the tensor has none at that level)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at ``level`` (default: the current one)."""
    if level is None:
        level = _current()
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if level not in dual.active():
        raise RuntimeError("Invalid level given to _fw_primal")
    t = dual.tangent(tensor, level)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(primal(tensor, level), t)


def primal(tensor: Tensor, level: int) -> Tensor:
    """A view of ``tensor`` without its tangent at ``level`` (outer levels' kept)."""
    with dual.hide(level):
        return tp.ops.aten.view.default(tensor, list(tensor.shape))


class transform_level:  # noqa: N801  (a context manager, like dual_level)
    """A forward-AD level for function transforms (``tp.func.jvp``): unlike
    :class:`dual_level` it may nest, inside another transform's level or a ``dual_level``; each
    nested level computes its own tangents (``jvp(jvp(f))``). ``with transform_level() as
    level: ... make_dual(x, v, level=level)``. A tensorplug extension: PyTorch's functorch
    keeps its levels internal."""

    def __enter__(self) -> int:
        self.level = dual.enter()
        return self.level

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        dual.leave(self.level)
