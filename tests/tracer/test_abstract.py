"""Abstract tracing: tp.tracer.trace on Meta tensors (docs/meta.md) records the graph with
shapes and dtypes and computes nothing; the oracle is the same trace on CPU tensors."""

from __future__ import annotations

import pytest

import tensorplug as tp
from tests import needs

needs.tracer()


def _f(w):
    def f(x):
        return (x @ w).relu().sum(1)

    return f


def _signature(g):
    return [(n.op.name, [tuple(v.meta.shape) for v in n.outputs]) for n in g.nodes]


def test_a_trace_on_meta_inputs_has_the_shapes_of_the_eager_trace():
    w = tp.randn(3, 2)
    eager = tp.tracer.trace(_f(w), tp.randn(4, 3))
    abstract = tp.tracer.trace(_f(w.to("meta")), tp.empty(4, 3, device="meta"))
    assert _signature(abstract) == _signature(eager)
    assert [n.outputs[0].meta.dtype for n in abstract.nodes] == [tp.float32] * 3
    assert all(v.meta.device.type == "meta" for n in abstract.nodes for v in n.outputs)
    assert "float32[4, 2] meta" in str(abstract)
    out = abstract(tp.empty(7, 3, device="meta"))  # replays on other shapes, still no data
    assert out.shape == (7,) and out.device.type == "meta"


def test_an_abstract_graph_saves_unless_a_constant_has_no_data(tmp_path):
    g = tp.tracer.trace(lambda x: (x * 2).relu(), tp.empty(4, 3, device="meta"))
    g.save(tmp_path / "g.json")
    assert tp.tracer.load(tmp_path / "g.json")(tp.empty(2, 3, device="meta")).shape == (2, 3)
    with_constant = tp.tracer.trace(
        _f(tp.empty(3, 2, device="meta")), tp.empty(4, 3, device="meta")
    )
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        with_constant.save(tmp_path / "c.json")


def test_a_custom_op_traces_abstractly_through_its_fake_kernel(ns):
    calls = []
    with tp.Library(ns, "FRAGMENT") as lib:

        @tp.library.custom_op(f"{ns}::rowsum", mutates_args=(), lib=lib)
        def rowsum(x: tp.Tensor) -> tp.Tensor:
            calls.append("real")
            return tp.tensor(x.numpy().sum(1))

        @rowsum.register_fake
        def _(x):
            calls.append("fake")
            return tp.empty(x.shape[0], dtype=x.dtype, device=x.device)

        g = tp.tracer.trace(lambda x: rowsum(x.relu()), tp.empty(5, 3, device="meta"))
        assert calls == ["fake"]
        assert [n.op.name for n in g.nodes] == ["aten::relu.default", f"{ns}::rowsum.default"]
        assert tuple(g.nodes[-1].outputs[0].meta.shape) == (5,)
