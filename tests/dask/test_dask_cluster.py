"""tensorplug on a distributed.LocalCluster (2 worker processes on loopback): the computes of
value reads, tp.dask.compute and tp.dask.persist run as tasks on the workers, chosen by
tp.dask.use(client) or TENSORPLUG_DASK_SCHEDULER. One cluster for the module (it takes seconds
to start); skipped where distributed is not installed (it is tensorplug-dask's optional extra)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        memory_limit="512MiB",
    ) as c:
        yield c


@pytest.fixture
def client(cluster):
    with distributed.Client(cluster, set_as_default=False) as c:
        tp.dask.use(c)
        try:
            yield c
        finally:
            tp.dask.use(None)


def test_reads_compute_on_the_workers(client):
    x = tp.dask.rechunk(
        tp.arange(4000, dtype=tp.float32, device="dask").reshape(40, 100), (10, 100)
    )
    w = tp.ones(100, 8, device="dask")
    with distributed.get_task_stream(client) as stream:
        got = tp.relu(x @ w).sum().item()
    want = float(
        np.maximum(np.arange(4000, dtype=np.float64).reshape(40, 100) @ np.ones((100, 8)), 0).sum()
    )
    assert got == pytest.approx(want, rel=1e-6)
    workers = {t["worker"] for t in stream.data}
    assert workers  # the tasks ran on the cluster, not in this process
    assert workers <= set(client.scheduler_info()["workers"])


def test_persist_keeps_chunks_on_the_workers(client):
    x = tp.dask.rechunk(tp.ones(8, 4, device="dask"), (2, 4))
    (y,) = tp.dask.persist(x * 3)
    futures = distributed.futures_of(tp.dask.to_dask(y))
    assert len(futures) == 4  # one per chunk, computed and held by the workers
    client.gather(futures)  # a cluster's persist returns at once, computing on
    assert all(f.status == "finished" for f in futures)
    assert set(client.who_has(futures).values()) <= {
        (w,) for w in client.scheduler_info()["workers"]
    }
    (host,) = tp.dask.compute(y)
    np.testing.assert_array_equal(host, np.full((8, 4), 3, np.float32))


def test_the_environment_variable_names_the_scheduler(cluster, monkeypatch):
    monkeypatch.setenv("TENSORPLUG_DASK_SCHEDULER", cluster.scheduler_address)
    try:
        c = tp.dask.current_client()
        assert c is not None and c.scheduler.address == cluster.scheduler_address
        assert tp.tensor([1.0, 2.0], device="dask").sum().item() == 3.0
    finally:
        monkeypatch.delenv("TENSORPLUG_DASK_SCHEDULER")
        tp.dask.use(None)
    assert tp.dask.current_client() is None


# --- bench/dask_backend.py at the suite's size ------------------------------------------------


def _bench():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "dask_backend.py"
    spec = importlib.util.spec_from_file_location("dask_backend_bench", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_benchmark_runs_at_a_small_size(cluster):
    """The out-of-core workload (a matrix drawn on the workers, relu(x @ W).sum() and a column
    sum) on this module's cluster, and the in-process comparison against dask.array, which
    checks its result against dask's own (the MLP step's comparison is the training tests')."""
    bench = _bench()
    with distributed.Client(cluster, set_as_default=False) as client:
        r = bench.out_of_core(client, rows=2048, cols=64, chunk_rows=512)
    assert r["seconds"] > 0 and r["workers_peak_bytes"] >= r["workers_idle_bytes"] > 0
    assert tp.dask.current_client() is None  # the workload gives the scheduler back
    e = bench.expression(400, 16, 8, 100, rounds=1)
    assert e["tasks_tp"] <= e["tasks_dask"] + 1  # the graph of the same expression
