"""The import graph of a package, deferred imports included, and its cycles.

    python tools/import_graph.py core/src/tensorplug plugins/autograd/src/tensorplug_autograd

prints every cycle among each package's modules (an import inside a function counts: it runs
too) and exits 1 when there is one; ``--type-only`` counts the imports under
``if TYPE_CHECKING:`` as well. ``tests/test_layers.py`` holds the core and every plugin
to it, and the core to its layers (docs/architecture.md).

An import is an edge from the importing module to the module it names: ``from .a.b import c``
to ``a.b.c`` when that is a module, else to ``a.b`` (the packages on the way are not edges:
their ``__init__`` runs, but the design depends on the module named). Imports under ``if TYPE_CHECKING:`` are not edges: they never run. A package's
``__init__`` is a module of its own.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for the package whose folder is ``root``."""
    pkg = root.name
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = [pkg, *rel.parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, type_only: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run, at any depth, outside ``if TYPE_CHECKING:`` (and
    inside it too when ``type_only``)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if not type_only and isinstance(child, ast.If) and _is_type_checking(child.test):
                stack.extend(child.orelse)  # type: ignore[arg-type]
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child
            stack.append(child)


def imported_modules(
    name: str, path: Path, modules: dict[str, Path], type_only: bool = False
) -> set[str]:
    """The modules of ``modules`` that module ``name`` (file ``path``) imports (with
    ``type_only``, its imports for type checkers too)."""
    is_pkg = path.name == "__init__.py"
    here = name if is_pkg else name.rpartition(".")[0]
    found: set[str] = set()

    def add(target: str) -> None:
        while target and target not in modules:  # `import a.b.c` of a name inside a.b
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)

    for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path)), type_only):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
            continue
        if node.level:
            base = here
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            target = f"{base}.{node.module}" if node.module else base
        else:
            target = node.module or ""
        for alias in node.names:  # a submodule by name, else a name of the module
            sub = f"{target}.{alias.name}"
            add(sub if sub in modules else target)
    return found


def graph(root: Path, type_only: bool = False) -> dict[str, set[str]]:
    """Module -> the modules it imports; with ``type_only``, type checkers' imports too."""
    modules = module_files(root)
    return {
        name: imported_modules(name, path, modules, type_only) for name, path in modules.items()
    }


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a self-import)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0

    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1 or v in edges.get(v, ()):
                        out.append(sorted(comp))
    return out


def main(argv: list[str]) -> int:
    type_only = "--type-only" in argv
    bad = 0
    for arg in (a for a in argv if a != "--type-only"):
        edges = graph(Path(arg), type_only)
        for comp in cycles(edges):
            bad += 1
            print(f"{arg}: a cycle of {len(comp)} modules:")
            for m in comp:
                print(f"    {m} -> {', '.join(sorted(set(edges[m]) & set(comp)))}")
    if not bad:
        print("no cycles")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
