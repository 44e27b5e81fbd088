"""The graph a trace records: values, nodes, and what can be done with them.

A :class:`Graph` is a straight-line program over tensors. Its :class:`Value`\\ s are the
tensors that flow through it: the tensor leaves of the inputs, *constants* (tensors the traced
function closed over, held by reference, so a weight updated in place is seen by every later
run), the ``.grad`` of an input, and the outputs of nodes. Each :class:`Node` is one operator
call: the overload, its arguments (values where tensors were, Python constants elsewhere), its
outputs, the key set the call had below ``Tracer`` and the ``Autograd`` keys the thread
excluded (``no_grad``, the backward pass). *Effects* are what the function did to its inputs
and constants without an operator: a ``.grad`` set by the backward pass, ``requires_grad_()``.

Usage::

    g = tp.tracer.trace(f, x)
    print(g)                    # one line per node: %3 = aten::mm(%1, %2)
    g.nodes[0].op, g.nodes[0].inputs
    g(x2)                       # replay through the dispatcher
    print(g.code)               # the same program as Python source
    g.eliminate_dead_code()
    g.save("g.json"); tp.tracer.load("g.json")
    g.to_dot(); g.render("g.svg")
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import tensorplug as tp
from tensorplug.dispatcher import OpOverload

from . import _optree as optree

if TYPE_CHECKING:  # pathlib, shutil and subprocess load when a graph is saved or drawn
    from pathlib import Path

__all__ = ["Effect", "Graph", "GraphHooks", "Node", "TensorMeta", "Value", "hooks"]


class TensorMeta(NamedTuple):
    """What a value looked like when it was traced."""

    shape: tuple[int, ...]
    dtype: Any
    device: Any
    requires_grad: bool

    @classmethod
    def of(cls, t: Any) -> TensorMeta:
        return _new_meta(cls, (t.shape, t.dtype, t.device, t.requires_grad is True))

    def __str__(self) -> str:
        dt = str(self.dtype).rsplit(".", 1)[-1]
        dev = "" if self.device.type == "cpu" else f" {self.device}"
        rg = ", requires_grad" if self.requires_grad else ""
        return f"{dt}[{', '.join(map(str, self.shape))}]{dev}{rg}"


class Value:
    """A tensor of the graph. ``kind`` is ``"input"``, ``"constant"``, ``"grad"`` (the
    ``.grad`` an input had when the call began; ``source`` is that input) or ``"node"``."""

    __slots__ = ("kind", "meta", "name", "node", "source", "tensor", "accessor")

    def __init__(self, kind: str, meta: TensorMeta, name: str = "") -> None:
        self.kind = kind
        self.meta = meta
        self.name = name  # inputs: from their place in the arguments; others: set when printed
        self.node: Node | None = None  # the node that produced it
        self.source: Value | None = None  # kind "grad": the input whose .grad it is
        self.tensor: Any = None  # kind "constant": the tensor itself
        self.accessor: Any = None  # kind "input": where it sits in (args, kwargs)

    def __repr__(self) -> str:
        return f"<Value {self.kind} {self.name or '?'}: {self.meta}>"


class Node:
    """One operator call of the graph."""

    __slots__ = ("op", "args", "kwargs", "outputs", "out_form", "keyset", "excluded", "where")

    def __init__(
        self,
        op: OpOverload,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        keyset: int,
        excluded: int,
        where: str,
    ) -> None:
        self.op = op
        self.args = args  # Value where a tensor was; lists of them for Tensor[]
        self.kwargs = kwargs
        # "one": a single result; "seq": a tuple or list of results, unpacked; "none": None
        self.out_form = "none"
        self.outputs: tuple[Any, ...] = ()  # Value, None, or the Python value an op returned
        self.keyset = keyset  # the call's key set below Tracer (an int)
        self.excluded = excluded  # the Autograd keys the thread excluded (no_grad, backward)
        self.where = where  # "file.py:12", the user's line that made the call

    @property
    def inputs(self) -> list[Value]:
        """The values this node reads, in argument order."""
        return [v for v in _leaves((self.args, self.kwargs)) if isinstance(v, Value)]

    @property
    def constants(self) -> dict[str, Any]:
        """The non-tensor arguments, by name."""
        names = [a.name for a in self.op.schema.arguments]
        given = dict(zip(names, self.args, strict=False)) | self.kwargs
        return {n: v for n, v in given.items() if not _has_value(v)}

    @property
    def mutates(self) -> bool:
        return any(a.is_write for a in self.op.schema.arguments)

    @property
    def impure(self) -> bool:
        """Kept by dead-code elimination even when nothing reads its outputs: it writes a
        tensor, or draws random numbers (the generator's state moves on)."""
        return self.mutates or "nondeterministic_seeded" in self.op.tags

    def __repr__(self) -> str:
        return f"<Node {op_label(self.op)}>"


@dataclass
class Effect:
    """Something the traced function did to an input or constant without an operator:
    ``what`` is ``"grad"`` (``target.grad = value``, a Value or None) or ``"requires_grad"``
    (``target.requires_grad_(value)``, a bool)."""

    what: str
    target: Value
    value: Any


_new_meta = tuple.__new__


def op_label(op: OpOverload) -> str:
    """``aten::mm`` for a default overload, ``aten::add.Tensor`` otherwise."""
    return op.name[: -len(".default")] if op.name.endswith(".default") else op.name


def _has_value(x: Any) -> bool:
    if isinstance(x, Value):
        return True
    if isinstance(x, list | tuple):
        return any(isinstance(v, Value) for v in x)
    return False


def _leaves(x: Any) -> Iterator[Any]:
    if isinstance(x, list | tuple):
        for v in x:
            yield from _leaves(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _leaves(v)
    else:
        yield x


# Note [What a graph does, registered from above]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A Graph is data and its printing (this module, the floor of the plugin). Turning it into
# Python (``graph.code``, ``graph.globals()``: codegen.py), replaying it (``graph(*args)``:
# replay.py) and writing it to a file (``graph.save``: serialize.py) live in modules that import
# this one. They reach the Graph through :data:`hooks`, which the package's ``__init__`` fills
# once those modules are imported, so that no import runs back up from here.


class GraphHooks:
    """What a :class:`Graph` does that modules above this one provide (Note [What a graph does,
    registered from above])."""

    source: Callable[[Graph], str]  # graph.code (codegen.source)
    namespace: Callable[[Graph], dict[str, Any]]  # graph.globals() (codegen.namespace)
    replay: Callable[[Graph], Callable[..., Any]]  # graph(*args) (replay.replay_function)
    save: Callable[[Graph, Path], None]  # graph.save(path) (serialize.save)


hooks = GraphHooks()


class Graph:
    """A traced program (module docstring). Made by :func:`tensorplug_tracer.trace`."""

    def __init__(self) -> None:
        self.inputs: list[Value] = []  # the tensor leaves of (args, kwargs), in optree order
        self.in_spec: Any = None  # optree spec of (args, kwargs)
        self.in_leaves: list[Any] = []  # per leaf of in_spec: a Value, or the constant it was
        self.arg_names: list[str] = []  # the positional parameters of the generated code
        self.kwarg_names: dict[str, str] = {}  # keyword argument -> keyword-only parameter
        self.constants: list[Value] = []
        self.grads: list[Value] = []  # kind "grad"
        self.nodes: list[Node] = []
        self.out_spec: Any = None
        self.out_leaves: list[Any] = []  # per leaf of out_spec: a Value or a Python constant
        self.effects: list[Effect] = []
        self.data_reads: list[str] = []  # where the function read tensor values into Python
        # (read, value) for each Python value the traced code said it depends on
        # (Note [Python state reads] in tensorplug.dispatch); not saved in graph files
        self.state_reads: list[tuple[Any, Any]] = []
        self.decomposed = False
        self.fn_name = "forward"
        self._replay: Callable[..., Any] | None = None

    # --- reading it -------------------------------------------------------------------------

    @property
    def outputs(self) -> list[Any]:
        return list(self.out_leaves)

    def values(self) -> list[Value]:
        return [*self.inputs, *self.grads, *self.constants, *self._node_values()]

    def _node_values(self) -> Iterator[Value]:
        for n in self.nodes:
            for o in n.outputs:
                if isinstance(o, Value):
                    yield o

    def _names(self) -> dict[Value, str]:
        """Printing names: inputs keep theirs, constants are c0.., node outputs 0.. in order."""
        names: dict[Value, str] = {v: v.name for v in self.inputs}
        for v in self.grads:
            names[v] = f"{names[v.source] if v.source in names else '?'}.grad"
        for i, v in enumerate(self.constants):
            names[v] = f"c{i}"
        k = 0
        for n in self.nodes:
            for o in n.outputs:
                if isinstance(o, Value) and o not in names:
                    names[o] = str(k)
                    k += 1
        return names

    def __str__(self) -> str:
        names = self._names()

        def ref(x: Any) -> str:
            if isinstance(x, _Keyword):
                return f"{x.name}={ref(x.value)}"
            if isinstance(x, Value):
                return "%" + names.get(x, "?")
            if isinstance(x, list):
                return "[" + ", ".join(ref(v) for v in x) + "]"
            if isinstance(x, tuple) and _has_value(x):
                return "(" + ", ".join(ref(v) for v in x) + ("," if len(x) == 1 else "") + ")"
            return _constant_text(x)

        ins = ", ".join(f"%{names[v]}: {v.meta}" for v in self.inputs)
        lines = [f"graph {self.fn_name}({ins}):"]
        for i, c in enumerate(self.constants):
            lines.append(f"  %c{i}: {c.meta} = constant")
        for g in self.grads:
            lines.append(f"  %{names[g]}: {g.meta} = the .grad it had when the call began")
        for n in self.nodes:
            outs = [o for o in n.outputs]
            lhs = ", ".join(ref(o) if isinstance(o, Value) else "_" for o in outs)
            args = [ref(a) for a in _shown_args(n)]
            call = f"{op_label(n.op)}({', '.join(args)})"
            line = f"  {lhs} = {call}" if n.outputs else f"  {call}"
            notes = []
            if n.excluded:
                notes.append("no_grad")
            if n.where:
                notes.append(n.where)
            metas = [str(o.meta) for o in outs if isinstance(o, Value)]
            if metas:
                notes.insert(0, ", ".join(metas))
            lines.append(line + ("  # " + "; ".join(notes) if notes else ""))
        for e in self.effects:
            if e.what == "grad":
                rhs = ref(e.value) if e.value is not None else "None"
                lines.append(f"  %{names[e.target]}.grad = {rhs}")
            else:
                lines.append(f"  %{names[e.target]}.requires_grad_({e.value})")
        shown = optree.tree_unflatten(
            self.out_spec, [_Shown(ref(v)) if isinstance(v, Value) else v for v in self.out_leaves]
        )
        lines.append(f"  return {_shown_tree(shown)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"<tp.tracer.Graph {self.fn_name}: {len(self.inputs)} inputs, {len(self.nodes)} nodes>"
        )

    # --- running it ---------------------------------------------------------------------------

    @property
    def code(self) -> str:
        """Python source of a function equivalent to the graph, calling ``tp.ops`` (run it
        with :meth:`globals` as its namespace: ``tp`` and the constants)."""
        return hooks.source(self)

    def globals(self) -> dict[str, Any]:
        """The names :attr:`code` reads besides its arguments: ``tp`` and the constants."""
        return hooks.namespace(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Replay through the dispatcher: each node calls its operator, so the replay runs on
        the backend of the given inputs and under autograd, vmap and autocast."""
        replay = self._replay
        if replay is None:
            replay = self._replay = hooks.replay(self)
        return replay(*args, **kwargs)

    # --- changing it ---------------------------------------------------------------------------

    def eliminate_dead_code(self) -> int:
        """Remove nodes whose outputs nothing reads; keep writes and random draws. Returns the
        number of nodes removed."""
        live: set[Value] = {v for v in self.out_leaves if isinstance(v, Value)}
        for e in self.effects:
            live.add(e.target)
            if isinstance(e.value, Value):
                live.add(e.value)
        kept: list[Node] = []
        for n in reversed(self.nodes):
            if n.impure or any(isinstance(o, Value) and o in live for o in n.outputs):
                kept.append(n)
                live.update(n.inputs)
        removed = len(self.nodes) - len(kept)
        self.nodes = kept[::-1]
        used = live
        self.constants = [c for c in self.constants if c in used]
        self.grads = [g for g in self.grads if g in used]
        self._replay = None
        return removed

    # --- storing and drawing it ------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        """Write the graph to ``path`` (JSON) and its tensor constants beside it (``.npz``);
        :func:`tensorplug_tracer.load` reads them back without executing anything."""
        from pathlib import Path

        hooks.save(self, Path(path))

    def to_dot(self) -> str:
        """The graph as Graphviz DOT text: inputs and constants as ellipses, one box per node."""
        names = self._names()
        out = ["digraph graph_ {", "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']

        def vid(v: Value) -> str:
            return f"v{id(v)}"

        for v in [*self.inputs, *self.grads, *self.constants]:
            shape = "ellipse" if v.kind != "constant" else "note"
            out.append(
                f'  {vid(v)} [label="%{_dot(names[v])}\\n{_dot(str(v.meta))}", shape={shape}];'
            )
        producer: dict[Value, str] = {}
        for i, n in enumerate(self.nodes):
            outs = [o for o in n.outputs if isinstance(o, Value)]
            label = ", ".join("%" + names[o] for o in outs)
            label = f"{label} = {op_label(n.op)}" if label else op_label(n.op)
            extra = ' style=filled fillcolor="#eeeeee"' if n.excluded else ""
            out.append(f'  n{i} [label="{_dot(label)}"{extra}];')
            for v in dict.fromkeys(n.inputs):
                out.append(f"  {producer.get(v, vid(v))} -> n{i};")
            for o in outs:
                producer[o] = f"n{i}"
        out.append('  ret [label="return", shape=doublecircle];')
        for v in dict.fromkeys(x for x in self.out_leaves if isinstance(x, Value)):
            out.append(f"  {producer.get(v, vid(v))} -> ret;")
        out.append("}")
        return "\n".join(out) + "\n"

    def render(self, path: str | Path) -> Path:
        """Draw the graph with Graphviz's ``dot`` into ``path``; the format is its suffix
        (``.svg``, ``.png``, ``.pdf``)."""
        import shutil
        import subprocess
        from pathlib import Path

        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError(
                "Graph.render needs Graphviz's `dot` program, which is not on PATH: install "
                "Graphviz (apt-get install graphviz, brew install graphviz), or write "
                "graph.to_dot() to a file and render it elsewhere"
            )
        p = Path(path)
        fmt = p.suffix.lstrip(".") or "svg"
        subprocess.run([dot, f"-T{fmt}", "-o", str(p)], input=self.to_dot(), text=True, check=True)
        return p


def _dot(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


class _Shown:
    """A value reference inside a printed output tree."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _shown_tree(x: Any) -> str:
    if isinstance(x, _Shown):
        return x.text
    if isinstance(x, list):
        return "[" + ", ".join(_shown_tree(v) for v in x) + "]"
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return "(" + ", ".join(_shown_tree(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_shown_tree(v)}" for k, v in x.items()) + "}"
    return repr(x)


def _shown_args(n: Node) -> list[Any]:
    """The arguments worth printing: trailing positional ones and keyword-only ones left at
    their schema defaults are dropped (the call fills them in again)."""
    schema = n.op.schema
    pos = list(n.args)
    positional = schema.positional
    while pos and len(pos) <= len(positional):
        a = positional[len(pos) - 1]
        if a.has_default and is_default(pos[-1], a):
            pos.pop()
        else:
            break
    shown: list[Any] = list(pos)
    for a in schema.kwarg_only:
        if a.name in n.kwargs and not (a.has_default and is_default(n.kwargs[a.name], a)):
            shown.append(_Keyword(a.name, n.kwargs[a.name]))
    return shown


class _Keyword:
    def __init__(self, name: str, value: Any) -> None:
        self.name = name
        self.value = value


def is_default(v: Any, a: Any) -> bool:
    """Whether argument value ``v`` equals schema argument ``a``'s default."""
    if isinstance(v, Value) or _has_value(v):
        return False
    d = a.default_value
    try:
        d = tp.schema.normalize_argument(d, a.type)
    except Exception:  # noqa: BLE001 - a default the binder cannot normalize compares as given
        pass
    if isinstance(v, list | tuple) and isinstance(d, list | tuple):
        return tuple(v) == tuple(d) and all(type(x) is type(y) for x, y in zip(v, d, strict=True))
    if isinstance(v, list | tuple) and type(d) is int:  # int[N] given as one int
        return False
    return type(v) is type(d) and v == d


def _constant_text(x: Any) -> str:
    if isinstance(x, _Keyword):
        return f"{x.name}={_constant_text(x.value) if not _has_value(x.value) else '...'}"
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return repr(x)
    if isinstance(x, tp.dtype):
        return str(x)
    if isinstance(x, tp.device):
        return f"device({str(x)!r})"
    if isinstance(x, list):
        return "[" + ", ".join(_constant_text(v) for v in x) + "]"
    if isinstance(x, tuple):
        return "[" + ", ".join(_constant_text(v) for v in x) + "]"
    return repr(x)
