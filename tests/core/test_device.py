"""Tests for tensorplug.device: parsing, equality, pickling and the default device."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator
from typing import Any

import pytest

from tensorplug.device import canonical, device, get_default_device, set_default_device


@pytest.fixture
def default_device() -> Iterator[None]:
    """Restore the default device after a test that changes it."""
    saved = get_default_device()
    try:
        yield
    finally:
        set_default_device(saved)


@pytest.mark.parametrize(
    ("text", "type_", "index"),
    [
        ("cpu", "cpu", None),
        ("cpu:0", "cpu", 0),
        ("cuda", "cuda", None),
        ("cuda:0", "cuda", 0),
        ("cuda:17", "cuda", 17),
        ("privateuseone:3", "privateuseone", 3),
        ("my_accel2", "my_accel2", None),  # no backend check here (the dispatcher does that)
        ("_x:1", "_x", 1),
    ],
)
def test_parse_good_strings(text: str, type_: str, index: int | None) -> None:
    d = device(text)
    assert d.type == type_
    assert d.index == index
    assert str(d) == text  # str() gives back the text that was parsed


@pytest.mark.parametrize(
    "text",
    [
        "cuda:x",
        "cuda:",
        ":0",
        "cuda:-1",
        "cuda:01",
        "cuda:0:1",
        "cuda:0 ",
        " cuda",
        "CUDA",
        "cuda-0",
        "1cuda",
        "cu da",
        "cuda:1x",
        "cuda:+1",
        "cuda:٣",  # a non-ASCII digit
    ],
)
def test_parse_bad_strings(text: str) -> None:
    with pytest.raises(RuntimeError) as info:
        device(text)
    assert str(info.value) == f"Invalid device string: {text!r}"


def test_empty_string() -> None:
    with pytest.raises(RuntimeError, match="^Device string must not be empty$"):
        device("")


def test_type_and_index() -> None:
    assert device("cuda", 0) == device("cuda:0")
    assert device("cuda", None) == device("cuda")
    assert device(type="cuda", index=2).index == 2


def test_type_and_index_errors() -> None:
    with pytest.raises(RuntimeError, match="^Device index must not be negative, got -1$"):
        device("cuda", -1)
    with pytest.raises(
        RuntimeError,
        match="^type \\(string\\) must not include an index because index was passed "
        "explicitly: cuda:0$",
    ):
        device("cuda:0", 1)
    with pytest.raises(TypeError, match="index must be an int or None, got bool True"):
        device("cuda", True)
    with pytest.raises(TypeError, match="index must be an int or None, got float 1.0"):
        device("cuda", 1.0)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Invalid device string: 'cuda:x'"):
        device("cuda:x", 0)


def test_from_device() -> None:
    d = device("cuda:1")
    assert device(d) == d
    with pytest.raises(TypeError, match="an index cannot be passed together with a device"):
        device(d, 0)


@pytest.mark.parametrize("bad", [0, None, 1.5, b"cuda", ("cuda", 0)])
def test_other_forms_are_rejected(bad: Any) -> None:
    with pytest.raises(TypeError) as info:
        device(bad)
    message = str(info.value)
    assert message.startswith(
        "device() expects a device string such as 'cuda:0', a device type and an index"
    )
    assert repr(bad) in message


def test_str_and_repr() -> None:
    assert str(device("cuda", 0)) == "cuda:0"
    assert str(device("cpu")) == "cpu"
    assert repr(device("cuda:0")) == "device(type='cuda', index=0)"
    assert repr(device("cpu")) == "device(type='cpu')"


def test_equality_and_hash() -> None:
    assert device("cuda:0") == device("cuda", 0)
    assert hash(device("cuda:0")) == hash(device("cuda", 0))
    assert device("cuda") != device("cuda:0")  # no index is not index 0
    assert device("cuda:0") != device("cuda:1")
    assert device("cpu") != device("meta")
    assert device("cpu") != "cpu"  # strings are not devices, as in PyTorch
    assert len({device("cpu"), device("cpu"), device("cpu:0")}) == 2


def test_immutable() -> None:
    d = device("cuda:0")
    with pytest.raises(AttributeError):
        d.index = 1  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        d._index = 1
    with pytest.raises(AttributeError, match="immutable"):
        del d._type


@pytest.mark.parametrize("text", ["cpu", "cuda:3"])
def test_pickle_and_copy(text: str) -> None:
    d = device(text)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        restored = pickle.loads(pickle.dumps(d, protocol))
        assert restored == d
        assert (restored.type, restored.index) == (d.type, d.index)
    assert copy.copy(d) == d
    assert copy.deepcopy(d) == d


def test_default_device_is_cpu() -> None:
    assert get_default_device() == device("cpu")


@pytest.mark.usefixtures("default_device")
def test_set_default_device() -> None:
    set_default_device("cuda:1")
    assert get_default_device() == device("cuda", 1)
    set_default_device(device("meta"))
    assert get_default_device() == device("meta")
    set_default_device(None)
    assert get_default_device() == device("cpu")
    with pytest.raises(RuntimeError, match="Invalid device string: 'cuda:x'"):
        set_default_device("cuda:x")
    assert get_default_device() == device("cpu")


@pytest.mark.usefixtures("default_device")
def test_canonical() -> None:
    assert canonical(None) == device("cpu")
    assert canonical("cuda:2") == device("cuda", 2)
    d = device("cuda")
    assert canonical(d) is d
    set_default_device("cuda:0")
    assert canonical(None) == device("cuda:0")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        canonical("cuda:")
