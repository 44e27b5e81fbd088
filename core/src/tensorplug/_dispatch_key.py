"""One dispatch key: its kind, its bit, and the backend or family it belongs to.

The key registry (:mod:`tensorplug.keys`) creates the keys, gives them their bits and orders
them (Note [Bits and priority] there); this module is the key itself, the error its registry
raises, the autocast dtypes a backend key declares, and what each alias key stands for.
Import these names from ``tensorplug.keys``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import ClassVar, Final

from . import dtypes as _dtypes


class KeyKind(enum.Enum):
    BACKEND = "backend"
    FUNCTIONALITY = "functionality"
    PER_BACKEND = "per-backend functionality"
    ALIAS = "alias"


class DispatchKeyError(LookupError):
    """An unknown key name, or a key registration that cannot be honoured."""


KeyError_ = DispatchKeyError  # its former name, kept for existing ``except`` clauses


# Families of per-backend functionality keys, in the order they are created for a backend.
PER_BACKEND_FAMILIES: Final = ("Autograd", "Autocast")


class DispatchKey:
    """One dispatch key. Compare by identity; look up by name with :func:`tensorplug.keys.get`."""

    __slots__ = (
        "name", "kind", "bit", "device_type", "backend", "family", "owner",
        "autocast_dtype", "autocast_dtypes", "__weakref__",
    )  # fmt: skip

    # The mask of an alias key: the runtime keys it stands for among those registered now,
    # which only the registry knows; it sets this when it is imported (``keys.expand``).
    _alias_mask: ClassVar[Callable[[DispatchKey], int]]

    def __init__(
        self,
        name: str,
        kind: KeyKind,
        bit: int,
        *,
        device_type: str | None = None,
        backend: DispatchKey | None = None,
        family: str | None = None,
        owner: str = "tensorplug",
    ) -> None:
        self.name = name
        self.kind = kind
        self.bit = bit  # -1 for alias keys, which are never dispatched to
        self.device_type = device_type
        self.backend = backend  # the backend of a per-backend key
        self.family = family  # "Autograd" / "Autocast" for per-backend keys
        self.owner = owner
        # backends: the default autocast dtype and the dtypes autocast may use on this backend
        # (Note [Autocast dtypes of a backend]); None and () when it declares none
        self.autocast_dtype: _dtypes.dtype | None = None
        self.autocast_dtypes: tuple[_dtypes.dtype, ...] = ()

    @property
    def mask(self) -> int:
        if self.bit < 0:
            return DispatchKey._alias_mask(self)
        return 1 << self.bit

    @property
    def is_alias(self) -> bool:
        return self.kind is KeyKind.ALIAS

    def __repr__(self) -> str:
        return f"DispatchKey({self.name!r})"

    def __str__(self) -> str:
        return self.name


KeyLike = DispatchKey | str


# Note [Autocast dtypes of a backend]
# ``tp.autocast(device_type)`` (tensorplug-autocast) needs to know, per backend, the lower
# precision dtype a region uses when none is given, and which dtypes it may use at all: a
# region asking for another one warns and is disabled, as in PyTorch. The backend declares both
# when it creates its key; the built-in ones follow PyTorch (CPU: bfloat16, CUDA: float16, both
# also allowing the other; Meta: no autocast). Giving only the default allows only it; giving
# only the list makes its first entry the default. A backend that declares neither cannot be
# autocast, and ``tp.autocast`` says how to declare them.


def autocast_dtypes_of(
    name: str, default: _dtypes.dtype | None, supported: Iterable[_dtypes.dtype] | None
) -> tuple[_dtypes.dtype | None, tuple[_dtypes.dtype, ...]]:
    """The default and the allowed autocast dtypes of backend ``name``, from what it declares."""
    allowed = tuple(supported) if supported is not None else ()
    if default is None and allowed:
        default = allowed[0]
    if default is not None and not allowed:
        allowed = (default,)
    for d in (default, *allowed):
        if d is None:
            continue
        if not isinstance(d, _dtypes.dtype) or not d.is_floating_point or d is _dtypes.float64:
            raise DispatchKeyError(
                f"register_backend({name!r}): autocast dtypes must be tensorplug floating "
                f"dtypes narrower than float64 (float16, bfloat16, float32), got {d!r}"
            )
    if default is not None and default not in allowed:
        raise DispatchKeyError(
            f"register_backend({name!r}): autocast_dtype={default} is not one of "
            f"autocast_dtypes=({', '.join(map(str, allowed))}); add it to the list"
        )
    return default, allowed


def alias_covers(alias: str, rk: DispatchKey) -> bool:
    """Whether alias key ``alias`` stands for runtime key ``rk``."""
    if alias in PER_BACKEND_FAMILIES:
        return rk.family == alias
    if alias in ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"):
        return rk.kind is KeyKind.BACKEND
    if alias == "CompositeImplicitAutograd":
        return rk.kind is KeyKind.BACKEND or rk.family == "Autograd"
    return False
