"""The house: no import cycle in the core or any plugin, deferred imports included, and no
import in the core that runs up a layer (docs/architecture.md, Note [Layers])."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tool_scripts import load_tool

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core" / "src" / "tensorplug"


graph_tool = load_tool("import_graph")

PACKAGES = [
    CORE,
    *sorted(p for p in (ROOT / "plugins").glob("*/src/*") if (p / "__init__.py").exists()),
    *sorted(p for p in (ROOT / "examples").glob("*/src/*") if (p / "__init__.py").exists()),
]

# The core's layers, lowest first (docs/architecture.md draws them). A module imports only from
# its own layer and the layers below, inside functions too. A name ending in "." covers a
# package and everything in it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "_types", "_protocol", "_version", "errors", "dtypes", "device", "codegen", "_strides",
            "_entry_points", "_manifest", "_settings",
        ),
    ),
    (
        "dispatch",
        (
            "_dispatch_key", "_key_order", "keys", "_schema_tokens", "schema", "_binding",
            "_schema_cache", "dispatch", "dispatcher", "dispatcher.", "tensor", "storage",
            "_backends", "random", "cpu",
        ),
    ),
    (
        "op-set",
        (
            "_opset", "_opset.", "ops", "overrides", "composites", "composites.",
            "serialization", "serialization.", "_op_errors",
        ),
    ),
    ("kit", ("array_backend", "array_backend.", "_meta", "_meta.")),
    ("plugin loading", ("hookspecs", "plugins", "plugins.")),
    ("torch.library", ("library", "library.")),
    ("package face", ("", "_startup")),
    (
        "front ends",
        (
            "nn", "nn.", "optim", "optim.", "cli", "_demo", "_scaffold", "testing",
            "testing.", "cuda", "linalg", "special", "fft", "utils", "utils.",
        ),
    ),
]  # fmt: skip


def layer_of(module: str) -> int | None:
    rel = module.removeprefix("tensorplug").removeprefix(".")
    for i, (_, names) in enumerate(LAYERS):
        for n in names:
            if rel == n or (n.endswith(".") and rel.startswith(n)):
                return i
    return None


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_no_import_cycle_deferred_imports_included(package: Path) -> None:
    found = graph_tool.cycles(graph_tool.graph(package))
    assert not found, f"import cycles in {package.name}: " + "; ".join(
        " <-> ".join(c) for c in found
    )


@pytest.mark.parametrize("package", PACKAGES[1:], ids=lambda p: p.name)
def test_no_plugin_import_cycle_even_for_type_checkers(package: Path) -> None:
    """A plugin's modules form no circle even with the imports under ``if TYPE_CHECKING:``
    (the core has three such imports that close circles for type checkers only, never at run
    time: the package face declaring its lazy front ends, the Tensor method stub, and the
    hooks' registry types; docs/architecture.md)."""
    found = graph_tool.cycles(graph_tool.graph(package, type_only=True))
    assert not found, f"import cycles in {package.name}: " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_every_core_module_has_a_layer() -> None:
    unplaced = sorted(m for m in graph_tool.graph(CORE) if layer_of(m) is None)
    assert not unplaced, f"put these modules in a layer of tests/test_layers.py: {unplaced}"


def test_every_name_of_a_layer_is_a_core_module() -> None:
    """The table stays true to the tree: a module moved or removed leaves no stale name."""
    modules = {m.removeprefix("tensorplug").removeprefix(".") for m in graph_tool.graph(CORE)}
    stale = [
        n
        for _, names in LAYERS
        for n in names
        if not (any(m.startswith(n) for m in modules) if n.endswith(".") else n in modules)
    ]
    assert not stale, f"names in tests/test_layers.py's LAYERS that no module has: {stale}"


def test_no_core_import_runs_up_a_layer() -> None:
    up = []
    for module, targets in graph_tool.graph(CORE).items():
        here = layer_of(module)
        if here is None:
            continue
        for target in sorted(targets):
            there = layer_of(target)
            if there is not None and there > here:
                up.append(f"{module} ({LAYERS[here][0]}) -> {target} ({LAYERS[there][0]})")
    assert not up, "imports that run up a layer:\n" + "\n".join(up)


def test_the_cycle_check_sees_deferred_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from . import c\n"
        "def f():\n    from .a import g\n"
    )
    (pkg / "c.py").write_text("from .b import f\n")
    assert graph_tool.cycles(graph_tool.graph(pkg)) == [["pkg.a", "pkg.b"]]
