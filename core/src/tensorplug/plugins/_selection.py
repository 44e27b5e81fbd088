"""Which installed plugins load: the selection variables (``TENSORPLUG_PLUGINS``,
``TENSORPLUG_DISABLE_PLUGINS``, ``TENSORPLUG_AUTOLOAD``) and the choice among several
distributions that offer one plugin name."""

from __future__ import annotations

import builtins
import os
import sys
import warnings
from collections.abc import Iterable
from typing import Final

from .. import _entry_points, _manifest
from ._plugin import PluginLoadWarning

# --- discovery ------------------------------------------------------------------------------


def _env_list(var: str) -> builtins.list[str] | None:
    value = os.environ.get(var)
    if value is None:
        return None
    return [n.strip() for n in value.split(",") if n.strip()]


_OFF: Final = ("0", "false", "no", "off")
_ON: Final = ("1", "true", "yes", "on", "")


def _disabled_reason(name: str) -> str | None:
    """Why the environment deselects plugin ``name`` (None: it is selected)."""
    autoload = os.environ.get("TENSORPLUG_AUTOLOAD", "1").strip().lower()
    if autoload in _OFF:
        return f"TENSORPLUG_AUTOLOAD={os.environ['TENSORPLUG_AUTOLOAD']}"
    only = _env_list("TENSORPLUG_PLUGINS")
    if only is not None and name not in only:
        return f"not listed in TENSORPLUG_PLUGINS={os.environ['TENSORPLUG_PLUGINS']!r}"
    if name in (_env_list("TENSORPLUG_DISABLE_PLUGINS") or ()):
        return f"listed in TENSORPLUG_DISABLE_PLUGINS={os.environ['TENSORPLUG_DISABLE_PLUGINS']}"
    return None


def _check_environment(installed: Iterable[str]) -> None:
    """Warn about selection variables that name nothing installed or hold a bogus value."""
    names = sorted(installed)
    listing = ", ".join(names) or "none"
    for var in ("TENSORPLUG_PLUGINS", "TENSORPLUG_DISABLE_PLUGINS"):
        unknown = sorted(set(_env_list(var) or ()) - set(names))
        if unknown:
            warnings.warn(
                f"{var} names {', '.join(map(repr, unknown))}, which no installed "
                f"distribution provides; installed plugins: {listing}",
                PluginLoadWarning,
                stacklevel=4,
            )
    both = sorted(
        set(_env_list("TENSORPLUG_PLUGINS") or ())
        & set(_env_list("TENSORPLUG_DISABLE_PLUGINS") or ())
    )
    if both:
        warnings.warn(
            f"{', '.join(map(repr, both))} is both listed in TENSORPLUG_PLUGINS and disabled by "
            "TENSORPLUG_DISABLE_PLUGINS; disabling wins, so it is not loaded. Remove it from "
            "one of them.",
            PluginLoadWarning,
            stacklevel=4,
        )
    autoload = os.environ.get("TENSORPLUG_AUTOLOAD")
    if autoload is not None and autoload.strip().lower() in _OFF:
        ignored = [
            v for v in ("TENSORPLUG_PLUGINS", "TENSORPLUG_DISABLE_PLUGINS") if v in os.environ
        ]
        if ignored:
            warnings.warn(
                f"TENSORPLUG_AUTOLOAD={autoload} loads no plugin, so "
                f"{' and '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} ignored; "
                "unset TENSORPLUG_AUTOLOAD to load the plugins they select.",
                PluginLoadWarning,
                stacklevel=4,
            )
    if autoload is not None and autoload.strip().lower() not in _OFF + _ON:
        warnings.warn(
            f"TENSORPLUG_AUTOLOAD={autoload!r} is not understood; it takes 0/false/no/off to "
            "load no plugin, or 1/true/yes/on to load them (the default). Loading them.",
            PluginLoadWarning,
            stacklevel=4,
        )


# first-party plugin name -> its distribution: preferred when two distributions offer the name
# (Note [First-party manifest] in _manifest.py)
FIRST_PARTY_PLUGINS: Final = {p.name: p.distribution for p in _manifest.MANIFEST}


def _choose_entry_point(
    name: str, candidates: builtins.list[_entry_points.EntryPoint]
) -> _entry_points.EntryPoint:
    """The entry point that provides plugin ``name`` when several distributions offer it: the
    first-party distribution for a first-party name, else the one in the earliest ``sys.path``
    directory, then by distribution name (the order of one directory's listing is the file
    system's, so it must not decide). Two different ones are reported, naming both."""
    distinct = {ep.value: ep for ep in candidates}
    if len(distinct) == 1:
        return candidates[0]
    official = _entry_points._normalize(FIRST_PARTY_PLUGINS.get(name, "-"))
    paths = [os.path.abspath(p or ".") for p in sys.path if isinstance(p, str)]

    def rank(ep: _entry_points.EntryPoint) -> tuple[bool, int, str]:
        dist = ep.distribution or ""
        where = None if ep.location is None else os.path.abspath(ep.location)
        at = paths.index(where) if where in paths else len(paths)
        return (_entry_points._normalize(dist) != official, at, dist)

    ordered = sorted(distinct.values(), key=rank)
    chosen = ordered[0]
    why = "the first-party one" if not rank(chosen)[0] else "the first on sys.path"
    warnings.warn(
        f"the tensorplug plugin {name!r} is provided by {len(ordered)} distributions: "
        + " and ".join(f"{ep.distribution} ({ep.value})" for ep in ordered)
        + f"; loading {chosen.distribution}, {why}. Uninstall the others.",
        PluginLoadWarning,
        stacklevel=4,
    )
    return chosen
