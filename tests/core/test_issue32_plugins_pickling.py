"""Issue 32, item 5: pickling across processes and schema text (each failed before its fix)."""

from __future__ import annotations

import pickle
from multiprocessing.reduction import ForkingPickler

import pytest

import tensorplug as tp
from tensorplug.schema import SchemaError, parse


def test_schema_with_a_lone_surrogate_is_a_schema_error():
    with pytest.raises(SchemaError) as info:
        parse('f(str x="\ud800") -> ()')
    assert info.value.column == 10
    str(info.value).encode("utf-8")  # the message itself prints


def test_meta_tensor_pickles_its_shape_and_dtype():
    m = tp.ones(2, 3, dtype=tp.float64, device="meta")
    back = pickle.loads(ForkingPickler.dumps(m))
    assert back.device.type == "meta" and back.shape == (2, 3) and back.dtype is tp.float64


@pytest.mark.skipif("autograd" not in tp.plugins.loaded_names(), reason="needs autograd")
def test_non_leaf_requiring_grad_is_refused_across_processes():
    a = tp.ones(2, requires_grad=True)
    b = a * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(b)
    # as PyTorch: a leaf, a detached tensor and plain pickle.dumps are fine
    assert pickle.loads(ForkingPickler.dumps(a)).requires_grad
    assert pickle.loads(ForkingPickler.dumps(b.detach())).tolist() == [2.0, 2.0]
    assert pickle.loads(pickle.dumps(b)).is_leaf
