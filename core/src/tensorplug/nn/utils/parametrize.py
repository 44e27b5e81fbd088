"""Parametrizations: a module's tensor computed from others on each access
(``tensorplug.nn.utils.parametrize``), as ``torch.nn.utils.parametrize``.

``register_parametrization(module, "weight", P())`` moves ``module.weight`` to
``module.parametrizations.weight.original`` (after ``P.right_inverse``, when ``P`` has one)
and makes ``module.weight`` a property that returns ``P(original)``: the module's class is
replaced by a subclass ``Parametrized<Class>`` that holds the property. More parametrizations
on the same name chain (``P2(P1(original))``); a ``right_inverse`` that returns several tensors
stores them as ``original0``, ``original1``, ... and the first parametrization takes them all.
Assigning ``module.weight = value`` stores ``right_inverse(value)`` in the originals. The
``state_dict`` keys are PyTorch's: ``parametrizations.weight.original``, and the
parametrizations' own state under ``parametrizations.weight.0.<name>``.

``with cached():`` computes each parametrized tensor once inside the block;
``remove_parametrizations`` puts a plain parameter back (with the parametrized value, or the
original's with ``leave_parametrized=False``). Without ``unsafe=True`` a parametrization must
keep the tensor's shape and dtype (PyTorch's checks and messages).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Sequence
from typing import Any

from ...tensor import Tensor
from .._autograd import no_grad
from ..container import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

__all__ = [
    "ParametrizationList", "cached", "is_parametrized", "register_parametrization",
    "remove_parametrizations", "type_before_parametrizations",
]  # fmt: skip

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside the block, each parametrized tensor is computed once, on its first access, and
    reused (e.g. a weight read at every step of a recurrent loop)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set(dest: Tensor, value: Tensor) -> None:
    """``dest.set_(value)`` (PyTorch's ``_maybe_set``): ``dest`` takes ``value``'s values,
    shape and dtype, in place (copied when the shape and dtype agree)."""
    with no_grad():
        if tuple(dest.shape) == tuple(value.shape) and dest.dtype == value.dtype:
            dest.copy_(value)
        else:  # a parametrization that changes the shape (unsafe): rebind the array
            dest._data = value.detach().clone()._data
            dest._dtype = value.dtype


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, in order, and its original(s): what
    ``module.parametrizations[name]`` is. Calling it computes the parametrized tensor."""

    original: Tensor
    unsafe: bool

    def __init__(
        self, modules: Sequence[Module], original: Tensor | Parameter, unsafe: bool = False
    ) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape = tuple(original.shape)
        original_dtype = original.dtype
        with no_grad():
            new: Any = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor) and not isinstance(new, Sequence):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if isinstance(new, Tensor):
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}"
                )
            _set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        "(list, tuple...). "
                        f"Got element {i} of the sequence with type {type(originali).__name__}."
                    )
                if isinstance(original, Parameter):
                    originali = Parameter(originali.detach(), original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original_dtype}\n"
                    f"parametrized dtype: {z.dtype}"
                )
            if tuple(z.shape) != original_shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {_size(original_shape)}\n"
                    f"parametrized shape: {_size(tuple(z.shape))}"
                )

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` in the original(s), through the parametrizations' ``right_inverse``
        in reverse order."""
        with no_grad():
            new: Any = value
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
                else:
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
            if self.is_tensor:
                if not isinstance(new, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(new).__name__}"
                    )
                if new.dtype != self.original.dtype:
                    raise ValueError(
                        "The tensor returned by `right_inverse` has dtype "
                        f"{new.dtype} while `original` has dtype {self.original.dtype}"
                    )
                _set(self.original, new)
            else:
                if not isinstance(new, Sequence):
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors. "
                        f"Got {type(new).__name__}."
                    )
                if len(new) != self.ntensors:
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors of length "
                        f"{self.ntensors}. Got a sequence of length {len(new)}."
                    )
                for i, tensor in enumerate(new):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, Tensor):
                        raise ValueError(
                            f"`right_inverse` must return a sequence of tensors. "
                            f"Got element {i} of type {type(tensor).__name__}"
                        )
                    _set(original_i, tensor)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            originals = (getattr(self, f"original{i}") for i in range(self.ntensors))
            x = self[0](*originals)
        for module in list(self)[1:]:
            x = module(x)
        r: Tensor = x
        return r

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # ModuleList itself has no forward
        return Module.__call__(self, *args, **kwargs)


def _size(shape: tuple[int, ...]) -> str:
    return f"torch.Size({list(shape)})".replace("torch", "tensorplug")


def _inject_new_class(module: Module) -> None:
    """Give ``module`` a class of its own, ``Parametrized<Class>``, for the properties."""
    cls = module.__class__

    def default_deepcopy(self: Module, memo: dict[int, Any]) -> Module:
        obj = memo.get(id(self))
        if obj is not None:
            return obj  # type: ignore[no-any-return]
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        return replica

    def getstate(self: Module) -> Any:
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict()."
        )

    dct: dict[str, Any] = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = default_deepcopy
    param_cls = type(f"Parametrized{cls.__name__}", (cls,), dct)
    module.__class__ = param_cls


def _inject_property(module: Module, tensor_name: str) -> None:
    assert not hasattr(module, tensor_name)

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            tensor = _cache.get(key)
            if tensor is None:
                tensor = _cache[key] = parametrization()
            return tensor
        r: Tensor = parametrization()
        return r

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` (module docstring)."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            if x.dtype != y.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.dtype: {y.dtype}\n"
                    f"parametrization(module.{tensor_name}).dtype: {x.dtype}"
                )
            if tuple(x.shape) != tuple(y.shape):
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.shape: {_size(tuple(y.shape))}\n"
                    f"parametrization(module.{tensor_name}).shape: {_size(tuple(x.shape))}"
                )
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, Tensor):
                        raise ValueError(
                            f"parametrization.right_inverse must return a tensor. Got: "
                            f"{type(z).__name__}"
                        )
                    if z.dtype != y.dtype:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            "the same dtype as module.{tensor_name}, unless the `unsafe` flag "
                            "is enabled.\n"
                            f"module.{tensor_name}.dtype: {y.dtype}\n"
                            f"returned dtype: {z.dtype}"
                        )
                    if tuple(z.shape) != tuple(y.shape):
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            "the same shape as module.{tensor_name}, unless the `unsafe` flag "
                            "is enabled.\n"
                            f"module.{tensor_name}.shape: {_size(tuple(y.shape))}\n"
                            f"returned shape: {_size(tuple(z.shape))}"
                        )
        plist: ParametrizationList = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
            f"with name '{tensor_name}'"
        )
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, if given)."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Take the parametrizations of ``tensor_name`` away: it becomes a plain parameter (or
    buffer) again, holding the parametrized value (``leave_parametrized=True``) or the
    original's."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations: ParametrizationList = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            _set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        with no_grad():
            t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The class ``module`` had before its first parametrization."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)
