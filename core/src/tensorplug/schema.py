"""Operator schemas: the native_functions grammar, parsed into frozen dataclasses.

Every operator is declared by a schema written in the grammar of PyTorch's
``native_functions.yaml`` (DESIGN §5)::

    [ns::]name[.overload](arguments) -> returns

    abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
    chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]
    max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)

An **argument** is ``type name`` with an optional ``=default``. A bare ``*`` in the list makes
every argument after it keyword-only.

A **type** is a base name followed by any number of suffixes, read left to right:
``T?`` is optional (``None`` allowed), ``T[]`` is a list, ``T[N]`` a list of size ``N``. So
``Tensor?[]`` is a list of optional tensors and ``int[1]?`` an optional list. A base name is
one of :data:`KNOWN_TYPES` (``Tensor``, ``int``, ``SymInt``, ``float``, ``bool``, ``str``,
``Scalar``, ``ScalarType``, ``Device``, ``Layout``, ``MemoryFormat``, ``Generator``,
``Dimname``, ...) or a name registered with :func:`register_python_type`; any other name is
refused (Note [Type names]). Binding decides what values fit (see ``tensorplug._binding``).

An **alias annotation** sits right after the base name, before the suffixes:
``Tensor(a)`` may alias alias-set ``a`` (a view), ``Tensor(a!)`` is written in place,
``Tensor!`` is written in place and aliases nothing else (a fresh set),
``Tensor(a|b)`` may alias either set, ``Tensor(a -> *)`` goes into a container whose elements
alias ``a`` (``chunk``), and ``Tensor(a!)[] self`` annotates the elements of a list. An ``out``
argument (named ``out``, or keyword-only in an overload named ``out`` or ``*_out``) must be
annotated as written: ``Tensor(a!) out``.

A **default** is a number (``0``, ``-100``, ``1e-05``), ``None``, ``True``/``False``, a quoted
string (``"mean"``, ``'none'``), a list (``[]``, ``[0,1]``) or a bare identifier naming a
constant (``contiguous_format``, ``Mean``); ``Tensor? x=[]`` is the README's "no tensor" and
means ``None``. The text is kept exactly (only whitespace is
canonicalised) so that ``str()`` round-trips; :attr:`Argument.default_value` gives the Python
value.

**Returns** are one type (``Tensor``, ``Tensor(a!)``, ``Tensor(a)[]``, ``int``, ``bool``,
``Scalar``, ...), possibly named (``-> Tensor grid``), or a parenthesised, comma separated
tuple of them, possibly empty (``-> ()``, ``-> (Tensor values, Tensor indices)``).

Whitespace between tokens is free in the input; ``str()`` of a parsed schema prints the
canonical form used in native_functions.yaml, and :func:`parse` checks that this text parses
back to an equal schema (the torchgen ``model.py`` idea).

This module is the model and the parser; the words they are made of (tokens, the values of
defaults, type names, and :class:`SchemaError`, which points at a word) are
:mod:`tensorplug._schema_tokens`. Import every name from here.

Usage::

    >>> from tensorplug import schema
    >>> s = schema.parse("myops::myadd(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    >>> s.namespace, s.name, s.overload_name, [a.name for a in s.arguments]
    ('myops', 'myadd', '', ['self', 'other', 'alpha'])
    >>> str(s.kwarg_only[0].type), s.kwarg_only[0].default_value
    ('Scalar', 1)
    >>> s.bind((t1, t2), {})                    # doctest: +SKIP
    ((t1, t2), {'alpha': 1})
    >>> schema.parse("f(int[ x) -> int")        # doctest: +SKIP
    SchemaError: expected a list size or ']' but found 'x' at column 8:
        f(int[ x) -> int
               ^
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, TypeAlias

from tensorplug import _binding
from tensorplug._binding import (
    ArgumentTypeError,
    fast_types,
    normalize_argument,
    register_python_type,
    type_name,
    unregister_python_type,
)
from tensorplug._schema_tokens import (
    KNOWN_TYPES,
    MAX_DIGITS,
    SchemaError,
    Token,
    literal_value,
    tokenize,
    unknown_type,
)
from tensorplug._types import BaseType, ListType, OptionalType, Type

__all__ = [
    "Annotation",
    "Argument",
    "ArgumentTypeError",
    "BaseType",
    "FunctionSchema",
    "ListType",
    "OptionalType",
    "Return",
    "SchemaError",
    "KNOWN_TYPES",
    "Type",
    "fast_types",
    "normalize_argument",
    "parse",
    "register_python_type",
    "type_name",
    "unregister_python_type",
]


# --------------------------------------------------------------------------------------------
# The model: frozen dataclasses whose str() is the canonical text.


TensorKind: TypeAlias = Literal["Tensor", "Tensor?", "Tensor[]", "Tensor?[]"]


@dataclass(frozen=True)
class Annotation:
    """An alias annotation: ``a``, ``a!``, ``a|b``, ``a -> *``, ``a! -> a|b``.

    ``before == ()`` is the fresh alias set of the shorthand ``Tensor!`` (written in place,
    aliasing nothing else in the schema), printed as ``!``.
    """

    before: tuple[str, ...]
    is_write: bool
    after: tuple[str, ...]

    def __str__(self) -> str:
        text = "|".join(self.before) + ("!" if self.is_write else "")
        if self.after:
            text += " -> " + "|".join(self.after)
        return text

    @property
    def is_fresh(self) -> bool:
        """True for the ``Tensor!`` shorthand: a write to an alias set of its own."""
        return not self.before


def _format_type(type_: Type, annotation: Annotation | None) -> str:
    """The type's text with the annotation right after the base name: ``Tensor(a!)[]``."""
    if isinstance(type_, BaseType):
        if annotation is None:
            return type_.name
        if annotation.is_fresh:
            return f"{type_.name}!"
        return f"{type_.name}({annotation})"
    if isinstance(type_, OptionalType):
        return _format_type(type_.elem, annotation) + "?"
    size = "" if type_.size is None else str(type_.size)
    return f"{_format_type(type_.elem, annotation)}[{size}]"


def _base_is_tensor(type_: Type) -> bool:
    while not isinstance(type_, BaseType):
        type_ = type_.elem
    return type_.name == "Tensor"


def _tensor_kind(type_: Type) -> TensorKind | None:
    match type_:
        case BaseType("Tensor"):
            return "Tensor"
        case OptionalType(BaseType("Tensor")):
            return "Tensor?"
        case ListType(BaseType("Tensor")):
            return "Tensor[]"
        case ListType(OptionalType(BaseType("Tensor"))):
            return "Tensor?[]"
    return None


@dataclass(frozen=True)
class Argument:
    """One argument: ``type name[=default]``; ``default`` is the canonical default text."""

    name: str
    type: Type
    default: str | None
    annotation: Annotation | None
    kwarg_only: bool

    def __str__(self) -> str:
        text = f"{_format_type(self.type, self.annotation)} {self.name}"
        return text if self.default is None else f"{text}={self.default}"

    @property
    def has_default(self) -> bool:
        return self.default is not None

    @cached_property
    def default_value(self) -> Any:
        """The default as a Python value (Note [Default values]); ``None`` without a default."""
        if self.default is None or _is_undefined_tensor_default(self.default, self.type):
            return None
        return literal_value(self.default)

    @property
    def is_write(self) -> bool:
        """True for ``(a!)``: the operator writes this argument in place."""
        return self.annotation is not None and self.annotation.is_write

    @property
    def tensor_kind(self) -> TensorKind | None:
        """Which of the four tensor shapes the dispatcher reads key sets from, if any.

        ``Tensor[]?`` (an optional list) is not one of them, so it gives ``None``.
        """
        return _tensor_kind(self.type)


@dataclass(frozen=True)
class Return:
    """One returned value: ``type [name]``."""

    name: str | None
    type: Type
    annotation: Annotation | None

    def __str__(self) -> str:
        text = _format_type(self.type, self.annotation)
        return text if self.name is None else f"{text} {self.name}"


@dataclass(frozen=True)
class FunctionSchema:
    """A parsed schema; ``str()`` gives the canonical text back."""

    namespace: str
    name: str
    overload_name: str
    positional: tuple[Argument, ...]
    kwarg_only: tuple[Argument, ...]
    returns: tuple[Return, ...]

    def __str__(self) -> str:
        args = [str(a) for a in self.positional]
        if self.kwarg_only:
            args += ["*", *(str(a) for a in self.kwarg_only)]
        if len(self.returns) == 1:
            returns = str(self.returns[0])
        else:
            returns = "(" + ", ".join(str(r) for r in self.returns) + ")"
        prefix = f"{self.namespace}::" if self.namespace else ""
        return f"{prefix}{self.full_name}({', '.join(args)}) -> {returns}"

    @property
    def arguments(self) -> tuple[Argument, ...]:
        return self.positional + self.kwarg_only

    @property
    def full_name(self) -> str:
        """``name.overload``, or ``name`` for the default overload."""
        return f"{self.name}.{self.overload_name}" if self.overload_name else self.name

    @property
    def is_mutable(self) -> bool:
        """True when some argument is written in place (``(a!)``)."""
        return any(a.is_write for a in self.arguments)

    @property
    def is_out(self) -> bool:
        """True for an ``out=`` overload: a keyword-only argument it writes (``Tensor(a!) out``)."""
        return any(a.is_write for a in self.kwarg_only)

    @cached_property
    def _binder(self) -> _binding.Binder:
        # Built on first use: parse() builds every schema twice (the round-trip check).
        prefix = f"{self.namespace}::" if self.namespace else ""
        return _binding.Binder(self, prefix + self.full_name)

    def bind(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], op_name: str | None = None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Bind a call: (all positional values in schema order, all keyword-only values).

        Defaults are filled in and every value is normalized (``tensorplug._binding``). A call
        that does not fit raises ``TypeError`` naming ``op_name`` (default: the schema's own
        ``ns::name.overload``), the argument and the expected type.
        """
        return self._binder.bind(args, kwargs, op_name)

    def try_bind(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        """Like :meth:`bind`, but ``None`` where ``bind`` would raise ``TypeError``."""
        return self._binder.try_bind(args, kwargs)


def _is_undefined_tensor_default(default: str, type_: Type) -> bool:
    """``Tensor? x=[]``: the README's spelling of "no tensor", whose value is ``None``."""
    return default == "[]" and _tensor_kind(type_) == "Tensor?"


def _is_out_name(overload: str) -> bool:
    return overload == "out" or overload.endswith("_out")


# --------------------------------------------------------------------------------------------
# The parser: recursive descent over the tokens, one method per rule of the grammar.


_MAX_SUFFIXES = 8  # native_functions.yaml uses two at most (``Tensor?[]``, ``int[1]?``)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = list(tokenize(text))
        self.pos = 0
        self.overload = ""

    # -- helpers

    @property
    def peek(self) -> Token:
        return self.tokens[self.pos]

    def next(self) -> Token:
        token = self.tokens[self.pos]
        if token.kind != "end":
            self.pos += 1
        return token

    def error(self, reason: str, token: Token | None = None) -> SchemaError:
        token = self.peek if token is None else token
        return SchemaError(self.text, token.column, reason)

    def expected(self, what: str) -> SchemaError:
        return self.error(f"expected {what} but found {self.peek.describe()}")

    def accept(self, op: str) -> bool:
        if self.peek.kind == "op" and self.peek.text == op:
            self.pos += 1
            return True
        return False

    def expect(self, op: str, what: str | None = None) -> None:
        if not self.accept(op):
            raise self.expected(what or f"'{op}'")

    def ident(self, what: str) -> str:
        if self.peek.kind != "ident":
            raise self.expected(what)
        return self.next().text

    # -- rules

    def schema(self) -> FunctionSchema:
        namespace, name = "", self.ident("an operator name")
        if self.accept("::"):
            namespace, name = name, self.ident("an operator name")
        overload = self.ident("an overload name") if self.accept(".") else ""
        self.overload = overload
        self.expect("(")
        positional, kwarg_only = self.arguments()
        self.expect("->")
        returns = self.returns()
        if self.peek.kind != "end":
            raise self.error(f"unexpected {self.peek.describe()} after the returns")
        return FunctionSchema(namespace, name, overload, positional, kwarg_only, returns)

    def arguments(self) -> tuple[tuple[Argument, ...], tuple[Argument, ...]]:
        """After '(' up to and including ')'."""
        positional: list[Argument] = []
        kwarg_only: list[Argument] = []
        seen: set[str] = set()
        star: Token | None = None
        if self.accept(")"):
            return (), ()
        while True:
            if self.peek.text == "*" and self.peek.kind == "op":
                if star is not None:
                    raise self.error("'*' may appear only once")
                star = self.next()
                if self.peek.text != ")":
                    self.expect(",", "',' after '*'")
                if self.peek.kind != "ident":
                    raise self.expected("an argument after '*'")
                continue
            name_token, argument = self.argument(kwarg_only=star is not None)
            if argument.name in seen:
                raise self.error(f"duplicate argument name '{argument.name}'", name_token)
            seen.add(argument.name)
            (kwarg_only if star is not None else positional).append(argument)
            if self.accept(")"):
                return tuple(positional), tuple(kwarg_only)
            if not self.accept(","):
                raise self.expected("',' or ')'")

    def argument(self, kwarg_only: bool) -> tuple[Token, Argument]:
        type_token = self.peek
        type_, annotation = self.type()
        name_token = self.peek
        name = self.ident("an argument name")
        # out= arguments are keyword-only, as in PyTorch: a positional argument named out is
        # an input (the forward output _scaled_dot_product_flash_attention_for_cpu_backward reads)
        # (in an ``*_out`` overload, an optional tensor is an input: linalg_matrix_rank's
        # ``atol_rtol_tensor_out(Tensor input, *, Tensor? atol=None, ..., Tensor(a!) out)``)
        is_out = kwarg_only and (
            name == "out" or (_is_out_name(self.overload) and not isinstance(type_, OptionalType))
        )
        if is_out and _base_is_tensor(type_) and not (annotation and annotation.is_write):
            # an out= argument is written in place: the dispatcher bumps its version counter and
            # every transform (autograd, tracing, vmap) treats it as written only if it says so
            raise self.error(
                f"the out argument '{name}' must be annotated as written in place, as in "
                f"'{_format_type(type_, Annotation(('a',), True, ()))} {name}'",
                type_token,
            )
        default = None
        if self.accept("="):
            start = self.peek
            default, checkable = self.default()
            try:
                value = literal_value(default)
            except ValueError as e:
                raise self.error(f"default value {default} is not valid: {e}", start) from None
            if (
                checkable
                and not _is_undefined_tensor_default(default, type_)
                and not _binding.default_fits(value, type_)
            ):
                raise self.error(f"default value {default} does not fit type {type_}", start)
        return name_token, Argument(name, type_, default, annotation, kwarg_only)

    def type(self) -> tuple[Type, Annotation | None]:
        token = self.peek
        name = self.ident("a type")
        if name not in KNOWN_TYPES and name not in _binding._PYTHON_TYPES:
            raise self.error(unknown_type(name), token)  # Note [Type names]
        type_: Type = BaseType(name)
        if self.accept("("):
            annotation: Annotation | None = self.annotation()
        elif self.accept("!"):
            annotation = Annotation((), True, ())  # Tensor!: a fresh alias set, written
        else:
            annotation = None
        depth = 0
        while True:
            suffix = self.peek
            if self.accept("?"):
                type_ = OptionalType(type_)
            elif self.accept("["):
                size = None
                if self.peek.kind == "number" and self.peek.text.isdigit():
                    if len(self.peek.text) > MAX_DIGITS:
                        raise self.error(f"a list size of more than {MAX_DIGITS} digits")
                    size = int(self.next().text)
                self.expect("]", "a list size or ']'" if size is None else "']'")
                type_ = ListType(type_, size)
            else:
                return type_, annotation
            depth += 1
            if depth > _MAX_SUFFIXES:  # the model, str() and == recurse once per suffix
                raise self.error(
                    f"a type takes at most {_MAX_SUFFIXES} '?' and '[]' suffixes", suffix
                )

    def annotation(self) -> Annotation:
        """After '(' up to and including ')': ``a|b! -> c|*``."""
        before = self.alias_set()
        is_write = self.accept("!")
        after = self.alias_set() if self.accept("->") else ()
        self.expect(")", "')' to close the annotation")
        return Annotation(before, is_write, after)

    def alias_set(self) -> tuple[str, ...]:
        names = []
        while True:
            if self.peek.kind == "ident" or self.peek.text == "*":
                names.append(self.next().text)
            else:
                raise self.expected("an alias name")
            if not self.accept("|"):
                return tuple(names)

    def default(self) -> tuple[str, bool]:
        """The canonical default text, and whether it holds no bare identifier (so its value
        can be checked against the type; Note [Default values])."""
        if not self.accept("["):
            return self.scalar_default()
        items: list[tuple[str, bool]] = []
        if not self.accept("]"):
            items.append(self.scalar_default())
            while not self.accept("]"):
                self.expect(",", "',' or ']'")
                items.append(self.scalar_default())
        return "[" + ",".join(t for t, _ in items) + "]", all(ok for _, ok in items)

    def scalar_default(self) -> tuple[str, bool]:
        token = self.peek
        if token.kind not in ("number", "ident", "string"):
            raise self.expected("a default value")
        self.next()
        is_constant = token.kind == "ident" and token.text not in ("None", "True", "False")
        return token.text, not is_constant

    def returns(self) -> tuple[Return, ...]:
        if not self.accept("("):
            return (self.return_(),)
        returns: list[Return] = []
        if self.accept(")"):
            return ()
        while True:
            returns.append(self.return_())
            if self.accept(")"):
                return tuple(returns)
            if not self.accept(","):
                raise self.expected("',' or ')'")

    def return_(self) -> Return:
        if self.peek.kind != "ident":
            raise self.expected("a return type")
        type_, annotation = self.type()
        name = self.next().text if self.peek.kind == "ident" else None
        return Return(name, type_, annotation)


def _parse_type(text: str) -> Type:
    """A type's text as ``str(type)`` writes it (``int[1]?``), for the op set cache."""
    parser = _Parser(text)
    type_, annotation = parser.type()
    if annotation is not None or parser.peek.kind != "end":
        raise parser.error(f"expected a type without annotation, got {text!r}")
    return type_


_SURROGATE = re.compile("[\ud800-\udfff]")


def parse(text: str) -> FunctionSchema:
    """Parse schema text; raises :class:`SchemaError` pointing at the offending column.

    The result's ``str()`` is the canonical text, which is checked to parse back to an equal
    schema.
    """
    if not text.isascii():
        bad = _SURROGATE.search(text)
        if bad is not None:  # it would parse, and then fail to print or encode
            raise SchemaError(
                text,
                bad.start() + 1,
                f"a lone surrogate {bad.group()!a} is not a character; a schema is UTF-8 text",
            )
    result = _Parser(text).schema()
    canonical = str(result)
    if _Parser(canonical).schema() != result:
        raise RuntimeError(f"internal error: {text!r} prints as {canonical!r}, which differs")
    return result
