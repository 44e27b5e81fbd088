"""The plugin API version: what the core provides (:data:`PLUGIN_API_VERSION`), and the check
that refuses a plugin written for another (:class:`IncompatiblePluginError`), run as the plugin
is imported, before it registers anything.

Note [Plugin API version]
~~~~~~~~~~~~~~~~~~~~~~~~~
The version of the plugin API (the hooks and the table "The plugin API" of docs/plugins.md),
"MAJOR.MINOR", re-exported as tensorplug.PLUGIN_API_VERSION. MINOR grows when the API gains
something; MAJOR grows, and MINOR restarts at 0, when something is removed or changes meaning.
A plugin sets PLUGIN_API_VERSION in its module to the version it was written for, and loads
when MAJOR is the same and its MINOR is at most the core's; one that sets none was written
before versions were declared, for 1.0. docs/plugins.md, "Versions", is the policy.
"""

from __future__ import annotations

from typing import Final

from .._version import __version__
from ._plugin import PluginError, _Plugin

__all__ = ["IncompatiblePluginError", "PLUGIN_API_VERSION", "check_api_version"]

PLUGIN_API_VERSION: Final = "1.2"  # Note [Plugin API version]


class IncompatiblePluginError(PluginError):
    """A plugin written for a plugin API version this tensorplug does not provide."""


def _parse_api_version(text: object) -> tuple[int, int] | None:
    if not isinstance(text, str):
        return None
    major, dot, minor = text.partition(".")
    if not (dot and major.isdigit() and minor.isdigit()):
        return None
    return int(major), int(minor)


def check_api_version(p: _Plugin) -> None:
    """Refuse ``p`` unless the plugin API version it declares is one this core provides
    (Note [Plugin API version])."""
    declared = getattr(p.obj, "PLUGIN_API_VERSION", None)
    if declared is None:
        return
    p.api_version = str(declared)
    wanted = _parse_api_version(declared)
    if wanted is None:
        raise PluginError(
            f"plugin {p.name!r} declares PLUGIN_API_VERSION = {declared!r}, which is not "
            f"'MAJOR.MINOR'; set it to the tensorplug.PLUGIN_API_VERSION it was written for "
            f"(this tensorplug's is {PLUGIN_API_VERSION!r})",
            plugin=p.name,
            distribution=p.distribution,
        )
    have = _parse_api_version(PLUGIN_API_VERSION)
    assert have is not None
    if wanted[0] == have[0] and wanted[1] <= have[1]:
        return
    dist = p.distribution or "the plugin"
    if wanted > have:
        remedy = (
            f"upgrade tensorplug to a release with plugin API {wanted[0]}.{wanted[1]} or a later "
            f"{wanted[0]}.x (pip install -U tensorplug), or install a release of {dist} written "
            f"for plugin API {have[0]}.x"
        )
    else:
        remedy = (
            f"upgrade {dist} to a release written for plugin API {have[0]}.x"
            + (f" (pip install -U {p.distribution})" if p.distribution else "")
            + f", or install a tensorplug with plugin API {wanted[0]}.x"
        )
    raise IncompatiblePluginError(
        f"plugin {p.name!r} was written for plugin API {declared}, but tensorplug "
        f"{__version__} provides plugin API {PLUGIN_API_VERSION}: {remedy}",
        plugin=p.name,
        distribution=p.distribution,
    )


IncompatiblePluginError.__module__ = "tensorplug.plugins"  # where users find it
