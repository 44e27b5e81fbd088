"""Rewrites of a graph that ``tp.compile`` applies before lowering it.

Each rewrite keeps every value the graph computes bitwise equal: most only drop calls whose
result is already at hand; :func:`fuse_addmm` makes one call of two where the kernels say that
computes the same. Dead-code elimination is :meth:`Graph.eliminate_dead_code`.
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp

from .codegen import raw_lowering
from .graph import Graph, Node, Value
from .recorder import M

__all__ = ["drop_copies", "fold_transposes", "fuse_addmm"]

_TRANSPOSES = ("aten::transpose.int", "aten::t.default")


def _swap(n: Node, ndim: int) -> tuple[int, int] | None:
    """The (sorted, non-negative) pair of dims a transpose node swaps."""
    if n.op.name == "aten::t.default":
        return (0, 1) if ndim == 2 else None
    d0, d1 = n.args[1], n.args[2]
    if type(d0) is not int or type(d1) is not int or ndim == 0:
        return None
    a, b = d0 % ndim, d1 % ndim
    return (min(a, b), max(a, b))


def fold_transposes(graph: Graph) -> int:
    """Read ``x`` where the graph reads ``x`` transposed twice over the same dims (the
    backward of a linear layer gives its weight gradient so: ``mm(...).t().t()``).

    The double transpose is a view with ``x``'s own layout, so reading either reads the same
    numbers. Only values that do not leave the function are replaced (its outputs and effects
    keep their identity); the transposes left unread go with dead-code elimination.
    Returns the number of values replaced.
    """
    escaping = {v for v in graph.out_leaves if isinstance(v, Value)}
    for e in graph.effects:
        escaping.add(e.target)
        if isinstance(e.value, Value):
            escaping.add(e.value)
    swapped: dict[Value, tuple[Value, tuple[int, int]]] = {}  # transpose output -> (input, dims)
    replace: dict[Value, Value] = {}
    for n in graph.nodes:
        if replace:
            n.args = tuple(_sub(a, replace) for a in n.args)
            n.kwargs = {k: _sub(v, replace) for k, v in n.kwargs.items()}
        if n.op.name not in _TRANSPOSES or n.out_form != "one" or not isinstance(n.args[0], Value):
            continue
        src = n.args[0]
        out = n.outputs[0]
        if not isinstance(out, Value):
            continue
        dims = _swap(n, len(src.meta.shape))
        if dims is None:
            continue
        inner = swapped.get(src)
        if inner is not None and inner[1] == dims and out not in escaping:
            replace[out] = inner[0]
        else:
            swapped[out] = (src, dims)
    if replace:
        graph._replay = None
    return len(replace)


def _sub(x: Any, replace: dict[Value, Value]) -> Any:
    if isinstance(x, Value):
        return replace.get(x, x)
    if type(x) is list:
        return [_sub(v, replace) for v in x]
    return x


def _escaping(graph: Graph) -> set[Value]:
    out = {v for v in graph.out_leaves if isinstance(v, Value)}
    for e in graph.effects:
        out.add(e.target)
        if isinstance(e.value, Value):
            out.add(e.value)
    return out


def _plain_reader(n: Node, v: Value) -> bool:
    """Whether node ``n`` reads ``v`` only as a plain input: it writes nothing, and no argument
    that receives ``v`` may alias an output (no alias annotation in the schema)."""
    if n.mutates:
        return False
    args = n.op.schema.arguments
    for i, a in enumerate(n.args):
        if _holds(a, v) and (i >= len(args) or args[i].annotation is not None):
            return False
    by_name = {a.name: a for a in args}
    for k, a in n.kwargs.items():
        if _holds(a, v) and (k not in by_name or by_name[k].annotation is not None):
            return False
    return True


def _holds(x: Any, v: Value) -> bool:
    if x is v:
        return True
    return type(x) is list and any(e is v for e in x)


def drop_copies(graph: Graph) -> int:
    """Read ``x`` where the graph reads a copy of ``x`` that nothing could tell apart from it,
    for a graph run without autograd (no kernel keeps its inputs): ``clone(x)`` (layout
    preserved) whose result only plain readers read (they write nothing and return no alias of
    it), that does not leave the function, with no node writing anything between the clone and
    its last reader: the readers see ``x``'s values. (The seed gradient of ``backward()`` and
    ``tp.autograd.grad`` is such a clone of a constant.)

    A ``detach`` is left alone: its input may have required grad when traced, and reading it
    instead would keep the autograd kernels of every node before it (codegen.autograd_nodes).
    Returns the number of values replaced; the copies left unread go with dead-code
    elimination.
    """
    escaping = _escaping(graph)  # outputs and effects are never replaced
    readers: dict[Value, list[int]] = {}
    for i, n in enumerate(graph.nodes):
        for v in n.inputs:
            readers.setdefault(v, []).append(i)
    replace: dict[Value, Value] = {}
    for i, n in enumerate(graph.nodes):
        if n.out_form != "one" or not isinstance(n.outputs[0], Value) or not n.args:
            continue
        out, src = n.outputs[0], n.args[0]
        if not isinstance(src, Value):
            continue
        if n.op.name == "aten::clone.default":
            if n.kwargs.get("memory_format") is not None or len(n.args) > 1 or out in escaping:
                continue
            reads = readers.get(out, [])
            if not reads or not all(_plain_reader(graph.nodes[j], out) for j in reads):
                continue
            if any(graph.nodes[j].mutates for j in range(i + 1, max(reads))):
                continue
            replace[out] = replace.get(src, src)
    if not replace:
        return 0
    for n in graph.nodes:
        n.args = tuple(_sub(a, replace) for a in n.args)
        n.kwargs = {k: _sub(v, replace) for k, v in n.kwargs.items()}
    graph._replay = None
    return len(replace)


_PRODUCTS = ("aten::mm.default", "aten::matmul.default")


def fuse_addmm(graph: Graph) -> int:
    """Compute ``mm(a, b) + bias`` (``a @ b + bias``, whoever wrote it) as one
    ``addmm(bias, a, b)``, for a graph run without autograd: where the product is read by
    nothing but the add (alpha 1), does not leave the function, and the raw lowerings (Note
    [Raw lowerings] in the core's array_backend/_kit.py) of the product, the add and addmm all
    apply to the traced arguments. Then the add is ``add(matmul(a, b), bias)`` and addmm is
    ``matmul(a, b)`` with ``bias`` added into it: the same numbers (addition commutes in IEEE
    arithmetic), one pass over the product less. Returns the number of adds rewritten; the
    products left unread go with dead-code elimination.
    """
    addmm = tp.ops.aten.addmm.default
    escaping = _escaping(graph)
    readers: dict[Value, int] = {}
    for n in graph.nodes:
        for v in n.inputs:
            readers[v] = readers.get(v, 0) + 1
    fused = 0
    for n in graph.nodes:
        if n.op.name != "aten::add.Tensor" or n.out_form != "one" or len(n.args) != 2:
            continue
        if n.kwargs.get("alpha", 1) != 1 or set(n.kwargs) - {"alpha"}:
            continue
        for prod, bias in (n.args, n.args[::-1]):
            if not isinstance(prod, Value) or not isinstance(bias, Value) or prod is bias:
                continue
            p = prod.node
            if p is None or p.op.name not in _PRODUCTS or p.kwargs or readers.get(prod) != 1:
                continue
            if prod in escaping or p.excluded != n.excluded:
                continue
            if not all(_lowered(m) for m in (p, n)):
                continue
            a, b = p.args
            try:
                kernel = addmm.kernel_for(n.keyset & ~M.strip)
            except tp.DispatchError:
                continue
            trial = Node(addmm, (bias, a, b), {}, n.keyset, n.excluded, n.where)
            trial.out_form, trial.outputs = n.out_form, n.outputs
            if raw_lowering(trial, kernel) is None:
                continue
            n.op, n.args, n.kwargs = addmm, (bias, a, b), {}
            fused += 1
            break
    if fused:
        graph._replay = None
    return fused


def _lowered(n: Node) -> bool:
    """Whether node ``n``'s kernel below autograd has a raw lowering for its arguments."""
    try:
        kernel = n.op.kernel_for(n.keyset & ~M.strip)
    except tp.DispatchError:
        return False
    return raw_lowering(n, kernel) is not None
