"""Samples and oracles of the ``factories`` family: zeros, ones, empty, full, ranges, eye,
the triangle indices and the ``*_like`` factories."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._core import (
    ALL,
    DT,
    DtypeRule,
    OpInfo,
    S,
    SampleInput,
    add,
    dtype_kwarg,
    factory_rule,
    fn,
    make,
    same,
    scalar_for,
)

# --- factories --------------------------------------------------------------------------------

FACTORY_DTYPES = ("float32", "float64", "int64", "bool")


def _size_samples(d: str, rng: np.random.Generator, *extra: Any) -> Iterator[SampleInput]:
    for label, size in (
        ("2x3", [2, 3]),
        ("0dim", []),
        ("empty", [0]),
        ("empty_2d", (2, 0)),
        ("1d", [5]),
    ):
        yield S(label, size, *extra, dtype=DT(d))
    if d == "float32":
        yield S("default_dtype", [2, 3], *extra)


def _factory(
    name: str,
    ref: Callable[..., Any],
    *,
    samples: Any = None,
    check_values: bool = True,
    dtypes: tuple[str, ...] = FACTORY_DTYPES,
    result_dtype: DtypeRule | None = None,
    public: str | None = None,
) -> None:
    add(
        OpInfo(
            name,
            op=fn(public or name.split(".")[0]),
            sample_inputs=samples or _size_samples,
            ref=ref,
            dtypes=dtypes,
            result_dtype=result_dtype or factory_rule(),
            kind="factory",
            check_values=check_values,
        )
    )


def _np_factory_dtype(dtype: Any, default: Any = np.float32) -> Any:
    return default if dtype is None else dtype


_factory("zeros", lambda size, *, dtype=None: np.zeros(size, _np_factory_dtype(dtype)))
_factory("ones", lambda size, *, dtype=None: np.ones(size, _np_factory_dtype(dtype)))
_factory(
    "empty.memory_format",
    lambda size, *, dtype=None: np.empty(size, _np_factory_dtype(dtype)),
    check_values=False,
    public="empty",
)


def _empty_strided_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("transposed", [2, 3], [1, 2], dtype=DT(d))
    yield S("padded", [2, 3], [4, 1], dtype=DT(d))
    yield S("empty", [0, 2], [2, 1], dtype=DT(d))


_factory(
    "empty_strided",
    lambda size, stride, *, dtype=None: np.empty(size, _np_factory_dtype(dtype)),
    samples=_empty_strided_samples,
    check_values=False,
)


def _full_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    v = scalar_for(d)
    yield S("2x3", [2, 3], v, dtype=DT(d))
    yield S("0dim", [], v, dtype=DT(d))
    yield S("empty", [0, 2], v, dtype=DT(d))
    if d == "float32":
        yield S("infer_float", [2, 2], 1.5)
        yield S("infer_int", [3], 7)  # PyTorch infers int64 from an int fill value
        yield S("infer_bool", [2], True)
    if d == "float64":
        yield S("int_value_float_dtype", [2], 3, dtype=DT(d))


def _full_default(s: SampleInput) -> str:
    v = s.args[1]
    return "bool" if isinstance(v, bool) else "int64" if isinstance(v, int) else "float32"


def _ref_full(size: Any, fill_value: Any, *, dtype: Any = None) -> Any:
    if dtype is None:
        dtype = (
            np.bool_
            if isinstance(fill_value, bool)
            else np.int64
            if isinstance(fill_value, int)
            else np.float32
        )
    return np.full(size, fill_value, dtype)


_factory("full", _ref_full, samples=_full_samples, result_dtype=factory_rule(_full_default))


def _arange_default(s: SampleInput) -> str:
    values = [*s.args, *(v for k, v in s.kwargs.items() if k != "dtype")]
    return "int64" if all(isinstance(v, int) for v in values) else "float32"


def _arange_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("end5", 5, dtype=DT(d))
    yield S("end0_empty", 0, dtype=DT(d))
    yield S("float_end", 5.5, dtype=DT(d))
    if d == "float32":
        yield S("infer_int", 5)
        yield S("infer_float", 2.5)


def _arange_start_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("1_10_3", 1, 10, 3, dtype=DT(d))
    yield S("5_0_neg1", 5, 0, -1, dtype=DT(d))
    yield S("default_step", 2, 6, dtype=DT(d))
    yield S("empty", 3, 3, dtype=DT(d))
    yield S("float_start", -2.5, 2, 1, dtype=DT(d))
    yield S("float_step", 0.5, 5.7, 1.9, dtype=DT(d))
    yield S("float_negative_step", 5.5, 0, -1.5, dtype=DT(d))
    if d == "float32":
        yield S("infer_int", 1, 10, 3)
        yield S("infer_float_step", 0, 1, 0.1)
        yield S("infer_float_start", 0.5, 2.5)
        yield S("step_kw", 0, 2, step=0.5)


def _ref_arange(*args: Any, dtype: Any = None) -> Any:
    if len(args) == 1:
        start, end, step = 0, args[0], 1
    else:
        start, end = args[0], args[1]
        step = args[2] if len(args) > 2 else 1
    if dtype is not None and np.dtype(dtype).kind in "iu":
        # PyTorch converts the bounds and the step toward zero first (its int64 rule)
        start, end, step = int(start), int(end), int(step)
    return np.arange(start, end, step, dtype=np.float64)


def _arange_start_ref(start: Any, end: Any, step: Any = 1, *, dtype: Any = None) -> Any:
    return _ref_arange(start, end, step, dtype=dtype)


_factory(
    "arange",
    _ref_arange,
    samples=_arange_samples,
    dtypes=("float32", "float64", "int64"),
    result_dtype=factory_rule(_arange_default),
)
_factory(
    "arange.start_step",
    _arange_start_ref,
    samples=_arange_start_samples,
    dtypes=("float32", "float64", "int64"),
    result_dtype=factory_rule(_arange_default),
)


def _linspace_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("0_1_5", 0, 1, 5, dtype=DT(d))
    yield S("neg", -2, 3, 6, dtype=DT(d))
    yield S("steps1", 3, 7, 1, dtype=DT(d))
    yield S("steps0", 0, 1, 0, dtype=DT(d))
    if d == "float32":
        yield S("default_dtype_int_ends", 0, 10, 5)
        yield S("default_dtype", -1.0, 1.0, 9)


def _ref_linspace(start: Any, end: Any, steps: int, *, dtype: Any = None) -> Any:
    out = np.linspace(float(start), float(end), steps, dtype=np.float64)
    if dtype is not None and np.dtype(dtype).kind in "iu":
        out = np.trunc(out)  # integer linspace: computed in floating point, then truncated
    return out


_factory(
    "linspace", _ref_linspace, samples=_linspace_samples, dtypes=("float32", "float64", "int64")
)


def _logspace_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("0_2_5", 0, 2, 5, dtype=DT(d))
    yield S("neg_base2", -2, 3, 6, 2.0, dtype=DT(d))
    yield S("steps1", 1, 7, 1, dtype=DT(d))
    yield S("steps0", 0, 1, 0, dtype=DT(d))
    if d == "float32":
        yield S("default_dtype_base_kw", -1.0, 1.0, 9, base=3.0)


def _ref_logspace(
    start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None
) -> Any:
    out = np.power(base, _ref_linspace(start, end, steps))
    if dtype is not None and np.dtype(dtype).kind in "iu":
        out = np.trunc(out)  # integer logspace: computed in floating point, then truncated
    return out


_factory(
    "logspace", _ref_logspace, samples=_logspace_samples, dtypes=("float32", "float64", "int64")
)


def _eye_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("3", 3, dtype=DT(d))
    yield S("1", 1, dtype=DT(d))
    yield S("0", 0, dtype=DT(d))
    if d == "float32":
        yield S("default_dtype", 4)


def _eye_m_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2x4", 2, 4, dtype=DT(d))
    yield S("4x2", 4, 2, dtype=DT(d))
    yield S("3x0", 3, 0, dtype=DT(d))
    if d == "float32":
        yield S("default_dtype", 2, 3)


_factory(
    "eye", lambda n, *, dtype=None: np.eye(n, dtype=_np_factory_dtype(dtype)), samples=_eye_samples
)
_factory(
    "eye.m",
    lambda n, m, *, dtype=None: np.eye(n, m, dtype=_np_factory_dtype(dtype)),
    samples=_eye_m_samples,
)


# --- range: arange with its end included (deprecated in PyTorch) -------------------------------


def _range_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("0_5", 0, 5, dtype=DT(d))
    yield S("1_10_3", 1, 10, 3, dtype=DT(d))
    yield S("down", 5, 0, -2, dtype=DT(d))
    yield S("one", 2, 2, dtype=DT(d))
    if d != "int64":
        yield S("fraction", 0, 1, 0.25, dtype=DT(d))
    if d == "float32":
        yield S("default_dtype_of_ints", 1, 4)


def _ref_range(start: Any, end: Any, step: Any = 1, *, dtype: Any = None) -> Any:
    n = int((end - start) / step) + 1
    return start + np.arange(n, dtype=np.float64) * step


for _name in ("range", "range.step"):
    _factory(
        _name,
        _ref_range,
        samples=(
            _range_samples
            if _name == "range.step"
            else lambda d, rng: (s for s in _range_samples(d, rng) if len(s.args) == 2)
        ),
        dtypes=("float32", "float64", "int64"),
    )


# --- *_like factories -------------------------------------------------------------------------


def _like_value_samples(
    extra: tuple[Any, ...] = (),
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        ex = tuple(scalar_for(d) if e == "fill" else e for e in extra)
        yield S("2x3", make((2, 3), d, rng), *ex)
        yield S("0dim", make((), d, rng), *ex)
        yield S("empty", make((0, 3), d, rng), *ex)
        other = "int64" if d != "int64" else "float64"
        ex_other = tuple(scalar_for(other) if e == "fill" else e for e in extra)
        yield S(f"dtype_{other}", make((2, 2), d, rng), *ex_other, dtype=DT(other))

    return gen


def _like(
    name: str, ref: Callable[..., Any], extra: tuple[Any, ...] = (), check_values: bool = True
) -> None:
    add(
        OpInfo(
            name,
            op=fn(name),
            sample_inputs=_like_value_samples(extra),
            ref=ref,
            dtypes=ALL,
            result_dtype=dtype_kwarg(same),
            check_values=check_values,
        )
    )


_like("zeros_like", lambda x, *, dtype=None: np.zeros(x.shape, dtype or x.dtype))
_like("ones_like", lambda x, *, dtype=None: np.ones(x.shape, dtype or x.dtype))
_like(
    "empty_like", lambda x, *, dtype=None: np.empty(x.shape, dtype or x.dtype), check_values=False
)
_like(
    "full_like", lambda x, v, *, dtype=None: np.full(x.shape, v, dtype or x.dtype), extra=("fill",)
)


# --- triangle indices ---------------------------------------------------------------------------


def _triangle_indices_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("square", 3, 3)
    yield S("wide_offset", 3, 5, 1)
    yield S("tall_neg_offset", 5, 3, -2, dtype=DT("int32"))
    yield S("empty", 0, 4)
    yield S("offset_beyond", 2, 3, 7)


for _name, _np_fn in (("tril_indices", np.tril_indices), ("triu_indices", np.triu_indices)):
    _factory(
        _name,
        lambda row, col, offset=0, *, dtype=None, _f=_np_fn: (
            np.array(_f(row, offset, col) if row and col else np.zeros((2, 0)))
            .reshape(2, -1)
            .astype(_np_factory_dtype(dtype, np.int64))
        ),
        samples=_triangle_indices_samples,
        dtypes=("int64",),
        result_dtype=factory_rule(lambda s: "int64"),
    )


# --- new_empty_strided (issue 29): self's dtype and device unless given; values unchecked ----

from ._core import meth  # noqa: E402


def _new_empty_strided_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((2, 2), d, rng), [2, 3], [3, 1])
    yield S("dtype", make((3,), d, rng), [4], [1], dtype=DT("float64"))
    yield S("0dim", make((), d, rng), [], [])


add(
    OpInfo(
        "new_empty_strided",
        op=meth("new_empty_strided"),
        sample_inputs=_new_empty_strided_samples,
        ref=lambda x, size, stride, *, dtype=None: np.empty(size, dtype or x.dtype),
        dtypes=ALL,
        result_dtype=dtype_kwarg(same),
        check_values=False,
    )
)
