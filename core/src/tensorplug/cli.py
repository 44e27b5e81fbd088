"""The ``tensorplug`` command: what is installed, what it registered, and why a call runs what
it runs.

Subcommands::

    tensorplug plugins                      the plugins: distribution, version, status, keys, ops
    tensorplug keys                         dispatch keys in priority order: kind, bit, owner
    tensorplug ops [--key KEY] [--missing KEY] [--ns NS]
                                            kernels per registration key; the ops with a kernel
                                            for KEY; the ops of NS (default aten) without one
    tensorplug table OP                     the computed dispatch table of OP (DESIGN §4)
    tensorplug explain OP ARG...            dispatcher.explain on described inputs, e.g.
                                            explain aten::add.Tensor "f32[2,3]" "f32[3] cpu"
    tensorplug source OP [--keys KEY,...]   the code a call of OP runs, frame by frame: the
                                            public function, the generated dispatch call and
                                            the kernel of each key (dispatcher.source)
    tensorplug demo                         an end-to-end run of whatever plugins are installed
    tensorplug new-plugin NAME --backend|--functionality [--xp MODULE] [--dir DIR]
                                            write a ready plugin package (tensorplug-NAME/)

An unknown operator or key is reported in one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import tensorplug

from . import _manifest
from . import dispatcher as _dispatcher
from . import keys as _keys
from . import plugins as _plugins
from .errors import DispatchError, MissingPluginError, RegistrationError
from .keys import DispatchKeyError

__all__ = ["main"]

# Most of the API is installed at import time (the functions of native_functions.yaml, the
# names plugins add), so the type checker sees it as Any.
tp: Any = tensorplug


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


# --- plugins / keys -------------------------------------------------------------------------


def _table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip(), file=out)


def cmd_plugins(args: argparse.Namespace, out: TextIO) -> int:
    infos = _plugins.list()
    if not infos:
        print("no tensorplug plugins are installed (pip install tensorplug-cpu)", file=out)
        return 0
    rows = [("NAME", "DISTRIBUTION", "VERSION", "STATUS", "KEYS", "OPS")]
    devices = {i.name: _device_notes(i) for i in infos}
    for i in infos:
        no_device = any(why is not None for _, why in devices[i.name])
        rows.append(
            (
                i.name,
                i.distribution or "(in-process)",
                i.version or "-",
                f"{i.status} (no device)" if no_device else i.status,
                ",".join(i.keys) or "-",
                str(i.op_count),
            )
        )
    _table(rows, out)
    for i in infos:
        if i.error is not None:
            print(f"{i.name}: failed: {i.error}", file=out)
        elif i.reason is not None:
            print(f"{i.name}: disabled: {i.reason}", file=out)
        for note, why in devices[i.name]:
            print(f"{i.name}: {note}" if why is None else f"{i.name}: {note}: {why}", file=out)
    return 0


def _device_notes(info: _plugins.PluginInfo) -> list[tuple[str, str | None]]:
    """Per device type whose runtime ``info`` registered: (what is there, why not or None)."""
    from . import _backends

    notes: list[tuple[str, str | None]] = []
    for device_type in info.devices:
        rt = _backends.runtime(device_type)
        if rt is None:
            continue
        why = rt.unavailable_reason()
        if why is not None:
            notes.append((f"no {device_type} device is available", why))
            continue
        count = int(rt.device_count())
        names = ", ".join(f"{device_type}:{i} {rt.get_device_name(i)}" for i in range(count))
        notes.append((f"{count} {device_type} device(s): {names}", None))
    return notes


def cmd_keys(args: argparse.Namespace, out: TextIO) -> int:
    rows = [("KEY", "KIND", "BIT", "OWNER")]
    for k in _keys.all_keys():
        bit = "-" if k.is_alias else str(k.bit)
        rows.append((k.name, k.kind.value, bit, k.owner))
    print("dispatch keys, highest priority first (alias keys last):", file=out)
    _table(rows, out)
    return 0


# --- ops / table ----------------------------------------------------------------------------


def _key(name: str) -> _keys.DispatchKey:
    try:
        return _keys.get(name)
    except DispatchKeyError as e:
        raise CliError(str(e)) from None


def cmd_ops(args: argparse.Namespace, out: TextIO) -> int:
    ops = sorted(_dispatcher.all_ops(), key=lambda o: o.name)
    if args.missing:
        key = _key(args.missing)
        if key.is_alias:
            raise CliError(
                f"--missing needs a runtime key; {key.name!r} is an alias key "
                f"(try one of: {', '.join(k.name for k in _keys.expand(key))})"
            )
        ns_ops = [o for o in ops if o.namespace == args.ns]
        if not ns_ops:
            raise CliError(f"no operators are defined in namespace {args.ns!r}")
        missing = [o.name for o in ns_ops if _dispatcher.dispatch_table(o)[key.name] == "missing"]
        colon = ":" if missing else "."
        print(
            f"{len(missing)} of {len(ns_ops)} {args.ns} ops have no kernel for {key.name}{colon}",
            file=out,
        )
        for name in missing:
            print(f"  {name}", file=out)
        return 0
    if args.key:
        key = _key(args.key)
        names = [o.name for o in ops if key.name in _dispatcher.registrations(o)]
        print(f"{len(names)} ops have a kernel registered for {key.name}:", file=out)
        for name in names:
            print(f"  {name}  ({_dispatcher.registrations(name)[key.name]})", file=out)
        return 0
    counts: dict[str, int] = {}
    for o in ops:
        for reg in _dispatcher.registrations(o):
            counts[reg] = counts.get(reg, 0) + 1
    print(f"{len(ops)} operators defined; kernels registered per key:", file=out)
    rows = [("KEY", "KIND", "KERNELS")]
    for k in _keys.all_keys():
        if k.name in counts:
            rows.append((k.name, k.kind.value, str(counts[k.name])))
    _table(rows, out)
    fbs = _dispatcher.fallbacks()
    if fbs:
        print("fallbacks (every op): " + ", ".join(f"{k} ({v})" for k, v in fbs.items()), file=out)
    return 0


def _op(name: str) -> Any:
    """An overload for ``ns::op.overload``; the packet for ``ns::op`` with several overloads."""
    if "::" not in name:
        raise CliError(f"operator names are qualified, 'ns::op.overload': got {name!r}")
    ns, rest = name.split("::", 1)
    if "." in rest:
        try:
            return _dispatcher.find_op(name)
        except RegistrationError as e:
            raise CliError(str(e)) from None
    overloads = [o for o in _dispatcher.all_ops() if o.namespace == ns and o.op_name == rest]
    if not overloads:
        raise CliError(f"No operator named {name!r} is defined (see `tensorplug ops`)")
    if len(overloads) == 1:
        return overloads[0]
    return getattr(getattr(tp.ops, ns), rest)


def cmd_table(args: argparse.Namespace, out: TextIO) -> int:
    found = _op(args.op)
    if isinstance(found, _dispatcher.OpOverload):
        _print_table(found, out)
        return 0
    # an unqualified name means every overload (explain picks one from its arguments)
    for i, name in enumerate(found.overloads()):
        if i:
            print(file=out)
        _print_table(getattr(found, name), out)
    return 0


def _print_table(op: _dispatcher.OpOverload, out: TextIO) -> None:
    print(f"{op.name}: {op.schema}", file=out)
    regs = _dispatcher.registrations(op)
    rows = [("KEY", "ENTRY", "REGISTERED BY")]
    for key, source in _dispatcher.dispatch_table(op).items():
        who = regs.get(source) or _dispatcher.fallbacks().get(key, "")
        if source in ("fallback", "fallthrough") and not who:
            who = _fallback_registrant(key)
        rows.append((key, source, who if source != "missing" else ""))
    _table(rows, out)


def _fallback_registrant(key: str) -> str:
    fbs = _dispatcher.fallbacks()
    for alias, who in fbs.items():
        if _keys.get(alias).is_alias and key in _keys.expand(alias).names():
            return who
    return ""


# --- explain --------------------------------------------------------------------------------

_TENSOR_SPEC = re.compile(r"^(?P<dtype>[a-z]+[0-9]*)\[(?P<shape>[0-9, ]*)\](?P<rest>.*)$")
_SHORT_DTYPES = {
    "b8": "bool",
    "bool": "bool",
    "u8": "uint8",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "c64": "complex64",
    "c128": "complex128",
}


def _tensor_from_spec(spec: str) -> Any:
    m = _TENSOR_SPEC.match(spec.strip())
    assert m is not None
    name = _SHORT_DTYPES.get(m["dtype"], m["dtype"])
    try:
        dtype = tp.dtypes.from_name(name)
    except (KeyError, ValueError, TypeError) as e:
        raise CliError(f"unknown dtype {m['dtype']!r} in {spec!r}: {e}") from None
    shape = [int(s) for s in m["shape"].replace(" ", "").split(",") if s]
    device = None
    requires_grad = False
    for word in m["rest"].split():
        if word == "requires_grad":
            requires_grad = True
        else:
            device = word
    if requires_grad and "autograd" not in _plugins.loaded_names():
        raise CliError(
            f"{spec!r}: requires_grad needs the tensorplug-autograd plugin, which is not "
            "loaded: pip install tensorplug-autograd"
        )
    t = tp.zeros(shape, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_()
    return t


def _value(text: str) -> Any:
    if _TENSOR_SPEC.match(text.strip()):
        return _tensor_from_spec(text)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # a str argument (e.g. reduction="mean" given as mean)


def cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    op = _op(args.op)
    pos: list[Any] = []
    kw: dict[str, Any] = {}
    for a in args.args:
        name, eq, value = a.partition("=")
        if eq and name.isidentifier():
            kw[name] = _value(value)
        else:
            pos.append(_value(a))
    try:
        text = _dispatcher.explain(op, *pos, **kw)
    except TypeError as e:  # arguments that do not fit the schema
        raise CliError(str(e)) from None
    print(text, file=out)
    # a call that fails is explained up to its failure; the exit status still says it failed
    return 1 if "\n  -> error: " in text else 0


def cmd_source(args: argparse.Namespace, out: TextIO) -> int:
    print(_dispatcher.source(args.op, args.keys), end="", file=out)
    return 0


# --- demo -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    """One part of the demo, shown when ``plugin`` is loaded (always, for ``plugin=None``)."""

    title: str
    plugin: str | None
    distribution: str
    run: Callable[[TextIO], None]


def _demo_core(out: TextIO) -> None:
    loaded = sorted(_plugins.loaded_names())
    print(
        f"tensorplug {tp.__version__}: {len(_dispatcher.all_ops())} operators defined, "
        f"{len(_keys.priority_order())} runtime dispatch keys",
        file=out,
    )
    print(f"loaded plugins: {', '.join(loaded) or 'none'}", file=out)


def _demo_cpu(out: TextIO) -> None:
    a = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = tp.ones([2, 2])
    print(f"a = {a!r}", file=out)
    print(f"a + 1 = {a + 1!r}", file=out)
    print(f"a @ b = {a @ b!r}", file=out)
    print(f"(a * a).sum() = {(a * a).sum().item()}", file=out)
    print("dispatch table of aten::add.Tensor (keys with an entry):", file=out)
    for key, source in _dispatcher.dispatch_table("aten::add.Tensor").items():
        if source != "missing":
            print(f"  {key:<20} {source}", file=out)


def spiral_problem() -> tuple[Any, Any, Any]:
    """The demo's data and model, seeded: ``(x, y, model)``, 300 points of a 3-class spiral and
    a small MLP from tp.nn (tests/combos/test_matrix.py's workload uses them too)."""
    import math

    nn = tp.nn
    tp.manual_seed(0)
    n, classes = 100, 3
    radius = tp.linspace(0.1, 1.0, n)
    xs, ys = [], []
    for c in range(classes):
        start = 2 * math.pi * c / classes
        theta = tp.linspace(start, start + 1.5 * math.pi, n) + 0.15 * tp.randn([n])
        xs.append(tp.stack([radius * theta.cos(), radius * theta.sin()], 1))
        ys.append(tp.full([n], c, dtype=tp.int64))
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, classes))
    return tp.cat(xs), tp.cat(ys), model


def _spiral_training(out: TextIO | None, autocast_dtype: Any = None) -> tuple[float, float]:
    """Train the demo classifier (a small MLP from tp.nn, Adam, on a 3-class spiral) and return
    (accuracy, seconds); with ``autocast_dtype``, forward passes run in a CPU autocast region.
    Prints the model and the loss every 75 steps to ``out`` when given."""
    import contextlib
    import time

    nn = tp.nn
    x, y, model = spiral_problem()
    if out is not None:
        print(f"model: {model!r}", file=out)
    loss_fn = nn.CrossEntropyLoss()
    opt = tp.optim.Adam(model.parameters(), lr=0.02)

    def region() -> Any:
        if autocast_dtype is None:
            return contextlib.nullcontext()
        return tp.autocast("cpu", dtype=autocast_dtype)

    began = time.perf_counter()
    for step in range(_SPIRAL_STEPS + 1):
        opt.zero_grad()
        with region():
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if out is not None and step % 75 == 0:
            print(f"step {step:3d}: loss {loss.item():.4f}", file=out)
    elapsed = time.perf_counter() - began
    with tp.no_grad(), region():
        acc = (model(x).argmax(1) == y).to(tp.float32).mean().item()
    return acc, elapsed


_SPIRAL_STEPS = 300
_float32_run: list[tuple[float, float]] = []  # the autograd section's result, for autocast's


def _demo_autograd(out: TextIO) -> None:
    acc, elapsed = _spiral_training(out)
    _float32_run[:] = [(acc, elapsed)]
    print(
        f"trained on a 3-class spiral (300 points) with Adam, {_SPIRAL_STEPS} steps in "
        f"{elapsed:.2f} s: accuracy {acc:.2f}",
        file=out,
    )


def _demo_autocast(out: TextIO) -> None:
    a = tp.randn([4, 4])
    with tp.autocast("cpu", dtype=tp.bfloat16):
        c = a @ a
        s = c.sum()
        p = c.softmax(1)
        loss = tp.nn.functional.mse_loss(c, a)
    print(
        f"inside autocast('cpu', bfloat16): matmul -> {c.dtype}, sum -> {s.dtype}, "
        f"softmax -> {p.dtype}, mse_loss -> {loss.dtype}",
        file=out,
    )
    if "autograd" not in _plugins.loaded_names():
        print("(with tensorplug-autograd the demo classifier also trains here)", file=out)
        return
    print("the demo classifier, trained in float32 and under bfloat16 autocast:", file=out)
    runs = [
        ("float32", _float32_run[0] if _float32_run else _spiral_training(None)),
        ("bfloat16 autocast", _spiral_training(None, tp.bfloat16)),
    ]
    for name, (acc, elapsed) in runs:
        print(
            f"  {name:18s} accuracy {acc:.2f} ({_SPIRAL_STEPS} steps in {elapsed:.2f} s)", file=out
        )
    print(
        "  (numpy has no bfloat16 arithmetic: bfloat16 products are computed in float32 and "
        "rounded, so autocast costs time here; see docs/performance.md)",
        file=out,
    )


def _demo_tracer(out: TextIO) -> None:
    # the autograd section's classifier (untrained): tp.nn needs tensorplug-autograd
    x = tp.randn([8, 2])
    if "autograd" in _plugins.loaded_names():
        nn = tp.nn
        forward: Any = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))
        what = "the classifier's forward"
    else:
        w1, w2 = tp.randn([2, 16]), tp.randn([16, 3])
        forward = lambda x: (x @ w1).relu() @ w2  # noqa: E731
        what = "a two-layer forward"
    graph = tp.tracer.trace(forward, x)
    lines = str(graph).splitlines()
    print(f"tp.tracer.trace of {what} ({len(graph.nodes)} nodes):", file=out)
    for line in lines[:9]:
        print(f"  {line}", file=out)
    if len(lines) > 9:
        print(f"  ... ({len(lines) - 9} more lines)", file=out)
    same = bool((graph(x) - forward(x)).abs().max().item() == 0)
    print(f"replayed through the dispatcher: equals the eager forward: {same}", file=out)


def _demo_batched(out: TextIO) -> None:
    x = tp.randn([5, 3])
    w = tp.randn([3])
    batched = tp.vmap(lambda row: (row * w).sum())(x)
    looped = tp.stack([(x[i] * w).sum() for i in range(5)])
    same = bool((batched - looped).abs().max().item() < 1e-5)
    print(f"vmap over 5 rows -> shape {tuple(batched.shape)}; equals the loop: {same}", file=out)


def _demo_cuda(out: TextIO) -> None:
    if not tp.cuda.is_available():
        why = _backends_runtime_reason("cuda")
        print(f"tensorplug-cuda is installed, but no CUDA device is available: {why}", file=out)
        return
    a = tp.randn([256, 256], device="cuda")
    c = (a @ a).sum()
    tp.cuda.synchronize()
    print(
        f"{tp.cuda.device_count()} CUDA device(s); (a @ a).sum() on {c.device}: "
        f"{c.cpu().item():.3f}",
        file=out,
    )


def _backends_runtime_reason(device_type: str) -> str | None:
    from . import _backends

    rt = _backends.runtime(device_type)
    return None if rt is None else rt.unavailable_reason()


def _section(title: str, plugin: str, run: Callable[[TextIO], None]) -> Section:
    """The demo section of first-party plugin ``plugin`` (Note [First-party manifest])."""
    return Section(title, plugin, _manifest.BY_NAME[plugin].distribution, run)


SECTIONS: list[Section] = [
    Section("core", None, "tensorplug", _demo_core),
    _section("CPU backend", "cpu", _demo_cpu),
    _section("autograd", "autograd", _demo_autograd),
    _section("autocast", "autocast", _demo_autocast),
    _section("tracer", "tracer", _demo_tracer),
    _section("batched (vmap)", "batched", _demo_batched),
    _section("CUDA backend", "cuda", _demo_cuda),
]


def _third_party_section(info: _plugins.PluginInfo) -> Section:
    def run(out: TextIO) -> None:
        print(
            f"keys: {', '.join(info.keys) or 'none'}; kernels: {info.op_count}; "
            f"names: {', '.join(info.names) or 'none'}",
            file=out,
        )
        for name in info.keys:
            key = _keys.get(name)
            if key.kind is not _keys.KeyKind.BACKEND or key.device_type is None:
                continue
            try:
                t = tp.tensor([1.0, 2.0], device=key.device_type)
                print(f"tensor on {key.device_type!r}: t + 1 = {t + 1!r}", file=out)
            except (DispatchError, MissingPluginError, RuntimeError) as e:
                print(f"a tensor on {key.device_type!r} cannot be used here: {e}", file=out)

    return Section(f"third-party plugin {info.name}", info.name, info.distribution or "", run)


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    loaded = _plugins.loaded_names()
    sections = list(SECTIONS)
    for info in _plugins.list():
        if info.name not in _manifest.BY_NAME and info.status == "loaded":
            sections.append(_third_party_section(info))
    failures = 0
    for s in sections:
        print(f"== {s.title} ==", file=out)
        if s.plugin is not None and s.plugin not in loaded:
            print(f"not installed: pip install {s.distribution}", file=out)
            continue
        try:
            s.run(out)
        except Exception:
            failures += 1
            print(f"this section failed:\n{traceback.format_exc()}", file=out)
    return 1 if failures else 0


# --- new-plugin -----------------------------------------------------------------------------


def cmd_new_plugin(args: argparse.Namespace, out: TextIO) -> int:
    from ._scaffold import ScaffoldError, new_plugin

    try:
        root = new_plugin(args.name, args.kind, args.dir, xp=args.xp)
    except ScaffoldError as e:
        raise CliError(str(e)) from None
    print(f"wrote {root}/ (a {args.kind} plugin); next:", file=out)
    print(f"  pip install -e '{root}[test]' && pytest {root}/tests", file=out)
    return 0


# --- main -----------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tensorplug", description="Inspect tensorplug's plugins, keys and dispatch tables."
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("plugins", help="installed plugins and what they registered").set_defaults(
        fn=cmd_plugins
    )
    sub.add_parser("keys", help="dispatch keys in priority order").set_defaults(fn=cmd_keys)
    ops = sub.add_parser("ops", help="kernels per key; ops with or without a kernel for a key")
    ops.add_argument("--key", help="list the ops with a kernel registered for KEY")
    ops.add_argument("--missing", metavar="KEY", help="list the ops of --ns with no entry for KEY")
    ops.add_argument("--ns", default="aten", help="namespace for --missing (default: aten)")
    ops.set_defaults(fn=cmd_ops)
    table = sub.add_parser("table", help="the computed dispatch table of an operator")
    table.add_argument("op", help="ns::op.overload, e.g. aten::add.Tensor")
    table.set_defaults(fn=cmd_table)
    explain = sub.add_parser(
        "explain",
        help="why a call runs the kernel it runs",
        description='Arguments: tensors as DTYPE[SHAPE] [DEVICE] [requires_grad] (e.g. "f32[2,3] '
        'cpu"), Python literals, or name=value keyword arguments.',
    )
    explain.add_argument("op", help="ns::op.overload or ns::op")
    explain.add_argument("args", nargs="*")
    explain.set_defaults(fn=cmd_explain)
    source = sub.add_parser(
        "source",
        help="the code a call of an operator runs, frame by frame",
        description="Prints the frames a call of OP runs, top down: its public function, the "
        "dispatch call generated from its schema, and the kernel of the call's highest key, "
        "then those of the keys below a functionality key, down to a backend's kernel; each "
        "with its key, where its entry comes from, who registered it, its file and line.",
    )
    source.add_argument("op", help="ns::op.overload, e.g. aten::add.Tensor (ns::op: .default)")
    source.add_argument(
        "--keys",
        metavar="KEY,...",
        help="the dispatch key set, e.g. AutogradCPU,CPU (aliases expand; default: what a call "
        "with plain CPU tensors dispatches on)",
    )
    source.set_defaults(fn=cmd_source)
    sub.add_parser("demo", help="an end-to-end run of the installed plugins").set_defaults(
        fn=cmd_demo
    )
    new = sub.add_parser("new-plugin", help="write a ready plugin package")
    new.add_argument("name", help="the plugin's name: module tensorplug_NAME, key from NAME")
    kind = new.add_mutually_exclusive_group(required=True)
    kind.add_argument("--backend", dest="kind", action="store_const", const="backend")
    kind.add_argument("--functionality", dest="kind", action="store_const", const="functionality")
    new.add_argument("--xp", default="numpy", help="a backend's array library (default: numpy)")
    new.add_argument("--dir", default=".", help="where to write tensorplug-NAME/ (default: .)")
    new.set_defaults(fn=cmd_new_plugin)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    fn: Callable[[argparse.Namespace, TextIO], int] = args.fn
    try:
        return fn(args, sys.stdout)
    except (CliError, RegistrationError, DispatchKeyError, MissingPluginError, DispatchError) as e:
        print(f"tensorplug {args.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `tensorplug ops | head`: stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
