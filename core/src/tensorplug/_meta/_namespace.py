"""A meta array namespace: arrays of a shape and a dtype with no elements (internal).

:data:`xp` follows the array API standard (2023.12) as far as the array kit's kernels use it
(``tensorplug.array_backend``), with numpy's rules for what the standard leaves open (integer
array indexing, Python scalars, ``add.at``): every function computes its result's shape and
dtype and raises what numpy raises for shapes that do not fit, without elements to compute
with. Registered on the ``Meta`` key through ``array_backend.register``, the CPU's kernels then
compute output metadata and raise the CPU's errors (Note [Meta arrays]).

Note [Meta arrays]
~~~~~~~~~~~~~~~~~~
A kernel of the kit reads values for two reasons. It checks its arguments (an index in range,
no zero divisor, probabilities in [0, 1]) through ``bool(xp.any(bad))`` or
``bool(xp.all(ok))``, or the least and the greatest index (``int(xp.min(i))``): on meta
arrays, ``any`` and ``all`` give arrays whose truth is the answer of a check that passes
(``any`` false, ``all`` true), and ``min`` and ``max`` of integers and ``count_nonzero`` read
as 0 (an index in every non-empty dim, no element to take), so the check is skipped, as PyTorch's meta kernels skip value checks. Or a
value decides an output's shape or is the result (``nonzero``, ``count_nonzero`` read back, ``item()``, a mask's elements): every other
read of an element (``int()``, ``float()``, ``bool()`` of other arrays, ``nonzero``,
``unique_*``, a boolean mask index) raises :class:`MetaValueRead`, which the Meta backend
turns into an error naming the op (``tensorplug._meta``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .. import dtypes as _dt

__all__ = ["MetaArray", "MetaValueRead", "xp"]


_F = TypeVar("_F", bound=Callable[..., Any])


class MetaValueRead(Exception):
    """An element of a meta array was read: the computation depends on data it has not."""


_b, _u8, _i64, _f32, _f64 = _dt.bool, _dt.uint8, _dt.int64, _dt.float32, _dt.float64
_c64, _c128 = _dt.complex64, _dt.complex128


def _shape_of(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int):
        shape = (shape,)
    out = tuple(int(n) for n in shape)
    for n in out:
        if n < 0:
            raise ValueError("negative dimensions are not allowed")
    return out


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for j, n in enumerate(s, ndim - len(s)):
            if n != 1:
                if out[j] != 1 and out[j] != n:
                    shown = " ".join(
                        "(" + ",".join(map(str, x)) + ("," if len(x) == 1 else "") + ")"
                        for x in shapes
                    )
                    raise ValueError(
                        f"operands could not be broadcast together with shapes {shown}"
                    )
                out[j] = n
    return tuple(out)


def _weak(a: MetaArray, v: Any) -> _dt.dtype:
    """The result dtype of ``a`` with Python scalar ``v`` (numpy >= 2: scalars are weak)."""
    d = a.dtype
    if isinstance(v, bool):
        return d
    if isinstance(v, int):
        return _i64 if d.kind == "b" else d
    if isinstance(v, float):
        return _f64 if d.kind in "biu" else d
    if isinstance(v, complex):
        if d.kind == "c":
            return d
        return _c64 if d is _f32 or d.itemsize < 4 and d.kind == "f" else _c128
    raise TypeError(f"unsupported operand type {type(v).__name__} for a meta array")


def _dtype(x: Any) -> _dt.dtype:
    return x.dtype if isinstance(x, MetaArray) else _dt.result_type(x)


def _promote(*xs: Any) -> _dt.dtype:
    arrays = [x for x in xs if isinstance(x, MetaArray)]
    if not arrays:
        return _dt.result_type(*xs)
    d = arrays[0].dtype
    for a in arrays[1:]:
        d = _dt.promote_types(d, a.dtype)
    probe = MetaArray((), d)
    for x in xs:
        if not isinstance(x, MetaArray):
            d = _weak(probe, x)
            probe = MetaArray((), d)
    return d


def _shp(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, MetaArray) else ()


class MetaArray:
    """An array with a shape and a dtype and no elements."""

    __slots__ = ("shape", "dtype", "ndim", "size", "check")

    def __init__(self, shape: tuple[int, ...], dtype: _dt.dtype, check: bool | int | None = None):
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)
        self.size = math.prod(shape)
        self.check = check  # the truth of a passed value check (Note [Meta arrays])

    def __repr__(self) -> str:
        return f"MetaArray({self.shape}, {self.dtype.name})"

    def __array_namespace__(self, api_version: str | None = None) -> Any:
        return xp

    @property
    def device(self) -> str:
        return "meta"

    @property
    def T(self) -> MetaArray:  # noqa: N802 - the standard's name
        return MetaArray(self.shape[::-1], self.dtype)

    @property
    def mT(self) -> MetaArray:  # noqa: N802
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return MetaArray(self.shape[:-2] + self.shape[:-3:-1], self.dtype)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # --- values: none (Note [Meta arrays]) -------------------------------------------------

    def __bool__(self) -> bool:
        if type(self.check) is bool:
            return self.check
        raise MetaValueRead("bool()")

    def __int__(self) -> int:
        if type(self.check) is int:
            return self.check
        raise MetaValueRead("int()")

    def __float__(self) -> float:
        raise MetaValueRead("float()")

    def __complex__(self) -> complex:
        raise MetaValueRead("complex()")

    def __index__(self) -> int:
        raise MetaValueRead("an index")

    def item(self) -> Any:
        raise MetaValueRead("item()")

    def tolist(self) -> Any:
        raise MetaValueRead("tolist()")

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return iter([MetaArray(self.shape[1:], self.dtype) for _ in range(self.shape[0])])

    def astype(self, dtype: _dt.dtype, copy: bool = True) -> MetaArray:
        return MetaArray(self.shape, dtype)

    def reshape(self, *shape: Any) -> MetaArray:
        return reshape(
            self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        )

    def copy(self) -> MetaArray:
        return MetaArray(self.shape, self.dtype)

    # --- indexing ------------------------------------------------------------------------

    def __getitem__(self, idx: Any) -> MetaArray:
        return MetaArray(_index_shape(self.shape, idx), self.dtype)

    def __setitem__(self, idx: Any, value: Any) -> None:
        target = _index_shape(self.shape, idx)
        vshape = _shp(value)
        while len(vshape) > len(target) and vshape[0] == 1:  # numpy drops leading 1s here
            vshape = vshape[1:]
        if _broadcast(vshape, target) != target:
            raise ValueError(
                f"could not broadcast input array from shape {vshape} into shape {target}"
            )

    # --- operators -----------------------------------------------------------------------

    def __add__(self, o: Any) -> MetaArray:
        return _binary(self, o)

    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __add__
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __add__
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __add__
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __add__

    def __iadd__(self, o: Any) -> MetaArray:
        _inplace(self, o)
        return self

    __isub__ = __imul__ = __itruediv__ = __ifloordiv__ = __imod__ = __ipow__ = __iadd__
    __iand__ = __ior__ = __ixor__ = __iadd__

    def __matmul__(self, o: Any) -> MetaArray:
        return matmul(self, o)

    def __rmatmul__(self, o: Any) -> MetaArray:
        return matmul(o, self)

    def __lt__(self, o: Any) -> MetaArray:
        return _compare(self, o)

    __le__ = __gt__ = __ge__ = __lt__

    def __eq__(self, o: Any) -> MetaArray:  # type: ignore[override]
        return _compare(self, o)

    def __ne__(self, o: Any) -> MetaArray:  # type: ignore[override]
        return _compare(self, o)

    __hash__ = object.__hash__

    def __neg__(self) -> MetaArray:
        return MetaArray(self.shape, self.dtype)

    __pos__ = __abs__ = __invert__ = __neg__


def _binary(a: Any, b: Any) -> MetaArray:
    return MetaArray(_broadcast(_shp(a), _shp(b)), _promote(a, b))


def _compare(a: Any, b: Any) -> MetaArray:
    return MetaArray(_broadcast(_shp(a), _shp(b)), _b)


def _inplace(a: MetaArray, b: Any) -> None:
    if _broadcast(a.shape, _shp(b)) != a.shape:
        raise ValueError(
            f"non-broadcastable output operand with shape {a.shape} doesn't match the "
            f"broadcast shape {_broadcast(a.shape, _shp(b))}"
        )


def _index_shape(shape: tuple[int, ...], idx: Any) -> tuple[int, ...]:
    """The shape of ``x[idx]`` for ``x`` of ``shape``, by numpy's rules."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    items: list[Any] = []
    for e in idx:
        if isinstance(e, MetaArray) and e.dtype is _b:
            raise MetaValueRead("a boolean mask index")
        if isinstance(e, (list,)):
            e = asarray(e)
        items.append(e)
    used = sum(1 for e in items if e is not None and e is not Ellipsis)
    if used > len(shape):
        raise IndexError(
            f"too many indices for array: array is {len(shape)}-dimensional, but {used} were "
            "indexed"
        )
    if any(e is Ellipsis for e in items):
        at = next(j for j, e in enumerate(items) if e is Ellipsis)
        items = items[:at] + [slice(None)] * (len(shape) - used) + items[at + 1 :]
    else:
        items += [slice(None)] * (len(shape) - used)
    out: list[Any] = []  # sizes, or "A" where the advanced indices' dims go
    adv: list[tuple[int, ...]] = []
    adv_pos: list[int] = []
    dim = 0
    for e in items:
        if e is None:
            out.append(1)
            continue
        n = shape[dim]
        if isinstance(e, slice):
            out.append(len(range(*e.indices(n))))
        elif isinstance(e, MetaArray):
            if e.dtype.kind not in "iu":
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            adv.append(e.shape)
            adv_pos.append(len(out))
            out.append("A")
        else:
            i = int(e)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
        dim += 1
    if not adv:
        return tuple(out)
    bshape = _broadcast(*adv)
    together = adv_pos == list(range(adv_pos[0], adv_pos[0] + len(adv_pos)))
    rest = [x for x in out if x != "A"]
    if together:
        first = adv_pos[0]
        before = [x for x in out[:first]]
        after = [x for x in out[first:] if x != "A"]
        return tuple(before) + bshape + tuple(after)
    return bshape + tuple(rest)


class _Namespace:
    """The namespace object (``xp``); its functions are this module's."""

    __array_api_version__ = "2023.12"
    __name__ = "tensorplug.meta"

    def __repr__(self) -> str:
        return "<meta array namespace>"


xp: Any = _Namespace()

for _d in _dt.all_dtypes():
    setattr(xp, _d.name, _d)


def _api(fn: _F) -> _F:
    setattr(xp, fn.__name__, fn)
    return fn


def _as_dtype(dtype: Any, default: _dt.dtype) -> _dt.dtype:
    if dtype is None:
        return default
    if isinstance(dtype, _dt.dtype):
        return dtype
    if dtype is bool:
        return _b
    if dtype is int:
        return _i64
    if dtype is float:
        return _f64
    return _dt.from_name(str(getattr(dtype, "name", dtype)))


# --- creation ---------------------------------------------------------------------------------


@_api
def asarray(obj: Any, dtype: Any = None, device: Any = None, copy: bool | None = None) -> MetaArray:
    if isinstance(obj, MetaArray):
        return MetaArray(obj.shape, _as_dtype(dtype, obj.dtype))
    if isinstance(obj, (bool, int, float, complex)):
        return MetaArray((), _as_dtype(dtype, _scalar_default(obj)))
    if isinstance(obj, (list, tuple)):
        shape, kinds = _nested(obj)
        default = _b
        for k, d in (("c", _c128), ("f", _f64), ("i", _i64)):
            if k in kinds:
                default = d
                break
        return MetaArray(shape, _as_dtype(dtype, default))
    if getattr(obj, "shape", None) is not None:  # a host array (numpy)
        d = dtype if dtype is not None else obj.dtype
        return MetaArray(tuple(int(n) for n in obj.shape), _as_dtype(d, _f64))
    raise TypeError(f"cannot make a meta array of {type(obj).__name__}")


def _scalar_default(v: Any) -> _dt.dtype:
    if isinstance(v, bool):
        return _b
    if isinstance(v, int):
        return _i64
    if isinstance(v, float):
        return _f64
    return _c128


def _nested(obj: Any) -> tuple[tuple[int, ...], set[str]]:
    kinds: set[str] = set()
    if not isinstance(obj, (list, tuple)):
        if isinstance(obj, MetaArray):
            kinds.add(obj.dtype.kind)
            return obj.shape, kinds
        kinds.add(
            "b"
            if isinstance(obj, bool)
            else "i"
            if isinstance(obj, int)
            else "f"
            if isinstance(obj, float)
            else "c"
        )
        return (), kinds
    subs = [_nested(x) for x in obj]
    inner = subs[0][0] if subs else ()
    for s, k in subs:
        if s != inner:
            raise ValueError(
                "setting an array element with a sequence. The requested array has an "
                "inhomogeneous shape"
            )
        kinds |= k
    return (len(obj), *inner), kinds


def _creator(default: _dt.dtype) -> Any:
    def make(shape: Any, *, dtype: Any = None, device: Any = None) -> MetaArray:
        return MetaArray(_shape_of(shape), _as_dtype(dtype, default))

    return make


empty = zeros = ones = _creator(_f64)
xp.empty = xp.zeros = xp.ones = empty


@_api
def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> MetaArray:
    return MetaArray(_shape_of(shape), _as_dtype(dtype, _scalar_default(fill_value)))


@_api
def empty_like(x: MetaArray, *, dtype: Any = None, device: Any = None) -> MetaArray:
    return MetaArray(x.shape, _as_dtype(dtype, x.dtype))


xp.zeros_like = xp.ones_like = empty_like


@_api
def full_like(x: MetaArray, fill_value: Any, *, dtype: Any = None, device: Any = None) -> MetaArray:
    return MetaArray(x.shape, _as_dtype(dtype, x.dtype))


@_api
def arange(
    start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None
) -> MetaArray:
    for v in (start, stop, step):
        if isinstance(v, MetaArray):
            raise MetaValueRead("arange bounds")
    if stop is None:
        start, stop = 0, start
    n = max(0, math.ceil((stop - start) / step))
    default = _f64 if any(isinstance(v, float) for v in (start, stop, step)) else _i64
    return MetaArray((n,), _as_dtype(dtype, default))


@_api
def eye(
    n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None
) -> MetaArray:
    return MetaArray((n_rows, n_rows if n_cols is None else n_cols), _as_dtype(dtype, _f64))


def _triangle_indices(lower: bool) -> Callable[..., tuple[MetaArray, MetaArray]]:
    """numpy's ``tril_indices(n, k, m)`` / ``triu_indices``: two index arrays as long as the
    triangle has positions (the kit's ``tril_indices`` uses them where ``xp`` has them)."""

    def fn(n: int, k: int = 0, m: int | None = None) -> tuple[MetaArray, MetaArray]:
        cols = n if m is None else m
        if lower:  # columns 0 .. r + k of row r
            count = sum(min(cols, max(r + k + 1, 0)) for r in range(n))
        else:  # columns r + k .. cols - 1
            count = sum(cols - min(cols, max(r + k, 0)) for r in range(n))
        return MetaArray((count,), _i64), MetaArray((count,), _i64)

    fn.__name__ = "tril_indices" if lower else "triu_indices"
    return fn


xp.tril_indices, xp.triu_indices = _triangle_indices(True), _triangle_indices(False)


@_api
def tril(x: MetaArray, /, *, k: int = 0) -> MetaArray:
    return MetaArray(x.shape, x.dtype)


xp.triu = tril


# --- dtypes -----------------------------------------------------------------------------------


@_api
def astype(x: MetaArray, dtype: Any, /, *, copy: bool = True, device: Any = None) -> MetaArray:
    return MetaArray(x.shape, _as_dtype(dtype, x.dtype))


@_api
def isdtype(dtype: _dt.dtype, kind: Any) -> bool:
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, _dt.dtype):
        return dtype is kind
    return {
        "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
        "real floating": "f", "complex floating": "c", "numeric": "iufc",
    }[kind].find(dtype.kind) >= 0  # fmt: skip


@_api
def result_type(*xs: Any) -> _dt.dtype:
    return _promote(*xs)


@_api
def can_cast(from_: Any, to: Any, /) -> bool:
    return _dt.can_cast(_dtype(from_) if not isinstance(from_, _dt.dtype) else from_, to)


# --- elementwise ------------------------------------------------------------------------------

_SAME = (
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "arccos", "arccosh", "arcsin",
    "arcsinh", "arctan", "arctanh", "bitwise_invert", "bitwise_not", "invert", "ceil", "conj",
    "cos", "cosh", "exp", "exp2", "expm1", "floor", "log", "log1p", "log2", "log10", "negative",
    "positive", "round", "rint", "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh",
    "trunc", "reciprocal", "fix",
)  # fmt: skip
_TO_BOOL = ("isfinite", "isinf", "isnan", "signbit", "logical_not")
_TO_REAL = ("real", "imag")
_BINARY = (
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "pow",
    "power", "maximum", "minimum", "atan2", "arctan2", "hypot", "copysign", "nextafter",
    "logaddexp", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "left_shift", "right_shift", "fmod", "fmax", "fmin",
)  # fmt: skip
_COMPARE = (
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor",
)  # fmt: skip


def _unary_fn(name: str, kind: str) -> Any:
    def fn(x: Any, /, **kwargs: Any) -> MetaArray:
        x = asarray(x) if not isinstance(x, MetaArray) else x
        d = x.dtype
        if kind == "b":
            d = _b
        elif kind == "r":
            d = d.to_real() if d.kind == "c" else d
        elif name in ("abs",) and d.kind == "c":
            d = d.to_real()
        elif d.kind in "biu" and name in _FLOAT_RESULT:
            d = _f32 if d.itemsize <= 2 and d.kind != "b" or d is _b else _f64
        return MetaArray(x.shape, d)

    fn.__name__ = name
    return fn


# numpy's float functions of integer arrays give float64 (float16 for int8/uint8, float32
# for int16); kernels cast to a float compute dtype first, so only the shape matters here
_FLOAT_RESULT = frozenset(
    ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "exp2", "expm1",
     "log", "log1p", "log2", "log10", "sin", "sinh", "sqrt", "tan", "tanh", "reciprocal")
)  # fmt: skip


def _binary_fn(name: str, compare: bool) -> Any:
    def fn(a: Any, b: Any, /, **kwargs: Any) -> MetaArray:
        if "out" in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        shape = _broadcast(_shp(a), _shp(b))
        if compare:
            return MetaArray(shape, _b)
        d = _promote(a, b)
        if name in ("divide", "true_divide") and d.kind in "biu":
            d = _f64
        return MetaArray(shape, d)

    fn.__name__ = name
    return fn


for _n in _SAME:
    setattr(xp, _n, _unary_fn(_n, "s"))
for _n in _TO_BOOL:
    setattr(xp, _n, _unary_fn(_n, "b"))
for _n in _TO_REAL:
    setattr(xp, _n, _unary_fn(_n, "r"))
for _n in _BINARY:
    setattr(xp, _n, _binary_fn(_n, False))
for _n in _COMPARE:
    setattr(xp, _n, _binary_fn(_n, True))


def _add_at(a: MetaArray, idx: Any, v: Any) -> None:
    """numpy's ``add.at``: only the shapes are checked."""
    a[idx] = v


xp.add.at = _add_at


@_api
def clip(x: MetaArray, /, min: Any = None, max: Any = None) -> MetaArray:  # noqa: A002
    return MetaArray(_broadcast(x.shape, _shp(min), _shp(max)), x.dtype)


@_api
def where(cond: Any, a: Any, b: Any, /) -> MetaArray:
    return MetaArray(_broadcast(_shp(cond), _shp(a), _shp(b)), _promote(a, b))


# --- shapes -----------------------------------------------------------------------------------


@_api
def reshape(x: MetaArray, /, shape: Any, *, copy: bool | None = None) -> MetaArray:
    shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"cannot reshape array of size {x.size} into shape {shape}")
        shape = tuple(x.size // known if n == -1 else n for n in shape)
    if math.prod(shape) != x.size:
        raise ValueError(f"cannot reshape array of size {x.size} into shape {shape}")
    return MetaArray(shape, x.dtype)


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    out = tuple(_axis(a, ndim) for a in axis)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return out


@_api
def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    return _broadcast(*(tuple(s) for s in shapes))


@_api
def broadcast_to(x: Any, /, shape: Any) -> MetaArray:
    x = asarray(x)
    shape = _shape_of(shape)
    if len(x.shape) > len(shape) or _broadcast(x.shape, shape) != shape:
        raise ValueError(
            f"operands could not be broadcast together with remapped shapes "
            f"[original->remapped]: {x.shape} and requested shape {shape}"
        )
    return MetaArray(shape, x.dtype)


@_api
def broadcast_arrays(*arrays: MetaArray) -> list[MetaArray]:
    shape = _broadcast(*(a.shape for a in arrays))
    return [MetaArray(shape, a.dtype) for a in arrays]


@_api
def permute_dims(x: MetaArray, /, axes: Sequence[int]) -> MetaArray:
    axes = tuple(axes)
    if sorted(_axis(a, x.ndim) for a in axes) != list(range(x.ndim)):
        raise ValueError("axes don't match array")
    return MetaArray(tuple(x.shape[a] for a in axes), x.dtype)


@_api
def transpose(x: MetaArray, axes: Any = None) -> MetaArray:
    return permute_dims(x, tuple(reversed(range(x.ndim))) if axes is None else axes)


@_api
def matrix_transpose(x: MetaArray, /) -> MetaArray:
    return x.mT


@_api
def moveaxis(x: MetaArray, source: Any, destination: Any, /) -> MetaArray:
    src = _axes(source, x.ndim)
    dst = _axes(destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return MetaArray(tuple(x.shape[a] for a in order), x.dtype)


@_api
def swapaxes(x: MetaArray, a: int, b: int) -> MetaArray:
    order = list(range(x.ndim))
    a, b = _axis(a, x.ndim), _axis(b, x.ndim)
    order[a], order[b] = order[b], order[a]
    return permute_dims(x, order)


@_api
def expand_dims(x: MetaArray, /, axis: Any = 0) -> MetaArray:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = x.ndim + len(axes)
    at = sorted(_axis(a, n) for a in axes)
    shape = list(x.shape)
    for a in at:
        shape.insert(a, 1)
    return MetaArray(tuple(shape), x.dtype)


@_api
def squeeze(x: MetaArray, /, axis: Any = None) -> MetaArray:
    if axis is None:
        return MetaArray(tuple(n for n in x.shape if n != 1), x.dtype)
    axes = _axes(axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return MetaArray(tuple(n for j, n in enumerate(x.shape) if j not in axes), x.dtype)


@_api
def flip(x: MetaArray, /, *, axis: Any = None) -> MetaArray:
    _axes(axis, x.ndim)
    return MetaArray(x.shape, x.dtype)


@_api
def roll(x: MetaArray, /, shift: Any, *, axis: Any = None) -> MetaArray:
    for a in () if axis is None else (axis,) if isinstance(axis, int) else axis:
        _axis(a, x.ndim)  # (repeated axes roll twice)
    return MetaArray(x.shape, x.dtype)


@_api
def concat(arrays: Sequence[MetaArray], /, *, axis: int | None = 0) -> MetaArray:
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    d = _promote(*arrays)
    if axis is None:
        return MetaArray((sum(a.size for a in arrays),), d)
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ax = _axis(axis, first.ndim)
    total = 0
    for i, a in enumerate(arrays):
        if a.ndim != first.ndim:
            raise ValueError(
                "all the input array dimensions except for the concatenation axis must match "
                f"exactly, but along dimension 0, the array at index 0 has {first.ndim} "
                f"dimension(s) and the array at index {i} has {a.ndim} dimension(s)"
            )
        for j in range(first.ndim):
            if j != ax and a.shape[j] != first.shape[j]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {j}, the array at index 0 has size "
                    f"{first.shape[j]} and the array at index {i} has size {a.shape[j]}"
                )
        total += a.shape[ax]
    return MetaArray(first.shape[:ax] + (total,) + first.shape[ax + 1 :], d)


xp.concatenate = concat


@_api
def stack(arrays: Sequence[MetaArray], /, *, axis: int = 0) -> MetaArray:
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    shape = arrays[0].shape
    for a in arrays:
        if a.shape != shape:
            raise ValueError("all input arrays must have the same shape")
    ax = _axis(axis, len(shape) + 1)
    return MetaArray(shape[:ax] + (len(arrays),) + shape[ax:], _promote(*arrays))


@_api
def unstack(x: MetaArray, /, *, axis: int = 0) -> tuple[MetaArray, ...]:
    ax = _axis(axis, x.ndim)
    rest = x.shape[:ax] + x.shape[ax + 1 :]
    return tuple(MetaArray(rest, x.dtype) for _ in range(x.shape[ax]))


@_api
def tile(x: MetaArray, repetitions: Sequence[int], /) -> MetaArray:
    reps = tuple(repetitions)
    n = max(len(reps), x.ndim)
    shape = (1,) * (n - x.ndim) + x.shape
    reps = (1,) * (n - len(reps)) + reps
    return MetaArray(tuple(a * b for a, b in zip(shape, reps, strict=True)), x.dtype)


@_api
def repeat(x: MetaArray, repeats: Any, /, *, axis: int | None = None) -> MetaArray:
    if isinstance(repeats, MetaArray):
        raise MetaValueRead("repeat counts")
    if axis is None:
        return MetaArray((x.size * int(repeats),), x.dtype)
    ax = _axis(axis, x.ndim)
    return MetaArray(x.shape[:ax] + (x.shape[ax] * int(repeats),) + x.shape[ax + 1 :], x.dtype)


# --- linear algebra ---------------------------------------------------------------------------


@_api
def matmul(a: MetaArray, b: MetaArray, /) -> MetaArray:
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    sa = (1,) + a.shape if a.ndim == 1 else a.shape
    sb = b.shape + (1,) if b.ndim == 1 else b.shape
    if sa[-1] != sb[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {sb[-2]} is different from {sa[-1]})"
        )
    shape = _broadcast(sa[:-2], sb[:-2]) + (sa[-2], sb[-1])
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if b.ndim == 1:
        shape = shape[:-1]
    return MetaArray(shape, _promote(a, b))


@_api
def vecdot(a: MetaArray, b: MetaArray, /, *, axis: int = -1) -> MetaArray:
    shape = _broadcast(a.shape, b.shape)
    ax = _axis(axis, len(shape))
    return MetaArray(shape[:ax] + shape[ax + 1 :], _promote(a, b))


@_api
def tensordot(a: MetaArray, b: MetaArray, /, *, axes: Any = 2) -> MetaArray:
    if isinstance(axes, int):
        xa, xb = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    else:
        xa, xb = _axes(axes[0], a.ndim), _axes(axes[1], b.ndim)
    shape = tuple(n for j, n in enumerate(a.shape) if j not in xa)
    shape += tuple(n for j, n in enumerate(b.shape) if j not in xb)
    return MetaArray(shape, _promote(a, b))


# --- reductions -------------------------------------------------------------------------------


def _reduced(x: MetaArray, axis: Any, keepdims: bool) -> tuple[int, ...]:
    axes = _axes(axis, x.ndim)
    if keepdims:
        return tuple(1 if j in axes else n for j, n in enumerate(x.shape))
    return tuple(n for j, n in enumerate(x.shape) if j not in axes)


def _reduction(name: str, result: str) -> Any:
    def fn(
        x: MetaArray,
        /,
        *,
        axis: Any = None,
        dtype: Any = None,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> MetaArray:
        shape = _reduced(x, axis, keepdims)
        d = x.dtype
        if result == "b":
            d = _b
        elif result == "sum":  # numpy: small integers and bools sum in the default integer
            if dtype is not None:
                d = _as_dtype(dtype, d)
            elif d.kind in "biu" and d.itemsize < 8:  # (numpy's uint8 sums in uint64, which
                d = _i64  # tensorplug lacks; kernels cast the sum to the result dtype anyway)
        elif result == "mean":
            d = _as_dtype(dtype, _f64 if d.kind in "biu" else d)
        elif result == "extremum":
            if any(x.shape[a] == 0 for a in _axes(axis, x.ndim)) or x.size == 0 and axis is None:
                raise ValueError(
                    f"zero-size array to reduction operation {name} which has no identity"
                )
        elif result == "index":
            d = _i64
        out = MetaArray(shape, d)
        if result == "b":
            out.check = name == "all"  # Note [Meta arrays]
        elif result == "extremum" and d.kind in "iu" or name == "count_nonzero":
            out.check = 0  # an index bound, a count, that passes (Note [Meta arrays])
        return out

    fn.__name__ = name
    return fn


for _n, _r in (
    ("sum", "sum"), ("prod", "sum"), ("mean", "mean"), ("std", "mean"), ("var", "mean"),
    ("max", "extremum"), ("min", "extremum"), ("any", "b"), ("all", "b"),
    ("count_nonzero", "index"), ("argmax", "index"), ("argmin", "index"),
):  # fmt: skip
    setattr(xp, _n, _reduction(_n, _r))


def _argm(name: str) -> Any:
    def fn(x: MetaArray, /, *, axis: int | None = None, keepdims: bool = False) -> MetaArray:
        if x.size == 0 and (axis is None or x.shape[_axis(axis, x.ndim)] == 0):
            raise ValueError(f"attempt to get {name} of an empty sequence")
        return MetaArray(_reduced(x, axis, keepdims), _i64)

    fn.__name__ = name
    return fn


xp.argmax, xp.argmin = _argm("argmax"), _argm("argmin")


def _scan(name: str) -> Any:
    def fn(
        x: MetaArray,
        /,
        *,
        axis: int | None = None,
        dtype: Any = None,
        include_initial: bool = False,
    ) -> MetaArray:
        if axis is None:
            if x.ndim > 1:
                raise ValueError("axis must be given for arrays of more than one dimension")
            axis = 0
        shape = x.shape if x.ndim else (1,)
        ax = _axis(axis, len(shape))
        if include_initial:
            shape = shape[:ax] + (shape[ax] + 1,) + shape[ax + 1 :]
        d = _as_dtype(dtype, _i64 if x.dtype.kind in "bi" and x.dtype.itemsize < 8 else x.dtype)
        return MetaArray(shape, d)

    fn.__name__ = name
    return fn


xp.cumulative_sum, xp.cumulative_prod = _scan("cumulative_sum"), _scan("cumulative_prod")


# --- sorting, searching, indexing -------------------------------------------------------------


@_api
def sort(
    x: MetaArray, /, *, axis: int = -1, descending: bool = False, stable: bool = True
) -> MetaArray:
    _axis(axis, x.ndim)
    return MetaArray(x.shape, x.dtype)


@_api
def argsort(
    x: MetaArray, /, *, axis: int = -1, descending: bool = False, stable: bool = True
) -> MetaArray:
    _axis(axis, x.ndim)
    return MetaArray(x.shape, _i64)


@_api
def searchsorted(x1: MetaArray, x2: Any, /, *, side: str = "left", sorter: Any = None) -> MetaArray:
    return MetaArray(_shp(x2), _i64)


@_api
def take(x: MetaArray, indices: MetaArray, /, *, axis: int | None = None) -> MetaArray:
    if indices.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer type")
    if axis is None:
        if x.ndim > 1:
            raise ValueError("axis must be given for arrays of more than one dimension")
        axis = 0
    shape = x.shape if x.ndim else (1,)
    ax = _axis(axis, len(shape))
    return MetaArray(shape[:ax] + indices.shape + shape[ax + 1 :], x.dtype)


@_api
def take_along_axis(x: MetaArray, indices: MetaArray, /, *, axis: int = -1) -> MetaArray:
    if x.ndim != indices.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    ax = _axis(axis, x.ndim)
    bx = x.shape[:ax] + (1,) + x.shape[ax + 1 :]
    bi = indices.shape[:ax] + (1,) + indices.shape[ax + 1 :]
    shape = list(_broadcast(bx, bi))
    shape[ax] = indices.shape[ax]
    return MetaArray(tuple(shape), x.dtype)


def _reads(what: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise MetaValueRead(what)

    fn.__name__ = what
    return fn


for _n in ("nonzero", "unique_all", "unique_counts", "unique_inverse", "unique_values"):
    setattr(xp, _n, _reads(_n))


@_api
def diff(x: MetaArray, /, *, axis: int = -1, n: int = 1) -> MetaArray:
    ax = _axis(axis, x.ndim)
    return MetaArray(x.shape[:ax] + (max(x.shape[ax] - n, 0),) + x.shape[ax + 1 :], x.dtype)


del _n, _r, _d
