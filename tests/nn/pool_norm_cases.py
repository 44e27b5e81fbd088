"""The pooling, normalization and activation calls that tests/nn/test_pool_norm_parity.py
compares with PyTorch, written once against the API the two share (``F`` is
``torch.nn.functional`` or ``tensorplug.nn.functional``, ``nn`` its ``nn``): the generator
``tools/gen_pool_norm_fixtures.py`` runs them with torch to freeze PyTorch's values, the test
runs them with tensorplug (and with torch too, where it is importable)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

SHAPE = (1, 4, 5, 4)

# name -> (input shape, fn(F, x) -> output or tuple whose first element is differentiated)
CASES: dict[str, tuple[tuple[int, ...], Callable[[Any, Any], Any]]] = {
    "max_pool2d": (SHAPE, lambda F, x: F.max_pool2d(x, 2)),
    "max_pool2d_indices_pad_ceil": (
        SHAPE, lambda F, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
    ),
    "max_pool2d_dilation": (SHAPE, lambda F, x: F.max_pool2d(x, (2, 2), 1, (1, 0), dilation=(2, 1))),
    "max_pool1d": ((2, 3, 9), lambda F, x: F.max_pool1d(x, 3, 2, 1, return_indices=True)),
    "max_pool3d": ((1, 2, 4, 5, 4), lambda F, x: F.max_pool3d(x, 2, return_indices=True)),
    "avg_pool2d": (SHAPE, lambda F, x: F.avg_pool2d(x, 2)),
    "avg_pool2d_pad_ceil_exclude": (
        SHAPE, lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)
    ),
    "avg_pool2d_divisor": (SHAPE, lambda F, x: F.avg_pool2d(x, 3, 1, 1, divisor_override=5)),
    "avg_pool1d": ((2, 3, 9), lambda F, x: F.avg_pool1d(x, 4, 3, 2, ceil_mode=True)),
    "avg_pool3d": ((1, 2, 4, 5, 4), lambda F, x: F.avg_pool3d(x, 2, 1, 1, ceil_mode=True)),
    "adaptive_avg_pool2d": (SHAPE, lambda F, x: F.adaptive_avg_pool2d(x, (3, 3))),
    "adaptive_avg_pool2d_global": (SHAPE, lambda F, x: F.adaptive_avg_pool2d(x, 1)),
    "adaptive_avg_pool1d": ((2, 3, 9), lambda F, x: F.adaptive_avg_pool1d(x, 4)),
    "adaptive_avg_pool3d": ((1, 2, 4, 5, 4), lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, 3))),
    "adaptive_max_pool2d": (SHAPE, lambda F, x: F.adaptive_max_pool2d(x, (3, 3), True)),
    "adaptive_max_pool1d": ((2, 3, 9), lambda F, x: F.adaptive_max_pool1d(x, 4, True)),
    "lp_pool2d": (SHAPE, lambda F, x: F.lp_pool2d(x.abs() + 0.1, 2, 2)),
    "lp_pool1d": ((2, 3, 9), lambda F, x: F.lp_pool1d(x.abs() + 0.1, 3, 3)),
    "max_unpool2d": (SHAPE, lambda F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2)),
    "batch_norm_train": (
        SHAPE, lambda F, x: F.batch_norm(x, None, None, _vec(x, 4, 1.0), _vec(x, 4, 0.0), True)
    ),
    "batch_norm_eval": (
        SHAPE, lambda F, x: F.batch_norm(x, _vec(x, 4, 0.1), _vec(x, 4, 1.5), _vec(x, 4, 1.0),
                                         _vec(x, 4, 0.0), False, 0.1, 1e-3)
    ),
    "group_norm": (SHAPE, lambda F, x: F.group_norm(x, 2, _vec(x, 4, 1.0), _vec(x, 4, 0.0))),
    "instance_norm": (SHAPE, lambda F, x: F.instance_norm(x, weight=_vec(x, 4, 1.0))),
    "rms_norm": (SHAPE, lambda F, x: F.rms_norm(x, [5, 4], _vec(x, 20, 1.0).reshape(5, 4))),
    "local_response_norm": (SHAPE, lambda F, x: F.local_response_norm(x, 3)),
    "local_response_norm_3d": ((2, 5, 4), lambda F, x: F.local_response_norm(x, 2, 1e-2)),
    "prelu": (SHAPE, lambda F, x: F.prelu(x, _vec(x, 4, 0.25))),
    "hardswish": (SHAPE, lambda F, x: F.hardswish(x * 3)),
    "hardsigmoid": (SHAPE, lambda F, x: F.hardsigmoid(x * 3)),
    "celu": (SHAPE, lambda F, x: F.celu(x, 0.7)),
    "selu": (SHAPE, lambda F, x: F.selu(x)),
    "glu": (SHAPE, lambda F, x: F.glu(x, 1)),
    "softshrink": (SHAPE, lambda F, x: F.softshrink(x, 0.3)),
    "hardshrink": (SHAPE, lambda F, x: F.hardshrink(x, 0.3)),
    "threshold": (SHAPE, lambda F, x: F.threshold(x, 0.2, -1.0)),
    "softsign": (SHAPE, lambda F, x: F.softsign(x)),
    "tanhshrink": (SHAPE, lambda F, x: F.tanhshrink(x)),
    "mish": (SHAPE, lambda F, x: F.mish(x)),
    "rrelu_eval": (SHAPE, lambda F, x: F.rrelu(x, 0.1, 0.3)),
    "channel_shuffle": (SHAPE, lambda F, x: F.channel_shuffle(x, 2)),
}  # fmt: skip


def _vec(x: Any, n: int, base: float) -> Any:
    """A fixed parameter vector of ``n`` values near ``base``, of ``x``'s library and dtype."""
    return x.new_tensor([base + 0.1 * ((i * 7) % 5 - 2) for i in range(n)])


def data(shape: tuple[int, ...], salt: int) -> np.ndarray:
    """Deterministic float64 values with no ties (so max pooling's indices are defined)."""
    rng = np.random.default_rng(1000 + salt)
    n = int(np.prod(shape))
    return rng.permutation(np.arange(n)).reshape(shape) / n * 6 - 3


def upstream(shape: tuple[int, ...]) -> np.ndarray:
    """The gradient fed to each output: fixed, not all ones (so weightings show)."""
    return np.sin(np.arange(int(np.prod(shape)), dtype=np.float64)).reshape(shape)


# BatchNorm2d through train and eval: three training steps (momentum 0.1 and None), then eval
BN_STEPS = 3
BN_SHAPE = (4, 3, 3, 3)
