"""Utilities over a model's parameters (``tensorplug.nn.utils``), in the image of
``torch.nn.utils``: gradient clipping (``clip_grad_norm_``, ``clip_grad_value_``,
``get_total_norm``, ``clip_grads_with_norm_``), flattening parameters into one vector and
back, parametrizations (``parametrize``, ``parametrizations.weight_norm`` /
``spectral_norm``), the legacy ``weight_norm`` and ``spectral_norm`` hooks,
``stateless.functional_call``, folding an eval-mode batch norm into the layer before it
(``fuse_conv_bn_eval``, ``fuse_linear_bn_eval`` and their ``*_weights``), and the
variable-length sequences of the recurrent layers (``rnn``: ``PackedSequence``,
``pack_padded_sequence``, ``pad_packed_sequence``, ``pad_sequence``, ...).

Usage::

    loss.backward()
    tp.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
"""

from __future__ import annotations

from . import parametrizations, parametrize, rnn, stateless
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "fuse_conv_bn_eval",
    "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "get_total_norm",
    "parameters_to_vector", "parametrizations", "parametrize", "remove_spectral_norm",
    "remove_weight_norm", "rnn", "spectral_norm", "stateless", "vector_to_parameters", "weight_norm",
]  # fmt: skip
