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
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

import tensorplug

from . import dispatcher as _dispatcher
from . import keys as _keys
from . import plugins as _plugins
from ._demo import SECTIONS, cmd_demo, spiral_problem
from .errors import DispatchError, MissingPluginError, RegistrationError
from .keys import DispatchKeyError

__all__ = ["SECTIONS", "main", "spiral_problem"]

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


def probe_failures(key_name: str, ops: Iterable[str] | None = None) -> dict[str, str]:
    """``tensorplug ops --missing KEY --probe``: each operator (of ``ops``, else every one with an
    OpInfo) whose kernel for backend ``KEY`` is registered but fails the first float32 sample of
    the conformance kit (``tensorplug.testing``) on the key's device, with the first failure on
    one line. What a namespace cannot run shows here, where the dispatch table sees a kernel:
    a function the namespace lacks, a signature it takes differently, a wrong value. It runs
    each case (seconds for numpy, minutes for a lazy library) and needs numpy."""
    from .testing import case_failures, cases

    key = _keys.get(key_name)
    if key.device_type is None:
        raise CliError(f"--probe needs a backend key with a device type; {key_name!r} has none")
    wanted = None if ops is None else set(ops)
    seen: set[str] = set()
    out: dict[str, str] = {}
    for p in cases(frozenset({"float32"})):
        info, dtype, sample = p.values
        if info.name in seen or (wanted is not None and info.name not in wanted):
            continue
        seen.add(info.name)
        try:
            table = _dispatcher.dispatch_table(f"aten::{info.op_name}.{info.overload_name}")
        except Exception:  # noqa: BLE001 - an OpInfo of no aten overload: run it
            table = {}
        if table.get(key.name) == "missing":
            continue  # listed above
        try:
            failures = case_failures(info, dtype, sample, key.device_type)
        except Exception as e:  # noqa: BLE001 - a harness failure is the op's failure too
            failures = [f"{type(e).__name__}: {e}"]
        if failures:
            out[info.name] = " ".join(failures[0].split())[:200]
    return out


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
        if args.probe:
            failing = probe_failures(key.name)
            colon = ":" if failing else "."
            print(
                f"{len(failing)} ops with a {key.name} kernel fail their first float32 sample of "
                f"the conformance kit on {key.device_type!r}{colon}",
                file=out,
            )
            for name, why in failing.items():
                print(f"  {name}: {why}", file=out)
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
    print(str(op.schema), file=out)
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
    ops.add_argument(
        "--probe",
        action="store_true",
        help="with --missing: also run each op's first float32 conformance sample on the key's "
        "device and list the registered kernels that fail (what the namespace cannot run)",
    )
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
