"""Tensor's conversions, queries, properties and legacy methods that are no operators
(internal; installed on Tensor by :func:`install`, from ``_startup``).

PyTorch binds these in Python or C++ outside native_functions.yaml: the dtype shorthands
(``byte()``, ``cfloat()``), ``type()`` and its ``'torch.FloatTensor'`` names (here
``'tensorplug.FloatTensor'``; ``'torch.'`` names are read too), where the tensor lives
(``is_cuda``, ``get_device()``), the legacy constructor ``new``, the element-by-element Python
loops ``apply_``/``map_``/``map2_``, ``module_load``, the matrix adjoints ``H``/``mH``, and the
methods PyTorch 2 removed (``lstsq``, ``solve``, ``eig``, ``symeig``), which raise its errors.
The queries that have a schema (``is_nonzero``, ``is_same_size``, ``is_signed``, ...) are
operators: composites/reductions.py.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from typing import Any

from .. import _backends
from .. import dtypes as _dtypes
from .. import keys as _keys
from ..device import canonical as _canonical_device
from ..device import device as _Device
from ..ops import ops
from ..tensor import Tensor
from .construct import legacy_new, tensor, to

__all__ = ["install", "legacy_type_name"]

# PyTorch's legacy tensor type names, by dtype ('torch.FloatTensor' is float32 on the CPU)
_TYPE_NAMES = {
    _dtypes.float32: "FloatTensor",
    _dtypes.float64: "DoubleTensor",
    _dtypes.float16: "HalfTensor",
    _dtypes.bfloat16: "BFloat16Tensor",
    _dtypes.int64: "LongTensor",
    _dtypes.int32: "IntTensor",
    _dtypes.int16: "ShortTensor",
    _dtypes.int8: "CharTensor",
    _dtypes.uint8: "ByteTensor",
    _dtypes.bool: "BoolTensor",
    _dtypes.complex64: "ComplexFloatTensor",
    _dtypes.complex128: "ComplexDoubleTensor",
}
_BY_TYPE_NAME = {name: d for d, name in _TYPE_NAMES.items()}


def legacy_type_name(t: Tensor) -> str:
    """``t.type()``: ``'tensorplug.FloatTensor'``, ``'tensorplug.cuda.LongTensor'``, ..."""
    dev = t.device.type
    where = "" if dev == "cpu" else f"{dev}."
    return f"tensorplug.{where}{_TYPE_NAMES[t.dtype]}"


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """With no argument, the type name (``'tensorplug.FloatTensor'``); with a dtype or a type
    name, the tensor converted to it (``self`` when it already is)."""
    if dtype is None:
        return legacy_type_name(self)
    device: Any = self.device
    if isinstance(dtype, str):
        name = dtype
        for prefix in ("tensorplug.", "torch."):
            if name.startswith(prefix):
                name = name[len(prefix) :]
                break
        else:
            raise ValueError(f"invalid type: {dtype!r}")
        dev_type, _, name = name.rpartition(".")
        target = _BY_TYPE_NAME.get(name)
        if target is None or (dev_type and "." in dev_type):
            raise ValueError(f"invalid type: {dtype!r}")
        if dev_type:
            device = dev_type if dev_type != self.device.type else self.device
        elif self.device.type != "cpu":
            device = "cpu"  # 'torch.FloatTensor' names the CPU type
    elif isinstance(dtype, _dtypes.dtype):
        target = dtype
    else:
        raise TypeError(
            f"type(): argument 'dtype' must be a tensorplug.dtype or a type name like "
            f"'tensorplug.FloatTensor', not {builtins.type(dtype).__name__}"
        )
    if target is self.dtype and _canonical_device(device) == self.device:
        return self
    return to(self, device, target, non_blocking=non_blocking)


def _chalf(self: Tensor, memory_format: Any = None) -> Tensor:
    raise TypeError(
        "chalf(): tensorplug has no complex32 (ComplexHalf) dtype; use cfloat() for complex64"
    )


def _get_device(self: Tensor) -> int:
    """The device index of a tensor on an indexed device (CUDA), -1 for the CPU and Meta."""
    dev = self.device
    if dev.type in ("cpu", "meta"):
        return -1
    if dev.index is None:
        return int(_backends.resolve_device(dev).index or 0)
    return int(dev.index)


def _is_on(device_type: str) -> property:
    def is_on(self: Tensor) -> bool:
        return bool(self.device.type == device_type)

    is_on.__name__ = f"is_{device_type}"
    return property(is_on)


def _never(name: str) -> property:
    def never(self: Tensor) -> bool:
        return False

    never.__name__ = name
    return property(never)


# --- the legacy constructor, new ----------------------------------------------------------------


def _new(self: Tensor, *args: Any, device: Any = None) -> Tensor:
    """PyTorch's ``Tensor.new``: the legacy constructor in ``self``'s dtype and on its device:
    sizes give an uninitialized tensor, data a copy, a tensor of that dtype an alias."""
    dev = device if device is not None else self.device
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype is not self.dtype:
            raise TypeError(
                f"new(): expected a {legacy_type_name(self)} (got {legacy_type_name(other)})"
            )
        return legacy_new(args, device)
    if not args or all(builtins.type(a) is builtins.int for a in args):
        size = list(args) if args else [0]
        r: Tensor = ops.aten.empty.memory_format(size, dtype=self.dtype, device=dev)
        return r
    if len(args) == 1 and not isinstance(args[0], str | bytes) and hasattr(args[0], "__len__"):
        return tensor(args[0], dtype=self.dtype, device=dev)
    return legacy_new(args, device)  # its TypeError


# --- element-by-element Python functions: apply_, map_, map2_ -----------------------------------


def _python_value(d: _dtypes.dtype) -> Callable[[Any], Any]:
    """What a Python function's result becomes in dtype ``d`` (PyTorch's unpacking)."""
    if d.is_complex:
        return builtins.complex
    if d.is_floating_point:
        return _real(builtins.float)
    if d is _dtypes.bool:
        return builtins.bool
    return _real(lambda v: builtins.int(builtins.float(v)) if isinstance(v, float) else int(v))


def _real(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def unpack(v: Any) -> Any:
        if not isinstance(v, builtins.int | builtins.float) and not hasattr(v, "__float__"):
            raise TypeError(f"must be real number, not {builtins.type(v).__name__}")
        return convert(v)

    return unpack


def _elementwise(name: str, self: Tensor, others: tuple[Any, ...], fn: Any) -> Tensor:
    """``self``'s elements replaced by ``fn(self_i, other_i, ...)``, in a Python loop over
    the CPU values, as PyTorch's apply_/map_/map2_ (others broadcast to self's shape)."""
    if self.requires_grad:
        raise RuntimeError(
            f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
            "instead."
        )
    if self.device.type == "meta":
        return self  # no values to visit, as PyTorch
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")
    if not callable(fn):
        raise TypeError(f"'{builtins.type(fn).__name__}' object is not callable")
    shape = list(self.shape)
    columns = [self.reshape(-1).tolist()]
    for o in others:
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'tensor' must be Tensor, not {type(o).__name__}")
        if o.dtype is not self.dtype:
            raise TypeError(
                f"{name}: expected {legacy_type_name(self)} for 'other' (got {legacy_type_name(o)})"
            )
        columns.append(o.expand(shape).reshape(-1).tolist())
    convert = _python_value(self.dtype)
    values = [convert(fn(*vs)) for vs in zip(*columns, strict=True)]
    result = tensor(values, dtype=self.dtype).reshape(shape)
    r: Tensor = ops.aten.copy_.default(self, result)
    return r


def _apply_(self: Tensor, callable: Any) -> Tensor:
    return _elementwise("apply_", self, (), callable)


def _map_(self: Tensor, tensor: Any, callable: Any) -> Tensor:
    return _elementwise("map_", self, (tensor,), callable)


def _map2_(self: Tensor, x: Any, y: Any, callable: Any) -> Tensor:
    return _elementwise("map2_", self, (x, y), callable)


# --- the rest ----------------------------------------------------------------------------------


def _module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """How ``load_state_dict`` remaps ``other`` before swapping it into ``self``: a new
    tensor, ``other`` detached when ``assign``, else ``self`` with ``other`` copied in."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def _record_stream(self: Tensor, stream: Any) -> None:
    """Nothing to do: tensorplug's backends free memory when the array goes (PyTorch's
    caching allocator needs to know the streams that use a block; on the CPU it is a no-op)."""
    if stream is None:
        raise RuntimeError("unknown parameter type")


# PyTorch's "Torch not compiled with XPU enabled", for tensorplug's plugins
_NOT_COMPILED = (
    "tensorplug has no {0} backend: no installed plugin registers the '{1}' device type "
    "(tensorplug.keys.register_backend)"
)


def _device_move(device_type: str, error: type[Exception], message: str) -> Callable[..., Tensor]:
    """``x.xpu()`` and its kind: ``to(device)`` where a backend plugin registers the device
    type, else PyTorch's error for a build without it."""

    def move(
        self: Tensor, device: Any = None, non_blocking: bool = False, memory_format: Any = None
    ) -> Tensor:
        if _keys.backend_for_device_type(device_type) is None:
            raise error(message)
        target = _Device(device_type, device) if builtins.type(device) is builtins.int else device
        return to(self, target if target is not None else device_type, non_blocking=non_blocking)

    move.__name__ = device_type
    return move


def _removed(name: str, message: str) -> Callable[..., Any]:
    def removed(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"This function was deprecated since version 1.9 and is now removed. {message}"
        )

    removed.__name__ = name
    return removed


def _reinforce(self: Tensor, reward: Any) -> None:
    raise RuntimeError(
        "reinforce() was removed. Use a score-function estimator instead: sample an action "
        "from the probabilities, then backward() through -log(probs[action]) * reward "
        "(PyTorch's torch.distributions.Categorical(probs).log_prob(action))."
    )


def _adjoint_check(self: Tensor, name: str) -> bool:
    """Whether ``self`` is 0-d (PyTorch warns and conjugates), else checks its rank."""
    nd = self.ndim
    if nd == 0:
        warnings.warn(
            f"Tensor.{name} is deprecated on 0-D tensors. Consider using x.conj().", stacklevel=3
        )
        return True
    if name == "H" and nd != 2:
        hint = " For batches of matrices, consider using tensor.mH" if nd > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {nd}-D tensor.{hint}"
        )
    if name == "mH" and nd < 2:
        raise RuntimeError(
            f"tensor.mH is only supported on matrices or batches of matrices. Got {nd}-D tensor."
        )
    return False


def _H(self: Tensor) -> Tensor:
    a = ops.aten
    if _adjoint_check(self, "H"):
        return a.conj.default(self)  # type: ignore[no-any-return]
    return a.conj.default(a.transpose.int(self, 0, 1))  # type: ignore[no-any-return]


def _mH(self: Tensor) -> Tensor:
    a = ops.aten
    if _adjoint_check(self, "mH"):
        return a.conj.default(self)  # type: ignore[no-any-return]
    return a.conj.default(a.transpose.int(self, -2, -1))  # type: ignore[no-any-return]


def _volatile(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
    return False


def _grad_dtype(self: Tensor) -> Any:
    return self.dtype


def _set_grad_dtype(self: Tensor, value: Any) -> None:
    if value is not self.dtype:
        raise NotImplementedError(
            "grad_dtype: tensorplug's autograd gives every gradient its tensor's dtype; a "
            "different grad_dtype is not supported (leave it as t.dtype)"
        )


_LSTSQ = (
    "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
    "reversed arguments and does not return the QR decomposition in the returned tuple "
    "(although it returns other information about the problem).\n\nTo get the QR decomposition "
    "consider using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the "
    "residuals of the solution in the last m - n columns of the returned value whenever m > n. "
    "In torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named "
    "tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]"
    "\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution"
)
_SOLVE = (
    "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
    "arguments reversed and does not return the LU factorization.\n\nTo get the LU "
    "factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
    "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\n"
    "X = torch.linalg.solve(A, B)"
)
_EIG = (
    "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
    "tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n"
    "L_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) "
    "should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)"
)
_SYMEIG = (
    "The default behavior has changed from using the upper triangular portion of the matrix "
    "by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) "
    "should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\n"
    "and\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
    "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
)

# methods of no schema that read nothing from autograd (the plugin replaces output_nr)
METHODS: dict[str, Any] = {
    "byte": lambda self, memory_format=None: to(self, _dtypes.uint8),
    "char": lambda self, memory_format=None: to(self, _dtypes.int8),
    "cfloat": lambda self, memory_format=None: to(self, _dtypes.complex64),
    "cdouble": lambda self, memory_format=None: to(self, _dtypes.complex128),
    "chalf": _chalf,
    "type": _type,
    "get_device": _get_device,
    "ndimension": lambda self: self.dim(),
    "is_inference": lambda self: False,  # inference_mode is no_grad here: no inference tensors
    "new": _new,
    "apply_": _apply_,
    "map_": _map_,
    "map2_": _map2_,
    "module_load": _module_load,
    "record_stream": _record_stream,
    "xpu": _device_move("xpu", AssertionError, _NOT_COMPILED.format("XPU", "xpu")),
    "ipu": _device_move("ipu", RuntimeError, _NOT_COMPILED.format("IPU", "ipu")),
    "mtia": _device_move("mtia", AssertionError, _NOT_COMPILED.format("MTIA", "mtia")),
    "lstsq": _removed("lstsq", _LSTSQ),
    "solve": _removed("solve", _SOLVE),
    "eig": _removed("eig", _EIG),
    "symeig": _removed("symeig", _SYMEIG),
    "reinforce": _reinforce,
    "H": property(_H),
    "mH": property(_mH),
    "volatile": property(_volatile),
    "grad_dtype": property(_grad_dtype, _set_grad_dtype),
    "name": property(lambda self: None),  # the name autograd gives a tensor: none here
    "output_nr": property(lambda self: 0),  # the autograd plugin's reads the tensor's history
    **{
        f"is_{dt}": _is_on(dt)
        for dt in ("cpu", "cuda", "meta", "xpu", "ipu", "maia", "mps", "mtia", "vulkan", "xla")
    },
    **{
        name: _never(name)
        for name in ("is_mkldnn", "is_nested", "is_quantized", "is_sparse", "is_sparse_csr")
    },
}


def install() -> None:
    for name, value in METHODS.items():
        if callable(value) and not isinstance(value, property):
            value.__name__ = name
            value.__qualname__ = f"Tensor.{name}"
        setattr(Tensor, name, value)
