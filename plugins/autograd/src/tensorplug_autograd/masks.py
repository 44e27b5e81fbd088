"""The key-set masks of the hot path (``M``), and the bits a tensor that requires grad carries.

A tensor requires grad exactly when its key set holds an ``Autograd<B>`` key (DESIGN §3); grad
mode is the thread's exclusion of those keys. Every kernel, node and grad-mode switch of this
plugin reads the masks here, recomputed when keys change (``__init__``'s key listener).
"""

from __future__ import annotations

from tensorplug import keys as _keys
from tensorplug.dispatch import local_state
from tensorplug.tensor import Tensor

__all__ = ["M", "autograd_bit", "grad_recording", "with_autograd_bits"]


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
    fwd: int = 0  # the ForwardAD bit (Note [Dual tensors] in dual.py)
    below_fwd: int = -1  # keys strictly below ForwardAD
    fwd_down: int = -1  # ForwardAD and the keys below it

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
        cls.fwd = _keys.get("ForwardAD").mask
        cls.below_fwd = int(everything.below("ForwardAD"))
        cls.fwd_down = cls.fwd | cls.below_fwd
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


def grad_recording() -> bool:
    """True when autograd keys are not excluded in this thread (grad mode is on)."""
    return bool(local_state.masks.nexc & M.ag)
