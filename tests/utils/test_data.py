"""tensorplug.utils.data: datasets, samplers, collate and DataLoader (worker processes
included), against PyTorch's frozen behaviour (tests/nn/data/trainutils.json, made by
tools/gen_trainutils.py) and against torch itself where it is importable."""

from __future__ import annotations

import collections
import gc
import json
import os
import pickle
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    _shared,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)

FROZEN = json.loads((Path(__file__).parents[1] / "nn" / "data" / "trainutils.json").read_text())
Point = collections.namedtuple("Point", ["x", "y"])


def describe(x):
    """The JSON form tools/gen_trainutils.py gives a collate result."""
    if isinstance(x, tp.Tensor):
        return {"tensor": x.dtype.name, "shape": list(x.shape), "values": x.tolist()}
    if isinstance(x, Point):
        return {"Point": [describe(v) for v in x]}
    if isinstance(x, dict):
        return {"dict": {k: describe(v) for k, v in x.items()}}
    if isinstance(x, tuple):
        return {"tuple": [describe(v) for v in x]}
    if isinstance(x, list):
        return {"list": [describe(v) for v in x]}
    if isinstance(x, np.ndarray):
        return {"ndarray": x.tolist()}
    return {type(x).__name__: x}


COLLATE_CASES = {
    "floats": lambda: [1.0, 2.5],
    "ints": lambda: [1, 2, 3],
    "bools": lambda: [True, False],
    "strs": lambda: ["a", "b"],
    "tensors": lambda: [tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0])],
    "tuples": lambda: [(tp.tensor(1), 1.0, "x"), (tp.tensor(2), 2.0, "y")],
    "lists": lambda: [[1, 2.0], [3, 4.0]],
    "dicts": lambda: [{"a": 1, "b": tp.zeros(2)}, {"a": 2, "b": tp.ones(2)}],
    "namedtuples": lambda: [Point(1, 2.0), Point(3, 4.0)],
    "ndarrays": lambda: [np.arange(3, dtype=np.float32), np.arange(3, 6, dtype=np.float32)],
    "np_scalars": lambda: [np.float64(1.5), np.float64(2.5)],
    "np_int_scalars": lambda: [np.int32(1), np.int32(7)],
    "nested": lambda: [{"x": [np.int64(1), (2, 3.0)]}, {"x": [np.int64(4), (5, 6.0)]}],
}


@pytest.mark.parametrize("case", sorted(COLLATE_CASES))
def test_default_collate_gives_pytorchs_batches(case):
    assert describe(default_collate(COLLATE_CASES[case]())) == FROZEN["collate"]["out"][case]


@pytest.mark.parametrize(
    ("case", "batch"),
    [
        ("object", lambda: [object(), object()]),
        ("ragged", lambda: [[1, 2], [3]]),
        ("str_array", lambda: [np.array(["a"]), np.array(["b"])]),
    ],
)
def test_default_collate_errors_are_pytorchs(case, batch):
    kind, message = FROZEN["collate"]["errors"][case]
    with pytest.raises((TypeError, RuntimeError)) as e:
        default_collate(batch())
    assert type(e.value).__name__ == kind
    assert str(e.value) == message


def test_default_convert():
    frozen = FROZEN["collate"]["convert"]
    assert describe(default_convert(np.arange(3))) == frozen["ndarray"]
    assert describe(default_convert((np.float32(1.0), "s", 3))) == frozen["tuple"]
    assert describe(default_convert({"a": np.ones(2), "b": [1, 2]})) == frozen["dict"]


def test_datasets():
    x, y = tp.arange(10).reshape(5, 2), tp.arange(5)
    ds = TensorDataset(x, y)
    assert len(ds) == 5 and ds[2][0].tolist() == [4, 5] and ds[2][1].item() == 2
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, tp.arange(4))
    cat = ds + ds
    assert isinstance(cat, ConcatDataset) and len(cat) == 10 and cat[7][1].item() == 2
    assert cat[-1][1].item() == 4 and cat.cumulative_sizes == [5, 10]
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        cat[-11]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ConcatDataset([])
    sub = Subset(ds, [4, 0])
    assert [sub[i][1].item() for i in range(2)] == [4, 0]
    st = StackDataset(a=ds, b=list(range(5)))
    assert st[3]["b"] == 3 and len(st) == 5
    assert [s["b"] for s in st.__getitems__([1, 2])] == [1, 2]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(ds, [1, 2])
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        Dataset()[0]


class Stream(IterableDataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self) -> int:
        return self.n


def test_chain_dataset_and_iterable_loading():
    assert list(ChainDataset([Stream(2), Stream(3)])) == [0, 1, 0, 1, 2]
    assert len(ChainDataset([Stream(2), Stream(3)])) == 5
    assert [b.tolist() for b in DataLoader(Stream(5), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in DataLoader(Stream(5), batch_size=2, drop_last=True)] == [
        [0, 1],
        [2, 3],
    ]
    assert list(DataLoader(Stream(3), batch_size=None)) == [0, 1, 2]  # converted: ints stay


def test_random_split_lengths_fractions_and_generator():
    ds = list(range(10))
    a, b = random_split(ds, [3, 7], generator=tp.Generator().manual_seed(1))
    assert sorted(list(a) + list(b)) == ds and len(a) == 3
    c, d = random_split(ds, [3, 7], generator=tp.Generator().manual_seed(1))
    assert list(a) == list(c) and list(b) == list(d)
    parts = random_split(list(range(11)), [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [6, 3, 2]  # floor, then the remainder from the first
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(ds, [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(ds, [1.5, -0.5])


def test_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = tp.Generator().manual_seed(0)
    perm = list(RandomSampler(range(6), generator=g))
    assert sorted(perm) == list(range(6))
    assert perm == list(RandomSampler(range(6), generator=tp.Generator().manual_seed(0)))
    draws = list(RandomSampler(range(3), replacement=True, num_samples=70))
    assert len(draws) == 70 and set(draws) <= {0, 1, 2}
    assert len(list(RandomSampler(range(3), num_samples=7))) == 7
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(3), num_samples=0)
    assert sorted(SubsetRandomSampler([5, 7, 9])) == [5, 7, 9]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0], 5))
    assert w == [1] * 5
    assert sorted(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False)) == [0, 1, 2]
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0]], 1)
    assert list(BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(range(5), 2, True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, False)) == 3
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(5), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(5), 2, 1)


def test_distributed_sampler_shards_pads_and_reshuffles_per_epoch():
    shards = [list(DistributedSampler(range(10), 3, r, shuffle=False)) for r in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    dropped = [list(DistributedSampler(range(10), 3, r, False, drop_last=True)) for r in range(3)]
    assert dropped == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    s = DistributedSampler(range(8), num_replicas=2, rank=1, seed=3)
    e0 = list(s)
    assert e0 == list(DistributedSampler(range(8), num_replicas=2, rank=1, seed=3))
    s.set_epoch(1)
    assert sorted(list(s) + list(DistributedSampler(range(8), 2, 0, seed=3).__iter__())) != []
    full = [list(DistributedSampler(range(8), 2, r, seed=3)) for r in range(2)]
    assert sorted(full[0] + full[1]) == list(range(8))
    with pytest.raises(
        ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"
    ):
        DistributedSampler(range(8), 2, 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_workers": -1}, "num_workers option should be non-negative"),
        ({"timeout": -1}, "timeout option should be non-negative"),
        ({"prefetch_factor": 2}, "prefetch_factor option could only be specified in multi"),
        ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
        ({"shuffle": True, "sampler": [0]}, "sampler option is mutually exclusive with shuffle"),
        (
            {"batch_sampler": [[0]], "batch_size": 2},
            "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
            "and drop_last",
        ),
        ({"batch_size": None, "drop_last": True}, "batch_size=None option disables auto-batch"),
        ({"multiprocessing_context": "fork"}, "multiprocessing_context can only be used with"),
        ({"num_workers": 1, "multiprocessing_context": "nope"}, "should specify a valid start"),
    ],
)
def test_dataloader_argument_errors_are_pytorchs(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DataLoader(list(range(4)), **kwargs)


def test_dataloader_iterable_dataset_errors_and_frozen_attributes():
    with pytest.raises(
        ValueError, match="expected unspecified shuffle option, but got shuffle=True"
    ):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(3), sampler=[0])
    dl = DataLoader(list(range(4)))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader"):
        dl.batch_size = 3


def xy(n: int = 20) -> TensorDataset:
    return TensorDataset(tp.arange(2 * n, dtype=tp.float32).reshape(n, 2), tp.arange(n))


def batches(loader):
    return [(b[0].tolist(), b[1].tolist()) for b in loader]


def test_dataloader_basics():
    dl = DataLoader(xy(5), batch_size=2)
    assert len(dl) == 3
    assert batches(dl) == [([[0, 1], [2, 3]], [0, 1]), ([[4, 5], [6, 7]], [2, 3]), ([[8, 9]], [4])]
    assert len(DataLoader(xy(5), batch_size=2, drop_last=True)) == 2
    samples = list(DataLoader(xy(2), batch_size=None))
    assert samples[1][1].item() == 1 and samples[1][0].shape == (2,)
    custom = DataLoader(list(range(5)), batch_size=2, collate_fn=lambda b: sum(b))
    assert list(custom) == [1, 5, 4]
    by_batch_sampler = DataLoader(list(range(4)), batch_sampler=[[3, 0], [1]])
    assert [b.tolist() for b in by_batch_sampler] == [[3, 0], [1]]
    dl = DataLoader(xy(4), pin_memory=True)  # a documented no-op
    assert len(batches(dl)) == 4


def test_a_seeded_generator_gives_the_same_order_every_run():
    def order():
        g = tp.Generator().manual_seed(7)
        return [b[1].tolist() for b in DataLoader(xy(), batch_size=3, shuffle=True, generator=g)]

    first = order()
    assert first == order()
    assert sorted(sum(first, [])) == list(range(20))
    tp.manual_seed(5)
    a = [b[1].tolist() for b in DataLoader(xy(), batch_size=3, shuffle=True)]
    tp.manual_seed(5)
    assert a == [b[1].tolist() for b in DataLoader(xy(), batch_size=3, shuffle=True)]


def test_two_workers_give_the_same_batches_as_none_in_a_deterministic_order():
    def run(workers, **kw):
        g = tp.Generator().manual_seed(11)
        dl = DataLoader(xy(), batch_size=4, shuffle=True, generator=g, num_workers=workers, **kw)
        return batches(dl)

    single = run(0)
    assert run(2) == single
    assert run(2, prefetch_factor=1) == single
    unordered = run(2, in_order=False)
    assert sorted(unordered) == sorted(single)


class Seeds(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return (info.id, info.seed, tp.rand(1).item(), os.getpid())


def test_workers_are_seeded_from_the_loaders_generator_and_run_worker_init_fn():
    def run():
        g = tp.Generator().manual_seed(3)
        return list(DataLoader(Seeds(), batch_size=None, num_workers=2, generator=g))

    a, b = run(), run()
    assert [x[:3] for x in a] == [x[:3] for x in b]  # seeds and draws repeat per seed
    base = a[0][1] - a[0][0]
    assert all(seed == base + wid for wid, seed, _, _ in a)
    assert {wid for wid, *_ in a} == {0, 1} and len({pid for *_, pid in a}) == 2

    calls = []

    def init(worker_id):
        info = get_worker_info()
        assert info.id == worker_id and info.num_workers == 2
        tp.manual_seed(100)  # visible in the worker's draws

    out = list(DataLoader(Seeds(), batch_size=None, num_workers=2, worker_init_fn=init))
    assert not calls
    first_draw = tp.rand(1, generator=tp.Generator().manual_seed(100)).item()
    assert out[0][2] == pytest.approx(first_draw)


def test_iterable_dataset_sharded_by_worker_info():
    got = [b.tolist() for b in DataLoader(Stream(10), batch_size=3, num_workers=2)]
    assert sorted(sum(got, [])) == list(range(10))
    assert got[0] == [0, 2, 4] and got[1] == [1, 3, 5]


class Failing(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise ValueError("sample 2 is broken")
        return i


def test_an_error_in_a_worker_is_raised_again_with_its_traceback():
    with pytest.raises(ValueError, match=r"Caught ValueError in DataLoader worker process \d") as e:
        list(DataLoader(Failing(), num_workers=2))
    assert "sample 2 is broken" in str(e.value) and "Traceback" in str(e.value)


class Slow(Dataset):
    def __len__(self) -> int:
        return 1

    def __getitem__(self, i):
        import time

        time.sleep(0.5)
        return i


def test_timeout():
    it = iter(DataLoader(Slow(), num_workers=1, timeout=0.1))
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.1 seconds"):
        next(it)
    it._shutdown_workers()  # waits for the sleeping worker (it finishes its sample)


def test_persistent_workers_serve_several_epochs_and_shut_down_cleanly():
    dl = DataLoader(xy(8), batch_size=3, num_workers=2, persistent_workers=True)
    e1 = batches(dl)
    it = dl._iterator
    pids = [w.pid for w in it._workers]
    assert batches(dl) == e1 and [w.pid for w in dl._iterator._workers] == pids
    next(iter(dl))  # stopped early: the next epoch still starts clean
    assert batches(dl) == e1
    it._shutdown_workers()
    assert not any(w.is_alive() for w in it._workers)


def test_workers_stop_when_the_iterator_is_dropped_and_leave_no_shared_memory():
    big = TensorDataset(tp.randn(16, 65536))
    it = iter(DataLoader(big, batch_size=4, num_workers=2))
    first = next(it)
    assert first[0].shape == (4, 65536)
    workers = list(it._workers)
    prefix = it._shm_prefix
    del it, first
    gc.collect()
    assert not any(w.is_alive() for w in workers)
    if prefix is not None:
        assert not [f for f in os.listdir(_shared.SHM_DIR) if f.startswith(prefix)]


@pytest.mark.skipif(not _shared.shm_available(), reason="no /dev/shm")
def test_large_tensors_travel_through_shared_memory_without_a_copy_in_the_pickle():
    prefix = f"tp_test_{os.getpid()}_"
    pool = _shared.WorkerPool(prefix)
    t = tp.randn(512, 256)  # 512 KiB
    payload = _shared.dumps([t, tp.ones(3)], pool)
    assert len(payload) < 2048  # the 512 KiB are not in the pickle
    assert len(pickle.dumps(t)) > 500000
    freed = _shared.register(prefix)
    try:
        back = _shared.loads(payload)
        assert tp.equal(back[0], t) and back[1].tolist() == [1.0, 1.0, 1.0]
        back[0].add_(1)  # writable, own memory
        assert tp.allclose(back[0], t + 1)
        view = back[0][:2]
        del back
        gc.collect()
        assert not freed  # a view still maps the file
        del view
        gc.collect()
        [name] = freed  # the file comes back for the worker to write into again
        pool.give_back([freed.popleft()])
        again = _shared.dumps([t], pool)
        assert pickle.loads(again)[0].tolist() == t.tolist() and next(pool.counter) == 1
    finally:
        _shared.unregister(prefix)
        _shared.cleanup(prefix)
    assert not [f for f in os.listdir(_shared.SHM_DIR) if f.startswith(prefix)]


def test_training_from_a_shuffled_tensor_dataset_runs_as_written_for_torch():
    pytest.importorskip("tensorplug_autograd")
    torch = tp  # the PyTorch program below, with torch replaced by tensorplug
    nn = torch.nn
    from tensorplug.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    x = torch.randn(64, 3)
    y = (x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3).squeeze(1)
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    loss_fn = nn.MSELoss()
    first = None
    for _epoch in range(15):
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb).squeeze(1), yb)
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
    assert loss.item() < first / 10


def test_dataloader_matches_torch_for_a_given_index_order():
    pytest.importorskip("torch")
    from torch.utils.data import DataLoader as TorchLoader

    data = [{"a": i, "b": np.full(2, i, dtype=np.float32), "c": (i, "s")} for i in range(5)]
    ours = list(DataLoader(data, batch_size=2))
    theirs = list(TorchLoader(data, batch_size=2))
    for o, t in zip(ours, theirs, strict=True):
        assert o["a"].tolist() == t["a"].tolist() and o["a"].dtype.name == str(t["a"].dtype)[6:]
        assert o["b"].tolist() == t["b"].tolist()
        assert o["c"][0].tolist() == t["c"][0].tolist() and o["c"][1] == t["c"][1]


class BigStream(IterableDataset):
    """Worker 0 yields 3 samples of 512 KiB, worker 1 one: one stream ends first."""

    def __iter__(self):
        info = get_worker_info()
        n = 3 if info is None or info.id == 0 else 1
        return (tp.full([131072], float(i)) for i in range(n))


def test_persistent_workers_over_uneven_streams_of_large_tensors():
    dl = DataLoader(BigStream(), batch_size=1, num_workers=2, persistent_workers=True)
    for _ in range(3):
        got = sorted(b[0, 0].item() for b in dl)
        assert got == [0.0, 0.0, 1.0, 2.0]
    prefix = dl._iterator._shm_prefix
    dl._iterator._shutdown_workers()
    if prefix is not None:
        assert not [f for f in os.listdir(_shared.SHM_DIR) if f.startswith(prefix)]


def test_tensorplug_utils_is_imported_on_first_use_only():
    import subprocess
    import sys

    code = (
        "import sys, tensorplug as tp\n"
        "assert 'tensorplug.utils' not in sys.modules\n"
        "assert tp.utils.data.DataLoader is not None and tp.utils.checkpoint.checkpoint\n"
        "import tensorplug.utils.data\n"
        "assert 'utils' in dir(tp) and 'data' in dir(tp.utils)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
