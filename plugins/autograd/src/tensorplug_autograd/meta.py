"""The autograd state of a tensor (:class:`AutogradMeta`) and of a view (:class:`ViewInfo`).

Note [Autograd state of a tensor]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A tensor requires grad exactly when its key set holds an ``Autograd<B>`` key (DESIGN §3), so
ops on plain tensors never reach an autograd kernel and pay nothing. Everything else lives in
``tensor.tp_autograd``, an :class:`AutogradMeta` created only for tensors that take part in a
graph: the accumulated ``grad``, the ``grad_fn`` that produced the tensor (``None`` for leaves)
and which of its outputs it is, hooks, and for views of tensors that require grad how to
re-create the view from its base (used when the view is modified in place).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import tensorplug as tp
from tensorplug.tensor import Tensor

from .grad_mode import enable_grad
from .masks import M, autograd_bit

if TYPE_CHECKING:
    from .graph import Node

__all__ = ["AutogradMeta", "Gather", "ViewInfo", "is_leaf", "meta_of", "set_history"]


class ViewInfo:
    """How a view of a tensor that requires grad was made: its root base and the view ops, and
    the value of the version counter it shares with its base when its ``grad_fn`` was set
    (Note [Stale views] in inplace.py)."""

    __slots__ = ("base", "chain", "version", "function")

    def __init__(
        self,
        base: Tensor,
        chain: tuple[tuple[Any, tuple[Any, ...], dict[str, Any]], ...],
        version: int,
        function: str | None = None,
    ):
        self.base = base
        self.chain = chain  # ((op, args after self, kwargs), ...) applied to base in order
        self.version = version
        # the name of the custom Function that returned this view (or a view it is a view of):
        # an in-place change of it is refused (Note [Views that refuse in-place changes])
        self.function = function

    def replay(self, base: Tensor) -> Tensor:
        t = base
        for op, args, kwargs in self.chain:
            t = op(t, *args, **kwargs)
        return t

    def assign(self, target: Tensor, value: Tensor | None, replayed: Tensor | None = None) -> None:
        """Write ``value`` (zeros for None) where this view lies in ``target``, a tensor shaped
        like the base (``replayed``: ``self.replay(target)``, when the caller has it): what
        CopySlices does with the gradient of the base."""
        chain = self.chain
        first = chain[0][0] if chain else None
        if isinstance(first, Gather):  # the view's elements are picked, not viewed
            piece = first(target)
            _write(ViewInfo(piece, chain[1:], 0).replay(piece), value)
            first.scatter(target, piece)
        else:
            _write(self.replay(target) if replayed is None else replayed, value)


def _write(dest: Tensor, value: Tensor | None) -> None:
    if value is None:
        dest.zero_()
    else:
        dest.copy_(value)


class Gather:
    """The first step of the chain of a view that recorded none (Note [Views of plain tensors]
    in inplace.py): picks the view's elements out of a tensor shaped like its base by index, so
    it gives a copy; :meth:`ViewInfo.assign` writes back with :meth:`scatter`."""

    __slots__ = ("index",)

    def __init__(self, index: list[Tensor]) -> None:
        self.index = index  # one int64 tensor per dimension of the base, each the view's shape

    def __call__(self, t: Tensor) -> Tensor:
        return tp.ops.aten.index.Tensor(t, self.index)

    def scatter(self, target: Tensor, piece: Tensor) -> None:
        tp.ops.aten.index_put_.default(target, self.index, piece, False)


class _Gone:
    pass


_DEAD_REF = weakref.ref(_Gone())  # dead at once: calling it gives None


class AutogradMeta:
    """Note [Autograd state of a tensor].

    Every field is a class default, stored in the instance once set: ``grad`` and ``acc``
    belong to leaves, ``grad_fn`` to outputs of ops, and the others are rare. The class has
    neither slots nor ``__init__``: ``AutogradMeta()`` runs no Python code, and an output's
    meta needs only its ``grad_fn`` stored (``output_nr`` is 0), about 20 ns less than
    ``object.__new__`` of a class with slots and two stores; reads cost the same.
    """

    grad_fn: Node | None = None
    output_nr: int = 0
    grad: Tensor | None = None
    acc: Node | None = (
        None  # a leaf's accumulator (an AccumulateGrad) (Note [Graph edges] in graph.py)
    )
    acc_edge: tuple[Node, int] | None = None  # (acc, 0), the edge a use of the leaf adds
    # a leaf's input metadata, kept for the nodes that use it while its data is the same array
    # (Note [Graph edges]): valid when ``data_ref()`` is the leaf's ``tp_data``
    leaf_meta: tuple[tuple[int, ...], Any, Any] | None = None
    data_ref: Callable[[], Any] = _DEAD_REF
    hooks: list[Callable[[Tensor], Tensor | None]] | None = None  # leaves only
    post_accumulate_hooks: list[Callable[[Tensor], None]] | None = None  # leaves only
    retains_grad = False
    view: ViewInfo | None = None
    name: str | None = None


def meta_of(t: Tensor) -> AutogradMeta:
    m: AutogradMeta | None = t.tp_autograd
    if m is None:
        m = t.tp_autograd = AutogradMeta()
    return m


def refresh_view(t: Tensor, m: AutogradMeta) -> None:
    """Give view ``t`` the ``grad_fn`` its base's current history implies (Note [Stale views]
    in inplace.py)."""
    view = m.view
    assert view is not None
    set_view_history(t, m, view)


def set_view_history(t: Tensor, m: AutogradMeta, view: ViewInfo) -> None:
    """Make ``view`` the view information of ``t`` (whose meta is ``m``) and give ``t`` the
    history its base's current one implies: replay the view chain on the base, recording, and
    take the result's ``grad_fn`` and autograd keys."""
    with enable_grad():
        fresh = view.replay(view.base)
    fm = fresh.tp_autograd
    if fm is not None and fm.grad_fn is not None:
        m.grad_fn, m.output_nr = fm.grad_fn, fm.output_nr
        t.tp_keyset |= M.strip & fresh.tp_keyset
    m.view = view
    view.version = t.tp_version.value


def set_history(t: Tensor, node: Node, output_nr: int) -> None:
    """Make ``t`` an output of ``node`` that requires grad."""
    m: AutogradMeta | None = t.tp_autograd
    if m is None:
        m = t.tp_autograd = AutogradMeta()
    m.grad_fn = node
    m.output_nr = output_nr
    t.tp_keyset |= autograd_bit(t)


def requires_grad(t: Any) -> bool:
    return bool(t.tp_keyset & M.ag)


def is_leaf(t: Tensor) -> bool:
    """True for a tensor no recorded op produced (whether or not it requires grad)."""
    m: AutogradMeta | None = t.tp_autograd
    return m is None or m.grad_fn is None
