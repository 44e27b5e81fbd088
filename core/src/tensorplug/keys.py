"""Dispatch keys, their priority order, and key sets.

A dispatch key names one reason to run a kernel. There are four kinds (DESIGN §2):

* **backend** keys name where data lives (``CPU``, ``CUDA``, ``Meta``, and any a plugin adds);
  each owns a device type string (``"cpu"``);
* **functionality** keys add behaviour on top (``Batched``, ``Tracer``, ``ADInplaceOrView``,
  ``Functionalize``, ``BackendSelect``, and any a plugin adds);
* **per-backend functionality** keys exist once per backend: registering backend ``B``
  creates ``AutogradB`` and ``AutocastB``;
* **alias** keys are for registration only and stand for a set of runtime keys:
  ``Autograd``, ``Autocast``, ``CompositeExplicitAutograd``, ``CompositeImplicitAutograd``,
  and ``CompositeExplicitAutogradNonFunctional`` (PyTorch's name for an explicit composite
  built from views or in-place ops; it covers every backend, like
  ``CompositeExplicitAutograd``: functionalization runs above the backend kernel, at the
  ``Functionalize`` key, Note [Functionalization] in _opset/functionalize.py).

Note [Bits and priority]
~~~~~~~~~~~~~~~~~~~~~~~~
A :class:`DispatchKeySet` is an ``int`` bitmask. A key's bit is assigned when the key is created
and never changes (a key unregistered and registered again gets its old bit back), so key sets
stored on existing tensors stay valid when plugins add keys; the bits of an unregistered key go
to another key only once no live tensor carries them (Note [Bit reuse]). Priority is kept separately, as an
ordered list recomputed whenever a key is added: the built-in chain

    Batched > Autocast<B>... > Tracer > Autograd<B>... > ADInplaceOrView > Functionalize
            > BackendSelect > third-party backends > Meta > CUDA > CPU

plus the ``before=``/``after=`` constraints of plugin keys, topologically sorted. Among keys that
the constraints leave free, the sort keeps each key next to its anchor. Because bits do not
follow priority, "the highest key of a set" walks the priority list; the dispatcher caches the
answer per key set (Note [Dispatch cache] in dispatcher/), so that walk is never on the hot
path.

Usage::

    from tensorplug import keys
    xla = keys.register_backend("XLA", "xla")       # also creates AutogradXLA, AutocastXLA
    keys.register_functionality("Profile", before="Tracer")
    ks = keys.keyset("AutogradXLA", "XLA")
    ks.highest()                                   # DispatchKey('AutogradXLA')
    ks.below("AutogradXLA")                        # DispatchKeySet(XLA)

The key itself is :mod:`tensorplug._dispatch_key` and the sort behind the priority order is
:mod:`tensorplug._key_order`; this module holds every key and the order, and is where their
names are imported from.
"""

from __future__ import annotations

import threading
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from . import _key_order
from . import dtypes as _dtypes
from ._dispatch_key import PER_BACKEND_FAMILIES as PER_BACKEND_FAMILIES
from ._dispatch_key import DispatchKey, DispatchKeyError, KeyError_, KeyKind, autocast_dtypes_of
from ._dispatch_key import KeyLike as KeyLike
from ._dispatch_key import alias_covers as _alias_covers

__all__ = [
    "DispatchKey",
    "DispatchKeyError",
    "DispatchKeySet",
    "KeyError_",
    "KeyKind",
    "add_listener",
    "all_keys",
    "all_runtime_mask",
    "backend_for_device_type",
    "backend_mask",
    "backends",
    "device_types",
    "expand",
    "get",
    "has_views",
    "keyset",
    "per_backend",
    "plain_mask",
    "priority_order",
    "register_backend",
    "register_functionality",
    "remove_listener",
    "set_has_views",
    "tensor_keyset",
    "unregister",
]


class DispatchKeySet(int):
    """An immutable set of runtime dispatch keys, stored as an ``int`` bitmask.

    Set operators return :class:`DispatchKeySet`; iteration yields keys highest priority first.
    """

    __slots__ = ()

    def __new__(cls, value: int | Iterable[KeyLike] = 0) -> DispatchKeySet:
        if not isinstance(value, int):
            mask = 0
            for k in value:
                mask |= _resolve(k).mask
            value = mask
        return super().__new__(cls, value)

    def __or__(self, other: int) -> DispatchKeySet:
        return DispatchKeySet(int(self) | int(other))

    __ror__ = __or__

    def __and__(self, other: int) -> DispatchKeySet:
        return DispatchKeySet(int(self) & int(other))

    __rand__ = __and__

    def __sub__(self, other: int) -> DispatchKeySet:
        return DispatchKeySet(int(self) & ~int(other))

    def __contains__(self, key: KeyLike) -> bool:
        return bool(int(self) & _resolve(key).mask)

    def __iter__(self) -> Iterator[DispatchKey]:
        v = int(self)
        return (k for k in _state.order if v & (1 << k.bit))

    def __len__(self) -> int:
        return int(self).bit_count()

    def add(self, key: KeyLike) -> DispatchKeySet:
        return DispatchKeySet(int(self) | _resolve(key).mask)

    def remove(self, key: KeyLike) -> DispatchKeySet:
        return DispatchKeySet(int(self) & ~_resolve(key).mask)

    def highest(self) -> DispatchKey | None:
        """The highest-priority key of the set, or ``None`` when it is empty."""
        v = int(self)
        for k in _state.order:
            if v & (1 << k.bit):
                return k
        return None

    def below(self, key: KeyLike) -> DispatchKeySet:
        """The keys of this set whose priority is strictly lower than ``key``'s."""
        # on the redispatch path of every layered kernel: no helper calls
        k = _state.by_name.get(key) if isinstance(key, str) else key
        if k is None or k.bit < 0:
            k = _resolve(key)
            raise DispatchKeyError(f"below() needs a runtime key, not the alias key {k.name!r}")
        return int.__new__(DispatchKeySet, int(self) & _state.below_mask[k.bit])

    def names(self) -> list[str]:
        return [k.name for k in self]

    def __repr__(self) -> str:
        return f"DispatchKeySet({', '.join(self.names())})"

    __str__ = __repr__


class _KeyState:
    """Every key ever created, and the current priority order (Note [Bits and priority])."""

    def __init__(self) -> None:
        self.by_name: dict[str, DispatchKey] = {}
        self.bit_of_name: dict[str, int] = {}  # remembered across unregister
        self.next_bit = 0
        self.next_autocast_bit = 0
        # bits of unregistered keys: reused once no live tensor carries them (Note [Bit reuse])
        # (dicts as ordered sets: the bit freed longest ago is given out first)
        self.free_bits: dict[int, None] = {}
        self.safe_bits: dict[int, None] = {}  # free bits a scan found on no live tensor
        # Runtime keys (not aliases), highest priority first.
        self.order: list[DispatchKey] = []
        # bit -> mask of the keys with strictly lower priority
        self.below_mask: dict[int, int] = {}
        # name -> (before, after) constraints of functionality keys added by plugins
        self.constraints: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        # functions called after every change of the key set or order (dispatcher caches)
        self.listeners: list[Callable[[], None]] = []
        self.builtin_names: frozenset[str] = frozenset()
        # backend and Autocast<B> bits: what a plain tensor's key set may hold
        self.plain_mask = 0
        self.backend_mask = 0
        # backend name -> tensor_keyset(name), filled on use (factories ask on every call)
        self.tensor_keysets: dict[str, int] = {}
        # backends whose arrays share no memory: their tensors carry Functionalize
        self.no_views: set[str] = set()


_state = _KeyState()

# The one lock of every registry change: keys here, kernels, fallbacks and operators in the
# dispatcher, which also fills its dispatch caches under it (Note [Registration is atomic] in
# dispatcher/). Reentrant: a registration runs listeners that register or recompute.
registry_lock = threading.RLock()


def _add_key(key: DispatchKey) -> DispatchKey:
    _state.by_name[key.name] = key
    return key


def _new_bits(names: list[tuple[str, bool]]) -> list[int]:
    """Bits for new keys ``(name, is_autocast)``, all or none (Note [Bit reuse])."""
    taken = {k.bit for k in _state.by_name.values() if k.bit >= 0}
    bits: list[int] = []
    counters = {False: _state.next_bit, True: _state.next_autocast_bit}
    for name, autocast in names:
        bit = _state.bit_of_name.get(name)
        if bit is None or bit in taken:
            lo = AUTOCAST_BIT_BASE if autocast else 0  # Note [Autocast bits]
            if counters[autocast] < _BITS_PER_RANGE:
                bit = lo + counters[autocast]
                counters[autocast] += 1
            else:
                bit = _reusable_bit(name, range(lo, lo + _BITS_PER_RANGE), taken)
        taken.add(bit)
        bits.append(bit)
    _state.next_bit, _state.next_autocast_bit = counters[False], counters[True]
    for (name, _), bit in zip(names, bits, strict=True):
        for other in [n for n, b in _state.bit_of_name.items() if b == bit and n != name]:
            del _state.bit_of_name[other]  # the bit now belongs to another key
        _state.bit_of_name[name] = bit
        _state.free_bits.pop(bit, None)
        _state.safe_bits.pop(bit, None)
    return bits


def _reusable_bit(name: str, span: range, taken: set[int]) -> int:
    """A bit of ``span`` that an unregistered key left and no live tensor carries: the one
    freed longest ago, so that a key registered again soon under its old name finds its bit."""
    safe = [b for b in _state.safe_bits if b in span and b not in taken]
    if not safe:
        held = _bits_carried_by_live_tensors()
        for b in [b for b in _state.free_bits if b in span and not held >> b & 1]:
            del _state.free_bits[b]
            _state.safe_bits[b] = None
        safe = [b for b in _state.safe_bits if b in span and b not in taken]
    if not safe:
        kept = sum(1 for b in _state.free_bits if b in span)
        raise DispatchKeyError(
            f"cannot create dispatch key {name!r}: all {len(span)} dispatch key bits"
            f"{' of Autocast keys' if span.start else ''} are in use, by registered keys or "
            f"({kept} of them) by live tensors of keys since unregistered. Unregister plugins "
            "that add keys, or delete the tensors of unregistered backends."
        )
    return safe[0]


# Note [Bit reuse]
# ~~~~~~~~~~~~~~~~
# A key set is a 64-bit mask (plus the Autocast range, Note [Autocast bits]), so bits are
# finite, and a plugin registered and unregistered in a loop would use them up. The bits of an
# unregistered key go to ``free_bits``. A new key takes a never-used bit while there are any,
# then a bit known to be safe: one of ``free_bits`` that no live tensor carries, found by one
# scan of the objects the garbage collector tracks (every Tensor, and every object of the
# tensor protocol, is one). A bit found free stays safe until it is given out again (only a
# tensor that carries a bit can pass it on), so there is one scan per ~25 cycles of a backend
# plugin, not one per key. A tensor that outlived its backend thus never turns into a tensor
# of another backend. A key registered again under its old name gets its old bit back when no
# other key took it: it is the same key. Pickles never hold bits (Tensor's ``__reduce_ex__``),
# and dispatch caches are emptied whenever keys change.

_BITS_PER_RANGE: Final = 64


def _bits_carried_by_live_tensors() -> int:
    """The union of the key sets of every live object of the tensor protocol."""
    import gc

    held = 0
    protocol: dict[type, bool] = {}
    for o in gc.get_objects():
        t = type(o)
        is_tensor = protocol.get(t)
        if is_tensor is None:
            is_tensor = protocol[t] = isinstance(getattr(t, "_tp_keyset", None), _SLOT_TYPES)
        if is_tensor:
            ks = getattr(o, "_tp_keyset", 0)
            if type(ks) is int or isinstance(ks, int):
                held |= ks
    return held


# how the tensor protocol's ``_tp_keyset`` looks on a class: a slot, a property, or an int
_SLOT_TYPES: Final = (types.MemberDescriptorType, property, int)


def get(name: KeyLike) -> DispatchKey:
    """The key called ``name``; an unknown name raises with the list of known keys."""
    if isinstance(name, DispatchKey):
        return name
    try:
        return _state.by_name[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted(_state.by_name))
        raise DispatchKeyError(
            f"Unknown dispatch key {name!r}. Known keys: {known}. "
            "A plugin may add it: see `tensorplug plugins` for what is installed."
        ) from None


_resolve = get


def all_keys() -> list[DispatchKey]:
    """Every registered key: runtime keys in priority order, then the alias keys."""
    aliases = [k for k in _state.by_name.values() if k.is_alias]
    return [*_state.order, *aliases]


def priority_order() -> list[DispatchKey]:
    """Runtime keys, highest priority first."""
    return list(_state.order)


def backends() -> list[DispatchKey]:
    return [k for k in _state.order if k.kind is KeyKind.BACKEND]


def device_types() -> dict[str, DispatchKey]:
    """Device type string -> backend key."""
    return {k.device_type: k for k in backends() if k.device_type is not None}


def backend_for_device_type(device_type: str) -> DispatchKey | None:
    for k in _state.order:
        if k.kind is KeyKind.BACKEND and k.device_type == device_type:
            return k
    return None


def per_backend(family: str, backend: KeyLike) -> DispatchKey:
    """The ``family`` key of ``backend``: ``per_backend("Autograd", "CPU")`` is ``AutogradCPU``."""
    return get(family + get(backend).name)


def expand(key: KeyLike) -> DispatchKeySet:
    """The runtime keys a registration key stands for (itself, for a runtime key)."""
    k = get(key)
    if not k.is_alias:
        return DispatchKeySet(1 << k.bit)
    mask = 0
    for rk in _state.order:
        if _alias_covers(k.name, rk):
            mask |= 1 << rk.bit
    return DispatchKeySet(mask)


DispatchKey._alias_mask = lambda key: int(expand(key))  # what DispatchKey.mask of an alias is


def keyset(*keys: KeyLike) -> DispatchKeySet:
    """The set of the given keys; alias names expand to their runtime keys."""
    mask = 0
    for k in keys:
        mask |= int(expand(k))
    return DispatchKeySet(mask)


def tensor_keyset(backend: KeyLike) -> int:
    """The key set a plain tensor of ``backend`` carries: the backend and its ``Autocast`` key,
    and ``Functionalize`` for a backend without views (:func:`set_has_views`)."""
    cache = _state.tensor_keysets  # replaced, not cleared, when keys change: no stale entry
    if type(backend) is str:
        ks = cache.get(backend)
        if ks is not None:
            return ks
    b = get(backend)
    ks = (1 << b.bit) | (1 << per_backend("Autocast", b).bit)
    if b.name in _state.no_views:
        ks |= _state.by_name["Functionalize"].mask
    cache[b.name] = ks
    return ks


def set_has_views(backend: KeyLike, has_views: bool) -> None:
    """Declare whether ``backend``'s arrays share memory (``has_views=True``, the default of
    every backend: numpy, CuPy) or not (``False``: dask, array_api_strict, any library whose
    view functions copy). Tensors of a backend without views made from then on carry the
    ``Functionalize`` key, whose kernel gives them PyTorch's view semantics (Note
    [Functionalization] in _opset/functionalize.py); ``tp.array_backend.register(...,
    views=False)`` calls this."""
    with registry_lock:
        b = get(backend)
        if b.kind is not KeyKind.BACKEND:
            raise DispatchKeyError(
                f"set_has_views: {b.name!r} is a {b.kind.value} key, not a backend key"
            )
        if has_views == (b.name not in _state.no_views):
            return  # unchanged: no recompute (every backend registered says so once)
        if has_views:
            _state.no_views.discard(b.name)
        else:
            _state.no_views.add(b.name)
        _recompute()


def has_views(backend: KeyLike) -> bool:
    """Whether ``backend``'s arrays share memory (:func:`set_has_views`)."""
    return get(backend).name not in _state.no_views


# --- registration ---------------------------------------------------------------------------


def register_backend(
    name: str,
    device_type: str,
    *,
    owner: str = "tensorplug",
    autocast_dtype: _dtypes.dtype | None = None,
    autocast_dtypes: Iterable[_dtypes.dtype] | None = None,
) -> DispatchKey:
    """Create backend key ``name`` owning ``device_type``, with its ``Autograd``/``Autocast`` keys.

    Third-party backends rank above ``Meta`` and below ``BackendSelect``. ``autocast_dtype``
    and ``autocast_dtypes`` declare what ``tp.autocast(device_type)`` uses by default and
    accepts on this backend (Note [Autocast dtypes of a backend]).
    """
    with registry_lock:
        _check_new_name(name)
        for fam in PER_BACKEND_FAMILIES:
            _check_new_name(fam + name)
        default, supported = autocast_dtypes_of(name, autocast_dtype, autocast_dtypes)
        if device_type in device_types():
            other = device_types()[device_type]
            raise DispatchKeyError(
                f"register_backend({name!r}, {device_type!r}): device type {device_type!r} "
                f"already belongs to backend {other.name!r} (registered by {other.owner})."
            )
        names = [name, *(fam + name for fam in PER_BACKEND_FAMILIES)]
        bits = _new_bits(
            [(name, False), *((fam + name, fam == "Autocast") for fam in PER_BACKEND_FAMILIES)]
        )
        b = _add_key(
            DispatchKey(name, KeyKind.BACKEND, bits[0], device_type=device_type, owner=owner)
        )
        b.autocast_dtype, b.autocast_dtypes = default, supported
        for fam, n, bit in zip(PER_BACKEND_FAMILIES, names[1:], bits[1:], strict=True):
            _add_key(DispatchKey(n, KeyKind.PER_BACKEND, bit, backend=b, family=fam, owner=owner))
        _recompute()
        return b


def register_functionality(
    name: str,
    *,
    before: KeyLike | Iterable[KeyLike] | None = None,
    after: KeyLike | Iterable[KeyLike] | None = None,
    owner: str = "tensorplug",
) -> DispatchKey:
    """Create functionality key ``name``.

    ``before=X`` ranks it above (is dispatched before) ``X``; ``after=X`` ranks it below ``X``.
    Anchors may be alias names (``after="Autograd"`` means below every ``Autograd<B>``). With
    neither, the key goes directly above ``BackendSelect``: it sees a call after autograd
    recorded it and before a backend runs it. Unknown anchors and cycles are errors.
    """
    with registry_lock:
        _check_new_name(name)
        bef = _names(before)
        aft = _names(after)
        for anchor in (*bef, *aft):
            get(anchor)  # raises with the list of known keys
        if not bef and not aft:
            bef = ("BackendSelect",)
        (bit,) = _new_bits([(name, False)])
        key = DispatchKey(name, KeyKind.FUNCTIONALITY, bit, owner=owner)
        _state.by_name[name] = key
        _state.constraints[name] = (bef, aft)
        try:
            _recompute()
        except DispatchKeyError:
            del _state.by_name[name]
            del _state.constraints[name]
            _state.free_bits[bit] = None
            _recompute()
            order = " > ".join(k.name for k in _state.order)
            raise DispatchKeyError(
                f"cannot place dispatch key {name!r} before {list(bef)} and after {list(aft)}: "
                f"the constraints form a cycle with the current order {order}"
            ) from None
        return key


def unregister(name: KeyLike) -> None:
    """Remove a key added by a plugin (and, for a backend, its per-backend keys).

    Its bits are reused only once no live tensor carries them (Note [Bit reuse]).
    """
    with registry_lock:
        k = get(name)
        if k.name in _state.builtin_names:
            raise DispatchKeyError(f"cannot unregister built-in dispatch key {k.name!r}")
        dependents = [
            n for n, (bef, aft) in _state.constraints.items() if n != k.name and k.name in bef + aft
        ]
        if dependents:
            raise DispatchKeyError(
                f"cannot unregister dispatch key {k.name!r}: keys {dependents} are placed "
                "relative to it; unregister them first"
            )
        names = [k.name]
        if k.kind is KeyKind.BACKEND:
            names += [fam + k.name for fam in PER_BACKEND_FAMILIES]
        _state.no_views.discard(k.name)
        for n in names:
            gone = _state.by_name.pop(n, None)
            _state.constraints.pop(n, None)
            if gone is not None and gone.bit >= 0:
                _state.free_bits[gone.bit] = None
        _recompute()


def _names(spec: KeyLike | Iterable[KeyLike] | None) -> tuple[str, ...]:
    if spec is None:
        return ()
    if isinstance(spec, str | DispatchKey):
        return (get(spec).name if isinstance(spec, DispatchKey) else spec,)
    return tuple(s.name if isinstance(s, DispatchKey) else s for s in spec)


def _check_new_name(name: str) -> None:
    if not name.isidentifier():
        raise DispatchKeyError(f"dispatch key names must be identifiers, got {name!r}")
    if name in _state.by_name:
        k = _state.by_name[name]
        raise DispatchKeyError(f"dispatch key {name!r} already exists (registered by {k.owner})")


# --- the priority order ---------------------------------------------------------------------


def _recompute() -> None:
    """Recompute the priority order (``_key_order``) and the masks that follow from it."""
    order = _key_order.sort(_state.by_name, _state.constraints)
    _state.order = order
    below: dict[int, int] = {}
    acc = 0
    for k in reversed(order):
        below[k.bit] = acc
        acc |= 1 << k.bit
    _state.below_mask = below
    plain = 0
    for k in order:
        if k.kind is KeyKind.BACKEND or k.family == "Autocast" or k.name == "Functionalize":
            plain |= 1 << k.bit
    _state.plain_mask = plain
    _state.backend_mask = sum(1 << k.bit for k in order if k.kind is KeyKind.BACKEND)
    _state.tensor_keysets = {}
    for listener in list(_state.listeners):
        listener()


def add_listener(fn: Callable[[], None]) -> None:
    """Call ``fn()`` after every change of the keys or their order (a backend registered, a
    plugin's key removed). Plugins that derive masks from the keys (the autograd plugin's
    ``Autograd<B>`` mask) refresh them here; prefer ``registry.add_key_listener``, which is
    removed with the plugin."""
    if fn not in _state.listeners:
        _state.listeners.append(fn)


def remove_listener(fn: Callable[[], None]) -> None:
    """Stop calling ``fn`` (see :func:`add_listener`); unknown functions are ignored."""
    if fn in _state.listeners:
        _state.listeners.remove(fn)


# --- thread-local default exclusion ---------------------------------------------------------
# Note [Autocast bits]
# Every thread starts with all Autocast<B> keys excluded (DESIGN §3), including the keys of
# backends registered after the thread started. Autocast keys therefore take their bits from a
# range of their own, starting at AUTOCAST_BIT_BASE, and a thread's initial ``~excluded`` mask is
# simply "every bit below that range": no registry of live threads to update.

AUTOCAST_BIT_BASE: Final = 64


def initial_not_excluded() -> int:
    """``~excluded`` as every thread starts: all bits except the Autocast range."""
    return (1 << AUTOCAST_BIT_BASE) - 1


# --- built-in keys --------------------------------------------------------------------------


def _builtin() -> None:
    for name in ("Batched", "Tracer", "ADInplaceOrView", "Functionalize", "BackendSelect"):
        (bit,) = _new_bits([(name, False)])
        _add_key(DispatchKey(name, KeyKind.FUNCTIONALITY, bit))
    for alias in (
        "Autograd",
        "Autocast",
        "CompositeExplicitAutograd",
        "CompositeImplicitAutograd",
        "CompositeExplicitAutogradNonFunctional",
    ):
        _add_key(DispatchKey(alias, KeyKind.ALIAS, -1))
    bf16, f16 = _dtypes.bfloat16, _dtypes.float16
    register_backend("CPU", "cpu", autocast_dtype=bf16, autocast_dtypes=(bf16, f16))
    register_backend("CUDA", "cuda", autocast_dtype=f16, autocast_dtypes=(f16, bf16))
    register_backend("Meta", "meta")
    _state.builtin_names = frozenset(_state.by_name)


_builtin()


def all_runtime_mask() -> int:
    mask = 0
    for k in _state.order:
        mask |= 1 << k.bit
    return mask


def plain_mask() -> int:
    """Bits of backend and ``Autocast<B>`` keys, and ``Functionalize`` (which a tensor of a
    backend without views always carries): ``ks & plain_mask()`` strips functionality."""
    return _state.plain_mask


def backend_mask() -> int:
    """Bits of all backend keys."""
    return _state.backend_mask
