"""Derivative formulas of the standard operators: the role of PyTorch's derivatives.yaml.

Note [Formula table]
~~~~~~~~~~~~~~~~~~~~
``FORMULAS`` maps an overload name of native_functions.yaml (``"mul.Tensor"``, ``"neg"`` for an
empty overload) to a dict: differentiable input argument name -> ``fn(g, s)`` returning that
input's gradient. A tuple of names maps to one ``fn`` returning a tuple of gradients in that
order (for formulas that share work, like ``layer_norm``).

* ``g`` is the gradient of the output. For ops with several outputs (``max.dim``, ``split``),
  ``g`` is a tuple with one gradient per output; outputs that received none get zeros.
* ``s`` holds the forward call: ``s.<arg>`` is the argument (a tensor, list, or Python value),
  ``s.result`` the output (a tuple for several outputs), ``s.<arg>_shape`` / ``s.<arg>_dtype``
  the shape and dtype of a tensor argument, readable without saving the tensor.
  ``s.grad_input_mask`` (derivatives.yaml's name) tells, per differentiable input in schema
  order, whether its gradient is needed: a formula that computes several in one kernel
  (``convolution``'s ``convolution_backward``) asks only for those.
  A tensor argument (or the result) is saved for backward only when the formula's code names it
  (``s.self`` saves ``self``; ``s.self_shape`` does not). Saved tensors are checked against
  their version counter when read (Note [Saved tensors] in saved.py), so write the formula to
  read them directly as ``s.<name>`` in its own body.
* The returned gradient may be ``None`` (zero), and may have a shape that broadcasts to the
  input's: the engine sums broadcast dimensions away and casts to the input's dtype, as
  PyTorch's ``validate_outputs`` does. A ``Tensor[]`` input gets a list.
* Formulas call only public tensorplug operations, so a backward pass run with
  ``create_graph=True`` records its own graph and higher derivatives work.

In-place variants (``add_.Tensor``) and ``out=`` variants (``add.out``) use the entry of their
functional overload (for in-place ones, the overload of the same arguments, as torchgen pairs
them: ``pow_.Scalar(self, Scalar exponent)`` uses ``pow.Tensor_Scalar``'s); for in-place ones ``s.self`` is the value *before* the op (cloned first,
only when the formula names it) and ``s.result`` the value after. CompositeImplicitAutograd ops
have no entry: autograd sees the operators they decompose into. In-place ops whose functional
form is composite or absent (``index_put_``, ``copy_``, ``fill_.Scalar``) have entries of their
own.

``NON_DIFFERENTIABLE`` lists overloads whose outputs never require grad (comparisons, indices,
factories). ``SAVED_OUTPUTS`` names the outputs a multi-output op's formula reads, where it
reads fewer than all (Note [Saved outputs] in _table.py). ``OUTPUT_DIFFERENTIABILITY`` marks which outputs of a multi-output op are
differentiable (``max.dim``: the values, not the indices).

Note [Zero gradients]
~~~~~~~~~~~~~~~~~~~~~
Where PyTorch's derivatives.yaml writes ``zeros_like(grad)`` (``sign``, rounding divisions,
``fill_``) the formula returns real zeros, not ``None``: ``tp.autograd.grad`` then returns zeros
for that input as PyTorch does, instead of reporting it unused. Where PyTorch marks an op
not differentiable (``floor_divide``, comparisons) it is in ``NON_DIFFERENTIABLE``.

Note [Reading s in the formula body]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The kernel decides what to save from the names a formula's own code reads, so every formula
(in the family modules ``pointwise``, ``reductions``, ``shape``, ``indexing``, ``linalg`` (and
``linalg_solvers``, the factorizations of ``torch.linalg``),
``nn``, ``random``, ``factories``, ``special`` and ``fft``, which fill the table when this package is imported;
``_table`` holds the table and the helpers they share) reads the ``s.<name>`` it needs in its
lambda and passes the values on to the ``_helper`` that does the work; a helper never
receives ``s``.
"""

from __future__ import annotations

# one module per op family (the layout of every place an op lives), each filling the table
from . import (  # noqa: F401
    factories,
    fft,
    indexing,
    linalg,
    linalg_solvers,
    nn,
    pointwise,
    random,
    reductions,
    shape,
    special,
)
from ._table import FORMULAS, NON_DIFFERENTIABLE, OUTPUT_DIFFERENTIABILITY, SAVED_OUTPUTS

__all__ = ["FORMULAS", "NON_DIFFERENTIABLE", "OUTPUT_DIFFERENTIABILITY", "SAVED_OUTPUTS"]
