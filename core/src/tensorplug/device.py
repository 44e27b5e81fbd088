"""Devices: where a tensor's storage lives (DESIGN §6).

A :class:`device` is an immutable (type, index) pair such as ``cuda:0`` or ``cpu``. The type is
any lowercase identifier; this module does not check that a backend for it is installed — the
dispatcher does that when a tensor is created on the device, so a plugin can introduce a new
device type without touching the core.

Usage::

    from tensorplug.device import canonical, device, set_default_device

    device("cuda:1") == device("cuda", 1)     # True
    str(device("cuda", 1))                    # 'cuda:1'
    canonical(None)                           # the default device, initially device(type='cpu')
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["canonical", "device", "get_default_device", "set_default_device"]

# "type" or "type:index"; the type is a lowercase identifier and the index a non-negative
# decimal without leading zeros, as PyTorch accepts them ("cuda:01" is rejected there too).
_DEVICE_STRING = re.compile(r"(?P<type>[a-z_][a-z0-9_]*)(?::(?P<index>0|[1-9][0-9]*))?")


class device:
    """Where a tensor lives: a device ``type`` ("cpu", "cuda") and an optional ``index``.

    Accepted forms: ``device("cuda:0")``, ``device("cuda", 0)``, ``device("cpu")`` and
    ``device(other_device)``. Malformed strings raise ``RuntimeError``, as in PyTorch.
    """

    __slots__ = ("_type", "_index")

    _type: str
    _index: int | None

    def __init__(self, type: str | device, index: int | None = None) -> None:
        if isinstance(type, device):
            if index is not None:
                raise TypeError(
                    f"device(): an index cannot be passed together with a device, got {type!r} "
                    f"and index {index!r}"
                )
            parsed_type, parsed_index = type.type, type.index
        elif isinstance(type, str):
            parsed_type, parsed_index = _parse(type)
            if index is not None:
                if parsed_index is not None:
                    raise RuntimeError(
                        "type (string) must not include an index because index was passed "
                        f"explicitly: {type}"
                    )
                parsed_index = _check_index(index)
        else:
            raise TypeError(
                "device() expects a device string such as 'cuda:0', a device type and an index "
                f"such as ('cuda', 0), or a device; got {_typename(type)} {type!r}"
            )
        object.__setattr__(self, "_type", parsed_type)
        object.__setattr__(self, "_index", parsed_index)

    @property
    def type(self) -> str:
        """The device type, e.g. "cpu" or "cuda"."""
        return self._type

    @property
    def index(self) -> int | None:
        """The device ordinal, or None when the string named no index ("cuda")."""
        return self._index

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"tensorplug.device is immutable; cannot set {key!r}")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"tensorplug.device is immutable; cannot delete {key!r}")

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type={self._type!r})"
        return f"device(type={self._type!r}, index={self._index})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return self._type == other._type and self._index == other._index

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (self._type, self._index))


def _typename(x: object) -> str:
    return type(x).__name__


def _parse(text: str) -> tuple[str, int | None]:
    if not text:
        raise RuntimeError("Device string must not be empty")
    match = _DEVICE_STRING.fullmatch(text)
    if match is None:
        raise RuntimeError(f"Invalid device string: {text!r}")
    index = match.group("index")
    return match.group("type"), None if index is None else int(index)


def _check_index(index: object) -> int:
    # bool is an int subclass, but device("cuda", True) is a mistake (PyTorch rejects it too).
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"device(): index must be an int or None, got {_typename(index)} {index!r}")
    if index < 0:
        raise RuntimeError(f"Device index must not be negative, got {index}")
    return index


_CPU = device("cpu")
_default_device: device = _CPU


def get_default_device() -> device:
    """The device factories use when none is given (initially ``cpu``)."""
    return _default_device


def set_default_device(d: str | device | None) -> None:
    """Set the default device process-wide; ``None`` restores ``cpu`` (as in PyTorch)."""
    global _default_device
    _default_device = _CPU if d is None else device(d)


def canonical(d: str | device | None) -> device:
    """The device a factory should use: None is the default device, a string is parsed."""
    if d is None:
        return _default_device
    if isinstance(d, device):
        return d
    return device(d)
