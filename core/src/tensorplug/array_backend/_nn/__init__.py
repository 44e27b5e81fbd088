"""The ``nn`` family of the array kit: the kernels of ``torch.nn.functional``'s operators.

* ``_functions``: softmax and log_softmax, the losses nll_loss and binary_cross_entropy, and the
  mixed precision training operators (``_amp_*``);
* ``_optim``: the multi-tensor optimizer operators (``_fused_adam_``, ``_fused_sgd_``, ...);
* ``_attention``: the fused attention of ``scaled_dot_product_attention`` and its backward;
* ``_conv``: convolution and convolution_backward, im2col and col2im (``F.unfold``/``F.fold``);
* ``_pad``: constant_pad_nd, reflection_pad1d/2d/3d and replication_pad1d/2d/3d (``F.pad``);
* ``_resample``: the upsampling operators and their backward kernels, the grid samplers and
  their backward kernels, pixel_shuffle and pixel_unshuffle;
* ``_pooling``: max, average and adaptive pooling, their backward kernels, max unpooling;
* ``_norms``: batch and group normalization and their backward kernels;
* ``_layer_norm``: layer normalization and its backward kernel;
* ``_rnn``: the fused LSTM and GRU cells and their backward kernels;
* ``_rnn_layer``: a whole LSTM or GRU layer over a sequence, packed or not, and its backward
  (``mkldnn_rnn_layer``);

:data:`PARTS` are the modules ``register`` builds (one ``build(kit)`` each).
"""

from __future__ import annotations

from . import (
    _attention,
    _conv,
    _functions,
    _layer_norm,
    _norms,
    _optim,
    _pad,
    _pooling,
    _resample,
    _rnn,
    _rnn_layer,
)
from ._functions import (
    check_nll_weight,
    check_reduction,
    class_hits,
    floating,
    lazy_pick_and_count,
    nll_target,
)

PARTS = (
    _functions,
    _optim,
    _attention,
    _conv,
    _pad,
    _resample,
    _pooling,
    _norms,
    _layer_norm,
    _rnn,
    _rnn_layer,
)

__all__ = [
    "PARTS",
    "check_nll_weight",
    "check_reduction",
    "class_hits",
    "floating",
    "lazy_pick_and_count",
    "nll_target",
]
