"""Part ``pad`` of the ``nn`` family of the array kit: the padding operators behind ``F.pad``,
with PyTorch's checks and messages:

* ``constant_pad_nd(self, pad, value)``: any number of trailing dimensions, each padded (or,
  with a negative amount, cropped) on both sides;
* ``reflection_pad{1,2,3}d`` (the edge mirrored, not repeated) and ``replication_pad{1,2,3}d``
  (the edge repeated) on the last 1, 2 or 3 dimensions of an input with one or two more, and
  their backward kernels ``*_backward(grad_output, self, padding)``.

Note [Padding by gathering]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Reflect and replicate padding read, for each output position ``j`` of a padded dimension, one
input position ``where(j)``: the forward takes those positions dimension by dimension (``take``,
last dimension first), and the backward adds each output gradient back to the position it came
from, dimension by dimension in the opposite order, as a product with the 0/1 matrix ``M[j,
where(j)]`` (one ``matmul`` per dimension, any namespace; the positions near an edge collect
two gradients, as PyTorch's kernels add them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernel, Kernels, Kit, OpError, bind, fmt_shape
from ._layout import keeps_format

Ints = Sequence[int]

# --- constant_pad_nd ---------------------------------------------------------------------------


def constant_pad_nd(kit: Kit, self: Tensor, pad: Ints, value: Any = 0) -> Tensor:
    """``aten::constant_pad_nd``: ``pad = (last_left, last_right, second_last_left, ...)``;
    negative amounts crop."""
    a = self._data
    shape = tuple(a.shape)
    if len(pad) % 2:
        raise OpError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > len(shape):
        raise OpError(
            "Length of pad should be no more than twice the number of dimensions of the input. "
            f"Pad length is {len(pad)} while the input has {len(shape)} dimensions."
        )
    crop: list[slice] = [slice(None)] * len(shape)
    inner: list[slice] = [slice(None)] * len(shape)
    out = list(shape)
    for i in range(len(pad) // 2):
        dim = len(shape) - 1 - i
        left, right = int(pad[2 * i]), int(pad[2 * i + 1])
        n = shape[dim] + left + right
        if n < 0:
            raise OpError(
                f"The input size {shape[dim]}, plus negative padding {left} and {right} resulted "
                f"in a negative output size, which is invalid. Check dimension {dim} of your "
                "input."
            )
        crop[dim] = slice(max(-left, 0), shape[dim] - max(-right, 0))
        kept = max(shape[dim] - max(-left, 0) - max(-right, 0), 0)
        inner[dim] = slice(max(left, 0), max(left, 0) + kept)
        out[dim] = n
    d = self._dtype
    r = kit.fill_array(tuple(out), value, d, self._device)
    part = a[tuple(crop)]
    if all(n for n in part.shape):
        r[tuple(inner)] = part
    return kit.new(r, d, self._device, kit.keyset)


# --- reflection and replication (Note [Padding by gathering]) ---------------------------------


def _reflect(j: int, n: int) -> int:
    return -j if j < 0 else (2 * (n - 1) - j if j >= n else j)


def _replicate(j: int, n: int) -> int:
    return min(max(j, 0), n - 1)


_WHERE: dict[str, Callable[[int, int], int]] = {"reflection": _reflect, "replication": _replicate}


def _positions(mode: str, self: Tensor, padding: Ints, k: int) -> list[tuple[int, list[int]]]:
    """PyTorch's checks of ``{mode}_pad{k}d``; then, per padded dimension (last first), the
    dimension and the input position each output position reads."""
    name = f"{mode}_pad{k}d"
    shape = tuple(self._data.shape)
    if len(padding) != 2 * k:
        raise OpError(f"{name}: expected padding of {2 * k} values, but got {len(padding)}")
    if len(shape) not in (k + 1, k + 2) or 0 in shape[-(k + 1) :]:
        raise OpError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {fmt_shape(shape)}"
        )
    where = _WHERE[mode]
    out: list[tuple[int, list[int]]] = []
    for i in range(k):
        dim = len(shape) - 1 - i
        left, right, n = int(padding[2 * i]), int(padding[2 * i + 1]), shape[dim]
        if mode == "reflection" and (left >= n or right >= n):
            raise OpError(
                f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({left}, {right}) at dimension {dim} of input "
                f"{fmt_shape(shape)}"
            )
        if n + left + right < 1:
            raise OpError(
                f"input (size {n} at dimension {dim}) is too small. Calculated output size: "
                f"{n + left + right}"
            )
        out.append((dim, [where(j, n) for j in range(-left, n + right)]))
    return out


def _index(kit: Kit, positions: list[int], device: Any) -> Any:
    with kit.on(device):
        return kit.xp.asarray(positions, dtype=kit.storage[_dt.int64])


def _pad_kernel(mode: str, k: int) -> Callable[..., Tensor]:
    def pad(kit: Kit, self: Tensor, padding: Ints) -> Tensor:
        xp = kit.xp
        a = self._data
        for dim, pos in _positions(mode, self, padding, k):
            a = xp.take(a, _index(kit, pos, self._device), axis=dim)
        return kit.wrap(a, self._dtype, self._device)

    pad.__name__ = pad.__qualname__ = f"{mode}_pad{k}d"
    pad.__doc__ = f"``aten::{mode}_pad{k}d`` (Note [Padding by gathering])."
    return pad


def _pad_backward_kernel(mode: str, k: int) -> Callable[..., Tensor]:
    def pad_backward(kit: Kit, grad_output: Tensor, self: Tensor, padding: Ints) -> Tensor:
        xp = kit.xp
        steps = _positions(mode, self, padding, k)
        want = list(self._data.shape)
        for dim, pos in steps:
            want[dim] = len(pos)
        gs = tuple(grad_output._data.shape)
        if gs != tuple(want):
            raise OpError(
                f"{mode}_pad{k}d_backward: expected grad_output of size {fmt_shape(want)}, but "
                f"got {fmt_shape(gs)}"
            )
        d = grad_output._dtype
        kit.same_device(grad_output, self)
        acc = kit.accumulate[d]
        g = kit.cast(grad_output._data, acc)
        shape = self._data.shape
        for dim, pos in reversed(steps):
            n = shape[dim]
            with kit.on(grad_output._device):
                cols = xp.arange(n, dtype=kit.storage[_dt.int64])
            onehot = kit.cast(_index(kit, pos, grad_output._device)[:, None] == cols[None, :], acc)
            moved = xp.moveaxis(g, dim, -1)
            g = xp.moveaxis(xp.matmul(moved, onehot), -1, dim)
        return kit.wrap(g, d, grad_output._device)

    pad_backward.__name__ = pad_backward.__qualname__ = f"{mode}_pad{k}d_backward"
    pad_backward.__doc__ = f"``aten::{mode}_pad{k}d_backward`` (Note [Padding by gathering])."
    return pad_backward


KERNELS: dict[str, Kernel] = {"constant_pad_nd": keeps_format(constant_pad_nd)}
for _mode in ("reflection", "replication"):
    for _k in (1, 2, 3):
        KERNELS[f"{_mode}_pad{_k}d"] = keeps_format(_pad_kernel(_mode, _k))
        KERNELS[f"{_mode}_pad{_k}d_backward"] = keeps_format(_pad_backward_kernel(_mode, _k), 1)
del _mode, _k


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
