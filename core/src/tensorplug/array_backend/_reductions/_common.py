"""What the reduction kernels share: the array library's ufunc reductions of
Note [Reduction fast path] (:class:`Fast`) and the general path (:func:`reduce`).

Note [Reduction fast path]
~~~~~~~~~~~~~~~~~~~~~~~~~~
``x.sum([1], True)`` on a 64x10 float32 tensor costs numpy about 2 us; the general path adds
dtype rules, dim lists, a cast and ``np.errstate``, several times that. So sum, mean, amax,
softmax and log_softmax (``_nn``) first try the common case: a dtype computed and accumulated natively
(float32, float64; not half precision, not integers, whose sums are int64), no ``dtype=``, one
dim in range, a non-empty input. That case calls the array library's ufunc reductions
(``np.add.reduce``: the function ``np.sum`` ends in, without its Python layers) on the data as it
is, quiet through ``kit.hush`` (Note [Quiet arithmetic] in _kit.py), and wraps the result; every
array call is the one the general path makes, so the results are the same to the bit (mean
divides the way ``np.mean`` does). Anything else takes the general path.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import (
    Kit,
    wrap_dims,
)


def _one_axis(dim: Sequence[int] | None, ndim: int) -> int | None:
    """The axis of a one-dim list in range of ``ndim`` >= 1 dims; None for anything else."""
    if dim is None or len(dim) != 1:
        return None
    ax = dim[0]
    if 0 <= ax < ndim:
        return ax
    if -ndim <= ax < 0:
        return ax + ndim
    return None


class Fast:
    """What the fast paths (Note [Reduction fast path]) of one backend use: the ufunc
    reductions where the array library has them, the dtypes they take, and a quiet call
    wrapped as a tensor (:meth:`quick`)."""

    def __init__(self, kit: Kit) -> None:
        xp = kit.xp
        self.add_reduce = add_reduce = getattr(xp.add, "reduce", None)
        self.max_reduce = max_reduce = getattr(xp.maximum, "reduce", None)
        self.min_reduce = getattr(xp.minimum, "reduce", None)
        self.floats: frozenset[_dt.dtype] = frozenset(
            d
            for d in kit.native
            if d.kind == "f" and kit.accumulate[d] == kit.storage[d] and add_reduce is not None
        )
        self.ordered: frozenset[_dt.dtype] = frozenset(
            d for d in kit.native if d.kind in "buif" and max_reduce is not None
        )
        intp = getattr(xp, "intp", None)
        true_divide = getattr(xp, "true_divide", None)
        self.means = frozenset() if intp is None or true_divide is None else self.floats
        new = kit.new
        ks = kit.keyset
        arr_t = kit.array_type
        asarray = xp.asarray
        hush = kit.hush
        unhush = kit.unhush

        def quick(fn: Any, self: Tensor, axis: int | None, keepdim: bool) -> Tensor:
            """``fn(data, axis, keepdim)``, quiet, as a tensor of self's dtype."""
            token = hush()
            try:
                r = fn(self._data, axis, keepdim)
            finally:
                unhush(token)
            if type(r) is not arr_t:
                r = asarray(r)
            return new(r, self._dtype, self._device, ks)

        def mean_of(a: Any, axis: int | None, keepdim: bool) -> Any:
            """``np.mean(a, axis, keepdims=keepdim)`` of a non-empty float array, its own way.

            As numpy's ``_mean``: the sum divided by the count as ``intp`` (a float64 division,
            rounded back), in place when the sum is an array.
            """
            r = add_reduce(a, axis, None, None, keepdim)  # type: ignore[misc]
            n = intp(a.size if axis is None else a.shape[axis])  # type: ignore[misc]
            if type(r) is arr_t:
                return true_divide(r, n, out=r, casting="unsafe")  # type: ignore[misc]
            return r.dtype.type(r / n)

        def sum_of(a: Any, axis: int | None, keepdim: bool) -> Any:
            return add_reduce(a, axis, None, None, keepdim)  # type: ignore[misc]

        self.quick = quick
        self.mean_of = mean_of
        self.sum_of = sum_of


def reduce(
    kit: Kit, fn: Any, self: Tensor, dim: Sequence[int] | None, keepdim: bool, od: _dt.dtype
) -> Tensor:
    """The general path: ``fn(data, axis=dims, keepdims=keepdim)`` in ``od``'s accumulation
    dtype, quiet, as a tensor of dtype ``od``."""
    kit.check_dtype(od)
    axes = wrap_dims(dim, self._data.ndim)
    a = kit.cast(self._data, kit.accumulate[od])
    xp = kit.xp
    with kit.quiet():
        if fn is xp.mean and not _count(a.shape, axes):
            with warnings.catch_warnings():  # numpy's "Mean of empty slice": PyTorch is silent
                warnings.simplefilter("ignore", RuntimeWarning)
                r = fn(a, axis=axes, keepdims=keepdim)
        else:
            r = fn(a, axis=axes, keepdims=keepdim)
    return kit.wrap(r, od, self._device)


def _count(shape: tuple[int, ...], axes: tuple[int, ...] | None) -> int:
    """How many elements a reduction over ``axes`` (None: all) of ``shape`` combines."""
    n = 1
    for ax in range(len(shape)) if axes is None else axes:
        n *= int(shape[ax])
    return n
