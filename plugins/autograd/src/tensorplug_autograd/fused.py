"""Autograd kernels of two composite operators: ``linear`` and ``cross_entropy_loss``.

Note [Fused nodes of composite ops]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``linear`` and ``cross_entropy_loss`` are CompositeImplicitAutograd ops (as in PyTorch): every
backend, the tracer and vmap see the ops they decompose into. Autograd would too (Note
[Autograd kernel]): ``linear`` records a ``TransposeBackward0`` view node for ``w.t()`` and an
``AddmmBackward0`` whose weight gradient is a product transposed twice; ``cross_entropy``
records ``LogSoftmaxBackward0`` and ``NllLossBackward0``. On a small training step that
bookkeeping costs as much as the arithmetic, so this plugin records each of them as one node:

* ``LinearBackward0`` saves ``input`` and ``weight``; its formulas give ``g @ weight``,
  ``g.t() @ input`` (rows of ``g`` and ``input`` flattened: the weight's own layout, no
  transposes) and the bias gradient summed over the leading dimensions. While the backward
  pass records nothing, the node computes them in one ``linear_backward`` call (PyTorch's op),
  whose ``output_mask`` asks only for those its edges need (PyTorch's
  ``should_compute_output``); a bias that is not a vector still takes the formula.
* ``CrossEntropyLossBackward0`` (class indices, no label smoothing) saves the log-softmax
  it computed; while the backward pass records nothing it runs
  ``tensorplug::cross_entropy_loss_backward`` (tensorplug's own operator, Note [tensorplug
  operators] in the core: ``exp(log_probs)`` scaled, less the scale at the targets, in one
  kernel), with ``create_graph`` the two differentiable backward ops it equals bit for bit
  (``nll_loss_backward``, ``_log_softmax_backward_data``).

Both gradients are the composite's, computed by the same kernels (gradcheck says so), and
they are differentiable again (``create_graph=True``): the formulas call operators. While
nothing records, both nodes call the backend's kernels of their backward ops directly where
those promise not to dispatch (``_backward_kernel``; not under dispatch tracing, where
cross-entropy's node runs the two ops through the dispatcher as the trace has always shown
them): the dispatcher's entry would cost more than the call (for ``linear_backward`` it checks
the ``bool[3]`` list element by element, about 1.5 µs).

The kernels are registered on each backend's ``Autograd<B>`` key directly: a kernel of the
runtime key comes first in the dispatch table (DESIGN §4 step 1), before the composite that
step 3 would give ``Autograd<B>``. Backends registered after this plugin get the decomposition
(correct, only slower). Other calls take the decomposition too, recording its parts as
before: weights that are not matrices, targets of class probabilities, label smoothing, and
calls made while a key above autograd is included in the thread or in the call's key set (the
tracer: a trace, a replay and ``tp.compile`` then hold the same operators and backward nodes as
without these kernels, so a compiled forward still returns a loss to differentiate; autocast,
for which ``cross_entropy_loss`` is a fallthrough as in PyTorch: its parts meet their policies,
``log_softmax`` in float32 on CUDA) or while dispatch
tracing is on (so the trace shows every step). ``linear``'s forward is one
``tensorplug::linear_forward`` (Note [tensorplug operators] in the core), whose array-kit
kernel computes ``input @ weight.T + bias`` from the weight itself with the decomposition's
bits (Note [Linear forward] in array_backend/_linalg.py): no transposed weight tensor, one
kernel's checks. ``cross_entropy``'s runs the backend's kernels of its parts. Both call the
kernels directly when they promise not to dispatch (Note [Kernels that do not dispatch] in
array_backend), else below autograd with the autograd keys excluded.

The tracer's ``decompose=True`` looks past an ``Autograd<B>`` kernel of a composite op to the
backend's entry (``composite_entry`` in its recorder), so these kernels do not turn ``linear``
into a node of ``tp.compile``'s graphs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplug as tp
from tensorplug import dispatcher
from tensorplug import keys as _keys
from tensorplug.dispatch import local_state
from tensorplug.dispatcher import OpOverload
from tensorplug.library import is_no_dispatch
from tensorplug.tensor import Tensor

from .codegen import below_kernel, record_function
from .formulas._table import _cj, _mm, _t
from .graph import fit_gradient
from .masks import M, grad_recording
from .nodes import OpNode
from .rules import RULES, Rule, register_lazily
from .saved import FREED, SavedTensor

__all__ = ["register_fused"]

_aten = tp.ops.aten
_sum_dims = _aten.sum.dim_IntList
_trace = dispatcher.trace_state
_reshape = _aten.reshape.default
_matmul = _aten.matmul.default
# Note [tensorplug operators] in the core: linear's value in one backend kernel
_linear_forward = tp.ops.tensorplug.linear_forward.default
_forward_of = _linear_forward.kernel_cache.get
_generation = dispatcher.generation


# --- linear -------------------------------------------------------------------------------------


def _linear_input(g: Tensor, weight: Tensor) -> Tensor:
    """``g @ weight``: (..., out) @ (out, in); conjugated weight for complex operands (Note
    [Complex gradients] in formulas/_table.py)."""
    weight = _cj(weight)
    if g.tp_data.ndim == 2:
        return _mm(g, weight)
    return _matmul(g, weight)


def _linear_weight(g: Tensor, input: Tensor) -> Tensor:
    """``g.t() @ input`` over the rows of both: (out, in), row-major like the weight."""
    if g.tp_data.ndim != 2:
        g = _reshape(g, [-1, g.tp_data.shape[-1]])
        input = _reshape(input, [-1, input.tp_data.shape[-1]])
    return _mm(_t(g), _cj(input))


def _linear_bias(g: Tensor, bias_shape: tuple[int, ...]) -> Tensor:
    """``g`` summed over its leading dimensions when the bias is a vector (the engine sums
    any other broadcast away, Note [Formula table])."""
    nd = g.tp_data.ndim
    if nd > 1 and tuple(bias_shape) == tuple(g.tp_data.shape[-1:]):
        return _sum_dims(g, tuple(range(nd - 1)))
    return g


LINEAR = {
    "input": lambda g, s: _linear_input(g, s.weight),
    "weight": lambda g, s: _linear_weight(g, s.input),
    "bias": lambda g, s: _linear_bias(g, s.bias_shape),
}

_linear_backward = _aten.linear_backward.default


def _linear_apply(node: Any, grads: list[Tensor | None]) -> list[Tensor | None]:
    """``LinearBackward0.apply``: while the backward pass records nothing, the three gradients
    from one ``linear_backward`` call, each only where its edge needs it (PyTorch's
    ``should_compute_output``); else (``create_graph``) the formulas of ``LINEAR``, which are
    differentiable.

    The saved input and weight go to the backend's kernel as they were saved (Note [Saved
    values for a backend kernel]), checked as an unpack checks them."""
    g = grads[0]
    if g is None or local_state.masks.nexc & M.ag:  # nothing to do, or create_graph
        return OpNode.apply(node, grads)  # type: ignore[return-value]
    args = node._args
    sx = args[0]
    sw = args[1]
    if sx.vc.value != sx.version:
        sx.check(node)  # freed, or modified in place: raises
    if sw.vc.value != sw.version:
        sw.check(node)
    x: Tensor = sx.t
    w: Tensor = sw.t
    d = g.tp_dtype
    if d.kind == "c":  # linear_backward's kernel conjugates nothing: the formulas do
        return OpNode.apply(node, grads)  # type: ignore[return-value]
    if x.tp_dtype is not d or w.tp_dtype is not d or _trace.enabled:
        return _linear_dispatched(node, grads)
    st = local_state.masks
    # the key set the plain values would give (their autograd and ADInplaceOrView keys gone)
    ks = ((x.tp_keyset | w.tp_keyset) & ~M.strip | g.tp_keyset | st.inc) & st.nexc
    kernel = _backward_kernel(_LINEAR_BACKWARD_FOUND, _linear_backward, ks)
    if kernel is None:  # the backend's kernel may dispatch: through the dispatcher
        return _linear_dispatched(node, grads)
    nexts = node.next_functions
    metas = node._input_meta
    need_bias = nexts[2][0] is not None
    bias_meta = metas[2]
    gs = g.tp_data.shape
    # a vector bias (the common one) sums in the kernel; any other shape as in _linear_bias
    sum_bias = need_bias and len(gs) > 1 and bias_meta[0] == gs[-1:]
    gi, gw, gb = kernel(x, g, w, [nexts[0][0] is not None, nexts[1][0] is not None, sum_bias])
    if need_bias and not sum_bias:
        gb = _linear_bias(g, bias_meta[0])
    # each in its input's shape, dtype and device (what OpNode.apply promises the engine)
    if gi is not None:
        m = metas[0]
        if not (gi.tp_data.shape == m[0] and gi.tp_dtype is m[1] and gi.tp_device is m[2]):
            gi = fit_gradient(gi, m, node, 0)
    if gw is not None:
        m = metas[1]
        if not (gw.tp_data.shape == m[0] and gw.tp_dtype is m[1] and gw.tp_device is m[2]):
            gw = fit_gradient(gw, m, node, 1)
    if gb is not None:
        m = bias_meta
        if not (gb.tp_data.shape == m[0] and gb.tp_dtype is m[1] and gb.tp_device is m[2]):
            gb = fit_gradient(gb, m, node, 2)
    return [gi, gw, gb]


# the backend kernel of LinearBackward0 (and CrossEntropyLossBackward0) per key set, as
# (generation, kernel or None): Note [Registry generation] in the core says when it holds
_LINEAR_BACKWARD_FOUND: dict[int, tuple[int, Any]] = {}
_CE_BACKWARD_FOUND: dict[int, tuple[int, Any]] = {}


def _backward_kernel(found: dict[int, tuple[int, Any]], op: OpOverload, ks: int) -> Any:
    """The backend's kernel of ``op`` for key set ``ks``, or None when it may dispatch (Note
    [Kernels that do not dispatch] in array_backend); kept in ``found`` until the registry's
    generation changes."""
    gen = _generation()
    hit = found.get(ks)
    if hit is not None and hit[0] == gen:
        return hit[1]
    parts = _find_parts(ks, (op, -1))
    kernel = None if parts is None else parts[0]
    found[ks] = (gen, kernel)
    return kernel


def _linear_dispatched(node: Any, grads: list[Tensor | None]) -> list[Tensor | None]:
    """:func:`_linear_apply` through the dispatcher (dispatch tracing, operands of several
    dtypes, a backend kernel that may dispatch): the plain values (autograd keys gone) and
    ``linear_backward`` as an operator; the formulas where its dtypes differ."""
    g = grads[0]
    assert g is not None
    nexts = node.next_functions
    metas = node._input_meta
    need_input = nexts[0][0] is not None
    need_weight = nexts[1][0] is not None
    need_bias = nexts[2][0] is not None
    # a vector bias (the common one) sums in the kernel; any other shape as in _linear_bias
    sum_bias = need_bias and metas[2][0] == tuple(g.tp_data.shape[-1:]) and g.tp_data.ndim > 1
    s = node._rule.view_cls(node)
    x: Tensor = s.input
    w: Tensor = s.weight
    d = g.tp_dtype
    if x.tp_dtype is not d or w.tp_dtype is not d:
        return OpNode.apply(node, grads)  # type: ignore[return-value]
    res = list(_linear_backward(x, g, w, [need_input, need_weight, sum_bias]))
    if need_bias and not sum_bias:
        res[2] = _linear_bias(g, metas[2][0])
    for i in range(3):
        v = res[i]
        if v is not None:
            m = metas[i]
            if not (v.tp_data.shape == m[0] and v.tp_dtype is m[1] and v.tp_device is m[2]):
                res[i] = fit_gradient(v, m, node, i)
    return res


def _linear_rule(rule: Rule) -> Callable[..., Any]:
    """``_linear_kernel`` for ``rule``, whose nodes run :func:`_linear_apply`."""
    base = rule.node_cls
    rule.node_cls = type(base.__name__, (base,), {"__slots__": (), "apply": _linear_apply})
    return _linear_kernel(rule)


def _linear_kernel(rule: Rule) -> Callable[..., Any]:
    op = rule.op
    record = record_function(rule)

    def kernel(_ks: int, input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Any:
        key = int(_ks)
        if (
            weight.tp_data.ndim != 2
            or (local_state.masks.inc | key & M.above) & ~M.below
            or _trace.enabled
        ):
            # the decomposition, recording its parts (Note [Fused nodes of composite ops])
            return op.kernel_for(M.below & key)(input, weight, bias)
        # the forward: tensorplug::linear_forward's kernel below autograd, kept in that op's
        # dispatch cache under -key (below_kernel, Note [Derived cache entries] in the core)
        forward = _forward_of(-key)
        if forward is None:
            forward = below_kernel(_linear_forward, key)
        out = forward(input, weight, bias)
        record(out, input, weight, bias)  # a node if an input requires grad
        return out

    return kernel


# --- cross entropy ------------------------------------------------------------------------------

_log_softmax = _aten.log_softmax.int
_nll_loss = _aten.nll_loss.default
_nll_loss_backward = _aten.nll_loss_backward.default
_log_softmax_backward = _aten._log_softmax_backward_data.default
# Note [tensorplug operators] in the core: PyTorch has no such operator
_ce_fused = tp.ops.tensorplug.cross_entropy_loss_backward.default
_REDUCTIONS = ("mean", "sum", "none")


def _ce_backward(
    g: Tensor, logp: Tensor, target: Tensor, reduction: str, ignore_index: int
) -> Tensor:
    """What ``LogSoftmaxBackward0`` and ``NllLossBackward0`` give, in one node."""
    dim = 0 if logp.tp_data.ndim == 1 else 1
    gl = _nll_loss_backward(g, logp, target, None, reduction, ignore_index)
    return _log_softmax_backward(gl, logp, dim, logp.tp_dtype)


def _ce_recorded(g: Tensor, x: Tensor, target: Tensor, reduction: str, ignore_index: int) -> Tensor:
    """:func:`_ce_backward` while the backward pass records (``create_graph``): the
    log-softmax computed again from the input, so the gradient depends on it."""
    logp = _log_softmax(x, 0 if x.tp_data.ndim == 1 else 1)
    return _ce_backward(g, logp, target, reduction, ignore_index)


def _ce_plain(g: Tensor, logp: Tensor, target: Tensor, reduction: str, ignore_index: int) -> Tensor:
    """:func:`_ce_backward` while the backward pass records nothing: one
    ``tensorplug::cross_entropy_loss_backward`` (the same bits as the two operators), its
    backend kernel called directly where it does not dispatch, else through the dispatcher;
    under dispatch tracing the two operators, so the trace shows them as before."""
    if _trace.enabled:
        return _ce_backward(g, logp, target, reduction, ignore_index)
    st = local_state.masks
    ks = (g.tp_keyset | logp.tp_keyset | target.tp_keyset | st.inc) & st.nexc
    kernel = _backward_kernel(_CE_BACKWARD_FOUND, _ce_fused, ks)
    if kernel is None:
        return _ce_fused(g, logp, target, reduction, ignore_index)
    return kernel(g, logp, target, reduction, ignore_index)


CROSS_ENTROPY = {
    "self": lambda g, s: (
        _ce_recorded(g, s.self, s.target, s.reduction, s.ignore_index)
        if grad_recording()
        else _ce_plain(g, s.log_probs, s.target, s.reduction, s.ignore_index)
    ),
}


def _cross_entropy_kernel(rule: Rule) -> Callable[..., Any]:
    op = rule.op
    # the node keeps the log-softmax it computed (a value of neither the call nor its result)
    base = rule.node_cls
    rule.node_cls = type(
        base.__name__,
        (base,),
        {"__slots__": ("_log_probs",), "_release": _release_log_probs, "apply": _ce_apply},
    )
    view = rule.view_cls
    rule.view_cls = type(
        view.__name__, (view,), {"__slots__": (), "log_probs": property(_read_log_probs)}
    )
    record = record_function(rule)  # after the classes change: it makes rule.node_cls

    found: dict[int, tuple[int, Any]] = {}  # key set -> (generation, its forward)

    def kernel(
        _ks: int,
        self: Tensor,
        target: Tensor,
        weight: Tensor | None = None,
        reduction: str = "mean",
        ignore_index: int = -100,
        label_smoothing: float = 0.0,
    ) -> Any:
        key = int(_ks)
        x = self.tp_data
        nd = x.ndim
        if (
            weight is not None
            or label_smoothing > 0
            or reduction not in _REDUCTIONS
            or (nd != 2 and nd != 1)
            or target.tp_data.shape == x.shape  # class probabilities
            or (local_state.masks.inc | key & M.above) & ~M.below
            or _trace.enabled
        ):
            # the decomposition, recording its parts (Note [Fused nodes of composite ops])
            return op.kernel_for(M.below & key)(
                self, target, weight, reduction, ignore_index, label_smoothing
            )
        hit = found.get(key)
        if hit is None or hit[0] != _generation():
            hit = found[key] = (_generation(), _ce_forward(key))
        loss, logp = hit[1](self, target, nd - 1, reduction, ignore_index)
        node = record(loss, self, target, None, reduction, ignore_index, label_smoothing)
        if node is not None:  # self requires grad
            node._log_probs = SavedTensor(logp)
        return loss

    return kernel


def _ce_apply(node: Any, grads: list[Tensor | None]) -> list[Tensor | None]:
    """``CrossEntropyLossBackward0.apply``: while the backward pass records nothing, the input
    gradient from the backend's ``tensorplug::cross_entropy_loss_backward`` kernel called
    directly with the saved log-softmax and target as they were saved (Note [Saved values for
    a backend kernel] in saved.py); else (``create_graph``, dispatch tracing, a kernel that
    may dispatch) the formula of ``CROSS_ENTROPY``."""
    g = grads[0]
    nexts = node.next_functions
    if g is None or local_state.masks.nexc & M.ag or _trace.enabled or nexts[0][0] is None:
        return OpNode.apply(node, grads)  # type: ignore[return-value]
    sl = node._log_probs
    args = node._args  # self, target, weight, reduction, ignore_index, label_smoothing
    st = args[1]
    if sl.vc.value != sl.version:  # read in the formula's order: log_probs, then target
        sl.check(node)
    if st.vc.value != st.version:
        st.check(node)
    logp: Tensor = sl.t
    target: Tensor = st.t
    masks = local_state.masks
    ks = ((logp.tp_keyset | target.tp_keyset) & ~M.strip | g.tp_keyset | masks.inc) & masks.nexc
    kernel = _backward_kernel(_CE_BACKWARD_FOUND, _ce_fused, ks)
    if kernel is None:  # the backend's kernel may dispatch: the formula, through it
        return OpNode.apply(node, grads)  # type: ignore[return-value]
    v = kernel(g, logp, target, args[3], args[4])
    m = node._input_meta[0]
    if not (v.tp_data.shape == m[0] and v.tp_dtype is m[1] and v.tp_device is m[2]):
        v = fit_gradient(v, m, node, 0)
    res: list[Tensor | None] = [None] * len(nexts)
    res[0] = v
    return res


def _ce_forward(key: int) -> Callable[..., tuple[Tensor, Tensor]]:
    """``forward(x, target, dim, reduction, ignore_index) -> (loss, log-softmax)`` below
    autograd for key set ``key``: the backends' kernels of ``log_softmax`` and ``nll_loss``
    called directly when neither dispatches, else the two ops through the dispatcher with the
    autograd keys excluded. Valid while ``tp.dispatcher.generation()`` is unchanged."""
    parts = _find_parts(key, (_log_softmax, M.below), (_nll_loss, M.below))
    if parts is not None:
        log_softmax, nll_loss = parts

        def forward(
            x: Tensor, target: Tensor, dim: int, reduction: str, ignore_index: int
        ) -> tuple[Tensor, Tensor]:
            logp = log_softmax(x, dim)
            return nll_loss(logp, target, None, reduction, ignore_index), logp

        return forward

    def dispatching(
        x: Tensor, target: Tensor, dim: int, reduction: str, ignore_index: int
    ) -> tuple[Tensor, Tensor]:
        st = local_state.masks
        old = st.nexc
        st.nexc = old & M.nag
        try:
            logp = _log_softmax(x, dim)
            return _nll_loss(logp, target, None, reduction, ignore_index), logp
        finally:
            st.nexc = old

    return dispatching


def _read_log_probs(view: Any) -> Tensor:
    node = view._node
    saved: SavedTensor = node._log_probs
    return saved.unpack_plain(node)


def _release_log_probs(node: Any) -> None:
    OpNode._release(node)
    node._log_probs = FREED


# --- the kernels below autograd -----------------------------------------------------------------


def _find_parts(ks: int, *ops_and_masks: tuple[OpOverload, int]) -> Any:
    """The kernels of ``ops_and_masks`` for key set ``ks`` (each op's below its mask), or None
    when one may dispatch (Note [Kernels that do not dispatch] in array_backend)."""
    kernels = [op.kernel_for(mask & ks) for op, mask in ops_and_masks]
    return tuple(kernels) if all(is_no_dispatch(k) for k in kernels) else None


# --- registration -------------------------------------------------------------------------------


FUSED: dict[str, tuple[dict[str, Callable[..., Any]], Callable[[Rule], Callable[..., Any]]]] = {
    "linear": (LINEAR, _linear_rule),
    "cross_entropy_loss": (CROSS_ENTROPY, _cross_entropy_kernel),
}


def register_fused(lib: Any) -> int:
    """Register the fused kernels on every backend's ``Autograd<B>`` key; returns the count."""
    count = 0
    for short, (table, make) in FUSED.items():
        op = dispatcher.find_op(f"aten::{short}")

        built: list[Callable[..., Any]] = []

        def build(
            op: OpOverload = op, table: Any = table, make: Any = make, built: Any = built
        ) -> Callable[..., Any]:
            if not built:  # one rule and kernel for every backend
                rule = Rule(op, table)
                RULES[op.name] = rule
                built.append(make(rule))
            return built[0]

        for backend in _keys.backends():
            key = _keys.per_backend("Autograd", backend).name
            register_lazily(lib, op, key, build, "autograd")
            count += 1
    return count
