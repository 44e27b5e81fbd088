"""Kernels written as module-level functions of the kit (issue 19, "kernels a reader can find"):
each can be imported and called on its own with a backend's kit, and the kernel registered for
the backend keeps the function's name, which ``explain`` shows."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import _backends
from tensorplug.array_backend import _factories, _linalg, _random, _shape
from tensorplug.array_backend._indexing import _index, _scatter, _search
from tensorplug.array_backend._kit import bind
from tensorplug.array_backend._nn import _functions as _nn
from tensorplug.array_backend._pointwise import _binary, _copy, _unary, _where
from tensorplug.array_backend._reductions import _sorting


@pytest.fixture
def kit():
    return _backends.for_device_type("cpu").kit


@pytest.mark.parametrize(("module", "name"), [(m, n) for m in (_copy, _nn) for n in m.KERNELS])
def test_the_registered_kernel_is_named_after_its_function(module, name):
    fn = module.KERNELS[name]
    assert fn.__qualname__ == fn.__name__, fn.__qualname__  # module level, no <locals>
    text = tp.dispatcher.explain(tp.dispatcher.find_op(f"aten::{name}"), *_sample(name), run=False)
    assert f"-> {module.__name__}.{fn.__name__}, registered by cpu" in text, text


def _sample(name):
    t = tp.tensor([1.0, 2.0])
    one = tp.tensor([0.5])
    return {
        "_to_copy": (t,),
        "clone": (t,),
        "copy_": (t, t),
        "fill_.Scalar": (t, 3.0),
        "_local_scalar_dense": (one,),
        "_amp_foreach_non_finite_check_and_unscale_": ([t], tp.zeros(1), one),
        "_amp_update_scale_": (
            tp.ones(1),
            tp.zeros(1, dtype=tp.int32),
            tp.zeros(1),
            2.0,
            0.5,
            2,
        ),
    }[name]


def test_a_module_kernel_runs_on_its_own(kit):
    t = tp.tensor([1.5, -2.0, 3.0])
    c = _copy.clone(kit, t)
    assert c is not t and c._data is not t._data
    np.testing.assert_array_equal(c.numpy(), np.array([1.5, -2.0, 3.0], dtype=np.float32))
    h = _copy.to_copy(kit, t, dtype=tp.float16)
    assert h.dtype is tp.float16
    np.testing.assert_array_equal(h.numpy(), np.array([1.5, -2.0, 3.0], dtype=np.float16))
    assert _copy.local_scalar_dense(kit, tp.tensor([4.0])) == 4.0
    with pytest.raises(tp.array_backend.OpError, match="a Tensor with 3 elements cannot"):
        _copy.local_scalar_dense(kit, t)


def test_unscale_on_its_own_matches_numpy(kit):
    g = tp.tensor([2.0, np.inf, 4.0])
    found = tp.zeros(1)
    _nn.non_finite_check_and_unscale_(kit, [g], found, tp.tensor([0.5]))
    np.testing.assert_array_equal(g.numpy(), np.array([2.0, np.inf, 4.0]) * 0.5)
    assert found.item() == 1.0


def test_bind_keeps_the_function_name(kit):
    kernel = bind(kit, _copy.clone)
    assert (kernel.__module__, kernel.__name__, kernel.__qualname__) == (
        "tensorplug.array_backend._pointwise._copy",
        "clone",
        "clone",
    )
    t = tp.tensor([1.0])
    np.testing.assert_array_equal(kernel(t).numpy(), t.numpy())


def test_the_general_matrix_products_run_on_their_own(kit):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    ta, tb = tp.tensor(a), tp.tensor(b)
    np.testing.assert_allclose(_linalg.mm(kit, ta, tb).numpy(), a @ b)
    np.testing.assert_allclose(
        _linalg.addmm(kit, tp.ones(4, dtype=tp.float64), ta, tb, beta=2).numpy(), a @ b + 2
    )
    with pytest.raises(tp.array_backend.OpError, match=r"cannot be multiplied \(2x3 and 2x3\)"):
        _linalg.mm(kit, ta, ta)
    for name in ("bmm", "dot"):  # registered as the module-level functions themselves
        op = tp.dispatcher.find_op(f"aten::{name}")
        x = tp.ones(2, 2, 2) if name == "bmm" else tp.ones(2)
        text = tp.dispatcher.explain(op, x, x, run=False)
        assert f"-> tensorplug.array_backend._linalg.{name}, registered by cpu" in text, text


# --- the modules restructured second: _where, _sorting, _random, _factories, _indexing, _shape


@pytest.mark.parametrize(
    ("module", "name"),
    [
        (m, n)
        for m in (_where, _sorting, _search, _random, _factories, _index, _scatter, _shape)
        for n in m.KERNELS
    ],
)
def test_each_module_kernel_is_registered_under_its_name(module, name):
    fn = module.KERNELS[name]
    assert fn.__qualname__ == fn.__name__, fn.__qualname__  # module level, no <locals>
    assert next(iter(inspect.signature(fn).parameters)) == "kit"
    op = tp.dispatcher.find_op(f"aten::{name}")
    assert op._kernels["CPU"].where == f"{module.__name__}.{fn.__name__}"


def test_where_kernels_on_their_own(kit):
    a = np.array([-2.0, 0.5, 3.0], dtype=np.float32)
    t = tp.tensor(a)
    np.testing.assert_array_equal(_where.clamp(kit, t, -1.0, 1.0).numpy(), np.clip(a, -1, 1))
    mask = tp.tensor([True, False, True])
    np.testing.assert_array_equal(
        _where.masked_fill(kit, t, mask, 7.0).numpy(), np.where([True, False, True], 7.0, a)
    )
    where = _where.where_self(kit)  # a builder: the kernel of where.self for this kit
    assert where.__name__ == "where_self"
    np.testing.assert_array_equal(
        where(mask, t, tp.zeros(3)).numpy(), np.where([True, False, True], a, 0)
    )
    with pytest.raises(tp.array_backend.OpError, match="At least one of 'min' or 'max'"):
        _where.clamp(kit, t)


def test_sorting_kernels_on_their_own(kit):
    a = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, -1.0, 5.0, 4.0]], dtype=np.float32)
    values, indices = _sorting.sort(kit, tp.tensor(a), 1)
    np.testing.assert_array_equal(values.numpy(), np.sort(a, axis=1))
    np.testing.assert_array_equal(indices.numpy(), np.argsort(a, axis=1, kind="stable"))
    running, _ = _sorting.cummax(kit, tp.tensor(a), 1)
    np.testing.assert_array_equal(running.numpy(), np.maximum.accumulate(a, axis=1))
    bounds = np.array([1.0, 2.0, 4.0], dtype=np.float32)
    got = _search.searchsorted(kit, tp.tensor(bounds), tp.tensor(a[0]))
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(bounds, a[0]))


def test_sampling_kernels_on_their_own(kit):
    draws = []
    for _ in range(2):
        g = tp.Generator().manual_seed(3)
        draws.append(_random.randn(kit, (4, 2), generator=g).numpy())
    assert draws[0].shape == (4, 2) and draws[0].dtype == np.float32
    np.testing.assert_array_equal(draws[0], draws[1])
    g = tp.Generator().manual_seed(3)
    np.testing.assert_array_equal(draws[0], tp.randn(4, 2, generator=g).numpy())
    ints = _random.randint_low(kit, -3, 4, (1000,), generator=tp.Generator().manual_seed(0))
    assert ints.dtype is tp.int64 and set(ints.numpy().tolist()) <= set(range(-3, 4))


def test_factory_kernels_on_their_own(kit):
    np.testing.assert_array_equal(
        _factories.arange_start_step(kit, 1, 10, 3).numpy(), np.arange(1, 10, 3)
    )
    np.testing.assert_array_equal(_factories.eye_m(kit, 2, 3).numpy(), np.eye(2, 3))
    np.testing.assert_array_equal(
        _factories.tril_indices(kit, 3, 4, 1).numpy(), np.stack(np.tril_indices(3, 1, 4))
    )
    zeros = _factories.creation(kit)["zeros"]  # the builder of the four with a fast path
    np.testing.assert_array_equal(zeros((2, 3)).numpy(), np.zeros((2, 3), dtype=np.float32))


def test_indexing_kernels_on_their_own(kit):
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    i = np.array([[0, 2], [1, 1], [3, 0]])
    np.testing.assert_array_equal(
        _scatter.gather(kit, tp.tensor(a), 1, tp.tensor(i)).numpy(),
        np.take_along_axis(a, i, axis=1),
    )
    np.testing.assert_array_equal(
        _index.index_select(kit, tp.tensor(a), 0, tp.tensor([2, 0])).numpy(), a[[2, 0]]
    )
    index = _index.index(kit)
    np.testing.assert_array_equal(index(tp.tensor(a), [tp.tensor([1, 1])]).numpy(), a[[1, 1]])
    with pytest.raises(tp.array_backend.OpError, match=r"take\(\): Expected a long tensor"):
        _index.take(kit, tp.tensor(a), tp.tensor([0], dtype=tp.int32))


def test_shape_kernels_on_their_own(kit):
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    t = tp.tensor(a)
    np.testing.assert_array_equal(_shape.cat(kit, [t, t], 1).numpy(), np.concatenate([a, a], 1))
    np.testing.assert_array_equal(_shape.flip(kit, t, [0]).numpy(), np.flip(a, 0))
    np.testing.assert_array_equal(_shape.roll(kit, t, 1, 1).numpy(), np.roll(a, 1, 1))
    np.testing.assert_array_equal(_shape.triu(kit, t, 1).numpy(), np.triu(a, 1))
    view = _shape.views(kit)["view"]
    v = view(t, (3, 2))
    np.testing.assert_array_equal(v.numpy(), a.reshape(3, 2))
    assert v._base is t  # a view of t
    with pytest.raises(tp.array_backend.OpError, match="input tensor must have at least 2"):
        _shape.tril(kit, tp.tensor([1.0]))


def test_unary_kernels_on_their_own(kit):
    a = np.array([-1.25, 0.5, 2.675, np.nan, np.inf], dtype=np.float32)
    t = tp.tensor(a)
    assert _unary.KERNELS["gelu"].__qualname__ == "gelu"
    np.testing.assert_array_equal(
        _unary.nan_to_num(kit, t, nan=0.0).numpy(), np.nan_to_num(a, nan=0.0)
    )
    np.testing.assert_array_equal(_unary.round_decimals(kit, t, decimals=0).numpy(), np.round(a))
    np.testing.assert_allclose(
        _unary.round_decimals(kit, t, decimals=1).numpy(), np.round(a, 1), rtol=1e-6
    )
    r = tp.tensor(a)
    assert _unary.relu_(kit, r) is r
    np.testing.assert_array_equal(r.numpy(), np.maximum(a, 0))
    with pytest.raises(tp.array_backend.OpError, match="GeluKernelImpl"):
        _unary.gelu(kit, tp.tensor([1, 2]))


def test_arithmetic_kernels_on_their_own(kit):
    rng = np.random.default_rng(1)
    a, b, w = (rng.standard_normal(5).astype(np.float32) for _ in range(3))
    ta, tb, tw = tp.tensor(a), tp.tensor(b), tp.tensor(w)
    np.testing.assert_allclose(
        _binary.lerp_scalar(kit, ta, tb, 0.25).numpy(), a + 0.25 * (b - a), rtol=1e-6
    )
    np.testing.assert_allclose(
        _binary.lerp_tensor(kit, ta, tb, tw).numpy(), a + w * (b - a), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        _binary.addcmul(kit, ta, tb, tw, value=2).numpy(), a + 2 * b * w, rtol=1e-6
    )
    np.testing.assert_allclose(
        _binary.addcdiv(kit, ta, tb, tw, value=0.5).numpy(), a + 0.5 * b / w, rtol=1e-5
    )
    with pytest.raises(tp.array_backend.OpError, match="Integer division with addcdiv"):
        _binary.addcdiv(kit, ta, tp.tensor([1]), tp.tensor([2]))
