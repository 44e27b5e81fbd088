"""Python source from a graph: ``graph.code`` (what a replay runs) and the lowered form.

Both are compiled through the core's ``tensorplug.codegen`` (Note [Visible generated code]
there) under the labels ``graph <fn_name>`` and ``lowered <fn_name>``, so a traceback through a
replayed or compiled graph shows the line of the node that raised, and pdb can list it.

Note [Replay and lowering]
~~~~~~~~~~~~~~~~~~~~~~~~~~
``graph.code`` is a function with the traced function's parameters whose body calls
``tp.ops.<ns>.<op>.<overload>`` once per node: a replay (``graph(*args)``) runs exactly that
source, so every call binds its arguments and dispatches, and the replay follows whatever the
inputs are (another backend, tensors that require grad, batched tensors under vmap). Nodes the
trace saw with ``Autograd`` excluded (``no_grad``, the backward pass) run under the same
exclusion.

The lowered form (:func:`lowered_function`, used by ``tp.compile``) takes the flat tensor
leaves and calls, per node, the kernel the dispatch table chose for the node's key set
(``op.kernel_for``): no binding, no dispatch. A node runs below autograd when nothing that
leaves the function needs its autograd history, which is the case for a whole training step:
its backward is in the graph already. Only nodes whose outputs flow into an output that
required grad when traced keep the autograd kernel (a compiled forward whose loss the caller
backpropagates). A call that writes a tensor bumps its version counter once after the kernel,
unless the kernel did, as the dispatcher does, so version counters move as in eager mode (a
write into a list of tensors goes through ``op.redispatch`` to the same kernel instead).
"""

from __future__ import annotations

import keyword
import math
from collections.abc import Callable
from typing import Any

import tensorplug as tp
from tensorplug.codegen import define
from tensorplug.dispatch import local_state
from tensorplug.tensor import new_tensor

from . import _optree as optree
from .graph import Graph, Node, Value, _Keyword, _Shown, _shown_args, _shown_tree, op_label
from .recorder import M, path_text

__all__ = ["graph_function", "lowered_function", "namespace", "source"]


class _Names:
    """Code names of values and of the objects the code reads from its namespace."""

    def __init__(self, graph: Graph) -> None:
        self.of: dict[Value, str] = {}
        self.ns: dict[str, Any] = {"tp": tp}
        for v in graph.inputs:
            self.of[v] = v.name
        for v in graph.grads:
            assert v.source is not None
            self.of[v] = f"{v.source.name}_grad"
        for i, v in enumerate(graph.constants):
            self.of[v] = f"c{i}"
            self.ns[f"c{i}"] = v.tensor
        k = 0
        for n in graph.nodes:
            for o in n.outputs:
                if isinstance(o, Value) and o not in self.of:
                    self.of[o] = f"v{k}"
                    k += 1
        self._objects: dict[int, str] = {}

    def obj(self, x: Any) -> str:
        name = self._objects.get(id(x))
        if name is None:
            name = self._objects[id(x)] = f"o{len(self._objects)}"
            self.ns[name] = x
        return name

    def ref(self, x: Any, readable: bool) -> str:
        if isinstance(x, Value):
            return self.of[x]
        if isinstance(x, _Keyword):
            if keyword.iskeyword(x.name):
                return f"**{{{x.name!r}: {self.ref(x.value, readable)}}}"
            return f"{x.name}={self.ref(x.value, readable)}"
        if isinstance(x, list):
            return "[" + ", ".join(self.ref(v, readable) for v in x) + "]"
        if isinstance(x, tuple):
            return (
                "("
                + ", ".join(self.ref(v, readable) for v in x)
                + ("," if len(x) == 1 else "")
                + ")"
            )
        t = type(x)
        if x is None or t is bool or t is int or t is str:
            return repr(x)
        if t is float:
            if math.isnan(x):
                return "float('nan')"
            if math.isinf(x):
                return "float('inf')" if x > 0 else "float('-inf')"
            return repr(x)
        if t is complex:
            return f"complex({self.ref(x.real, readable)}, {self.ref(x.imag, readable)})"
        if readable and isinstance(x, tp.dtype):
            return f"tp.{str(x).rsplit('.', 1)[-1]}"
        if readable and isinstance(x, tp.device):
            return f"tp.device({str(x)!r})"
        return self.obj(x)


def _targets(n: Node, names: _Names) -> str:
    if n.out_form == "none":
        return ""
    outs = [names.of[o] if isinstance(o, Value) else "_" for o in n.outputs]
    if n.out_form == "one":
        return outs[0] + " = "
    if not outs:
        return ""
    return ", ".join(outs) + ("," if len(outs) == 1 else "") + " = "


def _exclusion(excluded: int) -> str:
    if excluded == M.ag:
        return '"Autograd"'
    return ", ".join(repr(n) for n in tp.keys.DispatchKeySet(excluded).names())


def _effects(graph: Graph, names: _Names, trusted: bool = False) -> list[str]:
    """The lines that apply the graph's effects; ``trusted``: a ``.grad`` through
    ``tp.autograd.graph.assign_grad`` (no checks), where the guards prove what the setter
    checked when traced (the lowered form)."""
    lines = []
    for e in graph.effects:
        target = names.of[e.target]
        if e.what == "grad":
            value = names.ref(e.value, True) if e.value is not None else "None"
            if trusted and hasattr(tp, "autograd"):
                names.ns["_assign_grad"] = tp.autograd.graph.assign_grad
                lines.append(f"_assign_grad({target}, {value})")
            else:
                lines.append(f"{target}.grad = {value}")
        else:
            lines.append(f"{target}.requires_grad_({e.value})")
    return lines


def _out_tree(graph: Graph, names: _Names) -> str:
    shown = [_Shown(names.ref(v, True)) for v in graph.out_leaves]
    tree = optree.tree_unflatten(graph.out_spec, shown)
    if _plain(tree):
        return _shown_tree(tree)
    names.ns["_out_spec"] = graph.out_spec
    return f"optree.tree_unflatten(_out_spec, [{', '.join(s.text for s in shown)}])"


def _plain(x: Any) -> bool:
    if isinstance(x, _Shown) or x is None:
        return True
    if type(x) in (list, tuple):
        return all(_plain(v) for v in x)
    if type(x) is dict:
        return all(_plain(v) for v in x.values())
    return not isinstance(x, list | tuple | dict)


def _build(graph: Graph, bind_ops: bool = False) -> tuple[str, dict[str, Any]]:
    """The source of ``graph.code`` and its namespace; ``bind_ops`` reads each operator from
    a name bound once (``_op3``) instead of through ``tp.ops`` on every call (the replay)."""
    names = _Names(graph)
    params = list(graph.arg_names)
    if graph.kwarg_names:
        params += ["*", *graph.kwarg_names.values()]
    body: list[str] = []
    for v in graph.inputs:
        base, path = v.accessor
        code_base = graph.arg_names[base] if isinstance(base, int) else graph.kwarg_names[base]
        if path and path[0][0] == "acc":
            expr = f"{names.obj(path[0][1])}({code_base})"
        else:
            expr = code_base + path_text(path)
        if expr != v.name:
            body.append(f"    {v.name} = {expr}")
    for g in graph.grads:
        assert g.source is not None
        body.append(f"    {names.of[g]} = {g.source.name}.grad")
    block = 0
    for n in graph.nodes:
        if n.excluded != block:
            block = n.excluded
            if block:
                body.append(f"    with tp.dispatch.exclude({_exclusion(block)}):")
        indent = "        " if block else "    "
        args = ", ".join(names.ref(a, True) for a in _shown_args(n))
        if bind_ops:
            ops_bound = names.ns.setdefault("_ops", {})
            name = ops_bound.setdefault(n.op, f"_op{len(ops_bound)}")
            names.ns[name] = n.op
            call = f"{name}({args})"
        else:
            call = f"{_op_path(n.op)}({args})"
        where = f"  # {_comment(n.where)}" if n.where else ""
        body.append(f"{indent}{_targets(n, names)}{call}{where}")
    body += ["    " + ln for ln in _effects(graph, names)]
    body.append(f"    return {_out_tree(graph, names)}")
    src = f"def {graph.fn_name}({', '.join(params)}):\n" + "\n".join(body) + "\n"
    names.ns["optree"] = optree
    return src, names.ns


def _attr(base: str, name: str) -> str:
    return (
        f"{base}.{name}"
        if name.isidentifier() and not keyword.iskeyword(name)
        else f"getattr({base}, {name!r})"
    )


def _op_path(op: Any) -> str:
    """``tp.ops.aten.add.Tensor`` (``getattr`` where a name is a Python keyword: ``from``)."""
    return _attr(_attr(_attr("tp.ops", op.namespace), op.op_name), op.overload_name)


def _comment(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)


def source(graph: Graph) -> str:
    """``graph.code``."""
    return _build(graph)[0]


def namespace(graph: Graph) -> dict[str, Any]:
    """``graph.globals()``: what ``graph.code`` reads besides its arguments."""
    return _build(graph)[1]


def graph_function(graph: Graph) -> Callable[..., Any]:
    """``graph.code`` compiled as the function a replay runs: each operator is read from a
    name bound once (``_op3``) instead of through ``tp.ops`` on every call."""
    src, ns = _build(graph, bind_ops=True)
    return define(src, ns, f"graph {graph.fn_name}", graph.fn_name)


# --- the lowered form ----------------------------------------------------------------------------


def autograd_nodes(graph: Graph) -> set[Node]:
    """The nodes whose autograd history an output that required grad when traced needs
    (Note [Replay and lowering])."""
    need: set[Value] = {
        v for v in graph.out_leaves if isinstance(v, Value) and v.meta.requires_grad
    }
    keep: set[Node] = set()
    for n in reversed(graph.nodes):
        if any(isinstance(o, Value) and o in need for o in n.outputs):
            keep.add(n)
            need.update(v for v in n.inputs if v.meta.requires_grad)
    return keep


def lowered_function(
    graph: Graph, guard: Callable[[_Names], list[str]] | None = None
) -> tuple[Callable[..., Any], list[tuple[Any, int, Any]]]:
    """The lowered form of ``graph``: a function of the flat tensor leaves of the inputs that
    returns the output (the leaf itself when the output is one leaf, else the tuple of flat
    leaves), and the (op, key set, kernel) it bound. ``guard(names)`` gives conditions (Python
    expressions over the parameters, the constants ``c<i>`` and the thread's masks ``_m``)
    checked first: when one fails the function returns ``MISS`` and runs nothing.

    Nodes whose kernel has a raw lowering for what the trace knows of their arguments run it
    on arrays (Note [Raw lowered calls])."""
    names = _Names(graph)
    keep = autograd_nodes(graph)
    ns = names.ns
    ns["_tls"] = local_state
    ns["MISS"] = MISS
    ns["_new"] = new_tensor
    bound: list[tuple[Any, int, Any]] = []
    body = ["    _m = _tls.masks"]
    conds = guard(names) if guard is not None else []
    if conds:
        body.append("    if not (\n        " + "\n        and ".join(conds) + "\n    ):")
        body.append("        return MISS")
    body += ["    _n = _m.nexc", "    try:"]
    for g in graph.grads:
        assert g.source is not None
        body.append(f"        {names.of[g]} = {g.source.name}.grad")
    plan = []
    for n in graph.nodes:
        kernel = None
        if n not in keep:
            ks = n.keyset & ~M.strip
            want = ~M.ag
            try:
                kernel = n.op.kernel_for(ks)
            except tp.DispatchError:  # only an Autograd kernel computes it: keep that one
                kernel = None
        if kernel is None:
            ks = n.keyset
            want = ~n.excluded
            kernel = n.op.kernel_for(ks)
        bound.append((n.op, ks, kernel))
        plan.append((ks, want, kernel, None if n in keep else raw_lowering(n, kernel)))
    raw = _raw_nodes(graph, [p[3] for p in plan])
    unshared = _unshared(graph, raw)
    arrays: dict[Value, str] = {}  # the values whose array a name holds now
    tensors = {*graph.inputs, *graph.grads, *graph.constants}  # the values a tensor name holds
    owned: dict[Value, list[str]] = {}  # the names to delete when a value dies
    dead_after = _dead_after(graph)
    mode: int | None = None
    for i, (n, (ks, want, kernel, lowering)) in enumerate(zip(graph.nodes, plan, strict=True)):
        if i in raw:
            assert lowering is not None
            fn = lowering[0]
            if i in unshared:
                fn = getattr(fn, "tp_unshared", fn)
            _raw_call(n, i, fn, lowering[1], raw[i], names, body, arrays, tensors, owned)
        else:
            if want != mode:
                mode = want
                ns[f"_X{i}"] = want
                body.append(f"        _m.nexc = _n & _X{i}")
            _kernel_call(n, i, ks, kernel, names, body)
            for o in n.outputs:
                if isinstance(o, Value):
                    tensors.add(o)
                    owned.setdefault(o, []).append(names.of[o])
            if n.mutates:  # it may have given a written tensor another array: read it again
                for v in n.inputs:
                    arrays.pop(v, None)
        dead = [x for v in dead_after[i] for x in owned.pop(v, ())]
        if dead:
            body.append(f"        del {', '.join(dead)}")
    if body[-1] == "    try:":
        body.append("        pass")
    body.append("    finally:")
    body.append("        _m.nexc = _n")
    body += ["    " + ln for ln in _effects(graph, names, trusted=True)]
    outs = [names.ref(v, False) for v in graph.out_leaves]
    if optree.treespec_is_leaf(graph.out_spec):
        body.append(f"    return {outs[0]}")
    else:
        body.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    params = [v.name for v in graph.inputs]
    src = f"def lowered({', '.join(params)}):\n" + "\n".join(body) + "\n"
    fn = define(src, ns, f"lowered {graph.fn_name}", "lowered")
    fn.__source__ = src  # type: ignore[attr-defined]
    return fn, bound


def _kernel_call(n: Node, i: int, ks: int, kernel: Any, names: _Names, body: list[str]) -> None:
    """The call of node ``i``'s kernel, on tensors (Note [Replay and lowering])."""
    ns = names.ns
    pos = [names.ref(a, False) for a in n.args]
    kws = [names.ref(_Keyword(k, v), False) for k, v in n.kwargs.items()]
    written = _written(n) if n.mutates else []
    if written is None:  # a written list or optional tensor: the dispatcher bumps them
        ns[f"r{i}"] = n.op.redispatch
        ns[f"K{i}"] = ks
        call = f"r{i}(K{i}, {', '.join([*pos, *kws])})"
    else:
        ns[f"f{i}"] = kernel
        call = f"f{i}({', '.join([*pos, *kws])})"
    # a write bumps the version counter once, as a dispatched call does (Note [Generated
    # call functions] in the core's _callgen.py): unless the kernel bumped it itself. The
    # counter is read again after the call, not held across it: a kernel may tell a tensor
    # with views by its counter's reference count (the autograd plugin's in-place kernels)
    for j, v in enumerate(written or ()):
        body.append(f"        _b{j} = {names.of[v]}.tp_version.value")
    body.append(f"        {_targets(n, names)}{call}")
    for j, v in enumerate(written or ()):
        body.append(f"        _c{j} = {names.of[v]}.tp_version")
        body.append(f"        if _c{j}.value == _b{j}: _c{j}.value = _b{j} + 1")


# Note [Raw lowered calls]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# A kernel may say how to compute its result from the arrays of its tensor arguments, for
# arguments like the traced ones (Note [Raw lowerings] in the core's array_backend/_kit.py):
# the checks its fast path makes on dtypes, devices and shapes are proven by the trace and the
# guards, once per call of the lowered function, not once per node. The lowered function then
# keeps such a node's result as an array (``a5``) and makes a tensor of it (``v5``, with the
# traced dtype and device) only where one is needed: an output, an effect (a ``.grad``), the
# argument of a node that runs its kernel. A view's array is kept only where no tensor of it
# is needed (a tensor view records its base: the kernel makes it). An in-place lowering
# writes the arrays of its tensors, and the lowered function bumps their version counters
# once, as the dispatcher would. Arrays of inputs and constants are read (``tp_data``) where
# first needed, and again after a kernel that writes them.


def raw_lowering(n: Node, kernel: Any) -> tuple[Any, int] | None:
    """``(fn, keyset)`` of the raw lowering of ``kernel`` for node ``n``'s arguments as
    traced, or None (Note [Raw lowered calls])."""
    lower = getattr(kernel, "tp_lower", None)
    if lower is None or n.out_form not in ("one", "none"):
        return None
    if any(v.kind == "grad" for v in n.inputs):  # a .grad read at run time: not guarded
        return None
    if n.mutates and _written_values(n) is None:
        return None
    args = [_described(a) for a in n.args]
    kwargs = {k: _described(v) for k, v in n.kwargs.items()}
    found: tuple[Any, int] | None = lower(*args, **kwargs)
    return found


def _described(x: Any) -> Any:
    if isinstance(x, Value):
        return x.meta
    if type(x) is list:
        return [_described(v) for v in x]
    return x


def _is_view(n: Node) -> bool:
    rets = n.op.schema.returns
    return not n.mutates and bool(rets) and rets[0].annotation is not None


def _raw_nodes(graph: Graph, lowerings: list[Any]) -> dict[int, bool]:
    """The nodes run by their raw lowering, each with whether a tensor of its output is
    needed (Note [Raw lowered calls]): the outputs and effects need tensors, and so does
    every argument of a node that runs its kernel; a view runs raw only where no tensor of it
    is needed, and a value written in place keeps its tensor (its version counter)."""
    need: set[Value] = {v for v in graph.out_leaves if isinstance(v, Value)}
    for e in graph.effects:
        need.add(e.target)
        if isinstance(e.value, Value):
            need.add(e.value)
    raw: dict[int, bool] = {}
    for i in range(len(graph.nodes) - 1, -1, -1):
        n = graph.nodes[i]
        out = n.outputs[0] if n.out_form == "one" and isinstance(n.outputs[0], Value) else None
        ok = lowerings[i] is not None
        if ok and out is not None and out in need and _is_view(n):
            ok = False
        if not ok:
            need.update(n.inputs)
            continue
        raw[i] = out is not None and out in need
        if n.mutates:
            need.update(_written_values(n) or ())
    return raw


def _unshared(graph: Graph, raw: dict[int, bool]) -> set[int]:
    """The raw nodes whose one tensor argument's array no one else holds or reads (Note [Raw
    lowered calls]): the output of a raw node that is no view and has no tensor, or a raw view
    of such an array, read by no later node; a copy there may be skipped (``tp_unshared``)."""
    index = {n: i for i, n in enumerate(graph.nodes)}
    last: dict[Value, int] = {}
    for i, n in enumerate(graph.nodes):
        for v in n.inputs:
            last[v] = i
    escaping = {v for v in graph.out_leaves if isinstance(v, Value)}
    for e in graph.effects:
        escaping.update(x for x in (e.target, e.value) if isinstance(x, Value))

    def owned_at(v: Value, i: int) -> bool:
        if v.kind != "node" or v.node is None or v in escaping or last.get(v) != i:
            return False
        j = index[v.node]
        n = v.node
        if j not in raw or raw[j] or n.mutates:
            return False
        if not _is_view(n):
            return True
        src = n.inputs
        return len(src) == 1 and owned_at(src[0], j)

    found = set()
    for i in raw:
        n = graph.nodes[i]
        ins = n.inputs
        if not n.mutates and len(ins) == 1 and ins.count(ins[0]) == 1 and owned_at(ins[0], i):
            found.add(i)
    return found


def _raw_call(n: Node, i: int, fn: Any, keyset: int, wrap: bool, names: _Names, body: list[str],
              arrays: dict[Value, str], tensors: set[Value],
              owned: dict[Value, list[str]]) -> None:  # fmt: skip
    """Node ``i`` by its raw lowering ``fn`` (Note [Raw lowered calls])."""
    ns = names.ns
    ns[f"L{i}"] = fn
    args = []

    def array_of(v: Value) -> str:
        name = arrays.get(v)
        if name is None:
            assert v in tensors, v
            name = arrays[v] = f"a_{names.of[v]}"
            body.append(f"        {name} = {names.of[v]}.tp_data")
            mine = owned.setdefault(v, []) if v.kind == "node" else []
            if v.kind == "node" and name not in mine:
                mine.append(name)
        return name

    for x in [*n.args, *n.kwargs.values()]:
        if isinstance(x, Value):
            args.append(array_of(x))
        elif type(x) is list and any(isinstance(v, Value) for v in x):
            args.append("[" + ", ".join(array_of(v) for v in x) + "]")
    call = f"L{i}({', '.join(args)})"
    if n.mutates:
        body.append(f"        {call}")
        for v in dict.fromkeys(_written_values(n) or ()):
            body.append(f"        {names.of[v]}.tp_version.value += 1")
        out = n.outputs[0] if n.out_form == "one" else None
        if isinstance(out, Value):  # the written tensor itself, under its own names
            src = n.args[0]
            assert isinstance(src, Value)
            if src in arrays:
                a = arrays[out] = f"a_{names.of[out]}"
                body.append(f"        {a} = {arrays[src]}")
                owned.setdefault(out, []).append(a)
            if src in tensors:
                body.append(f"        {names.of[out]} = {names.of[src]}")
                tensors.add(out)
                owned.setdefault(out, []).append(names.of[out])
        return
    if n.out_form == "none":
        body.append(f"        {call}")
        return
    out = n.outputs[0]
    assert isinstance(out, Value)
    a = arrays[out] = f"a_{names.of[out]}"
    owned.setdefault(out, []).append(a)
    body.append(f"        {a} = {call}")
    if wrap:
        m = out.meta
        ns[f"_D{i}_"], ns[f"_V{i}_"] = m.dtype, m.device
        body.append(f"        {names.of[out]} = _new({a}, _D{i}_, _V{i}_, {keyset})")
        tensors.add(out)
        owned[out].append(names.of[out])


def _dead_after(graph: Graph) -> list[list[Value]]:
    """Per node, the values node outputs that no later node, effect or output reads: the
    lowered form deletes them there, so an intermediate is freed as soon as eager execution
    would free it, not at the return (a training step's peak memory, and the fresh pages the
    allocator maps for it at every call, stay those of eager execution)."""
    last: dict[Value, int] = {}
    outer = {*graph.inputs, *graph.grads, *graph.constants}  # parameters and globals
    for i, n in enumerate(graph.nodes):
        for o in n.outputs:
            if isinstance(o, Value) and o not in outer:
                last[o] = i
        for v in n.inputs:
            if v in last:
                last[v] = i
    for e in graph.effects:
        for x in (e.target, e.value):
            if isinstance(x, Value):
                last.pop(x, None)
    for v in graph.out_leaves:
        if isinstance(v, Value):
            last.pop(v, None)
    dead: list[list[Value]] = [[] for _ in graph.nodes]
    for v, i in last.items():
        dead[i].append(v)
    return dead


def _written(n: Node) -> list[Value] | None:
    """The values node ``n`` writes, when each is a single tensor (``Tensor(a!)``); None when
    it writes a list or an optional tensor."""
    out: list[Value] = []
    for i, a in enumerate(n.op.schema.arguments):
        if not a.is_write:
            continue
        v = n.args[i] if i < len(n.args) else n.kwargs.get(a.name)
        if a.tensor_kind != "Tensor" or not isinstance(v, Value):
            return None
        out.append(v)
    return out


def _written_values(n: Node) -> list[Value] | None:
    """The values node ``n`` writes, those of written lists included; None when it writes
    an optional tensor, or something that is no value of the graph."""
    out: list[Value] = []
    for i, a in enumerate(n.op.schema.arguments):
        if not a.is_write:
            continue
        v = n.args[i] if i < len(n.args) else n.kwargs.get(a.name)
        if isinstance(v, Value) and a.tensor_kind == "Tensor":
            out.append(v)
        elif type(v) is list and all(isinstance(x, Value) for x in v):
            out.extend(v)
        else:
            return None
    return out


MISS: Any = type("Miss", (), {"__repr__": lambda self: "<guard failed>"})()

__all__ += ["MISS", "autograd_nodes", "op_label"]
