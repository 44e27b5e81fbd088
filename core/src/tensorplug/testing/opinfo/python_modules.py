"""The functions of tensorplug.linalg, tensorplug.special and tensorplug.nn.functional made
from yaml entries with ``python_module:``. The linalg and special ones are PyTorch's aliases of
standard ops, so they take the samples and oracles of those ops, under their own names."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from . import linalg_shape, reductions, unary  # noqa: F401 - the OpInfos reused below
from ._core import FLOATS, LOWP, OP_DB, OpInfo, add, fn, unary_float, unary_samples


def _alias(op_name: str, of: str, public: str) -> None:
    base = next(info for info in OP_DB if info.name == of)
    add(dataclasses.replace(base, name=op_name, op=fn(public), method=None))


_alias("linalg_matmul", "matmul", "linalg.matmul")
for _name in ("expm1", "exp2", "log1p", "erf", "logit", "logsumexp"):
    _alias(f"special_{_name}", _name, f"special.{_name}")
_alias("special_expit", "sigmoid", "special.expit")
_alias("special_softmax", "softmax.int", "special.softmax")
_alias("special_log_softmax", "log_softmax.int", "special.log_softmax")


def _ref_mish(x: Any) -> Any:
    """PyTorch's formula, ``x * tanh(softplus(x))``, in float64."""
    x64 = np.asarray(x, dtype=np.float64)
    return x64 * np.tanh(np.logaddexp(0.0, x64))


add(
    OpInfo(
        "mish",
        op=fn("nn.functional.mish"),
        sample_inputs=unary_samples(low=-30, high=30),
        ref=_ref_mish,
        dtypes=FLOATS + LOWP,
        result_dtype=unary_float,
    )
)
