"""The code generated from a graph is visible: a traceback through a replayed graph or a
compiled one shows the line of the node that raised (tensorplug.codegen, Note [Visible
generated code])."""

from __future__ import annotations

import linecache
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import tensorplug as tp
from tensorplug import codegen
from tests import needs

needs.tracer()


class Boom(Exception):
    pass


@contextmanager
def raising_op(ns: str) -> Iterator[tuple[Any, list[bool]]]:
    """``ns::boom(x)``: ``x * 2``, or raises :class:`Boom` once ``armed`` holds True."""
    armed: list[bool] = []

    def boom(x: Any) -> Any:
        if armed:
            raise Boom("raised inside the graph")
        return tp.mul(x, 2)

    with tp.Library(ns, "DEF") as lib:
        lib.define("boom(Tensor x) -> Tensor")
        lib.impl("boom", boom, "CPU")
        yield getattr(tp.ops, ns).boom.default, armed


def generated_frames(e: BaseException, label: str) -> list[traceback.FrameSummary]:
    """The frames of ``e``'s traceback that ran generated code labelled ``label``."""
    return [
        f
        for f in traceback.extract_tb(e.__traceback__)
        if f.filename.startswith(f"<tensorplug: {label}")
    ]


def test_a_replayed_graph_shows_the_line_of_the_node_that_raised(ns: str) -> None:
    with raising_op(ns) as (op, armed):

        def f(x: Any) -> Any:
            return op(x + 1).sum()

        g = tp.tracer.trace(f, tp.ones([3]))
        armed.append(True)
        with pytest.raises(Boom) as info:  # the first replay runs graph.code (a plan after)
            g(tp.ones([3]))
    (frame,) = generated_frames(info.value, "graph f")
    assert frame.name == "f"
    assert frame.line is not None and frame.line.startswith("v1 = _op1(v0)")
    assert "test_codegen.py:" in frame.line  # the node's own line, as a comment
    text = "".join(traceback.format_exception(info.value))
    assert f'File "{frame.filename}", line {frame.lineno}, in f\n    {frame.line}' in text


def test_a_replay_plan_shows_the_line_of_the_node_that_raised(ns: str) -> None:
    with raising_op(ns) as (op, armed):

        def f(x: Any) -> Any:
            return op(x + 1).sum()

        g = tp.tracer.trace(f, tp.ones([3]))
        for _ in range(2):  # graph.code under the tracer, then the lowered plan of that trace
            assert g(tp.ones([3])).item() == 12.0
        armed.append(True)
        with pytest.raises(Boom) as info:
            g(tp.ones([3]))
    (frame,) = generated_frames(info.value, "lowered f")
    assert frame.name == "lowered"
    assert frame.line is not None and frame.line.startswith("v1 = f1(v0)")


def test_a_compiled_graph_shows_the_line_of_the_node_that_raised(ns: str) -> None:
    with raising_op(ns) as (op, armed):

        def step(x: Any) -> Any:
            return op(x + 1).sum()

        c = tp.compile(step)
        for _ in range(3):  # traced twice, then lowered
            assert c(tp.ones([3])).item() == 12.0
        assert c.trace_count == 2
        armed.append(True)
        with pytest.raises(Boom) as info:
            c(tp.ones([3]))
        assert c.trace_count == 2  # it raised in the lowered graph, not in a new trace
    (frame,) = generated_frames(info.value, "lowered step")
    assert frame.name == "lowered"
    assert frame.line is not None and frame.line.startswith("v1 = f1(v0)")


def test_the_text_of_a_graph_function_is_in_linecache() -> None:
    from tensorplug_tracer.codegen import graph_function

    def f(x: Any, y: Any) -> Any:
        return (x * y).relu()

    fn = graph_function(tp.tracer.trace(f, tp.ones([2]), tp.ones([2])))
    source = codegen.source_of(fn)
    assert source is not None and source.startswith("def f(x, y):\n")
    filename = codegen.filename_of(fn)  # "<tensorplug: graph f (2)>" after another graph f
    assert filename is not None and filename.startswith("<tensorplug: graph f")
    assert "".join(linecache.getlines(filename)) == source
