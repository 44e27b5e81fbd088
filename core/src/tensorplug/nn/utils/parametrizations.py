"""Parametrizations of weights (``tensorplug.nn.utils.parametrizations``), as PyTorch's:
``weight_norm`` and ``spectral_norm``, through :mod:`parametrize`.

- ``weight_norm(module, name="weight", dim=0)``: ``weight = g * v / ‖v‖`` with the norm over
  every dimension but ``dim`` (all of them for ``dim=None``); ``g`` and ``v`` are
  ``parametrizations.weight.original0`` and ``original1``.
- ``spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None)``:
  ``weight / σ``, σ the largest singular value of the weight as a matrix (``dim`` first),
  estimated by power iteration on the buffers ``parametrizations.weight.0._u`` and ``_v``,
  one step per call in training mode (15 at registration).

- ``orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True)``:
  the weight as an orthogonal matrix (orthonormal columns, or rows for a wide one), made from
  an unconstrained ``original`` by the matrix exponential or the Cayley map of a skew-symmetric
  matrix, or by a product of Householder reflections (Note [Orthogonal maps]).
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

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

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


# Note [Orthogonal maps]
# ~~~~~~~~~~~~~~~~~~~~~~
# A tall n x k matrix X (a wide one is handled transposed) becomes one with orthonormal columns:
# * "matrix_exp" / "cayley": the strictly lower triangle of X, with its diagonal, embedded in an
#   n x n matrix L; A = L - L^T is skew-symmetric, and exp(A), or the Cayley transform
#   (I - A/2)^{-1} (I + A/2), is orthogonal; its first k columns are the result;
# * "householder": the reflectors stored below the diagonal of X (geqrf's layout) with
#   tau = 2 / (1 + |v|^2), their product (householder_product) times the signs of X's diagonal
#   (a constant of the parametrization, never updated by a gradient).
# With use_trivialization=True (PyTorch's default), the result is further multiplied on the left
# by a buffer ``base``: assigning a matrix Q sets base to Q (completed to n x n and made
# orthogonal by QR when needed) and original to the point the maps send to the identity's
# columns (-I for householder, zeros for the exponential and Cayley maps, whose map of zero is I).

_MAPS = ("matrix_exp", "cayley", "householder")


def _orthonormal_q(a: Tensor) -> Tensor:
    """Q of a QR of the tall ``a`` with a non-negative diagonal of R."""
    x, tau = _tp.geqrf(a)
    q = _tp.linalg.householder_product(x, tau)
    signs = x.diagonal(0, -2, -1).sign()
    signs = _tp.where(signs == 0, _tp.ones_like(signs), signs)
    r: Tensor = q * signs.unsqueeze(-2)
    return r


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True):
        super().__init__()
        if weight.dtype.is_complex:
            raise ValueError(
                "orthogonal: complex weights are not supported yet (tensorplug's complex "
                "linear algebra has no differentiable matrix_exp/QR on complex inputs)"
            )
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == "householder":
            v = X.tril(-1)
            tau = 2.0 / (1.0 + (v * v).sum(-2))
            q = _tp.linalg.householder_product(v, tau)
            with no_grad():
                signs = X.diagonal(0, -2, -1).detach().sign()
            q = q * _tp.where(signs == 0, _tp.ones_like(signs), signs).unsqueeze(-2)
        else:
            low = X.tril()
            if n != k:
                pad = low.new_zeros([*low.shape[:-2], n, n - k])
                low = _tp.cat([low, pad], -1)
            skew = low - low.mT
            if self.orthogonal_map == "matrix_exp":
                q = _tp.linalg.matrix_exp(skew)
            else:
                eye = _tp.eye(n, dtype=skew.dtype, device=skew.device)
                q = _tp.linalg.solve(eye - skew * 0.5, eye + skew * 0.5)
            if n != k:
                q = q[..., :k]
        base = getattr(self, "base", None)
        if base is not None:
            q = base @ q
        out: Tensor = q.mT if transposed else q
        return out

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            if tuple(Q.shape) != self.shape:
                raise ValueError(
                    f"Expected a matrix or batch of matrices of shape {list(self.shape)}. Got a "
                    f"tensor of shape {list(Q.shape)}."
                )
            given = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transposed = n < k
            if transposed:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map != "householder":
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False."
                    )
                x, tau = _tp.geqrf(Q)
                diag = x.diagonal(0, -2, -1)
                signs = _tp.where(tau == 0, -diag.sign(), diag.sign())
                x.diagonal(0, -2, -1).copy_(signs)
                inverse: Tensor = x.mT if transposed else x
                return inverse
            if n == k:
                eye = _tp.eye(k, dtype=Q.dtype, device=Q.device)
                eps = 10.0 * n * (1.1920929e-07 if Q.dtype == _tp.float32 else 2.220446e-16)
                orthogonal = bool(_tp.allclose(Q.mT @ Q, eye, atol=eps))
                Q = Q.clone() if orthogonal else _orthonormal_q(Q)
            else:
                extra = _tp.randn([*Q.shape[:-2], n, n - k], dtype=Q.dtype, device=Q.device)
                Q = _orthonormal_q(_tp.cat([Q, extra], -1))
            self.base = Q
            start = _tp.zeros_like(given)
            if self.orthogonal_map == "householder":
                start.diagonal(0, -2, -1).fill_(-1.0)
            r: Tensor = start
            return r


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Make ``module.<name>`` an orthogonal matrix (or batch of them), as PyTorch's
    ``parametrizations.orthogonal`` (Note [Orthogonal maps])."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.dtype.is_complex else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
