"""Samples and oracles of the mixed precision training ops (what tp.amp.GradScaler runs)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._core import FLOATS, LOWP, OpInfo, S, SampleInput, add, fn, make

INF, NAN = float("inf"), float("nan")


def _f32(*values: float) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def _unscale_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    grads = [make((2, 3), d, rng), make((4,), d, rng)]
    yield S("finite", grads, _f32(0.0), _f32(0.25))
    with_inf = make((3,), d, rng)
    with_inf[1] = INF
    yield S("inf", [make((2,), d, rng), with_inf], _f32(0.0), _f32(0.5))
    with_nan = make((2, 2), d, rng)
    with_nan[0, 1] = NAN
    yield S("nan", [with_nan], _f32(0.0), _f32(0.5))
    yield S("flag_already_set_stays", [make((3,), d, rng)], _f32(1.0), _f32(0.5))
    yield S("0dim_flag_and_scale", [make((), d, rng)], np.zeros((), np.float32), _f32(2.0))
    yield S("empty_list", [], _f32(0.0), _f32(0.5))
    yield S("empty_grad", [make((0, 3), d, rng)], _f32(0.0), _f32(0.5))


def _ref_unscale(grads: list[Any], found_inf: Any, inv_scale: Any) -> list[Any]:
    bad = any(not np.all(np.isfinite(g)) for g in grads)
    flag = np.where(bad, np.ones_like(found_inf), found_inf)
    return [g * inv_scale.reshape(()) for g in grads] + [flag]


add(
    OpInfo(
        "_amp_foreach_non_finite_check_and_unscale_",
        op=fn("_amp_foreach_non_finite_check_and_unscale_"),
        sample_inputs=_unscale_samples,
        ref=_ref_unscale,
        dtypes=FLOATS + LOWP,
        kind="mutating",
    )
)


def _i32(v: int) -> np.ndarray:
    return np.asarray([v], dtype=np.int32)


def _update_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # (scale, tracker, found_inf, growth, backoff, interval)
    yield S("counts_a_good_step", _f32(1024.0), _i32(0), _f32(0.0), 2.0, 0.5, 3)
    yield S("grows_after_interval", _f32(1024.0), _i32(2), _f32(0.0), 2.0, 0.5, 3)
    yield S("backs_off_on_inf", _f32(1024.0), _i32(2), _f32(1.0), 2.0, 0.5, 3)
    yield S("interval_one_grows_every_step", _f32(3.0), _i32(0), _f32(0.0), 4.0, 0.25, 1)
    yield S("overflow_keeps_the_scale", _f32(3e38), _i32(0), _f32(0.0), 2.0, 0.5, 1)
    yield S("nonzero_flag_is_inf", _f32(8.0), _i32(5), _f32(7.0), 2.0, 0.125, 100)
    yield S("0dim", np.full((), 6.0, np.float32), np.zeros((), np.int32), _f32(0.0), 2.0, 0.5, 1)


def _ref_update(
    scale: Any, tracker: Any, found_inf: Any, growth: float, backoff: float, interval: int
) -> list[Any]:
    s, t = np.float32(scale.reshape(())), int(tracker.reshape(()))
    if found_inf.reshape(()) != 0:
        s, t = np.float32(s * np.float32(backoff)), 0
    elif t + 1 == interval:
        with np.errstate(over="ignore"):
            grown = np.float32(float(s) * growth)  # PyTorch multiplies in float: may be inf
        s, t = (grown if np.isfinite(grown) else s), 0
    else:
        t += 1
    return [np.full(scale.shape, s, np.float32), np.full(tracker.shape, t, np.int32)]


add(
    OpInfo(
        "_amp_update_scale_",
        op=fn("_amp_update_scale_"),
        sample_inputs=_update_samples,
        ref=_ref_update,
        dtypes=("float32",),
        kind="mutating",
    )
)
