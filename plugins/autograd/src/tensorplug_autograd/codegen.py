"""Code generation of the autograd kernels: the sources of the per-key-set kernels, compiled
through ``tensorplug.codegen`` (Note [Visible generated code] in the core), so that tracebacks,
debuggers and ``tp.dispatcher.source`` show their lines under a stable filename per op:
``<tensorplug: autograd aten::add.Tensor>``.

Every op's Autograd kernel is registered ``per_keyset=True`` (Note [Per-key-set kernels] in
tensorplug's dispatcher): a factory makes the kernel of each key set. Ops with plain ``Tensor``
(or ``Tensor?``) arguments and one output get a lean kernel (:func:`fast_factory`): the kernel
below autograd for its key set is bound when it is made, as the dispatch cache gives it,
without the guard of Note [Autograd kernel]'s step 1 when it promises not to dispatch (Note
[Kernels that do not dispatch] in array_backend, :func:`_below_for`); and it records inline,
unrolled over the op's arguments (:func:`record_source`). The other kernels (:func:`generated`)
take the schema's signature and hand the argument tuple to a plain Python body
(``recording.run``, ``inplace.run_inplace``). reference.py holds the per-key-set kernel written
as plain Python, which the tests run beside the generated one.
"""

from __future__ import annotations

import keyword
import textwrap
import types
from collections.abc import Callable
from typing import Any

from tensorplug import dispatcher
from tensorplug import dtypes as _dtypes
from tensorplug.codegen import define
from tensorplug.dispatch import local_state
from tensorplug.dispatcher import OpOverload
from tensorplug.errors import DispatchError, RegistrationError
from tensorplug.library import is_no_dispatch

from .accumulate import leaf_edge, leaf_input_meta
from .graph import _sequence
from .inplace import run_inplace, saved_before_write
from .masks import M, with_autograd_bits
from .meta import AutogradMeta, refresh_view
from .nodes import NOT_SAVED
from .recording import check_no_requires_grad
from .rules import Rule
from .saved import SavedTensor

__all__ = [
    "below_call_source",
    "below_kernel",
    "compile_kernel",
    "fast_factory",
    "generated",
    "record_function",
    "source_parts",
    "takes_positionally",
    "usable_names",
]


def usable_names(names: list[str]) -> bool:
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


# the module the Autograd kernels are described and registered in (Note [Autograd kernel]): their
# __module__, as tp.dispatcher.explain shows it
KERNELS_MODULE = f"{__package__}.kernels"


def compile_kernel(
    rule: Rule,
    params: str,
    body: str,
    names: dict[str, Any],
    what: str,
    module: str,
    label: str | None = None,
) -> Callable[..., Any]:
    """``def kernel(<params>): <body>`` compiled with ``names`` (and what every generated
    kernel reads) as its globals, named ``<what>_kernel[<op>]``; its source is entered under
    the filename ``<tensorplug: <label>>``, by default ``<what> <op>`` (Note [Visible generated
    code] in the core)."""
    ns: dict[str, Any] = {
        "_M": M, "_int": int, "_op": rule.op, "_get": rule.op.kernel_cache.get,
        "_trace": dispatcher.trace_state, "_rule": rule, **names
    }  # fmt: skip
    fn = define(f"def kernel({params}):\n{body}", ns, label or f"{what} {rule.name}", "kernel")
    fn.__qualname__ = f"{what}_kernel[{rule.name}]"
    fn.__module__ = module
    return fn


def generated(
    rule: Rule, body: Callable[[Rule, int, tuple[Any, ...]], Any], label: str | None = None
) -> Callable[..., Any]:
    """A kernel whose signature is the schema's, passing ``(ks, args)`` to ``body``; ``label``
    names its source (:func:`compile_kernel`)."""
    if not usable_names(list(rule.arg_names)):

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
        KERNELS_MODULE,
        label,
    )


def fast_factory(rule: Rule) -> Callable[..., Any] | None:
    """A leaner kernel for the common shape: plain ``Tensor`` or ``Tensor?`` arguments, one
    output (views included: their ADInplaceOrView kernel, below, records the view), made per
    key set (Note [Per-key-set kernels] in tensorplug's dispatcher): the factory binds the
    kernel below autograd (:func:`_below_for`), and the kernel records inline
    (:func:`record_source`). In-place ops: Note [In-place fast kernel]."""
    if rule.out or rule.returns_list or rule.n_out != 1:
        return None
    names = rule.arg_names
    if not usable_names(list(names)):
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
        + record_source(rule, tested=True, bound=True)
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
    return compile_kernel(rule, "_op_, _keyset", factory, names_used, "autograd", KERNELS_MODULE)


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
    # the fast kernel's source takes the op's label (the traceback of a call shows it)
    generic = generated(rule, run_inplace, f"autograd generic {rule.name}")
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
    (:func:`record_source`) as a function, for hand-written kernels that compute their
    output another way (fused.py); it records nothing and returns None when no differentiable
    input requires grad."""
    names = rule.arg_names
    test = f"    if not ({' or '.join(f'_a{j}' for j in range(len(rule.diff_idx))) or '0'}):\n"
    src = textwrap.indent(textwrap.dedent(record_source(rule, tested=True)), "    ")
    return compile_kernel(
        rule, ", ".join(["_out", *names]),
        _requires_grad_source(rule, "    ") + test + "        return None\n" + src
        + "    return _n\n",
        _record_names(rule), "record", KERNELS_MODULE,
    )  # fmt: skip


def _args_source(rule: Rule, saved: list[str]) -> str:
    """The expression of a node's ``_args`` (what :func:`record_source` saves, one entry per
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
    """The globals of the recording source (:func:`record_source`)."""
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
        "_DIFFERENTIABLE": _DIFFERENTIABLE,
        "_next": next,
        "_seqs": _sequence,
    }


# the dtypes whose outputs get a history: floating point and complex (as PyTorch's
# isDifferentiableType)
_DIFFERENTIABLE = frozenset(d for d in _dtypes.all_dtypes() if d.is_floating_point or d.is_complex)


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


def record_source(rule: Rule, tested: bool = False, bound: bool = False) -> str:
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
            f"        _refresh({t}, _m)  # Note [Stale views] in inplace.py",
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
        "        if _out.tp_dtype in _DIFFERENTIABLE:",
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
