"""``tensorplug.tracer`` (``tp.tracer``): the public namespace of the tracer plugin.

Usage::

    import tensorplug as tp

    def f(x, w):
        return (x @ w).relu().sum()

    g = tp.tracer.trace(f, tp.randn([4, 3]), tp.randn([3, 2]))
    print(g)                                  # %0 = aten::mm(%x, %w) ...
    g(tp.randn([4, 3]), tp.randn([3, 2]))     # replay through the dispatcher
    g.save("f.json"); g2 = tp.tracer.load("f.json")
    step = tp.compile(train_step)             # guarded, lowered graphs (also tp.tracer.compile)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorplug as tp

from . import _optree as optree
from . import compile as _compile
from .compile import CompiledFunction, CompileError, compile
from .graph import Effect, Graph, Node, TensorMeta, Value, op_label
from .recorder import TracerWarning, record_trace
from .serialize import FORMAT_VERSION, GraphFormatError, load

__all__ = [
    "FORMAT_VERSION",
    "CompileError",
    "CompiledFunction",
    "Effect",
    "Graph",
    "GraphFormatError",
    "Node",
    "TensorMeta",
    "TracerWarning",
    "TracingCheckError",
    "Value",
    "compile",
    "load",
    "trace",
]


class TracingCheckError(RuntimeError):
    """``check_inputs``: the graph does not do what the function does on those inputs."""


def trace(
    fn: Callable[..., Any],
    *example_args: Any,
    decompose: bool = False,
    check_inputs: Sequence[Any] | None = None,
    **example_kwargs: Any,
) -> Graph:
    """Run ``fn(*example_args, **example_kwargs)`` once and record every operator call.

    ``decompose=True`` records the parts of CompositeImplicitAutograd ops instead of the ops.
    ``check_inputs``: more inputs (each a tuple of positional arguments, or one argument) on
    which the function is traced again and run, and the graph replayed; a different graph or
    different results raise :class:`TracingCheckError`.
    """
    graph, _, _ = record_trace(fn, example_args, example_kwargs, decompose)
    for i, inputs in enumerate(check_inputs or ()):
        _check(graph, fn, inputs if isinstance(inputs, tuple) else (inputs,), i, decompose)
    return graph


def _clone(tree: Any) -> Any:
    def one(x: Any) -> Any:
        if not isinstance(x, tp.Tensor):
            return x
        c = x.detach().clone()
        return c.requires_grad_() if x.requires_grad else c

    return optree.tree_map(one, tree)


def _check(
    graph: Graph, fn: Callable[..., Any], args: tuple[Any, ...], i: int, decompose: bool
) -> None:
    eager_args = _clone(args)
    replay_args = _clone(args)
    other, eager_out, _ = record_trace(fn, eager_args, {}, decompose)
    mine = [(op_label(n.op), n.where) for n in graph.nodes]
    theirs = [(op_label(n.op), n.where) for n in other.nodes]
    if mine != theirs:
        k = next((j for j, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b), None)
        if k is None:
            k = min(len(mine), len(theirs))
            what = f"one graph has {len(mine)} nodes, the other {len(theirs)}"
        else:
            what = (
                f"node {k} is {mine[k][0]} ({mine[k][1]}) in the traced graph and "
                f"{theirs[k][0]} ({theirs[k][1]}) on these inputs"
            )
        raise TracingCheckError(
            f"check_inputs[{i}]: the function records a different graph on these inputs: "
            f"{what}. Its Python control flow depends on the inputs"
            + (
                f" (it read tensor values at {', '.join(graph.data_reads)})"
                if graph.data_reads
                else ""
            )
            + "; trace it once per case, or keep the decision in tensor operations"
        )
    replayed = graph(*replay_args)
    # random draws differ between the two runs: only their shapes and dtypes can agree
    random = any("nondeterministic_seeded" in n.op.tags for n in graph.nodes)
    a, spec_a = optree.tree_flatten(eager_out)
    b, spec_b = optree.tree_flatten(replayed)
    if spec_a != spec_b:
        raise TracingCheckError(
            f"check_inputs[{i}]: the function returned {spec_a}, the replayed graph {spec_b}"
        )
    for j, (x, y) in enumerate(zip(a, b, strict=True)):
        if not _equal(x, y, random):
            raise TracingCheckError(
                f"check_inputs[{i}]: output leaf {j} differs between the function ({_short(x)}) "
                f"and the replayed graph ({_short(y)})"
                + (
                    f"; the function read tensor values at {', '.join(graph.data_reads)}, "
                    "which the graph keeps as constants"
                    if graph.data_reads
                    else ""
                )
            )


def _equal(x: Any, y: Any, random: bool) -> bool:
    if isinstance(x, tp.Tensor) and isinstance(y, tp.Tensor):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if random:
            return True
        same: bool = bool(((x == y) | ((x != x) & (y != y))).all().item())
        return same
    return bool(x == y)


def _short(x: Any) -> str:
    if isinstance(x, tp.Tensor):
        return f"{str(x.dtype).rsplit('.', 1)[-1]}{list(x.shape)} {x.detach()!r}"[:200]
    return repr(x)


def __getattr__(name: str) -> Any:
    # OptimizedModule, what tp.compile(module) returns, is made on first use (compile.py), so
    # that loading the plugin does not import tensorplug.nn
    if name == "OptimizedModule":
        return _compile._optimized_module_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
