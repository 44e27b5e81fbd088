"""The operators of the ``tensorplug`` namespace: tensorplug's own, not PyTorch's (internal).

Note [tensorplug operators]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
The ``aten`` namespace holds PyTorch's operators under PyTorch's names and schemas
(native_functions.yaml); an operator PyTorch does not have goes here instead, in the
``tensorplug`` namespace (``tp.ops.tensorplug.<name>``), so that no ``aten`` name means
something PyTorch's does not. Each has a ``CompositeExplicitAutograd`` kernel written with
``aten`` operators (every backend without a kernel of its own, Meta and third-party ones
included, stays correct) and backend kernels where they pay; none has a public function.

* ``cross_entropy_loss_backward(grad_output, log_probs, target, reduction, ignore_index)``:
  the gradient of ``cross_entropy`` (class-index targets, no class weights, no label
  smoothing) with respect to its input, given the log-softmax of the forward (``log_probs``;
  1-D: the classes, 2-D: batch x classes). The composite is
  ``_log_softmax_backward_data(nll_loss_backward(...), log_probs, dim, dtype)``; the array
  kit's kernel computes ``exp(log_probs) * c`` less ``c`` at the targets (``c`` the scaled
  gradient) in one pass, the same bits (Note [Fused cross-entropy backward] in
  array_backend/_backward.py). The autograd plugin's ``CrossEntropyLossBackward0`` calls it
  while the backward pass records nothing; it has no derivative formula (with
  ``create_graph`` the node runs the two differentiable operators instead).
* ``linear_forward(input, weight, bias=None)``: ``aten::linear``'s value; its composite is
  ``linear``'s own decomposition (``t``, then ``addmm``, or ``matmul`` and ``add``). The array
  kit computes it from the weight itself, without a transposed weight tensor, with the same
  bits (Note [Linear forward] in array_backend/_linalg.py). The autograd plugin's ``linear``
  kernel computes its forward with it below autograd; ``aten::linear`` stays
  CompositeImplicitAutograd, so vmap, the tracer and autocast see it as before. It has no
  derivative formula.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import composites
from ._library import Library

__all__ = ["install"]

SCHEMAS: dict[str, tuple[str, Callable[..., Any]]] = {
    "cross_entropy_loss_backward": (
        "cross_entropy_loss_backward(Tensor grad_output, Tensor log_probs, Tensor target, "
        'str reduction="mean", int ignore_index=-100) -> Tensor',
        composites.cross_entropy_loss_backward,
    ),
    "linear_forward": (
        "linear_forward(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
        composites.linear,
    ),
}

_library: Library | None = None


def install() -> Library:
    """Define the ``tensorplug`` operators (once; ``import tensorplug`` does it)."""
    global _library
    if _library is None:
        lib = Library("tensorplug", "DEF", owner="tensorplug")
        for schema, composite in SCHEMAS.values():
            op = lib.define(schema)
            lib.impl(op, composite, "CompositeExplicitAutograd")
        _library = lib
    return _library
