"""The Autograd kernels: one per differentiable operator, generated from the formula table.

Note [Autograd kernel]
~~~~~~~~~~~~~~~~~~~~~~
Every kernel is registered on the ``Autograd`` alias key with ``with_keyset=True`` and does
what PyTorch's VariableType kernels do:

1. run the operator below autograd: ``op.redispatch(keyset & below-autograd, ...)`` with the
   ``Autograd<B>`` keys excluded in this thread meanwhile, so kernels that re-enter the
   dispatcher (composites of backends) record nothing;
2. if a differentiable tensor input requires grad, make a node of the op's class
   (``MulBackward0``) with an edge per differentiable input (Note [Graph edges] in graph.py),
   save what the formula reads (Note [Saved tensors] in saved.py), and make each
   differentiable floating point output require grad with the node as its ``grad_fn``.

The kernel's Python signature is the schema's (generated source, like the core's call
functions), because the dispatcher passes arguments by name; the argument tuple then goes to
one generic routine. In-place ops additionally refuse leaves that require grad, clone
``self`` first when the formula needs its old value, and move ``self``'s history onto the new
node (for a view of a tensor that requires grad, its base's history: ``CopySlices``).
``out=`` overloads refuse arguments that require grad, as PyTorch does, and so do tensor
inputs without a formula (``check_no_requires_grad``). Ops with no formula get
:func:`not_implemented_kernel`: the call works, and backward through it raises an error naming
the op.

Every op's kernel is registered ``per_keyset=True`` (Note [Per-key-set kernels] in
tensorplug's dispatcher): a factory makes the kernel of each key set, from source generated in
codegen.py (ops with plain ``Tensor`` arguments and one output get a lean kernel that records
inline); reference.py holds the same kernel as plain Python. The rule of each op (rules.py)
says what its kernel and node need to know; recording.py records a call; inplace.py holds the
body of in-place ops.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from tensorplug import dispatcher
from tensorplug.dispatch import local_state
from tensorplug.dispatcher import OpOverload
from tensorplug.library import fallthrough_kernel, mark_boxed
from tensorplug.tensor import Tensor

from . import formulas as _formulas
from .accumulate import edge
from .codegen import fast_factory, generated
from .graph import Node, tensors_in
from .inplace import run_inplace
from .inplace_views import INPLACE_VIEWS, inplace_view_kernel
from .masks import M
from .meta import is_leaf, set_history
from .recording import outputs, refuse_out, run
from .rules import RULES, Rule, core_composite, register_lazily, short_name

__all__ = [
    "autograd_not_implemented_fallback",
    "factory_for",
    "kernel_for",
    "not_implemented_kernel",
    "register_all",
]


def kernel_for(rule: Rule) -> Callable[..., Any]:
    if rule.out:
        return generated(rule, refuse_out)
    if rule.inplace:
        return generated(rule, run_inplace)
    return generated(rule, run)


def factory_for(rule: Rule) -> Callable[..., Any]:
    """The ``per_keyset`` factory of the op's Autograd kernel: the fast kernel's
    (:func:`_fast_factory`), else the kernel of :func:`kernel_for` with the key set bound."""
    fast = fast_factory(rule)
    if fast is not None:
        return fast
    kernel = kernel_for(rule)

    def factory(op: OpOverload, ks: int) -> Callable[..., Any]:
        return functools.partial(kernel, ks)

    return factory


# --- ops without a formula ----------------------------------------------------------------------


class NotImplementedNode(Node):
    """Backward of an op with no derivative: raises, naming the op."""

    __slots__ = ("_op_name", "_n_out")

    def __init__(self, op_name: str) -> None:
        super().__init__()
        self._op_name = op_name

    def name(self) -> str:
        return "NotImplemented"

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        raise RuntimeError(
            f"the derivative for '{self._op_name}' is not implemented: it ran with inputs that "
            "require grad, and backward reached it. Register one with "
            f"tp.library.register_autograd('{self._op_name}', backward, setup_context=...), or "
            "an Autograd kernel, or compute it under tp.no_grad()."
        )


def not_implemented_kernel(op: Any, ks: int, *args: Any, **kwargs: Any) -> Any:
    """Boxed: run ``op`` below autograd; outputs get a :class:`NotImplementedNode`."""
    st = local_state.masks
    old = st.nexc
    st.nexc = old & M.nag
    try:
        out = op.redispatch(M.below & int(ks), *args, **kwargs)
    finally:
        st.nexc = old
    inputs = [t for a in (*args, *kwargs.values()) for t in tensors_in(a)]
    edges = [edge(t) for t in inputs if t.tp_keyset & M.ag]
    if not edges:
        return out
    node = NotImplementedNode(op.name)
    node.next_functions = tuple(edges)
    node._input_meta = tuple(None for _ in edges)
    outs = outputs(out) if isinstance(out, (Tensor, list, tuple)) else []
    node._n_out = max(len(outs), 1)
    for nr, t in enumerate(outs):
        if isinstance(t, Tensor) and (t.tp_dtype.is_floating_point or t.tp_dtype.is_complex):
            set_history(t, node, nr)
    return out


mark_boxed(not_implemented_kernel)


# the ops that change a tensor's storage (resize_, set_; resize_as_ is resize_): PyTorch refuses to resize a tensor
# that requires grad, and, as for every in-place op, a leaf that requires grad; otherwise they
# run, and a backward pass reaching them raises (no derivative)
STORAGE_OPS = frozenset(
    ("resize_", "set_", "set_.source_Tensor", "set_.source_Tensor_storage_offset")
)


def storage_op_kernel(op: Any, ks: int, *args: Any, **kwargs: Any) -> Any:
    """Boxed: the Autograd kernel of :data:`STORAGE_OPS`."""
    self = args[0]
    if self.tp_keyset & M.ag:
        if op.name.startswith("aten::resize"):
            raise RuntimeError(
                f"{op.name}: cannot resize variables that require grad; resize a detached "
                "tensor (t.detach().resize_(...)) or make a new one"
            )
        if is_leaf(self):
            raise RuntimeError(
                f"{op.name}: a leaf Variable that requires grad is being used in an in-place "
                "operation. Do it under tp.no_grad(), or on a clone()."
            )
    return not_implemented_kernel(op, ks, *args, **kwargs)


mark_boxed(storage_op_kernel)


def autograd_not_implemented_fallback() -> Callable[..., Any]:
    """The kernel to register for ``Autograd`` on an op without a derivative (PyTorch's name)::

        lib.impl("myop", tp.autograd.autograd_not_implemented_fallback(), "Autograd")

    Calls run normally; a backward pass that reaches the op raises an error naming it.
    """
    return not_implemented_kernel


# --- registration -------------------------------------------------------------------------------


def _functional_name(name: str) -> str | None:
    """``add_.Tensor`` -> ``add.Tensor``; ``add.out`` -> ``add.Tensor``; else None.

    An in-place overload pairs with the functional one of the same arguments, as in torchgen:
    ``pow_.Scalar(self, Scalar exponent)`` is the in-place ``pow.Tensor_Scalar``, not
    ``pow.Scalar(Scalar self, Tensor exponent)``.
    """
    op_name, _, overload = name.partition(".")
    if op_name.endswith("_") and not op_name.startswith("_"):
        base = op_name[:-1]
        for cand in (f"{base}.{overload}" if overload else base, f"{base}.Tensor_{overload}"):
            if _find(cand) and _same_arguments(name, cand):
                return cand
        return None
    if overload == "out":
        for cand in (f"{op_name}.Tensor", op_name):
            if _find(cand):
                return cand
    return None


def _refusing(op: OpOverload) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"{op.name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad. Call it under "
            "tp.no_grad(), or use the functional form."
        )

    return refuse


def _out_functional(op: OpOverload, packets: dict[str, list[OpOverload]]) -> str | None:
    """The functional overload of an out= overload whose name does not say it (``sort.values``
    -> ``sort.default``, ``max.dim_max`` -> ``max.dim``): the overload of the same operator
    taking the same arguments less the outs (a factory's TensorOptions aside)."""
    schema = op.schema
    if not schema.is_out:
        return None
    options = {"dtype", "layout", "device", "pin_memory", "memory_format"}
    mine = [(a.name, a.type) for a in schema.arguments if not a.is_write]
    for other in packets.get(op.qualname, ()):
        if other is op or other.schema.is_mutable:
            continue
        theirs = [(a.name, a.type) for a in other.schema.arguments]
        if theirs == mine or [t for t in theirs if t[0] not in options] == mine:
            return short_name(other.name).removesuffix(".default")
    return None


def _same_arguments(a: str, b: str) -> bool:
    """Whether overloads ``a`` and ``b`` take the same arguments (alias annotations aside)."""

    def signature(short: str) -> list[tuple[str, Any, bool]]:
        schema = dispatcher.find_op(f"aten::{short}").schema
        return [(x.name, x.type, x.kwarg_only) for x in schema.arguments]

    return signature(a) == signature(b)


def _find(short: str) -> bool:
    try:
        dispatcher.find_op(f"aten::{short}")
        return True
    except Exception:
        return False


def register_all(lib: Any) -> int:
    """Register the Autograd kernel (or fallthrough) of every standard op; returns the count."""
    count = 0
    packets: dict[str, list[OpOverload]] = {}
    for op in dispatcher.ops_in("aten"):
        packets.setdefault(op.qualname, []).append(op)
    for op in dispatcher.ops_in("aten"):
        if core_composite(op):
            continue
        short = short_name(op.name)
        if short.endswith(".default"):
            short = short[: -len(".default")]
        if short in STORAGE_OPS:
            lib.impl(op, storage_op_kernel, "Autograd")
            count += 1
            continue
        if short in INPLACE_VIEWS:  # Note [In-place views] in inplace_views.py
            lib.impl(op, inplace_view_kernel(short, INPLACE_VIEWS[short]), "Autograd")
            count += 1
            continue
        if short in _formulas.NON_DIFFERENTIABLE:
            lib.impl(op, fallthrough_kernel, "Autograd")
            count += 1
            continue
        table = _formulas.FORMULAS.get(short)
        functional = None
        if table is None:
            functional = _functional_name(short) or _out_functional(op, packets)
            if functional is not None:
                if functional in _formulas.NON_DIFFERENTIABLE:
                    lib.impl(op, fallthrough_kernel, "Autograd")
                    count += 1
                    continue
                table = _formulas.FORMULAS.get(functional)
        if table is None:
            if functional is not None and op.schema.is_mutable:
                # the out= overload of a composite (matmul.out): reached only when an argument
                # requires grad, which PyTorch refuses
                lib.impl(op, _refusing(op), "Autograd")
                count += 1
            continue  # the fallback: works forward, raises on backward

        def build(
            op: OpOverload = op, table: Any = table, functional: str | None = functional
        ) -> Callable[..., Any]:
            rule = Rule(op, table)
            if functional is not None and not rule.inplace:
                rule.out = True
            RULES[op.name] = rule
            return factory_for(rule)

        register_lazily(lib, op, "Autograd", build, "autograd", per_keyset=True)
        count += 1
    return count
