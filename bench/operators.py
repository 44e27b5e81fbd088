"""What the Python operators add over their operator overloads (issue: subclasses through every
path).

Prints per-call times and ratios, all measured in this one process, interleaved:

* ``x + y``, ``x + 1``, ``-x``, ``x[0]`` through ``Tensor``'s operator methods, which check
  ``__tensorplug_function__`` (Note [Operators and the protocol] in ``_operators.py``);
* the overload each calls (``aten.add.Tensor``, ...), called directly: the floor;
* for ``x + y``, the operator as it was before the protocol check (same body, no check): what
  the check itself costs, also as the median ratio of back-to-back pairs (steadier on a loaded
  machine).

Run: ``python bench/operators.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _timing import interleaved, paired_ratio, us  # noqa: E402

import tensorplug as tp  # noqa: E402

aten = tp.ops.aten
Tensor = tp.Tensor
SCALARS = frozenset({int, float, bool, complex})


def add_without_protocol_check(self, other):  # the operator's former body, for comparison
    t = type(other)
    if t is Tensor:
        return aten.add.Tensor.__call__(self, other)
    if t in SCALARS:
        return aten.add.Scalar.__call__(self, other)
    return NotImplemented


def main() -> None:
    x, y = tp.ones(3), tp.ones(3)
    add_t, add_s, neg, select = aten.add.Tensor, aten.add.Scalar, aten.neg.default, aten.select.int
    cases = {
        "x + y": (lambda: x + y, lambda: add_t.__call__(x, y)),
        "x + 1": (lambda: x + 1, lambda: add_s.__call__(x, 1)),
        "-x": (lambda: -x, lambda: neg.__call__(x)),
        "x[0]": (lambda: x[0], lambda: select.__call__(x, 0, 0)),
    }
    fns = {}
    for name, (operator, overload) in cases.items():
        fns[name] = operator
        fns[f"{name} (overload)"] = overload
    fns["x + y (no protocol check)"] = lambda: add_without_protocol_check(x, y)
    times = interleaved(fns, number=10000, rounds=40)
    print(f"{'case':28s} {'per call':>10s} {'over overload':>14s}")
    for name in cases:
        t, floor = times[name], times[f"{name} (overload)"]
        print(f"{name:28s} {us(t)} {us(t - floor)}  ({t / floor:.3f}x)")
    check = times["x + y"] - times["x + y (no protocol check)"]
    print(f"\nthe protocol check on x + y: {check * 1e9:+.0f} ns "
          f"({times['x + y'] / times['x + y (no protocol check)']:.3f}x best times)")  # fmt: skip
    # a steadier estimate on a loaded machine: the median of back-to-back pairs of 100 calls
    ratio = paired_ratio(lambda: [x + y for _ in range(100)],
                         lambda: [add_without_protocol_check(x, y) for _ in range(100)])  # fmt: skip
    print(f"median of paired runs: x + y / no check = {ratio:.3f}x")


if __name__ == "__main__":
    main()
