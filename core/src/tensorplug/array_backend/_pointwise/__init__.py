"""The ``pointwise`` family of the array kit: kernels that compute each output element from the
elements at the same position of their (broadcast) operands.

* ``_binary``: add, sub, mul, div, pow, remainder, ..., comparisons, logical and bitwise ops;
* ``_unary``: neg, abs, exponentials, logarithms, trigonometric functions, activations,
  rounding, predicates (isnan, ...);
* ``_where``: clamp, where, masked_fill;
* ``_complex``: complex, polar, angle and the complex views view_as_real / view_as_complex
  (Note [Complex views] there);
* ``_numeric``: numpy's numeric functions PyTorch has too: gcd, lcm, the bitwise shifts,
  copysign, logaddexp / logaddexp2, nextafter, frexp, logical_xor;
* ``_copy``: the copies and conversions _to_copy, clone, copy_, fill_ (and _local_scalar_dense,
  ``item()``);

each with its in-place and ``out=`` forms, made by the builders of ``_elementwise`` (Note
[Binary fast path] there) from the dtype rules of ``_rules``. :data:`PARTS` are the modules
``register`` builds (one ``build(kit)`` each).
"""

from __future__ import annotations

from . import _binary, _complex, _copy, _numeric, _unary, _where

PARTS = (_binary, _unary, _where, _copy, _complex, _numeric)
