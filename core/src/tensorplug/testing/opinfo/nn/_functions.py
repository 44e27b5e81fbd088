"""Samples and oracles of the ``nn`` family, part ``functions``: softmax and log_softmax, neural
network functions, the backward functions, the mixed precision training ops (what
tp.amp.GradScaler runs) and mish."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._core import (
    DT,
    FLOATS,
    INTS,
    LOWP,
    LOWP_TOL_LOOSE,
    OpInfo,
    S,
    SampleInput,
    add,
    dtype_kwarg,
    dtype_name,
    fn,
    make,
    meth,
    np_dtype,
    same,
    unary_float,
    unary_samples,
)
from ..indexing import _idx

# --- neural network functions -----------------------------------------------------------------


def _ref_softmax(x: Any, dim: int, dtype: Any = None) -> Any:
    x = np.asarray(x, np.float64)
    if x.ndim == 0:
        return np.ones_like(x)
    e = np.exp(x - np.max(x, axis=dim, keepdims=True)) if x.size else x
    return e / np.sum(e, axis=dim, keepdims=True) if x.size else x


def _ref_log_softmax(x: Any, dim: int, dtype: Any = None) -> Any:
    x = np.asarray(x, np.float64)
    if x.ndim == 0:
        return np.zeros_like(x)
    if not x.size:
        return x
    s = x - np.max(x, axis=dim, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=dim, keepdims=True))


def _softmax_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim1", make((3, 4), d, rng), 1)
    yield S("dim0", make((3, 4), d, rng), 0)
    yield S("neg_dim", make((2, 3, 4), d, rng), -1)
    yield S("large_values", make((2, 5), d, rng, 80, 90), 1)
    yield S("0dim", make((), d, rng), 0)
    yield S("empty", make((0, 4), d, rng), 1)
    if d == "float32":
        yield S("dtype_float64", make((3, 4), d, rng), -1, dtype=DT("float64"))
        yield S("dtype_float64_kw", make((3, 4), d, rng), dim=0, dtype=DT("float64"))


for _name, _ref in (("softmax", _ref_softmax), ("log_softmax", _ref_log_softmax)):
    add(
        OpInfo(
            f"{_name}.int",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_softmax_samples,
            ref=_ref,
            dtypes=FLOATS + LOWP,
            result_dtype=dtype_kwarg(same),
        )
    )


LOSS_TOL = {"float32": (1e-5, 1e-5)}


def _mse_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("mean", make((3, 4), d, rng), make((3, 4), d, rng))
    yield S("sum", make((3, 4), d, rng), make((3, 4), d, rng), "sum")
    yield S("none_kw", make((3, 4), d, rng), make((3, 4), d, rng), reduction="none")
    yield S("0dim", make((), d, rng), make((), d, rng))
    yield S("empty_sum", make((0,), d, rng), make((0,), d, rng), "sum")


def _reduce(loss: Any, reduction: str) -> Any:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.sum(loss)
    with np.errstate(invalid="ignore"):
        return np.mean(loss)


add(
    OpInfo(
        "mse_loss",
        op=fn("mse_loss"),
        sample_inputs=_mse_samples,
        ref=lambda x, t, reduction="mean": _reduce((np.asarray(x, np.float64) - t) ** 2, reduction),
        dtypes=FLOATS,
        tol=LOSS_TOL,
    )
)


def _ref_nll(
    x: Any, target: Any, weight: Any = None, reduction: str = "mean", ignore_index: int = -100
) -> Any:
    x = np.asarray(x, np.float64)
    target = np.asarray(target)
    if x.ndim == 1:  # (C,) input with a 0-dim target
        x, target = x[None], target[None]
        squeeze = True
    else:
        squeeze = False
    n_classes = x.shape[1]
    w = np.ones(n_classes) if weight is None else np.asarray(weight, np.float64)
    xc = np.moveaxis(x, 1, -1)  # (N, d1, ..., C)
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    picked = np.take_along_axis(xc, safe[..., None], axis=-1)[..., 0]
    wt = w[safe] * keep
    losses = -picked * wt
    if reduction == "none":
        return losses[0] if squeeze else losses
    if reduction == "sum":
        return np.sum(losses)
    return np.sum(losses) / np.sum(wt)


def _log_probs(shape: tuple[int, ...], d: str, rng: np.random.Generator) -> np.ndarray:
    x = rng.uniform(-3, 3, size=shape)
    axis = 1 if len(shape) > 1 else 0
    x = x - np.log(np.sum(np.exp(x), axis=axis, keepdims=True))
    return x.astype(np_dtype(d))


def _targets(shape: tuple[int, ...], n_classes: int, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, n_classes, size=shape).astype(np.int64)


def _nll_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    t_ignore = np.array([1, 0, 1, 2, 3], dtype=np.int64)
    yield S("mean", _log_probs((5, 4), d, rng), _targets((5,), 4, rng))
    yield S("sum", _log_probs((5, 4), d, rng), _targets((5,), 4, rng), None, "sum")
    yield S("none", _log_probs((5, 4), d, rng), _targets((5,), 4, rng), reduction="none")
    yield S(
        "weight_mean",
        _log_probs((5, 4), d, rng),
        _targets((5,), 4, rng),
        make((4,), d, rng, 0.1, 2),
    )
    yield S(
        "weight_none",
        _log_probs((5, 4), d, rng),
        _targets((5,), 4, rng),
        make((4,), d, rng, 0.1, 2),
        "none",
    )
    yield S("ignore_index_mean", _log_probs((5, 4), d, rng), t_ignore, ignore_index=1)
    yield S(
        "ignore_index_weight_sum",
        _log_probs((5, 4), d, rng),
        t_ignore,
        make((4,), d, rng, 0.1, 2),
        "sum",
        1,
    )
    yield S(
        "ignore_index_none", _log_probs((5, 4), d, rng), t_ignore, reduction="none", ignore_index=1
    )
    yield S("ignore_default_-100", _log_probs((3, 4), d, rng), np.array([0, -100, 3], np.int64))
    # aten::nll_loss takes (C,) or (N, C) input; K-dim inputs are cross_entropy's business
    yield S("1d_input", _log_probs((4,), d, rng), np.array(2, dtype=np.int64))


add(
    OpInfo(
        "nll_loss",
        op=fn("nll_loss"),
        sample_inputs=_nll_samples,
        ref=_ref_nll,
        dtypes=FLOATS,
        tol=LOSS_TOL,
    )
)


# --- backward functions -----------------------------------------------------------------------


def _ref_threshold_backward(g: Any, x: Any, threshold: Any) -> Any:
    g, x = np.asarray(g, np.float64), np.asarray(x, np.float64)
    return np.where(x <= threshold, 0.0, g)  # NaN in x passes g (PyTorch tests x <= t)


def _threshold_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("zero", make((3, 4), d, rng), make((3, 4), d, rng), 0)
    yield S("float_threshold", make((3, 4), d, rng), make((3, 4), d, rng), 0.5)
    yield S("ties", make((2, 3), d, rng), np.array([[0, 1, -1], [0.5, 0, 2]], np_dtype(d)), 0.5)
    yield S("nan_input", make((3,), d, rng), np.array([np.nan, -1, 1], np_dtype(d)), 0)
    # inf and NaN gradients where the input is dropped still give 0 there
    inf_grad = np.array([np.inf, np.nan, -np.inf, 1], np_dtype(d))
    yield S("nonfinite_grad", inf_grad, np.array([-1, 0, 2, 3], np_dtype(d)), 0)
    yield S("0dim", make((), d, rng), make((), d, rng), 0)
    yield S("empty", make((0, 3), d, rng), make((0, 3), d, rng), 0)


add(
    OpInfo(
        "threshold_backward",
        op=fn("threshold_backward"),
        sample_inputs=_threshold_backward_samples,
        ref=_ref_threshold_backward,
        dtypes=FLOATS + LOWP,
    )
)


def _ref_gelu_backward(g: Any, x: Any, approximate: str = "none") -> Any:
    """g * gelu'(x) in float64: Phi(x) + x phi(x) by math.erf, or the derivative of the tanh
    form written out."""
    g, x = np.asarray(g, np.float64), np.asarray(x, np.float64)
    if approximate == "tanh":
        b, k = math.sqrt(2 / math.pi), 0.044715
        t = np.tanh(b * (x + k * x**3))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * b * (1 + 3 * k * x * x))
    erf = np.vectorize(math.erf, otypes=[np.float64])
    cdf = 0.5 * (1 + erf(x / math.sqrt(2)))
    return g * (cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


def _gelu_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("exact", make((3, 4), d, rng), make((3, 4), d, rng))
    yield S("tanh", make((3, 4), d, rng), make((3, 4), d, rng), approximate="tanh")
    # the tails (Phi near 0 and 1) and zero; infinite inputs give NaN (x phi(x) is inf * 0,
    # as in PyTorch's kernel)
    x = np.array([-9.0, -4.0, -0.0, 0.0, 0.5, 4.0, 9.0], np_dtype(d))
    yield S("tails", make((7,), d, rng), x)
    yield S("tails_tanh", make((7,), d, rng), x, approximate="tanh")
    yield S("nonfinite", make((3,), d, rng), np.array([np.inf, -np.inf, np.nan], np_dtype(d)))
    yield S("broadcast", make((3, 1), d, rng), make((4,), d, rng))
    yield S("0dim", make((), d, rng), make((), d, rng), approximate="none")
    yield S("empty", make((0, 3), d, rng), make((0, 3), d, rng))


add(
    OpInfo(
        "gelu_backward",
        op=fn("gelu_backward"),
        sample_inputs=_gelu_backward_samples,
        ref=_ref_gelu_backward,
        dtypes=FLOATS + LOWP,
    )
)


def _ref_softmax_backward_data(g: Any, y: Any, dim: int, input_dtype: Any) -> Any:
    g, y = np.asarray(g, np.float64), np.asarray(y, np.float64)
    if y.ndim == 0:
        return g * y - y * (g * y)
    return y * (g - np.sum(g * y, axis=dim, keepdims=True))


def _ref_log_softmax_backward_data(g: Any, y: Any, dim: int, input_dtype: Any) -> Any:
    g, y = np.asarray(g, np.float64), np.asarray(y, np.float64)
    if y.ndim == 0:
        return g - np.exp(y) * g
    return g - np.exp(y) * np.sum(g, axis=dim, keepdims=True)


def _softmax_backward_samples(
    log: bool,
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        ref = _ref_log_softmax if log else _ref_softmax
        for name, shape, dim in (
            ("dim1", (3, 4), 1),
            ("dim0", (3, 4), 0),
            ("neg_dim", (2, 3, 4), -1),
            ("0dim", (), 0),
            ("empty", (0, 4), 1),
        ):
            y = ref(make(shape, d, rng), dim).astype(np_dtype(d))
            yield S(name, make(shape, d, rng), y, dim, DT(d))
        if d == "float32":  # the forward ran in float32 on float16 input
            y = ref(make((3, 4), d, rng), 1).astype(np.float32)
            yield S("input_dtype_float16", make((3, 4), d, rng), y, 1, DT("float16"))

    return samples


for _name, _ref in (
    ("_softmax_backward_data", _ref_softmax_backward_data),
    ("_log_softmax_backward_data", _ref_log_softmax_backward_data),
):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            sample_inputs=_softmax_backward_samples(_name.startswith("_log")),
            ref=_ref,
            dtypes=FLOATS + LOWP,
            result_dtype=lambda s, d: s.args[3].name,
            tol=LOWP_TOL_LOOSE,
        )
    )


def _ref_nll_loss_backward(
    g: Any,
    x: Any,
    target: Any,
    weight: Any = None,
    reduction: str = "mean",
    ignore_index: int = -100,
) -> Any:
    # the derivative of _ref_nll in x, written out: -w[t] * g at (n, t[n]), over the total weight
    x = np.asarray(x, np.float64)
    target = np.asarray(target)
    g = np.asarray(g, np.float64)
    w = (
        np.ones(x.shape[-1] if x.ndim == 1 else x.shape[1])
        if weight is None
        else np.asarray(weight, np.float64)
    )
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    wt = w[safe] * keep
    with np.errstate(all="ignore"):  # every target ignored: "mean" divides by zero
        coef = -wt * (g / np.sum(wt) if reduction == "mean" else g)
    coef = np.where(keep, coef, 0.0)  # ignored targets get nothing, not NaN
    out = np.zeros_like(x)
    if x.ndim == 1:
        out[safe] = coef
    else:
        for n in range(x.shape[0]):
            out[n, safe[n]] = coef[n]
    return out


def _nll_loss_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    one = np.array(1.5, np_dtype(d))
    t_ignore = np.array([1, 0, 1, 2, 3], dtype=np.int64)
    x = _log_probs((5, 4), d, rng)
    yield S("mean", one, x, _targets((5,), 4, rng))
    yield S("sum", one, x, _targets((5,), 4, rng), None, "sum")
    yield S("none", make((5,), d, rng), x, _targets((5,), 4, rng), reduction="none")
    yield S("weight_mean", one, x, _targets((5,), 4, rng), make((4,), d, rng, 0.1, 2))
    yield S(
        "weight_none",
        make((5,), d, rng),
        x,
        _targets((5,), 4, rng),
        make((4,), d, rng, 0.1, 2),
        "none",
    )
    yield S("ignore_index_mean", one, x, t_ignore, ignore_index=1)
    yield S("ignore_index_weight_sum", one, x, t_ignore, make((4,), d, rng, 0.1, 2), "sum", 1)
    yield S("1d_input", one, _log_probs((4,), d, rng), np.array(2, dtype=np.int64))


add(
    OpInfo(
        "nll_loss_backward",
        op=fn("nll_loss_backward"),
        sample_inputs=_nll_loss_backward_samples,
        ref=_ref_nll_loss_backward,
        dtypes=FLOATS,
        result_dtype=lambda s, d: dtype_name(s.args[1]),
        tol=LOSS_TOL,
    )
)


def _ref_linear_backward(x: Any, g: Any, w: Any, output_mask: Any) -> Any:
    # the gradients of x @ w.T + b, in float64; None where the mask does not ask
    x, g, w = (np.asarray(a, np.float64) for a in (x, g, w))
    rows_g = g.reshape(-1, g.shape[-1])
    rows_x = x.reshape(-1, x.shape[-1])
    grads = (g @ w, rows_g.T @ rows_x, rows_g.sum(0))
    return tuple(v if m else None for v, m in zip(grads, output_mask, strict=True))


def _linear_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    every = [True, True, True]
    yield S("2d", make((5, 3), d, rng), make((5, 4), d, rng), make((4, 3), d, rng), every)
    yield S(
        "no_input_grad", make((5, 3), d, rng), make((5, 4), d, rng), make((4, 3), d, rng),
        [False, True, True],
    )  # fmt: skip
    yield S(
        "input_grad_only", make((5, 3), d, rng), make((5, 4), d, rng), make((4, 3), d, rng),
        [True, False, False],
    )  # fmt: skip
    yield S(
        "batched", make((2, 5, 3), d, rng), make((2, 5, 4), d, rng), make((4, 3), d, rng), every
    )
    yield S("1d", make((3,), d, rng), make((4,), d, rng), make((4, 3), d, rng), every)
    yield S("empty_batch", make((0, 3), d, rng), make((0, 4), d, rng), make((4, 3), d, rng), every)


def _compare_linear_backward(got: Any, expected: Any, s: SampleInput, d: str) -> None:
    assert isinstance(got, tuple) and len(got) == 3, f"expected 3 results, got {got!r}"
    rtol, atol = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}.get(d, (1e-5, 1e-5))
    for i, (v, e) in enumerate(zip(got, expected, strict=True)):
        if e is None:
            assert v is None, f"result[{i}]: the mask asks for no gradient, got {v!r}"
            continue
        assert str(v.dtype).rsplit(".", 1)[-1] == d, f"result[{i}]: dtype {v.dtype} != {d}"
        arr = v.cpu().numpy().astype(np.float64)
        assert arr.shape == e.shape, f"result[{i}]: shape {arr.shape} != {e.shape}"
        np.testing.assert_allclose(arr, e, rtol=rtol, atol=atol, err_msg=f"result[{i}]")


add(
    OpInfo(
        "linear_backward",
        op=fn("linear_backward"),
        sample_inputs=_linear_backward_samples,
        ref=_ref_linear_backward,
        dtypes=FLOATS + LOWP,
        compare=_compare_linear_backward,
    )
)


def _ref_cross_entropy(
    x: Any,
    target: Any,
    weight: Any = None,
    reduction: str = "mean",
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Any:
    x = np.asarray(x, np.float64)
    class_dim = 0 if x.ndim == 1 else 1
    n_classes = x.shape[class_dim]
    logp = _ref_log_softmax(x, class_dim)
    target = np.asarray(target)
    if target.dtype.kind == "f":  # class probabilities
        t = target * (1 - label_smoothing) + label_smoothing / n_classes
        w_shape = [1] * x.ndim
        w_shape[class_dim] = n_classes
        w = np.ones(w_shape) if weight is None else np.reshape(weight, w_shape)
        loss = -np.sum(logp * t * w, axis=class_dim)
        if reduction == "mean":
            return np.sum(loss) / (loss.size if x.ndim > 1 else 1)
        return _reduce(loss, reduction)
    nll = _ref_nll(logp, target, weight, reduction, ignore_index)
    if label_smoothing == 0:
        return nll
    # PyTorch: (1 - eps) * nll + eps / C * smooth, smooth = -sum_c w_c * logp_c per element,
    # zeroed where ignored; "mean" divides by the summed weights of the kept targets.
    w_shape = [1] * x.ndim
    w_shape[class_dim] = n_classes
    w = np.ones(n_classes) if weight is None else np.asarray(weight, np.float64)
    smooth = -np.sum(logp * np.reshape(w, w_shape), axis=class_dim)
    keep = target != ignore_index
    smooth = np.where(keep, smooth, 0.0)
    if reduction == "none":
        ret = smooth
    elif reduction == "sum":
        ret = np.sum(smooth)
    else:
        denom = np.sum(w[np.where(keep, target, 0)] * keep) if weight is not None else np.sum(keep)
        ret = np.sum(smooth) / denom
    return (1 - label_smoothing) * nll + ret * (label_smoothing / n_classes)


def _ce_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng)  # noqa: E731
    t_ignore = np.array([1, 0, 1, 2, 3], dtype=np.int64)
    w = lambda: make((4,), d, rng, 0.1, 2)  # noqa: E731
    yield S("mean", x((5, 4)), _targets((5,), 4, rng))
    yield S("sum", x((5, 4)), _targets((5,), 4, rng), reduction="sum")
    yield S("none", x((5, 4)), _targets((5,), 4, rng), None, "none")
    yield S("weight", x((5, 4)), _targets((5,), 4, rng), w())
    yield S("ignore_index", x((5, 4)), t_ignore, ignore_index=1)
    yield S("weight_ignore_none", x((5, 4)), t_ignore, w(), "none", 1)
    yield S("label_smoothing", x((5, 4)), _targets((5,), 4, rng), label_smoothing=0.1)
    yield S("label_smoothing_weight_ignore", x((5, 4)), t_ignore, w(), "mean", 1, 0.2)
    yield S(
        "label_smoothing_sum",
        x((5, 4)),
        _targets((5,), 4, rng),
        reduction="sum",
        label_smoothing=0.3,
    )
    yield S("kdim", x((2, 3, 4)), _targets((2, 4), 3, rng))
    yield S("1d_input", x((4,)), np.array(1, dtype=np.int64))
    probs = rng.dirichlet(np.ones(4), size=5).astype(np_dtype(d))
    yield S("prob_target", x((5, 4)), probs)


add(
    OpInfo(
        "cross_entropy_loss",
        op=fn("cross_entropy"),
        sample_inputs=_ce_samples,
        ref=_ref_cross_entropy,
        dtypes=FLOATS,
        tol=LOSS_TOL,
    )
)


def _ref_bce(x: Any, t: Any, weight: Any = None, reduction: str = "mean") -> Any:
    x = np.asarray(x, np.float64)
    log_x = np.maximum(np.log(x), -100.0)  # PyTorch clamps the logs at -100
    log_1mx = np.maximum(np.log1p(-x), -100.0)
    loss = -(t * log_x + (1 - t) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _bce_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p = lambda shape: make(shape, d, rng, 0.05, 0.95)  # noqa: E731
    t = lambda shape: make(shape, d, rng, 0.0, 1.0)  # noqa: E731
    yield S("mean", p((3, 4)), t((3, 4)))
    yield S("sum", p((3, 4)), t((3, 4)), reduction="sum")
    yield S("none", p((3, 4)), t((3, 4)), None, "none")
    yield S("weight_broadcast", p((3, 4)), t((3, 4)), make((4,), d, rng, 0.1, 2))
    yield S("hard_targets", p((6,)), np.array([0, 1, 1, 0, 1, 0]).astype(np_dtype(d)))
    yield S("0dim", p(()), t(()))
    yield S(
        "saturated_clamped",
        np.array([0.0, 1.0, 0.5]).astype(np_dtype(d)),
        np.array([1.0, 0.0, 0.5]).astype(np_dtype(d)),
        reduction="none",
    )


add(
    OpInfo(
        "binary_cross_entropy",
        op=fn("binary_cross_entropy"),
        sample_inputs=_bce_samples,
        ref=_ref_bce,
        dtypes=FLOATS,
        tol=LOSS_TOL,
    )
)


# the losses and activations that are CompositeImplicitAutograd operators (their float32
# autocast policy needs an operator): oracles in float64


def _pair_loss_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("mean", make((3, 4), d, rng), make((3, 4), d, rng))
    yield S("sum", make((3, 4), d, rng), make((3, 4), d, rng), "sum")
    yield S("none", make((3, 4), d, rng), make((3, 4), d, rng), "none")
    yield S("broadcast", make((3, 4), d, rng), make((4,), d, rng), "none")
    yield S("0dim", make((), d, rng), make((), d, rng))
    yield S("empty_sum", make((0,), d, rng), make((0,), d, rng), "sum")


def _f64(*arrays: Any) -> list[Any]:
    return [np.asarray(a, np.float64) for a in arrays]


def _ref_l1(x: Any, t: Any, reduction: str = "mean") -> Any:
    x, t = _f64(x, t)
    return _reduce(np.abs(x - t), reduction)


def _ref_smooth_l1(x: Any, t: Any, reduction: str = "mean", beta: float = 1.0) -> Any:
    x, t = _f64(x, t)
    ad = np.abs(x - t)
    if beta == 0:
        return _reduce(ad, reduction)
    return _reduce(np.where(ad < beta, 0.5 * ad**2 / beta, ad - 0.5 * beta), reduction)


def _ref_huber(x: Any, t: Any, reduction: str = "mean", delta: float = 1.0) -> Any:
    x, t = _f64(x, t)
    ad = np.abs(x - t)
    return _reduce(np.where(ad < delta, 0.5 * ad**2, delta * (ad - 0.5 * delta)), reduction)


def _beta_samples(keyword: str) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield from _pair_loss_samples(d, rng)
        yield S(f"{keyword}_half", make((5,), d, rng), make((5,), d, rng), "none", 0.5)
        yield S(f"{keyword}_kw", make((2, 3), d, rng), make((2, 3), d, rng), **{keyword: 2.0})
        if keyword == "beta":
            yield S("beta_0", make((5,), d, rng), make((5,), d, rng), "sum", 0.0)

    return samples


for _name, _ref, _samples in (
    ("l1_loss", _ref_l1, _pair_loss_samples),
    ("smooth_l1_loss", _ref_smooth_l1, _beta_samples("beta")),
    ("huber_loss", _ref_huber, _beta_samples("delta")),
):
    add(OpInfo(_name, op=fn(_name), sample_inputs=_samples, ref=_ref, dtypes=FLOATS, tol=LOSS_TOL))


def _kl_div_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    logp = lambda shape: _log_probs(shape, d, rng)  # noqa: E731
    probs = lambda shape: make(shape, d, rng, 0.0, 1.0)  # noqa: E731
    yield S("mean", logp((3, 4)), probs((3, 4)))
    yield S("sum", logp((3, 4)), probs((3, 4)), "sum")
    yield S("none", logp((3, 4)), probs((3, 4)), "none")
    zeros = probs((2, 3))
    zeros[0, 1] = 0
    yield S("zero_target", logp((2, 3)), zeros, "none")
    yield S("log_target", logp((3, 4)), logp((3, 4)), "sum", log_target=True)
    yield S("0dim", np.asarray(logp(())), probs(()))


def _ref_kl_div(x: Any, t: Any, reduction: str = "mean", *, log_target: bool = False) -> Any:
    x, t = _f64(x, t)
    if log_target:
        return _reduce(np.exp(t) * (t - x), reduction)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_log_t = np.where(t == 0, 0.0, t * np.log(t))
    return _reduce(t_log_t - t * x, reduction)


add(
    OpInfo(
        "kl_div",
        op=fn("kl_div"),
        sample_inputs=_kl_div_samples,
        ref=_ref_kl_div,
        dtypes=FLOATS,
        tol=LOSS_TOL,
    )
)


def _bce_logits_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -4, 4)  # noqa: E731
    t = lambda shape: make(shape, d, rng, 0.0, 1.0)  # noqa: E731
    yield S("mean", x((3, 4)), t((3, 4)))
    yield S("sum", x((3, 4)), t((3, 4)), reduction="sum")
    yield S("none", x((3, 4)), t((3, 4)), None, None, "none")
    yield S("weight", x((3, 4)), t((3, 4)), make((4,), d, rng, 0.1, 2))
    yield S("pos_weight", x((3, 4)), t((3, 4)), pos_weight=make((4,), d, rng, 0.1, 3))
    yield S(
        "large_logits",
        np.array([-200.0, 0.0, 200.0]).astype(np_dtype(d)),
        np.array([1.0, 0.5, 0.0]).astype(np_dtype(d)),
        reduction="none",
    )
    yield S("0dim", x(()), t(()))


def _ref_bce_logits(
    x: Any, t: Any, weight: Any = None, pos_weight: Any = None, reduction: str = "mean"
) -> Any:
    x, t = _f64(x, t)
    log_sig = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))  # log(sigmoid(x)), stable
    log_one_minus = log_sig - x  # log(1 - sigmoid(x))
    pw = 1.0 if pos_weight is None else np.asarray(pos_weight, np.float64)
    loss = -(pw * t * log_sig + (1 - t) * log_one_minus)
    if weight is not None:
        loss = loss * np.asarray(weight, np.float64)
    return _reduce(loss, reduction)


add(
    OpInfo(
        "binary_cross_entropy_with_logits",
        op=fn("binary_cross_entropy_with_logits"),
        sample_inputs=_bce_logits_samples,
        ref=_ref_bce_logits,
        dtypes=FLOATS,
        tol=LOSS_TOL,
    )
)


def _softplus_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((3, 4), d, rng, -30, 30))
    yield S("beta", make((5,), d, rng), 2)
    yield S("threshold", make((5,), d, rng), 1, 1.5)
    yield S("kw", make((2, 3), d, rng), beta=0.5, threshold=4)
    yield S("extremes", np.array([-1000.0, -20.0, 0.0, 19.9, 20.1, 1000.0]).astype(np_dtype(d)))
    yield S("0dim", make((), d, rng))


def _ref_softplus(x: Any, beta: float = 1, threshold: float = 20) -> Any:
    x = np.asarray(x, np.float64)
    bx = beta * x
    return np.where(bx > threshold, x, np.logaddexp(0.0, bx) / beta)


add(
    OpInfo(
        "softplus",
        op=fn("softplus"),
        sample_inputs=_softplus_samples,
        ref=_ref_softplus,
        dtypes=FLOATS,
        tol=LOSS_TOL,
    )
)


def _cosine_similarity_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((3, 4), d, rng), make((3, 4), d, rng))
    yield S("dim0", make((3, 4), d, rng), make((3, 4), d, rng), 0)
    yield S("broadcast", make((3, 4), d, rng), make((4,), d, rng), -1)
    yield S("zero_vector", np.zeros((2, 3), np_dtype(d)), make((2, 3), d, rng), dim=1)
    yield S("eps", make((2, 3), d, rng), make((2, 3), d, rng), 1, 1e-3)


def _ref_cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Any:
    x1, x2 = np.broadcast_arrays(*_f64(x1, x2))
    n1 = np.maximum(np.linalg.norm(x1, axis=dim, keepdims=True), eps)
    n2 = np.maximum(np.linalg.norm(x2, axis=dim, keepdims=True), eps)
    return np.sum((x1 / n1) * (x2 / n2), axis=dim)


add(
    OpInfo(
        "cosine_similarity",
        op=fn("cosine_similarity"),
        sample_inputs=_cosine_similarity_samples,
        ref=_ref_cosine_similarity,
        dtypes=FLOATS,
        tol=LOSS_TOL,
    )
)


def _embedding_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    w = lambda: make((10, 3), d, rng)  # noqa: E731
    yield S("1d", w(), _idx([0, 9, 2, 2]))
    yield S("2d", w(), _idx([[1, 2], [3, 4], [5, 9]]))
    yield S("0dim", w(), np.array(4, dtype=np.int64))
    yield S("empty", w(), np.zeros((0,), np.int64))
    yield S("padding_idx", w(), _idx([0, 1, 2]), padding_idx=1)  # only the gradient differs


add(
    OpInfo(
        "embedding",
        op=fn("embedding"),
        sample_inputs=_embedding_samples,
        ref=lambda w, idx, padding_idx=-1, scale_grad_by_freq=False, sparse=False: w[idx],
        dtypes=FLOATS + INTS,
    )
)


def _ref_layer_norm(
    x: Any,
    normalized_shape: list[int],
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-5,
    cudnn_enable: bool = True,
) -> Any:
    x = np.asarray(x, np.float64)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mu = np.mean(x, axis=axes, keepdims=True)
    var = np.var(x, axis=axes, keepdims=True)  # biased
    y = (x - mu) / np.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def _layer_norm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("last_dim", make((2, 3, 4), d, rng), [4])
    yield S("last_two_dims", make((2, 3, 4), d, rng), [3, 4])
    yield S("weight_bias", make((2, 3, 4), d, rng), [4], make((4,), d, rng), make((4,), d, rng))
    yield S("weight_only_kw", make((5, 4), d, rng), [4], weight=make((4,), d, rng))
    yield S("eps", make((3, 4), d, rng), [4], None, None, 0.1)
    yield S("1d", make((6,), d, rng), [6])


add(
    OpInfo(
        "layer_norm",
        op=fn("layer_norm"),
        sample_inputs=_layer_norm_samples,
        ref=_ref_layer_norm,
        dtypes=FLOATS + LOWP,
        tol={"float32": (1e-5, 1e-5)},  # half precision: computed in float32, rounded once
    )
)


# --- mixed precision training (tp.amp.GradScaler) -----------------------------------------------

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
