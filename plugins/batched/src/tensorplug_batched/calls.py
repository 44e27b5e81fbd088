"""What every kernel of the ``Batched`` key does with a call: find the level it handles, pass
a call with nothing batched straight down, wrap a logical dimension, and raise PyTorch's error
for writing batched values into an unbatched tensor. The batching rules (rules/), the loop
fallback (fallback.py), custom rules (custom.py) and ``vmap`` itself share them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import tensorplug as tp

from .batched import BatchedTensor

__all__ = ["inplace_error", "passdown", "top_level", "wrap_dim"]


def top_level(args: Iterable[Any]) -> int:
    """The highest level among the tensors of ``args`` (and of lists in it); 0: none batched."""
    lvl = 0
    for a in args:
        t = type(a)
        if t is BatchedTensor:
            if a.level > lvl:
                lvl = a.level
        elif t is list or t is tuple:
            for b in a:
                if type(b) is BatchedTensor and b.level > lvl:
                    lvl = b.level
    return lvl


def passdown(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``op`` below ``Batched``: what a rule does when none of its inputs is batched."""
    with tp.dispatch.exclude("Batched"):
        return op(*args, **kwargs)


def inplace_error(op: Any) -> RuntimeError:
    """PyTorch's error for writing a batched value into a tensor that is not batched."""
    return RuntimeError(
        "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
        "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
        "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to "
        "use out-of-place operators instead of inplace arithmetic. If said operator is being "
        f"called inside the PyTorch framework, please file a bug report instead. ({op.name})"
    )


def wrap_dim(dim: int, ndim: int, op: Any = None) -> int:
    """A logical dimension in ``[0, ndim)`` (0-d tensors take 0 and -1): PyTorch's message,
    after the name of ``op`` when given, as the kernels say it."""
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        prefix = f"{op.name}: " if op is not None else ""
        raise IndexError(
            f"{prefix}Dimension out of range (expected to be in range of [{lo}, {hi}], but got "
            f"{dim})"
        )
    if ndim == 0:
        return 0
    return dim + ndim if dim < 0 else dim
