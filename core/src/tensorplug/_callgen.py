"""Generates the per-operator call functions of the dispatch hot path (internal).

Note [Generated call functions]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Binding ``(*args, **kwargs)`` against a schema in Python costs microseconds; the interpreter's
own argument binding costs tens of nanoseconds. So each operator gets a ``__call__`` (and a
``redispatch``) generated from its schema, whose Python signature *is* the schema: the
interpreter binds positional, keyword and keyword-only arguments and fills defaults. Required
arguments get a sentinel default and the positional ones are followed by ``*_extra``, so a bad
call reaches ``op._bad_call``, which re-binds slowly through the schema and raises the schema's
``TypeError``. An unknown keyword is left to the interpreter: the function's ``__qualname__`` is
the operator's name, so its message already reads ``ns::op.overload() got an unexpected keyword
argument 'x'`` (a ``**kwargs`` catch-all would cost a dict per call). The generated body then

1. ORs the key sets of the tensor arguments with the thread's ``included`` set and masks with
   its ``~excluded`` (a non-tensor where a tensor belongs fails the attribute read, and goes to
   ``_bad_call``);
2. checks each non-tensor argument with one ``type(x) in <frozenset>`` test, normalizing
   (``int[2]`` from a bare int, numpy scalars) only when that fails (a ``Scalar`` int also
   gets a range test: beyond 64 bits it raises, Note [Scalar ints] in _binding.py); an argument left at its
   default (``x is <default>``, when the default passes that test) skips it; an int list
   passes as it is when it is already what it binds to, a tuple of ints, and a list of ints
   becomes that tuple without the binder;
3. looks the key set up in the operator's dispatch cache (Note [Dispatch cache]) and calls the
   callable found there with the bound arguments;
4. for arguments the schema marks written ``(a!)``, bumps the version counter when the kernel
   left it unchanged, so nested dispatch of one in-place call bumps it exactly once.

Operators whose argument names are not usable as Python parameters (``from``) get the generic,
slower path, which binds through the schema.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

from . import _binding
from . import schema as _schema
from .dispatch import local_state

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()

_RESERVED = {"_op", "_ks", "_extra", "_k", "_r", "_v", "_tls", "_get", "_M", "_ints", "_m"}


def usable_names(schema: _schema.FunctionSchema) -> bool:
    return all(
        a.name.isidentifier() and not keyword.iskeyword(a.name) and a.name not in _RESERVED
        for a in schema.arguments
    )


def generate(op: Any, cache: dict[int, Callable[..., Any]]) -> tuple[Callable[..., Any], ...]:
    """``(__call__, redispatch)`` for ``op`` (an ``OpOverload``), reading ``cache``."""
    schema: _schema.FunctionSchema = op._schema
    ns: dict[str, Any] = {
        "_tls": local_state,
        "_get": cache.get,
        "_M": MISSING,
        "_ks_list": ks_list,
        "_ks_optlist": ks_optlist,
        "_ints": ints,
    }
    params: list[str] = []
    kw_params: list[str] = []
    ks_terms: list[str] = []
    checks: list[str] = []
    written: list[tuple[str, str | None]] = []
    for i, a in enumerate(schema.arguments):
        name = a.name
        default_fits = False  # the default passes the fast type check as it is
        if a.has_default:
            try:
                dv = _schema.normalize_argument(a.default_value, a.type)
            except Exception:
                dv = a.default_value
            ns[f"_D{i}"] = dv
            spec = f"{name}=_D{i}"
            default_fits = type(dv) in _schema.fast_types(a.type)
        else:
            spec = f"{name}=_M"
        (kw_params if a.kwarg_only else params).append(spec)
        kind = a.tensor_kind
        if kind == "Tensor":
            ks_terms.append(f"{name}._tp_keyset")
        elif kind == "Tensor?":
            ks_terms.append(f"(0 if {name} is None else {name}._tp_keyset)")
        elif kind == "Tensor[]":
            ks_terms.append(f"_ks_list({name})")
        elif kind == "Tensor?[]":
            ks_terms.append(f"_ks_optlist({name})")
        elif _int_list(a.type):
            # int lists bind as tuples of ints: a tuple of ints is already normalized
            skip = f"{name} is not None and " if isinstance(a.type, _schema.OptionalType) else ""
            checks.append(
                f"    if {skip}(type({name}) is not tuple or not _ints({name})):\n"
                f"        if type({name}) is list and _ints({name}):\n"
                f"            {name} = tuple({name})\n"
                "        else:\n"
                f"            {name} = _op._normalize({i}, {name})"
            )
        elif _scalar(a.type):
            # ints are Scalars only within 64 bits (Note [Scalar ints] in _binding.py): an int
            # gets a range test instead of the fast types' check (measured: within 1% of the
            # check alone, for ints and floats alike)
            ns[f"_F{i}"] = _schema.fast_types(a.type)
            pad = "    " if a.has_default else ""
            checks.append(
                (f"    if {name} is not _D{i}:\n" if a.has_default else "")
                + f"{pad}    if type({name}) is int:\n"
                f"{pad}        if not {_binding.SCALAR_INT_MIN} <= {name} <= "
                f"{_binding.SCALAR_INT_MAX}:\n"
                f"{pad}            {name} = _op._normalize({i}, {name})\n"
                f"{pad}    elif type({name}) not in _F{i}:\n"
                f"{pad}        {name} = _op._normalize({i}, {name})"
            )
        else:
            ns[f"_F{i}"] = _schema.fast_types(a.type)
            # an argument left at its default is the default object itself: one ``is`` test
            skip = f"{name} is not _D{i} and " if default_fits else ""
            checks.append(
                f"    if {skip}type({name}) not in _F{i}:\n"
                f"        {name} = _op._normalize({i}, {name})"
            )
        if a.is_write and kind is not None:
            written.append((name, kind))

    all_names = [a.name for a in schema.arguments]
    pos_names = [a.name for a in schema.positional]
    kw_names = [a.name for a in schema.kwarg_only]
    sig = ", ".join([*params, "*_extra", *kw_params])
    bad = f"_op._bad_call(({', '.join(all_names)}{',' if all_names else ''}), _extra, {{}})"
    call_args = ", ".join([*pos_names, *(f"{n}={n}" for n in kw_names)])
    ks_expr = " | ".join([*ks_terms, "_m.inc"])

    def body(ks_line: str) -> str:
        lines = [
            "    if _extra:",
            f"        return {bad}",
            "    try:",
            f"        {ks_line}",
            "    except AttributeError:",
            f"        return {bad}",
            *checks,
            "    _k = _get(_ks)",
            "    if _k is None:",
            "        _k = _op._resolve(_ks)",
        ]
        if not written:
            lines.append(f"    return _k({call_args})")
            return "\n".join(lines)
        # a written Tensor's version bookkeeping inline (what _versions and _bump do, without
        # two calls per argument); Tensor? and lists through them
        for j, (n, kind) in enumerate(written):
            if kind == "Tensor":
                lines.append(f"    _v{j} = {n}._tp_version.value")
            else:
                lines.append(f"    _v{j} = _op._versions({n}, {kind!r})")
        lines.append(f"    _r = _k({call_args})")
        for j, (n, kind) in enumerate(written):
            if kind == "Tensor":
                lines.append(f"    _c{j} = {n}._tp_version")
                lines.append(f"    if _c{j}.value == _v{j}:")
                lines.append(f"        _c{j}.value = _v{j} + 1")
            else:
                lines.append(f"    _op._bump({n}, {kind!r}, _v{j})")
        lines.append("    return _r")
        return "\n".join(lines)

    qual = op._name
    src = (
        f"def __call__(_op, {sig}):\n"
        + body(f"_m = _tls.masks\n        _ks = ({ks_expr}) & _m.nexc")
        + f"\n\ndef redispatch(_op, _ks, {sig}):\n"
        + body("_ks = _ks & -1" if not ks_terms else "pass")
        + "\n"
    )
    code = compile(src, f"<tensorplug dispatch {qual}>", "exec")
    exec(code, ns)
    call, redispatch = ns["__call__"], ns["redispatch"]
    call.__qualname__ = qual
    redispatch.__qualname__ = qual + ".redispatch"
    call.__source__ = src
    return call, redispatch


def _scalar(t: Any) -> bool:
    """Whether schema type ``t`` is ``Scalar`` or ``Scalar?``."""
    if isinstance(t, _schema.OptionalType):
        t = t.elem
    return isinstance(t, _schema.BaseType) and t.name == "Scalar"


def _int_list(t: Any) -> bool:
    """Whether schema type ``t`` is ``int[]`` / ``int[N]``, optional or not."""
    if isinstance(t, _schema.OptionalType):
        t = t.elem
    return (
        isinstance(t, _schema.ListType)
        and isinstance(t.elem, _schema.BaseType)
        and t.elem.name in ("int", "SymInt")
    )


def ints(xs: tuple[Any, ...]) -> bool:
    """Whether every element is exactly an int (not a bool, not a numpy integer)."""
    for x in xs:
        if type(x) is not int:
            return False
    return True


def ks_list(xs: Any) -> int:
    if type(xs) is not list and type(xs) is not tuple:
        raise AttributeError  # not a Tensor[]: the slow path raises the schema's TypeError
    ks = 0
    for x in xs:
        ks |= x._tp_keyset
    return ks


def ks_optlist(xs: Any) -> int:
    if type(xs) is not list and type(xs) is not tuple:
        raise AttributeError
    ks = 0
    for x in xs:
        if x is not None:
            ks |= x._tp_keyset
    return ks
