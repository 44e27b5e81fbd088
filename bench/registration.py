"""Registration cycles: bounded time and flat memory (issue: reliability).

* 10,000 libraries of ever new namespaces, each defining an operator, registering a kernel,
  calling it once and closing (goal: under 10 s, memory flat: every quarter of the run takes
  about as long as the first, and the resident set does not grow);
* 300 register/unregister cycles of an in-process plugin that adds a backend with a storage
  backend and makes a tensor on it (goal: no limit on cycles; each backend takes three key
  bits, so without reuse the 64 bits run out after ~25 cycles, Note [Bit reuse] in keys.py).

Run: ``python bench/registration.py``.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import tensorplug as tp  # noqa: E402


class Probe:
    """What a tensor needs: the tensor protocol (Note [Tensor protocol])."""

    __slots__ = ("_tp_keyset",)

    def __init__(self, keyset: int) -> None:
        self._tp_keyset = keyset


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def namespaces(n: int = 10_000) -> None:
    x = Probe(tp.keys.tensor_keyset("CPU"))

    def cycle(i: int) -> None:
        with tp.Library(f"bench_ns{i}", "DEF") as lib:
            lib.define("g(Tensor x) -> Tensor")
            lib.impl("g", lambda x: x, "CPU")
            getattr(tp.ops, f"bench_ns{i}").g(x)

    for i in range(100):  # warm up
        cycle(n + i)
    gc.collect()
    m0 = rss_mib()
    start = time.perf_counter()
    quarters = []
    for q in range(4):
        t = time.perf_counter()
        for i in range(q * n // 4, (q + 1) * n // 4):
            cycle(i)
        quarters.append(time.perf_counter() - t)
    total = time.perf_counter() - start
    gc.collect()
    grown = rss_mib() - m0
    print(f"{n} define/impl/call/close cycles of new namespaces: {total:.2f} s (goal < 10 s)")
    print("  each quarter: " + ", ".join(f"{q:.2f} s" for q in quarters))
    print(f"  resident memory grew by {grown:+.1f} MiB")


def plugin_cycles(n: int = 300) -> None:
    """A backend of a new name each cycle: a key registered again under its old name simply
    gets its old bits back."""

    class Storage:
        def __init__(self, name: str) -> None:
            self.key_name = name
            self.device_type = name.lower()
            self.plugin = name.lower()

        def from_python(self, data: Any, dtype: Any, device: Any) -> Any:
            return data, dtype

        def to_host(self, data: Any) -> Any:
            return data

        def from_host(self, host: Any, device: Any) -> Any:
            return host

    class Plugin:
        def __init__(self, name: str) -> None:
            self.name = name

        @tp.hookimpl
        def tensorplug_add_keys(self, keys: Any) -> None:
            keys.register_backend(self.name, self.name.lower())

        @tp.hookimpl
        def tensorplug_register_kernels(self, registry: Any) -> None:
            registry.add_storage_backend(Storage(self.name))

    start = time.perf_counter()
    bits = set()
    for i in range(n):
        name = f"Cycling{i}"
        tp.plugins.register(Plugin(name), name="cycling")
        bits.add(tp.keys.get(name).bit)
        Probe(tp.keys.tensor_keyset(name))  # a tensor of it, dropped right away
        tp.plugins.unregister("cycling")
    total = time.perf_counter() - start
    print(
        f"{n} register/unregister cycles of a backend plugin: {total:.2f} s "
        f"({total / n * 1e3:.2f} ms each), backend bits used: {len(bits)}"
    )


if __name__ == "__main__":
    namespaces()
    plugin_cycles()
