"""Loss modules: ``MSELoss``, ``CrossEntropyLoss``, ``NLLLoss``, ``BCELoss``, ``L1Loss``,
``SmoothL1Loss``, ``HuberLoss``, ``BCEWithLogitsLoss``, ``KLDivLoss``.

Each holds its options and calls the function of :mod:`tensorplug.nn.functional` with them;
``reduction`` is ``"mean"`` (default), ``"sum"`` or ``"none"`` (``KLDivLoss`` also takes
``"batchmean"``), checked when the module is built.
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss",
    "MSELoss", "NLLLoss", "SmoothL1Loss",
]  # fmt: skip


class _Loss(Module):
    _reductions: tuple[str, ...] = ("none", "mean", "sum")

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in self._reductions:
            raise ValueError(
                f"{type(self).__name__}: {reduction} is not a valid value for reduction "
                f"({', '.join(self._reductions)})"
            )
        self.reduction = reduction


class _WeightedLoss(_Loss):
    weight: Tensor | None

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)  # moves with .to(); saved in state_dict


class MSELoss(_Loss):
    """Mean squared error between input and target."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy between logits (N, C) and class indices (N) or probabilities (N, C).

    ``weight`` rescales each class; targets equal to ``ignore_index`` do not count;
    ``label_smoothing`` in [0, 1] mixes the target with the uniform distribution.
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(
                f"CrossEntropyLoss: label_smoothing must be between 0.0 and 1.0, got "
                f"{label_smoothing}"
            )
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            input,
            target,
            self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of log-probabilities (N, C) and class indices (N)."""

    def __init__(
        self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean"
    ) -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(
            input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction
        )


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities and targets in [0, 1]."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error between input and target."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below ``beta`` (divided by ``2 beta``), absolute error above."""

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Half the squared error below ``delta``, ``delta`` times the absolute error (less
    ``delta / 2``) above."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of ``sigmoid(input)`` and targets, computed stably from logits.

    ``weight`` rescales each element; ``pos_weight`` (broadcast over the classes of the last
    dimension) weighs the positive term. Both are buffers.
    """

    weight: Tensor | None
    pos_weight: Tensor | None

    def __init__(
        self,
        weight: Tensor | None = None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target``
    (probabilities, or log-probabilities with ``log_target``); ``reduction="batchmean"`` is the
    mathematical definition."""

    _reductions = ("none", "batchmean", "mean", "sum")

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
