"""out= overloads derived from the functional ones (Note [Derived out= overloads])."""

from __future__ import annotations

import warnings

import pytest

import tensorplug as tp


def test_every_listed_out_overload_is_defined():
    from tensorplug._opset import api

    derived = [e for e in api.entries if e.derived_from is not None]
    assert len(derived) > 400
    names = {e.op.name for e in derived}
    for name in ("aten::abs.out", "aten::sort.values", "aten::max.dim_max", "aten::linalg_svd.U",
                 "aten::linalg_inv.out", "aten::zeros.out", "aten::sum.IntList_out"):  # fmt: skip
        assert name in names


def test_unary_out_resized_from_empty_without_warning():
    x = tp.tensor([-1.0, 2.0])
    o = tp.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = tp.abs(x, out=o)
    assert r is o and o.tolist() == [1.0, 2.0]


def test_nonempty_mismatched_out_is_resized_with_the_warning():
    o = tp.empty(3)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        tp.exp(tp.zeros(5), out=o)
    assert o.shape == (5,) and o.tolist() == [1.0] * 5


def test_out_of_the_right_shape_is_written_in_place():
    base = tp.zeros(4)
    o = base[:2]
    tp.neg(tp.tensor([1.0, 2.0]), out=o)
    assert base.tolist() == [-1.0, -2.0, 0.0, 0.0]


def test_result_that_cannot_be_cast_to_out_is_refused():
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        tp.exp(tp.zeros(2), out=tp.empty(2, dtype=tp.int64))
    o = tp.empty(2, dtype=tp.float64)  # a wider out is fine
    tp.exp(tp.zeros(2), out=o)
    assert o.dtype is tp.float64


def test_tuple_outs():
    x = tp.tensor([[3.0, 1.0, 2.0]])
    v, i = tp.empty(0), tp.empty(0, dtype=tp.int64)
    r = tp.sort(x, out=(v, i))
    assert r.values is v and r.indices is i
    assert v.tolist() == [[1.0, 2.0, 3.0]] and i.tolist() == [[1, 2, 0]]
    v, i = tp.empty(0), tp.empty(0, dtype=tp.int64)
    r = tp.max(x, 1, out=(v, i))
    assert v.tolist() == [3.0] and i.tolist() == [0]
    vals, idx = tp.empty(0), tp.empty(0, dtype=tp.int64)
    tp.topk(x, 2, out=(vals, idx))
    assert vals.tolist() == [[3.0, 2.0]]


def test_linalg_outs():
    a = tp.tensor([[2.0, 0.0], [0.0, 4.0]])
    o = tp.empty(0)
    tp.linalg.inv(a, out=o)
    assert o.tolist() == [[0.5, 0.0], [0.0, 0.25]]
    U, S, Vh = tp.empty(0), tp.empty(0), tp.empty(0)
    tp.linalg.svd(a, out=(U, S, Vh))
    assert S.tolist() == [4.0, 2.0]
    n = tp.empty(0)
    tp.linalg.vector_norm(tp.tensor([3.0, 4.0]), out=n)
    assert n.item() == 5.0


def test_factory_outs_take_dtype_and_device_from_out():
    o = tp.empty(0, dtype=tp.int32)
    tp.zeros(3, out=o)
    assert o.dtype is tp.int32 and o.tolist() == [0, 0, 0]
    a = tp.empty(0, dtype=tp.float64)
    tp.arange(3, out=a)
    assert a.dtype is tp.float64 and a.tolist() == [0.0, 1.0, 2.0]


def test_partially_overlapping_out_is_refused():
    x = tp.arange(5.0)
    with pytest.raises(RuntimeError, match="single memory location"):
        tp.exp(x, out=x[1:])
    tp.exp(x, out=x)  # the input itself: allowed
    assert x[0].item() == 1.0


@pytest.mark.skipif("autograd" not in tp.plugins.loaded_names(), reason="needs autograd")
def test_out_refused_when_an_argument_requires_grad():
    a = tp.ones(2, 2, requires_grad=True)
    for call in (
        lambda: tp.exp(a, out=tp.empty(0)),
        lambda: tp.sort(a, out=(tp.empty(0), tp.empty(0, dtype=tp.int64))),
        lambda: tp.matmul(a, a, out=tp.empty(0)),
        lambda: tp.exp(tp.ones(2), out=tp.empty(2, requires_grad=True)),
    ):
        with pytest.raises(RuntimeError, match="functions with out=... arguments don't support"):
            call()
    with tp.no_grad():
        assert tp.exp(a, out=tp.empty(0)).shape == (2, 2)
    # non-differentiable ops take out= with grad-requiring inputs, as in PyTorch
    assert tp.argmax(a, out=tp.empty(0, dtype=tp.int64)).item() == 0


@pytest.mark.skipif("batched" not in tp.plugins.loaded_names(), reason="needs batched")
def test_out_under_vmap():
    x = tp.randn(3, 4)
    o = tp.empty(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the loop fallback's performance warning
        tp.vmap(lambda r, oo: tp.exp(r, out=oo))(x, o)
    assert tp.allclose(o, x.exp())
    with pytest.raises(RuntimeError, match="vmap: inplace arithmetic"):
        tp.vmap(lambda r: tp.exp(r, out=tp.empty(4)))(x)


def test_call_without_out_keeps_the_overloads_message():
    with pytest.raises(TypeError, match=r"argument 'other' \(position 2\) must be Tensor, not int"):
        tp.maximum(tp.ones(2), 1)


def test_against_torch():
    torch = pytest.importorskip("torch")
    x = [[0.5, -1.5, 2.0], [3.0, 0.25, -2.0]]
    for name, args in (("exp", ()), ("cumsum", (1,)), ("sum", (1,)), ("argmax", (1,))):
        o = tp.empty(0, dtype=tp.int64 if name == "argmax" else tp.float32)
        getattr(tp, name)(tp.tensor(x), *args, out=o)
        ot = torch.empty(0, dtype=torch.int64 if name == "argmax" else torch.float32)
        getattr(torch, name)(torch.tensor(x), *args, out=ot)
        assert o.flatten().tolist() == pytest.approx(ot.flatten().tolist())
