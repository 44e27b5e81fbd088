"""Reduction kernels: sum, mean, var, std, prod, amax/amin, aminmax, max/min, argmax/argmin,
logsumexp, any/all, count_nonzero, linalg_vector_norm, isclose/allclose/equal, cumsum/cumprod,
softmax and log_softmax.

Output dtypes follow PyTorch: ``sum``/``prod`` of bool and integers give int64; ``mean`` and
``var`` need a floating or complex input (or ``dtype=``); ``var`` of complex is real. Half
precision inputs accumulate in float32 (Note [Storage and compute dtypes] in _kit.py). A dim
list that is ``None`` or empty reduces every dimension.

Note [Reduction fast path]
~~~~~~~~~~~~~~~~~~~~~~~~~~
``x.sum([1], True)`` on a 64x10 float32 tensor costs numpy about 2 us; the general path adds
dtype rules, dim lists, a cast and ``np.errstate``, several times that. So sum, mean, amax,
softmax and log_softmax first try the common case: a dtype computed and accumulated natively
(float32, float64; not half precision, not integers, whose sums are int64), no ``dtype=``, one
dim in range, a non-empty input. That case calls the array library's ufunc reductions
(``np.add.reduce``: the function ``np.sum`` ends in, without its Python layers) on the data as it
is, quiet through ``kit.hush`` (Note [Quiet arithmetic] in _kit.py), and wraps the result; every
array call is the one the general path makes, so the results are the same to the bit (mean
divides the way ``np.mean`` does). Anything else takes the general path.

Each kernel (or family of kernels) has a builder at module level: ``sum_dim(kit)`` returns the
kernel of ``aten::sum.dim_IntList`` for ``kit``'s backend, ``extremum(kit, "amax", ...)`` the
kernels of ``amax`` and ``max``. :data:`BUILDERS` lists them, and :func:`build` builds them all.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor
from ._kit import (
    Kernel,
    Kernels,
    Kit,
    OpError,
    Scalar,
    check_broadcast,
    guard,
    guarded,
    optional,
    torch_name,
    wrap_dim,
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


def int_to_long(d: _dt.dtype, dtype: _dt.dtype | None) -> _dt.dtype:
    """The dtype of a sum or product: ``dtype`` if given, int64 for bool and integers."""
    if dtype is not None:
        return dtype
    return _dt.int64 if d.kind in "bui" else d


def mean_dtype(self: Tensor, dtype: _dt.dtype | None) -> _dt.dtype:
    od = self._dtype if dtype is None else dtype
    if od.kind not in "fc":
        what = "Input" if dtype is None else "Optional"
        raise OpError(
            "mean(): could not infer output dtype. "
            f"{what} dtype must be either a floating point or complex dtype. "
            f"Got: {torch_name(od)}"
        )
    return od


# --- sum, prod, mean --------------------------------------------------------------------------


def sum_all(kit: Kit) -> Kernel:
    fast = Fast(kit)
    floats, quick, sum_of = fast.floats, fast.quick, fast.sum_of
    xp_sum = kit.xp.sum

    def sum_all(self: Tensor, *, dtype: _dt.dtype | None = None) -> Tensor:
        if dtype is None and self._dtype in floats:
            return quick(sum_of, self, None, False)
        return reduce(kit, xp_sum, self, None, False, int_to_long(self._dtype, dtype))

    return sum_all


def sum_dim(kit: Kit) -> Kernel:
    fast = Fast(kit)
    floats, add_reduce = fast.floats, fast.add_reduce
    xp_sum = kit.xp.sum
    hush, unhush = kit.hush, kit.unhush
    new, ks, arr_t, asarray = kit.new, kit.keyset, kit.array_type, kit.xp.asarray

    def general(
        self: Tensor,
        dim: Sequence[int] | None,
        keepdim: bool = False,
        *,
        dtype: _dt.dtype | None = None,
    ) -> Tensor:
        return reduce(kit, xp_sum, self, dim, keepdim, int_to_long(self._dtype, dtype))

    slow = guard("sum.dim_IntList", general)

    # The hottest reductions are guarded themselves: their fast path raises nothing, and their
    # general path converts its errors (Note [Kernel errors] in _checks.py); one call level less.
    @guarded
    def sum_dim(
        self: Tensor,
        dim: Sequence[int] | None,
        keepdim: bool = False,
        *,
        dtype: _dt.dtype | None = None,
    ) -> Tensor:
        if dtype is None and self._dtype in floats:
            a = self._data
            ax = _one_axis(dim, a.ndim)
            if ax is not None:
                token = hush()
                try:
                    r = add_reduce(a, ax, None, None, keepdim)  # type: ignore[misc]
                finally:
                    unhush(token)
                if type(r) is not arr_t:
                    r = asarray(r)
                return new(r, self._dtype, self._device, ks)
        return slow(self, dim, keepdim, dtype=dtype)  # type: ignore[no-any-return]

    return sum_dim


def prod_all(kit: Kit) -> Kernel:
    def prod_all(self: Tensor, *, dtype: _dt.dtype | None = None) -> Tensor:
        return reduce(kit, kit.xp.prod, self, None, False, int_to_long(self._dtype, dtype))

    return prod_all


def prod_dim(kit: Kit) -> Kernel:
    def prod_dim(
        self: Tensor, dim: int, keepdim: bool = False, *, dtype: _dt.dtype | None = None
    ) -> Tensor:
        return reduce(kit, kit.xp.prod, self, [dim], keepdim, int_to_long(self._dtype, dtype))

    return prod_dim


def mean_all(kit: Kit) -> Kernel:
    fast = Fast(kit)
    means, quick, mean_of = fast.means, fast.quick, fast.mean_of
    xp_mean = kit.xp.mean

    def mean_all(self: Tensor, *, dtype: _dt.dtype | None = None) -> Tensor:
        if dtype is None and self._dtype in means and self._data.size:
            return quick(mean_of, self, None, False)
        return reduce(kit, xp_mean, self, None, False, mean_dtype(self, dtype))

    return mean_all


def mean_dim(kit: Kit) -> Kernel:
    fast = Fast(kit)
    means, quick, mean_of = fast.means, fast.quick, fast.mean_of
    xp_mean = kit.xp.mean

    def general(
        self: Tensor,
        dim: Sequence[int] | None,
        keepdim: bool = False,
        *,
        dtype: _dt.dtype | None = None,
    ) -> Tensor:
        return reduce(kit, xp_mean, self, dim, keepdim, mean_dtype(self, dtype))

    slow = guard("mean.dim", general)

    @guarded
    def mean_dim(
        self: Tensor,
        dim: Sequence[int] | None,
        keepdim: bool = False,
        *,
        dtype: _dt.dtype | None = None,
    ) -> Tensor:
        if dtype is None and self._dtype in means and self._data.size:
            ax = _one_axis(dim, self._data.ndim)
            if ax is not None:
                return quick(mean_of, self, ax, keepdim)
        return slow(self, dim, keepdim, dtype=dtype)  # type: ignore[no-any-return]

    return mean_dim


# --- var and std ------------------------------------------------------------------------------


def var_array(
    kit: Kit, self: Tensor, dim: Sequence[int] | None, correction: Scalar | None, keepdim: bool
) -> Any:
    """The variance's array, in the accumulation dtype."""
    xp = kit.xp
    d = self._dtype
    if d.kind not in "fc":
        raise OpError("std and var only support floating point and complex dtypes")
    ndim = self._data.ndim
    axes = wrap_dims(dim, ndim)
    a = kit.cast(self._data, kit.accumulate[d])
    n = 1
    shape = self._data.shape
    for ax in range(ndim) if axes is None else axes:
        n *= int(shape[ax])
    c = 1 if correction is None else correction
    with kit.quiet():
        mu = xp.mean(a, axis=axes, keepdims=True)
        dev = a - mu
        sq = xp.real(dev * xp.conj(dev)) if d.kind == "c" else dev * dev
        s = xp.sum(sq, axis=axes, keepdims=keepdim)
        r = s / max(n - float(c.real if isinstance(c, complex) else c), 0.0)
    return r


def var(kit: Kit) -> Kernel:
    def var(
        self: Tensor,
        dim: Sequence[int] | None = None,
        *,
        correction: Scalar | None = None,
        keepdim: bool = False,
    ) -> Tensor:
        r = var_array(kit, self, dim, correction, keepdim)
        return kit.wrap(r, self._dtype.to_real(), self._device)

    return var


def std(kit: Kit) -> Kernel:
    def std(
        self: Tensor,
        dim: Sequence[int] | None = None,
        *,
        correction: Scalar | None = None,
        keepdim: bool = False,
    ) -> Tensor:
        # its own kernel, not sqrt(var), so that autograd gives it PyTorch's formula (0 where
        # the std is 0, where sqrt's derivative would make NaN)
        r = var_array(kit, self, dim, correction, keepdim)
        with kit.quiet():
            r = kit.xp.sqrt(r)
        return kit.wrap(r, self._dtype.to_real(), self._device)

    return std


# --- extrema ----------------------------------------------------------------------------------


def no_complex(name: str, d: _dt.dtype) -> None:
    if d.kind == "c":
        raise OpError(f"{name}(): does not support complex input")


def nonempty_dims(name: str, self: Tensor, axes: tuple[int, ...] | None) -> None:
    shape = self._data.shape
    for ax in range(self._data.ndim) if axes is None else axes:
        if shape[ax] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {ax} to have non-zero size.")


def extremum(kit: Kit, name: str, fn_name: str, ufunc_name: str) -> tuple[Kernel, Kernel]:
    """The kernels of ``amax`` (``name``, over dims) and ``max`` (over everything), or of
    ``amin`` and ``min``: ``xp.<fn_name>``, on the fast path the ufunc ``xp.<ufunc_name>``'s
    reduction."""
    xp = kit.xp
    fn = getattr(xp, fn_name)
    ufunc_reduce = getattr(getattr(xp, ufunc_name, None), "reduce", None)
    fast = Fast(kit)
    ordered, quick = fast.ordered, fast.quick

    def reduce_fn(a: Any, axis: int | None, keepdim: bool) -> Any:
        return ufunc_reduce(a, axis, None, None, keepdim)  # type: ignore[misc]

    def general(self: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
        d = self._dtype
        no_complex(name, d)
        axes = wrap_dims(dim, self._data.ndim)
        nonempty_dims(name, self, axes)
        r = fn(kit.as_compute(self, d), axis=axes, keepdims=keepdim)
        return kit.wrap(r, d, self._device)

    slow = guard(name, general)

    @guarded
    def over_dims(self: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
        if self._dtype in ordered:
            a = self._data
            ax = _one_axis(dim, a.ndim)
            if ax is not None and a.shape[ax]:
                return quick(reduce_fn, self, ax, keepdim)
        return slow(self, dim, keepdim)  # type: ignore[no-any-return]

    def over_all(self: Tensor) -> Tensor:
        d = self._dtype
        no_complex(name[1:], d)
        if self._data.size == 0:
            raise OpError(
                f"{name[1:]}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return kit.wrap(fn(kit.as_compute(self, d)), d, self._device)

    return over_dims, over_all


def aminmax(kit: Kit) -> Kernel:
    xp = kit.xp

    def aminmax(
        self: Tensor, *, dim: int | None = None, keepdim: bool = False
    ) -> tuple[Tensor, Tensor]:
        d = self._dtype
        if d.kind == "c":
            raise NotImplementedError(
                f"aten::aminmax: \"aminmax_cpu\" not implemented for '{torch_name(d)}'"
            )
        a = kit.as_compute(self, d)
        if dim is None:
            if a.size == 0:
                raise OpError(
                    "aminmax(): cannot compute aminmax over an empty dimension as the operation "
                    "has no identity."
                )
            axes: tuple[int, ...] | None = None
        else:
            ax = wrap_dim(dim, a.ndim)
            if a.ndim and a.shape[ax] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {ax} to have non-zero size.")
            axes = (ax,) if a.ndim else ()
        lo, hi = xp.min(a, axis=axes, keepdims=keepdim), xp.max(a, axis=axes, keepdims=keepdim)
        return kit.wrap(lo, d, self._device), kit.wrap(hi, d, self._device)

    return aminmax


def with_indices(kit: Kit, name: str, arg_name: str) -> tuple[Kernel, Kernel]:
    """The kernels of ``max.dim`` (values and indices) and ``argmax`` (``name`` ``"max"``,
    ``xp.<arg_name>``), or of ``min.dim`` and ``argmin``."""
    xp = kit.xp
    arg = getattr(xp, arg_name)

    def values_and_indices(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        d = self._dtype
        no_complex(name, d)
        ax = wrap_dim(dim, self._data.ndim)
        a = kit.as_compute(self, d)
        if a.ndim == 0:
            a = xp.reshape(a, (1,))
            idx = xp.zeros((1,), dtype=kit.storage[_dt.int64])
            vals = a
        else:
            nonempty_dims(name, self, (ax,))
            idx = arg(a, axis=ax, keepdims=True)
            vals = kit.take_along_axis(a, idx, axis=ax)
            if not keepdim:
                idx = xp.squeeze(idx, axis=ax)
                vals = xp.squeeze(vals, axis=ax)
        if self._data.ndim == 0:
            idx = xp.reshape(idx, ())
            vals = xp.reshape(vals, ())
        device = self._device
        return kit.wrap(vals, d, device), kit.wrap(idx, _dt.int64, device)

    def indices(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
        d = self._dtype
        no_complex("arg" + name, d)
        a = kit.as_compute(self, d)
        device = self._device
        if dim is None:
            if a.size == 0:
                raise OpError(
                    f"arg{name}(): Expected reduction dim to be specified for input.numel() == 0."
                )
            r = arg(xp.reshape(a, (-1,)))
            if keepdim:
                r = xp.reshape(xp.asarray(r), (1,) * a.ndim)
            return kit.wrap(r, _dt.int64, device)
        ax = wrap_dim(dim, a.ndim)
        if a.ndim == 0:
            return kit.wrap(xp.zeros((), dtype=kit.storage[_dt.int64]), _dt.int64, device)
        nonempty_dims("arg" + name, self, (ax,))
        return kit.wrap(arg(a, axis=ax, keepdims=keepdim), _dt.int64, device)

    return values_and_indices, indices


# --- logsumexp --------------------------------------------------------------------------------


def logsumexp(kit: Kit) -> Kernel:
    xp = kit.xp

    def stable_max(a: Any, axes: Any) -> Any:
        m = xp.max(a, axis=axes, keepdims=True)
        return xp.where(xp.isinf(m), xp.zeros((), dtype=m.dtype), m)

    def logsumexp(self: Tensor, dim: Sequence[int], keepdim: bool = False) -> Tensor:
        d = self._dtype
        od = d if d.kind in "fc" else _dt.get_default_dtype()
        axes = wrap_dims(dim, self._data.ndim)
        a = kit.cast(self._data, kit.accumulate[od])
        with kit.quiet():
            if a.size == 0:
                r = xp.log(xp.sum(xp.exp(a), axis=axes, keepdims=keepdim))
            else:
                m = stable_max(a, axes)
                r = xp.log(xp.sum(xp.exp(a - m), axis=axes, keepdims=True)) + m
                if not keepdim:
                    r = xp.squeeze(r, axis=tuple(range(a.ndim)) if axes is None else axes)
        return kit.wrap(r, od, self._device)

    return logsumexp


# --- any, all, count_nonzero ------------------------------------------------------------------


def logical(kit: Kit, fn_name: str) -> tuple[Kernel, Kernel, Kernel]:
    """The kernels of ``any``, ``any.dim`` and ``any.dims`` (``xp.any``), or of ``all``'s."""
    fn = getattr(kit.xp, fn_name)

    def run(self: Tensor, axes: tuple[int, ...] | None, keepdim: bool) -> Tensor:
        # bool results, but uint8 in uint8 out (PyTorch keeps that for compatibility)
        od = _dt.uint8 if self._dtype is _dt.uint8 else _dt.bool
        r = fn(kit.truth(self._data), axis=axes, keepdims=keepdim)
        return kit.wrap(r, od, self._device)

    def all_dims(self: Tensor) -> Tensor:
        return run(self, None, False)

    def one_dim(self: Tensor, dim: int, keepdim: bool = False) -> Tensor:
        return run(self, wrap_dims([dim], self._data.ndim), keepdim)

    def dims(self: Tensor, dim: Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        if dim is not None and not len(dim):  # dim=[] reduces nothing, as PyTorch
            return run(self, (), keepdim)
        return run(self, wrap_dims(dim, self._data.ndim), keepdim)

    return all_dims, one_dim, dims


def count_nonzero(kit: Kit) -> Kernel:
    def count_nonzero(self: Tensor, dim: int | None = None) -> Tensor:
        axes = None if dim is None else wrap_dims([dim], self._data.ndim)
        r = kit.xp.count_nonzero(self._data, axis=axes)
        return kit.wrap(r, _dt.int64, self._device)

    return count_nonzero


def count_nonzero_dims(kit: Kit) -> Kernel:
    def count_nonzero_dims(self: Tensor, dim: Sequence[int]) -> Tensor:
        r = kit.xp.count_nonzero(self._data, axis=wrap_dims(dim, self._data.ndim))
        return kit.wrap(r, _dt.int64, self._device)

    return count_nonzero_dims


# --- vector norms -----------------------------------------------------------------------------


def vector_norm(kit: Kit) -> Kernel:
    xp = kit.xp

    def vector_norm(
        self: Tensor,
        ord: Scalar = 2,
        dim: Sequence[int] | None = None,
        keepdim: bool = False,
        *,
        dtype: _dt.dtype | None = None,
    ) -> Tensor:
        d = self._dtype
        if d.kind not in "fc":
            raise OpError(
                "linalg.vector_norm: Expected a floating point or complex tensor as input. "
                f"Got {torch_name(d)}"
            )
        if dtype is not None and dtype.kind not in "fc":
            raise OpError(
                "linalg.vector_norm: dtype should be floating point or complex, "
                f"but got {torch_name(dtype)}"
            )
        cd = d if dtype is None else dtype
        od = cd.to_real()
        p = float(ord.real if isinstance(ord, complex) else ord)
        ndim = self._data.ndim
        axes = wrap_dims(dim, ndim)
        shape = self._data.shape
        if p in (math.inf, -math.inf) and self._data.size == 0:
            name = "inf" if p > 0 else "-inf"
            if axes is None:
                raise OpError(
                    f"linalg.vector_norm cannot compute the {name} norm on an empty tensor "
                    "because the operation does not have an identity"
                )
            for ax in axes:
                if shape[ax] == 0:
                    raise OpError(  # sic: PyTorch's message has no space after the dim
                        f"linalg.vector_norm cannot compute the {name} norm on the dimension "
                        f"{ax}because this dimension is empty and the operation does not have "
                        "an identity"
                    )
        a = xp.abs(kit.cast(self._data, kit.accumulate[cd]))
        with kit.quiet():
            if p == math.inf:
                r = xp.max(a, axis=axes, keepdims=keepdim)
            elif p == -math.inf:
                r = xp.min(a, axis=axes, keepdims=keepdim)
            elif p == 0:
                r = xp.sum(kit.cast(a != 0, a.dtype), axis=axes, keepdims=keepdim)
            elif p == 1:
                r = xp.sum(a, axis=axes, keepdims=keepdim)
            elif p == 2:
                r = xp.sqrt(xp.sum(a * a, axis=axes, keepdims=keepdim))
            else:
                r = xp.sum(a**p, axis=axes, keepdims=keepdim) ** (1.0 / p)
        return kit.wrap(r, od, self._device)

    return vector_norm


# --- comparisons of whole tensors -------------------------------------------------------------


def comparisons(kit: Kit) -> tuple[Kernel, Kernel, Kernel]:
    """The kernels of ``isclose``, ``allclose`` (on ``isclose``) and ``equal``."""
    xp = kit.xp

    def isclose(
        self: Tensor,
        other: Tensor,
        rtol: float = 1e-05,
        atol: float = 1e-08,
        equal_nan: bool = False,
    ) -> Tensor:
        if self._dtype is not other._dtype:
            raise OpError(f"{torch_name(self._dtype)} did not match {torch_name(other._dtype)}")
        if rtol < 0:
            raise OpError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
        if atol < 0:
            raise OpError(f"atol must be greater than or equal to zero, but got {atol:g}")
        kit.same_device(self, other)
        check_broadcast(tuple(self._data.shape), tuple(other._data.shape))
        d = self._dtype
        a = kit.as_compute(self, d)
        b = kit.as_compute(other, d)
        if d.kind == "b":
            return kit.wrap(a == b, _dt.bool, self._device)
        with kit.quiet():
            if d.kind in "ui":  # |a - b| without wrapping around
                a, b = kit.cast(a, kit.compute[_dt.float64]), kit.cast(b, kit.compute[_dt.float64])
            close = a == b
            if d.kind in "fc":
                finite = xp.isfinite(a) & xp.isfinite(b)
                close = close | (finite & (xp.abs(a - b) <= atol + rtol * xp.abs(b)))
                if equal_nan:
                    close = close | ((a != a) & (b != b))
            else:
                close = close | (xp.abs(a - b) <= atol + rtol * xp.abs(b))
        return kit.wrap(close, _dt.bool, self._device)

    def allclose(
        self: Tensor,
        other: Tensor,
        rtol: float = 1e-05,
        atol: float = 1e-08,
        equal_nan: bool = False,
    ) -> bool:
        return bool(xp.all(isclose(self, other, rtol, atol, equal_nan)._data))

    def equal(self: Tensor, other: Tensor) -> bool:
        kit.same_device(self, other)
        if tuple(self._data.shape) != tuple(other._data.shape):
            return False
        d = kit.result_dtype(self, other)
        a = kit.operand(self, d, self._device)
        return bool(xp.all(a == kit.operand(other, d, other._device)))

    return isclose, allclose, equal


# --- cumulative sums and products -------------------------------------------------------------


def scan(kit: Kit, name: str, fn: Any) -> Kernel:
    """The kernel of ``cumsum`` or ``cumprod``: ``fn(a, axis=dim)``."""

    def scan(self: Tensor, dim: int, *, dtype: _dt.dtype | None = None) -> Tensor:
        od = int_to_long(self._dtype, dtype)
        kit.check_dtype(od)
        ndim = self._data.ndim
        ax = wrap_dim(dim, ndim)
        a = kit.cast(self._data, kit.accumulate[od])
        with kit.quiet():
            r = a if ndim == 0 else fn(a, axis=ax)
        if ndim == 0:
            r = kit.copy(r)
        return kit.wrap(r, od, self._device)

    scan.__name__ = name
    return scan


def cumsum(kit: Kit) -> Kernel:
    return scan(kit, "cumsum", kit.xp.cumulative_sum)


def cumprod(kit: Kit) -> Kernel:
    return scan(kit, "cumprod", optional(kit.xp, "cumulative_prod", kit.cumulative_prod))


# --- softmax and log_softmax ------------------------------------------------------------------


def softmax_dtype(name: str, self: Tensor, dtype: _dt.dtype | None) -> _dt.dtype:
    od = self._dtype if dtype is None else dtype
    if od.kind != "f":
        raise OpError(f"\"{name}_lastdim_kernel_impl\" not implemented for '{torch_name(od)}'")
    return od


def softmax_fast_path(kit: Kit, log: bool) -> Any:
    """(log_)softmax on the fast path (Note [Reduction fast path]): a function of ``(self, dim,
    dtype)`` that returns None where it does not apply.

    The general path's array calls, with the last two writing into arrays it made.
    """
    xp = kit.xp
    fast = Fast(kit)
    floats, add_reduce, max_reduce = fast.floats, fast.add_reduce, fast.max_reduce
    exp, log_, subtract, divide = xp.exp, xp.log, xp.subtract, xp.divide
    hush, unhush, new, ks = kit.hush, kit.unhush, kit.new, kit.keyset

    def fast_softmax(self: Tensor, dim: int, dtype: _dt.dtype | None) -> Any:
        d = self._dtype
        if d not in floats or (dtype is not None and dtype is not d):
            return None
        a = self._data
        n = a.ndim
        if not n or not a.size:
            return None
        ax = dim if 0 <= dim < n else dim + n if -n <= dim < 0 else None
        if ax is None:
            return None
        token = hush()
        try:
            shifted = a - max_reduce(a, ax, None, None, True)  # type: ignore[misc]
            if log:
                s = add_reduce(exp(shifted), ax, None, None, True)  # type: ignore[misc]
                r = subtract(shifted, log_(s, out=s), out=shifted)
            else:
                e = exp(shifted, out=shifted)
                r = divide(e, add_reduce(e, ax, None, None, True), out=e)  # type: ignore[misc]
        finally:
            unhush(token)
        return new(r, d, self._device, ks)

    return fast_softmax


def softmax(kit: Kit) -> Kernel:
    xp = kit.xp
    fast = softmax_fast_path(kit, False)

    def general(self: Tensor, dim: int, dtype: _dt.dtype | None = None) -> Tensor:
        od = softmax_dtype("softmax", self, dtype)
        ax = wrap_dim(dim, self._data.ndim)
        a = kit.cast(self._data, kit.accumulate[od])
        if a.ndim == 0:
            return kit.wrap(xp.ones((), dtype=a.dtype), od, self._device)
        with kit.quiet():
            e = xp.exp(a - xp.max(a, axis=ax, keepdims=True)) if a.size else a
            r = e / xp.sum(e, axis=ax, keepdims=True)
        return kit.wrap(r, od, self._device)

    slow = guard("softmax.int", general)

    @guarded
    def softmax(self: Tensor, dim: int, dtype: _dt.dtype | None = None) -> Tensor:
        r = fast(self, dim, dtype)
        if r is not None:
            return r  # type: ignore[no-any-return]
        return slow(self, dim, dtype)  # type: ignore[no-any-return]

    return softmax


def log_softmax(kit: Kit) -> Kernel:
    xp = kit.xp
    fast = softmax_fast_path(kit, True)

    def general(self: Tensor, dim: int, dtype: _dt.dtype | None = None) -> Tensor:
        od = softmax_dtype("log_softmax", self, dtype)
        ax = wrap_dim(dim, self._data.ndim)
        a = kit.cast(self._data, kit.accumulate[od])
        if a.ndim == 0:
            return kit.wrap(xp.zeros((), dtype=a.dtype), od, self._device)
        with kit.quiet():
            if a.size:
                shifted = a - xp.max(a, axis=ax, keepdims=True)
                r = shifted - xp.log(xp.sum(xp.exp(shifted), axis=ax, keepdims=True))
            else:
                r = a
        return kit.wrap(r, od, self._device)

    slow = guard("log_softmax.int", general)

    @guarded
    def log_softmax(self: Tensor, dim: int, dtype: _dt.dtype | None = None) -> Tensor:
        r = fast(self, dim, dtype)
        if r is not None:
            return r  # type: ignore[no-any-return]
        return slow(self, dim, dtype)  # type: ignore[no-any-return]

    return log_softmax


# --- the table --------------------------------------------------------------------------------

# op name -> builder of its kernel; families (one builder making several kernels) below
BUILDERS: dict[str, Any] = {
    "sum": sum_all,
    "sum.dim_IntList": sum_dim,
    "prod": prod_all,
    "prod.dim_int": prod_dim,
    "mean": mean_all,
    "mean.dim": mean_dim,
    "var.correction": var,
    "std.correction": std,
    "aminmax": aminmax,
    "logsumexp": logsumexp,
    "count_nonzero": count_nonzero,
    "count_nonzero.dim_IntList": count_nonzero_dims,
    "linalg_vector_norm": vector_norm,
    "cumsum": cumsum,
    "cumprod": cumprod,
    "softmax.int": softmax,
    "log_softmax.int": log_softmax,
}


def build(kit: Kit) -> Kernels:
    k: Kernels = {name: make(kit) for name, make in BUILDERS.items()}
    k["amax"], k["max"] = extremum(kit, "amax", "max", "maximum")
    k["amin"], k["min"] = extremum(kit, "amin", "min", "minimum")
    k["max.dim"], k["argmax"] = with_indices(kit, "max", "argmax")
    k["min.dim"], k["argmin"] = with_indices(kit, "min", "argmin")
    for name in ("any", "all"):
        k[name], k[f"{name}.dim"], k[f"{name}.dims"] = logical(kit, name)
    k["isclose"], k["allclose"], k["equal"] = comparisons(kit)
    return k


def _count(shape: tuple[int, ...], axes: tuple[int, ...] | None) -> int:
    """How many elements a reduction over ``axes`` (None: all) of ``shape`` combines."""
    n = 1
    for ax in range(len(shape)) if axes is None else axes:
        n *= int(shape[ax])
    return n
