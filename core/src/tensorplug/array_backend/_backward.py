"""Backward kernels: the gradients of relu, softmax, log_softmax and nll_loss as one kernel each.

Autograd formulas call these (as PyTorch's derivatives.yaml calls ``threshold_backward`` and
friends) so that a backward pass runs one array expression where a composition of public ops
would dispatch five. Each computes in the accumulation dtype of its result (Note [Storage and
compute dtypes] in _kit.py) and keeps PyTorch's conventions:

* ``threshold_backward(g, x, t)`` is ``g`` where ``x > t`` and 0 elsewhere; a NaN in ``x``
  passes ``g`` through (PyTorch tests ``x <= t``, which NaN fails);
* ``_softmax_backward_data(g, y, dim, input_dtype)`` is ``y * (g - sum(g * y, dim))`` and
  ``_log_softmax_backward_data`` is ``g - exp(y) * sum(g, dim)``, both in ``input_dtype``;
* ``nll_loss_backward`` scatters ``-weight[target] * g`` (divided by the total weight for
  ``"mean"``) into zeros shaped like ``self``; ignored targets get nothing (an exact 0, also
  when every target is ignored and the mean divides by a zero total weight).
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor
from ._kit import Kernels, Kit, OpError, Scalar, check_broadcast, wrap_dim
from ._nn import check_nll_weight, check_reduction, floating, nll_target


def build(kit: Kit) -> Kernels:
    xp = kit.xp
    k: Kernels = {}

    zeros0 = {d: xp.zeros((), dtype=kit.compute[d]) for d in kit.compute}
    native = kit.native
    isfinite = xp.isfinite
    # the ufunc reductions where the library has them, as _nn and _indexing use: numpy's
    # xp.all / xp.min are Python wrappers around them
    all_reduce = getattr(xp.logical_and, "reduce", None)
    add_reduce = getattr(xp.add, "reduce", None)
    min_reduce = getattr(xp.minimum, "reduce", None)

    def all_(a: Any) -> Any:
        return xp.all(a) if all_reduce is None else all_reduce(a, None)

    def min_(a: Any) -> Any:
        return xp.min(a) if min_reduce is None else min_reduce(a, None)

    def threshold_backward(grad_output: Tensor, self: Tensor, threshold: Scalar) -> Tensor:
        g, x = grad_output, self
        d = g._dtype if g._dtype is x._dtype else kit.result_dtype(g, x)
        kit.same_device(g, x)
        ga, xa = kit.as_compute(g, d), kit.as_compute(x, d)
        if ga.shape != xa.shape:
            check_broadcast(tuple(ga.shape), tuple(xa.shape))
        drop = xa <= threshold
        if (
            d.kind == "f"
            and kit.writes_out  # numpy's ufuncs: a float times a bool array, in place
            and d in native
            and bool(all_(isfinite(ga)))
        ):
            # g * keep (+ 0.0, which turns the -0.0 of a negative g times 0 into PyTorch's 0)
            # is faster than where() with numpy, and exact for finite g (inf * 0 is NaN)
            r = ga * xp.logical_not(drop)
            r += 0.0
            return kit.wrap(r, d, g._device)
        r = xp.where(drop, zeros0[d], ga)
        return kit.wrap(r, d, g._device)

    def softmax_parts(
        name: str, grad_output: Tensor, output: Tensor, dim: int, input_dtype: _dt.dtype
    ) -> tuple[Any, Any, int | None]:
        d = output._dtype
        g, y = grad_output._data, output._data
        if (
            d is input_dtype
            and d is grad_output._dtype
            and d in native
            and d.kind == "f"
            and grad_output._device is output._device
            and g.shape == y.shape
            and y.ndim
        ):  # the common case: one dtype, computed natively
            return g, y, wrap_dim(dim, y.ndim)
        floating(name, input_dtype)
        floating(name, output._dtype)
        if tuple(grad_output._data.shape) != tuple(output._data.shape):
            raise OpError(
                f"grad_output and output must have the same shape, but got "
                f"{list(grad_output._data.shape)} and {list(output._data.shape)}"
            )
        kit.same_device(grad_output, output)
        acc = kit.accumulate[output._dtype]
        g = kit.cast(grad_output._data, acc)
        y = kit.cast(output._data, acc)
        ndim = y.ndim
        ax = wrap_dim(dim, ndim)
        return g, y, (ax if ndim else None)

    def softmax_backward_data(
        grad_output: Tensor, output: Tensor, dim: int, input_dtype: _dt.dtype
    ) -> Tensor:
        g, y, ax = softmax_parts("softmax_backward_data", grad_output, output, dim, input_dtype)
        gy = g * y
        if ax is None or add_reduce is None:  # 0-d (numpy gives scalars), or no ufunc reduce
            r = gy - y * xp.sum(gy, axis=ax, keepdims=True)
        else:  # the same, into gy's array, with the ufunc's own reduce (xp.sum wraps it)
            r = xp.subtract(gy, y * add_reduce(gy, ax, None, None, True), out=gy)
        return kit.wrap(r, input_dtype, output._device)

    def log_softmax_backward_data(
        grad_output: Tensor, output: Tensor, dim: int, input_dtype: _dt.dtype
    ) -> Tensor:
        g, y, ax = softmax_parts("log_softmax_backward_data", grad_output, output, dim, input_dtype)
        if ax is None or add_reduce is None:
            r = g - xp.exp(y) * xp.sum(g, axis=ax, keepdims=True)
        else:
            e = xp.exp(y)
            r = xp.subtract(g, xp.multiply(e, add_reduce(g, ax, None, None, True), out=e), out=e)
        return kit.wrap(r, input_dtype, output._device)

    def nll_loss_backward(
        grad_output: Tensor,
        self: Tensor,
        target: Tensor,
        weight: Tensor | None = None,
        reduction: str = "mean",
        ignore_index: int = -100,
    ) -> Tensor:
        check_reduction(reduction)
        d = floating("nll_loss_backward", self._dtype)
        device = self._device
        shape = tuple(self._data.shape)
        t = nll_target(kit, shape, target, device)  # the checks (and messages) of nll_loss
        batched = len(shape) >= 2
        n_classes = shape[1] if batched else shape[0]
        acc = kit.accumulate[d]
        g = kit.cast(kit.operand(grad_output, grad_output._dtype, device), acc)
        want = tuple(t.shape) if reduction == "none" else ()
        if tuple(g.shape) != want:
            raise OpError(
                f"grad_output must have shape {list(want)} for reduction '{reduction}', "
                f"got {list(g.shape)}"
            )
        lo = int(min_(t)) if t.size else 0
        if len(shape) == 2 and weight is None and reduction != "none" and ignore_index < 0 <= lo:
            # the common case: no weights, and no target can be the (negative) ignore_index
            out = xp.zeros(shape, dtype=acc)
            rows = kit.row_numbers(shape[0], device)
            kit.put(out, (rows, t), -(g / shape[0] if reduction == "mean" else g))
            return kit.wrap(out, d, device)
        valid = t != ignore_index
        if lo < 0 and bool(xp.any(valid & (t < 0))):
            raise IndexError(f"Target {int(min_(xp.where(valid, t, 0)))} is out of bounds.")
        safe = xp.where(valid, t, xp.zeros((), dtype=t.dtype))
        if weight is None:
            wt = kit.cast(valid, acc)
        else:
            check_nll_weight(weight, n_classes)
            w = kit.cast(kit.operand(weight, weight._dtype, device), acc)
            wt = kit.getitem(w, (safe,)) * kit.cast(valid, acc)
        with kit.quiet():  # "mean" with a zero total weight divides by zero, as PyTorch
            coef = -wt * (g / xp.sum(wt) if reduction == "mean" else g)
        # ignored targets get an exact 0, as PyTorch, which never writes them: not the -0.0 of
        # -0 * g, nor the NaN of 0 * (g / 0) when every target is ignored
        coef = xp.where(valid, coef, xp.zeros((), dtype=acc))
        out = xp.zeros(shape, dtype=acc)
        if not batched:
            kit.put(out, (safe,), coef)
        elif len(shape) == 2:
            kit.put(out, (kit.row_numbers(shape[0], device), safe), coef)
        else:  # (N, C, d1, ...): compare each class with the target, along dim 1
            classes = xp.reshape(xp.arange(n_classes), (1, n_classes) + (1,) * (len(shape) - 2))
            hit = xp.expand_dims(safe, axis=1) == classes
            out = xp.where(hit, xp.expand_dims(coef, axis=1), out)
        return kit.wrap(out, d, device)

    k["threshold_backward"] = threshold_backward
    k["_softmax_backward_data"] = softmax_backward_data
    k["_log_softmax_backward_data"] = log_softmax_backward_data
    k["nll_loss_backward"] = nll_loss_backward
    return k
