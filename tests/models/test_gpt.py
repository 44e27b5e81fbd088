"""The GPT-style model of tests/models/gpt.py trains with ``torch`` replaced by ``tensorplug``:
20 AdamW steps from copied weights give PyTorch's losses to 1e-4, eagerly, with the whole
training step under ``tp.compile`` (one graph, no eager fallback) and with the forward of
``tp.compile(model)``; under ``tp.autocast("cpu", dtype=tp.bfloat16)`` it trains and stays
near PyTorch's bf16 trajectory. The reference is torch when importable, else the trajectories
tools/gen_gpt_trajectories.py froze."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp

from . import gpt

FROZEN = json.loads(
    (Path(__file__).parent / "data" / "gpt_trajectories.json").read_text(encoding="utf-8")
)


def _reference(key: str) -> list[float]:
    return FROZEN[key]


@pytest.mark.parametrize("variant", gpt.VARIANTS)
def test_eager_trajectory_matches_pytorch(variant: str) -> None:
    losses = gpt.trajectory(tp, variant)
    np.testing.assert_allclose(losses, _reference(variant), rtol=0, atol=1e-4)
    assert losses[-1] < losses[0] - 0.5  # it learns


@pytest.mark.parametrize("variant", gpt.VARIANTS)
def test_eager_trajectory_matches_live_torch(variant: str) -> None:
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    np.testing.assert_allclose(
        gpt.trajectory(tp, variant), gpt.trajectory(torch, variant), rtol=0, atol=1e-4
    )


@pytest.mark.parametrize("variant", gpt.VARIANTS)
def test_compiled_training_step_is_one_graph(variant: str) -> None:
    model = gpt.make_model(tp, variant)
    gpt.copy_weights(tp, model)
    opt = gpt.optimizer(tp, model)
    step = tp.compile(gpt.train_step(tp, model, opt))
    with warnings.catch_warnings():
        warnings.simplefilter("error", tp.tracer.TracerWarning)
        losses = [float(step(tp.tensor(x), tp.tensor(y))) for x, y in gpt.batches()]
    np.testing.assert_allclose(losses, _reference(variant), rtol=0, atol=1e-4)
    assert len(step.graphs) == 1
    assert step.trace_count == 3  # the first step makes AdamW's state; the next two agree
    ops = {n.op.name for n in step.graphs[0].nodes}
    assert "aten::index_select.default" in ops  # the embeddings are in the graph


def test_compiled_module_reaches_the_original_and_trains() -> None:
    model = gpt.make_model(tp, "sdpa")
    gpt.copy_weights(tp, model)
    names = [n for n, _ in model.named_parameters()]
    model = tp.compile(model)
    assert type(model).__name__ == "OptimizedModule"
    assert isinstance(model, tp.nn.Module)
    assert [n for n, _ in model.named_parameters()] == ["_orig_mod." + n for n in names]
    assert list(model.state_dict()) == ["_orig_mod." + k for k in model._orig_mod.state_dict()]
    assert model.wte is model._orig_mod.wte  # attribute access reaches the original
    assert repr(model).startswith("OptimizedModule(\n  (_orig_mod): GPT(")
    opt = gpt.optimizer(tp, model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", tp.tracer.TracerWarning)
        losses = []
        for x, y in gpt.batches():
            loss = model(tp.tensor(x), tp.tensor(y))
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(float(loss))
    np.testing.assert_allclose(losses, _reference("sdpa"), rtol=0, atol=1e-4)
    assert len(model.graphs) == 1 and model.trace_count == 2

    # state_dict round trip, with the prefix as PyTorch writes it
    sd = model.state_dict()
    model.load_state_dict(sd)
    with pytest.raises(RuntimeError, match="Missing key"):
        model.load_state_dict(model._orig_mod.state_dict())


def test_compiled_module_guards_the_training_flag() -> None:
    model = gpt.make_model(tp, "sdpa", dropout=0.5)
    gpt.copy_weights(tp, model)
    compiled = tp.compile(model)
    x = tp.tensor(gpt.batches(1)[0][0])
    for _ in range(3):
        compiled(x)  # training: dropout on
    assert compiled.trace_count == 2
    compiled.eval()
    assert not model.training and not model.blocks[0].attn.training
    expected = model(x)
    for _ in range(3):
        assert tp.equal(compiled(x), expected)  # not the training graph's dropout
    assert compiled.trace_count == 4
    compiled.train()
    a, b = compiled(x), compiled(x)
    assert not tp.equal(a, b)  # dropout again


@pytest.mark.parametrize("variant", gpt.VARIANTS)
def test_autocast_bfloat16_trains_near_pytorch(variant: str) -> None:
    losses = gpt.trajectory(tp, variant, bf16=True)
    ref = _reference(variant + ":bf16")
    # bf16 products round differently from PyTorch's (1e-3 apart after 20 steps here)
    np.testing.assert_allclose(losses, ref, rtol=0, atol=5e-3)
    assert losses[-1] < losses[0]
