"""Fused backward steps: one kernel call for a chain of nodes the engine would run one by one.

Note [Fused backward steps]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
A layer written ``x @ w.T + b`` records three nodes, as PyTorch does (``AddBackward0`` over
``MatmulBackward0`` over ``PermuteBackward0`` of the weight), where ``F.linear(x, w, b)``
records one (Note [Fused nodes of composite ops] in fused.py). The graph is left as recorded:
``grad_fn`` names, hooks, ``retain_grad``, saved tensors and their checks are PyTorch's. It is
the engine that, when it reaches such an ``add`` node, may run the chain under it as one step:
the node class's ``_fuse`` (:class:`~.graph.Node`) returns the edges at the bottom of the
chain and their gradients, computed by one ``linear_backward`` kernel call (with ``W`` the
product's right operand transposed back: ``g @ W`` for the product's left operand,
``g.T @ x`` for ``W``, the bias's row sum), or None, and the engine then runs the node as
always. The step runs only where nothing can tell it from the nodes run one by one:

* nothing records (no ``create_graph``, no dispatch tracing), the dtypes are one real
  dtype, both operands are matrices, the ``add``'s ``alpha`` is 1 and the product's side of
  it has the gradient's shape (no broadcast there);
* the product's node is reached only from the ``add`` in this backward pass (its count in
  the engine's dependencies is 1), it is no target of ``autograd.grad`` and has no hooks
  (``retain_grad`` and tensor hooks of the product are its pre-hooks); its two saved
  operands are as they were saved (the version check; a freed or hooked saved value fails it
  and the node runs, raising or unpacking as always);
* the transpose under the product's right operand (``PermuteBackward0`` of a matrix,
  ``TBackward0``, ``TransposeBackward0``) is folded into the step on the same terms; its
  gradient is then ``g.T @ x``, in the weight's own layout. Otherwise the right operand's
  gradient is what the product's formula gives, in that formula's layout;
* the order is the same: every node other than a leaf's accumulator that is ready, or that
  the step makes ready, was created before the last node folded in (so the one-by-one run
  gives the folded nodes right after the ``add``, Note [Engine order] in engine.py), and
  every accumulator the step hands a gradient to has no hooks, on the node or the leaf (an
  accumulator runs as soon as it is ready, so their order among themselves could change).

The values are the same kernels' on the same operands as the formulas': ``g @ W`` is
``MmBackward0``'s ``g @ mat2.T`` (``W`` is that transpose), ``g.T @ x`` the weight layout's
product that ``_mm_mat2`` (formulas/linalg.py) transposes and the permute's backward
transposes back, the row sum the one ``AddBackward0``'s gradient takes (tests/autograd/
test_fused_steps.py compares them bit for bit). The released nodes are released as the engine
would (``retain_graph=False``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplug as tp
from tensorplug import dispatcher
from tensorplug.dispatch import local_state
from tensorplug.tensor import Tensor

from .accumulate import AccumulateGrad
from .formulas.linalg import _column_major
from .fused import _find_parts
from .graph import Node, fit_gradient
from .masks import M
from .rules import FUSED_STEPS, RULES
from .saved import SavedTensor

__all__ = ["register_fused_steps"]

_aten = tp.ops.aten
_linear_backward = _aten.linear_backward.default
_permute = _aten.permute.default
_mm_op = _aten.mm.default
_trace = dispatcher.trace_state
_SWAP = (1, 0)
_generation = dispatcher.generation

# the products and transposes a step folds, by their op's name
_PRODUCTS = frozenset(("aten::matmul.default", "aten::mm.default"))
_TRANSPOSES = frozenset(("aten::permute.default", "aten::t.default", "aten::transpose.int"))

# key set -> (generation, (linear_backward, permute, mm) backend kernels, or None where one may
# dispatch): Note [Registry generation] in the core says when an entry holds
_KERNELS: dict[int, tuple[int, Any]] = {}


def _kernels(ks: int) -> Any:
    gen = _generation()
    hit = _KERNELS.get(ks)
    if hit is not None and hit[0] == gen:
        return hit[1]
    parts = _find_parts(ks, (_linear_backward, -1), (_permute, M.below), (_mm_op, M.below))
    _KERNELS[ks] = (gen, parts)
    return parts


def _rule_name(node: Any) -> str | None:
    rule = getattr(node, "_rule", None)
    return None if rule is None else rule.name


def _quiet_leaf(node: Node) -> bool:
    """Whether ``node``, an accumulator, runs nothing a user sees but the ``.grad`` it sets:
    no hooks on the node or on its leaf."""
    if node._pre_hooks or node._post_hooks:
        return False
    assert isinstance(node, AccumulateGrad)
    var = node._variable()
    m = None if var is None else var.tp_autograd
    return m is None or (m.hooks is None and m.post_accumulate_hooks is None)


def _folds(node: Node | None, deps: dict[Node, int], targeted: Any, buffers: Any) -> bool:
    """Whether the engine may run ``node`` inside another's step: it is reached only from
    there (no root's gradient waits at it), is no target, and has no hooks."""
    return (
        node is not None
        and deps.get(node) == 1
        and node not in buffers
        and (targeted is None or node not in targeted)
        and not node._pre_hooks
        and not node._post_hooks
        and node._n_out == 1
    )


def _is_swap(node: Node) -> bool:
    """Whether ``node`` is the backward of a transpose of a matrix."""
    name = _rule_name(node)
    if name not in _TRANSPOSES:
        return False
    meta = node._input_meta[0]
    if meta is None or len(meta[0]) != 2:
        return False
    if name == "aten::permute.default":
        dims = node._args[1]  # type: ignore[attr-defined]
        return len(dims) == 2 and dims[0] % 2 == 1
    if name == "aten::transpose.int":
        args = node._args  # type: ignore[attr-defined]
        return args[1] % 2 != args[2] % 2
    return True


def add_step(
    node: Any,
    grads: list[Tensor | None],
    deps: dict[Node, int],
    ready: list[tuple[int, Node]],
    targeted: Any,
    keep_graph: bool,
    buffers: dict[Node, Any],
) -> tuple[tuple[tuple[Node | None, int], ...], list[Tensor | None]] | None:
    """``AddBackward0``'s step (Note [Fused backward steps]): the edges under the product on
    one side of the ``add`` and under its transpose, with their gradients; or None."""
    g = grads[0]
    if g is None or node._post_hooks or _trace.enabled:
        return None
    args = node._args
    if args[2] != 1:  # alpha (a released node's reads as FREED, which is not 1)
        return None
    gd = g.tp_data
    if gd.ndim != 2:
        return None
    nexts = node.next_functions
    metas = node._input_meta
    for side in (0, 1):
        prod = nexts[side][0]
        if _rule_name(prod) in _PRODUCTS and _folds(prod, deps, targeted, buffers):
            break
    else:
        return None
    m = metas[side]
    d = g.tp_dtype
    if not (m[0] == gd.shape and m[1] is d and m[2] is g.tp_device) or d.kind == "c":
        return None
    sx, sw = prod._args[0], prod._args[1]
    # both saved as they were (a freed, hooked or modified value fails this: the node runs)
    if type(sx) is not SavedTensor or sx.vc.value != sx.version:
        return None
    if type(sw) is not SavedTensor or sw.vc.value != sw.version:
        return None
    x: Tensor = sx.t
    wt: Tensor = sw.t
    if x.tp_data.ndim != 2 or wt.tp_data.ndim != 2 or x.tp_dtype is not d or wt.tp_dtype is not d:
        return None
    # the edges at the bottom of the chain
    x_edge, wt_edge = prod.next_functions
    perm = wt_edge[0]
    fold = perm is not None and _folds(perm, deps, targeted, buffers) and _is_swap(perm)
    w_edge = perm.next_functions[0] if fold else wt_edge
    b_edge = nexts[1 - side]
    # Note [Fused backward steps]: the order is the one-by-one run's
    last = perm._seq if fold else prod._seq
    if ready and -ready[0][0] > last:
        return None
    need = []
    for child, _ in (x_edge, w_edge, b_edge):
        if child is None or child not in deps:
            need.append(False)
            continue
        if type(child) is AccumulateGrad:
            if not _quiet_leaf(child):
                return None
        elif child._seq > last:
            return None
        need.append(True)
    need_x, need_w, need_b = need
    if not (need_x or need_w):
        return None  # the add node alone does it
    st = local_state.masks
    ks = ((x.tp_keyset | wt.tp_keyset) & ~M.strip | g.tp_keyset | st.inc) & st.nexc
    kernels = _kernels(ks)
    if kernels is None:  # a backend kernel may dispatch: the nodes run one by one
        return None
    linear_backward, permute, mm = kernels
    b_meta = metas[1 - side]
    sum_bias = need_b and b_meta[0] == gd.shape[-1:]
    # the weight's gradient in the kernel when it comes out in its layout: through the
    # transpose folded in, or for a column-major right operand (``w.t()`` not folded) as the
    # transpose of the weight's (what _mm_mat2 gives)
    w_in_kernel = need_w and (fold or _column_major(wt))
    gi, gw, gb = linear_backward(x, g, permute(wt, _SWAP), [need_x, w_in_kernel, sum_bias])
    if need_w and not fold:
        # the formula's layout (_mm_mat2)
        gw = permute(gw, _SWAP) if w_in_kernel else mm(permute(x, _SWAP), g)
    if need_b and not sum_bias:
        gb = g
    # each in its input's shape, dtype and device (what the nodes' apply promises the engine)
    if gi is not None:
        m = prod._input_meta[0]
        if not (gi.tp_data.shape == m[0] and gi.tp_dtype is m[1] and gi.tp_device is m[2]):
            gi = fit_gradient(gi, m, prod, 0)
    if gw is not None:
        owner, i = (perm, 0) if fold else (prod, 1)
        m = owner._input_meta[i]
        if not (gw.tp_data.shape == m[0] and gw.tp_dtype is m[1] and gw.tp_device is m[2]):
            gw = fit_gradient(gw, m, owner, i)
    if gb is not None:
        m = b_meta
        if not (gb.tp_data.shape == m[0] and gb.tp_dtype is m[1] and gb.tp_device is m[2]):
            gb = fit_gradient(gb, m, node, 1 - side)
    if not keep_graph:  # the engine releases the add node itself
        if prod._saves:
            prod._release()
        if fold and perm._saves:
            perm._release()
    return (x_edge, w_edge, b_edge), [gi, gw, gb]


STEPS: dict[str, Callable[..., Any]] = {"aten::add.Tensor": add_step}


def register_fused_steps() -> None:
    """Give the node classes of the ops in :data:`STEPS` their step, the rules made from now
    on and any made already."""
    FUSED_STEPS.update(STEPS)
    for name, step in STEPS.items():
        rule = RULES.get(name)
        if rule is not None:
            rule.node_cls._fuse = step
