"""Lazy modules: parameters whose shape the first input decides.

``UninitializedParameter`` (and ``UninitializedBuffer``) hold no values yet: using one in an
operation raises PyTorch's ``ValueError``; ``materialize(shape)`` gives it an (uninitialized)
array of that shape in place, so the object, and an optimizer built over it, stay the same.
``LazyModuleMixin`` runs ``initialize_parameters(*args, **kwargs)`` before the first ``forward``
(a forward pre-hook), then becomes ``cls_to_become``; ``load_state_dict`` materializes the
parameters from the state's shapes first. ``LazyLinear(out_features)`` becomes a ``Linear``
whose ``in_features`` is the first input's last size.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import tensorplug

from .. import dtypes as _dtypes
from ..tensor import Tensor
from ._autograd import no_grad
from .linear import Linear
from .module import Module
from .parameter import Parameter

__all__ = ["LazyLinear", "LazyModuleMixin", "UninitializedBuffer", "UninitializedParameter"]

_tp: Any = tensorplug

_UNINITIALIZED = (
    "Attempted to use an uninitialized parameter in {}. This error happens when you are using "
    "a `LazyModule` or explicitly manipulating `tensorplug.nn.UninitializedParameter` objects. "
    "When using LazyModules Call `forward` with a dummy batch to initialize the parameters "
    "before calling tensorplug functions"
)


class UninitializedTensorMixin:
    """What an uninitialized parameter or buffer does: refuse operations, materialize."""

    cls_to_become: type[Tensor] = Tensor
    if TYPE_CHECKING:  # the Tensor fields the mixin reads (declared for the type checker only)
        _data: Any
        _dtype: _dtypes.dtype
        _device: Any

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the tensor an uninitialized array of ``shape`` (on ``device``, of ``dtype``,
        by default its own), in place, and make it a ``cls_to_become``."""
        if isinstance(shape, int):
            shape = (shape,)
        new = _tp.empty(list(shape), device=device or self._device, dtype=dtype or self._dtype)
        self._data = new._data
        self._dtype = new._dtype
        self._device = new._device
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    @classmethod
    def __tensorplug_function__(
        cls, func: Any, types: Any, args: Any = (), kwargs: Any = None
    ) -> Any:
        name = getattr(func, "__name__", str(func))
        raise ValueError(_UNINITIALIZED.format(name))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter without values yet (see the module docstring)."""

    cls_to_become = Parameter

    def __new__(
        cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
    ) -> UninitializedParameter:
        data = _tp.empty([0], device=device, dtype=dtype)
        p: UninitializedParameter = Parameter.__new__(cls, data, requires_grad)  # type: ignore[assignment]
        return p

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedParameter:
        result = type(self)(self.requires_grad, self._device, self._dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer without values yet."""

    cls_to_become = Tensor

    def __new__(
        cls, requires_grad: bool = False, device: Any = None, dtype: Any = None
    ) -> UninitializedBuffer:
        data = _tp.empty([0], device=device, dtype=dtype)
        t: UninitializedBuffer = data._retyped(cls)
        return t


def _is_uninitialized(t: Any) -> bool:
    return isinstance(t, UninitializedTensorMixin)


class LazyModuleMixin:
    """A module whose parameters ``initialize_parameters`` shapes on the first call (see the
    module docstring). Subclasses list it first: ``class LazyLinear(LazyModuleMixin,
    Linear)``."""

    cls_to_become: type[Module] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        module: Module = self  # type: ignore[assignment]
        self._initialize_hook = module.register_forward_pre_hook(
            self._infer_parameters, with_kwargs=True
        )
        warnings.warn(
            "Lazy modules are a new feature under heavy development so changes to the API or "
            "functionality can happen at any moment.",
            stacklevel=2,
        )

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module (not its children) is uninitialized."""
        module: Module = self  # type: ignore[assignment]
        return any(
            _is_uninitialized(t) for t in (*module._parameters.values(), *module._buffers.values())
        )

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialize and initialize the parameters from the first call's arguments."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}"
        )

    def _infer_parameters(self, module: Any, args: Any, kwargs: Any = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if not any(
            module.__dict__.get(r)
            for r in (
                "_forward_pre_hooks",
                "_forward_hooks",
                "_backward_pre_hooks",
                "_backward_hooks",
            )
        ):
            object.__setattr__(module, "_hooked", False)  # calls take the fast path again
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def load_state_dict(self, state_dict: Any, strict: bool = True) -> Any:
        """Materialize the uninitialized parameters and buffers to the shapes in
        ``state_dict``, then load it."""
        module: Module = self  # type: ignore[assignment]
        for m_name, m in module.named_modules():
            prefix = f"{m_name}." if m_name else ""
            for registry in (m._parameters, m._buffers):
                for name, t in registry.items():
                    value = state_dict.get(prefix + name)
                    if _is_uninitialized(t) and isinstance(value, Tensor):
                        with no_grad():
                            t.materialize(tuple(value.shape))  # type: ignore[union-attr]
        return super().load_state_dict(state_dict, strict)  # type: ignore[misc]


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last size of its first input."""

    cls_to_become = Linear
    weight: UninitializedParameter
    bias: UninitializedParameter

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = int(input.shape[-1])
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
