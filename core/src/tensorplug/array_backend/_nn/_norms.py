"""Part ``norms`` of the ``nn`` family of the array kit: batch and group normalization with their
backward kernels (PyTorch's ``native_batch_norm``, ``native_batch_norm_backward``,
``native_group_norm`` and ``native_group_norm_backward``).

Note [Normalization kernels]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Both normalize ``x`` over groups of elements with the group's mean and inverse standard
deviation ``invstd = 1 / sqrt(var + eps)`` (the biased variance), then scale and shift per
channel. Batch norm's groups are the channels (dims 0 and 2.. reduced); group norm's are
``group`` slices of channels per sample. Statistics are computed in the accumulation dtype
(float32 for float16 and bfloat16, as PyTorch's ``opmath``) and the output rounded once.

The backward kernels compute all three gradients in one pass over the same reductions:
with ``xhat = (x - mean) * invstd`` and, per group, ``E[.]`` the mean over it,

    grad_input  = w * invstd * (g - E[g] - xhat * E[g * xhat])      (statistics of the batch)
    grad_input  = w * invstd * g                                    (running statistics)
    grad_weight = sum(g * xhat),   grad_bias = sum(g)               (per channel)

``output_mask`` says which of the three to compute (None for the others), as in PyTorch.

``native_batch_norm`` in training updates ``running_mean`` and ``running_var`` in place,
``(1 - momentum) * running + momentum * batch`` with the batch's unbiased variance. Its schema
is PyTorch's, which does not mark them written: as in PyTorch the update moves no version
counter (``F.batch_norm`` leaves ``running_mean._version`` alone; ``instance_norm``, which
copies its averaged statistics back with ``copy_``, moves it).
"""

from __future__ import annotations

import math
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernel, Kernels, Kit, OpError, bind, fmt_shape, torch_name
from ._layout import keeps_format


def _floating(name: str, d: _dt.dtype) -> None:
    if d.kind != "f":
        raise NotImplementedError(f"\"{name}\" not implemented for '{torch_name(d)}'")


def _channel_vector(kit: Kit, t: Tensor | None, what: str, c: int, acc: Any, device: Any) -> Any:
    if t is None:
        return None
    n = int(math.prod(t._data.shape))
    if n != c:
        raise OpError(f"{what} should contain {c} elements not {n}")
    return kit.cast(kit.xp.reshape(kit.operand(t, t._dtype, device), (c,)), acc)


def _bshape(ndim: int, c: int) -> tuple[int, ...]:
    return (1, c, *(1,) * (ndim - 2))


# --- batch normalization ----------------------------------------------------------------------


def native_batch_norm(
    kit: Kit,
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    xp = kit.xp
    shape = tuple(int(n) for n in input._data.shape)
    if len(shape) < 2:
        raise OpError(
            f"Expected input to have at least 2 dimensions (batch, channels), got {len(shape)}"
        )
    d = input._dtype
    _floating("batch_norm", d)
    if not math.prod(shape):
        raise OpError(
            f"input tensor must have at least one element, but got input_sizes = {fmt_shape(shape)}"
        )
    device = input._device
    c = shape[1]
    acc = kit.accumulate[d]
    w = _channel_vector(kit, weight, "weight", c, acc, device)
    b = _channel_vector(kit, bias, "bias", c, acc, device)
    rm = _channel_vector(kit, running_mean, "running_mean", c, acc, device)
    rv = _channel_vector(kit, running_var, "running_var", c, acc, device)
    x = kit.cast(input._data, acc)
    bs = _bshape(len(shape), c)
    axes = (0, *range(2, len(shape)))
    # the statistics' dtype: the parameters' (float32) for a half-precision input with float32
    # parameters (PyTorch's mixed type), else the input's
    stat = weight._dtype if weight is not None and weight._dtype is not d else d
    with kit.quiet():
        if training:
            n = math.prod(shape) // c
            mean = xp.mean(x, axis=axes)
            centered = x - xp.reshape(mean, bs)
            squares = centered * centered
            var = xp.mean(squares, axis=axes)
            invstd = 1.0 / xp.sqrt(var + eps)
            if running_mean is not None and rm is not None:
                new = rm * (1.0 - momentum) + mean * momentum
                running_mean._data[...] = kit.cast(
                    xp.reshape(new, running_mean._data.shape), running_mean._data.dtype
                )
            if running_var is not None and rv is not None:
                unbiased = var * (n / (n - 1)) if n > 1 else var * math.inf
                new = rv * (1.0 - momentum) + unbiased * momentum
                running_var._data[...] = kit.cast(
                    xp.reshape(new, running_var._data.shape), running_var._data.dtype
                )
            save_mean, save_invstd = mean, invstd
        else:
            if rm is None or rv is None:
                which = "running_mean" if rm is None else "running_var"
                raise OpError(f"{which} must be defined in evaluation mode")
            invstd = 1.0 / xp.sqrt(rv + eps)
            centered = x - xp.reshape(rm, bs)
            squares = None
            save_mean = save_invstd = xp.zeros((0,), dtype=acc)
        scale = xp.reshape(invstd, bs) if w is None else xp.reshape(invstd * w, bs)
        if kit.writes_out and squares is not None and squares.dtype == centered.dtype:
            # the squares' array, done with, takes the result (one allocation fewer)
            out = xp.multiply(centered, scale, out=squares)
            if b is not None:
                xp.add(out, xp.reshape(b, bs), out=out)
        else:
            out = centered * scale
            if b is not None:
                out = out + xp.reshape(b, bs)
    return (
        kit.wrap(out, d, device),
        kit.wrap(save_mean, stat, device),
        kit.wrap(save_invstd, stat, device),
    )


def native_batch_norm_backward(
    kit: Kit,
    grad_out: Tensor,
    input: Tensor,
    weight: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    save_mean: Tensor | None,
    save_invstd: Tensor | None,
    train: bool,
    eps: float,
    output_mask: list[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    xp = kit.xp
    shape = tuple(int(n) for n in input._data.shape)
    if tuple(grad_out._data.shape) != shape:
        raise OpError(
            f"expected grad_out of the input's shape {fmt_shape(shape)}, got "
            f"{fmt_shape(grad_out._data.shape)}"
        )
    d = input._dtype
    _floating("batch_norm_backward", d)
    device = input._device
    c = shape[1]
    acc = kit.accumulate[d]
    bs = _bshape(len(shape), c)
    axes = (0, *range(2, len(shape)))
    x = kit.cast(input._data, acc)
    g = kit.cast(kit.operand(grad_out, grad_out._dtype, device), acc)
    w = _channel_vector(kit, weight, "weight", c, acc, device)
    with kit.quiet():
        if train:
            mean = _channel_vector(kit, save_mean, "save_mean", c, acc, device)
            invstd = _channel_vector(kit, save_invstd, "save_invstd", c, acc, device)
            if mean is None or invstd is None:
                raise OpError("save_mean and save_invstd must be defined in training mode")
        else:
            mean = _channel_vector(kit, running_mean, "running_mean", c, acc, device)
            rv = _channel_vector(kit, running_var, "running_var", c, acc, device)
            if mean is None or rv is None:
                raise OpError("running_mean and running_var must be defined in evaluation mode")
            invstd = 1.0 / xp.sqrt(rv + eps)
        # Note [Batch norm backward passes]: the centered input and g * centered are the two
        # temporaries; sum(g * xhat) = invstd * sum(g * (x - mean)), and the input's gradient
        # is g * k + (x - mean) * (-k * invstd * E[g xhat]) - k * E[g], per channel
        # coefficients applied in place where the namespace writes out= (numpy, CuPy): eight
        # passes over the input's size instead of ten, two arrays allocated instead of six
        xc = x - xp.reshape(mean, bs)
        tmp = g * xc
        sum_g = xp.sum(g, axis=axes)
        sum_gx = xp.sum(tmp, axis=axes) * invstd
        gi = gw = gb = None
        if output_mask[0]:
            k = invstd if w is None else invstd * w
            if train:
                n = math.prod(shape) // c
                cx = xp.reshape(-(k * invstd) * (sum_gx / n), bs)
                c0 = xp.reshape(-k * (sum_g / n), bs)
                kk = xp.reshape(k, bs)
                if kit.writes_out and tmp.dtype == acc:
                    r = xp.multiply(g, kk, out=tmp)
                    xp.add(r, xp.multiply(xc, cx, out=xc), out=r)
                    xp.add(r, c0, out=r)
                else:
                    r = g * kk + xc * cx + c0
                gi = kit.wrap(r, d, device)
            else:
                gi = kit.wrap(g * xp.reshape(k, bs), d, device)
        pd = weight._dtype if weight is not None else d
        if output_mask[1]:
            gw = kit.wrap(sum_gx, pd, device)
        if output_mask[2]:
            gb = kit.wrap(sum_g, pd, device)
    return gi, gw, gb


# --- group normalization ----------------------------------------------------------------------


def _group_check(shape: tuple[int, ...], n: int, c: int, hxw: int, group: int) -> None:
    if not shape or shape[0] != n or (len(shape) > 1 and shape[1] != c):
        raise OpError(
            f"Expected input of shape [N={n}, C={c}, *] with HxW={hxw} elements per channel, "
            f"got {fmt_shape(shape)}"
        )
    if n * c * hxw != math.prod(shape):
        raise OpError(f"Expected the input to have {n * c * hxw} elements, got {math.prod(shape)}")
    if group <= 0 or c % group:
        raise OpError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {fmt_shape(shape)} and num_groups={group}"
        )


def native_group_norm(
    kit: Kit,
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    N: int,
    C: int,
    HxW: int,
    group: int,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    xp = kit.xp
    shape = tuple(int(n) for n in input._data.shape)
    _group_check(shape, N, C, HxW, group)
    d = input._dtype
    _floating("group_norm", d)
    device = input._device
    acc = kit.accumulate[d]
    w = _channel_vector(kit, weight, "weight", C, acc, device)
    b = _channel_vector(kit, bias, "bias", C, acc, device)
    x = xp.reshape(kit.cast(input._data, acc), (N, group, (C // group) * HxW))
    with kit.quiet():
        mean = xp.mean(x, axis=2)
        centered = x - xp.reshape(mean, (N, group, 1))
        var = xp.mean(centered * centered, axis=2)
        rstd = 1.0 / xp.sqrt(var + eps)
        out = xp.reshape(centered * xp.reshape(rstd, (N, group, 1)), (N, C, HxW))
        if w is not None:
            out = out * xp.reshape(w, (1, C, 1))
        if b is not None:
            out = out + xp.reshape(b, (1, C, 1))
    return (
        kit.wrap(xp.reshape(out, shape), d, device),
        kit.wrap(mean, d, device),
        kit.wrap(rstd, d, device),
    )


def native_group_norm_backward(
    kit: Kit,
    grad_out: Tensor,
    input: Tensor,
    mean: Tensor,
    rstd: Tensor,
    weight: Tensor | None,
    N: int,
    C: int,
    HxW: int,
    group: int,
    output_mask: list[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    xp = kit.xp
    shape = tuple(int(n) for n in input._data.shape)
    _group_check(shape, N, C, HxW, group)
    if tuple(grad_out._data.shape) != shape:
        raise OpError(
            f"expected grad_out of the input's shape {fmt_shape(shape)}, got "
            f"{fmt_shape(grad_out._data.shape)}"
        )
    d = input._dtype
    _floating("group_norm_backward", d)
    device = input._device
    acc = kit.accumulate[d]
    cg = C // group
    x = xp.reshape(kit.cast(input._data, acc), (N, group, cg, HxW))
    g = xp.reshape(kit.cast(kit.operand(grad_out, grad_out._dtype, device), acc),
                   (N, group, cg, HxW))  # fmt: skip
    mu = xp.reshape(kit.cast(kit.operand(mean, mean._dtype, device), acc), (N, group, 1, 1))
    rs = xp.reshape(kit.cast(kit.operand(rstd, rstd._dtype, device), acc), (N, group, 1, 1))
    w = _channel_vector(kit, weight, "weight", C, acc, device)
    with kit.quiet():
        xhat = (x - mu) * rs
        gi = gw = gb = None
        if output_mask[0]:
            gw_ = g if w is None else g * xp.reshape(w, (1, group, cg, 1))
            m = cg * HxW
            a = xp.sum(gw_, axis=(2, 3), keepdims=True) / m
            bterm = xp.sum(gw_ * xhat, axis=(2, 3), keepdims=True) / m
            gi = kit.wrap(xp.reshape((gw_ - a - xhat * bterm) * rs, shape), d, device)
        pd = weight._dtype if weight is not None else d
        if output_mask[1]:
            gw = kit.wrap(xp.reshape(xp.sum(g * xhat, axis=(0, 3)), (C,)), pd, device)
        if output_mask[2]:
            gb = kit.wrap(xp.reshape(xp.sum(g, axis=(0, 3)), (C,)), pd, device)
    return gi, gw, gb


KERNELS: dict[str, Kernel] = {
    "native_batch_norm": keeps_format(native_batch_norm),
    "native_batch_norm_backward": keeps_format(native_batch_norm_backward, 1),
    "native_group_norm": keeps_format(native_group_norm),
    "native_group_norm_backward": keeps_format(native_group_norm_backward, 1),
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
