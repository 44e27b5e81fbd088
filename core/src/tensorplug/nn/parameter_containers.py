"""Containers of parameters: ``ParameterList`` and ``ParameterDict``, as PyTorch's.

Both register their entries on themselves, so ``parameters()`` and ``state_dict()`` reach them
(``"0"``, ``"1"``, ... for a list, the keys for a dict). A plain tensor put in one becomes a
``Parameter``; other objects are kept as plain attributes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..tensor import Tensor
from .module import Module
from .parameter import Parameter

__all__ = ["ParameterDict", "ParameterList"]


def _as_parameter(value: Any) -> Any:
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe(key: Any, p: Any) -> str:
    if isinstance(p, Tensor):
        size = "x".join(str(s) for s in p.shape)
        device = f" ({p.device})" if p.device.type not in ("cpu", "meta") else ""
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        return f"  ({key}): {kind} containing: [{p.dtype} of size {size}{device}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """A list of parameters: indexing, ``len``, iteration, ``append``, ``extend``, ``+=``."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _index(self, idx: int) -> int:
        if not (-len(self) <= idx < len(self)):
            raise IndexError(f"index {idx} is out of range")
        return idx % len(self)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return ParameterList(self[i] for i in range(len(self))[idx])
        return getattr(self, str(self._index(idx)))

    def __setitem__(self, idx: int, param: Any) -> None:
        idx = self._index(idx)
        setattr(self, str(idx), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value: Any) -> ParameterList:
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_describe(k, p) for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of parameters, keys in insertion order: ``[]``, ``in``, ``keys`` / ``values`` /
    ``items``, ``update``, ``pop``, ``get``, ``setdefault``, ``clear``, ``copy``."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        setattr(self, self._key_to_attr(key), _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> Any:
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        return (self[k] for k in self._keys)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        k, _ = self._keys.popitem()
        self._keys[k] = None  # put back: __delitem__ takes it out
        return k, self.pop(k)

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def copy(self) -> ParameterDict:
        return ParameterDict({k: self[k] for k in self._keys})

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def update(self, parameters: Any) -> None:
        if not isinstance(parameters, Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, "
                "but got " + type(parameters).__name__
            )
        if isinstance(parameters, Mapping | ParameterDict):
            for key, value in parameters.items():
                self[key] = value
            return
        for j, p in enumerate(parameters):
            if not isinstance(p, Iterable):
                raise TypeError(
                    f"ParameterDict update sequence element #{j} should be Iterable; is "
                    + type(p).__name__
                )
            p = list(p)
            if len(p) != 2:
                raise ValueError(
                    f"ParameterDict update sequence element #{j} has length {len(p)}; 2 is required"
                )
            self[p[0]] = p[1]

    def __or__(self, other: ParameterDict) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def extra_repr(self) -> str:
        return "\n".join(_describe(k, p) for k, p in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")
