"""Recording a call: the node of an op's call and its edges, saved values and outputs.

Step 2 of Note [Autograd kernel] in kernels.py, as plain Python: the generic kernels call it,
and the generated fast kernels inline the same steps (:func:`~.codegen.record_source`).
"""

from __future__ import annotations

from typing import Any

from tensorplug.tensor import Tensor

from .accumulate import edge
from .graph import Node, input_meta
from .masks import M
from .meta import set_history
from .nodes import NOT_SAVED
from .rules import Rule
from .saved import SavedTensor

__all__ = ["check_no_requires_grad", "outputs", "record", "refuse_out", "run"]


def _edges(
    rule: Rule, args: tuple[Any, ...]
) -> tuple[list[tuple[Node | None, int]], list[Any], dict[str, tuple[int, int]]]:
    edges: list[tuple[Node | None, int]] = []
    metas: list[Any] = []
    spans: dict[str, tuple[int, int]] = {}
    for i, kind in rule.diff:
        v = args[i]
        start = len(edges)
        if kind in ("Tensor[]", "Tensor?[]"):
            for x in v:
                if x is None:
                    edges.append((None, 0))
                    metas.append(None)
                else:
                    edges.append(edge(x))
                    metas.append(input_meta(x))
        elif v is None:
            edges.append((None, 0))
            metas.append(None)
        else:
            edges.append(edge(v))
            metas.append(input_meta(v))
        spans[rule.arg_names[i]] = (start, len(edges) - start)
    return edges, metas, spans


def _saved_args(rule: Rule, args: tuple[Any, ...], before: Tensor | None) -> tuple[Any, ...]:
    out = list(args)
    for i, kind in rule.tensor_args:
        v = args[i]
        if i not in rule.saved:
            out[i] = NOT_SAVED if v is not None else None
        elif i == 0 and before is not None:
            out[i] = SavedTensor(before)
        elif kind in ("Tensor[]", "Tensor?[]"):
            out[i] = [None if x is None else SavedTensor(x) for x in v]
        elif v is not None:
            out[i] = SavedTensor(v)
    return tuple(out)


def outputs(out: Any) -> list[Any]:
    if isinstance(out, Tensor):
        return [out]
    return list(out)


def record(
    rule: Rule, out: Any, args: tuple[Any, ...], before: Tensor | None = None
) -> Node | None:
    """Step 2 of Note [Autograd kernel]: the node for this call, if an input requires grad."""
    edges, metas, spans = _edges(rule, args)
    for n, _ in edges:
        if n is not None:
            break
    else:
        return None
    node = rule.node_cls()
    node.next_functions = tuple(edges)
    node._input_meta = tuple(metas)
    node._spans = spans
    node._args = _saved_args(rule, args, before)
    outs = outputs(out)
    node._n_out = len(outs)
    node._out_meta = tuple(input_meta(t) if isinstance(t, Tensor) else None for t in outs)
    diff = rule.out_diff
    for nr, t in enumerate(outs):
        if (
            isinstance(t, Tensor)
            and (diff[nr] if nr < len(diff) else diff[-1])
            and (t.tp_dtype.is_floating_point or t.tp_dtype.is_complex)
        ):
            set_history(t, node, nr)
    if rule.saves_result:
        keep = rule.saved_outputs  # Note [Saved outputs] in formulas/_table.py
        saved = [
            (SavedTensor(t, nr) if keep is None or nr in keep else None)
            if isinstance(t, Tensor)
            else t
            for nr, t in enumerate(outs)
        ]
        if isinstance(out, Tensor):
            node._result = saved[0]
        elif isinstance(out, list):
            node._result = saved
        else:
            node._result = tuple(saved)
    else:
        node._result = None
    return node


def check_no_requires_grad(rule: Rule, args: tuple[Any, ...]) -> None:
    for i in rule.no_grad_args:
        t = args[i]
        if t is not None and t.tp_keyset & M.ag:
            raise RuntimeError(
                f"The function '{rule.op.op_name}' is not differentiable with respect to "
                f"argument '{rule.arg_names[i]}'. This input cannot have requires_grad True. "
                f"Pass {rule.arg_names[i]}.detach() if its gradient is not needed."
            )


def run(rule: Rule, ks: int, args: tuple[Any, ...]) -> Any:
    """An out-of-place op: Note [Autograd kernel]."""
    if rule.no_grad_args:
        check_no_requires_grad(rule, args)
    out = rule.call_below(ks, args)
    record(rule, out, args)
    return out


def refuse_out(rule: Rule, ks: int, args: tuple[Any, ...]) -> Any:
    """An ``out=`` overload: reached only when an argument requires grad, which it refuses."""
    raise RuntimeError(
        f"{rule.name}(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad. Call it under tp.no_grad(), "
        "or use the functional form."
    )
