"""tensorplug-cuda end to end on the CuPy stand-in (tests/cuda_plugin/standin_cupy.py, a numpy-backed
TEST DOUBLE with two fake devices): tensors on ``cuda``/``cuda:1``, transfers, cross-device
copies and errors, ``repr``, ``.numpy()``, modules, autograd through ``AutogradCUDA``, and the
``tp.cuda`` API. This checks the plugin's wiring without a GPU; CuPy's own behaviour is
checked by ``tests/cuda_plugin/test_gpu.py`` (``pytest -m gpu``)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import dispatcher

from .conftest import HAS_CUDA_PLUGIN

pytestmark = pytest.mark.skipif(not HAS_CUDA_PLUGIN, reason="needs tensorplug-cuda loaded")

SAME_DEVICE = "Expected all tensors to be on the same device, but found at least two devices"


def device_of(t: tp.Tensor) -> int:
    """The stand-in device the tensor's array lives on."""
    return int(t._data.device_id)


# --- tensors and devices ----------------------------------------------------------------------


def test_cuda_means_the_current_device(standin):
    x = tp.ones([2], device="cuda")
    assert x.device == tp.device("cuda:0") and x.device.index == 0 and device_of(x) == 0
    assert repr(x) == "tensor([1., 1.], device='cuda:0')"
    with tp.cuda.device(1):
        y = tp.zeros([2], device="cuda")
        z = tp.tensor([1, 2], device="cuda")
    assert y.device == tp.device("cuda:1") and device_of(y) == 1
    assert repr(z) == "tensor([1, 2], device='cuda:1')"
    assert tp.cuda.current_device() == 0  # restored


def test_indexed_devices_and_transfers(standin):
    host = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = host.cuda()
    b = host.cuda(1)
    c = host.to("cuda:1", non_blocking=True)
    d = host.to(tp.device("cuda", 0), tp.float64)
    assert (a.device, b.device, c.device, d.device) == tuple(
        tp.device(s) for s in ("cuda:0", "cuda:1", "cuda:1", "cuda:0")
    )
    assert d.dtype is tp.float64 and device_of(b) == 1
    for t in (a, b, c, d):
        back = t.cpu()
        assert back.device == tp.device("cpu") and isinstance(back.numpy(), np.ndarray)
        np.testing.assert_array_equal(back.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    assert a.to("cuda") is a and a.cuda() is a and a.to("cuda:0") is a  # no copy, as torch
    with tp.cuda.device(1):
        moved = a.to("cuda")  # "cuda" is now cuda:1
    assert moved.device == tp.device("cuda:1") and device_of(moved) == 1
    assert b.to("cuda:0").device == tp.device("cuda:0")
    with pytest.raises(RuntimeError, match="Invalid device, must be cuda device, got cpu"):
        host.cuda("cpu")


def test_numpy_of_a_cuda_tensor_refuses_with_torchs_message(standin):
    x = tp.ones([2], device="cuda")
    with pytest.raises(TypeError) as info:
        x.numpy()
    assert str(info.value) == (
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
        "to host memory first."
    )
    assert x.tolist() == [1.0, 1.0] and x.sum().item() == 2.0  # these copy to the host
    assert np.asarray(x).tolist() == [1.0, 1.0]


def test_ops_run_on_their_tensors_device(standin):
    y = tp.tensor([1.0, 2.0], device="cuda:1")
    # the stand-in, as CuPy, refuses arrays of a device other than the current one (0):
    # the backend runs each kernel with its tensors' device current (Note [Device guard])
    r = (y * 2 + 1).exp().sum()
    assert r.device == tp.device("cuda:1") and device_of(r) == 1
    m = tp.randn([3, 3], device="cuda:1")
    assert device_of(m @ m) == 1 and device_of(tp.cat([y, y])) == 1
    assert tp.cuda.current_device() == 0


def test_mixing_devices_raises_torchs_error(standin):
    x, y, host = tp.ones([2], device="cuda"), tp.ones([2], device="cuda:1"), tp.ones([2])
    with pytest.raises(RuntimeError, match=re.escape(f"{SAME_DEVICE}, cuda:0 and cpu!")):
        x + host
    with pytest.raises(RuntimeError, match=re.escape(f"{SAME_DEVICE}, cuda:0 and cuda:1!")):
        x + y
    with pytest.raises(RuntimeError, match=re.escape(f"{SAME_DEVICE}, cuda:1 and cpu!")):
        tp.mm(tp.ones([2, 2], device="cuda:1"), tp.ones([2, 2]))
    with pytest.raises(RuntimeError, match=re.escape(f"{SAME_DEVICE}, cuda:0 and cuda:1!")):
        tp.cat([x, y])
    # a CPU 0-dim tensor and Python scalars mix with any device, as in PyTorch
    assert (y + tp.tensor(2.0)).tolist() == [3.0, 3.0]
    assert (y * 3).device == tp.device("cuda:1")


def test_copy_across_devices(standin):
    host = tp.zeros([2])
    src = tp.tensor([3.0, 4.0], device="cuda:1")
    host.copy_(src)
    assert host.tolist() == [3.0, 4.0]
    dst = tp.zeros([2], device="cuda")
    dst.copy_(src)  # cuda:1 -> cuda:0
    assert dst.tolist() == [3.0, 4.0] and device_of(dst) == 0
    src.copy_(tp.tensor([5.0, 6.0], dtype=tp.float64))  # from the host, with a cast
    assert src.tolist() == [5.0, 6.0] and src.dtype is tp.float32 and device_of(src) == 1
    dst[0] = tp.tensor(9.0)
    assert dst.tolist() == [9.0, 4.0]


def test_bfloat16_is_refused_with_the_dtypes_there_are(standin):
    supported = "it supports bool, uint8, int8, int16, int32, int64, float16, float32, float64"
    with pytest.raises(RuntimeError) as info:
        tp.zeros([2], dtype=tp.bfloat16, device="cuda")
    assert str(info.value).startswith(
        "aten::zeros: dtype bfloat16 is not supported by the CUDA backend; " + supported
    )
    with pytest.raises(RuntimeError, match=re.escape("aten::_to_copy: dtype bfloat16 is not")):
        tp.ones([2], dtype=tp.bfloat16).cuda()
    with pytest.raises(RuntimeError, match=re.escape("aten::_to_copy: dtype bfloat16 is not")):
        tp.ones([2], device="cuda").to(tp.bfloat16)
    assert not tp.cuda.is_bf16_supported()
    half = tp.ones([2], device="cuda", dtype=tp.float16) * 3  # float16 is there
    assert half.dtype is tp.float16 and half.tolist() == [3.0, 3.0]


def test_random_numbers_are_reproducible_per_device(standin):
    tp.cuda.manual_seed(7)
    a = tp.randn([5], device="cuda")
    p = tp.randperm(6, device="cuda:1")  # CuPy's generators have no permutation: the backend's
    tp.cuda.manual_seed(7)
    assert tp.randn([5], device="cuda").tolist() == a.tolist()
    assert tp.randperm(6, device="cuda:1").tolist() == p.tolist()
    assert sorted(p.tolist()) == list(range(6)) and device_of(p) == 1
    tp.manual_seed(7)  # every default generator, CUDA's included
    assert tp.randn([5], device="cuda").tolist() == a.tolist()
    w = tp.tensor([[1.0, 2.0, 3.0, 4.0]], device="cuda")
    drawn = tp.multinomial(w, 4)  # without replacement: argsort(stable=) on CuPy
    assert sorted(drawn.tolist()[0]) == [0, 1, 2, 3]


def test_module_cuda_and_cpu(standin):
    model = tp.nn.Sequential(tp.nn.Linear(3, 4), tp.nn.ReLU(), tp.nn.Linear(4, 2))
    assert model.cuda() is model
    assert {p.device for p in model.parameters()} == {tp.device("cuda:0")}
    out = model(tp.randn([5, 3], device="cuda"))
    assert out.device == tp.device("cuda:0") and out.shape == (5, 2)
    model.cuda(1)
    assert {p.device for p in model.parameters()} == {tp.device("cuda:1")}
    assert model(tp.randn([5, 3], device="cuda:1")).device == tp.device("cuda:1")
    model.cpu()
    assert {p.device for p in model.parameters()} == {tp.device("cpu")}
    loss = tp.nn.CrossEntropyLoss(weight=tp.tensor([1.0, 2.0])).cuda()  # a buffer
    assert {b.device for b in loss.buffers()} == {tp.device("cuda:0")}


@pytest.mark.skipif("autograd" not in tp.plugins.loaded_names(), reason="needs autograd")
def test_autograd_runs_through_autograd_cuda(standin):
    x = tp.tensor([1.0, -2.0, 3.0], device="cuda", requires_grad=True)
    assert "AutogradCUDA" in tp.keys.DispatchKeySet(x._tp_keyset).names()
    text = dispatcher.explain(tp.ops.aten.mul.Tensor, x, x)
    assert "AutogradCUDA" in text
    loss = (x * x).sum()
    assert repr(loss).startswith("tensor(14., device='cuda:0', grad_fn=<")
    loss.backward()
    assert x.grad is not None and x.grad.device == tp.device("cuda:0")
    assert x.grad.tolist() == [2.0, -4.0, 6.0]
    model = tp.nn.Linear(3, 1).cuda(1)
    model(tp.randn([4, 3], device="cuda:1")).sum().backward()
    assert model.weight.grad is not None and device_of(model.weight.grad) == 1


@pytest.mark.skipif(
    not {"autograd", "autocast"} <= set(tp.plugins.loaded_names()),
    reason="needs autograd and autocast",
)
@pytest.mark.parametrize("requires_grad", [False, True])
def test_cross_entropy_in_a_cuda_region_is_float32(standin, requires_grad):
    # cross_entropy_loss is in no autocast list (PyTorch's neither): its log_softmax meets
    # CUDA's float32 policy, so the loss is float32 as in PyTorch, also through autograd's
    # single CrossEntropyLoss node (Note [Fused nodes of composite ops])
    logits = tp.randn([4, 3], device="cuda").half().requires_grad_(requires_grad)
    target = tp.tensor([0, 2, 1, 0], device="cuda")
    with tp.autocast("cuda"):
        loss = tp.nn.functional.cross_entropy(logits, target)
    assert loss.dtype is tp.float32
    expected = tp.nn.functional.cross_entropy(logits.float(), target)
    assert abs(loss.item() - expected.item()) < 1e-6
    if requires_grad:
        loss.backward()
        assert logits.grad is not None and logits.grad.dtype is tp.float16


# --- tp.cuda over the stand-in ------------------------------------------------------------------


def test_device_queries(standin):
    assert tp.cuda.is_available() and tp.cuda.device_count() == 2
    assert tp.cuda.current_device() == 0
    assert tp.cuda.get_device_name(1) == "Stand-in GPU 1"
    tp.cuda.set_device("cuda:1")
    try:
        assert tp.cuda.current_device() == 1
        with tp.cuda.device(0):
            assert tp.cuda.current_device() == 0
        assert tp.cuda.current_device() == 1
    finally:
        tp.cuda.set_device(0)
    tp.cuda.synchronize(1)
    tp.cuda.synchronize()
    assert standin._state.synchronized == [1, 0]
    with pytest.raises(ValueError, match="^Expected a cuda device, but got: cpu$"):
        tp.cuda.set_device("cpu")
    with pytest.raises(RuntimeError, match=r"invalid CUDA device index 2: 2 CUDA device\(s\)"):
        tp.cuda.synchronize(2)
    with pytest.raises(TypeError, match="expected a device index"):
        tp.cuda.set_device(1.5)


def test_streams_and_events(standin):
    s = tp.cuda.Stream()
    assert isinstance(s, tp.cuda.Stream) and s.device == tp.device("cuda:0")
    default = tp.cuda.current_stream()
    assert default != s and default.cuda_stream == 0
    with tp.cuda.stream(s):
        assert tp.cuda.current_stream() == s
        y = tp.ones([3], device="cuda") * 2
    assert tp.cuda.current_stream() == default and y.tolist() == [2.0, 2.0, 2.0]
    s1 = tp.cuda.Stream(device=1)
    with tp.cuda.stream(s1):  # also makes its device current
        assert tp.cuda.current_device() == 1 and tp.cuda.current_stream() == s1
    assert tp.cuda.current_device() == 0
    start, end = tp.cuda.Event(enable_timing=True), tp.cuda.Event(enable_timing=True)
    start.record()
    tp.ones([4], device="cuda").sum()
    end.record(s)
    end.synchronize()
    assert start.query() and s.query()
    assert start.elapsed_time(end) >= 0.0
    s.wait_event(end)
    s.wait_stream(default)
    assert s.record_event().query()
    s.synchronize()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        tp.cuda.Event().elapsed_time(end)
    with pytest.raises(RuntimeError, match="must be recorded"):
        tp.cuda.Event(enable_timing=True).elapsed_time(end)


def test_memory_statistics_from_the_pool(standin):
    tp.cuda.empty_cache()
    base = tp.cuda.memory_allocated()
    tp.cuda.reset_peak_memory_stats()
    assert tp.cuda.max_memory_allocated() == base
    blocks = [standin.cuda.alloc(1000) for _ in range(3)]  # 512-byte rounding, as CuPy's pool
    assert tp.cuda.memory_allocated() == base + 3 * 1024
    del blocks
    assert tp.cuda.memory_allocated() == base
    assert tp.cuda.max_memory_allocated() == base + 3 * 1024  # the peak stays
    assert tp.cuda.memory_reserved() >= base + 3 * 1024  # freed blocks stay cached
    tp.cuda.empty_cache()
    assert tp.cuda.memory_reserved() == base
    tp.cuda.reset_peak_memory_stats()
    assert tp.cuda.max_memory_allocated() == base
    with tp.cuda.device(1):
        keep = standin.cuda.alloc(512)
    assert tp.cuda.memory_allocated(1) == 512 and tp.cuda.max_memory_allocated("cuda:1") == 512
    assert tp.cuda.memory_allocated() == base
    del keep


def test_tensorplug_plugins_lists_the_devices(standin, capsys):
    from tensorplug import cli

    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "cuda: 2 cuda device(s): cuda:0 Stand-in GPU 0, cuda:1 Stand-in GPU 1" in out
    row = next(ln for ln in out.splitlines() if ln.startswith("cuda "))
    assert "(no device)" not in row


def test_the_backend_loads_on_first_use_and_unloads(standin):
    import tensorplug_cuda

    lazy = tensorplug_cuda.LAZY
    assert lazy is not None and not lazy.loaded
    stub = tp.ops.aten.add.Tensor.kernel_for(tp.keys.keyset("CUDA"))
    assert stub.__name__ == "lazy[CUDA:add.Tensor]"
    x = tp.ones([2], device="cuda")
    assert lazy.loaded and lazy.backend is not None
    real = tp.ops.aten.add.Tensor.kernel_for(tp.keys.keyset("CUDA"))
    assert real is lazy.backend.kernels["add.Tensor"]
    assert stub(x, x, alpha=1).tolist() == [2.0, 2.0]  # a stub picked before still works
    lazy.unload()
    assert not lazy.loaded
    assert tp.ops.aten.add.Tensor.kernel_for(tp.keys.keyset("CUDA")).__name__ == stub.__name__
    assert tp.dispatcher.registrations("aten::add.Tensor")["CUDA"] == "cuda"
    assert (x + x).tolist() == [2.0, 2.0] and lazy.loaded  # loads again


def test_every_op_runs_on_the_standin(standin):
    """The first sample of each op (its first dtype CUDA has), through the op tests' harness:
    inputs made on cuda, results on cuda:0 and equal to numpy's. The full set of cases runs
    on a GPU (``pytest -m gpu``), or here with TENSORPLUG_TEST_CUDA_STANDIN=1 (docs/cuda.md)."""
    from tensorplug.testing import case_failures, has_strides
    from tests.ops.test_ops import CASES

    seen: set[str] = set()
    failures: list[str] = []
    for p in CASES:
        info, dtype, sample = p.values
        if info.name in seen or dtype == "bfloat16":
            continue
        if info.needs_strides and not has_strides("cuda"):
            continue  # the stand-in's arrays describe no memory: no strides (real CuPy's do)
        seen.add(info.name)
        failures += [f"{p.id}: {f}" for f in case_failures(info, dtype, sample, "cuda")]
    assert len(seen) > 380
    assert not failures, "\n".join(failures)
