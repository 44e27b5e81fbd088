"""Dispatcher overhead per call (issue: core dispatcher).

Prints per-call times and ratios, all measured in this one process:

* the kernel called directly;
* ``tp.ops.ns.op.default(a, b)`` (one overload);
* the packet ``tp.ops.ns.op(a, b)`` (overload resolved from the arguments);
* one and two functionality layers above the backend that redispatch (``with_keyset``);
* a fallthrough layer (goal: adds nothing measurable).

Goal: the dispatcher adds at most 0.6 us to a two-tensor call over the direct kernel call.

Then, when torch is importable, the per-op overheads of issue 34 against torch in the same
process, interleaved (goal: each at most 1.0x torch): the dispatcher's entry (a custom op
through ``torch.library``, above), a tiny op without grad, with grad, in-place with grad, and
the factories (``zeros``, ``zeros_like``, ``ones``, ``empty``, ``full``, ``arange``, ...), all
on 3-element float32 tensors.
Run: ``python bench/dispatch.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _timing import interleaved, us  # noqa: E402

import tensorplug as tp  # noqa: E402
from tensorplug._protocol import VersionCounter  # noqa: E402
from tensorplug.dispatch import include  # noqa: E402


class T:
    __slots__ = ("_tp_keyset", "_tp_version")

    def __init__(self, *keys: str) -> None:
        self._tp_keyset = int(tp.keys.keyset(*keys))
        self._tp_version = VersionCounter()


def kernel(a: T, b: T) -> T:
    return a


def main() -> None:
    with tp.Library("benchops", "DEF") as lib:
        lib.define("add(Tensor self, Tensor other) -> Tensor")
        lib.define("add2(Tensor self, Tensor other) -> Tensor")
        lib.define("add2.Scalar(Tensor self, Scalar other) -> Tensor")
        lib.impl("add", kernel, "CPU")
        lib.impl("add2", kernel, "CPU")
        op = tp.ops.benchops.add.default
        packet = tp.ops.benchops.add2

        def layer(name: str):
            def k(ks, a, b):
                return op.redispatch(ks.below(name), a, b)

            return k

        lib.impl("add", layer("AutogradCPU"), "AutogradCPU", with_keyset=True)
        lib.impl("add", layer("Tracer"), "Tracer", with_keyset=True)
        lib.impl("add", tp.library.fallthrough_kernel, "Batched")

        a, b = T("CPU"), T("CPU")
        ag, bg = T("CPU", "AutogradCPU"), T("CPU")
        bat = T("CPU", "Batched")

        def traced_two_layers():
            with include("Tracer"):
                pass

        assert op(a, b) is a and packet(a, b) is a and op(ag, bg) is ag and op(bat, b) is bat
        times = interleaved(
            {
                "direct kernel": lambda: kernel(a, b),
                "op.default(a, b)": lambda: op(a, b),
                "packet op(a, b)": lambda: packet(a, b),
                "1 layer (AutogradCPU)": lambda: op(ag, bg),
                "fallthrough layer (Batched)": lambda: op(bat, b),
            }
        )
        with include("Tracer"):
            times.update(interleaved({"2 layers (Tracer+AutogradCPU)": lambda: op(ag, bg)}))
            times.update(interleaved({"direct kernel (again)": lambda: kernel(a, b)}))
    base = min(times["direct kernel"], times["direct kernel (again)"])
    print(f"{'case':34s} {'per call':>10s} {'over kernel':>12s} {'ratio':>7s}")
    for name, t in times.items():
        print(f"{name:34s} {us(t)} {us(t - base)} {t / base:6.2f}x")
    over = times["op.default(a, b)"] - base
    ft = times["fallthrough layer (Batched)"] - times["op.default(a, b)"]
    print(f"\ndispatcher overhead on a two-tensor call: {over * 1e6:.3f} us (goal <= 0.6 us)")
    print(f"fallthrough layer adds: {ft * 1e6:+.3f} us (goal: nothing measurable)")
    torch_comparison(over)


def torch_comparison(ours: float) -> None:
    """The same custom op through torch.library, when torch is importable."""
    try:
        import torch
    except ImportError:
        print("\ntorch not importable: no torch.library comparison")
        return
    lib = torch.library.Library("tpbench", "DEF")
    lib.define("add(Tensor self, Tensor other) -> Tensor")

    def tkernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a

    lib.impl("add", tkernel, "CPU")
    op = torch.ops.tpbench.add.default
    a, b = torch.ones(1), torch.ones(1)
    t = interleaved({"kernel": lambda: tkernel(a, b), "torch.ops": lambda: op(a, b)}, number=5000)
    theirs = t["torch.ops"] - t["kernel"]
    print(
        f"torch {torch.__version__} torch.library Python op overhead: {theirs * 1e6:.3f} us "
        f"-> tensorplug's is {ours / theirs:.2f}x of it"
    )
    per_op(torch)


def per_op(torch: Any) -> None:
    """Issue 34's per-op overheads: each call against torch's same call, one process,
    interleaved, on 3-element float32 tensors (goal: each at most 1.0x torch)."""
    a, b = tp.ones(3), tp.ones(3)
    ta, tb = torch.ones(3), torch.ones(3)
    g, tg = tp.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    y, ty = g * 1, tg * 1  # a non-leaf with history: in-place ops on it are recorded
    cases: dict[str, tuple[Any, Any]] = {
        "add (no grad)": (lambda: tp.add(a, b), lambda: torch.add(ta, tb)),
        "add (grad)": (lambda: tp.add(g, b), lambda: torch.add(tg, tb)),
        "mul_ (in-place, grad)": (lambda: y.mul_(1.0), lambda: ty.mul_(1.0)),
        "zeros(3)": (lambda: tp.zeros(3), lambda: torch.zeros(3)),
        "zeros(3, dtype=float64)": (
            lambda: tp.zeros(3, dtype=tp.float64),
            lambda: torch.zeros(3, dtype=torch.float64),
        ),
        "ones(3)": (lambda: tp.ones(3), lambda: torch.ones(3)),
        "empty(3)": (lambda: tp.empty(3), lambda: torch.empty(3)),
        "full((3,), 2.0)": (lambda: tp.full((3,), 2.0), lambda: torch.full((3,), 2.0)),
        "arange(10)": (lambda: tp.arange(10), lambda: torch.arange(10)),
        "zeros_like": (lambda: tp.zeros_like(a), lambda: torch.zeros_like(ta)),
        "ones_like": (lambda: tp.ones_like(a), lambda: torch.ones_like(ta)),
        "empty_like": (lambda: tp.empty_like(a), lambda: torch.empty_like(ta)),
    }
    fns: dict[Any, Any] = {}
    for name, (ours, theirs) in cases.items():
        fns[("tp", name)], fns[("torch", name)] = ours, theirs
    t = interleaved(fns, number=5000, rounds=15)
    print("\nper-op overhead, 3-element float32 (issue 34's goal: each <= 1.0x torch)")
    for name in cases:
        ours, theirs = t[("tp", name)], t[("torch", name)]
        print(f"  {name:26s} {us(ours)}  torch {us(theirs)}  {ours / theirs:5.2f}x torch")


if __name__ == "__main__":
    main()
