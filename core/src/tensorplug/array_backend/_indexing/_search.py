"""searchsorted and bucketize: the positions of values in a sorted sequence (the ``indexing``
family, as the batching rules file them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernels, Kit, OpError, Scalar, bind, fmt_shape, torch_name

# the dtype of PyTorch's scalar_to_tensor: a Python float is a double, whatever the default
_SCALAR_TENSOR = {bool: _dt.bool, int: _dt.int64, float: _dt.float64, complex: _dt.complex128}


# --- searchsorted / bucketize: PyTorch's binary search, step for step, on all values at
# once, so that unsorted rows and NaNs give what its cus_lower_bound / cus_upper_bound give


def search_checks(
    kit: Kit, bd: Tensor, v_shape: tuple[int, ...], side: str | None, right: bool, sorter: Any
) -> None:
    xp = kit.xp
    if side is not None:
        if side not in ("left", "right"):
            raise OpError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side != "right":
            raise OpError(
                "torch.searchsorted(): side and right can't be set to opposites, got side "
                f"of {side} while right was True"
            )
    b_shape = tuple(bd._data.shape)
    if sorter is not None:
        if tuple(sorter._data.shape) != b_shape:
            raise OpError(
                "torch.searchsorted(): boundary and sorter must have the same size, but got "
                f"boundary tensor {fmt_shape(b_shape)}and got sorter tensor "
                f"{fmt_shape(sorter._data.shape)}"
            )
        if sorter._dtype is not _dt.int64:
            raise OpError(
                "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                f"{torch_name(sorter._dtype)}"
            )
        srt = sorter._data
        if math.prod(srt.shape) and (int(xp.min(srt)) < 0 or int(xp.max(srt)) >= b_shape[-1]):
            raise OpError("torch.searchsorted(): sorter index out of range")
    if not v_shape and len(b_shape) != 1:
        raise OpError(
            "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
            f"dimension is 1, but we got boundaries tensor dim({len(b_shape)}) and input "
            "value's dim(0) numel(1)"
        )
    if not b_shape:
        raise OpError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got "
            "0 dimension"
        )
    if len(b_shape) != 1 and (len(b_shape) != len(v_shape) or b_shape[:-1] != v_shape[:-1]):
        raise OpError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {fmt_shape(b_shape)} and input value tensor {fmt_shape(v_shape)}"
        )


def search(
    kit: Kit,
    qual: str,
    bd: Tensor,
    values: Any,
    v_dtype: _dt.dtype,
    out_int32: bool,
    right: bool,
    side: str | None,
    sorter: Tensor | None,
) -> Tensor:
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    v_shape = tuple(values.shape)
    search_checks(kit, bd, v_shape, side, right, sorter)
    right = right or side == "right"
    d = _dt.promote_types(bd._dtype, v_dtype)
    if d.kind in "cb":
        raise NotImplementedError(
            f"{qual}: \"searchsorted_out_cpu\" not implemented for '{torch_name(d)}'"
        )
    cd = kit.compute[d]
    b = kit.cast(bd._data, cd)
    v = kit.cast(values, cd)
    if sorter is not None:
        b = kit.take_along_axis(b, sorter._data, -1)
    n = b.shape[-1]
    if b.ndim == 1:  # one row for every value
        b, v = b[None, :], xp.reshape(v, (1, -1))
    else:
        rows = math.prod(b.shape[:-1])
        b, v = xp.reshape(b, (rows, n)), xp.reshape(v, (rows, v_shape[-1]))
    lo = xp.zeros(v.shape, dtype=i64)
    hi = xp.full(v.shape, n, dtype=i64)
    with kit.quiet():
        # a fixed number of halvings (``n.bit_length()`` settles ``n + 1`` places), so no
        # value is read on the host: a lazy backend's search stays one graph
        for _ in range(n.bit_length()):
            active = lo < hi
            mid = lo + (hi - lo) // 2
            mv = kit.take_along_axis(b, xp.minimum(mid, n - 1), -1)
            up = ~(mv > v) if right else ~(mv >= v)
            lo = xp.where(active & up, mid + 1, lo)
            hi = xp.where(active & ~up, mid, hi)
    out_d = _dt.int32 if out_int32 else _dt.int64
    r = kit.cast(xp.reshape(lo, v_shape), kit.storage[out_d])
    return kit.wrap(r, out_d, bd._device)


def searchsorted(
    kit: Kit,
    sorted_sequence: Tensor,
    self: Tensor,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
    qual: str = "aten::searchsorted.Tensor",
) -> Tensor:
    kit.same_device(sorted_sequence, self)
    return search(
        kit, qual, sorted_sequence, self._data, self._dtype, out_int32, right, side, sorter
    )


def searchsorted_scalar(
    kit: Kit,
    sorted_sequence: Tensor,
    self: Scalar,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
    qual: str = "aten::searchsorted.Scalar",
) -> Tensor:
    xp = kit.xp
    d = _SCALAR_TENSOR[type(self)]
    v = xp.asarray(kit.scalar(self, d))
    return search(kit, qual, sorted_sequence, v, d, out_int32, right, side, sorter)


def check_boundaries(boundaries: Tensor) -> None:
    if boundaries._data.ndim != 1:
        raise OpError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})"
        )


def bucketize(
    kit: Kit, self: Tensor, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
) -> Tensor:
    check_boundaries(boundaries)
    return searchsorted(
        kit, boundaries, self, out_int32=out_int32, right=right, qual="aten::bucketize.Tensor"
    )


def bucketize_scalar(
    kit: Kit, self: Scalar, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
) -> Tensor:
    check_boundaries(boundaries)
    return searchsorted_scalar(
        kit, boundaries, self, out_int32=out_int32, right=right, qual="aten::bucketize.Scalar"
    )


KERNELS: dict[str, Callable[..., Any]] = {
    "searchsorted.Tensor": searchsorted,
    "searchsorted.Scalar": searchsorted_scalar,
    "bucketize.Tensor": bucketize,
    "bucketize.Scalar": bucketize_scalar,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
