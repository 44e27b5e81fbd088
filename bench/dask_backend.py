"""The Dask backend against dask.array itself, in one process, and out of core on a cluster.

* **Overhead against dask**: ``relu(x @ W).sum().item()`` on ``"dask"`` tensors against the same
  ``dask.array`` expression and ``.compute()``, graph build and compute both timed, on dask's
  threaded scheduler (goal: at most 1.10x), with the task counts of both graphs;
* **the MLP training step**: Linear-ReLU-Linear, cross-entropy, SGD, with ``tp.dask.step``
  persisting each step and ``loss.item()`` read, against the same step written by hand with
  ``dask.array`` (forward, backward, update, ``dask.persist``, the loss read) on the same
  scheduler (goal: at most 1.2x), with the task counts of one step;
* **out of core**: ``relu(x @ W).sum()`` and a column sum over a float32 matrix four times the
  memory limit of each of two worker processes (``distributed.LocalCluster`` on loopback), the
  matrix drawn chunk by chunk on the workers; the workers' peak memory against numpy's on the
  same matrix (a subprocess holding it whole);
* **scaling**: that out-of-core workload on 1 and on 2 workers.

Run: ``uv run python bench/dask_backend.py`` (``--small`` for the quick sizes the test suite
runs: tests/dask/test_dask_bench.py).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402

import tensorplug as tp  # noqa: E402


def best_of(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Best wall time of each function over ``rounds`` interleaved rounds (noise only adds)."""
    best = {k: float("inf") for k in fns}
    for fn in fns.values():
        fn()  # warm-up
    for _ in range(rounds):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


# --- one expression -------------------------------------------------------------------------


def expression(rows: int, cols: int, out: int, chunk_rows: int, rounds: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    xa = da.from_array(
        rng.standard_normal((rows, cols), dtype=np.float32), chunks=(chunk_rows, cols)
    )
    wa = da.from_array(rng.standard_normal((cols, out), dtype=np.float32), chunks=-1)
    x, w = tp.dask.from_dask(xa), tp.dask.from_dask(wa)

    def with_tp() -> float:
        return tp.relu(x @ w).sum().item()

    def with_dask() -> float:
        return float(da.maximum(xa @ wa, 0).sum().compute())

    assert abs(with_tp() - with_dask()) <= 1e-3 * abs(with_dask())
    t = best_of({"tp": with_tp, "dask": with_dask}, rounds)
    tasks_tp = tp.dask.task_count(tp.relu(x @ w).sum())
    tasks_dask = len(dict(da.maximum(xa @ wa, 0).sum().__dask_graph__()))
    return {
        "tp_s": t["tp"], "dask_s": t["dask"], "ratio": t["tp"] / t["dask"],
        "tasks_tp": tasks_tp, "tasks_dask": tasks_dask,
    }  # fmt: skip


# --- the training step ----------------------------------------------------------------------


def _mlp_data(n: int, d: int, classes: int, chunk_rows: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d), dtype=np.float32)
    y = rng.integers(0, classes, size=n)
    return da.from_array(x, chunks=(chunk_rows, d)), da.from_array(y, chunks=(chunk_rows,))


def _tp_mlp(d: int, hidden: int, classes: int, lr: float) -> tuple[Any, Any, list[Any]]:
    """The model on ``"dask"``, its SGD optimizer and its initial parameters (numpy)."""
    tp.manual_seed(0)
    model = tp.nn.Sequential(tp.nn.Linear(d, hidden), tp.nn.ReLU(), tp.nn.Linear(hidden, classes))
    model = model.to("dask")
    init = [p.detach().cpu().numpy().copy() for p in model.parameters()]
    return model, tp.optim.SGD(model.parameters(), lr=lr), init


def _tp_forward_backward(model: Any, opt: Any, x: Any, y: Any) -> Any:
    opt.zero_grad()
    loss = tp.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss


def _hand_step(xa: Any, onehot: Any, params: list[Any], lr: float) -> tuple[Any, ...]:
    """The step written by hand with dask.array: the new parameters, the loss, the gradients."""
    n = xa.shape[0]
    W1, b1, W2, b2 = params
    h = xa @ W1.T + b1
    a = da.maximum(h, 0)
    z = a @ W2.T + b2
    m = z.max(axis=1, keepdims=True)
    e = da.exp(z - m)
    s = e.sum(axis=1, keepdims=True)
    logp = z - m - da.log(s)
    loss = -(logp * onehot).sum() / n
    dz = (e / s - onehot) / n
    gW2, gb2 = dz.T @ a, dz.sum(axis=0)
    dh = (dz @ W2) * (h > 0)
    gW1, gb1 = dh.T @ xa, dh.sum(axis=0)
    new = [W1 - lr * gW1, b1 - lr * gb1, W2 - lr * gW2, b2 - lr * gb2]
    return new, loss, [gW1, gb1, gW2, gb2]


def _onehot(ya: Any, classes: int) -> Any:
    return (ya[:, None] == da.arange(classes)[None, :]).astype(np.float32)


def _tasks(arrays: list[Any], optimized: bool) -> int:
    if optimized:
        arrays = list(dask.optimize(*arrays))
    return len({k for a in arrays for k in dict(a.__dask_graph__())})


def step_task_counts(n: int, d: int, hidden: int, classes: int, chunk_rows: int) -> dict[str, int]:
    """The task counts of one training step, tensorplug's against the hand-written one, as built
    and after dask's optimization (what a compute runs): of the loss and the gradients, and of
    the whole step each persists (tensorplug's ``tp.dask.step``: the updated parameters, the
    gradients and the loss; the hand-written: the updated parameters and the loss)."""
    xa, ya = _mlp_data(n, d, classes, chunk_rows)
    lr = 0.1
    model, opt, init = _tp_mlp(d, hidden, classes, lr)
    x, y = tp.dask.from_dask(xa), tp.dask.from_dask(ya.astype(np.int64))
    loss = _tp_forward_backward(model, opt, x, y)
    grads = [p.grad for p in model.parameters()]
    out = {
        "tp": tp.dask.task_count(loss, grads),
        "tp_optimized": tp.dask.task_count(loss, grads, optimized=True),
    }
    opt.step()
    params = list(model.parameters())
    out["tp_step_optimized"] = tp.dask.task_count(params, grads, loss, optimized=True)
    new, hloss, hgrads = _hand_step(
        xa, _onehot(ya, classes), [da.from_array(a, chunks=-1) for a in init], lr
    )
    out["dask"] = _tasks([hloss, *hgrads], False)
    out["dask_optimized"] = _tasks([hloss, *hgrads], True)
    out["dask_step_optimized"] = _tasks([*new, hloss], True)
    return out


def mlp_step(
    n: int, d: int, hidden: int, classes: int, chunk_rows: int, steps: int
) -> dict[str, Any]:
    xa, ya = _mlp_data(n, d, classes, chunk_rows)
    lr = 0.1
    model, opt, init = _tp_mlp(d, hidden, classes, lr)
    x, y = tp.dask.from_dask(xa), tp.dask.from_dask(ya.astype(np.int64))

    def tp_step() -> float:
        loss = _tp_forward_backward(model, opt, x, y)
        tp.dask.step(opt, loss)
        return loss.item()

    onehot = _onehot(ya, classes)
    hand: dict[str, Any] = {"p": [da.from_array(a, chunks=-1) for a in init]}

    def dask_step() -> float:
        new, loss, _ = _hand_step(xa, onehot, hand["p"], lr)
        *hand["p"], loss = dask.persist(*new, loss)
        return float(loss.compute())

    losses_tp = [tp_step() for _ in range(steps)]
    losses_dask = [dask_step() for _ in range(steps)]
    assert np.allclose(losses_tp, losses_dask, rtol=1e-4, atol=1e-5), (losses_tp, losses_dask)
    t = best_of({"tp": tp_step, "dask": dask_step}, steps)
    return {
        "tp_s": t["tp"], "dask_s": t["dask"], "ratio": t["tp"] / t["dask"], "losses": losses_tp,
        **step_task_counts(n, d, hidden, classes, chunk_rows),
    }  # fmt: skip


# --- out of core ----------------------------------------------------------------------------


def out_of_core(client: Any, rows: int, cols: int, chunk_rows: int) -> dict[str, Any]:
    """``relu(x @ W).sum()`` and ``x.sum(0)`` over an ``rows x cols`` float32 matrix drawn on
    the workers; the workers' peak memory (sampled every 0.1 s) and the wall time."""
    tp.dask.use(client)
    peak = {"rss": 0}
    done = threading.Event()

    def rss(dask_worker: Any = None) -> int:
        import psutil

        return int(psutil.Process().memory_info().rss)

    def sample() -> None:
        while not done.is_set():
            try:
                total = sum(client.run(rss).values())
            except Exception:  # noqa: BLE001 - a sample lost while a worker is busy
                total = 0
            peak["rss"] = max(peak["rss"], total)
            time.sleep(0.1)

    base = sum(client.run(rss).values())
    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        t0 = time.perf_counter()
        x = tp.dask.from_dask(
            da.random.default_rng(0).standard_normal(
                (rows, cols), dtype=np.float32, chunks=(chunk_rows, cols)
            )
        )
        w = tp.ones(cols, 16, device="dask") / cols
        a, b = tp.dask.compute(tp.relu(x @ w).sum(), x.sum(0))
        seconds = time.perf_counter() - t0
    finally:
        done.set()
        watcher.join()
        tp.dask.use(None)
    assert np.isfinite(a) and b.shape == (cols,)
    return {"seconds": seconds, "workers_peak_bytes": peak["rss"], "workers_idle_bytes": base}


NUMPY_PEAK = """
import resource, numpy as np
x = np.random.default_rng(0).standard_normal(({rows}, {cols}), dtype=np.float32)
w = np.ones(({cols}, 16), np.float32) / {cols}
a, b = float(np.maximum(x @ w, 0).sum()), x.sum(0)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def numpy_peak(rows: int, cols: int) -> int:
    r = subprocess.run(
        [sys.executable, "-c", NUMPY_PEAK.format(rows=rows, cols=cols)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(r.stdout.strip())


def cluster(workers: int, memory_limit: str) -> Any:
    import distributed

    return distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None, memory_limit=memory_limit,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="the suite's quick sizes")
    args = parser.parse_args()
    small = args.small
    tp.dask.show_progress(False)
    with dask.config.set(scheduler="threads", num_workers=2):
        e = expression(*((2000, 64, 32, 200, 5) if small else (200_000, 256, 64, 20_000, 7)))
        print(
            f"relu(x @ W).sum(): tp {e['tp_s'] * 1e3:.1f} ms, dask.array {e['dask_s'] * 1e3:.1f} ms, "
            f"ratio {e['ratio']:.2f}x (goal <= 1.10x); tasks {e['tasks_tp']} vs {e['tasks_dask']}"
        )
        m = mlp_step(*((512, 16, 32, 4, 128, 3) if small else (65_536, 64, 256, 10, 8192, 6)))
        print(
            f"MLP step (persist each step): tp {m['tp_s'] * 1e3:.1f} ms, hand-written dask.array "
            f"{m['dask_s'] * 1e3:.1f} ms, ratio {m['ratio']:.2f}x (goal <= 1.2x); tasks of the "
            f"loss and gradients {m['tp']} vs {m['dask']} as built, {m['tp_optimized']} vs "
            f"{m['dask_optimized']} after dask's optimization (what runs); of the whole "
            f"persisted step {m['tp_step_optimized']} vs {m['dask_step_optimized']}"
        )
    # a worker process holds about 150 MiB before any data (Python, dask, distributed, numpy):
    # the limit leaves it room; the matrix is 4x one worker's limit (the suite's size: 1/8)
    limit_mib = 512
    matrix_mib = limit_mib // 2 if small else 4 * limit_mib
    rows, cols = matrix_mib * 2**20 // (4 * 512), 512
    chunk_rows = max(rows // 64, 1)
    results = {}
    for workers in (1, 2):
        with cluster(workers, f"{limit_mib}MiB") as c:
            import distributed

            with distributed.Client(c, set_as_default=False) as client:
                results[workers] = out_of_core(client, rows, cols, chunk_rows)
    matrix = rows * cols * 4
    print(
        f"out of core: a {matrix / 2**20:.0f} MiB float32 matrix, workers limited to "
        f"{limit_mib} MiB each"
    )
    for workers, r in results.items():
        print(
            f"  {workers} worker(s): {r['seconds']:.2f} s, workers' peak RSS "
            f"{r['workers_peak_bytes'] / 2**20:.0f} MiB (idle {r['workers_idle_bytes'] / 2**20:.0f} MiB)"
        )
    print(f"  speed-up 1 -> 2 workers: {results[1]['seconds'] / results[2]['seconds']:.2f}x")
    print(f"  numpy on the same matrix: peak RSS {numpy_peak(rows, cols) / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
