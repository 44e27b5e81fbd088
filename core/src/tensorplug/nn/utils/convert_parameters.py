"""Parameters as one flat vector and back: ``parameters_to_vector``, ``vector_to_parameters``."""

from __future__ import annotations

from collections.abc import Iterable

from ...ops import ops
from ...tensor import Tensor
from .._autograd import no_grad

__all__ = ["parameters_to_vector", "vector_to_parameters"]

_aten = ops.aten


def _check_same_device(params: list[Tensor]) -> None:
    """PyTorch's check: all the parameters on one device (the functions do not move them)."""
    devices = {p.device for p in params if isinstance(p, Tensor)}
    if len(devices) > 1:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported. "
            f"(devices: {', '.join(sorted(str(d) for d in devices))}; move the parameters "
            "to one device first)"
        )


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated, in order, into one new 1-d tensor; they
    must all be on one device.

    An ordinary operator call (``cat`` of ``reshape``\\ s): gradients flow back through it.
    """
    params = list(parameters)
    _check_same_device(params)
    r: Tensor = _aten.cat.default([_aten.reshape.default(p, [-1]) for p in params])
    return r


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-d ``vec`` into the parameters, in place, in order.

    PyTorch instead rebinds each ``param.data`` to a view of ``vec``; copying keeps each
    parameter's own storage, so optimizers and views of the parameters see the new values.
    """
    if not isinstance(vec, Tensor):
        raise TypeError(
            f"vector_to_parameters: vec must be a tensorplug.Tensor, not a {type(vec).__name__}"
        )
    if vec.dim() != 1:
        raise ValueError(f"vector_to_parameters: vec must be 1-d, but has shape {list(vec.shape)}")
    params = list(parameters)
    _check_same_device(params)
    needed = sum(p.numel() for p in params)
    if vec.numel() != needed:
        raise ValueError(
            f"vector_to_parameters: vec has {vec.numel()} elements, but the parameters have "
            f"{needed} in all"
        )
    start = 0
    with no_grad():
        for p in params:
            n = p.numel()
            piece = _aten.slice.Tensor(vec, 0, start, start + n)
            _aten.copy_.default(p, _aten.reshape.default(piece, list(p.shape)))
            start += n
