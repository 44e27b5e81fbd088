"""Containers of modules: ``Sequential`` (applied in order), ``ModuleList`` and ``ModuleDict``.

All three register their entries as children, so ``parameters()``, ``state_dict()``,
``train()`` and ``to()`` reach them: a ``ModuleList``'s children are named ``"0"``, ``"1"``,
... (``state_dict()`` keys ``"0.weight"``, ...), a ``ModuleDict``'s by their keys. Only
``Sequential`` has a ``forward``; the other two hold modules for a ``forward`` written by hand.

Usage::

    class Net(tp.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = tp.nn.ModuleList([tp.nn.Linear(4, 4) for _ in range(3)])
            self.heads = tp.nn.ModuleDict({"cls": tp.nn.Linear(4, 2), "reg": tp.nn.Linear(4, 1)})

        def forward(self, x, head):
            for layer in self.layers:
                x = tp.relu(layer(x))
            return self.heads[head](x)
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Any, cast, overload

from .module import Module

__all__ = ["ModuleDict", "ModuleList", "Sequential"]


class Sequential(Module):
    """``Sequential(m0, m1, ...)`` or ``Sequential(OrderedDict(name=module, ...))``.

    Calling it feeds the input to the first module and each output to the next. Children are
    named ``"0"``, ``"1"``, ... (or by the dict's keys), so parameters are ``"0.weight"``, ...
    Indexing (negative indices and slices), ``len``, iteration, ``[i] = module``, ``del``,
    ``append`` / ``extend`` / ``insert`` / ``pop`` and ``+`` / ``+=`` (with another
    Sequential) work as in PyTorch: ``del``, ``insert`` and ``pop`` renumber the children
    ``"0"`` to ``"n-1"``, names given by an OrderedDict included.
    """

    def __init__(self, *args: Module | OrderedDict[str, Module]) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
            return
        for i, arg in enumerate(args):
            if not isinstance(arg, Module):
                raise TypeError(f"Sequential: argument {i} is a {type(arg).__name__}, not a Module")
            self.add_module(str(i), arg)

    def _key(self, idx: Any) -> str:
        """The name of the child at position ``idx`` (negative counts from the end)."""
        i = _position(self, "Sequential", idx)
        return list(self._modules)[i]

    @overload
    def __getitem__(self, idx: int) -> Module: ...
    @overload
    def __getitem__(self, idx: slice) -> Sequential: ...

    def __getitem__(self, idx: int | slice) -> Module | Sequential:
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(_held(self).items())[idx]))
        return _held(self)[self._key(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        modules = list(_held(self).values())
        if isinstance(idx, slice):
            del modules[idx]
        else:
            del modules[_position(self, "Sequential", idx)]
        _renumber(self, modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(_held(self).values())

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append each module of ``sequential`` (a Sequential or any iterable of modules)."""
        for module in sequential:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Put ``module`` before position ``index`` (``-len <= index <= len``)."""
        if not isinstance(module, Module):
            raise TypeError(
                f"Sequential.insert: module should be of type Module, but got a "
                f"{_typename(module)}; pass a Module"
            )
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules = list(_held(self).values())
        modules.insert(index, module)
        _renumber(self, modules)
        return self

    @overload
    def pop(self, key: int) -> Module: ...
    @overload
    def pop(self, key: slice) -> Sequential: ...

    def pop(self, key: int | slice) -> Module | Sequential:
        """Remove the module (or slice of modules) at ``key`` and return it."""
        taken = self[key]
        del self[key]
        return taken

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{_typename(other)} is given."
            )
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{_typename(other)} is given."
            )
        return self.extend(other)

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


def _held(container: Module) -> dict[str, Module]:
    """``container._modules``, typed as the containers' public API types it: Modules.

    A None placeholder (``append(None)``, ``[i] = None``, ``ModuleDict({"a": None})``) is kept
    and read back as None, as in PyTorch; PyTorch's annotations say Module all the same, so
    that ``self.layers[0](x)`` type-checks in user code.
    """
    return cast("dict[str, Module]", container._modules)


def _typename(value: object) -> str:
    return type(value).__name__


def _position(container: Module, kind: str, idx: Any) -> int:
    """``idx`` as a position in range of ``container`` (a negative one counts from the end)."""
    try:
        i = operator.index(idx)
    except TypeError:
        raise TypeError(
            f"{kind} indices must be integers or slices, not {_typename(idx)}"
        ) from None
    n = len(container._modules)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range for a {kind} of length {n}")
    return i % n


def _renumber(container: Module, modules: list[Module]) -> None:
    """Make ``modules`` the children of ``container``, named ``"0"``, ``"1"``, ... in order."""
    held = _held(container)
    held.clear()
    held.update((str(i), m) for i, m in enumerate(modules))


class ModuleList(Module):
    """``ModuleList(modules=None)``: a list of modules, registered as children ``"0"``, ``"1"``,
    ...; indexing, ``len``, iteration, ``append`` / ``extend`` / ``insert`` / ``pop``, ``del``
    and ``+`` / ``+=`` behave as a Python list's, and the children are renumbered after each
    change so that their names stay ``"0"`` to ``"n-1"`` in order. An entry may be None, a
    placeholder that is kept (and counted, and iterated over) but holds no parameters.
    """

    def __init__(self, modules: Iterable[Module | None] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _check(self, method: str, module: Any) -> Module:
        if module is not None and not isinstance(module, Module):
            raise TypeError(
                f"ModuleList.{method}: got a {_typename(module)}, not a Module (or None)"
            )
        return cast(Module, module)

    def _position(self, idx: Any) -> int:
        return _position(self, "ModuleList", idx)

    @overload
    def __getitem__(self, idx: int) -> Module: ...
    @overload
    def __getitem__(self, idx: slice) -> ModuleList: ...

    def __getitem__(self, idx: int | slice) -> Module | ModuleList:
        if isinstance(idx, slice):
            return ModuleList(list(self)[idx])
        return _held(self)[str(self._position(idx))]

    def __setitem__(self, idx: int, module: Module | None) -> None:
        if isinstance(idx, slice):
            raise TypeError(
                "ModuleList does not support slice assignment: assign one module "
                "at a time, at an integer index"
            )
        i = self._position(idx)
        _held(self)[str(i)] = self._check("__setitem__", module)

    def __delitem__(self, idx: int | slice) -> None:
        modules = list(self)
        if isinstance(idx, slice):
            del modules[idx]
        else:
            del modules[self._position(idx)]
        _renumber(self, modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(_held(self).values())

    def __iadd__(self, modules: Iterable[Module | None]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module | None]) -> ModuleList:
        return ModuleList(self).extend(other)

    def append(self, module: Module | None) -> ModuleList:
        """Add ``module`` at the end."""
        _held(self)[str(len(self))] = self._check("append", module)
        return self

    def extend(self, modules: Iterable[Module | None]) -> ModuleList:
        """Add each module of ``modules`` at the end; nothing is added if one is not a Module
        (or None)."""
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList can only be extended (extend, +, +=) by an iterable of Modules, "
                f"not a {_typename(modules)}"
            )
        new = list(modules)
        for i, m in enumerate(new):
            if m is not None and not isinstance(m, Module):
                raise TypeError(
                    f"ModuleList: element {i} is a {_typename(m)}, not a Module (or None)"
                )
        held = self._modules
        for m in new:
            held[str(len(held))] = m
        return self

    def insert(self, index: int, module: Module | None) -> None:
        """Put ``module`` before position ``index``, as ``list.insert`` does (an index past
        either end inserts at that end)."""
        if not isinstance(index, int):
            raise TypeError(
                f"ModuleList.insert: the index must be an integer, not {_typename(index)}"
            )
        modules = list(self)
        modules.insert(index, self._check("insert", module))
        _renumber(self, modules)

    @overload
    def pop(self, idx: int = -1) -> Module: ...
    @overload
    def pop(self, idx: slice) -> ModuleList: ...

    def pop(self, idx: int | slice = -1) -> Module | ModuleList:
        """Remove the module (or slice of modules) at ``idx`` and return it."""
        taken = self[idx]
        del self[idx]
        return taken


class ModuleDict(Module):
    """``ModuleDict(modules=None)``: a dict of modules, registered as children under their
    keys, in insertion order. ``modules`` (and ``update``'s argument) is a mapping or an
    iterable of ``(key, module)`` pairs. Keys are strings that are valid child names: no
    ``"."``, not empty, not the name of a Module attribute or method (``"train"``, ``"keys"``).
    A value may be None, a placeholder that is kept under its key but holds no parameters.
    """

    def __init__(
        self,
        modules: Mapping[str, Module | None] | Iterable[tuple[str, Module | None]] | None = None,
    ) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def _checked(self, key: Any, module: Any) -> tuple[str, Module]:
        if not isinstance(key, str):
            raise TypeError(f"ModuleDict keys must be strings, got a {_typename(key)}: {key!r}")
        if module is not None and not isinstance(module, Module):
            raise TypeError(
                f"ModuleDict: the value for key {key!r} is a {_typename(module)}, not a Module "
                "(or None)"
            )
        # the rules of Module.add_module, told in terms of keys
        if key == "" or "." in key:
            raise KeyError(f"ModuleDict keys cannot be empty or contain a dot, got {key!r}")
        if key not in self._modules and hasattr(self, key):
            raise KeyError(
                f"ModuleDict: the key {key!r} is the name of a ModuleDict attribute or method; "
                "use another key"
            )
        return key, cast(Module, module)

    def _missing(self, key: Any) -> KeyError:
        return KeyError(f"ModuleDict has no module under the key {key!r}")

    def __getitem__(self, key: str) -> Module:
        held = _held(self)
        if key not in held:
            raise self._missing(key)
        return held[key]

    def __setitem__(self, key: str, module: Module | None) -> None:
        key, module = self._checked(key, module)
        _held(self)[key] = module

    def __delitem__(self, key: str) -> None:
        if key not in self._modules:
            raise self._missing(key)
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> KeysView[str]:
        return _held(self).keys()

    def items(self) -> ItemsView[str, Module]:
        return _held(self).items()

    def values(self) -> ValuesView[Module]:
        return _held(self).values()

    def update(
        self, modules: Mapping[str, Module | None] | Iterable[tuple[str, Module | None]]
    ) -> None:
        """Add or replace the entries of ``modules`` (a mapping, or ``(key, module)`` pairs);
        every entry is checked before any is stored."""
        if isinstance(modules, Mapping | ModuleDict):
            pairs = list(modules.items())
        elif isinstance(modules, Iterable):
            pairs = []
            for i, pair in enumerate(modules):
                if not isinstance(pair, Iterable) or isinstance(pair, str):
                    raise TypeError(
                        f"ModuleDict.update: element {i} should be a (key, module) pair, "
                        f"but is a {_typename(pair)}"
                    )
                items = tuple(pair)
                if len(items) != 2:
                    raise ValueError(
                        f"ModuleDict.update: element {i} has length {len(items)}; 2 is required "
                        "(a key and a module)"
                    )
                pairs.append(items)
        else:
            raise TypeError(
                "ModuleDict.update should be called with a mapping or an iterable of "
                f"(key, module) pairs, but got a {_typename(modules)}"
            )
        checked = [self._checked(key, module) for key, module in pairs]
        _held(self).update(checked)

    def pop(self, key: str) -> Module:
        """Remove the module under ``key`` and return it."""
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()
