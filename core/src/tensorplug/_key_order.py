"""The priority order of the runtime dispatch keys (Note [Bits and priority] in keys.py).

The built-in chain, highest first, plus the ``before=``/``after=`` constraints of the keys that
plugins add, topologically sorted. Among keys that the constraints leave free, the sort keeps
each key next to its anchor, so unconstrained neighbours keep a stable, explainable order. The
key registry (:mod:`tensorplug.keys`) calls :func:`sort` whenever a key is added or removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, TypeAlias

from ._dispatch_key import DispatchKey, DispatchKeyError, KeyKind, alias_covers

# name -> (before, after): the anchors a plugin's functionality key was placed relative to
Constraints: TypeAlias = Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]

# Built-in order, highest first; groups stand for every key of that family / kind.
_CHAIN: Final = (
    "Batched",
    "<Autocast>",
    "Tracer",
    "<Autograd>",
    "ADInplaceOrView",
    "Functionalize",
    "BackendSelect",
    "<third-party>",
    "Meta",
    "CUDA",
    "CPU",
)
_BUILTIN_BACKENDS: Final = ("Meta", "CUDA", "CPU")


def _group_of(k: DispatchKey) -> str:
    if k.family is not None:
        return f"<{k.family}>"
    if k.kind is KeyKind.BACKEND and k.name not in _BUILTIN_BACKENDS:
        return "<third-party>"
    return k.name


def sort(by_name: Mapping[str, DispatchKey], constraints: Constraints) -> list[DispatchKey]:
    """The runtime keys of ``by_name``, highest priority first: a topological sort of the
    constraints. A cycle among them raises :class:`DispatchKeyError`."""
    runtime = [k for k in by_name.values() if not k.is_alias]
    # rank: position in the built-in chain (lower = higher priority); plugin keys sit next to
    # their anchors so that unconstrained neighbours keep a stable, explainable order.
    chain_pos = {g: float(i) for i, g in enumerate(_CHAIN)}
    rank: dict[str, float] = {}
    for k in runtime:
        g = _group_of(k)
        if g in chain_pos:
            rank[k.name] = chain_pos[g]
    edges: dict[str, set[str]] = {k.name: set() for k in runtime}  # a -> b: a ranks above b

    def members(anchor: str) -> list[str]:
        a = by_name[anchor]
        if a.is_alias:
            return [k.name for k in runtime if alias_covers(a.name, k)]
        return [anchor]

    # built-in chain edges between consecutive groups
    by_group: dict[str, list[str]] = {}
    for k in runtime:
        by_group.setdefault(_group_of(k), []).append(k.name)
    present = [g for g in _CHAIN if by_group.get(g)]
    for hi, lo in zip(present, present[1:], strict=False):
        for a in by_group[hi]:
            for b in by_group[lo]:
                edges[a].add(b)
    # plugin constraints, resolved to runtime keys
    pending = dict(constraints)
    while pending:
        progressed = False
        for name, (bef, aft) in list(pending.items()):
            anchors = [a for a in (*bef, *aft) if a in by_name]
            if any(a in pending for a in anchors):
                continue
            lows = [rank.get(m, 0.0) for a in bef for m in members(a)]
            highs = [rank.get(m, 0.0) for a in aft for m in members(a)]
            if lows and highs:
                rank[name] = (min(lows) + max(highs)) / 2
            elif lows:
                rank[name] = min(lows) - 0.25
            else:
                rank[name] = max(highs) + 0.25
            for a in bef:
                for m in members(a):
                    edges[name].add(m)
            for a in aft:
                for m in members(a):
                    edges[m].add(name)
            del pending[name]
            progressed = True
        if not progressed:  # anchors that are themselves constrained in a cycle
            raise DispatchKeyError(f"dispatch key constraints form a cycle among {sorted(pending)}")

    return _toposort(runtime, edges, rank, by_name)


def _toposort(
    runtime: list[DispatchKey],
    edges: dict[str, set[str]],
    rank: dict[str, float],
    by_name: Mapping[str, DispatchKey],
) -> list[DispatchKey]:
    indeg = {k.name: 0 for k in runtime}
    for bs in edges.values():
        for b in bs:
            indeg[b] += 1
    seq = {k.name: i for i, k in enumerate(runtime)}
    ready = [n for n, d in indeg.items() if d == 0]
    out: list[DispatchKey] = []
    while ready:
        # most urgent first: lowest rank, then newest (third-party backends added later rank
        # above earlier ones), so the built-in order is exact
        ready.sort(key=lambda n: (rank.get(n, 0.0), -seq[n]))
        n = ready.pop(0)
        out.append(by_name[n])
        for b in edges[n]:
            indeg[b] -= 1
            if indeg[b] == 0:
                ready.append(b)
    if len(out) != len(runtime):
        stuck = sorted(n for n, d in indeg.items() if d > 0)
        raise DispatchKeyError(f"dispatch key constraints form a cycle among {stuck}")
    return out
