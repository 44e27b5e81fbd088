"""``Sequential``: modules applied one after the other."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, overload

from .module import Module

__all__ = ["Sequential"]


class Sequential(Module):
    """``Sequential(m0, m1, ...)`` or ``Sequential(OrderedDict(name=module, ...))``.

    Calling it feeds the input to the first module and each output to the next. Children are
    named ``"0"``, ``"1"``, ... (or by the dict's keys), so parameters are ``"0.weight"``, ...
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

    def _index(self, idx: int) -> int:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for a Sequential of length {n}")
        return idx % n

    @overload
    def __getitem__(self, idx: int) -> Module: ...
    @overload
    def __getitem__(self, idx: slice) -> Sequential: ...

    def __getitem__(self, idx: int | slice) -> Module | Sequential:
        items = [m for m in self._modules.values() if m is not None]
        if isinstance(idx, slice):
            chosen = list(self._modules.items())[idx]
            return Sequential(OrderedDict((k, m) for k, m in chosen if m is not None))
        return items[self._index(idx)]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return (m for m in self._modules.values() if m is not None)

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input
