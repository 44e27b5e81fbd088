"""Samples and oracles of the ``nn`` family, part ``activations``: the composite activations
prelu, celu, selu, threshold, hardshrink, softshrink, hardswish, hardsigmoid, glu, rrelu (its
evaluation form; training draws slopes, which tests/nn/test_activations.py checks) and
channel_shuffle, against numpy formulas."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._core import FLOATS, LOWP, OpInfo, S, SampleInput, add, fn, make, meth

_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-6)}
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _x(a: Any) -> Any:
    return np.asarray(a, np.float64)


def _unary(*extra: tuple[str, tuple[Any, ...]]) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:  # fmt: skip
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = make((4, 5), d, rng, -4, 4)
        x.flat[:4] = [-3.0, 3.0, 0.5, -0.5]  # the kinks of hardswish and the shrinks
        yield S("kinks", x)
        yield S("0dim", make((), d, rng))
        for name, args in extra:
            yield S(name, make((3, 4), d, rng, -4, 4), *args)

    return gen


def _ref_elu(x: Any, alpha: float, scale: float, input_scale: float) -> Any:
    x = _x(x)
    return np.where(x > 0, scale * x, alpha * scale * np.expm1(np.minimum(x, 0) * input_scale))


_CASES: list[tuple[str, Any, Any, Any]] = [
    ("celu", _unary(("alpha", (0.7,))), lambda x, a=1.0: _ref_elu(x, a, 1.0, 1.0 / a), None),
    ("selu", _unary(), lambda x: _ref_elu(x, _SELU_ALPHA, _SELU_SCALE, 1.0), None),
    ("threshold", lambda d, rng: iter([S("th", make((3, 4), d, rng), 0.3, -2.0)]),
     lambda x, t, v: np.where(_x(x) > t, _x(x), v), None),
    ("hardshrink", _unary(("lambd", (1.0,))),
     lambda x, lam=0.5: np.where(np.abs(_x(x)) > lam, _x(x), 0.0), meth("hardshrink")),
    ("rrelu", _unary(("bounds", (0.1, 0.3))),
     lambda x, lo=0.125, up=1 / 3: np.where(_x(x) > 0, _x(x), _x(x) * (lo + up) / 2), None),
]  # fmt: skip

for _name, _samples, _ref, _meth in _CASES:
    add(OpInfo(_name, op=fn(_name), method=_meth, sample_inputs=_samples, ref=_ref,
               dtypes=FLOATS + LOWP, tol=_TOL))  # fmt: skip


def _ref_softshrink(x: Any, lam: float = 0.5) -> Any:
    x = _x(x)
    return np.where(x > lam, x - lam, np.where(x < -lam, x + lam, 0.0))


def _ref_hardswish(x: Any) -> Any:
    x = _x(x)
    return x * np.clip(x + 3, 0, 6) / 6


def _ref_hardsigmoid(x: Any) -> Any:
    return np.clip((_x(x) + 3) / 6, 0, 1)


for _name, _samples, _ref in (
    ("softshrink", _unary(("lambd", (1.0,))), _ref_softshrink),
    ("hardswish", _unary(), _ref_hardswish),
    ("hardsigmoid", _unary(), _ref_hardsigmoid),
):
    add(OpInfo(_name, op=fn(f"nn.functional.{_name}"), sample_inputs=_samples, ref=_ref,
               dtypes=FLOATS + LOWP, tol=_TOL))  # fmt: skip


def _ref_glu(x: Any, dim: int = -1) -> Any:
    a, b = np.split(_x(x), 2, axis=dim)
    return a / (1 + np.exp(-b))


def _glu_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("last", make((3, 4), d, rng))
    yield S("dim0", make((2, 3), d, rng), 0)


add(OpInfo("glu", op=fn("nn.functional.glu"), sample_inputs=_glu_samples, ref=_ref_glu,
           dtypes=FLOATS + LOWP, tol=_TOL))  # fmt: skip


def _ref_prelu(x: Any, w: Any) -> Any:
    x, w = _x(x), _x(w)
    if x.ndim >= 2:
        w = w.reshape([1, w.size] + [1] * (x.ndim - 2))
    return np.where(x > 0, x, w * x)


def _prelu_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("per_channel", make((2, 3, 4), d, rng), make((3,), d, rng, 0, 1))
    yield S("shared", make((2, 3), d, rng), make((1,), d, rng, 0, 1))
    yield S("1d_shared", make((5,), d, rng), make((1,), d, rng, 0, 1))


add(OpInfo("prelu", op=fn("prelu"), method=meth("prelu"), sample_inputs=_prelu_samples,
           ref=_ref_prelu, dtypes=FLOATS + LOWP, tol=_TOL))  # fmt: skip


def _ref_channel_shuffle(x: Any, groups: int) -> Any:
    x = np.asarray(x)
    n, c = x.shape[:2]
    return x.reshape(n, groups, c // groups, *x.shape[2:]).swapaxes(1, 2).reshape(x.shape)


def _shuffle_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("groups2", make((2, 4, 3), d, rng), 2)
    yield S("groups3_4d", make((1, 6, 2, 2), d, rng), 3)


add(OpInfo("channel_shuffle", op=fn("channel_shuffle"), sample_inputs=_shuffle_samples,
           ref=_ref_channel_shuffle, dtypes=FLOATS))  # fmt: skip
