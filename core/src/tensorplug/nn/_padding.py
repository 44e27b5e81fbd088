"""``pad`` (re-exported by :mod:`tensorplug.nn.functional`): the operator ``aten::pad``, which
picks ``constant_pad_nd``, ``reflection_pad{1,2,3}d``, ``replication_pad{1,2,3}d`` or
``_pad_circular`` by mode (composites/nn.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorplug

from ..tensor import Tensor

__all__ = ["pad"]

_tp: Any = tensorplug  # the generated functions are invisible to the type checker


def pad(
    input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Tensor:
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dimensions:
    ``pad = (last_left, last_right, second_last_left, ...)``.

    ``"constant"`` fills with ``value`` (0 by default) and pads any number of dimensions;
    ``"reflect"`` mirrors without repeating the edge, ``"replicate"`` repeats the edge and
    ``"circular"`` wraps around, on the last 1, 2 or 3 dimensions of an input with one or two
    more (PyTorch's combinations). Each mode is one operator with its own backward, so the
    gradient adds up where an element is used twice, as PyTorch's does.
    """
    r: Tensor = _tp.ops.aten.pad.default(input, [int(p) for p in pad], mode, value)
    return r
