"""``tensorplug.autograd``: the public namespace of the autograd plugin (``tp.autograd``).

Usage::

    import tensorplug as tp
    x = tp.tensor([1.0, 2.0], requires_grad=True)
    (gx,) = tp.autograd.grad((x * x).sum(), x)        # 2 * x
    tp.autograd.gradcheck(tp.sin, (tp.randn([3], dtype=tp.float64, requires_grad=True),))
"""

from __future__ import annotations

from typing import Any

from . import forward_ad, function, functional  # tp.autograd.function.once_differentiable
from . import graph_api as graph  # tp.autograd.graph.saved_tensors_hooks, as in PyTorch
from .engine import backward, grad
from .function import Function, FunctionCtx, register_autograd
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .graph import Node
from .kernels import autograd_not_implemented_fallback

__all__ = [
    "Function",
    "FunctionCtx",
    "Node",
    "autograd_not_implemented_fallback",
    "backward",
    "enable_grad",
    "forward_ad",
    "function",
    "functional",
    "graph",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_grad_enabled",
    "no_grad",
    "register_autograd",
    "set_grad_enabled",
]


def gradcheck(*args: Any, **kwargs: Any) -> bool:
    """Compare analytical gradients with float64 finite differences (see gradcheck.py)."""
    from .gradcheck import gradcheck as check

    return bool(check(*args, **kwargs))


def gradgradcheck(*args: Any, **kwargs: Any) -> bool:
    """Like :func:`gradcheck`, for second derivatives (see gradcheck.py)."""
    from .gradcheck import gradgradcheck as check

    return bool(check(*args, **kwargs))
