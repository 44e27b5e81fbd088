"""Parametrizations of weights (``tensorplug.nn.utils.parametrizations``), as PyTorch's:
``weight_norm`` and ``spectral_norm``, through :mod:`parametrize`.

- ``weight_norm(module, name="weight", dim=0)``: ``weight = g * v / ‖v‖`` with the norm over
  every dimension but ``dim`` (all of them for ``dim=None``); ``g`` and ``v`` are
  ``parametrizations.weight.original0`` and ``original1``.
- ``spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None)``:
  ``weight / σ``, σ the largest singular value of the weight as a matrix (``dim`` first),
  estimated by power iteration on the buffers ``parametrizations.weight.0._u`` and ``_v``,
  one step per call in training mode (15 at registration).

``orthogonal`` is not here: it needs a QR decomposition or a matrix exponential, which
tensorplug's operators do not have yet.
"""

from __future__ import annotations

from typing import Any

import tensorplug

from ...ops import ops
from ...tensor import Tensor
from .. import functional as F
from .._autograd import no_grad
from ..module import Module
from . import parametrize

__all__ = ["spectral_norm", "weight_norm"]

_aten = ops.aten
_tp: Any = tensorplug


def norm_except_dim(v: Tensor, pow: float, dim: int) -> Tensor:
    """PyTorch's ``torch.norm_except_dim``: the ``pow``-norm over every dimension but ``dim``,
    kept as size-1 dimensions (the whole norm, 0-d, for ``dim=-1``)."""
    if dim == -1:
        r: Tensor = _tp.linalg.vector_norm(v, pow)
        return r
    dims = [d for d in range(v.dim()) if d != dim]
    r = _tp.linalg.vector_norm(v, pow, dims, True)
    return r


def weight_norm_value(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """``v * (g / norm_except_dim(v, 2, dim))`` (PyTorch's ``torch._weight_norm``)."""
    r: Tensor = v * (g / norm_except_dim(v, 2, dim))
    return r


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        weight_g = norm_except_dim(weight, 2, self.dim)
        return weight_g, weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as magnitude ``g`` times direction ``v / ‖v‖``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.shape
            u = _aten.normal_.default(_tp.empty([h], dtype=weight.dtype, device=weight.device))
            v = _aten.normal_.default(_tp.empty([w], dtype=weight.dtype, device=weight.device))
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        r: Tensor = weight.flatten(1)
        return r

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            weight_mat = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(_tp.matmul(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(_tp.matmul(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = _tp.dot(u, _tp.matmul(weight_mat, v))
        r: Tensor = weight / sigma
        return r

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
