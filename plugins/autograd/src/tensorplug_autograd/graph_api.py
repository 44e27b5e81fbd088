"""``tensorplug.autograd.graph``: the graph's public names, as ``torch.autograd.graph`` has them:
:class:`Node` (a tensor's ``grad_fn``) and :class:`saved_tensors_hooks` (Note [Saved tensor
hooks] in saved.py), and :func:`assign_grad` (``t.grad = g`` without the setter's checks, for
callers that have proven them: a compiled step).

Usage::

    def pack(t):
        return t.cpu()              # keep saved values elsewhere

    def unpack(t):
        return t

    with tp.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = model(x)
    y.sum().backward()
"""

from __future__ import annotations

from .graph import Node
from .saved import saved_tensors_hooks
from .tensor_api import assign_grad

__all__ = ["Node", "assign_grad", "saved_tensors_hooks"]
