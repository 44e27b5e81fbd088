"""The autograd attributes and methods this plugin adds to ``tensorplug.Tensor``.

``requires_grad``, ``grad``, ``grad_fn``, ``is_leaf``, ``retains_grad`` and ``data`` are
properties; ``requires_grad_``, ``detach_``, ``backward``, ``retain_grad``, ``register_hook`` and
``register_post_accumulate_grad_hook`` methods,
with PyTorch's signatures and error messages (Note [Autograd state of a tensor] in meta.py).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from tensorplug.tensor import Tensor, new_tensor

from . import dual, engine
from .graph import RemovableHandle
from .masks import M, autograd_bit
from .meta import AutogradMeta, is_leaf, meta_of, refresh_view

__all__ = ["METHODS", "assign_grad", "repr_suffix"]


def _requires_grad(self: Tensor) -> bool:
    return bool(self.tp_keyset & M.ag)


def requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
    if not is_leaf(self):
        if not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        return self
    if requires_grad:
        if not (self.tp_dtype.is_floating_point or self.tp_dtype.is_complex):
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients (got "
                f"{self.tp_dtype}); convert it first, e.g. t.to(tp.float32)"
            )
        self.tp_keyset |= autograd_bit(self)
    else:
        self.tp_keyset &= ~M.strip
    return self


def _set_requires_grad(self: Tensor, value: bool) -> None:
    requires_grad_(self, bool(value))


def _grad(self: Tensor) -> Tensor | None:
    m: AutogradMeta | None = self.tp_autograd
    return None if m is None else m.grad


def _short_dtype(t: Tensor) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _set_grad(self: Tensor, value: Tensor | None) -> None:
    if value is None:  # ``p.grad = None`` before each step's backward: no meta made for it
        m: AutogradMeta | None = self.tp_autograd
        if m is not None:
            m.grad = None
        return
    if not isinstance(value, Tensor):
        raise TypeError(
            "assigned grad expected to be a Tensor or None but got grad of type "
            f"{type(value).__name__}"
        )
    # the shapes' arrays first, and devices by identity first: ``p.grad = g`` after each
    # ``autograd.grad`` of a training step (a device's __eq__ runs Python)
    if value.tp_data.shape != self.tp_data.shape and tuple(value.shape) != tuple(self.shape):
        raise RuntimeError(
            f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
            f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
            "the same size"
        )
    if value.dtype is not self.dtype:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{_short_dtype(value)}' to a tensor "
            f"with dtype '{_short_dtype(self)}'. Please ensure that the gradient and the "
            "tensor have the same dtype"
        )
    if value.tp_device is not self.tp_device and value.device != self.device:
        raise RuntimeError(
            f"attempting to assign a gradient with device type '{value.device.type}' to a "
            f"tensor with device type '{self.device.type}'. Please ensure that the gradient "
            "and the tensor are on the same device"
        )
    meta_of(self).grad = value


def assign_grad(t: Tensor, value: Tensor | None) -> None:
    """``t.grad = value`` without the setter's checks, for a caller that has proven ``value``
    is None or a tensor of ``t``'s shape, dtype and device (``tp.compile``'s lowered step: its
    trace saw the setter accept a value so described, and its guards prove the descriptions).
    About 0.03 us against the setter's 0.5 us."""
    if value is None:
        m: AutogradMeta | None = t.tp_autograd
        if m is not None:
            m.grad = None
        return
    meta_of(t).grad = value


def _del_grad(self: Tensor) -> None:
    _set_grad(self, None)


def _grad_fn(self: Tensor) -> Any:
    m: AutogradMeta | None = self.tp_autograd
    if m is None:
        return None
    if m.grad_fn is not None and m.view is not None and self.tp_version.value != m.view.version:
        refresh_view(self, m)  # Note [Stale views] in inplace.py
    return m.grad_fn


def backward(
    self: Tensor,
    gradient: Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate the gradient of this tensor with respect to the graph leaves into ``.grad``."""
    engine.backward(self, gradient, retain_graph, create_graph, inputs)


def retain_grad(self: Tensor) -> None:
    """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
    if not _requires_grad(self):
        raise RuntimeError(
            "can't retain_grad on Tensor that has requires_grad=False; only tensors computed "
            "from inputs that require grad have a gradient to keep"
        )
    m = meta_of(self)
    if m.grad_fn is None or m.retains_grad:
        return  # leaves keep their grad anyway
    m.retains_grad = True
    ref = weakref.ref(self)

    def keep(g: Tensor) -> None:
        t = ref()
        if t is None:
            return
        tm = meta_of(t)
        if tm.grad is None:
            tm.grad = g.detach().clone()
        else:
            tm.grad = tm.grad + g.detach()

    keep._tp_retains_grad = True  # type: ignore[attr-defined]  # runs after the other hooks
    m.grad_fn._add_pre_hook(m.output_nr, keep)


def _retains_grad(self: Tensor) -> bool:
    m: AutogradMeta | None = self.tp_autograd
    return m is not None and m.retains_grad


def register_hook(self: Tensor, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
    """``hook(grad)`` runs when this tensor's gradient is computed; may return a new one."""
    if not _requires_grad(self):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    m = meta_of(self)
    if m.grad_fn is not None:
        hooks = m.grad_fn._add_pre_hook(m.output_nr, hook)
        return RemovableHandle(hooks, hook)
    if m.hooks is None:
        m.hooks = []
    m.hooks.append(hook)
    return RemovableHandle(m.hooks, hook)


def register_post_accumulate_grad_hook(
    self: Tensor, hook: Callable[[Tensor], None]
) -> RemovableHandle:
    """``hook(tensor)`` runs after a backward pass has accumulated into this leaf's ``.grad``
    (an optimizer step per parameter, as soon as its gradient is ready); its result is ignored."""
    if not _requires_grad(self):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    m = meta_of(self)
    if m.grad_fn is not None:
        raise RuntimeError(
            "post accumulate grad hooks cannot be registered on non-leaf tensors; register "
            "them on the leaves whose .grad they read"
        )
    if m.post_accumulate_hooks is None:
        m.post_accumulate_hooks = []
    m.post_accumulate_hooks.append(hook)
    return RemovableHandle(m.post_accumulate_hooks, hook)


def detach_(self: Tensor) -> Tensor:
    """Detach this tensor from the graph that made it, in place: it becomes a leaf that does
    not require grad (its ``.grad``, if any, stays)."""
    m: AutogradMeta | None = self.tp_autograd
    if m is not None and m.view is not None:
        raise RuntimeError(
            "detach_(): can't detach views in-place: this tensor is a view of a tensor in the "
            "autograd graph, and shares its history. Use detach() instead."
        )
    if self.tp_base is not None:  # refused for every view, as PyTorch, graph or not
        raise RuntimeError(
            "detach_(): can't detach views in-place: this tensor is a view of another tensor. "
            "Use detach() instead."
        )
    if m is not None:
        m.grad_fn = None
        m.output_nr = 0
    self.tp_keyset &= ~M.strip
    return self


def _data(self: Tensor) -> Tensor:
    """The tensor's data without autograd: like ``detach()``, but with a version counter of
    its own (as in PyTorch), so writing through ``.data`` does not invalidate saved tensors."""
    d = self.detach()
    return new_tensor(d.tp_data, d.tp_dtype, d.tp_device, d.tp_keyset)  # a counter of its own


def _set_data(self: Tensor, value: Tensor) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(
            f"Variable data has to be a tensor, but got {type(value).__name__}; assign a Tensor "
            "to .data"
        )
    self.tp_data = value.tp_data
    self.tp_dtype = value.tp_dtype
    self.tp_device = value.tp_device


def repr_suffix(t: Any) -> list[str]:
    if t.tp_keyset & M.fwd:  # a dual tensor shows its tangent at the current level, as torch
        public = dual._Levels.public
        tan = dual.tangent(t, public[-1]) if public else None
        if tan is not None:
            return [*_reverse_suffix(t), f"tangent={tan!r}"]
    return _reverse_suffix(t)


def _reverse_suffix(t: Any) -> list[str]:
    m: AutogradMeta | None = t.tp_autograd
    if m is not None and m.grad_fn is not None:
        return [f"grad_fn=<{m.grad_fn.name()}>"]
    if t.tp_keyset & M.ag:
        return ["requires_grad=True"]
    return []


def _output_nr(self: Tensor) -> int:
    """Which output of its ``grad_fn`` this tensor is (0 for a leaf)."""
    m: AutogradMeta | None = self.tp_autograd
    return 0 if m is None else m.output_nr


METHODS: dict[str, Any] = {
    "requires_grad": property(_requires_grad, _set_requires_grad),
    "requires_grad_": requires_grad_,
    "is_leaf": property(is_leaf),
    "grad": property(_grad, _set_grad, _del_grad),
    "grad_fn": property(_grad_fn),
    "backward": backward,
    "retain_grad": retain_grad,
    "detach_": detach_,
    "retains_grad": property(_retains_grad),
    "register_hook": register_hook,
    "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
    "data": property(_data, _set_data),
    "output_nr": property(_output_nr),
    # not a method: the class default of the plugin's per-tensor state, an AutogradMeta once a
    # tensor takes part in a graph (Note [Autograd state of a tensor] in meta.py)
    "tp_autograd": None,
    # the tangents of a dual tensor, by forward-AD level (Note [Dual tensors] in dual.py)
    "tp_tangents": None,
}
