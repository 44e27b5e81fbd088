"""In-place operations under autograd: the Autograd kernel's body of an in-place op, and
:class:`CopySlices`, the base's node after one of its views was written.

Note [Stale views]
~~~~~~~~~~~~~~~~~~
A view shares its base's version counter, and its :class:`ViewInfo` remembers the counter's
value when the view's ``grad_fn`` was set. An in-place change of the base (or of another view
of it) moves the counter on, and gives the base a new history; the view's ``grad_fn`` then
still leads to the old one. So wherever a view's ``grad_fn`` is used (an edge to it, reading
``.grad_fn``), a changed counter makes it fresh first: the view chain is replayed on the base,
recording, and the view takes that result's ``grad_fn``, as PyTorch regenerates the
``grad_fn`` of a view whose version moved.

Note [Views that refuse in-place changes]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Two kinds of views of tensors that require grad refuse in-place ops, as in PyTorch, because
no history would give them correct gradients:

- a view made under ``no_grad`` (it has view information but no autograd key, while its base
  requires grad), written with grad mode on: recording the write would differentiate through
  a view the program asked not to record; not recording it would leave the base's history
  silently wrong. Writing it under ``no_grad`` is fine.
- a view a custom ``Function`` returned (or a view of one): a CopySlices would replay the view
  op on the base and so go around the Function's own backward.

PyTorch also refuses in-place changes of the outputs of ``split``, ``chunk`` and ``unbind``;
here they work (each output replays its own piece of the view op) and give correct gradients.

Note [Views of plain tensors]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Views of plain tensors record no view chain (that keeps them free), yet PyTorch programs write
values that require grad into them: ``buf = tp.zeros(n, d); buf[i] = f(w)``. Such a view only
knows its root base (``Tensor.tp_base``). Its place in the base is worked out from the memory
layout of the two arrays instead (``tensorplug.storage.memory_layout``: addresses and strides,
as the backend's storage describes them), for bases that fill their memory densely in any
dimension order: the row-major index in the base of each element of the view. The view's
:class:`ViewInfo` then starts with a :class:`~.graph.Gather` step, which picks those elements
(a copy, with a differentiable ``index``), and CopySlices writes its gradient back with
``index_put_`` (:meth:`ViewInfo.assign`). A view whose elements share memory (an ``expand``)
is refused, as PyTorch refuses in-place writes into one.

When a plain tensor gets its first history this way, or by an in-place op of its own, the
views of it that the program still holds must follow, as they do in PyTorch; having recorded
nothing, they are found through the garbage collector's referrers of the base
(``tensorplug.storage.views_of``, about 2 ms, paid only when the base has other views: they
share its version counter, whose reference count says so) and each gets the gather view's
history. Views of a plain tensor taken under ``no_grad`` cannot be told apart from the others
and follow too; a view of a leaf that requires grad raises, as before.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import tensorplug as tp
from tensorplug import storage
from tensorplug.tensor import Tensor

from .accumulate import edge
from .graph import Node, apply_node, input_meta
from .masks import M
from .meta import Gather, ViewInfo, is_leaf, meta_of, set_history, set_view_history
from .recording import record
from .rules import Rule
from .saved import SavedTensor

__all__ = ["CopySlices", "check_view_write", "run_inplace", "saved_before_write"]


_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked)."
)


def check_view_write(rule: Rule, t: Tensor, view: ViewInfo, recording: bool) -> None:
    """Refuse an in-place op on ``t``, a view of a tensor that requires grad, where PyTorch
    does (Note [Views that refuse in-place changes]); ``recording``: grad mode is on."""
    if view.function is not None:
        raise RuntimeError(
            f"{rule.name}: an output of {view.function} is a view and is being modified inplace. "
            "This view was created inside a custom Function (or because an input was "
            "returned as-is) and the autograd logic to handle view+inplace would override "
            "the custom backward associated with the custom Function, leading to incorrect "
            "gradients. This behavior is forbidden. You can fix this by cloning the output of "
            "the custom Function."
        )
    if (
        recording
        and not t.tp_keyset & M.ag
        and view.base.tp_keyset & M.ag
        and (t.tp_dtype.is_floating_point or t.tp_dtype.is_complex)
    ):
        raise RuntimeError(f"{rule.name}: {_NO_GRAD_VIEW}")


def run_inplace(rule: Rule, ks: int, args: tuple[Any, ...]) -> Any:
    self: Tensor = args[0]
    m = self.tp_autograd
    if m is not None and m.view is not None:
        check_view_write(rule, self, m.view, True)
    if self.tp_keyset & M.ag and is_leaf(self) and (m is None or m.view is None):
        raise RuntimeError(
            f"{rule.name}: a leaf Variable that requires grad is being used in an in-place "
            "operation. Do it under tp.no_grad(), or on a clone()."
        )
    view = m.view if m is not None else None
    if view is not None and rule.moves_self_only and self.tp_keyset & M.ag:
        raise NotImplementedError(
            f"{rule.name}: changing the geometry of a view that requires grad in place is not "
            "supported by tensorplug's autograd (PyTorch rebases the view's history); call "
            "it on a tensor that is not a view (e.g. after .clone()), or use the out-of-place "
            "as_strided"
        )
    plain_base = None  # a tensor about to get its first history, whose plain views must follow
    if view is None and self.tp_base is not None:
        view = plain_view(rule, self, self.tp_base)
        if not view.base.tp_keyset & M.ag and _shared(view.base, 1):
            plain_base = view.base
    elif not self.tp_keyset & M.ag and _shared(self, 0):
        plain_base = self  # a plain tensor written in place, which has views
    if view is not None and is_leaf(view.base) and view.base.tp_keyset & M.ag:
        raise RuntimeError(
            f"{rule.name}: a view of a leaf Variable that requires grad is being used in an "
            "in-place operation. Do it under tp.no_grad(), or on a clone()."
        )
    before = None
    if rule.saves_self_before:
        # recorded (CloneBackward) when self requires grad: a backward pass with
        # create_graph=True differentiates through the old value
        if rule.moves_self_only:  # its elements stay: a view keeps its old geometry
            before = self.as_strided(list(self.shape), self.stride(), self.storage_offset())
        else:
            before = tp.clone(self)
    version = self.tp_version
    v0 = version.value
    out = rule.call_below(ks, args)
    if version.value == v0:
        version.value = v0 + 1  # bump before saving the result; the dispatcher won't bump again
    if view is None:
        fn = record(rule, out, args, before)
        if fn is not None:
            _saved_before(rule, fn, version, v0, before)
        if plain_base is not None and plain_base.tp_keyset & M.ag:
            follow(plain_base, self)
        return out
    # Note [Autograd kernel]: the base gets a CopySlices node, the view a fresh view of it
    fn = record(rule, out, args, before)  # self's history is replaced below
    if fn is None:
        return out
    _saved_before(rule, fn, version, v0, before)
    base = view.base
    copy = CopySlices(base, view, fn)
    set_history(base, copy, 0)
    # the view's history from the base's new one (and its view information, when it is a
    # view of a plain tensor: Note [Views of plain tensors])
    set_view_history(self, meta_of(self), view)
    self.tp_keyset |= M.adview  # (a view of a plain tensor had none: Note [The ADView key])
    if plain_base is not None:
        follow(plain_base, self)
    return out


def _saved_before(rule: Rule, fn: Node, version: Any, v0: int, before: Tensor | None) -> None:
    if before is not None and rule.moves_self_only:
        # as_strided_: the elements did not change, only self's geometry; its gradient
        # has the shape self had before
        fn._input_meta = (input_meta(before), *fn._input_meta[1:])
        return
    saved_before_write(fn, version, v0)


def saved_before_write(fn: Node, version: Any, v0: int) -> None:
    """Arguments the op saved that share the written tensor's version counter (``y.mul_(y)``,
    or a view of ``y``) were read before the write, so they remember the version from before
    it: a backward pass that needs them raises PyTorch's "modified by an inplace operation"
    error instead of reading the new values."""
    for x in getattr(fn, "_args", ()):
        if type(x) is SavedTensor and x.vc is version:
            x.version = v0


def _shared(base: Tensor, known: int) -> bool:
    """Whether more than ``known`` other tensors share ``base``'s version counter: its views
    (and saved aliases) hold it, so its reference count tells, where a scan would cost
    milliseconds."""
    return sys.getrefcount(base.tp_version) > 2 + known  # base, getrefcount's argument


def follow(base: Tensor, written: Tensor) -> None:
    """``base`` just got its first history: give its views that recorded none, other than
    ``written``, a history from it (Note [Views of plain tensors])."""
    views = [v for v in storage.views_of(base) if v is not written and not v.tp_keyset & M.ag]
    for v in views:
        pos, _ = _positions(v, base, unique=False)
        if pos is None:
            continue  # its place is not known (a dtype reinterpretation): it stays out
        set_view_history(v, meta_of(v), _gather_view(v, base, pos))
        v.tp_keyset |= M.adview


def plain_view(rule: Rule, view: Tensor, base: Tensor) -> ViewInfo:
    """The :class:`ViewInfo` of ``view``, a view of ``base`` that recorded none: its elements
    picked out of ``base`` by index (Note [Views of plain tensors]); raises when that cannot
    be worked out."""
    pos, why = _positions(view, base)
    if pos is None:
        raise RuntimeError(
            f"{rule.name}: in-place operation on a view of a tensor that does not require grad "
            f"(base of shape {list(base.shape)}), with an argument that requires grad: "
            f"tensorplug-autograd cannot make the base part of the graph, because {why}. Build "
            "the result out of place instead (tp.cat, tp.stack, tp.where, index_put)."
        )
    return _gather_view(view, base, pos)


def _gather_view(view: Tensor, base: Tensor, pos: Tensor) -> ViewInfo:
    # the base's index of each element of the view, per dimension (numpy's unravel_index)
    rows = _row_major(tuple(base.shape))
    index = [(pos // r) % n for r, n in zip(rows, base.shape, strict=True)]
    return ViewInfo(base, ((Gather(index), (), {}),), view.tp_version.value)


def _positions(view: Tensor, base: Tensor, unique: bool = True) -> tuple[Tensor | None, str]:
    """The flat (row-major) index in ``base`` of each element of ``view`` (an int64 tensor on
    ``base``'s device), worked out from the two arrays' memory layout, or None and the
    reason."""
    lv, lb = storage.memory_layout(view), storage.memory_layout(base)
    if lv is None or lb is None:
        return None, (
            "its backend does not describe the memory of its arrays "
            "(tensorplug.storage.memory_layout)"
        )
    item = lb.itemsize
    if lv.itemsize != item:
        return None, "the view reinterprets the base's dtype"
    bshape, vshape = tuple(base.shape), tuple(view.shape)
    if not bshape:
        return None, "the base is 0-dimensional"
    bstrides, vstrides = lb.strides, lv.strides
    offset = lv.address - lb.address
    if any(x % item for x in (offset, *bstrides, *vstrides)):
        return None, "the view is not aligned with the base's elements"
    # the base's dimensions from the slowest in memory to the fastest: dense, in some order
    dims = sorted((d for d in range(len(bshape)) if bshape[d] > 1), key=lambda d: -bstrides[d])
    step = 1
    for d in reversed(dims):
        if bstrides[d] != step * item:
            return None, (
                "the base does not fill its memory densely (it has gaps or overlaps; a view of "
                "base.contiguous() would do)"
            )
        step *= bshape[d]
    # each view element's memory offset, in elements from the base's first one ...
    device = base.device
    mem = tp.full(vshape, offset // item, dtype=tp.int64, device=device)
    for d, (n, st) in enumerate(zip(vshape, vstrides, strict=True)):
        steps = tp.arange(n, dtype=tp.int64, device=device) * (st // item)
        mem = mem + steps.reshape((n,) + (1,) * (len(vshape) - d - 1))
    if mem.numel() and (int(mem.min()) < 0 or int(mem.max()) >= step):
        return None, "the view reaches outside the base"
    # ... and the base element there, as a row-major index
    flat = tp.zeros(vshape, dtype=tp.int64, device=device)
    rows = _row_major(bshape)
    for d in dims:
        flat = flat + (mem // (bstrides[d] // item)) % bshape[d] * rows[d]
    if unique and tp.unique(flat).numel() != flat.numel():
        return None, "several elements of the view are one element of the base"
    return flat, ""


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The row-major strides of ``shape``, in elements."""
    strides = []
    step = 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class CopySlices(Node):
    """The base's node after one of its views was modified in place (PyTorch's CopySlices)."""

    __slots__ = ("_view", "_fn", "_base_meta")

    def __init__(self, base: Tensor, view: ViewInfo, fn: Node) -> None:
        super().__init__()
        self._view = view
        self._fn = fn
        self._base_meta = input_meta(base)
        self.next_functions = (edge(base), *fn.next_functions[1:])
        self._input_meta = (self._base_meta, *fn._input_meta[1:])

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        g = grads[0]
        if g is None:
            return [None] * len(self.next_functions)
        view = self._view
        result = tp.clone(g)
        grad_slice = view.replay(result)
        res = apply_node(self._fn, [tp.clone(grad_slice)])
        view.assign(result, res[0], grad_slice)
        return [result, *res[1:]]

    def _release(self) -> None:
        self._fn._release()
