"""Timing helpers for the benchmarks: best-of-N per-call times, measured in one process."""

from __future__ import annotations

import statistics
import time
import timeit
from collections.abc import Callable
from typing import Any


def per_call(fn: Callable[[], Any], *, number: int = 20000, repeat: int = 15) -> float:
    """Best per-call time in seconds over ``repeat`` runs of ``number`` calls.

    The minimum is the least noisy estimate on a shared machine: noise only adds time.
    """
    timer = timeit.Timer(fn)
    return min(timer.repeat(repeat=repeat, number=number)) / number


def interleaved(
    fns: dict[str, Callable[[], Any]],
    *,
    number: int = 20000,
    rounds: int = 15,
    timer: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Best per-call time of each function, alternating between them each round.

    Alternating keeps slow phases of a noisy machine from landing on one candidate only.
    ``timer=time.process_time`` counts only the CPU time of this process, not the time it
    spends descheduled while a loaded machine runs others.
    """
    best = {name: float("inf") for name in fns}
    timers = {name: timeit.Timer(fn, timer=timer) for name, fn in fns.items()}
    for _ in range(rounds):
        for name, t in timers.items():
            best[name] = min(best[name], t.timeit(number) / number)
    return best


def paired_ratio(fn: Callable[[], Any], base: Callable[[], Any], *, pairs: int = 4000) -> float:
    """Median over ``pairs`` back-to-back calls of ``fn``'s time divided by ``base``'s.

    For calls long enough to time one by one (a large array operation), this estimates what
    ``fn`` adds to ``base`` better than a ratio of best times: each pair shares the machine's
    state of the moment, the order alternates (the second call of a pair finds the caches
    the first left), and the median ignores the pairs a neighbour's burst hit.
    """
    clock = time.perf_counter
    ratios = []
    for i in range(pairs + 20):
        first, second = (base, fn) if i % 2 else (fn, base)
        t0 = clock()
        first()
        t1 = clock()
        second()
        t2 = clock()
        t_first, t_second = t1 - t0, t2 - t1
        if i >= 20:  # warm-up
            ratios.append(t_second / t_first if i % 2 else t_first / t_second)
    return statistics.median(ratios)


def us(seconds: float) -> str:
    return f"{seconds * 1e6:7.3f} us"
