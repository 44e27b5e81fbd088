"""The Autograd kernels of the in-place view operators (``squeeze_``, ``unsqueeze_``,
``transpose_``; ``t_`` and ``swapaxes_`` decompose into ``transpose_``).

Note [In-place views]
~~~~~~~~~~~~~~~~~~~~~
``y.squeeze_()`` changes ``y``'s shape, not its values: afterwards ``y`` is what ``y.squeeze()``
would have returned. The in-place machinery (inplace.py) cannot record that: it keeps ``y``'s
place in its base and its input metadata, which the shape change invalidates. So the kernel
records the out-of-place view op on ``y``, then makes ``y`` that view: its array (the same
memory, the new shape) and its history. A tensor that was itself a view of a base that
requires grad takes the view's view information, so later in-place writes reach the base; a
tensor that was no view stays none (PyTorch's ``y._base`` is None after ``y.squeeze_()``). A
leaf that requires grad is refused, as PyTorch refuses it. The version counter moves on, as
for every in-place op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplug as tp
from tensorplug.tensor import Tensor

from .masks import M
from .meta import is_leaf, meta_of

__all__ = ["INPLACE_VIEWS", "inplace_view_kernel"]

_aten = tp.ops.aten

# the in-place view op (its short name) -> the view op it makes self into
INPLACE_VIEWS: dict[str, Any] = {
    "squeeze_": _aten.squeeze.default,
    "squeeze_.dim": _aten.squeeze.dim,
    "unsqueeze_": _aten.unsqueeze.default,
    "transpose_": _aten.transpose.int,
}


def inplace_view_kernel(name: str, view_op: Any) -> Callable[..., Tensor]:
    """The Autograd kernel of ``aten::<name>`` (Note [In-place views])."""

    def inplace_view(self: Tensor, *args: Any) -> Tensor:
        m = self.tp_autograd
        if self.tp_keyset & M.ag and is_leaf(self) and (m is None or m.view is None):
            raise RuntimeError(
                f"aten::{name}: a leaf Variable that requires grad is being used in an in-place "
                "operation. Do it under tp.no_grad(), or on a clone()."
            )
        out = view_op(self, *args)  # recorded: its grad_fn leads to self's history
        self.tp_data = out.tp_data
        version = self.tp_version
        version.value += 1
        om = out.tp_autograd
        if om is None:
            return self
        m = meta_of(self)
        m.grad_fn, m.output_nr = om.grad_fn, om.output_nr
        self.tp_keyset |= out.tp_keyset & M.strip
        view = om.view
        if view is not None and view.base is not self:
            view.version = version.value
            m.view = view
        return self

    inplace_view.__name__ = inplace_view.__qualname__ = f"inplace_view[{name}]"
    return inplace_view
