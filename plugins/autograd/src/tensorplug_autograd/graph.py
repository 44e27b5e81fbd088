"""The autograd graph: backward nodes, their edges and hooks, and the gradients they give.

Note [Graph edges]
~~~~~~~~~~~~~~~~~~
A node's ``next_functions`` has one ``(node, output_nr)`` edge per differentiable tensor input,
in schema order (a ``Tensor[]`` argument contributes one edge per element). The edge of a
non-leaf is its ``grad_fn``; the edge of a leaf that requires grad is its
:class:`AccumulateGrad` node, created once per leaf and kept by the leaf (the node refers to
the leaf weakly), so every use of the leaf in one graph reaches the same node. The leaf keeps
the edge tuple ``(acc, 0)`` with it (``leaf_edge``): recording a use builds no tuple, and
its input metadata too, for as long as its data is the same array (``leaf_input_meta``: a
weak reference to the array tells). Inputs that do not require grad have ``(None, 0)``. Each
edge also records the input's shape, dtype and device: the engine reduces a broadcast gradient
to that shape and casts it, as PyTorch's ``validate_outputs`` does (:func:`fit_gradient`).

Leaves, their accumulators and the edge a use of a tensor adds live in accumulate.py, the
state of a tensor in meta.py, saved tensors in saved.py, the engine that runs a graph in
engine.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import tensorplug as tp
from tensorplug.tensor import Tensor

__all__ = ["Node", "RemovableHandle", "apply_node", "fit_gradient", "input_meta"]

_sequence = itertools.count()
# added to an accumulator's sequence number: it comes before every other node among the
# ready ones (PyTorch gives AccumulateGrad the highest priority)
ACCUMULATOR_PRIORITY = 1 << 62


class RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` takes the hook out again."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        try:
            self._hooks.remove(self._hook)
        except ValueError:
            pass


# --- nodes --------------------------------------------------------------------------------------


class Node:
    """A backward function: gradients of its outputs in, gradients of its inputs out.

    ``next_functions`` holds the edges to the nodes of its inputs (Note [Graph edges]).
    """

    __slots__ = ("next_functions", "_input_meta", "_seq", "__weakref__", "__dict__")
    # per class, read by the engine: how many outputs (in the instance where it varies per
    # node), whether _release has anything to free, whether apply checks its own gradients'
    # shape, dtype and device (OpNode) or the engine must
    _n_out = 1
    _saves = True
    _validates_grads = False
    # hooks are rare: a node stores them in its __dict__ once registered
    _pre_hooks: dict[int, list[Any]] | None = None
    _post_hooks: list[Any] | None = None
    # a step the engine may run in place of this node and the nodes under it, or None:
    # Note [Fused backward steps] in fused_steps.py
    _fuse: Any = None

    next_functions: tuple[tuple[Node | None, int], ...]

    def __init__(self) -> None:
        self.next_functions = ()
        self._input_meta: tuple[tuple[tuple[int, ...], Any, Any] | None, ...] = ()
        self._seq = next(_sequence)

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        raise NotImplementedError

    def _release(self) -> None:
        """Free saved tensors (the graph is not retained)."""

    def register_hook(
        self, fn: Callable[[tuple[Any, ...], tuple[Any, ...]], Any]
    ) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn: Callable[[tuple[Any, ...]], Any]) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; may return new grad_outputs."""
        hooks = self._add_pre_hook(-1, fn)
        return RemovableHandle(hooks, fn)

    def _add_pre_hook(self, output_nr: int, fn: Any) -> list[Any]:
        if self._pre_hooks is None:
            self._pre_hooks = {}
        hooks = self._pre_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        # the hook of retain_grad() stays last, so .grad holds what every hook made of the
        # gradient, whenever they were registered (as in PyTorch)
        keep = [h for h in hooks if getattr(h, "_tp_retains_grad", False)]
        if keep and hooks[-1] is not keep[-1]:
            hooks[:] = [h for h in hooks if h not in keep] + keep
        return hooks

    @property
    def metadata(self) -> dict[str, Any]:
        return {}


def input_meta(t: Tensor) -> tuple[tuple[int, ...], Any, Any]:
    return (t.tp_data.shape, t.tp_dtype, t.tp_device)


def run_tensor_hook(fn: Callable[[Tensor], Tensor | None], g: Tensor) -> Tensor:
    """``fn(g)``, a hook registered with ``Tensor.register_hook``: its result, if any, must be
    a gradient like ``g`` (same shape, dtype and device), as PyTorch checks."""
    new = fn(g)
    return g if new is None else check_hook_value(fn, g, new)


def check_hook_value(fn: Any, old: Tensor | None, new: Any) -> Tensor:
    """``new``, what hook ``fn`` gave in place of gradient ``old``, checked as PyTorch does:
    a Tensor, of ``old``'s shape, dtype and device (anything, when ``old`` is None)."""
    name = getattr(fn, "__name__", type(fn).__name__)
    if not isinstance(new, Tensor):
        raise TypeError(
            f"expected Variable, but hook '{name}' returned '{type(new).__name__}'; return the "
            "new gradient as a Tensor, or None to keep the gradient"
        )
    if old is None:
        return new
    if new.tp_data.shape != old.tp_data.shape:
        raise RuntimeError(
            f"hook '{name}' has changed the size of value (was {list(old.shape)} got "
            f"{list(new.shape)}); return a gradient of the tensor's shape"
        )
    if new.tp_dtype is not old.tp_dtype:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was {_dtype_name(old)} got "
            f"{_dtype_name(new)}); return a gradient of the tensor's dtype"
        )
    if new.tp_device != old.tp_device:
        raise RuntimeError(
            f"hook '{name}' has changed the device of value (was {old.device} got {new.device}); "
            "return a gradient on the tensor's device"
        )
    return new


def check_hook_values(fn: Any, old: Sequence[Tensor | None], new: Any) -> tuple[Tensor | None, ...]:
    """What a node hook ``fn`` returned in place of the gradients ``old``: one value per
    gradient, each None or checked by :func:`check_hook_value`, as PyTorch checks."""
    values = tuple(new)
    if len(values) != len(old):
        name = getattr(fn, "__name__", type(fn).__name__)
        raise RuntimeError(
            f"hook '{name}' has returned an incorrect number of values (got {len(values)}, but "
            f"expected {len(old)}); return one gradient (or None) per position"
        )
    return tuple(
        v if v is None else check_hook_value(fn, o, v) for o, v in zip(old, values, strict=True)
    )


def _dtype_name(t: Tensor) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def tensors_in(x: Any) -> list[Tensor]:
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for t in x if isinstance(t, Tensor)]
    return []


def zeros_for(meta: tuple[tuple[int, ...], Any, Any]) -> Tensor:
    shape, dtype, device = meta
    return tp.zeros(list(shape), dtype=dtype, device=device)


def apply_node(node: Node, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
    """``node.apply(grads)``, its gradients checked and fitted to their inputs
    (:func:`fit_gradient`), then its post-hooks run."""
    outs = node.apply(grads)
    n = len(node.next_functions)
    if len(outs) != n:
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected {n}, "
            f"got {len(outs)})"
        )
    metas = node._input_meta
    nm = len(metas)
    fixed: list[Tensor | None] | None = None
    for i, g in enumerate(outs):
        if g is None:
            continue
        if not isinstance(g, Tensor):
            raise TypeError(
                f"function {node.name()} returned a gradient at index {i}: expected Variable or "
                f"None (got {type(g).__name__}); return a Tensor, or None, for each input"
            )
        meta = metas[i] if i < nm else None
        if meta is None:
            continue
        new = fit_gradient(g, meta, node, i)
        if new is not g:
            if fixed is None:
                fixed = list(outs)
            fixed[i] = new
    if node._post_hooks:
        result = tuple(outs if fixed is None else fixed)
        for fn in list(node._post_hooks):
            new_result = fn(result, tuple(grads))
            if new_result is not None:
                result = check_hook_values(fn, result, new_result)
        return result
    return outs if fixed is None else fixed


_sum_dims = tp.ops.aten.sum.dim_IntList


def fit_gradient(g: Tensor, meta: tuple[Any, Any, Any], node: Node, i: int) -> Tensor:
    """``g`` as the gradient of input ``i`` of ``node``: broadcast dimensions summed away, in
    the input's dtype and on its device (``meta``), as PyTorch's ``validate_outputs``."""
    shape, dtype, device = meta
    if g.tp_data.shape != shape:
        g = _reduce_to(g, shape, node, i)
    if g.tp_dtype is not dtype:
        if g.tp_dtype.is_complex and not dtype.is_complex:
            # a real input of an op with a complex output: the real part, PyTorch's
            # handle_r_to_c (Note [Complex gradients] in formulas/_table.py)
            g = tp.real(g)
        g = g.to(dtype)
    if g.tp_device != device:
        g = g.to(device)
    return g


def _reduce_to(g: Tensor, shape: tuple[int, ...], node: Node, i: int) -> Tensor:
    """Sum the broadcast dimensions of ``g`` away so it has ``shape`` (or raise)."""
    gs = tuple(g.tp_data.shape)
    lead = len(gs) - len(shape)
    ok = lead >= 0 and all(s in (1, d) for s, d in zip(shape, gs[lead:], strict=True))
    if not ok:
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index {i} - got "
            f"{list(gs)} but expected shape compatible with {list(shape)}; return a gradient "
            "of the input's shape"
        )
    keep = tuple(lead + j for j, s in enumerate(shape) if s == 1 and gs[lead + j] != 1)
    # dims as tuples of ints: what int[] binds to, so the call skips normalizing them
    if not keep:  # only leading dimensions: one sum gives the shape
        return _sum_dims(g, tuple(range(lead)))
    g = _sum_dims(g, tuple(range(lead)) + keep, True)
    if lead:
        g = g.reshape(list(shape))
    return g
