"""Python operators, indexing and conversions of Tensor (internal).

Installed on :class:`~tensorplug.tensor.Tensor` after the standard operators are defined
(``_api.install``): each Python operator calls one operator overload directly, chosen by the
type of the other operand, so ``a + b`` costs no overload resolution.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from . import _backends, overrides
from . import dtypes as _dtypes
from .device import canonical as _canonical_device
from .device import device as _Device
from .ops import ops
from .tensor import LogicalShape, Tensor, no_storage_error

_SCALARS = frozenset({builtins.int, builtins.float, builtins.bool, builtins.complex})
# indices and values that never take part in __tensorplug_function__
_PLAIN = _SCALARS | {Tensor, slice, type(None), type(Ellipsis)}

# Functions ``fn(tensor, method)`` called before ``tolist()`` / ``numpy()`` hand a tensor's values
# to Python outside the dispatcher (plugins add them: KernelRegistry.add_value_read_hook).
value_read_hooks: list[Callable[[Tensor, str], None]] = []


# Note [Operators and the protocol]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A Python operator whose operand takes part in __tensorplug_function__ (a tensor-like, or a
# Tensor subclass that defines it) hands the call over with ``func`` the operator method itself
# (``Tensor.__add__``) and ``args`` as Python gave them (``(self, other)``), so a handler that
# unwraps its arguments and calls ``func`` again gets the plain result. When every handler
# declines, a binary operator returns NotImplemented (Python then tries the reflected one) and
# a unary one raises TypeError. The hot path pays one ``type(self) is Tensor`` test for this.


def _protocol(func: Callable[..., Any], *args: Any) -> Any:
    """The protocol's answer for a binary operator, or NotImplemented."""
    return overrides._offer(func, overrides._candidates(args), args, {})


def _takes_part(*values: Any) -> bool:
    # a loop, not any(genexpr): Tensor subclasses (nn.Parameter, wrappers) pass here per operator
    for v in values:
        t = type(v)
        if t is not Tensor and hasattr(t, "__tensorplug_function__"):
            return True
    return False


# Operators call ``op.__call__(...)`` rather than ``op(...)``: calling the instance goes through
# the type's call slot, which builds an argument tuple, while the method call runs the generated
# function directly (one lookup per call, so tracing's swap of ``__call__`` is still seen).


def _binary(tensor_op: Any, scalar_op: Any) -> Callable[[Tensor, Any], Any]:
    def op(self: Tensor, other: Any) -> Any:
        t = type(other)
        if type(self) is Tensor:
            if t is Tensor:
                return tensor_op.__call__(self, other)
            if t in _SCALARS:
                return scalar_op.__call__(self, other)
        if _takes_part(self, other):  # Note [Operators and the protocol]
            return _protocol(op, self, other)
        if isinstance(other, Tensor):
            return tensor_op(self, other)
        if t in _SCALARS:
            return scalar_op(self, other)
        if hasattr(other, "__index__") or hasattr(other, "__float__"):
            try:
                return scalar_op(self, other)
            except TypeError:
                pass
        return NotImplemented

    return op


def _reflected(tensor_op: Any, scalar_op: Any | None) -> Callable[[Tensor, Any], Any]:
    """``other <op> self`` where ``other`` is not a Tensor."""

    def op(self: Tensor, other: Any) -> Any:
        t = type(other)
        if (type(self) is not Tensor or t not in _PLAIN) and _takes_part(self, other):
            return _protocol(op, self, other)  # Note [Operators and the protocol]
        if t in _SCALARS:
            if scalar_op is not None:
                return scalar_op(self, other)
            return tensor_op(_scalar_tensor(other, self), self)
        if isinstance(other, Tensor):
            return tensor_op(other, self)
        return NotImplemented

    return op


def _unary(fn: Callable[[Tensor], Any]) -> Callable[[Tensor], Any]:
    def op(self: Tensor) -> Any:
        if type(self) is not Tensor and _takes_part(self):  # Note [Operators and the protocol]
            return overrides.handle_tensorplug_function(op, (self,), self)
        return fn(self)

    op.__name__ = op.__qualname__ = fn.__name__
    return op


def _scalar_tensor(value: Any, like: Tensor) -> Tensor:
    dtype = _dtypes.result_type(value)
    t: Tensor = ops.aten.full.default([], value, dtype=dtype, device=like.device)
    return t


def wrapped_number(value: Any, like: Tensor | None) -> Tensor:
    """A Python number as a 0-dim tensor on ``like``'s device (the default device without
    one): Note [Python argument conversions] in _python_args.py."""
    if like is None:
        dtype = _dtypes.result_type(value)
        t: Tensor = ops.aten.full.default([], value, dtype=dtype, device=_canonical_device(None))
        return t
    return _scalar_tensor(value, like)


def _inplace(tensor_op: Any, scalar_op: Any) -> Callable[[Tensor, Any], Any]:
    def op(self: Tensor, other: Any) -> Any:
        if (type(self) is not Tensor or type(other) not in _PLAIN) and _takes_part(self, other):
            return _protocol(op, self, other)  # Note [Operators and the protocol]
        if isinstance(other, Tensor):
            return tensor_op(self, other)
        if type(other) in _SCALARS:
            return scalar_op(self, other)
        return NotImplemented

    return op


def install() -> None:
    a = ops.aten
    T: Any = Tensor  # methods are attached below (typed as Any: mypy cannot see setattr)
    for name, top, sop in (
        ("add", a.add.Tensor, a.add.Scalar),
        ("sub", a.sub.Tensor, a.sub.Scalar),
        ("mul", a.mul.Tensor, a.mul.Scalar),
        ("truediv", a.div.Tensor, a.div.Scalar),
        ("floordiv", a.floor_divide.default, a.floor_divide.Scalar),
        ("mod", a.remainder.Tensor, a.remainder.Scalar),
        ("pow", a.pow.Tensor_Tensor, a.pow.Tensor_Scalar),
        ("eq", a.eq.Tensor, a.eq.Scalar),
        ("ne", a.ne.Tensor, a.ne.Scalar),
        ("lt", a.lt.Tensor, a.lt.Scalar),
        ("le", a.le.Tensor, a.le.Scalar),
        ("gt", a.gt.Tensor, a.gt.Scalar),
        ("ge", a.ge.Tensor, a.ge.Scalar),
    ):
        _install(f"__{name}__", _binary(top, sop))
    for name, fn in (
        ("and", a.bitwise_and.Tensor),
        ("or", a.bitwise_or.Tensor),
        ("xor", a.bitwise_xor.Tensor),
    ):
        _install(f"__{name}__", _binary_tensor_only(fn))
        _install(f"__r{name}__", _reflected(fn, None))
    _install("__radd__", _reflected(a.add.Tensor, a.add.Scalar))
    _install("__rmul__", _reflected(a.mul.Tensor, a.mul.Scalar))
    _install("__rsub__", _reflected(a.sub.Tensor, a.rsub.Scalar))
    _install("__rtruediv__", _reflected(a.div.Tensor, a.rdiv.Scalar))
    _install("__rfloordiv__", _reflected(a.floor_divide.default, None))
    _install("__rmod__", _reflected(a.remainder.Tensor, None))
    _install("__rpow__", _reflected(a.pow.Tensor_Tensor, lambda s, o: a.pow.Scalar(o, s)))
    _install("__matmul__", _binary_tensor_only(a.matmul.default))
    _install("__rmatmul__", _reflected(a.matmul.default, None))
    _install("__iadd__", _inplace(a.add_.Tensor, a.add_.Scalar))
    _install("__isub__", _inplace(a.sub_.Tensor, a.sub_.Scalar))
    _install("__imul__", _inplace(a.mul_.Tensor, a.mul_.Scalar))
    _install("__itruediv__", _inplace(a.div_.Tensor, a.div_.Scalar))

    def __neg__(self: Tensor) -> Any:
        return a.neg.default(self)

    def __pos__(self: Tensor) -> Any:
        return self

    def __abs__(self: Tensor) -> Any:
        return a.abs.default(self)

    for unary in (__neg__, __pos__, __abs__, _invert):
        _install(f"__{unary.__name__.strip('_')}__", _unary(unary))
    T.__hash__ = object.__hash__
    overrides._ignored.add(T.as_subclass)  # takes no tensor-like but self, as in PyTorch
    _install("__getitem__", _getitem)
    _install("__setitem__", _setitem)
    T.__iter__ = _iter
    T.__bool__ = lambda self: builtins.bool(_one_value(self, "Boolean"))
    T.__float__ = lambda self: builtins.float(_one_value(self, "float"))
    T.__int__ = lambda self: builtins.int(_one_value(self, "int"))
    T.__complex__ = lambda self: builtins.complex(_one_value(self, "complex"))
    T.__index__ = _index
    T.__array__ = _array
    T.item = item
    T.tolist = tolist
    T.numpy = numpy
    T.to = to
    T.cpu = lambda self: to(self, "cpu")
    T.cuda = _cuda
    T.T = property(lambda self: a.permute.default(self, list(range(self.ndim - 1, -1, -1))))
    T.mT = property(lambda self: a.transpose.int(self, -2, -1))
    T.type_as = lambda self, other: to(self, other.dtype)
    for name, dt in (
        ("float", _dtypes.float32),
        ("double", _dtypes.float64),
        ("half", _dtypes.float16),
        ("bfloat16", _dtypes.bfloat16),
        ("long", _dtypes.int64),
        ("int", _dtypes.int32),
        ("short", _dtypes.int16),
        ("bool", _dtypes.bool),
    ):
        setattr(T, name, _converter(dt))
    for name in ("zeros", "ones", "empty", "full"):
        setattr(T, f"new_{name}", _new_factory(name))
    T.new_tensor = _new_tensor


def _cuda(self: Tensor, device: Any = None, non_blocking: bool = False) -> Tensor:
    """``to(device)`` for a CUDA device: None is the current one, an int its index."""
    if device is None:
        device = "cuda"
    elif type(device) is builtins.int:
        device = _Device("cuda", device)
    elif _canonical_device(device).type != "cuda":
        raise RuntimeError(f"Invalid device, must be cuda device, got {device}")
    return to(self, device, non_blocking=non_blocking)


def _binary_tensor_only(fn: Any) -> Callable[[Tensor, Any], Any]:
    def op(self: Tensor, other: Any) -> Any:
        if (type(self) is not Tensor or type(other) not in _PLAIN) and _takes_part(self, other):
            return _protocol(op, self, other)  # Note [Operators and the protocol]
        if isinstance(other, Tensor):
            return fn(self, other)
        if type(other) in _SCALARS:
            return fn(self, _scalar_tensor(other, self))
        return NotImplemented

    return op


# ``q[i]`` and ``q[i] = v``: the protocol sees the tensor, the index and the value (Note
# [Operators and the protocol]).


def _getitem(self: Tensor, index: Any) -> Any:
    if type(self) is not Tensor or not (type(index) in _PLAIN or _plain_index(index)):
        if overrides.has_tensorplug_function((self, index)):
            return overrides.handle_tensorplug_function(_getitem, (self, index), self, index)
    return getitem(self, index)


def _setitem(self: Tensor, index: Any, value: Any) -> Any:
    if type(self) is not Tensor or not (_plain_index(index) and type(value) in _PLAIN):
        if overrides.has_tensorplug_function((self, index, value)):
            args = (self, index, value)
            return overrides.handle_tensorplug_function(_setitem, args, *args)
    return setitem(self, index, value)


def _plain_index(index: Any) -> bool:
    t = type(index)
    return t in _PLAIN or (t is tuple and all(type(i) in _PLAIN for i in index))


def _install(name: str, fn: Callable[..., Any]) -> None:
    """``Tensor.<name> = fn``, listed among the functions the protocol covers."""
    fn.__name__ = name
    fn.__qualname__ = f"Tensor.{name}"
    setattr(Tensor, name, fn)
    overrides._overridable.setdefault("Tensor", []).append(fn)
    overrides._signatures[fn] = inspect.signature(fn)


def _invert(self: Tensor) -> Any:
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError(
            "aten::bitwise_not.default: ~ (bitwise_not) is only supported for integer and "
            f"boolean tensors, got {self.dtype}"
        )
    return ops.aten.bitwise_not.default(self)


def _converter(dt: _dtypes.dtype) -> Callable[[Tensor], Tensor]:
    def convert(self: Tensor) -> Tensor:
        return to(self, dt)

    convert.__name__ = dt.name
    return convert


def _new_factory(name: str) -> Callable[..., Tensor]:
    def new(
        self: Tensor, *args: Any, dtype: Any = None, device: Any = None, **kwargs: Any
    ) -> Tensor:
        import tensorplug

        fn = getattr(tensorplug, name)
        if len(args) >= 1 and type(args[0]) is builtins.int and name != "full":
            args = (list(args),)
        r: Tensor = fn(*args, dtype=dtype or self.dtype, device=device or self.device, **kwargs)
        return r

    new.__name__ = f"new_{name}"
    return new


def _new_tensor(self: Tensor, data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device)


# --- values ---------------------------------------------------------------------------------


def _one_value(self: Tensor, what: str) -> Any:
    if self.numel() != 1:
        if what == "Boolean":
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        raise RuntimeError(
            f"only one element tensors can be converted to Python scalars ({what}())"
        )
    return item(self)


def _index(self: Tensor) -> int:
    if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return builtins.int(item(self))


def item(self: Tensor) -> Any:
    if self.numel() != 1:
        raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
    return ops.aten._local_scalar_dense.default(self)


def _host(self: Tensor) -> Any:
    data = self._data
    if type(data) is LogicalShape:  # Note [Wrapper tensors] in tensor.py
        raise no_storage_error()
    return _backends.for_key(_backend_name(self)).to_host(data)


def _backend_name(self: Tensor) -> str:
    from . import keys

    k = keys.backend_for_device_type(self.device.type)
    return k.name if k is not None else self.device.type.upper()


def tolist(self: Tensor) -> Any:
    for hook in value_read_hooks:
        hook(self, "tolist")
    return host_list(self)


def host_list(self: Tensor) -> Any:
    """The values of ``self`` as nested Python lists (``tolist()`` without the read hooks)."""
    host = _host(self)
    if self.dtype is _dtypes.bfloat16:
        host = host.astype("float32")
    return host.tolist()


def numpy(self: Tensor, *, force: bool = False) -> Any:
    for hook in value_read_hooks:
        hook(self, "numpy")
    if self.requires_grad and not force:
        raise RuntimeError(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
        )
    if self.device.type != "cpu":
        if not force:
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                "copy the tensor to host memory first."
            )
        return _host(self)
    data = self._data
    if type(data) is LogicalShape:
        raise no_storage_error()
    return data


def _array(self: Tensor, dtype: Any = None, copy: Any = None) -> Any:
    host = numpy(self, force=True)
    return host.astype(dtype) if dtype is not None else host


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; ``copy=``."""
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, str | _Device):
            dev = a
        elif type(a) is builtins.bool:
            non_blocking = a
        else:
            raise TypeError(
                f"to() received an invalid combination of arguments - got {type(a).__name__}; "
                "expected a dtype, a device (or its string), or a Tensor"
            )
    target_dev = _canonical_device(dev) if dev is not None else self.device
    if target_dev.index is None and target_dev.type == self.device.type != "cpu":
        target_dev = _backends.resolve_device(target_dev)  # "cuda": the current device
    target_dtype = dtype if dtype is not None else self.dtype
    if target_dev == self.device and target_dtype is self.dtype and not copy:
        return self
    r: Tensor = ops.aten._to_copy.default(
        self, dtype=target_dtype, device=target_dev, non_blocking=non_blocking
    )
    return r


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays, tensors)."""
    if dtype is not None and not isinstance(dtype, _dtypes.dtype):
        raise TypeError(
            f"tensor(): argument 'dtype' must be tensorplug.dtype, not {type(dtype).__name__}"
        )
    if isinstance(data, Tensor):
        t = to(
            ops.aten.clone.default(data),
            dtype=dtype or data.dtype,
            device=device if device is not None else data.device,
        )
        t = ops.aten.detach.default(t)
    else:
        dev = _canonical_device(device)
        t = _backends.for_device_type(dev.type).from_python(data, dtype, dev)
    if requires_grad:
        t.requires_grad_()
    result: Tensor = t
    return result


def legacy_new(args: tuple[Any, ...], device: Any) -> Tensor:
    """``Tensor(*args, device=None)``, as PyTorch's legacy constructor (``Tensor.__new__``)."""
    if not args:
        return _new_empty([0], device)
    if all(type(a) is builtins.int for a in args):
        return _new_empty(list(args), device)
    if len(args) == 1:
        (data,) = args
        if isinstance(data, Tensor):
            if device is not None and _canonical_device(device) != data.device:
                raise RuntimeError(
                    f"Tensor(other, device=...): other is on {data.device}, not {device}; use "
                    "other.to(device)"
                )
            r: Tensor = ops.aten.view.default(data, list(data.shape))  # shares data
            return r
        if not isinstance(data, str | bytes) and hasattr(data, "__len__"):
            return tensor(data, dtype=_dtypes.get_default_dtype(), device=device)
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    got = ", ".join(type(a).__name__ for a in args)
    raise TypeError(
        f"new(): expected a size of ints (Tensor(2, 3)) or one sequence of data "
        f"(Tensor([1, 2])), got ({got})"
    )


def _new_empty(size: list[int], device: Any) -> Tensor:
    r: Tensor = ops.aten.empty.memory_format(size, dtype=_dtypes.get_default_dtype(),
                                             device=_canonical_device(device))  # fmt: skip
    return r


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` itself when it is a Tensor of that dtype and device, else ``tensor(data)``."""
    if isinstance(data, Tensor):
        return to(data, dtype=dtype or data.dtype, device=device or data.device)
    return tensor(data, dtype=dtype, device=device)


# --- indexing -------------------------------------------------------------------------------


def _iter(self: Tensor) -> Iterator[Tensor]:
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    # as PyTorch's Tensor.__iter__: the rows are the views of one unbind
    yield from ops.aten.unbind.int(self, 0)


def _parse_index(self: Tensor, index: Any) -> tuple[Tensor, list[Any]]:
    """Apply the basic parts of ``index`` (ints, slices, None, ...) as views.

    Returns the view and, per dimension of the view, the advanced index (a tensor) or None.
    """
    a = ops.aten
    if not isinstance(index, tuple):
        index = (index,)
    # expand Ellipsis
    consumed = sum(
        0 if i is None or i is Ellipsis else (i.ndim if _is_bool_tensor(i) else 1) for i in index
    )
    n_ell = sum(1 for i in index if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    out = self
    dim = 0
    advanced: list[Any] = []
    for i in index:
        if i is Ellipsis:
            fill = self.ndim - consumed
            advanced.extend([None] * fill)
            dim += fill
        elif i is None:
            out = a.unsqueeze.default(out, dim)
            advanced.append(None)
            dim += 1
        elif type(i) is builtins.int or (
            hasattr(i, "__index__") and not isinstance(i, Tensor | list)
        ):
            size = out.shape[dim]
            ii = builtins.int(i.__index__())
            if not -size <= ii < size:
                raise IndexError(
                    f"index {ii} is out of bounds for dimension {dim} with size {size}"
                )
            out = a.select.int(out, dim, ii)
        elif type(i) is slice:
            if i.step is not None and i.step <= 0:
                raise ValueError("step must be greater than zero")
            if not (i.start is None and i.stop is None and i.step is None):
                out = a.slice.Tensor(out, dim, i.start, i.stop, 1 if i.step is None else i.step)
            advanced.append(None)
            dim += 1
        elif isinstance(i, Tensor | list | tuple) or type(i) is builtins.bool:
            t = i if isinstance(i, Tensor) else tensor(i, device=self.device)
            if t.dtype.is_floating_point or t.dtype.is_complex:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            advanced.append(t)
            dim += t.ndim if t.dtype is _dtypes.bool else 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                f"Variables are valid indices (got {type(i).__name__})"
            )
    return out, advanced


def _is_bool_tensor(i: Any) -> bool:
    return isinstance(i, Tensor) and i.dtype is _dtypes.bool


def getitem(self: Tensor, index: Any) -> Tensor:
    if type(index) is builtins.int:  # the common case, without parsing
        size = self.shape[0] if self.ndim else 0
        if self.ndim == 0:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` to convert a 0-dim tensor to a number"
            )
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {size}")
        r: Tensor = ops.aten.select.int(self, 0, index)
        return r
    view, advanced = _parse_index(self, index)
    if any(x is not None for x in advanced):
        r = ops.aten.index.Tensor(view, advanced)
        return r
    return view


def setitem(self: Tensor, index: Any, value: Any) -> None:
    view, advanced = _parse_index(self, index)
    a = ops.aten
    if any(x is not None for x in advanced):
        if not isinstance(value, Tensor):
            value = tensor(value, dtype=self.dtype, device=self.device)
        a.index_put_.default(view, advanced, value, False)
        return
    if isinstance(value, Tensor):
        a.copy_.default(view, value)
    elif type(value) in _SCALARS:
        a.fill_.Scalar(view, value)
    else:
        a.copy_.default(view, tensor(value, dtype=self.dtype, device=self.device))
