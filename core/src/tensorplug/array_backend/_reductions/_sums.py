"""Sums and products, means, var and std, logsumexp, any/all, count_nonzero, vector norms,
and the running sums and products cumsum/cumprod (the ``reductions`` family; Note [Reduction
fast path] in _common.py).

Output dtypes follow PyTorch: ``sum``/``prod`` of bool and integers give int64; ``mean`` and
``var`` need a floating or complex input (or ``dtype=``); ``var`` of complex is real. Half
precision inputs accumulate in float32 (Note [Storage and compute dtypes] in _kit.py). A dim
list that is ``None`` or empty reduces every dimension.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import (
    Kernel,
    Kernels,
    Kit,
    OpError,
    Scalar,
    cpp_name,
    guard,
    guarded,
    lowers,
    optional,
    torch_name,
    wrap_dim,
    wrap_dims,
)
from .._pointwise._elementwise import write_result
from ._common import Fast, _one_axis, reduce


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

    def lower(
        self: Any,
        dim: Sequence[int] | None,
        keepdim: bool = False,
        *,
        dtype: _dt.dtype | None = None,
    ) -> Any:
        """Note [Raw lowerings]: the fast path's quiet ``add.reduce``."""
        if dtype is not None or self.dtype not in floats:
            return None
        ax = _one_axis(dim, len(self.shape))
        if ax is None:
            return None

        def sum_arrays(a: Any) -> Any:
            token = hush()
            try:
                r = add_reduce(a, ax, None, None, keepdim)  # type: ignore[misc]
            finally:
                unhush(token)
            return r if type(r) is arr_t else asarray(r)

        return sum_arrays, ks

    return lowers(kit, sum_dim, lower)


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
        if dtype is None and self._dtype in means and math.prod(self._data.shape):
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
        if dtype is None and self._dtype in means and math.prod(self._data.shape):
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
            if math.prod(a.shape) == 0:
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
        if p in (math.inf, -math.inf) and math.prod(self._data.shape) == 0:
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


# op name -> builder of its kernel; families (one builder making several kernels) in build
BUILDERS: dict[str, Any] = {
    "sum": sum_all,
    "sum.dim_IntList": sum_dim,
    "prod": prod_all,
    "prod.dim_int": prod_dim,
    "mean": mean_all,
    "mean.dim": mean_dim,
    "var.correction": var,
    "std.correction": std,
    "logsumexp": logsumexp,
    "count_nonzero": count_nonzero,
    "count_nonzero.dim_IntList": count_nonzero_dims,
    "linalg_vector_norm": vector_norm,
    "cumsum": cumsum,
    "cumprod": cumprod,
}


def scan_inplace(kit: Kit, scan: Kernel) -> Kernel:
    """``cumsum_`` / ``cumprod_``: the scan (in ``dtype`` when given) written into self."""

    def scan_(self: Tensor, dim: int, *, dtype: _dt.dtype | None = None) -> Tensor:
        if dtype is not None and dtype is not self._dtype:
            raise OpError(
                f"Bad in-place call: input tensor dtype {cpp_name(self._dtype)} and output "
                f"tensor dtype {cpp_name(dtype)} should match"
            )
        r = scan(self, dim, dtype=dtype)
        write_result(kit, self, r._data, r._dtype, in_place=True)
        return self

    return scan_


def build(kit: Kit) -> Kernels:
    k: Kernels = {name: make(kit) for name, make in BUILDERS.items()}
    for name in ("cumsum", "cumprod"):  # in place (issue 29)
        k[f"{name}_"] = scan_inplace(kit, k[name])
    for name in ("any", "all"):
        k[name], k[f"{name}.dim"], k[f"{name}.dims"] = logical(kit, name)
    return k
