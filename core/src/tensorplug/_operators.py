"""Python operators, indexing and conversions of Tensor (internal).

Installed on :class:`~tensorplug.tensor.Tensor` after the standard operators are defined
(``_api.install``): each Python operator calls one operator overload directly, chosen by the
type of the other operand, so ``a + b`` costs no overload resolution.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator
from typing import Any

from . import _backends, overrides
from . import dtypes as _dtypes
from .device import canonical as _canonical_device
from .device import device as _Device
from .ops import ops
from .tensor import Tensor

_SCALARS = frozenset({builtins.int, builtins.float, builtins.bool, builtins.complex})

# Functions ``fn(tensor, method)`` called before ``tolist()`` / ``numpy()`` hand a tensor's values
# to Python outside the dispatcher (plugins add them: KernelRegistry.add_value_read_hook).
value_read_hooks: list[Callable[[Tensor, str], None]] = []


def _protocol(public_name: str, self: Any, other: Any, reflected: bool) -> Any:
    if hasattr(type(other), "__tensorplug_function__"):
        import tensorplug

        fn = getattr(tensorplug, public_name)
        args = (other, self) if reflected else (self, other)
        return overrides.handle_tensorplug_function(fn, args, *args)
    return NotImplemented


# Operators call ``op.__call__(...)`` rather than ``op(...)``: calling the instance goes through
# the type's call slot, which builds an argument tuple, while the method call runs the generated
# function directly (one lookup per call, so tracing's swap of ``__call__`` is still seen).


def _binary(public: str, tensor_op: Any, scalar_op: Any) -> Callable[[Tensor, Any], Any]:
    def op(self: Tensor, other: Any) -> Any:
        t = type(other)
        if t is Tensor:
            return tensor_op.__call__(self, other)
        if t in _SCALARS:
            return scalar_op.__call__(self, other)
        if isinstance(other, Tensor):
            return tensor_op(self, other)
        if hasattr(other, "__index__") or hasattr(other, "__float__"):
            try:
                return scalar_op(self, other)
            except TypeError:
                pass
        return _protocol(public, self, other, False)

    return op


def _reflected(public: str, tensor_op: Any, scalar_op: Any | None) -> Callable[[Tensor, Any], Any]:
    """``other <op> self`` where ``other`` is not a Tensor."""

    def op(self: Tensor, other: Any) -> Any:
        t = type(other)
        if t in _SCALARS:
            if scalar_op is not None:
                return scalar_op(self, other)
            return tensor_op(_scalar_tensor(other, self), self)
        if isinstance(other, Tensor):
            return tensor_op(other, self)
        return _protocol(public, self, other, True)

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
        if isinstance(other, Tensor):
            return tensor_op(self, other)
        if type(other) in _SCALARS:
            return scalar_op(self, other)
        return NotImplemented

    return op


def install() -> None:
    a = ops.aten
    T: Any = Tensor  # methods are attached below (typed as Any: mypy cannot see setattr)
    for name, public, top, sop in (
        ("add", "add", a.add.Tensor, a.add.Scalar),
        ("sub", "sub", a.sub.Tensor, a.sub.Scalar),
        ("mul", "mul", a.mul.Tensor, a.mul.Scalar),
        ("truediv", "div", a.div.Tensor, a.div.Scalar),
        ("floordiv", "floor_divide", a.floor_divide.default, a.floor_divide.Scalar),
        ("mod", "remainder", a.remainder.Tensor, a.remainder.Scalar),
        ("pow", "pow", a.pow.Tensor_Tensor, a.pow.Tensor_Scalar),
        ("eq", "eq", a.eq.Tensor, a.eq.Scalar),
        ("ne", "ne", a.ne.Tensor, a.ne.Scalar),
        ("lt", "lt", a.lt.Tensor, a.lt.Scalar),
        ("le", "le", a.le.Tensor, a.le.Scalar),
        ("gt", "gt", a.gt.Tensor, a.gt.Scalar),
        ("ge", "ge", a.ge.Tensor, a.ge.Scalar),
    ):
        setattr(T, f"__{name}__", _binary(public, top, sop))
    for name, fn in (("and", a.bitwise_and.Tensor), ("or", a.bitwise_or.Tensor), ("xor", a.bitwise_xor.Tensor)):
        setattr(T, f"__{name}__", _binary_tensor_only(f"bitwise_{name}", fn))
        setattr(T, f"__r{name}__", _reflected(f"bitwise_{name}", fn, None))
    T.__radd__ = _reflected("add", a.add.Tensor, a.add.Scalar)
    T.__rmul__ = _reflected("mul", a.mul.Tensor, a.mul.Scalar)
    T.__rsub__ = _reflected("sub", a.sub.Tensor, a.rsub.Scalar)
    T.__rtruediv__ = _reflected("div", a.div.Tensor, a.rdiv.Scalar)
    T.__rfloordiv__ = _reflected("floor_divide", a.floor_divide.default, None)
    T.__rmod__ = _reflected("remainder", a.remainder.Tensor, None)
    T.__rpow__ = _reflected("pow", a.pow.Tensor_Tensor, lambda s, o: a.pow.Scalar(o, s))
    T.__matmul__ = _binary_tensor_only("matmul", a.matmul.default)
    T.__rmatmul__ = _reflected("matmul", a.matmul.default, None)
    T.__iadd__ = _inplace(a.add_.Tensor, a.add_.Scalar)
    T.__isub__ = _inplace(a.sub_.Tensor, a.sub_.Scalar)
    T.__imul__ = _inplace(a.mul_.Tensor, a.mul_.Scalar)
    T.__itruediv__ = _inplace(a.div_.Tensor, a.div_.Scalar)
    T.__neg__ = lambda self: a.neg.default(self)
    T.__pos__ = lambda self: self
    T.__abs__ = lambda self: a.abs.default(self)
    T.__invert__ = _invert
    T.__hash__ = object.__hash__
    T.__getitem__ = getitem
    T.__setitem__ = setitem
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
        ("float", _dtypes.float32), ("double", _dtypes.float64), ("half", _dtypes.float16),
        ("bfloat16", _dtypes.bfloat16), ("long", _dtypes.int64), ("int", _dtypes.int32),
        ("short", _dtypes.int16), ("bool", _dtypes.bool),
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


def _binary_tensor_only(public: str, fn: Any) -> Callable[[Tensor, Any], Any]:
    def op(self: Tensor, other: Any) -> Any:
        if isinstance(other, Tensor):
            return fn(self, other)
        if type(other) in _SCALARS:
            return fn(self, _scalar_tensor(other, self))
        return _protocol(public, self, other, False)

    return op


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
    def new(self: Tensor, *args: Any, dtype: Any = None, device: Any = None, **kwargs: Any) -> Tensor:
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
        raise RuntimeError(f"only one element tensors can be converted to Python scalars ({what}())")
    return item(self)


def _index(self: Tensor) -> int:
    if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return builtins.int(item(self))


def item(self: Tensor) -> Any:
    if self.numel() != 1:
        raise RuntimeError(
            f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
        )
    return ops.aten._local_scalar_dense.default(self)


def _host(self: Tensor) -> Any:
    return _backends.for_key(_backend_name(self)).to_host(self._data)


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
    return self._data


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
        t = to(ops.aten.clone.default(data), dtype=dtype or data.dtype,
               device=device if device is not None else data.device)
        t = ops.aten.detach.default(t)
    else:
        dev = _canonical_device(device)
        t = _backends.for_device_type(dev.type).from_python(data, dtype, dev)
    if requires_grad:
        t.requires_grad_()
    result: Tensor = t
    return result


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
        0 if i is None or i is Ellipsis else (i.ndim if _is_bool_tensor(i) else 1)
        for i in index
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
        elif type(i) is builtins.int or (hasattr(i, "__index__") and not isinstance(i, Tensor | list)):
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
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors"
                )
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
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` to convert a 0-dim tensor to a number")
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

