"""Fractional max pooling (issue 35): ``F.fractional_max_pool2d/3d`` and
``nn.FractionalMaxPool2d/3d`` against torch's values, indices and gradients frozen in
tests/nn/data/fractional_pool.json (tools/gen_fractional_pool.py), so CI without torch compares
too, and against torch itself where it is importable; PyTorch's errors; the modules' arguments,
repr and state_dict; vmap; Meta shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn import functional as F

DATA = json.loads((Path(__file__).parent / "data" / "fractional_pool.json").read_text("utf-8"))
CASES = {c["name"]: c for c in DATA["cases"]}

needs_autograd = pytest.mark.skipif(
    not hasattr(tp, "autograd") or not hasattr(tp.autograd, "gradcheck"),
    reason="needs tensorplug-autograd",
)


def _call(fw: Any, case: dict[str, Any], x: Any) -> Any:
    f = fw.nn.functional
    pool = f.fractional_max_pool2d if case["nd"] == 2 else f.fractional_max_pool3d
    ratio = None if case["output_ratio"] is None else tuple(case["output_ratio"])
    u = fw.tensor(np.asarray(case["samples"], dtype=case["dtype"]))
    return pool(x, case["kernel"], case["output_size"], ratio, True, _random_samples=u)


@needs_autograd
@pytest.mark.parametrize("name", sorted(CASES))
def test_frozen(name: str) -> None:
    case = CASES[name]
    x = tp.tensor(np.asarray(case["x"], dtype=case["dtype"]), requires_grad=True)
    y, i = _call(tp, case, x)
    y.sum().backward()
    # the same windows as torch: the values and indices are exactly its
    np.testing.assert_array_equal(y.detach().numpy(), np.asarray(case["y"], dtype=case["dtype"]))
    np.testing.assert_array_equal(i.numpy(), np.asarray(case["indices"]))
    assert i.dtype == tp.int64
    np.testing.assert_array_equal(x.grad.numpy(), np.asarray(case["grad"], dtype=case["dtype"]))


@pytest.mark.parametrize("name", sorted(CASES))
def test_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    case = CASES[name]
    x = np.asarray(case["x"], dtype=case["dtype"])
    want = _call(torch, case, torch.tensor(x))
    got = _call(tp, case, tp.tensor(x))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


ERRORS = [
    # (call on aten, error type, message part) as torch 2.13 raises them
    (lambda a: a.fractional_max_pool2d.default(tp.randn(2, 3, 7, 8), [2, 2], [4, 4],
                                               tp.rand(2, 3, 3)),
     RuntimeError, "Expect _random_samples.size(2) equals to 2; got 3."),
    (lambda a: a.fractional_max_pool2d.default(tp.randn(2, 3, 7, 8), [2, 2], [4, 4],
                                               tp.rand(1, 3, 2)),
     RuntimeError, "Expect _random_samples.size(0) no less then input batch size."),
    (lambda a: a.fractional_max_pool2d.default(tp.randn(2, 3, 7, 8), [2, 2], [4, 4],
                                               tp.rand(2, 3, 2, dtype=tp.float64)),
     RuntimeError, "Expect _random_samples to have the same dtype as input"),
    (lambda a: a.fractional_max_pool2d.default(tp.randn(2, 3, 7, 8), [5, 2], [4, 4],
                                               tp.rand(2, 3, 2)),
     RuntimeError, "fractional_max_pool2d(): pool height 5 too large relative to input height 7"),
    (lambda a: a.fractional_max_pool2d.default(tp.randn(3, 7), [2, 2], [4, 4], tp.rand(1, 3, 2)),
     RuntimeError, "fractional_max_pool2d(): Expected 3D or 4D tensor, but got: [3, 7]"),
    (lambda a: a.fractional_max_pool2d.default(tp.randn(2, 0, 7, 8), [2, 2], [4, 4],
                                               tp.rand(2, 0, 2)),
     RuntimeError, "with dimension 1 being empty."),
    (lambda a: a.fractional_max_pool2d.default(tp.randn(2, 3, 7, 8), [2], [4, 4],
                                               tp.rand(2, 3, 2)),
     RuntimeError, "kernel_size must either be a single Int or tuple of Ints"),
    (lambda a: a.fractional_max_pool3d.default(tp.randn(2, 3, 5, 6, 7), [4, 2, 2], [3, 3, 3],
                                               tp.rand(2, 3, 3)),
     RuntimeError, "fractional_max_pool3d_out(): pool time 4 too large relative to input time 5"),
    (lambda a: a.fractional_max_pool3d.default(tp.randn(3, 5, 6), [2, 2, 2], [3, 3, 3],
                                               tp.rand(2, 3, 3)),
     RuntimeError, "fractional_max_pool3d_out(): Expected 4D or 5D tensor, but got: [3, 5, 6]"),
    (lambda a: a.fractional_max_pool3d.default(tp.rand(1, 1, 4, 4, 3), [2, 2, 2], [2, 2, 2],
                                               tp.rand(1, 1, 3)),
     RuntimeError, "fractional_max_pool3d_out(): pool width 2 too large relative to input width 3"),
    (lambda a: a.fractional_max_pool3d.default(tp.rand(1, 1, 4, 3, 4), [2, 2, 2], [2, 2, 2],
                                               tp.rand(1, 1, 3)),
     RuntimeError, "fractional_max_pool3d_out(): pool height 2 too large relative to input"),
    (lambda a: a.fractional_max_pool2d.default(tp.rand(1, 2, 4, 4), [2, 2], [2, 2],
                                               tp.rand(1, 1, 2)),
     RuntimeError, "Expect _random_samples.size(1) equals to input channel size."),
    (lambda a: a.fractional_max_pool3d_backward.default(
        tp.rand(1, 1, 2, 2, 3), tp.rand(1, 1, 4, 4, 4), [2, 2, 2], [2, 2, 2],
        tp.zeros(1, 1, 2, 2, 3, dtype=tp.int64)),
     RuntimeError, "fractional_max_pool3d_backward_out(): gradOutput width unexpected"),
    (lambda a: a.fractional_max_pool2d_backward.default(
        tp.randn(2, 3, 4, 3), tp.randn(2, 3, 7, 8), [2, 2], [4, 4], tp.zeros(2, 3, 4, 4, dtype=tp.int64)),
     RuntimeError, "fractional_max_pool2d_backward(): gradOutput sizes unexpected"),
]  # fmt: skip


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k: int) -> None:
    call, kind, part = ERRORS[k]
    with pytest.raises(kind) as e:
        call(tp.ops.aten)
    assert part in str(e.value)


def test_functional_arguments() -> None:
    x = tp.randn(2, 3, 9, 10)
    with pytest.raises(ValueError, match="requires specifying either an output_size or an"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(ValueError, match="output_ratio to either be a single Int or tuple"):
        F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5))
    with pytest.raises(TypeError):  # torch's function takes len() of the ratio
        F.fractional_max_pool2d(x, 2, output_ratio=0.5)
    assert F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.7)).shape == (2, 3, 4, 7)
    assert F.fractional_max_pool3d(tp.randn(3, 6, 7, 8), 2, (3, 3, 4)).shape == (3, 3, 3, 4)
    # drawn samples: every value is the input's maximum over a window at its index
    y, i = F.fractional_max_pool2d(x, (2, 3), output_size=(5, 4), return_indices=True)
    flat = x.reshape(2, 3, -1).numpy()
    got = np.take_along_axis(flat, i.reshape(2, 3, -1).numpy(), axis=-1)
    np.testing.assert_array_equal(got, y.reshape(2, 3, -1).numpy())
    a, b = F.fractional_max_pool2d_with_indices(x, 2, output_size=3)
    assert a.shape == b.shape == (2, 3, 3, 3)


def test_modules() -> None:
    m = nn.FractionalMaxPool2d(2, output_size=3)
    assert repr(m) == "FractionalMaxPool2d()"
    assert m.kernel_size == (2, 2) and m.output_size == (3, 3) and m.output_ratio is None
    assert list(m.state_dict()) == []
    assert m(tp.randn(2, 3, 7, 7)).shape == (2, 3, 3, 3)
    u = tp.rand(1, 3, 2)
    m = nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True, _random_samples=u)
    assert list(m.state_dict()) == ["_random_samples"]
    y, i = m(tp.randn(1, 3, 8, 9))
    assert y.shape == (1, 3, 4, 4) and i.dtype == tp.int64
    m3 = nn.FractionalMaxPool3d((2, 2, 1), output_ratio=(0.5, 0.5, 0.5))
    assert m3.kernel_size == (2, 2, 1)
    assert m3(tp.randn(2, 6, 6, 6)).shape == (2, 3, 3, 3)
    with pytest.raises(ValueError, match="requires specifying either an output size, or a"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)
    with pytest.raises(ValueError, match=r"output_ratio must be between 0 and 1 \(got 1.5\)"):
        nn.FractionalMaxPool3d(2, output_ratio=1.5)


def test_module_state_dict_from_torch() -> None:
    torch = pytest.importorskip("torch")
    u = torch.rand(2, 3, 2)
    tm = torch.nn.FractionalMaxPool2d(3, output_size=(4, 5), _random_samples=u)
    m = nn.FractionalMaxPool2d(3, output_size=(4, 5), _random_samples=tp.zeros(2, 3, 2))
    m.load_state_dict({k: tp.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 11)).astype(np.float32)
    np.testing.assert_array_equal(m(tp.tensor(x)).numpy(), tm(torch.tensor(x)).numpy())


def test_channels_last_input_gives_row_major() -> None:
    # torch 2.13's CPU kernel: the result is row-major whatever the input's format
    x = tp.randn(2, 3, 7, 8).to(memory_format=tp.channels_last)
    y = F.fractional_max_pool2d(x, 2, output_size=4, _random_samples=tp.rand(2, 3, 2))
    assert y.is_contiguous()
    x0 = x.contiguous()
    u = tp.rand(2, 3, 2)
    np.testing.assert_array_equal(
        F.fractional_max_pool2d(x, 2, 4, _random_samples=u).numpy(),
        F.fractional_max_pool2d(x0, 2, 4, _random_samples=u).numpy(),
    )


@pytest.mark.skipif(not hasattr(tp, "vmap"), reason="needs tensorplug-batched")
def test_vmap_folds_samples() -> None:
    def f(a: Any, s: Any) -> Any:
        return F.fractional_max_pool2d(a, 2, 3, return_indices=True, _random_samples=s)

    x, u = tp.randn(3, 2, 2, 7, 7), tp.rand(3, 2, 2, 2)
    for dims in ((0, 0), (0, None), (None, 0)):
        xs = x if dims[0] == 0 else x[0]
        us = u if dims[1] == 0 else u[0]
        got = tp.vmap(f, in_dims=dims)(xs, us)
        for b in range(3):
            want = f(xs[b] if dims[0] == 0 else xs, us[b] if dims[1] == 0 else us)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g[b].numpy(), w.numpy())


def test_meta_shapes() -> None:
    x = tp.empty(2, 3, 7, 8, device="meta")
    y, i = F.fractional_max_pool2d(
        x, 2, 4, return_indices=True, _random_samples=tp.empty(2, 3, 2, device="meta")
    )
    assert y.shape == i.shape == (2, 3, 4, 4) and i.dtype == tp.int64


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_windows_torch(dtype: str) -> None:
    # the interval formula rounds each operation to the input's dtype, as PyTorch's scalar_t
    # arithmetic does (bfloat16 is computed in float32 here)
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    td = getattr(torch, dtype)
    x = torch.randn(2, 3, 23, 19, generator=g).to(td)
    u = torch.rand(2, 3, 2, generator=g).to(td)
    want = torch.ops.aten.fractional_max_pool2d(x, [2, 3], [9, 7], u)
    d = getattr(tp, dtype)
    got = tp.ops.aten.fractional_max_pool2d.default(
        tp.tensor(x.float().numpy()).to(d), [2, 3], [9, 7], tp.tensor(u.float().numpy()).to(d)
    )
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    np.testing.assert_array_equal(got[0].float().numpy(), want[0].float().numpy())
