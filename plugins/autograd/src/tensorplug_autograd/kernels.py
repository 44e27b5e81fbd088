"""The Autograd kernels: one per differentiable operator, generated from the formula table.

Note [Autograd kernel]
~~~~~~~~~~~~~~~~~~~~~~
Every kernel is registered on the ``Autograd`` alias key with ``with_keyset=True`` and does
what PyTorch's VariableType kernels do:

1. run the operator below autograd: ``op.redispatch(keyset & below-autograd, ...)`` with the
   ``Autograd<B>`` keys excluded in this thread meanwhile, so kernels that re-enter the
   dispatcher (composites of backends) record nothing;
2. if a differentiable tensor input requires grad, make a node of the op's class
   (``MulBackward0``) with an edge per differentiable input (Note [Graph edges] in graph.py),
   save what the formula reads (Note [Saved tensors]), and make each differentiable floating
   point output require grad with the node as its ``grad_fn``.

The kernel's Python signature is the schema's (generated source, like the core's call
functions), because the dispatcher passes arguments by name; the argument tuple then goes to
one generic routine. In-place ops additionally refuse leaves that require grad, clone
``self`` first when the formula needs its old value, and move ``self``'s history onto the new
node (for a view of a tensor that requires grad, its base's history: :class:`CopySlices`).
``out=`` overloads refuse arguments that require grad, as PyTorch does, and so do tensor
inputs without a formula (:func:`check_no_requires_grad`). Ops with no formula get
:func:`not_implemented_kernel`: the call works, and backward through it raises an error naming
the op.

Every op's kernel is registered ``per_keyset=True`` (Note [Per-key-set kernels] in
tensorplug's dispatcher): a factory makes the kernel of each key set. Ops with plain ``Tensor``
(or ``Tensor?``) arguments and one output get a leaner kernel (:func:`_fast_factory`): the
kernel below autograd for its key set is bound when it is made, as the dispatch cache gives it,
without the guard of step 1 when it promises not to dispatch (Note [Kernels that do not
dispatch] in array_backend, :func:`_below_for`); and it records inline, unrolled over the op's
arguments (:func:`_record_source`). The other kernels get their key set bound.
"""

from __future__ import annotations

import functools
import keyword
import textwrap
import types
from collections.abc import Callable, Sequence
from typing import Any

from tensorplug import dispatcher
from tensorplug import dtypes as _dtypes
from tensorplug.dispatch import local_state
from tensorplug.dispatcher import OpOverload
from tensorplug.errors import DispatchError, RegistrationError
from tensorplug.library import fallthrough_kernel, is_no_dispatch, mark_boxed
from tensorplug.tensor import Tensor

from . import formulas as _formulas
from .graph import (
    AutogradMeta,
    M,
    Node,
    SavedTensor,
    _sequence,
    edge,
    input_meta,
    leaf_edge,
    leaf_input_meta,
    refresh_view,
    set_history,
    tensors_in,
    with_autograd_bits,
)
from .nodes import NOT_SAVED, OpNode, saved_view_class

__all__ = ["register_all", "not_implemented_kernel", "autograd_not_implemented_fallback"]


def camel(op_name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in op_name.strip("_").split("_"))


class Rule:
    """What an op's autograd kernel and node need to know, computed once per op."""

    def __init__(
        self, op: OpOverload, table: dict[str | tuple[str, ...], Callable[..., Any]] | None
    ):
        s = op.schema
        self.op = op
        self.name = op.name
        self.schema = s
        args = s.arguments
        self.arg_names = tuple(a.name for a in args)
        self.index = {a.name: i for i, a in enumerate(args)}
        self.npos = len(s.positional)
        self.kw_names = tuple(a.name for a in s.kwarg_only)
        self.tensor_args = tuple((i, a.tensor_kind) for i, a in enumerate(args) if a.tensor_kind)
        self.returns = s.returns
        self.return_names = tuple(r.name or "" for r in s.returns)
        self.returns_list = (
            len(s.returns) == 1
            and str(s.returns[0].type).startswith("Tensor")
            and str(s.returns[0].type).endswith("[]")
        )
        self.n_out = len(s.returns)
        self.inplace = (
            bool(args) and args[0].is_write and not any(a.kwarg_only and a.is_write for a in args)
        )
        self.out = any(a.kwarg_only and a.is_write for a in args)
        first = s.returns[0] if s.returns else None
        self.view = (
            first is not None
            and first.annotation is not None
            and not first.annotation.is_write
            and not self.inplace
        )
        self.table = table or {}
        self.formulas: list[tuple[tuple[str, ...], Callable[..., Any]]] = []
        diff_names: list[str] = []
        for key, fn in self.table.items():
            names = key if isinstance(key, tuple) else (key,)
            for n in names:
                if n not in self.index:
                    raise ValueError(
                        f"formula of {self.name} names {n!r}, not an argument of its schema; "
                        f"key it by one of {list(self.arg_names)}"
                    )
                diff_names.append(n)
            self.formulas.append((names, fn))
        self.diff = tuple((i, k) for i, k in self.tensor_args if self.arg_names[i] in diff_names)
        # tensor inputs without a formula (weights of losses; indices and masks can never
        # require grad): PyTorch's check_no_requires_grad refuses them when they require grad
        self.no_grad_args = tuple(
            i
            for i, a in enumerate(args)
            if a.tensor_kind in ("Tensor", "Tensor?")
            and a.name not in diff_names
            and not (a.kwarg_only and a.is_write)
        )
        self.diff_idx = tuple(i for i, _ in self.diff)
        self.tensor_idx = tuple(i for i, _ in self.tensor_args)
        self.static_spans = {self.arg_names[i]: (j, 1) for j, i in enumerate(self.diff_idx)}
        used: set[str] = set()
        for fn in self.table.values():
            used |= _names_read(fn.__code__)
        self.used = frozenset(used)  # the names the formulas read (s.<name>)
        self.saved = frozenset(i for i, _ in self.tensor_args if self.arg_names[i] in used)
        self.saves_result = "result" in used or any(n and n in used for n in self.return_names)
        self.saves_self_before = self.inplace and "self" in used
        self.list_args = frozenset(
            a.name for a in args if a.tensor_kind in ("Tensor[]", "Tensor?[]")
        )
        # (names, fn, single): single when the formula gives one plain Tensor argument
        self.plan = tuple(
            (names, fn, len(names) == 1 and names[0] not in self.list_args)
            for names, fn in self.formulas
        )
        self.simple_out = self.n_out == 1 and not self.returns_list
        out_diff = _formulas.OUTPUT_DIFFERENTIABILITY.get(_short(self.name))
        self.out_diff = out_diff or (True,) * max(self.n_out, 1)
        self.node_cls: type[OpNode] = type(
            f"{camel(op.op_name)}Backward{_overload_number(op)}",
            (OpNode,),
            {
                "_rule": self,
                "__slots__": (),
                "_saves": bool(self.saved) or self.saves_result,
                "_spans": self.static_spans,  # what the fast kernel's calls have
            },
        )
        self.view_cls = saved_view_class(self, used)

    def call_below(self, ks: int, args: tuple[Any, ...]) -> Any:
        kw = {n: args[self.npos + j] for j, n in enumerate(self.kw_names)}
        st = local_state.masks
        old = st.nexc
        st.nexc = old & M.nag
        try:
            # int(ks): a DispatchKeySet's own ``&`` is Python code (Note [Masks are ints])
            return self.op.redispatch(M.below & int(ks), *args[: self.npos], **kw)
        finally:
            st.nexc = old


def _short(name: str) -> str:
    return name.split("::", 1)[1]


def _overload_number(op: OpOverload) -> int:
    """PyTorch numbers overloads of one op in declaration order: MulBackward0, MulBackward1."""
    from tensorplug import dispatcher

    same = [o for o in dispatcher.ops_in(op.namespace, op.op_name)]
    try:
        return same.index(op)
    except ValueError:
        return 0


def _names_read(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names_read(c)
    return names


# --- recording ----------------------------------------------------------------------------------


def _edges(
    rule: Rule, args: tuple[Any, ...]
) -> tuple[list[tuple[Node | None, int]], list[Any], dict[str, tuple[int, int]]]:
    edges: list[tuple[Node | None, int]] = []
    metas: list[Any] = []
    spans: dict[str, tuple[int, int]] = {}
    for i, kind in rule.diff:
        v = args[i]
        start = len(edges)
        if kind in ("Tensor[]", "Tensor?[]"):
            for x in v:
                if x is None:
                    edges.append((None, 0))
                    metas.append(None)
                else:
                    edges.append(edge(x))
                    metas.append(input_meta(x))
        elif v is None:
            edges.append((None, 0))
            metas.append(None)
        else:
            edges.append(edge(v))
            metas.append(input_meta(v))
        spans[rule.arg_names[i]] = (start, len(edges) - start)
    return edges, metas, spans


def _saved_args(rule: Rule, args: tuple[Any, ...], before: Tensor | None) -> tuple[Any, ...]:
    out = list(args)
    for i, kind in rule.tensor_args:
        v = args[i]
        if i not in rule.saved:
            out[i] = NOT_SAVED if v is not None else None
        elif i == 0 and before is not None:
            out[i] = SavedTensor(before)
        elif kind in ("Tensor[]", "Tensor?[]"):
            out[i] = [None if x is None else SavedTensor(x) for x in v]
        elif v is not None:
            out[i] = SavedTensor(v)
    return tuple(out)


def _outputs(out: Any) -> list[Any]:
    if isinstance(out, Tensor):
        return [out]
    return list(out)


def record(
    rule: Rule, out: Any, args: tuple[Any, ...], before: Tensor | None = None
) -> Node | None:
    """Step 2 of Note [Autograd kernel]: the node for this call, if an input requires grad."""
    edges, metas, spans = _edges(rule, args)
    for n, _ in edges:
        if n is not None:
            break
    else:
        return None
    node = rule.node_cls()
    node.next_functions = tuple(edges)
    node._input_meta = tuple(metas)
    node._spans = spans
    node._args = _saved_args(rule, args, before)
    outs = _outputs(out)
    node._n_out = len(outs)
    node._out_meta = tuple(input_meta(t) if isinstance(t, Tensor) else None for t in outs)
    diff = rule.out_diff
    for nr, t in enumerate(outs):
        if (
            isinstance(t, Tensor)
            and (diff[nr] if nr < len(diff) else diff[-1])
            and t.tp_dtype.is_floating_point
        ):
            set_history(t, node, nr)
    if rule.saves_result:
        saved = [SavedTensor(t, nr) if isinstance(t, Tensor) else t for nr, t in enumerate(outs)]
        if isinstance(out, Tensor):
            node._result = saved[0]
        elif isinstance(out, list):
            node._result = saved
        else:
            node._result = tuple(saved)
    else:
        node._result = None
    return node


def check_no_requires_grad(rule: Rule, args: tuple[Any, ...]) -> None:
    for i in rule.no_grad_args:
        t = args[i]
        if t is not None and t.tp_keyset & M.ag:
            raise RuntimeError(
                f"The function '{rule.op.op_name}' is not differentiable with respect to "
                f"argument '{rule.arg_names[i]}'. This input cannot have requires_grad True. "
                f"Pass {rule.arg_names[i]}.detach() if its gradient is not needed."
            )


def run(rule: Rule, ks: int, args: tuple[Any, ...]) -> Any:
    """An out-of-place op: Note [Autograd kernel]."""
    if rule.no_grad_args:
        check_no_requires_grad(rule, args)
    out = rule.call_below(ks, args)
    record(rule, out, args)
    return out


# --- kernels ------------------------------------------------------------------------------------


def _usable_names(names: list[str]) -> bool:
    """Argument names a generated kernel can take as parameters (``_`` names are its own)."""
    return all(
        n.isidentifier() and not keyword.iskeyword(n) and not n.startswith("_") for n in names
    )


def source_parts(rule: Rule) -> tuple[str, str, str]:
    """For a kernel generated with the schema's signature (the dispatcher passes arguments by
    name): its parameter list, the arguments as a call passes them on, and as a tuple."""
    names = rule.arg_names
    pos, kw = names[: rule.npos], names[rule.npos :]
    params = ", ".join(["_ks", *pos, *(["*", *kw] if kw else [])])
    call = ", ".join([*pos, *(f"{n}={n}" for n in kw)])
    args = ", ".join(names) + ("," if len(names) == 1 else "")
    return params, call, args


def below_call_source(mask: str, call: str, indent: str) -> str:
    """Source setting ``_out`` to the op's result below ``_M.<mask>``: the kernel looked up in
    the op's dispatch cache (what the generated ``redispatch`` does, minus its argument checks,
    which the outer call made), except while dispatch tracing is on, so the trace shows it."""
    lines = (
        f"_b = _M.{mask} & _int(_ks)",
        "if _trace.enabled:",
        f"    _out = _op.redispatch(_b, {call})",
        "else:",
        "    _k = _get(_b)",
        "    if _k is None:",
        "        _k = _op.kernel_for(_b)",
        f"    _out = _k({call})",
    )
    return "".join(f"{indent}{line}\n" for line in lines)


def below_kernel(op: OpOverload, ks: int) -> Callable[..., Any]:
    """What the fast kernel calls for ``op`` below autograd, for its key set ``ks``: the
    kernel the dispatch cache gives for the keys below autograd, as it is when it does not
    dispatch (Note [Kernels that do not dispatch] in array_backend), else under the guard
    that excludes the autograd keys in this thread. Kept in the op's dispatch cache under
    ``-ks``, so every change of registrations drops it with the rest (Note [Derived cache
    entries] in tensorplug's dispatcher)."""

    def derive() -> Callable[..., Any]:
        k = op.kernel_for(M.below & int(ks))
        return k if is_no_dispatch(k) else _excluding(k)

    return op.derived_kernel(ks, derive)


def _excluding(k: Callable[..., Any]) -> Callable[..., Any]:
    def below_autograd(*args: Any, **kwargs: Any) -> Any:
        st = local_state.masks
        old = st.nexc
        st.nexc = old & M.nag
        try:
            return k(*args, **kwargs)
        finally:
            st.nexc = old

    return below_autograd


def compile_kernel(
    rule: Rule, params: str, body: str, names: dict[str, Any], what: str, module: str
) -> Callable[..., Any]:
    """``def kernel(<params>): <body>`` compiled with ``names`` (and what every generated
    kernel reads) as its globals, named ``<what>_kernel[<op>]``."""
    ns: dict[str, Any] = {
        "_M": M, "_int": int, "_op": rule.op, "_get": rule.op.kernel_cache.get,
        "_trace": dispatcher.trace_state, "_rule": rule, **names
    }  # fmt: skip
    exec(compile(f"def kernel({params}):\n{body}", f"<tensorplug {what} {rule.name}>", "exec"), ns)
    fn: Callable[..., Any] = ns["kernel"]
    fn.__qualname__ = f"{what}_kernel[{rule.name}]"
    fn.__module__ = module
    return fn


def _generated(rule: Rule, body: Callable[[Rule, int, tuple[Any, ...]], Any]) -> Callable[..., Any]:
    """A kernel whose signature is the schema's, passing ``(ks, args)`` to ``body``."""
    if not _usable_names(list(rule.arg_names)):

        def generic(ks: int, *args: Any, **kwargs: Any) -> Any:
            # names like uniform_'s ``from`` cannot be parameters: bind, then flatten the
            # positional values and the keyword-only ones (in schema order) as the body expects
            pos, kw = rule.schema.bind(args, kwargs, rule.name)
            return body(rule, ks, (*pos, *kw.values()))

        return generic
    params, _, args = source_parts(rule)
    return compile_kernel(
        rule,
        params,
        f"    return _body(_rule, _ks, ({args}))\n",
        {"_body": body},
        "autograd",
        __name__,
    )


def _fast_factory(rule: Rule) -> Callable[..., Any] | None:
    """A leaner kernel for the common shape: plain ``Tensor`` or ``Tensor?`` arguments, one
    output (views included: their ADInplaceOrView kernel, below, records the view), made per
    key set (Note [Per-key-set kernels] in tensorplug's dispatcher): the factory binds the
    kernel below autograd (:func:`_below_for`), and the kernel records inline
    (:func:`_record_source`). In-place ops: Note [In-place fast kernel]."""
    if rule.out or rule.returns_list or rule.n_out != 1:
        return None
    names = rule.arg_names
    if not _usable_names(list(names)):
        return None
    if any(k not in ("Tensor", "Tensor?") for _, k in rule.tensor_args):
        return None
    if rule.inplace:
        return _inplace_fast_factory(rule)
    params, call, args = source_parts(rule)
    optional = {i for i, k in rule.tensor_args if k == "Tensor?"}
    check = "".join(
        f"    if {'' if i not in optional else f'{names[i]} is not None and '}"
        f"{names[i]}.tp_keyset & _M.ag:\n        _check(_rule, ({args}))\n"
        for i in rule.no_grad_args
    )
    body = check + f"    _out = _k({call})\n" + _recording_tail(rule, "")
    return _per_keyset_factory(rule, params, body, {"_check": check_no_requires_grad})


def _recording_tail(rule: Rule, after: str) -> str:
    """The fast kernels' end: the requires-grad test, the inline recording, ``after`` (lines
    run when it recorded), and ``return _out``."""
    return (
        _requires_grad_source(rule, "    ", bound=True)
        + f"    if {' or '.join(f'_a{j}' for j in range(len(rule.diff_idx))) or '0'}:\n"
        + _record_source(rule, tested=True, bound=True)
        + after
        + "    return _out\n"
    )


def _per_keyset_factory(
    rule: Rule, params: str, body: str, names: dict[str, Any]
) -> Callable[..., Any]:
    """The ``per_keyset`` factory (Note [Per-key-set kernels] in tensorplug's dispatcher) of a
    fast kernel: it binds the kernel below autograd (``_k``) and the masks (``_ag``, ``_wag``)
    for the key set, and defines ``kernel(<the schema's parameters>): <body>``."""
    inner = params.removeprefix("_ks").removeprefix(", ")
    kernel = f"    def kernel({inner}):\n" + textwrap.indent(body, "    ")
    _, call, _ = source_parts(rule)
    positional = ", ".join(rule.arg_names)
    if call != positional:  # keyword-only arguments: Note [Positional calls below autograd]
        assert body.count(f"_k({call})") == 1, body
        kernel = (
            "    if _positional(_k, _names):\n"
            + textwrap.indent(kernel.replace(f"_k({call})", f"_k({positional})"), "    ")
            + "    else:\n"
            + textwrap.indent(kernel, "    ")
        )
    factory = (
        "    _k = _below_for(_rule, _int(_keyset))\n"
        # the masks change with the keys only, which empties every cache (Note [Masks are ints])
        "    _ag, _wag = _M.ag, _M.with_ag\n"
        + kernel
        + "    kernel.__qualname__ = kernel.__name__ = _name\n"
        "    return kernel\n"
    )
    names_used: dict[str, Any] = {
        "_below_for": _below_for,
        "_positional": takes_positionally,
        "_names": tuple(rule.arg_names),
        "_name": f"autograd_kernel[{rule.name}]",
        **names,
        **_record_names(rule),
    }
    return compile_kernel(rule, "_op_, _keyset", factory, names_used, "autograd", __name__)


def takes_positionally(k: Callable[..., Any], names: tuple[str, ...]) -> bool:
    """Note [Positional calls below autograd]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    The dispatcher passes an op's keyword-only arguments (``add``'s ``alpha``) by keyword, so
    every kernel may declare them keyword-only. A call with keywords costs CPython 3.11 about
    30 ns more than the same call with positions alone (it binds the names, and the call site
    cannot specialize), which a tiny op pays at every layer. So the fast kernel, made per key
    set, looks at the kernel below autograd it binds: a plain Python function whose positional
    parameters are the schema's arguments, in order and nothing more (the array kit's binary
    kernels: ``binary(self, other, alpha=1)``), is called with all of them positionally;
    any other callable gets the dispatcher's convention."""
    code = getattr(k, "__code__", None)
    return (
        type(k) is types.FunctionType
        and code is not None
        and code.co_argcount == len(names)
        and code.co_varnames[: len(names)] == names
    )


def _inplace_fast_factory(rule: Rule) -> Callable[..., Any] | None:
    """Note [In-place fast kernel]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    An in-place op (``y.add_(1)``, ``y.relu_()``) on a tensor that has a history and is no
    view (neither of a tensor with history nor of a plain one) needs none of what
    ``views.run_inplace`` does besides the call and the recording: no leaf or view checks, no
    ``CopySlices``, no views to follow. Its kernel, made per key set like the out-of-place fast
    kernel, tests exactly that (``grad_fn`` set, no ``view``, no ``tp_base``) and otherwise
    calls the generic kernel. It calls the kernel below autograd, bumps the version counter (as
    ``run_inplace`` does, before saving the result), records inline (the written tensor keeps
    its meta, which takes the new ``grad_fn``), and has the arguments it saved that share the
    written tensor's version counter remember the version from before the write, as
    ``run_inplace`` does. Ops that save ``self`` as it was before the write (a clone), or refuse
    arguments that require grad, keep the generic kernel."""
    if rule.saves_self_before or rule.no_grad_args or rule.arg_names[0] != "self":
        return None
    params, call, _ = source_parts(rule)
    body = (
        "    _m = self.tp_autograd\n"
        "    if _m is None or _m.grad_fn is None or _m.view is not None or self.tp_base is not None:\n"
        f"        return _generic(_keyset, {call})\n"
        "    _c = self.tp_version\n"
        "    _v0 = _c.value\n"
        f"    _out = _k({call})\n"
        "    if _c.value == _v0:\n"
        "        _c.value = _v0 + 1\n"
        + _recording_tail(rule, "        _before(_n, _c, _v0)\n" if rule.saved else "")
    )
    from .views import run_inplace, saved_before_write

    generic = _generated(rule, run_inplace)
    return _per_keyset_factory(
        rule, params, body, {"_generic": generic, "_before": saved_before_write}
    )


def _below_for(rule: Rule, ks: int) -> Callable[..., Any]:
    """What the fast kernel of key set ``ks`` calls below autograd: the kernel the dispatch
    cache gives for the keys below autograd, as it is when it does not dispatch (Note [Kernels
    that do not dispatch] in array_backend), else under the guard that excludes the autograd
    keys in this thread. While dispatch tracing is on, and when no kernel is there (the call
    then raises the dispatcher's error), it redispatches instead, which the trace shows."""
    if not dispatcher.trace_state.enabled:
        try:
            k = rule.op.kernel_for(M.below & ks)
        except (DispatchError, RegistrationError):
            k = None
        if k is not None:
            return k if is_no_dispatch(k) else _excluding(k)
    kw_names = rule.kw_names

    def redispatch(*args: Any, **kwargs: Any) -> Any:
        return rule.call_below(ks, (*args, *(kwargs[n] for n in kw_names)))

    return redispatch


def record_function(rule: Rule) -> Callable[..., Any]:
    """``record(out, <the op's arguments>) -> node``: the recording of the fast kernel
    (:func:`_record_source`) as a function, for hand-written kernels that compute their
    output another way (fused.py); it records nothing and returns None when no differentiable
    input requires grad."""
    names = rule.arg_names
    test = f"    if not ({' or '.join(f'_a{j}' for j in range(len(rule.diff_idx))) or '0'}):\n"
    src = textwrap.indent(textwrap.dedent(_record_source(rule, tested=True)), "    ")
    return compile_kernel(
        rule, ", ".join(["_out", *names]),
        _requires_grad_source(rule, "    ") + test + "        return None\n" + src
        + "    return _n\n",
        _record_names(rule), "record", __name__,
    )  # fmt: skip


def _args_source(rule: Rule, saved: list[str]) -> str:
    """The expression of a node's ``_args`` (what :func:`_record_source` saves, one entry per
    argument). When it saves no tensor and its other arguments have their defaults (``add``
    without ``alpha``), the node takes the tuple ``_ARGS`` made once (:func:`_default_args`),
    each default bound as ``_DARG<i>``."""
    built = f"({', '.join(saved)}{',' if len(saved) == 1 else ''})"
    const = _default_args(rule)
    if const is None:
        return built
    given = [n for i, n in enumerate(rule.arg_names) if i not in rule.tensor_idx]
    if not given:
        return "_ARGS"
    test = " and ".join(f"{n} is _DARG{rule.index[n]}" for n in given)
    return f"_ARGS if {test} else {built}"


def _default_args(rule: Rule) -> tuple[Any, ...] | None:
    """The ``_args`` of a node whose op saves no tensor and whose other arguments (two at most)
    all have their schema defaults; ``None`` where an op saves a tensor (or a ``Tensor?``,
    saved as ``None`` or not), or has other arguments without a default."""
    if rule.saved or any(k == "Tensor?" for _, k in rule.tensor_args):
        return None
    args = rule.schema.arguments
    others = [a for i, a in enumerate(args) if i not in rule.tensor_idx]
    if len(others) > 2 or not all(a.has_default for a in others):
        return None
    return tuple(NOT_SAVED if i in rule.tensor_idx else a.default_value for i, a in enumerate(args))


def _record_names(rule: Rule) -> dict[str, Any]:
    """The globals of the recording source (:func:`_record_source`)."""
    args = _default_args(rule)
    return {
        "_ARGS": args,
        **{f"_DARG{i}": v for i, v in enumerate(args or ()) if i not in rule.tensor_idx},
        "_new": object.__new__,
        "_Node": rule.node_cls,
        "_Meta": AutogradMeta,
        "_Saved": SavedTensor,
        "_NS": NOT_SAVED,
        "_NO": _NO_EDGE,
        "_leaf": leaf_edge,
        "_leaf_meta": leaf_input_meta,
        "_with_ag": with_autograd_bits,
        "_refresh": refresh_view,
        "_FLOATING": _FLOATING,
        "_next": next,
        "_seqs": _sequence,
    }


_FLOATING = frozenset(d for d in _dtypes.all_dtypes() if d.is_floating_point)


def _requires_grad_source(rule: Rule, indent: str, bound: bool = False) -> str:
    """Source setting ``_a<j>`` to the ``Autograd<B>`` bits of the j-th differentiable input
    (0 for ``None``): the fast kernel records when one is set, and the edges read them again
    (each key set is ``&``-ed once: key sets are ints of three digits, Note [Autocast
    bits]). ``bound``: ``_ag`` is bound already (a per-key-set kernel's closure)."""
    optional = {i for i, k in rule.tensor_args if k == "Tensor?"}
    lines = [] if bound else ["_ag = _M.ag"]
    for j, i in enumerate(rule.diff_idx):
        t = rule.arg_names[i]
        none = f" if {t} is not None else 0" if i in optional else ""
        lines.append(f"_a{j} = {t}.tp_keyset & _ag{none}")
    return "".join(f"{indent}{line}\n" for line in lines)


def _record_source(rule: Rule, tested: bool = False, bound: bool = False) -> str:
    """What :func:`record` does for an op with plain ``Tensor`` (or ``Tensor?``) arguments and
    one output, as source unrolled over its arguments: the fast kernel inlines it (no call, no
    loops, no lists turned into tuples). ``tested``: the source of
    :func:`_requires_grad_source` ran before it (the fast kernel's test), else it starts with
    it. ``bound``: ``_wag`` is ``M.with_ag``, bound (a per-key-set kernel's closure)."""
    names = rule.arg_names
    optional = {i for i, k in rule.tensor_args if k == "Tensor?"}
    lines = [] if tested else _requires_grad_source(rule, "        ").splitlines()
    wag = "_wag" if bound else "_M.with_ag"
    edges, metas = [], []
    for j, i in enumerate(rule.diff_idx):
        t = names[i]
        meta = f"({t}.tp_data.shape, {t}.tp_dtype, {t}.tp_device)"
        kept = any(f"{t}{suffix}" in rule.used for suffix in ("_shape", "_dtype", "_device"))
        if kept:  # the formulas read it: kept for every input
            given: list[str] = []
            leaf: list[str] = []
            first: list[str] = []
            none: list[str] = []
            metas.append(meta if i not in optional else f"_i{j}")
        else:  # read for a gradient to give only: set where the edge is known
            given, none = [f"_i{j} = {meta}"], [f"_i{j} = None"]
            # a leaf's is kept while its data is the same array (Note [Graph edges]); made
            # and kept on the leaf's first use
            leaf = [f"_i{j} = _m.leaf_meta if _m.data_ref() is {t}.tp_data else _leaf_meta({t})"]
            first = [f"_i{j} = _leaf_meta({t})"]
            metas.append(f"_i{j}")
        block = [
            f"_m = {t}.tp_autograd",
            "if _m is None:",
            f"    if _a{j}:",
            f"        _e{j} = _leaf({t})",
            *(f"        {x}" for x in first),
            "    else:",
            f"        _e{j} = _NO",
            *(f"        {x}" for x in none),
            "elif _m.grad_fn is not None:",
            f"    if _m.view is not None and {t}.tp_version.value != _m.view.version:",
            f"        _refresh({t}, _m)  # Note [Stale views] in views.py",
            f"    _e{j} = (_m.grad_fn, _m.output_nr)",
            *(f"    {x}" for x in given),
            f"elif _a{j}:",
            f"    _e{j} = _m.acc_edge or _leaf({t})",
            *(f"    {x}" for x in leaf),
            "else:",
            f"    _e{j} = _NO",
            *(f"    {x}" for x in none),
        ]
        if i in optional:  # None, or a tensor: the same edge inline
            block = [
                f"if {t} is None:",
                f"    _e{j} = _NO",
                f"    _i{j} = None",
                "else:",
                *([f"    _i{j} = {meta}"] if kept else []),
                *(f"    {x}" for x in block),
            ]
        lines += [f"        {x}" for x in block]
        edges.append(f"_e{j}")
    saved = []
    for i, n in enumerate(names):
        if i not in rule.tensor_idx:
            saved.append(n)
        elif i in optional:
            saved.append(
                f"(_Saved({n}) if {n} is not None else None)"
                if i in rule.saved
                else f"(_NS if {n} is not None else None)"
            )
        elif i in rule.saved:
            saved.append(f"_Saved({n})")
        else:
            saved.append("_NS")
    one = "," if len(edges) == 1 else ""
    lines += [
        "        _n = _new(_Node)",
        f"        _n.next_functions = ({', '.join(edges)}{one})",
        f"        _n._input_meta = ({', '.join(metas)}{one})",
        "        _n._seq = _next(_seqs)",
        f"        _n._args = {_args_source(rule, saved)}",
        "        if _out.tp_dtype in _FLOATING:",
        *(
            [
                "            _m = _out.tp_autograd",
                "            if _m is None:",
                "                _m = _out.tp_autograd = _Meta()",
                "            _m.grad_fn = _n",
                "            _m.output_nr = 0",
            ]
            # a view's ADInplaceOrView kernel may have given it its view state; an in-place
            # op's output is its input, whose meta stays
            if rule.view or rule.inplace
            else [  # a new tensor: no state yet, and output_nr's default is 0
                "            _m = _out.tp_autograd = _Meta()  # Note [Autograd state of a tensor]",
                "            _m.grad_fn = _n",
            ]
        ),
        # a subscript, not ``.get``: no call (about 30 ns less); a key set's first output
        # misses and fills the dict
        "            try:",
        f"                _out.tp_keyset = {wag}[_out.tp_keyset]",
        "            except KeyError:",
        "                _out.tp_keyset = _with_ag(_out)",
    ]
    if rule.saves_result:
        lines.append("        _n._result = _Saved(_out, 0)")
    return "\n".join(lines) + "\n"


_NO_EDGE = (None, 0)


def _out_error(rule: Rule, ks: int, args: tuple[Any, ...]) -> Any:
    raise RuntimeError(
        f"{rule.name}(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad. Call it under tp.no_grad(), "
        "or use the functional form."
    )


def kernel_for(rule: Rule) -> Callable[..., Any]:
    if rule.out:
        return _generated(rule, _out_error)
    if rule.inplace:
        from .views import run_inplace

        return _generated(rule, run_inplace)
    return _generated(rule, run)


def factory_for(rule: Rule) -> Callable[..., Any]:
    """The ``per_keyset`` factory of the op's Autograd kernel: the fast kernel's
    (:func:`_fast_factory`), else the kernel of :func:`kernel_for` with the key set bound."""
    fast = _fast_factory(rule)
    if fast is not None:
        return fast
    kernel = kernel_for(rule)

    def factory(op: OpOverload, ks: int) -> Callable[..., Any]:
        return functools.partial(kernel, ks)

    return factory


# --- ops without a formula ----------------------------------------------------------------------


class NotImplementedNode(Node):
    """Backward of an op with no derivative: raises, naming the op."""

    __slots__ = ("_op_name", "_n_out")

    def __init__(self, op_name: str) -> None:
        super().__init__()
        self._op_name = op_name

    def name(self) -> str:
        return "NotImplemented"

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        raise RuntimeError(
            f"the derivative for '{self._op_name}' is not implemented: it ran with inputs that "
            "require grad, and backward reached it. Register one with "
            f"tp.library.register_autograd('{self._op_name}', backward, setup_context=...), or "
            "an Autograd kernel, or compute it under tp.no_grad()."
        )


def not_implemented_kernel(op: Any, ks: int, *args: Any, **kwargs: Any) -> Any:
    """Boxed: run ``op`` below autograd; outputs get a :class:`NotImplementedNode`."""
    st = local_state.masks
    old = st.nexc
    st.nexc = old & M.nag
    try:
        out = op.redispatch(M.below & int(ks), *args, **kwargs)
    finally:
        st.nexc = old
    inputs = [t for a in (*args, *kwargs.values()) for t in tensors_in(a)]
    edges = [edge(t) for t in inputs if t.tp_keyset & M.ag]
    if not edges:
        return out
    node = NotImplementedNode(op.name)
    node.next_functions = tuple(edges)
    node._input_meta = tuple(None for _ in edges)
    outs = _outputs(out) if isinstance(out, (Tensor, list, tuple)) else []
    node._n_out = max(len(outs), 1)
    for nr, t in enumerate(outs):
        if isinstance(t, Tensor) and t.tp_dtype.is_floating_point:
            set_history(t, node, nr)
    return out


mark_boxed(not_implemented_kernel)


def autograd_not_implemented_fallback() -> Callable[..., Any]:
    """The kernel to register for ``Autograd`` on an op without a derivative (PyTorch's name)::

        lib.impl("myop", tp.autograd.autograd_not_implemented_fallback(), "Autograd")

    Calls run normally; a backward pass that reaches the op raises an error naming it.
    """
    return not_implemented_kernel


# --- registration -------------------------------------------------------------------------------


RULES: dict[str, Rule] = {}


def _functional_name(name: str) -> str | None:
    """``add_.Tensor`` -> ``add.Tensor``; ``add.out`` -> ``add.Tensor``; else None.

    An in-place overload pairs with the functional one of the same arguments, as in torchgen:
    ``pow_.Scalar(self, Scalar exponent)`` is the in-place ``pow.Tensor_Scalar``, not
    ``pow.Scalar(Scalar self, Tensor exponent)``.
    """
    op_name, _, overload = name.partition(".")
    if op_name.endswith("_") and not op_name.startswith("_"):
        base = op_name[:-1]
        for cand in (f"{base}.{overload}" if overload else base, f"{base}.Tensor_{overload}"):
            if _find(cand) and _same_arguments(name, cand):
                return cand
        return None
    if overload == "out":
        for cand in (f"{op_name}.Tensor", op_name):
            if _find(cand):
                return cand
    return None


def _same_arguments(a: str, b: str) -> bool:
    """Whether overloads ``a`` and ``b`` take the same arguments (alias annotations aside)."""

    def signature(short: str) -> list[tuple[str, Any, bool]]:
        schema = dispatcher.find_op(f"aten::{short}").schema
        return [(x.name, x.type, x.kwarg_only) for x in schema.arguments]

    return signature(a) == signature(b)


def _find(short: str) -> bool:
    try:
        dispatcher.find_op(f"aten::{short}")
        return True
    except Exception:
        return False


def register_all(lib: Any) -> int:
    """Register the Autograd kernel (or fallthrough) of every standard op; returns the count."""
    count = 0
    for op in dispatcher.ops_in("aten"):
        if core_composite(op):
            continue
        short = _short(op.name)
        if short.endswith(".default"):
            short = short[: -len(".default")]
        if short in _formulas.NON_DIFFERENTIABLE:
            lib.impl(op, fallthrough_kernel, "Autograd")
            count += 1
            continue
        table = _formulas.FORMULAS.get(short)
        functional = None
        if table is None:
            functional = _functional_name(short)
            if functional is not None:
                if functional in _formulas.NON_DIFFERENTIABLE:
                    lib.impl(op, fallthrough_kernel, "Autograd")
                    count += 1
                    continue
                table = _formulas.FORMULAS.get(functional)
        if table is None:
            continue  # the fallback: works forward, raises on backward

        def build(
            op: OpOverload = op, table: Any = table, functional: str | None = functional
        ) -> Callable[..., Any]:
            rule = Rule(op, table)
            if functional is not None and not rule.inplace:
                rule.out = True
            RULES[op.name] = rule
            return factory_for(rule)

        register_lazily(lib, op, "Autograd", build, "autograd", per_keyset=True)
        count += 1
    return count


def core_composite(op: OpOverload) -> bool:
    """Whether ``op`` is one of the core's CompositeImplicitAutograd ops: it decomposes into
    ops that record themselves, so it needs no kernel of this plugin."""
    return (
        op.has_kernel("CompositeImplicitAutograd")
        and dispatcher.registrations(op)["CompositeImplicitAutograd"] == "tensorplug"
    )


def register_lazily(
    lib: Any,
    op: OpOverload,
    key: str,
    build: Callable[[], Callable[..., Any]],
    what: str,
    per_keyset: bool = False,
) -> None:
    """Register the kernel ``build()`` makes for ``op`` on ``key``, built on its first call:
    building a Rule and compiling a kernel for every op costs about 30 ms, which ``import
    tensorplug`` would pay although most programs call a few dozen ops (Note [Lazy kernels] in
    tensorplug's library). ``per_keyset``: ``build()`` makes a factory of the kernel of each key
    set (Note [Per-key-set kernels] in tensorplug's dispatcher), else a ``with_keyset`` kernel."""
    build.__qualname__ = f"{what}_kernel[{op.name}]"
    build.__module__ = __name__
    lib.impl(op, build, key, with_keyset=not per_keyset, lazy=True, per_keyset=per_keyset)
