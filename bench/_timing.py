"""Timing helpers for the benchmarks: best-of-N per-call times, measured in one process."""

from __future__ import annotations

import timeit
from collections.abc import Callable
from typing import Any


def per_call(fn: Callable[[], Any], *, number: int = 20000, repeat: int = 15) -> float:
    """Best per-call time in seconds over ``repeat`` runs of ``number`` calls.

    The minimum is the least noisy estimate on a shared machine: noise only adds time.
    """
    timer = timeit.Timer(fn)
    return min(timer.repeat(repeat=repeat, number=number)) / number


def interleaved(fns: dict[str, Callable[[], Any]], *, number: int = 20000, rounds: int = 15) -> dict[str, float]:
    """Best per-call time of each function, alternating between them each round.

    Alternating keeps slow phases of a noisy machine from landing on one candidate only.
    """
    best = {name: float("inf") for name in fns}
    timers = {name: timeit.Timer(fn) for name, fn in fns.items()}
    for _ in range(rounds):
        for name, t in timers.items():
            best[name] = min(best[name], t.timeit(number) / number)
    return best


def us(seconds: float) -> str:
    return f"{seconds * 1e6:7.3f} us"
