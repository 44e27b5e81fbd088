"""native_functions.yaml read into :class:`OpEntry` objects, one per operator, with their parsed
schemas (cached between runs by _schema_cache.py)."""

from __future__ import annotations

import os
import sys
from typing import Any

from .. import _schema_cache
from ..dispatcher import OpOverload
from ..schema import FunctionSchema, parse

# the modules of yaml entries with ``python_module:`` (Note [Python modules] in _opset/api.py)
PYTHON_MODULES = {"linalg": "tensorplug.linalg", "special": "tensorplug.special",
                  "fft": "tensorplug.fft", "nn": "tensorplug.nn.functional"}  # fmt: skip


class OpEntry:
    """One yaml entry. (A plain class: a dataclass costs half a millisecond at import.)"""

    __slots__ = ("func", "variants", "dispatch", "tags", "python", "python_module", "op")

    def __init__(
        self,
        func: str,
        variants: tuple[str, ...] = ("function",),
        dispatch: dict[str, str] | None = None,
        tags: tuple[str, ...] = (),
        python: str | None = None,
        python_module: str | None = None,
    ) -> None:
        self.func = func
        self.variants = variants
        self.dispatch = {} if dispatch is None else dispatch
        self.tags = tags
        self.python = python
        self.python_module = python_module
        self.op: OpOverload | None = None
        if python_module is not None and python_module not in PYTHON_MODULES:
            raise ValueError(
                f"{_YAML}: {func}: unknown python_module {python_module!r}; the modules are "
                f"{', '.join(PYTHON_MODULES)} (Note [Python modules])"
            )

    def __repr__(self) -> str:
        return f"OpEntry({self.func!r}, variants={self.variants!r})"

    @property
    def public_name(self) -> str:
        """The function's name in its module: ``python:``, else the op's name without the
        module's prefix (``linalg_vector_norm`` is ``tensorplug.linalg.vector_norm``)."""
        assert self.op is not None
        if self.python:
            return self.python
        name = self.op.op_name
        prefix = f"{self.python_module}_"
        return name[len(prefix) :] if self.python_module and name.startswith(prefix) else name


def _load_yaml() -> list[tuple[dict[str, Any], FunctionSchema]]:
    """The yaml entries with their parsed schemas, from a cache when the yaml is unchanged.

    Parsing 400 schemas (each checked for its round trip) and importing PyYAML take tens of
    milliseconds, most of ``import tensorplug``; the cache (Note [Op set cache] in
    _schema_cache.py) is data, private to the user, and used only for the very yaml text and
    parser being loaded. ``importlib.resources`` is not imported for this: it costs more than
    the load itself.
    """
    try:
        with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), _YAML), "rb") as f:
            raw = f.read()
    except OSError:  # not installed as plain files (a zip): importlib.resources reads those
        from importlib import resources

        raw = resources.files("tensorplug").joinpath(_YAML).read_bytes()
    tag = f"{__package__}-{sys.version_info[:2]}-{_schema_mtime()}"
    cached = _schema_cache.load(raw, tag)
    if cached is not None:
        return cached
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data: list[dict[str, Any]] = yaml.load(raw.decode(), Loader=loader)
    parsed = [(d, parse(d["func"])) for d in data]
    _schema_cache.store(raw, tag, parsed)
    return parsed


_YAML = "native_functions.yaml"


def _schema_mtime() -> int:
    # a cache written by another version of the parser may hold other schemas: the parser and
    # the words it reads (type names, default values) are two files
    from .. import _schema_tokens, schema

    return int(max(os.stat(m.__file__ or "").st_mtime for m in (schema, _schema_tokens)))
