"""The legacy weight normalization (``tensorplug.nn.utils.weight_norm``), as PyTorch's
deprecated ``torch.nn.utils.weight_norm``: parameters ``<name>_g`` and ``<name>_v``, and a
forward pre-hook that recomputes ``<name>`` (a plain attribute) before each call. Prefer
``nn.utils.parametrizations.weight_norm``."""

from __future__ import annotations

import warnings
from typing import Any

from ...tensor import Tensor
from ..module import Module
from ..parameter import Parameter
from .parametrizations import norm_except_dim, weight_norm_value

__all__ = ["remove_weight_norm", "weight_norm"]


class WeightNorm:
    """The forward pre-hook of :func:`weight_norm`."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return weight_norm_value(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook[0], WeightNorm) and hook[0].name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        fn = WeightNorm(name, -1 if dim is None else dim)
        weight = getattr(module, name)
        if type(weight).__name__ == "UninitializedParameter":
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying weight normalization"
            )
        del module._parameters[name]
        module.register_parameter(
            name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).detach())
        )
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Deprecated: ``<name> = g * v / ‖v‖`` recomputed before each forward (module
    docstring)."""
    warnings.warn(
        "`tensorplug.nn.utils.weight_norm` is deprecated in favor of "
        "`tensorplug.nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
        stacklevel=2,
    )
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``<name>`` is a plain parameter again."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook[0], WeightNorm) and hook[0].name == name:
            hook[0].remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
