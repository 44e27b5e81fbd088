"""array_backend.register for a second, third-party backend: storage, transfers, device checks,
overrides and dtype restrictions. Everything registered here is removed again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import _backends, array_backend
from tests.array_backend.conftest import FakeRegistry, arr

aten = tp.ops.aten


@pytest.fixture
def second(backend: tp.keys.DispatchKey) -> Iterator[Any]:
    """numpy again, as the third-party backend ``TestBackend`` (device type ``testdev``)."""

    def my_neg(self: tp.Tensor) -> tp.Tensor:
        return aten.zeros.default(list(self.shape), dtype=self.dtype, device=self.device)

    dtypes = {d: getattr(np, d.name) for d in (tp.float32, tp.float64, tp.int64, tp.bool)}
    b = array_backend.register(
        FakeRegistry(), backend.name, np, dtypes=dtypes, overrides={"neg": my_neg}
    )
    try:
        yield b
    finally:
        b.close()
    assert _backends._by_key.get(backend.name) is None


def test_registered_backend_reports_dtypes(second):
    assert second.dtypes == {tp.float32, tp.float64, tp.int64, tp.bool}
    assert second.supports(tp.float32) and not second.supports(tp.bfloat16)
    assert tp.dispatcher.registrations("aten::add.Tensor")[second.key] == "tests.array_backend"
    assert not second.skipped


def test_transfer_between_backends(second):
    x = tp.tensor([1.0, 2.0])
    y = aten._to_copy.default(x, device="testdev")
    assert y.device == tp.device("testdev") and y.dtype is tp.float32
    assert not np.shares_memory(arr(x), arr(y))
    z = aten._to_copy.default(y, dtype=tp.float64, device="cpu")
    assert z.device == tp.device("cpu") and z.dtype is tp.float64
    np.testing.assert_array_equal(arr(z), [1.0, 2.0])
    r = aten.add.Tensor(y, y)
    assert r.device == tp.device("testdev")


def test_mixing_devices_raises_but_cpu_zero_dim_is_allowed(second):
    y = aten._to_copy.default(tp.tensor([1.0, 2.0]), device="testdev")
    with pytest.raises(
        RuntimeError,
        match="Expected all tensors to be on the same device, but found at least two devices",
    ):
        aten.add.Tensor(tp.tensor([1.0, 2.0]), y)
    r = aten.mul.Tensor(y, tp.tensor(3.0))
    assert r.device == tp.device("testdev")
    np.testing.assert_array_equal(arr(r), [3.0, 6.0])


def test_unsupported_dtype_is_a_clear_error(second):
    y = aten._to_copy.default(tp.tensor([1.0]), device="testdev")
    with pytest.raises(
        RuntimeError, match="dtype float16 is not supported by the TestBackend backend"
    ):
        aten._to_copy.default(y, dtype=tp.float16)


def test_override_replaces_one_kernel(second):
    y = aten._to_copy.default(tp.tensor([1.0, 2.0]), device="testdev")
    np.testing.assert_array_equal(arr(aten.neg.default(y)), [0.0, 0.0])
    np.testing.assert_array_equal(arr(aten.neg.default(tp.tensor([1.0]))), [-1.0])  # CPU unchanged


def test_copy_into_another_backend(second):
    dst = tp.zeros([2])
    src = aten._to_copy.default(tp.tensor([5.0, 6.0]), device="testdev")
    v = dst._version
    aten.copy_.default(dst, src)
    np.testing.assert_array_equal(arr(dst), [5.0, 6.0])
    assert dst._version == v + 1


def test_storage_from_python(second):
    sb = _backends.for_device_type("testdev")
    t = sb.from_python([[1, 2], [3, 4]], None, "testdev")
    assert t.dtype is tp.int64 and t.device == tp.device("testdev")
    h = sb.to_host(t._data)
    assert isinstance(h, np.ndarray)


def test_register_rejects_non_backend_keys():
    with pytest.raises(tp.RegistrationError, match="not a backend key"):
        array_backend.register(FakeRegistry(), "Tracer", np)
