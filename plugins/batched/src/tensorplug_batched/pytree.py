"""optree, imported on first use: importing it costs a tenth of a second or more, and most vmap
calls (tensors in, tensors out: Note [vmap fast path] in vmap.py) never need it.

Usage::

    from . import pytree
    leaves, spec = pytree.tree_flatten(args, none_is_leaf=True)
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    import optree

    return getattr(optree, name)
