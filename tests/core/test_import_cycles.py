"""No import cycle among the core's modules (issue 19).

The graph counts the imports that run when a module is imported: the module's own top level,
including ``if`` and ``try`` blocks, but neither ``if TYPE_CHECKING:`` blocks nor imports inside
functions (those run on first use, when every module is complete). ``from pkg import name``
counts as an import of ``pkg.name`` when that is a module, else of ``pkg`` itself: a module
that takes a name from its package's ``__init__`` depends on it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tensorplug
from tests.tool_scripts import load_tool

CORE = Path(tensorplug.__file__).parent


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _top_level_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If):
            test = node.test
            if isinstance(test, ast.Name | ast.Attribute) and (
                getattr(test, "id", None) == "TYPE_CHECKING"
                or getattr(test, "attr", None) == "TYPE_CHECKING"
            ):
                continue
            found += _top_level_imports(node.body) + _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            found += _top_level_imports(node.body) + _top_level_imports(node.orelse)
            found += _top_level_imports(node.finalbody)
            for handler in node.handlers:
                found += _top_level_imports(handler.body)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package that importing it imports."""
    paths = {_module_name(root, p): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in _top_level_imports(ast.parse(path.read_text(encoding="utf-8")).body):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                if node.level:
                    source = base + ("." + node.module if node.module else "")
                else:
                    source = node.module or ""
                targets = [
                    f"{source}.{a.name}" if f"{source}.{a.name}" in paths else source
                    for a in node.names
                ]
            deps.update(t for t in targets if t in paths and t != name)
        graph[name] = deps
    return graph


# The strongly connected components of more than one module: tools/import_graph.py's, which
# holds the core and the plugins to no cycle among all their imports (tests/test_layers.py)
cycles = load_tool("import_graph").cycles


def _describe(graph: dict[str, set[str]], component: list[str]) -> str:
    edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component]
    return ", ".join(edges)


def test_the_core_has_no_import_cycle() -> None:
    graph = import_graph(CORE)
    assert len(graph) > 50, sorted(graph)  # the walk found the core's modules
    assert "tensorplug.dispatcher._registry" in graph["tensorplug.dispatcher"]
    found = cycles(graph)
    assert not found, (
        "import cycles in the core: "
        + "; ".join(_describe(graph, c) for c in found)
        + " (move what both need into a module of its own, or import it on first use)"
    )


def test_the_check_finds_a_cycle(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text(
        "import typing\nif typing.TYPE_CHECKING:\n    from .. import c\n"
        "try:\n    from ..a import thing\nexcept ImportError:\n    pass\n"
        "def later():\n    from .. import c\n"
    )
    (pkg / "c.py").write_text("from . import a\n")
    graph = import_graph(pkg)
    assert graph["pkg.sub.b"] == {"pkg.a"}  # not c: typing-only and first-use imports
    assert cycles(graph) == [["pkg.a", "pkg.sub.b"]]
    assert _describe(graph, ["pkg.a", "pkg.sub.b"]) == "pkg.a -> pkg.sub.b, pkg.sub.b -> pkg.a"
