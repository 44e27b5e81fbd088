"""array_backend.register_lazy (stubs until the array library loads), and the multi-device
parts of array_backend.register: ``current_device=`` ("dev" is the current device) and
``device_context=`` (kernels run on their tensors' device, Note [Device guard]). numpy plays the
array library, on the test backend ``TestBackend`` (device type ``testdev``)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import _backends, array_backend, dispatcher
from tests.array_backend.conftest import FakeRegistry

KEY = "TestBackend"


class Loader:
    """``load()`` for register_lazy: counts calls; fails while ``error`` is set."""

    def __init__(self, **options: Any) -> None:
        self.calls = 0
        self.error: Exception | None = None
        self.options = options

    def __call__(self) -> dict[str, Any]:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return {"xp": np, **self.options}


@pytest.fixture
def lazy(backend: tp.keys.DispatchKey) -> Iterator[tuple[Any, Loader]]:
    load = Loader()
    registry = FakeRegistry()
    b = array_backend.register_lazy(registry, KEY, load)
    try:
        yield b, load
    finally:
        for lib in registry.libraries:
            lib.close()
        _backends.unregister(b.storage)


def test_stubs_fill_the_table_until_the_first_use(lazy):
    b, load = lazy
    assert not b.loaded and b.backend is None and load.calls == 0
    assert dispatcher.dispatch_table("aten::add.Tensor")[KEY] == KEY
    assert dispatcher.registrations("aten::mm")[KEY] == "tests.array_backend"
    stub = tp.ops.aten.add.Tensor.kernel_for(tp.keys.keyset(KEY))
    assert stub.__name__ == f"lazy[{KEY}:add.Tensor]"
    assert _backends.for_device_type("testdev") is b.storage
    cpu = {o.name for o in dispatcher.all_ops() if "CPU" in dispatcher.registrations(o)}
    lazy_ops = {o.name for o in dispatcher.all_ops() if KEY in dispatcher.registrations(o)}
    assert lazy_ops == cpu  # a stub for every kernel the kit has


def test_stub_names_are_the_kits_build_over_numpy():
    # the stubs take the kit's kernel names from a cache (Note [Kit kernel names]) instead of
    # building the kit: they must be exactly what a build over numpy makes
    from tensorplug.array_backend import _kit, _lazy, _register, _storage

    kit = _kit.Kit(np, "CPU", "cpu", *_storage._default_storage(np))
    built: set[str] = set()
    for mod in _register._MODULES:
        built.update(mod.build(kit))
    assert _lazy.kernel_names() == built
    assert _lazy._built_names() == built


def test_kit_names_are_cached_per_sources(tmp_path, monkeypatch):
    from tensorplug.array_backend import _lazy

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(_lazy, "_names", None)
    built = _lazy._built_names()
    key = _lazy._sources_digest()
    assert _lazy._cached_names(key) is None  # an empty cache
    assert _lazy.kernel_names() == built  # built, then written
    (written,) = (tmp_path / "tensorplug").glob("kit_kernels-*.json")
    assert written.name == f"kit_kernels-{key[:16]}.json"
    assert _lazy._cached_names(key) == built
    # another source (an edited kernel module) is another digest: the cache does not answer
    assert _lazy._cached_names(_lazy._schema_cache.digest(b"other sources", "kit")) is None
    # a file of another layout is not read (it is rebuilt and written again)
    data = json.loads(written.read_text())
    for bad in ([1, 2], "add.Tensor", [], ["add.Tensor", ""]):
        written.write_text(json.dumps({**data, "names": bad}))
        assert _lazy._cached_names(key) is None
    monkeypatch.setattr(_lazy, "_names", None)
    assert _lazy.kernel_names() == built
    assert _lazy._cached_names(key) == built


def test_sources_digest_follows_the_kits_files(tmp_path, monkeypatch):
    from tensorplug.array_backend import _lazy

    pkg = tmp_path / "kit"
    (pkg / "_part").mkdir(parents=True)
    (pkg / "_lazy.py").write_text("x = 1\n")
    (pkg / "_part" / "_unary.py").write_text("y = 1\n")
    monkeypatch.setattr(_lazy, "__file__", str(pkg / "_lazy.py"))
    first = _lazy._sources_digest()
    assert _lazy._sources_digest() == first
    (pkg / "_part" / "_unary.py").write_text("y = 12\n")  # a module of a family package
    assert _lazy._sources_digest() != first


def test_first_use_loads_once_and_replaces_the_stubs(lazy):
    b, load = lazy
    x = tp.ones([2], device="testdev")  # a factory: a stub, then the real kernel
    assert load.calls == 1 and b.loaded
    assert (x + x).tolist() == [2.0, 2.0] and tp.tensor([1.0], device="testdev").item() == 1.0
    assert load.calls == 1
    real = tp.ops.aten.add.Tensor.kernel_for(tp.keys.keyset(KEY))
    assert real is b.backend.kernels["add.Tensor"]
    assert dispatcher.registrations("aten::add.Tensor")[KEY] == "tests.array_backend"


def test_storage_use_loads_too(lazy):
    b, load = lazy
    y = tp.tensor([1.0, 2.0]).to("testdev")
    assert load.calls == 1 and y.device == tp.device("testdev")
    assert y.cpu().tolist() == [1.0, 2.0]


def test_a_failed_load_raises_its_error_and_is_tried_again(lazy):
    b, load = lazy
    load.error = RuntimeError("the array library is missing: install it")
    with pytest.raises(RuntimeError, match="^the array library is missing: install it$"):
        tp.zeros([1], device="testdev")
    with pytest.raises(RuntimeError, match="the array library is missing"):
        tp.tensor([1.0], device="testdev")
    assert load.calls == 2 and not b.loaded
    assert dispatcher.dispatch_table("aten::zeros")[KEY] == KEY  # the stubs stay
    load.error = None
    assert tp.zeros([1], device="testdev").tolist() == [0.0] and b.loaded


class FailingRegistry(FakeRegistry):
    """Its libraries raise on the 10th kernel once ``armed``: a registration failing halfway."""

    armed = False

    def library(self, ns: str, kind: Any) -> tp.Library:
        registry = self
        count = [0]

        class Failing(tp.Library):
            def impl(self, *args: Any, **kwargs: Any) -> None:
                count[0] += 1
                if registry.armed and count[0] == 10:
                    raise RuntimeError("the 10th kernel fails")
                super().impl(*args, **kwargs)

        lib = Failing(ns, kind, owner=self.plugin_name)
        self.libraries.append(lib)
        return lib


def test_a_registration_failing_halfway_leaves_only_the_stubs(backend):
    registry = FailingRegistry()
    b = array_backend.register_lazy(registry, KEY, Loader())
    try:
        registry.armed = True
        with pytest.raises(RuntimeError, match="the 10th kernel fails"):
            tp.ones([1], device="testdev")
        assert not b.loaded
        ks = tp.keys.keyset(KEY)
        for op in dispatcher.all_ops():
            if KEY in dispatcher.registrations(op):
                assert op.kernel_for(ks).__name__.startswith(f"lazy[{KEY}:"), op.name
        registry.armed = False
        assert (tp.ones([1], device="testdev") * 2).tolist() == [2.0] and b.loaded
    finally:
        for lib in registry.libraries:
            lib.close()
        _backends.unregister(b.storage)


def test_unload_puts_the_stubs_back(lazy):
    b, load = lazy
    tp.ones([1], device="testdev")
    b.unload()
    assert not b.loaded
    stub = tp.ops.aten.add.Tensor.kernel_for(tp.keys.keyset(KEY))
    assert stub.__name__ == f"lazy[{KEY}:add.Tensor]"
    assert tp.ones([1], device="testdev").tolist() == [1.0] and load.calls == 2
    b.unload()
    b.unload()  # twice: harmless


def test_two_threads_making_the_first_call_load_once(backend):
    # Note [Lazy backends]: the second thread arrives while the first one loads (its load()
    # sleeps), waits for it, and both get the real kernel's answer
    load = Loader()
    slow = load.__call__

    def load_slowly() -> dict[str, Any]:
        time.sleep(0.05)
        return slow()

    registry = FakeRegistry()
    b = array_backend.register_lazy(registry, KEY, load_slowly)
    start = threading.Barrier(2)
    results: list[Any] = [None, None]

    def first_call(i: int) -> None:
        start.wait()
        try:
            x = tp.ones([3], device="testdev") * (i + 2)
            results[i] = x.tolist()
        except BaseException as e:  # reported below, not swallowed
            results[i] = e

    try:
        threads = [threading.Thread(target=first_call, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [[2.0] * 3, [3.0] * 3]
        assert load.calls == 1 and b.loaded
        ks = tp.keys.keyset(KEY)
        assert tp.ops.aten.mul.Tensor.kernel_for(ks) is b.backend.kernels["mul.Tensor"]
    finally:
        for lib in registry.libraries:
            lib.close()
        _backends.unregister(b.storage)


def test_a_kernel_registered_on_first_use_is_the_eager_registration(backend):
    # what a lazy backend has registered once loaded is what register() registers eagerly:
    # the same operators, table entries, owners, kernel names and no-dispatch marks
    def table(key: str) -> dict[str, Any]:
        ks = tp.keys.keyset(key)
        out = {}
        for op in dispatcher.all_ops():
            if key not in dispatcher.registrations(op):
                continue
            k = op.kernel_for(ks)
            out[op.name] = (
                dispatcher.dispatch_table(op)[key],
                dispatcher.registrations(op)[key],
                k.__qualname__,
                tp.library.is_no_dispatch(k),
            )
        return out

    eager_registry = FakeRegistry()
    eager = array_backend.register(eager_registry, KEY, np)
    try:
        expected = table(KEY)
    finally:
        eager.close()
    assert expected and all(KEY not in dispatcher.registrations(o) for o in dispatcher.all_ops())
    registry = FakeRegistry()
    b = array_backend.register_lazy(registry, KEY, Loader())
    try:
        stubs = table(KEY)
        assert stubs.keys() == expected.keys()  # a stub for each kernel, before the first use
        assert {n: e[:2] for n, e in stubs.items()} == {n: e[:2] for n, e in expected.items()}
        tp.ones([1], device="testdev")
        assert b.loaded and table(KEY) == expected
    finally:
        for lib in registry.libraries:
            lib.close()
        _backends.unregister(b.storage)


def test_the_lazy_storage_answers_as_the_loaded_one(lazy):
    b, load = lazy
    # every name of the storage a lazy backend stands in for is forwarded (the core reads the
    # CPU storage's host dtypes too)
    from tensorplug.array_backend import ArrayStorage

    names = {n for n in dir(ArrayStorage) if not n.startswith("_")} | {"_host_dtypes"}
    assert names <= set(dir(type(b.storage))), names - set(dir(type(b.storage)))
    assert load.calls == 0  # reading the names loads nothing
    x = tp.arange(6.0, device="testdev").reshape(2, 3)
    real = b._real_storage
    assert real is not None and b.storage.kit is real.kit
    assert b.storage.strided is real.strided is True
    assert b.storage.memory_layout(x._data) == real.memory_layout(x._data)
    flat = x.reshape(-1)._data
    assert b.storage.as_strided(flat, (3, 2), (1, 3), 0).tolist() == [[0, 3], [1, 4], [2, 5]]
    y = b.storage.from_buffer(bytearray(np.arange(3.0).tobytes()), tp.float64, "little", "testdev")
    assert y.tolist() == [0.0, 1.0, 2.0] and y.device == tp.device("testdev")
    assert b.storage._host_dtypes is real._host_dtypes


def test_register_lazy_needs_a_backend_key():
    with pytest.raises(tp.RegistrationError, match="'Tracer' is a functionality key"):
        array_backend.register_lazy(FakeRegistry(), "Tracer", lambda: {})


# --- several devices ------------------------------------------------------------------------


class Devices:
    """A current device index, and a context that makes a device current (as cupy.cuda.Device)."""

    def __init__(self) -> None:
        self.current = 0
        self.entered: list[int] = []

    def context(self, d: tp.device) -> Any:
        @contextlib.contextmanager
        def use() -> Iterator[None]:
            previous, self.current = self.current, int(d.index)  # type: ignore[arg-type]
            self.entered.append(self.current)
            try:
                yield
            finally:
                self.current = previous

        return use()


@pytest.fixture
def multi(backend: tp.keys.DispatchKey) -> Iterator[Devices]:
    devices = Devices()
    b = array_backend.register(
        FakeRegistry(),
        KEY,
        np,
        current_device=lambda: devices.current,
        device_context=devices.context,
    )
    try:
        yield devices
    finally:
        b.close()


def test_a_device_without_index_is_the_current_one(multi):
    x = tp.ones([2], device="testdev")
    assert x.device == tp.device("testdev:0")
    multi.current = 1
    assert tp.tensor([1.0], device="testdev").device == tp.device("testdev:1")
    assert x.to("testdev").device == tp.device("testdev:1")  # moved to the current device
    multi.current = 0
    assert x.to("testdev") is x and x.to("testdev:0") is x  # already there: no copy


def test_kernels_run_with_their_tensors_device_current(multi):
    y = tp.ones([2], device="testdev:1")
    multi.entered.clear()
    (y + y).sum()
    assert multi.entered == [1, 1]  # one guard per kernel, both on device 1
    x = tp.ones([2], device="testdev:0")
    multi.entered.clear()
    x * 2
    assert multi.entered == []  # already current: no context
