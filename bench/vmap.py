"""The batched plugin: tp.vmap and per-sample gradients, as ratios measured in one process.

* ``vmap(lambda row: relu(row @ W + b))`` over 1000 rows against the batched numpy expression
  ``np.maximum(X @ W + b, 0)`` (goal: at most 1.10x; torch.func.vmap against torch's batched
  expression, when torch is importable, for reference), with two references against numpy: the
  same operators on plain tensors, and the floor (numpy's expression plus one wrapper built and
  read back and the result made a tensor: the least a vmap adds);
* per-sample gradients of an MLP 784-128-10 (batch 64, cross-entropy, through
  ``functional_call``): ``vmap(grad(loss), in_dims=(None, 0, 0))`` against a Python loop of
  ``grad(loss)`` over the samples, and against a loop of ``loss.backward()`` (the speed-up);
* an operator without a batching rule (the loop fallback) against the explicit Python loop
  ``stack([op(x[i]) for i in ...])`` (goal: at most 1.2x).

The machine these run on is shared: each comparison interleaves its candidates, repeats, and
prints the range of the ratio over several rounds. Run: ``python bench/vmap.py``.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

# one BLAS thread for numpy (and so tensorplug) and torch alike: on a shared 2-core machine,
# threaded matmuls measure the neighbours' load, not the code
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved, paired_ratio, us  # noqa: E402

import tensorplug as tp  # noqa: E402
from tensorplug.func import functional_call, grad, vmap  # noqa: E402
from tensorplug.tensor import new_tensor  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

ROUNDS = 5


def ratio_range(fn: Any, base: Any, *, pairs: int) -> tuple[float, float]:
    """The lowest and highest of ROUNDS paired-median ratios ``fn / base``."""
    rs = [paired_ratio(fn, base, pairs=pairs) for _ in range(ROUNDS)]
    return min(rs), max(rs)


def bench_linear_relu(n_in: int, n_out: int) -> None:
    """The vmapped expression against numpy's, and two references against numpy's: the same
    three operators on plain tensors, and the floor -- numpy's expression plus the least a vmap
    must add (one wrapper built around the input and read back, the result made a tensor)."""
    from tensorplug_batched.batched import wrap  # after tensorplug, which loads the plugin

    rng = np.random.default_rng(0)
    xn = rng.standard_normal((1000, n_in), dtype=np.float32)
    wn = rng.standard_normal((n_in, n_out), dtype=np.float32)
    bn = rng.standard_normal(n_out, dtype=np.float32)
    x, w, b = tp.tensor(xn), tp.tensor(wn), tp.tensor(bn)
    f = vmap(lambda row: tp.relu(row @ w + b))
    np.testing.assert_allclose(f(x).numpy(), np.maximum(xn @ wn + bn, 0), rtol=1e-5, atol=1e-5)

    def numpy_expr() -> Any:
        return np.maximum(xn @ wn + bn, 0)

    def plain() -> Any:
        return tp.relu(x @ w + b)

    def floor() -> Any:
        row = wrap(x, 0, 1)
        data = np.maximum(row.value.tp_data @ wn + bn, 0)
        return new_tensor(data, x.tp_dtype, x.tp_device, x.tp_keyset)

    lo, hi = ratio_range(lambda: f(x), numpy_expr, pairs=400)
    plo, phi = ratio_range(plain, numpy_expr, pairs=400)
    flo, fhi = ratio_range(floor, numpy_expr, pairs=400)
    best = interleaved({"vmap": lambda: f(x), "numpy": numpy_expr, "plain": plain,
                        "floor": floor}, number=20, rounds=10)  # fmt: skip
    line = (
        f"vmap relu(x @ W + b), 1000 x {n_in} @ {n_in} x {n_out}: {lo:.3f}-{hi:.3f}x numpy "
        f"(vmap {us(best['vmap'])}, numpy {us(best['numpy'])}); plain tensors {plo:.3f}-{phi:.3f}x "
        f"({us(best['plain'])}); floor {flo:.3f}-{fhi:.3f}x ({us(best['floor'])})"
    )
    if torch is not None:
        tx, tw, tb = torch.from_numpy(xn), torch.from_numpy(wn), torch.from_numpy(bn)
        tf = torch.func.vmap(lambda row: torch.relu(row @ tw + tb))
        tlo, thi = ratio_range(lambda: tf(tx), lambda: torch.relu(tx @ tw + tb), pairs=400)
        line += f"; torch.func.vmap: {tlo:.3f}-{thi:.3f}x torch's batched expression"
    print(line)


def bench_per_sample_grads() -> None:
    tp.manual_seed(0)
    model = tp.nn.Sequential(tp.nn.Linear(784, 128), tp.nn.ReLU(), tp.nn.Linear(128, 10))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = tp.randn(64, 784), tp.randint(0, 10, [64])

    def loss(p: Any, xi: Any, yi: Any) -> Any:
        return tp.nn.functional.cross_entropy(functional_call(model, p, (xi,)), yi)

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))
    g = grad(loss)

    def looped() -> Any:
        return [g(params, x[i], y[i]) for i in range(64)]

    def backward_loop() -> Any:
        out = []
        for i in range(64):
            model.zero_grad()
            tp.nn.functional.cross_entropy(model(x[i]), y[i]).backward()
            out.append([p.grad for p in model.parameters()])
        return out

    got = per_sample(params, x, y)
    want = looped()
    for k in params:
        np.testing.assert_allclose(
            got[k].numpy(), np.stack([w[k].numpy() for w in want]), rtol=1e-4, atol=1e-6
        )
    best = interleaved({"vmap": lambda: per_sample(params, x, y), "grad loop": looped,
                        "backward loop": backward_loop}, number=1, rounds=5)  # fmt: skip
    print(
        f"per-sample gradients, MLP 784-128-10, batch 64: vmap(grad) {best['vmap'] * 1e3:.1f} ms, "
        f"loop of grad {best['grad loop'] * 1e3:.1f} ms ({best['grad loop'] / best['vmap']:.1f}x "
        f"faster), loop of backward() {best['backward loop'] * 1e3:.1f} ms "
        f"({best['backward loop'] / best['vmap']:.1f}x)"
    )


def bench_fallback() -> None:
    with tp.Library("vmapbench", "DEF") as lib:
        lib.define("centre(Tensor x) -> Tensor")
        lib.impl("centre", lambda x: x - x.mean(), "CPU")
        op = tp.ops.vmapbench.centre.default
        x = tp.randn(64, 256)
        f = vmap(op)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f(x)

        def loop() -> Any:
            return tp.stack([op(x[i]) for i in range(64)])

        np.testing.assert_allclose(f(x).numpy(), loop().numpy(), rtol=1e-6)
        lo, hi = ratio_range(lambda: f(x), loop, pairs=300)
        print(
            f"fallback (an op without a rule), 64 rows of 256: {lo:.3f}-{hi:.3f}x the Python loop"
        )


if __name__ == "__main__":
    print(
        f"tensorplug {tp.__version__}; numpy {np.__version__}; torch {torch.__version__ if torch else '-'}"
    )
    bench_linear_relu(64, 64)
    bench_linear_relu(256, 256)
    bench_per_sample_grads()
    bench_fallback()
