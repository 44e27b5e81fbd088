"""tensorplug-torch-example: a backend ``Torch`` (device type ``"torch"``) whose tensors hold
``torch.Tensor`` arrays, from the template call alone: the template for "your own array
library".

torch is no array API namespace by itself (no ``__array_api_version__``; its ``size`` is a
method, its ``tril_indices`` takes other arguments than numpy's): ``register`` adapts it through
array-api-compat's torch namespace, and the kit's kernels read what they need of any namespace
through the standard, so the whole backend is the call of ``tensorplug.array_backend.register``
with no subclass and no override. torch tensors are strided views of memory, but describe it
with no ``__array_interface__``: the kit treats them as arrays without strides, and
``views=False`` gives PyTorch's view semantics through functionalization
(docs/functionalization.md).
"""

from __future__ import annotations

from typing import Any

import torch

import tensorplug as tp

PLUGIN_API_VERSION = "1.0"  # the tensorplug.PLUGIN_API_VERSION this plugin is written for


@tp.hookimpl
def tensorplug_add_keys(keys: Any) -> None:
    keys.register_backend("Torch", "torch")  # also creates AutogradTorch, AutocastTorch


@tp.hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    tp.array_backend.register(registry, "Torch", torch, views=False)
