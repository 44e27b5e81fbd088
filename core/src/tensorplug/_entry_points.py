"""The entry points of one group, found without importing importlib.metadata (internal).

Note [Light entry point scan]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``import tensorplug`` reads the entry point group ``tensorplug`` (plugins/__init__.py). Importing
``importlib.metadata`` for that costs about 12 ms -- it pulls in ``email``, ``zipfile``,
``csv``, ``pathlib``, ``tempfile``, ``socket``, ... -- a fifth of the import budget of
issue 3, to read a handful of small text files. In a plain environment the scan is simple, so
:func:`entry_points` does it by hand, with the rules of ``importlib.metadata``:

1. every directory on ``sys.path``, in order (``""`` is the current directory), is listed;
   its children named ``<name>[-<version>...].dist-info`` or ``.egg-info`` are distributions;
   within one directory they are grouped by normalized name (PEP 503, ``-`` as ``_``) in the
   order of first appearance, as ``importlib.metadata.Lookup`` does;
2. a distribution whose normalized name was already seen is skipped: the first one on
   ``sys.path`` wins;
3. its ``entry_points.txt`` is read as ``importlib.metadata`` reads it: stripped lines, ``#``
   comments, ``[group]`` sections, ``name = value`` split at the first ``=`` (a line without
   ``=``, on which importlib.metadata raises, is skipped);
4. the distribution's name and version are read from ``METADATA`` (or ``PKG-INFO``) only
   when something asks for them (``tp.plugins.list()``, an error message).

Anything else falls back to ``importlib.metadata.entry_points``, so the answer never differs:
a ``sys.path`` entry that exists but is not a directory (a zip file) or is an egg, a name that
is not a ``str``, a ``.dist-info`` spelled in another case, or a ``sys.meta_path`` finder
other than the standard ``PathFinder`` that offers ``find_distributions`` (a backport, an
import hook that serves metadata).

Usage::

    for ep in entry_points("tensorplug"):
        ep.name, ep.value, ep.distribution, ep.version
        module = ep.load()
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any

__all__ = ["EntryPoint", "entry_points"]


class _Distribution:
    """Where an entry point comes from: name and version, read on first use."""

    def name_and_version(self) -> tuple[str | None, str | None]:
        raise NotImplementedError

    def location(self) -> str | None:
        """The ``sys.path`` directory that holds the distribution, where known."""
        return None


class _PathDistribution(_Distribution):
    """A ``.dist-info`` / ``.egg-info`` directory found by the scan."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._read: tuple[str | None, str | None] | None = None

    def name_and_version(self) -> tuple[str | None, str | None]:
        if self._read is None:
            self._read = None, None
            for filename in ("METADATA", "PKG-INFO"):
                try:
                    with open(os.path.join(self.path, filename), encoding="utf-8") as f:
                        self._read = _read_name_and_version(f)
                    break
                except OSError:
                    continue
        return self._read

    def location(self) -> str | None:
        return os.path.dirname(self.path)


class _MetadataDistribution(_Distribution):
    """An ``importlib.metadata`` distribution (the fallback)."""

    def __init__(self, dist: Any) -> None:
        self.dist = dist

    def name_and_version(self) -> tuple[str | None, str | None]:
        return self.dist.metadata["Name"], self.dist.version

    def location(self) -> str | None:
        path = getattr(self.dist, "_path", None)  # importlib.metadata.PathDistribution
        return None if path is None else os.path.dirname(str(path))


def _read_name_and_version(lines: Any) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from the header block of core metadata (RFC 822 style)."""
    found: dict[str, str] = {}
    for line in lines:
        if not line.strip():
            break  # the end of the headers; the long description follows
        key, sep, value = line.partition(":")
        key = key.strip().lower()
        if sep and key in ("name", "version") and key not in found:
            found[key] = value.strip()
    return found.get("name"), found.get("version")


# ``module``, ``module:attr.attr``, each optionally followed by ``[extras]`` (compiled on the
# first load: compiling it at import would cost more than the whole scan)
_VALUE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"


class EntryPoint:
    """One entry point: ``name = value`` in ``group``, provided by a distribution."""

    __slots__ = ("name", "value", "group", "_dist")

    def __init__(self, name: str, value: str, group: str, dist: _Distribution | None) -> None:
        self.name = name
        self.value = value
        self.group = group
        self._dist = dist

    def __repr__(self) -> str:
        return f"EntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r})"

    @property
    def distribution(self) -> str | None:
        """The ``Name`` of the distribution that provides it (``None`` if unknown)."""
        return None if self._dist is None else self._dist.name_and_version()[0]

    @property
    def version(self) -> str | None:
        return None if self._dist is None else self._dist.name_and_version()[1]

    @property
    def location(self) -> str | None:
        """The ``sys.path`` directory of its distribution (``None`` if unknown)."""
        return None if self._dist is None else self._dist.location()

    def load(self) -> Any:
        """Import the module the value names and return it, or the attribute it names."""
        match = re.match(_VALUE, self.value)
        if match is None:
            raise ValueError(
                f"entry point {self.name!r} of group {self.group!r} has the value "
                f"{self.value!r}, which is not 'module' or 'module:attribute'"
            )
        obj: Any = importlib.import_module(match.group("module"))
        for attr in filter(None, (match.group("attr") or "").split(".")):
            obj = getattr(obj, attr)
        return obj


def entry_points(group: str) -> list[EntryPoint]:
    """The entry points of ``group``, in the order ``importlib.metadata`` gives them."""
    found = _scan(group)
    if found is None:
        return _from_importlib(group)
    return found


def _from_importlib(group: str) -> list[EntryPoint]:
    from importlib import metadata

    return [
        EntryPoint(ep.name, ep.value, group, _MetadataDistribution(ep.dist) if ep.dist else None)
        for ep in metadata.entry_points(group=group)
    ]


def _plain_meta_path() -> bool:
    """Whether the standard ``PathFinder`` is the only finder that serves metadata."""
    from importlib.machinery import PathFinder

    if getattr(PathFinder, "find_distributions", None) is None:
        return False  # a backport took over (importlib_metadata disables the stdlib finder)
    if PathFinder not in sys.meta_path:
        return False
    return all(
        finder is PathFinder or getattr(finder, "find_distributions", None) is None
        for finder in sys.meta_path
    )


def _normalize(name: str) -> str:
    """PEP 503 with ``_`` for ``-``: runs of ``-_.`` become one ``_`` (no regex: see _VALUE)."""
    name = name.lower().replace("-", "_").replace(".", "_")
    while "__" in name:
        name = name.replace("__", "_")
    return name


def _scan(group: str) -> list[EntryPoint] | None:
    """Note [Light entry point scan]; ``None`` where only importlib.metadata knows."""
    if not _plain_meta_path():
        return None
    seen: set[str] = set()
    out: list[EntryPoint] = []
    for root in sys.path:
        if not isinstance(root, str) or root.lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(root or ".")
        except FileNotFoundError:
            continue
        except OSError:
            if os.path.exists(root or "."):
                return None  # a zip file, or a directory we may not list: ask importlib
            continue
        infos: dict[str, list[str]] = {}
        for child in children:
            if child[-5:].lower() != "-info":  # cheap first test: most children are not
                continue
            low = child.lower()
            if not low.endswith((".dist-info", ".egg-info")):
                continue
            if not child.endswith((".dist-info", ".egg-info")):
                return None  # importlib names these by their metadata: leave it to it
            name = _normalize(low.rpartition(".")[0].partition("-")[0])
            infos.setdefault(name, []).append(child)
        for name, paths in infos.items():
            for child in paths:
                if name in seen:
                    continue
                seen.add(name)
                path = os.path.join(root, child)
                out.extend(_read_entry_points(path, group))
    return out


def _read_entry_points(path: str, group: str) -> list[EntryPoint]:
    try:
        with open(os.path.join(path, "entry_points.txt"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    dist = _PathDistribution(path)
    section = None
    out = []
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
        elif section == group and "=" in line:
            name, _, value = line.partition("=")
            out.append(EntryPoint(name.strip(), value.strip(), group, dist))
    return out
