"""The words of the schema grammar (``tensorplug.schema``) and what each means on its own.

The tokenizer, the error that points at a token's column (:class:`SchemaError`), the Python
value of a default's text (Note [Default values]) and the names a type may have (Note [Type
names]). The parser and the model that put the words together are :mod:`tensorplug.schema`,
which is where every public name here is imported from.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tensorplug import _binding

if TYPE_CHECKING:
    from collections.abc import Iterator


class SchemaError(ValueError):
    """A schema text that does not follow the grammar; points at the offending column.

    ``str(err)`` is ``"<reason> at column <N>:"`` followed by the text and a caret under
    column ``N`` (1-based).
    """

    def __init__(self, text: str, column: int, reason: str) -> None:
        self.text = text
        self.column = column
        self.reason = reason
        # Tabs and newlines would break the caret's alignment; show them as spaces.
        # (a lone surrogate cannot be printed: shown as U+FFFD)
        shown = re.sub("[\ud800-\udfff]", "\ufffd", re.sub(r"\s", " ", text))
        super().__init__(f"{reason} at column {column}:\n    {shown}\n    {' ' * (column - 1)}^")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.text, self.column, self.reason))


_TOKEN_RE = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<number>-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<op>::|->|[()\[\],?!*|=.])
    """,
    re.VERBOSE,
)


class Token:
    # a plain class: each dataclass costs ~0.5 ms of ``import tensorplug`` to create
    __slots__ = ("kind", "text", "column")

    def __init__(self, kind: str, text: str, column: int) -> None:
        self.kind = kind  # "number", "ident", "string", "op" or "end"
        self.text = text
        self.column = column  # 1-based

    def describe(self) -> str:
        return "end of input" if self.kind == "end" else f"'{self.text}'"


def tokenize(text: str) -> Iterator[Token]:
    pos = 0
    while pos < len(text):
        match = _TOKEN_RE.match(text, pos)
        if match is None:
            char = text[pos]
            reason = "unterminated string" if char in "\"'" else f"unexpected character {char!r}"
            raise SchemaError(text, pos + 1, reason)
        kind = match.lastgroup
        assert kind is not None
        if kind != "space":
            yield Token(kind, match.group(), pos + 1)
        pos = match.end()
    yield Token("end", "", len(text) + 1)


# Note [Default values]
# ~~~~~~~~~~~~~~~~~~~~~
# A default keeps its source text (``Argument.default``) so that str() round-trips exactly;
# ``Argument.default_value`` reads it as Python: ``None``, ``True``/``False``, ``int``,
# ``float``, ``str`` for quoted strings, a ``tuple`` for lists. A bare identifier names a
# constant of the type (``contiguous_format``, ``Mean``, ``strided``) and stays the ``str``
# of its name: the schema cannot say what value it stands for. Binding fills a missing
# argument with ``normalize_argument(default_value, type)`` (so ``int[2] stride=1`` gives
# ``(1, 1)``) or, where that does not fit (``int reduction=Mean``), the raw value: kernels
# that take such arguments see the constant's name. The parser rejects defaults that are not
# identifiers and do not fit a type binding knows (``int x="a"``, ``Tensor t=0``).


def literal_value(text: str) -> Any:
    """The Python value of canonical default text (Note [Default values]).

    Raises ``ValueError`` for text the parser accepted as a token but that has no value (an
    unknown escape in a string, an integer of thousands of digits); the parser turns that into
    a :class:`SchemaError` pointing at it.
    """
    if text.startswith("["):
        inner = text[1:-1]
        # Elements are numbers, identifiers or strings; strings may hold commas.
        return tuple(literal_value(t.text) for t in tokenize(inner) if t.kind not in ("op", "end"))
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text[0] in "\"'":
        return _string_value(text)
    if re.fullmatch(r"-?\d+", text):
        if len(text) > MAX_DIGITS:
            raise ValueError(f"an integer of more than {MAX_DIGITS} digits")
        return int(text)
    if text[0].isdigit() or text[0] == "-":
        return float(text)
    return text


MAX_DIGITS = 100  # far beyond any integer type; int() refuses 4,300 digits with ValueError

# The escapes of a quoted default: Python's, except \N{...} and octal ones, which no schema uses.
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r", "0": "\0"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def _string_value(text: str) -> str:
    """The value of a quoted string token, escapes decoded. (Not ``ast.literal_eval``: it
    compiles its input, and raises SyntaxError or UnicodeEncodeError on NUL characters, lone
    surrogates, carriage returns, ``\\N{bogus}``, which a schema may hold.)"""
    body = text[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = body[i + 1 : i + 2]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e in _HEX_ESCAPES:
            n = _HEX_ESCAPES[e]
            digits = body[i + 2 : i + 2 + n]
            if len(digits) != n or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise ValueError(f"the escape \\{e} needs {n} hexadecimal digits")
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise ValueError(f"\\{e}{digits} is beyond the last Unicode character")
            out.append(chr(code))
            i += 2 + n
        else:
            raise ValueError(f"unknown escape \\{e} in a string")
    return "".join(out)


# Note [Type names]
# ~~~~~~~~~~~~~~~~~
# A base type is one of the names below (the native_functions README's types, TorchScript's
# ``complex`` and ``Any``, and the Sym* names), or a name some module registered with
# :func:`register_python_type` before the schema was parsed. Any other name is refused, as
# c10's schema parser refuses it: ``Tensr`` is a typo, not a type, and accepting it would only
# move the error to the first call. A plugin that brings a new type (``register_python_type(
# "Widget", Widget)``) registers it before it defines operators that use it.

KNOWN_TYPES = frozenset(
    {
        "Tensor", "int", "SymInt", "float", "SymFloat", "bool", "SymBool", "complex", "str",
        "Scalar", "ScalarType", "Device", "DeviceIndex", "Layout", "MemoryFormat", "Generator",
        "Dimname", "Storage", "Stream", "QScheme", "Any",
    }
)  # fmt: skip

# Names people write from C++ habit, with what the grammar calls them.
_TYPE_HINTS = {
    "double": "float",
    "int64_t": "int",
    "Tensor&": "Tensor",
    "TensorList": "Tensor[]",
    "IntList": "int[]",
    "string": "str",
    "Number": "Scalar",
    "dtype": "ScalarType",
}


def unknown_type(name: str) -> str:
    """Why ``name`` is refused, with the nearest known name (Note [Type names])."""
    import difflib

    known = sorted(KNOWN_TYPES | set(_binding._PYTHON_TYPES))
    hint = _TYPE_HINTS.get(name)
    if hint is None:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.7)
        hint = close[0] if close else None
    suggestion = f" (did you mean '{hint}'?)" if hint else ""
    return (
        f"unknown type '{name}'{suggestion}; the types are {', '.join(known)}, or a name "
        "registered with tensorplug.schema.register_python_type"
    )
