"""PyTorch's wording for operator errors, shared by the composites and the array kit (internal).

Both layers raise the messages ATen raises, and both need the same few words for them: the
error type a kernel raises (:class:`OpError`, which ``array_backend``'s ``guard`` names with
the op), the name ATen gives a dtype in a message (:func:`torch_name`: ``"Long"``; and
:func:`cpp_name`, the C++ type name a few ATen checks print: ``"long int"``), and the size
inference of ``view`` with its messages (:func:`infer_size`). They live here, in the op-set
layer below the kit, so that a composite raises ``view``'s message without importing the kit
(DESIGN §1: a layer imports only the layers below it).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import dtypes as _dt

__all__ = [
    "OpError",
    "OpNotImplementedError",
    "OpTypeError",
    "cpp_name",
    "fmt_shape",
    "infer_size",
    "torch_name",
]


class OpError(RuntimeError):
    """An error a kernel raises with PyTorch's wording; ``array_backend``'s ``guard`` adds the
    op name."""


class OpNotImplementedError(OpError, NotImplementedError):
    """A dtype the kernel does not implement (PyTorch's ``"add_cpu" not implemented for
    'Bool'``): it stays a ``NotImplementedError``, as PyTorch's is."""


class OpTypeError(TypeError):
    """A wrong argument type a kernel detects itself; it stays a ``TypeError``."""


# PyTorch's names for dtypes in error messages ("Got: Long").
_TORCH_NAMES = {
    "bool": "Bool",
    "uint8": "Byte",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}

# The C++ type names some ATen checks print instead ("float != double").
_CPP_NAMES = {
    "Float": "float",
    "Double": "double",
    "Long": "long int",
    "Int": "int",
    "Half": "c10::Half",
    "BFloat16": "c10::BFloat16",
    "Bool": "bool",
    "Short": "short int",
    "Char": "signed char",
    "Byte": "unsigned char",
    "ComplexFloat": "c10::complex<float>",
    "ComplexDouble": "c10::complex<double>",
}


def torch_name(d: _dt.dtype) -> str:
    """The name ATen gives ``d`` in messages: ``"Long"`` for int64."""
    return _TORCH_NAMES[d.name]


def cpp_name(d: _dt.dtype) -> str:
    """The C++ type name ATen prints for ``d`` in some checks: ``"long int"`` for int64."""
    return _CPP_NAMES[_TORCH_NAMES[d.name]]


def fmt_shape(shape: Sequence[int]) -> str:
    """A shape as ATen prints it in messages: ``[2, 3]``."""
    return "[" + ", ".join(str(n) for n in shape) + "]"


def broadcast_sizes(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """The broadcast of shapes ``a`` and ``b``, with ATen's message when they do not fit."""
    n = max(len(a), len(b))
    pa, pb = [1] * (n - len(a)) + list(a), [1] * (n - len(b)) + list(b)
    out = []
    for i, (x, y) in enumerate(zip(pa, pb, strict=True)):
        if x != y and x != 1 and y != 1:
            raise OpError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}"
            )
        out.append(y if x == 1 else x)
    return out


def infer_size(shape: Sequence[int], numel: int) -> tuple[int, ...]:
    """``shape`` with its one ``-1`` filled in; PyTorch's errors otherwise."""
    infer = -1
    known = 1
    for i, n in enumerate(shape):
        if n == -1:
            if infer >= 0:
                raise OpError("only one dimension can be inferred")
            infer = i
        elif n < 0:
            raise OpError(f"invalid shape dimension {n}")
        else:
            known *= n
    out = list(shape)
    if infer >= 0:
        if known == 0:
            raise OpError(
                f"cannot reshape tensor of 0 elements into shape {fmt_shape(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        if numel % known == 0:
            out[infer] = numel // known
            return tuple(out)
    elif known == numel:
        return tuple(out)
    raise OpError(f"shape '{fmt_shape(shape)}' is invalid for input of size {numel}")
