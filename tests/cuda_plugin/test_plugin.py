"""tensorplug-cuda without a GPU, for real: the plugin loads, CuPy is imported only on use,
``tp.cuda`` answers, every error says why CUDA is unavailable and what to do, and the
dispatch tables carry the ``CUDA`` kernels. (The same on a machine with CuPy and a GPU is
``tests/cuda_plugin/test_gpu.py``, marked ``gpu``.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import tensorplug as tp
from tensorplug import dispatcher
from tensorplug.cuda import CudaUnavailableError

from . import standin_cupy
from .conftest import HAS_CUDA_PLUGIN

pytestmark = pytest.mark.skipif(not HAS_CUDA_PLUGIN, reason="needs tensorplug-cuda loaded")

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, *, path: Path | None = None, env: dict[str, str] | None = None) -> str:
    """``code`` in a fresh interpreter of this environment; its stdout (stderr on failure)."""
    e = {**os.environ, **(env or {})}
    if path is not None:
        e["PYTHONPATH"] = os.pathsep.join([str(path), e.get("PYTHONPATH", "")])
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=e,
        cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture
def no_gpu() -> Any:
    """Skip where CUDA works: these tests are about a machine where it does not."""
    if tp.cuda.is_available():
        pytest.skip("CUDA is available here")


@pytest.fixture
def cupy_as(request: Any) -> Any:
    """``cupy_as(module)``: the loader sees ``module`` as CuPy inside the test."""
    import tensorplug_cuda
    from tensorplug_cuda import loader

    stack: list[Any] = []

    def use(module: ModuleType | None) -> None:
        cm = loader.substitute(module)
        cm.__enter__()
        stack.append(cm)

    yield use
    for cm in reversed(stack):
        cm.__exit__(None, None, None)
    assert tensorplug_cuda.LAZY is not None and not tensorplug_cuda.LAZY.loaded


# --- loading ----------------------------------------------------------------------------------


def test_the_plugin_is_loaded_with_its_runtime():
    info = tp.plugins.get("cuda")
    assert info.status == "loaded" and info.distribution == "tensorplug-cuda"
    assert info.devices == ("cuda",) and info.keys == ()  # CUDA is a built-in key
    assert info.op_count == tp.plugins.get("cpu").op_count  # one kernel per CPU kernel


def test_import_tensorplug_does_not_import_cupy(tmp_path):
    # a package named cupy that records being imported (and has no GPU)
    pkg = tmp_path / "cupy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        textwrap.dedent("""
        import types
        print("cupy imported")
        __version__ = "0-recorder"
        class CUDARuntimeError(RuntimeError): pass
        def _count():
            raise CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
        cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=_count))
        """)
    )
    out = run_python(
        """
        import sys
        import tensorplug as tp
        print("after import:", "cupy" in sys.modules)
        tp.ones(2) + 1; tp.cuda  # CPU work and the tp.cuda module itself import nothing
        print("after cpu work:", "cupy" in sys.modules)
        print("available:", tp.cuda.is_available())
        print("after query:", "cupy" in sys.modules)
        """,
        path=tmp_path,
    )
    assert out.splitlines() == [
        "after import: False",
        "after cpu work: False",
        "cupy imported",
        "available: False",
        "after query: True",
    ]


# --- tp.cuda without a device -----------------------------------------------------------------

NO_CUPY = re.escape("CuPy is not installed (")


def _answers() -> dict[str, Any]:
    return {
        "is_available": tp.cuda.is_available(),
        "device_count": tp.cuda.device_count(),
        "memory_allocated": tp.cuda.memory_allocated(),
        "max_memory_allocated": tp.cuda.max_memory_allocated(0),
        "memory_reserved": tp.cuda.memory_reserved("cuda:0"),
        "empty_cache": tp.cuda.empty_cache(),
        "is_bf16_supported": tp.cuda.is_bf16_supported(),
    }


def test_queries_answer_as_pytorch_does_without_cuda(no_gpu):
    # torch 2.13 CPU build: the same answers; everything else raises
    assert _answers() == {
        "is_available": False, "device_count": 0, "memory_allocated": 0,
        "max_memory_allocated": 0, "memory_reserved": 0, "empty_cache": None,
        "is_bf16_supported": False,
    }  # fmt: skip
    with tp.cuda.device(None), tp.cuda.stream(None):  # no-ops, as in PyTorch
        pass
    tp.cuda.manual_seed(5)  # safe without CUDA, as in PyTorch
    tp.cuda.manual_seed_all(5)
    assert tp.cuda.initial_seed() == 5


CALLS = {
    "current_device": lambda: tp.cuda.current_device(),
    "set_device": lambda: tp.cuda.set_device(0),
    "device": lambda: tp.cuda.device(0).__enter__(),
    "synchronize": lambda: tp.cuda.synchronize(),
    "get_device_name": lambda: tp.cuda.get_device_name(),
    "current_stream": lambda: tp.cuda.current_stream(),
    "reset_peak_memory_stats": lambda: tp.cuda.reset_peak_memory_stats(),
    "Stream": lambda: tp.cuda.Stream(),
    "Event": lambda: tp.cuda.Event(enable_timing=True),
}


@pytest.mark.parametrize("name", CALLS)
def test_calls_that_need_a_device_say_why_there_is_none(no_gpu, name):
    with pytest.raises(CudaUnavailableError, match=NO_CUPY) as info:
        CALLS[name]()
    msg = str(info.value)
    assert "CUDA is not available" in msg
    assert 'pip install "tensorplug-cuda[cuda12]"' in msg and "[cuda13]" in msg
    assert info.value.reason.startswith("CuPy is not installed")


TENSORS = {
    "factory": lambda: tp.zeros([2], device="cuda"),
    "factory_indexed": lambda: tp.randn([2], device="cuda:1"),
    "tensor": lambda: tp.tensor([1.0, 2.0], device="cuda"),
    "cuda": lambda: tp.ones([2]).cuda(),
    "to": lambda: tp.ones([2]).to("cuda", non_blocking=True),
    "module": lambda: tp.nn.Linear(2, 2).cuda(),
    "like": lambda: tp.zeros_like(tp.ones([2]), device="cuda"),
}


@pytest.mark.parametrize("name", TENSORS)
def test_making_a_cuda_tensor_names_the_cause_and_the_remedy(no_gpu, name):
    with pytest.raises(CudaUnavailableError) as info:
        TENSORS[name]()
    assert str(info.value) == (f"CUDA is not available (tensorplug-cuda): {info.value.reason}")
    assert re.match(NO_CUPY, info.value.reason)
    assert 'pip install "tensorplug-cuda[cuda12]" for CUDA 12 drivers' in str(info.value)


def _cupy_without_gpu(error: str | None, devices: int = 0) -> ModuleType:
    return standin_cupy.make(devices=devices, count_error=error)


def test_cupy_without_a_driver(no_gpu, cupy_as):
    # what CuPy 14.2 raises on this machine, which has no NVIDIA driver
    error = (
        "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version"
    )
    cupy_as(_cupy_without_gpu(error))
    assert not tp.cuda.is_available() and tp.cuda.device_count() == 0
    with pytest.raises(CudaUnavailableError) as info:
        tp.ones([1], device="cuda")
    reason = info.value.reason
    assert reason.startswith(f"CuPy 0.0+standin found no usable GPU (CUDARuntimeError: {error}).")
    assert "nvidia-smi" in reason and "CUDA_VISIBLE_DEVICES" in reason


def test_cupy_seeing_no_device(no_gpu, cupy_as, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    cupy_as(_cupy_without_gpu(None, devices=0))
    with pytest.raises(CudaUnavailableError) as info:
        tp.cuda.synchronize()
    assert info.value.reason == (
        "CuPy 0.0+standin sees no CUDA device; check CUDA_VISIBLE_DEVICES (set to '')"
    )


def test_cupy_that_fails_to_import(no_gpu, cupy_as, tmp_path, monkeypatch):
    pkg = tmp_path / "cupy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "raise ImportError('libnvrtc.so.12: cannot open shared object file')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    cupy_as(None)  # the real import, which finds the broken package
    with pytest.raises(CudaUnavailableError) as info:
        tp.tensor([1.0], device="cuda")
    assert info.value.reason.startswith(
        "CuPy is installed but failed to import (ImportError: libnvrtc.so.12: cannot open "
        "shared object file); reinstall it"
    )
    assert "only one cupy-cuda package" in info.value.reason


# --- without the plugin -------------------------------------------------------------------------


def test_tp_cuda_without_the_plugin_answers_and_names_it():
    out = run_python(
        """
        import tensorplug as tp
        print(tp.cuda.is_available(), tp.cuda.device_count(), tp.cuda.memory_allocated())
        print("cuda" if tp.cuda.is_available() else "cpu")
        for f in (tp.cuda.current_device, tp.cuda.Stream, lambda: tp.ones(1, device="cuda")):
            try:
                f()
            except tp.MissingPluginError as e:
                print(type(e).__name__, e.distribution, "|", e)
        """,
        env={"TENSORPLUG_PLUGINS": "cpu"},
    )
    lines = out.splitlines()
    assert lines[:2] == ["False 0 0", "cpu"]
    assert lines[2] == (
        "MissingPluginError tensorplug-cuda | tp.cuda.current_device() needs the "
        "tensorplug-cuda plugin, which is installed but not loaded (not listed in "
        "TENSORPLUG_PLUGINS='cpu'): remove it from that setting"
    )
    assert lines[3].startswith("MissingPluginError tensorplug-cuda | tp.cuda.Stream() needs")
    assert lines[4].startswith(
        "MissingPluginError tensorplug-cuda | No backend is loaded for device type 'cuda'"
    )


# --- the dispatch tables ------------------------------------------------------------------------


def test_cuda_table_entries_come_from_the_plugin():
    cpu_ops = {o.name for o in dispatcher.all_ops() if "CPU" in dispatcher.registrations(o)}
    cuda_ops = {o.name for o in dispatcher.all_ops() if "CUDA" in dispatcher.registrations(o)}
    assert cuda_ops == cpu_ops and len(cuda_ops) > 300
    for name in ("aten::add.Tensor", "aten::mm", "aten::sum.dim_IntList", "aten::zeros"):
        table = dispatcher.dispatch_table(name)
        assert table["CUDA"] == "CUDA", name
        assert dispatcher.registrations(name)["CUDA"] == "cuda"
    # composites reach CUDA through their alias, autograd through its own key
    assert dispatcher.dispatch_table("aten::linear")["CUDA"] == "CompositeImplicitAutograd"
    if "autograd" in tp.plugins.loaded_names():
        assert dispatcher.dispatch_table("aten::mul.Tensor")["AutogradCUDA"] == "Autograd"


def test_tensorplug_plugins_says_why_there_is_no_device(no_gpu, capsys):
    from tensorplug import cli

    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out.splitlines()
    row = next(ln for ln in out if ln.startswith("cuda "))
    assert row.split()[:4] == ["cuda", "tensorplug-cuda", "0.1.0", "loaded"]
    assert "(no device)" in row
    note = next(ln for ln in out if ln.startswith("cuda: "))
    assert note.startswith("cuda: no cuda device is available: CuPy is not installed (")
    assert 'pip install "tensorplug-cuda[cuda12]"' in note


def test_table_command_shows_the_cuda_row(capsys):
    from tensorplug import cli

    assert cli.main(["table", "aten::add.Tensor"]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    assert ["CUDA", "CUDA", "cuda"] in rows


def test_no_test_package_or_bench_script_shadows_the_modules_cupy_imports():
    # CuPy 14 imports NVIDIA's `cuda` namespace package (cuda.pathfinder, cuda.bindings): a
    # tests/cuda package (pytest puts tests/ on sys.path) or a bench/cuda.py script (python puts
    # bench/ first) hides it, and CuPy fails to import in the GPU run (docs/cuda.md)
    root = Path(__file__).resolve().parents[2]
    for folder in ("tests", "bench", "examples"):
        for name in ("cuda", "cupy"):
            assert not (root / folder / name).exists(), f"{folder}/{name} hides CuPy's imports"
            assert not (root / folder / f"{name}.py").exists(), f"{folder}/{name}.py hides them"
