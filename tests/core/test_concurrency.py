"""Registration while other threads dispatch (Note [Registration is atomic] in dispatcher/).

Each test runs for a bounded time (1.25 s; about 6 s for the five) with a short thread switch
interval, so that a dispatching thread is often interrupted in the middle of a cache fill:
before the registry lock, each found hundreds of stale calls on a loaded 2-core machine.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest

import tensorplug as tp
from fakes import FakeTensor
from tensorplug import dispatcher

SECONDS = 1.25
PATIENCE = 15.0
CALLERS = 4


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads every 10 us instead of every 5 ms: races show up within seconds."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def run_threads(
    call: Callable[[], None],
    register_loop: Callable[[threading.Event], None],
    until: Callable[[], object] = lambda: True,
) -> list[BaseException]:
    """``CALLERS`` threads run ``call`` in a loop while ``register_loop`` runs in another, for
    ``SECONDS``, and on until ``until()`` is true (at most ``PATIENCE`` seconds in all: on a
    loaded machine the threads may need longer to meet); returns what any thread raised that it
    was not meant to."""
    stop = threading.Event()
    errors: list[BaseException] = []

    def caller() -> None:
        try:
            while not stop.is_set():
                call()
        except BaseException as e:  # collected and asserted on by the test
            errors.append(e)

    def registrar() -> None:
        try:
            register_loop(stop)
        except BaseException as e:
            errors.append(e)
            stop.set()

    threads = [threading.Thread(target=caller) for _ in range(CALLERS)]
    threads.append(threading.Thread(target=registrar))
    for t in threads:
        t.start()
    stop.wait(SECONDS)
    deadline = time.perf_counter() + PATIENCE - SECONDS
    while not until() and not stop.is_set() and time.perf_counter() < deadline:
        stop.wait(0.05)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    return errors


def test_define_and_close_while_other_threads_call(ns, busy_switching):
    """No exception but the expected "not defined", and no operator left behind."""
    x = FakeTensor("CPU")
    cycles = [0]

    def call() -> None:
        try:
            getattr(tp.ops, ns).g(x)
        except (AttributeError, tp.RegistrationError, tp.DispatchError):
            pass  # not defined at this moment, or defined and not yet given a kernel

    def register_loop(stop: threading.Event) -> None:
        while not stop.is_set():
            lib = tp.Library(ns, "DEF")
            try:
                lib.define("g(Tensor x) -> Tensor")
                lib.impl("g", lambda x: "g", "CPU")
            finally:
                lib.close()
            cycles[0] += 1

    errors = run_threads(call, register_loop, until=lambda: cycles[0] > 10)
    assert errors == []
    assert cycles[0] > 10
    assert dispatcher.ops_in(ns) == []  # nothing orphaned
    with tp.Library(ns, "DEF") as lib:  # and the name is free again
        lib.define("g(Tensor x) -> Tensor")
        lib.impl("g", lambda x: "again", "CPU")
        assert getattr(tp.ops, ns).g(x) == "again"


def test_no_call_starting_after_close_runs_the_removed_kernel(ns, busy_switching):
    x = FakeTensor("CPU")
    closed_at: dict[int, float] = {}  # override n -> when its close() returned
    seen: list[tuple[float, int]] = []  # (when a call started, the override it ran)

    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: -1, "CPU")
        op = getattr(tp.ops, ns).f.default

        def call() -> None:
            start = time.perf_counter()
            n = op(x)
            if n >= 0:
                seen.append((start, n))

        def register_loop(stop: threading.Event) -> None:
            n = 0
            while not stop.is_set():
                over = tp.Library(ns, "IMPL")
                over.impl("f", lambda x, n=n: n, "CPU", override=True)
                over.close()
                closed_at[n] = time.perf_counter()
                n += 1

        errors = run_threads(call, register_loop, until=lambda: seen)
        assert errors == []
        assert len(closed_at) > 10 and seen  # both sides really ran
        late = [(start - closed_at[n], n) for start, n in seen if start > closed_at[n]]
        assert late == [], f"{len(late)} calls ran an override after its close() returned"
        assert op(x) == -1


def test_kernel_for_answers_are_never_stale(ns, busy_switching):
    """The public lookup (what plugins keep, checked by generation) follows registrations too."""
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        base = lambda x: "base"
        lib.impl("f", base, "CPU")
        op = getattr(tp.ops, ns).f.default
        ks = int(tp.keys.keyset("CPU"))
        closed_at: dict[Callable[..., object], float] = {}
        seen: list[tuple[float, Callable[..., object]]] = []

        def call() -> None:
            start = time.perf_counter()
            fn = op.kernel_for(ks)
            if fn is not base:
                seen.append((start, fn))

        def register_loop(stop: threading.Event) -> None:
            while not stop.is_set():
                over = tp.Library(ns, "IMPL")
                fn = lambda x: "over"
                over.impl("f", fn, "CPU", override=True)
                over.close()
                closed_at[fn] = time.perf_counter()

        errors = run_threads(call, register_loop, until=lambda: seen)
        assert errors == []
        assert len(closed_at) > 10 and seen
        late = [start - closed_at[fn] for start, fn in seen if start > closed_at[fn]]
        assert late == [], f"{len(late)} lookups gave an override after its close() returned"


def test_derived_kernels_follow_registrations(ns, busy_switching):
    """What a functionality kernel derives and keeps with ``op.derived_kernel`` (the autograd
    plugin's kernel below its key) is dropped with the cache, never written back stale."""
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: -1, "CPU")
        op = getattr(tp.ops, ns).f.default
        below = ~int(tp.keys.keyset("AutogradCPU"))

        def derive(ks: int) -> Callable[..., object]:
            k = op.kernel_for(ks & below)
            time.sleep(0)  # wrapping it takes time (a plugin may compile code): others run
            return k

        def above(ks, x):  # finds the kernel below its key as the autograd plugin does
            k = op.kernel_cache.get(-int(ks)) or op.derived_kernel(ks, lambda: derive(ks))
            return k(x)

        lib.impl("f", above, "AutogradCPU", with_keyset=True)
        x = FakeTensor("CPU", "AutogradCPU")
        closed_at: dict[int, float] = {}
        seen: list[tuple[float, int]] = []

        def call() -> None:
            start = time.perf_counter()
            n = op(x)
            if n >= 0:
                seen.append((start, n))

        def register_loop(stop: threading.Event) -> None:
            n = 0
            while not stop.is_set():
                over = tp.Library(ns, "IMPL")
                over.impl("f", lambda x, n=n: n, "CPU", override=True)
                over.close()
                closed_at[n] = time.perf_counter()
                n += 1

        errors = run_threads(call, register_loop)
        assert errors == [] and len(closed_at) > 10 and seen
        late = [start - closed_at[n] for start, n in seen if start > closed_at[n]]
        assert late == [], f"{len(late)} calls ran an override after its close() returned"


def test_a_close_is_seen_whole(ns, busy_switching):
    """A thread that saw a library's close() in one operator never sees the library's kernel
    of another operator afterwards: the close is one change, not one per kernel."""
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.define("g(Tensor x) -> Tensor")
        lib.impl("f", lambda x: -1, "CPU")
        lib.impl("g", lambda x: -1, "CPU")
        f, g = getattr(tp.ops, ns).f.default, getattr(tp.ops, ns).g.default
        x = FakeTensor("CPU")
        registered_at: dict[int, float] = {}  # override n -> when both its kernels were in
        mixes: list[tuple[float, int]] = []
        flip = [False]

        def call() -> None:
            first, second = (f, g) if flip[0] else (g, f)
            flip[0] = not flip[0]
            start = time.perf_counter()
            if first(x) == -1:
                n = second(x)
                if n >= 0:
                    mixes.append((start, n))

        def register_loop(stop: threading.Event) -> None:
            n = 0
            while not stop.is_set():
                over = tp.Library(ns, "IMPL")
                over.impl("f", lambda x, n=n: n, "CPU", override=True)
                over.impl("g", lambda x, n=n: n, "CPU", override=True)
                registered_at[n] = time.perf_counter()
                over.close()
                n += 1

        errors = run_threads(call, register_loop)
        assert errors == [] and len(registered_at) > 10
        # the first call started once both kernels of override n were in, and found neither:
        # it saw the close of n, so the second may not find n's kernel
        seen_apart = [n for start, n in mixes if n in registered_at and start > registered_at[n]]
        assert seen_apart == [], f"{len(seen_apart)} calls saw a close in one operator only"
