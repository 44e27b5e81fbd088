"""Sequence models as a PyTorch user writes them (tools/gen_sequence_models.py, written against
``torch`` or ``tensorplug``): an LSTM classifier and a two-layer GRU trained 20 Adam steps from
PyTorch's initial weights give PyTorch's loss trajectory to 1e-4 (recorded in
data/sequence_models.npz, and live where torch is installed); the classifier also trains under
``tp.compile`` (one graph) and ``tp.autocast``, and ``tp.vmap(tp.func.grad(...))`` gives the
GRU model's per-sample gradients."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from needs import HAS_AUTOCAST, HAS_TRACER, autograd

import tensorplug as tp
from tests.tool_scripts import load_tool

autograd()

gen = load_tool("gen_sequence_models")
DATA = np.load(Path(__file__).parent / "data" / "sequence_models.npz")


def _state(which: str) -> dict[str, np.ndarray]:
    prefix = f"{which}/state/"
    return {k[len(prefix) :]: DATA[k] for k in DATA.files if k.startswith(prefix)}


@pytest.mark.parametrize("which", ["lstm", "gru"])
def test_matches_pytorchs_recorded_trajectory(which: str) -> None:
    _, _, losses = gen.train(tp, which, _state(which), gen.data())
    np.testing.assert_allclose(losses, DATA[f"{which}/losses"], rtol=1e-4, atol=1e-4)
    assert losses[-1] < losses[0]  # it learns


@pytest.mark.parametrize("which", ["lstm", "gru"])
def test_matches_pytorch_live(which: str) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    torch.set_num_threads(1)
    d = gen.data()
    _, init, want = gen.train(torch, which, None, d)  # fresh weights, not the recorded ones
    _, _, got = gen.train(tp, which, init, d)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _classifier(state: dict[str, np.ndarray]) -> Any:
    LSTMClassifier, _ = gen.models(tp)
    model = LSTMClassifier()
    model.load_state_dict({k: tp.tensor(v) for k, v in state.items()})
    return model


@pytest.mark.skipif(not HAS_TRACER, reason="needs the tensorplug-tracer plugin")
def test_lstm_classifier_training_step_compiles_to_one_graph() -> None:
    d = gen.data()
    model = _classifier(_state("lstm"))
    opt = tp.optim.Adam(model.parameters(), lr=gen.LR)

    def step(x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
        opt.zero_grad()
        loss = tp.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    compiled = tp.compile(step, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no TracerWarning: nothing runs eagerly
        losses = [
            float(compiled(tp.tensor(d["lstm_x"][i]), tp.tensor(d["lstm_y"][i])).item())
            for i in range(gen.STEPS)
        ]
    assert len(compiled.graphs) == 1
    np.testing.assert_allclose(losses, DATA["lstm/losses"], rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not HAS_AUTOCAST, reason="needs the tensorplug-autocast plugin")
def test_lstm_classifier_trains_under_autocast_bfloat16() -> None:
    d = gen.data()
    model = _classifier(_state("lstm"))
    opt = tp.optim.Adam(model.parameters(), lr=gen.LR)
    losses = []
    for i in range(gen.STEPS):
        opt.zero_grad()
        with tp.autocast("cpu", dtype=tp.bfloat16):
            logits = model(tp.tensor(d["lstm_x"][i]))
            assert logits.dtype is tp.bfloat16  # the head's linear runs in bfloat16
            loss = tp.nn.functional.cross_entropy(logits, tp.tensor(d["lstm_y"][i]))
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    assert all(p.dtype is tp.float32 for p in model.parameters())
    # bfloat16 rounding: close to the float32 trajectory, not equal
    np.testing.assert_allclose(losses, DATA["lstm/losses"], rtol=0.05, atol=0.05)


def test_gru_per_sample_gradients_under_vmap_equal_a_loop() -> None:
    _, GRUSequenceModel = gen.models(tp)
    tp.manual_seed(0)
    model = GRUSequenceModel()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = tp.tensor(gen.data()["gru_x"][0][:5, :4])  # (T=5, samples=4, features)

    def loss(p: dict[str, tp.Tensor], seq: tp.Tensor) -> tp.Tensor:
        batch = seq.unsqueeze(1)  # one sample as a batch of one: (T, 1, features)
        pred = tp.func.functional_call(model, p, (batch[:-1],))
        return tp.nn.functional.mse_loss(pred, batch[1:])

    per_sample = tp.vmap(tp.func.grad(loss), in_dims=(None, 1))(params, x)
    for i in range(x.shape[1]):
        one = tp.func.grad(loss)(params, x[:, i])
        for k, g in one.items():
            np.testing.assert_allclose(per_sample[k][i].numpy(), g.numpy(), rtol=1e-5, atol=1e-6)


def test_gru_ensemble_of_weights_under_vmap() -> None:
    """Weights batched too (the biases fold into the fused cell's gates per sample)."""
    _, GRUSequenceModel = gen.models(tp)
    tp.manual_seed(1)
    models = [GRUSequenceModel() for _ in range(3)]
    stacked = {
        k: tp.stack([dict(m.named_parameters())[k].detach() for m in models])
        for k, _ in models[0].named_parameters()
    }
    x = tp.tensor(gen.data()["gru_x"][0][:4])

    def run(p: dict[str, tp.Tensor]) -> tp.Tensor:
        return tp.func.functional_call(models[0], p, (x,))

    out = tp.vmap(run)(stacked)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x).detach().numpy(), atol=1e-6)
