"""softmax and log_softmax: the ``reductions`` family (their sums run along ``dim``; Note
[Reduction fast path] in _common.py). One builder makes both kernels; they differ only in the
formula and in the value of a 0-dim input (1 and 0).
"""

from __future__ import annotations

from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernel, Kernels, Kit, OpError, guard, guarded, torch_name, wrap_dim
from ._common import Fast


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


def softmax_kernel(kit: Kit, log: bool) -> Kernel:
    """The kernel of ``aten::log_softmax.int`` (``log``) or ``aten::softmax.int``: the fast
    path, else the general path in the accumulation dtype."""
    name = "log_softmax" if log else "softmax"
    xp = kit.xp
    fast = softmax_fast_path(kit, log)

    def general(self: Tensor, dim: int, dtype: _dt.dtype | None = None) -> Tensor:
        od = softmax_dtype(name, self, dtype)
        ax = wrap_dim(dim, self._data.ndim)
        a = kit.cast(self._data, kit.accumulate[od])
        if a.ndim == 0:
            made = xp.zeros if log else xp.ones
            return kit.wrap(made((), dtype=a.dtype), od, self._device)
        with kit.quiet():
            if log:
                if a.size:
                    shifted = a - xp.max(a, axis=ax, keepdims=True)
                    r = shifted - xp.log(xp.sum(xp.exp(shifted), axis=ax, keepdims=True))
                else:
                    r = a
            else:
                e = xp.exp(a - xp.max(a, axis=ax, keepdims=True)) if a.size else a
                r = e / xp.sum(e, axis=ax, keepdims=True)
        return kit.wrap(r, od, self._device)

    slow = guard(f"{name}.int", general)

    @guarded
    def kernel(self: Tensor, dim: int, dtype: _dt.dtype | None = None) -> Tensor:
        r = fast(self, dim, dtype)
        if r is not None:
            return r  # type: ignore[no-any-return]
        return slow(self, dim, dtype)  # type: ignore[no-any-return]

    # named as its builder's kernel (softmax.<locals>.softmax), as before the builders merged
    kernel.__name__ = name
    kernel.__qualname__ = f"{name}.<locals>.{name}"
    return kernel


def softmax(kit: Kit) -> Kernel:
    return softmax_kernel(kit, log=False)


def log_softmax(kit: Kit) -> Kernel:
    return softmax_kernel(kit, log=True)


BUILDERS: dict[str, Any] = {"softmax.int": softmax, "log_softmax.int": log_softmax}


def build(kit: Kit) -> Kernels:
    return {name: make(kit) for name, make in BUILDERS.items()}
