"""Graph files: JSON plus .npz, versioned, no pickle; what loading refuses."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.tracer()


def same(a: tp.Tensor, b: tp.Tensor) -> bool:
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and np.array_equal(
            np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()), equal_nan=True
        )
    )


W = tp.randn([3, 4])
B16 = tp.randn([4]).to(tp.bfloat16)


def f(batch, *, scale):
    h = (batch["x"] @ W).relu() * scale
    return {"out": h.to(tp.bfloat16) + B16, "sum": [h.sum(dtype=tp.float64)]}


def test_round_trip(tmp_path) -> None:
    batch = {"x": tp.randn([2, 3])}
    g = tp.tracer.trace(f, batch, scale=0.5)
    path = tmp_path / "g.json"
    g.save(path)
    doc = json.loads(path.read_text())
    assert doc["format"] == "tensorplug-graph" and doc["version"] == tp.tracer.FORMAT_VERSION == 1
    assert doc["nodes"][0]["op"] == "aten::matmul.default" and doc["nodes"][0]["keyset"] == [
        "BackendSelect",
        "CPU",
    ]
    with np.load(tmp_path / "g.npz", allow_pickle=False) as npz:
        assert sorted(npz.files) == ["c0", "c1"]
    loaded = tp.tracer.load(path)
    assert str(loaded) == str(g) and loaded.code == g.code
    b2 = {"x": tp.randn([2, 3])}
    got, want = loaded(b2, scale=0.5), f(b2, scale=0.5)
    assert same(got["out"], want["out"]) and same(got["sum"][0], want["sum"][0])
    assert loaded.constants[1].tensor.dtype == tp.bfloat16 and same(loaded.constants[1].tensor, B16)


def test_unknown_namespace_is_refused_naming_it(tmp_path, ns: str) -> None:
    with tp.Library(ns, "DEF") as lib:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: tp.mul(x, 2), "CompositeExplicitAutograd")
        g = tp.tracer.trace(lambda x: getattr(tp.ops, ns).twice(x).exp(), tp.ones([2]))
        g.save(tmp_path / "g.json")
        assert same(tp.tracer.load(tmp_path / "g.json")(tp.ones([2])), tp.full([2], 2.0).exp())
    with pytest.raises(
        tp.tracer.GraphFormatError,
        match=rf"g\.json: the graph needs operators of namespace '{ns}' \({ns}::twice\.default\), "
        r"which this process does not define; they were defined by .*test_serialize:.* when the "
        r"graph was saved: run that code first",
    ):
        tp.tracer.load(tmp_path / "g.json")


def test_a_plugins_namespace_names_the_distribution(tmp_path) -> None:
    g = tp.tracer.trace(lambda x: x + 1, tp.ones([1]))
    g.save(tmp_path / "g.json")
    doc = json.loads((tmp_path / "g.json").read_text())
    doc["nodes"][0]["op"] = "foolib::bar.default"
    doc["namespaces"] = {"foolib": {"defined_by": "foo", "distribution": "tensorplug-foolib"}}
    (tmp_path / "g.json").write_text(json.dumps(doc))
    with pytest.raises(
        tp.tracer.GraphFormatError,
        match=r"namespace 'foolib' \(foolib::bar\.default\), which this process does not define; "
        r"they were defined by plugin 'foo' \(pip install tensorplug-foolib",
    ):
        tp.tracer.load(tmp_path / "g.json")


def test_other_versions_and_files_are_refused(tmp_path) -> None:
    g = tp.tracer.trace(lambda x: x + 1, tp.ones([1]))
    path = tmp_path / "g.json"
    g.save(path)
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "version": 2}))
    with pytest.raises(
        tp.tracer.GraphFormatError,
        match=r"graph format version 2; this tensorplug-tracer reads version 1",
    ):
        tp.tracer.load(path)
    path.write_text("[1, 2]")
    with pytest.raises(tp.tracer.GraphFormatError, match=r"not a graph file"):
        tp.tracer.load(path)


@pytest.mark.parametrize("field", ["name", "arg_names"])
def test_code_cannot_come_from_the_file(tmp_path, field) -> None:
    g = tp.tracer.trace(lambda x: x + 1, tp.ones([1]))
    path = tmp_path / "g.json"
    g.save(path)
    doc = json.loads(path.read_text())
    evil = "x):\n    import os\n    os.system('echo owned')\ndef f(x"
    doc[field] = evil if field == "name" else [evil]
    path.write_text(json.dumps(doc))
    with pytest.raises(tp.tracer.GraphFormatError, match=r"is not a Python identifier"):
        tp.tracer.load(path)


def test_unsavable_arguments_are_named(tmp_path) -> None:
    gen = tp.Generator().manual_seed(0)
    g = tp.tracer.trace(lambda x: x + tp.rand([2], generator=gen), tp.ones([2]))
    with pytest.raises(
        tp.tracer.GraphFormatError,
        match=r"cannot save the graph: argument of aten::rand\.default holds a Generator",
    ):
        g.save(tmp_path / "g.json")
