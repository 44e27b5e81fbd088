"""The source templates of the public functions and methods (Note [Public function fast path]
in _opset/functions.py, which fills them in and defines them): ``_FUNCTION`` for
``tensorplug.<name>``, ``_METHOD`` and ``_WITH_ALPHA`` for ``Tensor.<name>``, the ``_PICK``
snippet both methods share, and :func:`_inlined`, the lines of a specialized call that a
template runs in its own frame. _opset/reference.py holds their plain-Python references."""

from __future__ import annotations

from typing import Any

from ..dispatcher import _callgen
from ..tensor import Tensor
from .native import OpEntry

# "no argument here": the default of the public functions' positional-only parameters
_NO: Any = type("NoArgument", (), {"__repr__": lambda self: "<no argument>"})()


def _pack(a: Any, b: Any, rest: tuple[Any, ...]) -> tuple[Any, ...]:
    """The positional arguments of a public function call, from its fast parameters."""
    if a is _NO:
        return ()
    if b is _NO:
        return (a,)
    return (a, b, *rest)


# Note [Public function fast path]: the public function's source; each ``{inlineN}`` is the
# specialized call of the overload that ``N`` tensors pick (Note [Specialized calls] in
# dispatcher/_callgen.py), run when the cache holds that very call, or nothing.
_FUNCTION = """
def function(a=_NO, b=_NO, /, *rest, **kwargs):
    if not rest and type(b) is T and type(a) is T and not kwargs:  # two tensors: tested first
{inline2}
        op = choice.t2
        if op is None:
            return general((a, b), kwargs)
        return op(a, b)
    if rest or kwargs or a is _NO:
        if not kwargs and len(rest) == 1 and type(a) is T and type(b) is T:
            c = rest[0]
            if type(c) is T:  # three tensors (linear, addmm, where): no packing
{inline3}
                op = choice.t3
                if op is not None:
                    return op(a, b, c)
        return general(_pack(a, b, rest), kwargs)
    if b is _NO:
        if type(a) is T:
{inline1}
            op = choice.t1
        else:
            op = get((type(a),))
        if op is None:
            return general((a,), kwargs)
        return op(a)
    op = get((type(a), type(b)))
    if op is None:
        return general((a, b), kwargs)
    return op(a, b)
"""


# ``zeros_like`` & co. (_opset/functions.py, _with_requires_grad): ``requires_grad=`` as a
# parameter of its own, one tensor alone through the cached call (inline), anything else
# through ``plain``, the public function made from _FUNCTION
_LIKE = """
def function(a=_NO, b=_NO, /, *rest, requires_grad=False, **kwargs):
    if b is _NO and type(a) is T and not kwargs and not requires_grad:
{inline1}
        op = choice.t1
        if op is not None:
            return op(a)
    r = plain(*_pack(a, b, rest), **kwargs)
    if requires_grad:
        r.requires_grad_()
    return r
"""


def _inlined(
    es: list[OpEntry],
    sig: tuple[Any, ...],
    args: list[str],
    indent: int,
    ns: dict[str, Any],
    tag: str,
) -> str:
    """``if op is <the specialized call>:`` and its body, with the arguments in variables
    ``args``, for the first overload that a call of signature ``sig`` (plain tensors and
    keywords of plain types) binds with every other argument at its default: the one the
    packet picks when types decide. ``""`` when there is none. A call whose cache holds
    another callable (another overload, a traced call) takes the general lines after it."""
    for e in es:
        op = e.op
        assert op is not None
        names = _callgen._given_names(op.schema, sig)
        if names is None:
            continue
        nkw = len(sig) - len(names)
        types = [*sig[: len(names) - nkw], *sig[len(sig) - nkw :]]
        kinds = {a.name: a for a in op.schema.arguments}
        if any(
            (kinds[n].tensor_kind in ("Tensor", "Tensor?")) != (t is Tensor)
            for n, t in zip(names, types, strict=True)
        ) or any(not a.has_default for a in op.schema.arguments if a.name not in names):
            continue
        pad = " " * indent
        made = _callgen.specialized_body(op, sig, args, tag, pad + "    ")
        if made is None or not _callgen.usable_names(op.schema):
            return ""
        lines, body_ns = made
        ns.update(body_ns)
        return "\n".join([f"{pad}if choice.s{tag[1:]} is _op{tag}:", *lines])
    return ""


_METHOD = """
def method(self, b=_NO, /, *rest, **kwargs):
    if pack and type(b) is int:  # x.view(2, 3) means x.view([2, 3])
        return general((self, [b, *rest]), kwargs)
    if rest or kwargs:
        if not rest and len(kwargs) == 1 and type(self) is T and type(b) is T:
            # one keyword (p.sub_(g, alpha=lr)): general's lookup, without its packing
            for k, v in kwargs.items():
                op = get((T, T, k, type(v)))
                if op is not None:
                    r = op(self, b, **kwargs)
                    return nt(*r) if nt is not None and type(r) is tuple else r
        return general(_pack(self, b, rest), kwargs)
    if type(self) is T:
{pick}
        if op is not None:
            r = op(self) if b is _NO else op(self, b)
            return nt(*r) if nt is not None and type(r) is tuple else r
    return general(_pack(self, b, rest), kwargs)
"""

# ``alpha`` as a parameter of its own (:func:`_with_alpha`); ``plain`` is the method above
_WITH_ALPHA = """
def method(self, b=_NO, /, *rest, alpha=_NO, **kwargs):
    if alpha is not _NO:
        if not rest and not kwargs:
            if type(self) is T and type(b) is T and type(alpha) is float:
{inline_alpha}
                op = choice.t2a
            else:
                op = get((type(self), type(b), "alpha", type(alpha)))
            if op is not None:
                r = op(self, b, alpha=alpha)
                return nt(*r) if nt is not None and type(r) is tuple else r
        kwargs["alpha"] = alpha
        return plain(self, b, *rest, **kwargs)
    if rest or kwargs or type(self) is not T:
        return plain(self, b, *rest, **kwargs)
{pick}
    if op is None:
        return plain(self, b)
    r = op(self) if b is _NO else op(self, b)
    return nt(*r) if nt is not None and type(r) is tuple else r
"""

# the choice of a method's specialized call by the type of ``b``, in both templates above: the
# calls of one and two tensors inline (``inline1`` and ``inline2`` indented by ``pad`` + 4)
_PICK = """\
{pad}if b is _NO:
{inline1}
{pad}    op = choice.t1
{pad}elif type(b) is T:
{inline2}
{pad}    op = choice.t2
{pad}else:
{pad}    op = get((T, type(b)))"""
