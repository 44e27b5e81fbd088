"""Samples and oracles of the ``special`` family: the functions of ``tensorplug.special``,
PyTorch's aliases of standard ops, which take the samples and oracles of those ops under their
own names."""

from __future__ import annotations

from . import nn, pointwise, reductions  # noqa: F401 - the OpInfos aliased below
from ._core import alias

for _name in ("expm1", "exp2", "log1p", "erf", "logit", "logsumexp"):
    alias(f"special_{_name}", _name, f"special.{_name}")
alias("special_expit", "sigmoid", "special.expit")
alias("special_softmax", "softmax.int", "special.softmax")
alias("special_log_softmax", "log_softmax.int", "special.log_softmax")
