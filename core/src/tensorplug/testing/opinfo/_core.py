"""The OpInfo machinery: dtypes, PyTorch promotion, samples, result dtype rules, the registry."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
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
    "complex64": 3,  # in samples and results only (an OpInfo's dtypes are real)
    "complex128": 3,
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
    "complex64": 8,
    "complex128": 16,
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
    returned), "mutating" (every argument the schema marks ``(a!)`` is written: ``ref`` returns
    their values, list arguments flattened), "out" (``out=`` is written and returned), "view" (shares memory with the first
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
    # its kernel calls the backend's special-function namespace (array_backend.register's
    # special=): skipped on a backend registered without one
    needs_special: bool = False
    # a view only where the array library has strided views (Note [Complex views] in
    # array_backend/_pointwise/_complex.py): elsewhere a copy, its values checked, not writes
    strided_view: bool = False
    # an op of strided backends only (as_strided: Note [Strided layout] in _strides.py):
    # skipped on a backend whose arrays are not strided, where it raises
    needs_strides: bool = False

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
    """``tp.<name>`` (``"linalg.vector_norm"``: ``tp.linalg.vector_norm``), looked up at call
    time."""

    def call(*args: Any, **kwargs: Any) -> Any:
        target: Any = tp
        for part in name.split("."):
            target = getattr(target, part)
        return target(*args, **kwargs)

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


def alias(op_name: str, of: str, public: str) -> None:
    """Add ``op_name``, an alias of the op ``of`` that is public as ``tp.<public>``: ``of``'s
    samples and oracle under the alias's name (``tensorplug.linalg``/``special`` aliases)."""
    base = next(info for info in OP_DB if info.name == of)
    add(replace(base, name=op_name, op=fn(public), method=None))


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


def add_inplace_of_shape(
    base: OpInfo,
    name: str,
    method_name: str,
    *,
    function: bool = False,
    samples: Callable[[str, np.random.Generator], Iterable[SampleInput]] | None = None,
    ref: Callable[..., Any] | None = None,
) -> None:
    """``name`` as the in-place form of ``base`` where self does not broadcast with the other
    arguments (``addmm_``, ``cumsum_``, the in-place views): the samples (``samples``, else
    base's) whose result (``ref``, else base's) has self's shape and no higher category."""
    reference = ref or base.ref
    assert reference is not None
    source = samples or base.sample_inputs

    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for s in source(d, rng):
            self_ = s.args[0]
            if not isinstance(self_, np.ndarray):
                continue
            if base.kind != "view":  # a view op's result has another shape by design
                args = [np_dtype(a.name) if isinstance(a, DT) else a for a in s.args]
                kw = {k: np_dtype(v.name) if isinstance(v, DT) else v for k, v in s.kwargs.items()}
                if np.shape(reference(*args, **kw)) != self_.shape:
                    continue
            if _CATEGORY[base.result_dtype(s, d)] > _CATEGORY[dtype_name(self_)]:
                continue
            dt = s.kwargs.get("dtype")
            if isinstance(dt, DT) and dt.name != dtype_name(self_):
                continue  # an in-place op computes in self's dtype (cumsum_'s dtype= is self's)
            yield s

    add(
        OpInfo(
            name,
            op=fn(method_name) if function else meth(method_name),
            method=meth(method_name) if function else None,
            sample_inputs=gen,
            ref=reference,
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
