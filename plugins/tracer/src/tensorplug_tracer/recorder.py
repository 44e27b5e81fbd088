"""Recording: the boxed fallback on ``Tracer`` and the per-thread state of a trace.

Note [What the tracer records]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``trace`` runs the function once with ``Tracer`` in the thread's included keys, so every
operator call reaches :func:`tracer_fallback` (``Tracer`` sits below ``Batched`` and
``Autocast<B>``, above ``Autograd<B>``: it sees calls after vmap and autocast rewrote them and
before autograd records them). A call made by the function itself (depth 0) becomes a node: its
tensor arguments are looked up as values, then it runs below ``Tracer`` and its tensor results
become new values. The key stays included while it runs, so what the call dispatches inside
(the parts of a ``CompositeImplicitAutograd`` op, the clone an in-place autograd kernel makes)
reaches the fallback too, at depth 1 or more: those calls are remembered (*shadow* records) but
are not nodes, so an op is recorded as the user called it. With ``decompose=True`` a call whose
kernel below ``Tracer`` is a ``CompositeImplicitAutograd`` kernel is not a node either; its parts
then arrive at depth 0 and are.

Note [Values of tensors the tracer did not see made]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A tensor argument is found by identity first. Autograd hands its derivative formulas aliases of
saved tensors (new Tensor objects over the same backend array, made without an operator), so
a miss is looked up by ``tp.tensor.data_id`` among the values, and then among the shadow
records: a formula that reads what a composite computed inside (``linear``'s transposed weight)
makes that inner call a node after all, placed before the node of the call that made it, with
the in-place calls that changed it there. Only a tensor found nowhere becomes a constant: a
tensor the function closed over (a weight), held by reference.

The backward pass runs while ``Tracer`` is still included, so the ops the autograd engine
dispatches are calls at depth 0: a function that calls ``backward()`` or
``tp.autograd.grad`` gives one joint forward and backward graph. Each node remembers the
``Autograd`` keys the thread excluded (``no_grad``, the engine), so a replay runs it the same way.
"""

from __future__ import annotations

import inspect
import threading
import warnings
from collections.abc import Callable
from typing import Any, cast

import tensorplug as tp
from tensorplug.dispatch import local_state
from tensorplug.dispatcher import OpOverload
from tensorplug.tensor import Tensor, data_id

from . import _optree as optree
from .graph import Effect, Graph, Node, TensorMeta, Value

__all__ = ["TracerWarning", "active", "record_trace", "tracer_fallback", "value_read_hook"]


class TracerWarning(UserWarning):
    """The traced function read a tensor's value into Python (``.item()``, ``bool(t)``,
    ``.tolist()``...): the graph holds the value it read as a constant, and may not generalize
    to other inputs."""


class _Masks:
    """Key masks the fallback needs, recomputed when keys change (a backend added later)."""

    tracer = 0  # the Tracer bit
    ag = 0  # every Autograd<B> bit
    strip = 0  # ag | ADInplaceOrView: what a lowered node leaves out

    @classmethod
    def refresh(cls) -> None:
        cls.tracer = tp.keys.get("Tracer").mask
        cls.ag = int(tp.keys.keyset("Autograd"))
        cls.strip = cls.ag | tp.keys.get("ADInplaceOrView").mask


M = _Masks


class _Local(threading.local):
    rec: Recorder | None = None


_local = _Local()


def active() -> Recorder | None:
    """The recorder of this thread's trace, or None."""
    return _local.rec


class _Inner:
    """A shadow record: a call made inside a recorded call (Note [What the tracer records])."""

    __slots__ = ("op", "keyset", "args", "kwargs", "excluded", "top", "seq", "out", "node")

    def __init__(self, op: OpOverload, keyset: int, args: Any, kwargs: Any, excluded: int,
                 top: int, seq: int, out: Any) -> None:  # fmt: skip
        self.op = op
        self.keyset = keyset
        self.args = args  # tensors resolved when recorded: Value, (_Inner, i), or the tensor
        self.kwargs = kwargs
        self.excluded = excluded
        self.top = top  # index of the node of the depth-0 call it was made in
        self.seq = seq
        self.out = out  # the raw result
        self.node: Node | None = None  # once it had to become a node


class Recorder:
    """The state of one trace on one thread."""

    def __init__(self, graph: Graph, decompose: bool) -> None:
        self.graph = graph
        self.decompose = decompose
        self.by_id: dict[int, Value] = {}
        self.by_data: dict[int, Value] = {}
        self.keep: list[Any] = []  # every tensor seen: ids stay unique while the trace runs
        self.inner_by_data: dict[int, tuple[_Inner, int]] = {}
        self.inner_writes: dict[int, list[_Inner]] = {}
        self.depth = 0
        self.top: list[Node] = []
        self.before: dict[int, list[tuple[int, Node]]] = {}
        self.current_top = 0
        self.seq = 0
        self.first: dict[Value, tuple[Any, bool]] = {}  # .grad and requires_grad when first seen
        self.tensors: dict[Value, Any] = {}  # inputs and constants -> their tensors
        self.decomposed: set[tuple[OpOverload, int]] = set()
        self._decomposes: dict[tuple[OpOverload, int], bool] = {}

    # --- values ---------------------------------------------------------------------------

    def bind(self, t: Any, v: Value) -> None:
        self.by_id[id(t)] = v
        self.by_data[data_id(t)] = v
        self.keep.append(t)

    def add_input(self, t: Any, name: str, accessor: Any) -> Value:
        v = Value("input", TensorMeta.of(t), name)
        v.accessor = accessor
        self.graph.inputs.append(v)
        self.bind(t, v)
        self._first_seen(t, v)
        return v

    def _first_seen(self, t: Any, v: Value) -> None:
        self.tensors[v] = t
        g = getattr(t, "grad", None)
        self.first[v] = (g, bool(t.requires_grad))
        if isinstance(g, Tensor) and id(g) not in self.by_id and v.kind == "input":
            gv = Value("grad", TensorMeta.of(g))
            gv.source = v
            self.graph.grads.append(gv)
            self.bind(g, gv)

    def value_of(self, t: Any) -> Value:
        """The value of tensor ``t`` (Note [Values of tensors the tracer did not see made])."""
        v = self.by_id.get(id(t))
        if v is not None:
            return v
        d = data_id(t)
        v = self.by_data.get(d)
        if v is None:
            inner = self.inner_by_data.get(d)
            if inner is not None:
                v = self.materialize(*inner)
            else:
                v = Value("constant", TensorMeta.of(t))
                v.tensor = t
                self.graph.constants.append(v)
                self.bind(t, v)
                self._first_seen(t, v)
                return v
        self.by_id[id(t)] = v
        self.keep.append(t)
        return v

    def arg(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            return self.value_of(x)
        if type(x) is list or type(x) is tuple:
            if any(isinstance(e, Tensor) for e in x):
                return [self.value_of(e) if isinstance(e, Tensor) else e for e in x]
        return x

    def new_outputs(self, node: Node, out: Any) -> None:
        if out is None:
            node.out_form = "none"
        elif isinstance(out, Tensor):
            node.out_form = "one"
            node.outputs = (self._new_value(node, out),)
        elif isinstance(out, tuple | list):
            node.out_form = "seq"
            node.outputs = tuple(
                self._new_value(node, o) if isinstance(o, Tensor) else o for o in out
            )
        else:
            node.out_form = "one"
            node.outputs = (out,)

    def _new_value(self, node: Node, t: Any) -> Value:
        v = Value("node", TensorMeta.of(t))
        v.node = node
        self.bind(t, v)
        return v

    # --- shadow records --------------------------------------------------------------------

    def inner_arg(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            v = self.by_id.get(id(x))
            if v is not None:
                return v
            d = data_id(x)
            v = self.by_data.get(d)
            if v is not None:
                return v
            inner = self.inner_by_data.get(d)
            if inner is not None:
                return inner
            self.keep.append(x)
            return x
        if type(x) is list or type(x) is tuple:
            if any(isinstance(e, Tensor) for e in x):
                return [self.inner_arg(e) for e in x]
        return x

    def shadow(self, op: OpOverload, keyset: int, args: tuple[Any, ...], kwargs: dict[str, Any],
               out: Any) -> None:  # fmt: skip
        self.seq += 1
        rec = _Inner(
            op,
            keyset,
            tuple(self.inner_arg(a) for a in args),
            {k: self.inner_arg(v) for k, v in kwargs.items()},
            M.ag & ~local_state.masks.nexc,
            self.current_top,
            self.seq,
            out,
        )
        outs = out if isinstance(out, tuple | list) else (out,)
        for i, o in enumerate(outs):
            if isinstance(o, Tensor):
                self.inner_by_data[data_id(o)] = (rec, i)
                self.keep.append(o)
        for a, v in zip(op.schema.arguments, (*args, *kwargs.values()), strict=False):
            if a.is_write and isinstance(v, Tensor):
                self.inner_writes.setdefault(data_id(v), []).append(rec)

    def materialize(self, rec: _Inner, index: int) -> Value:
        """Make shadow record ``rec`` a node, before the node of the call it was made in."""
        if rec.node is None:
            args = tuple(self._resolve(a) for a in rec.args)
            kwargs = {k: self._resolve(v) for k, v in rec.kwargs.items()}
            node = Node(rec.op, args, kwargs, rec.keyset, rec.excluded, "")
            rec.node = node
            outs = rec.out if isinstance(rec.out, tuple | list) else (rec.out,)
            if rec.out is None:
                node.out_form = "none"
            else:
                node.out_form = "seq" if isinstance(rec.out, tuple | list) else "one"
                node.outputs = tuple(
                    self._inner_value(node, o) if isinstance(o, Tensor) else o for o in outs
                )
            self.before.setdefault(rec.top, []).append((rec.seq, node))
            for o in outs:
                if isinstance(o, Tensor):
                    for w in self.inner_writes.get(data_id(o), ()):
                        if w.top == rec.top and w.seq > rec.seq and w.node is None:
                            self.materialize(w, 0)
        out = rec.node.outputs[index]
        assert isinstance(out, Value)
        return out

    def _inner_value(self, node: Node, t: Any) -> Value:
        v = Value("node", TensorMeta.of(t))
        v.node = node
        return v

    def _resolve(self, x: Any) -> Any:
        if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], _Inner):
            return self.materialize(x[0], x[1])
        if isinstance(x, Tensor):
            return self.value_of(x)
        if type(x) is list:
            return [self._resolve(e) for e in x]
        return x

    # --- decomposition --------------------------------------------------------------------

    def decomposes(self, op: OpOverload, below: int) -> bool:
        """Whether the kernel a call with key set ``below`` runs is a CompositeImplicitAutograd
        kernel (``decompose=True`` records its parts instead of it)."""
        key = (op, below)
        r = self._decomposes.get(key)
        if r is None:
            r = self._decomposes[key] = composite_entry(op, below)
        return r

    # --- finishing ----------------------------------------------------------------------

    def finish(self) -> None:
        nodes: list[Node] = []
        for i, n in enumerate(self.top):
            nodes.extend(node for _, node in sorted(self.before.get(i, ()), key=lambda p: p[0]))
            nodes.append(n)
        self.graph.nodes = nodes


def composite_entry(op: OpOverload, below: int) -> bool:
    """Whether the highest non-fallthrough entry of key set ``below`` is the op's
    CompositeImplicitAutograd kernel."""
    if not op.has_kernel("CompositeImplicitAutograd"):
        return False
    table = tp.dispatcher.dispatch_table(op)
    for k in tp.keys.DispatchKeySet(below):
        src = table.get(k.name, "missing")
        # an Autograd<B> kernel of a composite op (the autograd plugin's single node for
        # linear) dispatches its parts while the tracer is on: the backend's entry decides
        if src == "fallthrough" or k.family == "Autograd":
            continue
        return src == "CompositeImplicitAutograd"
    return False


# --- the fallback ------------------------------------------------------------------------------


_SCALAR_READ = "aten::_local_scalar_dense.default"
# operators whose Python result (a bool) is computed from tensor values: the graph keeps it as
# a constant, as it keeps what item() read
_VALUE_READS = {
    "aten::is_nonzero.default": "is_nonzero()",
    "aten::equal.default": "equal()",
    "aten::allclose.default": "allclose()",
}


def tracer_fallback(op: OpOverload, keyset: Any, *args: Any, **kwargs: Any) -> Any:
    """The boxed fallback on ``Tracer`` (Note [What the tracer records])."""
    below = keyset.below("Tracer")
    rec = _local.rec
    if rec is None:  # Tracer included without a trace of ours: pass through
        return op.redispatch(below, *args, **kwargs)
    if rec.depth:
        out = op.redispatch(below, *args, **kwargs)
        rec.shadow(op, int(below), args, kwargs, out)
        return out
    ib = int(below)
    if rec.decompose and rec.decomposes(op, ib):
        rec.decomposed.add((op, ib))
        return op.redispatch(below, *args, **kwargs)
    where = user_line()
    node = Node(
        op,
        tuple(rec.arg(a) for a in args),
        {k: rec.arg(v) for k, v in kwargs.items()},
        ib,
        M.ag & ~local_state.masks.nexc,
        where,
    )
    rec.current_top = len(rec.top)
    rec.depth = 1
    try:
        out = op.redispatch(below, *args, **kwargs)
    finally:
        rec.depth = 0
    rec.new_outputs(node, out)
    rec.top.append(node)
    if op.name == _SCALAR_READ:
        _warn_read(rec, ".item(), bool(), int() or float() (aten::_local_scalar_dense)")
    elif op.name in _VALUE_READS:
        _warn_read(rec, _VALUE_READS[op.name])
    return out


def value_read_hook(t: Any, method: str) -> None:
    """``tolist()`` / ``numpy()`` of a tensor, seen through the core's value-read hook."""
    rec = _local.rec
    if rec is not None and rec.depth == 0:
        _warn_read(rec, f".{method}()")


def _warn_read(rec: Recorder, what: str) -> None:
    frame = _user_frame()
    where = _where(frame) if frame is not None else "?"
    rec.graph.data_reads.append(where)
    msg = (
        f"tp.tracer: the traced function reads a tensor's value into Python with {what} at "
        f"{where}; the graph keeps the value it read as a constant, so it may be wrong for other "
        "inputs (keep the computation in tensor operations, or pass the number as an argument)"
    )
    if frame is None:
        warnings.warn(msg, TracerWarning, stacklevel=2)
        return
    registry = frame.f_globals.setdefault("__warningregistry__", {})
    warnings.warn_explicit(
        msg,
        TracerWarning,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=frame.f_globals.get("__name__"),
        registry=registry,
    )


def _internal(frame: Any) -> bool:
    """Whether a frame runs tensorplug's code (or a plugin's, or generated dispatch code)."""
    code = frame.f_code
    known = _internal_code.get(code)
    if known is None:
        name = frame.f_globals.get("__name__", "") or ""
        known = name.startswith(("tensorplug", "optree", "contextlib")) or str(
            code.co_filename
        ).startswith("<tensorplug")
        if len(_internal_code) > 4096:  # generated code makes new code objects: stay bounded
            _internal_code.clear()
        _internal_code[code] = known
    return known


_internal_code: dict[Any, bool] = {}  # code object -> internal? (frames are walked per node)


def _user_frame() -> Any:
    f = inspect.currentframe()
    while f is not None and _internal(f):
        f = f.f_back
    return f


def _where(frame: Any) -> str:
    fn = str(frame.f_code.co_filename).replace("\\", "/").rsplit("/", 1)[-1]
    return f"{fn}:{frame.f_lineno}"


def user_line() -> str:
    f = _user_frame()
    return _where(f) if f is not None else ""


# --- a trace ---------------------------------------------------------------------------------


def record_trace(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], decompose: bool
) -> tuple[Graph, Any, set[tuple[OpOverload, int]]]:
    """Run ``fn(*args, **kwargs)`` once under the tracer: the graph, what ``fn`` returned, and
    the (op, key set) calls that were decomposed."""
    if _local.rec is not None:
        raise RuntimeError(
            "tp.tracer.trace was called while this thread is already tracing; trace the outer "
            "function only (a graph replayed or a compiled function called inside a trace is "
            "recorded inline)"
        )
    graph = Graph()
    graph.decomposed = decompose
    name = getattr(fn, "__name__", None) or type(fn).__name__  # a module: its class
    graph.fn_name = _identifier("forward" if name == "<lambda>" else name, "forward")
    rec = Recorder(graph, decompose)
    _inputs(rec, fn, args, kwargs)
    _local.rec = rec
    try:
        with tp.dispatch.include("Tracer"), tp.dispatch.collect_state_reads() as reads:
            out = fn(*args, **kwargs)
        graph.state_reads = reads
        leaves, graph.out_spec = optree.tree_flatten(out)
        graph.out_leaves = [rec.value_of(x) if isinstance(x, Tensor) else x for x in leaves]
        _effects(rec)
    finally:
        _local.rec = None
    rec.finish()
    return graph, out, rec.decomposed


def _inputs(
    rec: Recorder, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    graph = rec.graph
    graph.arg_names, graph.kwarg_names = _parameter_names(fn, len(args), list(kwargs))
    leaves, graph.in_spec = optree.tree_flatten(cast(Any, (args, kwargs)))
    accessors = optree.treespec_accessors(graph.in_spec)
    taken: set[str] = set()
    for leaf, acc in zip(leaves, accessors, strict=True):
        if isinstance(leaf, Tensor):
            base = acc[1].entry  # (args, kwargs)[0][i] or [1][key]
            code_base = graph.arg_names[base] if acc[0].entry == 0 else graph.kwarg_names[base]
            path = path_entries(acc[2:])
            ident = _identifier(code_base + path_text(path), "input")
            while ident in taken:
                ident += "_"
            taken.add(ident)
            graph.in_leaves.append(rec.add_input(leaf, ident, (base, path)))
        else:
            graph.in_leaves.append(leaf)


def path_entries(accessor: Any) -> list[tuple[str, Any]]:
    """Where a leaf sits below its argument: ``("seq", index)`` and ``("map", key)`` steps, or
    one ``("acc", accessor)`` for pytree nodes of other kinds (registered classes)."""
    out: list[tuple[str, Any]] = []
    for e in accessor:
        if isinstance(e, optree.SequenceEntry):
            out.append(("seq", int(e.entry)))
        elif isinstance(e, optree.MappingEntry) and type(e.entry) in (str, int, bool):
            out.append(("map", e.entry))
        else:
            return [("acc", optree.PyTreeAccessor(accessor))]
    return out


def path_text(path: list[tuple[str, Any]]) -> str:
    """``[0]['w']``: the subscripts of a path of ``("seq"|"map", key)`` steps."""
    return "".join(f"[{k!r}]" for kind, k in path if kind in ("seq", "map"))


def _parameter_names(
    fn: Callable[..., Any], n_args: int, kw: list[str]
) -> tuple[list[str], dict[str, str]]:
    """Names for the generated code's parameters: ``fn``'s own where they bind plainly."""
    names: list[str] = []
    target = getattr(fn, "forward", fn) if not inspect.isfunction(fn) else fn  # tp.nn modules
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        params = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and len(names) < n_args:
            names.append(p.name)
    names = [_identifier(n, "arg") for n in names]
    while len(names) < n_args:
        names.append(f"arg{len(names)}")
    seen = set(names)
    kwn: dict[str, str] = {}
    for k in kw:
        ident = _identifier(k, "kwarg")
        while ident in seen:
            ident += "_"
        seen.add(ident)
        kwn[k] = ident
    return names, kwn


def _identifier(text: str, fallback: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in text)
    out = "_".join(p for p in out.split("_") if p) or fallback
    if out[0].isdigit():
        out = f"{fallback}_{out}"
    import keyword

    return out + "_" if keyword.iskeyword(out) else out


def _effects(rec: Recorder) -> None:
    """What the function did to its inputs and constants without an operator."""
    graph = rec.graph
    for v, (grad0, rg0) in rec.first.items():
        t = rec.tensors[v]
        g = getattr(t, "grad", None)
        if g is not grad0:
            graph.effects.append(
                Effect("grad", v, rec.value_of(g) if isinstance(g, Tensor) else None)
            )
        rg = bool(t.requires_grad)
        if rg != rg0:
            graph.effects.append(Effect("requires_grad", v, rg))
