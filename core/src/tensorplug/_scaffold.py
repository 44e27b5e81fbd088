"""``tensorplug new-plugin NAME --backend | --functionality``: a ready plugin package.

The package is what docs/plugins.md describes, filled in for NAME: ``pyproject.toml`` with the
entry point, ``src/tensorplug_<name>/__init__.py`` with the hooks, a README, and tests that
pass as written (a backend's run the conformance kit, ``tensorplug.testing``; a functionality
key's check that its fallback sees every call and changes no result). From there an author
replaces what the comments mark.

Usage::

    tensorplug new-plugin bar --backend            # ./tensorplug-bar/, backend key Bar on numpy
    tensorplug new-plugin bar --backend --xp cupy  # ... on another array-API library
    tensorplug new-plugin trace_count --functionality --dir plugins/
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

__all__ = ["ScaffoldError", "new_plugin"]


class ScaffoldError(ValueError):
    """A name or directory ``new_plugin`` cannot use."""


def _key_name(name: str) -> str:
    """``trace_count`` -> ``TraceCount``: the dispatch key's name."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def new_plugin(name: str, kind: str, directory: str | Path = ".", *, xp: str = "numpy") -> Path:
    """Write the package of plugin ``name`` (``kind``: "backend" or "functionality") into
    ``directory/tensorplug-<name>`` and return that path."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise ScaffoldError(
            f"plugin name {name!r}: use lower-case letters, digits and underscores, starting "
            "with a letter (it names the module tensorplug_<name> and the entry point)"
        )
    if kind not in ("backend", "functionality"):
        raise ScaffoldError(f"kind {kind!r}: choose 'backend' or 'functionality'")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", xp):
        raise ScaffoldError(f"--xp {xp!r}: give the module name of an array library (numpy)")
    dist = "tensorplug-" + name.replace("_", "-")
    root = Path(directory) / dist
    if root.exists():
        raise ScaffoldError(f"{root} exists already; choose another name or --dir")
    module = f"tensorplug_{name}"
    import tensorplug

    # the plugin is written for this plugin API, so it depends on the tensorplug releases from
    # this one (which has that API) up to the next that may change its MAJOR: the next minor
    # while tensorplug is 0.x (docs/plugins.md, 'Versions')
    major, minor = (int(n) for n in tensorplug.__version__.split(".")[:2])
    values = {
        "api_version": tensorplug.PLUGIN_API_VERSION,
        "api_floor": tensorplug.__version__,
        "api_ceiling": f"0.{minor + 1}" if major == 0 else f"{major + 1}",
        "name": name,
        "dist": dist,
        "module": module,
        "key": _key_name(name),
        "device": name,
        "xp": xp,
        # one block, sorted: to the plugin's own linter both are third-party packages
        "third_party_imports": "\n".join(sorted([f"import {xp}", "import tensorplug as tp"])),
        "xp_dist": _XP_DISTRIBUTIONS.get(xp, xp.split(".")[0].replace("_", "-")),
    }
    files = _BACKEND if kind == "backend" else _FUNCTIONALITY
    for rel, text in files.items():
        path = root / rel.format(**values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(**values).lstrip("\n"))
    return root


# import name -> distribution name, where they differ
_XP_DISTRIBUTIONS = {
    "numpy": "numpy>=1.26",
    "array_api_strict": "array-api-strict>=2.3",
    "dask.array": "dask[array]>=2024.8",  # the array extra brings numpy and toolz
}

_PYPROJECT = """
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "{dist}"
version = "0.1.0"
description = "A tensorplug plugin"
requires-python = ">=3.11"
dependencies = ["tensorplug>={api_floor},<{api_ceiling}"{extra_dependency}]

[project.optional-dependencies]
test = ["pytest>=8", "numpy>=1.26"{test_dependency}]

[project.entry-points.tensorplug]
{name} = "{module}"

[tool.hatch.build.targets.wheel]
packages = ["src/{module}"]
"""

_BACKEND = {
    "pyproject.toml": _PYPROJECT.replace("{extra_dependency}", ', "{xp_dist}"').replace(
        "{test_dependency}", ', "tensorplug-cpu", "tensorplug-autograd"'
    ),
    "src/{module}/py.typed": "",
    "src/{module}/__init__.py": '''
"""{dist}: the tensorplug backend ``{key}`` (device type ``"{device}"``) on {xp}.

Every standard operator runs through tensorplug's generic array-API kernels bound to {xp}
(``tensorplug.array_backend.register``); pass ``overrides={{"mm": my_mm}}`` for kernels of your
own. Registering the backend key also creates ``Autograd{key}`` and ``Autocast{key}``.
"""

from __future__ import annotations

from typing import Any

{third_party_imports}

PLUGIN_API_VERSION = "{api_version}"  # the tensorplug.PLUGIN_API_VERSION it is written for


@tp.hookimpl
def tensorplug_add_keys(keys: Any) -> None:
    keys.register_backend("{key}", "{device}")


@tp.hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    tp.array_backend.register(registry, "{key}", {xp})
''',
    "tests/test_{name}_conformance.py": '''
"""tensorplug's conformance kit on the {key} backend: every standard operator against its
numpy oracle on device "{device}", and (with tensorplug-autograd) every gradient against the
CPU's. Leave ``dtypes=`` out to run every dtype the backend stores (a few minutes)."""

from tensorplug.testing import instantiate_device_type_tests

instantiate_device_type_tests(globals(), "{device}", dtypes=("float32", "int64"))
''',
    "tests/test_{name}.py": '''
"""The {key} backend is loaded and computes."""

import tensorplug as tp


def test_the_plugin_is_loaded() -> None:
    assert "{name}" in tp.plugins.loaded_names()
    assert tp.keys.get("{key}").device_type == "{device}"


def test_a_tensor_lives_on_the_device_and_comes_back() -> None:
    x = tp.tensor([[1.0, 2.0], [3.0, 4.0]], device="{device}")
    y = (x @ x).sum(0)
    assert y.device == tp.device("{device}")
    assert y.cpu().tolist() == [22.0, 32.0]
''',
    "README.md": """
# {dist}

A tensorplug backend: the dispatch key `{key}`, device type `"{device}"`, whose arrays are
{xp} arrays and whose kernels are tensorplug's generic array-API kernels.

```python
import tensorplug as tp

x = tp.ones(3, device="{device}")
print(x + x, tp.plugins.loaded_names())
```

- `pip install -e .[test]` then `pytest`: the conformance kit (`tensorplug.testing`) runs every
  standard operator on `"{device}"` against its numpy oracle.
- `tensorplug ops --missing {key}` lists the operators without a kernel for the key.
- `TENSORPLUG_DISABLE_PLUGINS={name}` turns the plugin off.
- Publishing: `python -m build` (or `uv build`) makes the wheel; the entry point
  `[project.entry-points.tensorplug] {name} = "{module}"` is what makes tensorplug find it.
""",
}

_FUNCTIONALITY = {
    "pyproject.toml": _PYPROJECT.replace("{extra_dependency}", "").replace(
        "{test_dependency}", ', "tensorplug-cpu"'
    ),
    "src/{module}/py.typed": "",
    "src/{module}/__init__.py": '''
"""{dist}: the functionality key ``{key}``, a boxed fallback that sees every call.

``with tp.{name}() as seen:`` turns the key on for the block; its fallback records each
operator it sees in ``seen`` and passes the call on below the key, unchanged. Replace
``{name}_fallback`` with the behaviour of your key.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Iterator
from typing import Any

import tensorplug as tp

PLUGIN_API_VERSION = "{api_version}"  # the tensorplug.PLUGIN_API_VERSION it is written for
_seen: collections.Counter[str] = collections.Counter()


def {name}_fallback(op: Any, keyset: Any, *args: Any, **kwargs: Any) -> Any:
    """A boxed fallback: every operator, any namespace, reaches it while {key} is on."""
    _seen[op.name] += 1
    return op.redispatch(keyset.below("{key}"), *args, **kwargs)


@contextlib.contextmanager
def {name}() -> Iterator[collections.Counter[str]]:
    """``with tp.{name}() as seen:`` -- ``seen[op_name]`` counts the calls of the block."""
    _seen.clear()
    with tp.dispatch.include("{key}"):
        yield _seen


@tp.hookimpl
def tensorplug_add_keys(keys: Any) -> None:
    keys.register_functionality("{key}", before="Batched")  # above every other key


@tp.hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    registry.library("_", "IMPL").fallback({name}_fallback, "{key}")


@tp.hookimpl
def tensorplug_add_names() -> dict[str, Any]:
    return {{"{name}": {name}}}
''',
    "tests/test_{name}.py": '''
"""The {key} key: its fallback sees every call of a block and changes no result."""

import tensorplug as tp


def test_the_plugin_is_loaded() -> None:
    assert "{name}" in tp.plugins.loaded_names()
    assert tp.keys.get("{key}").kind.value == "functionality"


def test_the_fallback_sees_every_call_and_changes_nothing() -> None:
    x = tp.tensor([1.0, -2.0, 3.0])
    want = (x.exp() + x).sum()
    with tp.{name}() as seen:
        got = (x.exp() + x).sum()
    assert got.item() == want.item()
    assert seen["aten::exp.default"] == 1 and seen["aten::add.Tensor"] == 1
    assert seen["aten::sum.default"] == 1


def test_outside_the_block_nothing_is_seen() -> None:
    with tp.{name}() as seen:
        pass
    tp.ones(2).exp()
    assert not seen
''',
    "README.md": """
# {dist}

A tensorplug functionality key, `{key}`, with a boxed fallback that sees every operator call
while it is on (`with tp.{name}() as seen: ...`) and passes it on below itself.

- `pip install -e .[test]` then `pytest`.
- `tensorplug keys` shows `{key}` in the priority order; `TENSORPLUG_DISABLE_PLUGINS={name}`
  turns the plugin off.
- Publishing: `python -m build` (or `uv build`) makes the wheel; the entry point
  `[project.entry-points.tensorplug] {name} = "{module}"` is what makes tensorplug find it.
""",
}
