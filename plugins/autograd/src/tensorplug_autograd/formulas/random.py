"""Formulas of the random draws (Note [Formula table])."""

from __future__ import annotations

from ._table import (
    _zeros,
    defderiv,
    nondifferentiable,
)

# --- random draws --------------------------------------------------------------------------------

nondifferentiable("rand", "randn", "randint", "randint.low")

# Random draws: PyTorch's derivatives.yaml gives normal zero gradients for mean and std (no
# reparameterization), bernoulli a zero gradient for p, and the in-place fills zeros for the old
# values (as fill_); the sampled indices of randperm and multinomial are not differentiable.
nondifferentiable("randperm", "normal.float_float", "multinomial")
defderiv("normal.Tensor_float", mean=lambda g, s: _zeros(g, s.mean_shape))
defderiv("normal.float_Tensor", std=lambda g, s: _zeros(g, s.std_shape))
defderiv(
    "normal.Tensor_Tensor",
    mean=lambda g, s: _zeros(g, s.mean_shape),
    std=lambda g, s: _zeros(g, s.std_shape),
)
defderiv("bernoulli", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("bernoulli.p", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("bernoulli_.float", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("uniform_", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("normal_", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("exponential_", self=lambda g, s: _zeros(g, s.self_shape))
for _fill in ("random_", "random_.from", "random_.to"):
    defderiv(_fill, self=lambda g, s: _zeros(g, s.self_shape))
defderiv("poisson", self=lambda g, s: _zeros(g, s.self_shape))

# --- cauchy_, log_normal_, geometric_ (issue 29): zeros for the old values, as the other fills --
defderiv("cauchy_", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("log_normal_", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("geometric_", self=lambda g, s: _zeros(g, s.self_shape))
