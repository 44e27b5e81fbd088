"""The Tensor: a backend array plus what the dispatcher and plugins need to know about it.

A ``Tensor`` holds its backend's array (``_data``: a numpy array for CPU, a cupy array for
CUDA), its tensorplug ``dtype`` and ``device``, its key set ``_tp_keyset`` and the version
counter ``_tp_version`` it shares with its views (Note [Tensor protocol] in _protocol.py).
Kernels build tensors with :func:`new_tensor` (or :meth:`Tensor._new`) and views with
:meth:`Tensor._alias`; everything a user calls goes through the dispatcher (the operators of
native_functions.yaml become methods in ``_opset/api.py``).

Plugins reach these fields through public names, the tensor protocol of docs/plugins.md
(Note [Tensor protocol for plugins]): ``tp_data``, ``tp_dtype``, ``tp_device``, ``tp_keyset``,
``tp_version`` and ``tp_base``. ``_batched`` is reserved for the plugin that owns that key;
the ``__dict__`` lets other plugins attach state (the autograd plugin's ``tp_autograd``) and
lets users set attributes, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from math import prod as _prod
from typing import TYPE_CHECKING, Any, SupportsIndex, TypeVar

from . import dtypes as _dtypes
from . import keys as _keys
from ._protocol import VersionCounter
from .device import device as Device

_T = TypeVar("_T", bound="Tensor")

__all__ = [
    "LogicalShape",
    "Size",
    "Tensor",
    "data_id",
    "is_wrapper",
    "make_wrapper",
    "new_tensor",
    "no_storage_error",
    "wrapper_factory",
]

T = TypeVar("T", bound="Tensor")


class Size(tuple[int, ...]):
    """A tensor shape: a tuple of ints with PyTorch's ``torch.Size`` repr and ``numel()``;
    what ``Tensor.shape`` and ``Tensor.size()`` return (made from the array's shape tuple
    with one ``tuple.__new__``: Note [Size])."""

    __slots__ = ()
    __module__ = "tensorplug"  # its public name, as ``torch.Size`` (pickles as tensorplug.Size)

    def __new__(cls, sizes: Iterable[SupportsIndex] = ()) -> Size:
        items: list[int] = []
        for s in sizes:
            if isinstance(s, Tensor) and s.numel() == 1:
                s = s.item()
            if isinstance(s, bool) or not hasattr(type(s), "__index__"):
                raise TypeError(
                    f"torch.Size() takes an iterable of 'int' (item {len(items)} is "
                    f"'{type(s).__name__}')"
                )
            items.append(s.__index__())
        return _new_tuple(cls, items)

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        return _prod(self)

    def __repr__(self) -> str:
        return f"tensorplug.Size({list(self)})"

    def __getitem__(self, i: Any) -> Any:  # a slice is a Size
        r = _tuple_getitem(self, i)
        return _new_tuple(Size, r) if type(i) is slice else r

    def __add__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return _new_tuple(Size, _tuple_add(self, other))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Size, (list(self),))


# Note [Size]
# ~~~~~~~~~~~
# ``t.shape`` is read everywhere, so it must stay a cheap attribute read: ``tuple.__new__``
# of the array's shape tuple (ints already: numpy's, CuPy's, meta arrays') makes the Size
# without Size.__new__'s checks. Kernels and plugins read ``t.tp_data.shape`` (the array's
# plain tuple) where they do not need a Size.
_new_tuple = tuple.__new__
_tuple_getitem = tuple.__getitem__
_tuple_add = tuple.__add__


if TYPE_CHECKING:  # the methods made at run time, declared for type checkers
    from ._tensor_methods import TensorMethods as _Declared
else:
    _Declared = object


class Tensor(_Declared):
    __slots__ = (
        "_data",
        "_dtype",
        "_device",
        "_tp_keyset",
        "_vc",
        "__weakref__",
        "__dict__",
    )

    _data: Any
    _dtype: _dtypes.dtype
    _device: Device
    _tp_keyset: int
    _vc: VersionCounter | None
    # Rarely set, so not slots: a new tensor stores nothing for them (they live in __dict__
    # once set) and reads fall back to these class defaults.
    _base: Tensor | None = None
    _storage_base: Tensor | None = None  # what a detach() shares memory with (storage.py)
    _batched: Any = None
    # Functionalization (Note [Functionalization] in _opset/functionalize.py): a view's record
    # of how to regenerate it from its base, and a base's generation; only tensors of a backend
    # without views ever set them
    _fz_view: Any = None
    _fz_gen: int = 0
    # The tensor protocol for plugins: the slots above under public names (set below the class)
    tp_data: Any
    tp_dtype: _dtypes.dtype
    tp_device: Device
    tp_keyset: int
    tp_version: VersionCounter

    # ``Tensor(...)`` (PyTorch's legacy constructor, ``__new__``), ``as_subclass`` and
    # ``__reduce_ex__`` call operators and the checkpoint format, layers above this one: the
    # op-set layer installs the first two (``_opset.operators.install``), ``serialization`` the
    # third (Note [Layers] in docs/architecture.md).

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # built by __new__ (kernels build tensors with new_tensor, which skips both)

    def _retyped(self, cls: type[T]) -> T:
        """This very tensor object's state, in a new object of class ``cls``."""
        t = object.__new__(cls)
        for name in ("_data", "_dtype", "_device", "_tp_keyset", "_vc"):
            object.__setattr__(t, name, getattr(self, name))
        t.__dict__.update(self.__dict__)
        return t

    @classmethod
    def _new(cls, data: Any, dtype: _dtypes.dtype, device: Device, keyset: int) -> Tensor:
        """A new tensor owning ``data`` (a backend array), with a fresh version counter.

        Kernels call :func:`new_tensor`, the same for ``Tensor`` itself, cheaper
        (Note [Cheap tensors]).
        """
        t = object.__new__(cls)
        t._data = data
        t._dtype = dtype
        t._device = device
        t._tp_keyset = keyset
        t._vc = None  # created on first use: most tensors are never written in place
        return t

    def _alias(self, data: Any, dtype: _dtypes.dtype | None = None) -> Tensor:
        """A view of ``self`` over ``data``: shares the version counter, remembers its base.

        The key set is the plain one of ``self``'s backend: functionality keys (autograd,
        batching) are added by the plugins that own them, on their own outputs.
        """
        t = _object_new(type(self))
        t._data = data
        t._dtype = self._dtype if dtype is None else dtype
        t._device = self._device
        # what plain_mask() and _tp_version give, read inline: every view op makes one
        t._tp_keyset = self._tp_keyset & _keys._state.plain_mask
        vc = self._vc
        t._vc = vc if vc is not None else self._tp_version
        base = self._base
        t._base = self if base is None else base
        return t

    # --- metadata ------------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return _new_tuple(Size, self._data.shape)  # Note [Size]

    def size(self, dim: int | None = None) -> Any:
        shape = self._data.shape
        if dim is None:
            return _new_tuple(Size, shape)
        return shape[_wrap_dim(dim, len(shape))]

    @property
    def dtype(self) -> _dtypes.dtype:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._device

    @property
    def ndim(self) -> int:
        return int(self._data.ndim)

    def dim(self) -> int:
        return int(self._data.ndim)

    def numel(self) -> int:
        return int(_prod(self._data.shape))

    def nelement(self) -> int:
        """``numel()`` under its other name, as ``torch.Tensor.nelement``."""
        return int(_prod(self._data.shape))

    def __len__(self) -> int:
        shape = self._data.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return int(shape[0])

    @property
    def _tp_version(self) -> VersionCounter:
        """The version counter shared with views (Note [Tensor protocol])."""
        vc = self._vc
        if vc is None:
            vc = self._vc = VersionCounter()
        return vc

    @property
    def _version(self) -> int:
        return self._tp_version.value

    @property
    def tp_base(self) -> Tensor | None:
        """The tensor this one is a view of (its root base), or None (Note [Tensor protocol for
        plugins]); a plugin may set it to None (a ``detach`` that is not a view)."""
        return self._base

    @tp_base.setter
    def tp_base(self, base: Tensor | None) -> None:
        self._base = base

    @property
    def is_leaf(self) -> bool:  # replaced by the autograd plugin; without it all are leaves
        return True

    @property
    def requires_grad(self) -> bool:  # replaced by the autograd plugin
        return False

    def detach_(self) -> Tensor:  # replaced by the autograd plugin; without it nothing to detach
        """Detach this tensor from the graph that made it, in place: it becomes a leaf that
        does not require grad."""
        return self

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._dtype.is_complex

    def element_size(self) -> int:
        return self._dtype.itemsize


# Note [Tensor protocol for plugins]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Plugins use public names only (docs/plugins.md), yet a functionality plugin's generated
# kernels read a tensor's key set, array, dtype and device on every call. So the slots have
# public names that are the same member descriptors: ``t.tp_keyset`` is ``t._tp_keyset``,
# as cheap to read and write (a property would cost about 30 ns more per read). ``tp_version``
# is the version counter (created on first read), ``tp_base`` the root base of a view. Users
# have no reason to touch them: ``shape``, ``dtype`` and ``device`` are the user API.
for _public, _private in (
    ("tp_data", "_data"),
    ("tp_dtype", "_dtype"),
    ("tp_device", "_device"),
    ("tp_keyset", "_tp_keyset"),
    ("tp_version", "_tp_version"),
):
    setattr(Tensor, _public, Tensor.__dict__[_private])
del _public, _private


# Note [Cheap tensors]
# ``tp.add(a, b)`` on small tensors is mostly Python overhead (bench/cpu.py), and building the
# result is a fair part of it: one ``object.__new__`` and a store per slot. Kernels therefore
# call the module-level :func:`new_tensor`, a plain function call instead of a classmethod
# binding (about 20 ns less), with ``object.__new__`` read from a global. It builds exactly what
# ``Tensor._new`` builds; the version counter is created on first use (``_tp_version``).
# The fast paths of the elementwise kernels (Note [Binary fast path] in
# array_backend/_pointwise/_elementwise.py, relu's in _pointwise/_unary.py) make the same five stores inline, without
# the call: about 40 ns less on ``tp.add``. tests/ops/test_fast_paths.py checks that what they
# build equals the general path's tensor slot for slot, so a new slot must be added there too.

_object_new = object.__new__


def new_tensor(data: Any, dtype: _dtypes.dtype, device: Device, keyset: int) -> Tensor:
    """``Tensor._new(data, dtype, device, keyset)``, cheaper (Note [Cheap tensors])."""
    t: Tensor = _object_new(Tensor)
    t._data = data
    t._dtype = dtype
    t._device = device
    t._tp_keyset = keyset
    t._vc = None
    return t


def data_id(t: Tensor) -> int:
    """An int equal for two tensors exactly when they hold the same backend array object.

    Aliases that share a tensor's array without an operator (the detached copies autograd keeps
    of saved tensors) have its ``data_id``; views made by view operators hold arrays of their
    own, and so do copies. Valid while a tensor holding the array lives. The tracer uses it to
    recognize such aliases as the values they alias.
    """
    return id(t._data)


# Note [Wrapper tensors]
# A functionality plugin may represent a tensor by another one: the batched plugin's tensor
# hides a batch dimension of the tensor it wraps. Such a *wrapper* has the logical shape,
# dtype and device its users see, a key set that holds the plugin's key (so its kernels run
# first and unwrap), and no data of its own: its ``_data`` is a :class:`LogicalShape`, so
# ``shape``, ``ndim``, ``numel()`` and ``len()`` read it exactly as they read an array, and
# plain tensors pay nothing for wrappers existing. Reading its elements (``tolist()``,
# ``numpy()``, ``repr``) raises, as PyTorch does for a tensor without storage, unless the
# wrapper's class says how. This is the spirit of PyTorch's ``_make_wrapper_subclass``.


class LogicalShape:
    """The ``_data`` of a wrapper tensor: a shape, and no elements (Note [Wrapper tensors])."""

    __slots__ = ("shape", "ndim", "size")

    shape: tuple[int, ...]
    ndim: int
    size: int

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.ndim = len(shape)
        self.size = _prod(shape)

    def __repr__(self) -> str:
        return f"LogicalShape({self.shape})"


def make_wrapper(
    cls: type[_T],
    shape: tuple[int, ...] | list[int],
    dtype: _dtypes.dtype,
    device: Device,
    keyset: int,
    *,
    version_of: Tensor | None = None,
) -> _T:
    """A wrapper tensor of class ``cls`` (``Tensor`` or a subclass of it): the given logical
    ``shape``, ``dtype`` and ``device``, dispatching with ``keyset`` and holding no data
    (Note [Wrapper tensors]).

    ``keyset`` is usually ``tp.keys.tensor_keyset(backend) | <the plugin's key>.mask``; the
    plugin's kernels for that key unwrap their arguments and rewrap their results.
    ``version_of=t`` shares ``t``'s version counter, so writes into the tensor a wrapper stands
    for show in the wrapper's ``_version`` (and the dispatcher bumps it once).
    """
    # on the path of every operator a wrapping plugin runs: built as cheaply as new_tensor
    if cls not in _wrapper_classes:
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(
                f"make_wrapper: cls must be tensorplug.Tensor or a subclass, got {cls!r}"
            )
        _wrapper_classes.add(cls)
    if type(shape) is not tuple:
        shape = tuple(shape)
    data = _logical_shapes.get(shape)
    if data is None:  # immutable, so one per shape serves every wrapper of that shape
        if len(_logical_shapes) > 4096:
            _logical_shapes.clear()
        data = _logical_shapes[shape] = LogicalShape(shape)
    t = _object_new(cls)
    t._data = data
    t._dtype = dtype
    t._device = device
    t._tp_keyset = keyset
    t._vc = None if version_of is None else version_of._tp_version
    return t


_wrapper_classes: set[type] = set()
_logical_shapes: dict[tuple[int, ...], LogicalShape] = {}


def wrapper_factory(
    cls: type[_T],
) -> Callable[[tuple[int, ...], _dtypes.dtype, Device, int], _T]:
    """``make(shape, dtype, device, keyset)``: :func:`make_wrapper` for class ``cls``, with
    ``shape`` a tuple and no ``version_of``, the class checked once here rather than on every
    call: for plugins that wrap the result of every operator (the batched plugin's ``wrap``)."""
    make_wrapper(cls, (), _dtypes.float32, Device("cpu"), 0)  # checks cls
    shapes = _logical_shapes
    new = _object_new

    def make(shape: tuple[int, ...], dtype: _dtypes.dtype, device: Device, keyset: int) -> _T:
        data = shapes.get(shape)
        if data is None:  # as in make_wrapper
            if len(shapes) > 4096:
                shapes.clear()
            data = shapes[shape] = LogicalShape(shape)
        t = new(cls)
        t._data = data
        t._dtype = dtype
        t._device = device
        t._tp_keyset = keyset
        t._vc = None
        return t

    return make


def is_wrapper(t: Tensor) -> bool:
    """Whether ``t`` is a wrapper tensor made by :func:`make_wrapper` (it has no data)."""
    return type(t._data) is LogicalShape


def no_storage_error() -> RuntimeError:
    """What reading a wrapper's elements raises (PyTorch's text for a tensor without storage)."""
    return RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


def _wrap_dim(dim: int, ndim: int, op: str = "") -> int:
    """``dim`` in ``[0, ndim)``, with PyTorch's message; ``op`` names the operator in it."""
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        prefix = f"aten::{op}: " if op else ""
        raise IndexError(
            f"{prefix}Dimension out of range (expected to be in range of [{lo}, {hi}], "
            f"but got {dim})"
        )
    return dim + ndim if dim < 0 else dim
