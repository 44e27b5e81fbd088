"""Meta arrays: arrays of a shape and a dtype with no elements, and the namespace object
:data:`xp` that holds their functions (internal).

This module has what every function of the namespace needs: :class:`MetaArray`, broadcasting
and promotion by numpy's rules, :func:`asarray`, the dtype functions and the axis helpers. The
functions themselves live in one module per op family (``_factories``, ``_pointwise``,
``_shape``, ``_linalg``, ``_reductions``, ``_indexing``), each adding its own to :data:`xp`
with :func:`_api`; ``_namespace`` puts them together. :data:`xp` follows the array API standard
(2023.12) as far as the array kit's kernels use it (``tensorplug.array_backend``), with
numpy's rules for what the standard leaves open (integer array indexing, Python scalars,
``add.at``): every function computes its result's shape and dtype and raises what numpy raises
for shapes that do not fit, without elements to compute with. Registered on the ``Meta`` key
through ``array_backend.register``, the CPU's kernels then compute output metadata and raise
the CPU's errors (Note [Meta arrays]).

Note [Meta arrays]).

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

Note [Meta strides]
~~~~~~~~~~~~~~~~~~~
PyTorch's meta tensors have strides, so abstract tracing knows layouts; so do these. A meta
array carries its strides in elements (``_st``; None for a fresh row-major array: what
most functions make, for nothing) and the address of its first element in bytes from its
storage's start (``addr``), and answers ``strides``, ``itemsize`` and ``flags`` as numpy's
arrays do. The Meta backend is then strided (``MetaStorage.strided``, ``kit.strided``) and
the kit's strided code (``as_strided``, ``unfold``, ``view.dtype``, the memory formats of
``clone``/``_to_copy``/``*_like``) runs on it unchanged. The views of this namespace
(basic indexing, ``permute_dims`` and its kin, ``expand_dims``, ``squeeze``,
``broadcast_to``, ``reshape`` where PyTorch's ``computeStride`` finds a view, ``unstack``)
follow PyTorch's view rules; elementwise results are laid out as TensorIterator lays its
outputs (``_strides.elementwise_strides``); every other result is row-major, as PyTorch's
meta functions make theirs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

from .. import _strides
from .. import dtypes as _dt

__all__ = ["MetaArray", "MetaValueRead", "xp"]


_F = TypeVar("_F", bound=Callable[..., Any])


class MetaValueRead(Exception):
    """An element of a meta array was read: the computation depends on data it has not."""


_b, _u8, _i64, _f32, _f64 = _dt.bool, _dt.uint8, _dt.int64, _dt.float32, _dt.float64
_i32 = _dt.int32
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
    """An array with a shape and a dtype and no elements; strided as PyTorch's meta tensors
    are (Note [Meta strides])."""

    __slots__ = ("shape", "dtype", "ndim", "size", "check", "_st", "addr")

    def __init__(
        self,
        shape: tuple[int, ...],
        dtype: _dt.dtype,
        check: bool | int | None = None,
        strides: tuple[int, ...] | None = None,
        addr: int = 0,
    ):
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)
        self.size = math.prod(shape)
        self.check = check  # the truth of a passed value check (Note [Meta arrays])
        self._st = strides  # in elements; None: row-major (a fresh array)
        self.addr = addr  # of the first element, in bytes from where the storage starts

    def __repr__(self) -> str:
        return f"MetaArray({self.shape}, {self.dtype.name})"

    # --- layout (Note [Meta strides]) ------------------------------------------------------

    @property
    def estrides(self) -> tuple[int, ...]:
        """The strides in elements."""
        st = self._st
        return _strides.contiguous_strides(self.shape) if st is None else st

    @property
    def strides(self) -> tuple[int, ...]:
        """The strides in bytes, as numpy's."""
        item = self.dtype.itemsize
        return tuple(s * item for s in self.estrides)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def flags(self) -> _Flags:
        st = self._st
        return _Flags(st is None or _strides.is_contiguous_for(self.shape, st, "contiguous_format"))

    def _view(self, shape: tuple[int, ...], strides: tuple[int, ...], addr: int) -> MetaArray:
        return MetaArray(shape, self.dtype, None, strides, addr)

    def view(self, dtype: _dt.dtype) -> MetaArray:
        """The memory read as ``dtype`` (numpy's ``a.view(dtype)``: the last dim scaled)."""
        s0, s1 = self.dtype.itemsize, dtype.itemsize
        st = self.estrides
        if s0 == s1 or not self.shape:
            return MetaArray(self.shape, dtype, None, self._st, self.addr)
        shape = (*self.shape[:-1], self.shape[-1] * s0 // s1)
        return MetaArray(shape, dtype, None, (*(s * s0 // s1 for s in st[:-1]), 1), self.addr)

    def __array_namespace__(self, api_version: str | None = None) -> Any:
        return xp

    @property
    def device(self) -> str:
        return "meta"

    @property
    def T(self) -> MetaArray:  # noqa: N802 - the standard's name
        return self._view(self.shape[::-1], self.estrides[::-1], self.addr)

    @property
    def mT(self) -> MetaArray:  # noqa: N802
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        st = self.estrides
        return self._view(self.shape[:-2] + self.shape[:-3:-1], st[:-2] + st[:-3:-1], self.addr)

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
        return _elementwise(self.shape, dtype, self)

    def reshape(self, *shape: Any) -> MetaArray:
        return xp.reshape(  # type: ignore[no-any-return]
            self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        )

    def copy(self) -> MetaArray:
        return MetaArray(self.shape, self.dtype)

    # --- indexing ------------------------------------------------------------------------

    def __getitem__(self, idx: Any) -> MetaArray:
        got = _basic_index(self, idx)
        return MetaArray(_index_shape(self.shape, idx), self.dtype) if got is None else got

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
        return xp.matmul(self, o)  # type: ignore[no-any-return]

    def __rmatmul__(self, o: Any) -> MetaArray:
        return xp.matmul(o, self)  # type: ignore[no-any-return]

    def __lt__(self, o: Any) -> MetaArray:
        return _compare(self, o)

    __le__ = __gt__ = __ge__ = __lt__

    def __eq__(self, o: Any) -> MetaArray:  # type: ignore[override]
        return _compare(self, o)

    def __ne__(self, o: Any) -> MetaArray:  # type: ignore[override]
        return _compare(self, o)

    __hash__ = object.__hash__

    def __neg__(self) -> MetaArray:
        return _elementwise(self.shape, self.dtype, self)

    __pos__ = __abs__ = __invert__ = __neg__


def _binary(a: Any, b: Any) -> MetaArray:
    return _elementwise(_broadcast(_shp(a), _shp(b)), _promote(a, b), a, b)


def _compare(a: Any, b: Any) -> MetaArray:
    return _elementwise(_broadcast(_shp(a), _shp(b)), _b, a, b)


class _Flags:
    """numpy's ``flags``, as far as the kit asks (``c_contiguous``, ``writeable``)."""

    __slots__ = ("c_contiguous",)
    writeable = True

    def __init__(self, c_contiguous: bool) -> None:
        self.c_contiguous = c_contiguous

    def __getitem__(self, name: str) -> bool:
        if name in ("C_CONTIGUOUS", "C", "CONTIGUOUS"):
            return self.c_contiguous
        if name in ("WRITEABLE", "W"):
            return True
        raise KeyError(name)


def _elementwise(shape: tuple[int, ...], dtype: _dt.dtype, *operands: Any) -> MetaArray:
    """A fresh result of an elementwise function of ``operands``, laid out as PyTorch's
    TensorIterator lays out its output (Note [Meta strides])."""
    arrays = [x for x in operands if type(x) is MetaArray and x.ndim]
    for x in arrays:
        if x._st is not None:
            break
    else:  # all row-major: so is the result
        return MetaArray(shape, dtype)
    st = _strides.elementwise_strides(shape, [(x.shape, x.estrides) for x in arrays])
    return MetaArray(shape, dtype, None, st)


def _basic_index(a: MetaArray, idx: Any) -> MetaArray | None:
    """``a[idx]`` for an index of ints, slices, None and Ellipsis: a view, as numpy's and
    PyTorch's (strides and offset follow); None for an index with arrays in it."""
    items = idx if isinstance(idx, tuple) else (idx,)
    for e in items:
        if not (e is None or e is Ellipsis or isinstance(e, (int, slice))) or isinstance(e, bool):
            return None
    shape = _index_shape(a.shape, idx)  # numpy's checks and errors
    used = sum(1 for e in items if e is not None and e is not Ellipsis)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + (slice(None),) * (a.ndim - used) + items[at + 1 :]
    else:
        items = items + (slice(None),) * (a.ndim - used)
    st_in = a.estrides
    off = 0
    strides: list[int] = []
    dim = 0
    for e in items:
        if e is None:
            # PyTorch's unsqueeze: the extent of the dim it precedes, 1 at the end
            strides.append(a.shape[dim] * st_in[dim] if dim < a.ndim else 1)
            continue
        n, s = a.shape[dim], st_in[dim]
        if isinstance(e, slice):
            start, _stop, step = e.indices(n)
            off += start * s  # where numpy's and PyTorch's slices start, empty ones too
            strides.append(s * step)
        else:
            off += (int(e) % n) * s
        dim += 1
    return a._view(shape, tuple(strides), a.addr + off * a.dtype.itemsize)


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


# --- conversion ---------------------------------------------------------------------------------


@_api
def asarray(obj: Any, dtype: Any = None, device: Any = None, copy: bool | None = None) -> MetaArray:
    if isinstance(obj, MetaArray):
        d = _as_dtype(dtype, obj.dtype)
        if copy is not True and d is obj.dtype:
            return obj._view(obj.shape, obj.estrides, obj.addr)
        return _elementwise(obj.shape, d, obj)  # numpy's copies keep the order (K)
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


# --- dtypes -----------------------------------------------------------------------------------


@_api
def astype(x: MetaArray, dtype: Any, /, *, copy: bool = True, device: Any = None) -> MetaArray:
    return _elementwise(x.shape, _as_dtype(dtype, x.dtype), x)


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


# --- axes and value reads ------------------------------------------------------------------


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


def _reads(what: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise MetaValueRead(what)

    fn.__name__ = what
    return fn


del _d
