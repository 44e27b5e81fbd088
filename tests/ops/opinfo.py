"""OpInfo registry: one entry per operator overload of ``native_functions.yaml``.

An :class:`OpInfo` says three things about an operator overload:

* how a user calls it: the public function (``tp.add``), the ``Tensor`` method (``t.add``) and,
  always, the overload itself (``tp.ops.aten.add.Tensor``), so every overload's kernel runs even
  where the public packet would pick another one;
* which inputs to try: ``sample_inputs(dtype, rng)`` yields :class:`SampleInput`s whose numpy
  arrays stand in for tensors (``DT("float64")`` stands in for a dtype argument);
* what the answer is: ``ref``, a numpy oracle written from PyTorch's documented semantics and
  never from tensorplug, and ``result_dtype``, the dtype PyTorch's promotion rules give.

The harness in ``test_ops.py`` turns arrays into tensors, runs every variant and compares. The
oracles never import or call tensorplug; the ``op`` callables resolve their tensorplug name at
call time, so this module imports even while the public API is incomplete.

Usage::

    from .opinfo import OP_DB, OPS_BY_NAME
    info = OPS_BY_NAME["add.Tensor"]
    for sample in info.sample_inputs("float32", np.random.default_rng(0)):
        expected = info.ref(*sample.args, **sample.kwargs)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tensorplug as tp

try:  # bfloat16 arrays for the spot checks; the CPU plugin stores bfloat16 through ml_dtypes
    import ml_dtypes
except ImportError:  # pragma: no cover - then bfloat16 cases skip
    ml_dtypes = None

# --- dtypes -------------------------------------------------------------------------------

FLOATS = ("float32", "float64")
LOWP = ("float16", "bfloat16")  # spot checks with looser tolerances
INTS = ("int64",)
BOOL = ("bool",)
NUMERIC = FLOATS + INTS
ALL = FLOATS + INTS + BOOL

_CATEGORY = {
    "bool": 0,
    "uint8": 1,
    "int8": 1,
    "int16": 1,
    "int32": 1,
    "int64": 1,
    "float16": 2,
    "bfloat16": 2,
    "float32": 2,
    "float64": 2,
}
_ITEMSIZE = {
    "bool": 1,
    "uint8": 1,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "float16": 2,
    "bfloat16": 2,
    "float32": 4,
    "float64": 8,
}


def is_float(d: str) -> bool:
    return _CATEGORY[d] == 2


def is_int(d: str) -> bool:
    return _CATEGORY[d] == 1


def np_dtype(d: str) -> Any:
    if d == "bfloat16":
        if ml_dtypes is None:
            raise RuntimeError("bfloat16 samples need ml_dtypes")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(d)


def dtype_name(a: np.ndarray) -> str:
    return str(a.dtype.name)


@dataclass(frozen=True)
class DT:
    """A dtype argument in a sample: the harness passes ``tp.<name>``, the oracle numpy's."""

    name: str


# --- PyTorch type promotion, written independently of tensorplug.dtypes -----------------------


def promote_types(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return a if b is None else b
    if a == b:
        return a
    ca, cb = _CATEGORY[a], _CATEGORY[b]
    if ca != cb:  # a higher category always wins: int64 + float16 -> float16
        return a if ca > cb else b
    pair = {a, b}
    if pair == {"float16", "bfloat16"}:
        return "float32"
    if pair == {"uint8", "int8"}:
        return "int16"
    return a if _ITEMSIZE[a] >= _ITEMSIZE[b] else b


def _combine_categories(higher: str | None, lower: str | None) -> str | None:
    # c10's combine_categories: the higher-priority group keeps its dtype unless the lower one
    # is of a higher category (a float 0-dim tensor or Python float against an int tensor).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if is_float(higher):
        return higher
    if higher == "bool" or _CATEGORY[lower] > _CATEGORY[higher]:
        return promote_types(higher, lower)
    return higher


def result_type(*operands: Any) -> str:
    """PyTorch's result_type: dimensioned tensors > 0-dim tensors > Python scalars."""
    dim = zero = wrapped = None
    for x in operands:
        if isinstance(x, np.ndarray):
            if x.ndim:
                dim = promote_types(dim, dtype_name(x))
            else:
                zero = promote_types(zero, dtype_name(x))
        elif isinstance(x, bool):
            wrapped = promote_types(wrapped, "bool")
        elif isinstance(x, int):
            wrapped = promote_types(wrapped, "int64")
        elif isinstance(x, float):
            wrapped = promote_types(wrapped, "float32")  # the default dtype
    out = _combine_categories(dim, _combine_categories(zero, wrapped))
    assert out is not None, operands
    return out


def to_float(d: str) -> str:
    """Ops that always produce floating results (true division, exp, ...): ints -> float32."""
    return d if is_float(d) else "float32"


# --- samples ------------------------------------------------------------------------------


@dataclass
class SampleInput:
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    name: str
    meta: dict[str, Any] = field(default_factory=dict)  # hints for the random-op checks


def S(name: str, *args: Any, meta: dict[str, Any] | None = None, **kwargs: Any) -> SampleInput:
    return SampleInput(args, kwargs, name, meta or {})


def make(
    shape: Iterable[int],
    d: str,
    rng: np.random.Generator,
    low: float | None = None,
    high: float | None = None,
    *,
    nonzero: bool = False,
) -> np.ndarray:
    """A random array; ints in [low, high] (default [-9, 9]), floats in [low, high) ([-3, 3))."""
    shape = tuple(shape)
    if d == "bool":
        a: Any = rng.random(shape) < 0.5
    elif is_int(d):
        lo = -9 if low is None else int(low)
        hi = 9 if high is None else int(high)
        a = rng.integers(lo, hi + 1, size=shape)
        if nonzero:
            a = np.where(a == 0, 1, a)
    else:
        lo_f = -3.0 if low is None else float(low)
        hi_f = 3.0 if high is None else float(high)
        a = rng.uniform(lo_f, hi_f, size=shape)
        if nonzero:
            a = np.where(np.abs(a) < 0.25, 0.5, a)
    return np.asarray(a).astype(np_dtype(d))


def scalar_for(d: str, *, kind: str | None = None) -> bool | int | float:
    """A Python scalar of the same category as ``d`` (or of ``kind``)."""
    k = kind or ("bool" if d == "bool" else "int" if is_int(d) else "float")
    return {"bool": True, "int": 3, "float": 2.5}[k]


# --- result dtype rules (sample, dtype) -> dtype name or tuple of names ------------------------

DtypeRule = Callable[[SampleInput, str], Any]


def _first_array(s: SampleInput) -> np.ndarray:
    for x in s.args:
        if isinstance(x, np.ndarray):
            return x
        if isinstance(x, list) and x and isinstance(x[0], np.ndarray):
            return x[0]
    raise AssertionError(f"sample {s.name} has no tensor argument")


def same(s: SampleInput, d: str) -> str:
    return dtype_name(_first_array(s))


def fixed(name: str) -> DtypeRule:
    return lambda s, d: name


def promoted(*positions: int, floating: bool = False) -> DtypeRule:
    def rule(s: SampleInput, d: str) -> str:
        r = result_type(*(s.args[i] for i in positions))
        return to_float(r) if floating else r

    return rule


def unary_float(s: SampleInput, d: str) -> str:
    return to_float(dtype_name(_first_array(s)))


def dtype_kwarg(default: DtypeRule) -> DtypeRule:
    def rule(s: SampleInput, d: str) -> Any:
        dt = s.kwargs.get("dtype")
        return dt.name if isinstance(dt, DT) else default(s, d)

    return rule


def _int64_if_integral(s: SampleInput, d: str) -> str:
    n = dtype_name(_first_array(s))
    return n if is_float(n) else "int64"


sum_rule = dtype_kwarg(_int64_if_integral)


def factory_rule(default_for_sample: Callable[[SampleInput], str] | None = None) -> DtypeRule:
    def rule(s: SampleInput, d: str) -> str:
        dt = s.kwargs.get("dtype")
        if isinstance(dt, DT):
            return dt.name
        return default_for_sample(s) if default_for_sample else "float32"

    return rule


# --- the OpInfo -----------------------------------------------------------------------------


@dataclass
class OpInfo:
    """How to call one op overload, what to feed it and what it must return.

    kind: "function" (compare with ``ref``), "inplace" (the first argument is mutated and
    returned), "out" (``out=`` is written and returned), "view" (shares memory with the first
    argument), "random" (``random_check`` instead of values), "factory" (no tensor inputs).
    """

    name: str  # "add.Tensor", "zeros", "empty.memory_format"
    op: Callable[..., Any]  # the public callable
    sample_inputs: Callable[[str, np.random.Generator], Iterable[SampleInput]]
    ref: Callable[..., Any] | None
    dtypes: tuple[str, ...] = NUMERIC
    result_dtype: DtypeRule = same
    method: Callable[..., Any] | None = None  # the Tensor-method variant, when there is one
    kind: str = "function"
    check_values: bool = True  # False for empty/empty_like
    view_write: str = "view"  # "view": write through the view; "base": through the base; "none"
    returns_names: tuple[str, ...] = ()  # named-tuple fields (max.dim: values, indices)
    random_check: Callable[[Any, SampleInput, str], None] | None = None
    compare: Callable[[Any, Any, SampleInput, str], None] | None = None  # custom comparison
    tol: dict[str, tuple[float, float]] = field(default_factory=dict)  # dtype -> (rtol, atol)
    aten_variant: bool = True  # also call tp.ops.aten.<op>.<overload>

    @property
    def op_name(self) -> str:
        return self.name.split(".")[0]

    @property
    def overload_name(self) -> str:
        parts = self.name.split(".", 1)
        return parts[1] if len(parts) == 2 else "default"

    def aten(self) -> Callable[..., Any]:
        op_name, overload = self.op_name, self.overload_name

        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(getattr(tp.ops.aten, op_name), overload)(*args, **kwargs)

        return call

    def variants(self) -> list[tuple[str, Callable[..., Any]]]:
        out = [("public", self.op)]
        if self.method is not None:
            out.append(("method", self.method))
        if self.aten_variant:
            out.append(("aten", self.aten()))
        return out


def fn(name: str) -> Callable[..., Any]:
    """``tp.<name>``, looked up at call time."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(tp, name)(*args, **kwargs)

    call.__name__ = f"tp.{name}"
    return call


def meth(name: str) -> Callable[..., Any]:
    """``self.<name>(...)``, looked up at call time."""

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, name)(*args, **kwargs)

    call.__name__ = f"Tensor.{name}"
    return call


OP_DB: list[OpInfo] = []


def add(info: OpInfo) -> OpInfo:
    OP_DB.append(info)
    return info


# --- generic sample generators --------------------------------------------------------------

LOWP_TOL_LOOSE = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}


def binary_samples(
    *,
    low: float | None = None,
    high: float | None = None,
    rhs_low: float | None = None,
    rhs_high: float | None = None,
    nonzero_rhs: bool = False,
    alpha: bool = False,
    promotion: bool = True,
    bool_promotion: bool = True,
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        def a(shape: tuple[int, ...], dd: str = d) -> np.ndarray:
            return make(shape, dd, rng, low, high)

        def b(shape: tuple[int, ...], dd: str = d) -> np.ndarray:
            lo = low if rhs_low is None else rhs_low
            hi = high if rhs_high is None else rhs_high
            return make(shape, dd, rng, lo, hi, nonzero=nonzero_rhs)

        yield S("same_shape", a((2, 3)), b((2, 3)))
        yield S("broadcast", a((3, 1)), b((1, 4)))
        yield S("broadcast_rank", a((4,)), b((2, 3, 4)))
        yield S("0dim", a(()), b(()))
        yield S("0dim_other", a((2, 3)), b(()))
        yield S("0dim_self", a(()), b((2, 3)))
        yield S("empty", a((0,)), b((0,)))
        yield S("empty_broadcast", a((2, 0)), b((1, 0)))
        if alpha:
            al = True if d == "bool" else 2 if is_int(d) else 0.5
            yield S("alpha", a((2, 3)), b((2, 3)), alpha=al)
        if promotion and d == "float32":
            yield S("promote_int64_float32", a((2, 3), "int64"), b((2, 3), "float32"))
            yield S("promote_float32_0dim_float64", a((2, 3)), b((), "float64"))
            yield S("promote_int64_0dim_float64", a((2, 3), "int64"), b((), "float64"))
            yield S("promote_float32_float64", a((3, 1)), b((1, 2), "float64"))
            if bool_promotion:
                yield S("promote_bool_int64", a((2, 3), "bool"), b((2, 3), "int64"))

    return gen


def scalar_samples(
    *,
    low: float | None = None,
    high: float | None = None,
    scalars: Callable[[str], list[tuple[str, Any]]] | None = None,
    alpha: bool = False,
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    """Tensor op Python-scalar samples; the default scalars are an int, a float and (bool) True."""

    def default_scalars(d: str) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = [("int_scalar", 3), ("float_scalar", 2.5)]
        if d == "bool":
            out.append(("bool_scalar", True))
        return out

    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for label, sc in (scalars or default_scalars)(d):
            yield S(label, make((2, 3), d, rng, low, high), sc)
            yield S(f"{label}_0dim", make((), d, rng, low, high), sc)
            yield S(f"{label}_empty", make((0, 2), d, rng, low, high), sc)
        if alpha:
            al = True if d == "bool" else 2 if is_int(d) else 0.5
            sc = True if d == "bool" else 3 if is_int(d) else 1.5
            yield S("alpha", make((3,), d, rng, low, high), sc, alpha=al)
            yield S(
                "alpha_neg_scalar",
                make((3,), d, rng, low, high),
                -2 if d != "bool" else False,
                alpha=al,
            )

    return gen


def unary_samples(
    *, low: float | None = None, high: float | None = None
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield S("2d", make((3, 4), d, rng, low, high))
        yield S("0dim", make((), d, rng, low, high))
        yield S("empty", make((0,), d, rng, low, high))
        yield S("empty_2d", make((2, 0), d, rng, low, high))
        yield S("3d", make((2, 1, 3), d, rng, low, high))

    return gen


def inplace_samples(base: OpInfo) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    """The base op's samples whose result fits in ``self``: same shape, no category upgrade."""

    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for s in base.sample_inputs(d, rng):
            self_ = s.args[0]
            if not isinstance(self_, np.ndarray):
                continue
            shapes = [x.shape for x in s.args if isinstance(x, np.ndarray)]
            if tuple(np.broadcast_shapes(*shapes)) != self_.shape:
                continue
            if _CATEGORY[base.result_dtype(s, d)] > _CATEGORY[dtype_name(self_)]:
                continue
            yield s

    return gen


def add_inplace(base: OpInfo, name: str, method_name: str, function: bool = False) -> None:
    add(
        OpInfo(
            name,
            op=fn(method_name) if function else meth(method_name),
            method=meth(method_name) if function else None,
            sample_inputs=inplace_samples(base),
            ref=base.ref,
            dtypes=base.dtypes,
            result_dtype=same,
            kind="inplace",
            tol=base.tol,
        )
    )


def add_out(base: OpInfo, name: str, fn_name: str) -> None:
    add(
        OpInfo(
            name,
            op=fn(fn_name),
            sample_inputs=base.sample_inputs,
            ref=base.ref,
            dtypes=base.dtypes,
            result_dtype=base.result_dtype,
            kind="out",
            tol=base.tol,
        )
    )


# --- pointwise binary arithmetic --------------------------------------------------------------


def _ref_add(a: Any, b: Any, alpha: Any = 1) -> Any:
    return np.add(a, np.multiply(alpha, b))


def _ref_sub(a: Any, b: Any, alpha: Any = 1) -> Any:
    return np.subtract(a, np.multiply(alpha, b))


def _true_div(a: Any, b: Any) -> Any:
    return np.true_divide(np.asarray(a, dtype=np.float64) if _intlike(a) else a, b)


def _intlike(a: Any) -> bool:
    arr = np.asarray(a)
    return arr.dtype.kind in "biu"


def _ref_div_mode(a: Any, b: Any, rounding_mode: str | None = None) -> Any:
    if rounding_mode is None:
        return _true_div(a, b)
    if rounding_mode == "trunc":
        if _intlike(a) and _intlike(b):
            q = np.abs(a) // np.abs(b)
            return np.sign(a) * np.sign(b) * q
        return np.trunc(np.true_divide(a, b))
    if rounding_mode == "floor":
        if _intlike(a) and _intlike(b):
            return np.floor_divide(a, b)
        return np.floor(np.true_divide(a, b))
    raise ValueError(rounding_mode)


add_T = add(
    OpInfo(
        "add.Tensor",
        op=fn("add"),
        method=meth("add"),
        sample_inputs=binary_samples(alpha=True),
        ref=_ref_add,
        dtypes=ALL + LOWP,
        result_dtype=promoted(0, 1),
    )
)
add_S = add(
    OpInfo(
        "add.Scalar",
        op=fn("add"),
        method=meth("add"),
        sample_inputs=scalar_samples(alpha=True),
        ref=_ref_add,
        dtypes=ALL + LOWP,
        result_dtype=promoted(0, 1),
    )
)
add_out(add_T, "add.out", "add")
add_inplace(add_T, "add_.Tensor", "add_")
add_inplace(add_S, "add_.Scalar", "add_")

sub_T = add(
    OpInfo(
        "sub.Tensor",
        op=fn("sub"),
        method=meth("sub"),
        sample_inputs=binary_samples(alpha=True, bool_promotion=False),
        ref=_ref_sub,
        dtypes=NUMERIC + LOWP,
        result_dtype=promoted(0, 1),
    )
)
sub_S = add(
    OpInfo(
        "sub.Scalar",
        op=fn("sub"),
        method=meth("sub"),
        sample_inputs=scalar_samples(alpha=True),
        ref=_ref_sub,
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)
add_out(sub_T, "sub.out", "sub")
add_inplace(sub_T, "sub_.Tensor", "sub_")
add_inplace(sub_S, "sub_.Scalar", "sub_")

add(
    OpInfo(
        "rsub.Scalar",
        op=fn("rsub"),
        sample_inputs=scalar_samples(alpha=True),
        ref=lambda a, other, alpha=1: np.subtract(other, np.multiply(alpha, a)),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)

mul_T = add(
    OpInfo(
        "mul.Tensor",
        op=fn("mul"),
        method=meth("mul"),
        sample_inputs=binary_samples(),
        ref=lambda a, b: np.multiply(a, b),
        dtypes=ALL + LOWP,
        result_dtype=promoted(0, 1),
    )
)
mul_S = add(
    OpInfo(
        "mul.Scalar",
        op=fn("mul"),
        method=meth("mul"),
        sample_inputs=scalar_samples(),
        ref=lambda a, b: np.multiply(a, b),
        dtypes=ALL,
        result_dtype=promoted(0, 1),
    )
)
add_out(mul_T, "mul.out", "mul")
add_inplace(mul_T, "mul_.Tensor", "mul_")
add_inplace(mul_S, "mul_.Scalar", "mul_")


def _div_scalars(d: str) -> list[tuple[str, Any]]:
    return [("int_scalar", 4), ("float_scalar", 2.5), ("neg_float_scalar", -0.5)]


div_T = add(
    OpInfo(
        "div.Tensor",
        op=fn("div"),
        method=meth("div"),
        sample_inputs=binary_samples(nonzero_rhs=True, bool_promotion=False),
        ref=_true_div,
        dtypes=NUMERIC + LOWP,
        result_dtype=promoted(0, 1, floating=True),
    )
)
div_S = add(
    OpInfo(
        "div.Scalar",
        op=fn("div"),
        method=meth("div"),
        sample_inputs=scalar_samples(scalars=_div_scalars),
        ref=_true_div,
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1, floating=True),
    )
)


def _div_mode_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for mode in ("trunc", "floor", None):
        m = mode or "true"
        a, b = make((2, 3), d, rng), make((2, 3), d, rng, nonzero=True)
        yield S(f"{m}", a, b, rounding_mode=mode)
        yield S(
            f"{m}_broadcast",
            make((3, 1), d, rng),
            make((1, 4), d, rng, nonzero=True),
            rounding_mode=mode,
        )
        yield S(f"{m}_0dim", make((), d, rng), make((), d, rng, nonzero=True), rounding_mode=mode)
    # negative operands: trunc rounds toward zero, floor toward -inf
    yield S(
        "trunc_negative",
        np.array([-7, 7, -7, 7]).astype(np_dtype(d)),
        np.array([2, -2, -2, 2]).astype(np_dtype(d)),
        rounding_mode="trunc",
    )
    yield S(
        "floor_negative",
        np.array([-7, 7, -7, 7]).astype(np_dtype(d)),
        np.array([2, -2, -2, 2]).astype(np_dtype(d)),
        rounding_mode="floor",
    )


def _div_mode_dtype(s: SampleInput, d: str) -> str:
    r = result_type(s.args[0], s.args[1])
    return to_float(r) if s.kwargs.get("rounding_mode") is None else r


add(
    OpInfo(
        "div.Tensor_mode",
        op=fn("div"),
        method=meth("div"),
        sample_inputs=_div_mode_samples,
        ref=_ref_div_mode,
        dtypes=NUMERIC,
        result_dtype=_div_mode_dtype,
    )
)
add_out(div_T, "div.out", "div")
add_inplace(div_T, "div_.Tensor", "div_")
add_inplace(div_S, "div_.Scalar", "div_")


def _rdiv_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # the tensor is the divisor here, so it holds no zeros
    for label, sc in (("int_scalar", 3), ("float_scalar", 2.5)):
        yield S(label, make((2, 3), d, rng, nonzero=True), sc)
        yield S(f"{label}_0dim", make((), d, rng, nonzero=True), sc)
    yield S("empty", make((0, 2), d, rng), 1.5)


add(
    OpInfo(
        "rdiv.Scalar",
        op=fn("rdiv"),
        sample_inputs=_rdiv_samples,
        ref=lambda a, other: np.true_divide(other, np.asarray(a, np.float64)),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1, floating=True),
    )
)
add(
    OpInfo(
        "floor_divide",
        op=fn("floor_divide"),
        method=meth("floor_divide"),
        sample_inputs=binary_samples(nonzero_rhs=True, bool_promotion=False),
        ref=lambda a, b: np.floor_divide(a, b),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)
add(
    OpInfo(
        "floor_divide.Scalar",
        op=fn("floor_divide"),
        method=meth("floor_divide"),
        sample_inputs=scalar_samples(
            scalars=lambda d: [("int_scalar", 3), ("float_scalar", 2.5), ("neg_int_scalar", -2)]
        ),
        ref=lambda a, b: np.floor_divide(a, b),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)
add(
    OpInfo(
        "remainder.Tensor",
        op=fn("remainder"),
        method=meth("remainder"),
        sample_inputs=binary_samples(nonzero_rhs=True, bool_promotion=False),
        ref=lambda a, b: np.remainder(a, b),  # Python semantics: the sign of the divisor
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)
add(
    OpInfo(
        "remainder.Scalar",
        op=fn("remainder"),
        method=meth("remainder"),
        sample_inputs=scalar_samples(
            scalars=lambda d: [("int_scalar", 3), ("float_scalar", 2.5), ("neg_int_scalar", -2)]
        ),
        ref=lambda a, b: np.remainder(a, b),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)


def _pow_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    if is_int(d):
        base = lambda shape: make(shape, d, rng, -3, 3)  # noqa: E731
        expo = lambda shape: make(shape, d, rng, 0, 3)  # noqa: E731
    else:
        base = lambda shape: make(shape, d, rng, 0.5, 2.0)  # noqa: E731
        expo = lambda shape: make(shape, d, rng, -2.0, 2.0)  # noqa: E731
    yield S("same_shape", base((2, 3)), expo((2, 3)))
    yield S("broadcast", base((3, 1)), expo((1, 4)))
    yield S("0dim_exponent", base((2, 3)), expo(()))
    yield S("0dim", base(()), expo(()))
    yield S("empty", base((0,)), expo((0,)))
    if d == "float32":
        yield S("promote_int64_float32", make((2, 3), "int64", rng, 0, 3), expo((2, 3)))


add(
    OpInfo(
        "pow.Tensor_Tensor",
        op=fn("pow"),
        method=meth("pow"),
        sample_inputs=_pow_tensor_samples,
        ref=lambda a, b: np.power(a.astype(np.float64) if a.dtype.kind == "f" else a, b),
        dtypes=NUMERIC + LOWP,
        result_dtype=promoted(0, 1),
    )
)


def _pow_scalar_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    if is_int(d):
        x = make((2, 3), d, rng, -3, 3)
        yield S("square", x, 2)
        yield S("zero", x, 0)
        yield S("float_exponent", make((2, 3), d, rng, 1, 5), 0.5)  # -> float32
        yield S("0dim", make((), d, rng, -3, 3), 3)
    else:
        x = make((2, 3), d, rng, 0.5, 2.0)
        yield S("square", x, 2)
        yield S("sqrt", x, 0.5)
        yield S("reciprocal", x, -1.0)
        yield S("0dim", make((), d, rng, 0.5, 2.0), 3)
        yield S("empty", make((0, 2), d, rng), 2)


add(
    OpInfo(
        "pow.Tensor_Scalar",
        op=fn("pow"),
        method=meth("pow"),
        sample_inputs=_pow_scalar_samples,
        ref=lambda a, e: (
            np.power(a.astype(np.float64), e)
            if isinstance(e, float) or a.dtype.kind == "f"
            else np.power(a, e)
        ),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)


def _pow_scalar_self_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    if is_int(d):
        yield S("int_base", 2, make((2, 3), d, rng, 0, 4))
        yield S("float_base", 1.5, make((2, 3), d, rng, -2, 3))  # -> float32
    else:
        yield S("float_base", 2.0, make((2, 3), d, rng, -2, 2))
        yield S("int_base", 3, make((2, 3), d, rng, -2, 2))
        yield S("0dim", 0.5, make((), d, rng, -2, 2))
        yield S("empty", 2.0, make((0,), d, rng))


add(
    OpInfo(
        "pow.Scalar",
        op=fn("pow"),
        sample_inputs=_pow_scalar_self_samples,
        ref=lambda b, e: (
            np.power(np.float64(b), e)
            if isinstance(b, float) or e.dtype.kind == "f"
            else np.power(np.int64(b), e)
        ),
        dtypes=NUMERIC,
        result_dtype=promoted(0, 1),
    )
)
for _name, _np in (("maximum", np.maximum), ("minimum", np.minimum)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=binary_samples(),
            ref=_np,
            dtypes=ALL + LOWP,
            result_dtype=promoted(0, 1),
        )
    )


# --- pointwise unary --------------------------------------------------------------------------


def _erf(x: Any) -> Any:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sigmoid(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    return 1.0 / (1.0 + np.exp(-x))


def _gelu(x: Any, approximate: str = "none") -> Any:
    x = np.asarray(x, dtype=np.float64)
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _unary(
    name: str,
    ref: Callable[..., Any],
    *,
    dtypes: tuple[str, ...] = NUMERIC + LOWP,
    result_dtype: DtypeRule = same,
    low: float | None = None,
    high: float | None = None,
    method: bool = True,
) -> OpInfo:
    return add(
        OpInfo(
            name,
            op=fn(name),
            method=meth(name) if method else None,
            sample_inputs=unary_samples(low=low, high=high),
            ref=ref,
            dtypes=dtypes,
            result_dtype=result_dtype,
        )
    )


def _f64(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda x: f(np.asarray(x, dtype=np.float64))


_unary("neg", np.negative)
_unary("abs", np.abs)
_unary("sign", np.sign)
_unary("exp", _f64(np.exp), result_dtype=unary_float)
_unary("log", _f64(np.log), result_dtype=unary_float, low=0.1, high=5)
_unary("log1p", _f64(np.log1p), result_dtype=unary_float, low=-0.9, high=5)
_unary("sqrt", _f64(np.sqrt), result_dtype=unary_float, low=0, high=9)
_unary("rsqrt", _f64(lambda x: 1.0 / np.sqrt(x)), result_dtype=unary_float, low=0.1, high=9)
_unary("sin", _f64(np.sin), result_dtype=unary_float)
_unary("cos", _f64(np.cos), result_dtype=unary_float)
_unary("tanh", _f64(np.tanh), result_dtype=unary_float)
_unary("sigmoid", _sigmoid, result_dtype=unary_float)
relu = _unary("relu", lambda x: np.maximum(x, 0).astype(np.asarray(x).dtype))
_unary(
    "silu", lambda x: np.asarray(x, np.float64) * _sigmoid(x), dtypes=FLOATS + LOWP, method=False
)
add_inplace(relu, "relu_", "relu_", function=True)


def _gelu_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from unary_samples()(d, rng)
    yield S("tanh", make((3, 4), d, rng), approximate="tanh")
    yield S("none_explicit", make((5,), d, rng), approximate="none")


add(
    OpInfo(
        "gelu",
        op=fn("gelu"),
        sample_inputs=_gelu_samples,
        ref=_gelu,
        dtypes=FLOATS + LOWP,
    )
)


def _ref_clamp(x: Any, min: Any = None, max: Any = None) -> Any:
    out = np.asarray(x)
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)  # min > max gives max everywhere, as in PyTorch
    return out


def _clamp_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    lo, hi = (-2, 3) if is_int(d) else (-1.5, 0.5)
    yield S("both", make((3, 4), d, rng), lo, hi)
    yield S("min_only", make((3, 4), d, rng), min=lo)
    yield S("max_only", make((3, 4), d, rng), max=hi)
    yield S("max_kw_min_none", make((5,), d, rng), None, hi)
    yield S("min_gt_max", make((5,), d, rng), hi, lo)
    yield S("0dim", make((), d, rng), lo, hi)
    yield S("empty", make((0, 3), d, rng), lo, hi)


add(
    OpInfo(
        "clamp",
        op=fn("clamp"),
        method=meth("clamp"),
        sample_inputs=_clamp_samples,
        ref=_ref_clamp,
        dtypes=NUMERIC + LOWP,
    )
)


def _clamp_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("both", make((3, 4), d, rng), make((3, 4), d, rng, -3, 0), make((3, 4), d, rng, 0, 3))
    yield S(
        "broadcast", make((3, 4), d, rng), make((3, 1), d, rng, -3, 0), make((4,), d, rng, 0, 3)
    )
    yield S("min_only", make((3, 4), d, rng), min=make((4,), d, rng))
    yield S("max_only", make((3, 4), d, rng), max=make((), d, rng))
    yield S("empty", make((0, 4), d, rng), make((4,), d, rng, -3, 0), make((4,), d, rng, 0, 3))


add(
    OpInfo(
        "clamp.Tensor",
        op=fn("clamp"),
        method=meth("clamp"),
        sample_inputs=_clamp_tensor_samples,
        ref=_ref_clamp,
        dtypes=NUMERIC,
    )
)


def _where_method(cond: Any, self: Any, other: Any) -> Any:
    return self.where(cond, other)  # PyTorch: x.where(condition, y)


def _where_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same_shape", make((2, 3), "bool", rng), make((2, 3), d, rng), make((2, 3), d, rng))
    yield S("broadcast", make((3, 1), "bool", rng), make((1, 4), d, rng), make((), d, rng))
    yield S("0dim", make((), "bool", rng), make((), d, rng), make((), d, rng))
    yield S("empty", make((0,), "bool", rng), make((0,), d, rng), make((0,), d, rng))
    if d == "float32":
        yield S(
            "promote_int64_float32",
            make((4,), "bool", rng),
            make((4,), "int64", rng),
            make((4,), d, rng),
        )


add(
    OpInfo(
        "where.self",
        op=fn("where"),
        method=_where_method,
        sample_inputs=_where_samples,
        ref=lambda c, a, b: np.where(c, a, b),
        dtypes=ALL,
        result_dtype=promoted(1, 2),
    )
)


def _where_scalar_other_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    sc = scalar_for(d)
    yield S("scalar", make((2, 3), "bool", rng), make((2, 3), d, rng), sc)
    yield S("broadcast", make((3, 1), "bool", rng), make((1, 4), d, rng), sc)
    yield S("0dim", make((), "bool", rng), make((), d, rng), sc)
    if is_int(d):
        yield S("float_scalar_promotes", make((4,), "bool", rng), make((4,), d, rng), 0.5)


add(
    OpInfo(
        "where.ScalarOther",
        op=fn("where"),
        method=_where_method,
        sample_inputs=_where_scalar_other_samples,
        ref=lambda c, a, b: np.where(c, a, b),
        dtypes=ALL,
        result_dtype=promoted(1, 2),
    )
)


def _where_scalar_self_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    sc = scalar_for(d)
    yield S("scalar", make((2, 3), "bool", rng), sc, make((2, 3), d, rng))
    yield S("broadcast", make((3, 1), "bool", rng), sc, make((1, 4), d, rng))
    yield S("0dim", make((), "bool", rng), sc, make((), d, rng))


add(
    OpInfo(
        "where.ScalarSelf",
        op=fn("where"),
        sample_inputs=_where_scalar_self_samples,
        ref=lambda c, a, b: np.where(c, a, b),
        dtypes=ALL,
        result_dtype=promoted(1, 2),
    )
)

# --- comparisons and logic --------------------------------------------------------------------


def _compare_tensor_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # small integers cast to the dtype, so equal elements are common
    yield from binary_samples(low=-2, high=2, promotion=True)(d, rng)


def _compare_scalar_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    sc: list[tuple[str, Any]] = [("int_scalar", 1), ("float_scalar", 0.5)]
    if d == "bool":
        sc.append(("bool_scalar", True))
    for label, v in sc:
        yield S(label, make((3, 4), d, rng, -2, 2), v)
        yield S(f"{label}_0dim", make((), d, rng, -2, 2), v)
    yield S("empty", make((0,), d, rng), 1)


for _name, _np in (
    ("eq", np.equal),
    ("ne", np.not_equal),
    ("lt", np.less),
    ("le", np.less_equal),
    ("gt", np.greater),
    ("ge", np.greater_equal),
):
    add(
        OpInfo(
            f"{_name}.Tensor",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_compare_tensor_samples,
            ref=_np,
            dtypes=ALL,
            result_dtype=fixed("bool"),
        )
    )
    add(
        OpInfo(
            f"{_name}.Scalar",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_compare_scalar_samples,
            ref=_np,
            dtypes=ALL,
            result_dtype=fixed("bool"),
        )
    )

for _name, _np in (("logical_and", np.logical_and), ("logical_or", np.logical_or)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=binary_samples(low=-1, high=1),
            ref=_np,
            dtypes=ALL,
            result_dtype=fixed("bool"),
        )
    )
add(
    OpInfo(
        "logical_not",
        op=fn("logical_not"),
        method=meth("logical_not"),
        sample_inputs=unary_samples(low=-1, high=1),
        ref=np.logical_not,
        dtypes=ALL,
        result_dtype=fixed("bool"),
    )
)
add(
    OpInfo(
        "bitwise_not",
        op=fn("bitwise_not"),
        method=meth("bitwise_not"),
        sample_inputs=unary_samples(),
        ref=np.invert,  # ~x for ints, logical not for bool
        dtypes=INTS + BOOL,
    )
)
for _name, _np in (
    ("bitwise_and", np.bitwise_and),
    ("bitwise_or", np.bitwise_or),
    ("bitwise_xor", np.bitwise_xor),
):
    add(
        OpInfo(
            f"{_name}.Tensor",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=binary_samples(promotion=False),
            ref=_np,
            dtypes=INTS + BOOL,
            result_dtype=promoted(0, 1),
        )
    )

# --- reductions -------------------------------------------------------------------------------


def _axis(dim: Any) -> Any:
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(dim) if dim else None  # PyTorch: dim=[] reduces everything
    return dim


def _np_dtype_kw(dtype: Any) -> Any:
    return None if dtype is None else dtype


def _full_reduce_samples(
    *, empty: bool = True, low: float | None = None, high: float | None = None
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield S("2d", make((3, 4), d, rng, low, high))
        yield S("0dim", make((), d, rng, low, high))
        yield S("3d", make((2, 3, 4), d, rng, low, high))
        if empty:
            yield S("empty", make((0,), d, rng, low, high))
            yield S("empty_2d", make((2, 0), d, rng, low, high))

    return gen


def _dim_reduce_samples(
    *,
    empty: bool = True,
    low: float | None = None,
    high: float | None = None,
    none_dim: bool = True,
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = lambda shape: make(shape, d, rng, low, high)  # noqa: E731
        yield S("dim1", x((3, 4)), 1)
        yield S("dim0_keepdim", x((3, 4)), 0, True)
        yield S("neg_dim", x((2, 3, 4)), -1)
        yield S("dim_list", x((2, 3, 4)), [0, 2])
        yield S("dim_list_neg_keepdim", x((2, 3, 4)), [-1, 0], keepdim=True)
        yield S("0dim", x(()), 0)
        yield S("dim_kw", x((3, 4)), dim=-2, keepdim=False)
        if none_dim:
            yield S("dim_none", x((3, 4)), None)
        if empty:
            yield S("empty_reduced", x((2, 0)), 1)
            yield S("empty_kept", x((0, 3)), 1)

    return gen


def _with_dtype_kw(
    gen: Callable[[str, np.random.Generator], Iterator[SampleInput]], target: str = "float64"
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def out(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield from gen(d, rng)
        for s in list(gen(d, rng))[:2]:
            yield SampleInput(s.args, {**s.kwargs, "dtype": DT(target)}, f"{s.name}_dtype_{target}")

    return out


def _ref_sum(x: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    x = np.asarray(x)
    if dtype is None and x.dtype.kind in "bui":
        dtype = np.int64
    return np.sum(x, axis=_axis(dim), keepdims=keepdim, dtype=dtype)


def _ref_mean(x: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    x = np.asarray(x, dtype=np.float64)
    axis = None if x.ndim == 0 else _axis(dim)  # a 0-dim tensor accepts dim 0 / -1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.mean(x, axis=axis, keepdims=keepdim)


add(
    OpInfo(
        "sum",
        op=fn("sum"),
        method=meth("sum"),
        sample_inputs=_with_dtype_kw(_full_reduce_samples()),
        ref=_ref_sum,
        dtypes=ALL + LOWP,
        result_dtype=sum_rule,
        tol=LOWP_TOL_LOOSE,
    )
)
add(
    OpInfo(
        "sum.dim_IntList",
        op=fn("sum"),
        method=meth("sum"),
        sample_inputs=_with_dtype_kw(_dim_reduce_samples()),
        ref=_ref_sum,
        dtypes=ALL + LOWP,
        result_dtype=sum_rule,
        tol=LOWP_TOL_LOOSE,
    )
)


def _mean_full_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    if is_int(d):  # integer means need an explicit floating dtype in PyTorch
        yield S("int_dtype_float32", make((3, 4), d, rng), dtype=DT("float32"))
        return
    yield from _with_dtype_kw(_full_reduce_samples())(d, rng)


def _mean_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    if is_int(d):
        yield S("int_dtype_float64", make((3, 4), d, rng), 1, dtype=DT("float64"))
        return
    yield from _with_dtype_kw(_dim_reduce_samples())(d, rng)


add(
    OpInfo(
        "mean",
        op=fn("mean"),
        method=meth("mean"),
        sample_inputs=_mean_full_samples,
        ref=_ref_mean,
        dtypes=FLOATS + INTS + LOWP,
        result_dtype=dtype_kwarg(same),
        tol=LOWP_TOL_LOOSE,
    )
)
add(
    OpInfo(
        "mean.dim",
        op=fn("mean"),
        method=meth("mean"),
        sample_inputs=_mean_dim_samples,
        ref=_ref_mean,
        dtypes=FLOATS + INTS + LOWP,
        result_dtype=dtype_kwarg(same),
        tol=LOWP_TOL_LOOSE,
    )
)


def _ref_var(x: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False) -> Any:
    ddof = 1 if correction is None else correction
    return np.var(np.asarray(x, np.float64), axis=_axis(dim), ddof=ddof, keepdims=keepdim)


def _var_correction_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng)  # noqa: E731
    yield S("all", x((3, 4)))
    yield S("dim1", x((3, 4)), 1)
    yield S("correction0", x((3, 4)), 1, correction=0)
    yield S("dim_list_keepdim", x((2, 3, 4)), [0, 2], keepdim=True)
    yield S("dim_none_correction2", x((3, 4)), None, correction=2)
    yield S("neg_dim_float_correction", x((3, 4)), -1, correction=0.5)
    yield S("dim_kw", x((5, 3)), dim=0)


add(
    OpInfo(
        "var.correction",
        op=fn("var"),
        method=meth("var"),
        sample_inputs=_var_correction_samples,
        ref=_ref_var,
        dtypes=FLOATS,
    )
)
add(
    OpInfo(
        "std.correction",
        op=fn("std"),
        method=meth("std"),
        sample_inputs=_var_correction_samples,
        ref=lambda *a, **k: np.sqrt(_ref_var(*a, **k)),
        dtypes=FLOATS,
    )
)


def _var_unbiased_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("unbiased", make((3, 4), d, rng), unbiased=True)
    yield S("biased", make((3, 4), d, rng), unbiased=False)
    yield S("biased_0dim", make((), d, rng), unbiased=False)
    yield S("unbiased_1d", make((7,), d, rng), unbiased=True)


def _ref_var_unbiased(x: Any, unbiased: bool = True) -> Any:
    return np.var(np.asarray(x, np.float64), ddof=1 if unbiased else 0)


add(
    OpInfo(
        "var",
        op=fn("var"),
        method=meth("var"),
        sample_inputs=_var_unbiased_samples,
        ref=_ref_var_unbiased,
        dtypes=FLOATS,
    )
)
add(
    OpInfo(
        "std",
        op=fn("std"),
        method=meth("std"),
        sample_inputs=_var_unbiased_samples,
        ref=lambda x, unbiased=True: np.sqrt(_ref_var_unbiased(x, unbiased)),
        dtypes=FLOATS,
    )
)


def _ref_prod(x: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    x = np.asarray(x)
    if dtype is None and x.dtype.kind in "bui":
        dtype = np.int64
    return np.prod(x, axis=dim, keepdims=keepdim, dtype=dtype)


def _prod_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    lo, hi = (-2, 2) if not is_float(d) else (0.5, 1.5)
    x = lambda shape: make(shape, d, rng, lo, hi)  # noqa: E731
    yield S("dim1", x((3, 4)), 1)
    yield S("dim0_keepdim", x((3, 4)), 0, True)
    yield S("neg_dim", x((2, 3, 4)), -2)
    yield S("0dim", x(()), 0)
    yield S("empty_reduced", x((2, 0)), 1)
    yield S("dtype_float64", x((3, 4)), 1, dtype=DT("float64"))


add(
    OpInfo(
        "prod",
        op=fn("prod"),
        method=meth("prod"),
        sample_inputs=_with_dtype_kw(_full_reduce_samples(low=-2, high=2)),
        ref=_ref_prod,
        dtypes=ALL,
        result_dtype=sum_rule,
    )
)
add(
    OpInfo(
        "prod.dim_int",
        op=fn("prod"),
        method=meth("prod"),
        sample_inputs=_prod_dim_samples,
        ref=_ref_prod,
        dtypes=ALL,
        result_dtype=sum_rule,
    )
)


def _amax_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng)  # noqa: E731
    yield S("all_default", x((3, 4)))
    yield S("dim1", x((3, 4)), 1)
    yield S("dim_list_keepdim", x((2, 3, 4)), [0, -1], True)
    yield S("neg_dim_kw", x((2, 3, 4)), dim=-2)
    yield S("0dim", x(()))
    yield S("empty_kept", x((0, 3)), 1)


for _name, _np in (("amax", np.max), ("amin", np.min)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_amax_samples,
            ref=(
                lambda f: lambda x, dim=(), keepdim=False: f(x, axis=_axis(dim), keepdims=keepdim)
            )(_np),
            dtypes=ALL + LOWP,
        )
    )


def _max_all_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((3, 4), d, rng))
    yield S("0dim", make((), d, rng))
    yield S("1d", make((7,), d, rng))


def _max_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # small integers: ties are common, and PyTorch returns the first maximal index
    x = lambda shape: make(shape, d, rng, -2, 2)  # noqa: E731
    yield S("dim1", x((3, 4)), 1)
    yield S("dim0_keepdim", x((3, 4)), 0, True)
    yield S("neg_dim", x((2, 3, 4)), -1)
    yield S("keepdim_kw", x((2, 3, 4)), dim=1, keepdim=True)
    yield S("0dim", x(()), 0)
    yield S("empty_kept", x((0, 3)), 1)


for _name, _np, _arg in (("max", np.max, np.argmax), ("min", np.min, np.argmin)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_max_all_samples,
            ref=_np,
            dtypes=ALL + LOWP,
        )
    )
    add(
        OpInfo(
            f"{_name}.dim",
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_max_dim_samples,
            ref=(
                lambda f, g: (
                    lambda x, dim, keepdim=False: (
                        f(x, axis=dim, keepdims=keepdim),
                        g(x, axis=dim, keepdims=keepdim),
                    )
                )
            )(_np, _arg),
            dtypes=ALL,
            result_dtype=lambda s, d: (d, "int64"),
            returns_names=("values", "indices"),
        )
    )


def _argmax_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = lambda shape: make(shape, d, rng, -2, 2)  # noqa: E731
    yield S("flat", x((3, 4)))
    yield S("dim1", x((3, 4)), 1)
    yield S("dim0_keepdim", x((3, 4)), 0, True)
    yield S("neg_dim_kw", x((2, 3, 4)), dim=-1)
    yield S("0dim", x(()))
    yield S("empty_kept", x((0, 3)), 1)


def _ref_argmax(f: Callable[..., Any]) -> Callable[..., Any]:
    def ref(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        x = np.asarray(x)
        if dim is None:
            return np.asarray(f(x.reshape(-1)))
        return f(x, axis=dim, keepdims=keepdim)

    return ref


for _name, _arg in (("argmax", np.argmax), ("argmin", np.argmin)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_argmax_samples,
            ref=_ref_argmax(_arg),
            dtypes=NUMERIC,
            result_dtype=fixed("int64"),
        )
    )


def _ref_logsumexp(x: Any, dim: Any, keepdim: bool = False) -> Any:
    x = np.asarray(x, np.float64)
    axis = _axis(dim)
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=axis if axis is not None else None)


def _logsumexp_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim1", make((3, 4), d, rng), 1)
    yield S("dim_list_keepdim", make((2, 3, 4), d, rng), [0, 2], True)
    yield S("neg_dim", make((2, 3, 4), d, rng), -1)
    yield S("large_values", make((2, 5), d, rng, 50, 60), 1)
    yield S("0dim", make((), d, rng), 0)


add(
    OpInfo(
        "logsumexp",
        op=fn("logsumexp"),
        method=meth("logsumexp"),
        sample_inputs=_logsumexp_samples,
        ref=_ref_logsumexp,
        dtypes=FLOATS,
    )
)


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

# --- linear algebra ---------------------------------------------------------------------------

MATMUL_TOL = {"float32": (1e-5, 1e-5), **LOWP_TOL_LOOSE}


def _mat(shape: tuple[int, ...], d: str, rng: np.random.Generator) -> np.ndarray:
    return make(shape, d, rng, -2, 2)


def _mm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2x3_3x4", _mat((2, 3), d, rng), _mat((3, 4), d, rng))
    yield S("1x1", _mat((1, 1), d, rng), _mat((1, 1), d, rng))
    yield S("empty_inner", _mat((2, 0), d, rng), _mat((0, 3), d, rng))
    yield S("empty_outer", _mat((0, 3), d, rng), _mat((3, 2), d, rng))


def _bmm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("b2", _mat((2, 3, 4), d, rng), _mat((2, 4, 5), d, rng))
    yield S("b1", _mat((1, 2, 2), d, rng), _mat((1, 2, 3), d, rng))
    yield S("empty_batch", _mat((0, 2, 3), d, rng), _mat((0, 3, 4), d, rng))


def _matmul_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("mat_mat", _mat((2, 3), d, rng), _mat((3, 4), d, rng))
    yield S("vec_vec", _mat((3,), d, rng), _mat((3,), d, rng))
    yield S("vec_mat", _mat((3,), d, rng), _mat((3, 4), d, rng))
    yield S("mat_vec", _mat((2, 3), d, rng), _mat((3,), d, rng))
    yield S("batched_broadcast", _mat((2, 1, 3, 4), d, rng), _mat((5, 4, 2), d, rng))
    yield S("batched_vec", _mat((2, 3, 4), d, rng), _mat((4,), d, rng))
    yield S("vec_batched", _mat((3,), d, rng), _mat((2, 3, 4), d, rng))
    yield S("empty", _mat((0, 3), d, rng), _mat((3, 2), d, rng))


def _np_matmul(a: Any, b: Any) -> Any:
    if np.asarray(a).dtype.kind == "f":
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.matmul(a, b)


add(
    OpInfo(
        "mm",
        op=fn("mm"),
        method=meth("mm"),
        sample_inputs=_mm_samples,
        ref=_np_matmul,
        dtypes=NUMERIC + LOWP,
        tol=MATMUL_TOL,
    )
)
add(
    OpInfo(
        "bmm",
        op=fn("bmm"),
        method=meth("bmm"),
        sample_inputs=_bmm_samples,
        ref=_np_matmul,
        dtypes=NUMERIC,
        tol=MATMUL_TOL,
    )
)
add(
    OpInfo(
        "matmul",
        op=fn("matmul"),
        method=meth("matmul"),
        sample_inputs=_matmul_samples,
        ref=_np_matmul,
        dtypes=NUMERIC + LOWP,
        tol=MATMUL_TOL,
    )
)


def _ref_addmm(c: Any, a: Any, b: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    prod = _np_matmul(a, b)
    return alpha * prod if beta == 0 else beta * np.asarray(c) + alpha * prod


def _addmm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    al, be = (2, 3) if is_int(d) else (0.5, 2.0)
    yield S("full_self", _mat((2, 4), d, rng), _mat((2, 3), d, rng), _mat((3, 4), d, rng))
    yield S("broadcast_self", _mat((4,), d, rng), _mat((2, 3), d, rng), _mat((3, 4), d, rng))
    yield S(
        "alpha_beta",
        _mat((2, 4), d, rng),
        _mat((2, 3), d, rng),
        _mat((3, 4), d, rng),
        beta=be,
        alpha=al,
    )
    yield S("beta0", _mat((1, 4), d, rng), _mat((2, 3), d, rng), _mat((3, 4), d, rng), beta=0)
    yield S("empty_inner", _mat((2, 4), d, rng), _mat((2, 0), d, rng), _mat((0, 4), d, rng))


add(
    OpInfo(
        "addmm",
        op=fn("addmm"),
        method=meth("addmm"),
        sample_inputs=_addmm_samples,
        ref=_ref_addmm,
        dtypes=NUMERIC,
        tol=MATMUL_TOL,
    )
)


def _ref_linear(x: Any, w: Any, bias: Any = None) -> Any:
    out = _np_matmul(x, np.swapaxes(w, -1, -2))
    return out if bias is None else out + bias


def _linear_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("bias", _mat((2, 3), d, rng), _mat((4, 3), d, rng), _mat((4,), d, rng))
    yield S("no_bias", _mat((2, 3), d, rng), _mat((4, 3), d, rng))
    yield S("bias_none_kw", _mat((2, 3), d, rng), _mat((4, 3), d, rng), bias=None)
    yield S("batched", _mat((5, 2, 3), d, rng), _mat((4, 3), d, rng), _mat((4,), d, rng))
    yield S("vector_input", _mat((3,), d, rng), _mat((4, 3), d, rng), _mat((4,), d, rng))


add(
    OpInfo(
        "linear",
        op=fn("linear"),
        sample_inputs=_linear_samples,
        ref=_ref_linear,
        dtypes=FLOATS + LOWP,
        tol=MATMUL_TOL,
    )
)

# --- views and shape --------------------------------------------------------------------------
# Oracles of view ops return numpy views of their input, so the harness can write through
# both and compare the bases.

VIEW_DTYPES = FLOATS + INTS + BOOL


def _view_op(
    name: str,
    samples: Any,
    ref: Callable[..., Any],
    *,
    function: bool = True,
    method: bool = True,
    view_write: str = "view",
    dtypes: tuple[str, ...] = VIEW_DTYPES,
) -> None:
    add(
        OpInfo(
            name,
            op=fn(name.split(".")[0]) if function else meth(name.split(".")[0]),
            method=meth(name.split(".")[0]) if (function and method) else None,
            sample_inputs=samples,
            ref=ref,
            dtypes=dtypes,
            kind="view",
            view_write=view_write,
        )
    )


def _t_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((2, 3), d, rng))
    yield S("1d", make((4,), d, rng))
    yield S("0dim", make((), d, rng))
    yield S("empty", make((0, 3), d, rng))


_view_op("t", _t_samples, lambda x: x.T)


def _transpose_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("0_1", make((2, 3), d, rng), 0, 1)
    yield S("3d_0_2", make((2, 3, 4), d, rng), 0, 2)
    yield S("neg_dims", make((2, 3, 4), d, rng), -1, 0)
    yield S("same_dim", make((2, 3), d, rng), 1, 1)
    yield S("0dim", make((), d, rng), 0, -1)


_view_op(
    "transpose.int",
    _transpose_samples,
    lambda x, d0, d1: np.swapaxes(x, d0, d1) if x.ndim else x[...],
)


def _permute_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("3d", make((2, 3, 4), d, rng), [2, 0, 1])
    yield S("neg_dims", make((2, 3, 4), d, rng), [-1, 0, 1])
    yield S("identity", make((2, 3), d, rng), [0, 1])
    yield S("0dim", make((), d, rng), [])
    yield S("empty", make((2, 0), d, rng), [1, 0])


_view_op("permute", _permute_samples, lambda x, dims: np.transpose(x, dims))


def _reshape_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d_to_2d", make((2, 3), d, rng), [3, 2])
    yield S("infer", make((2, 3, 4), d, rng), [-1, 4])
    yield S("flat", make((2, 3), d, rng), [-1])
    yield S("0dim_to_1", make((), d, rng), [1])
    yield S("1_to_0dim", make((1,), d, rng), [])
    yield S("empty", make((2, 0), d, rng), [0, 5])
    yield S("tuple_shape", make((6,), d, rng), (2, 3))


_view_op("view", _reshape_samples, lambda x, size: np.reshape(x, size), function=False)
_view_op("reshape", _reshape_samples, lambda x, shape: np.reshape(x, shape))


def _unsqueeze_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((2, 3), d, rng), 0)
    yield S("dim_last", make((2, 3), d, rng), 2)
    yield S("neg_dim", make((2, 3), d, rng), -1)
    yield S("neg_dim_first", make((2, 3), d, rng), -3)
    yield S("0dim", make((), d, rng), 0)
    yield S("empty", make((0,), d, rng), 1)


_view_op(
    "unsqueeze",
    _unsqueeze_samples,
    lambda x, dim: np.expand_dims(x, dim if dim >= 0 else dim + x.ndim + 1),
)


def _squeeze_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("middle", make((3, 1, 2), d, rng))
    yield S("all_ones", make((1, 1), d, rng))
    yield S("none_to_squeeze", make((2, 3), d, rng))
    yield S("0dim", make((), d, rng))
    yield S("empty", make((1, 0), d, rng))


_view_op("squeeze", _squeeze_samples, lambda x: np.squeeze(x))


def _squeeze_dim_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("size1", make((3, 1, 2), d, rng), 1)
    yield S("not_size1_noop", make((3, 1, 2), d, rng), 0)
    yield S("neg_dim", make((3, 2, 1), d, rng), -1)
    yield S("0dim", make((), d, rng), 0)


def _ref_squeeze_dim(x: Any, dim: int) -> Any:
    if x.ndim == 0:
        return x[...]
    return np.squeeze(x, axis=dim) if x.shape[dim] == 1 else x[...]


_view_op("squeeze.dim", _squeeze_dim_samples, _ref_squeeze_dim)


def _expand_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("column", make((3, 1), d, rng), [3, 4])
    yield S("keep_minus1", make((3, 1), d, rng), [-1, 4])
    yield S("new_leading", make((3,), d, rng), [2, 3])
    yield S("0dim", make((), d, rng), [2, 2])
    yield S("same", make((2, 3), d, rng), [2, 3])
    yield S("to_empty", make((1, 3), d, rng), [0, 3])


def _ref_expand(x: Any, size: list[int], implicit: bool = False) -> Any:
    lead = len(size) - x.ndim
    shape = [x.shape[i - lead] if s == -1 else s for i, s in enumerate(size)]
    return np.broadcast_to(x, shape)


_view_op("expand", _expand_samples, _ref_expand, function=False, view_write="base")


def _flatten_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((2, 3, 4), d, rng))
    yield S("start1", make((2, 3, 4), d, rng), 1)
    yield S("start0_end1", make((2, 3, 4), d, rng), 0, 1)
    yield S("neg_dims_kw", make((2, 3, 4, 5), d, rng), start_dim=-3, end_dim=-2)
    yield S("0dim", make((), d, rng))
    yield S("1d", make((5,), d, rng))


def _ref_flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return (
        x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1 :])
        if x.size
        else x.reshape(x.shape[:s] + (int(np.prod(x.shape[s : e + 1])),) + x.shape[e + 1 :])
    )


_view_op("flatten.using_ints", _flatten_samples, _ref_flatten)


def _select_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((2, 3), d, rng), 0, 1)
    yield S("dim1_neg_index", make((2, 3), d, rng), 1, -1)
    yield S("neg_dim", make((2, 3, 4), d, rng), -1, 2)
    yield S("to_0dim", make((4,), d, rng), 0, 3)


def _ref_select(x: Any, dim: int, index: int) -> Any:
    dim = dim % x.ndim
    return x[(slice(None),) * dim + (index, Ellipsis)]  # Ellipsis keeps a 0-dim view


_view_op("select.int", _select_samples, _ref_select)


def _slice_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", make((5, 3), d, rng), 0, 1, 3)
    yield S("step2", make((3, 6), d, rng), 1, None, None, 2)
    yield S("end_beyond", make((5,), d, rng), 0, 2, 100)
    yield S("neg_start", make((5, 2), d, rng), 0, -2)
    yield S("start_gt_end_empty", make((5,), d, rng), 0, 4, 2)
    yield S("kw", make((4, 5), d, rng), dim=-1, start=1, end=4, step=2)
    yield S("defaults", make((3,), d, rng))


def _ref_slice(x: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Any:
    dim = dim % x.ndim
    return x[(slice(None),) * dim + (slice(start, end, step),)]


_view_op("slice.Tensor", _slice_samples, _ref_slice, method=False)


def _split_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("uneven", make((5, 2), d, rng), 2)
    yield S("even_dim1", make((2, 6), d, rng), 3, 1)
    yield S("larger_than_dim", make((3,), d, rng), 5)
    yield S("neg_dim_kw", make((2, 5), d, rng), 2, dim=-1)


def _ref_split(x: Any, split_size: int, dim: int = 0) -> list[Any]:
    n = x.shape[dim]
    cuts = list(range(split_size, n, split_size))
    return np.split(x, cuts, axis=dim)


_view_op("split.Tensor", _split_samples, _ref_split)


def _split_sizes_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("1_4", make((5, 2), d, rng), [1, 4])
    yield S("with_zero", make((5,), d, rng), [2, 0, 3])
    yield S("neg_dim", make((2, 6), d, rng), [3, 1, 2], -1)
    yield S("single", make((3,), d, rng), [3])


def _ref_split_sizes(x: Any, split_sizes: list[int], dim: int = 0) -> list[Any]:
    return np.split(x, list(np.cumsum(split_sizes)[:-1]), axis=dim)


_view_op("split_with_sizes", _split_sizes_samples, _ref_split_sizes)


def _chunk_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("5_into_3", make((5,), d, rng), 3)
    yield S("6_into_4_gives_3", make((6,), d, rng), 4)
    yield S("dim1", make((2, 6), d, rng), 2, 1)
    yield S("neg_dim", make((2, 3), d, rng), 3, -1)
    yield S("more_chunks_than_elements", make((2,), d, rng), 5)


def _ref_chunk(x: Any, chunks: int, dim: int = 0) -> list[Any]:
    n = x.shape[dim]
    size = -(-n // chunks)  # ceil: chunk may return fewer than `chunks` pieces
    return _ref_split(x, max(size, 1), dim)


_view_op("chunk", _chunk_samples, _ref_chunk)


def _cat_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", [make((2, 3), d, rng), make((1, 3), d, rng)])
    yield S("dim1", [make((2, 3), d, rng), make((2, 2), d, rng)], 1)
    yield S("neg_dim_three", [make((2, 1), d, rng), make((2, 2), d, rng), make((2, 3), d, rng)], -1)
    yield S("with_empty", [make((0, 3), d, rng), make((2, 3), d, rng)], dim=0)
    yield S("single", [make((4,), d, rng)])
    if d == "float32":
        yield S("promote_int64_float32", [make((2,), "int64", rng), make((3,), d, rng)])


add(
    OpInfo(
        "cat",
        op=fn("cat"),
        sample_inputs=_cat_samples,
        ref=lambda ts, dim=0: np.concatenate(ts, axis=dim),
        dtypes=ALL,
        result_dtype=lambda s, d: result_type(*s.args[0]),
    )
)


def _stack_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim0", [make((2, 3), d, rng), make((2, 3), d, rng)])
    yield S("dim1", [make((2, 3), d, rng), make((2, 3), d, rng), make((2, 3), d, rng)], 1)
    yield S("neg_dim", [make((2, 3), d, rng), make((2, 3), d, rng)], dim=-1)
    yield S("0dim", [make((), d, rng), make((), d, rng)])
    yield S("empty", [make((0,), d, rng), make((0,), d, rng)], 1)


add(
    OpInfo(
        "stack",
        op=fn("stack"),
        sample_inputs=_stack_samples,
        ref=lambda ts, dim=0: np.stack(ts, axis=dim),
        dtypes=ALL,
        result_dtype=lambda s, d: result_type(*s.args[0]),
    )
)

# --- indexing ---------------------------------------------------------------------------------


def _np_index(indices: list[Any]) -> tuple[Any, ...]:
    return tuple(slice(None) if i is None else i for i in indices)


def _idx(values: list[Any]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _index_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = make((4, 3), d, rng)
    yield S("int_1d", x, [_idx([0, 2, 3])])
    yield S("int_2d_index", make((4, 3), d, rng), [_idx([[0, 1], [3, 3]])])
    yield S("negative", make((4, 3), d, rng), [_idx([-1, 0])])
    yield S("bool_mask_full", make((4, 3), d, rng), [make((4, 3), "bool", rng)])
    yield S("bool_mask_dim0", make((4, 3), d, rng), [np.array([True, False, True, False])])
    yield S("none_then_index", make((4, 3), d, rng), [None, _idx([2, 0])])
    yield S("two_indices_broadcast", make((4, 3), d, rng), [_idx([[0], [3]]), _idx([0, 2])])
    yield S("empty_index", make((4, 3), d, rng), [np.zeros((0,), np.int64)])
    yield S("0dim_index", make((4, 3), d, rng), [np.array(2, dtype=np.int64)])


add(
    OpInfo(
        "index.Tensor",
        op=fn("index"),
        method=meth("index"),
        sample_inputs=_index_samples,
        ref=lambda x, indices: x[_np_index(indices)],
        dtypes=ALL,
    )
)


def _ref_index_put(x: Any, indices: list[Any], values: Any, accumulate: bool = False) -> Any:
    out = np.array(x, copy=True)
    idx = _np_index(indices)
    if accumulate:
        if out.dtype == np.bool_:
            np.logical_or.at(out, idx, values)
        else:
            np.add.at(out, idx, values)
    else:
        out[idx] = values
    return out


def _index_put_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("int_1d", make((4, 3), d, rng), [_idx([0, 2])], make((2, 3), d, rng))
    yield S("broadcast_values", make((4, 3), d, rng), [_idx([1, 3])], make((3,), d, rng))
    yield S(
        "bool_mask_0dim_value", make((4, 3), d, rng), [make((4, 3), "bool", rng)], make((), d, rng)
    )
    yield S("two_indices", make((4, 3), d, rng), [_idx([0, 3]), _idx([2, 1])], make((2,), d, rng))
    yield S("none_then_index", make((4, 3), d, rng), [None, _idx([0, 2])], make((4, 2), d, rng))
    if d != "bool":
        yield S(
            "accumulate_duplicates",
            make((4, 3), d, rng),
            [_idx([1, 1, 3])],
            make((3, 3), d, rng),
            True,
        )
        yield S(
            "accumulate_kw",
            make((5,), d, rng),
            [_idx([0, 0, 0, 4])],
            make((4,), d, rng),
            accumulate=True,
        )


add(
    OpInfo(
        "index_put_",
        op=fn("index_put_"),
        method=meth("index_put_"),
        sample_inputs=_index_put_samples,
        ref=_ref_index_put,
        dtypes=ALL,
        kind="inplace",
    )
)
add(
    OpInfo(
        "index_put",
        op=fn("index_put"),
        method=meth("index_put"),
        sample_inputs=_index_put_samples,
        ref=_ref_index_put,
        dtypes=ALL,
    )
)


def _gather_grid(index: np.ndarray, dim: int) -> tuple[Any, ...]:
    grid = list(np.indices(index.shape, sparse=True)) if index.ndim else []
    if index.ndim:
        grid[dim] = index
        return tuple(grid)
    return (index,)


def _ref_gather(x: Any, dim: int, index: Any, *, sparse_grad: bool = False) -> Any:
    if x.ndim == 0:
        return x[...] if index.ndim == 0 else np.full(index.shape, x)
    return x[_gather_grid(index, dim % x.ndim)]


def _gather_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("dim1", make((3, 4), d, rng), 1, rng.integers(0, 4, (3, 2)))
    yield S("dim0", make((3, 4), d, rng), 0, rng.integers(0, 3, (2, 4)))
    yield S("smaller_index", make((3, 4), d, rng), 1, rng.integers(0, 4, (2, 3)))
    yield S("neg_dim", make((2, 3, 4), d, rng), -1, rng.integers(0, 4, (2, 3, 5)))
    yield S("empty_index", make((3, 4), d, rng), 1, np.zeros((3, 0), np.int64))


add(
    OpInfo(
        "gather",
        op=fn("gather"),
        method=meth("gather"),
        sample_inputs=_gather_samples,
        ref=_ref_gather,
        dtypes=ALL,
    )
)


def _ref_scatter_add(x: Any, dim: int, index: Any, src: Any) -> Any:
    out = np.array(x, copy=True)
    src_part = src[tuple(slice(0, s) for s in index.shape)]
    np.add.at(out, _gather_grid(index, dim % x.ndim), src_part)
    return out


def _scatter_add_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S(
        "dim0_duplicates", make((3, 4), d, rng), 0, rng.integers(0, 3, (5, 4)), make((5, 4), d, rng)
    )
    yield S("dim1", make((3, 4), d, rng), 1, rng.integers(0, 4, (3, 6)), make((3, 6), d, rng))
    yield S("src_larger", make((3, 4), d, rng), 1, rng.integers(0, 4, (2, 2)), make((3, 5), d, rng))
    yield S("neg_dim", make((2, 3), d, rng), -1, rng.integers(0, 3, (2, 3)), make((2, 3), d, rng))


add(
    OpInfo(
        "scatter_add",
        op=fn("scatter_add"),
        method=meth("scatter_add"),
        sample_inputs=_scatter_add_samples,
        ref=_ref_scatter_add,
        dtypes=NUMERIC,
    )
)


def _masked_fill_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    v = scalar_for(d)
    yield S("same_shape", make((3, 4), d, rng), make((3, 4), "bool", rng), v)
    yield S("broadcast_mask", make((3, 4), d, rng), make((3, 1), "bool", rng), v)
    yield S("0dim_mask", make((3, 4), d, rng), np.array(True), v)
    yield S("0dim", make((), d, rng), np.array(False), v)
    yield S("empty", make((0, 4), d, rng), make((0, 4), "bool", rng), v)
    if is_float(d):
        yield S("int_value", make((3,), d, rng), make((3,), "bool", rng), -1)


add(
    OpInfo(
        "masked_fill.Scalar",
        op=fn("masked_fill"),
        method=meth("masked_fill"),
        sample_inputs=_masked_fill_samples,
        ref=lambda x, mask, value: np.where(mask, value, x),
        dtypes=ALL,
    )
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
    if d == "float32":
        yield S("infer_int", 5)
        yield S("infer_float", 2.5)


def _arange_start_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("1_10_3", 1, 10, 3, dtype=DT(d))
    yield S("5_0_neg1", 5, 0, -1, dtype=DT(d))
    yield S("default_step", 2, 6, dtype=DT(d))
    yield S("empty", 3, 3, dtype=DT(d))
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
    return np.arange(start, end, step, dtype=np.float64)


def _arange_start_ref(start: Any, end: Any, step: Any = 1, *, dtype: Any = None) -> Any:
    return _ref_arange(start, end, step)


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
) -> None:
    add(
        OpInfo(
            name,
            op=fn(public or name.split(".")[0]),
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

# --- copies and conversion --------------------------------------------------------------------


def _to_copy_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for target in ("float32", "float64", "int64", "bool"):
        yield S(f"to_{target}", make((3, 4), d, rng, -2.7, 2.7), dtype=DT(target))
    yield S("no_dtype", make((2, 3), d, rng))
    yield S("0dim_to_float64", make((), d, rng), dtype=DT("float64"))
    yield S("empty_to_int64", make((0, 2), d, rng), dtype=DT("int64"))
    if is_float(d):
        yield S("to_float16", make((3,), d, rng), dtype=DT("float16"))


def _ref_to_copy(x: Any, *, dtype: Any = None) -> Any:
    x = np.asarray(x)
    if dtype is None:
        return x.copy()
    return x.astype(dtype)  # float -> int truncates toward zero, nonzero -> True


add(
    OpInfo(
        "_to_copy",
        op=fn("_to_copy"),
        sample_inputs=_to_copy_samples,
        ref=_ref_to_copy,
        dtypes=ALL + LOWP,
        result_dtype=dtype_kwarg(same),
    )
)
add(
    OpInfo(
        "clone",
        op=fn("clone"),
        method=meth("clone"),
        sample_inputs=unary_samples(),
        ref=lambda x: np.array(x, copy=True),
        dtypes=ALL + LOWP,
    )
)
add(
    OpInfo(
        "contiguous",
        op=meth("contiguous"),
        sample_inputs=unary_samples(),
        ref=lambda x: x,
        dtypes=ALL,
    )
)
add(
    OpInfo(
        "detach",
        op=fn("detach"),
        method=meth("detach"),
        sample_inputs=unary_samples(),
        ref=lambda x: x,
        dtypes=ALL,
        kind="view",
    )
)


def _copy_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same_shape", make((2, 3), d, rng), make((2, 3), d, rng))
    yield S("broadcast_src", make((2, 3), d, rng), make((1, 3), d, rng))
    yield S("0dim_src", make((2, 3), d, rng), make((), d, rng))
    yield S("0dim", make((), d, rng), make((), d, rng))
    yield S("empty", make((0, 3), d, rng), make((0, 3), d, rng))
    other = "int64" if d != "int64" else "float64"
    yield S(f"from_{other}", make((2, 3), d, rng), make((2, 3), other, rng, -2.7, 2.7))
    yield S("non_blocking_kw", make((2,), d, rng), make((2,), d, rng), non_blocking=False)


add(
    OpInfo(
        "copy_",
        op=meth("copy_"),
        sample_inputs=_copy_samples,
        ref=lambda x, src, non_blocking=False: np.broadcast_to(
            np.asarray(src).astype(x.dtype), x.shape
        ),
        dtypes=ALL,
        kind="inplace",
    )
)


def _fill_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    v = scalar_for(d)
    yield S("2d", make((2, 3), d, rng), v)
    yield S("0dim", make((), d, rng), v)
    yield S("empty", make((0,), d, rng), v)
    if is_float(d):
        yield S("int_value", make((3,), d, rng), 7)
    if is_int(d):
        yield S("negative", make((3,), d, rng), -4)


add(
    OpInfo(
        "fill_.Scalar",
        op=fn("fill_"),
        method=meth("fill_"),
        sample_inputs=_fill_samples,
        ref=lambda x, v: np.full(x.shape, v, x.dtype),
        dtypes=ALL + LOWP,
        kind="inplace",
    )
)
add(
    OpInfo(
        "zero_",
        op=fn("zero_"),
        method=meth("zero_"),
        sample_inputs=unary_samples(),
        ref=lambda x: np.zeros(x.shape, x.dtype),
        dtypes=ALL,
        kind="inplace",
    )
)


def _local_scalar_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("0dim", make((), d, rng))
    yield S("1d_one_element", make((1,), d, rng))
    yield S("2d_one_element", make((1, 1), d, rng))


def _compare_local_scalar(got: Any, expected: Any, s: SampleInput, d: str) -> None:
    want_type = bool if d == "bool" else int if is_int(d) else float
    assert type(got) is want_type, (
        f"expected a Python {want_type.__name__}, got {type(got).__name__}"
    )
    if want_type is float:
        assert math.isclose(got, float(expected), rel_tol=1e-6), (got, expected)
    else:
        assert got == expected.item(), (got, expected)


add(
    OpInfo(
        "_local_scalar_dense",
        op=fn("_local_scalar_dense"),
        sample_inputs=_local_scalar_samples,
        ref=lambda x: np.asarray(x).reshape(()),
        dtypes=ALL,
        compare=_compare_local_scalar,
    )
)

# --- neural network functions -----------------------------------------------------------------

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


def _softmax_backward_samples(log: bool) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
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
    w = np.ones(x.shape[-1] if x.ndim == 1 else x.shape[1]) if weight is None else np.asarray(weight, np.float64)
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    wt = w[safe] * keep
    coef = -wt * (g / np.sum(wt) if reduction == "mean" else g)
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
        "weight_none", make((5,), d, rng), x, _targets((5,), 4, rng), make((4,), d, rng, 0.1, 2), "none"
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
        tol={"float32": (1e-5, 1e-5), **LOWP_TOL_LOOSE},
    )
)

OPS_BY_NAME: dict[str, OpInfo] = {info.name: info for info in OP_DB}
assert len(OPS_BY_NAME) == len(OP_DB), "duplicate OpInfo names"
