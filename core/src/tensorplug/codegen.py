"""Compiles generated Python source so that tracebacks, debuggers and ``inspect`` show it.

Note [Visible generated code]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The dispatch hot path runs code generated from templates (the operators' call functions, the
public functions, the autograd plugin's per-key-set kernels, the tracer's compiled graphs).
Compiled with ``compile(src, "<tensorplug ...>", "exec")`` alone, a traceback through it shows
``File "<tensorplug ...>", line 19`` and no text, and pdb cannot list it. Everything that
generates code defines it here instead: :func:`define` gives the text a filename of its own
and enters it in :mod:`linecache` (an entry with no modification time, which
``linecache.checkcache`` keeps), so tracebacks, ``pdb`` and ``inspect.getsource`` read it as
they read a file.

The filename is ``<tensorplug: LABEL>``: stable for a label (``dispatch aten::add.Tensor``),
so the same operator's frames read the same in every process. A label given a second, different
text (an operator defined again with another schema, a template instantiated for another
argument list) gets ``<tensorplug: LABEL (2)>``, and so on: a filename never changes its
text, so an old frame still shows the lines it ran. Identical texts share one code object
(the public functions of operators whose schemas have one shape are one text, their values
being in the namespaces they run in). A text leaves linecache when the last function made from
it dies, so operators defined and dropped at run time leave nothing
behind; while any lives, its filename is not given to another text.

This module is public (docs/plugins.md): a plugin that generates code uses it too.
"""

from __future__ import annotations

import linecache
import threading
import weakref
from collections.abc import Callable
from types import CodeType, FunctionType
from typing import Any

__all__ = ["define", "define_all", "filename_of", "source_of"]

_lock = threading.RLock()
_codes: dict[tuple[str, str], _Entry] = {}  # (label, text) -> its entry
_in_use: set[str] = set()  # the filenames of the entries in _codes


class _Entry:
    __slots__ = ("code", "filename", "live")

    def __init__(self, code: CodeType, filename: str) -> None:
        self.code = code
        self.filename = filename
        self.live = 0  # functions define() made from it that are alive


def _entry(source: str, label: str) -> _Entry:
    """The entry of (label, text), compiled and entered in linecache on its first use; called
    with ``_lock`` held."""
    key = (label, source)
    e = _codes.get(key)
    if e is not None:
        return e
    filename, n = f"<tensorplug: {label}>", 1
    while filename in _in_use:
        n += 1
        filename = f"<tensorplug: {label} ({n})>"
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    linecache.cache[filename] = (len(source), None, lines, filename)
    e = _codes[key] = _Entry(compile(source, filename, "exec"), filename)
    _in_use.add(filename)
    return e


def _release(key: tuple[str, str]) -> None:
    """The last function made from an entry died: its text leaves linecache (operators
    defined and dropped at run time leave nothing behind)."""
    with _lock:
        e = _codes.get(key)
        if e is None:
            return
        e.live -= 1
        if e.live <= 0:
            del _codes[key]
            _in_use.discard(e.filename)
            linecache.cache.pop(e.filename, None)


def define(
    source: str, namespace: dict[str, Any], label: str, name: str | None = None
) -> Callable[..., Any]:
    """Runs ``source`` (compiled once per label and text, its text in linecache) in
    ``namespace`` and returns the function it defines named ``name`` (the only ``def`` when
    ``name`` is None). The text stays in linecache while a function made from it lives."""
    return define_all(source, namespace, label, (name or _only_def(source),))[0]


def define_all(
    source: str, namespace: dict[str, Any], label: str, names: tuple[str, ...]
) -> tuple[Callable[..., Any], ...]:
    """:func:`define` for a text that defines several functions: those named ``names``."""
    with _lock:  # made and counted at once: a release in between cannot drop the text
        e = _entry(source, label)
        e.live += len(names)
    exec(e.code, namespace)  # generated text, never read from a file
    fns = tuple(namespace[n] for n in names)
    key = (label, source)
    for fn in fns:
        weakref.finalize(fn, _release, key)
    return fns


def _only_def(source: str) -> str:
    names = [
        line[4 : line.index("(")]
        for line in source.splitlines()
        if line.startswith("def ") and "(" in line
    ]
    if len(names) != 1:
        raise ValueError(f"define(): say which function to return, the source defines {names}")
    return names[0]


def filename_of(obj: Any) -> str | None:
    """The generated filename ``obj`` (a function, a code object, or a callable with
    ``__wrapped__``) runs from, or None when it is not generated code."""
    code = _code(obj)
    if code is None or not code.co_filename.startswith("<tensorplug: "):
        return None
    return code.co_filename


def source_of(obj: Any) -> str | None:
    """The whole generated text ``obj`` was compiled from, or None when it is not generated
    code (or its text left linecache)."""
    filename = filename_of(obj)
    if filename is None:
        return None
    entry = linecache.cache.get(filename)
    if entry is None or len(entry) != 4:
        return None
    return "".join(entry[2])


def _code(obj: Any) -> CodeType | None:
    if isinstance(obj, CodeType):
        return obj
    if isinstance(obj, FunctionType):
        return obj.__code__
    fn = getattr(obj, "__func__", None)  # bound methods
    if isinstance(fn, FunctionType):
        return fn.__code__
    return None
