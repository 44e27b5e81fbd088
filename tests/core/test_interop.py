"""Memory sharing with numpy and DLPack (core/src/tensorplug/_opset/interop.py, Note [Memory
sharing]): zero-copy round trips checked by writing through one side and reading the other;
PyTorch's refusals, warnings and messages (torch 2.13's texts, frozen here; torch itself where
it is importable); CuPy on a GPU."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

# --- from_numpy --------------------------------------------------------------------------------


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(4.0)
    t = tp.from_numpy(a)
    assert t.dtype is tp.float64 and t.shape == (4,)
    t.add_(1)  # through the tensor
    np.testing.assert_array_equal(a, [1.0, 2.0, 3.0, 4.0])
    a[0] = 100  # through the array
    assert t.tolist() == [100.0, 2.0, 3.0, 4.0]
    assert t.numpy() is not a and np.shares_memory(t.numpy(), a)
    a.shape = (2, 2)  # reshaping the array object does not reshape the tensor
    assert t.shape == (4,)
    v = tp.from_numpy(np.arange(12).reshape(3, 4)[:, 1::2])  # a strided view
    assert v.tolist() == [[1, 3], [5, 7], [9, 11]]


def test_from_numpy_refuses_as_pytorch():
    with pytest.raises(TypeError, match=r"^expected np.ndarray \(got list\)$"):
        tp.from_numpy([1.0])
    with pytest.raises(TypeError) as e:
        tp.from_numpy(np.array(["a"]))
    assert str(e.value) == (
        "can't convert np.ndarray of type numpy.str_. The only supported types are: float64, "
        "float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
    )
    with pytest.raises(TypeError, match="numpy.object_"):
        tp.from_numpy(np.array([1], dtype=object))
    with pytest.raises(ValueError, match="At least one stride in the given numpy array is neg"):
        tp.from_numpy(np.arange(3)[::-1])
    with pytest.raises(ValueError, match="byte order different from the native byte order"):
        tp.from_numpy(np.ones(2, dtype=">f4"))


def test_from_numpy_shares_a_read_only_array_with_pytorchs_warning():
    a = np.ones(2)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="The given NumPy array is not writable"):
        t = tp.from_numpy(a)
    assert np.shares_memory(t.numpy(), a)


# --- as_tensor / asarray -----------------------------------------------------------------------


def test_as_tensor_shares_when_dtype_and_device_allow():
    a = np.arange(4.0)
    t = tp.as_tensor(a)
    t[1] = -1
    assert a[1] == -1
    c = tp.as_tensor(a, dtype=tp.float32)  # a conversion: a copy
    c[2] = 7
    assert a[2] == 2.0 and c.dtype is tp.float32
    x = tp.ones(2)
    assert tp.as_tensor(x) is x and tp.as_tensor(x, dtype=tp.float32, device="cpu") is x
    assert tp.as_tensor(x, dtype=tp.float64).dtype is tp.float64
    assert tp.as_tensor([1, 2], dtype=tp.float32).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="negative"):
        tp.as_tensor(a[::-1])  # as torch.as_tensor


def test_asarray_copy_and_requires_grad():
    a = np.arange(3.0)
    s = tp.asarray(a)
    s[0] = 9
    assert a[0] == 9
    c = tp.asarray(a, copy=True)
    c[1] = -5
    assert a[1] == 1
    x = tp.ones(2)
    assert tp.asarray(x) is x
    with pytest.raises(ValueError, match=r"^can't alias tensor with dtype 'Float' into dtype 'Double'\.$"):  # fmt: skip
        tp.asarray(x, dtype=tp.float64, copy=False)
    with pytest.raises(ValueError, match=r"^can't alias arbitrary sequence into a tensor\.$"):
        tp.asarray([1, 2], copy=False)
    g = tp.asarray(a, requires_grad=True)
    assert g.requires_grad and g.is_leaf and np.shares_memory(g.detach().numpy(), a)
    r = tp.asarray(x, requires_grad=True)
    assert r.requires_grad and not x.requires_grad  # a new leaf over x's memory
    with pytest.raises(RuntimeError, match="floating point"):
        tp.asarray(tp.ones(2, dtype=tp.int64), requires_grad=True)
    assert tp.asarray(3.0).tolist() == 3.0 and tp.asarray(np.float32(3)).dtype is tp.float32
    b = bytearray(8)
    f = tp.asarray(b)  # a buffer: its bytes as the default dtype, shared
    f[1] = 1.0
    assert bytes(b[4:]) == np.float32(1).tobytes()


# --- frombuffer / from_file --------------------------------------------------------------------


def test_frombuffer():
    b = bytearray(b"abcd")
    t = tp.frombuffer(b, dtype=tp.int16)
    assert t.tolist() == [25185, 25699]  # torch.frombuffer's values
    t[0] = 0
    assert bytes(b) == b"\x00\x00cd"
    assert tp.frombuffer(bytearray(8), dtype=tp.float32, count=1, offset=4).tolist() == [0.0]
    with pytest.warns(UserWarning, match="The given buffer is not writable"):
        tp.frombuffer(b"abcd", dtype=tp.int16)
    with pytest.raises(ValueError) as e:
        tp.frombuffer(bytearray(7), dtype=tp.float32)
    assert str(e.value) == (
        "buffer length (7 bytes) after offset (0 bytes) must be a multiple of element size (4)"
    )
    with pytest.raises(ValueError, match=r"both buffer length \(0\) and count \(-1\) must not be"):
        tp.frombuffer(bytearray(0), dtype=tp.float32)


def test_from_file_shared_and_private(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(np.arange(4, dtype=np.float32).tobytes())
    t = tp.from_file(str(path), shared=True, size=4, dtype=tp.float32)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    t[0] = 10
    del t
    assert np.frombuffer(path.read_bytes(), np.float32)[0] == 10  # written to the file
    p = tp.from_file(str(path), shared=False, size=4, dtype=tp.float32)
    p[1] = -1
    assert np.frombuffer(path.read_bytes(), np.float32)[1] == 1  # private: the file keeps it
    with pytest.raises(RuntimeError, match="unable to map file"):
        tp.from_file(str(path), shared=True, size=8, dtype=tp.float32)


# --- numpy() -----------------------------------------------------------------------------------


def test_numpy_refuses_only_when_grad_mode_would_record():
    t = tp.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        t.numpy()
    assert str(e.value) == (
        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
    )
    with tp.no_grad():
        assert t.numpy().tolist() == [1.0, 1.0]
    with tp.inference_mode():
        assert t.numpy().tolist() == [1.0, 1.0]
    forced = t.numpy(force=True)
    forced[0] = 3  # force=True on the CPU is detach().numpy(): the same memory
    assert t.tolist() == [3.0, 1.0]


# --- DLPack ------------------------------------------------------------------------------------


def test_dlpack_round_trip_with_numpy_is_zero_copy():
    t = tp.arange(4.0)
    assert t.__dlpack_device__() == (1, 0)
    assert t.__dlpack_device__()[0] is tp.utils.dlpack.DLDeviceType.kDLCPU
    a = np.from_dlpack(t)
    a[0] = 42
    assert t.tolist()[0] == 42.0
    t.mul_(2)
    assert a.tolist() == [84.0, 2.0, 4.0, 6.0]
    b = np.arange(3, dtype=np.int32)
    u = tp.from_dlpack(b)
    assert u.dtype is tp.int32
    u.add_(10)
    assert b.tolist() == [10, 11, 12]
    assert np.from_dlpack(t, copy=True).tolist() == t.tolist()  # the keywords pass through
    cap = tp.utils.dlpack.to_dlpack(t)
    assert "dltensor" in repr(cap)
    assert tp.utils.dlpack.from_dlpack(cap).tolist() == t.tolist()
    assert tp.from_dlpack(t).tolist() == t.tolist()


def test_dlpack_refusals():
    with pytest.raises(BufferError, match=r"Can't export tensors that require gradient"):
        np.from_dlpack(tp.ones(2, requires_grad=True))
    with pytest.raises(BufferError, match="Meta backend's arrays .* do not speak DLPack"):
        tp.ones(2, device="meta").__dlpack__()
    with pytest.raises(TypeError, match="expected an object with __dlpack__"):
        tp.from_dlpack([1, 2])


def test_bfloat16_does_not_cross_dlpack_on_the_cpu():
    pytest.importorskip("ml_dtypes")
    with pytest.raises(BufferError, match="cannot export bfloat16 through DLPack"):
        np.from_dlpack(tp.ones(2, dtype=tp.bfloat16))


def test_dlpack_with_the_strict_backend():
    if "strict" not in tp.plugins.loaded_names():
        pytest.skip("the tensorplug-strict example plugin is not loaded")
    s = tp.ones(3).to("strict")
    a = np.from_dlpack(s)
    a[0] = 5
    assert s.tolist() == [5.0, 1.0, 1.0]


def test_dlpack_round_trip_with_torch():
    torch = pytest.importorskip("torch")
    t = tp.arange(3.0)
    x = torch.from_dlpack(t)
    x[0] = 7
    assert t.tolist() == [7.0, 1.0, 2.0]
    y = torch.arange(4, dtype=torch.int64)
    u = tp.from_dlpack(y)
    u.mul_(3)
    assert y.tolist() == [0, 3, 6, 9]
    assert tp.from_numpy(torch.ones(2).numpy()).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Unsupported dtype"):  # numpy has no bfloat16 DLPack
        tp.from_dlpack(torch.ones(2, dtype=torch.bfloat16))


@pytest.mark.gpu
@pytest.mark.skipif(not needs.HAS_GPU, reason="needs a visible NVIDIA GPU and CuPy")
def test_dlpack_round_trip_with_cupy():
    import cupy

    t = tp.arange(4.0, device="cuda")
    assert t.__dlpack_device__()[0] == tp.utils.dlpack.DLDeviceType.kDLCUDA
    c = cupy.from_dlpack(t)
    c[0] = 9
    assert t.tolist()[0] == 9.0
    d = cupy.arange(3, dtype=cupy.float32)
    u = tp.from_dlpack(d)
    assert u.device.type == "cuda"
    u.add_(1)
    assert d.get().tolist() == [1.0, 2.0, 3.0]
    assert tp.as_tensor(d).device.type == "cuda"


def test_read_only_warning_once_per_call_site():
    a = np.ones(1)
    a.flags.writeable = False
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        tp.from_numpy(a)
        tp.as_tensor(a)
    assert len(w) == 2 and all(issubclass(x.category, UserWarning) for x in w)
