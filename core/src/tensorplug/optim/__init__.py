"""Optimizers (``tensorplug.optim``), in the image of ``torch.optim``: ``SGD`` and ``Adam``.

Each implements the update rule that PyTorch documents for it, on the parameters' ``grad``
(which the autograd plugin fills), in place and under ``no_grad()``. ``import tensorplug`` does
not import this package; the first ``tensorplug.optim`` does.

Usage::

    opt = tp.optim.Adam(model.parameters(), lr=1e-2)
    for x, y in batches:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
"""

from __future__ import annotations

from .adam import Adam
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["SGD", "Adam", "Optimizer"]
