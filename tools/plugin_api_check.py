"""Check that plugins use only tensorplug's public API (docs/plugins.md, "The plugin API").

Usage::

    python tools/plugin_api_check.py                 # every distribution under plugins/ and examples/
    python tools/plugin_api_check.py plugins/autograd

Reads sources, imports nothing. A plugin distribution is a folder with a ``pyproject.toml``;
its modules are the ``.py`` files under its ``src/``. Reported, with file, line and name:

* an import of a private tensorplug name: ``import tensorplug._repr``,
  ``from tensorplug._backends import ...``, ``from tensorplug.dispatcher import _trace``;
* a private attribute read, written or deleted through a tensorplug name: ``tp._api``,
  ``dispatcher._trace``, ``Tensor._new`` (operators keep their names: ``tp.ops.aten._foo``);
* a private attribute of a core object, on any other receiver: ``t._data``, ``op._cache``,
  ``getattr(k, "_tp_no_dispatch")``. The core's private attribute names are those its sources
  define (class bodies, ``__slots__``, attribute assignments, ``setattr``/``getattr``
  strings). A plugin's own attributes may have such names only on ``self``/``cls`` in a class
  of its own: elsewhere a reader (and this check) cannot tell them from the core's.

``Tensor._version``, which DESIGN.md names as public (as torch's is), is allowed. Also reported:
a write into an op's dispatch cache (``op.kernel_cache[ks] = f``, ``.clear()``, ...), which
plugins only read (``op.derived_kernel`` keeps what they derive).

Exit status 1 when anything is reported.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core" / "src" / "tensorplug"
_ATTR_FUNCTIONS = {"getattr", "setattr", "hasattr", "delattr"}

# Names with an underscore that DESIGN.md makes public all the same
PUBLIC: dict[str, str] = {
    "_version": "DESIGN §5: Tensor._version reads the version counter, as torch's does",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_" and name not in PUBLIC


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    name: str
    why: str

    def __str__(self) -> str:
        return f"{_shown(self.path)}:{self.line}: {self.name}: {self.why}"


def _shown(path: Path) -> Path:
    """``path`` relative to the repository, where it lies in it."""
    try:
        return path.relative_to(ROOT)
    except ValueError:
        return path


# --- the core's private attribute names ---------------------------------------------------------


@functools.cache
def core_private_names(core: Path = CORE) -> dict[str, str]:
    """Private attribute name -> where the core defines it (``file:line``); do not change the
    answer, it is shared."""
    trees = {p: ast.parse(p.read_text(), str(p)) for p in sorted(core.rglob("*.py"))}
    found: dict[str, str] = {}
    # where a class declares it, if one does (Tensor's __slots__ for _data), else where it is set
    for declared in (True, False):
        for path, tree in trees.items():
            for name, line in _defined_attributes(tree, declared):
                if _private(name):
                    found.setdefault(name, f"{path.relative_to(core.parent)}:{line}")
    return found


def _defined_attributes(tree: ast.AST, declared: bool) -> Iterator[tuple[str, int]]:
    """Attribute names a class body declares (``declared``), or code sets or reads by name."""
    for node in ast.walk(tree):
        if declared:
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    yield from _class_level_names(item)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node.attr, node.lineno
        elif isinstance(node, ast.Call):
            got = _attr_call(node)
            if got is not None:
                yield got[1], node.lineno


def _class_level_names(item: ast.stmt) -> Iterator[tuple[str, int]]:
    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield item.name, item.lineno
    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
        yield item.target.id, item.lineno
    elif isinstance(item, ast.Assign):
        for target in item.targets:
            if isinstance(target, ast.Name):
                yield target.id, item.lineno
                if target.id == "__slots__":
                    for c in ast.walk(item.value):
                        if isinstance(c, ast.Constant) and isinstance(c.value, str):
                            yield c.value, item.lineno


def _attr_call(node: ast.Call) -> tuple[ast.expr, str] | None:
    """``(receiver, name)`` of ``getattr(x, "name", ...)`` and its siblings."""
    if (
        isinstance(node.func, ast.Name)
        and node.func.id in _ATTR_FUNCTIONS
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[0], node.args[1].value
    return None


# --- one plugin ---------------------------------------------------------------------------------


def plugin_modules(dist: Path) -> list[Path]:
    return sorted((dist / "src").rglob("*.py"))


def check_plugin(
    dist: Path, core_names: dict[str, str] | None = None
) -> tuple[list[Violation], int]:
    """The violations in the modules of distribution ``dist``, and how many modules it has."""
    core_names = core_private_names() if core_names is None else core_names
    modules = plugin_modules(dist)
    trees = {path: ast.parse(path.read_text(), str(path)) for path in modules}
    owned = set()  # private names the plugin's own classes define
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                owned |= _owned_by_class(node)
    out: list[Violation] = []
    for path, tree in trees.items():
        out += _Visitor(path, core_names, owned).run(tree)
    return out, len(modules)


def _owned_by_class(cls: ast.ClassDef) -> set[str]:
    names = {name for item in cls.body for name, _ in _class_level_names(item)}
    for node in ast.walk(cls):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            names.add(node.attr)
    return {n for n in names if _private(n)}


class _Visitor(ast.NodeVisitor):
    def __init__(self, path: Path, core_names: dict[str, str], owned: set[str]) -> None:
        self.path = path
        self.core_names = core_names
        self.owned = owned
        self.tensorplug_names: set[str] = set()  # local names bound to tensorplug objects
        self.classes: list[ast.ClassDef] = []
        self.found: list[Violation] = []

    def run(self, tree: ast.AST) -> list[Violation]:
        for node in ast.walk(tree):  # bindings first: a use may come before in the file
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._bind(node)
        self.visit(tree)
        return self.found

    def report(self, node: ast.AST, name: str, why: str) -> None:
        self.found.append(Violation(self.path, getattr(node, "lineno", 0), name, why))

    # imports

    def _bind(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "tensorplug":
                    self.tensorplug_names.add(a.asname or "tensorplug")
        elif node.level == 0 and node.module and node.module.split(".")[0] == "tensorplug":
            for a in node.names:
                self.tensorplug_names.add(a.asname or a.name)

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            parts = a.name.split(".")
            if parts[0] == "tensorplug" and any(_private(p) for p in parts):
                self.report(node, a.name, "imports a private module of tensorplug")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module or node.module.split(".")[0] != "tensorplug":
            return
        if any(_private(p) for p in node.module.split(".")):
            self.report(node, node.module, "imports from a private module of tensorplug")
        for a in node.names:
            if _private(a.name):
                self.report(node, f"{node.module}.{a.name}", "imports a private tensorplug name")

    # attributes

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append(node)
        self.generic_visit(node)
        self.classes.pop()

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._check(node, node.value, node.attr)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        got = _attr_call(node)
        if got is not None:
            self._check(node, got[0], got[1])
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in _WRITERS and _is_kernel_cache(f.value):
            self.report(node, _dotted(f), _CACHE_WRITE)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)) and _is_kernel_cache(node.value):
            self.report(node, _dotted(node), _CACHE_WRITE)
        self.generic_visit(node)

    def _check(self, node: ast.AST, receiver: ast.expr, name: str) -> None:
        if not _private(name):
            return
        root = _root(receiver)
        text = f"{_dotted(receiver)}.{name}"
        if root in self.tensorplug_names:
            if not _through_ops(receiver):  # tp.ops.aten._foo: an operator's own name
                self.report(node, text, "a private name of tensorplug")
            return
        where = self.core_names.get(name)
        if where is None:
            return
        if root in ("self", "cls") and self.classes and name in self.owned:
            return  # the plugin's own attribute, on its own object
        self.report(
            node,
            text,
            f"{name} is a private attribute of a core object ({where}); use the public API "
            "(docs/plugins.md), or, if it is the plugin's own, give it another name",
        )


_WRITERS = {"clear", "pop", "popitem", "setdefault", "update", "__setitem__", "__delitem__"}
_CACHE_WRITE = (
    "writes an op's dispatch cache, which plugins only read; keep what the kernel derives "
    "with op.derived_kernel(keyset, derive)"
)


def _is_kernel_cache(e: ast.expr) -> bool:
    return isinstance(e, ast.Attribute) and e.attr == "kernel_cache"


def _root(e: ast.expr) -> str | None:
    while isinstance(e, (ast.Attribute, ast.Subscript, ast.Call)):
        e = e.value if not isinstance(e, ast.Call) else e.func
    return e.id if isinstance(e, ast.Name) else None


def _dotted(e: ast.expr) -> str:
    try:
        return ast.unparse(e)
    except Exception:  # pragma: no cover - unparse handles every expression of the grammar
        return "?"


def _through_ops(e: ast.expr) -> bool:
    while isinstance(e, ast.Attribute):
        if e.attr == "ops":
            return True
        e = e.value
    return False


# --- all plugins --------------------------------------------------------------------------------


def distributions(roots: Iterable[Path]) -> list[Path]:
    """The distribution folders (with a pyproject.toml) at or right under ``roots``."""
    out = []
    for root in roots:
        if (root / "pyproject.toml").is_file():
            out.append(root)
        else:
            out += sorted(p.parent for p in root.glob("*/pyproject.toml"))
    return out


def main(argv: list[str]) -> int:
    roots = [Path(a).resolve() for a in argv] or [ROOT / "plugins", ROOT / "examples"]
    core_names = core_private_names()
    bad = 0
    for dist in distributions(roots):
        found, n = check_plugin(dist, core_names)
        for v in found:
            print(v)
        bad += len(found)
        print(f"{_shown(dist)}: {n} modules, {len(found)} uses of private API")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
