"""Plain-Python references of the dispatch layer's generated templates (internal).

Note [Template references]
~~~~~~~~~~~~~~~~~~~~~~~~~~
The hot path runs code generated from string templates: an operator's ``__call__`` and
``redispatch`` (``_callgen.generate``, Note [Generated call functions]), the call specialized to
a signature of argument types (``_callgen.specialize``, Note [Specialized calls]) and the public
functions and methods (``_opset/templates.py``, Note [Public function fast path]). Each has a
reference here or in ``_opset/reference.py``: plain Python, no generated code, no cache, that
binds every call through the schema (``FunctionSchema.bind``) and so does by the book what the
template does fast. ``tests/core/test_template_references.py`` runs the OpInfo samples through
both and compares results, dtypes, what the calls wrote and the errors they raised: a change
to a template that changes behaviour fails there.

The reference of ``__call__`` and ``redispatch`` is the generic path that operators whose
argument names cannot be Python parameters (``random_.from``) run anyway:
:func:`reference_call` and :func:`reference_redispatch`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _callgen
from ._op import OpOverload
from ._paths import _generic_call, _generic_redispatch

__all__ = ["reference_call", "reference_redispatch", "reference_specialized"]


def reference_call(op: OpOverload, /, *args: Any, **kwargs: Any) -> Any:
    """What ``op(*args, **kwargs)`` does (the generated ``__call__``), through the binder."""
    return _generic_call(op, *args, **kwargs)


def reference_redispatch(op: OpOverload, keyset: int, /, *args: Any, **kwargs: Any) -> Any:
    """What ``op.redispatch(keyset, *args, **kwargs)`` does, through the binder."""
    return _generic_redispatch(op, keyset, *args, **kwargs)


def reference_specialized(op: OpOverload, sig: tuple[Any, ...]) -> Callable[..., Any] | None:
    """What ``_callgen.specialize(op, sig)`` makes: a function of the values of the arguments
    that a call with signature ``sig`` gives, in its order (positional ones, then the keyword
    ones); ``None`` when such a call cannot bind (too many positional arguments, an unknown or
    repeated keyword, a required argument not given). It is handed out only for calls that
    ``__call__`` accepted with arguments of those types (Note [Specialized calls])."""
    schema = op.schema
    names = _callgen._given_names(schema, sig)
    if names is None or any(
        not a.has_default for a in schema.arguments if a.name not in set(names)
    ):
        return None
    npos = len(names) - sum(1 for x in sig if type(x) is str)
    keywords = names[npos:]

    def call(*values: Any) -> Any:
        kwargs = dict(zip(keywords, values[npos:], strict=True))
        return _generic_call(op, *values[:npos], **kwargs)

    call.__qualname__ = f"{op.name}.specialized_reference"
    return call
