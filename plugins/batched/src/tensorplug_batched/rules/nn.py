"""Batching rules of the neural-network operators: softmax and its backward, embedding, the
fused attention and recurrent cells, convolution and its backward, the padding operators,
im2col/col2im, the resampling operators (upsampling, grid sampling, pixel shuffle), and the
losses (``nll_loss``, ``cross_entropy_loss``, ``binary_cross_entropy``). The activations
are pointwise (pointwise.py); ``linear`` and ``layer_norm`` are composites, which the fallback
decomposes.
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp

from ..batched import (
    BatchedTensor,
    batch_size,
    batched_at,
    front,
    materialize,
    physical,
    wrap,
)
from ..calls import passdown, top_level
from ..fallback import loop
from .table import Kernel, defdim, defrule, map_out, positions

aten = tp.ops.aten
_unsqueeze = aten.unsqueeze.default
_reshape = aten.reshape.default


# --- softmax: along a dimension, keeping the rank ------------------------------------------------

defdim(
    "softmax.int", "log_softmax.int", "_softmax_backward_data.default",
    "_log_softmax_backward_data.default",
)  # fmt: skip


# --- embedding ------------------------------------------------------------------------------------


@defrule("embedding.default")
def _embedding_maker(op: Any) -> Kernel:
    def kernel(weight: Any, indices: Any, *args: Any) -> Any:
        lvl = top_level((weight, indices))
        if lvl == 0:
            return passdown(op, (weight, indices, *args), {})
        if batched_at(weight, lvl):  # a weight per sample: rows of each
            return loop(op, (weight, indices, *args), {}, lvl)
        return wrap(op(weight, indices.value, *args), indices.bdim, lvl)

    return kernel


# --- attention ------------------------------------------------------------------------------------
# The fused attention kernels take any leading dimensions (Note [Fused attention]), so the vmap
# dimension goes first as one more of them: every tensor argument with its batch dimension first
# (materialized where it has none, so that each sample keeps its own gradient) and size-1 dims
# after it up to the common rank, so that the leading dimensions line up as they broadcast.


def _logical_ndim(x: Any, lvl: int) -> int:
    return int(x.value.ndim) - 1 if batched_at(x, lvl) else int(x.ndim)


def _logical_shape(x: Any, lvl: int) -> tuple[int, ...]:
    if not batched_at(x, lvl):
        return tuple(x.shape)
    shape = tuple(x.value.shape)
    return shape[: x.bdim] + shape[x.bdim + 1 :]


def _aligned(x: Any, lvl: int, size: int, rank: int) -> Any:
    p = physical(x, lvl, size)
    for _ in range(rank - _logical_ndim(x, lvl)):
        p = _unsqueeze(p, 1)
    return p


@defrule(
    "_scaled_dot_product_flash_attention_for_cpu.default",
    "_scaled_dot_product_flash_attention_for_cpu_backward.default",
)
def _attention_maker(op: Any) -> Kernel:
    def kernel(*args: Any, attn_mask: Any = None, scale: Any = None) -> Any:
        tensors = [a for a in args if isinstance(a, tp.Tensor)]
        lvl = top_level((*tensors, attn_mask))
        if lvl == 0:
            return passdown(op, args, {"attn_mask": attn_mask, "scale": scale})
        size = next(batch_size(t) for t in (*tensors, attn_mask) if batched_at(t, lvl))
        rank = max(_logical_ndim(t, lvl) for t in tensors)
        shapes = [_logical_shape(t, lvl) for t in tensors]
        # (the backward's logsumexp, argument 5, has one dimension fewer than the others)
        phys = [
            _aligned(a, lvl, size, rank - (i == 5)) if isinstance(a, tp.Tensor) else a
            for i, a in enumerate(args)
        ]
        if attn_mask is not None:
            attn_mask = _aligned(attn_mask, lvl, size, max(rank, _logical_ndim(attn_mask, lvl)))
        out = op(*phys, attn_mask=attn_mask, scale=scale)
        if len(out) == 3:  # the backward: each gradient without the size-1 dims added above
            out = tuple(
                _reshape(g, [size, *shape]) for g, shape in zip(out, shapes[1:4], strict=True)
            )
        # (the forward's results have the common rank, the logical rank of their broadcast)
        return tuple(wrap(t, 0, lvl) for t in out)

    return kernel


# --- recurrent cells --------------------------------------------------------------------------------
# The fused cells work row by row over a batch (Note [Fused recurrent cells]), so the vmap dimension
# joins the cells' own: (N, B, k) operands flattened to (N * B, k), one call, results reshaped back.
# A bias (shared, or one per sample) is added into its gates first, which is what the kernel does with
# it; the backward kernels then run without their bias sums, which are made per sample here.


def _rows(p: Any) -> Any:
    return _reshape(p, [p.shape[0] * p.shape[1], *p.shape[2:]])


def _split(p: Any, size: int) -> Any:
    return _reshape(p, [size, p.shape[0] // size, *p.shape[1:]])


def _with_bias(gates: Any, bias: Any, lvl: int) -> Any:
    if bias is None:
        return gates
    b = _unsqueeze(front(bias), 1) if batched_at(bias, lvl) else bias
    return aten.add.Tensor(gates, b)


@defrule("_thnn_fused_lstm_cell.default", "_thnn_fused_gru_cell.default")
def _fused_cell_maker(op: Any) -> Kernel:
    def kernel(ig: Any, hg: Any, state: Any, ib: Any = None, hb: Any = None) -> Any:
        lvl = top_level((ig, hg, state, ib, hb))
        if lvl == 0:
            return passdown(op, (ig, hg, state, ib, hb), {})
        size = next(batch_size(t) for t in (ig, hg, state, ib, hb) if batched_at(t, lvl))
        ig_p = _with_bias(physical(ig, lvl, size), ib, lvl)
        hg_p = _with_bias(physical(hg, lvl, size), hb, lvl)
        out = op(_rows(ig_p), _rows(hg_p), _rows(physical(state, lvl, size)))
        return tuple(wrap(_split(o, size), 0, lvl) for o in out)

    return kernel


def _bias_sums(grads: tuple[Any, ...], has_bias: bool) -> tuple[Any, ...]:
    return tuple(aten.sum.dim_IntList(g, [1]) if has_bias else None for g in grads)


@defrule("_thnn_fused_lstm_cell_backward_impl.default")
def _fused_lstm_backward_maker(op: Any) -> Kernel:
    def kernel(ghy: Any, gcy: Any, cx: Any, cy: Any, ws: Any, has_bias: bool) -> Any:
        ts = (ghy, gcy, cx, cy, ws)
        lvl = top_level(ts)
        if lvl == 0:
            return passdown(op, (*ts, has_bias), {})
        size = next(batch_size(t) for t in ts if batched_at(t, lvl))
        flat = [None if t is None else _rows(physical(t, lvl, size)) for t in ts]
        gates, gcx, _ = op(*flat, False)
        gates, gcx = _split(gates, size), _split(gcx, size)
        (gb,) = _bias_sums((gates,), has_bias)
        return wrap(gates, 0, lvl), wrap(gcx, 0, lvl), None if gb is None else wrap(gb, 0, lvl)

    return kernel


@defrule("_thnn_fused_gru_cell_backward.default")
def _fused_gru_backward_maker(op: Any) -> Kernel:
    def kernel(ghy: Any, ws: Any, has_bias: bool) -> Any:
        lvl = top_level((ghy, ws))
        if lvl == 0:
            return passdown(op, (ghy, ws, has_bias), {})
        size = next(batch_size(t) for t in (ghy, ws) if batched_at(t, lvl))
        gi, gh, ghx, _, _ = op(
            _rows(physical(ghy, lvl, size)), _rows(physical(ws, lvl, size)), False
        )
        gi, gh, ghx = _split(gi, size), _split(gh, size), _split(ghx, size)
        sums = _bias_sums((gi, gh), has_bias)
        return (
            *(wrap(g, 0, lvl) for g in (gi, gh, ghx)),
            *(None if b is None else wrap(b, 0, lvl) for b in sums),
        )

    return kernel


# --- recurrent layers ----------------------------------------------------------------------------
# mkldnn_rnn_layer (Note [Fused recurrent layer] in array_backend/_nn/_rnn_layer.py): with the
# weights the same for every sample, the samples are more sequences of the layer's batch (the
# vmap dimension folds into the batch dim of the input and the states, and unfolds from the
# output's, the states' and the workspace's planes (k, T, B, H)); batched weights and packed
# input (its batch sizes are per call) run the loop. The backward always loops: folded, its
# weight gradients would sum over the samples.


@defrule("mkldnn_rnn_layer.default")
def _rnn_layer_maker(op: Any) -> Kernel:
    def kernel(x: Any, w0: Any, w1: Any, w2: Any, w3: Any, hx: Any, cx: Any, *rest: Any) -> Any:
        args = (x, w0, w1, w2, w3, hx, cx, *rest)
        lvl = top_level(args[:7])
        if lvl == 0:
            return passdown(op, args, {})
        if len(rest[1]) or any(batched_at(w, lvl) for w in (w0, w1, w2, w3)):
            return loop(op, args, {}, lvl)
        size = _size_at(lvl, x, hx, cx)
        batch_first = rest[-2]
        bdim = 0 if batch_first else 1  # the batch among x's dims
        out, hy, cy, ws = op(
            _fold_into(physical(x, lvl, size), bdim),
            w0, w1, w2, w3,
            _fold_into(physical(hx, lvl, size), 0),
            _fold_into(physical(cx, lvl, size), 0),
            *rest,
        )  # fmt: skip
        return (
            wrap(_unfold_from(out, bdim, size), 0, lvl),
            wrap(_unfold_from(hy, 0, size), 0, lvl),
            wrap(_unfold_from(cy, 0, size), 0, lvl),
            wrap(_unfold_from(ws, 2, size), 0, lvl),
        )

    return kernel


@defrule("mkldnn_rnn_layer_backward.default")
def _rnn_layer_backward_maker(op: Any) -> Kernel:
    def kernel(*args: Any) -> Any:
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        return loop(op, args, {}, lvl)

    return kernel


# --- convolution and padding ---------------------------------------------------------------------

# Note [Batched convolution]
# functorch's rule: with only the input batched, the vmap dimension folds into the batch (N);
# otherwise every tensor is materialized along it and it folds into the groups: the input's
# channels (N, B*C, ...), the weight's first dimension (B*O or, transposed, B*C_in) and
# groups*B, so sample b's channels meet only sample b's filters, and the output's channels
# unfold to (N, B, O, ...). convolution_backward folds the same way, so that each sample's
# weight and bias gradients come out separate (B*O, ...) instead of summed over the batch.

_convolution = aten.convolution.default


def _fold_into(x: Any, dim: int) -> Any:
    """Physical ``x`` (bdim first) with the batch merged into dimension ``dim`` (1-based among
    the logical dimensions): (B, d0, ..., d_dim, ...) -> (d0, ..., B*d_dim, ...)."""
    if dim == 0:
        return _reshape(x, [x.shape[0] * x.shape[1], *x.shape[2:]])
    moved = aten.movedim.int(x, 0, dim)
    shape = list(moved.shape)
    return _reshape(moved, [*shape[:dim], shape[dim] * shape[dim + 1], *shape[dim + 2 :]])


def _unfold_from(y: Any, dim: int, size: int) -> Any:
    """The inverse of :func:`_fold_into`: dimension ``dim`` of ``y`` split to (B, rest), B
    moved to the front."""
    shape = list(y.shape)
    split = _reshape(y, [*shape[:dim], size, shape[dim] // size, *shape[dim + 1 :]])
    return split if dim == 0 else aten.movedim.int(split, dim, 0)


def _size_at(lvl: int, *ts: Any) -> int:
    return next(int(t.value.shape[t.bdim]) for t in ts if batched_at(t, lvl))


@defrule("convolution.default")
def _convolution_maker(op: Any) -> Kernel:
    def kernel(input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
               transposed: bool, output_padding: Any, groups: int) -> Any:  # fmt: skip
        args = (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        rest = (stride, padding, dilation, transposed, output_padding)
        size = _size_at(lvl, input, weight, bias)
        if batched_at(bias, lvl):  # a bias per sample: added after
            out = op(input, weight, None, *rest, groups)
            per = front(bias)
            view = _reshape(per, [size, 1, per.shape[1]] + [1] * (weight.ndim - 2))
            return wrap(aten.add.Tensor(front(out) if batched_at(out, lvl) else out, view), 0, lvl)
        if not batched_at(weight, lvl):  # the input alone: its batch takes the vmap dimension
            x = front(input)
            y = op(_fold_into(x, 0), weight, bias, *rest, groups)
            return wrap(_unfold_from(y, 0, size), 0, lvl)
        x = physical(input, lvl, size)
        w = _fold_into(front(weight), 0)
        b = None if bias is None else _reshape(materialize(bias, size), [-1])
        y = op(_fold_into(x, 1), w, b, *rest, groups * size)
        return wrap(_unfold_from(y, 1, size), 0, lvl)

    return kernel


@defrule("convolution_backward.default")
def _convolution_backward_maker(op: Any) -> Kernel:
    def kernel(grad_output: Any, input: Any, weight: Any, bias_sizes: Any, stride: Any,
               padding: Any, dilation: Any, transposed: bool, output_padding: Any, groups: int,
               output_mask: Any) -> Any:  # fmt: skip
        args = (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                output_padding, groups, output_mask)  # fmt: skip
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        size = _size_at(lvl, grad_output, input, weight)
        g = _fold_into(physical(grad_output, lvl, size), 1)
        x = _fold_into(physical(input, lvl, size), 1)
        w = _fold_into(physical(weight, lvl, size), 0)
        sizes = None if bias_sizes is None else [size * int(bias_sizes[0])]
        gi, gw, gb = op(g, x, w, sizes, stride, padding, dilation, transposed, output_padding,
                        groups * size, output_mask)  # fmt: skip
        return (
            None if gi is None else wrap(_unfold_from(gi, 1, size), 0, lvl),
            None if gw is None else wrap(_unfold_from(gw, 0, size), 0, lvl),
            None if gb is None else wrap(_unfold_from(gb, 0, size), 0, lvl),
        )

    return kernel


# --- pooling -------------------------------------------------------------------------------------

# Note [Batched pooling]
# A pooling operator treats every plane of its (N, C, *spatial) or (C, *spatial) input alike, so
# the vmap batch folds into N (or becomes N for an input without one), and the results unfold
# again. Indices are positions inside a plane, so they stay right. The backward kernels and
# max_unpool take tensors of the same leading shape: each is folded the same way.

_POOLING = {
    **{f"max_pool{n}d_with_indices.default": n for n in (2, 3)},
    **{f"max_pool{n}d_with_indices_backward.default": n for n in (2, 3)},
    **{f"avg_pool{n}d.default": n for n in (2, 3)},
    **{f"avg_pool{n}d_backward.default": n for n in (2, 3)},
    **{f"_adaptive_avg_pool{n}d.default": n for n in (2, 3)},
    **{f"_adaptive_avg_pool{n}d_backward.default": n for n in (2, 3)},
    **{f"adaptive_max_pool{n}d.default": n for n in (2, 3)},
    **{f"adaptive_max_pool{n}d_backward.default": n for n in (2, 3)},
    **{f"max_unpool{n}d.default": n for n in (2, 3)},
    # fractional max pooling's backward kernel folds as the others do (its forward: below)
    **{f"fractional_max_pool{n}d_backward.default": n for n in (2, 3)},
}


def _pooling_maker(op: Any) -> Kernel:
    nd = 3 if "3d" in op.name else 2
    tensors = positions(op)

    def kernel(*args: Any, **kwargs: Any) -> Any:
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, kwargs)
        size = next(
            int(args[i].value.shape[args[i].bdim]) for i in tensors if batched_at(args[i], lvl)
        )
        call = list(args)
        folded = False
        for i in tensors:
            a = args[i]
            p = front(a) if batched_at(a, lvl) else materialize(a, size)
            if a.ndim == nd + 2:  # (B, N, C, ...) -> (B * N, C, ...)
                folded = True
                p = _reshape(p, [size * a.shape[0], *a.shape[1:]])
            call[i] = p
        out = op(*call, **kwargs)

        def unfold(o: Any) -> Any:
            if folded:
                o = _reshape(o, [size, o.shape[0] // size, *o.shape[1:]])
            return wrap(o, 0, lvl)

        return map_out(out, unfold)

    return kernel


def _batch_mode(op: Any, k: int, n_tensors: int) -> Kernel:
    """The rule of an operator on (N, C, *spatial) or (C, *spatial) inputs, ``k`` spatial
    dimensions, whose first ``n_tensors`` arguments are such tensors: the vmap dimension is the
    batch of an unbatched input, or folds into the batch of a batched one."""

    def kernel(*args: Any) -> Any:
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        tensors, rest = args[:n_tensors], args[n_tensors:]
        ndim = tensors[0].ndim  # logical
        if ndim not in (k + 1, k + 2):
            return loop(op, args, {}, lvl)  # the kernel's message, per sample
        size = _size_at(lvl, *tensors)
        phys = [physical(t, lvl, size) for t in tensors]
        if ndim == k + 1:
            return wrap(op(*phys, *rest), 0, lvl)
        y = op(*(_fold_into(p, 0) for p in phys), *rest)
        return wrap(_unfold_from(y, 0, size), 0, lvl)

    return kernel


for _name in _POOLING:
    defrule(_name)(_pooling_maker)


def _fractional_maker(op: Any) -> Kernel:
    """fractional_max_pool{2,3}d(self, kernel_size, output_size, random_samples): the vmap
    dimension folds into the input's batch (Note [Batched pooling]), and the samples (S, C, nd),
    whose first N rows (N the input's batch, 1 for an unbatched input) the kernel reads, fold
    the same way: (B, N, C, nd) -> (B * N, C, nd), a row per sample of the folded batch."""
    nd = 3 if "3d" in op.name else 2

    def kernel(self: Any, kernel_size: Any, output_size: Any, random_samples: Any) -> Any:
        args = (self, kernel_size, output_size, random_samples)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        size = _size_at(lvl, self, random_samples)
        x = front(self) if batched_at(self, lvl) else materialize(self, size)
        r = (
            front(random_samples)
            if batched_at(random_samples, lvl)
            else (materialize(random_samples, size))
        )
        n = self.shape[0] if self.ndim == nd + 2 else 1  # the rows each sample reads
        if (
            self.ndim not in (nd + 1, nd + 2)
            or random_samples.ndim != 3
            or (random_samples.shape[0] < n)
        ):
            return loop(op, args, {}, lvl)  # the kernel's message, per sample
        if self.ndim == nd + 2:
            x = _reshape(x, [size * n, *self.shape[1:]])
        r = _reshape(r[:, :n], [size * n, *random_samples.shape[1:]])
        out = op(x, kernel_size, output_size, r)

        def unfold(o: Any) -> Any:
            if self.ndim == nd + 2:
                o = _reshape(o, [size, o.shape[0] // size, *o.shape[1:]])
            return wrap(o, 0, lvl)

        return map_out(out, unfold)

    return kernel


for _name in ("fractional_max_pool2d.default", "fractional_max_pool3d.default"):
    defrule(_name)(_fractional_maker)


# --- normalization -------------------------------------------------------------------------------

# Note [Batched normalization]
# As functorch's batch_norm rule: the vmap batch folds into the channels, (B, N, C, ...) ->
# (N, B * C, ...), so each sample's channel is a channel of its own: its own statistics,
# weight and bias (an unbatched weight is repeated B times, a batched one flattened) and running
# statistics. In training, an input batched over running statistics that are not is refused
# with functorch's error: the update in place would have to write B values into one buffer (a
# module does not need them with track_running_stats=False; nn.utils-style patches give each
# sample its own). Group norm folds the same way with B * group groups, each sample's groups
# being consecutive channels. The backward kernels fold their tensors alike, so their weight
# and bias gradients come out per sample, (B * C) -> (B, C).

_BN_UNBATCHED_STATS = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which "
    "will be updated in place, were not batched.\nIf you are using a module and do not need eval "
    "mode, please set `track_running_stats` to be False. If you are using a prebuilt module and "
    "do not need eval mode, please see the functorch website for resources on how to patch your "
    "module to work with vmap"
)


def _fold_channels(t: Any, lvl: int, size: int) -> Any:
    """(B, N, C, ...) -> (N, B * C, ...) of a logical (N, C, ...) tensor."""
    p = front(t) if batched_at(t, lvl) else materialize(t, size)
    p = aten.movedim.int(p, 0, 1)
    return _reshape(p, [p.shape[0], size * p.shape[2], *p.shape[3:]])


def _unfold_channels(o: Any, lvl: int, size: int) -> Any:
    return wrap(_reshape(o, [o.shape[0], size, o.shape[1] // size, *o.shape[2:]]), 1, lvl)


def _fold_vector(t: Any, lvl: int, size: int) -> Any:
    """A per-channel vector (C,) for the folded channels: (B * C,)."""
    if t is None:
        return None
    if batched_at(t, lvl):
        return _reshape(front(t), [-1])
    return aten.repeat.default(t, [size])


def _per_sample(o: Any, lvl: int, size: int) -> Any:
    return None if o is None else wrap(_reshape(o, [size, o.shape[0] // size]), 0, lvl)


def _batch_size(args: Any, lvl: int) -> int:
    return next(int(a.value.shape[a.bdim]) for a in args if a is not None and batched_at(a, lvl))


@defrule("native_batch_norm.default")
def _batch_norm_maker(op: Any) -> Kernel:
    def kernel(input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any,
               training: bool, momentum: float, eps: float) -> Any:  # fmt: skip
        args = (input, weight, bias, running_mean, running_var, training, momentum, eps)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        stats = [t for t in (running_mean, running_var) if t is not None]
        if training and batched_at(input, lvl) and not all(batched_at(t, lvl) for t in stats):
            raise RuntimeError(_BN_UNBATCHED_STATS)
        size = _batch_size(args[:5], lvl)
        rm, rv = _fold_vector(running_mean, lvl, size), _fold_vector(running_var, lvl, size)
        out, mean, invstd = op(
            _fold_channels(input, lvl, size), _fold_vector(weight, lvl, size),
            _fold_vector(bias, lvl, size), rm, rv, training, momentum, eps,
        )  # fmt: skip
        if training:  # the folded statistics were updated: write them back per sample
            for stat, folded in ((running_mean, rm), (running_var, rv)):
                if stat is not None:
                    aten.copy_.default(front(stat), _reshape(folded, [size, -1]))
        return (
            _unfold_channels(out, lvl, size), _per_sample(mean, lvl, size),
            _per_sample(invstd, lvl, size),
        )  # fmt: skip

    return kernel


def defbatchmode(name: str, k: int, n_tensors: int = 1) -> None:
    """:func:`_batch_mode` is the rule of overload ``name``."""

    def maker(op: Any) -> Kernel:
        return _batch_mode(op, k, n_tensors)

    defrule(name)(maker)


for _mode in ("reflection", "replication"):
    for _k in (1, 2, 3):
        defbatchmode(f"{_mode}_pad{_k}d.default", _k)
        defbatchmode(f"{_mode}_pad{_k}d_backward.default", _k, 2)
defbatchmode("im2col.default", 2)
defbatchmode("col2im.default", 1)  # (N, C*kh*kw, L): one "spatial" dimension


@defrule("constant_pad_nd.default")
def _constant_pad_maker(op: Any) -> Kernel:
    def kernel(self: Any, pad: Any, value: Any = 0) -> Any:
        if type(self) is not BatchedTensor:
            return passdown(op, (self, pad, value), {})
        if len(pad) // 2 > self.ndim:
            return loop(op, (self, pad, value), {}, self.level)  # the kernel's message
        return wrap(op(front(self), pad, value), 0, self.level)

    return kernel


# --- resampling: the vmap batch folded into the batch dimension N -------------------------------

# Note [Batched resampling]
# The upsampling operators, the grid samplers and pixel_(un)shuffle treat each of N (and C)
# alike, so the vmap batch B folds into N as functorch's rules do: ``(B, N, C, ...)`` runs as
# ``(B * N, C, ...)`` and the result is split back. The grid samplers fold input and grid (and
# the gradient) together, materializing any that is unbatched. pixel_(un)shuffle take any number
# of leading dims, so the vmap dim just goes first. Logical ranks the operator refuses go to the
# loop, which raises the operator's own error.

_UPSAMPLE_RANK = {
    "upsample_nearest1d": 3, "upsample_nearest2d": 4, "upsample_nearest3d": 5,
    "_upsample_nearest_exact1d": 3, "_upsample_nearest_exact2d": 4,
    "_upsample_nearest_exact3d": 5, "upsample_linear1d": 3, "upsample_bilinear2d": 4,
    "upsample_trilinear3d": 5, "upsample_bicubic2d": 4, "_upsample_bilinear2d_aa": 4,
    "_upsample_bicubic2d_aa": 4,
}  # fmt: skip


def _fold(x: Any) -> Any:
    """``(B, N, ...)`` as ``(B * N, ...)``."""
    return _reshape(x, [x.shape[0] * x.shape[1], *x.shape[2:]])


def _unfold(x: Any, size: int, lvl: int) -> Any:
    """``(B * N, ...)`` back to ``(B, N, ...)``, batched at ``lvl``."""
    return wrap(_reshape(x, [size, x.shape[0] // size, *x.shape[1:]]), 0, lvl)


def _upsample_maker(rank: int) -> Any:
    def maker(op: Any) -> Kernel:
        def kernel(self: Any, output_size: Any, *rest: Any) -> Any:
            lvl = top_level((self,))
            if lvl == 0:
                return passdown(op, (self, output_size, *rest), {})
            if self.ndim != rank:
                return loop(op, (self, output_size, *rest), {}, lvl)
            x = front(self)
            return _unfold(op(_fold(x), output_size, *rest), int(x.shape[0]), lvl)

        return kernel

    return maker


def _upsample_backward_maker(rank: int) -> Any:
    def maker(op: Any) -> Kernel:
        def kernel(grad_output: Any, output_size: Any, input_size: Any, *rest: Any) -> Any:
            args = (grad_output, output_size, input_size, *rest)
            lvl = top_level((grad_output,))
            if lvl == 0:
                return passdown(op, args, {})
            if grad_output.ndim != rank or len(input_size) != rank:
                return loop(op, args, {}, lvl)
            g = front(grad_output)
            size = int(g.shape[0])
            folded = [size * int(input_size[0]), *input_size[1:]]
            return _unfold(op(_fold(g), output_size, folded, *rest), size, lvl)

        return kernel

    return maker


for _name, _rank in _UPSAMPLE_RANK.items():
    defrule(f"{_name}.default")(_upsample_maker(_rank))
    defrule(f"{_name}_backward.default")(_upsample_backward_maker(_rank))


def _grid_maker(rank: int) -> Any:
    def maker(op: Any) -> Kernel:
        def kernel(input: Any, grid: Any, *rest: Any) -> Any:
            lvl = top_level((input, grid))
            if lvl == 0:
                return passdown(op, (input, grid, *rest), {})
            if input.ndim != rank or grid.ndim != rank:
                return loop(op, (input, grid, *rest), {}, lvl)
            size = next(int(t.value.shape[t.bdim]) for t in (input, grid) if batched_at(t, lvl))
            x, g = (physical(t, lvl, size) for t in (input, grid))
            return _unfold(op(_fold(x), _fold(g), *rest), size, lvl)

        return kernel

    return maker


def _grid_backward_maker(rank: int) -> Any:
    def maker(op: Any) -> Kernel:
        def kernel(grad_output: Any, input: Any, grid: Any, *rest: Any) -> Any:
            args = (grad_output, input, grid, *rest)
            lvl = top_level((grad_output, input, grid))
            if lvl == 0:
                return passdown(op, args, {})
            if input.ndim != rank or grid.ndim != rank or grad_output.ndim != rank:
                return loop(op, args, {}, lvl)
            size = next(
                int(t.value.shape[t.bdim]) for t in (grad_output, input, grid)
                if batched_at(t, lvl)
            )  # fmt: skip
            go, x, g = (_fold(physical(t, lvl, size)) for t in (grad_output, input, grid))
            grads = op(go, x, g, *rest)
            return tuple(None if r is None else _unfold(r, size, lvl) for r in grads)

        return kernel

    return maker


for _name, _rank in (("grid_sampler_2d", 4), ("grid_sampler_3d", 5)):
    defrule(f"{_name}.default")(_grid_maker(_rank))
    defrule(f"{_name}_backward.default")(_grid_backward_maker(_rank))


def _shuffle_maker(op: Any) -> Kernel:
    def kernel(self: Any, factor: int) -> Any:
        lvl = top_level((self,))
        if lvl == 0:
            return passdown(op, (self, factor), {})
        if self.ndim < 3:
            return loop(op, (self, factor), {}, lvl)
        return wrap(op(front(self), factor), 0, lvl)

    return kernel


@defrule("native_batch_norm_backward.default")
def _batch_norm_backward_maker(op: Any) -> Kernel:
    def kernel(grad_out: Any, input: Any, weight: Any, running_mean: Any, running_var: Any,
               save_mean: Any, save_invstd: Any, train: bool, eps: float,
               output_mask: Any) -> Any:  # fmt: skip
        args = (grad_out, input, weight, running_mean, running_var, save_mean, save_invstd,
                train, eps, output_mask)  # fmt: skip
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        size = _batch_size(args[:7], lvl)
        vectors = [_fold_vector(t, lvl, size) for t in args[2:7]]
        gi, gw, gb = op(
            _fold_channels(grad_out, lvl, size), _fold_channels(input, lvl, size), *vectors,
            train, eps, output_mask,
        )  # fmt: skip
        return (
            None if gi is None else _unfold_channels(gi, lvl, size),
            _per_sample(gw, lvl, size), _per_sample(gb, lvl, size),
        )  # fmt: skip

    return kernel


defrule("pixel_shuffle.default")(_shuffle_maker)
defrule("pixel_unshuffle.default")(_shuffle_maker)


def _fold_groups(t: Any, lvl: int, size: int) -> Any:
    """Group statistics (B, N, G) -> (N, B * G)."""
    p = front(t) if batched_at(t, lvl) else materialize(t, size)
    p = aten.movedim.int(p, 0, 1)
    return _reshape(p, [p.shape[0], -1])


def _unfold_groups(o: Any, lvl: int, size: int) -> Any:
    return wrap(_reshape(o, [o.shape[0], size, o.shape[1] // size]), 1, lvl)


@defrule("native_group_norm.default")
def _group_norm_maker(op: Any) -> Kernel:
    def kernel(input: Any, weight: Any, bias: Any, N: int, C: int, HxW: int, group: int,
               eps: float) -> Any:  # fmt: skip
        args = (input, weight, bias, N, C, HxW, group, eps)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        size = _batch_size(args[:3], lvl)
        out, mean, rstd = op(
            _fold_channels(input, lvl, size), _fold_vector(weight, lvl, size),
            _fold_vector(bias, lvl, size), N, size * C, HxW, size * group, eps,
        )  # fmt: skip
        return (
            _unfold_channels(out, lvl, size), _unfold_groups(mean, lvl, size),
            _unfold_groups(rstd, lvl, size),
        )  # fmt: skip

    return kernel


@defrule("native_group_norm_backward.default")
def _group_norm_backward_maker(op: Any) -> Kernel:
    def kernel(grad_out: Any, input: Any, mean: Any, rstd: Any, weight: Any, N: int, C: int,
               HxW: int, group: int, output_mask: Any) -> Any:  # fmt: skip
        args = (grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        size = _batch_size(args[:5], lvl)
        gi, gw, gb = op(
            _fold_channels(grad_out, lvl, size), _fold_channels(input, lvl, size),
            _fold_groups(mean, lvl, size), _fold_groups(rstd, lvl, size),
            _fold_vector(weight, lvl, size), N, size * C, HxW, size * group, output_mask,
        )  # fmt: skip
        return (
            None if gi is None else _unfold_channels(gi, lvl, size),
            _per_sample(gw, lvl, size), _per_sample(gb, lvl, size),
        )  # fmt: skip

    return kernel


# --- layer normalization -------------------------------------------------------------------------
# The normalized dims are the last ones, so the vmap dimension in front is one more outer dim:
# with the weight and bias the same for every sample, the op runs once on the physical tensors
# and its statistics come back batched in front. A batched weight or bias, and a backward asked
# for the weight's or bias's gradient (folded, it would sum over the samples), loop.


@defrule("native_layer_norm.default")
def _layer_norm_maker(op: Any) -> Kernel:
    def kernel(input: Any, normalized_shape: Any, weight: Any, bias: Any, eps: float) -> Any:
        args = (input, normalized_shape, weight, bias, eps)
        lvl = top_level((input, weight, bias))
        if lvl == 0:
            return passdown(op, args, {})
        if batched_at(weight, lvl) or batched_at(bias, lvl):
            return loop(op, args, {}, lvl)
        out, mean, rstd = op(front(input), normalized_shape, weight, bias, eps)
        return wrap(out, 0, lvl), wrap(mean, 0, lvl), wrap(rstd, 0, lvl)

    return kernel


@defrule("native_layer_norm_backward.default")
def _layer_norm_backward_maker(op: Any) -> Kernel:
    def kernel(grad_out: Any, input: Any, normalized_shape: Any, mean: Any, rstd: Any,
               weight: Any, bias: Any, output_mask: Any) -> Any:  # fmt: skip
        args = (grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
        ts = (grad_out, input, mean, rstd, weight, bias)
        lvl = top_level(ts)
        if lvl == 0:
            return passdown(op, args, {})
        if batched_at(weight, lvl) or batched_at(bias, lvl) or any(output_mask[1:]):
            return loop(op, args, {}, lvl)
        size = _size_at(lvl, grad_out, input, mean, rstd)
        gi, _, _ = op(
            *(physical(t, lvl, size) for t in (grad_out, input)), normalized_shape,
            *(physical(t, lvl, size) for t in (mean, rstd)), weight, bias, output_mask,
        )  # fmt: skip
        return (None if gi is None else wrap(gi, 0, lvl)), None, None

    return kernel


# --- losses -------------------------------------------------------------------------------------

# Note [Batched losses]
# A loss reduces over its own batch (``N``) as well: computed per element (reduction="none") on
# the values with the vmap batch folded into N, it is then reduced per sample -- "sum" sums, and
# "mean" divides by the sample's total weight of the targets that are not ignored (the
# definition of nll_loss's mean; all-ignored samples give 0/0 = nan, as PyTorch).


def _none_then_reduce(lvl: int, losses: Any, weights: Any, reduction: str, shape: Any) -> Any:
    """``losses`` and ``weights``: physical ``[B, n]``; the per-sample reduction of them."""
    if reduction == "none":
        return wrap(_reshape(losses, [losses.shape[0], *shape]), 0, lvl)
    total = aten.sum.dim_IntList(losses, [1])
    if reduction == "sum":
        return wrap(total, 0, lvl)
    return wrap(aten.div.Tensor(total, aten.sum.dim_IntList(weights, [1])), 0, lvl)


@defrule("nll_loss.default")
def _nll_maker(op: Any) -> Kernel:
    def kernel(self: Any, target: Any, weight: Any = None, reduction: str = "mean",
               ignore_index: int = -100) -> Any:  # fmt: skip
        args = (self, target, weight, reduction, ignore_index)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        if (
            (weight is not None and batched_at(weight, lvl))
            or self.ndim == 0
            or reduction not in ("none", "sum", "mean")
        ):
            return loop(op, args, {}, lvl)
        size = next(int(t.value.shape[t.bdim]) for t in (self, target) if batched_at(t, lvl))
        x = front(self) if batched_at(self, lvl) else materialize(self, size)
        t = front(target) if batched_at(target, lvl) else materialize(target, size)
        if self.ndim == 1:  # one sample of C classes: the vmap batch is N
            losses = op(x, t, weight, "none", ignore_index)
            tf = t
        else:  # fold the vmap batch into N
            x2 = _reshape(x, [size * x.shape[1], *x.shape[2:]])
            tf = _reshape(t, [size * t.shape[1], *t.shape[2:]])
            n = target.numel()
            losses = _reshape(op(x2, tf, weight, "none", ignore_index), [size, n])
            tf = _reshape(tf, [size, n])
        weights = None
        if reduction == "mean":
            kept = aten.ne.Scalar(tf, ignore_index)
            if weight is None:
                weights = aten._to_copy.default(kept, dtype=losses.dtype)
            else:
                safe = aten.where.ScalarOther(kept, tf, 0)
                w = aten.index.Tensor(weight, [safe])
                weights = aten.mul.Tensor(w, kept)
        if self.ndim == 1:
            losses = _reshape(losses, [size, 1])
            weights = _reshape(weights, [size, 1]) if weights is not None else None
        return _none_then_reduce(lvl, losses, weights, reduction, target.shape)

    return kernel


@defrule("cross_entropy_loss.default")
def _cross_entropy_maker(op: Any) -> Kernel:
    def kernel(self: Any, target: Any, weight: Any = None, reduction: str = "mean",
               ignore_index: int = -100, label_smoothing: float = 0.0) -> Any:  # fmt: skip
        args = (self, target, weight, reduction, ignore_index, label_smoothing)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        class_indices = not (target.dtype.is_floating_point or target.dtype.is_complex)
        if not class_indices or label_smoothing != 0.0 or self.ndim == 0:
            return loop(op, args, {}, lvl)  # probabilities or smoothing: per sample
        logp = aten.log_softmax.int(self, 0 if self.ndim == 1 else 1)
        return aten.nll_loss.default(logp, target, weight, reduction, ignore_index)

    return kernel


@defrule("binary_cross_entropy.default")
def _bce_maker(op: Any) -> Kernel:
    def kernel(self: Any, target: Any, weight: Any = None, reduction: str = "mean") -> Any:
        args = (self, target, weight, reduction)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        if self.shape != target.shape or reduction not in ("none", "sum", "mean"):
            return loop(op, args, {}, lvl)
        size = next(
            int(t.value.shape[t.bdim]) for t in args[:3] if t is not None and batched_at(t, lvl)
        )
        x = front(self) if batched_at(self, lvl) else materialize(self, size)
        t = front(target) if batched_at(target, lvl) else materialize(target, size)
        w = weight
        if weight is not None and batched_at(weight, lvl):
            w = front(weight)
            for _ in range(self.ndim - weight.ndim):
                w = _unsqueeze(w, 1)
        losses = op(x, t, w, "none")
        if reduction == "none":
            return wrap(losses, 0, lvl)
        flat = _reshape(losses, [size, self.numel()])
        red = aten.sum.dim_IntList if reduction == "sum" else aten.mean.dim
        return wrap(red(flat, [1]), 0, lvl)

    return kernel
