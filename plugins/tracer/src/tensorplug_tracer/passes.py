"""Rewrites of a graph that ``tp.compile`` applies before lowering it.

Each rewrite keeps every value the graph computes bitwise equal; they only drop calls whose
result is already at hand. Dead-code elimination is :meth:`Graph.eliminate_dead_code`.
"""

from __future__ import annotations

from typing import Any

from .graph import Graph, Node, Value

__all__ = ["fold_transposes"]

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
