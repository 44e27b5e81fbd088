"""What a missing kernel's error tells the user to do: which plugin serves a key, and how to
register a kernel or a fallback for it."""

from __future__ import annotations

from typing import Protocol

from .. import _manifest
from ..keys import DispatchKey


class _Named(Protocol):
    """What a remedy reads of an :class:`OpOverload` (its module imports this one)."""

    namespace: str
    op_name: str
    overload_name: str


def provider_of(key: DispatchKey) -> tuple[str, str] | None:
    """``(plugin name, distribution)`` of the first-party plugin that serves ``key`` (Note
    [First-party manifest] in _manifest.py)."""
    p = _manifest.provider_of_key(key.family or key.name)
    return None if p is None else (p.name, p.distribution)


def _remedy(op: _Named, key: DispatchKey) -> str:
    prov = provider_of(key)
    loaded = _loaded_plugins()
    if prov is not None and prov[0] not in loaded:
        why = _manifest.absent_plugin_remedy(*prov)
        if why is not None:  # installed, and left out by a setting or failed
            return f"The '{key.name}' key is served by {why}."
        return (
            f"The '{key.name}' key is served by the {prov[1]} plugin, which is not loaded: "
            f"`pip install {prov[1]}` (or check TENSORPLUG_PLUGINS / TENSORPLUG_DISABLE_PLUGINS)."
        )
    owner = f" (plugin {key.owner})" if key.owner != "tensorplug" else ""
    return (
        f"No kernel is registered for '{key.name}'{owner}. Register one with "
        f"tp.Library('{op.namespace}', 'IMPL').impl('{op.op_name}"
        f"{'' if op.overload_name == 'default' else '.' + op.overload_name}', fn, "
        f"'{key.name}'), or a fallback with tp.Library('_', 'IMPL').fallback(fn, '{key.name}')."
    )


def _loaded_plugins() -> set[str]:
    return _manifest.loaded_plugins()  # Note [Loader state for remedies]
