"""Reverse-mode transforms of ``tp.func``: ``grad``, ``grad_and_value``, ``vjp`` and ``jacrev``;
they differentiate with the autograd plugin (``tp.autograd.grad``).

Note [Gradients inside vmap]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Autograd records on physical tensors, below ``Batched``. So inside ``vmap``, ``grad(f)(x)``
cannot differentiate with respect to the tensor ``x`` stands for: for parameters that are not
batched (``vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)``), that tensor is shared by
every sample, and its gradient would be the sum of the per-sample gradients. Instead each
differentiated input is *tracked*: its innermost value becomes a fresh differentiable tensor
(a leaf, or an alias of it when an enclosing transform already differentiates through it),
and it is materialized at every active vmap level -- expanded along a new batch dimension where
it has none -- so that every sample owns its slice of the physical tensor. The gradient with
respect to that physical tensor, for a cotangent laid out the same way (both are brought to
``[B_outer, ..., B_inner, *logical]``), has each sample's gradient in that sample's slice,
because samples never mix: wrapped back at the levels, it is the per-sample gradient.

Cotangents batched at a level that did not exist when the function ran (``vmap(vjp_fn)``) are
handled per sample of that level. The graph is kept differentiable (``create_graph``) whenever
an enclosing transform or the caller's autograd differentiates through an argument, so
``grad(grad(f))`` and ``hessian`` work; a tensor that requires grad and is captured by the
function (not passed as an argument) counts as a constant there, where PyTorch would keep the
graph through it. Forward mode: forward.py (Note [Tangents inside vmap]); a differentiated
input that carries forward-mode tangents keeps them (``jacfwd(jacrev(f))``).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import tensorplug as tp
from tensorplug.errors import MissingPluginError
from tensorplug.tensor import Tensor

from . import pytree
from .batched import BatchedTensor, materialize, slice_of, wrap
from .levels import Level, active_levels, find_level

__all__ = ["grad", "grad_and_value", "jacrev", "vjp"]

aten = tp.ops.aten
_stack = aten.stack.default


def _autograd(name: str) -> Any:
    """``tp.autograd``, or a MissingPluginError naming tensorplug-autograd and the transform."""
    try:
        return tp.autograd
    except MissingPluginError as e:
        raise MissingPluginError(
            f"tp.func.{name} computes gradients with the tensorplug-autograd plugin: {e}",
            distribution="tensorplug-autograd",
        ) from None


class _Depth(threading.local):
    def __init__(self) -> None:
        self.value = 0  # transforms running on this thread


_depth = _Depth()


@contextmanager
def _transform() -> Iterator[None]:
    _depth.value += 1
    try:
        yield
    finally:
        _depth.value -= 1


# --- tracking inputs and the vector-Jacobian product ------------------------------------------


def _innermost(x: Any) -> Any:
    while type(x) is BatchedTensor:
        x = x.value
    return x


def _rebuild(x: Any, inner: Any) -> Any:
    """``x``'s chain of wrappers around ``inner`` instead of ``x``'s innermost value."""
    if type(x) is BatchedTensor:
        return wrap(_rebuild(x.value, inner), x.bdim, x.level)
    return inner


def _materialize(x: Any, levels: list[Level]) -> Any:
    """``x`` batched at every level of ``levels`` (ascending); expanded where it was not."""
    if not levels:
        return x
    *lower, top = levels
    if type(x) is BatchedTensor and x.level == top.id:
        return wrap(_materialize(x.value, lower), x.bdim, top.id)
    return wrap(materialize(_materialize(x, lower), top.size), 0, top.id)


def _canonical(x: Any) -> Any:
    """A fully materialized ``x`` as one physical tensor ``[B_outer, ..., B_inner, *shape]``."""
    if type(x) is not BatchedTensor:
        return x
    return _canonical(aten.movedim.int(x.value, x.bdim, 0))


def _forward_bit() -> int:
    """The ``ForwardAD`` key's bit (0 without the autograd plugin, which adds the key)."""
    try:
        return tp.keys.get("ForwardAD").mask
    except Exception:  # noqa: BLE001  (an unknown key: no tensor is dual)
        return 0


class _Tracked:
    """A differentiated input: the logical tensor the function sees, and the physical tensor
    the gradient is taken with respect to (Note [Gradients inside vmap])."""

    def __init__(self, x: Any, levels: list[Level]) -> None:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        inner = _innermost(x)
        self.was_tracked = bool(inner.requires_grad)
        if self.was_tracked:  # an alias, so only this transform's path is differentiated
            fresh = aten.view.default(inner, list(inner.shape))
        elif inner.tp_keyset & _forward_bit():
            # a dual tensor (an enclosing jvp): a view made recording nothing keeps its
            # tangents, which detach() would drop
            with tp.no_grad():
                fresh = aten.view.default(inner, list(inner.shape))
            fresh.requires_grad_()
        else:
            fresh = aten.detach.default(inner).requires_grad_()
        self.logical = _materialize(_rebuild(x, fresh), levels)
        self.physical = _innermost(self.logical)

    def wrap_grad(self, g: Any) -> Any:
        if g is None:
            g = aten.zeros_like.default(self.physical)
        return _rebuild(self.logical, g)


def _vjp(outputs: list[Any], tracked: list[_Tracked], cotangents: list[Any], levels: list[Level],
         create_graph: bool, retain_graph: bool) -> list[Any]:  # fmt: skip
    """``sum_k cotangents[k] . d outputs[k] / d tracked`` per sample, as logical tensors."""
    known = {lv.id for lv in levels}
    # a cotangent batched at a level newer than the function's run: one vjp per sample of it
    newest = 0
    for c in cotangents:
        x = c
        while type(x) is BatchedTensor:
            if x.level not in known and x.level > newest:
                newest = x.level
            x = x.value
    if newest:
        level = find_level(newest)
        size = level.size if level is not None else _size_at(cotangents, newest)
        per_sample = [
            _vjp(
                outputs,
                tracked,
                [slice_of(c, newest, i) for c in cotangents],
                levels,
                create_graph,
                True,
            )  # fmt: skip
            for i in range(size)
        ]
        return [wrap(_stack([p[k] for p in per_sample], 0), 0, newest) for k in range(len(tracked))]
    outs, cts = [], []
    for o, c in zip(outputs, cotangents, strict=True):
        phys = _canonical(_materialize(o, levels))
        if phys.requires_grad:
            outs.append(phys)
            cts.append(_canonical(_materialize(c, levels)))
    if not outs:
        return [t.wrap_grad(None) for t in tracked]
    autograd = _autograd("vjp")
    grads = autograd.grad(
        outs, [t.physical for t in tracked], cts,
        retain_graph=retain_graph, create_graph=create_graph, allow_unused=True,
    )  # fmt: skip
    return [t.wrap_grad(g) for t, g in zip(tracked, grads, strict=True)]


def _size_at(xs: list[Any], level: int) -> int:
    for x in xs:
        while type(x) is BatchedTensor:
            if x.level == level:
                return int(x.value.shape[x.bdim])
            x = x.value
    raise AssertionError("no cotangent is batched at this level")


def _keep_graph(tracked: list[_Tracked], args: Any = ()) -> bool:
    """Whether the results must stay differentiable: an enclosing transform, or the caller's
    autograd, differentiates through an argument (Note [Gradients inside vmap])."""
    if _depth.value > 1 or any(t.was_tracked for t in tracked):
        return True
    return any(isinstance(a, Tensor) and a.requires_grad for a in pytree.tree_leaves(args))


def _plain(x: Any, keep: bool) -> Any:
    return x if keep or not isinstance(x, Tensor) else aten.detach.default(x)


# --- argnums ---------------------------------------------------------------------------------------


def _argnums(argnums: Any, nargs: int) -> tuple[int, ...]:
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        items: tuple[Any, ...] = (argnums,)
    elif isinstance(argnums, tuple) and all(
        isinstance(a, int) and not isinstance(a, bool) for a in argnums
    ):
        items = argnums
        if not items:
            raise RuntimeError("argnums must be non-empty")
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for a in items:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(out)


def _track_args(args: tuple[Any, ...], nums: tuple[int, ...], levels: list[Level]
                ) -> tuple[list[Any], list[_Tracked], list[Any]]:  # fmt: skip
    """Replace the differentiated arguments (pytrees of tensors) by tracked ones."""
    new_args = list(args)
    tracked: list[_Tracked] = []
    specs = []
    for i in nums:
        leaves, spec = pytree.tree_flatten(args[i])
        ts = [_Tracked(x, levels) for x in leaves]
        tracked.extend(ts)
        specs.append((spec, len(ts)))
        new_args[i] = pytree.tree_unflatten(spec, [t.logical for t in ts])
    return new_args, tracked, specs


def _regroup(flat: list[Any], specs: list[Any], single: bool) -> Any:
    out = []
    k = 0
    for spec, n in specs:
        out.append(pytree.tree_unflatten(spec, flat[k : k + n]))
        k += n
    return out[0] if single else tuple(out)


# --- grad and grad_and_value -------------------------------------------------------------------


def grad_and_value(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``func``'s gradient with respect to the arguments ``argnums``, and its value
    (``torch.func.grad_and_value``): returns ``(grads, value)``, or ``(grads, (value, aux))``
    with ``has_aux``. ``func`` must return a 0-d tensor (and ``aux``)."""
    autograd = _autograd("grad_and_value")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args))
        levels = list(active_levels())
        with autograd.enable_grad(), _transform():
            new_args, tracked, specs = _track_args(args, nums, levels)
            out = func(*new_args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                out, aux = out
            if not isinstance(out, Tensor):
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                    f"{type(out)}"
                )
            if out.ndim != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                    f"tensor with {out.ndim} dims. Maybe you wanted to use the vjp or jacrev "
                    "APIs instead?"
                )
            keep = _keep_graph(tracked, (args, kwargs))
            ones = aten.ones_like.default(out)
            flat = _vjp([out], tracked, [ones], levels, create_graph=keep, retain_graph=keep)
        grads = _regroup(flat, specs, isinstance(argnums, int))
        value = _plain(out, keep)
        if has_aux:
            return grads, (value, _aux(aux, keep))
        return grads, value

    return wrapper


def _aux(aux: Any, keep: bool) -> Any:
    def check(x: Any) -> Any:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
        return _plain(x, keep)

    return pytree.tree_map(check, aux)


def grad(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``func``'s gradient with respect to the arguments ``argnums`` (``torch.func.grad``):
    ``grad(f)(x)`` is ``df/dx`` for an ``f`` that returns a 0-d tensor; with ``has_aux``, ``f``
    returns ``(output, aux)`` and the result is ``(grads, aux)``. Composes with ``vmap``
    (per-sample gradients) and with itself (higher derivatives)."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = inner(*args, **kwargs)
        if has_aux:
            return grads, value[1]
        return grads

    return wrapper


# --- vjp, jacrev, hessian ----------------------------------------------------------------------------


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(func(*primals), vjp_fn)`` (``torch.func.vjp``): ``vjp_fn(cotangents)`` gives, for each
    primal, the vector-Jacobian product; ``has_aux`` adds ``aux`` as a third result."""
    autograd = _autograd("vjp")
    levels = list(active_levels())
    with autograd.enable_grad(), _transform():
        new_args, tracked, specs = _track_args(primals, tuple(range(len(primals))), levels)
        out = func(*new_args)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(
                    "vjp(f, *primals): output of function f should be a tuple: (output, aux) if "
                    "has_aux is True"
                )
            out, aux = out
        flat_out, out_spec = pytree.tree_flatten(out)
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError(
                    "vjp(f, *primals): expected f(*primals) to return only tensors, got "
                    f"unsupported type {type(o)}"
                )
        keep = _keep_graph(tracked)

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        flat_ct, ct_spec = pytree.tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {ct_spec}, primal output: {out_spec}"
            )
        for i, (o, c) in enumerate(zip(flat_out, flat_ct, strict=True)):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {list(c.shape)} and "
                    f"output[{i}] has a shape of {list(o.shape)}."
                )
        with autograd.enable_grad(), _transform():
            flat = _vjp(flat_out, tracked, flat_ct, levels, create_graph=keep, retain_graph=True)
        return tuple(_regroup(flat, specs, False))

    result = pytree.tree_map(lambda o: _plain(o, keep), out)
    if has_aux:
        return result, vjp_fn, _aux(aux, keep)
    return result, vjp_fn


def jacrev(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """The Jacobian of ``func`` with respect to the arguments ``argnums`` by reverse mode
    (``torch.func.jacrev``): for an output of shape ``S`` and an input of shape ``I`` it has
    shape ``S + I``. One backward pass per output element (``chunk_size`` is accepted and has no
    effect)."""
    autograd = _autograd("jacrev")
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args))
        levels = list(active_levels())
        with autograd.enable_grad(), _transform():
            new_args, tracked, specs = _track_args(args, nums, levels)
            out = func(*new_args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "jacrev(f, ...)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                out, aux = out
            flat_out, out_spec = pytree.tree_flatten(out)
            keep = _keep_graph(tracked, (args, kwargs))
            per_output = []
            for o in flat_out:
                if not isinstance(o, Tensor):
                    raise RuntimeError(  # PyTorch's jacrev reports it through vjp
                        "vjp(f, *primals): expected f(*primals) to return only tensors, got "
                        f"unsupported type {type(o)}"
                    )
                per_output.append(_jacobian(o, tracked, levels, keep))
        result = pytree.tree_unflatten(
            out_spec, [_regroup(j, specs, isinstance(argnums, int)) for j in per_output]
        )
        if has_aux:
            return result, _aux(aux, keep)
        return result

    return wrapper


def _jacobian(o: Any, tracked: list[_Tracked], levels: list[Level], keep: bool) -> list[Any]:
    """The Jacobian of ``o`` with respect to each tracked input: one vjp per element of ``o``."""
    n = o.numel()
    shape = list(o.shape)
    basis = aten.eye.default(n, dtype=o.dtype, device=o.device) if n else None
    rows: list[list[Any]] = [[] for _ in tracked]
    for m in range(n):
        ct = aten.reshape.default(aten.select.int(basis, 0, m), shape)
        for k, g in enumerate(
            _vjp([o], tracked, [ct], levels, create_graph=keep, retain_graph=True)
        ):
            rows[k].append(g)
    out = []
    for k, t in enumerate(tracked):
        in_shape = list(t.logical.shape)
        if n == 0:
            out.append(aten.zeros.default([*shape, *in_shape], dtype=o.dtype, device=o.device))
            continue
        jac = aten.reshape.default(_stack(rows[k], 0), [*shape, *in_shape])
        out.append(jac)
    return out
