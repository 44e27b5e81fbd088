"""``tp.dispatcher.source`` and ``tensorplug source`` (Note [Dispatch source] in
dispatcher/_source.py): the frames a call runs, top down, with their files, lines and text."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterator
from typing import Any

import pytest

import tensorplug as tp
from tensorplug import codegen, dispatcher, plugins
from tensorplug._opset import api as _api
from tensorplug.cli import main
from tensorplug.errors import DispatchError, RegistrationError
from tensorplug.keys import DispatchKeyError

needs_cpu = pytest.mark.skipif(
    "cpu" not in plugins.loaded_names(), reason="needs the tensorplug-cpu plugin"
)


def cpu_kernel(x: Any) -> Any:
    return x  # the CPU kernel of the test operators


def functionality_kernel(keyset: Any, x: Any) -> Any:
    return x  # registered with_keyset: the cache holds it with the key set bound


def _frames(text: str) -> list[str]:
    """The frame headings of a source() text, without their numbers."""
    return [line.split(". ", 1)[1] for line in text.splitlines() if line.startswith("-- ")]


@pytest.fixture
def op(ns: str) -> Iterator[str]:
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.define("g.one(Tensor x) -> Tensor")
        lib.impl("f", cpu_kernel, "CPU")
        yield f"{ns}::f"


def test_the_dispatch_call_then_the_kernel_with_its_file_line_and_registrant(op: str) -> None:
    text = dispatcher.source(op, ["CPU"])
    assert text.startswith(f"{op}(Tensor x) -> Tensor\n")
    assert "dispatch key set: DispatchKeySet(CPU)\n" in text
    assert _frames(text) == [
        f"{op}.default: the dispatch call (generated from the schema)",
        f"CPU: {__name__}.cpu_kernel (entry from CPU, registered by {__name__}:op)",
    ]
    assert f'File "<tensorplug: dispatch {op}.default>", line 1\ndef __call__(_op, x=_M' in text
    assert "    return _k(x)\n" in text
    line = inspect.getsourcelines(cpu_kernel)[1]
    assert f'   File "{__file__}", line {line}\n{inspect.getsource(cpu_kernel)}' in text


def test_the_dispatch_call_is_the_op_s_generated_text(op: str) -> None:
    ov = dispatcher.find_op(op)
    text = dispatcher.source(ov, ["CPU"])
    call = codegen.source_of(type(ov).__call__)
    assert call is not None and call.split("\n\n")[0] in text  # __call__, not redispatch
    assert "def redispatch" not in text


def test_a_functionality_key_is_followed_by_the_kernels_below_it(op: str, free_key: str) -> None:
    with tp.Library(op.split("::")[0], "IMPL") as lib:
        lib.impl("f", functionality_kernel, free_key, with_keyset=True)
        text = dispatcher.source(op, [free_key, "CPU"])
    assert [f.split(":")[0] for f in _frames(text)[1:]] == [free_key, "CPU"]
    assert "def functionality_kernel(keyset: Any, x: Any) -> Any:" in text
    assert text.index("def functionality_kernel") < text.index("def cpu_kernel")


def test_a_boxed_fallback_shows_its_function(op: str, free_key: str) -> None:
    def boxed(op: Any, keyset: Any, *args: Any, **kwargs: Any) -> Any:
        return op.redispatch(keyset.remove(free_key), *args, **kwargs)

    with tp.Library("_", "IMPL") as lib:
        lib.fallback(boxed, free_key)
        text = dispatcher.source(op, [free_key, "CPU"])
    assert f"{free_key}: boxed fallback {__name__}.boxed (entry from fallback" in text
    assert "return op.redispatch(keyset.remove(free_key)" in text


def test_nothing_below_a_functionality_kernel_is_said_in_a_last_line(
    op: str, free_key: str
) -> None:
    with tp.Library(op.split("::")[0], "IMPL") as lib:
        lib.impl("f", functionality_kernel, free_key, with_keyset=True)
        text = dispatcher.source(op, [free_key])
    assert text.endswith(
        f"-- below: nothing runs: Could not run '{op}.default': the dispatch key set of the "
        "call is empty (no tensor argument, and no key included by the thread). "
        f"'{op}.default' is only available for these keys: [{free_key}, CPU].\n"
    )


def test_a_missing_kernel_raises_the_dispatchers_error(op: str) -> None:
    with pytest.raises(DispatchError, match=rf"^Could not run '{op}.default' with arguments "):
        dispatcher.source(op, ["Meta"])


def test_generated_kernels_show_their_text_or_say_it_was_not_kept(op: str) -> None:
    made = codegen.define("def gen_kernel(x):\n    return x\n", {}, "test kernel")
    bare: dict[str, Any] = {}
    exec(compile("def bare_kernel(x):\n    return x\n", "<bare>", "exec"), bare)
    with tp.Library(op.split("::")[0], "IMPL") as lib:
        lib.impl("f", made, "Meta")
        text = dispatcher.source(op, ["Meta"])
    assert f'File "{codegen.filename_of(made)}", line 1\ndef gen_kernel(x):\n    return x\n' in text
    with tp.Library(op.split("::")[0], "IMPL") as lib:
        lib.impl("f", bare["bare_kernel"], "Meta")
        text = dispatcher.source(op, ["Meta"])
    assert text.endswith(
        'File "<bare>", line 1\n'
        "(generated code whose text was not kept: compile it with tensorplug.codegen)\n"
    )


def test_a_kernel_without_python_source_and_a_decorated_one(op: str) -> None:
    with tp.Library(op.split("::")[0], "IMPL") as lib:
        lib.impl("f", functools.partial(max), "Meta")  # a builtin
        text = dispatcher.source(op, ["Meta"])
    assert text.endswith("<built-in function max>\n(no Python source: not a Python function)\n")

    @functools.wraps(cpu_kernel)
    def wrapper(*args: Any) -> Any:
        return cpu_kernel(*args)

    with tp.Library(op.split("::")[0], "IMPL") as lib:
        lib.impl("f", wrapper, "Meta")
        text = dispatcher.source(op, ["Meta"])
    assert "def wrapper(*args: Any) -> Any:\n    return cpu_kernel(*args)\n" in text
    assert f'   which calls cpu_kernel, File "{__file__}", line ' in text


def test_the_two_backend_guard_is_looked_through(op: str, backend: Any) -> None:
    ks = tp.keys.keyset(backend.name, "CPU")
    with tp.Library(op.split("::")[0], "IMPL") as lib:
        lib.impl("f", cpu_kernel, backend.name)
        guarded = dispatcher.find_op(op).kernel_for(ks)
        text = dispatcher.source(op, ks)
    assert guarded.__qualname__ == "_same_device_guard.<locals>.guarded"
    assert _frames(text)[-1].startswith(f"{backend.name}: {__name__}.cpu_kernel")
    assert "def cpu_kernel(x: Any) -> Any:" in text


def test_ns_op_means_the_default_overload(op: str) -> None:
    assert dispatcher.source(op, ["CPU"]) == dispatcher.source(f"{op}.default", ["CPU"])


def test_an_unknown_op_names_it_and_suggests_close_names(op: str) -> None:
    ns = op.split("::")[0]
    with pytest.raises(RegistrationError) as e:
        dispatcher.source(f"{ns}::ff")
    assert str(e.value) == (
        f"No operator named '{ns}::ff.default' is defined. Define it with "
        f"tp.Library('{ns}', 'DEF').define('<schema>'). Did you mean {ns}::f.default?"
    )
    with pytest.raises(RegistrationError) as e:
        dispatcher.source(f"{ns}::gg.one")  # the same overload name first
    assert str(e.value).endswith(f"Did you mean {ns}::g.one?")
    with pytest.raises(RegistrationError) as e:
        dispatcher.source(f"{ns}::zzzzzz")
    assert "Did you mean" not in str(e.value)
    with pytest.raises(RegistrationError, match="Known overloads: "):
        dispatcher.source(f"{ns}::g")  # find_op's list of the overloads of that name
    with pytest.raises(RegistrationError, match="operator names are qualified"):
        dispatcher.source("f")


def test_an_unknown_key_is_reported(op: str) -> None:
    with pytest.raises(DispatchKeyError, match="Unknown dispatch key 'Nope'"):
        dispatcher.source(op, "Nope,CPU")


def test_the_default_key_set_is_a_plain_cpu_tensor_s_call(op: str) -> None:
    m = tp.dispatch.local_state.masks
    ks = (tp.keys.tensor_keyset("CPU") | m.inc) & m.nexc
    assert f"dispatch key set: {tp.keys.DispatchKeySet(ks)!r}\n" in dispatcher.source(op)


@needs_cpu
def test_aten_add_shows_the_public_function_above_the_dispatch_call() -> None:
    text = dispatcher.source("aten::add.Tensor")
    frames = _frames(text)
    assert frames[:2] == [
        "tensorplug.add: the public function",
        "aten::add.Tensor: the dispatch call (generated from the schema)",
    ]
    assert frames[2].startswith("CPU: ") and frames[2].endswith("registered by cpu)")
    assert 'File "<tensorplug: public function' in text
    assert "    return _k(self, other, alpha=alpha)\n" in text


def test_the_public_functions_are_found_through_a_table_filled_from_above() -> None:
    assert _api._public_callers in dispatcher._source_callers
    add = dispatcher.find_op("aten::add.Tensor")
    assert _api._public_callers(add) == [("tensorplug.add", tp.add)]
    norm = dispatcher.find_op("aten::linalg_vector_norm")
    assert _api._public_callers(norm) == [("tensorplug.linalg.vector_norm", tp.linalg.vector_norm)]
    method_only = dispatcher.find_op("aten::add_.Tensor")
    assert _api._public_callers(method_only) == []


@pytest.mark.skipif(
    "autograd" not in plugins.loaded_names(), reason="needs the tensorplug-autograd plugin"
)
def test_an_autograd_key_set_shows_the_autograd_kernel_then_the_backend_s() -> None:
    text = dispatcher.source("aten::mul.Tensor", ["AutogradCPU", "CPU"])
    keys = [f.split(":")[0] for f in _frames(text)[2:]]
    assert keys == ["AutogradCPU", "CPU"]
    assert "(entry from Autograd, registered by autograd)" in text


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@needs_cpu
def test_cli_source(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "source", "aten::add.Tensor")
    assert (code, err) == (0, "")
    assert out == dispatcher.source("aten::add.Tensor")
    assert "aten::add.Tensor" in out and "return _k(" in out


def test_cli_source_keys(capsys: pytest.CaptureFixture[str], op: str) -> None:
    code, out, _ = run(capsys, "source", op, "--keys", "CPU")
    assert code == 0
    assert out == dispatcher.source(op, ["CPU"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["source", "aten::ad.Tensor"],
            # the closest name first (the other suggestions move as operators are added:
            # aten::pad is as close to "ad" as aten::add)
            "tensorplug source: error: No operator named 'aten::ad.Tensor' is defined. Define "
            "it with tp.Library('aten', 'DEF').define('<schema>'). Did you mean "
            "aten::add.Tensor",
        ),
        (
            ["source", "nope"],
            "tensorplug source: error: operator names are qualified: 'ns::op.overload', got "
            "'nope'\n",
        ),
        (
            ["source", "aten::add.Tensor", "--keys", "Nope"],
            "tensorplug source: error: Unknown dispatch key 'Nope'. Known keys: ",
        ),
    ],
)
def test_cli_source_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(message)


def test_cli_help_lists_source(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "source" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["source", "--help"])
    out = capsys.readouterr().out
    assert "--keys KEY,..." in out and "ns::op.overload" in out
