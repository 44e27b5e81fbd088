"""Part ``functions`` of the ``nn`` family of the array kit: softmax and log_softmax (one
builder; their fast path is Note [Reduction fast path] in _reductions/_common.py), the losses
nll_loss and binary_cross_entropy, with PyTorch's reductions and checks, and the two mixed
precision training operators that ``tp.amp.GradScaler`` runs (PyTorch's names):

* ``_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)`` multiplies every
  gradient by ``inv_scale`` in place, and sets ``found_inf`` to 1 when any element of any of
  them was inf or NaN (it never resets it to 0: one flag collects a whole optimizer's checks);
* ``_amp_update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
  growth_interval)`` is one step of the scale schedule: after a step with an inf or NaN the
  scale is multiplied by ``backoff_factor`` and the tracker restarts; otherwise the tracker
  counts the step, and after ``growth_interval`` such steps in a row the scale is multiplied by
  ``growth_factor`` (unless that overflows float32) and the tracker restarts.

``found_inf``, ``inv_scale`` and the scale are 1-element float32 tensors and the tracker a
1-element int32 tensor, checked in PyTorch's order and words. Both kernels are array
expressions that never read a value back to the host, so a device backend (cupy) runs them
without a synchronization, as PyTorch's CUDA kernels do.

Note [Lazy nll_loss]
~~~~~~~~~~~~~~~~~~~~
On a lazy backend (dask) nll_loss and its backward compare each target with every class,
``class_hits``: the loss picks ``sum(where(hit, x, 0), 1)`` (the target's log-probability,
exactly: the other terms are zeros), the backward writes ``where(hit, coef, 0)``. The picking
needs no gather (which would regroup the chunks), and the backward of ``cross_entropy`` needs
no row sum (Note [Lazy cross-entropy backward] in _backward.py). The forward and the backward
write the comparison the other way round from each other (``t == classes``, ``classes == t``),
so dask names them apart: each is fused into the tasks that use it (a comparison of a chunk's
targets with the classes costs less than a task), where one comparison shared by both was a
layer of its own, 8 more tasks in a step of 8 chunks, that dask's fusion does not inline into
tasks that also depend on the forward's sum.

Without weights, a ``"mean"`` or ``"sum"`` loss is one sum over every element (no row sums),
and the ``"mean"`` divisor, the count of targets not ignored, comes from the same reduction
(``lazy_pick_and_count``): the sum is over ``where(hit, x + 1j, miss)``, whose real part picks
the targets' log-probabilities and whose imaginary part counts the hits, one per target in
range. A complex sum adds the real and the imaginary parts apart (IEEE addition is
componentwise), so both are the float sums they stand for, in the input's precision as
PyTorch's total weight; an ignored target hits nothing and counts nothing (an ``ignore_index``
that is a class has its column masked). PyTorch divides by a count, not the batch size, so the
count is needed whenever a target may equal ``ignore_index``, which is a value; as its own
reduction it cost a column comparison and a sum, 23 tasks of a 65,536-row, 8-chunk step
(docs/dask.md). The backward writes the same sum from the same arrays (so dask names it the
same and the step computes it once) and takes its imaginary part. ``miss`` is 0, or an
imaginary NaN for a target out of range: it hits no class, and the count, so the loss and a
``"mean"`` gradient, is NaN (docs/dask.md: PyTorch raises); a ``"sum"`` adds ``count * 0``.

Note [nll_loss fast path]
~~~~~~~~~~~~~~~~~~~~~~~~~
The loss of a classifier's training step, ``nll_loss(log_probs, target)`` on a (batch, classes)
float32 input with no weight, is mostly checks and masks in the general path (ignored targets,
bounds, weights of one). When the input is 2-D float32/float64, the target int64 of the batch's
length, there is no weight and ``ignore_index`` is negative, the fast path checks
that no target is negative (so none is ignored either) and picks ``x[rows, target]``, whose
bounds check rejects a target past the last class; targets the fast path cannot take go to the
general path, for its masks or its message.
The picked values are negated, summed and divided by the batch size as the general path does
with weights of one (``-p * 1`` is ``-p``; a sum of n ones is n), so the result is the same to
the bit.

Each kernel has its builder, named after it (``nll_loss(kit)`` returns the kernel of
``aten::nll_loss`` for ``kit``'s backend); :func:`build` builds them all.
"""

from __future__ import annotations

import math
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import (
    Kernel,
    Kernels,
    Kit,
    OpError,
    bind,
    fmt_shape,
    guard,
    guarded,
    lowers,
    torch_name,
    wrap_dim,
)
from .._reductions._common import Fast

# --- softmax and log_softmax ------------------------------------------------------------


def softmax_dtype(name: str, self: Tensor, dtype: _dt.dtype | None) -> _dt.dtype:
    od = self._dtype if dtype is None else dtype
    if od.kind != "f":
        raise OpError(f"\"{name}_lastdim_kernel_impl\" not implemented for '{torch_name(od)}'")
    return od


def softmax_fast_path(kit: Kit, log: bool) -> tuple[Any, Any]:
    """(log_)softmax on the fast path (Note [Reduction fast path]): a function of ``(self, dim,
    dtype)`` that returns None where it does not apply, and its raw lowering (Note [Raw
    lowerings] in _kit.py).

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
        return new(softmax_arrays(a, ax), d, self._device, ks)

    def softmax_arrays(a: Any, ax: int) -> Any:
        token = hush()
        try:
            shifted = a - max_reduce(a, ax, None, None, True)  # type: ignore[misc]
            if log:
                s = add_reduce(exp(shifted), ax, None, None, True)  # type: ignore[misc]
                return subtract(shifted, log_(s, out=s), out=shifted)
            e = exp(shifted, out=shifted)
            return divide(e, add_reduce(e, ax, None, None, True), out=e)  # type: ignore[misc]
        finally:
            unhush(token)

    def lower(self: Any, dim: int, dtype: _dt.dtype | None = None) -> Any:
        d = self.dtype
        n = len(self.shape)
        if d not in floats or (dtype is not None and dtype is not d) or not n:
            return None
        if not all(self.shape) or type(dim) is not int or not -n <= dim < n:
            return None
        ax = dim % n
        return (lambda a: softmax_arrays(a, ax)), ks

    return fast_softmax, lower


def softmax_kernel(kit: Kit, log: bool) -> Kernel:
    """The kernel of ``aten::log_softmax.int`` (``log``) or ``aten::softmax.int``: the fast
    path, else the general path in the accumulation dtype."""
    name = "log_softmax" if log else "softmax"
    xp = kit.xp
    fast, lower = softmax_fast_path(kit, log)

    def general(self: Tensor, dim: int, dtype: _dt.dtype | None = None) -> Tensor:
        od = softmax_dtype(name, self, dtype)
        ax = wrap_dim(dim, self._data.ndim)
        a = kit.cast(self._data, kit.accumulate[od])
        if a.ndim == 0:
            made = xp.zeros if log else xp.ones
            return kit.wrap(made((), dtype=a.dtype), od, self._device)
        with kit.quiet():
            if log:
                if math.prod(a.shape):
                    shifted = a - xp.max(a, axis=ax, keepdims=True)
                    r = shifted - xp.log(xp.sum(xp.exp(shifted), axis=ax, keepdims=True))
                else:
                    r = a
            else:
                e = xp.exp(a - xp.max(a, axis=ax, keepdims=True)) if math.prod(a.shape) else a
                r = e / xp.sum(e, axis=ax, keepdims=True)
        return kit.wrap(r, od, self._device)

    slow = guard(f"{name}.int", general)

    @guarded
    def kernel(self: Tensor, dim: int, dtype: _dt.dtype | None = None) -> Tensor:
        r = fast(self, dim, dtype)
        if r is not None:
            return r  # type: ignore[no-any-return]
        return slow(self, dim, dtype)  # type: ignore[no-any-return]

    lowers(kit, kernel, lower)

    # named as its builder's kernel (softmax.<locals>.softmax), as before the builders merged
    kernel.__name__ = name
    kernel.__qualname__ = f"{name}.<locals>.{name}"
    return kernel


def softmax(kit: Kit) -> Kernel:
    return softmax_kernel(kit, log=False)


def log_softmax(kit: Kit) -> Kernel:
    return softmax_kernel(kit, log=True)


# --- losses ------------------------------------------------------------------------------


def floating(name: str, d: _dt.dtype) -> _dt.dtype:
    """``d`` when it is a floating-point dtype; else PyTorch's "not implemented" for ``name``."""
    if d.kind != "f":
        raise OpError(f"\"{name}\" not implemented for '{torch_name(d)}'")
    return d


def check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise OpError(f"{reduction} is not a valid value for reduction")


def nll_target(kit: Kit, shape: tuple[int, ...], target: Tensor, device: Any) -> Any:
    """``target``'s array (int64), checked against an input of ``shape`` with PyTorch's
    messages, in its order (dimensions, then sizes, then dtype), as ``nll_loss`` and
    ``nll_loss_backward`` check it. Targets are int64 or uint8, as in PyTorch."""
    if not shape:
        raise OpError("input tensor should be 1D or 2D")
    tshape = tuple(target._data.shape)
    if len(shape) <= 2 and len(tshape) > 1:
        raise OpError("0D or 1D target tensor expected, multi-target not supported")
    batched = len(shape) >= 2
    expected = (shape[0], *shape[2:]) if batched else ()
    if tshape != expected:
        if batched and tshape and tshape[0] != expected[0]:
            raise OpError(
                f"Expected input batch_size ({expected[0]}) to match target batch_size "
                f"({tshape[0]})."
            )
        raise OpError(
            f"Expected target of shape {fmt_shape(expected)} for input of shape {fmt_shape(shape)}, "
            f"got {fmt_shape(tshape)}"
        )
    if target._dtype is not _dt.int64 and target._dtype is not _dt.uint8:
        raise OpError(
            f"expected target dtype to be Long or Byte, but got {torch_name(target._dtype)}"
        )
    return kit.operand(target, _dt.int64, device)


def class_hits(
    kit: Kit,
    t: Any,
    n_classes: int,
    ndim: int,
    ignore_index: int | None = None,
    *,
    backward: bool = False,
) -> Any:
    """Whether each class is each target, along dim 1 of an ``ndim``-D input: ``t[:, None] ==
    arange(n_classes)`` (bool, the input's shape; no hit for a target out of range; with
    ``ignore_index``, none for an ignored target either: an ``ignore_index`` that is a class
    has its column masked). The ``backward``'s is written the other way round, so that a lazy
    library names it apart from the forward's (Note [Lazy nll_loss])."""
    xp = kit.xp
    classes = xp.arange(n_classes, dtype=t.dtype)
    masked = ignore_index is not None and 0 <= ignore_index < n_classes
    kept = classes != ignore_index if masked else None
    if ndim > 2:  # (classes, 1, ...): broadcast against the targets' column (N, 1, d1, ...)
        tail = (n_classes,) + (1,) * (ndim - 2)
        classes = xp.reshape(classes, tail)
        kept = None if kept is None else xp.reshape(kept, tail)
    te = xp.expand_dims(t, axis=1)
    hit = classes == te if backward else te == classes
    return hit if kept is None else hit & kept


def out_of_range(te: Any, ignore_index: int, n_classes: int) -> Any:
    """Whether each target (of ``te``) is neither ignored nor a class."""
    return (te != ignore_index) & ((te < 0) | (te >= n_classes))


def lazy_pick_and_count(
    kit: Kit, x: Any, t: Any, ignore_index: int, n_classes: int
) -> tuple[Any, Any]:
    """The sum of ``x`` at the targets' classes and the number of targets not ignored (NaN
    when one is out of range): a ``"mean"`` loss's sum and divisor without weights, in one
    reduction (Note [Lazy nll_loss]); written the same way by nll_loss and its backward, so a
    graph computes it once."""
    xp = kit.xp
    hit = class_hits(kit, t, n_classes, x.ndim, ignore_index)
    te = xp.expand_dims(t, axis=1)
    xc = x + 1j  # the real part picks, the imaginary part counts
    nan = xp.asarray(complex(0.0, float("nan")), dtype=xc.dtype)
    miss = xp.where(out_of_range(te, ignore_index, n_classes), nan, xp.zeros((), dtype=xc.dtype))
    total = xp.sum(xp.where(hit, xc, miss))
    return xp.real(total), xp.imag(total)


def check_nll_weight(weight: Tensor, n_classes: int) -> None:
    if tuple(weight._data.shape) != (n_classes,):
        raise OpError(
            f"weight tensor should be defined either for all {n_classes} classes or no "
            f"classes but got weight tensor of shape: {fmt_shape(weight._data.shape)}"
        )


def nll_loss(kit: Kit) -> Kernel:
    xp = kit.xp
    new = kit.new
    ks = kit.keyset
    asarray = xp.asarray
    arr_t = kit.array_type
    add_reduce = getattr(xp.add, "reduce", None)
    min_reduce = getattr(xp.minimum, "reduce", None)
    fast_nll = frozenset(
        d
        for d in kit.native
        if d.kind == "f"
        and kit.accumulate[d] == kit.storage[d]
        and add_reduce is not None
        and min_reduce is not None
    )

    def nll_fast(
        self: Tensor, target: Tensor, weight: Tensor | None, reduction: str, ignore_index: int
    ) -> Tensor | None:
        """nll_loss on the fast path (Note [nll_loss fast path]); None where it does not apply."""
        d = self._dtype
        if (
            d not in fast_nll
            or weight is not None
            or target._dtype is not _dt.int64
            or target._device is not self._device
            or ignore_index >= 0
        ):
            return None
        x = self._data
        t = target._data
        if x.ndim != 2 or t.ndim != 1:
            return None
        n = int(x.shape[0])
        if int(t.shape[0]) != n or not 0 < n < 1 << 24:  # a float32 sum of n ones is n
            return None
        if reduction not in ("mean", "sum", "none"):
            return None
        r = nll_arrays(x, t, kit.row_numbers(n, self._device), reduction)
        return None if r is None else new(r, d, self._device, ks)

    def nll_arrays(x: Any, t: Any, rows: Any, reduction: str) -> Any:
        if min_reduce(t, None) < 0:  # type: ignore[misc]
            return None  # ignored or negative targets
        try:
            picked = kit.getitem(x, (rows, t))
        except IndexError:
            return None  # a target past the last class
        loss = -picked
        if reduction == "none":
            return loss
        total = add_reduce(loss)  # type: ignore[misc]
        if reduction == "mean":
            total = total / x.dtype.type(rows.shape[0])  # finite, >= 1: no warning to silence
        if type(total) is not arr_t:
            total = asarray(total)
        return total

    def lower(
        self: Any, target: Any, weight: Any = None, reduction: str = "mean",
        ignore_index: int = -100,
    ) -> Any:  # fmt: skip
        """Note [Raw lowerings]: the fast path, whose target check is made on each call; the
        kernel where it fails."""
        d = self.dtype
        dev = self.device
        if (
            d not in fast_nll
            or weight is not None
            or target.dtype is not _dt.int64
            or target.device != dev
            or type(ignore_index) is not int
            or ignore_index >= 0
            or len(self.shape) != 2
            or len(target.shape) != 1
            or reduction not in ("mean", "sum", "none")
        ):
            return None
        n = self.shape[0]
        if target.shape[0] != n or not 0 < n < 1 << 24:
            return None
        rows = kit.row_numbers(n, dev)

        def nll_loss_arrays(x: Any, t: Any) -> Any:
            r = nll_arrays(x, t, rows, reduction)
            if r is None:
                out = kernel(
                    new(x, d, dev, ks), new(t, _dt.int64, dev, ks), None, reduction, ignore_index
                )
                return out._data
            return r

        return nll_loss_arrays, ks

    def general(
        self: Tensor,
        target: Tensor,
        weight: Tensor | None = None,
        reduction: str = "mean",
        ignore_index: int = -100,
    ) -> Tensor:
        check_reduction(reduction)
        d = floating("nll_loss_forward_out_frame", self._dtype)
        device = self._device
        x = kit.cast(self._data, kit.accumulate[d])
        t = nll_target(kit, tuple(int(n) for n in x.shape), target, device)
        batched = x.ndim >= 2
        n_classes = int(x.shape[1] if batched else x.shape[0])
        if batched and kit.lazy and weight is None and reduction != "none":
            # Note [Lazy nll_loss]: one sum over every element, no row sums; no value read
            # (Note [Lazy backends read no values]): a target out of range gives a NaN loss
            # where PyTorch raises (docs/dask.md)
            pick, count = lazy_pick_and_count(kit, x, t, ignore_index, n_classes)
            with kit.quiet():
                if reduction == "sum":  # NaN when a target is out of range, as the count
                    return kit.wrap(-pick + count * 0, d, device)
                return kit.wrap(-pick / count, d, device)
        if weight is not None:
            check_nll_weight(weight, n_classes)
            w = kit.cast(kit.operand(weight, weight._dtype, device), x.dtype)
        else:
            w = xp.ones((n_classes,), dtype=x.dtype)
        valid = t != ignore_index
        safe = xp.where(valid, t, xp.zeros((), dtype=t.dtype))
        bad = valid & ((safe < 0) | (safe >= n_classes))
        if kit.lazy:
            # no value read (Note [Lazy backends read no values]): a target out of range gives
            # a NaN loss where PyTorch raises (docs/dask.md)
            safe = xp.where(bad, xp.zeros((), dtype=t.dtype), safe)
        elif bool(xp.any(bad)):
            first = int(xp.reshape(t[bad], (-1,))[0])
            raise IndexError(f"Target {first} is out of bounds.")
        if batched and kit.lazy:  # Note [Lazy nll_loss]
            hit = class_hits(kit, t, n_classes, x.ndim)
            zero = xp.zeros((), dtype=x.dtype)
            picked = xp.sum(xp.where(hit, x, zero), axis=1)
        elif batched:
            picked = xp.squeeze(kit.take_along_axis(x, xp.expand_dims(safe, axis=1), 1), axis=1)
        else:
            picked = kit.getitem(x, (safe,))
        if kit.lazy:
            picked = xp.where(bad, xp.asarray(float("nan"), dtype=picked.dtype), picked)
        if weight is None:  # every class weighs 1: no lookup
            wt = kit.cast(valid, x.dtype)
        else:
            wt = kit.getitem(w, (safe,)) * kit.cast(valid, x.dtype)
        loss = -picked * wt
        if reduction == "none":
            return kit.wrap(loss, d, device)
        total = xp.sum(loss)
        if reduction == "sum":
            return kit.wrap(total, d, device)
        with kit.quiet():
            return kit.wrap(total / xp.sum(wt), d, device)

    slow = guard("nll_loss", general, kit.key_name)

    @guarded  # the fast path raises nothing (Note [Kernel errors] in _checks.py)
    def nll_loss(
        self: Tensor,
        target: Tensor,
        weight: Tensor | None = None,
        reduction: str = "mean",
        ignore_index: int = -100,
    ) -> Tensor:
        fast = nll_fast(self, target, weight, reduction, ignore_index)
        if fast is not None:
            return fast
        return slow(self, target, weight, reduction, ignore_index)  # type: ignore[no-any-return]

    kernel = lowers(kit, nll_loss, lower)
    return kernel


def binary_cross_entropy(kit: Kit) -> Kernel:
    xp = kit.xp

    def binary_cross_entropy(
        self: Tensor, target: Tensor, weight: Tensor | None = None, reduction: str = "mean"
    ) -> Tensor:
        check_reduction(reduction)
        d = floating("binary_cross_entropy", self._dtype)
        device = self._device
        if tuple(target._data.shape) != tuple(self._data.shape):
            raise OpError(
                f"Using a target size ({fmt_shape(target._data.shape)}) that is different to the "
                f"input size ({fmt_shape(self._data.shape)}) is deprecated. Please ensure they have "
                "the same size."
            )
        x = kit.cast(self._data, kit.accumulate[d])
        t = kit.cast(kit.operand(target, target._dtype, device), x.dtype)
        if math.prod(x.shape) and (bool(xp.any(x < 0)) or bool(xp.any(x > 1))):
            raise OpError("all elements of input should be between 0 and 1")
        with kit.quiet():
            floor = xp.asarray(-100.0, dtype=x.dtype)
            log_x = xp.maximum(xp.log(x), floor)
            log_1mx = xp.maximum(xp.log(1 - x), floor)
            loss = -(t * log_x + (1 - t) * log_1mx)
        if weight is not None:
            loss = loss * kit.cast(kit.operand(weight, weight._dtype, device), x.dtype)
        if reduction == "none":
            return kit.wrap(loss, d, device)
        r = xp.sum(loss) if reduction == "sum" else xp.mean(loss)
        return kit.wrap(r, d, device)

    return binary_cross_entropy


# --- mixed precision training --------------------------------------------------------------


def _one_element(t: Tensor, what: str) -> None:
    if int(math.prod(t._data.shape)) != 1:
        raise OpError(f"{what} must be a 1-element tensor.")


def _of_dtype(t: Tensor, what: str, d: _dt.dtype, kind: str) -> None:
    if t._dtype is not d:
        raise OpError(f"{what} must be {kind} tensor.")


def non_finite_check_and_unscale_(
    kit: Kit, self: list[Tensor], found_inf: Tensor, inv_scale: Tensor
) -> None:
    xp = kit.xp
    _one_element(inv_scale, "inv_scale")
    _one_element(found_inf, "found_inf")
    _of_dtype(inv_scale, "inv_scale", _dt.float32, "a float")
    _of_dtype(found_inf, "found_inf", _dt.float32, "a float")
    for g in self:
        if g._dtype.kind != "f":
            raise NotImplementedError(
                "aten::_amp_foreach_non_finite_check_and_unscale_: "
                f'"_amp_foreach_non_finite_check_and_unscale_{kit.device_type}" '
                f"not implemented for '{torch_name(g._dtype)}'"
            )
    inv = xp.reshape(inv_scale._data, ())
    found: Any = None
    for g in self:
        d = g._dtype
        x = kit.as_compute(g, d)
        bad = xp.logical_not(xp.all(xp.isfinite(x)))
        found = bad if found is None else xp.logical_or(found, bad)
        kit.assign(g._data, kit.cast(x * kit.cast(inv, kit.compute[d]), kit.storage[d]))
    if found is not None:
        f = found_inf._data
        kit.assign(f, xp.where(found, xp.ones_like(f), f))


def update_scale_(
    kit: Kit,
    self: Tensor,
    growth_tracker: Tensor,
    found_inf: Tensor,
    scale_growth_factor: float,
    scale_backoff_factor: float,
    growth_interval: int,
) -> Tensor:
    xp = kit.xp
    _one_element(growth_tracker, "growth_tracker")
    _one_element(self, "current_scale")
    _one_element(found_inf, "found_inf")
    _of_dtype(growth_tracker, "growth_tracker", _dt.int32, "an int")
    _of_dtype(self, "current_scale", _dt.float32, "a float")
    _of_dtype(found_inf, "found_inf", _dt.float32, "a float")
    scale, tracker = self._data, growth_tracker._data
    f32 = kit.storage[_dt.float32]
    with kit.quiet():  # a grown scale may overflow to inf: then it is not taken
        inf = found_inf._data != 0
        steps = tracker + 1
        grow = xp.logical_and(xp.logical_not(inf), steps == growth_interval)
        # Python floats are weak operands (array API, numpy >= 2): products stay float32,
        # so an overflow shows as inf, as in PyTorch's float arithmetic
        grown = kit.cast(scale * float(scale_growth_factor), f32)
        backed_off = kit.cast(scale * float(scale_backoff_factor), f32)
        kept = xp.where(xp.logical_and(grow, xp.isfinite(grown)), grown, scale)
        new_scale = xp.where(inf, backed_off, kept)
        new_tracker = xp.where(xp.logical_or(inf, grow), xp.zeros_like(tracker), steps)
    # each one element, but of its own shape (the others' may differ: () against (1,))
    kit.assign(scale, xp.reshape(new_scale, scale.shape))
    kit.assign(tracker, xp.reshape(kit.cast(new_tracker, tracker.dtype), tracker.shape))
    return self


KERNELS: dict[str, Kernel] = {
    "_amp_foreach_non_finite_check_and_unscale_": non_finite_check_and_unscale_,
    "_amp_update_scale_": update_scale_,
}


BUILDERS: dict[str, Any] = {
    "softmax.int": softmax,
    "log_softmax.int": log_softmax,
    "nll_loss": nll_loss,
    "binary_cross_entropy": binary_cross_entropy,
}


def build(kit: Kit) -> Kernels:
    k: Kernels = {name: make(kit) for name, make in BUILDERS.items()}
    k.update((name, bind(kit, fn)) for name, fn in KERNELS.items())
    return k
