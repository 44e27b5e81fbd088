"""The Tensor API of DESIGN §6, on the CPU backend, with numpy as the oracle."""

from __future__ import annotations

import pytest

import tensorplug as tp
from tests import needs

np = pytest.importorskip("numpy")
pytestmark = pytest.mark.skipif(
    "cpu" not in tp.plugins.loaded_names(), reason="needs the tensorplug-cpu plugin"
)


def test_tensor_metadata():
    t = tp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3) and t.ndim == 2 and t.dim() == 2 and t.numel() == 6
    assert t.dtype is tp.float32 and t.device == tp.device("cpu") and str(t.device) == "cpu"
    assert t.size() == (2, 3) and t.size(-1) == 3 and len(t) == 2
    assert tp.tensor([1, 2]).dtype is tp.int64
    assert tp.tensor([True]).dtype is tp.bool
    assert tp.tensor(2.5).shape == () and tp.tensor(2.5).item() == 2.5
    assert tp.tensor([1, 2], dtype=tp.float64).dtype is tp.float64
    assert t.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    np.testing.assert_array_equal(t.numpy(), np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32))


def test_factories_and_device_argument():
    np.testing.assert_array_equal(tp.zeros(2, 3).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(tp.ones([2]).numpy(), np.ones(2, np.float32))
    assert tp.zeros(2, device="cpu").device.type == "cpu"
    assert tp.full([2], 7).dtype is tp.int64
    assert tp.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert tp.zeros_like(tp.ones(2, dtype=tp.float64)).dtype is tp.float64


def test_repr_looks_like_pytorch():
    assert repr(tp.tensor([1.0, 2.0, 3.0])) == "tensor([1., 2., 3.])"
    assert repr(tp.tensor([1.5, 2.0])) == "tensor([1.5000, 2.0000])"
    assert repr(tp.tensor([[1, 2], [3, 4]])) == "tensor([[1, 2],\n        [3, 4]])"
    assert repr(tp.tensor([1.0], dtype=tp.float64)) == "tensor([1.], dtype=tensorplug.float64)"
    assert repr(tp.tensor(3)) == "tensor(3)"
    assert repr(tp.tensor([True, False])) == "tensor([ True, False])"
    assert repr(tp.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert repr(tp.zeros(0)) == "tensor([])"
    big = repr(tp.arange(2000))
    assert big.startswith("tensor([   0,    1,    2,  ..., 1997, 1998, 1999])")


def test_python_operators_match_numpy():
    a_np = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    b_np = np.array([2.0, 0.5], np.float32)
    a, b = tp.tensor(a_np), tp.tensor(b_np)
    cases = {
        "a+b": (a + b, a_np + b_np),
        "a-b": (a - b, a_np - b_np),
        "a*b": (a * b, a_np * b_np),
        "a/b": (a / b, a_np / b_np),
        "a**2": (a**2, a_np**2),
        "2**b": (2**b, 2**b_np),
        "1-a": (1 - a, 1 - a_np),
        "3/b": (3 / b, 3 / b_np),
        "-a": (-a, -a_np),
        "abs": (abs(a), np.abs(a_np)),
        "a@a": (a @ a, a_np @ a_np),
        "a//b": (a // b, a_np // b_np),
        "a%b": (a % b, np.mod(a_np, b_np)),
        "a>b": (a > b, a_np > b_np),
        "a==a": (a == a, a_np == a_np),
        "a<=1": (a <= 1, a_np <= 1),
    }
    for name, (got, want) in cases.items():
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=name)
        assert got.numpy().dtype == want.dtype, name


def test_inplace_operators_bump_version_and_write_through_views():
    a = tp.zeros(2, 3)
    row = a[0]
    assert row._version == 0
    row += 1
    assert a.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    assert a._version == 1 and row._version == 1
    a.mul_(2)
    assert a._version == 2 and a[0, 0].item() == 2.0


def test_indexing_basic_and_advanced():
    x_np = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = tp.tensor(x_np)
    for idx in [
        0,
        -1,
        (1, 2),
        (slice(None), 1),
        (..., 2),
        (0, slice(1, 3)),
        (slice(None, None, 2),),
        (None, 0),
        (0, ..., None),
        (slice(1, None), slice(None), slice(0, 4, 3)),
    ]:
        np.testing.assert_array_equal(x[idx].numpy(), x_np[idx], err_msg=str(idx))
    np.testing.assert_array_equal(x[tp.tensor([1, 0])].numpy(), x_np[[1, 0]])
    mask = x > 10
    np.testing.assert_array_equal(x[mask].numpy(), x_np[x_np > 10])
    np.testing.assert_array_equal(x[0, [2, 0]].numpy(), x_np[0, [2, 0]])


def test_setitem():
    x = tp.zeros(3, 4)
    x[0] = 1.0
    x[1, 1:3] = tp.tensor([5.0, 6.0])
    x[x > 5] = 9.0
    want = np.zeros((3, 4), np.float32)
    want[0] = 1
    want[1, 1:3] = [5, 9]
    np.testing.assert_array_equal(x.numpy(), want)


def test_indexing_errors():
    x = tp.zeros(3)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[5]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 1"):
        x[0, 0]
    with pytest.raises(
        IndexError, match="tensors used as indices must be long, int, byte or bool tensors"
    ):
        x[tp.tensor([0.5])]


def test_conversions_and_to():
    t = tp.tensor([1.7, -2.2])
    assert t.to(tp.int64).tolist() == [1, -2]
    assert t.double().dtype is tp.float64 and t.long().dtype is tp.int64
    assert t.to("cpu") is t
    assert t.to(tp.float32, copy=True) is not t
    assert float(tp.tensor([2.5])) == 2.5 and int(tp.tensor(3)) == 3
    with pytest.raises(
        RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"
    ):
        bool(t)
    with pytest.raises(
        RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"
    ):
        t.item()
    np.testing.assert_array_equal(np.asarray(t), t.numpy())


def test_views_share_storage_and_version():
    x = tp.arange(6).reshape(2, 3)
    v = x.t()
    assert v._tp_version is x._tp_version and v._base is x._base  # the root base, as torch
    v[0, 1] = 100
    assert x[1, 0].item() == 100
    assert x.view(3, 2).shape == (3, 2) and x.permute(1, 0).shape == (3, 2)


def test_device_errors():
    with pytest.raises(RuntimeError, match="Unknown device type 'tpu'"):
        tp.zeros(2, device="tpu")
    with pytest.raises(RuntimeError, match="Invalid device string: 'cpu:x'"):
        tp.zeros(2, device="cpu:x")
    if "cuda" not in tp.plugins.loaded_names():
        with pytest.raises(tp.MissingPluginError, match="pip install tensorplug-cuda"):
            tp.zeros(2, device="cuda")
    with pytest.raises(
        TypeError, match=r"aten::zeros.default\(\): argument 'dtype' must be ScalarType\?, not str"
    ):
        tp.zeros(2, dtype="float32")
    with pytest.raises(
        TypeError, match="tensor\\(\\): argument 'dtype' must be tensorplug.dtype, not str"
    ):
        tp.tensor([1], dtype="float32")


def test_requires_grad_without_autograd_names_the_plugin():
    with needs.unloaded("autograd"):
        with pytest.raises(tp.MissingPluginError, match="pip install tensorplug-autograd"):
            tp.ones(2, requires_grad=True)
        with pytest.raises(tp.MissingPluginError, match="pip install tensorplug-autograd"):
            tp.tensor([1.0], requires_grad=True)
    if "autograd" in tp.plugins.loaded_names():  # loaded again as it was
        assert tp.ones(2, requires_grad=True).requires_grad


def test_named_tuple_returns():
    x = tp.tensor([[1.0, 5.0], [7.0, 2.0]])
    r = tp.max(x, 1)
    assert r.values.tolist() == [5.0, 7.0] and r.indices.tolist() == [1, 0]
    values, indices = x.min(dim=0)
    assert values.tolist() == [1.0, 2.0] and indices.tolist() == [0, 1]
    assert tp.max(x).item() == 7.0


def test_same_device_rule_with_a_second_backend():
    """The core's Meta backend is a second device to mix with CPU."""
    m = tp.ones(2, device="meta")
    c = tp.ones(2)
    with pytest.raises(
        RuntimeError,
        match="Expected all tensors to be on the same device, but found at least two devices, meta and cpu!",
    ):
        m + c
    assert (m + tp.tensor(1.0)).device.type == "meta"  # a CPU 0-dim tensor is allowed


def test_legacy_constructor_as_pytorchs():
    # tp.Tensor(...) follows torch.Tensor(...): sizes give an uninitialized tensor and data a
    # copy, both of the default dtype; a tensor gives a tensor sharing its data
    T = tp.Tensor
    assert T().shape == (0,) and T().dtype is tp.float32
    assert T(2, 3).shape == (2, 3) and T(2, 3).dtype is tp.float32 and T(0).shape == (0,)
    one = T([1, 2])
    assert one.tolist() == [1.0, 2.0] and one.dtype is tp.float32
    assert T([[1, 2], [3, 4]]).shape == (2, 2) and T([True, False]).tolist() == [1.0, 0.0]
    assert T(np.array([1, 2])).dtype is tp.float32 and T((1.5,)).tolist() == [1.5]
    assert T([], device="cpu").shape == (0,) and T(2, device=tp.device("cpu")).shape == (2,)
    src = tp.tensor([1, 2])
    shared = T(src)
    assert shared.dtype is tp.int64  # not converted
    shared[0] = 9
    assert src.tolist() == [9, 2] and src._version == 1
    tp.set_default_dtype(tp.float64)
    try:
        assert T([1]).dtype is tp.float64 and T(1).dtype is tp.float64
    finally:
        tp.set_default_dtype(tp.float32)

    class Sub(tp.Tensor):
        pass

    s = Sub([1.0, 2.0])
    assert type(s) is Sub and s.tolist() == [1.0, 2.0]

    for args, message in [
        ((2.0,), "new(): data must be a sequence (got float)"),
        ((True,), "new(): data must be a sequence (got bool)"),
        ((2, [3]), "new(): expected a size of ints (Tensor(2, 3)) or one sequence of data "
                   "(Tensor([1, 2])), got (int, list)"),
    ]:  # fmt: skip
        with pytest.raises(TypeError) as e:
            T(*args)
        assert str(e.value) == message
    with pytest.raises(RuntimeError, match="Trying to create tensor with negative dimension -1"):
        T(-1)
