"""Registrations: a :class:`Kernel` for (op, key) or a fallback for a key, and the fallthrough
kernel."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..keys import DispatchKey

_CEA = "CompositeExplicitAutograd"
_CIA = "CompositeImplicitAutograd"
_CEANF = "CompositeExplicitAutogradNonFunctional"
_COMPOSITES = (_CEA, _CIA, _CEANF)


def fallthrough_kernel(*args: Any, **kwargs: Any) -> Any:
    """Register this for a key to make that key pass calls through to the next one.

    It is never called: the dispatcher drops fallthrough keys before choosing a kernel.
    """
    raise AssertionError("fallthrough_kernel is never called; the dispatcher skips it")


@dataclass(eq=False, slots=True)
class Kernel:
    """One registration: a kernel for (op, key), or a fallback for a key. (Slotted: start-up
    makes one per registration, ~6000.)"""

    fn: Callable[..., Any]
    key: DispatchKey  # the registration key (may be an alias)
    registrant: str  # plugin name or module:function
    with_keyset: bool = False
    boxed: bool = False  # fallbacks: fn(op, keyset, *args, **kwargs)
    per_keyset: bool = False  # fn(op, keyset) makes the kernel of each key set (a factory)
    owner: object = None  # the Library that made it
    removed: bool = False

    @property
    def is_fallthrough(self) -> bool:
        return self.fn is fallthrough_kernel

    @property
    def where(self) -> str:
        """The kernel's module and name, as explain, traces and errors show it; a closure that
        a kernel factory made shows its own name (``<locals>`` and the factories dropped)."""
        fn = self.fn
        name = getattr(fn, "__qualname__", None) or repr(fn)
        return f"{getattr(fn, '__module__', '?')}.{name.rpartition('<locals>.')[2]}"


# name of the registration source for the entry of one runtime key; None = missing
Entry = tuple[str, "Kernel | None"]
