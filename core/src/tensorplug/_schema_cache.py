"""The parsed standard op set, cached between runs as data (internal).

Note [Op set cache]
~~~~~~~~~~~~~~~~~~~
Importing PyYAML, loading native_functions.yaml and parsing its ~400 schemas (each checked by
its round trip) takes 50-100 ms, more than the whole import budget, so ``import tensorplug``
reads them from a cache instead: ``$XDG_CACHE_HOME/tensorplug/native_functions-<hash>.json``.
The cache must never be a way to run code, nor give a stale answer:

* it is JSON -- lists, strings, numbers -- decoded into schema objects by :func:`decode`, which
  accepts nothing but that layout (a file that does not fit is ignored and rewritten); nothing
  is unpickled (an old tensorplug's ``.pickle`` caches are deleted when a new file is written);
* it is read only from a directory of mode 0700 and a regular file of mode 0600, both owned
  by the user (opened without following a symbolic link), so no other user can plant one;
* it holds the SHA-256 of the yaml text and the parser's identity (``tag``), and is used only
  when they match what is being loaded;
* it is written to a temporary file in the same directory and renamed over the old one, so a
  reader sees a whole file or none.

Where the directory cannot be made private (a home on a shared file system, read-only), the
yaml is parsed at every import. :func:`read_private` and :func:`write_private` keep these rules
for any cache file of that directory; the array kit's kernel names use them too (Note [Kit
kernel names] in array_backend/_lazy.py).
"""

from __future__ import annotations

import json
import os
import stat
import time
from typing import Any

from . import schema as _schema


def _sha256() -> Any:
    """hashlib.sha256 without hashlib, whose OpenSSL start-up costs ~3 ms of the import: the
    interpreter's own module (``_sha256`` in CPython 3.11, ``_sha2`` from 3.12)."""
    for module in ("_sha256", "_sha2"):
        try:
            return __import__(module).sha256
        except (ImportError, AttributeError):
            continue
    import hashlib

    return hashlib.sha256


sha256 = _sha256()

__all__ = ["decode", "encode", "load", "store"]

FORMAT = 1  # bump when the layout of encode() changes
_KEPT = 8  # cache files kept: a few installs (venvs, Python versions) may share one home

Entries = list[tuple[dict[str, Any], _schema.FunctionSchema]]


def digest(raw: bytes, tag: str) -> str:
    text: str = sha256(raw + b"\0" + tag.encode()).hexdigest()
    return text


def directory() -> str:
    # the XDG Base Directory spec: a relative $XDG_CACHE_HOME is invalid and ignored
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tensorplug")


def load(raw: bytes, tag: str) -> Entries | None:
    """The cached entries for this yaml text and parser, or ``None`` (Note [Op set cache])."""
    key = digest(raw, tag)
    data = read_private("native_functions", key)
    if data is None:
        return None
    try:
        return decode(data["entries"])
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None  # not our layout: parse, and write a good one


def store(raw: bytes, tag: str, entries: Entries) -> None:
    """Write the cache for this yaml text and parser, if a private directory can hold it."""
    write_private("native_functions", digest(raw, tag), {"entries": encode(entries)})


def read_private(prefix: str, key: str) -> dict[str, Any] | None:
    """The JSON object of cache file ``<prefix>-<key[:16]>.json`` when it is the user's own,
    private, of this ``FORMAT`` and made for ``key`` (Note [Op set cache]); else ``None``. The
    caller still checks the layout of what it reads."""
    folder = directory()
    path = os.path.join(folder, f"{prefix}-{key[:16]}.json")
    try:
        if not _private(os.stat(folder, follow_symlinks=False), stat.S_ISDIR):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            if not _private(os.fstat(f.fileno()), stat.S_ISREG):
                return None
            data = json.loads(f.read())
        if not isinstance(data, dict):
            return None
        if data.get("format") != FORMAT or data.get("digest") != key:
            return None
        return data
    except (OSError, ValueError):
        return None  # unreadable: rebuild, and write a good one


def write_private(prefix: str, key: str, payload: dict[str, Any]) -> None:
    """Write ``payload`` (JSON data) as cache file ``<prefix>-<key[:16]>.json``, if a private
    directory can hold it; whole or not at all (Note [Op set cache])."""
    folder = directory()
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.stat(folder, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and st.st_mode & 0o077:
            os.chmod(folder, 0o700)  # made by an older tensorplug with the default umask
            st = os.stat(folder, follow_symlinks=False)
        if not _private(st, stat.S_ISDIR):
            return
        text = json.dumps({"format": FORMAT, "digest": key, **payload}, separators=(",", ":"))
        path = os.path.join(folder, f"{prefix}-{key[:16]}.json")
        tmp = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        _prune(folder, prefix)
    except OSError:
        pass  # a read-only or shared home: rebuild at every import


def _private(st: os.stat_result, kind: Any) -> bool:
    """A directory or file of the user's own that nobody else may read or write."""
    return bool(kind(st.st_mode)) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def _prune(folder: str, prefix: str) -> None:
    """Keep the ``_KEPT`` newest cache files of ``prefix``; delete an older tensorplug's pickled caches (they
    would be unpickled by it) and temporary files of writers that died an hour ago or more."""
    now = time.time()
    files = []
    for entry in os.scandir(folder):
        if not entry.name.startswith(f"{prefix}-"):
            continue
        try:
            mtime = entry.stat(follow_symlinks=False).st_mtime
            if entry.name.endswith(".json"):
                files.append((mtime, entry.path))
            elif entry.name.endswith(".pickle") or now - mtime > 3600:
                os.remove(entry.path)
        except OSError:
            pass  # another process removed it first
    files.sort(reverse=True)
    for _, path in files[_KEPT:]:
        try:
            os.remove(path)
        except OSError:
            pass


# --- the layout ------------------------------------------------------------------------------
# entries: [[yaml dict, schema], ...] with
#   schema:     [namespace, name, overload, [argument...], [keyword-only argument...], [return...]]
#   argument:   [name, type text, default text or null, annotation]
#   return:     [name or null, type text, annotation]
#   annotation: null or [[alias...], is_write, [alias...]]
# Type texts ("int[1]?") are parsed once each (there are a few dozen); everything else is built
# directly, without the parser.


def encode(entries: Entries) -> list[Any]:
    out: list[Any] = []
    for raw, s in entries:
        args = [[_argument(a) for a in s.positional], [_argument(a) for a in s.kwarg_only]]
        rets = [[r.name, str(r.type), _annotation(r.annotation)] for r in s.returns]
        out.append([raw, [s.namespace, s.name, s.overload_name, *args, rets]])
    return out


def _argument(a: _schema.Argument) -> list[Any]:
    return [a.name, str(a.type), a.default, _annotation(a.annotation)]


def _annotation(a: _schema.Annotation | None) -> Any:
    return None if a is None else [list(a.before), a.is_write, list(a.after)]


def decode(data: Any) -> Entries:
    """Entries from :func:`encode`'s layout; raises ``TypeError``/``ValueError`` on anything
    else. (Built without the dataclasses' ``__init__``: a frozen dataclass sets each field
    through ``object.__setattr__``, which made this twice as slow as unpickling.)"""
    types: dict[str, _schema.Type] = {}
    annotations: dict[tuple[Any, ...], _schema.Annotation] = {}
    new = object.__new__
    Argument, Return = _schema.Argument, _schema.Return

    def type_(text: Any) -> _schema.Type:
        t = types.get(text)
        if t is None:
            if type(text) is not str:
                raise TypeError(f"a type is text, not {type(text).__name__}")
            try:
                t = types[text] = _schema._parse_type(text)
            except _schema.SchemaError as e:
                raise ValueError(str(e)) from None
        return t

    def annotation(a: Any) -> _schema.Annotation | None:
        if a is None:
            return None
        before, write, after = a
        key = (*before, write, "->", *after)
        ann = annotations.get(key)
        if ann is None:
            if not all(type(x) is str for x in (*before, *after)) or type(write) is not bool:
                raise TypeError(f"not an annotation: {a!r}")
            ann = annotations[key] = _schema.Annotation(tuple(before), write, tuple(after))
        return ann

    # an argument is immutable, and most recur (``Tensor self``, ``int[1] dim``, ``bool
    # keepdim=False``): one object each, shared by the schemas that have it
    made: dict[tuple[Any, ...], _schema.Argument] = {}

    def arguments(items: Any, kwarg_only: bool) -> tuple[_schema.Argument, ...]:
        out = []
        for item in items:
            name, t, default, ann = item
            if type(name) is not str or not (default is None or type(default) is str):
                raise TypeError(f"not an argument: {name!r}")
            key = (name, t, default, kwarg_only) if ann is None else None
            if key is not None:
                arg = made.get(key)
                if arg is not None:
                    out.append(arg)
                    continue
            arg = new(Argument)
            arg.__dict__.update(
                name=name,
                type=type_(t),
                default=default,
                annotation=annotation(ann),
                kwarg_only=kwarg_only,
            )
            if key is not None:
                made[key] = arg
            out.append(arg)
        return tuple(out)

    def returns(items: Any) -> tuple[_schema.Return, ...]:
        out = []
        for name, t, ann in items:
            if not (name is None or type(name) is str):
                raise TypeError(f"not a return name: {name!r}")
            ret = new(Return)
            ret.__dict__.update(name=name, type=type_(t), annotation=annotation(ann))
            out.append(ret)
        return tuple(out)

    out: Entries = []
    for raw, (ns, name, overload, positional, kwarg_only, rets) in data:
        if type(raw) is not dict or type(raw.get("func")) is not str:
            raise TypeError("an entry is not a yaml mapping with 'func'")
        if not all(type(x) is str for x in (ns, name, overload)):
            raise TypeError(f"not an operator name: {ns!r}::{name!r}.{overload!r}")
        schema = new(_schema.FunctionSchema)
        schema.__dict__.update(
            namespace=ns,
            name=name,
            overload_name=overload,
            positional=arguments(positional, False),
            kwarg_only=arguments(kwarg_only, True),
            returns=returns(rets),
        )
        out.append((raw, schema))
    return out
