"""DLPack exchange (``torch.utils.dlpack``): ``to_dlpack(tensor)`` gives a DLPack capsule of a
tensor's memory, ``from_dlpack(obj)`` a tensor sharing the memory of an object with
``__dlpack__`` (a numpy or CuPy array, a torch tensor) or of a capsule (Note [Memory sharing]
in tensorplug/_opset/interop.py, docs/interop.md).

Usage::

    from tensorplug.utils.dlpack import from_dlpack, to_dlpack
    t = from_dlpack(np.arange(3.0))        # shares the array's memory
    capsule = to_dlpack(t)                 # for a consumer that takes capsules
"""

from __future__ import annotations

from typing import Any

from .._opset.interop import DLDeviceType, from_dlpack
from ..tensor import Tensor

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule (unversioned, "dltensor") of ``tensor``'s memory."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack: expected a tensorplug.Tensor, got {type(tensor).__name__}")
    return tensor.__dlpack__()
