"""tensorplug-cuda on a real GPU with CuPy (marked ``gpu``; skipped without one).

The GPU run is one command (docs/cuda.md)::

    uv run --all-packages --extra cuda12 pytest -m gpu

It runs these tests and the ``cuda`` cases of the device-generic op and gradient tests
(tests/ops/test_ops.py, tests/autograd/test_formulas.py). Oracles: numpy on the host, and
PyTorch's documented behaviour.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

pytestmark = needs.gpu
# TENSORPLUG_TEST_CUDA_STANDIN=1 runs these on the CuPy stand-in (docs/cuda.md): its arrays do
# not come from its memory pool, so the memory test means nothing there
STANDIN = os.environ.get("TENSORPLUG_TEST_CUDA_STANDIN") == "1"


def test_plugin_reports_the_devices():
    assert tp.cuda.is_available() and tp.cuda.device_count() >= 1
    info = tp.plugins.get("cuda")
    assert info.devices == ("cuda",)
    assert isinstance(tp.cuda.get_device_name(), str) and tp.cuda.get_device_name()


def test_round_trip_and_arithmetic_against_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 48)).astype(np.float32)
    b = rng.standard_normal((48, 32)).astype(np.float32)
    ta, tb = tp.tensor(a).cuda(), tp.tensor(b, device="cuda")
    assert ta.device == tp.device("cuda", tp.cuda.current_device())
    np.testing.assert_array_equal(ta.cpu().numpy(), a)
    np.testing.assert_allclose((ta @ tb).cpu().numpy(), a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        (ta.exp() * 2 - 1).sum(1).cpu().numpy(), (np.exp(a) * 2 - 1).sum(1), rtol=1e-5
    )
    half = ta.half() @ tb.half()
    assert half.dtype is tp.float16
    np.testing.assert_allclose(half.float().cpu().numpy(), a @ b, rtol=2e-2, atol=5e-2)


def test_sort_keeps_ties_in_order_and_randperm_is_a_permutation():
    x = tp.tensor([3, 1, 2, 1, 3, 1], device="cuda")
    values, indices = x.sort(stable=True)
    assert values.tolist() == [1, 1, 1, 2, 3, 3] and indices.tolist() == [1, 3, 5, 2, 0, 4]
    tp.cuda.manual_seed(0)
    p = tp.randperm(1000, device="cuda")
    assert sorted(p.tolist()) == list(range(1000))
    tp.cuda.manual_seed(0)
    assert tp.randperm(1000, device="cuda").tolist() == p.tolist()


def test_errors_on_a_gpu():
    x = tp.ones([2], device="cuda")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x + tp.ones([2])
    with pytest.raises(TypeError, match="can't convert cuda:"):
        x.numpy()
    with pytest.raises(RuntimeError, match="dtype bfloat16 is not supported by the CUDA"):
        x.to(tp.bfloat16)
    # an index out of range raises as on the CPU, PyTorch's IndexError (CuPy itself would wrap
    # it silently)
    with pytest.raises(IndexError) as on_cpu:
        tp.index_select(x.cpu(), 0, tp.tensor([5]))
    with pytest.raises(type(on_cpu.value), match=f"^{re.escape(str(on_cpu.value))}$"):
        tp.index_select(x, 0, tp.tensor([5], device="cuda"))


@pytest.mark.skipif(STANDIN, reason="the CuPy stand-in allocates no pool memory for arrays")
def test_memory_statistics_follow_allocations():
    tp.cuda.empty_cache()
    tp.cuda.reset_peak_memory_stats()
    before = tp.cuda.memory_allocated()
    x = tp.empty([1 << 20], device="cuda")  # 4 MiB of float32
    assert tp.cuda.memory_allocated() >= before + 4 * (1 << 20)
    del x
    assert tp.cuda.memory_allocated() == before
    assert tp.cuda.max_memory_allocated() >= before + 4 * (1 << 20)
    assert tp.cuda.memory_reserved() >= 4 * (1 << 20)
    tp.cuda.empty_cache()
    tp.cuda.reset_peak_memory_stats()
    assert tp.cuda.max_memory_allocated() == tp.cuda.memory_allocated()


def test_streams_and_event_timing():
    s = tp.cuda.Stream()
    start, end = tp.cuda.Event(enable_timing=True), tp.cuda.Event(enable_timing=True)
    with tp.cuda.stream(s):
        assert tp.cuda.current_stream() == s
        start.record()
        x = tp.randn([512, 512], device="cuda")
        for _ in range(10):
            x = x @ x / 512
        end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0.0
    tp.cuda.synchronize()
    assert s.query()


@pytest.mark.skipif("autograd" not in tp.plugins.loaded_names(), reason="needs autograd")
def test_training_step_matches_the_cpu():
    tp.manual_seed(0)
    model = tp.nn.Sequential(tp.nn.Linear(8, 16), tp.nn.ReLU(), tp.nn.Linear(16, 3))
    x, y = tp.randn([32, 8]), tp.randint(0, 3, [32])
    loss_cpu = tp.nn.functional.cross_entropy(model(x), y)
    loss_cpu.backward()
    grads_cpu = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    model.cuda()
    loss = tp.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    loss.backward()
    assert abs(loss.item() - loss_cpu.item()) < 1e-5
    for p, g in zip(model.parameters(), grads_cpu, strict=True):
        assert p.grad.device.type == "cuda"
        np.testing.assert_allclose(p.grad.cpu().numpy(), g, rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(not needs.HAS_GPU or tp.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_two_devices():
    a = tp.ones([4], device="cuda:1")
    with tp.cuda.device(0):
        b = (a * 3).sum()  # runs on cuda:1 whatever device is current
    assert b.device == tp.device("cuda:1") and b.item() == 12.0
    c = tp.zeros([4], device="cuda:0")
    c.copy_(a)
    assert c.tolist() == [1.0] * 4
    with pytest.raises(RuntimeError, match="cuda:0 and cuda:1"):
        c + a


@pytest.mark.skipif(
    not {"autograd", "autocast"} <= set(tp.plugins.loaded_names()),
    reason="needs autograd and autocast",
)
def test_float16_autocast_training_with_a_grad_scaler():
    # PyTorch's CUDA recipe: float16 is the default dtype of a cuda region, matmuls run in it,
    # cross_entropy in float32 (CUDA's float32 list), and GradScaler scales the loss
    tp.manual_seed(0)
    model = tp.nn.Sequential(tp.nn.Linear(8, 32), tp.nn.ReLU(), tp.nn.Linear(32, 3)).cuda()
    x = tp.randn([64, 8])
    y = ((x[:, 0] > 0).long() + (x[:, 1] > 0).long()).cuda()  # classes a model can learn
    x = x.cuda()
    opt = tp.optim.SGD(model.parameters(), lr=0.5)
    scaler = tp.amp.GradScaler("cuda")
    losses = []
    for _ in range(20):
        opt.zero_grad()
        with tp.autocast("cuda"):
            assert tp.get_autocast_dtype("cuda") is tp.float16
            logits = model(x)
            loss = tp.nn.functional.cross_entropy(logits, y)
        assert logits.dtype is tp.float16 and loss.dtype is tp.float32
        scaler.scale(loss).backward()
        assert all(p.grad.dtype is tp.float32 for p in model.parameters())
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert scaler.get_scale() == 2.0**16  # no step was skipped: float16 kept the grads finite
    assert losses[-1] < 0.7 * losses[0], losses
    # the float16 forward agrees with the float32 one within float16's precision
    with tp.no_grad():
        with tp.autocast("cuda"):
            low = model(x).float()
        np.testing.assert_allclose(low.cpu().numpy(), model(x).cpu().numpy(), atol=5e-2, rtol=5e-2)
