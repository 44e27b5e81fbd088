"""native_functions.yaml read into :class:`OpEntry` objects, one per operator, with their parsed
schemas (cached between runs by _schema_cache.py)."""

from __future__ import annotations

import os
import sys
from typing import Any

from .. import _schema_cache
from ..dispatcher import OpOverload
from ..schema import FunctionSchema, parse

# the modules of yaml entries with ``python_module:`` (Note [Python modules] in _opset/api.py)
PYTHON_MODULES = {"linalg": "tensorplug.linalg", "special": "tensorplug.special",
                  "fft": "tensorplug.fft", "nn": "tensorplug.nn.functional"}  # fmt: skip


class OpEntry:
    """One yaml entry. (A plain class: a dataclass costs half a millisecond at import.)"""

    __slots__ = (
        "func", "variants", "dispatch", "tags", "python", "python_module", "op", "derived_from",
    )  # fmt: skip

    def __init__(
        self,
        func: str,
        variants: tuple[str, ...] = ("function",),
        dispatch: dict[str, str] | None = None,
        tags: tuple[str, ...] = (),
        python: str | None = None,
        python_module: str | None = None,
        derived_from: tuple[str, list[str], list[str]] | None = None,
    ) -> None:
        self.func = func
        # Note [Derived out= overloads]: (functional overload, out arguments, dropped arguments)
        self.derived_from = derived_from
        self.variants = variants
        self.dispatch = {} if dispatch is None else dispatch
        self.tags = tags
        self.python = python
        self.python_module = python_module
        self.op: OpOverload | None = None
        if python_module is not None and python_module not in PYTHON_MODULES:
            raise ValueError(
                f"{_YAML}: {func}: unknown python_module {python_module!r}; the modules are "
                f"{', '.join(PYTHON_MODULES)} (Note [Python modules])"
            )

    def __repr__(self) -> str:
        return f"OpEntry({self.func!r}, variants={self.variants!r})"

    @property
    def public_name(self) -> str:
        """The function's name in its module: ``python:``, else the op's name without the
        module's prefix (``linalg_vector_norm`` is ``tensorplug.linalg.vector_norm``)."""
        assert self.op is not None
        if self.python:
            return self.python
        name = self.op.op_name
        prefix = f"{self.python_module}_"
        return name[len(prefix) :] if self.python_module and name.startswith(prefix) else name


def _load_yaml() -> list[tuple[dict[str, Any], FunctionSchema]]:
    """The yaml entries with their parsed schemas, from a cache when the yaml is unchanged.

    Parsing 400 schemas (each checked for its round trip) and importing PyYAML take tens of
    milliseconds, most of ``import tensorplug``; the cache (Note [Op set cache] in
    _schema_cache.py) is data, private to the user, and used only for the very yaml text and
    parser being loaded. ``importlib.resources`` is not imported for this: it costs more than
    the load itself.
    """
    raw, outs = _read(_YAML), _read(_OUTS)
    tag = f"{__package__}-{sys.version_info[:2]}-{_schema_mtime()}"
    cached = _schema_cache.load(raw + b"\0" + outs, tag)
    if cached is not None:
        return cached
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data: list[dict[str, Any]] = yaml.load(raw.decode(), Loader=loader)
    parsed = [(d, parse(d["func"])) for d in data]
    parsed += _derived_outs(parsed, outs.decode())
    _schema_cache.store(raw + b"\0" + outs, tag, parsed)
    return parsed


def _read(name: str) -> bytes:
    try:
        with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), name), "rb") as f:
            return f.read()
    except OSError:  # not installed as plain files (a zip): importlib.resources reads those
        from importlib import resources

        return resources.files("tensorplug").joinpath(name).read_bytes()


# Note [Derived out= overloads]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch gives most functional operators an ``out=`` overload (``abs.out``, ``sort.values``,
# ``max.dim_max``, ``linalg_svd.U``); its structured kernels compute the result, then resize
# ``out`` and copy into it. Here those overloads are not written into the yaml one by one:
# out_variants.txt (made by tools/gen_out_variants.py from PyTorch's yaml) lists, for each
# functional overload of our yaml, the name of PyTorch's out overload and its out arguments.
# Each becomes an entry after the yaml's: the functional's schema with keyword-only outs added
# (``Tensor(a!) out``; several for a tuple: ``Tensor(a!) values, Tensor(b!) indices``) and the
# returns aliasing them, a factory's TensorOptions dropped (``zeros.out(int[] size, *,
# Tensor(a!) out)``: the dtype and device are out's). The entry keeps the functional's public
# name and module, so ``tp.abs(x, out=o)`` and ``tp.linalg.svd(a, out=(U, S, Vh))`` bind it;
# its kernel (``CompositeExplicitAutograd``, _opset/outs.py) is the functional op, then
# PyTorch's resize and cast rules into the outs. An overload the yaml writes by hand (``add.out``,
# with a kernel of its own) is not derived. A new operator gets its out= by running the tool.
_OUTS = "out_variants.txt"


def _derived_outs(
    parsed: list[tuple[dict[str, Any], FunctionSchema]], text: str
) -> list[tuple[dict[str, Any], FunctionSchema]]:
    by_name = {s.full_name if s.overload_name else f"{s.name}.default": (d, s) for d, s in parsed}
    have = set(by_name)
    derived = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        functional, out_name, outs_text, dropped_text = line.split()
        if functional not in by_name or out_name in have:
            continue  # an operator another version of the yaml has, or an out= written by hand
        d, s = by_name[functional]
        outs = outs_text.split(",")
        dropped = set() if dropped_text == "-" else set(dropped_text.split(","))
        letters = "abcdefgh"
        args = [str(a) for a in s.positional if a.name not in dropped]
        kwargs = [str(a) for a in s.kwarg_only if a.name not in dropped]
        kwargs += [f"Tensor({letters[i]}!) {n}" for i, n in enumerate(outs)]
        returns = [
            f"Tensor({letters[i]}!)" + (f" {r.name}" if r.name and len(outs) > 1 else "")
            for i, r in enumerate(s.returns)
        ]
        if len(returns) != len(outs):
            continue
        ret = returns[0] if len(returns) == 1 else f"({', '.join(returns)})"
        func = f"{out_name.removesuffix('.default')}({', '.join([*args, '*', *kwargs])}) -> {ret}"
        tags = ["out"] + [t for t in d.get("tags") or () if t in ("factory", "mixed_devices")]
        entry: dict[str, Any] = {"func": func, "variants": "function", "tags": tags}
        entry["derived_from"] = [functional, outs, sorted(dropped)]
        for key in ("python", "python_module"):
            if d.get(key):
                entry[key] = d[key]
        derived.append((entry, parse(func)))
    return derived


_YAML = "native_functions.yaml"


def _schema_mtime() -> int:
    # a cache written by another version of the parser may hold other schemas: the parser and
    # the words it reads (type names, default values) are two files
    from .. import _schema_tokens, schema

    return int(max(os.stat(m.__file__ or "").st_mtime for m in (schema, _schema_tokens)))
