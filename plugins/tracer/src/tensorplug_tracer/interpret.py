"""A graph run node by node, without generated code: the plain-Python reference of the
templates in codegen.py.

``graph.code`` (what a replay runs) and the lowered form are Python source generated from the
graph. :func:`interpret` does what they do, one step at a time, in ordinary Python: it reads the
input tensors where the accessors say they sit in ``(args, kwargs)``, calls each node's operator
through the dispatcher (every argument given, the schema's defaults included) under the
exclusion the node was traced with, applies the effects and builds the output structure.
Tests run the OpInfo samples through both and compare (tests/tracer/test_interpret.py), so a
template that goes wrong shows up against this reference, and a reader can follow a replay
here with a debugger.

Usage::

    g = tp.tracer.trace(f, x)
    interpret(g, x2)  # == g(x2)
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp

from . import _optree as optree
from .graph import Graph, Node, Value
from .recorder import M

__all__ = ["interpret"]


def interpret(graph: Graph, *args: Any, **kwargs: Any) -> Any:
    """Run ``graph`` on ``(args, kwargs)`` (structured as when it was traced) through the
    dispatcher, one node at a time."""
    env: dict[Value, Any] = {}
    for v in graph.inputs:
        base, path = v.accessor
        x = args[base] if isinstance(base, int) else kwargs[base]
        if path and path[0][0] == "acc":  # a registered pytree class: optree's accessor
            x = path[0][1](x)
        else:
            for _, key in path:
                x = x[key]
        env[v] = x
    for g in graph.grads:
        assert g.source is not None
        env[g] = env[g.source].grad
    for c in graph.constants:
        env[c] = c.tensor

    def read(x: Any) -> Any:
        if isinstance(x, Value):
            return env[x]
        if type(x) is list:
            return [read(e) for e in x]
        if type(x) is tuple:
            return tuple(read(e) for e in x)
        return x

    for n in graph.nodes:
        call_args = read(n.args)
        call_kwargs = {k: read(v) for k, v in n.kwargs.items()}
        if n.excluded:
            with tp.dispatch.exclude(*_excluded(n)):
                result = n.op(*call_args, **call_kwargs)
        else:
            result = n.op(*call_args, **call_kwargs)
        if n.out_form == "one":
            results: Any = (result,)
        elif n.out_form == "seq" and n.outputs:  # unpacked as the generated code unpacks
            results = tuple(result)
        else:
            results = ()
        for o, r in zip(n.outputs if results else (), results, strict=True):
            if isinstance(o, Value):
                env[o] = r
    for e in graph.effects:
        target = env[e.target]
        if e.what == "grad":
            target.grad = read(e.value)
        else:
            target.requires_grad_(e.value)
    return optree.tree_unflatten(graph.out_spec, [read(v) for v in graph.out_leaves])


def _excluded(n: Node) -> tuple[str, ...]:
    """The keys node ``n`` ran with excluded, by name (``"Autograd"`` for all of its keys)."""
    if n.excluded == M.ag:
        return ("Autograd",)
    return tuple(tp.keys.DispatchKeySet(n.excluded).names())
