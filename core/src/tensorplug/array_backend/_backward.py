"""Backward kernels: the gradients of relu, gelu, softmax, log_softmax and nll_loss as one kernel
each.

Autograd formulas call these (as PyTorch's derivatives.yaml calls ``threshold_backward`` and
friends) so that a backward pass runs one array expression where a composition of public ops
would dispatch five. Each computes in the accumulation dtype of its result (Note [Storage and
compute dtypes] in _kit.py) and keeps PyTorch's conventions:

* ``threshold_backward(g, x, t)`` is ``g`` where ``x > t`` and 0 elsewhere; a NaN in ``x``
  passes ``g`` through (PyTorch tests ``x <= t``, which NaN fails);
* ``gelu_backward(g, x, approximate)`` is ``g * gelu'(x)`` (Note [GELU backward]);
* ``_softmax_backward_data(g, y, dim, input_dtype)`` is ``y * (g - sum(g * y, dim))`` and
  ``_log_softmax_backward_data`` is ``g - exp(y) * sum(g, dim)``, both in ``input_dtype``;
* ``nll_loss_backward`` scatters ``-weight[target] * g`` (divided by the total weight for
  ``"mean"``) into zeros shaped like ``self``; ignored targets get nothing (an exact 0, also
  when every target is ignored and the mean divides by a zero total weight).

Each kernel has its builder, named after it: ``threshold_backward(kit)`` returns the kernel of
``aten::threshold_backward`` for ``kit``'s backend, so a kernel can be built, called and read on
its own; :func:`build` builds them all.

``tensorplug::cross_entropy_loss_backward(g, log_probs, target, reduction, ignore_index)`` (Note
[tensorplug operators] in _opset/own_ops.py) is ``cross_entropy``'s input gradient in one kernel; its
general path runs the general paths of ``nll_loss_backward`` and ``_log_softmax_backward_data``.

Note [Fused cross-entropy backward]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``_log_softmax_backward_data(nll_loss_backward(g, y, t), y)`` is ``G - exp(y) * sum(G, 1)``
with ``G`` zero but for ``G[i, t[i]] = -c[i]`` (``c`` is ``g / N`` for ``"mean"``, ``g`` for
``"sum"``, ``g[i]`` for ``"none"``). A row of zeros and one non-zero ``-c[i]`` sums to
``-c[i]`` exactly, and ``exp(y) * -c == -(exp(y) * c)`` (rounding is symmetric in sign), so the
result is ``0 + exp(y) * c`` off the target and ``-c + exp(y) * c`` at it: computed as
``e = exp(y); e *= c; e[rows, t] -= c``, one exponential and one product instead of a zero
fill, a scatter, a row sum, an exponential, a product and a difference. Bit for bit the same
when ``c`` is a positive normal number in the dtype (checked on the host): a zero ``c`` gives
signed zeros of their own in the composition (``-0.0 - 0.0``), a negative one ``-0.0`` where
``exp(y) * c`` underflows (``0 + -0.0`` is ``+0.0``), a NaN takes the general path. Ignored
targets, 1-D input, half precision and other devices take the general path too.

Note [Lazy cross-entropy backward]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
On a lazy backend the (batch, classes) composition ``G - exp(y) * sum(G, 1)`` needs no row sum
either: ``G``'s row is zeros but for ``c[i]`` at the target's class (``nll_loss_backward``,
Note [Lazy nll_loss] in _nn/_functions.py), and a sum of zeros and one value ``v`` is ``v +
0.0`` (``v`` itself, but ``+0.0`` for ``-0.0``: the zeros are ``+0.0``) with more than one
class, or ``0.0`` for a row with no hit (a target out of range, or ignored). So the row sum
is ``where(hit in the row, c, 0) + 0``, elementwise, and the result the composition's bits,
chunk by chunk with no reduction; ``c`` is one 0-d coefficient for a ``"mean"`` or ``"sum"``
loss (``-g / count``, ``-g``), a column for ``"none"``. (On the host the fused path above
does better, with no zeros at all.)

Note [Lazy threshold_backward]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
ReLU's backward, ``where(x <= 0, 0, g)``, is the largest elementwise pass of a training step's
backward on dask (a (batch, hidden) array, recomputed in each task that reads it: the weight
gradient's product and the bias gradient's sum). numpy's ``where`` over a mask with no pattern
costs 4 to 8 times what the mask's integer ops cost (34 ms against 8 ms on 8192 x 256 float32
here), so on a lazy library whose arrays view their bits (dask's ``view`` is chunk by chunk)
the kernel drops gradients as the host fast path does, by ANDing their bits with ``drop - 1``
in the integer dtype of their width: the same bits as the ``where`` (NaN, inf and -0.0 kept
where they pass, +0.0 where dropped), without ``out=``.

Note [Backward kernel fast paths]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A training step calls these kernels on one floating dtype computed natively, on one device, with
shapes that agree: that case skips the general path's dtype promotion, device checks and casts,
and the guard that converts errors (Note [Kernel errors] in _checks.py), since every array call
in it either cannot raise or is caught and sent to the general path, which raises with the
op's message. Each fast path makes the array calls the general path makes for that case, so the
results are the same to the bit. (``threshold_backward`` on float32 and float64 arrays with numpy's
``view`` drops gradients by ANDing their bits with a -1/0 mask: no finiteness check, and exact
for NaN, inf and -0.0 gradients, which pass unchanged where the input is above the threshold,
the bits of the general path's ``where``.)
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as _dt
from .._op_errors import torch_name
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
    lowers,
    wrap_dim,
)
from ._nn import (
    check_nll_weight,
    check_reduction,
    class_hits,
    floating,
    lazy_pick_and_count,
    nll_target,
)
from ._pointwise._unary import erfc, erfc_f32

_INF = math.inf


def fast_floats(kit: Kit) -> frozenset[_dt.dtype]:
    """The dtypes of Note [Backward kernel fast paths]: floating, computed and accumulated
    natively, by a library with numpy's ufunc reductions and ``out=``."""
    xp = kit.xp
    if not kit.writes_out or getattr(xp.add, "reduce", None) is None:
        return frozenset()
    return frozenset(d for d in kit.native if d.kind == "f" and kit.accumulate[d] == kit.storage[d])


def _native_floats(kit: Kit) -> frozenset[_dt.dtype]:
    return frozenset(d for d in kit.native if d.kind == "f" and kit.accumulate[d] == kit.storage[d])


def _min(xp: Any) -> Any:
    reduce = getattr(xp.minimum, "reduce", None)
    if reduce is None:
        return xp.min
    return lambda a: reduce(a, None)


# --- threshold_backward -------------------------------------------------------------------


def threshold_backward(kit: Kit) -> Kernel:
    xp = kit.xp
    zeros0 = {d: xp.zeros((), dtype=kit.compute[d]) for d in kit.compute}
    fast = fast_floats(kit)
    new = kit.new
    ks = kit.keyset
    bits = _bit_views(kit)
    # a lazy library's arrays (dask's) view their bits too, without ``out=``: the same mask,
    # elementwise, instead of a ``where`` (numpy's where over an unpredictable mask is 4 to 8
    # times the cost of the mask's integer ops; Note [Lazy threshold_backward])
    lazy_bits = _bit_views(kit, lazy=True) if kit.lazy else {}
    subtract, bitwise_and, int8 = xp.subtract, xp.bitwise_and, getattr(xp, "int8", None)

    def masked(ga: Any, drop: Any) -> Any:
        """``ga`` where ``drop`` is false and +0.0 where it is true, bit for bit (NaN, inf and
        -0.0 of ``ga`` kept where it passes; nothing computed in floating point): the bits of
        ``ga`` ANDed with a mask of -1 (keep) and 0 (drop), made as ``drop - 1`` in the
        integer dtype of ``ga``'s width."""
        as_int, as_float = bits[ga.dtype]
        mask = subtract(drop.view(int8), 1, dtype=as_int)
        return bitwise_and(ga.view(as_int), mask, out=mask).view(as_float)

    def general(grad_output: Tensor, self: Tensor, threshold: Scalar) -> Tensor:
        g, x = grad_output, self
        d = g._dtype if g._dtype is x._dtype else kit.result_dtype(g, x)
        kit.same_device(g, x)
        ga, xa = kit.as_compute(g, d), kit.as_compute(x, d)
        if ga.shape != xa.shape:
            check_broadcast(tuple(ga.shape), tuple(xa.shape))
        drop = xa <= threshold
        if ga.dtype in bits and ga.shape == xa.shape and ga.ndim:
            return kit.wrap(masked(ga, drop), d, g._device)
        if ga.dtype in lazy_bits and ga.shape == xa.shape and ga.ndim:
            as_int, as_float = lazy_bits[ga.dtype]
            mask = subtract(drop.view(int8), 1, dtype=as_int)
            return kit.wrap(bitwise_and(ga.view(as_int), mask).view(as_float), d, g._device)
        return kit.wrap(xp.where(drop, zeros0[d], ga), d, g._device)

    slow = guard("threshold_backward", general, kit.key_name)

    @guarded  # Note [Backward kernel fast paths]
    def threshold_backward(grad_output: Tensor, self: Tensor, threshold: Scalar) -> Tensor:
        d = grad_output._dtype
        if (
            d in fast
            and self._dtype is d
            and self._device is grad_output._device
            and (type(threshold) is float or type(threshold) is int)
        ):
            ga = grad_output._data
            xa = self._data
            if ga.shape == xa.shape and ga.ndim and ga.dtype in bits:
                return new(masked(ga, xa <= threshold), d, grad_output._device, ks)
        return slow(grad_output, self, threshold)  # type: ignore[no-any-return]

    def lower(grad_output: Any, self: Any, threshold: Scalar) -> Any:
        """Note [Raw lowerings]: the fast path's ``masked``."""
        d = grad_output.dtype
        if (
            d in fast
            and self.dtype is d
            and self.device == grad_output.device
            and (type(threshold) is float or type(threshold) is int)
            and grad_output.shape == self.shape
            and grad_output.shape
            and kit.storage[d] in bits
        ):
            return (lambda ga, xa: masked(ga, xa <= threshold)), ks
        return None

    return lowers(kit, threshold_backward, lower)


def _bit_views(kit: Kit, lazy: bool = False) -> dict[Any, tuple[Any, Any]]:
    """For the native float array dtypes of ``kit``'s fast paths (with ``lazy``, its native
    floating dtypes computed and accumulated as stored), where its arrays have numpy's
    ``view``: the float dtype -> (the integer dtype of its width, itself)."""
    xp = kit.xp
    floats = _native_floats(kit) if lazy else fast_floats(kit)
    if not floats or not hasattr(xp.asarray(0.0), "view"):
        return {}
    ints = {4: getattr(xp, "int32", None), 8: getattr(xp, "int64", None)}
    out: dict[Any, tuple[Any, Any]] = {}
    for d in floats:
        xd = kit.storage[d]
        width = xp.empty(0, dtype=xd).itemsize
        if ints.get(width) is not None and getattr(xp, "int8", None) is not None:
            out[xd] = (ints[width], xd)
    return out


# --- softmax and log_softmax --------------------------------------------------------------


def _softmax_parts(
    kit: Kit, name: str, grad_output: Tensor, output: Tensor, dim: int, input_dtype: _dt.dtype
) -> tuple[Any, Any, int | None]:
    """The checked arrays of a softmax backward, in the accumulation dtype, and its axis (None
    for a 0-d output)."""
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


def _softmax_general(kit: Kit, name: str, formula: Any) -> Kernel:
    """A softmax backward kernel's general path, its errors not converted."""

    def general(grad_output: Tensor, output: Tensor, dim: int, input_dtype: _dt.dtype) -> Tensor:
        g, y, ax = _softmax_parts(kit, name, grad_output, output, dim, input_dtype)
        return kit.wrap(formula(g, y, ax), input_dtype, output._device)

    return general


def _softmax_kernel(kit: Kit, name: str, formula: Any, fast_formula: Any) -> Kernel:
    """A softmax backward kernel ``(grad_output, output, dim, input_dtype)``: ``formula(g, y,
    ax)`` in general, ``fast_formula(g, y, ax)`` on Note [Backward kernel fast paths] (one
    dtype, the shapes equal, at least one dimension, the dim in range)."""
    fast = fast_floats(kit)
    new = kit.new
    ks = kit.keyset
    slow = guard(name, _softmax_general(kit, name, formula), kit.key_name)

    @guarded  # Note [Backward kernel fast paths]
    def kernel(grad_output: Tensor, output: Tensor, dim: int, input_dtype: _dt.dtype) -> Tensor:
        d = output._dtype
        if (
            d in fast
            and d is input_dtype
            and d is grad_output._dtype
            and grad_output._device is output._device
            and type(dim) is int
        ):
            g, y = grad_output._data, output._data
            n = y.ndim
            if g.shape == y.shape and n and -n <= dim < n:
                return new(fast_formula(g, y, dim % n), d, output._device, ks)
        return slow(grad_output, output, dim, input_dtype)  # type: ignore[no-any-return]

    def lower(grad_output: Any, output: Any, dim: int, input_dtype: _dt.dtype) -> Any:
        """Note [Raw lowerings]: the fast path's ``fast_formula``."""
        d = output.dtype
        n = len(output.shape)
        if (
            d in fast
            and d is input_dtype
            and d is grad_output.dtype
            and grad_output.device == output.device
            and type(dim) is int
            and grad_output.shape == output.shape
            and n
            and -n <= dim < n
        ):
            ax = dim % n
            return (lambda g, y: fast_formula(g, y, ax)), ks
        return None

    lowers(kit, kernel, lower)
    # named as its builder's kernel (softmax_backward_data.<locals>.softmax_backward_data)
    short = name.lstrip("_")
    kernel.__name__ = short
    kernel.__qualname__ = f"{short}.<locals>.{short}"
    return kernel


def softmax_backward_data(kit: Kit) -> Kernel:
    """``y * (g - sum(g * y, dim))``."""
    xp = kit.xp
    add_reduce = getattr(xp.add, "reduce", None)

    def formula(g: Any, y: Any, ax: int | None) -> Any:
        gy = g * y
        if ax is None or add_reduce is None or not kit.writes_out:
            # 0-d (numpy gives scalars), or no ufunc reduce
            return gy - y * xp.sum(gy, axis=ax, keepdims=True)
        return fast_formula(g, y, ax)

    def fast_formula(g: Any, y: Any, ax: int) -> Any:
        # the same, into g * y's array, with the ufunc's own reduce (xp.sum wraps it)
        gy = g * y
        return xp.subtract(gy, y * add_reduce(gy, ax, None, None, True), out=gy)  # type: ignore[misc]

    return _softmax_kernel(kit, "_softmax_backward_data", formula, fast_formula)


def log_softmax_backward_data(kit: Kit) -> Kernel:
    """``g - exp(y) * sum(g, dim)``."""
    formula, fast_formula = _log_softmax_formulas(kit)
    return _softmax_kernel(kit, "_log_softmax_backward_data", formula, fast_formula)


def _log_softmax_formulas(kit: Kit) -> tuple[Any, Any]:
    """``_log_softmax_backward_data``'s formulas ``(g, y, ax)``: general, and for Note
    [Backward kernel fast paths]."""
    xp = kit.xp
    add_reduce = getattr(xp.add, "reduce", None)
    exp = xp.exp
    multiply = getattr(xp, "multiply", None)
    subtract = xp.subtract

    def formula(g: Any, y: Any, ax: int | None) -> Any:
        if ax is None or add_reduce is None or not kit.writes_out:
            return g - xp.exp(y) * xp.sum(g, axis=ax, keepdims=True)
        return fast_formula(g, y, ax)

    def fast_formula(g: Any, y: Any, ax: int) -> Any:
        e = exp(y)
        return subtract(g, multiply(e, add_reduce(g, ax, None, None, True), out=e), out=e)  # type: ignore[misc]

    return formula, fast_formula


# --- nll_loss_backward --------------------------------------------------------------------


def _nll_loss_backward_general(kit: Kit) -> Kernel:
    """``nll_loss_backward``'s general path, its errors not converted (its kernel's guard, or
    ``cross_entropy_loss_backward``'s, names the op)."""
    xp = kit.xp
    min_ = _min(xp)
    zeros = xp.zeros

    def general(
        grad_output: Tensor,
        self: Tensor,
        target: Tensor,
        weight: Tensor | None = None,
        reduction: str = "mean",
        ignore_index: int = -100,
        rows: bool = False,
    ) -> Any:
        """The gradient; with ``rows`` (a lazy backend's (batch, classes) input without
        weights, for Note [Lazy cross-entropy backward]) its array, the coefficient of each
        target and the targets, both as columns."""
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
        # a lazy backend reads no target (Note [Lazy backends read no values]): the general path
        lo = None if kit.lazy else (int(min_(t)) if math.prod(t.shape) else 0)
        if (
            lo is not None
            and len(shape) == 2
            and weight is None
            and reduction != "none"
            and ignore_index < 0 <= lo
        ):
            # no weights, and no target can be the (negative) ignore_index
            out = zeros(shape, dtype=acc)
            rows = kit.row_numbers(shape[0], device)
            kit.put(out, (rows, t), -(g / shape[0] if reduction == "mean" else g))
            return kit.wrap(out, d, device)
        if kit.lazy and weight is None and len(shape) == 2:
            # Note [Lazy nll_loss]: the targets' classes as class_hits compares them, with the
            # count of the forward's reduction (the same tasks), no reshape of a coefficient
            # vector; an ignored target has no hit, so its row is zeros
            zero = xp.zeros((), dtype=acc)
            if reduction == "mean":
                x = kit.cast(self._data, acc)
                scale = g / lazy_pick_and_count(kit, x, t, ignore_index, n_classes)[1]
            else:
                scale = xp.expand_dims(g, axis=1) if reduction == "none" else g
            with kit.quiet():  # "mean" with a zero total weight divides by zero, as PyTorch
                # -weight * scale with every weight 1: -scale, exactly
                coef = -scale
            hit = class_hits(kit, t, n_classes, 2, ignore_index, backward=True)
            out = xp.where(hit, coef, zero)
            if rows:
                return out, coef, t
            return kit.wrap(out, d, device)
        valid = t != ignore_index
        if lo is not None and lo < 0 and bool(xp.any(valid & (t < 0))):
            raise IndexError(f"Target {int(min_(xp.where(valid, t, 0)))} is out of bounds.")
        safe = xp.where(valid, t, xp.zeros((), dtype=t.dtype))
        if weight is None:
            wt = kit.cast(valid, acc)
        else:
            check_nll_weight(weight, n_classes)
            w = kit.cast(kit.operand(weight, weight._dtype, device), acc)
            wt = kit.getitem(w, (safe,)) * kit.cast(valid, acc)
        if reduction == "mean":
            total = xp.sum(wt)
        with kit.quiet():  # "mean" with a zero total weight divides by zero, as PyTorch
            coef = -wt * (g / total if reduction == "mean" else g)
        # ignored targets get an exact 0, as PyTorch, which never writes them: not the -0.0 of
        # -0 * g, nor the NaN of 0 * (g / 0) when every target is ignored
        coef = xp.where(valid, coef, xp.zeros((), dtype=acc))
        out = zeros(shape, dtype=acc)
        if not batched:
            kit.put(out, (safe,), coef)
        elif len(shape) == 2 and kit.fancy_setitem:
            kit.put(out, (kit.row_numbers(shape[0], device), safe), coef)
        else:  # (N, C, d1, ...), or without numpy's fancy writes (dask): compare each class
            # with the target, along dim 1 (one elementwise pass, no scatter); an ignored
            # target's coefficient is 0 (Note [Lazy nll_loss] in _nn/_functions.py)
            hit = class_hits(kit, t, n_classes, len(shape))
            # a 0-d zero, not ``out``: a full array of zeros would be chunked on its own on a
            # lazy library (one chunk), and rechunked to ``hit``'s chunks in the graph
            out = xp.where(hit, xp.expand_dims(coef, axis=1), xp.zeros((), dtype=acc))
        return kit.wrap(out, d, device)

    return general


def nll_loss_backward(kit: Kit) -> Kernel:
    """``-weight[target] * g`` (over the total weight for ``"mean"``) scattered into zeros
    shaped like ``self``."""
    xp = kit.xp
    min_ = _min(xp)
    fast = fast_floats(kit)
    new = kit.new
    ks = kit.keyset
    zeros = xp.zeros
    # host arrays: the fast path scales the 0-d gradient as a Python float, a tenth of the cost
    # of numpy's 0-d arithmetic; the same value once stored (a quotient rounded to float64,
    # then to a float32 element, is the quotient rounded to float32: 53 >= 2 * 24 + 2 bits)
    host = kit.device_type == "cpu"
    slow = guard("nll_loss_backward", _nll_loss_backward_general(kit), kit.key_name)

    @guarded  # Note [Backward kernel fast paths]
    def nll_loss_backward(
        grad_output: Tensor,
        self: Tensor,
        target: Tensor,
        weight: Tensor | None = None,
        reduction: str = "mean",
        ignore_index: int = -100,
    ) -> Tensor:
        # the general path's first case, for a (batch, classes) input and a 0-d gradient of
        # its dtype, with the targets' checks of nll_target done by comparing shapes
        d = self._dtype
        device = self._device
        if (
            d in fast
            and weight is None
            and not kit.lazy  # Note [Lazy backends read no values]
            and (reduction == "mean" or reduction == "sum")
            and type(ignore_index) is int
            and ignore_index < 0
            and grad_output._dtype is d
            and target._dtype is _dt.int64
            and grad_output._device is device
            and target._device is device
        ):
            x, t, g = self._data, target._data, grad_output._data
            shape = x.shape
            if len(shape) == 2 and not g.ndim and t.shape == shape[:1] and shape[0]:
                if min_(t) >= 0:
                    out = zeros(shape, dtype=x.dtype)
                    if host:
                        v = float(g)
                        coef: Any = -(v / shape[0] if reduction == "mean" else v)
                    else:
                        coef = -(g / shape[0] if reduction == "mean" else g)
                    try:
                        kit.put(out, (kit.row_numbers(shape[0], device), t), coef)
                    except IndexError:  # a target past the last class: the general message
                        pass
                    else:
                        return new(out, d, device, ks)
        return slow(grad_output, self, target, weight, reduction, ignore_index)  # type: ignore[no-any-return]

    def lower(
        grad_output: Any,
        self: Any,
        target: Any,
        weight: Any = None,
        reduction: str = "mean",
        ignore_index: int = -100,
    ) -> Any:
        """Note [Raw lowerings]: the fast path, whose target check (no negative target, none
        past the last class) is made on each call; the kernel where it fails."""
        d = self.dtype
        device = self.device
        shape = self.shape
        if not (
            d in fast
            and weight is None
            and (reduction == "mean" or reduction == "sum")
            and type(ignore_index) is int
            and ignore_index < 0
            and grad_output.dtype is d
            and target.dtype is _dt.int64
            and grad_output.device == device
            and target.device == device
            and len(shape) == 2
            and not grad_output.shape
            and target.shape == shape[:1]
            and shape[0]
        ):
            return None
        rows = kit.row_numbers(shape[0], device)
        n = shape[0]

        def nll_loss_backward_arrays(g: Any, x: Any, t: Any) -> Any:
            if min_(t) >= 0:
                out = zeros(shape, dtype=x.dtype)
                if host:
                    v = float(g)
                    coef: Any = -(v / n if reduction == "mean" else v)
                else:
                    coef = -(g / n if reduction == "mean" else g)
                try:
                    kit.put(out, (rows, t), coef)
                except IndexError:
                    pass
                else:
                    return out
            r = nll_loss_backward(
                new(g, d, device, ks), new(x, d, device, ks), new(t, _dt.int64, device, ks),
                None, reduction, ignore_index,
            )  # fmt: skip
            return r._data

        return nll_loss_backward_arrays, ks

    return lowers(kit, nll_loss_backward, lower)


# --- tensorplug::cross_entropy_loss_backward ----------------------------------------------

_CE = "tensorplug::cross_entropy_loss_backward"


def cross_entropy_loss_backward(kit: Kit) -> Kernel:
    """``exp(log_probs) * c`` less ``c`` at the targets (Note [Fused cross-entropy backward]);
    elsewhere ``nll_loss_backward`` then ``_log_softmax_backward_data``, as their kernels."""
    xp = kit.xp
    min_ = _min(xp)
    # host arrays with numpy's indexing: the fast path compares the scale as a Python float
    host = kit.device_type == "cpu" and kit.fancy_setitem
    fast = fast_floats(kit) if host else frozenset()
    tiny = {d: float(xp.finfo(kit.storage[d]).smallest_normal) for d in fast}
    new = kit.new
    ks = kit.keyset
    exp, multiply = xp.exp, xp.multiply
    nll = _nll_loss_backward_general(kit)
    lsm = _softmax_general(kit, "_log_softmax_backward_data", _log_softmax_formulas(kit)[0])
    lazy_rows = kit.lazy
    native = frozenset(
        d for d in kit.native if d.kind == "f" and kit.accumulate[d] == kit.storage[d]
    )

    def general(
        grad_output: Tensor,
        log_probs: Tensor,
        target: Tensor,
        reduction: str = "mean",
        ignore_index: int = -100,
    ) -> Tensor:
        check_reduction(reduction)
        nd = log_probs._data.ndim
        if nd not in (1, 2):
            raise OpError(f"log_probs must be 1-D (classes) or 2-D (batch, classes), got {nd}-D")
        d = log_probs._dtype
        n_classes = log_probs._data.shape[-1]
        if lazy_rows and nd == 2 and n_classes > 1 and d in native and grad_output._dtype is d:
            # Note [Lazy cross-entropy backward]
            G, coef, t = nll(grad_output, log_probs, target, None, reduction, ignore_index, True)
            zero = xp.zeros((), dtype=G.dtype)
            te = xp.expand_dims(t, axis=1)
            kept = (te >= 0) & (te < n_classes)  # a target with a hit in its row
            if 0 <= ignore_index < n_classes:
                kept = kept & (te != ignore_index)
            row_sum = xp.where(kept, coef, zero) + zero  # a column
            y = log_probs._data
            return kit.wrap(G - exp(y) * row_sum, d, log_probs._device)
        gl = nll(grad_output, log_probs, target, None, reduction, ignore_index)
        return lsm(gl, log_probs, 0 if nd == 1 else 1, d)  # type: ignore[no-any-return]

    slow = guard(_CE, general, kit.key_name)

    @guarded  # Note [Backward kernel fast paths]
    def cross_entropy_loss_backward(
        grad_output: Tensor,
        log_probs: Tensor,
        target: Tensor,
        reduction: str = "mean",
        ignore_index: int = -100,
    ) -> Tensor:
        # (batch, classes), no target ignored, every row's scale c a normal positive number
        d = log_probs._dtype
        device = log_probs._device
        if (
            d in fast
            and not kit.lazy  # Note [Lazy backends read no values]
            and grad_output._dtype is d
            and target._dtype is _dt.int64
            and grad_output._device is device
            and target._device is device
            and type(ignore_index) is int
            and ignore_index < 0
        ):
            y, t, g = log_probs._data, target._data, grad_output._data
            shape = y.shape
            n = shape[0] if len(shape) == 2 else 0
            if n and t.shape == shape[:1] and min_(t) >= 0:
                c: Any = None
                if reduction == "none":
                    if g.shape == t.shape and min_(g) >= tiny[d]:
                        c = g
                        scale: Any = g[:, None]
                elif (reduction == "mean" or reduction == "sum") and not g.ndim:
                    v = float(g)
                    v = v / n if reduction == "mean" else v
                    if v >= tiny[d]:
                        c = scale = v
                if c is not None:
                    e = exp(y)
                    multiply(e, scale, out=e)
                    rows = kit.row_numbers(n, device)
                    try:
                        e[rows, t] -= c
                    except IndexError:  # a target past the last class: the general message
                        pass
                    else:
                        return new(e, d, device, ks)
        return slow(grad_output, log_probs, target, reduction, ignore_index)  # type: ignore[no-any-return]

    return cross_entropy_loss_backward


# --- gelu_backward ------------------------------------------------------------------------
# Note [GELU backward]
# ~~~~~~~~~~~~~~~~~~~~
# PyTorch's ``gelu_backward(grad_output, self, approximate)`` takes the forward's input. Exact:
# d/dx x Phi(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi), with Phi(x) =
# erfc(-x / sqrt(2)) / 2 by the float32 erfc for float32 and narrower inputs (erfc_f32, Note
# [erfc] in _pointwise/_unary.py; gelu's own) and the float64 expansions for float64. tanh:
# with u = b (x + k x^3), t = tanh(u), b = sqrt(2 / pi), k = 0.044715, the derivative of
# x (1 + t) / 2 is (1 + t) / 2 + x (1 - t^2) b (1 + 3 k x^2) / 2 (PyTorch's formula).
#
# On numpy the exact form is slower than a composition that reads Phi(x) off the forward's
# result (result / x, about a dozen cheap passes and one exp): the kernel evaluates erfc
# again (NR's degree-9 polynomial, ~20 passes, and a second exp). On (512, 512) float32
# activations, best of 45 calls, CPU time: exact 2.27 ms here against 1.27 ms for that
# composition; tanh 1.28 ms against 1.64 ms for its 15-op composition. So gelu's autograd
# formula calls this kernel for ``approximate="tanh"`` and keeps the composition for the exact
# form; the kernel is PyTorch's operator for whoever calls it, and its own derivative
# (gelu_backward's formula) is the double backward of both forms.

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_BETA = math.sqrt(2.0 / math.pi)
_GELU_KAPPA = 0.044715


def gelu_derivative(kit: Kit, x: Any, d: _dt.dtype, approximate: str) -> Any:
    """gelu'(x) for the compute array ``x`` of a floating dtype ``d`` (Note [GELU backward]),
    a new array in ``x``'s dtype (float32 for float32 and narrower, as gelu computes)."""
    xp = kit.xp
    compute = kit.compute
    wide = d is _dt.float64 or _dt.float32 not in compute
    if wide:
        x = kit.cast(x, compute[_dt.float64]) if _dt.float64 in compute else x
    else:  # half precision computes in float32, as PyTorch's opmath
        x = kit.cast(x, compute[_dt.float32])
    if approximate == "tanh":
        x2 = x * x
        u = x2 * _GELU_KAPPA
        u += 1.0
        u *= x
        u *= _GELU_BETA
        t = xp.tanh(u)
        right = x2 * (3.0 * _GELU_KAPPA)  # x (1 - t^2) b (1 + 3 k x^2) / 2
        right += 1.0
        right *= 0.5 * _GELU_BETA
        right *= x
        u = t * t
        u = 1.0 - u
        right *= u
        t += 1.0
        t *= 0.5
        t += right
        return t
    if approximate != "none":
        raise OpError(f"approximate argument must be either none or tanh, got '{approximate}'")
    if wide:
        cdf = erfc(xp, x * -_SQRT_HALF) * 0.5
    else:
        cdf = erfc_f32(xp, x * -_SQRT_HALF)
        cdf *= 0.5
    pdf = x * x
    pdf *= -0.5
    pdf = xp.exp(pdf)
    pdf *= _INV_SQRT_2PI
    pdf *= x
    cdf += pdf
    return cdf


def gelu_backward(kit: Kit) -> Kernel:
    def general(grad_output: Tensor, self: Tensor, *, approximate: str = "none") -> Tensor:
        g, x = grad_output, self
        d = g._dtype if g._dtype is x._dtype else kit.result_dtype(g, x)
        if d.kind != "f":
            raise OpError(f"\"GeluBackwardKernelImpl\" not implemented for '{torch_name(d)}'")
        kit.same_device(g, x)
        ga, xa = kit.as_compute(g, d), kit.as_compute(x, d)
        if ga.shape != xa.shape:
            check_broadcast(tuple(ga.shape), tuple(xa.shape))
        with kit.quiet():
            r = gelu_derivative(kit, xa, d, approximate)
            if r.shape == ga.shape:
                r *= ga
            else:
                r = r * ga
        return kit.wrap(r, d, g._device)

    return guard("gelu_backward", general, kit.key_name)


BUILDERS = {
    "threshold_backward": threshold_backward,
    "gelu_backward": gelu_backward,
    "_softmax_backward_data": softmax_backward_data,
    "_log_softmax_backward_data": log_softmax_backward_data,
    "nll_loss_backward": nll_loss_backward,
    _CE: cross_entropy_loss_backward,
}


def build(kit: Kit) -> Kernels:
    return {name: make(kit) for name, make in BUILDERS.items()}
