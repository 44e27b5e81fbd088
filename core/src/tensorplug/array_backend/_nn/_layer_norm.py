"""Part ``layer_norm`` of the ``nn`` family of the array kit: layer normalization and its
backward as one kernel each (PyTorch's schemas):

* ``native_layer_norm(input, normalized_shape, weight, bias, eps)`` returns ``(out, mean,
  rstd)``, the statistics shaped like the input with the normalized dims kept as 1;
* ``native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
  output_mask)`` returns ``(grad_input, grad_weight, grad_bias)``, each computed only where
  ``output_mask`` asks (and the weight's and bias's only when they are given).

``layer_norm`` (a composite) calls ``native_layer_norm``, so a LayerNorm is one kernel forward
and one backward instead of eight and about twelve. With ``xh = (x - mean) * rstd`` and ``u =
g * w`` over the ``N`` normalized elements of a row, ``grad_input = rstd * (u - mean(u) - xh *
mean(u * xh))``, ``grad_weight = sum(g * xh)`` and ``grad_bias = sum(g)`` over the other dims.
Half precision is normalized in float32 and rounded once (the statistics too). As PyTorch's
CPU kernel: the result has the input's dtype; the weight and bias share it, or are float32 for
a half precision input (then the statistics are float32); other mixes raise.
"""

from __future__ import annotations

import math
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernel, Kernels, Kit, OpError, bind, fmt_shape, torch_name

_OP = "native_layer_norm"


def _check(op: str, shape: tuple[int, ...], normalized_shape: Any) -> tuple[int, ...]:
    """The normalized dims (PyTorch's _check_layer_norm_inputs and its messages)."""
    n = len(normalized_shape)
    if n == 0:
        raise OpError(
            f"{op}: Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
            "least one element, but got normalized_shape = []"
        )
    if tuple(shape[len(shape) - n :]) != tuple(int(s) for s in normalized_shape) or len(shape) < n:
        raise OpError(
            f"{op}: Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size {list(shape)}"
        )
    return tuple(range(len(shape) - n, len(shape)))


def _vector(kit: Kit, t: Tensor | None, what: str, normalized: tuple[int, ...], acc: Any,
            device: Any) -> Any:  # fmt: skip
    if t is None:
        return None
    if tuple(t._data.shape) != normalized:
        raise OpError(
            f"{_OP}: Expected {what} to be of same shape as normalized_shape, but got {what} of "
            f"shape {fmt_shape(t._data.shape)} and normalized_shape = {list(normalized)}"
        )
    return kit.cast(kit.operand(t, t._dtype, device), acc)


def _stats_dtype(d: _dt.dtype, weight: Tensor | None, bias: Tensor | None) -> _dt.dtype:
    """PyTorch's CPU rule: the weight and bias share the input's dtype, or, for a half
    precision input, may be float32 (then the statistics are float32); the result keeps the
    input's dtype."""
    params = {t._dtype for t in (weight, bias) if t is not None}
    if not params or params == {d}:
        return d
    if d in (_dt.float16, _dt.bfloat16) and params == {_dt.float32}:
        return _dt.float32
    if d in (_dt.float16, _dt.bfloat16, _dt.float32):
        raise OpError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    raise OpError("mixed dtype (CPU): all inputs must share same datatype.")


def native_layer_norm(
    kit: Kit,
    input: Tensor,
    normalized_shape: list[int],
    weight: Tensor | None,
    bias: Tensor | None,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    xp = kit.xp
    shape = tuple(int(s) for s in input._data.shape)
    axes = _check(_OP, shape, normalized_shape)
    d = input._dtype
    if d.kind != "f":
        raise OpError(f"\"LayerNormKernelImpl\" not implemented for '{torch_name(d)}'")
    stats = _stats_dtype(d, weight, bias)
    device = input._device
    acc = kit.accumulate[d]
    normalized = shape[len(shape) - len(axes) :]
    w = _vector(kit, weight, "weight", normalized, acc, device)
    b = _vector(kit, bias, "bias", normalized, acc, device)
    x = kit.cast(kit.operand(input, input._dtype, device), acc)
    with kit.quiet():
        mean = xp.mean(x, axis=axes, keepdims=True)
        centered = x - mean
        var = xp.mean(centered * centered, axis=axes, keepdims=True)
        rstd = 1.0 / xp.sqrt(var + eps)
        out = centered * rstd
        if w is not None:
            out = out * w
        if b is not None:
            out = out + b
    return kit.wrap(out, d, device), kit.wrap(mean, stats, device), kit.wrap(rstd, stats, device)


def native_layer_norm_backward(
    kit: Kit,
    grad_out: Tensor,
    input: Tensor,
    normalized_shape: list[int],
    mean: Tensor,
    rstd: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    output_mask: list[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    op = "native_layer_norm_backward"
    xp = kit.xp
    shape = tuple(int(s) for s in input._data.shape)
    axes = _check(op, shape, normalized_shape)
    if tuple(grad_out._data.shape) != shape:
        raise OpError(
            f"{op}: expected grad_out of the input's shape {fmt_shape(shape)}, got "
            f"{fmt_shape(grad_out._data.shape)}"
        )
    d = input._dtype
    if d.kind != "f":
        raise OpError(f"\"LayerNormBackwardKernelImpl\" not implemented for '{torch_name(d)}'")
    device = input._device
    stats = _dt.promote_types(d, mean._dtype)
    acc = kit.accumulate[_dt.promote_types(stats, grad_out._dtype)]
    normalized = shape[len(shape) - len(axes) :]
    outer = tuple(range(len(shape) - len(axes)))
    n = math.prod(normalized)
    x = kit.cast(kit.operand(input, d, device), acc)
    g = kit.cast(kit.operand(grad_out, grad_out._dtype, device), acc)
    mu = kit.cast(kit.operand(mean, mean._dtype, device), acc)
    rs = kit.cast(kit.operand(rstd, rstd._dtype, device), acc)
    w = _vector(kit, weight, "weight", normalized, acc, device)
    gi = gw = gb = None
    with kit.quiet():
        xh = (x - mu) * rs
        if output_mask[0]:
            u = g if w is None else g * w
            if n:
                a = xp.sum(u, axis=axes, keepdims=True) / n
                c = xp.sum(u * xh, axis=axes, keepdims=True) / n
                r = (u - a - xh * c) * rs
            else:
                r = u
            gi = kit.wrap(r, d, device)
        if output_mask[1] and weight is not None:
            gw = kit.wrap(xp.sum(g * xh, axis=outer), weight._dtype, device)
        if output_mask[2] and bias is not None:
            gb = kit.wrap(xp.sum(g, axis=outer), bias._dtype, device)
    return gi, gw, gb


KERNELS: dict[str, Kernel] = {
    _OP: native_layer_norm,
    "native_layer_norm_backward": native_layer_norm_backward,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
