"""``pad`` (re-exported by :mod:`tensorplug.nn.functional`): constant, reflect, replicate and
circular padding composed of ``narrow``, ``full``, ``cat`` and ``index_select``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorplug

from .. import dtypes as _dtypes
from ..tensor import Tensor

__all__ = ["pad"]

_tp: Any = tensorplug  # the generated functions are invisible to the type checker

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(
    input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Tensor:
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dimensions:
    ``pad = (last_left, last_right, second_last_left, ...)``.

    ``"constant"`` fills with ``value`` (0 by default) and pads any number of dimensions;
    ``"reflect"`` mirrors without repeating the edge, ``"replicate"`` repeats the edge and
    ``"circular"`` wraps around, on the last 1, 2 or 3 dimensions of an input with one or two
    more (PyTorch's combinations). Those three pick their elements with ``index_select``, so
    the gradient adds up where an element is used twice, as PyTorch's kernels' does.
    """
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    n_dims = len(pad) // 2
    if n_dims > input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}"
        )
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        if not 1 <= n_dims <= 3 or input.ndim not in (n_dims + 1, n_dims + 2):
            raise NotImplementedError(
                f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
                "Supported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
            )
    out = input
    for i in range(n_dims):
        dim = input.ndim - 1 - i
        left, right = int(pad[2 * i]), int(pad[2 * i + 1])
        size = out.shape[dim]
        if size + left + right < 0:
            raise RuntimeError(
                f"The input size {size}, plus negative padding {left} and {right} resulted in a "
                f"negative output size, which is invalid. Check dimension {dim} of your input."
            )
        if mode in ("reflect", "replicate"):
            # output position j reads the input at where(j), j from -left (a negative left
            # crops), in the input's coordinates
            _check_pad_mode_sizes(mode, input, i, left, right, n_dims)
            where = _PAD_INDEX[mode]
            out = _select(out, dim, [where(j, size) for j in range(-left, size + right)])
            continue
        # constant and circular: crop first (negative amounts), then pad what is left; circular
        # wraps around the cropped dimension, as PyTorch's does
        start, stop = max(-left, 0), size - max(-right, 0)
        if start or stop != size:
            out = _tp.narrow(out, dim, start, max(stop - start, 0))
        left, right, n = max(left, 0), max(right, 0), out.shape[dim]
        if mode == "constant":
            out = _pad_constant(out, dim, left, right, 0.0 if value is None else value)
        elif left or right:
            if left > n or right > n:  # PyTorch checks the uncropped size only, then misreads
                raise RuntimeError("Padding value causes wrapping around more than once.")
            out = _select(out, dim, [j % n for j in range(-left, n + right)])
    return out


def _select(t: Tensor, dim: int, index: list[int]) -> Tensor:
    r: Tensor = _tp.index_select(t, dim, _tp.tensor(index, dtype=_dtypes.int64, device=t.device))
    return r


def _pad_constant(t: Tensor, dim: int, left: int, right: int, fill: float) -> Tensor:
    parts = []
    for amount in (left, right):
        shape = list(t.shape)
        shape[dim] = amount
        parts.append(_tp.full(shape, fill, dtype=t.dtype, device=t.device) if amount else None)
    if parts == [None, None]:
        return t
    r: Tensor = _tp.cat([p for p in (parts[0], t, parts[1]) if p is not None], dim)
    return r


def _check_pad_mode_sizes(
    mode: str, input: Tensor, i: int, left: int, right: int, n_dims: int
) -> None:
    """The checks of PyTorch's reflect and replicate kernels, for the ``i``-th last dimension."""
    dim = input.ndim - 1 - i
    size = input.shape[dim]
    if 0 in input.shape[1:]:
        raise RuntimeError(
            f"Expected {n_dims + 1}D or {n_dims + 2}D (batch mode) tensor with possibly 0 batch "
            f"size and other non-zero dimensions for input, but got: {list(input.shape)}"
        )
    if mode == "reflect" and (left >= size or right >= size):
        raise RuntimeError(
            f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
            f"dimension, but got: padding ({left}, {right}) at dimension {dim} of input "
            f"{list(input.shape)}"
        )


def _replicate_index(j: int, n: int) -> int:
    return min(max(j, 0), n - 1)


def _reflect_index(j: int, n: int) -> int:
    return -j if j < 0 else (2 * (n - 1) - j if j >= n else j)


# where output position j (0 = the input's first element) reads from, in a dimension of size n
_PAD_INDEX = {
    "reflect": _reflect_index,
    "replicate": _replicate_index,
}
