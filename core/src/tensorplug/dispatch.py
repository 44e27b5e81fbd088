"""Thread-local dispatch state and the guards that change it.

For every call the dispatcher computes (DESIGN §3)::

    ks = (OR of the argument key sets | included) & ~excluded

``included`` starts empty and ``excluded`` starts as every ``Autocast<B>`` key, per thread.
The guards below change them for the current thread only, and restore them on exit, also when
the body raises. Alias names expand to their runtime keys::

    with tensorplug.dispatch.exclude("Autograd"):     # every Autograd<B>
        ...
    with tensorplug.dispatch.include("Tracer"):
        ...

``excluded`` wins over ``included``: a key both included and excluded is not dispatched to.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from . import keys as _keys
from .keys import DispatchKeySet, KeyLike

__all__ = [
    "Masks", "collect_state_reads", "exclude", "excluded", "include", "included",
    "local_state", "state_read", "unexclude",
]  # fmt: skip


# Note [BackendSelect is always included]
# Factory functions have no tensor argument to take a backend from, so every call's key set
# holds BackendSelect; the core registers a fallthrough fallback for it, and only factories have
# BackendSelect kernels. It is folded into ``inc`` so the hot path ORs nothing extra, and
# ``included()`` does not report it.
ALWAYS_INCLUDED = _keys.get("BackendSelect").mask


class Masks:
    """One thread's ``included`` mask ``inc`` and ``nexc``, the complement of its ``excluded``
    mask, kept ready so a call does one ``&``. Note [Autocast bits] in keys.py explains the
    initial value."""

    __slots__ = ("inc", "nexc")

    def __init__(self) -> None:
        self.inc = ALWAYS_INCLUDED
        self.nexc = _keys.initial_not_excluded()


class _LocalState(threading.local):
    """Per-thread dispatch state: ``local_state.masks``, a :class:`Masks`.

    The masks live in one plain object rather than as two attributes of the thread-local:
    reading an attribute of a ``threading.local`` costs a per-thread lookup (about 35 ns
    warm, and more with cold caches, as after a large array operation), and a call needs
    both masks. So a call reads ``local_state.masks`` once, then its two slots.
    """

    masks: Masks
    state_reads: list[tuple[Callable[[], Any], Any]] | None  # Note [Python state reads]

    def __init__(self) -> None:
        self.masks = Masks()
        self.state_reads = None


local_state = _LocalState()


def included() -> DispatchKeySet:
    """The keys this thread includes (besides the always-included BackendSelect)."""
    return DispatchKeySet(local_state.masks.inc & ~ALWAYS_INCLUDED)


def excluded() -> DispatchKeySet:
    """The registered runtime keys this thread excludes."""
    return DispatchKeySet(_keys.all_runtime_mask() & ~local_state.masks.nexc)


@contextmanager
def include(*names: KeyLike) -> Iterator[None]:
    """Add keys to this thread's ``included`` set for the duration of the block."""
    mask = int(_keys.keyset(*names))
    st = local_state.masks
    old = st.inc
    st.inc = old | mask
    try:
        yield
    finally:
        st.inc = old


@contextmanager
def exclude(*names: KeyLike) -> Iterator[None]:
    """Add keys to this thread's ``excluded`` set for the duration of the block."""
    mask = int(_keys.keyset(*names))
    st = local_state.masks
    old = st.nexc
    st.nexc = old & ~mask
    try:
        yield
    finally:
        st.nexc = old


@contextmanager
def unexclude(*names: KeyLike) -> Iterator[None]:
    """Remove keys from this thread's ``excluded`` set (``autocast`` un-excludes its key)."""
    mask = int(_keys.keyset(*names))
    st = local_state.masks
    old = st.nexc
    st.nexc = old | mask
    try:
        yield
    finally:
        st.nexc = old


# Note [Python state reads]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# Operators are what a recorder (the tracer) sees of a computation; Python values that decide
# what the operators compute are not. Code that reads such a value, and knows it may change
# between calls (an optimizer reading its hyperparameters), says so with ``state_read(read)``:
# ``read()`` returns the value. While this thread collects (``collect_state_reads()``, which
# the tracer opens around a trace), each ``(read, read())`` is kept, so whoever replays the
# recorded operators can first check that every ``read()`` still returns what it returned then
# (``tp.compile`` does, in its guards). Outside a collection ``state_read`` reads one attribute
# and returns.


def state_read(read: Callable[[], Any]) -> None:
    """Tell a recorder that the computation running now depends on the Python value
    ``read()`` returns (Note [Python state reads])."""
    reads = local_state.state_reads
    if reads is not None:
        reads.append((read, read()))


@contextmanager
def collect_state_reads() -> Iterator[list[tuple[Callable[[], Any], Any]]]:
    """Collect this thread's ``state_read`` calls for the duration of the block: the list
    yielded gets ``(read, value)`` pairs, in order (Note [Python state reads])."""
    old = local_state.state_reads
    reads: list[tuple[Callable[[], Any], Any]] = []
    local_state.state_reads = reads
    try:
        yield reads
    finally:
        local_state.state_reads = old
