"""What a new user meets first: the README's examples run and show what they print, its commands
work, and the user-facing docs stand alone (nothing points outside the repository)."""

from __future__ import annotations

import doctest
import re
import shlex
from pathlib import Path

import pytest

import tensorplug as tp
from tensorplug.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
FIRST_PARTY = {"cpu", "autograd", "autocast", "tracer", "batched"}


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_readme_examples_print_what_they_show():
    if not FIRST_PARTY <= tp.plugins.loaded_names():
        pytest.skip("the README's outputs are those of the workspace install (all plugins)")
    blocks = [b for b in python_blocks(README.read_text()) if ">>>" in b]
    assert blocks, "the README has no example to check"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for i, block in enumerate(blocks):
        globs: dict[str, object] = {"__name__": "__main__"}
        test = parser.get_doctest(block, globs, f"README.md block {i}", str(README), 0)
        try:
            runner.run(test, out=_fail_with)
        finally:
            lib = globs.get("lib")
            if isinstance(lib, tp.Library):
                lib.close()  # a failed example leaves no registration behind
    assert runner.failures == 0


def _fail_with(report: str) -> None:
    pytest.fail(report, pytrace=False)


def test_readme_commands_run():
    if "cpu" not in tp.plugins.loaded_names():
        pytest.skip("the commands explain calls on CPU tensors")
    text = README.read_text()
    commands = sorted(set(re.findall(r"`(tensorplug [^`]+)`", text)))
    runnable = [c for c in commands if c.split()[1] in ("plugins", "keys", "table", "explain")]
    assert len(runnable) >= 5, commands
    for command in runnable:
        assert main(shlex.split(command)[1:]) == 0, command


USER_FACING = ["README.md", "pyproject.toml", "core/pyproject.toml", "docs/*.md", "core/*.md"]
USER_FACING += [f"{d}/*/{f}" for d in ("plugins", "examples") for f in ("pyproject.toml", "*.md")]


@pytest.mark.parametrize(
    "path", sorted({str(p.relative_to(ROOT)) for g in USER_FACING for p in ROOT.glob(g)})
)
def test_user_facing_docs_stand_alone(path):
    text = (ROOT / path).read_text()
    assert "../shared" not in text and "DESIGN.md" not in text, (
        f"{path} refers to a file outside the repository; docs/design.md is the contract"
    )
