"""tp.dask and the Dask backend's laziness: ops build graphs, value reads compute (through the
chosen scheduler), from_dask/to_dask share the array, rechunk/persist/compute, default chunks,
progress bars, and the kit's reads-no-values promise on a lazy backend."""

from __future__ import annotations

import io
import sys

import dask
import dask.array as da
import numpy as np
import pytest

import tensorplug as tp
from tensorplug_dask import chunks as chunking
from tensorplug_dask import scheduler


class CountingScheduler:
    """A dask scheduler (``dask.config.set(scheduler=...)``) that counts its computes."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, dsk, keys, **kwargs):
        self.calls += 1
        return dask.get(dsk, keys, **kwargs)


@pytest.fixture
def counting():
    s = CountingScheduler()
    with dask.config.set(scheduler=s):
        yield s


def test_tp_dask_is_the_plugins_module():
    import tensorplug_dask.api

    assert tp.dask is tensorplug_dask.api
    assert "dask" in tp.plugins.loaded_names()


def test_ops_stay_lazy_and_reads_compute(counting):
    x = tp.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device="dask")
    w = tp.ones(4, 2, device="dask")
    y = tp.relu(x @ w - 10).sum()
    assert isinstance(tp.dask.to_dask(y), da.Array)
    assert counting.calls == 0  # nothing computed yet
    assert y.item() == pytest.approx(
        float(np.maximum(np.arange(12).reshape(3, 4).sum(1) - 10, 0).sum() * 2)
    )
    assert counting.calls == 1
    assert bool(y > 0) is True
    assert x.tolist()[1] == [4.0, 5.0, 6.0, 7.0]
    assert "device='dask'" in repr(x)
    c = x.cpu()
    assert c.device.type == "cpu" and counting.calls >= 4
    np.testing.assert_array_equal(c.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4))


def test_from_dask_and_to_dask_share_the_array():
    a = da.arange(10, chunks=5, dtype=np.float64)
    t = tp.dask.from_dask(a)
    assert t.device.type == "dask" and t.dtype is tp.float64 and t.shape == (10,)
    assert tp.dask.to_dask(t) is a
    assert tp.dask.chunks(t) == ((5, 5),)
    with pytest.raises(ValueError, match="expected a tensor on 'dask'"):
        tp.dask.to_dask(tp.ones(2))


def test_a_cpu_copy_does_not_share_the_dask_source():
    host = np.zeros(3, np.float32)
    t = tp.dask.from_dask(da.from_array(host, chunks=-1))
    c = t.cpu()
    c.add_(1)
    np.testing.assert_array_equal(host, 0)


def test_rechunk_persist_compute():
    x = tp.arange(8, dtype=tp.float32, device="dask")
    tp.dask.rechunk(x, 2)
    assert tp.dask.chunks(x) == ((2, 2, 2, 2),)
    y = x * 2
    before = tp.dask.task_count(y)
    (same,) = tp.dask.persist(y)
    assert same is y
    assert tp.dask.task_count(y) == 4 < before  # one computed chunk each
    a, b = tp.dask.compute(y, y.sum())
    np.testing.assert_array_equal(a, np.arange(8) * 2)
    assert b == 56


def test_default_chunks_split_rows_only(monkeypatch):
    monkeypatch.setitem(dask.config.config["array"], "chunk-size", "1KiB")
    assert chunking.chunk_bytes() == 1024
    assert chunking.default_chunks((10, 8), 4) == (10, 8)  # 320 bytes: one chunk
    assert chunking.default_chunks((100, 8), 4) == (32, 8)  # 32 rows of 32 bytes per KiB
    assert chunking.default_chunks((2, 1000), 4) == "auto"  # a row over the target
    t = tp.tensor(np.ones((100, 8), np.float32), device="dask")
    assert tp.dask.chunks(t) == ((32, 32, 32, 4), (8,))


def test_progress_is_off_off_a_terminal_and_on_when_asked(monkeypatch):
    monkeypatch.delenv(scheduler.ENV_PROGRESS, raising=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not tp.dask.progress_enabled()
    monkeypatch.setenv(scheduler.ENV_PROGRESS, "1")
    assert tp.dask.progress_enabled()
    tp.dask.show_progress(False)
    try:
        assert not tp.dask.progress_enabled()
        tp.dask.show_progress(True)
        monkeypatch.setattr(scheduler, "PROGRESS_MINIMUM_S", 0)
        out = io.StringIO()
        monkeypatch.setattr(sys, "stdout", out)  # dask's ProgressBar writes to stdout
        assert tp.ones(3, device="dask").sum().item() == 3.0
        assert "Completed" in out.getvalue()
    finally:
        tp.dask.show_progress(None)


def test_float16_and_bfloat16_cross_host_transfers():
    for d in (tp.float16, tp.bfloat16):
        t = tp.tensor([1.5, 2.5], dtype=d, device="dask")
        assert t.dtype is d
        assert (t * 2).cpu().tolist() == [3.0, 5.0]


def test_value_dependent_shapes_are_known():
    t = tp.tensor([0.0, 1.0, 0.0, 2.0], device="dask")
    assert tp.nonzero(t).shape == (2, 1)
    assert t[t > 0].shape == (2,)
    assert tp.masked_select(t, t > 0).tolist() == [1.0, 2.0]
    assert tp.unique(t).tolist() == [0.0, 1.0, 2.0]


def test_index_writes_stay_lazy(counting):
    """index_put, scatter and the losses read no index values on a lazy backend (Note [Lazy
    backends read no values]): no compute until the result is read."""
    x = tp.zeros(4, 3, device="dask")
    idx = tp.tensor([0, 2, 2], device="dask")
    y = x.index_put((idx,), tp.ones(3, device="dask"), accumulate=True)
    z = tp.zeros(5, device="dask").scatter_add(
        0, tp.tensor([1, 1, 3], device="dask"), tp.ones(3, device="dask")
    )
    logits = tp.randn(4, 3, device="dask")
    loss = tp.nn.functional.cross_entropy(logits, tp.tensor([0, 1, 2, 1], device="dask"))
    s = tp.searchsorted(tp.tensor([1.0, 2.0, 3.0], device="dask"), tp.tensor([2.5], device="dask"))
    # the one value read: an accumulating scatter's number of rounds (its longest run of a
    # repeated index), once for index_put(accumulate=True), once for scatter_add
    assert counting.calls == 2
    assert y.sum(1).tolist() == [3.0, 0.0, 6.0, 0.0]
    assert z.tolist() == [0.0, 2.0, 0.0, 1.0, 0.0]
    assert np.isfinite(loss.item())
    assert s.tolist() == [2]


def test_an_out_of_range_target_gives_nan_not_an_error():
    """A documented difference (docs/dask.md): the check would compute the targets."""
    loss = tp.nn.functional.nll_loss(
        tp.zeros(2, 3, device="dask"), tp.tensor([0, 7], device="dask")
    )
    assert np.isnan(loss.item())


def test_empty_tensors_take_in_place_writes():
    t = tp.zeros(0, 3, device="dask")
    t.fill_(1.0)
    t.add_(1.0)
    t.copy_(tp.ones(0, 3, device="dask"))  # dask's a[...] = v refuses a 0-length dim
    t[...] = tp.ones(0, 3, device="dask")
    assert t.shape == (0, 3) and t.tolist() == []


def test_ops_missing_probe_reports_what_the_namespace_cannot_run():
    """`tensorplug ops --missing Dask --probe`: kernels that are registered (the dispatch table
    shows them) but fail on dask's namespace are listed, with why; those that work are not."""
    from tensorplug import cli

    # view runs since functionalization gives dask views; as_strided needs strides dask lacks
    failing = cli.probe_failures("Dask", ["linalg_det", "add.Tensor", "view", "as_strided"])
    assert set(failing) == {"linalg_det", "as_strided"}
    assert "det" in failing["linalg_det"]
    assert "strides" in failing["as_strided"]


def test_namespace_signatures_and_dtypes():
    """numpy's (n, k, m) tril_indices/triu_indices detected (dask's), argmax of ints (of bools
    refused, as PyTorch refuses it), diag with an offset, bfloat16 to the host and back."""
    assert tp.tril_indices(3, 3, device="dask").tolist() == tp.tril_indices(3, 3).tolist()
    assert tp.triu_indices(3, 4, 1, device="dask").tolist() == tp.triu_indices(3, 4, 1).tolist()
    assert tp.tensor([0, 1, 1], device="dask").argmax().item() == 1
    with pytest.raises(RuntimeError, match="does not support bool input"):
        tp.tensor([False, True, True], device="dask").argmax()
    assert tp.diag(tp.tensor([1.0, 2.0], device="dask"), 1).tolist() == [
        [0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0],
    ]  # fmt: skip
    x = tp.tensor([1.5], dtype=tp.bfloat16, device="dask")
    assert x.cpu().to("dask").dtype is tp.bfloat16 and x.cpu().tolist() == [1.5]


def test_bin_counts_stay_lazy_with_known_chunks(counting):
    """histc/histogram/histogramdd count into bins with a fixed-size sum (Note [Fixed-size bin
    counts] in the kit): no value read, every chunk size known."""
    x = tp.tensor(np.linspace(0.0, 1.0, 10, dtype=np.float32), device="dask")
    h = tp.histc(x, bins=4, min=0.0, max=1.0)
    pts = tp.stack([x, x], 1)
    hd = tp.histogramdd(pts, bins=[2, 3], range=[0.0, 1.0, 0.0, 1.0]).hist
    assert counting.calls == 0
    for t in (h, hd):
        assert not any(np.isnan(c) for cs in tp.dask.chunks(t) for c in cs)
    assert h.tolist() == [3.0, 2.0, 2.0, 3.0]
    np.testing.assert_array_equal(
        hd.cpu().numpy(), np.histogramdd(np.linspace(0, 1, 10)[:, None].repeat(2, 1), [2, 3],
                                         range=[(0, 1), (0, 1)])[0]
    )  # fmt: skip


def test_fft_along_a_chunked_axis():
    """dask.array.fft needs the axis in one chunk: the plugin's FFT namespace rechunks it."""
    a = np.arange(12, dtype=np.float32)
    x = tp.dask.from_dask(da.from_array(a, chunks=4))
    np.testing.assert_allclose(tp.fft.rfft(x).cpu().numpy(), np.fft.rfft(a), rtol=1e-5)


def test_task_count_as_built_and_as_run():
    x = tp.dask.from_dask(da.ones((8, 3), chunks=(2, 3)))
    y = ((x + 1) * 2).exp()
    assert tp.dask.task_count(y, optimized=True) < tp.dask.task_count(y)
