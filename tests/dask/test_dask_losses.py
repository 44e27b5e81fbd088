"""The lazy paths of nll_loss, cross_entropy and their backwards on "dask" (Note [Lazy nll_loss]
in the kit's _nn/_functions.py, Note [Lazy cross-entropy backward] in _backward.py) against the
CPU's: every reduction, ignored targets whether ignore_index is a class or not, inputs split
into several chunks; and the training step's graph against the same step written by hand with
dask.array (bench/dask_backend.py), so that its size cannot grow silently."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()

F = tp.nn.functional


def _inputs(device: str, ignore: int) -> tuple[tp.Tensor, tp.Tensor]:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(12, 5)).astype(np.float32)
    t = rng.integers(0, 5, size=12)
    t[[1, 6, 7]] = ignore  # ignored targets in two of the three chunks
    xt = tp.tensor(x, device=device, requires_grad=True)
    tt = tp.tensor(t, device=device)
    if device == "dask":
        with tp.no_grad():
            tp.dask.rechunk(xt, (4, 5))
        tp.dask.rechunk(tt, (4,))
    return xt, tt


def _loss_and_grad(device: str, fn: str, reduction: str, ignore: int) -> tuple[np.ndarray, ...]:
    x, t = _inputs(device, ignore)
    inp = F.log_softmax(x, 1) if fn == "nll_loss" else x
    loss = getattr(F, fn)(inp, t, reduction=reduction, ignore_index=ignore)
    # a non-uniform upstream gradient for "none": each row's coefficient its own
    up = tp.arange(1.0, 13.0, device=device) if reduction == "none" else None
    loss.backward(up)
    assert x.grad is not None
    return loss.detach().cpu().numpy(), x.grad.cpu().numpy()


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore", [-100, 2], ids=["ignore_not_a_class", "ignore_a_class"])
def test_lazy_losses_and_gradients_match_the_cpu(fn, reduction, ignore):
    want = _loss_and_grad("cpu", fn, reduction, ignore)
    got = _loss_and_grad("dask", fn, reduction, ignore)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    # ignored rows get exact zeros, as PyTorch (which never writes them)
    grad = got[1]
    assert not np.any(grad[[1, 6, 7]])


def test_every_target_ignored_gives_nan_mean_loss_and_zero_gradients():
    """PyTorch's "mean" over no target is 0/0; the gradient is zeros (no target weighs)."""
    x = tp.randn(6, 3, device="dask", requires_grad=True)
    t = tp.full((6,), -100, dtype=tp.int64, device="dask")
    loss = F.cross_entropy(x, t)
    loss.backward()
    assert np.isnan(loss.item())
    assert x.grad is not None and x.grad.cpu().numpy().tolist() == [[0.0] * 3] * 6


def test_an_out_of_range_target_gives_nan_loss_and_nan_mean_gradients():
    """A documented difference (docs/dask.md): PyTorch raises; the check would compute."""
    x = tp.zeros(4, 3, device="dask", requires_grad=True)
    t = tp.tensor([0, 7, 1, 2], device="dask")
    loss = F.cross_entropy(x, t)
    loss.backward()
    assert np.isnan(loss.item())
    assert x.grad is not None and np.isnan(x.grad.cpu().numpy()[0]).all()
    summed = F.cross_entropy(tp.zeros(4, 3, device="dask"), t, reduction="sum")
    assert np.isnan(summed.item())


# --- the training step's graph against the hand-written step ------------------------------


def _bench():
    path = Path(__file__).resolve().parents[2] / "bench" / "dask_backend.py"
    spec = importlib.util.spec_from_file_location("dask_backend_bench_losses", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_mlp_steps_graph_is_no_larger_than_the_hand_written_steps():
    """bench/dask_backend.py's MLP step (Linear-ReLU-Linear, cross-entropy, SGD) in 8 chunks:
    the loss and gradients as dask computes them (after its optimization) take no more tasks
    than the same step written by hand with dask.array, and the whole persisted step (update
    included) no more either; the figures are docs/dask.md's at this chunking."""
    counts = _bench().step_task_counts(n=512, d=16, hidden=32, classes=4, chunk_rows=64)
    assert counts["tp_optimized"] <= counts["dask_optimized"], counts
    assert counts["tp_step_optimized"] <= counts["dask_step_optimized"], counts
    assert (counts["tp_optimized"], counts["dask_optimized"]) == (204, 210), counts
