"""Kernels written as module-level functions of the kit (issue 19, "kernels a reader can find"):
each can be imported and called on its own with a backend's kit, and the kernel registered for
the backend keeps the function's name, which ``explain`` shows."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import _backends
from tensorplug.array_backend import _amp, _copy, _linalg
from tensorplug.array_backend._kit import bind


@pytest.fixture
def kit():
    return _backends.for_device_type("cpu").kit


@pytest.mark.parametrize(("module", "name"), [(m, n) for m in (_copy, _amp) for n in m.KERNELS])
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
    _amp.non_finite_check_and_unscale_(kit, [g], found, tp.tensor([0.5]))
    np.testing.assert_array_equal(g.numpy(), np.array([2.0, np.inf, 4.0]) * 0.5)
    assert found.item() == 1.0


def test_bind_keeps_the_function_name(kit):
    kernel = bind(kit, _copy.clone)
    assert (kernel.__module__, kernel.__name__, kernel.__qualname__) == (
        "tensorplug.array_backend._copy",
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
