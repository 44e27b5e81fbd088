"""Samples and oracles of the ``nn`` family, part ``norms``: batch, instance, group and RMS
normalization, the batch and group norm kernels and their backward kernels, and the feature
and alpha dropouts (random ops: checked by their statistics, as dropout).

The backward oracles are the closed forms (Note [Normalization kernels] in
array_backend/_nn/_norms.py), written per channel with numpy in float64; gradcheck
(tests/autograd/test_formulas.py) ties them to the forward oracles.

Samples that would update running statistics in place are left out here (the harness checks
that a function leaves its inputs alone); tests/nn/test_norms.py checks the updates.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._core import FLOATS, LOWP, OpInfo, S, SampleInput, add, fn, make, np_dtype

_TOL = {"float16": (2e-2, 2e-2), "bfloat16": (8e-2, 8e-2), "float32": (1e-4, 1e-5)}


def _f64(a: Any) -> Any:
    return None if a is None else np.asarray(a, np.float64)


def _bn_axes(x: np.ndarray) -> tuple[int, ...]:
    return (0, *range(2, x.ndim))


def _bshape(x: np.ndarray) -> tuple[int, ...]:
    return (1, x.shape[1], *(1,) * (x.ndim - 2))


def _ref_native_batch_norm(x: Any, w: Any, b: Any, rm: Any, rv: Any, training: bool,
                           momentum: float, eps: float) -> tuple[Any, ...]:  # fmt: skip
    x, w, b, rm, rv = (_f64(v) for v in (x, w, b, rm, rv))
    bs = _bshape(x)
    if training:
        mean = x.mean(axis=_bn_axes(x))
        var = x.var(axis=_bn_axes(x))
        invstd = 1 / np.sqrt(var + eps)
        saved = (mean, invstd)
    else:
        mean, invstd = rm, 1 / np.sqrt(rv + eps)
        saved = (np.zeros(0), np.zeros(0))
    out = (x - mean.reshape(bs)) * invstd.reshape(bs)
    if w is not None:
        out = out * w.reshape(bs)
    if b is not None:
        out = out + b.reshape(bs)
    return (out, *saved)


def _bn_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    c = 3
    pd = d if d in FLOATS else "float32"  # half precision inputs, float32 parameters

    def vec(low: float = -1, high: float = 1) -> np.ndarray:
        return make((c,), pd, rng, low, high)

    yield S("train_affine", make((3, c, 2), d, rng), vec(), vec(), None, None, True, 0.1,
            1e-5)  # fmt: skip
    yield S("eval_running", make((2, c, 2), d, rng), vec(), vec(), vec(), vec(0.5, 2), False,
            0.1, 1e-5)  # fmt: skip
    if d == "float32":  # not float64: gradcheck's (Note [Fewer float64 samples] in _pooling.py)
        yield S("train_2d_no_affine", make((5, c), d, rng), None, None, None, None, True, 0.1,
                1e-3)  # fmt: skip
        yield S("eval_3d_weight_only", make((2, c, 2, 2, 2), d, rng), vec(), None, vec(),
                vec(0.5, 2), False, 0.1, 1e-5)  # fmt: skip


def _bn_dtype(s: SampleInput, d: str) -> tuple[str, str, str]:
    stat = s.args[1].dtype.name if s.args[1] is not None else d
    return (d, stat, stat)


add(
    OpInfo(
        "native_batch_norm",
        op=fn("native_batch_norm"),
        sample_inputs=_bn_samples,
        ref=_ref_native_batch_norm,
        dtypes=FLOATS + LOWP,
        result_dtype=_bn_dtype,
        tol=_TOL,
    )
)
add(
    OpInfo(
        "batch_norm",
        op=fn("batch_norm"),
        sample_inputs=lambda d, rng: (S(s.name, *s.args, False) for s in _bn_samples(d, rng)),
        ref=lambda *a: _ref_native_batch_norm(*a[:8])[0],
        dtypes=FLOATS + LOWP,
        tol=_TOL,
    )
)


def _ref_bn_backward(g: Any, x: Any, w: Any, rm: Any, rv: Any, mean: Any, invstd: Any,
                     train: bool, eps: float, mask: Any) -> tuple[Any, ...]:  # fmt: skip
    g, x, w, rm, rv, mean, invstd = (_f64(v) for v in (g, x, w, rm, rv, mean, invstd))
    bs, axes = _bshape(x), _bn_axes(x)
    if not train:
        mean, invstd = rm, 1 / np.sqrt(rv + eps)
    xh = (x - mean.reshape(bs)) * invstd.reshape(bs)
    k = invstd if w is None else invstd * w
    if train:
        gi = (g - g.mean(axis=axes, keepdims=True)
              - xh * (g * xh).mean(axis=axes, keepdims=True)) * k.reshape(bs)  # fmt: skip
    else:
        gi = g * k.reshape(bs)
    full = (gi, (g * xh).sum(axis=axes), g.sum(axis=axes))
    return tuple(v if m else None for v, m in zip(full, mask, strict=True))


def _bn_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for s in _bn_samples(d, rng):
        x, w, _, rm, rv, training, _, eps = s.args
        _, mean, invstd = _ref_native_batch_norm(*s.args)
        sd = np_dtype(w.dtype.name if w is not None else d)
        mean, invstd = (None, None) if not training else (mean.astype(sd), invstd.astype(sd))
        g = make(x.shape, d, rng)
        # every gradient asked for (a weight's too without a weight, as PyTorch computes it):
        # masked results (None) are covered by tests/nn/test_norms.py, not by the vmap loop
        yield S(s.name, g, x, w, rm, rv, mean, invstd, training, eps, [True, True, True])


def _compare_masked(got: Any, expected: Any, s: SampleInput, d: str) -> None:
    rtol, atol = _TOL.get(d, (1e-7, 1e-9))
    for i, (v, e) in enumerate(zip(got, expected, strict=True)):
        if e is None:
            assert v is None, f"result[{i}]: the mask asks for no gradient, got {v!r}"
            continue
        arr = v.cpu().numpy().astype(np.float64)
        assert arr.shape == e.shape, f"result[{i}]: shape {arr.shape} != {e.shape}"
        np.testing.assert_allclose(arr, e, rtol=rtol, atol=atol, err_msg=f"result[{i}]")


add(
    OpInfo(
        "native_batch_norm_backward",
        op=fn("native_batch_norm_backward"),
        sample_inputs=_bn_backward_samples,
        ref=_ref_bn_backward,
        dtypes=FLOATS + LOWP,
        compare=_compare_masked,
    )
)


# --- instance norm ----------------------------------------------------------------------------


def _ref_instance_norm(x: Any, w: Any, b: Any, rm: Any, rv: Any, use_input_stats: bool,
                       momentum: float, eps: float, cudnn: bool = False) -> Any:  # fmt: skip
    x = _f64(x)
    n, c = x.shape[:2]
    folded = x.reshape(1, n * c, *x.shape[2:])
    rep = [None if v is None else np.tile(_f64(v), n) for v in (w, b, rm, rv)]
    out = _ref_native_batch_norm(folded, *rep, use_input_stats, momentum, eps)[0]
    return out.reshape(x.shape)


def _instance_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("input_stats", make((2, 3, 4), d, rng), make((3,), d, rng), make((3,), d, rng),
            None, None, True, 0.1, 1e-5, False)  # fmt: skip
    yield S("running_stats", make((2, 2, 2, 2), d, rng), None, None, make((2,), d, rng),
            make((2,), d, rng, 0.5, 2), False, 0.1, 1e-5, False)  # fmt: skip


add(
    OpInfo(
        "instance_norm",
        op=fn("instance_norm"),
        sample_inputs=_instance_samples,
        ref=_ref_instance_norm,
        dtypes=FLOATS,
        tol=_TOL,
    )
)


# --- group norm -------------------------------------------------------------------------------


def _ref_native_group_norm(x: Any, w: Any, b: Any, n: int, c: int, hxw: int, group: int,
                           eps: float) -> tuple[Any, ...]:  # fmt: skip
    x, w, b = _f64(x), _f64(w), _f64(b)
    xg = x.reshape(n, group, -1)
    mean = xg.mean(axis=2)
    rstd = 1 / np.sqrt(xg.var(axis=2) + eps)
    out = ((xg - mean[..., None]) * rstd[..., None]).reshape(n, c, hxw)
    if w is not None:
        out = out * w.reshape(1, c, 1)
    if b is not None:
        out = out + b.reshape(1, c, 1)
    return out.reshape(x.shape), mean, rstd


def _gn_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("affine", make((2, 4, 2), d, rng), make((4,), d, rng), make((4,), d, rng), 2, 4, 2,
            2, 1e-5)  # fmt: skip
    if d != "float64":  # Note [Fewer float64 samples] in _pooling.py
        yield S("no_affine_4d", make((2, 6, 2, 2), d, rng), None, None, 2, 6, 4, 3, 1e-5)
    if d in FLOATS:
        yield S("one_group_2d", make((3, 4), d, rng), make((4,), d, rng), None, 3, 4, 1, 1,
                1e-3)  # fmt: skip


add(
    OpInfo(
        "native_group_norm",
        op=fn("native_group_norm"),
        sample_inputs=_gn_samples,
        ref=_ref_native_group_norm,
        dtypes=FLOATS + LOWP,
        tol=_TOL,
    )
)
add(
    OpInfo(
        "group_norm",
        op=fn("group_norm"),
        sample_inputs=lambda d, rng: (
            S(s.name, s.args[0], s.args[6], s.args[1], s.args[2], s.args[7])
            for s in _gn_samples(d, rng)
        ),
        ref=lambda x, g, w=None, b=None, eps=1e-5: _ref_native_group_norm(
            x, w, b, x.shape[0], x.shape[1], int(np.prod(x.shape[2:])), g, eps
        )[0],
        dtypes=FLOATS + LOWP,
        tol=_TOL,
    )
)


def _ref_gn_backward(g: Any, x: Any, mean: Any, rstd: Any, w: Any, n: int, c: int, hxw: int,
                     group: int, mask: Any) -> tuple[Any, ...]:  # fmt: skip
    g, x, mean, rstd, w = (_f64(v) for v in (g, x, mean, rstd, w))
    cg = c // group
    xg = x.reshape(n, group, cg, hxw)
    gg = g.reshape(n, group, cg, hxw)
    xh = (xg - mean[..., None, None]) * rstd[..., None, None]
    u = gg if w is None else gg * w.reshape(1, group, cg, 1)
    m = cg * hxw
    gi = (u - u.sum(axis=(2, 3), keepdims=True) / m
          - xh * (u * xh).sum(axis=(2, 3), keepdims=True) / m) * rstd[..., None, None]  # fmt: skip
    full = (
        gi.reshape(x.shape),
        (gg * xh).sum(axis=(0, 3)).reshape(c),
        gg.sum(axis=(0, 3)).reshape(c),
    )
    return tuple(v if k else None for v, k in zip(full, mask, strict=True))


def _gn_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for s in _gn_samples(d, rng):
        x, w, _, n, c, hxw, group, eps = s.args
        _, mean, rstd = _ref_native_group_norm(*s.args)
        sd = np_dtype(d)
        yield S(s.name, make(x.shape, d, rng), x, mean.astype(sd), rstd.astype(sd), w, n, c,
                hxw, group, [True, True, True])  # fmt: skip


add(
    OpInfo(
        "native_group_norm_backward",
        op=fn("native_group_norm_backward"),
        sample_inputs=_gn_backward_samples,
        ref=_ref_gn_backward,
        dtypes=FLOATS + LOWP,
        compare=_compare_masked,
    )
)


# --- rms norm ---------------------------------------------------------------------------------


def _ref_rms_norm(x: Any, shape: Any, w: Any = None, eps: Any = None) -> Any:
    d = np.asarray(x).dtype
    if eps is None:
        eps = float(np.finfo(np.float32 if d.itemsize <= 4 else d).eps)
    x = _f64(x)
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    out = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return out if w is None else out * _f64(w)


def _rms_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("last_dim_weight", make((2, 3, 4), d, rng), [4], make((4,), d, rng))
    yield S("two_dims_eps", make((2, 3, 4), d, rng), [3, 4], None, 1e-3)
    yield S("default_eps", make((5, 2), d, rng), [2])


add(
    OpInfo(
        "rms_norm",
        op=fn("rms_norm"),
        sample_inputs=_rms_samples,
        ref=_ref_rms_norm,
        dtypes=FLOATS + LOWP,
        tol=_TOL,
    )
)


# --- feature and alpha dropout ----------------------------------------------------------------


def _dropout_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # (channels, elements per channel): 600 channels of 4 elements, no zeros in the input
    yield S("train_p0.4", make((30, 20, 2, 2), d, rng, 0.5, 2.0), 0.4, True)
    yield S("eval_identity", make((3, 4, 2), d, rng), 0.5, False, meta={"deterministic": True})
    yield S("p0_identity", make((3, 4, 2), d, rng), 0.0, True, meta={"deterministic": True})
    yield S("empty", make((0, 4, 2), d, rng), 0.5, True, meta={"deterministic": True})


_ALPHA = 1.7580993408473766


def _dropout_check(feature: bool, alpha: bool) -> Any:
    def check(x: np.ndarray, s: SampleInput, d: str) -> None:
        inp = np.asarray(s.args[0], np.float64)
        p, train = s.args[1], s.args[2]
        rtol = 1e-5 if d == "float32" else 1e-12
        if not train or p == 0 or x.size == 0:
            np.testing.assert_allclose(x, inp, rtol=rtol, err_msg="must be the identity here")
            return
        if alpha:
            a = 1 / np.sqrt((_ALPHA**2 * p + 1) * (1 - p))
            dropped_value = -_ALPHA * a + _ALPHA * a * p
            kept = ~np.isclose(x, dropped_value, rtol=0, atol=1e-6)
            np.testing.assert_allclose(x[kept], inp[kept] * a + _ALPHA * a * p, rtol=1e-5,
                                       atol=1e-6, err_msg="kept elements: a x + alpha a p")  # fmt: skip
        else:
            kept = x != 0
            np.testing.assert_allclose(x[kept], inp[kept] / (1 - p), rtol=rtol,
                                       err_msg="kept elements must be scaled by 1/(1-p)")  # fmt: skip
        if feature:  # whole channels are kept or dropped
            per = kept.reshape(*kept.shape[:2], -1)
            assert np.all(per.all(axis=2) | (~per).all(axis=2)), "a channel was partly dropped"
        frac = 1 - kept.mean()
        assert abs(frac - p) < 0.08, f"dropped fraction {frac:.3f}, expected about {p}"

    return check


for _name, _feature, _alpha in (
    ("feature_dropout", True, False),
    ("alpha_dropout", False, True),
    ("feature_alpha_dropout", True, True),
):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            sample_inputs=_dropout_samples,
            ref=None,
            dtypes=FLOATS,
            kind="random",
            random_check=_dropout_check(_feature, _alpha),
        )
    )
