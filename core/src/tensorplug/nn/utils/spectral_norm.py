"""The legacy spectral normalization (``tensorplug.nn.utils.spectral_norm``), as PyTorch's
``torch.nn.utils.spectral_norm``: the parameter ``<name>_orig``, the buffers ``<name>_u`` and
``<name>_v`` of the power iteration, and a forward pre-hook that sets ``<name>`` (a plain
attribute) to ``<name>_orig / σ`` before each call, with one power-iteration step per call in
training mode. Prefer ``nn.utils.parametrizations.spectral_norm``.

PyTorch's state-dict hooks (the version number in ``_metadata`` and the loading of checkpoints
from before version 1) are not here: the state_dict keys are the same.
"""

from __future__ import annotations

from typing import Any

import tensorplug

from ...tensor import Tensor
from .. import functional as F
from .._autograd import no_grad
from ..module import Module
from ..parameter import Parameter

__all__ = ["remove_spectral_norm", "spectral_norm"]

_tp: Any = tensorplug


class SpectralNorm:
    """The forward pre-hook of :func:`spectral_norm`."""

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        r: Tensor = weight.reshape(weight.shape[0], -1)
        return r

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                mat = weight_mat.detach()
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(_tp.matmul(mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(_tp.matmul(mat, v), dim=0, eps=self.eps))
                u = u.clone()
                v = v.clone()
        sigma = _tp.dot(u, _tp.matmul(weight_mat, v))
        r: Tensor = weight / sigma
        return r

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> Any:
        for entry in module._forward_pre_hooks.values():
            if isinstance(entry[0], SpectralNorm) and entry[0].name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if type(weight).__name__ == "UninitializedParameter":
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying spectral normalization"
            )
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(
                _tp.empty([h], dtype=weight.dtype, device=weight.device).normal_(0, 1),
                dim=0,
                eps=fn.eps,
            )
            v = F.normalize(
                _tp.empty([w], dtype=weight.dtype, device=weight.device).normal_(0, 1),
                dim=0,
                eps=fn.eps,
            )
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Deprecated in favor of the parametrization: ``<name> = <name>_orig / σ``, recomputed
    before each forward (module docstring)."""
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``<name>`` is a plain parameter again."""
    for k, entry in list(module._forward_pre_hooks.items()):
        if isinstance(entry[0], SpectralNorm) and entry[0].name == name:
            entry[0].remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
