"""``tp.vmap``: run a function over a batch dimension of its inputs, as ``torch.func.vmap``.

``vmap(func, in_dims, out_dims)(*args)`` checks ``in_dims`` against the arguments (pytrees, via
optree), pushes a new level (Note [Levels] in batched.py), wraps each mapped input as a
:class:`~tensorplug_batched.batched.BatchedTensor` of that level, calls ``func`` once, and
turns each output back into a plain tensor with the batch dimension at its ``out_dims``
(an output that does not depend on the batch is expanded along it). Every operator ``func``
calls on a batched tensor runs its batching rule (rules/) or the loop fallback (fallback.py).
While a vmap runs, the ``VmapMode`` key is included so that random operators see the
randomness mode even when no argument is batched (rules/random.py).

Argument checks and their messages are PyTorch 2.13's (``torch/_functorch/vmap.py``); a pytree
structure prints as optree's ``PyTreeSpec``.

Usage::

    import tensorplug as tp
    x, w = tp.randn(8, 3), tp.randn(3, 2)
    tp.vmap(lambda row: row @ w)(x)                  # (8, 2): one row at a time, batched
    tp.vmap(tp.mul, in_dims=(0, None))(x, w[:, 0])   # (8, 3)
    tp.vmap(tp.sum, in_dims=1, out_dims=0)(x)        # (3,)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, cast

import tensorplug as tp
from tensorplug.tensor import Tensor

from . import pytree
from .batched import BatchedTensor, wrap
from .calls import wrap_dim
from .levels import enter, leave, vmap_mode_mask

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")
_local_state = tp.dispatch.local_state
_aten = tp.ops.aten
_permute = _aten.permute.default
_unsqueeze = _aten.unsqueeze.default
_expand = _aten.expand.default
_cat = _aten.cat.default
_vmap_mode = [0]  # VmapMode's bit, once read (vmap_mode_mask)


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """``func`` vectorized over dimension ``in_dims`` of its inputs (``torch.func.vmap``).

    ``in_dims``: an int, or a tuple with one entry per positional argument, each an int, ``None``
    (not mapped) or a pytree matching that argument. ``out_dims``: where the batch dimension
    goes in each output (an int, ``None`` for an output that does not depend on the batch, or a
    pytree matching the outputs). ``randomness``: ``"error"`` (random operators raise),
    ``"different"`` (each sample draws its own numbers) or ``"same"`` (every sample draws the
    same). ``chunk_size``: run at most this many samples at a time. Keyword arguments of the
    call are passed to ``func`` unmapped.
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    if chunk_size is not None and not chunk_size > 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    one_dim = type(in_dims) is int and chunk_size is None

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if one_dim and len(args) == 1:  # Note [vmap fast path]: one tensor, an int in_dims
            a = args[0]
            if isinstance(a, Tensor):
                shape = a.tp_data.shape
                k = len(shape)
                d = in_dims + k if in_dims < 0 else in_dims
                if 0 <= d < k:
                    return _one_input(func, a, d, shape[d], out_dims, randomness, kwargs)
        flat = _flat_inputs(args, in_dims)
        if flat is not None and (chunk_size is None or chunk_size >= flat[1]):
            # Note [vmap fast path]
            return _flat_vmap(func, None, out_dims, randomness, kwargs, flat[1], args, flat[0])
        return _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _name(func: Any) -> str:
    return getattr(func, "__name__", None) or repr(func)


def _vmap_call(
    func: Callable[..., Any],
    in_dims: Any,
    out_dims: Any,
    randomness: str,
    chunk_size: int | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    name = _name(func)
    _check_out_dims(out_dims, name)
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, int | tuple):
        raise ValueError(
            f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching "
            f"the structure of inputs, got: {type(in_dims)}."
        )
    if len(args) == 0:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
            "trying to vmap over a function with no inputs. The latter is unsupported."
        )
    tree: Any = args
    flat_args, args_spec = pytree.tree_flatten(tree, none_is_leaf=True)
    try:
        flat_in_dims: list[Any] = pytree.broadcast_prefix(in_dims, tree, none_is_leaf=True)
    except ValueError:
        raise ValueError(
            f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {pytree.tree_structure(in_dims, none_is_leaf=True)} but inputs has "
            f"structure {args_spec}."
        ) from None
    sizes = []
    dims: list[int | None] = []
    for arg, d in zip(flat_args, flat_in_dims, strict=True):
        if d is None or arg is None:  # None is an empty node of the pytree, as in PyTorch
            dims.append(None)
            continue
        if type(d) is not int:
            raise ValueError(
                f"{where}: Got in_dim={d} for an input but in_dim must be either an integer "
                "dimension or None."
            )
        if not isinstance(arg, Tensor):
            raise ValueError(
                f"{where}: Got in_dim={d} for an input but the input is of type {type(arg)}. "
                "We cannot vmap over non-Tensor arguments, please use None as the respective "
                "in_dim"
            )
        n = arg.ndim
        if not -n <= d < n:
            raise ValueError(
                f"{where}: Got in_dim={d} for some input, but that input is a Tensor of "
                f"dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}."
            )
        d = d + n if d < 0 else d
        dims.append(d)
        sizes.append(arg.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    size = sizes[0]
    run = functools.partial(_flat_vmap, func, args_spec, out_dims, randomness, kwargs)
    if chunk_size is None or chunk_size >= size:
        return run(size, flat_args, dims)
    return _chunked(run, size, chunk_size, flat_args, dims, out_dims)


# Note [vmap fast path]
# Most calls map plain tensor arguments (no pytree) with an int or a flat tuple of ints and
# Nones, and return a tensor or a flat tuple of tensors. For them vmap checks the arguments
# directly instead of through optree (flattening and broadcasting pytrees costs tens of
# microseconds per call); anything unusual, including every error, takes the general path,
# which produces PyTorch's messages.


def _flat_inputs(args: tuple[Any, ...], in_dims: Any) -> tuple[list[int | None], int] | None:
    """``(dims, batch size)`` when every argument is a tensor and every check passes."""
    dims: list[int | None] = []
    size = -1
    if type(in_dims) is int:
        for a in args:
            if not isinstance(a, Tensor):
                return None
            shape = a.tp_data.shape  # an array's or a wrapper's: no property, no copy
            k = len(shape)
            d = in_dims
            if not -k <= d < k:
                return None
            if d < 0:
                d += k
            if size < 0:
                size = shape[d]
            elif shape[d] != size:
                return None
            dims.append(d)
        return (dims, size) if size >= 0 else None
    if type(in_dims) is not tuple or len(in_dims) != len(args):
        return None
    for a, d in zip(args, in_dims, strict=True):
        if d is None:
            if isinstance(a, list | tuple | dict):
                return None
            dims.append(None)
            continue
        if type(d) is not int or not isinstance(a, Tensor):
            return None
        shape = a.tp_data.shape
        k = len(shape)
        if not -k <= d < k:
            return None
        if d < 0:
            d += k
        if size < 0:
            size = shape[d]
        elif shape[d] != size:
            return None
        dims.append(d)
    return (dims, size) if size >= 0 else None


def _check_out_dims(out_dims: Any, name: str) -> None:
    leaves = pytree.tree_leaves(out_dims, none_is_leaf=True)
    if not all(d is None or type(d) is int for d in leaves) or isinstance(out_dims, str):
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
            "collection of ints representing where in the outputs the vmapped dimension should "
            "appear."
        )


def _one_input(
    func: Callable[..., Any],
    a: Tensor,
    d: int,
    size: int,
    out_dims: Any,
    randomness: str,
    kwargs: dict[str, Any],
) -> Any:
    """``_flat_vmap`` of one tensor argument, mapped along ``d`` (Note [vmap fast path])."""
    level = enter(size, randomness)
    masks = _local_state.masks
    inc = masks.inc
    mode = _vmap_mode[0]
    if not mode:
        mode = _vmap_mode[0] = vmap_mode_mask()
    masks.inc = inc | mode
    try:
        lvl = level.id
        out = func(wrap(a, d, lvl), **kwargs)
        if type(out_dims) is int:
            if type(out) is BatchedTensor and out.level == lvl and out.bdim == out_dims:
                return out.value
            if isinstance(out, Tensor):
                return _unbatch(out, out_dims, lvl, size, "")
            if type(out) is tuple and all(isinstance(o, Tensor) for o in out):
                return tuple(_unbatch(o, out_dims, lvl, size, "") for o in out)
        return _unwrap_outputs(out, out_dims, lvl, size, _name(func))
    finally:
        masks.inc = inc
        leave(level)


def _flat_vmap(
    func: Callable[..., Any],
    args_spec: Any,
    out_dims: Any,
    randomness: str,
    kwargs: dict[str, Any],
    size: int,
    flat_args: list[Any] | tuple[Any, ...],
    dims: list[int | None],
) -> Any:
    """Call ``func`` at a new level. ``args_spec`` None: ``flat_args`` are the arguments."""
    level = enter(size, randomness)
    masks = _local_state.masks
    inc = masks.inc
    mode = _vmap_mode[0]
    if not mode:
        mode = _vmap_mode[0] = vmap_mode_mask()
    masks.inc = inc | mode
    try:
        lvl = level.id
        batched = [
            a if d is None else wrap(a, d, lvl) for a, d in zip(flat_args, dims, strict=True)
        ]
        if args_spec is None:
            out = func(*batched, **kwargs)
        else:
            out = func(*pytree.tree_unflatten(args_spec, batched), **kwargs)
        if type(out_dims) is int:  # Note [vmap fast path]
            if type(out) is BatchedTensor and out.level == lvl and out.bdim == out_dims:
                return out.value
            if isinstance(out, Tensor):
                return _unbatch(out, out_dims, lvl, size, "")
            if type(out) is tuple and all(isinstance(o, Tensor) for o in out):
                return tuple(_unbatch(o, out_dims, lvl, size, "") for o in out)
        return _unwrap_outputs(out, out_dims, lvl, size, _name(func))
    finally:
        masks.inc = inc
        leave(level)


def _unwrap_outputs(out: Any, out_dims: Any, lvl: int, size: int, name: str) -> Any:
    _check_out_dims(out_dims, name)
    flat_out, out_spec = pytree.tree_flatten(out, none_is_leaf=True)
    try:
        flat_dims = pytree.broadcast_prefix(out_dims, out, none_is_leaf=True)
    except ValueError:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
            f"the structure of `outputs`. out_dims has structure "
            f"{pytree.tree_structure(out_dims, none_is_leaf=True)} but outputs has structure "
            f"{out_spec}."
        ) from None
    result = [_unbatch(o, d, lvl, size, name) for o, d in zip(flat_out, flat_dims, strict=True)]
    return pytree.tree_unflatten(out_spec, result)


def _unbatch(out: Any, out_dim: int | None, lvl: int, size: int, name: str) -> Any:
    if out is None:  # an empty node of the output pytree
        return None
    batched = isinstance(out, BatchedTensor) and out.level == lvl
    if out_dim is None:
        if batched:
            raise ValueError(
                f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
            )
        return out
    if not isinstance(out, Tensor):
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(out)}. "
            "Did you mean to set out_dims= to None for output?"
        )
    d = wrap_dim(out_dim, out.ndim + 1)
    if not batched:  # the same for every sample: repeat it along a new dimension (a view)
        return _expand(_unsqueeze(out, d), [*out.shape[:d], size, *out.shape[d:]])
    bt = cast(BatchedTensor, out)
    value, b = bt.value, bt.bdim
    if b == d:
        return value
    order = [i for i in range(value.ndim) if i != b]
    order.insert(d, b)
    return _permute(value, order)


def _chunked(
    run: Callable[..., Any],
    size: int,
    chunk_size: int,
    flat_args: list[Any],
    dims: list[int | None],
    out_dims: Any,
) -> Any:
    """Run ``chunk_size`` samples at a time and concatenate the outputs along their out_dims."""
    outs = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        chunk = [
            a if d is None else _aten.narrow.default(a, d, start, n)
            for a, d in zip(flat_args, dims, strict=True)
        ]
        outs.append(run(n, chunk, dims))
    first_leaves, spec = pytree.tree_flatten(outs[0], none_is_leaf=True)
    per_chunk = [pytree.tree_leaves(o, none_is_leaf=True) for o in outs]
    flat_dims = pytree.broadcast_prefix(out_dims, outs[0], none_is_leaf=True)
    merged = []
    for i, d in enumerate(flat_dims):
        pieces = [leaves[i] for leaves in per_chunk]
        if d is None or not isinstance(first_leaves[i], Tensor):
            merged.append(pieces[0])  # not batched: every chunk returned the same
        else:
            merged.append(_cat(pieces, d))
    return pytree.tree_unflatten(spec, merged)
