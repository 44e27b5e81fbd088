"""The batched tensor: a wrapper that hides one batch dimension (the level stack: levels.py).

Note [Levels]
~~~~~~~~~~~~~
Each call of a vmapped function pushes a *level*: a number larger than every level before it,
with its batch size and randomness mode. A :class:`BatchedTensor` of level L stands for every
slice of its ``value`` along dimension ``bdim``, the batch dimension of L; its shape, dtype and
device are those of one slice (a wrapper tensor, Note [Wrapper tensors] in tensorplug/tensor.py),
and its key set holds ``Batched``. The value may itself be a BatchedTensor of a lower level
(nested vmap), never of a higher one, so the outermost wrapper carries the innermost level.

A kernel of the ``Batched`` key handles the highest level among its arguments: it unwraps that
level, calls the operator on the values (which dispatch again, to the lower levels, until plain
tensors reach a backend and autograd records on them), and wraps the result at that level.
Arguments that are not batched at that level -- plain tensors, or wrappers of lower levels --
are the same for every slice.

Usage::

    with levels.push(size=3, randomness="error") as level:
        x = wrap(tp.randn(3, 4), 0, level.id)      # x.shape == (4,)
        front(x).shape                              # (3, 4)
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp
from tensorplug.tensor import Tensor, no_storage_error, wrapper_factory

__all__ = [
    "BatchedTensor",
    "batch_size",
    "batched_at",
    "front",
    "level_of",
    "materialize",
    "physical",
    "slice_of",
    "unbatched",
    "wrap",
]

_aten = tp.ops.aten
_permute = _aten.permute.default
_unsqueeze = _aten.unsqueeze.default
_expand = _aten.expand.default
_select = _aten.select.int

BATCHED_MASK = tp.keys.get("Batched").mask


class BatchedTensor(Tensor):
    """A tensor standing for the slices of ``value`` along ``bdim`` at vmap level ``level``."""

    __slots__ = ("value", "bdim", "level")

    # not a subclass in the protocol's sense: it dispatches as a Tensor (its key does the rest)
    __tensorplug_function__ = tp.overrides.disabled_tensorplug_function_impl

    value: Tensor
    bdim: int
    level: int

    def __repr__(self) -> str:
        inner = "\n".join("    " + line for line in repr(self.value).splitlines())
        return f"BatchedTensor(lvl={self.level}, bdim={self.bdim}, value=\n{inner}\n)"

    def __bool__(self) -> bool:
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow. We don't support that yet, please file an issue at "
            "https://github.com/pytorch/pytorch/issues ."
        )

    def tolist(self) -> Any:
        raise no_storage_error()

    def numpy(self, *, force: bool = False) -> Any:
        raise no_storage_error()

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise no_storage_error()

    # as PyTorch's batching rules for new_*: the new tensor is batched, so that writing a
    # batched value into it works
    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None, **kw: Any) -> Tensor:
        return _new_like(self, tp.zeros, size, dtype, device, kw)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None, **kw: Any) -> Tensor:
        return _new_like(self, tp.ones, size, dtype, device, kw)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None, **kw: Any) -> Tensor:
        return _new_like(self, tp.empty, size, dtype, device, kw)

    def new_full(
        self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None, **kw: Any
    ) -> Tensor:
        phys = tp.full(
            [self.value.shape[self.bdim], *size], fill_value,
            dtype=dtype or self.dtype, device=device or self.device, **kw,
        )  # fmt: skip
        return wrap(phys, 0, self.level)


# Note [Operators of batched tensors]
# A Python operator on a Tensor subclass first asks whether an operand takes part in
# __tensorplug_function__ (Note [Operators and the protocol] in tensorplug/_operators.py); for a
# class without that attribute the answer is a failed class lookup, about 0.2 us, which every
# ``row + b`` inside vmap would pay. BatchedTensor takes no part in the protocol, so its common
# operators call the overload Tensor's operator would call when the other operand is a plain or
# batched tensor (or, for arithmetic, an int or a float), and hand every other case to Tensor's.


def _operator(name: str, tensor_op: Any, scalar_op: Any) -> Any:
    def op(self: BatchedTensor, other: Any) -> Any:
        t = type(other)
        if t is BatchedTensor or t is Tensor:
            if tensor_op is not None:
                return tensor_op.__call__(self, other)
        elif (t is float or t is int) and scalar_op is not None:
            return scalar_op.__call__(self, other)
        return getattr(Tensor, name)(self, other)

    op.__name__ = op.__qualname__ = name
    return op


for _name, _top, _sop in (
    ("__add__", _aten.add.Tensor, _aten.add.Scalar),
    ("__sub__", _aten.sub.Tensor, _aten.sub.Scalar),
    ("__mul__", _aten.mul.Tensor, _aten.mul.Scalar),
    ("__truediv__", _aten.div.Tensor, _aten.div.Scalar),
    ("__matmul__", _aten.matmul.default, None),
    ("__radd__", None, _aten.add.Scalar),
    ("__rsub__", None, _aten.rsub.Scalar),
    ("__rmul__", None, _aten.mul.Scalar),
    ("__rtruediv__", None, _aten.rdiv.Scalar),
):
    setattr(BatchedTensor, _name, _operator(_name, _top, _sop))
del _name, _top, _sop


_make = wrapper_factory(BatchedTensor)  # make_wrapper(BatchedTensor, ...), on every operator


def _new_like(
    self: BatchedTensor, factory: Any, size: tuple[Any, ...], dtype: Any, device: Any, kw: Any
) -> Tensor:
    dims = list(size[0]) if len(size) == 1 and not isinstance(size[0], int) else list(size)
    phys = factory(
        [self.value.shape[self.bdim], *dims],
        dtype=dtype or self.dtype, device=device or self.device, **kw,
    )  # fmt: skip
    return wrap(phys, 0, self.level)


# --- wrapping ----------------------------------------------------------------------------------


def wrap(value: Tensor, bdim: int, level: int) -> BatchedTensor:
    """``value`` batched along ``bdim`` (>= 0) at ``level``: a wrapper of one slice's shape.

    Its key set is ``value``'s plus ``Batched``: it holds ``Autograd<B>`` when ``value`` requires
    grad, so that ``requires_grad`` reads true inside vmap (the kernels of Batched run first
    either way). Its version counter is its own: writes reach ``value`` through the operators,
    which count them there.
    """
    shape = value.tp_data.shape  # the array's (or a wrapper's) shape: no property, no copy
    if type(shape) is not tuple:
        shape = tuple(shape)
    t = _make(
        shape[1:] if bdim == 0 else shape[:bdim] + shape[bdim + 1 :],
        value.tp_dtype,
        value.tp_device,
        value.tp_keyset | BATCHED_MASK,
    )
    t.value = value
    t.bdim = bdim
    t.level = level
    return t


def level_of(x: Any) -> int:
    """The level ``x`` is batched at (0: a plain tensor or not a tensor)."""
    return x.level if type(x) is BatchedTensor else 0


def batch_size(x: BatchedTensor) -> int:
    return int(x.value.shape[x.bdim])


def front(x: BatchedTensor) -> Tensor:
    """``x``'s value with the batch dimension first (a view when it has to move)."""
    v = x.value
    b = x.bdim
    if b == 0:
        return v
    n = v.ndim
    return _permute(v, [b, *range(b), *range(b + 1, n)])  # type: ignore[no-any-return]


def unbatched(x: Any, level: int) -> bool:
    """Whether ``x`` (a tensor) is the same for every slice of ``level``."""
    return type(x) is not BatchedTensor or x.level != level


def batched_at(x: Any, level: int) -> bool:
    """Whether ``x`` is a tensor batched at ``level`` (``not unbatched(x, level)``)."""
    return type(x) is BatchedTensor and x.level == level


def materialize(x: Tensor, size: int) -> Tensor:
    """``x`` repeated ``size`` times along a new first dimension (an expanded view)."""
    return _expand(_unsqueeze(x, 0), [size, *x.shape])  # type: ignore[no-any-return]


def physical(x: Any, level: int, size: int) -> Tensor:
    """``x`` at ``level`` with its batch dimension first, materialized if it has none."""
    if type(x) is BatchedTensor and x.level == level:
        return front(x)
    return materialize(x, size)


def slice_of(x: Any, level: int, i: int) -> Any:
    """Sample ``i`` of ``x`` at ``level`` (``x`` itself when it is unbatched there)."""
    if type(x) is BatchedTensor and x.level == level:
        return _select(x.value, x.bdim, i)
    return x
