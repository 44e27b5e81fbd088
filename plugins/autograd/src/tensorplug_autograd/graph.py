"""The autograd graph: per-tensor metadata, backward nodes, saved tensors.

Note [Autograd state of a tensor]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A tensor requires grad exactly when its key set holds an ``Autograd<B>`` key (DESIGN §3), so
ops on plain tensors never reach an autograd kernel and pay nothing. Everything else lives in
``tensor.tp_autograd``, an :class:`AutogradMeta` created only for tensors that take part in a
graph: the accumulated ``grad``, the ``grad_fn`` that produced the tensor (``None`` for leaves)
and which of its outputs it is, hooks, and for views of tensors that require grad how to
re-create the view from its base (used when the view is modified in place).

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
to that shape and casts it, as PyTorch's ``validate_outputs`` does.

Note [Saved tensors]
~~~~~~~~~~~~~~~~~~~~
A tensor saved for backward remembers its version counter's value (DESIGN §5). Reading it
back after an in-place change raises PyTorch's "modified by an inplace operation" error.
An op's own outputs are saved as detached aliases sharing data and version counter, so the
graph holds no reference cycle (output -> grad_fn -> output); when a backward pass builds a
graph (``create_graph=True``) the alias is given the node back as its ``grad_fn``. Freeing a
graph (``retain_graph=False``) drops the saved tensors; reading one afterwards raises
"Trying to backward through the graph a second time".

Note [Saved values for a backend kernel]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A formula reads a saved value through :meth:`SavedTensor.unpack_plain`, which gives an alias
without the autograd keys, so the formula's ops go straight to the backend. A node that hands
its saved values to a backend's kernel itself (fused.py's linear and cross-entropy nodes,
while the backward pass records nothing) needs no alias: the kernel never reads key sets. It
makes the one check an unpack makes (the counter's value against ``version``; a mismatch,
freed or modified, is raised by :meth:`SavedTensor.check`), reads ``saved.t`` and looks the
kernel up for the key set the plain values would give (without ``M.strip``).
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import tensorplug as tp
from tensorplug import keys as _keys
from tensorplug.dispatch import local_state
from tensorplug.storage import alias
from tensorplug.tensor import Tensor

__all__ = ["AccumulateGrad", "AutogradMeta", "Node", "RemovableHandle", "SavedTensor"]


class _Masks:
    """Key-set masks of the hot path, recomputed when keys change.

    Note [Masks are ints]
    ~~~~~~~~~~~~~~~~~~~~~
    The masks are plain ints, and kernels combine them with ``int(ks)``, never with the
    :class:`DispatchKeySet` they receive: its operators are Python methods returning a new
    ``DispatchKeySet`` (about 0.8 µs), where an int ``&`` costs tens of nanoseconds.
    """

    ag: int = 0  # every Autograd<B> bit
    nag: int = -1  # ~ag, for the thread's not-excluded mask
    adiov: int = 0  # the ADInplaceOrView bit
    adview: int = 0  # the ADView bit (Note [The ADView key] in views.py)
    view_bits: int = 0  # adiov | adview: what a recorded view carries
    strip: int = 0  # ag | adiov | adview: what a plain alias of a tensor that requires grad drops
    below: int = -1  # keys strictly below every Autograd<B> key
    above: int = 0  # keys above the Autograd<B> keys (Autocast<B>, Tracer, Batched, ...)
    below_view: int = -1  # keys strictly below ADInplaceOrView
    below_adview: int = -1  # keys strictly below ADView
    ag_of: dict[int, int] = {}  # a plain tensor key set -> its Autograd<B> | ADInplaceOrView bits
    with_ag: dict[int, int] = {}  # a key set -> itself with those bits (a recorded output's)

    @classmethod
    def refresh(cls) -> None:
        cls.ag = int(_keys.keyset("Autograd"))
        cls.nag = ~cls.ag
        cls.adiov = _keys.get("ADInplaceOrView").mask
        cls.adview = _keys.get("ADView").mask
        cls.view_bits = cls.adiov | cls.adview
        cls.strip = cls.ag | cls.view_bits
        everything = _keys.DispatchKeySet(_keys.all_runtime_mask())
        lowest = [k for k in _keys.priority_order() if k.family == "Autograd"][-1]
        cls.below = int(everything.below(lowest))
        cls.above = int(everything) & ~cls.below & ~cls.ag
        cls.below_view = int(everything.below("ADInplaceOrView"))
        cls.below_adview = int(everything.below("ADView"))
        cls.ag_of = {}
        cls.with_ag = {}


M = _Masks


def autograd_bit(t: Tensor) -> int:
    """The bits a tensor of ``t``'s backend carries while it requires grad:
    ``Autograd<B>`` and ``ADInplaceOrView`` (Note [Views under autograd] in views.py)."""
    ks = t.tp_keyset
    bit = M.ag_of.get(ks)
    if bit is None:
        backend = ks & _keys.backend_mask()
        key = next(k for k in _keys.backends() if backend & k.mask)
        bit = M.ag_of[ks] = _keys.per_backend("Autograd", key).mask | M.adiov
    return bit


def with_autograd_bits(t: Tensor) -> int:
    """``t``'s key set with :func:`autograd_bit` added, kept in ``M.with_ag`` for the next
    output of that key set (one lookup, no ``|``, in the generated kernels)."""
    ks = t.tp_keyset
    r = M.with_ag[ks] = ks | autograd_bit(t)
    return r


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


class ViewInfo:
    """How a view of a tensor that requires grad was made: its root base and the view ops, and
    the value of the version counter it shares with its base when its ``grad_fn`` was set
    (Note [Stale views] in views.py)."""

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
    in views.py): picks the view's elements out of a tensor shaped like its base by index, so
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
    acc: AccumulateGrad | None = None  # a leaf's accumulator (Note [Graph edges])
    acc_edge: tuple[AccumulateGrad, int] | None = None  # (acc, 0), the edge a use of the leaf adds
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
        from .engine import accumulate_into_grad

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
    return acc


def leaf_edge(t: Tensor) -> tuple[AccumulateGrad, int]:
    """The edge a use of leaf ``t`` adds to a node: ``(accumulator(t), 0)``, one tuple kept
    with the accumulator, so recording builds none (Note [Graph edges])."""
    m: AutogradMeta | None = t.tp_autograd
    if m is None or m.acc_edge is None:
        accumulator(t)
        m = t.tp_autograd
    return m.acc_edge  # type: ignore[return-value]


def input_meta(t: Tensor) -> tuple[tuple[int, ...], Any, Any]:
    return (t.tp_data.shape, t.tp_dtype, t.tp_device)


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


def refresh_view(t: Tensor, m: AutogradMeta) -> None:
    """Give view ``t`` the ``grad_fn`` its base's current history implies (Note [Stale views]
    in views.py)."""
    view = m.view
    assert view is not None
    set_view_history(t, m, view)


def set_view_history(t: Tensor, m: AutogradMeta, view: ViewInfo) -> None:
    """Make ``view`` the view information of ``t`` (whose meta is ``m``) and give ``t`` the
    history its base's current one implies: replay the view chain on the base, recording, and
    take the result's ``grad_fn`` and autograd keys."""
    from .grad_mode import enable_grad

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


# --- saved tensors ------------------------------------------------------------------------------

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class SavedTensor:
    """Note [Saved tensors].

    Note [Freed saved tensors]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~
    A released node holds :data:`FREED` in place of each saved value: its counter reads a
    value no version equals, so the one version check of an unpack also catches a freed
    value, and :meth:`check` tells the two errors apart.
    """

    __slots__ = ("t", "vc", "version", "output_nr", "plain")

    def __init__(self, t: Tensor, output_nr: int = -1) -> None:
        if output_nr >= 0:
            # an output of the node that saves it: keep a detached alias, no reference cycle,
            # without ADInplaceOrView either (what unpack_plain gives without another alias)
            t = alias(t, t.tp_keyset & ~M.strip)
        self.t = t
        self.vc = vc = t.tp_version  # the counter itself: reading it later costs no property
        self.version = vc.value
        self.output_nr = output_nr
        self.plain: Tensor | None = None

    def check(self, node: Node | None) -> None:
        """Raise what reading this value now must raise (Note [Freed saved tensors]): the
        graph was freed, or the tensor was modified in place since it was saved."""
        if self is FREED:
            raise RuntimeError(_FREED)
        if self.vc.value != self.version:
            raise RuntimeError(modified_message(self.t, node, self))

    def unpack(self, node: Node | None) -> Tensor:
        t = self.t
        if self.vc.value != self.version:
            self.check(node)
        if (
            self.output_nr >= 0
            and node is not None
            and t.tp_dtype.is_floating_point  # indices (max.dim) never require grad
            and grad_recording()
        ):
            # create_graph: the output is differentiable again, through this node
            out = alias(t, t.tp_keyset)
            set_history(out, node, self.output_nr)
            return out
        return t

    def unpack_plain(self, node: Node | None) -> Tensor:
        """:meth:`unpack` for a derivative formula. While the backward pass records nothing
        (no ``create_graph``) the value comes without its autograd and ADInplaceOrView keys,
        so the formula's ops (``s.mat2.t()``) go straight to the backend. The alias is kept,
        which also keeps a formula that returns it from being stolen as a ``.grad``."""
        if local_state.masks.nexc & M.ag:
            return self.unpack(node)
        # :meth:`unpack` inline: nothing records, so an output comes back as it was saved
        if self.vc.value != self.version:
            self.check(node)
        p = self.plain
        if p is None:
            t = self.t
            ks = t.tp_keyset
            p = self.plain = alias(t, ks & ~M.strip) if ks & M.strip else t
        return p


class _FreedCounter:
    """The counter of :data:`FREED`: its value is no version (Note [Freed saved tensors])."""

    __slots__ = ()
    value = -1


def _freed_saved_tensor() -> SavedTensor:
    s: SavedTensor = object.__new__(SavedTensor)
    s.t = None  # type: ignore[assignment]
    s.vc = _FreedCounter()  # type: ignore[assignment]
    s.version = -2
    s.plain = None
    s.output_nr = -1
    return s


FREED = _freed_saved_tensor()  # what a released node holds in place of each saved value


class FreedArgs:
    """The saved arguments of a released node (:meth:`OpNode._release`): every one reads
    as :data:`FREED`, whose unpacking raises the "backward through the graph a second time"
    error."""

    __slots__ = ()

    def __getitem__(self, i: int) -> SavedTensor:
        return FREED


FREED_ARGS = FreedArgs()


def modified_message(t: Tensor, node: Node | None, saved: SavedTensor) -> str:
    what = f"[{t.device.type.upper()} {str(t.dtype).rsplit('.', 1)[-1]} {list(t.shape)}]"
    if node is not None:
        if saved.output_nr >= 0:
            what += f", which is output {saved.output_nr} of {node.name()},"
        else:
            what += f", which is saved by {node.name()} (an input of it),"
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {what} is at version {t.tp_version.value}; expected version "
        f"{saved.version} instead. Hint: the tensor was changed in place (an op ending in _, "
        "out=, or item assignment) after it was used; clone() it before changing it, or "
        "change it out of place."
    )


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


def grad_recording() -> bool:
    """True when autograd keys are not excluded in this thread (grad mode is on)."""
    return bool(local_state.masks.nexc & M.ag)


def tensors_in(x: Any) -> list[Tensor]:
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for t in x if isinstance(t, Tensor)]
    return []


def zeros_for(meta: tuple[tuple[int, ...], Any, Any]) -> Tensor:
    shape, dtype, device = meta
    return tp.zeros(list(shape), dtype=dtype, device=device)
