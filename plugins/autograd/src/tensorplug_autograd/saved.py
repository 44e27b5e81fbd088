"""Saved tensors: the values a node keeps for its backward, checked when read.

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

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tensorplug.dispatch import local_state
from tensorplug.storage import alias
from tensorplug.tensor import Tensor

from .dual import carry
from .masks import M, grad_recording
from .meta import set_history

if TYPE_CHECKING:
    from .graph import Node

__all__ = [
    "FREED", "FREED_ARGS", "FreedArgs", "SavedTensor", "modified_message", "saved_tensors_hooks",
]  # fmt: skip

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

    __slots__ = ("t", "vc", "version", "output_nr", "plain", "hook")

    def __init__(self, t: Tensor, output_nr: int = -1) -> None:
        self.hook: tuple[Callable[[Any], Tensor], Any] | None = None
        if _active and _hooks_of_thread():
            self._pack(t, output_nr)  # Note [Saved tensor hooks]
            return
        if output_nr >= 0:
            # an output of the node that saves it: keep a detached alias, no reference cycle,
            # without ADInplaceOrView either (what unpack_plain gives without another alias)
            ks = t.tp_keyset
            a = alias(t, ks & ~M.strip)
            if ks & M.fwd:  # Note [Dual tensors] in dual.py
                carry(t, a)
            t = a
        self.t = t
        self.vc = vc = t.tp_version  # the counter itself: reading it later costs no property
        self.version = vc.value
        self.output_nr = output_nr
        self.plain: Tensor | None = None

    def _pack(self, t: Tensor, output_nr: int) -> None:
        """Note [Saved tensor hooks]: keep what the innermost pack hook makes of ``t``."""
        stack = _hooks_of_thread()
        pack, unpack = stack.pop()  # the hook's own operations save nothing through it
        try:
            packed = pack(t)
        finally:
            stack.append((pack, unpack))
        self.t = None  # type: ignore[assignment]
        self.vc = _HOOKED_COUNTER  # type: ignore[assignment]
        self.version = -4  # no version equals it: every read goes through check/unpack
        self.output_nr = output_nr
        self.plain = None
        self.hook = (unpack, packed)

    def _unpack_hooked(self) -> None:
        """Note [Saved tensor hooks]: the value, from the unpack hook, on the first read."""
        if self.t is None:
            unpack, packed = self.hook
            t = unpack(packed)
            if not isinstance(t, Tensor):
                raise TypeError(
                    "Output of saved tensor unpack_hook expected to be a Tensor but got result "
                    f"of type {type(t).__name__}"
                )
            self.t = t
            self.hook = (unpack, None)  # the packed value is no longer needed

    def check(self, node: Node | None) -> None:
        """Raise what reading this value now must raise (Note [Freed saved tensors]): the
        graph was freed, or the tensor was modified in place since it was saved. A value
        saved through hooks is unpacked instead (Note [Saved tensor hooks])."""
        if self is FREED:
            raise RuntimeError(_FREED)
        if self.hook is not None:
            self._unpack_hooked()
            return
        if self.vc.value != self.version:
            raise RuntimeError(modified_message(self.t, node, self))

    def unpack(self, node: Node | None) -> Tensor:
        if self.hook is not None:
            self._unpack_hooked()
        t = self.t
        if self.vc.value != self.version:
            self.check(node)
        if (
            self.output_nr >= 0
            and node is not None
            # indices (max.dim) never require grad
            and (t.tp_dtype.is_floating_point or t.tp_dtype.is_complex)
            and grad_recording()
        ):
            # create_graph: the output is differentiable again, through this node
            out = alias(t, t.tp_keyset)
            if out.tp_keyset & M.fwd:
                carry(t, out)
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
            if ks & M.fwd and p is not t:
                carry(t, p)
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
    s.hook = None
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


# --- saved tensor hooks --------------------------------------------------------------------

_active = 0  # open saved_tensors_hooks contexts over all threads: a save reads this int first
_active_lock = threading.Lock()
_local = threading.local()


def _hooks_of_thread() -> list[tuple[Callable[[Tensor], Any], Callable[[Any], Tensor]]]:
    stack: list[Any] | None = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


class _HookedCounter:
    """The counter of a value saved through hooks: its value is no version (the value itself
    is not kept, so neither is its version's check)."""

    __slots__ = ()
    value = -3


_HOOKED_COUNTER = _HookedCounter()


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """``tp.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)``: inside the context,
    every tensor an operation saves for backward is handed to ``pack_hook(tensor)``, and the
    node keeps what it returns instead of the tensor; the backward pass gets the tensor back
    from ``unpack_hook(packed)`` (Note [Saved tensor hooks]).

    Note [Saved tensor hooks]
    ~~~~~~~~~~~~~~~~~~~~~~~~~
    As PyTorch's: contexts nest (the innermost pair applies), are per thread, and cover the
    saves of every operation, of fused nodes and of ``ctx.save_for_backward``. A pack hook's
    own operations save nothing through it. Differences: ``unpack_hook`` runs once per saved
    value, on its first read (the result is kept until the graph is freed, so a second
    ``backward(retain_graph=True)`` reads it again without calling the hook), and a value
    saved through hooks has no in-place modification check (the value itself is not kept).
    ``tensorplug.utils.checkpoint`` is built on these hooks.
    """

    def __init__(
        self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]
    ) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        global _active
        _hooks_of_thread().append((self.pack_hook, self.unpack_hook))
        with _active_lock:
            _active += 1
        return self

    def __exit__(self, *exc: object) -> None:
        global _active
        _hooks_of_thread().pop()
        with _active_lock:
            _active -= 1
