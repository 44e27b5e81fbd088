"""``SparseAdam``: PyTorch's Adam for sparse gradients (``nn.Embedding(sparse=True)``).

tensorplug has no sparse layout: every gradient is dense, and for a dense gradient PyTorch's
``SparseAdam.step()`` raises; so does this one, with PyTorch's message. The constructor takes
and checks PyTorch's arguments, so code that builds one for an embedding's parameters runs until
its first step.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, grads_of

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """PyTorch's ``torch.optim.SparseAdam`` (see the module's docstring: no sparse gradients
    exist here, so ``step()`` with a gradient raises PyTorch's dense-gradient error)."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)

    def _update(self, group: dict[str, Any]) -> None:
        if grads_of(group, self):
            raise RuntimeError(
                "SparseAdam does not support dense gradients, please consider Adam instead"
            )
