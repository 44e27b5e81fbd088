"""The in-place variants of issue 29 under autograd and vmap: gradients checked by finite
differences (``tp.autograd.gradcheck``), views written after an in-place view op (values from
torch 2.13), and ``vmap`` against a loop over the samples. Values and errors are in
tests/core/test_tensor_methods_torch.py and the OpInfo samples (tests/ops/test_ops.py)."""

from __future__ import annotations

import pytest

import tensorplug as tp

pytest.importorskip("tensorplug_autograd")
pytest.importorskip("tensorplug_batched")


def _x(*shape: int, low: float = -1.0) -> tp.Tensor:
    g = tp.Generator().manual_seed(sum(shape) + 7)
    x = tp.rand(*shape, generator=g, dtype=tp.float64) * 2 + low
    return x.requires_grad_()


GRADCHECKS = {
    "polygamma_": (lambda a: (a * 1).polygamma_(1), lambda: _x(4, low=0.5)),
    "lgamma_ xlogy_ sinc_": (
        lambda a: (a * 1).lgamma_().xlogy_(a.abs() + 1).sinc_(),
        lambda: _x(4, low=0.5),
    ),
    "digamma_ erfc_ i0_ log1p_ rsqrt_": (
        lambda a: (a * 1).digamma_().erfc_().i0_().log1p_().add_(2).rsqrt_(),
        lambda: _x(3, low=0.5),
    ),
    "mvlgamma_": (lambda a: (a * 1).mvlgamma_(2), lambda: _x(3, low=2.0)),
    "remainder_": (
        lambda a: (a * 1).remainder_(tp.tensor([3.0, 0.7, -0.9], dtype=tp.float64)),
        lambda: _x(3),
    ),
    "put_": (lambda a: (a * 1).put_(tp.tensor([0, 2]), a[:2] * 3), lambda: _x(4)),
    "put_ accumulate": (
        lambda a: (a * 1).put_(tp.tensor([0, 0]), a[:2] * 3, accumulate=True),
        lambda: _x(4),
    ),
    "put": (lambda a: a.put(tp.tensor([-1, 0]), a[1:3] ** 2), lambda: _x(4)),
    "fill_diagonal_": (lambda a: (a * 1).reshape(2, 2).fill_diagonal_(2.0), lambda: _x(4)),
    "addmm_": (
        lambda a: (a * 1).reshape(2, 2).addmm_(a.reshape(2, 2), a.reshape(2, 2), beta=0.5),
        lambda: _x(4),
    ),
    "baddbmm_": (
        lambda a: (a * 1).reshape(1, 2, 2).baddbmm_(a.reshape(1, 2, 2), a.reshape(1, 2, 2)),
        lambda: _x(4),
    ),
    "addbmm_": (
        lambda a: (a * 1).reshape(2, 2).addbmm_(a.reshape(1, 2, 2), a.reshape(1, 2, 2), alpha=2),
        lambda: _x(4),
    ),
    "cumsum_ cumprod_": (lambda a: (a * 1).cumsum_(0).cumprod_(0), lambda: _x(4)),
    "scatter_add_": (
        lambda a: (a * 1).scatter_add_(0, tp.tensor([1, 1, 0]), a[:3] * 2),
        lambda: _x(4),
    ),
    "in-place views": (
        lambda a: (
            (a * 1).reshape(2, 2).t_().unsqueeze_(0).transpose_(0, 2).squeeze_(1).swapaxes_(0, 1)
        ),
        lambda: _x(4),
    ),
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck(name: str) -> None:
    fn, make = GRADCHECKS[name]
    assert tp.autograd.gradcheck(fn, (make(),))


def test_comparisons_and_random_fills_give_zero_gradients() -> None:
    a = _x(3)
    for write in (
        lambda t: t.eq_(0.0),
        lambda t: t.lt_(a.detach()),
        lambda t: t.cauchy_(),
        lambda t: t.log_normal_(),
        lambda t: t.geometric_(0.5),
    ):
        (g,) = tp.autograd.grad(write(a * 1).sum(), a)
        assert g.tolist() == [0.0, 0.0, 0.0]


def test_in_place_view_of_a_leaf_is_refused() -> None:
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        tp.zeros(3, 1, requires_grad=True).squeeze_()


def test_in_place_view_ops_of_views_keep_the_base_history() -> None:
    # values from torch 2.13
    x = tp.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
    b = x * 1
    v = b[:2]
    v.t_()
    v.mul_(3)
    b.sum().backward()
    assert x.grad.reshape(-1).tolist() == [3.0, 3.0, 1.0]
    x.grad = None
    b = x * 1
    v = b[:2]
    v.squeeze_()
    v.mul_(tp.tensor([2.0, 5.0]))
    (b * b).sum().backward()
    assert x.grad.reshape(-1).tolist() == [8.0, 100.0, 6.0]
    assert b._version == 2
    y = x * 2
    y.squeeze_()
    assert y.grad_fn is not None and y.shape == (3,)


def _loop(f, *xs):
    return tp.stack([f(*parts) for parts in zip(*xs, strict=True)])


VMAPS = {
    "pointwise": lambda v: (v * 1).eq_(0.5).add_(v).lgamma_().polygamma_(1).sign_(),
    "scans and products": lambda v: (v * 1).addmm_(v, v.t()).cumsum_(0).cumprod_(1),
    "views": lambda v: (v * 1).unsqueeze_(0).transpose_(0, 2).squeeze_().t_().swapaxes_(0, 1),
    "indexing": lambda v: (
        (v * 1)
        .fill_diagonal_(3.0)
        .put_(tp.tensor([1, 2]), v[0, :2])
        .put(tp.tensor([0]), v[1, :1], accumulate=True)
        .scatter_add_(0, tp.tensor([[0, 1, 2]]), v[:1])
    ),
    "batched products": lambda v: (v * 1).baddbmm_(v, v).sum(0).addbmm_(v, v),
}


@pytest.mark.parametrize("name", list(VMAPS))
@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_vmap_matches_a_loop(name: str) -> None:
    f = VMAPS[name]
    shape = (4, 2, 3, 3) if name == "batched products" else (4, 3, 3)
    x = tp.rand(*shape, generator=tp.Generator().manual_seed(3))
    got = tp.vmap(f)(x)
    assert tp.allclose(got, _loop(f, x), atol=1e-5, equal_nan=True)


def test_vmap_of_random_fills() -> None:
    x = tp.zeros(4, 50, 50)

    def fill(v):
        return (v * 1).cauchy_(), (v * 1).log_normal_(), (v * 1).geometric_(0.5)

    for out in tp.vmap(fill, randomness="different")(x):
        assert out.shape == (4, 50, 50)
        assert not tp.equal(out[0], out[1])
    for out in tp.vmap(fill, randomness="same")(x):
        assert tp.equal(out[0], out[1])
    with pytest.raises(RuntimeError, match="randomness"):
        tp.vmap(fill)(x)
