"""The standard operator set (tensorplug._opset.api): the parsed-yaml cache (more in
test_schema_cache.py), and public functions
and Tensor methods made on first use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import tensorplug as tp
from tensorplug._opset import api as _api
from tensorplug.schema import parse
from tensorplug.tensor import Tensor


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "tensorplug"


def no_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import yaml`` fail: only the cache can answer."""
    monkeypatch.setitem(sys.modules, "yaml", None)


def test_the_cache_answers_the_second_load(cache_home, monkeypatch):
    first = _api._load_yaml()
    [cache_file] = os.listdir(cache_home)
    assert cache_file.startswith("native_functions-") and cache_file.endswith(".json")
    no_yaml(monkeypatch)
    second = _api._load_yaml()
    assert [(d["func"], str(s)) for d, s in second] == [(d["func"], str(s)) for d, s in first]
    assert all(s == parse(d["func"]) for d, s in second[:20])


def test_a_cache_of_other_yaml_text_is_not_used(cache_home, monkeypatch):
    good = _api._load_yaml()
    [cache_file] = os.listdir(cache_home)
    path = cache_home / cache_file
    data = json.loads(path.read_text())
    # same file name (as a collision of its 64-bit prefix would give), another digest: parsed
    data["digest"] = "f" * 64
    data["entries"] = data["entries"][:1]
    path.write_text(json.dumps(data))
    assert len(_api._load_yaml()) == len(good)
    path.write_bytes(b"not json")
    assert len(_api._load_yaml()) == len(good)
    no_yaml(monkeypatch)  # and the rewritten cache serves the next load
    assert len(_api._load_yaml()) == len(good)


def test_old_cache_files_are_pruned(cache_home):
    cache_home.mkdir(parents=True, mode=0o700)
    for i in range(12):  # left by earlier versions of the yaml, oldest first
        old = cache_home / f"native_functions-old{i:02d}.json"
        old.write_bytes(b"stale")
        os.utime(old, (1_000_000 + i, 1_000_000 + i))
    pickled = cache_home / "native_functions-0badcafe.pickle"  # an older tensorplug's cache
    pickled.write_bytes(b"never unpickled")
    dead = cache_home / "native_functions-old.json.123.tmp"  # a writer that died
    dead.write_bytes(b"")
    os.utime(dead, (1_000_000, 1_000_000))
    other = cache_home / "unrelated.txt"
    other.write_bytes(b"")
    _api._load_yaml()  # writes the current one, then prunes
    kept = sorted(p.name for p in cache_home.iterdir())
    current = [n for n in kept if not n.startswith("native_functions-old")]
    assert (
        len(current) == 2 and "unrelated.txt" in current
    )  # the new cache file, and ours untouched
    assert [n for n in kept if n.startswith("native_functions-old")] == [
        f"native_functions-old{i:02d}.json" for i in range(5, 12)
    ]  # the newest seven old ones, with the new file: _KEPT in all


# --- public functions and methods, made on first use (Note [Lazy public functions]) ---------

FRESH = textwrap.dedent(
    """
    import threading
    import tensorplug as tp
    from tensorplug import overrides
    from tensorplug._opset import api as _api
    from tensorplug.tensor import Tensor

    # nothing made yet, but every name is listed and return_types is complete
    assert "logsumexp" not in vars(tp) and "logsumexp" in dir(tp)
    assert _api.function_names <= set(dir(tp)) and {"nn", "optim"} <= set(dir(tp))
    assert tp.return_types.max._fields == ("values", "indices")

    # a plugin may not add a name of the core, made or not
    class P:
        @tp.hookimpl
        def tensorplug_add_names():
            return {"logsumexp": 1}
    try:
        tp.plugins.register(P, name="p")
    except tp.plugins.PluginError as e:
        assert "adds tensorplug.logsumexp, which the core already defines" in str(e), e
    else:
        raise AssertionError("registered")

    # first reads from several threads make one function
    got = []
    threads = [threading.Thread(target=lambda: got.append(tp.amax)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(f is got[0] for f in got) and vars(tp)["amax"] is got[0]
    from tensorplug import amin
    assert amin is tp.amin and tp.sub.__name__ == "sub" and "aten::sub.Tensor" in tp.sub.__doc__
    assert Tensor.mean is Tensor.mean and Tensor.mean.__qualname__ == "Tensor.mean"

    # the listings hold everything, in yaml order
    funcs = overrides.get_overridable_functions()
    names = [f.__name__ for f in funcs["tensorplug"]]
    # the predicates written in Python (_opset/predicates.py) are listed too, as torch's are
    written = {"is_complex", "is_floating_point", "is_conj", "is_nonzero", "numel", "_assert"}
    assert written <= set(names), names
    names = [n for n in names if n not in written]
    assert names == sorted(names, key=_api._order.__getitem__), names
    assert set(names) == {n for n, es in _api._function_entries.items()
                          if not all("factory" in e.tags for e in es)}
    methods = {f.__name__ for f in funcs["Tensor"]}  # the methods, and the Python operators
    assert {n for n in methods if not n.startswith("__")} == set(_api._method_entries)
    assert {"__add__", "__radd__", "__neg__", "__getitem__", "__setitem__"} <= methods
    for module in ("linalg", "special", "nn"):  # Note [Python modules]: made too, in yaml order
        names = _api.module_function_names(module)
        made = [f for f in funcs[_api.PYTHON_MODULES[module]] if f.__name__ in names]
        assert {f.__name__ for f in made} == names
        assert made == sorted(made, key=_api._yaml_position)
    assert tp.zeros in overrides.get_ignored_functions()
    print("ok")
    """
)


def test_functions_and_methods_are_made_on_first_use():
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    r = subprocess.run(
        [sys.executable, "-c", FRESH], capture_output=True, text=True, env=env, timeout=60
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_python_module_entries_make_functions_of_their_modules():
    # Note [Python modules]: linalg_vector_norm is tp.linalg.vector_norm, not tp.linalg_vector_norm
    import tensorplug.nn.functional as F

    assert "vector_norm" in dir(tp.linalg) and "expit" in dir(tp.special) and "mish" in dir(F)
    norm = tp.linalg.vector_norm
    assert (norm.__name__, norm.__module__) == ("vector_norm", "tensorplug.linalg")
    assert "aten::linalg_vector_norm(Tensor self, Scalar ord=2" in norm.__doc__
    assert norm.__doc__.startswith("tensorplug.linalg.vector_norm: dispatches")
    assert tp.linalg.vector_norm is norm and vars(tp.linalg)["vector_norm"] is norm
    assert F.mish.__module__ == "tensorplug.nn.functional"
    assert F.relu.__module__ == "tensorplug.nn.functional"  # the hand-written ones stay
    assert tp.special.erf is not tp.erf and tp.special.erf.__module__ == "tensorplug.special"
    for module, name in (
        (tp, "linalg_vector_norm"),
        (tp, "special_erf"),
        (tp.linalg, "nothing"),
        (tp.special, "linalg_matmul"),
        (F, "vector_norm"),
    ):
        with pytest.raises(AttributeError) as e:
            getattr(module, name)
        assert str(e.value) == f"module '{module.__name__}' has no attribute '{name}'"
    with pytest.raises(ValueError) as e:
        _api.OpEntry("sparse_sum(Tensor self) -> Tensor", python_module="sparse")
    assert str(e.value) == (
        "native_functions.yaml: sparse_sum(Tensor self) -> Tensor: unknown python_module "
        "'sparse'; the modules are linalg, special, fft, nn (Note [Python modules])"
    )


def test_named_returns_share_one_class():
    x = tp.tensor([[1.0, 5.0], [3.0, 2.0]])
    assert type(tp.max(x, 0)) is tp.return_types.max
    assert type(x.max(0)) is tp.return_types.max
    assert tp.max(x, 0).indices.tolist() == [1, 0]


def test_a_plugin_replacing_a_method_not_made_yet_is_rolled_back(clean_plugins, monkeypatch):
    name = "logsumexp"
    if not isinstance(Tensor.__dict__[name], _api._PendingMethod):  # made by an earlier test
        monkeypatch.setattr(Tensor, name, _api._PendingMethod(name))
    tp.plugins.register(Replacer(name), name="replacer")
    assert getattr(tp.ones(2), name)() == "replaced"
    tp.plugins.unregister("replacer")
    method = getattr(Tensor, name)  # made now, and put in place of the placeholder
    assert Tensor.__dict__[name] is method and method.__name__ == name


class Replacer:
    def __init__(self, name: str) -> None:
        self.name = name

    @tp.hookimpl
    def tensorplug_add_tensor_methods(self) -> dict:
        return {self.name: lambda self: "replaced"}


@pytest.fixture
def clean_plugins():
    before = {i.name for i in tp.plugins.list()}
    yield
    for info in tp.plugins.list():
        if info.name not in before:
            tp.plugins.unregister(info.name)


@pytest.mark.skipif("no_grad" not in vars(tp), reason="needs tensorplug-autograd")
def test_like_functions_take_requires_grad_as_pytorch():
    x = tp.ones([2, 3], dtype=tp.float32)
    for fn in (tp.zeros_like, tp.ones_like, tp.empty_like, tp.rand_like, tp.randn_like):
        r = fn(x, requires_grad=True)
        assert r.requires_grad and r.is_leaf and r.shape == (2, 3)
        assert not fn(x).requires_grad
    r = tp.full_like(x, 2.5, dtype=tp.float64, requires_grad=True)
    assert r.requires_grad and r.dtype is tp.float64 and r.tolist() == [[2.5] * 3] * 2
    with pytest.raises(
        RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"
    ):
        tp.zeros_like(tp.ones([2], dtype=tp.int64), requires_grad=True)
    # other functions with tensor options are not factories: PyTorch's bindings add none there
    with pytest.raises(TypeError, match="requires_grad"):
        tp._to_copy(x, requires_grad=True)
