"""The weights-only loader trusts nothing and the archive is checked (issue 32; Note
[Weights-only unpickling] in serialization/_unpickler.py, Note [Checkpoint format] in
serialization/__init__.py)."""

from __future__ import annotations

import collections
import dataclasses
import io
import os
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorplug as tp
from tensorplug import serialization
from tensorplug.serialization import CheckpointError

pytest.importorskip("tensorplug_cpu")

DATA = Path(__file__).parent / "data" / "serialization"


def load_bytes(payload: bytes, **kw: object) -> object:
    return tp.load(io.BytesIO(payload), **kw)


# --- the attacks of issue 32 ------------------------------------------------------------------


def test_build_on_parameter_class_is_refused():
    """62 bytes that set ``Parameter.requires_grad = False`` on the class, for good."""
    payload = (
        b"\x80\x04\x8c\x17tensorplug.nn.parameter\x8c\tParameter\x93}\x8c\rrequires_grad\x89sb."
    )
    assert len(payload) <= 62
    before = tp.nn.Parameter.__dict__.get("requires_grad")
    with pytest.raises(CheckpointError, match=r"refuses BUILD \(setting attributes\) on "):
        load_bytes(payload)
    assert tp.nn.Parameter.__dict__.get("requires_grad") is before


def test_build_on_device_class_is_refused():
    """46 bytes that set ``tensorplug.device.__eq__ = None``."""
    payload = b"\x80\x04\x8c\x11tensorplug.device\x8c\x06device\x93}\x8c\x06__eq__Nsb."
    assert len(payload) <= 46
    with pytest.raises(CheckpointError, match="refuses BUILD"):
        load_bytes(payload)
    assert tp.device("cpu") == tp.device("cpu")


class _Reduced:
    def __init__(self, fn: object, args: tuple[object, ...]) -> None:
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


@pytest.mark.parametrize("name", ["tp_dtype", "tp_device", "tp_data", "tp_keyset", "requires_grad"])
def test_a_record_cannot_set_what_tensor_declares(name):
    """Float data labelled int64 once summed to -1."""
    state = {name: tp.int64 if name == "tp_dtype" else 0}
    args = (None, "cpu", "float32", (2,), "<f4", b"\0\0\x80\xbf" * 2, False, state)
    payload = pickle.dumps(_Reduced(serialization.rebuild_tensor, args))
    with pytest.raises(CheckpointError, match=f"setting attribute '{name}' on a tensor"):
        load_bytes(payload)


def test_frozenset_of_range_bomb_is_refused():
    """49 bytes that took 2.2 GB: ``frozenset(range(3 * 10**7))``; torch refuses both."""
    payload = pickle.dumps(_Reduced(frozenset, (_Reduced(range, (3 * 10**7,)),)), protocol=4)
    with pytest.raises(CheckpointError, match="refuses to load 'builtins.range'"):
        load_bytes(payload)
    bomb = pickle.dumps(_Reduced(bytearray, (10**12,)), protocol=4)
    with pytest.raises(CheckpointError, match=r"refuses bytearray with arguments"):
        load_bytes(bomb)


def test_a_storage_record_cannot_claim_more_than_the_file():
    """A storage's numel must match its record's bytes, and a view must stay inside it."""
    f = io.BytesIO()
    tp.save({"w": tp.ones(4)}, f)
    raw = f.getvalue()
    lying = raw.replace(b"\x8c\x03cpu\x94K\x04", b"\x8c\x03cpu\x94J\x00\x00\x00\x40", 1)
    assert lying != raw
    with pytest.raises(CheckpointError, match="the record is damaged|holds 16 bytes"):
        tp.load(io.BytesIO(lying))  # (the CRC of data.pkl catches it first)
    storage = serialization._records.LoadedStorage(tp.ones(4), "0")
    with pytest.raises(pickle.UnpicklingError, match="reaches past the end of storage '0'"):
        serialization.rebuild_from_storage(storage, 3, (4,), (1,), False)
    with pytest.raises(pickle.UnpicklingError, match="reaches past"):
        serialization.rebuild_from_storage(storage, 0, (2, 2), (3, 1), False)


@dataclasses.dataclass
class Config:
    lr: float
    name: str


def test_safe_globals_allow_user_types():
    payload = pickle.dumps({"cfg": Config(0.1, "a"), "w": tp.ones(1)}, protocol=4)
    with pytest.raises(CheckpointError, match="test_serialization_safety.Config"):
        load_bytes(payload)
    assert serialization.get_safe_globals() == []
    with serialization.safe_globals([Config]):
        assert serialization.get_safe_globals() == [Config]
        assert load_bytes(payload)["cfg"] == Config(0.1, "a")
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals([(Config, "somewhere.Renamed")])
    try:
        assert serialization.get_safe_globals() == [(Config, "somewhere.Renamed")]
        renamed = payload.replace(
            b"\x8c" + bytes([len(__name__)]) + __name__.encode(), b"\x8c\tsomewhere"
        ).replace(b"\x8c\x06Config", b"\x8c\x07Renamed")
        assert load_bytes(renamed)["cfg"] == Config(0.1, "a")
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(st.binary(max_size=200), st.binary(min_size=1, max_size=8), st.integers(0, 10**6))
def test_fuzzed_pickles_raise_only_checkpoint_errors(noise, patch, seed):
    """Random bytes, and a real checkpoint's pickle with bytes replaced: a CheckpointError or a
    value, never another exception."""
    good = pickle.dumps({"w": tp.arange(3.0), "n": [1, (2.5, "s")], "d": tp.float16}, protocol=4)
    at = seed % len(good)
    mutated = good[:at] + patch + good[at + len(patch) :]
    for payload in (b"\x80\x04" + noise, mutated, good[: seed % len(good)]):
        try:
            load_bytes(payload)
        except CheckpointError:
            pass


# --- the archive ---------------------------------------------------------------------------


def checkpoint() -> dict[str, object]:
    net = tp.nn.Linear(3, 2)
    return {
        "model": net.state_dict(),
        "optim": {"state": {0: {"step": 1, "exp_avg": tp.ones(2, 3)}}, "lr": 0.5},
        "names": ["a", "b"],
    }


def flat(obj: object) -> object:
    if isinstance(obj, tp.Tensor):
        return ("T", obj.dtype.name, tuple(obj.shape), np.asarray(obj.tolist()).tobytes())
    if isinstance(obj, dict):
        return (type(obj).__name__, [(k, flat(v)) for k, v in obj.items()])
    if isinstance(obj, list | tuple):
        return [flat(v) for v in obj]
    return obj


def test_single_byte_flips_load_identical_values_or_raise_checkpoint_error():
    """Of 400 flips of the old format, 203 loaded different values silently."""
    f = io.BytesIO()
    obj = checkpoint()
    tp.save(obj, f)
    raw = f.getvalue()
    expected = flat(tp.load(io.BytesIO(raw)))
    rng = random.Random(0)
    outcomes = collections.Counter()
    for _ in range(300):
        bad = bytearray(raw)
        i = rng.randrange(len(bad))
        bad[i] ^= 1 << rng.randrange(8)
        try:
            got = tp.load(io.BytesIO(bytes(bad)))
        except CheckpointError as e:
            assert "record" in str(e) or "zip" in str(e) or "checkpoint" in str(e), str(e)
            outcomes["refused"] += 1
            continue
        assert flat(got) == expected, f"byte {i} flipped loads different values"
        outcomes["same"] += 1
    assert outcomes["refused"] > 100, outcomes  # the rest hit timestamps, padding, ...


def test_corruption_names_the_file_and_the_record(tmp_path):
    path = tmp_path / "c.tp"
    tp.save({"w": tp.arange(100.0)}, path)
    raw = bytearray(path.read_bytes())
    at = raw.index(np.arange(100.0, dtype=np.float32)[50:51].tobytes())
    raw[at] ^= 0x40
    path.write_bytes(bytes(raw))
    with pytest.raises(
        CheckpointError,
        match=r"file '.*c\.tp', record 'archive/data/0': the "
        r"record is damaged \(BadZipFile: Bad CRC-32",
    ):
        tp.load(path)
    for bad, message in [
        (b"", "not a checkpoint"),
        (b"hello world", "not a checkpoint"),
        (bytes(raw[:40]), "zip directory is damaged"),
        (b"\x80\x04K", "the pickle is truncated"),
    ]:
        path.write_bytes(bad)
        with pytest.raises(CheckpointError, match=message):
            tp.load(path)


class _Exploding:
    def __reduce__(self):
        raise RuntimeError("pickling failed midway")


def test_a_failed_save_leaves_the_old_file_intact(tmp_path):
    path = tmp_path / "model.tp"
    tp.save({"w": tp.ones(3)}, path)
    before = path.read_bytes()
    with pytest.raises(RuntimeError, match="pickling failed midway"):
        tp.save({"w": tp.zeros(3), "boom": _Exploding()}, path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["model.tp"]  # no temporary left behind
    assert tp.load(path)["w"].tolist() == [1.0, 1.0, 1.0]


def test_files_of_tensorplug_0_1_still_load():
    """tests/core/data/serialization/legacy_v0.tp: written by tp.save before the archive."""
    d = tp.load(DATA / "legacy_v0.tp")
    assert d["sd"]["weight"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert type(d["sd"]["weight"]) is tp.nn.Parameter
    assert d["sd"]["bias"].dtype is tp.int64 and d["sd"]["bias"].tolist() == [1, -2]
    assert d["bf16"].dtype is tp.bfloat16 and d["bf16"].tolist() == [1.5, -2.0]
    assert d["step"] == 3 and d["dtype"] is tp.float16 and d["device"] == tp.device("cpu")
    with pytest.raises(CheckpointError, match=r"re-save it with tp.save \(tensorplug >= 0.1.3\)"):
        tp.load(DATA / "legacy_v0.tp", mmap=True)


def test_a_newer_format_asks_for_an_upgrade(tmp_path):
    import zipfile

    path = tmp_path / "new.tp"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", pickle.dumps(1, protocol=4))
        zf.writestr("archive/.tensorplug_format", b"99")
    with pytest.raises(CheckpointError, match="format 99, by a newer tensorplug.*upgrade"):
        tp.load(path)


def test_map_location_and_mmap(tmp_path):
    path = tmp_path / "m.tp"
    x = tp.arange(12.0).reshape(3, 4)
    tp.save({"x": x, "i": tp.arange(3)}, path)
    for where in ("cpu", tp.device("cpu"), {"cpu": "cpu"}, lambda s, loc: s, lambda s, loc: None):
        d = tp.load(path, map_location=where)
        assert d["x"].tolist() == x.tolist() and d["x"].device == tp.device("cpu")
    seen = []
    tp.load(path, map_location=lambda s, loc: seen.append((loc, s.dtype)))
    assert seen == [("cpu", tp.float32), ("cpu", tp.int64)]
    with pytest.raises(RuntimeError, match="Unknown device type 'nowhere'"):
        tp.load(path, map_location="nowhere")
    m = tp.load(path, mmap=True)
    assert m["x"].tolist() == x.tolist()
    m["x"].add_(1)  # copy-on-write: the file is unchanged
    assert tp.load(path)["x"].tolist() == x.tolist()
    with pytest.raises(ValueError, match="needs a path"):
        tp.load(io.BytesIO(path.read_bytes()), mmap=True)


def test_a_malformed_device_is_the_files_fault_and_an_unknown_one_is_named():
    payload = pickle.dumps(tp.ones(2))
    with pytest.raises(
        CheckpointError,
        match=r"file '<BytesIO>', record '\(pickle stream\)': a "
        r"device in this file is malformed: Invalid device string: 'c\+u'",
    ):
        load_bytes(payload.replace(b"\x03cpu", b"\x03c+u"))
    with pytest.raises(RuntimeError, match="cannot load a tensor of device type 'cpx'"):
        load_bytes(payload.replace(b"\x03cpu", b"\x03cpx"))


def test_weights_only_false_reads_archives_as_pickle_does(tmp_path):
    path = tmp_path / "t.tp"
    obj = {"w": tp.arange(4.0)[1:], "cfg": Config(0.5, "b")}
    tp.save(obj, path)
    with pytest.raises(CheckpointError, match="Config"):
        tp.load(path)
    back = tp.load(path, weights_only=False)
    assert back["w"].tolist() == [1.0, 2.0, 3.0] and back["cfg"] == Config(0.5, "b")


def test_without_the_safetensors_package_the_error_says_what_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match=r'pip install "tensorplug\[safetensors\]"'):
        serialization.load_safetensors("x.safetensors")
