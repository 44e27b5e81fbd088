"""Forward-mode AD on an MLP 784-128-10 (batch 64, ReLU, cross-entropy), in one process: the
Jacobian-vector product of the loss with respect to all parameters along a random tangent,

* with the forward formulas (forward_formulas.py), the default;
* with every op on the double-vjp construction instead (the formula table emptied), the cost
  an op without a formula pays;
* against the forward pass alone, a reverse-mode step (forward + backward) and, when
  importable, ``torch.func.jvp`` of the same function.

Run: ``python bench/forward_ad.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved, us  # noqa: E402

import tensorplug as tp  # noqa: E402
from tensorplug.func import jvp  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

F = tp.nn.functional


def _no_formulas() -> Any:
    """A context in which every op takes the double-vjp construction."""
    from contextlib import contextmanager

    from tensorplug_autograd import forward

    @contextmanager
    def ctx() -> Any:
        saved = forward.FORWARD_FORMULAS, forward.elementwise_entry, forward._scalar
        forward._RULES.clear()
        forward.FORWARD_FORMULAS = {}
        forward.elementwise_entry = lambda reverse: None
        forward._scalar = lambda o: False  # no Note [Scalar outputs] shortcut either
        try:
            yield
        finally:
            forward.FORWARD_FORMULAS, forward.elementwise_entry, forward._scalar = saved
            forward._RULES.clear()

    return ctx()


def main() -> None:
    rng = np.random.default_rng(0)
    shapes = [(128, 784), (128,), (10, 128), (10,)]
    params = [tp.tensor(rng.standard_normal(s).astype(np.float32) * 0.05) for s in shapes]
    tangents = [tp.tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    x = tp.tensor(rng.standard_normal((64, 784)).astype(np.float32))
    y = tp.tensor(rng.integers(0, 10, 64))

    def loss(w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
        return F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), y)

    def with_formulas() -> Any:
        return jvp(loss, tuple(params), tuple(tangents))

    def by_double_vjp() -> Any:
        with _no_formulas():
            return jvp(loss, tuple(params), tuple(tangents))

    leaves = [p.detach().requires_grad_() for p in params]

    def reverse() -> Any:
        return tp.autograd.grad(loss(*leaves), leaves)

    a = with_formulas()[1].item()
    b = by_double_vjp()[1].item()
    assert abs(a - b) <= 1e-4 * max(1.0, abs(a)), (a, b)
    fns: dict[str, Any] = {
        "forward only": lambda: loss(*params),
        "jvp, formulas": with_formulas,
        "jvp, double-vjp": by_double_vjp,
        "reverse (grad)": reverse,
    }
    if torch is not None:
        tparams = tuple(torch.tensor(p.numpy()) for p in params)
        ttangents = tuple(torch.tensor(t.numpy()) for t in tangents)
        tx, ty = torch.tensor(x.numpy()), torch.tensor(y.numpy())
        TF = torch.nn.functional

        def tloss(w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
            return TF.cross_entropy(TF.linear(TF.relu(TF.linear(tx, w1, b1)), w2, b2), ty)

        fns["torch.func.jvp"] = lambda: torch.func.jvp(tloss, tparams, ttangents)
    t = interleaved(fns, number=20, rounds=9)
    base = t["forward only"]
    print("MLP 784-128-10, batch 64, float32: jvp of the loss along a tangent of all parameters")
    for name, v in t.items():
        print(f"  {name:18s} {us(v)}  {v / base:5.2f}x forward")
    print(
        f"  double-vjp / formulas: {t['jvp, double-vjp'] / t['jvp, formulas']:.2f}x"
        + (
            f"; formulas / torch.func.jvp: {t['jvp, formulas'] / t['torch.func.jvp']:.2f}x"
            if "torch.func.jvp" in t
            else ""
        )
    )


if __name__ == "__main__":
    torch_threads = getattr(torch, "set_num_threads", None)
    if torch_threads is not None:
        torch_threads(1)
    main()
