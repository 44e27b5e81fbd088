"""Samples and oracles of the ``nn`` family, one module per part, each filling ``OP_DB`` as it
is imported:

* ``_functions``: softmax and log_softmax, neural network functions, the backward functions,
  the mixed precision training ops and mish;
* ``_optim``: the multi-tensor optimizer operators (``_fused_adam_``, ``_fused_sgd_``, ...);
* ``_attention``: scaled_dot_product_attention and its fused kernels;
* ``_conv``: convolution and its backward, the public convolutions, im2col/col2im and the
  padding operators;
* ``_resample``: the upsampling operators and their backward kernels, the grid samplers and
  their backward kernels, affine_grid_generator, pixel_shuffle and pixel_unshuffle;
* ``_rnn``: the fused recurrent cells and their backward kernels.
"""

from __future__ import annotations

from . import _attention, _conv, _functions, _optim, _resample, _rnn  # noqa: F401
