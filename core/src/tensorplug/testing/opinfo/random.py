"""Samples and checks of the ``random`` family: the random factories, the random ops of
tensors (rand_like, normal, bernoulli, multinomial, ...) and the in-place random fills."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._core import (
    ALL,
    DT,
    FLOATS,
    INTS,
    DtypeRule,
    OpInfo,
    S,
    SampleInput,
    add,
    dtype_kwarg,
    factory_rule,
    fixed,
    fn,
    make,
    meth,
    np_dtype,
    same,
)

# --- random ops: shape, dtype, range, reproducibility --------------------------------------------


def _check_unit_interval(x: np.ndarray, s: SampleInput, d: str) -> None:
    assert np.all((x >= 0) & (x < 1)), f"rand values outside [0, 1): min {x.min()}, max {x.max()}"
    if x.size >= 1000:
        assert abs(float(x.mean()) - 0.5) < 0.05, f"rand mean {x.mean()} far from 0.5"


def _check_normal(x: np.ndarray, s: SampleInput, d: str) -> None:
    assert np.all(np.isfinite(x)), "randn produced non-finite values"
    if x.size >= 1000:
        assert abs(float(x.mean())) < 0.1, f"randn mean {x.mean()} far from 0"
        assert abs(float(x.std()) - 1.0) < 0.1, f"randn std {x.std()} far from 1"


def _check_randint(x: np.ndarray, s: SampleInput, d: str) -> None:
    low, high = s.meta["low"], s.meta["high"]
    assert np.all((x >= low) & (x < high)), (
        f"randint values outside [{low}, {high}): {x.min()}..{x.max()}"
    )
    assert np.all(x == np.trunc(x)), "randint values are not integral"
    if x.size >= 1000:
        assert len(np.unique(x)) == high - low, "randint does not cover its range"


def _random_size_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2x3", [2, 3], dtype=DT(d))
    yield S("large", [40, 50], dtype=DT(d))
    yield S("0dim", [], dtype=DT(d))
    yield S("empty", [0, 3], dtype=DT(d))
    if d == "float32":
        yield S("default_dtype", [4, 4])


def _random(
    name: str,
    samples: Any,
    check: Any,
    *,
    dtypes: tuple[str, ...] = FLOATS,
    result_dtype: DtypeRule | None = None,
    public: str | None = None,
    method: bool = False,
) -> None:
    base = name.split(".")[0]
    add(
        OpInfo(
            name,
            op=fn(public or base),
            method=meth(base) if method else None,
            sample_inputs=samples,
            ref=None,
            dtypes=dtypes,
            result_dtype=result_dtype or factory_rule(),
            kind="random",
            random_check=check,
        )
    )


_random("rand", _random_size_samples, _check_unit_interval)
_random("randn", _random_size_samples, _check_normal)


def _randint_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("high10", 10, [3, 4], dtype=DT(d), meta={"low": 0, "high": 10, "size": (3, 4)})
    yield S("large", 5, [2000], dtype=DT(d), meta={"low": 0, "high": 5, "size": (2000,)})
    yield S("empty", 3, [0], dtype=DT(d), meta={"low": 0, "high": 3, "size": (0,)})
    if d == "int64":
        yield S("default_dtype", 4, [5, 5], meta={"low": 0, "high": 4, "size": (5, 5)})


def _randint_low_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("3_10", 3, 10, [3, 4], dtype=DT(d), meta={"low": 3, "high": 10, "size": (3, 4)})
    yield S(
        "negative_low", -5, 5, [2000], dtype=DT(d), meta={"low": -5, "high": 5, "size": (2000,)}
    )
    if d == "int64":
        yield S("default_dtype", -2, 2, [6], meta={"low": -2, "high": 2, "size": (6,)})


_random(
    "randint",
    _randint_samples,
    _check_randint,
    dtypes=("int64", "float32"),
    result_dtype=factory_rule(lambda s: "int64"),
)
_random(
    "randint.low",
    _randint_low_samples,
    _check_randint,
    dtypes=("int64", "float32"),
    result_dtype=factory_rule(lambda s: "int64"),
)


def _like_samples(
    values: bool = False,
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield S("2x3", make((2, 3), d, rng))
        yield S("large", make((40, 50), d, rng))
        yield S("0dim", make((), d, rng))
        yield S("empty", make((0, 3), d, rng))
        if d == "float32":
            yield S("dtype_float64", make((2, 2), d, rng), dtype=DT("float64"))

    return gen


_random("rand_like", _like_samples(), _check_unit_interval, result_dtype=dtype_kwarg(same))
_random("randn_like", _like_samples(), _check_normal, result_dtype=dtype_kwarg(same))


def _dropout_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = make((40, 50), d, rng, 0.5, 2.0)  # no zeros, so a zero means "dropped"
    yield S("train_p0.5", x, 0.5, True)
    yield S("train_p0.2_kw", make((30, 40), d, rng, 0.5, 2.0), p=0.2, train=True)
    yield S("eval_identity", make((3, 4), d, rng), 0.5, False, meta={"deterministic": True})
    yield S("train_p0_identity", make((3, 4), d, rng), 0.0, True, meta={"deterministic": True})
    yield S("train_p1_zeros", make((3, 4), d, rng), 1.0, True, meta={"deterministic": True})
    yield S("empty", make((0, 4), d, rng), 0.5, True, meta={"deterministic": True})


def _check_dropout(x: np.ndarray, s: SampleInput, d: str) -> None:
    inp = np.asarray(s.args[0], np.float64)
    p = s.kwargs.get("p", s.args[1] if len(s.args) > 1 else None)
    train = s.kwargs.get("train", s.args[2] if len(s.args) > 2 else None)
    rtol = 1e-6 if d == "float32" else 1e-12
    if not train or p == 0 or x.size == 0:
        np.testing.assert_allclose(x, inp, rtol=rtol, err_msg="dropout must be the identity here")
        return
    if p == 1:
        np.testing.assert_array_equal(
            x, np.zeros_like(inp), err_msg="dropout(p=1) must zero everything"
        )
        return
    kept = x != 0
    np.testing.assert_allclose(
        x[kept], inp[kept] / (1 - p), rtol=rtol, err_msg="kept elements must be scaled by 1/(1-p)"
    )
    frac = 1 - kept.mean()
    assert abs(frac - p) < 0.06, f"dropped fraction {frac:.3f}, expected about {p}"


_random("dropout", _dropout_samples, _check_dropout, result_dtype=same)


def _randint_like_samples(low: bool) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        bounds = (-3, 4) if low else (0, 6)
        lo, hi = bounds
        args = (lo, hi) if low else (hi,)

        def meta(shape: tuple[int, ...]) -> dict[str, Any]:
            return {"low": lo, "high": hi, "size": shape}

        yield S("2x3", make((2, 3), d, rng), *args, meta=meta((2, 3)))
        yield S("large", make((40, 50), d, rng), *args, meta=meta((40, 50)))
        yield S("0dim", make((), d, rng), *args, meta=meta(()))
        if d == "float32":
            yield S(
                "dtype_int64", make((2, 2), d, rng), *args, dtype=DT("int64"), meta=meta((2, 2))
            )

    return gen


_random(
    "randint_like",
    _randint_like_samples(False),
    _check_randint,
    dtypes=("float32", "int64"),
    result_dtype=dtype_kwarg(same),
)
_random(
    "randint_like.low_dtype",
    _randint_like_samples(True),
    _check_randint,
    dtypes=("float32", "int64"),
    result_dtype=dtype_kwarg(same),
)


def _poisson_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("rates", make((40, 50), d, rng, 0.5, 6.0))
    yield S("zero_rates", np.zeros((3, 2), dtype=d))
    yield S("0dim", make((), d, rng, 0.5, 2.0))
    yield S("empty", make((0, 3), d, rng, 0.5, 2.0))


def _check_poisson(x: np.ndarray, s: SampleInput, d: str) -> None:
    rates = np.asarray(s.args[0], np.float64)
    assert np.all(x >= 0) and np.all(x == np.trunc(x)), "poisson counts are not whole numbers"
    assert np.all(x[rates == 0] == 0), "a zero rate drew a nonzero count"
    if x.size >= 1000:
        err = abs(float(x.mean()) - float(rates.mean()))
        assert err < 0.1 * float(rates.mean()), f"poisson mean {x.mean()} far from {rates.mean()}"


_random("poisson", _poisson_samples, _check_poisson, result_dtype=same)


# --- random ops of tensors and in-place random fills ------------------------------------------
# meta: "size" (the result's shape) and the distribution's parameters, for the checks below.
# The "large" samples hold 2000 draws: a mean is then within about 0.07 standard deviations of
# the true one (3 standard errors), so the tolerances below hold for every seed yet catch a
# wrong location or scale.


def _randperm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("n5", 5, dtype=DT(d), meta={"size": (5,)})
    yield S("n2000", 2000, dtype=DT(d), meta={"size": (2000,)})
    yield S("n1", 1, dtype=DT(d), meta={"size": (1,), "deterministic": True})
    yield S("n0", 0, dtype=DT(d), meta={"size": (0,)})
    if d == "int64":
        yield S("default_dtype", 7, meta={"size": (7,)})


def _check_randperm(x: np.ndarray, s: SampleInput, d: str) -> None:
    np.testing.assert_array_equal(np.sort(x), np.arange(x.size), err_msg="not a permutation")
    if x.size >= 1000:  # about half the positions move by more than n/4
        assert np.mean(np.abs(x - np.arange(x.size)) > x.size / 4) > 0.4, "barely shuffled"


_random(
    "randperm",
    _randperm_samples,
    _check_randperm,
    dtypes=("int64", "float32"),
    result_dtype=factory_rule(lambda s: "int64"),
)


def _normal_meta(mean: Any, std: Any, size: tuple[int, ...]) -> dict[str, Any]:
    return {"mean": mean, "std": std, "size": size}


def _check_normal_moments(x: np.ndarray, s: SampleInput, d: str) -> None:
    mean = np.broadcast_to(np.asarray(s.meta["mean"], np.float64), x.shape)
    std = np.broadcast_to(np.asarray(s.meta["std"], np.float64), x.shape)
    assert np.all(np.isfinite(x)), "normal produced non-finite values"
    fixed_ = std == 0
    np.testing.assert_allclose(x[fixed_], mean[fixed_], rtol=1e-6, err_msg="std 0 gives the mean")
    z = (x[~fixed_] - mean[~fixed_]) / std[~fixed_]
    if z.size >= 1000:
        assert abs(float(z.mean())) < 0.1, f"standardized mean {z.mean()} far from 0"
        assert abs(float(z.std()) - 1.0) < 0.1, f"standardized std {z.std()} far from 1"


def _normal_float_float_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2x3", 1.0, 2.0, [2, 3], dtype=DT(d), meta=_normal_meta(1.0, 2.0, (2, 3)))
    yield S("large", -3.0, 0.5, [40, 50], dtype=DT(d), meta=_normal_meta(-3.0, 0.5, (40, 50)))
    yield S("0dim", 0.0, 1.0, [], dtype=DT(d), meta=_normal_meta(0.0, 1.0, ()))
    yield S(
        "std0",
        4.0,
        0.0,
        [3],
        dtype=DT(d),
        meta={**_normal_meta(4.0, 0.0, (3,)), "deterministic": True},
    )
    if d == "float32":
        yield S("default_dtype", 0.0, 1.0, [4, 4], meta=_normal_meta(0.0, 1.0, (4, 4)))


def _normal_tensor_float_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    m = make((40, 50), d, rng, -5, 5)
    yield S("large", m, 2.0, meta=_normal_meta(m, 2.0, m.shape))
    m = make((2, 3), d, rng)
    yield S("default_std", m, meta=_normal_meta(m, 1.0, m.shape))
    m = make((), d, rng)
    yield S("0dim", m, 0.5, meta=_normal_meta(m, 0.5, ()))
    m = make((0, 3), d, rng)
    yield S("empty", m, 1.0, meta=_normal_meta(m, 1.0, (0, 3)))


def _normal_float_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    sd = make((40, 50), d, rng, 0.1, 3)
    yield S("large", 2.0, sd, meta=_normal_meta(2.0, sd, sd.shape))
    sd = np.array([0.0, 1.0, 0.0], np_dtype(d))
    yield S("some_std0", 1.5, sd, meta=_normal_meta(1.5, sd, sd.shape))
    sd = make((0,), d, rng, 0.1, 1)
    yield S("empty", 0.0, sd, meta=_normal_meta(0.0, sd, (0,)))


def _normal_tensor_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    m, sd = make((40, 50), d, rng, -5, 5), make((40, 50), d, rng, 0.1, 3)
    yield S("large", m, sd, meta=_normal_meta(m, sd, m.shape))
    m, sd = make((40, 1), d, rng), make((1, 50), d, rng, 0.5, 2)
    yield S("broadcast", m, sd, meta=_normal_meta(m, sd, (40, 50)))
    m, sd = make((), d, rng), make((), d, rng, 0.5, 2)
    yield S("0dim", m, sd, meta=_normal_meta(m, sd, ()))
    if d == "float32":  # the result takes mean's dtype
        m, sd = make((2, 3), "float64", rng), make((2, 3), d, rng, 0.5, 2)
        yield S("mean_float64", m, sd, meta=_normal_meta(m, sd, (2, 3)))


_random("normal.float_float", _normal_float_float_samples, _check_normal_moments, public="normal")
for _name, _gen in (
    ("normal.Tensor_float", _normal_tensor_float_samples),
    ("normal.float_Tensor", _normal_float_tensor_samples),
    ("normal.Tensor_Tensor", _normal_tensor_tensor_samples),
):
    _random(_name, _gen, _check_normal_moments, result_dtype=same)


def _check_bernoulli(x: np.ndarray, s: SampleInput, d: str) -> None:
    p = np.broadcast_to(np.asarray(s.meta["p"], np.float64), x.shape)
    assert np.all((x == 0) | (x == 1)), "bernoulli values other than 0 and 1"
    assert np.all(x[p == 0] == 0) and np.all(x[p == 1] == 1), "p of 0 or 1 must be certain"
    if x.size >= 1000:
        assert abs(float(x.mean()) - float(p.mean())) < 0.05, (
            f"frequency of ones {x.mean()}, expected about {p.mean()}"
        )


def _bernoulli_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p = make((40, 50), d, rng, 0.0, 1.0)
    yield S("large", p, meta={"p": p})
    p = np.array([0.0, 1.0, 0.0, 1.0], np_dtype(d))
    yield S("certain", p, meta={"p": p, "deterministic": True})
    p = make((), d, rng, 0.0, 1.0)
    yield S("0dim", p, meta={"p": p})
    p = make((0, 2), d, rng, 0.0, 1.0)
    yield S("empty", p, meta={"p": p})


def _bernoulli_p_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("large", make((40, 50), d, rng), 0.3, meta={"p": 0.3})
    yield S("p1", make((3, 4), d, rng), 1.0, meta={"p": 1.0, "deterministic": True})
    yield S("p0_kw", make((5,), d, rng), p=0.0, meta={"p": 0.0, "deterministic": True})
    yield S("0dim", make((), d, rng), 0.5, meta={"p": 0.5})


_random("bernoulli", _bernoulli_samples, _check_bernoulli, result_dtype=same, method=True)
_random(
    "bernoulli.p",
    _bernoulli_p_samples,
    _check_bernoulli,
    dtypes=FLOATS + ("int64", "bool"),
    result_dtype=same,
    method=True,
)


def _multinomial_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p = np.array([0.1, 0.0, 0.6, 0.3], np_dtype(d))
    yield S("replacement", p, 2000, True, meta={"p": p, "size": (2000,)})
    rows = np.array([[1.0, 3.0, 0.0], [0.0, 0.0, 2.0]], np_dtype(d))  # unnormalized weights
    yield S("2d_replacement_kw", rows, 1000, replacement=True, meta={"p": rows, "size": (2, 1000)})
    big = make((50,), d, rng, 0.0, 1.0)
    yield S("no_replacement", big, 20, meta={"p": big, "size": (20,)})
    yield S("all_categories", p, 4, False, meta={"p": p, "size": (4,)})
    rows = make((3, 30), d, rng, 0.0, 1.0)
    yield S("2d_no_replacement", rows, 5, meta={"p": rows, "size": (3, 5)})
    yield S("no_rows", np.ones((0, 3), np_dtype(d)), 2, meta={"p": np.ones((0, 3)), "size": (0, 2)})


def _check_multinomial(x: np.ndarray, s: SampleInput, d: str) -> None:
    p = np.asarray(s.meta["p"], np.float64)
    replacement = s.kwargs.get("replacement", s.args[2] if len(s.args) > 2 else False)
    rows, draws = p.reshape(-1, p.shape[-1]), x.reshape(-1, x.shape[-1]).astype(np.int64)
    for pr, xr in zip(rows, draws, strict=True):
        assert np.all((xr >= 0) & (xr < pr.size)), f"category indices outside [0, {pr.size})"
        nonzero = int(np.count_nonzero(pr))
        if replacement or xr.size <= nonzero:  # zero weights come only after all the others
            assert np.all(pr[xr] > 0), "a category of probability 0 was drawn"
        if not replacement:
            assert len(np.unique(xr)) == xr.size, "a category drawn twice without replacement"
        elif xr.size >= 1000:
            freq = np.bincount(xr, minlength=pr.size) / xr.size
            np.testing.assert_allclose(freq, pr / pr.sum(), atol=0.05, err_msg="frequencies")


_random(
    "multinomial",
    _multinomial_samples,
    _check_multinomial,
    result_dtype=fixed("int64"),
    method=True,
)


def _fill_samples(
    *params: tuple[str, tuple[Any, ...], dict[str, Any]],
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for label, args, kwargs in params:
            yield S(f"large_{label}", make((40, 50), d, rng), *args, **kwargs)
        yield S("0dim", make((), d, rng))
        yield S("empty", make((0, 3), d, rng))

    return gen


def _args_kw(s: SampleInput, names: tuple[str, ...], defaults: tuple[float, ...]) -> list[float]:
    return [
        s.kwargs.get(n, s.args[1 + i] if len(s.args) > 1 + i else dflt)
        for i, (n, dflt) in enumerate(zip(names, defaults, strict=True))
    ]


def _check_uniform_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    lo, hi = _args_kw(s, ("from", "to"), (0.0, 1.0))
    assert np.all((x >= lo) & (x <= hi)), f"uniform_ values outside [{lo}, {hi}]"
    if x.size >= 1000:
        assert abs(float(x.mean()) - (lo + hi) / 2) < 0.05 * (hi - lo), "uniform_ mean off"
        assert abs(float(x.std()) - (hi - lo) / np.sqrt(12)) < 0.05 * (hi - lo), "uniform_ std off"


def _check_normal_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    mean, std = _args_kw(s, ("mean", "std"), (0.0, 1.0))
    _check_normal_moments(x, S("", meta=_normal_meta(mean, std, x.shape)), d)


def _check_exponential_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    (lambd,) = _args_kw(s, ("lambd",), (1.0,))
    assert np.all(x >= 0), "exponential_ produced negative values"
    if x.size >= 1000:  # mean and standard deviation are both 1/lambd
        assert abs(float(x.mean()) * lambd - 1) < 0.1, f"exponential_ mean {x.mean()}"
        assert abs(float(x.std()) * lambd - 1) < 0.15, f"exponential_ std {x.std()}"


def _check_bernoulli_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    (p,) = _args_kw(s, ("p",), (0.5,))
    _check_bernoulli(x, S("", meta={"p": p}), d)


def _random_fill(name: str, samples: Any, check: Any, dtypes: tuple[str, ...] = FLOATS) -> None:
    base = name.split(".")[0]
    add(
        OpInfo(
            name,
            op=meth(base),
            sample_inputs=samples,
            ref=None,
            dtypes=dtypes,
            result_dtype=same,
            kind="random",
            random_check=check,
        )
    )


_random_fill(
    "uniform_",
    _fill_samples(("default", (), {}), ("from_to", (-2.0, 6.0), {}), ("to_kw", (), {"to": 4.0})),
    _check_uniform_fill,
)
_random_fill(
    "normal_",
    _fill_samples(("default", (), {}), ("mean_std", (3.0, 0.25), {}), ("std_kw", (), {"std": 5.0})),
    _check_normal_fill,
)
_random_fill(
    "exponential_",
    _fill_samples(("default", (), {}), ("lambd4", (4.0,), {}), ("lambd_kw", (), {"lambd": 0.5})),
    _check_exponential_fill,
)
_random_fill(
    "bernoulli_.float",
    _fill_samples(("default", (), {}), ("p0.2", (0.2,), {}), ("p_kw", (), {"p": 0.9})),
    _check_bernoulli_fill,
    dtypes=FLOATS + ("int64", "bool"),
)


def _check_random_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    lo, hi = s.meta["low"], s.meta["high"]  # inclusive
    assert np.all((x >= lo) & (x <= hi)), f"random_ values outside [{lo}, {hi}]"
    assert np.all(x == np.trunc(x)), "random_ values are not integral"
    if x.size >= 1000 and hi - lo < 100:
        assert len(np.unique(x)) == hi - lo + 1, "random_ does not cover its range"
    elif x.size >= 1000:  # a wide range: the mean is near its middle
        assert abs(float(x.mean()) - (lo + hi) / 2) < 0.05 * (hi - lo), "random_ mean off"


def _random_from_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2_10", make((40, 50), d, rng), 2, 10, meta={"low": 2, "high": 9})
    yield S("negative", make((40, 50), d, rng), -5, 5, meta={"low": -5, "high": 4})
    if d == "int64":
        top = 2**63 - 1
        yield S("to_none", make((40, 50), d, rng), -100, None, meta={"low": -100, "high": top})
    else:
        top = 2**24 if d == "float32" else 2**53
        yield S("to_none", make((40, 50), d, rng), 1, None, meta={"low": 1, "high": top})
    yield S("to_kw", make((0, 3), d, rng), 0, to=3, meta={"low": 0, "high": 2})


def _random_to_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("to7", make((40, 50), d, rng), 7, meta={"low": 0, "high": 6})
    yield S("to1", make((3,), d, rng), 1, meta={"low": 0, "high": 0, "deterministic": True})
    yield S("0dim", make((), d, rng), 100, meta={"low": 0, "high": 99})


def _random_default_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    top = {"int64": 2**63 - 1, "bool": 1, "float32": 2**24, "float64": 2**53}[d]
    yield S("large", make((40, 50), d, rng), meta={"low": 0, "high": top})
    yield S("empty", make((0,), d, rng), meta={"low": 0, "high": top})


_random_fill("random_.from", _random_from_samples, _check_random_fill, dtypes=FLOATS + INTS)
_random_fill("random_.to", _random_to_samples, _check_random_fill, dtypes=FLOATS + INTS)
_random_fill("random_", _random_default_samples, _check_random_fill, dtypes=ALL)


# --- cauchy_, log_normal_, geometric_ (issue 29): a Kolmogorov-Smirnov test against scipy's
# distribution where scipy is installed, else the quartiles (cauchy, log-normal) or the mean


def _ks(x: np.ndarray, cdf: Callable[[Any], Any], what: str) -> bool:
    """Whether scipy ran the test (and ``x`` passed it)."""
    try:
        from scipy import stats
    except ImportError:
        return False
    p = stats.kstest(np.asarray(x, np.float64).reshape(-1), cdf).pvalue
    assert p > 1e-4, f"{what}: Kolmogorov-Smirnov p-value {p:.2g}"
    return True


def _check_quartiles(x: np.ndarray, q: tuple[float, float, float], what: str) -> None:
    got = np.quantile(np.asarray(x, np.float64), [0.25, 0.5, 0.75])
    spread = q[2] - q[0]
    assert np.all(np.abs(got - q) < 0.15 * spread), f"{what}: quartiles {got}, expected {q}"


def _check_cauchy_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    median, sigma = _args_kw(s, ("median", "sigma"), (0.0, 1.0))
    if x.size < 1000:
        return
    if not _ks(x, lambda v: 0.5 + np.arctan((v - median) / sigma) / np.pi, "cauchy_"):
        _check_quartiles(x, (median - sigma, median, median + sigma), "cauchy_")


def _check_log_normal_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    mean, std = _args_kw(s, ("mean", "std"), (1.0, 2.0))
    assert np.all(x > 0), "log_normal_ produced values <= 0"
    if x.size < 1000:
        return
    from math import erf, exp, sqrt

    def cdf(v: Any) -> Any:
        z = (np.log(np.maximum(v, 1e-300)) - mean) / (std * sqrt(2))
        return 0.5 * (1 + np.vectorize(erf)(z))

    if not _ks(x, cdf, "log_normal_"):
        q = tuple(exp(mean + std * k) for k in (-0.6745, 0.0, 0.6745))
        _check_quartiles(np.log(x), tuple(np.log(q)), "log_normal_")  # type: ignore[arg-type]


def _check_geometric_fill(x: np.ndarray, s: SampleInput, d: str) -> None:
    (p,) = _args_kw(s, ("p",), (0.5,))
    assert np.all(x >= 1) and np.all(x == np.trunc(x)), "geometric_ values are not 1, 2, ..."
    if x.size >= 1000:  # a discrete law: the mean 1/p and the share of ones, p
        assert abs(float(x.mean()) * p - 1) < 0.1, f"geometric_ mean {x.mean()}"
        assert abs(float((x == 1).mean()) - p) < 0.05, f"geometric_ P(1) {(x == 1).mean()}"


_random_fill(
    "cauchy_",
    _fill_samples(("default", (), {}), ("shifted", (3.0, 0.5), {}), ("kw", (), {"sigma": 2.0})),
    _check_cauchy_fill,
)
_random_fill(
    "log_normal_",
    _fill_samples(("default", (), {}), ("pos", (0.0, 0.5), {}), ("kw", (), {"std": 0.25})),
    _check_log_normal_fill,
)


def _geometric_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("large_p0.3", make((40, 50), d, rng), 0.3)
    yield S("large_kw", make((40, 50), d, rng), p=0.8)
    yield S("0dim", make((), d, rng), 0.5)
    yield S("empty", make((0, 3), d, rng), 0.5)


_random_fill("geometric_", _geometric_samples, _check_geometric_fill, dtypes=FLOATS + INTS)
