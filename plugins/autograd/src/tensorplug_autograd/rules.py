"""The rule table: what each op's autograd kernel and node need to know, made once per op.

A :class:`Rule` reads the op's schema and its formulas (Note [Formula table] in
formulas/__init__.py): which arguments are differentiable, which the formulas read (and so are
saved), the node class of the op (``MulBackward0``) and the ``s`` its formulas read. ``RULES``
holds the rule of every op whose kernel was built; kernels are built on an op's first call
(:func:`register_lazily`).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from tensorplug import dispatcher
from tensorplug.dispatch import local_state
from tensorplug.dispatcher import OpOverload

from . import formulas as _formulas
from .masks import M
from .nodes import OpNode, saved_view_class

__all__ = ["RULES", "Rule", "core_composite", "register_lazily", "short_name"]


def camel(op_name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in op_name.strip("_").split("_"))


_GEOMETRY_ONLY = frozenset(("aten::as_strided_", "aten::as_strided_.default"))


class Rule:
    """What an op's autograd kernel and node need to know, computed once per op."""

    def __init__(
        self, op: OpOverload, table: dict[str | tuple[str, ...], Callable[..., Any]] | None
    ):
        s = op.schema
        self.op = op
        self.name = op.name
        self.schema = s
        args = s.arguments
        self.arg_names = tuple(a.name for a in args)
        self.index = {a.name: i for i, a in enumerate(args)}
        self.npos = len(s.positional)
        self.kw_names = tuple(a.name for a in s.kwarg_only)
        self.tensor_args = tuple((i, a.tensor_kind) for i, a in enumerate(args) if a.tensor_kind)
        self.returns = s.returns
        self.return_names = tuple(r.name or "" for r in s.returns)
        self.returns_list = (
            len(s.returns) == 1
            and str(s.returns[0].type).startswith("Tensor")
            and str(s.returns[0].type).endswith("[]")
        )
        self.n_out = len(s.returns)
        self.out = s.is_out
        self.inplace = bool(args) and args[0].is_write and not self.out
        first = s.returns[0] if s.returns else None
        self.view = (
            first is not None
            and first.annotation is not None
            and not first.annotation.is_write
            and not self.inplace
        )
        self.table = table or {}
        self.formulas: list[tuple[tuple[str, ...], Callable[..., Any]]] = []
        diff_names: list[str] = []
        for key, fn in self.table.items():
            names = key if isinstance(key, tuple) else (key,)
            for n in names:
                if n not in self.index:
                    raise ValueError(
                        f"formula of {self.name} names {n!r}, not an argument of its schema; "
                        f"key it by one of {list(self.arg_names)}"
                    )
                diff_names.append(n)
            self.formulas.append((names, fn))
        self.diff = tuple((i, k) for i, k in self.tensor_args if self.arg_names[i] in diff_names)
        # tensor inputs without a formula (weights of losses; indices and masks can never
        # require grad): PyTorch's check_no_requires_grad refuses them when they require grad
        self.no_grad_args = tuple(
            i
            for i, a in enumerate(args)
            if a.tensor_kind in ("Tensor", "Tensor?")
            and a.name not in diff_names
            and not (a.kwarg_only and a.is_write)
        )
        self.diff_idx = tuple(i for i, _ in self.diff)
        self.tensor_idx = tuple(i for i, _ in self.tensor_args)
        self.static_spans = {self.arg_names[i]: (j, 1) for j, i in enumerate(self.diff_idx)}
        used: set[str] = set()
        for fn in self.table.values():
            used |= _names_read(fn.__code__)
        self.used = frozenset(used)  # the names the formulas read (s.<name>)
        self.saved = frozenset(i for i, _ in self.tensor_args if self.arg_names[i] in used)
        self.saves_scalar = any(  # mul.Scalar's ``other``, not add's ``alpha``
            a.name == "other" and a.name in used and str(a.type) == "Scalar" for a in args
        )
        self.saves_result = "result" in used or any(n and n in used for n in self.return_names)
        self.saves_self_before = self.inplace and "self" in used
        # an in-place op that changes only where self lies in its storage, not its elements
        # (as_strided_): what it saves of self before is a view with the old geometry, which
        # as_strided's formula reads (PyTorch saves TensorGeometry(self))
        self.moves_self_only = self.name in _GEOMETRY_ONLY
        self.list_args = frozenset(
            a.name for a in args if a.tensor_kind in ("Tensor[]", "Tensor?[]")
        )
        # (names, fn, single): single when the formula gives one plain Tensor argument
        self.plan = tuple(
            (names, fn, len(names) == 1 and names[0] not in self.list_args)
            for names, fn in self.formulas
        )
        self.simple_out = self.n_out == 1 and not self.returns_list
        # the table names an overload as the yaml does: "max.dim", and "linalg_lstsq" for
        # the default overload (whose operator name ends in ".default")
        key = short_name(self.name).removesuffix(".default")
        out_diff = _formulas.OUTPUT_DIFFERENTIABILITY.get(key)
        self.out_diff = out_diff or (True,) * max(self.n_out, 1)
        self.saved_outputs = _formulas.SAVED_OUTPUTS.get(key)  # None: every output
        self.node_cls: type[OpNode] = type(
            f"{camel(op.op_name)}Backward{_overload_number(op)}",
            (OpNode,),
            {
                "_rule": self,
                "__slots__": (),
                # a Scalar ``other`` the formulas read counts as saved: PyTorch's Python calls
                # pass it as a wrapped-number tensor (``a * 2`` is mul.Tensor), which its node
                # saves, so a second backward through the freed graph raises there too
                "_saves": bool(self.saved) or self.saves_result or self.saves_scalar,
                "_spans": self.static_spans,  # what the fast kernel's calls have
                # Note [Fused backward steps] in fused_steps.py
                "_fuse": FUSED_STEPS.get(self.name),
            },
        )
        self.view_cls = saved_view_class(self, used)

    def call_below(self, ks: int, args: tuple[Any, ...]) -> Any:
        kw = {n: args[self.npos + j] for j, n in enumerate(self.kw_names)}
        st = local_state.masks
        old = st.nexc
        st.nexc = old & M.nag
        try:
            # int(ks): a DispatchKeySet's own ``&`` is Python code (Note [Masks are ints])
            return self.op.redispatch(M.below & int(ks), *args[: self.npos], **kw)
        finally:
            st.nexc = old


def short_name(name: str) -> str:
    return name.split("::", 1)[1]


def _overload_number(op: OpOverload) -> int:
    """PyTorch numbers overloads of one op in declaration order: MulBackward0, MulBackward1."""
    same = [o for o in dispatcher.ops_in(op.namespace, op.op_name)]
    try:
        return same.index(op)
    except ValueError:
        return 0


def _names_read(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names_read(c)
    return names


RULES: dict[str, Rule] = {}
# op name -> the step its nodes' class runs in the engine (Note [Fused backward steps] in
# fused_steps.py, which fills it)
FUSED_STEPS: dict[str, Any] = {}


def core_composite(op: OpOverload) -> bool:
    """Whether ``op`` is one of the core's CompositeImplicitAutograd ops: it decomposes into
    ops that record themselves, so it needs no kernel of this plugin."""
    return (
        op.has_kernel("CompositeImplicitAutograd")
        and dispatcher.registrations(op)["CompositeImplicitAutograd"] == "tensorplug"
    )


def register_lazily(
    lib: Any,
    op: OpOverload,
    key: str,
    build: Callable[[], Callable[..., Any]],
    what: str,
    per_keyset: bool = False,
) -> None:
    """Register the kernel ``build()`` makes for ``op`` on ``key``, built on its first call:
    building a Rule and compiling a kernel for every op costs about 30 ms, which ``import
    tensorplug`` would pay although most programs call a few dozen ops (Note [Lazy kernels] in
    tensorplug's library). ``per_keyset``: ``build()`` makes a factory of the kernel of each key
    set (Note [Per-key-set kernels] in tensorplug's dispatcher), else a ``with_keyset`` kernel."""
    build.__qualname__ = f"{what}_kernel[{op.name}]"
    build.__module__ = f"{__package__}.kernels"  # Note [Autograd kernel]: where kernels live
    lib.impl(op, build, key, with_keyset=not per_keyset, lazy=True, per_keyset=per_keyset)
