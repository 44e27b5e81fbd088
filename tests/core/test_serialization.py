"""tp.save / tp.load and tensor pickles (Note [Tensor pickles] in serialization/__init__.py)."""

from __future__ import annotations

import collections
import copy
import io
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import serialization
from tests import needs

pytest.importorskip("tensorplug_cpu")


def round_trip(obj: object, **kw: object) -> object:
    f = io.BytesIO()
    tp.save(obj, f)
    f.seek(0)
    return tp.load(f, **kw)


def same(a: tp.Tensor, b: tp.Tensor) -> None:
    assert type(a) is type(b) and a.dtype is b.dtype and a.device == b.device
    assert a.shape == b.shape
    np.testing.assert_array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()))
    assert b._tp_keyset & tp.keys.plain_mask() == tp.keys.tensor_keyset(b.device.type.upper())


@pytest.mark.parametrize("dtype", [d for d in tp.dtypes.all_dtypes()], ids=str)
def test_every_dtype_round_trips(dtype):
    x = tp.tensor([[0, 1, 2], [3, 4, 5]]).to(dtype)
    same(x, round_trip(x))
    same(x, pickle.loads(pickle.dumps(x)))


def test_shapes_views_and_copies():
    base = tp.arange(24.0).reshape(2, 3, 4)
    for x in (tp.tensor(3.5), tp.zeros(0, 3), base, base.transpose(0, 2), base[:, 1, ::2]):
        y = round_trip(x)
        same(x, y)
        assert y._version == 0 and y._base is None  # a tensor of its own
    a = tp.arange(4)
    b = copy.deepcopy(a)
    b.add_(1)
    assert a.tolist() == [0, 1, 2, 3] and copy.copy(a).tolist() == [0, 1, 2, 3]


def test_containers_dtypes_devices_and_state_dicts():
    net = tp.nn.Linear(3, 2)
    obj = {
        "sd": net.state_dict(),
        "list": [1, 2.5, 1 + 2j, "s", b"b", None, True, (1, (2,)), {1, 2}, frozenset({3})],
        "dtype": tp.bfloat16,
        "device": tp.device("cpu"),
        "od": collections.OrderedDict(a=tp.ones(2)),
    }
    back = round_trip(obj)
    assert type(back["sd"]) is collections.OrderedDict and list(back["sd"]) == ["weight", "bias"]
    for k, v in obj["sd"].items():
        same(v, back["sd"][k])
    assert back["list"] == obj["list"]
    assert back["dtype"] is tp.bfloat16 and back["device"] == tp.device("cpu")
    other = tp.nn.Linear(3, 2)
    other.load_state_dict(back["sd"])
    x = tp.randn(4, 3)
    assert other(x).tolist() == net(x).tolist()


def test_save_to_a_path(tmp_path):
    path = tmp_path / "x.tp"
    tp.save({"x": tp.arange(3)}, path)
    assert tp.load(path)["x"].tolist() == [0, 1, 2]
    assert tp.load(str(path), weights_only=False)["x"].tolist() == [0, 1, 2]


def test_user_attributes_are_kept_and_plugin_state_is_not():
    x = tp.ones(2)
    x.note = "kept"
    x._private = "dropped"
    y = round_trip(x)
    assert y.note == "kept" and not hasattr(y, "_private")


@needs.needs_autograd
def test_a_tensor_that_requires_grad_loads_as_a_leaf_without_its_graph():
    """As PyTorch: the data of ``x * 2``, requiring grad, with no grad_fn (it once failed
    with a PicklingError about MulBackward1)."""
    x = tp.ones(2, requires_grad=True)
    y = x * 2
    for z in (round_trip(y), pickle.loads(pickle.dumps(y))):
        assert z.tolist() == [2.0, 2.0] and z.requires_grad and z.is_leaf and z.grad_fn is None
    p = tp.nn.Parameter(tp.randn(3))
    q = round_trip(p)
    assert type(q) is tp.nn.Parameter and q.requires_grad
    assert not round_trip(tp.nn.Parameter(tp.ones(1), requires_grad=False)).requires_grad


class Planted:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "ran"))


def test_weights_only_refuses_anything_else(tmp_path):
    marker = tmp_path / "marker"
    f = io.BytesIO(pickle.dumps({"w": tp.ones(2), "evil": Planted(marker)}))
    with pytest.raises(
        pickle.UnpicklingError,
        match=r"tp.load\(weights_only=True\) refuses to load 'pathlib.Path.write_text': it builds "
        r"only tensors, containers, numbers, strings, dtypes, devices and OrderedDict. If you trust "
        r"the file, load it with tp.load\(f, weights_only=False\)",
    ):
        tp.load(f)
    assert not marker.exists()
    for payload in (
        b"\x80\x02cos\nsystem\n(S'echo pwned'\ntR.",  # os.system
        pickle.dumps(Planted),  # a class of this test module
        pickle.dumps(print),
    ):
        with pytest.raises(pickle.UnpicklingError, match="weights_only=True"):
            tp.load(io.BytesIO(payload))
    f.seek(0)
    assert tp.load(f, weights_only=False)["w"].tolist() == [1.0, 1.0]  # trusted: as pickle
    assert marker.read_text() == "ran"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((None, "cpu", "float33", (2,), "<f4", b"\0" * 8, False, None), "unknown dtype 'float33'"),
        ((None, "cpu", "float32", (2,), "<f4", b"\0" * 7, False, None), "holds 7 bytes, not the 8"),
        ((None, "cpu", "float32", (-2,), "<f4", b"", False, None), "malformed"),
        ((None, "cpu", "float32", (2,), "O", b"\0" * 8, False, None), "malformed"),
        ((None, "cpu", "float32", (2,), "<f4", b"\0" * 8, "yes", None), "malformed"),
    ],
)
def test_malformed_tensor_records_are_refused(args, message):
    payload = pickle.dumps(_Reduced(serialization.rebuild_tensor, args))
    with pytest.raises(pickle.UnpicklingError, match=message):
        tp.load(io.BytesIO(payload))


class _Reduced:
    def __init__(self, fn: object, args: tuple[object, ...]) -> None:
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


def test_a_device_type_no_plugin_provides_is_named():
    payload = pickle.dumps(
        _Reduced(
            serialization.rebuild_tensor,
            (None, "nowhere", "float32", (1,), "<f4", b"\0" * 4, False, None),
        )
    )
    with pytest.raises(
        RuntimeError,
        match=r"cannot load a tensor of device type 'nowhere' \(float32, shape \[1\]\): Unknown device type 'nowhere'",
    ):
        tp.load(io.BytesIO(payload))


# --- across processes with different plugin sets ---------------------------------------------

SAVE = textwrap.dedent(
    """
    import sys, tensorplug as tp, tensorplug_foo
    # another backend first, so that Foo's bits here are not the ones it gets by default
    tp.keys.register_backend("Shift", "shift")
    tp.plugins.register(tensorplug_foo, name="foo")
    print(tp.keys.get("Foo").bit)
    tp.save({"foo": tp.tensor([1.5, 2.5], device="foo"), "cpu": tp.arange(3)}, sys.argv[1])
    """
)
LOAD_WITH_FOO = textwrap.dedent(
    """
    import sys, tensorplug as tp
    d = tp.load(sys.argv[1])
    x = d["foo"]
    assert x.device.type == "foo" and x._tp_keyset == tp.keys.tensor_keyset("Foo"), x._tp_keyset
    with tp.foo_counting() as counts:
        y = x * 2
    assert y.tolist() == [3.0, 5.0] and counts["aten::mul.Scalar"] == 1, dict(counts)
    print(tp.keys.get("Foo").bit, d["cpu"].tolist())
    """
)
LOAD_WITHOUT_FOO = textwrap.dedent(
    """
    import sys, tensorplug as tp
    # a backend that takes the bit Foo had where the file was written
    tp.keys.register_backend("Bar", "bar")
    print(tp.keys.get("Bar").bit)
    try:
        tp.load(sys.argv[1])
    except RuntimeError as e:
        print(e)
    """
)


def run(code: str, path: Path, plugins: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    env["TENSORPLUG_PLUGINS"] = plugins
    r = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()


def test_pickles_cross_processes_with_other_plugin_sets(tmp_path):
    """Bits differ between the processes; the tensors do not (once, a foo tensor loaded where
    another backend had Foo's bit ran that backend's kernels)."""
    pytest.importorskip("tensorplug_foo")
    path = tmp_path / "t.tp"
    (saved_bit,) = run(SAVE, path, "cpu")
    loaded_bit, cpu = run(LOAD_WITH_FOO, path, "cpu,foo")[0].split(" ", 1)
    assert loaded_bit != saved_bit and cpu == "[0, 1, 2]"
    bar_bit, error = run(LOAD_WITHOUT_FOO, path, "cpu")
    assert bar_bit == saved_bit or bar_bit == loaded_bit  # it holds a bit Foo had somewhere
    assert error.startswith(
        "cannot load a tensor of device type 'foo' (float32, storage at 'foo'): Unknown device "
        "type 'foo'"
    )


def test_meta_tensors_pickle_their_shape_and_dtype():
    """As PyTorch's (a multiprocessing.Queue consumer of one once waited forever)."""
    m = tp.empty(2, 3, dtype=tp.float16, device="meta")
    for back in (pickle.loads(pickle.dumps(m)), round_trip({"m": m})["m"], copy.deepcopy(m)):
        assert back.device == tp.device("meta") and back.shape == (2, 3)
        assert back.dtype is tp.float16


@needs.needs_autograd
def test_deepcopy_of_a_non_leaf_that_requires_grad_is_refused():
    """PyTorch's rule: deepcopy only graph leaves (pickle.dumps saves the data as a leaf)."""
    x = tp.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Only Tensors created explicitly by the user \(graph "):
        copy.deepcopy(x * 2)
    y = copy.deepcopy(x)
    assert y.requires_grad and y.is_leaf and y.tolist() == [1.0, 1.0] and y is not x
    assert copy.deepcopy((x * 2).detach()).tolist() == [2.0, 2.0]
    z = tp.ones(1)
    z.note = ["kept"]
    w = copy.deepcopy(z)
    assert w.note == ["kept"] and w.note is not z.note


def test_views_of_one_base_share_one_storage_record():
    """As torch.save: the base once, each view by offset and strides; loaded, they share it."""
    import zipfile

    b = tp.arange(12.0)
    obj = {"base": b, "view": b[2:8].reshape(2, 3), "t": b.reshape(3, 4).transpose(0, 1)}
    obj["alone"] = b[::3]  # a view saved without its base still saves the base's storage
    f = io.BytesIO()
    tp.save(obj, f)
    assert [n for n in zipfile.ZipFile(f).namelist() if "/data/" in n] == ["archive/data/0"]
    f.seek(0)
    back = tp.load(f)
    for k, v in obj.items():
        same(v, back[k])
    back["base"].add_(100)
    assert back["view"].tolist()[0] == [102.0, 103.0, 104.0]
    assert back["t"].tolist()[0] == [100.0, 104.0, 108.0]
    assert back["alone"].tolist() == [100.0, 103.0, 106.0, 109.0]
    assert back["view"]._version == back["base"]._version == 1
