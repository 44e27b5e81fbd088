"""The batching rules of the standard operators, one module per op family.

Each family module fills the one rule table (table.py) with its ``def*`` helpers and
``defrule`` makers when it is imported: pointwise.py (built from the yaml's ``pointwise`` tag),
reductions.py, shape.py, indexing.py, linalg.py, nn.py, random.py, factories.py and fft.py.
Composite operators (``CompositeImplicitAutograd``: ``linear``, ``flatten``, ``layer_norm``
...) need no rule: the fallback runs their decomposition on the batched tensors (fallback.py).
"""

from __future__ import annotations

from . import factories, fft, indexing, linalg, nn, pointwise, random, reductions, shape
from .random import register_vmap_mode
from .table import RULES, register_all

__all__ = [
    "RULES",
    "factories",
    "fft",
    "indexing",
    "linalg",
    "nn",
    "pointwise",
    "random",
    "reductions",
    "register_all",
    "register_vmap_mode",
    "shape",
]
