"""The backward node of an op with a formula, and the ``s`` its formulas read.

An :class:`OpNode` subclass is made per op (``MulBackward0``) by its :class:`~.rules.Rule`;
one instance per recorded call holds the saved arguments and output (Note [Saved tensors] in
saved.py). Its ``apply`` runs the op's formulas (Note [Formula table] in formulas/__init__.py)
for the inputs that need a gradient, handing each formula a :class:`SavedView` of the call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from tensorplug.dispatch import local_state
from tensorplug.storage import alias
from tensorplug.tensor import Tensor

from .dual import carry
from .graph import Node, fit_gradient, zeros_for
from .masks import M
from .saved import FREED, FREED_ARGS, FreedArgs, SavedTensor

__all__ = ["OpNode", "SavedView", "NOT_SAVED", "saved_view_class"]

NOT_SAVED = object()  # a tensor argument the formulas do not read: not kept
_new = object.__new__


class RuleView(Protocol):
    """What a node and its saved view read of their op's rule (``rules.Rule``, the table above
    this module, which makes them): declared here so that nothing here imports it."""

    @property
    def name(self) -> str: ...
    @property
    def arg_names(self) -> tuple[str, ...]: ...
    @property
    def index(self) -> dict[str, int]: ...
    @property
    def return_names(self) -> tuple[str, ...]: ...
    @property
    def returns_list(self) -> bool: ...
    @property
    def n_out(self) -> int: ...
    @property
    def static_spans(self) -> dict[str, tuple[int, int]]: ...
    @property
    def diff_idx(self) -> tuple[int, ...]: ...
    @property
    def list_args(self) -> frozenset[str]: ...
    @property
    def plan(self) -> tuple[Any, ...]: ...
    @property
    def simple_out(self) -> bool: ...
    @property
    def node_cls(self) -> type[OpNode]: ...
    @property
    def view_cls(self) -> type[SavedView]: ...


class OpNode(Node):
    """The backward node of one call of an op with a formula (its class is per op)."""

    __slots__ = ("_args",)
    _rule: RuleView
    # the call's arguments, tensors as SavedTensor or NOT_SAVED (FREED_ARGS once released)
    _args: Sequence[Any] | FreedArgs
    # class defaults (set per op class by its Rule) for the common call: plain Tensor
    # arguments, one output; a call that differs stores its own in the instance's __dict__
    _result: Any = None  # the saved output(s)
    _spans: dict[str, tuple[int, int]] = {}  # argument name -> (first edge, edge count)
    _out_meta: tuple[Any, ...] = ()
    _n_out = 1
    _validates_grads = True  # apply gives gradients in each input's shape, dtype and device

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        rule = self._rule
        nexts = self.next_functions
        res: list[Any] = [None] * len(nexts)
        if rule.simple_out:
            g: Any = grads[0]
            if g is None:
                return res
        else:
            if all(x is None for x in grads):
                return res
            g = tuple(
                x if x is not None else (zeros_for(m) if m is not None else None)
                for x, m in zip(grads, self._out_meta, strict=True)
            )
            if rule.returns_list:
                g = list(g)
        s = _new(rule.view_cls)  # SavedView(self) without a call of __init__
        s._node = self
        spans = self._spans
        metas: Any = self._input_meta  # not None where an edge is (Note [Graph edges])
        for names, fn, single in rule.plan:
            if single:  # one plain Tensor input: the common case
                start = spans[names[0]][0]
                if nexts[start][0] is not None:
                    v = fn(g, s)
                    m = metas[start]
                    if v is not None and not (
                        v.tp_data.shape == m[0] and v.tp_dtype is m[1] and v.tp_device is m[2]
                    ):
                        v = fit_gradient(v, m, self, start)
                    res[start] = v
                continue
            need = False
            for name in names:
                start, count = spans[name]
                for j in range(start, start + count):
                    if nexts[j][0] is not None:
                        need = True
            if not need:
                continue
            r = fn(g, s)
            rs: tuple[Any, ...] = (r,) if len(names) == 1 else tuple(r)
            for name, value in zip(names, rs, strict=True):
                start, count = spans[name]
                if count == 1 and name not in rule.list_args:
                    res[start] = value
                elif value is not None:
                    for j, v in enumerate(value):
                        res[start + j] = v
                for j in range(start, start + count):
                    v, m = res[j], metas[j]
                    if v is not None and m is not None:
                        res[j] = fit_gradient(v, m, self, j)
        return res

    def _release(self) -> None:
        # the saved values go (Note [Saved tensors]): reading one afterwards raises
        self._args = FREED_ARGS
        if self._result is not None:
            self._result = FREED

    @property
    def metadata(self) -> dict[str, Any]:
        return {"op": self._rule.name}


class SavedView:
    """The ``s`` a formula reads (Note [Formula table] in formulas/__init__.py).

    Each op's rule makes a subclass with a property per name its formulas read
    (:func:`saved_view_class`), so ``s.self`` costs a property call; ``__getattr__`` remains
    for anything else, and raises the explanatory errors.
    """

    __slots__ = ("_node",)

    def __init__(self, node: OpNode) -> None:
        self._node = node

    def __getattr__(self, name: str) -> Any:
        return _read(self._node, name)


def saved_view_class(rule: RuleView, used: set[str]) -> type[SavedView]:
    props: dict[str, Any] = {"__slots__": ()}
    metas = {
        f"{n}{suffix}": (n, k)
        for n in rule.static_spans
        for k, suffix in enumerate(("_shape", "_dtype", "_device"))
    }
    for name in used:
        i = rule.index.get(name)
        if i is not None and rule.arg_names[i] not in rule.list_args:
            props[name] = property(_arg_reader(i, name))
        elif name in metas and metas[name][0] not in rule.list_args:
            arg, k = metas[name]
            props[name] = property(_meta_reader(arg, k))
        elif name == "result" and rule.n_out == 1 and not rule.returns_list:
            props[name] = property(_read_result)
        elif name == "result" or (name in rule.return_names and name) or i is not None:
            props[name] = property(functools.partial(_read_name, name=name))
    return type(f"{rule.node_cls.__name__}Saved", (SavedView,), props)


def _arg_reader(i: int, name: str) -> Callable[[SavedView], Any]:
    """The getter of ``s.<name>``, argument ``i`` of the call (a closure: a property calls it
    faster than a ``functools.partial`` with keywords)."""

    def read_arg(view: SavedView) -> Any:
        node = view._node
        v = node._args[i]
        if type(v) is SavedTensor:
            if local_state.masks.nexc & M.ag or v.vc.value != v.version:
                return v.unpack_plain(node)  # the backward records, or it raises
            # SavedTensor.unpack_plain inline (one call less per saved value a formula reads)
            p = v.plain
            if p is None:
                t = v.t
                ks = t.tp_keyset
                if ks & M.strip:
                    p = alias(t, ks & ~M.strip)
                    if ks & M.fwd:  # Note [Dual tensors] in dual.py
                        carry(t, p)
                else:
                    p = t
                v.plain = p
            return p
        if v is NOT_SAVED:
            return _read(node, name)  # raises the explanation
        return v

    return read_arg


def _meta_reader(arg: str, k: int) -> Callable[[SavedView], Any]:
    """The getter of ``s.<arg>_shape`` (``k`` 0), ``_dtype`` (1) or ``_device`` (2)."""

    def read_meta(view: SavedView) -> Any:
        node = view._node
        m = node._input_meta[node._spans[arg][0]]
        return None if m is None else m[k]

    return read_meta


def _read_result(view: SavedView) -> Any:
    """``s.result`` of an op with one output."""
    node = view._node
    r = node._result
    if type(r) is SavedTensor:
        if local_state.masks.nexc & M.ag or r.vc.value != r.version:
            return r.unpack_plain(node)  # the backward records, or it raises
        # SavedTensor.unpack_plain inline, as in _arg_reader
        p = r.plain
        if p is None:
            t = r.t
            ks = t.tp_keyset
            if ks & M.strip:
                p = alias(t, ks & ~M.strip)
                if ks & M.fwd:  # Note [Dual tensors] in dual.py
                    carry(t, p)
            else:
                p = t
            r.plain = p
        return p
    return _read(node, "result")  # not saved, or freed: raises the explanation


def _read_name(view: SavedView, name: str) -> Any:
    return _read(view._node, name)


def _read(node: OpNode, name: str) -> Any:
    """``s.<name>`` of ``node``'s formulas, the general way."""
    rule = node._rule
    i = rule.index.get(name)
    if i is not None:
        v = node._args[i]
        if v is NOT_SAVED:
            raise AttributeError(
                f"the formula of {rule.name} reads s.{name}, which was not saved; read it "
                f"as s.{name} directly in the formula's own body (what it reads there is what "
                "is saved), not through getattr or a helper"
            )
        if type(v) is SavedTensor:
            return v.unpack_plain(node)
        if type(v) is list and v and any(type(x) is SavedTensor for x in v):
            return [x.unpack_plain(node) if type(x) is SavedTensor else x for x in v]
        return v
    if name == "result" or (name in rule.return_names and name):
        r = node._result
        if r is None:
            raise AttributeError(
                f"the formula of {rule.name} reads s.{name}, which was not saved; read it as "
                f"s.{name} directly in the formula's own body (what it reads there is what is "
                "saved), not through getattr or a helper"
            )
        if type(r) is tuple:
            unpacked = tuple(x.unpack_plain(node) if type(x) is SavedTensor else x for x in r)
            return unpacked if name == "result" else unpacked[rule.return_names.index(name)]
        if type(r) is list:
            return [x.unpack_plain(node) for x in r]
        return r.unpack_plain(node)
    if name == "grad_input_mask":  # derivatives.yaml's name: which inputs need a gradient
        nexts = node.next_functions
        return tuple(
            any(nexts[j][0] is not None for j in range(start, start + count))
            for start, count in (node._spans[rule.arg_names[i]] for i in rule.diff_idx)
        )
    for suffix, k in (("_shape", 0), ("_dtype", 1), ("_device", 2)):
        if name.endswith(suffix):
            arg = name[: -len(suffix)]
            if arg in node._spans:
                start, count = node._spans[arg]
                if arg in rule.list_args:
                    return [
                        None if m is None else m[k] for m in node._input_meta[start : start + count]
                    ]
                m = node._input_meta[start]
                return None if m is None else m[k]
    raise AttributeError(
        f"the formula of {rule.name} reads s.{name}: no such argument or output; it can read "
        f"the arguments {list(rule.arg_names)}, result, the named returns, grad_input_mask, "
        "and <argument>_shape, _dtype or _device of a differentiable argument"
    )
