"""PyTorch's memory-overlap checks for written tensors (internal).

Note [Memory overlap]
~~~~~~~~~~~~~~~~~~~~~
PyTorch refuses a write whose destination partially overlaps one of the op's inputs
(``x[1:].add_(x[:4])``, ``tp.add(a, b, out=a[1:])``, ``y.copy_(y.flip(0))`` on one buffer) with
"unsupported operation: some elements of the input tensor and the written-to tensor refer to a
single memory location. Please clone() the tensor before performing the operation." A full
overlap (the destination *is* the input: ``x.add_(x)``, ``tp.abs(x, out=x)``) is allowed, and
so are layouts whose overlap is too hard to decide cheaply (PyTorch's ``TOO_HARD``).

The check is PyTorch's ``get_overlap_status``: two dense arrays of one buffer overlap when
their byte ranges intersect, fully when they start at the same address with the same shape and
strides. It is made only for arrays that expose their address cheaply (NumPy's
``__array_interface__``: the CPU backend); a backend whose arrays do not is not checked. Its
cost on a call without aliasing is one attribute read per operand and a range compare; it is
never made on the public functions' fast path of ops without a written argument.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._op_errors import OpError
from ..tensor import Tensor

__all__ = ["check_no_overlap", "overlap_error", "partially_overlap"]


def _bounds(a: Any) -> tuple[int, int, tuple[int, ...], tuple[int, ...]] | None:
    """(start, end, shape, strides) of a dense array that exposes its address, else None."""
    try:
        info = a.__array_interface__
    except AttributeError:
        return None
    flags = a.flags
    if not (flags.c_contiguous or flags.f_contiguous) or a.size == 0:
        return None
    start = info["data"][0]
    return start, start + a.nbytes, a.shape, a.strides


def partially_overlap(a: Any, b: Any) -> bool:
    """Whether arrays ``a`` and ``b`` share some but not all of their memory (Note [Memory
    overlap]); ``False`` when that cannot be told cheaply."""
    if a is b:
        return False
    ba = _bounds(a)
    if ba is None:
        return False
    bb = _bounds(b)
    if bb is None:
        return False
    if ba[0] < bb[1] and bb[0] < ba[1]:
        return ba != bb
    return False


def overlap_error(name: str) -> OpError:
    return OpError(
        f"{name}: unsupported operation: some elements of the input tensor and the written-to "
        "tensor refer to a single memory location. Please clone() the tensor before performing "
        "the operation."
    )


def check_no_overlap(
    name: str, written: Iterable[Tensor], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """Raise PyTorch's error when a written tensor partially overlaps an input tensor."""
    for w in written:
        if not isinstance(w, Tensor):
            continue
        wd = w._data
        for a in (*args, *kwargs.values()):
            if isinstance(a, Tensor):
                if a is not w and partially_overlap(wd, a._data):
                    raise overlap_error(name)
            elif type(a) is list or type(a) is tuple:
                for x in a:
                    if isinstance(x, Tensor) and x is not w and partially_overlap(wd, x._data):
                        raise overlap_error(name)
