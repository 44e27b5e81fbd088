"""The backward engine: runs a graph of nodes from its outputs back to its inputs.

Note [Engine order]
~~~~~~~~~~~~~~~~~~~
The engine first walks the graph from the roots, counting for each node how many edges lead
to it. A node runs once every node that feeds it has run, so its input buffer holds the sum of
all gradients reaching it; among ready nodes the most recently created runs first (a heap on
the creation sequence number, as PyTorch's CPU ready queue), except that a leaf's accumulator
runs before any other (PyTorch gives ``AccumulateGrad`` the highest priority): its sequence
number is raised by ``ACCUMULATOR_PRIORITY``. So a hook of a node that runs later sees the
``.grad`` of a leaf whose gradient is complete. When nothing can observe the difference (the
leaf has no hooks and no ``.grad`` yet, no ``create_graph``, no ``inputs``), the accumulator
of a leaf that just got its last gradient runs right in the loop that hands a node's
gradients on, without a trip through the queue (in :func:`_run`); so does a node made
ready while the queue is empty, the only one its parent made ready (the next layer of a
chain): the queue would give it next. ``autograd.grad`` only
runs nodes on a path to the requested inputs and captures the gradient arriving there instead
of accumulating it into ``.grad``.

"""

from __future__ import annotations

import heapq
from sys import getrefcount
from typing import Any

import tensorplug as tp
from tensorplug.dispatch import local_state
from tensorplug.tensor import Tensor

from .accumulate import (
    AccumulateGrad,
    accumulate_into_grad,
    edge,
    owns_layout,
    run_leaf_hooks,
    same_layout,
)
from .graph import Node, apply_node, check_hook_values, run_tensor_hook
from .masks import M
from .meta import requires_grad

__all__ = ["backward", "grad"]


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if isinstance(x, Tensor) or x is None:
        return (x,)
    return tuple(x)


def _root_grads(outputs: tuple[Tensor, ...], grad_outputs: Any, create_graph: bool) -> list[Tensor]:
    if grad_outputs is None and len(outputs) == 1 and outputs[0].numel() == 1:
        return [_implicit_grad(outputs[0])]  # loss.backward(): the common case
    given = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(given) != len(outputs):
        raise RuntimeError(
            f"got {len(outputs)} tensors and {len(given)} gradients: give one gradient per "
            "output (None for a scalar output's implicit 1)"
        )
    grads = []
    for i, (out, g) in enumerate(zip(outputs, given, strict=True)):
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = _implicit_grad(out)
        elif not isinstance(g, Tensor):
            g = tp.full_like(out, g)
        elif tuple(g.tp_data.shape) != tuple(out.tp_data.shape):  # (arrays: Note [Size])
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {list(g.shape)} and "
                f"output[{i}] has a shape of {list(out.shape)}."
            )
        if not create_graph and requires_grad(g):
            g = g.detach()
        grads.append(g)
    return grads


_ONES: dict[tuple[Any, ...], Tensor] = {}
# the last key and kept one, compared by identity first (hashing a key calls Device.__hash__);
# one tuple, replaced whole, so threads read a consistent one
_last_one: tuple[Any, ...] = ((), None, None, 0, None)


def _implicit_grad(out: Tensor) -> Tensor:
    """``ones_like(out)`` for the implicit gradient of a one-element output: a clone of a kept
    one (a clone is a plain copy; a factory call costs several times more)."""
    global _last_one
    if type(out) is not Tensor:
        return tp.ones_like(out)
    shape, dtype, device = out.tp_data.shape, out.tp_dtype, out.tp_device
    ks = out.tp_keyset & ~M.strip
    last = _last_one
    if last[1] is dtype and last[2] is device and last[3] == ks and last[0] == shape:
        return _clone(last[4])
    if dtype.is_complex:  # never kept, so a complex output always reaches this test
        raise RuntimeError(
            "grad can be implicitly created only for real scalar outputs; pass the gradient "
            "of the complex output (grad_outputs), or backward from a real value of it "
            "(z.abs(), z.real)"
        )
    key = (shape, dtype, device, ks)
    one = _ONES.get(key)
    if one is None:
        one = _ONES[key] = tp.ones_like(out)
    _last_one = (*key, one)
    return _clone(one)


_clone = tp.ops.aten.clone.default


def _root_edges(outputs: tuple[Tensor, ...]) -> list[tuple[Node, int]]:
    edges = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise TypeError(
                f"Expected output to be a Tensor, but element {i} of tensors is a "
                f"{type(out).__name__}; pass the Tensors computed from the inputs"
            )
        node, nr = edge(out)
        if node is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        edges.append((node, nr))
    return edges


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves of the graph."""
    if grad_tensors is None and inputs is None and not create_graph and type(tensors) is Tensor:
        # loss.backward(): one output of one element, its implicit gradient, every node runs
        m = tensors.tp_autograd
        if m is not None and m.view is None and m.grad_fn is not None and tensors.numel() == 1:
            root = m.grad_fn
            one = _implicit_grad(tensors)
            buffers: dict[Node, list[Tensor | None]] = {}
            if root._n_out == 1:
                buffers[root] = [one]
            else:
                _add_to_buffer(buffers, root, m.output_nr, one, False)
            del one
            _run(root, [], buffers, _dependencies([root]), bool(retain_graph), False)
            return
    outputs = _as_tuple(tensors)
    keep = create_graph if retain_graph is None else retain_graph
    roots = _root_edges(outputs)
    grads = _root_grads(outputs, grad_tensors, create_graph)
    if inputs is None:
        _execute(roots, grads, keep, create_graph, None)
        return
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    targets = _targets(ins)
    captured = _execute(roots, grads, keep, create_graph, targets)
    for t, g in zip(ins, captured, strict=True):
        if g is not None:
            accumulate_into_grad(t, g, hooked=True)  # _execute ran the hooks


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing goes into ``.grad``)."""
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but "
            "got: allow_unused=False."
        )
    keep = create_graph if retain_graph is None else retain_graph
    roots = _root_edges(outs)
    grads = _root_grads(outs, grad_outputs, create_graph)
    targets = _targets(ins)
    captured = _execute(roots, grads, keep, create_graph, targets)
    result = []
    for i, (t, g) in enumerate(zip(ins, captured, strict=True)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = tp.zeros_like(t)
        result.append(g)
    return tuple(result)


def _targets(inputs: tuple[Any, ...]) -> list[tuple[Node | None, int]]:
    targets: list[tuple[Node | None, int]] = []
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"all inputs have to be Tensors, but got {type(t).__name__} (element {i} of "
                "inputs); pass the Tensors to differentiate with respect to"
            )
        if not requires_grad(t):
            raise RuntimeError(
                f"One of the differentiated Tensors does not require grad (element {i} of "
                "inputs); call requires_grad_() on it before computing the outputs, or leave "
                "it out of inputs"
            )
        targets.append(edge(t))
    return targets


# --- execution ----------------------------------------------------------------------------------


def _execute(
    roots: list[tuple[Node, int]],
    root_grads: list[Tensor],
    keep_graph: bool,
    create_graph: bool,
    targets: list[tuple[Node | None, int]] | None,
) -> list[Tensor | None]:
    """Run the graph (Note [Engine order]); with ``targets``, capture what reaches them."""
    # 1. which nodes run, and for each how many edges from running nodes lead to it: every
    # node reachable, or (targets) those on a path to a target
    capture: dict[tuple[Node, int], list[int]] | None = None
    needed: set[Node] | None = None
    if targets is None:
        deps = _dependencies([n for n, _ in roots])
    else:
        capture = {}
        fast = _leaf_targets(roots, targets, capture)
        if fast is not None:
            deps = fast  # every node reached is on a path to a target
        else:
            capture.clear()
            needed, deps = _needed(roots, targets, capture)
    # 2. the roots' gradients, and the roots ready to run
    buffers: dict[Node, list[Tensor | None]] = {}
    for (n, nr), root_grad in zip(roots, root_grads, strict=True):
        if needed is None or n in needed:
            _add_to_buffer(buffers, n, nr, root_grad, create_graph)
    ready = [
        (-n._seq, n)
        for n in {n for n, _ in roots}
        if (needed is None or n in needed) and not deps.get(n)
    ]
    heapq.heapify(ready)
    # 3. run them
    captured: list[Tensor | None] = [None] * len(targets) if targets is not None else []
    if ready:
        first = heapq.heappop(ready)[1]
        _run(first, ready, buffers, deps, keep_graph, create_graph, capture, captured)
    return captured


def _run(
    node: Node | None,
    ready: list[tuple[int, Node]],
    buffers: dict[Node, list[Tensor | None]],
    deps: dict[Node, int],
    keep_graph: bool,
    create_graph: bool,
    capture: dict[tuple[Node, int], list[int]] | None = None,
    captured: list[Tensor | None] | None = None,
) -> None:
    """The engine's loop, for ``backward()`` and ``autograd.grad`` alike: ``node`` the first
    to run, the ready queue ``ready`` of the others ready, the gradients ``buffers`` waiting at
    each node, the edges ``deps`` not yet run into each (the nodes that run are exactly those
    with a count, and the roots). Without ``capture`` leaves accumulate into ``.grad``; with
    it (``autograd.grad``, ``backward(inputs=...)``) the gradients reaching the targets are
    captured into ``captured`` (``capture``: (node, output_nr) -> their indices) and ``.grad``
    is left alone.

    One loop serves both because it is the hot path: each node step is written once, inline.
    A node that becomes ready while the queue is empty, the only one its parent made ready
    (a chain of layers), runs next without a trip through the queue: it is the one the queue
    would give (Note [Engine order])."""
    pop, push, pushpop = heapq.heappop, heapq.heappush, heapq.heappushpop
    steal_inline = not create_graph and capture is None
    # the nodes whose incoming gradients are captured
    targeted = None if capture is None else {n for n, _ in capture}
    st = local_state.masks  # record the backward pass (create_graph) or not
    saved_mode = st.nexc
    st.nexc = (saved_mode | M.ag) if create_graph else (saved_mode & M.nag)
    try:
        while node is not None:
            grads = buffers.pop(node, None)
            if grads is None:
                grads = [None] * node._n_out
            if node._pre_hooks:
                grads = _run_pre_hooks(node, grads)
            if targeted is not None:  # autograd.grad
                if node in targeted:
                    assert capture is not None and captured is not None
                    _capture(node, grads, capture, captured)
                    if type(node) is not AccumulateGrad:
                        for c, _ in node.next_functions:
                            if c in deps:  # on a path to a target: it runs (it has a count)
                                break
                        else:  # a target no other target is reached through: nothing to run
                            node = pop(ready)[1] if ready else None
                            continue
                if type(node) is AccumulateGrad:  # captured above; .grad is left alone
                    if node._post_hooks:
                        g0 = grads[0]
                        for fn in list(node._post_hooks):
                            fn((), (g0,))
                    node = pop(ready)[1] if ready else None
                    continue
            if type(node) is AccumulateGrad:
                g0 = grads[0]
                del grads
                var = node._variable()
                if g0 is not None and var is not None:
                    m = var.tp_autograd
                    if (  # the common case of accumulate_into_grad, inline
                        m is not None
                        and m.grad is None
                        and not create_graph
                        and m.hooks is None
                        and m.post_accumulate_hooks is None
                        and g0.tp_autograd is None
                        and getrefcount(g0) <= 2  # g0 and the call's own reference
                        and owns_layout(g0, var)
                    ):
                        m.grad = g0  # Note [Stealing gradients]
                    else:
                        accumulate_into_grad(var, g0)  # g0 and its parameter
                if node._post_hooks:
                    for fn in list(node._post_hooks):
                        fn((), (g0,))
                node = pop(ready)[1] if ready else None
                continue
            fuse = node._fuse  # a method, or None: Note [Fused backward steps] in fused_steps.py
            if fuse is not None and not create_graph:
                fused = fuse(grads, deps, ready, targeted, keep_graph, buffers)
            else:
                fused = None
            if fused is not None:
                nexts, outs = fused
            else:
                if node._validates_grads and not node._post_hooks:
                    outs = node.apply(grads)
                else:
                    outs = apply_node(node, grads)
                nexts = node.next_functions
            del grads, fused
            if not keep_graph and node._saves:
                node._release()
            nxt = None  # the last child made ready, not yet in the queue
            for (child, nr), g in zip(nexts, outs, strict=False):
                if child is None:
                    continue
                try:
                    left = deps[child]
                except KeyError:  # (autograd.grad) on no path to a target: it does not run
                    continue
                if g is not None:
                    if (
                        steal_inline
                        and type(child) is AccumulateGrad
                        and left == 1
                        and child not in buffers
                        and not child._pre_hooks
                        and not child._post_hooks
                    ):
                        # Note [Engine order]: the accumulator runs here, in the common case
                        # of accumulate_into_grad (Note [Stealing gradients]), when nothing
                        # observes the order (no hooks); else from the ready queue
                        var = child._variable()
                        if (
                            var is not None
                            and (m := var.tp_autograd) is not None
                            and m.grad is None
                            and m.hooks is None
                            and m.post_accumulate_hooks is None
                            and g.tp_autograd is None
                            and getrefcount(g) <= _HAND_ON_REFS
                        ):
                            try:  # owns_layout(g, var), inline for numpy's flags
                                gd = g.tp_data
                                f = gd.flags
                                owns = (
                                    (f.c_contiguous or f.f_contiguous)
                                    and f.writeable
                                    and (
                                        gd.strides == var.tp_data.strides
                                        or same_layout(gd, var.tp_data)
                                    )
                                )
                            except AttributeError:
                                owns = owns_layout(g, var)
                            if owns:
                                m.grad = g
                                continue
                    elif (
                        targeted is not None
                        and left == 1
                        and type(child) is AccumulateGrad
                        and child in targeted
                        and child not in buffers
                        and not child._pre_hooks
                        and not child._post_hooks
                        and (
                            (var := child._variable()) is None
                            or (m := var.tp_autograd) is None
                            or not m.hooks
                        )
                    ):
                        # a leaf's last gradient, captured here (what _capture does, with no
                        # hooks to run): the accumulator has nothing else to do
                        assert capture is not None and captured is not None
                        for i in capture.get((child, nr), ()):
                            before = captured[i]
                            captured[i] = g if before is None else before + g
                        continue
                    buf = buffers.get(child)
                    if buf is None:
                        if child._n_out == 1:  # the common case: a one-output node's first
                            buffers[child] = [g]
                        else:
                            buf = buffers[child] = [None] * child._n_out
                            buf[nr] = g
                    else:
                        old = buf[nr]
                        buf[nr] = g if old is None else old + g
                if left == 1:  # the last edge into it: ready (its count is not read again)
                    if nxt is not None:
                        push(ready, (-nxt._seq, nxt))
                    nxt = child
                else:
                    deps[child] = left - 1
            del outs, nexts
            # the last buffer and gradient must not outlive their loop (Note [Stealing
            # gradients]: a reference left here keeps an accumulator from taking a gradient)
            buf = g = old = None
            if not ready:
                node = nxt
            elif nxt is None:
                node = pop(ready)[1]
            else:
                node = pushpop(ready, (-nxt._seq, nxt))[1]
    finally:
        st.nexc = saved_mode


def _capture(
    node: Node,
    grads: list[Tensor | None],
    capture: dict[tuple[Node, int], list[int]],
    captured: list[Tensor | None],
) -> None:
    """Add the gradients reaching ``node``, a target, into ``captured``; a leaf's (its
    accumulator's) after its hooks, which see it as ``backward()`` would show it."""
    if type(node) is AccumulateGrad and grads[0] is not None:
        var = node._variable()  # a leaf among the inputs: its hooks see its gradient
        if var is not None and var.tp_autograd is not None and var.tp_autograd.hooks:
            grads[0] = run_leaf_hooks(var, grads[0])
    for nr, cg in enumerate(grads):
        for i in capture.get((node, nr), ()):
            before = captured[i]
            if cg is not None:
                captured[i] = cg if before is None else before + cg


def _hand_on_refs() -> int:
    """The references a gradient has in :func:`_run`'s loop over a node's outputs when
    nothing else holds it, as that loop counts them: the output list's, the loop variable's,
    zip's result tuple's (CPython keeps the last one) and ``getrefcount``'s own. Measured on
    the same loop, so it holds on any interpreter."""
    for _, g in zip(((None, 0),), [object()], strict=False):
        return getrefcount(g)
    raise AssertionError("unreachable")


_HAND_ON_REFS = _hand_on_refs()


def _dependencies(starts: list[Node]) -> dict[Node, int]:
    """For every node reachable from ``starts``: the number of edges leading to it."""
    deps: dict[Node, int] = {}
    if len(starts) == 1:
        # one start (loss.backward()): it is reached from no node, so a node is seen exactly
        # when it has a count
        stack = list(starts)
        pop, push = stack.pop, stack.append
        while stack:
            for child, _ in pop().next_functions:
                if child in deps:  # None never is
                    deps[child] += 1
                elif child is not None:
                    deps[child] = 1
                    if child.next_functions:  # not a leaf's accumulator
                        push(child)
        return deps
    seen = set(starts)
    stack = list(seen)
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is None:
                continue
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return deps


def _leaf_targets(
    roots: list[tuple[Node, int]],
    targets: list[tuple[Node | None, int]],
    capture: dict[tuple[Node, int], list[int]],
) -> dict[Node, int] | None:
    """:func:`_needed` in one walk for the common case, or None where it does not hold:
    every target is a leaf (its accumulator), every accumulator reached from the roots is a
    target, and every other node reached has an edge. Then every node reached is on a path to
    a target (the graph is finite and acyclic: a walk down from any node ends at an
    accumulator), so the nodes that run are all those reached, and their counts are
    :func:`_dependencies`'s; fills ``capture`` for the targets reached."""
    wanted: dict[Node, list[int]] = {}
    for i, (target, _) in enumerate(targets):
        if target is None:
            continue
        if type(target) is not AccumulateGrad:
            return None
        wanted.setdefault(target, []).append(i)
    starts = [n for n, _ in roots]
    if len(starts) > 1:
        starts = list(dict.fromkeys(starts))  # a node given twice is walked once
    for n in starts:
        if type(n) is AccumulateGrad and n not in wanted:
            return None
    deps: dict[Node, int] = {}
    seen = set(starts)
    stack = list(starts)
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        edges = 0
        for child, _ in n.next_functions:
            if child is None:
                continue
            edges += 1
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                if type(child) is AccumulateGrad:
                    if child not in wanted:
                        return None
                else:
                    push(child)
        if not edges and type(n) is not AccumulateGrad:
            return None
    for target, where in wanted.items():
        if target in seen:
            capture[(target, 0)] = where
    return deps


def _needed(
    roots: list[tuple[Node, int]],
    targets: list[tuple[Node | None, int]],
    capture: dict[tuple[Node, int], list[int]],
) -> tuple[set[Node], dict[Node, int]]:
    """The nodes on a path from the roots to a target, and their dependency counts among
    themselves; fills ``capture`` with where each target's gradient is taken."""
    parents: dict[Node, list[Node]] = {}
    stack = [n for n, _ in roots]
    if len(stack) > 1:
        stack = list(dict.fromkeys(stack))  # a node given twice is walked once
    for n in stack:
        parents.setdefault(n, [])
    while stack:
        n = stack.pop()
        for child, _ in n.next_functions:
            if child is None:
                continue
            ps = parents.get(child)
            if ps is None:
                parents[child] = [n]
                stack.append(child)
            else:
                ps.append(n)
    needed: set[Node] = set()
    for i, (target, nr) in enumerate(targets):
        if target is None or target not in parents:
            continue
        capture.setdefault((target, nr), []).append(i)
        work = [target]
        while work:
            x = work.pop()
            if x in needed:
                continue
            needed.add(x)
            work.extend(parents[x])
    deps: dict[Node, int] = {}
    for n in needed:
        for p in parents[n]:
            if p in needed:
                deps[n] = deps.get(n, 0) + 1
    return needed, deps


def _add_to_buffer(
    buffers: dict[Node, list[Tensor | None]], node: Node, nr: int, g: Tensor, create_graph: bool
) -> None:
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node._n_out
    old = buf[nr]
    buf[nr] = g if old is None else old + g


def _run_pre_hooks(node: Node, grads: list[Tensor | None]) -> list[Tensor | None]:
    """``grads`` after the hooks registered on ``node`` (tensor hooks of its outputs, then
    its pre-hooks); ``grads`` itself where it has none."""
    hooks = node._pre_hooks
    if not hooks:
        return grads
    for nr, fns in hooks.items():
        if nr < 0:
            continue
        for fn in list(fns):
            g = grads[nr]
            if g is None:
                continue
            grads[nr] = run_tensor_hook(fn, g)
    for fn in list(hooks.get(-1, ())):
        new = fn(tuple(grads))
        if new is not None:
            grads = list(check_hook_values(fn, grads, new))
    return grads
