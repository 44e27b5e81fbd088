"""The kernel of a derived ``out=`` overload (internal): Note [Derived out= overloads] in
_opset/native.py.

PyTorch's structured kernels compute the result, then ``resize_output`` and copy it into each
out; the rules reproduced here, in that order:

* an out on another device than the result: ``RuntimeError``;
* a result dtype that cannot be cast to the out's (``can_cast``, PyTorch's rule: no float
  into an integer out, no complex into a real one): ``RuntimeError("result type Float can't be
  cast to the desired output type Long")``;
* an out of another shape is resized to the result's; one that had elements gets PyTorch's
  ``UserWarning`` ("An output with one or more elements was resized ..."), an empty one
  (``tp.empty(0)``) none;
* an out whose memory overlaps an input's: PyTorch's "unsupported operation: some elements
  of the input tensor and the written-to tensor refer to a single memory location" error
  (_opset/overlap.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .. import dtypes as _dtypes
from .._op_errors import OpError, torch_name
from ..dispatcher import OpOverload
from ..ops import ops
from ..tensor import Tensor
from .overlap import check_no_overlap

__all__ = ["out_kernel", "write_out"]

_OPTIONS = ("dtype", "device")


def out_kernel(
    op: OpOverload, functional: OpOverload, outs: list[str], dropped: list[str]
) -> Callable[..., Any]:
    """``op``'s ``CompositeExplicitAutograd`` kernel: ``functional``, then the results written
    into the outs ``outs`` (keyword arguments); ``dropped`` names the functional's arguments
    the out form takes from the out (a factory's dtype and device)."""
    name = op.name
    single = len(outs) == 1
    options = [o for o in _OPTIONS if o in dropped]

    def kernel(*args: Any, **kwargs: Any) -> Any:
        targets = [kwargs.pop(o) for o in outs]
        for o in options:
            kwargs[o] = getattr(targets[0], o)
        check_no_overlap(name, targets, args, kwargs)
        r = functional(*args, **kwargs)
        results = (r,) if single else tuple(r)
        for arg, t, v in zip(outs, targets, results, strict=True):
            write_out(name, arg, t, v)
        return targets[0] if single else tuple(targets)

    return kernel


def write_out(name: str, arg: str, out: Tensor, value: Tensor) -> None:
    """Write ``value`` into the out ``out`` (argument ``arg`` of op ``name``), resized and
    cast by PyTorch's rules (this module's docstring)."""
    if value.device != out.device:
        raise OpError(
            f"{name}: Expected out tensor to have device {value.device}, but got "
            f"{out.device} instead (argument '{arg}')"
        )
    if not _dtypes.can_cast(value.dtype, out.dtype):
        raise OpError(
            f"{name}: result type {torch_name(value.dtype)} can't be cast to the desired "
            f"output type {torch_name(out.dtype)} (argument '{arg}'); pass an out of dtype "
            f"{value.dtype}"
        )
    if tuple(out.shape) != tuple(value.shape):
        if out.numel() != 0:
            warnings.warn(
                f"{name}: An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(value.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).",
                UserWarning,
                stacklevel=2,
            )
        cast = (
            value if value.dtype is out.dtype else ops.aten._to_copy.default(value, dtype=out.dtype)
        )
        out._data = ops.aten.clone.default(cast)._data if cast is value else cast._data
        return
    ops.aten.copy_.default(out, value)
