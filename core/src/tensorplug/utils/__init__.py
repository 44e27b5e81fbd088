"""Utilities for training (``tensorplug.utils``), in the image of ``torch.utils``.

- :mod:`tensorplug.utils.data`: datasets, samplers, ``default_collate`` and ``DataLoader``
  (worker processes that hand CPU tensors over in shared memory; docs/data.md);
- :mod:`tensorplug.utils.checkpoint`: activation checkpointing (``checkpoint``,
  ``checkpoint_sequential``): recompute a piece of the forward in backward to save memory;
- :mod:`tensorplug.utils.dlpack`: ``to_dlpack`` / ``from_dlpack`` (``torch.utils.dlpack``).

``import tensorplug`` does not import this package; the first ``tensorplug.utils`` does, and
each submodule is imported on its first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["checkpoint", "data", "dlpack"]

_SUBMODULES = frozenset(__all__)
if TYPE_CHECKING:
    from . import checkpoint, data, dlpack


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'tensorplug.utils' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})
