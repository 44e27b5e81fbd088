"""Replaying a graph: ``graph(*args, **kwargs)``.

Note [Replay plans]
~~~~~~~~~~~~~~~~~~~
Dispatching ``graph.code`` costs what an eager call costs per operator, minus the Python of the
public functions. A replay goes faster where dispatch can only give one answer: the first call
with a new key (the same key as ``tp.compile``'s, Note [Compile guards]) runs ``graph.code``
under the tracer with composites decomposed, and later calls with that key run the lowered
form of that trace (``compile.ReplayPlans``, a ``tp.compile`` without the confirming second
trace, since the graph holds no Python state). A plan is made only for calls whose dispatch
it cannot get wrong: the thread's masks are those of a fresh thread (``tp.dispatch.Masks()``)
up to grad mode, so no vmap level, autocast region or other included key; every tensor carries
backend and autograd keys only; and no autograd history would be recorded (grad mode is off,
or no input or constant requires grad, and the traced plan has no node that needs its
autograd kernel). Other calls dispatch ``graph.code`` as before, and a call inside a trace
records it inline. The guards re-check ``tp.dispatcher.generation()``, the masks and each
tensor's key set, shape, dtype, device and ``requires_grad``: a registration made after a
plan was traced (a kernel override) drops the plans that bound the kernel it changed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, cast

import tensorplug as tp
from tensorplug.tensor import Tensor

from . import _optree as optree
from .codegen import MISS, graph_function
from .compile import ReplayPlans
from .graph import Graph, Value

__all__ = ["replay_function"]


def replay_function(graph: Graph) -> Callable[..., Any]:
    """``graph(*args, **kwargs)``: check the arguments' structure, then run a lowered plan
    where one applies, else ``graph.code`` (Note [Replay plans])."""
    fwd = graph_function(graph)
    spec = graph.in_spec
    fixed = [(i, x) for i, x in enumerate(graph.in_leaves) if not isinstance(x, Value)]
    tensor_at = [i for i, x in enumerate(graph.in_leaves) if isinstance(x, Value)]
    kw_names = graph.kwarg_names
    label = graph.fn_name
    # traced with positional tensors only: a call of as many tensors has the same structure
    n_plain = len(graph.in_leaves) if not kw_names and not fixed and optree.tree_flatten(
        cast(Any, (tuple(range(len(graph.arg_names))), {})))[1] == spec else -1  # fmt: skip

    def run(*args: Any, **kwargs: Any) -> Any:
        if kw_names:
            kwargs = {kw_names[k]: v for k, v in kwargs.items()}
        return fwd(*args, **kwargs)

    run.__name__ = graph.fn_name
    run.__signature__ = inspect.signature(fwd)  # type: ignore[attr-defined]
    plans = ReplayPlans(run, [c.tensor for c in graph.constants])

    def replay(*args: Any, **kwargs: Any) -> Any:
        if not kwargs and len(args) == n_plain:
            e = plans._last  # the plan that ran last: its guards check each argument is a Tensor
            if e is not None and e.plain and e.nargs == n_plain:
                assert e.run is not None
                r = e.run(*args)
                if r is not MISS:
                    return r if e.unflatten is None else optree.tree_unflatten(e.unflatten, r)
        if kwargs or len(args) != n_plain or not all(type(a) is Tensor for a in args):
            leaves, got = optree.tree_flatten(cast(Any, (args, kwargs)))
            if got != spec:
                raise TypeError(
                    f"graph {label} was traced with arguments structured as {_spec_text(spec)}, "
                    f"and was called with {_spec_text(got)}; trace it again for that structure"
                )
            for i, x in fixed:
                if not _same_constant(leaves[i], x):
                    raise ValueError(
                        f"graph {label} was traced with {x!r} at argument leaf {i} and keeps it "
                        f"as a constant; it was called with {leaves[i]!r}: trace it again (or "
                        "use tp.compile, which retraces)"
                    )
            for i in tensor_at:
                if not isinstance(leaves[i], tp.Tensor):
                    raise TypeError(
                        f"graph {label} expects a Tensor at argument leaf {i}, got "
                        f"{type(leaves[i]).__name__}"
                    )
        return plans(*args, **kwargs)

    replay.plans = plans  # type: ignore[attr-defined]
    return replay


def _spec_text(spec: Any) -> str:
    text = str(spec)
    return text[len("PyTreeSpec(") : -1] if text.startswith("PyTreeSpec(") else text


def _same_constant(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - objects without a plain ==: compare identity
        return a is b
