"""tensorplug.codegen: generated source is entered in linecache under a stable filename."""

from __future__ import annotations

import inspect
import linecache
import traceback

import pytest

from tensorplug import codegen


def test_define_enters_the_text_in_linecache_and_tracebacks_show_it() -> None:
    src = "def f(x):\n    y = x + 1\n    raise ValueError(y)\n"
    fn = codegen.define(src, {}, "test codegen f")
    assert fn.__code__.co_filename == "<tensorplug: test codegen f>"
    assert codegen.source_of(fn) == src
    assert inspect.getsource(fn) == src
    with pytest.raises(ValueError) as info:
        fn(1)
    text = "".join(traceback.format_exception(info.value))
    assert "raise ValueError(y)" in text
    assert 'File "<tensorplug: test codegen f>", line 3, in f' in text


def test_a_label_given_another_text_gets_a_filename_of_its_own() -> None:
    a = codegen.define("def g():\n    return 1\n", {}, "test codegen g")
    b = codegen.define("def g():\n    return 2\n", {}, "test codegen g")
    c = codegen.define("def g():\n    return 1\n", {}, "test codegen g")
    assert a.__code__.co_filename == "<tensorplug: test codegen g>"
    assert b.__code__.co_filename == "<tensorplug: test codegen g (2)>"
    assert c.__code__ is a.__code__  # one code object per text
    assert codegen.source_of(a) == "def g():\n    return 1\n"
    assert codegen.source_of(b) == "def g():\n    return 2\n"
    linecache.checkcache()  # entries without a modification time stay
    assert codegen.source_of(b) == "def g():\n    return 2\n"


def test_define_names_the_function_to_return_when_there_are_several() -> None:
    src = "def a():\n    return 1\n\ndef b():\n    return 2\n"
    with pytest.raises(ValueError, match=r"say which function to return.*\['a', 'b'\]"):
        codegen.define(src, {}, "test codegen two")
    assert codegen.define(src, {}, "test codegen two", name="b")() == 2


def test_source_of_plain_code_is_none() -> None:
    assert codegen.source_of(test_source_of_plain_code_is_none) is None
    assert codegen.filename_of(len) is None


def test_the_dispatch_call_and_public_function_of_add_are_visible() -> None:
    import tensorplug as tp

    a = tp.ones(3)
    try:
        tp.add(a, tp.ones(4))
    except RuntimeError as e:
        text = "".join(traceback.format_exception(e))
    else:  # pragma: no cover - the call must fail
        raise AssertionError("broadcasting (3,) with (4,) must fail")
    assert '"<tensorplug: dispatch aten::add.Tensor>"' in text
    assert "return _k(" in text  # the line of the generated call, not a bare filename


def test_the_text_leaves_linecache_with_the_last_function_made_from_it() -> None:
    import gc

    src = "def h():\n    return 3\n"
    f1 = codegen.define(src, {}, "test codegen h")
    f2 = codegen.define(src, {}, "test codegen h")
    filename = f1.__code__.co_filename
    del f1
    gc.collect()
    assert filename in linecache.cache  # f2 still runs it
    assert f2() == 3
    del f2
    gc.collect()
    assert filename not in linecache.cache
    f3 = codegen.define("def h():\n    return 4\n", {}, "test codegen h")
    assert f3.__code__.co_filename == filename  # free again: the label's own name
