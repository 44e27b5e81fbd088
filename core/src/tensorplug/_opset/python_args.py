"""What the public functions accept beyond their schemas' types (internal).

Note [Python argument conversions]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
An operator overload binds exactly its schema's types (``tensorplug._binding``), as PyTorch's
``torch.ops`` overloads do. The public functions and methods (``tp.add``, ``x.add``) follow
PyTorch's Python argument parser instead, which also accepts

* a 0-dim tensor that does not require grad where the schema says ``Scalar``
  (``tp.add(x, y, alpha=tp.tensor(2))``): the kernel gets its value (``item()``);
* ``out=`` a tuple of tensors for an overload with several outs (``tp.sort(x, out=(v, i))``
  binds ``sort.values(..., *, Tensor(a!) values, Tensor(b!) indices)``);
* a Python number where the schema says ``Tensor``, for the few functions PyTorch allows it
  (``tp.add(x, 1, out=o)`` binds ``add.out``): the number becomes a 0-dim tensor of
  ``result_type(number)`` on the device of the call's first tensor, which type promotion ranks
  below dimensioned tensors of its category, as PyTorch's wrapped numbers.

Both apply only when a call fits no overload as given, so a call that fits stays on the fast
path (Note [Public function fast path] in _opset/functions.py) and is never converted; a converted call is
never cached, so every call is checked afresh.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dtypes
from .._protocol import is_tensor
from ..device import canonical as _canonical_device
from ..ops import ops
from ..schema import Argument, BaseType, FunctionSchema, OptionalType
from ..tensor import Tensor

__all__ = ["NUMBERS_AS_TENSORS", "convert"]

# The public names PyTorch's argument parser lets take numbers for tensors (the same list,
# and those whose Scalar overloads PyTorch has and our yaml has not).
NUMBERS_AS_TENSORS = frozenset(
    {
        "add", "add_", "sub", "sub_", "subtract", "subtract_", "mul", "mul_", "multiply",
        "multiply_", "div", "div_", "divide", "divide_", "true_divide", "true_divide_",
        "floor_divide", "floor_divide_", "copy_",
        # (overloads PyTorch has that take numbers: where.Scalar, bitwise_*.Scalar)
        "where", "bitwise_and", "bitwise_and_", "bitwise_or", "bitwise_or_", "bitwise_xor",
        "bitwise_xor_",
    }
)  # fmt: skip

_NUMBERS = frozenset({bool, int, float, complex})
_MISSING = object()


def convert(
    name: str, overloads: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
    """The first of ``overloads`` the call fits after Note [Python argument conversions],
    with the converted arguments; ``None`` when none fits that way either."""
    if name == "norm":
        by_string = _norm_by_string(args, kwargs)
        if by_string is not None:
            return by_string
    numbers = name in NUMBERS_AS_TENSORS
    like = next((v for v in (*args, *kwargs.values()) if is_tensor(v)), None)
    for op in overloads:
        converted = _converted(op.schema, numbers, like, args, kwargs)
        if converted is not None and op.schema.try_bind(*converted) is not None:
            return op, converted[0], converted[1]
    return None


def _norm_by_string(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
    """``norm(x, p="fro" | "nuc", dim, keepdim, dtype=)``: torch.norm's string orders, which
    its Python function takes (Frobenius: the 2-norm of the elements over ``dim``; nuclear:
    the matrix norm over ``dim``, the last two by default)."""
    names = ("input", "p", "dim", "keepdim")
    values = dict(zip(names, args, strict=False))
    values.update((("input" if k == "self" else k), v) for k, v in kwargs.items())
    p = values.get("p")
    if not isinstance(p, str) or set(values) - {*names, "dtype", "out"} or "out" in values:
        return None
    x, dim, keepdim = values.get("input"), values.get("dim"), values.get("keepdim", False)
    rest = {"dtype": values["dtype"]} if values.get("dtype") is not None else {}
    dims = [dim] if type(dim) is int else (None if dim is None else list(dim))
    if p == "fro" and (dims is None or len(dims) <= 2):
        return ops.aten.linalg_vector_norm.default, (x, 2, dims, keepdim), rest
    if p == "nuc":
        return ops.aten.linalg_matrix_norm.str_ord, (x, "nuc", dims or [-2, -1], keepdim), rest
    raise RuntimeError(
        f"norm(): p={p!r} is not a norm: the string orders are 'fro' (over at most two dims) "
        "and 'nuc'; pass a number for a vector norm"
    )


def _converted(
    schema: FunctionSchema,
    numbers: bool,
    like: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    if len(args) > len(schema.positional):
        return None
    changed = False
    new_args = []
    for argument, value in zip(schema.positional, args, strict=False):
        new = _value(argument, value, numbers, like)
        changed |= new is not _MISSING
        new_args.append(value if new is _MISSING else new)
    by_name = {a.name: a for a in schema.arguments}
    new_kwargs: dict[str, Any] = {}
    for key, value in kwargs.items():
        named = by_name.get(key)
        if named is None:
            writes = [a.name for a in schema.kwarg_only if a.is_write]
            if key == "out" and type(value) in (tuple, list) and len(writes) == len(value) > 1:
                # out=(values, indices) names an overload's several outs, in order
                new_kwargs.update(zip(writes, value, strict=True))
                changed = True
                continue
            return None
        new = _value(named, value, numbers, like)
        changed |= new is not _MISSING
        new_kwargs[key] = value if new is _MISSING else new
    return (tuple(new_args), new_kwargs) if changed else None


def _value(argument: Argument, value: Any, numbers: bool, like: Any) -> Any:
    """The converted value, or ``_MISSING`` when this argument needs no conversion."""
    type_ = argument.type
    if isinstance(type_, OptionalType):
        type_ = type_.elem
    if not isinstance(type_, BaseType):
        return _MISSING
    if type_.name == "Scalar":
        if is_tensor(value) and value.ndim == 0 and not value.requires_grad:
            return value.item()
    elif type_.name == "Tensor" and numbers and type(value) in _NUMBERS:
        return wrapped_number(value, like)
    return _MISSING


def _scalar_tensor(value: Any, like: Tensor) -> Tensor:
    dtype = _dtypes.result_type(value)
    t: Tensor = ops.aten.full.default([], value, dtype=dtype, device=like.device)
    return t


def wrapped_number(value: Any, like: Tensor | None) -> Tensor:
    """A Python number as a 0-dim tensor on ``like``'s device (the default device without
    one): Note [Python argument conversions] in _opset/python_args.py."""
    if like is None:
        dtype = _dtypes.result_type(value)
        t: Tensor = ops.aten.full.default([], value, dtype=dtype, device=_canonical_device(None))
        return t
    return _scalar_tensor(value, like)
