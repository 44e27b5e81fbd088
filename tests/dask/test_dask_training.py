"""Training on "dask": an MLP with autograd and SGD matches the CPU's losses, each step computed
once (tp.dask.step), and tp.vmap and tp.compile of the step work there."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()


def _data(device: str) -> tuple[tp.Tensor, tp.Tensor]:
    rng = np.random.default_rng(0)
    x = tp.tensor(rng.normal(size=(32, 6)).astype(np.float32), device=device)
    y = tp.tensor(rng.integers(0, 3, size=32), device=device)
    return x, y


def _model(device: str) -> tp.nn.Module:
    tp.manual_seed(0)
    return tp.nn.Sequential(tp.nn.Linear(6, 16), tp.nn.ReLU(), tp.nn.Linear(16, 3)).to(device)


def _train(device: str, steps: int, *, persist: bool) -> list[float]:
    model = _model(device)
    opt = tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = tp.nn.CrossEntropyLoss()
    x, y = _data(device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        if persist:
            tp.dask.step(opt, loss)
        else:
            opt.step()
        losses.append(loss.item())
    return losses


def test_an_mlp_trains_on_dask_with_the_cpus_losses():
    want = _train("cpu", 5, persist=False)
    got = _train("dask", 5, persist=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    assert got[-1] < got[0]


def test_step_persists_so_each_step_computes_once():
    """After tp.dask.step, the parameters' graphs are their persisted chunks alone, and the
    loss is a persisted value: the next step's graph does not grow with the steps before."""
    model = _model("dask")
    opt = tp.optim.SGD(model.parameters(), lr=0.1)
    x, y = _data("dask")
    counts = []
    for _ in range(3):
        opt.zero_grad()
        loss = tp.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        counts.append(tp.dask.task_count(loss))
        tp.dask.step(opt, loss)
        for p in model.parameters():  # one task per chunk: computed values, no history
            assert tp.dask.task_count(p) == len(tp.dask.to_dask(p).__dask_keys__())
        assert tp.dask.task_count(loss) == 1
    assert counts[0] == counts[1] == counts[2]


def test_without_persist_the_graph_holds_every_step():
    model = _model("dask")
    opt = tp.optim.SGD(model.parameters(), lr=0.1)
    x, y = _data("dask")
    counts = []
    for _ in range(3):
        opt.zero_grad()
        loss = tp.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        counts.append(tp.dask.task_count(loss))
    assert counts[0] < counts[1] < counts[2]


@pytest.mark.skipif(not needs.HAS_TRACER, reason="needs tensorplug-tracer loaded")
def test_a_compiled_training_step_on_dask_matches_eager():
    def run(compiled: bool) -> list[float]:
        model = _model("dask")
        opt = tp.optim.SGD(model.parameters(), lr=0.1)
        x, y = _data("dask")

        def step(x, y):
            loss = tp.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss

        f = tp.compile(step) if compiled else step
        out = []
        for _ in range(3):
            loss = f(x, y)
            tp.dask.persist(*model.parameters(), loss)
            out.append(loss.item())
        return out

    np.testing.assert_allclose(run(True), run(False), rtol=0, atol=1e-6)


@pytest.mark.skipif("batched" not in tp.plugins.loaded_names(), reason="needs tensorplug-batched")
def test_per_sample_gradients_under_vmap_on_dask():
    """tp.vmap of tp.func.grad of the MLP's loss: per-sample gradients on dask equal the CPU's."""

    def per_sample(device: str) -> np.ndarray:
        model = _model(device)
        params = dict(model.named_parameters())
        x, y = _data(device)

        def loss_of(p, xi, yi):
            out = tp.func.functional_call(model, p, (xi[None],))
            return tp.nn.functional.cross_entropy(out, yi[None])

        g = tp.vmap(tp.func.grad(loss_of), in_dims=(None, 0, 0))(params, x[:4], y[:4])
        return g["0.weight"].detach().cpu().numpy()

    np.testing.assert_allclose(per_sample("dask"), per_sample("cpu"), rtol=1e-5, atol=1e-6)
