"""The factories: never differentiable (Note [Formula table])."""

from __future__ import annotations

from ._table import nondifferentiable

# --- factories -----------------------------------------------------------------------------------

nondifferentiable(
    "zeros",
    "ones",
    "empty.memory_format",
    "empty_strided",
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
