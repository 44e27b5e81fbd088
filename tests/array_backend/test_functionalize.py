"""Functionalization (Note [Functionalization] in tensorplug/_opset/functionalize.py): a backend
registered with ``views=False`` gets PyTorch's view semantics from the ``Functionalize`` key.

The backend here, ``NoViews`` (device type ``noviews``), is numpy with every view copied: the
kit's kernels, then each view op's result given an array of its own, as a library without
views (dask) gives. It is registered for this module only; the conformance kit's view,
in-place, mutating and ``out=`` cases run on it, and autograd and ``tp.compile`` through views
and writes give the CPU's results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import array_backend
from tensorplug.testing import cases, grad_cases, run_grad_case, run_op_case
from tests.array_backend.conftest import FakeRegistry

KEY, DEV = "NoViews", "noviews"


def _copying(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` with each view it returns given a copy of its array: no memory shared."""

    def copying(*args: Any, **kwargs: Any) -> Any:
        r = kernel(*args, **kwargs)
        for t in r if isinstance(r, list | tuple) else (r,):
            if isinstance(t, tp.Tensor) and t.tp_base is not None:
                t.tp_data = np.array(t.tp_data, copy=True)
        return r

    return copying


def _view_op_names() -> list[str]:
    """The aten operators whose schema returns an alias and writes nothing."""
    names = []
    for op in tp.dispatcher.all_ops():
        s = op.schema
        if s.namespace == "aten" and not s.is_mutable and any(r.annotation for r in s.returns):
            names.append(s.full_name)
    return names


@pytest.fixture(scope="module", autouse=True)
def no_views() -> Iterator[Any]:
    scipy_special = pytest.importorskip("scipy.special")
    tp.keys.register_backend(KEY, DEV)
    registry = FakeRegistry()
    backend = array_backend.register(registry, KEY, np, views=False, special=scipy_special)
    copies = tp.Library("aten", "IMPL", owner="tests.functionalize")
    for name in _view_op_names():
        kernel = backend.kernels.get(name)
        if kernel is not None:
            copies.impl(name, _copying(kernel), KEY, override=True)
    try:
        yield backend
    finally:
        copies.close()
        backend.close()
        for lib in registry.libraries:
            lib.close()
        tp.keys.unregister(KEY)
    assert tp.keys.has_views("CPU") and KEY not in {k.name for k in tp.keys.all_keys()}


def t(values: Any, device: str = DEV, **kwargs: Any) -> tp.Tensor:
    return tp.tensor(np.asarray(values, dtype=np.float64), device=device, **kwargs)


# --- the key ------------------------------------------------------------------------------


def test_only_backends_without_views_carry_the_key():
    fz = tp.keys.get("Functionalize")
    assert not tp.keys.has_views(KEY) and tp.keys.has_views("CPU")
    assert tp.ones(2, device=DEV).tp_keyset & fz.mask
    assert not tp.ones(2).tp_keyset & fz.mask  # numpy's views are real: no key, no cost
    assert t([[1, 2], [3, 4]]).t().tp_keyset & fz.mask  # views keep it
    order = [k.name for k in tp.keys.priority_order()]
    assert order.index("ADInplaceOrView") < order.index("Functionalize")
    assert order.index("Functionalize") < order.index("BackendSelect") < order.index(KEY)


def test_set_has_views_needs_a_backend_key():
    with pytest.raises(tp.keys.DispatchKeyError, match="not a backend key"):
        tp.keys.set_has_views("Tracer", False)


def test_the_test_backend_really_has_no_views(no_views):
    # the kit's kernel alone would share memory; the backend under test must not
    x = t([1.0, 2.0, 3.0])
    v = tp.ops.aten.select.int.redispatch(tp.keys.keyset(KEY), x, 0, 0)
    assert not np.shares_memory(v.tp_data, x.tp_data)


# --- view semantics -----------------------------------------------------------------------


def _story(dev: str) -> list[Any]:
    """Writes through views and into bases, with what each step shows."""
    x = t(np.arange(12.0).reshape(3, 4), dev)
    seen: list[Any] = []
    row, col, diag = x[1], x[:, 2], x.diagonal()
    tr = x.t()
    row.fill_(-1.0)  # through a select
    seen += [x.tolist(), col.tolist(), tr.tolist(), diag.tolist(), x._version, col._version]
    x.add_(10.0)  # the base: every live view sees it
    seen += [row.tolist(), col.tolist(), diag.tolist(), x._version]
    tr[3].mul_(2.0)  # a view of a view
    a, b, c = x.unbind(0)
    b.zero_()
    p, q = x.split([1, 3], dim=1)
    q[0, 1:].copy_(t([7.0, 8.0], dev))  # copy_ into a slice of a split
    x.view(2, 6)[1, 0] = 5.0  # setitem on a reshaped view
    x.narrow(1, 0, 2).diagonal().sub_(100.0)
    y = x.clone()
    tp.add(y[0], 1.0, out=x[2])  # out= a view
    seen += [x.tolist(), a.tolist(), b.tolist(), c.tolist(), p.tolist(), row.tolist()]
    seen += [x._version, b._version, repr(diag)]
    return seen


def test_writes_reach_bases_and_views_as_on_cpu():
    got, want = _story(DEV), _story("cpu")
    assert got[:-1] == want[:-1]
    assert got[-1].replace(f", device='{DEV}'", "") == want[-1]


def test_a_stale_view_reads_its_new_values_everywhere():
    x = t([[1.0, 2.0], [3.0, 4.0]])
    v = x.t()
    x.mul_(2.0)
    assert v.numpy(force=True).tolist() == [[2.0, 6.0], [4.0, 8.0]]  # outside the dispatcher
    x.mul_(2.0)
    assert v[1, 0].item() == 8.0
    x.mul_(2.0)
    assert (v + 0).tolist() == [[8.0, 24.0], [16.0, 32.0]]


def test_dtype_changing_views_write_back():
    c = tp.zeros(3, dtype=tp.complex64, device=DEV)
    tp.view_as_real(c)[:, 1].fill_(2.0)
    c.real.fill_(1.0)
    c.imag[0].add_(5.0)
    assert c.tolist() == [1 + 7j, 1 + 2j, 1 + 2j]
    r = tp.view_as_real(c)
    c.mul_(2.0)
    assert r.tolist() == [[2.0, 14.0], [2.0, 4.0], [2.0, 4.0]]


def test_functional_ops_leave_their_inputs_alone():
    x = t([1.0, 2.0, 3.0])
    v = x[1:]
    w = v * 2  # no view: writing it writes nothing else
    w.fill_(0.0)
    assert x.tolist() == [1.0, 2.0, 3.0] and v.tolist() == [2.0, 3.0]
    assert x._version == 0


# --- the conformance kit ------------------------------------------------------------------


def test_dtype_view_writes_refused():
    x = t(np.arange(4.0), DEV)  # float64
    v = x.view(tp.int32)  # a strided backend whose views copy: reading works
    assert v.dtype is tp.int32 and v.shape == (8,)
    with pytest.raises(NotImplementedError, match=r"aten::view\.dtype: writing through this view"):
        v.fill_(0)


def _firsts(kinds: tuple[str, ...], dtypes: tuple[str, ...], every_sample: bool) -> list[Any]:
    out, seen = [], set()
    for p in cases(dtypes):
        info, dtype, _ = p.values
        if info.name == "view.dtype":
            continue  # writing through a dtype view: refused here (test_dtype_view_writes_refused)
        if info.kind in kinds and (every_sample or (info.name, dtype) not in seen):
            seen.add((info.name, dtype))
            out.append(p)
    return out


# every sample of every view op (float32, and complex64 for the complex views), and the first
# of each in-place, mutating and out= op
CONFORMANCE = _firsts(("view",), ("float32", "complex64"), True) + _firsts(
    ("inplace", "mutating", "out"), ("float32",), False
)


@pytest.mark.parametrize(("info", "dtype", "sample"), CONFORMANCE)
def test_view_and_mutation_conformance(info, dtype, sample):
    run_op_case(info, dtype, sample, DEV)


# --- autograd and tp.compile ----------------------------------------------------------------


def _train_through_views(dev: str) -> list[Any]:
    x = t(np.arange(12.0).reshape(3, 4) / 7, dev, requires_grad=True)
    w = t(np.linspace(-1, 1, 4), dev, requires_grad=True)
    y = x * 1.5
    v = y[1]
    v.mul_(w)
    y.t()[0].add_(x[:, 2])
    y.diagonal().sin_()
    _, b, _ = y.unbind(0)
    b.pow_(2)
    loss = (y * y.exp()).sum() + v.sum()
    loss.backward()
    return [loss.item(), x.grad.tolist(), w.grad.tolist(), y.detach().tolist()]


def test_autograd_through_views_and_writes_equals_cpu():
    if "autograd" not in tp.plugins.loaded_names():
        pytest.skip("needs tensorplug-autograd")
    got, want = _train_through_views(DEV), _train_through_views("cpu")
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    for g, w in zip(got[1:], want[1:], strict=True):
        np.testing.assert_allclose(np.array(g), np.array(w), rtol=1e-12)


VIEW_GRADS = [p for p in grad_cases() if p.values[0].kind == "view"]


@pytest.mark.parametrize(("info", "sample"), VIEW_GRADS[:12])
def test_view_op_gradients_equal_cpu(info, sample):
    if "autograd" not in tp.plugins.loaded_names():
        pytest.skip("needs tensorplug-autograd")
    run_grad_case(info, sample, DEV)


def _in_place(x: tp.Tensor, w: tp.Tensor) -> Any:
    y = x * 2
    r = y[1]
    r.add_(w)
    y.t()[0].mul_(3)
    y.diagonal().zero_()
    x[0].add_(1)  # an input, written through a view
    return y.sum(1), r * 1


def test_compile_of_in_place_code_through_views():
    if "tracer" not in tp.plugins.loaded_names():
        pytest.skip("needs tensorplug-tracer")
    compiled = tp.compile(_in_place, fullgraph=True)
    for i in range(2):  # the trace, then the replay
        got_x, want_x = (
            t(np.arange(12.0).reshape(3, 4) + i),
            t(np.arange(12.0).reshape(3, 4) + i, "cpu"),
        )
        w = np.ones(4) * i
        got = compiled(got_x, t(w))
        want = _in_place(want_x, t(w, "cpu"))
        assert [g.tolist() for g in got] == [v.tolist() for v in want]
        assert got_x.tolist() == want_x.tolist()
