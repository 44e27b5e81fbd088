"""Dual tensors of forward-mode AD: the active levels and the tangents a tensor carries.

Note [Dual tensors]
~~~~~~~~~~~~~~~~~~~
A tensor is *dual* when it carries a tangent at one or more forward-AD levels: they live in
``t.tp_tangents`` (a dict from level to tangent, set only on dual tensors) and the tensor's key
set holds the ``ForwardAD`` key, a functionality key this plugin ranks just above the
``Autograd<B>`` keys. Plain tensors carry neither, so their calls never reach forward mode:
reverse-mode code pays nothing for it (the key's kernel is forward.py's fallback).

Levels are numbered from 0 upwards; the innermost active level has the highest number. A level
is *hidden* while the fallback computes something at that level (the primal output, which must
not be handled at that level again, and the tangent, whose ops must not see the level's own
tangents: perturbation confusion); levels below it stay visible, so nested levels
(``jvp(jvp(f))``) each add their part as the call recurses. Leaving a level takes its tangents
off every tensor that got one at it (each level keeps weak references to them), as PyTorch's
``exit_dual_level`` does, and tensors left without tangents lose the ``ForwardAD`` key.

An alias that a plugin makes of a dual tensor (a saved output, ``unpack_plain``) shares its
tangents (:func:`carry`): forward-over-reverse (``jacfwd(jacrev(f))``) reads the tangents of
the values a backward formula reads.
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tensorplug.tensor import Tensor

from .masks import M

__all__ = [
    "active",
    "carry",
    "enter",
    "hidden",
    "hide",
    "hide_from",
    "unhide",
    "visible_levels",
    "leave",
    "set_tangent",
    "tangent",
    "top_level",
]


class _Levels:
    active: list[int] = []  # active levels, outermost first (global, as in PyTorch)
    public: list[int] = []  # those entered through forward_ad.enter_dual_level
    duals: dict[int, list[weakref.ref[Tensor]]] = {}  # level -> tensors given a tangent at it


_lock = threading.Lock()


class _Hidden(threading.local):
    def __init__(self) -> None:
        self.level = sys.maxsize  # levels >= this are hidden (Note [Dual tensors])


_hidden = _Hidden()


def active() -> list[int]:
    return _Levels.active


def enter() -> int:
    """Make a new innermost level active and return its number."""
    with _lock:
        levels = _Levels.active
        level = levels[-1] + 1 if levels else 0
        levels.append(level)
        _Levels.duals[level] = []
        return level


def leave(level: int) -> None:
    """End ``level``: its tangents leave every tensor that has one (Note [Dual tensors])."""
    with _lock:
        if level in _Levels.active:
            _Levels.active.remove(level)
        refs = _Levels.duals.pop(level, [])
    for ref in refs:
        t = ref()
        if t is None:
            continue
        d: dict[int, Tensor] | None = t.tp_tangents
        if d is not None:
            d.pop(level, None)
            if not d:
                t.tp_keyset &= ~M.fwd


def hidden() -> int:
    return _hidden.level


def hide_from(level: int) -> int:
    """Hide ``level`` and those above it; returns what :func:`unhide` restores (the kernel's
    form of :func:`hide`, without a context manager's cost)."""
    old = _hidden.level
    if level < old:
        _hidden.level = level
    return old


def unhide(old: int) -> None:
    _hidden.level = old


@contextmanager
def hide(level: int) -> Iterator[None]:
    """Hide ``level`` and those above it in the block (Note [Dual tensors])."""
    old = _hidden.level
    _hidden.level = min(old, level)
    try:
        yield
    finally:
        _hidden.level = old


def tangent(t: Any, level: int) -> Tensor | None:
    """``t``'s tangent at ``level`` (None when it has none, or is not a tensor)."""
    if not isinstance(t, Tensor) or not t.tp_keyset & M.fwd:
        return None
    d: dict[int, Tensor] | None = t.tp_tangents
    return None if d is None else d.get(level)


def top_level(t: Tensor) -> int:
    """The innermost visible level at which ``t`` (with the ``ForwardAD`` key) has a tangent,
    or -1."""
    d: dict[int, Tensor] | None = t.tp_tangents
    if not d:
        return -1
    h = _hidden.level
    best = -1
    for lv in d:
        if best < lv < h:
            best = lv
    return best


def visible_levels(t: Tensor, into: set[int]) -> None:
    """Add the visible levels at which ``t`` has a tangent to ``into``."""
    d: dict[int, Tensor] | None = t.tp_tangents
    if d:
        h = _hidden.level
        for lv in d:
            if lv < h:
                into.add(lv)


def set_tangent(t: Tensor, level: int, tan: Tensor | None) -> None:
    """Give ``t`` the tangent ``tan`` at ``level`` (None: take its tangent there away)."""
    d: dict[int, Tensor] | None = t.tp_tangents
    if tan is None:
        if d is not None:
            d.pop(level, None)
            if not d:
                t.tp_keyset &= ~M.fwd
        return
    if d is None:
        d = t.tp_tangents = {}
    d[level] = tan
    t.tp_keyset |= M.fwd
    _remember(level, t)


def _remember(level: int, t: Tensor) -> None:
    """Note that ``t`` has a tangent at ``level``, for :func:`leave`. A long level (a training
    loop inside one ``dual_level``) would pile up references to dead tensors: every 4096 new
    ones, the dead are dropped."""
    refs = _Levels.duals.get(level)
    if refs is None:
        return
    refs.append(weakref.ref(t))
    if len(refs) % 4096 == 0:
        refs[:] = [r for r in refs if r() is not None]


def carry(src: Tensor, dst: Tensor) -> None:
    """``dst``, an alias of ``src`` over the same array, shares ``src``'s tangents."""
    d: dict[int, Tensor] | None = src.tp_tangents
    if not d or dst.tp_tangents is d:
        return
    dst.tp_tangents = d
    dst.tp_keyset |= M.fwd
    for level in d:
        _remember(level, dst)
