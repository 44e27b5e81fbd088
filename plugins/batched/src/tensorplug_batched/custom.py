"""``tp.library.register_vmap(op, rule)``: a batching rule for an operator, PyTorch's API.

``rule(info, in_dims, *args, **kwargs) -> (output, out_dims)`` receives the call's arguments with
every tensor batched at the current level unwrapped (its batch dimension where ``in_dims`` says:
an int, or ``None`` for an argument that is not batched; a list of them for a ``Tensor[]``), and
``info.batch_size`` / ``info.randomness``. It returns the physical output and, per output
tensor, where its batch dimension is (``None``: the output is the same for every sample).

Usage::

    lib = tp.Library("mylib", "DEF")
    lib.define("scale(Tensor x, float k) -> Tensor")
    lib.impl("scale", lambda x, k: x * k, "CPU")

    @tp.library.register_vmap("mylib::scale", lib=lib)
    def scale_vmap(info, in_dims, x, k):
        return x * k, in_dims[0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplug as tp

from . import pytree
from .batched import BatchedTensor, wrap
from .calls import passdown, top_level, wrap_dim
from .levels import find_level

__all__ = ["VmapInfo", "register_vmap"]

_libraries: list[Any] = []  # Libraries made by register_vmap without lib=: kept alive


class VmapInfo:
    """What a custom rule learns about the vmap it runs under (PyTorch's ``VmapInfo``)."""

    __slots__ = ("batch_size", "randomness")

    def __init__(self, batch_size: int, randomness: str) -> None:
        self.batch_size = batch_size
        self.randomness = randomness

    def __repr__(self) -> str:
        return f"VmapInfo(batch_size={self.batch_size}, randomness={self.randomness!r})"


def register_vmap(op: Any, func: Callable[..., Any] | None = None, /, *, lib: Any = None) -> Any:
    """Give ``op`` (an ``OpOverload`` or ``"ns::op.overload"``) the batching rule ``func``;
    usable as a decorator. The rule is registered in ``lib`` (closed with it), or in a library
    kept for the rest of the process."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        overload = op if isinstance(op, tp.OpOverload) else tp.dispatcher.find_op(op)
        kernel = _kernel(overload, fn)
        target = lib
        if target is None:
            target = tp.Library(overload.namespace, "IMPL")
            _libraries.append(target)
        target.impl(overload, kernel, "Batched")
        return fn

    if func is not None:
        register(func)
        return func
    return register


def _kernel(op: Any, fn: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, kwargs)
        in_dims = tuple(_in_dim(a, lvl) for a in args)
        phys = tuple(_value(a, lvl) for a in args)
        level = find_level(lvl)
        size = level.size if level is not None else _size(args, lvl)
        info = VmapInfo(size, level.randomness if level is not None else "error")
        result = fn(info, in_dims, *phys, **kwargs)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise RuntimeError(
                f"register_vmap({op.name}): the rule must return a tuple (output, out_dims), got "
                f"{type(result).__name__}"
            )
        out, out_dims = result
        try:
            dims = pytree.broadcast_prefix(out_dims, out, none_is_leaf=True)
        except ValueError:
            raise RuntimeError(
                f"register_vmap({op.name}): out_dims {out_dims!r} does not match the structure of "
                "the output the rule returned"
            ) from None
        leaves, spec = pytree.tree_flatten(out, none_is_leaf=True)
        wrapped = [
            x if d is None or not isinstance(x, tp.Tensor) else wrap(x, wrap_dim(d, x.ndim), lvl)
            for x, d in zip(leaves, dims, strict=True)
        ]
        return pytree.tree_unflatten(spec, wrapped)

    kernel.__qualname__ = f"register_vmap[{op.name}]"
    return kernel


def _in_dim(a: Any, lvl: int) -> Any:
    if type(a) is BatchedTensor and a.level == lvl:
        return a.bdim
    if type(a) is list or type(a) is tuple:
        return [_in_dim(x, lvl) for x in a]
    return None


def _value(a: Any, lvl: int) -> Any:
    if type(a) is BatchedTensor and a.level == lvl:
        return a.value
    if type(a) is list or type(a) is tuple:
        return type(a)(_value(x, lvl) for x in a)
    return a


def _size(args: Any, lvl: int) -> int:
    for a in args:
        for x in a if isinstance(a, list | tuple) else (a,):
            if type(x) is BatchedTensor and x.level == lvl:
                return int(x.value.shape[x.bdim])
    raise AssertionError("nothing is batched at this level")
