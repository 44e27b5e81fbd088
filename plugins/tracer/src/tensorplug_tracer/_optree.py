"""optree, imported on first use (as the batched plugin's ``pytree``): importing it (and the
``typing_extensions`` it brings) costs ~15 ms, which ``import tensorplug`` would pay although
only a trace, a compile or a saved graph needs it (issue 34, start-up).

Usage::

    from . import _optree as optree
    leaves, spec = optree.tree_flatten(args)
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    import optree

    return getattr(optree, name)
