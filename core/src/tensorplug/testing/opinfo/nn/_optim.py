"""Samples and oracles of the ``nn`` family, part ``optim``: the multi-tensor optimizer
operators (``_foreach_add_.Scalar``, ``_fused_adam_``, ``_fused_adamw_``, ``_fused_sgd_`` and
``_fused_adagrad_`` and their ``.tensor_lr`` overloads), against PyTorch's update rules written in numpy (float64)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._core import FLOATS, LOWP, OpInfo, S, SampleInput, add, fn, make

_SHAPES = [(2, 3), (4,), ()]


def _f(x: Any) -> float:
    return float(np.asarray(x).reshape(()))


def _foreach_add_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("ones", [make((2, 3), d, rng), make((4,), d, rng)], 1)
    yield S("float_scalar", [make((3,), d, rng), make((), d, rng)], 0.5)
    yield S("one_tensor", [make((2, 2), d, rng)], -2)


def _ref_foreach_add(tensors: list[Any], scalar: Any) -> list[Any]:
    return [np.asarray(t, np.float64) + scalar for t in tensors]


add(
    OpInfo(
        "_foreach_add_.Scalar",
        op=fn("ops.aten._foreach_add_.Scalar"),
        sample_inputs=_foreach_add_samples,
        ref=_ref_foreach_add,
        dtypes=FLOATS + LOWP,
        kind="mutating",
        aten_variant=False,
    )
)


def _adam_lists(d: str, rng: np.random.Generator, step: float, amsgrad: bool) -> tuple[Any, ...]:
    params = [make(s, d, rng) for s in _SHAPES]
    grads = [make(s, d, rng) for s in _SHAPES]
    exp_avgs = [make(s, d, rng, -1, 1) for s in _SHAPES]
    exp_avg_sqs = [make(s, d, rng, 0, 2) for s in _SHAPES]
    maxes = [make(s, d, rng, 0, 2) for s in _SHAPES] if amsgrad else []
    steps = [np.full((), step, np.float32) for _ in _SHAPES]
    return params, grads, exp_avgs, exp_avg_sqs, maxes, steps


def _adam_samples(tensor_lr: bool) -> Any:
    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        def lr(v: float) -> Any:
            return np.full((), v, np.float64) if tensor_lr else v

        common = {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
        yield S("first_step", *_adam_lists(d, rng, 1.0, False), lr=lr(0.01), weight_decay=0.0,
                amsgrad=False, maximize=False, **common)  # fmt: skip
        yield S("later_step_weight_decay", *_adam_lists(d, rng, 7.0, False), lr=lr(0.05),
                weight_decay=0.1, amsgrad=False, maximize=False, **common)  # fmt: skip
        yield S("amsgrad_maximize", *_adam_lists(d, rng, 3.0, True), lr=lr(0.02),
                weight_decay=0.01, amsgrad=True, maximize=True, beta1=0.6, beta2=0.9,
                eps=1e-3)  # fmt: skip

    return samples


def _ref_adam(decoupled: bool) -> Any:
    def ref(params: list[Any], grads: list[Any], exp_avgs: list[Any], exp_avg_sqs: list[Any],
            maxes: list[Any], steps: list[Any], *, lr: Any, beta1: float, beta2: float,
            weight_decay: float, eps: float, amsgrad: bool, maximize: bool) -> list[Any]:  # fmt: skip
        lr = _f(lr)
        out_p, out_m, out_v, out_max = [], [], [], []
        for i, p in enumerate(params):
            p = np.asarray(p, np.float64)
            g = -np.asarray(grads[i], np.float64) if maximize else np.asarray(grads[i], np.float64)
            m, v = np.asarray(exp_avgs[i], np.float64), np.asarray(exp_avg_sqs[i], np.float64)
            t = _f(steps[i])
            if weight_decay != 0:
                if decoupled:
                    p = p * (1 - lr * weight_decay)
                else:
                    g = g + weight_decay * p
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * g * g
            if amsgrad:
                vmax = np.maximum(np.asarray(maxes[i], np.float64), v)
                out_max.append(vmax)
                denom = np.sqrt(vmax) / np.sqrt(1 - beta2**t) + eps
            else:
                denom = np.sqrt(v) / np.sqrt(1 - beta2**t) + eps
            out_p.append(p - lr / (1 - beta1**t) * m / denom)
            out_m.append(m)
            out_v.append(v)
        return [*out_p, *grads, *out_m, *out_v, *out_max]

    return ref


for _name, _decoupled in (("_fused_adam_", False), ("_fused_adamw_", True)):
    for _overload, _tensor_lr in (("", False), (".tensor_lr", True)):
        add(
            OpInfo(
                _name + _overload,
                op=fn(f"ops.aten.{_name}.{_overload[1:] or 'default'}"),
                sample_inputs=_adam_samples(_tensor_lr),
                ref=_ref_adam(_decoupled),
                dtypes=FLOATS + LOWP,
                kind="mutating",
                aten_variant=False,
            )
        )


def _sgd_samples(tensor_lr: bool) -> Any:
    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        def lists(with_bufs: bool = True) -> tuple[Any, ...]:
            params = [make(s, d, rng) for s in _SHAPES]
            grads = [make(s, d, rng) for s in _SHAPES]
            bufs = [make(s, d, rng) for s in _SHAPES] if with_bufs else []
            return params, grads, bufs

        def lr(v: float) -> Any:
            return np.full((), v, np.float64) if tensor_lr else v

        yield S("plain", *lists(False), weight_decay=0.0, momentum=0.0, lr=lr(0.1),
                dampening=0.0, nesterov=False, maximize=False, is_first_step=False)  # fmt: skip
        yield S("momentum_first_step", *lists(), weight_decay=0.01, momentum=0.9, lr=lr(0.1),
                dampening=0.0, nesterov=False, maximize=False, is_first_step=True)  # fmt: skip
        yield S("momentum_dampening", *lists(), weight_decay=0.0, momentum=0.9, lr=lr(0.05),
                dampening=0.3, nesterov=False, maximize=True, is_first_step=False)  # fmt: skip
        yield S("nesterov", *lists(), weight_decay=0.1, momentum=0.8, lr=lr(0.2),
                dampening=0.0, nesterov=True, maximize=False, is_first_step=False)  # fmt: skip

    return samples


def _ref_sgd(params: list[Any], grads: list[Any], bufs: list[Any], *, weight_decay: float,
             momentum: float, lr: Any, dampening: float, nesterov: bool, maximize: bool,
             is_first_step: bool) -> list[Any]:  # fmt: skip
    lr = _f(lr)
    out_p, out_b = [], []
    for i, p in enumerate(params):
        p = np.asarray(p, np.float64)
        g = np.asarray(grads[i], np.float64)
        g = -g if maximize else g
        if weight_decay != 0:
            g = g + weight_decay * p
        if momentum != 0:
            b = (
                g
                if is_first_step
                else momentum * np.asarray(bufs[i], np.float64) + (1 - dampening) * g
            )
            out_b.append(b)
            g = g + momentum * b if nesterov else b
        out_p.append(p - lr * g)
    return [*out_p, *grads, *out_b]


for _overload, _tensor_lr in (("", False), (".tensor_lr", True)):
    add(
        OpInfo(
            "_fused_sgd_" + _overload,
            op=fn(f"ops.aten._fused_sgd_.{_overload[1:] or 'default'}"),
            sample_inputs=_sgd_samples(_tensor_lr),
            ref=_ref_sgd,
            dtypes=FLOATS + LOWP,
            kind="mutating",
            aten_variant=False,
        )
    )


def _adagrad_samples(tensor_lr: bool) -> Any:
    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        def lists(step: float) -> tuple[Any, ...]:
            params = [make(s, d, rng) for s in _SHAPES]
            grads = [make(s, d, rng) for s in _SHAPES]
            sums = [make(s, d, rng, 0, 2) for s in _SHAPES]
            steps = [np.full((), step, np.float32) for _ in _SHAPES]
            return params, grads, sums, steps

        def lr(v: float) -> Any:
            return np.full((), v, np.float64) if tensor_lr else v

        yield S("first_step", *lists(1.0), lr=lr(0.1), lr_decay=0.0, weight_decay=0.0,
                eps=1e-10, maximize=False)  # fmt: skip
        yield S("decay_weight_decay_maximize", *lists(5.0), lr=lr(0.05), lr_decay=0.1,
                weight_decay=0.1, eps=1e-3, maximize=True)  # fmt: skip

    return samples


def _ref_adagrad(steps_written: bool) -> Any:
    """The oracle; the default overload marks ``state_steps`` written (``Tensor(d!)[]``), as
    PyTorch's schema does, though neither overload changes them."""

    def ref(*args: Any, **kwargs: Any) -> list[Any]:
        out = _adagrad(*args, **kwargs)
        return [*out, *args[3]] if steps_written else out

    return ref


def _adagrad(params: list[Any], grads: list[Any], sums: list[Any], steps: list[Any], *,
                 lr: Any, lr_decay: float, weight_decay: float, eps: float,
                 maximize: bool) -> list[Any]:  # fmt: skip
    lr = _f(lr)
    out_p, out_s = [], []
    for i, p in enumerate(params):
        p = np.asarray(p, np.float64)
        g = np.asarray(grads[i], np.float64)
        g = -g if maximize else g
        if weight_decay != 0:
            g = g + weight_decay * p
        s = np.asarray(sums[i], np.float64) + g * g
        clr = lr / (1 + (_f(steps[i]) - 1) * lr_decay)
        out_p.append(p - clr * g / (np.sqrt(s) + eps))
        out_s.append(s)
    return [*out_p, *grads, *out_s]


for _overload, _tensor_lr in (("", False), (".tensor_lr", True)):
    add(
        OpInfo(
            "_fused_adagrad_" + _overload,
            op=fn(f"ops.aten._fused_adagrad_.{_overload[1:] or 'default'}"),
            sample_inputs=_adagrad_samples(_tensor_lr),
            ref=_ref_adagrad(not _tensor_lr),
            dtypes=FLOATS + LOWP,
            kind="mutating",
            aten_variant=False,
        )
    )
