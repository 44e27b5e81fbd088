"""Neural network building blocks (``tensorplug.nn``), in the image of ``torch.nn``.

Modules, containers, parameters, initializers, losses and gradient utilities (``nn.utils``)
written purely in terms of tensorplug's public operators: they run on every backend, are
differentiated by the autograd plugin, traced by the tracer and batched by vmap like any other
code. Without tensorplug-autograd they still serve inference (Note [nn without autograd] in
_autograd.py). ``import tensorplug`` does not import this package; the first
``tensorplug.nn`` does.

Usage::

    import tensorplug as tp
    from tensorplug import nn

    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))
    loss = nn.CrossEntropyLoss()(model(x), y)
    opt = tp.optim.Adam(model.parameters(), lr=1e-2)
"""

from __future__ import annotations

from . import functional, init, modules, utils
from .activation import (
    ELU,
    GELU,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Tanh,
)
from .container import ModuleDict, ModuleList, Sequential
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .identity import Identity
from .lazy import LazyLinear, LazyModuleMixin, UninitializedBuffer, UninitializedParameter
from .linear import Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .normalization import LayerNorm
from .parameter import Parameter
from .parameter_containers import ParameterDict, ParameterList
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .sparse import Embedding
from .transformer import (
    MultiheadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "ELU", "Embedding", "Flatten",
    "GELU", "Hardtanh", "HuberLoss", "Identity", "KLDivLoss", "L1Loss", "LayerNorm", "LazyLinear",
    "LazyModuleMixin", "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MSELoss", "Module",
    "ModuleDict", "ModuleList", "MultiheadAttention", "NLLLoss", "Parameter", "ParameterDict",
    "ParameterList", "PixelShuffle", "PixelUnshuffle", "ReLU", "ReLU6", "Sequential", "SiLU",
    "Sigmoid", "SmoothL1Loss", "Softmax", "Softmin", "Softplus", "Tanh", "Transformer",
    "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerEncoderLayer", "Unflatten", "UninitializedBuffer", "UninitializedParameter",
    "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "functional", "init", "modules",
    "utils",
]  # fmt: skip
