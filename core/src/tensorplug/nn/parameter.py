"""``Parameter``: the tensors a :class:`~tensorplug.nn.Module` learns.

A ``Parameter`` is a :class:`~tensorplug.Tensor` (a subclass: it dispatches like any tensor,
since the dispatcher reads the key set from the instance). Assigning one to a Module attribute
registers it, so it shows up in ``parameters()`` and ``state_dict()``; assigning a plain tensor
does not. ``Parameter(data)`` shares ``data``'s storage and version counter — it copies
nothing — and is a fresh leaf that requires grad (when the autograd plugin is loaded; Note [nn
without autograd] in _autograd.py).

Usage::

    w = tp.nn.Parameter(tp.empty(3, 2))
    tp.nn.init.uniform_(w, -0.1, 0.1)
"""

from __future__ import annotations

from typing import Any, cast

import tensorplug

from .. import dtypes as _dtypes
from .. import keys as _keys
from .. import overrides, serialization
from ..tensor import Tensor
from ._autograd import set_requires_grad

__all__ = ["Parameter"]

_tp: Any = tensorplug  # the generated functions (tp.empty, ...) are invisible to the type checker


class Parameter(Tensor):
    """A tensor that is a module parameter; requires grad unless ``requires_grad=False``."""

    __slots__ = ()

    # Takes no part in __tensorplug_function__: a parameter dispatches as a Tensor, and what
    # functions return of it are plain tensors (PyTorch's Parameter does the same).
    __tensorplug_function__: Any = overrides.disabled_tensorplug_function_impl

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = cast(Tensor, _tp.empty([0]))
        elif not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(data): data must be a tensorplug.Tensor, not {type(data).__name__}"
            )
        # A new leaf over the same array: functionality keys (autograd, ...) are not inherited.
        p = cast(
            Parameter,
            cls._new(data._data, data._dtype, data._device, data._tp_keyset & _keys.plain_mask()),
        )
        p._vc = data._tp_version  # shared, as storage is: writes through either are seen
        if requires_grad:
            set_requires_grad(p, True)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # built by __new__ (Tensor.__init__ refuses direct construction)

    def _alias(self, data: Any, dtype: _dtypes.dtype | None = None) -> Tensor:
        # Views and detach() of a parameter are plain tensors, as in PyTorch: a Module must not
        # register `self.w_t = self.weight.t()` as a second parameter.
        t = Tensor._alias(self, data, dtype)
        t.__class__ = Tensor
        return t

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        found = memo.get(id(self))
        if found is not None:
            return cast(Parameter, found)
        result = Parameter(_tp.ops.aten.clone.default(_tp.detach(self)), self.requires_grad)
        memo[id(self)] = result
        return result


serialization.register_tensor_class(Parameter, Parameter)  # tp.load rebuilds parameters
