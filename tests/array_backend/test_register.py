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


# --- overrides, kernel errors, namespaces the kit cannot fully build for ----------------------


@pytest.mark.parametrize("name", ["mm", "mm.default", "aten::mm"])
def test_override_names_with_or_without_their_default_overload(backend, name):
    def my_mm(self: tp.Tensor, mat2: tp.Tensor) -> tp.Tensor:
        return aten.zeros.default([2, 2], device=self.device)

    b = array_backend.register(FakeRegistry(), backend.name, np, overrides={name: my_mm})
    try:
        y = aten._to_copy.default(tp.ones(2, 2), device="testdev")
        np.testing.assert_array_equal(arr(aten.mm.default(y, y)), np.zeros((2, 2)))
    finally:
        b.close()


def test_override_of_a_named_overload(backend):
    def my_add(self: tp.Tensor, other: tp.Tensor, *, alpha: Any = 1) -> tp.Tensor:
        return aten.zeros.default(list(self.shape), device=self.device)

    b = array_backend.register(FakeRegistry(), backend.name, np, overrides={"add.Tensor": my_add})
    try:
        y = aten._to_copy.default(tp.ones(3), device="testdev")
        np.testing.assert_array_equal(arr(aten.add.Tensor(y, y)), np.zeros(3))
        np.testing.assert_array_equal(arr(aten.add.Scalar(y, 1.0)), np.full(3, 2.0))
    finally:
        b.close()


@pytest.mark.parametrize(
    ("name", "hint"),
    [("add", "Did you mean"), ("add.Tensr", "Did you mean 'add.Tensor'"), ("frobnicate", ".")],
)
def test_override_of_an_unknown_op_is_an_error(backend, name, hint):
    with pytest.raises(tp.RegistrationError, match="overrides names") as info:
        array_backend.register(FakeRegistry(), backend.name, np, overrides={name: lambda x: x})
    msg = str(info.value)
    assert repr(name) in msg and "no aten operator overload" in msg and hint in msg
    assert _backends._by_key.get(backend.name) is None  # nothing was left registered


def test_a_kernel_s_internal_failure_names_the_op_and_the_backend(backend):
    def broken(self: tp.Tensor) -> tp.Tensor:
        return self._data.no_such_method()  # an AttributeError inside the kernel

    b = array_backend.register(FakeRegistry(), backend.name, np, overrides={"neg": broken})
    try:
        y = aten._to_copy.default(tp.ones(2), device="testdev")
        with pytest.raises(RuntimeError) as info:
            aten.neg.default(y)
        msg = str(info.value)
        assert msg.startswith("aten::neg: the kernel failed on the TestBackend backend's")
        assert "AttributeError" in msg and "no_such_method" in msg and "overrides=" in msg
        assert isinstance(info.value.__cause__, AttributeError)
    finally:
        b.close()


def test_an_array_library_error_names_the_backend(backend):
    def raises(self: tp.Tensor) -> tp.Tensor:
        raise ValueError("operands could not be broadcast")  # as numpy would

    b = array_backend.register(FakeRegistry(), backend.name, np, overrides={"neg": raises})
    try:
        y = aten._to_copy.default(tp.ones(2), device="testdev")
        with pytest.raises(RuntimeError) as info:
            aten.neg.default(y)
        assert str(info.value) == (
            "aten::neg: operands could not be broadcast "
            "(ValueError from the array library of the TestBackend backend)"
        )
    finally:
        b.close()


class WithoutMatmul:
    """numpy's namespace without ``matmul``: the linear-algebra kernels cannot be built."""

    __array_api_version__ = (
        np.__array_api_version__ if hasattr(np, "__array_api_version__") else None
    )

    def __getattr__(self, name: str) -> Any:
        if name == "matmul":
            raise AttributeError(name)
        return getattr(np, name)


@pytest.mark.skipif(not hasattr(np, "__array_api_version__"), reason="numpy >= 2")
def test_kernels_that_cannot_be_built_are_missing_and_said_so(backend, capsys):
    with pytest.warns(
        UserWarning, match=r"the linalg kernels of backend 'TestBackend' could not be built"
    ) as w:
        b = array_backend.register(FakeRegistry(), backend.name, WithoutMatmul())
    try:
        assert "tensorplug ops --missing TestBackend" in str(w[0].message)
        assert set(b.unbuilt) == {"linalg"} and "matmul" in b.unbuilt["linalg"]
        assert tp.dispatcher.dispatch_table("aten::mm")["TestBackend"] == "missing"
        assert tp.dispatcher.dispatch_table("aten::add.Tensor")["TestBackend"] == "TestBackend"
        y = aten._to_copy.default(tp.ones(2), device="testdev")
        np.testing.assert_array_equal(arr(aten.add.Tensor(y, y)), [2.0, 2.0])
        from tensorplug import cli

        assert cli.main(["ops", "--missing", "TestBackend"]) in (0, None)
        out = capsys.readouterr().out
        assert "aten::mm" in out and "aten::add.Tensor" not in out
    finally:
        b.close()


# --- strided=: Note [Strided layout] in tensorplug/_strides.py ------------------------------


def test_strides_are_detected_for_numpy(backend):
    b = array_backend.register(FakeRegistry(), backend.name, np)
    try:
        x = tp.zeros(2, 3, device="testdev")
        assert b.storage.strided
        assert (x.t().stride(), x[1:].storage_offset()) == ((1, 3), 3)
    finally:
        b.close()


def test_a_backend_declared_without_strides_refuses_them(backend):
    b = array_backend.register(FakeRegistry(), backend.name, np, strided=False)
    try:
        x = tp.zeros(2, 3, device="testdev")
        with pytest.raises(RuntimeError, match=r"TestBackend backend \(tests.array_backend\)"):
            x.stride()
        with pytest.raises(RuntimeError, match="aten::as_strided: .* have no strides"):
            x.as_strided((2,), (1,))
        assert x.is_contiguous()
        assert x.unfold(1, 2, 1).shape == (2, 2, 2)
    finally:
        b.close()


def test_strided_true_needs_as_strided(backend):
    strict = pytest.importorskip("array_api_strict")
    with pytest.raises(tp.RegistrationError, match="no lib.stride_tricks.as_strided"):
        array_backend.register(FakeRegistry(), backend.name, strict, strided=True)
