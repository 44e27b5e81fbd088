"""The stack of active vmap levels, per thread (Note [Levels] in batched.py).

Each call of a vmapped function pushes a :class:`Level`: a number larger than every level
before it, with its batch size and randomness mode. A level can be hidden from the random
operators while a rule calls them for the levels below it (Note [Random operators] in
rules/random.py).

Usage::

    with push(size=3, randomness="error") as level:
        level.id, find_level(level.id) is level, active_levels()[-1] is level
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import tensorplug as tp

__all__ = [
    "Level",
    "active_levels",
    "enter",
    "find_level",
    "hide_from",
    "leave",
    "push",
    "visible_levels",
    "vmap_mode_mask",
]


class Level:
    """One active vmap: its number, batch size and randomness mode (Note [Levels])."""

    __slots__ = ("id", "size", "randomness")

    def __init__(self, id: int, size: int, randomness: str) -> None:
        self.id = id
        self.size = size
        self.randomness = randomness

    def __repr__(self) -> str:
        return f"Level({self.id}, size={self.size}, randomness={self.randomness!r})"


class _State(threading.local):
    def __init__(self) -> None:
        self.levels: list[Level] = []  # active levels, outermost first
        self.hidden_from = 0  # levels with this id or higher are hidden (0: none is)


_state = _State()
_ids = itertools.count(1)


def enter(size: int, randomness: str) -> Level:
    """Make a new innermost level active; :func:`leave` ends it."""
    level = Level(next(_ids), size, randomness)
    _state.levels.append(level)
    return level


def leave(level: Level) -> None:
    levels = _state.levels
    if levels and levels[-1] is level:  # levels end innermost first
        levels.pop()
    else:
        levels.remove(level)


@contextmanager
def push(size: int, randomness: str) -> Iterator[Level]:
    """Make a new innermost level active for the duration of the block."""
    level = enter(size, randomness)
    try:
        yield level
    finally:
        leave(level)


_vmap_mode = [0]


def vmap_mode_mask() -> int:
    """The bit of ``VmapMode``, included while a vmap runs (Note [Random operators] in
    rules/random.py). Kept once read: a key registered again gets its old bit back (Note [Bits
    and priority])."""
    m = _vmap_mode[0]
    if not m:
        m = _vmap_mode[0] = tp.keys.get("VmapMode").mask
    return m


def active_levels() -> list[Level]:
    """The active levels of this thread, outermost first."""
    return _state.levels


def visible_levels() -> list[Level]:
    """The active levels a random operator must still handle (Note [Random operators] in
    rules/random.py): all of them, except while a level's rule calls the operator for the
    levels below it."""
    h = _state.hidden_from
    levels = _state.levels
    if h == 0:
        return levels
    return [lv for lv in levels if lv.id < h]


@contextmanager
def hide_from(level_id: int) -> Iterator[None]:
    """Hide ``level_id`` and the levels above it from random operators in the block."""
    old = _state.hidden_from
    _state.hidden_from = level_id if old == 0 else min(old, level_id)
    try:
        yield
    finally:
        _state.hidden_from = old


def find_level(level_id: int) -> Level | None:
    for lv in _state.levels:
        if lv.id == level_id:
            return lv
    return None
