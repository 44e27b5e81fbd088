"""The core's Meta backend (docs/meta.md): tensors of a shape and a dtype, no data. The oracle
is PyTorch 2.13's behaviour on ``device="meta"`` (its messages are quoted) and, for shapes, the
same call on CPU tensors."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tensorplug as tp
from tests.needs import needs_autograd


def meta(*shape: int, **kwargs: object) -> tp.Tensor:
    return tp.empty(*shape, device="meta", **kwargs)


# --- factories and conversions ----------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: tp.empty(2, 3, device="meta"),
        lambda: tp.zeros(2, 3, device="meta"),
        lambda: tp.ones((2, 3), device="meta"),
        lambda: tp.full((2, 3), 7.0, device="meta"),
        lambda: tp.randn(2, 3, device="meta"),
        lambda: tp.rand(2, 3, device="meta"),
        lambda: tp.ones(2, 3).to("meta"),
        lambda: tp.ones(2, 3).to(device="meta"),
        lambda: tp.ones_like(tp.ones(2, 3), device="meta"),
        lambda: tp.empty_like(tp.ones(2, 3, device="meta")),
        lambda: tp.zeros_like(tp.ones(2, 3, device="meta")),
        lambda: tp.tensor([[1.0, 2, 3], [4, 5, 6]], device="meta"),
    ],
)
def test_factories_and_transfers_make_meta_tensors(make):
    t = make()
    assert t.device == tp.device("meta") and t.device.type == "meta"
    assert t.shape == (2, 3) and t.dtype is tp.float32
    assert t.numel() == 6 and t.ndim == 2


def test_dtypes_as_torch_infers_them():
    assert tp.tensor([1, 2], device="meta").dtype is tp.int64
    assert tp.tensor([True], device="meta").dtype is tp.bool
    assert tp.tensor([1j], device="meta").dtype is tp.complex64
    assert tp.tensor(3.0, device="meta").shape == ()
    assert (
        tp.arange(5, device="meta").shape == (5,) and tp.arange(5, device="meta").dtype is tp.int64
    )
    assert tp.ones(2, dtype=tp.float16).to("meta").dtype is tp.float16
    assert tp.ones(2, device="meta").to(tp.int32).dtype is tp.int32
    for d in (tp.bool, tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16,
              tp.bfloat16, tp.float32, tp.float64, tp.complex64, tp.complex128):  # fmt: skip
        assert tp.empty(3, dtype=d, device="meta").dtype is d


def test_repr_shows_size_not_values():
    # torch: tensor(..., device='meta', size=(2, 3)) ; dtype= unless the default float dtype
    assert repr(meta(2, 3)) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(tp.empty((), device="meta")) == "tensor(..., device='meta', size=())"
    assert repr(meta(2, dtype=tp.int64)) == (
        "tensor(..., device='meta', size=(2,), dtype=tensorplug.int64)"
    )
    assert str(meta(0, 4)) == "tensor(..., device='meta', size=(0, 4))"


def test_the_core_serves_meta_without_numpy():
    code = (
        "import sys, tensorplug as tp; x = tp.ones(2, 3, device='meta') @ tp.ones(3, 4, "
        "device='meta'); print(tuple(x.shape), 'numpy' in sys.modules, "
        "tp.dispatcher.registrations('aten::mm')['Meta'])"
    )
    env = {"TENSORPLUG_AUTOLOAD": "0", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(2,", "4)", "False", "tensorplug"]


# --- reading values refuses with torch's messages -------------------------------------------


@pytest.mark.parametrize(
    ("read", "exc", "text"),
    [
        (lambda t: t.sum().item(), RuntimeError, "Tensor.item() cannot be called on meta tensors"),
        (lambda t: bool(t.sum()), RuntimeError, "Tensor.item() cannot be called on meta tensors"),
        (lambda t: float(t.sum()), RuntimeError, "Tensor.item() cannot be called on meta tensors"),
        (lambda t: int(t.sum()), RuntimeError, "Tensor.item() cannot be called on meta tensors"),
        (lambda t: t.tolist(), NotImplementedError, "Cannot copy out of meta tensor; no data!"),
        (lambda t: t.to("cpu"), NotImplementedError, "Cannot copy out of meta tensor; no data!"),
        (lambda t: t.cpu(), NotImplementedError, "Cannot copy out of meta tensor; no data!"),
        (
            lambda t: tp.ones(2, 3).copy_(t),
            NotImplementedError,
            "Cannot copy out of meta tensor; no data!",
        ),
        (
            lambda t: t.numpy(),
            TypeError,
            "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
            "to host memory first.",
        ),
    ],
)
def test_reading_values_refuses(read, exc, text):
    with pytest.raises(exc) as e:
        read(meta(2, 3))
    assert text in str(e.value)


def test_writing_into_meta_from_cpu_keeps_only_metadata():
    m = meta(2, 3)
    assert m.copy_(tp.ones(2, 3)) is m and m.shape == (2, 3)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        m.copy_(tp.ones(4, 5))


REFUSAL = (
    "{op}: its result depends on the values of its inputs, which Meta tensors do not have, "
    "so it has no Meta kernel (the Meta backend computes shapes and dtypes only). Run it on "
    "tensors with data (a cpu tensor), or give the shape it produces yourself (e.g. "
    "tp.empty(n, device='meta'))"
)


@pytest.mark.parametrize(
    ("call", "op"),
    [
        (lambda t: tp.nonzero(t), "aten::nonzero"),
        (lambda t: tp.masked_select(t, t > 0), "aten::masked_select"),
        (lambda t: tp.unique(t), "aten::_unique2"),
        (lambda t: t[t > 0], "aten::index.Tensor"),
        (lambda t: tp.equal(t, t), "aten::equal"),
        (lambda t: tp.where(t > 0), "aten::nonzero"),
    ],
)
def test_data_dependent_ops_refuse_naming_the_op(call, op):
    with pytest.raises(NotImplementedError) as e:
        call(meta(2, 3))
    assert str(e.value) == REFUSAL.format(op=op)


def test_repeat_interleave_needs_output_size_as_in_torch():
    r = tp.ones(3, dtype=tp.int64, device="meta")
    with pytest.raises(
        RuntimeError, match="cannot repeat_interleave a meta tensor without output_size"
    ):
        tp.repeat_interleave(r)
    assert tp.repeat_interleave(r, output_size=7).shape == (7,)


# --- shapes, promotion and errors come from the CPU's kernels -----------------------------------


def test_ops_compute_shapes_and_dtypes():
    x, w = meta(8, 4), meta(16, 4)
    y = tp.nn.functional.linear(x, w).relu().softmax(-1)
    assert y.shape == (8, 16) and y.dtype is tp.float32 and y.device.type == "meta"
    assert (meta(2, 1, dtype=tp.int32) + meta(3, dtype=tp.float16)).shape == (2, 3)
    assert (meta(2, dtype=tp.int32) + meta(2, dtype=tp.float16)).dtype is tp.float16
    assert (meta(2, dtype=tp.int64) / 2).dtype is tp.float32
    assert meta(4, 5).sum(dim=1, keepdim=True).shape == (4, 1)
    values, indices = meta(4, 5).max(dim=0)
    assert values.shape == (5,) and indices.dtype is tp.int64
    assert meta(2, 3)[tp.zeros(4, dtype=tp.int64, device="meta")].shape == (4, 3)
    assert meta(2, 3, 4)[:, 1].shape == (2, 4)
    assert tp.cat([meta(2, 3), meta(5, 3)]).shape == (7, 3)
    assert meta(6).view(2, 3).transpose(0, 1).shape == (3, 2)
    assert tp.nn.functional.embedding(tp.zeros(5, dtype=tp.int64, device="meta"),
                                      meta(10, 3)).shape == (5, 3)  # fmt: skip


@pytest.mark.parametrize(
    ("call", "exc", "text"),
    [
        (
            lambda: meta(2, 3) + meta(2, 4),
            RuntimeError,
            "aten::add.Tensor: The size of tensor a (3) must match the size of tensor b (4) at "
            "non-singleton dimension 1",
        ),
        (
            lambda: meta(2, 3) @ meta(2, 3),
            RuntimeError,
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)",
        ),
        (lambda: meta(2, 3).view(4), RuntimeError, "shape '[4]' is invalid for input of size 6"),
        (lambda: meta(2, 3).sum(dim=2), IndexError, "Dimension out of range"),
        (lambda: -meta(2, dtype=tp.bool), RuntimeError, "Negation, the `-` operator, on a bool"),
        (
            lambda: meta(2, 3) + tp.ones(2, 3),
            RuntimeError,
            "Expected all tensors to be on the same device, but found at least two devices, meta "
            "and cpu!",
        ),
    ],
)
def test_errors_are_the_cpu_kernels(call, exc, text):
    with pytest.raises(exc) as e:
        call()
    assert text in str(e.value)


def test_a_cpu_zero_dim_tensor_mixes_with_meta_as_in_torch():
    assert (meta(2, 3) + tp.tensor(1.0)).device.type == "meta"


# --- autograd and custom ops ------------------------------------------------------------------


@needs_autograd
def test_mlp_forward_and_backward_on_meta():
    F = tp.nn.functional
    x, y = tp.randn(8, 4, device="meta"), tp.zeros(8, dtype=tp.int64, device="meta")
    w1 = tp.randn(16, 4, device="meta", requires_grad=True)
    b1 = tp.zeros(16, device="meta", requires_grad=True)
    w2 = tp.randn(3, 16, device="meta", requires_grad=True)
    loss = F.cross_entropy(F.linear(F.linear(x, w1, b1).relu(), w2), y)
    assert loss.shape == () and loss.device.type == "meta"
    loss.backward()
    for p in (w1, b1, w2):
        assert p.grad is not None
        assert p.grad.shape == p.shape and p.grad.dtype is p.dtype and p.grad.device.type == "meta"


@needs_autograd
def test_a_module_moves_to_meta_and_runs():
    model = tp.nn.Sequential(tp.nn.Linear(4, 8), tp.nn.ReLU(), tp.nn.Linear(8, 2)).to("meta")
    out = model(tp.randn(5, 4, device="meta"))
    assert out.shape == (5, 2) and out.device.type == "meta"
    out.sum().backward()
    assert all(p.grad.shape == p.shape for p in model.parameters())


def test_a_custom_op_runs_its_fake_kernel_on_meta(ns):
    calls = []
    with tp.Library(ns, "FRAGMENT") as lib:

        @tp.library.custom_op(f"{ns}::rowsum", mutates_args=(), lib=lib)
        def rowsum(x: tp.Tensor) -> tp.Tensor:
            calls.append("real")
            return x.sum(1)

        @rowsum.register_fake
        def _(x):
            calls.append("fake")
            return tp.empty(x.shape[0], dtype=x.dtype, device=x.device)

        assert rowsum(meta(4, 3)).shape == (4,) and calls == ["fake"]
        assert tp.library.opcheck(rowsum, (tp.randn(4, 3),))["test_faketensor"] == "SUCCESS"


def test_every_kit_operator_has_a_meta_kernel_and_nothing_else():
    from tensorplug import _meta
    from tensorplug.array_backend._lazy import kernel_names

    # tensorplug's own operators (Note [tensorplug operators]): Meta runs their composites
    own = {n for n in kernel_names() if "::" in n}
    assert own == {"tensorplug::cross_entropy_loss_backward", "tensorplug::linear_forward"}
    assert all(tp.dispatcher.find_op(n).has_kernel("CompositeExplicitAutograd") for n in own)
    assert set(_meta.kernel_names()) == set(kernel_names()) - own
    assert set(_meta.kernels()) == set(kernel_names())
    table = tp.dispatcher.dispatch_table("aten::mm")
    assert (
        table["Meta"] == "Meta" and tp.dispatcher.registrations("aten::mm")["Meta"] == "tensorplug"
    )


def test_value_checks_are_skipped_as_torch_skips_them():
    # torch's meta kernels check no values: an index out of range, a masked_scatter source
    # shorter than the mask's ones, and an integer division by zero pass on meta
    m = meta(2, 3)
    assert m.index_select(0, tp.tensor([5], device="meta")).shape == (1, 3)
    mask = tp.ones(2, 3, dtype=tp.bool, device="meta")
    assert m.masked_scatter(mask, meta(1)).shape == (2, 3)
    ints = tp.ones(3, dtype=tp.int64, device="meta")
    assert (ints // tp.zeros(3, dtype=tp.int64, device="meta")).shape == (3,)
    assert m.masked_fill(mask, tp.tensor(1.0, device="meta")).shape == (2, 3)
    assert tp.nn.functional.embedding(tp.tensor([99], device="meta"), m).shape == (1, 3)
    scalar = tp.empty((), device="meta")
    assert scalar.index_select(0, tp.tensor([5], device="meta")).shape == ()
    with pytest.raises(RuntimeError, match="Index to scalar can have only 1 value, got 2"):
        scalar.index_select(0, tp.tensor([0, 0], device="meta"))
