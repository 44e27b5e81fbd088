"""The boxed fallback of the ``Batched`` key: every operator without a batching rule.

Note [Batched fallback]
~~~~~~~~~~~~~~~~~~~~~~~
An operator of any namespace reaches this fallback when it has no rule (rules/) and a batched
argument. Then:

1. a ``CompositeImplicitAutograd`` operator runs its decomposition on the batched arguments
   themselves, so that its parts meet their own rules (``t``, ``flatten``, ``stack`` ...);
2. any other operator runs once per sample of the highest level: each batched argument is
   replaced by its slice (a view), and the results are stacked along a new batch dimension.
   Writes into a batched argument go through those views, so in-place operators work; writing
   batched values into an argument that is not batched raises PyTorch's in-place error. The
   first time an operator loops, it warns with PyTorch's performance-drop message (once per
   operator and process).

An operator whose results are not tensors cannot be stacked: it raises PyTorch's "could not
generate a fallback" error (``.item()`` has a rule of its own with PyTorch's message).
"""

from __future__ import annotations

import warnings
from typing import Any

import tensorplug as tp

from .batched import BatchedTensor, slice_of, wrap
from .calls import inplace_error, passdown, top_level
from .levels import find_level

__all__ = ["batched_fallback", "loop"]

_stack = tp.ops.aten.stack.default
_warned: set[str] = set()


def batched_fallback(op: Any, keyset: Any, *args: Any, **kwargs: Any) -> Any:
    """The boxed kernel of ``Batched`` for operators without a rule (Note [Batched fallback])."""
    lvl = top_level((*args, *kwargs.values()))
    if lvl == 0:
        return passdown(op, args, kwargs)
    if op.has_kernel("CompositeImplicitAutograd"):
        backend = tp.keys.DispatchKeySet(int(keyset) & tp.keys.backend_mask())
        return op.kernel_for(backend)(*args, **kwargs)
    return loop(op, args, kwargs, lvl, warn=True)


def loop(
    op: Any, args: tuple[Any, ...], kwargs: dict[str, Any], lvl: int, *, warn: bool = False
) -> Any:
    """Run ``op`` once per sample of level ``lvl`` and stack the results (rules call this too
    for the cases they leave to a loop)."""
    schema = op.schema
    written = [a for a in schema.arguments if a.is_write]
    if written:
        values = dict(zip([a.name for a in schema.positional], args, strict=False))
        values.update(kwargs)
        for a in written:
            t = values.get(a.name)
            # each sample's values written into a tensor that is not batched at this level
            # would land in that one tensor B times (a list of them too: _fused_adam_'s)
            for x in t if isinstance(t, list | tuple) else (t,):
                if x is not None and (type(x) is not BatchedTensor or x.level != lvl):
                    raise inplace_error(op)
    if warn and op.name not in _warned:
        _warned.add(op.name)
        warnings.warn(
            "There is a performance drop because we have not yet implemented the batching rule "
            f"for {op.name}. Please file us an issue on GitHub so that we can prioritize its "
            "implementation (or give the operator a rule with tp.library.register_vmap).",
            UserWarning,
            stacklevel=4,
        )
    level = find_level(lvl)
    size = level.size if level is not None else _size_of(args, kwargs, lvl)
    results = []
    for i in range(size):
        a_i = [_slice(a, lvl, i) for a in args]
        kw_i = {k: _slice(v, lvl, i) for k, v in kwargs.items()}
        results.append(op(*a_i, **kw_i))
    return _stacked(op, results, args, kwargs, lvl)


def _slice(x: Any, lvl: int, i: int) -> Any:
    if type(x) is list or type(x) is tuple:
        return type(x)(slice_of(v, lvl, i) for v in x)
    return slice_of(x, lvl, i)


def _size_of(args: Any, kwargs: Any, lvl: int) -> int:
    for a in (*args, *kwargs.values()):
        for t in a if isinstance(a, list | tuple) else (a,):
            if type(t) is BatchedTensor and t.level == lvl:
                return int(t.value.shape[t.bdim])
    raise AssertionError("no argument is batched at this level")


def _stacked(op: Any, results: list[Any], args: Any, kwargs: Any, lvl: int) -> Any:
    schema = op.schema
    returns = schema.returns
    if not returns:
        return None
    # a return that aliases a written argument (``Tensor(a!)``) is that argument itself
    aliased = []
    for r in returns:
        arg = None
        if r.annotation is not None and r.annotation.is_write:
            for j, a in enumerate(schema.arguments):
                if a.annotation is not None and a.annotation.before == r.annotation.before:
                    arg = args[j] if j < len(args) else kwargs[a.name]
        aliased.append(arg)
    if len(returns) == 1:
        if aliased[0] is not None:
            return aliased[0]
        return _stack_one(op, results, lvl)
    columns = []
    for k in range(len(returns)):
        if aliased[k] is not None:
            columns.append(aliased[k])
        else:
            columns.append(_stack_one(op, [r[k] for r in results], lvl))
    first = results[0] if results else None
    if first is not None and hasattr(first, "_fields"):
        return type(first)(*columns)
    return tuple(columns)


def _stack_one(op: Any, pieces: list[Any], lvl: int) -> Any:
    if not pieces:
        raise RuntimeError(f"vmap: cannot run {op.name} over a batch of size 0 by a loop")
    first = pieces[0]
    if first is None and all(p is None for p in pieces):
        return None  # an optional output no sample asked for (a backward's output_mask)
    if isinstance(first, tp.Tensor):
        return wrap(_stack(pieces, 0), 0, lvl)
    if all(p is None for p in pieces):  # an output the call asked not to compute (output_mask)
        return None
    if isinstance(first, list | tuple) and all(isinstance(p, tp.Tensor) for p in first):
        return [wrap(_stack([p[k] for p in pieces], 0), 0, lvl) for k in range(len(first))]
    raise RuntimeError(
        f"Batching rule not implemented for {op.name}. We could not generate a fallback."
    )
