"""Note [Python argument conversions]: what the public functions accept beyond their schemas,
as PyTorch's Python argument parser does (a 0-dim tensor for a Scalar, a number for a Tensor in
add/sub/mul/div), checked against numpy; the operator overloads themselves stay strict."""

from __future__ import annotations

import pytest

import tensorplug as tp

np = pytest.importorskip("numpy")


def x3() -> tp.Tensor:
    return tp.tensor([0.0, 1.0, 2.0])


@pytest.mark.parametrize(
    ("name", "oracle"),
    [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)],
)
def test_a_number_for_the_tensor_of_an_out_overload(name, oracle):
    out = tp.empty(3)
    r = getattr(tp, name)(x3(), 2, out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), oracle(np.array([0.0, 1.0, 2.0], np.float32), 2))
    assert out.dtype == tp.float32


def test_a_wrapped_number_promotes_as_a_python_number():
    # an int32 tensor plus the number 1 stays int32 (the number is a 0-dim int64 tensor, which
    # a dimensioned tensor of its category outranks); plus 2.5 becomes the default float dtype
    i = tp.tensor([1, 2, 3], dtype=tp.int32)
    out = tp.empty(3, dtype=tp.int32)
    assert tp.add(i, 1, out=out).tolist() == [2, 3, 4]
    assert tp.add(1, i).dtype == tp.int32  # the number may come first, as in torch.add(1, t)
    f = tp.empty(3)
    assert tp.add(i, 2.5, out=f).tolist() == [3.5, 4.5, 5.5]


def test_a_zero_dim_tensor_for_a_scalar():
    x = x3()
    np.testing.assert_allclose(tp.add(x, 1, alpha=tp.tensor(3)).numpy(), [3.0, 4.0, 5.0])
    np.testing.assert_allclose(x.add(1, alpha=tp.tensor(3)).numpy(), [3.0, 4.0, 5.0])
    # add.Tensor takes the tensor `other`; its Scalar alpha takes the 0-dim tensor
    np.testing.assert_allclose(
        tp.add(x, tp.tensor([1.0, 2.0, 3.0]), alpha=tp.tensor(2.0)).numpy(), [2.0, 5.0, 8.0]
    )
    full = tp.full([2], tp.tensor(3))  # a factory: the value's type gives the dtype
    assert full.tolist() == [3, 3] and full.dtype == tp.int64


def test_conversions_refused_where_pytorch_refuses_them():
    x = x3()
    with pytest.raises(TypeError) as e:  # not 0-dim
        tp.add(x, 1, alpha=tp.tensor([2]))
    assert str(e.value).startswith(
        "aten::add() received an invalid combination of arguments - got (Tensor, int, "
        "alpha=Tensor), but expected one of:\n * add.Tensor(Tensor self, Tensor other, *, "
        "Scalar alpha=1) -> Tensor"
    )
    with pytest.raises(TypeError) as e:  # maximum does not take numbers for tensors
        tp.maximum(x, 1)
    assert str(e.value) == (
        "aten::maximum.default(): argument 'other' (position 2) must be Tensor, not int"
    )
    # the operator overloads bind their schemas exactly, as torch.ops overloads do
    with pytest.raises(TypeError) as e:
        tp.ops.aten.add.Scalar(x, 1, alpha=tp.tensor(2))
    assert str(e.value) == (
        "aten::add.Scalar(): argument 'alpha' (position 3) must be Scalar, not Tensor"
    )
    with pytest.raises(TypeError, match=r"argument 'other' \(position 2\) must be Tensor, not int"):
        tp.ops.aten.add.out(x, 1, out=tp.empty(3))


def test_a_tensor_that_requires_grad_is_no_scalar():
    pytest.importorskip("tensorplug_autograd")
    alpha = tp.tensor(2.0, requires_grad=True)
    with pytest.raises(TypeError, match="aten::add\\(\\) received an invalid combination"):
        tp.add(x3(), 1, alpha=alpha)


def test_converted_calls_are_not_cached():
    x = x3()
    for _ in range(2):  # the second call takes the same path, converting again
        assert tp.mul(x, 2, out=tp.empty(3)).tolist() == [0.0, 2.0, 4.0]
    assert not any(int in sig for sig in tp.mul._choice if "out" in sig)


def test_a_type_error_of_the_kernel_is_not_retried(ns):
    calls = []

    def kernel(x, s):
        calls.append(s)
        raise TypeError("the kernel's own complaint")

    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x, Scalar s) -> Tensor")
        lib.impl("f", kernel, "CompositeExplicitAutograd")
        with pytest.raises(TypeError, match="the kernel's own complaint"):
            getattr(tp.ops, ns).f(x3(), 2)
    assert calls == [2]


def test_a_tensor_taken_for_a_number_does_not_fix_the_overload_of_its_type():
    # narrow(x, 0, tp.tensor(1), 1) binds the 0-dim int tensor to narrow.default's `int start`;
    # the next call with a float tensor there must reach narrow.Tensor and its error, not the
    # int overload cached by the types (Tensor, int, Tensor, int)
    x = tp.arange(3.0)
    assert x.narrow(0, tp.tensor(1), 1).tolist() == [1.0]
    assert tp.narrow(x, 0, tp.tensor(2), 1).tolist() == [2.0]
    with pytest.raises(RuntimeError, match="start must be an 0-dim integral Tensor"):
        tp.narrow(x, 0, tp.tensor(1.0), 1)
    assert not any(sig.count(tp.Tensor) > 1 for sig in tp.narrow._choice)
