"""The factories (never differentiable) and the copies and conversions (Note [Formula table])."""

from __future__ import annotations

from ._table import (
    _zeros,
    defderiv,
    nondifferentiable,
)

# --- factories -----------------------------------------------------------------------------------

nondifferentiable(
    "zeros",
    "ones",
    "empty.memory_format",
    "full",
    "arange",
    "arange.start_step",
    "linspace",
    "logspace",
    "eye",
    "eye.m",
    "tril_indices",
    "triu_indices",
)

# --- copies and conversion -----------------------------------------------------------------------

defderiv("_to_copy", self=lambda g, s: g.to(dtype=s.self_dtype, device=s.self_device))
defderiv("clone", self=lambda g, s: g)
defderiv(
    "copy_",
    self=lambda g, s: _zeros(g, s.self_shape),
    src=lambda g, s: g.to(device=s.src_device),
)
defderiv("fill_.Scalar", self=lambda g, s: _zeros(g, s.self_shape))
nondifferentiable("detach", "_local_scalar_dense")
