"""Optimizers (``tensorplug.optim``), in the image of ``torch.optim``: every optimizer of
PyTorch 2.13, the learning-rate schedulers (``tensorplug.optim.lr_scheduler``) and stochastic
weight averaging (``tensorplug.optim.swa_utils``).

Each implements the update rule PyTorch implements, on the parameters' ``grad`` (which the
autograd plugin fills), in place and under ``no_grad()``; parameter groups, ``state_dict()`` in
PyTorch's layout and step hooks are the base class's (``optimizer.py``). ``import tensorplug``
does not import this package; the first ``tensorplug.optim`` does.

Usage::

    opt = tp.optim.Adam(model.parameters(), lr=1e-2)
    sched = tp.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
    for x, y in batches:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
        sched.step()
"""

from __future__ import annotations

from . import lr_scheduler, swa_utils
from ._others import ASGD, Adadelta, Adagrad, Adamax, NAdam, RAdam, RMSprop, Rprop
from .adafactor import Adafactor
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = [
    "ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax",
    "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam", "lr_scheduler",
    "swa_utils",
]  # fmt: skip
