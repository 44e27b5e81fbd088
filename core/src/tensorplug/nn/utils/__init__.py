"""Utilities over a model's parameters (``tensorplug.nn.utils``), in the image of
``torch.nn.utils``: gradient clipping and flattening parameters into one vector.

Usage::

    loss.backward()
    tp.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
"""

from __future__ import annotations

from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]
