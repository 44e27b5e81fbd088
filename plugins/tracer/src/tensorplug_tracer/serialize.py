"""Saving and loading graphs: a versioned JSON file, tensor constants in ``.npz``, no pickle.

Note [Graph files]
~~~~~~~~~~~~~~~~~~
``graph.save("g.json")`` writes ``g.json`` and, when the graph has constants, ``g.npz`` beside
it. The JSON holds the format name and :data:`FORMAT_VERSION`, the values (inputs, ``.grad``
values, constants, node outputs) referenced by index, each node's operator by qualified name,
its arguments (numbers, strings, lists, and tagged objects for dtypes, devices, tuples and
complex numbers), its key set and excluded keys by key name (bits differ between processes),
the input and output structures, and per namespace which plugin defined its operators.

Loading parses both files as data: ``json`` and ``numpy.load(allow_pickle=False)``. The Python a
loaded graph runs is generated again from that data, and every name it contains (parameters,
the function's name) must be a plain identifier, so a file cannot smuggle code in. An operator
the process does not define is refused with the namespace, and the plugin that defined it when
the graph was saved.
"""

from __future__ import annotations

import json
import keyword
from typing import TYPE_CHECKING, Any

import tensorplug as tp

from . import _optree as optree
from .graph import Effect, Graph, Node, TensorMeta, Value

if TYPE_CHECKING:  # pathlib loads when a graph is saved or read
    from pathlib import Path

__all__ = ["FORMAT_VERSION", "GraphFormatError", "load", "save"]

FORMAT = "tensorplug-graph"
FORMAT_VERSION = 1


class GraphFormatError(ValueError):
    """A graph file that this version of the tracer cannot read, or a graph it cannot write."""


# --- writing -----------------------------------------------------------------------------------


def _meta(m: TensorMeta) -> dict[str, Any]:
    return {
        "shape": list(m.shape),
        "dtype": str(m.dtype).rsplit(".", 1)[-1],
        "device": str(m.device),
        "requires_grad": m.requires_grad,
    }


def _spec(spec: Any, what: str) -> Any:
    kind = spec.kind
    K = optree.PyTreeKind
    if kind == K.LEAF:
        return {"kind": "leaf"}
    if kind == K.NONE:
        return {"kind": "none"}
    children = [_spec(c, what) for c in spec.children()]
    if kind == K.TUPLE:
        return {"kind": "tuple", "children": children}
    if kind == K.LIST:
        return {"kind": "list", "children": children}
    if kind == K.DICT:
        keys = list(spec.entries())
        if not all(type(k) is str for k in keys):
            raise GraphFormatError(f"cannot save a graph whose {what} has a dict with non-str keys")
        return {"kind": "dict", "keys": keys, "children": children}
    raise GraphFormatError(
        f"cannot save a graph whose {what} holds a {spec.type.__name__}: a saved graph's inputs "
        "and outputs are tensors, numbers, strings, None, and tuples, lists and dicts of them"
    )


class _Writer:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        values = [*graph.inputs, *graph.grads, *graph.constants]
        for n in graph.nodes:
            values.extend(o for o in n.outputs if isinstance(o, Value))
        self.index = {v: i for i, v in enumerate(values)}
        self.values = values

    def enc(self, x: Any, where: str) -> Any:
        if isinstance(x, Value):
            return {"v": self.index[x]}
        t = type(x)
        if x is None or t in (bool, int, float, str):
            return x
        if t is list:
            return [self.enc(v, where) for v in x]
        if t is tuple:
            return {"tuple": [self.enc(v, where) for v in x]}
        if t is complex:
            return {"complex": [x.real, x.imag]}
        if isinstance(x, tp.dtype):
            return {"dtype": str(x).rsplit(".", 1)[-1]}
        if isinstance(x, tp.device):
            return {"device": str(x)}
        raise GraphFormatError(
            f"cannot save the graph: {where} holds a {t.__name__} ({x!r}), which a graph file "
            "cannot store; trace the function without it (for a tp.Generator, draw from the "
            "default generator)"
        )


def save(graph: Graph, path: Path) -> None:
    import numpy as np

    w = _Writer(graph)
    namespaces: dict[str, dict[str, str]] = {}
    plugins = {i.name: i for i in tp.plugins.list()}
    nodes = []
    for n in graph.nodes:
        ns = n.op.namespace
        if ns not in namespaces:
            info = plugins.get(n.op.defined_by)
            namespaces[ns] = {
                "defined_by": n.op.defined_by,
                "distribution": (info.distribution or "") if info is not None else "",
            }
        where = f"argument of {n.op.name}"
        nodes.append(
            {
                "op": n.op.name,
                "args": [w.enc(a, where) for a in n.args],
                "kwargs": {k: w.enc(v, where) for k, v in n.kwargs.items()},
                "form": n.out_form,
                "outputs": [
                    {"v": w.index[o], "meta": _meta(o.meta)} if isinstance(o, Value) else _result(o)
                    for o in n.outputs
                ],
                "keyset": tp.keys.DispatchKeySet(n.keyset).names(),
                "excluded": tp.keys.DispatchKeySet(n.excluded).names(),
                "where": n.where,
            }
        )
    inputs = []
    for v in graph.inputs:
        base, entries = v.accessor
        if entries and entries[0][0] == "acc":
            raise GraphFormatError(
                f"cannot save a graph whose input {v.name} sits inside a registered pytree class"
            )
        inputs.append(
            {
                "name": v.name,
                "meta": _meta(v.meta),
                "base": base,
                "path": [list(e) for e in entries],
            }
        )
    effects = []
    for e in graph.effects:
        value = w.enc(e.value, "an effect") if e.what == "grad" else bool(e.value)
        effects.append({"what": e.what, "target": w.enc(e.target, "an effect"), "value": value})
    doc = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "tensorplug": tp.__version__,
        "name": graph.fn_name,
        "decomposed": graph.decomposed,
        "arg_names": graph.arg_names,
        "kwarg_names": graph.kwarg_names,
        "in_spec": _spec(graph.in_spec, "inputs"),
        "in_leaves": [w.enc(x, "an input") for x in graph.in_leaves],
        "inputs": inputs,
        "grads": [
            {"source": w.index[g.source], "meta": _meta(g.meta)} for g in graph.grads if g.source
        ],
        "constants": [
            {"meta": _meta(c.meta), "array": f"c{i}"} for i, c in enumerate(graph.constants)
        ],
        "nodes": nodes,
        "out_spec": _spec(graph.out_spec, "outputs"),
        "out_leaves": [w.enc(x, "an output") for x in graph.out_leaves],
        "effects": effects,
        "data_reads": graph.data_reads,
        "namespaces": namespaces,
    }
    arrays = {}
    for i, c in enumerate(graph.constants):
        t = c.tensor.detach()
        if t.dtype == tp.bfloat16:
            t = t.to(tp.float32)  # exact; loaded back as bfloat16
        arrays[f"c{i}"] = np.asarray(t.cpu().numpy())
    path.write_text(json.dumps(doc, indent=1))
    if arrays:
        np.savez(path.with_suffix(".npz"), **arrays)  # type: ignore[arg-type]


def _result(x: Any) -> Any:
    """A non-tensor result of a node (``item()``'s number): kept when JSON can hold it."""
    if x is None or type(x) in (bool, int, float, str):
        return {"result": x}
    return {"result": None}


# --- reading -----------------------------------------------------------------------------------


def _fail(path: Path, msg: str) -> GraphFormatError:
    return GraphFormatError(f"{path}: {msg}")


def _identifier(path: Path, name: Any, what: str) -> str:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise _fail(path, f"{what} {name!r} is not a Python identifier")
    return name


def _unspec(path: Path, d: Any) -> Any:
    kind = d.get("kind") if isinstance(d, dict) else None
    if kind == "leaf":
        return optree.treespec_leaf()
    if kind == "none":
        return optree.treespec_none()
    children = [_unspec(path, c) for c in d.get("children", [])]
    if kind == "tuple":
        return optree.treespec_tuple(children)
    if kind == "list":
        return optree.treespec_list(children)
    if kind == "dict":
        return optree.treespec_dict(dict(zip(d["keys"], children, strict=True)))
    raise _fail(path, f"unknown structure {d!r}")


def _dtype(path: Path, name: Any) -> Any:
    dt = getattr(tp, name, None) if isinstance(name, str) else None
    if not isinstance(dt, tp.dtype):
        raise _fail(path, f"unknown dtype {name!r}")
    return dt


def _unmeta(path: Path, d: dict[str, Any]) -> TensorMeta:
    return TensorMeta(
        tuple(int(s) for s in d["shape"]), _dtype(path, d["dtype"]), tp.device(d["device"]),
        bool(d["requires_grad"]),
    )  # fmt: skip


def _keys(path: Path, names: list[str], what: str) -> int:
    try:
        return int(tp.keys.keyset(*names))
    except LookupError as e:
        raise _fail(path, f"{what} names a dispatch key this process lacks: {e}") from None


def _check_namespaces(path: Path, doc: dict[str, Any]) -> None:
    known = {op.namespace for op in tp.dispatcher.all_ops()}
    for n in doc["nodes"]:
        ns = n["op"].split("::", 1)[0]
        if ns in known:
            continue
        info = doc.get("namespaces", {}).get(ns, {})
        by, dist = info.get("defined_by", ""), info.get("distribution", "")
        if dist:
            hint = f"they were defined by plugin {by!r} (pip install {dist}, and check TENSORPLUG_PLUGINS)"
        elif by:
            hint = f"they were defined by {by} when the graph was saved: run that code first"
        else:
            hint = "define them (tp.Library) before loading"
        raise _fail(
            path,
            f"the graph needs operators of namespace {ns!r} ({n['op']}), which this process "
            f"does not define; {hint}",
        )


def load(path: str | Path) -> Graph:
    """Read a graph written by :meth:`Graph.save` (Note [Graph files])."""
    from pathlib import Path

    import numpy as np

    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise _fail(p, f"not a graph file: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _fail(
            p,
            f"not a graph file (its format is {doc.get('format') if isinstance(doc, dict) else None!r}, expected {FORMAT!r})",
        )
    if doc.get("version") != FORMAT_VERSION:
        raise _fail(
            p,
            f"graph format version {doc.get('version')!r}; this tensorplug-tracer reads version "
            f"{FORMAT_VERSION}: use the tensorplug-tracer that saved it, or trace the function again",
        )
    _check_namespaces(p, doc)
    arrays: dict[str, Any] = {}
    if doc["constants"]:
        with np.load(p.with_suffix(".npz"), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    g = Graph()
    g.fn_name = _identifier(p, doc["name"], "the function name")
    g.decomposed = bool(doc.get("decomposed", False))
    g.arg_names = [_identifier(p, n, "parameter") for n in doc["arg_names"]]
    g.kwarg_names = {str(k): _identifier(p, v, "parameter") for k, v in doc["kwarg_names"].items()}
    values: list[Value] = []
    for d in doc["inputs"]:
        v = Value("input", _unmeta(p, d["meta"]), _identifier(p, d["name"], "input"))
        base = d["base"]
        steps: list[tuple[str, Any]] = []
        for kind, key in d["path"]:
            if kind not in ("seq", "map") or type(key) not in (str, int, bool):
                raise _fail(p, f"bad input path step {[kind, key]!r}")
            steps.append((kind, key))
        if (
            not (isinstance(base, int) and 0 <= base < len(g.arg_names))
            and base not in g.kwarg_names
        ):
            raise _fail(p, f"input {v.name} refers to an unknown argument {base!r}")
        v.accessor = (base, steps)
        g.inputs.append(v)
        values.append(v)
    for d in doc["grads"]:
        v = Value("grad", _unmeta(p, d["meta"]))
        v.source = values[d["source"]]
        g.grads.append(v)
        values.append(v)
    for d in doc["constants"]:
        meta = _unmeta(p, d["meta"])
        v = Value("constant", meta)
        arr = arrays[d["array"]]
        t = tp.tensor(arr, dtype=meta.dtype, device=meta.device)
        if meta.requires_grad:
            t.requires_grad_()
        v.tensor = t
        g.constants.append(v)
        values.append(v)

    def dec(x: Any) -> Any:
        if isinstance(x, list):
            return [dec(e) for e in x]
        if isinstance(x, dict):
            if "v" in x:
                return values[x["v"]]
            if "tuple" in x:
                return tuple(dec(e) for e in x["tuple"])
            if "complex" in x:
                return complex(*x["complex"])
            if "dtype" in x:
                return _dtype(p, x["dtype"])
            if "device" in x:
                return tp.device(x["device"])
            raise _fail(p, f"unknown object {x!r}")
        return x

    for d in doc["nodes"]:
        op = tp.dispatcher.find_op(d["op"])
        node = Node(
            op,
            tuple(dec(a) for a in d["args"]),
            {str(k): dec(v) for k, v in d["kwargs"].items()},
            _keys(p, d["keyset"], d["op"]),
            _keys(p, d["excluded"], d["op"]),
            str(d.get("where", "")),
        )
        node.out_form = d["form"] if d["form"] in ("one", "seq", "none") else "none"
        outs = []
        for o in d["outputs"]:
            if isinstance(o, dict) and "result" in o:
                outs.append(o["result"])
            else:
                v = Value("node", _unmeta(p, doc_meta(p, o)))
                v.node = node
                values.append(v)
                outs.append(v)
        node.outputs = tuple(outs)
        g.nodes.append(node)
    g.in_spec = _unspec(p, doc["in_spec"])
    g.in_leaves = [dec(x) for x in doc["in_leaves"]]
    g.out_spec = _unspec(p, doc["out_spec"])
    g.out_leaves = [dec(x) for x in doc["out_leaves"]]
    for eff in doc["effects"]:
        target = dec(eff["target"])
        value = dec(eff["value"]) if eff["what"] == "grad" else bool(eff["value"])
        g.effects.append(Effect(str(eff["what"]), target, value))
    g.data_reads = [str(x) for x in doc.get("data_reads", [])]
    return g


def doc_meta(path: Path, o: Any) -> dict[str, Any]:
    if not isinstance(o, dict) or "meta" not in o:
        raise _fail(path, f"bad node output {o!r}")
    meta: dict[str, Any] = o["meta"]
    return meta
