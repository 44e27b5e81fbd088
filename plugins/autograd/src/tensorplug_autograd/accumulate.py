"""Leaves: their accumulator node, the edge a use of a tensor adds, and accumulation into ``.grad``.

Note [Stealing gradients]
~~~~~~~~~~~~~~~~~~~~~~~~~
The first gradient accumulated into a leaf is stored as ``leaf.grad`` without a copy when
nothing else refers to it (CPython's reference count says so) and it is not a view, as
PyTorch's AccumulateGrad does; otherwise a clone is stored, so that in-place updates of one
``.grad`` never show up in another tensor. Both keep PyTorch's layout contract: a ``.grad``
has its leaf's strides (a dense leaf's; else it is row-major), so a gradient laid out otherwise
(a transposed product, ``(x.t() @ g).t()``, where a weight was used as ``w.t()`` through
``matmul``, as ``tp.compile``'s graphs of ``linear`` do) is copied into the leaf's layout
rather than kept: an optimizer step over a transposed gradient and a row-major parameter and
state costs more than the copy (AdamW on the four (384|128|512, 128|512) weights of
bench/gpt.py: 0.80 ms with the transposed gradients, 0.30 ms row-major, 0.18 ms the copies). Later gradients are added in place, or out of
place when the backward pass records a graph (``create_graph=True``).
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Sequence
from typing import Any

import tensorplug as tp
from tensorplug.tensor import Tensor

from .graph import ACCUMULATOR_PRIORITY, Node, run_tensor_hook
from .masks import M, grad_recording
from .meta import AutogradMeta, meta_of, refresh_view

__all__ = [
    "AccumulateGrad", "accumulate_into_grad", "copy_in_layout", "edge", "leaf_edge",
    "leaf_input_meta", "owns_layout", "same_layout",
]  # fmt: skip


class AccumulateGrad(Node):
    """The node of a leaf: adds the incoming gradient into ``variable.grad``.

    The leaf keeps its accumulator (so every graph that uses the leaf reaches the same node,
    and a training loop does not build a new one per step); the accumulator refers to the leaf
    weakly, so there is no reference cycle. A gradient reaching the accumulator of a leaf that
    no longer exists has nowhere to go and is dropped.
    """

    __slots__ = ("_variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__()
        self._variable = weakref.ref(variable)
        self._seq += ACCUMULATOR_PRIORITY  # Note [Engine order]: runs as soon as it is ready

    @property
    def variable(self) -> Tensor | None:
        return self._variable()

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        g = grads[0]
        t = self._variable()
        if g is not None and t is not None:
            accumulate_into_grad(t, g)
        return ()


def accumulator(t: Tensor) -> AccumulateGrad:
    m: AutogradMeta | None = t.tp_autograd
    if m is None:
        m = t.tp_autograd = AutogradMeta()
    acc = m.acc
    if acc is None:
        acc = m.acc = AccumulateGrad(t)
        m.acc_edge = (acc, 0)
    return acc  # type: ignore[return-value]  # m.acc is set here only: an AccumulateGrad


def leaf_edge(t: Tensor) -> tuple[AccumulateGrad, int]:
    """The edge a use of leaf ``t`` adds to a node: ``(accumulator(t), 0)``, one tuple kept
    with the accumulator, so recording builds none (Note [Graph edges])."""
    m: AutogradMeta | None = t.tp_autograd
    if m is None or m.acc_edge is None:
        accumulator(t)
        m = t.tp_autograd
    return m.acc_edge  # type: ignore[return-value]


def leaf_input_meta(t: Tensor) -> tuple[tuple[int, ...], Any, Any]:
    """:func:`input_meta` of leaf ``t`` (whose meta :func:`leaf_edge` made), kept in its meta
    with a weak reference to its data: the next use reads it while ``t.tp_data`` is the same
    array (a new array, ``t.data = ...``, makes it again; an array type without weak
    references is not kept)."""
    data = t.tp_data
    meta = (data.shape, t.tp_dtype, t.tp_device)
    m: AutogradMeta = t.tp_autograd
    try:
        m.data_ref = weakref.ref(data)
    except TypeError:
        return meta
    m.leaf_meta = meta
    return meta


def edge(t: Tensor) -> tuple[Node | None, int]:
    """The edge a use of ``t`` adds to a node (Note [Graph edges])."""
    m: AutogradMeta | None = t.tp_autograd
    if m is not None and m.grad_fn is not None:
        if m.view is not None and t.tp_version.value != m.view.version:
            refresh_view(t, m)
        return (m.grad_fn, m.output_nr)
    if t.tp_keyset & M.ag:
        return leaf_edge(t)
    return (None, 0)


def run_leaf_hooks(t: Tensor, g: Tensor) -> Tensor:
    """``g`` after the hooks registered on leaf ``t`` (in order, each given the last's result)."""
    m: AutogradMeta | None = t.tp_autograd
    if m is not None and m.hooks:
        for fn in list(m.hooks):
            g = run_tensor_hook(fn, g)
    return g


def accumulate_into_grad(t: Tensor, g: Tensor, _steal_refs: int = 2, hooked: bool = False) -> None:
    """Add ``g`` into ``t.grad`` (Note [Stealing gradients]); runs the leaf's hooks first,
    unless ``hooked`` says they already ran."""
    m = meta_of(t)
    if m.hooks and not hooked:
        new = run_leaf_hooks(t, g)
        if new is not g:
            g = new
            _steal_refs = 0  # a hook's result may be referenced by the hook: copy it
    recording = grad_recording()
    old = m.grad
    if old is None:
        if recording:
            m.grad = g
        elif g.tp_autograd is None and sys.getrefcount(g) <= _steal_refs + 1 and owns_layout(g, t):
            m.grad = g
        else:
            m.grad = copy_in_layout(g.detach(), t)
    elif recording:
        m.grad = old + g
    else:
        old.add_(g)
    if m.post_accumulate_hooks:
        for post in list(m.post_accumulate_hooks):
            post(t)


def owns_layout(g: Tensor, leaf: Tensor | None = None) -> bool:
    """Whether ``g``'s array can become a ``.grad`` as is: dense (row- or column-major),
    writable and, given the ``leaf``, laid out as it is (PyTorch's layout contract, Note
    [Stealing gradients]).

    Array libraries with numpy's ``flags`` (numpy, cupy) say so; for others, only a tensor
    that is not a view qualifies.
    """
    try:
        data = g.tp_data
        flags = data.flags
    except AttributeError:
        return g.tp_base is None
    if not (flags.c_contiguous or flags.f_contiguous):
        return False
    if leaf is not None and not same_layout(data, leaf.tp_data):
        return False
    try:
        return bool(flags.writeable)
    except AttributeError:  # CuPy's flags have no writeable: its arrays always are
        return True


def same_layout(g: Any, p: Any) -> bool:
    """Whether gradient array ``g`` obeys the layout contract of parameter array ``p``: ``p``'s
    strides where ``p`` is dense (strides of size-1 dimensions do not count), else row-major.
    Arrays without strides always do."""
    gs, ps = getattr(g, "strides", None), getattr(p, "strides", None)
    if gs is None or ps is None or gs == ps:
        return True
    pf = getattr(p, "flags", None)
    if pf is None:
        return True
    if not (pf.c_contiguous or pf.f_contiguous):
        return bool(g.flags.c_contiguous)
    return all(a == b for n, a, b in zip(g.shape, gs, ps, strict=True) if n > 1)


def copy_in_layout(g: Tensor, leaf: Tensor) -> Tensor:
    """A copy of ``g`` laid out as ``leaf`` (PyTorch's ``clone_obey_contract``): with the
    leaf's strides where it is dense, else row-major."""
    try:
        data = leaf.tp_data
        flags = data.flags
    except AttributeError:
        return g.clone()
    if same_layout(g.tp_data, data):
        return g.clone()  # preserves the layout
    if flags.c_contiguous or not flags.f_contiguous or leaf.dim() < 2:
        return g.clone(memory_format=tp.contiguous_format)
    out = tp.empty_strided(leaf.shape, leaf.stride(), dtype=g.dtype, device=g.device)
    return out.copy_(g)
