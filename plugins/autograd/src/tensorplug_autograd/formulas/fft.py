"""The FFT kernels and the complex constructors and views (Note [Formula table]).

Not differentiable here yet: each of them has a complex input or output, and tensorplug-autograd
records no complex values (complex autograd, with PyTorch's conjugate Wirtinger convention, is
not supported yet: docs/fft.md). PyTorch's formulas (derivatives.yaml: ``_fft_c2c``'s is the
transform of the other direction, ``fft_r2c_backward``, ``fft_c2r_backward``, ``view_as_real``
and ``view_as_complex`` each other's inverse) come with that support; until then their outputs
never require grad, which is what marking them here says.
"""

from __future__ import annotations

from ._table import nondifferentiable

nondifferentiable(
    "_fft_c2c", "_fft_r2c", "_fft_c2r", "view_as_real", "view_as_complex", "complex", "polar"
)
