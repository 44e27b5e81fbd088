"""``tp.dispatcher.source``: the code that runs for a call of an operator, frame by frame.

Note [Dispatch source]
~~~~~~~~~~~~~~~~~~~~~~
A call of ``tp.add(x, y)`` runs three kinds of frame, top down: the public function (generated
by the op-set layer, Note [Public function fast path] in _opset/functions.py), the operator's
dispatch call (``OpOverload.__call__``, generated from the schema, Note [Generated call
functions] in dispatcher/_callgen.py) and the kernel that the dispatch cache holds for the call's key set
(Note [Dispatch cache]); a functionality kernel (autograd, autocast, a tracer) runs the kernel
of the keys below its own, and so on down to a backend's. :func:`source` prints each of them
with its filename and first line: the text that ``codegen`` entered in linecache for generated
code (Note [Visible generated code] in codegen.py), ``inspect``'s for a Python function.

The public functions live a layer above the dispatcher, which must not import them; the layer
that makes them registers a function into ``_source_callers`` that answers, for an operator, the
public functions that call it (``_api``'s). The public function of an operator whose
arguments have plain types runs the dispatch call's steps inline, specialized to those types
(Note [Specialized calls]); the dispatch call shown is the one every other call runs.

Usage::

    print(tp.dispatcher.source("aten::add.Tensor"))                    # a plain CPU tensor's call
    print(tp.dispatcher.source("aten::add.Tensor", ["AutogradCPU", "CPU"]))
"""

from __future__ import annotations

import functools
import inspect
import textwrap
from collections.abc import Iterable
from typing import Any

from .. import codegen
from .. import keys as _keys
from ..dispatch import local_state
from ..errors import DispatchError, RegistrationError
from ..keys import DispatchKeySet, KeyKind, KeyLike
from ._op import OpOverload, find_op
from ._registry import _ops, _source_callers

__all__ = ["source"]


def source(op: str | OpOverload, keyset: int | Iterable[KeyLike] | None = None) -> str:
    """The frames that run for a call of ``op`` with dispatch key set ``keyset``, top down,
    each headed by where it comes from, its filename and first line, then its source.

    ``op`` is ``"ns::op.overload"`` (``"ns::op"``: the default overload) or an overload.
    ``keyset`` is the key set the dispatcher dispatches on (TLS applied): key names (aliases
    expand, as in ``tp.keys.keyset``) or a ``DispatchKeySet``; the default is what a call with
    plain CPU tensors dispatches on in this thread. A functionality key's kernel is followed by
    the kernels of the keys below it, down to a backend's kernel.
    """
    ov = _find(op)
    ks = _keyset(keyset)
    out = [str(ov.schema), f"dispatch key set: {DispatchKeySet(ks)!r}"]
    n = 0
    for provide in list(_source_callers):
        for name, fn in provide(ov):
            n += 1
            out += _frame(n, f"{name}: the public function", fn)
    ov._generate()
    call = ov._fast[0] if ov._fast is not None else type(ov).__call__
    how = "generated from the schema" if codegen.filename_of(call) else "binds through the schema"
    n += 1
    out += _frame(n, f"{ov.name}: the dispatch call ({how})", call)
    first = True
    while True:
        try:
            key, kernel = ov._select(ks)
        except DispatchError as e:
            if first:
                raise
            out += ["", f"-- below: nothing runs: {e}"]
            break
        fn = ov.kernel_for(ks)
        first = False
        entry = ov.table[key.bit][0]
        kind = "boxed fallback " if kernel.boxed else ""
        n += 1
        title = (
            f"{key.name}: {kind}{kernel.where} (entry from {entry}, registered by "
            f"{kernel.registrant})"
        )
        out += _frame(n, title, _unwrap(fn))
        if key.kind is KeyKind.BACKEND:
            break
        ks &= ~(1 << key.bit)
    return "\n".join(out) + "\n"


def _find(op: str | OpOverload) -> OpOverload:
    """``find_op``, whose error for an unknown name also lists close names."""
    try:
        return find_op(op)
    except RegistrationError as e:
        if not isinstance(op, str) or "::" not in op:
            raise
        full = op if "." in op.split("::")[-1] else f"{op}.default"
        if any(n.startswith(full.split(".")[0] + ".") for n in list(_ops)):
            raise  # find_op lists the overloads of that name
        close = _close_names(full)
        if not close:
            raise
        raise RegistrationError(f"{e} Did you mean {', '.join(close)}?") from None


def _close_names(full: str) -> list[str]:
    """Overloads whose operator name is close to ``full``'s, in its namespace; those of the
    same overload name when there are such."""
    ns, _, rest = full.partition("::")
    name, _, overload = rest.partition(".")
    ops = [n.partition("::")[2].partition(".") for n in list(_ops) if n.startswith(ns + "::")]
    import difflib  # only for a bad name: `import tensorplug` does not pay for it

    near = difflib.get_close_matches(name, sorted({o[0] for o in ops}), n=3)
    found = [(o[0], o[2]) for o in ops if o[0] in near]
    found.sort(key=lambda o: near.index(o[0]))
    same = [o for o in found if o[1] == overload]
    return [f"{ns}::{n}.{ov}" for n, ov in (same or found)[:5]]


def _keyset(keyset: int | Iterable[KeyLike] | None) -> int:
    if keyset is None:
        m = local_state.masks
        return (_keys.tensor_keyset("CPU") | m.inc) & m.nexc
    if isinstance(keyset, int):
        return int(keyset)
    if isinstance(keyset, str):
        keyset = [k.strip() for k in keyset.split(",") if k.strip()]
    return int(_keys.keyset(*keyset))


def _unwrap(fn: Any) -> Any:
    """The function a ready cache entry runs: without the key set or ``(op, keyset)`` bound
    first, and inside the two-backend guard (``_same_device_guard``)."""
    while True:
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif getattr(fn, "__qualname__", "") == "_same_device_guard.<locals>.guarded":
            fn = inspect.getclosurevars(fn).nonlocals["fn"]
        else:
            return fn


def _frame(n: int, title: str, fn: Any) -> list[str]:
    where, text = _text(fn)
    lines = ["", f"-- {n}. {title}", f"   {where}", text.rstrip("\n")]
    inner = getattr(fn, "__wrapped__", None)  # a decorator's wrapper (functools.wraps)
    if inner is not None:
        inner = _unwrap(inner)
        name = getattr(inner, "__qualname__", repr(inner))
        where, text = _text(inner)
        lines += [f"   which calls {name}, {where}", text.rstrip("\n")]
    return lines


def _text(fn: Any) -> tuple[str, str]:
    """``File "...", line N`` and the source of ``fn`` (its own, not what it wraps)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return f"{fn!r}", "(no Python source: not a Python function)"
    filename, line = code.co_filename, code.co_firstlineno
    try:
        lines, line = inspect.getsourcelines(code)
    except (OSError, TypeError):
        text = getattr(fn, "__source__", None)
        if not isinstance(text, str):
            text = "(generated code whose text was not kept: compile it with tensorplug.codegen)"
        return f'File "{filename}", line {line}', text
    return f'File "{filename}", line {max(line, 1)}', textwrap.dedent("".join(lines))
