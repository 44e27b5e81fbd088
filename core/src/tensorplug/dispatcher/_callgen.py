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
   callable found there with the bound arguments. The lookup is a subscript inside ``try``,
   not a call of the dict's ``get`` (about 30 ns less per call in ``tp.add``): only the first
   call with a key set misses, and its ``KeyError`` sends it to ``op._resolve``;
4. for arguments the schema marks written ``(a!)``, bumps the version counter when the kernel
   left it unchanged, so nested dispatch of one in-place call bumps it exactly once.

Operators whose argument names are not usable as Python parameters (``from``) get the generic,
slower path, which binds through the schema.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

from .. import _binding, codegen
from .. import schema as _schema
from ..dispatch import local_state

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()

_RESERVED = {"_op", "_ks", "_extra", "_k", "_r", "_v", "_tls", "_cache", "_M", "_ints", "_m"}


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
        "_cache": cache,
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
        elif _int(a.type):
            # an int beyond int64 is PyTorch's ValueError: a range test, as a Scalar's
            ns[f"_F{i}"] = _schema.fast_types(a.type)
            pad = "    " if a.has_default else ""
            checks.append(
                (f"    if {name} is not _D{i}:\n" if a.has_default else "")
                + f"{pad}    if type({name}) is int:\n"
                f"{pad}        if not {_binding.INT_MIN} <= {name} <= {_binding.INT_MAX}:\n"
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
            "    try:",  # Note [Generated call functions], 3.
            "        _k = _cache[_ks]",
            "    except KeyError:",
            "        _k = _op._resolve(_ks)",
        ]
        if not written:
            lines.append(f"    return _k({call_args})")
            return "\n".join(lines)
        # a written Tensor's version bookkeeping inline (what _versions and _bump do, without
        # two calls per argument); Tensor? and lists through them
        lines.extend(_written_lines(written, call_args))
        return "\n".join(lines)

    qual = op._name
    src = (
        f"def __call__(_op, {sig}):\n"
        + body(f"_m = _tls.masks\n        _ks = ({ks_expr}) & _m.nexc")
        + f"\n\ndef redispatch(_op, _ks, {sig}):\n"
        + body("_ks = _ks & -1" if not ks_terms else "pass")
        + "\n"
    )
    call, redispatch = codegen.define_all(src, ns, f"dispatch {qual}", ("__call__", "redispatch"))
    call.__qualname__ = qual
    redispatch.__qualname__ = qual + ".redispatch"
    call.__source__ = src  # type: ignore[attr-defined]
    return call, redispatch


def _written_lines(written: list[tuple[str, str | None]], call_args: str) -> list[str]:
    """The kernel call of an operator that writes arguments, with their version bookkeeping:
    the counter bumped once unless the kernel bumped it (nested dispatch of one in-place call).

    A written Tensor's counter is read twice, its value before the kernel and the counter
    after it, rather than held across the call: the autograd plugin tells whether a tensor
    has views from its counter's reference count (``_shared`` in its views.py), which a
    reference held here would raise (tests/autograd/test_inplace.py,
    test_views_are_looked_for_only_when_the_base_has_others)."""
    lines = []
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
    return lines


def specialize(op: Any, sig: tuple[Any, ...]) -> Callable[..., Any] | None:
    """The call function of ``op`` for calls whose arguments have the types ``sig``; ``None``
    when there is none for that signature.

    Note [Specialized calls]
    ~~~~~~~~~~~~~~~~~~~~~~~~
    A public function caches, per signature of argument types, what to call (Note [Public
    function fast path] in _opset/functions.py). A signature is the types of the positional
    arguments, then the keywords' names, then their values' types, and a public function
    caches one only after the overload's generated ``__call__`` accepted such a call (every
    argument bound, no tensor taken for a number). For such a call most of what
    ``__call__`` checks is known from the types alone: no extra positional arguments, no
    argument missing, a tensor where a tensor belongs, a ``None`` for a ``Tensor?`` (no key
    set to read), a float for a ``Scalar`` (it fits as it is). So the public function caches
    this function instead: its parameters are the arguments the signature names, and it only

    1. ORs the key sets of the tensors given with the thread's masks;
    2. keeps the checks the types do not settle: an int for a ``Scalar`` gets its range
       test, an int list its element check, a type outside the argument's fast types its
       normalization (which raises the schema's TypeError, or converts);
    3. looks the key set up in the dispatch cache (a miss: ``op._resolve``, which raises the
       dispatcher's DispatchError for a missing kernel) and calls the kernel with the
       schema's defaults for the arguments not given, as ``__call__`` does;
    4. does the version bookkeeping of written tensors.

    It reads the same dispatch cache as ``__call__``, so registration changes need nothing
    here; tracing does: a traced call must run ``_traced_call``, so no specialization is
    handed out while tracing is on, and switching tracing drops the public functions' caches
    (``dispatcher._set_tracing``). ``OpOverload._specialization`` makes one per signature, once;
    ``OpOverload._call_for`` hands it out.
    """
    names = _given_names(op._schema, sig)
    if names is None:
        return None
    made = specialized_body(op, sig, names, "")
    if made is None:
        return None
    lines, ns = made
    src = f"def call({', '.join(names)}):\n" + "\n".join(lines) + "\n"
    call = codegen.define(src, ns, "specialized call", "call")
    call.__qualname__ = f"{op._name}.specialized"
    call.specialized_for = op  # type: ignore[attr-defined]
    call.__source__ = src  # type: ignore[attr-defined]
    return call


def _given_names(schema: _schema.FunctionSchema, sig: tuple[Any, ...]) -> list[str] | None:
    """The names of the arguments a call with signature ``sig`` gives, in its order; ``None``
    when such a call cannot bind (too many positional arguments, an unknown or repeated
    keyword)."""
    nkw = sum(1 for x in sig if type(x) is str)
    npos = len(sig) - 2 * nkw
    if npos > len(schema.positional):
        return None
    names = [a.name for a in schema.positional[:npos]]
    known = {a.name for a in schema.arguments}
    for name in sig[npos : npos + nkw]:
        if name in names or name not in known:
            return None
        names.append(name)
    return names


def specialized_body(
    op: Any, sig: tuple[Any, ...], given: list[str], tag: str, indent: str = "    "
) -> tuple[list[str], dict[str, Any]] | None:
    """The lines of ``op``'s call specialized to signature ``sig`` (Note [Specialized calls]),
    ending in a ``return``, with the values of the arguments the signature gives in the
    variables ``given`` (in ``sig``'s order), indented by ``indent``; and the names these
    lines read, each ending in ``tag`` (so that the bodies of several operators can share one
    function). ``None`` when there is no specialized call for that signature."""
    schema: _schema.FunctionSchema = op._schema
    names = _given_names(schema, sig)
    if names is None or len(names) != len(given):
        return None
    nkw = sum(1 for x in sig if type(x) is str)
    npos = len(sig) - 2 * nkw
    types = [*sig[:npos], *sig[npos + nkw :]]
    var = dict(zip(names, given, strict=True))  # argument name -> variable holding it
    of_type = dict(zip(names, types, strict=True))  # argument name -> its value's type
    ns: dict[str, Any] = {
        "_tls": local_state,
        f"_cache{tag}": op._cache,
        f"_op{tag}": op,
        "_ints": ints,
    }
    ks_terms: list[str] = []
    checks: list[str] = []
    written: list[tuple[str, str | None]] = []
    values: dict[str, str] = {}  # argument name -> what the kernel gets for it
    for i, a in enumerate(schema.arguments):
        if a.name not in var:
            if not a.has_default:
                return None
            try:
                dv = _schema.normalize_argument(a.default_value, a.type)
            except Exception:
                dv = a.default_value
            ns[f"_D{i}{tag}"] = dv
            values[a.name] = f"_D{i}{tag}"
            continue
        v = values[a.name] = var[a.name]
        t = of_type[a.name]
        kind = a.tensor_kind
        if kind in ("Tensor[]", "Tensor?[]"):
            return None  # lists of tensors are never in cached signatures
        if kind is not None:
            if t is type(None) and kind == "Tensor?":
                continue
            if not hasattr(t, "_tp_keyset"):
                return None  # not a tensor type: the generated call's _bad_call answers
            ks_terms.append(f"{v}._tp_keyset")
            if a.is_write:
                written.append((v, "Tensor"))
            continue
        normalize = f"{v} = _op{tag}._normalize({i}, {v})"
        if _scalar(a.type) and t is int:  # Note [Scalar ints] in _binding.py
            lo, hi = _binding.SCALAR_INT_MIN, _binding.SCALAR_INT_MAX
            checks += [f"if not {lo} <= {v} <= {hi}:", f"    {normalize}"]
        elif _int(a.type) and t is int:  # beyond int64: PyTorch's ValueError
            lo, hi = _binding.INT_MIN, _binding.INT_MAX
            checks += [f"if not {lo} <= {v} <= {hi}:", f"    {normalize}"]
        elif t in _schema.fast_types(a.type):
            pass
        elif _int_list(a.type) and t in (list, tuple):
            checks += [
                f"if type({v}) is not tuple or not _ints({v}):",
                f"    if type({v}) is list and _ints({v}):",
                f"        {v} = tuple({v})",
                "    else:",
                f"        {normalize}",
            ]
        elif not (t is type(None) and isinstance(a.type, _schema.OptionalType)):
            checks.append(normalize)
    call_args = ", ".join(
        [
            *(values[a.name] for a in schema.positional),
            *(f"{a.name}={values[a.name]}" for a in schema.kwarg_only),
        ]
    )
    ks_expr = " | ".join([*ks_terms, "_m.inc"])
    lines = [
        "_m = _tls.masks",
        f"_ks = ({ks_expr}) & _m.nexc",
        *checks,
        "try:",  # Note [Generated call functions], 3.
        f"    _k = _cache{tag}[_ks]",
        "except KeyError:",
        f"    _k = _op{tag}._resolve(_ks)",
    ]
    if written:
        lines += [x[4:] for x in _written_lines(written, call_args)]
    else:
        lines.append(f"return _k({call_args})")
    return [indent + x for x in lines], ns


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


def _int(t: Any) -> bool:
    """``int`` or ``int?`` (``SymInt`` too)."""
    if isinstance(t, _schema.OptionalType):
        t = t.elem
    return isinstance(t, _schema.BaseType) and t.name in ("int", "SymInt")


def ints(xs: tuple[Any, ...]) -> bool:
    """Whether every element is exactly an int (not a bool, not a numpy integer)."""
    for x in xs:
        if type(x) is not int or not -0x8000000000000000 <= x <= 0x7FFFFFFFFFFFFFFF:
            return False  # (beyond int64: the binder's TypeError)
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
