"""The non-op names of the torch.* docs index (issue 29): predicates, settings, the random
state, ``sym_*``, ``Size``, ``Stream``/``Event``, ``cond``, ``set_printoptions``, compared with
what torch 2.13 gives (tests/core/data/torch_behaviour.json, written by
tools/gen_torch_behaviour.py; "torch" in its texts reads "tensorplug" here)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import _settings
from tensorplug._opset import repr as _repr
from tests import needs

DATA = json.loads((Path(__file__).parent / "data" / "torch_behaviour.json").read_text())


def _ours(text: str) -> str:
    return text.replace("torch.", "tensorplug.").replace("'torch'", "'tensorplug'")


@pytest.fixture
def default_printoptions():
    yield
    tp.set_printoptions(profile="default")


@pytest.mark.parametrize("case", DATA["prints"], ids=lambda c: f"{c['options']}-{c['expr']}")
def test_repr_under_printoptions_is_torchs(case, default_printoptions):
    tp.set_printoptions(profile="default")
    tp.set_printoptions(**case["options"])
    assert repr(eval(case["expr"], {"T": tp})) == _ours(case["repr"])


@pytest.mark.parametrize("case", DATA["values"], ids=lambda c: c["expr"])
def test_value_or_exception_is_torchs(case):
    if "raises" in case:
        with pytest.raises(Exception) as e:  # noqa: PT011 - the type is checked just below
            eval(case["expr"], {"T": tp})
        assert type(e.value).__name__ == case["raises"]
        assert str(e.value).startswith(_ours(case["message"]))
    else:
        assert repr(eval(case["expr"], {"T": tp})) == _ours(case["value"])


def test_set_printoptions_profiles_and_reset(default_printoptions):
    tp.set_printoptions(precision=6, linewidth=120)
    assert (_repr.PRINT_OPTS.precision, _repr.PRINT_OPTS.linewidth) == (6, 120)
    tp.set_printoptions(profile="default")
    assert _repr.PRINT_OPTS == _repr.PrintOptions()
    with pytest.raises(ValueError, match="profile"):
        tp.set_printoptions(profile="long")


# --- the random state ----------------------------------------------------------------------------


@pytest.fixture
def restored_rng(monkeypatch):
    monkeypatch.setattr(tp.random, "_default_seed", tp.random._default_seed)
    with tp.fork_rng():
        yield


def test_rng_state_round_trip_reproduces_draws(restored_rng):
    tp.manual_seed(3)
    tp.rand(2)  # a state that has advanced
    state = tp.get_rng_state()
    assert state.dtype is tp.uint8 and state.ndim == 1
    a, b = tp.rand(5), tp.randn(3)
    tp.set_rng_state(state)
    assert tp.rand(5).tolist() == a.tolist() and tp.randn(3).tolist() == b.tolist()
    with pytest.raises(RuntimeError, match="not an RNG state"):
        tp.set_rng_state(tp.tensor([1, 2, 3], dtype=tp.uint8))
    assert tp.initial_seed() == 3
    s = tp.seed()
    assert tp.initial_seed() == s and tp.default_generator.initial_seed() == s
    assert tp.default_generator is tp.random.default_generator("cpu")


def test_fork_rng_restores_the_state(restored_rng):
    tp.manual_seed(0)
    with tp.fork_rng():
        inside = tp.rand(3)
    after = tp.rand(3)
    assert inside.tolist() == after.tolist()
    with tp.random.fork_rng(enabled=False):
        tp.rand(3)
    assert tp.rand(3).tolist() != after.tolist()


# --- settings ----------------------------------------------------------------------------------


@pytest.fixture
def fresh_settings(monkeypatch):
    monkeypatch.setattr(_settings, "_s", _settings._Settings())


def test_threads(fresh_settings):
    assert tp.get_num_threads() >= 1 and tp.get_num_interop_threads() >= 1
    tp.set_num_threads(1)
    assert tp.get_num_threads() == 1
    if _settings._s.thread_limits is not None:  # threadpoolctl installed: undo the limit
        _settings._s.thread_limits.restore_original_limits()
    tp.set_num_interop_threads(3)
    assert tp.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        tp.set_num_interop_threads(2)


def test_deterministic_algorithms_and_debug_mode(fresh_settings):
    tp.use_deterministic_algorithms(True, warn_only=True)
    assert tp.are_deterministic_algorithms_enabled()
    assert tp.is_deterministic_algorithms_warn_only_enabled()
    assert tp.get_deterministic_debug_mode() == 1
    tp.set_deterministic_debug_mode("error")
    assert tp.get_deterministic_debug_mode() == 2
    assert not tp.is_deterministic_algorithms_warn_only_enabled()
    tp.set_deterministic_debug_mode(0)
    assert not tp.are_deterministic_algorithms_enabled()


def test_matmul_precision_warn_always_denormals_and_abi(fresh_settings):
    tp.set_float32_matmul_precision("medium")
    assert tp.get_float32_matmul_precision() == "medium"
    with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
        tp.set_float32_matmul_precision("x")
    assert tp.get_float32_matmul_precision() == "medium"
    tp.set_warn_always(True)
    assert tp.is_warn_always_enabled()
    assert tp.set_flush_denormal(True) is False  # not supported: documented
    assert tp.compiled_with_cxx11_abi() is False


def test_set_default_tensor_type_warns_as_pytorch():
    try:
        with pytest.warns(UserWarning, match=r"set_default_tensor_type\(\) is deprecated"):
            tp.set_default_tensor_type("torch.DoubleTensor")
        assert tp.get_default_dtype() is tp.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError, match="only floating-point types"):
                tp.set_default_tensor_type(tp.float64)
            with pytest.raises(TypeError, match="only floating-point types"):
                tp.set_default_tensor_type("torch.LongTensor")
    finally:
        tp.set_default_dtype(tp.float32)


@pytest.mark.skipif("autograd" not in tp.plugins.loaded_names(), reason="autograd plugin")
def test_is_inference_mode_enabled():
    assert not tp.is_inference_mode_enabled()
    with tp.inference_mode():
        assert tp.is_inference_mode_enabled() and not tp.is_grad_enabled()
        with tp.inference_mode(False):
            assert not tp.is_inference_mode_enabled()
        assert tp.is_inference_mode_enabled()
    assert not tp.is_inference_mode_enabled() and tp.is_grad_enabled()


# --- predicates, Size, cpu streams --------------------------------------------------------------


def test_predicates_take_part_in_the_protocol():
    class Q:
        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            return func.__name__

    assert tp.is_complex(Q()) == "is_complex" and tp.numel(Q()) == "numel"
    assert tp.is_tensor(tp.nn.Parameter(tp.ones(1))) and not tp.is_tensor(np.ones(1))


def test_size_is_a_tuple():
    s = tp.Size([2, 3])
    assert isinstance(s, tuple) and s == (2, 3) and s.numel() == 6 and tp.Size().numel() == 1
    assert type(s[1:]) is tp.Size and type(s[0]) is int
    with pytest.raises(TypeError, match="takes an iterable of 'int'"):
        tp.Size([1.5])
    import pickle

    assert pickle.loads(pickle.dumps(s)) == s


def test_cpu_stream_and_event():
    s = tp.Stream()
    assert s == tp.cpu.current_stream() and s.device == tp.device("cpu")
    s.synchronize()
    s.wait_event(tp.Event())
    with tp.cpu.stream(s):
        pass
    assert tp.get_device_module() is tp.cpu and tp.get_device_module("cuda") is tp.cuda
    with pytest.raises(RuntimeError, match="only the cpu device"):
        tp.Stream("cuda")


# --- cond ---------------------------------------------------------------------------------------


def test_cond_runs_one_branch_eagerly():
    calls = []

    def t(x):
        calls.append("t")
        return x + 1

    def f(x):
        calls.append("f")
        return x - 1

    assert tp.cond(tp.tensor(True), t, f, (tp.ones(2),)).tolist() == [2.0, 2.0]
    assert calls == ["t"]


def test_cond_is_traced_as_a_select_of_both_branches():
    needs.tracer()

    def fn(p, x):
        return tp.cond(p, lambda v: v * 2, lambda v: v - 1, (x,))

    compiled = tp.compile(fn)
    x = tp.tensor([1.0, 2.0])
    assert compiled(tp.tensor(True), x).tolist() == [2.0, 4.0]
    assert compiled(tp.tensor(False), x).tolist() == [0.0, 1.0]  # the same graph, other branch

    def bad(p, x):
        return tp.cond(p, lambda v: v.sum(), lambda v: v, (x,))

    with pytest.raises(RuntimeError, match="same shape and dtype"):
        tp.compile(bad)(tp.tensor(True), x)
