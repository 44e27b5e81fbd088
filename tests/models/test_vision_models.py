"""LeNet-5, a ResNet-18-style network and a UNet, written as a PyTorch user writes them
(reference.py), trained with ``torch`` replaced by ``tensorplug``.

Each run starts from the same numpy weights and data as PyTorch's and must follow PyTorch's
loss trajectory to 1e-4: the one tools/gen_model_trajectories.py recorded with torch 2.13
(data/trajectories.json), and torch's own where torch is installed. The same models run under
``tp.compile`` (one graph, no eager fallback), under ``tp.autocast`` in bfloat16, and LeNet's
per-sample gradients under ``tp.vmap``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from needs import autocast, autograd, tracer

import tensorplug as tp

from . import reference

autograd()

RECORDED = json.loads((Path(__file__).parent / "data" / "trajectories.json").read_text())["models"]
NAMES = list(reference.MODELS)


def _rel(a: list[float], b: list[float]) -> float:
    a_, b_ = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a_ - b_) / np.maximum(np.abs(b_), 1e-3)))


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_is_pytorchs(name: str) -> None:
    model = reference.MODELS[name][0](tp)
    got = {
        k: [list(v.shape), str(v.dtype).removeprefix("tensorplug.")]
        for k, v in model.state_dict().items()
    }
    assert got == RECORDED[name]["state_dict"]


@pytest.mark.parametrize("name", NAMES)
def test_trains_on_pytorchs_trajectory(name: str) -> None:
    losses, _ = reference.train(tp, name)
    want = RECORDED[name]["losses"]
    assert _rel(losses, want) < 1e-4, (losses, want)
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("name", NAMES)
def test_matches_torch_itself(name: str) -> None:
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    want, _ = reference.train(torch, name, steps=5)
    got, _ = reference.train(tp, name, steps=5)
    assert _rel(got, want) < 1e-4, (got, want)


def _step_fn(model, opt):  # type: ignore[no-untyped-def]
    F = tp.nn.functional

    def step(x, y):  # type: ignore[no-untyped-def]
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _setup(name: str):  # type: ignore[no-untyped-def]
    model = reference.MODELS[name][0](tp)
    model.load_state_dict({k: tp.tensor(v) for k, v in reference.initial_state(model).items()})
    opt = tp.optim.SGD(model.parameters(), lr=reference.LR, momentum=reference.MOMENTUM)
    x, y = next(reference.batches(name))
    return model, opt, tp.tensor(x), tp.tensor(y)


@pytest.mark.parametrize("name", NAMES)
def test_compiled_step_is_one_graph_with_eager_results(name: str) -> None:
    tracer()
    eager = reference.train(tp, name, steps=4)[0]
    model, opt, x, y = _setup(name)
    step = tp.compile(_step_fn(model, opt))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an eager fallback warns
        got = [float(step(x, y).item()) for _ in range(4)]
    assert len(step.graphs) == 1
    np.testing.assert_allclose(got, eager, rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_trains_under_bfloat16_autocast(name: str) -> None:
    autocast()
    model, opt, x, y = _setup(name)
    F = tp.nn.functional
    with tp.no_grad():
        full = float(F.cross_entropy(model(x), y).item())
    losses = []
    for _ in range(3):
        opt.zero_grad()
        with tp.autocast("cpu", dtype=tp.bfloat16):
            out = model(x)
            loss = F.cross_entropy(out, y)
        assert out.dtype == tp.bfloat16
        loss.backward()
        assert all(p.grad.dtype == tp.float32 for p in model.parameters() if p.grad is not None)
        opt.step()
        losses.append(float(loss.item()))
    assert abs(losses[0] - full) < 0.03 * abs(full)  # bfloat16 keeps ~3 significant digits
    assert np.isfinite(losses).all()


def test_lenet_per_sample_gradients_under_vmap() -> None:
    pytest.importorskip("tensorplug_batched")
    if "batched" not in tp.plugins.loaded_names():
        pytest.skip("needs the tensorplug-batched plugin loaded")
    model, _, x, y = _setup("lenet5")
    params = {k: v.detach() for k, v in model.named_parameters()}
    F = tp.nn.functional

    def loss_of(p, xi, yi):  # type: ignore[no-untyped-def]
        out = tp.func.functional_call(model, p, (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0))

    grads = tp.vmap(tp.func.grad(loss_of), in_dims=(None, 0, 0))(params, x, y)
    for i in range(x.shape[0]):
        model.zero_grad()
        F.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        for k, p in model.named_parameters():
            np.testing.assert_allclose(
                grads[k][i].numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=k
            )
