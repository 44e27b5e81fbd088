"""The operator registry and its computed dispatch tables.

The package's modules: ``_kernel`` (registrations), ``_registry`` (the registry: operators by
name, fallbacks, the lock and the generation), ``_op`` (operators: their calls, tables and
caches), ``_paths`` (the generic and traced call paths, and the dispatch trace), ``_remedy``
(what a missing kernel's error advises), ``_explain`` (questions about the registry) and
``_source`` (the code a call runs, frame by frame). This module is the face: every public
name, and the private ones the rest of the core uses.

Every operator overload (``ns::op.overload``) has registrations: kernels keyed by the
registration key they were registered for (a runtime key such as ``CPU``, or an alias key such
as ``Autograd``). Fallbacks are registered per key for all operators at once. From these the
dispatcher computes, for each operator and each runtime key, the entry a call to that key runs
(the steps of DESIGN §4, numbered the same in :meth:`OpOverload._compute_entry`). Tables are
recomputed whenever a registration or the set of keys changes, never per call.

Note [Dispatch cache]
~~~~~~~~~~~~~~~~~~~~~
A call computes its key set ``ks`` (Note [Generated call functions] in dispatcher/_callgen.py) and needs
the kernel of the highest key of ``ks`` whose entry is not a fallthrough. Bits do not follow
priority (Note [Bits and priority] in keys.py), so that answer is a walk over the priority
order. Each operator keeps a dict ``ks -> ready callable`` filled on the first call with a given
key set and emptied whenever its table is recomputed: a table lookup is one dict subscript. The
ready callable is the kernel itself, or a ``functools.partial`` that prepends the key set
(``with_keyset=True`` kernels) or ``(op, keyset)`` (boxed fallbacks), or what a
``per_keyset=True`` factory made for ``ks`` (Note [Per-key-set kernels]).

Note [Derived cache entries]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A functionality kernel on the hot path (the autograd plugin's) finds the kernel below its own
key on every call. Rather than keep a cache of its own, which it could not tell when to drop,
it keeps what it derived (that kernel, wrapped or not) in the op's cache too, under the
negative of the key set it was called with (``op.derived_kernel``): the kernel a key set runs
is unique, so no two kernels write the same entry, and the dispatcher's emptying of the cache
drops it with the rest. Plugins read the cache through ``op.kernel_cache`` (docs/plugins.md);
entries are written only in ``derived_kernel`` and ``_resolve`` (``_op.py``), under the registry lock (Note [Registration
is atomic]).

Note [Per-key-set kernels]
~~~~~~~~~~~~~~~~~~~~~~~~~~
A kernel registered ``per_keyset=True`` is a factory: on a cache miss for key set ``ks`` the
dispatcher calls ``factory(op, keyset)`` and keeps what it returns as the entry for ``ks``, like
any other (no key set prepended: what the kernel needs of the key set, the factory bound). The
autograd plugin binds the kernel below autograd this way, so its hot kernel neither looks it up
nor tests it on each call. A factory runs outside the registry lock (plugin code, it may
dispatch); its answer is cached only if :func:`generation` did not change meanwhile (Note
[Registration is atomic]). Switching dispatch tracing empties every cache, so a factory may read
``trace_state.enabled`` once and make the kernel of that mode (taking ``redispatch``, which the
trace shows, while tracing). ``explain`` and traces name the factory.

Note [Registration is atomic]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Calls read the dispatch cache without a lock (one dict ``get``, the hot path); everything else
-- registering or removing a kernel, fallback, operator or key, and filling the cache on a miss
(``_resolve``) -- holds the one registry lock (``keys.registry_lock``). A registration changes
its tables and empties the caches it affects before it lets go of the lock, and a cache entry is
only ever written under the lock, from the tables as they are then. So an entry is either from
before a registration (and gone by the time it returns) or from after it, and once
``close()`` returns no call that starts afterwards finds the removed kernel. A thread never sees
a mix of two states: any miss waits for the registration in progress, and by the time it
returns every cache it touched is empty. (A call already running a kernel finishes with it.)
Plugins that keep their own copies of dispatch decisions stay correct the same way: read
:func:`generation` *before* ``op.kernel_for(ks)``, and drop the copy when the generation read
later differs (Note [Registry generation]).

Kernels and fallbacks registered for one (op, key) form a stack, as PyTorch's per-key kernel
lists do: ``override=True`` pushes, and removing any entry -- in whatever order libraries are
closed -- leaves the latest registration still open on top.

Usage::

    import tensorplug as tp
    with tp.Library("myops", "DEF") as lib:
        lib.define("myadd(Tensor self, Tensor other) -> Tensor")
        lib.impl("myadd", myadd_cpu, "CPU")
        tp.dispatcher.dispatch_table("myops::myadd")["CPU"]        # 'CPU'
        tp.dispatcher.registrations("myops::myadd")                # {'CPU': 'mymodule:test'}
        print(tp.dispatcher.explain(tp.ops.myops.myadd, a, b))
        print(tp.dispatcher.source("myops::myadd", ["CPU"]))       # the code that runs
"""

from __future__ import annotations

from collections.abc import Iterable

from ..keys import KeyLike

# the public names, and the private ones the rest of the core uses (imported ``as`` themselves)
from ._explain import dispatch_table, explain, fallbacks, registrations
from ._kernel import Entry, Kernel, fallthrough_kernel
from ._op import OpOverload, find_op
from ._paths import _set_tracing as _set_tracing
from ._paths import _trace as _trace
from ._paths import _traced_call as _traced_call
from ._paths import trace_state, tracing
from ._registry import _add_fallback as _add_fallback
from ._registry import _by_namespace as _by_namespace
from ._registry import _change_listeners as _change_listeners
from ._registry import _changed as _changed
from ._registry import _fallbacks as _fallbacks
from ._registry import _lock as _lock
from ._registry import _ops as _ops
from ._registry import _register_op as _register_op
from ._registry import _remove_fallback as _remove_fallback
from ._registry import _remove_op as _remove_op
from ._registry import _source_callers as _source_callers  # filled from above
from ._registry import all_ops, generation, ops_in
from ._remedy import provider_of


def source(op: str | OpOverload, keyset: int | Iterable[KeyLike] | None = None) -> str:
    """The frames that run for a call of ``op`` with dispatch key set ``keyset``, top down
    (``_source.source``; its module is loaded on the first call: ``import tensorplug`` does
    not pay for it)."""
    from ._source import source as frames

    return frames(op, keyset)


OpOverload.__module__ = Kernel.__module__ = __name__  # where users find them

__all__ = [
    "Entry",
    "Kernel",
    "OpOverload",
    "all_ops",
    "dispatch_table",
    "explain",
    "fallbacks",
    "find_op",
    "generation",
    "fallthrough_kernel",
    "ops_in",
    "provider_of",
    "registrations",
    "source",
    "trace_state",
    "tracing",
]
