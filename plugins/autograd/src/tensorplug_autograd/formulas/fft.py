"""Formulas of the FFT kernels (Note [Formula table], Note [Complex gradients] in _table.py).

PyTorch's (derivatives.yaml and its ``fft_r2c_backward`` / ``fft_c2r_backward``). A discrete
Fourier transform is linear, and the adjoint of the unnormalized transform of one direction is
the unnormalized transform of the other; ``normalization`` is a real factor, the same for a
transform and its adjoint. So:

* ``_fft_c2c``: the transform of the other direction, with the same ``normalization``;
* ``_fft_r2c`` (a real signal; ``onesided`` keeps the first ``n // 2 + 1`` bins of the last
  dim): the dropped bins padded back as zeros, the inverse-direction complex transform, and the
  real part (the input is real);
* ``_fft_c2r`` (a one-sided spectrum, the other half implied by conjugate symmetry): the
  one-sided real-to-complex transform of the gradient, with the bins that also stand for their
  mirror image (1 .. n - (n // 2 + 1)) counted twice.

The ``tensorplug.fft`` functions (``fft``, ``rfft``, ``irfft``, ``fft2``, ``hfft``, ``stft``,
...) are composites of these three kernels, so each gets its gradient from them.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorplug as tp
from tensorplug import Tensor

from ._table import _aten, defderiv

_c2c = _aten._fft_c2c.default
_r2c = _aten._fft_r2c.default


def _r2c_backward(
    g: Tensor, dim: Sequence[int], normalization: int, onesided: bool, last_dim_size: int
) -> Tensor:
    if onesided:
        last = dim[-1] % g.ndim
        missing = last_dim_size - g.shape[last]
        if missing > 0:
            # constant_pad_nd's pad lists the last dim first: (before, after) per dim
            pad = [0] * (2 * (g.ndim - last))
            pad[-1] = missing
            g = tp.constant_pad_nd(g, pad, 0)
    return tp.real(_c2c(g, list(dim), normalization, False))


def _c2r_backward(g: Tensor, dim: Sequence[int], normalization: int) -> Tensor:
    gi = _r2c(g, list(dim), normalization, True)
    last = dim[-1] % g.ndim
    doubled = g.shape[last] - gi.shape[last]
    if doubled <= 0:
        return gi
    n = gi.shape[last]
    # 1, ..., 1 (bin 0), 2 for the doubled bins, 1 after: a factor the graph differentiates
    scale = [1.0] + [2.0] * doubled + [1.0] * (n - 1 - doubled)
    shape = [1] * gi.ndim
    shape[last] = n
    return gi * tp.tensor(scale, dtype=g.dtype, device=g.device).reshape(shape)


defderiv(
    "_fft_c2c",
    self=lambda g, s: _c2c(g, list(s.dim), s.normalization, not s.forward),
)
defderiv(
    "_fft_r2c",
    self=lambda g, s: _r2c_backward(g, s.dim, s.normalization, s.onesided, s.self_shape[s.dim[-1]]),
)
defderiv("_fft_c2r", self=lambda g, s: _c2r_backward(g, s.dim, s.normalization))
