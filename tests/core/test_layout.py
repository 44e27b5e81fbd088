"""Strided layout (Note [Strided layout] in tensorplug/_strides.py): strides, storage offsets,
contiguity and memory sharing against PyTorch's, frozen by tools/gen_layout.py and compared with
torch itself where it is importable; memory formats; what a backend without strides says."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import _strides

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((Path(__file__).parent / "data" / "layout.json").read_text())
sys.path.insert(0, str(ROOT / "tools"))
from gen_layout import CASES, record  # noqa: E402

sys.path.remove(str(ROOT / "tools"))


def _case_id(case: dict[str, Any]) -> str:
    return case["expr"].replace("T.", "")


@pytest.mark.parametrize("case", DATA["cases"], ids=_case_id)
def test_layout_matches_pytorch_frozen(case: dict[str, Any]) -> None:
    assert record(tp, case["setup"], case["expr"]) == case["torch"]


@pytest.mark.parametrize("case", DATA["cases"], ids=_case_id)
def test_meta_layout_matches_pytorch_frozen(case: dict[str, Any]) -> None:
    """The same expressions on Meta tensors: PyTorch's meta tensors have strides, and so do
    tensorplug's (Note [Meta strides] in tensorplug/_meta/_array.py)."""
    assert record(tp, case["setup"], case["expr"], meta=True) == case["meta"]


def test_the_frozen_cases_are_the_generator_s() -> None:
    """tools/gen_layout.py was run after its cases last changed."""
    assert [(c["setup"], c["expr"]) for c in DATA["cases"]] == CASES


def test_layout_matches_pytorch_live() -> None:
    torch = pytest.importorskip("torch")
    for setup, expr in CASES:
        assert record(tp, setup, expr) == record(torch, setup, expr), expr
        assert record(tp, setup, expr, True) == record(torch, setup, expr, True), expr


# --- storage sharing --------------------------------------------------------------------------


def test_views_share_storage_and_writes() -> None:
    x = tp.zeros(3, 4)
    v = x.t()[1:, ::2]
    assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert v.data_ptr() == x.data_ptr() + v.storage_offset() * x.element_size()
    v.fill_(1.0)
    assert x.sum().item() == v.numel()
    c = v.clone()
    assert c.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert c.storage_offset() == 0


def test_detach_shares_its_storage() -> None:
    x = tp.arange(6.0)
    d = x[2:].detach()
    assert d.storage_offset() == 2
    assert d.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert d.untyped_storage().nbytes() == 24


def test_as_strided_writes_reach_the_base() -> None:
    x = tp.zeros(6)
    x[1:].as_strided((2,), (3,), 0).fill_(5.0)  # offset 0 of the storage: x[0] and x[3]
    assert x.tolist() == [5.0, 0.0, 0.0, 5.0, 0.0, 0.0]


def test_as_strided_inplace_keeps_the_storage() -> None:
    x = tp.arange(6.0)
    assert x.as_strided_((2,), (2,), 1) is x
    assert (x.tolist(), x.stride(), x.storage_offset()) == ([1.0, 3.0], (2,), 1)
    assert x.untyped_storage().nbytes() == 24


def test_sizes_and_metadata() -> None:
    x = tp.zeros(2, 3, dtype=tp.float64)
    assert (x.nbytes, x.itemsize, x.element_size()) == (48, 8, 8)
    assert x.layout is tp.strided and repr(tp.strided) == "tensorplug.strided"
    assert repr(tp.channels_last) == "tensorplug.channels_last"
    assert isinstance(tp.channels_last, tp.memory_format)
    assert x.is_set_to(x) and x.is_set_to(x[:]) and not x.is_set_to(x.t().t().clone())
    assert not x.is_pinned() and not x.is_shared()
    assert x.const_data_ptr() == x.data_ptr()
    y = x.new_empty_strided((2, 3), (1, 2))
    assert (y.dtype, y.device, y.stride()) == (tp.float64, x.device, (1, 2))
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        x.pin_memory()
    with pytest.raises(TypeError, match="memory_format must be one of"):
        x.contiguous(memory_format="nchw")


def test_stride_of_one_dim() -> None:
    x = tp.zeros(2, 3, 4).transpose(0, 2)
    assert (x.stride(0), x.stride(-1)) == (1, 12)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.stride(3)


def test_memory_format_survives_the_copies() -> None:
    x = tp.randn(2, 3, 4, 5).contiguous(memory_format=tp.channels_last)
    for y in (x.clone(), x.double(), x.to(tp.float16), tp.empty_like(x), tp.randn_like(x)):
        assert y.is_contiguous(memory_format=tp.channels_last), y.stride()
    assert tp.equal(x.contiguous(), x)
    assert x.contiguous().is_contiguous()


# --- the rules on (sizes, strides), where the frozen cases reach few of them --------------


@pytest.mark.parametrize(
    ("sizes", "strides", "want"),
    [
        ((2, 3, 4, 5), (60, 1, 15, 3), "channels_last"),
        ((2, 3, 4, 5), (60, 20, 5, 1), "contiguous_format"),
        ((2, 1, 4, 5), (20, 20, 5, 1), "contiguous_format"),  # N1HW: ambiguous, row-major
        ((2, 1, 4, 5), (20, 1, 5, 1), "channels_last"),
        ((2, 3, 1, 1), (3, 1, 3, 3), "channels_last"),
        ((2, 3, 4, 5, 6), (360, 1, 90, 18, 3), "channels_last_3d"),
        ((2, 3), (1, 2), "contiguous_format"),
    ],
)
def test_suggest_memory_format(sizes: Any, strides: Any, want: str) -> None:
    assert _strides.suggest_memory_format(sizes, strides) == want


def test_the_rules_against_pytorch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for _ in range(200):
        sizes = tuple(int(n) for n in rng.integers(0, 4, 4))
        perm = rng.permutation(4)
        t = torch.empty([sizes[p] for p in perm]).permute(*np.argsort(perm).tolist())
        if rng.random() < 0.3:
            t = t[:, :, ::2]
        st = t.stride()
        sz = tuple(t.shape)
        assert _strides.is_contiguous_for(sz, st, "contiguous_format") == t.is_contiguous()
        assert _strides.is_contiguous_for(sz, st, "channels_last") == t.is_contiguous(
            memory_format=torch.channels_last
        )
        assert _strides.dim_order(sz, st) == t.dim_order(), (sz, st)
        assert _strides.dense_strides_like(sz, st) == torch.empty_like(t).stride(), (sz, st)
        assert _strides.dense_strides_like(sz, st) == t.clone().stride(), (sz, st)
        assert _strides.dense_strides_like(sz, st) == t.double().stride(), (sz, st)


# --- a backend without strides --------------------------------------------------------------


def test_a_backend_without_strides_says_so() -> None:
    pytest.importorskip("tensorplug_strict")
    if "strict" not in tp.plugins.loaded_names():
        pytest.skip("the strict example backend is not loaded")
    x = tp.arange(6.0, device="strict").reshape(2, 3)
    for call in (
        x.stride,
        x.storage_offset,
        x.data_ptr,
        x.untyped_storage,
        lambda: x.as_strided((2,), (1,)),
        lambda: tp.as_strided_scatter(x, tp.ones(2, device="strict"), (2,), (1,)),
    ):
        with pytest.raises(RuntimeError, match=r"Strict backend .*have no strides.*to\('cpu'\)"):
            call()
    # what does not need strides still works: row-major order, unfold's values, the formats
    assert x.is_contiguous() and not x.is_contiguous(memory_format=tp.channels_last)
    assert x.t().contiguous().view(-1).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert x.unfold(1, 2, 1).tolist() == [[[0.0, 1.0], [1.0, 2.0]], [[3.0, 4.0], [4.0, 5.0]]]
    assert tp.empty_strided((2, 3), (1, 2), device="strict").shape == (2, 3)
    with pytest.raises(RuntimeError, match="required rank 4"):
        x.contiguous(memory_format=tp.channels_last)


def test_meta_tensors_have_pytorch_s_strides() -> None:
    """Beyond the frozen cases: factories, elementwise results (TensorIterator's layout),
    as_strided_, view.dtype, and data pointers counted from a storage at address 0."""
    x = tp.empty(2, 3, 4, device="meta")
    assert x.stride() == (12, 4, 1) and x.storage_offset() == 0 and x.data_ptr() == 0
    t = x.transpose(0, 2)
    assert (t.stride(), t.is_contiguous(), t[1:].data_ptr()) == ((1, 4, 12), False, 4)
    assert (t * 2).stride() == (1, 4, 12)  # dense alike: the input's strides
    assert (t + x.transpose(0, 2).contiguous()).stride() == (1, 4, 12)  # the first decides
    assert (x.transpose(0, 2).contiguous() + t).stride() == (6, 2, 1)
    assert t.sum(0).stride() == (2, 1)  # reductions: fresh, row-major
    cl = tp.empty(2, 3, 4, 5, device="meta", memory_format=tp.channels_last)
    assert cl.stride() == (60, 1, 15, 3) and (cl.relu() * cl).stride() == (60, 1, 15, 3)
    assert cl.to(tp.float16).stride() == (60, 1, 15, 3)
    with pytest.raises(RuntimeError, match="required rank 4"):
        tp.empty(2, 3, device="meta", memory_format=tp.channels_last)
    v = tp.empty(4, 6, device="meta")
    assert v.view(tp.float16).stride() == (12, 1) and v[:, 2:].view(tp.int16).stride() == (12, 1)
    w = tp.empty(6, device="meta")
    assert w.as_strided_((2,), (2,), 1) is w and (w.stride(), w.storage_offset()) == ((2,), 1)
    assert w.untyped_storage().nbytes() == 24
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        tp.empty(6, device="meta").as_strided_((7,), (1,))
    assert tp.empty(6, device="meta").as_strided((7,), (1,)).stride() == (1,)  # no bounds check


def test_as_strided_inplace_derivative() -> None:
    """as_strided_'s derivative is as_strided's, over the geometry self had before (PyTorch's
    TensorGeometry(self)); values from torch 2.13."""
    if "autograd" not in tp.plugins.loaded_names():
        pytest.skip("needs the tensorplug-autograd plugin loaded")
    x = tp.arange(6.0, dtype=tp.float64).requires_grad_()
    c = x * 1
    c.as_strided_((2,), (2,), 1)
    (c * tp.tensor([1.0, 2.0], dtype=tp.float64)).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0, 2.0, 0.0, 0.0]
    x.grad = None
    x[2:].as_strided((2,), (1,), 0).sum().backward()  # reads none of x[2:]: no gradient
    assert x.grad.tolist() == [0.0] * 6

    def f(a: tp.Tensor) -> tp.Tensor:
        b = a.t().contiguous().t() * 1  # column-major, not a view
        b.as_strided_((2, 2), (1, 1), 1)  # an output whose elements overlap
        return b * b

    a = tp.randn(3, 3, dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradcheck(f, (a,)) and tp.autograd.gradgradcheck(f, (a,))
    v = (x * 1)[1:]
    with pytest.raises(NotImplementedError, match="as_strided_.*geometry of a view"):
        v.as_strided_((2,), (1,))


# --- storage ops beyond the frozen cases ----------------------------------------------------------


def test_resize_growth_moves_every_tensor_of_the_storage() -> None:
    """PyTorch reallocates the storage: the base, the resized view and the other views all
    see the new memory (values from torch 2.13)."""
    x = tp.arange(6.0)
    y, z = x[2:], x[:2]
    y.resize_(5)
    assert x.untyped_storage().nbytes() == z.untyped_storage().nbytes() == 28
    assert x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()
    y[:4].fill_(9.0)
    assert (x.tolist(), z.tolist()) == ([0.0, 1.0, 9.0, 9.0, 9.0, 9.0], [0.0, 1.0])


def test_typed_storage_is_deprecated_and_reads_the_whole_storage() -> None:
    from tensorplug._opset import layout

    layout._warned[0] = False
    x = tp.arange(6.0)[2:]
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        s = x.storage()
    assert (s.size(), len(s), s.dtype, s[1], s.element_size(), s.nbytes()) == (
        6, 6, tp.float32, 1.0, 4, 24,
    )  # fmt: skip
    s[0] = 5.0
    assert x._base.tolist()[0] == 5.0 and tp.is_storage(s)
    assert s.untyped().data_ptr() == x.untyped_storage().data_ptr()
    assert x.storage_type().__name__ == "FloatStorage"
    assert repr(x.storage_type()) == "<class 'tensorplug.FloatStorage'>"
    t = tp.zeros(2)
    assert t.set_(s, 1, (2,)).tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="Expected a Storage of type"):
        tp.zeros(2, dtype=tp.int64).set_(s)


def test_share_memory_moves_the_storage_and_its_views() -> None:
    x = tp.arange(6.0)
    v, d = x[2:], x.detach()
    assert not x.is_shared()
    assert x.share_memory_() is x and x.is_shared() and v.is_shared()
    assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() == d.data_ptr()
    v.fill_(7.0)
    assert d.tolist() == [0.0, 1.0, 7.0, 7.0, 7.0, 7.0]


def test_deprecated_resize_keeps_the_element_count() -> None:
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        assert tp.arange(6.0).resize(3, 2).tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="preserving the number"):
        tp.zeros(3).resize(2)
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert tp.zeros(6).resize_as(tp.ones(2, 3)).shape == (2, 3)


def test_storage_ops_under_autograd_vmap_and_without_strides() -> None:
    if "autograd" in tp.plugins.loaded_names():
        x = tp.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            (x * 1).resize_(2)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.set_(tp.ones(2))
        y = (x * 1).set_(tp.ones(2))  # as PyTorch: runs, and backward has no derivative
        with pytest.raises(RuntimeError, match="derivative for 'aten::set_"):
            y.sum().backward()
    if "batched" in tp.plugins.loaded_names():
        with pytest.raises(RuntimeError, match="vmap: Calling aten::resize_"):
            tp.vmap(lambda t: t.resize_(2))(tp.zeros(2, 3))
    s = tp.zeros(3, device="strict")
    with pytest.raises(RuntimeError, match=r"aten::resize_: tensors on the Strict backend"):
        s.resize_(4)
    assert s.set_(tp.ones(2, device="strict")).tolist() == [1.0, 1.0]  # an alias there
