"""What ``nn`` and ``optim`` need from the autograd plugin, and how they do without it (internal).

Note [nn without autograd]
~~~~~~~~~~~~~~~~~~~~~~~~~~
``tensorplug.nn`` and ``tensorplug.optim`` are written against PyTorch's autograd API, which the
tensorplug-autograd plugin provides (``requires_grad_``, ``grad``, ``no_grad``, ...). Without the
plugin they still serve inference:

- a ``Parameter`` is a plain tensor: ``requires_grad_`` raises ``MissingPluginError``, so it is
  not asked (:func:`set_requires_grad` returns False instead);
- ``no_grad()`` / ``enable_grad()`` are ``contextlib.nullcontext()`` — there is no graph to keep
  out of;
- an optimizer's ``step()`` skips every parameter whose ``grad`` is None: all of them.

The plugin is looked up at each call, never cached at import: it can be registered and
unregistered while the process runs (``tensorplug.plugins.register`` / ``unregister``).
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager
from typing import Any

import tensorplug

from ..errors import MissingPluginError
from ..ops import ops
from ..tensor import Tensor

__all__ = ["enable_grad", "no_grad", "reset_grad", "set_requires_grad"]


def _grad_mode(name: str) -> AbstractContextManager[Any]:
    # vars(), not getattr(): tensorplug.__getattr__ raises MissingPluginError for these names
    factory = vars(tensorplug).get(name)
    return contextlib.nullcontext() if factory is None else factory()


def no_grad() -> AbstractContextManager[Any]:
    """``tensorplug.no_grad()``, or a null context without the autograd plugin."""
    return _grad_mode("no_grad")


def enable_grad() -> AbstractContextManager[Any]:
    """``tensorplug.enable_grad()``, or a null context without the autograd plugin."""
    return _grad_mode("enable_grad")


def set_requires_grad(t: Tensor, requires_grad: bool) -> bool:
    """``t.requires_grad_(requires_grad)``; False (and ``t`` unchanged) without the plugin."""
    if not requires_grad and not t.requires_grad:
        return True
    try:
        t.requires_grad_(requires_grad)
    except MissingPluginError:
        return False
    return True


def reset_grad(t: Tensor, set_to_none: bool) -> None:
    """Clear ``t.grad``: set it to None, or zero it in place. Without the plugin there is
    none to clear; ``grad`` is only ever read, and only ever set to None."""
    grad = getattr(t, "grad", None)
    if grad is None:
        return
    if set_to_none:
        t.grad = None
    else:
        with no_grad():
            ops.aten.zero_.default(grad)
