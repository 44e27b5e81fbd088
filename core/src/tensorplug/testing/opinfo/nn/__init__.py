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
* ``_pooling``: max, average and adaptive pooling, their backward kernels, max unpooling;
* ``_fractional``: fractional max pooling and its backward kernels;
* ``_norms``: batch, instance, group and RMS normalization and their kernels, the feature and
  alpha dropouts;
* ``_layer_norm``: native_layer_norm and its backward kernel;
* ``_activations``: the composite activations (prelu, celu, selu, ..., channel_shuffle);
* ``_embedding``: embedding_bag;
* ``_rnn``: the fused recurrent cells and their backward kernels;
* ``_rnn_layer``: a whole LSTM layer over a sequence and its backward.
"""

from __future__ import annotations

from . import (  # noqa: F401
    _activations,
    _attention,
    _conv,
    _embedding,
    _fractional,
    _functions,
    _layer_norm,
    _norms,
    _optim,
    _pooling,
    _resample,
    _rnn,
    _rnn_layer,
)  # fmt: skip
