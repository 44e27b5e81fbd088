"""Issue 29's torch.* names of the shape, indexing, scatter and BLAS families: the Python forms
their public functions take beyond the schemas (``nonzero(as_tuple=True)``, einsum's sublists,
``tensordot(dims=(a, b))``, cdist's mode names, unique_consecutive's results), the functions
written in Python (unravel_index, svd_lowrank, pca_lowrank, lobpcg), checked
against numpy; and, where torch is importable, the same expressions against torch's values and
exception types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

from .numpy_names_cases import CASES

# --- the Python forms ----------------------------------------------------------------------------


def test_nonzero_as_tuple() -> None:
    x = tp.tensor([[1, 0, 2], [0, 3, 0]])
    rows, cols = tp.nonzero(x, as_tuple=True)
    np.testing.assert_array_equal(rows.numpy(), [0, 0, 1])
    np.testing.assert_array_equal(cols.numpy(), [0, 2, 1])
    assert [t.tolist() for t in x.nonzero(as_tuple=True)] == [[0, 0, 1], [0, 2, 1]]
    assert [t.tolist() for t in tp.nonzero(tp.tensor(5), as_tuple=True)] == [[0]]
    assert tp.nonzero(x, as_tuple=False).shape == (3, 2)


def test_einsum_sublist_form() -> None:
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4)
    ta, tb = tp.tensor(a), tp.tensor(b)
    np.testing.assert_allclose(tp.einsum(ta, [0, 1], tb, [1, 2], [0, 2]).numpy(), a @ b)
    np.testing.assert_allclose(tp.einsum(ta, [0, 1], tb, [1, 2]).numpy(), a @ b)
    np.testing.assert_allclose(tp.einsum(ta, [Ellipsis, 0]).numpy(), a)
    np.testing.assert_allclose(tp.einsum(ta, [0, 1], []).numpy(), a.sum())


def test_tensordot_dims_pair() -> None:
    a = np.arange(6.0).reshape(2, 3)
    c = np.arange(12.0).reshape(4, 3)
    ta, tc = tp.tensor(a), tp.tensor(c)
    want = np.tensordot(a, c, ([1], [1]))
    np.testing.assert_allclose(tp.tensordot(ta, tc, dims=([1], [1])).numpy(), want)
    np.testing.assert_allclose(tp.tensordot(ta, tc, ([1], [1])).numpy(), want)
    np.testing.assert_allclose(tp.tensordot(ta, tc, dims=(1, 1)).numpy(), want)
    np.testing.assert_allclose(tp.tensordot(ta, tc, dims=tp.tensor([[1], [1]])).numpy(), want)
    np.testing.assert_allclose(tp.tensordot(ta, ta, dims=2).numpy(), (a * a).sum())


def test_cdist_compute_mode_names() -> None:
    x = tp.tensor(np.arange(8.0).reshape(4, 2))
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist", None):
        np.testing.assert_allclose(
            tp.cdist(x, x, compute_mode=mode).numpy(), tp.cdist(x, x, p=2.0).numpy(), atol=1e-5
        )
    with pytest.raises(ValueError, match="foo is not a valid value for compute_mode"):
        tp.cdist(x, x, compute_mode="foo")


def test_unique_consecutive_results() -> None:
    x = tp.tensor([1, 1, 2, 2, 3, 1, 1])
    assert x.unique_consecutive().tolist() == [1, 2, 3, 1]
    out, inv = tp.unique_consecutive(x, return_inverse=True)
    assert inv.tolist() == [0, 0, 1, 1, 2, 3, 3]
    out, counts = tp.unique_consecutive(x, return_counts=True)
    assert counts.tolist() == [2, 2, 1, 2]
    assert len(tp.unique_consecutive(x, True, True)) == 3


# --- functions written in Python ---------------------------------------------------------------


def test_unravel_index() -> None:
    flat = np.array([5, 7, 0, 11])
    got = tp.unravel_index(tp.tensor(flat), (3, 4))
    for g, w in zip(got, np.unravel_index(flat, (3, 4)), strict=True):
        assert g.dtype is tp.int64
        np.testing.assert_array_equal(g.numpy(), w)
    assert [t.item() for t in tp.unravel_index(tp.tensor(-1), (3, 4))] == [2, 3]  # wraps
    with pytest.raises(TypeError, match="integer dtype"):
        tp.unravel_index(tp.tensor(1.0), (3, 4))
    with pytest.raises(ValueError, match="cannot have negative values"):
        tp.unravel_index(tp.tensor(1), (3, -4))


def test_svd_and_pca_lowrank() -> None:
    tp.manual_seed(0)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((10, 3)) @ rng.standard_normal((3, 7))  # rank 3
    u, s, v = tp.svd_lowrank(tp.tensor(a), q=3)
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, a, atol=1e-8)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False)[:3], rtol=1e-8)
    wide_u, wide_s, wide_v = tp.svd_lowrank(tp.tensor(a.T.copy()), q=3)
    np.testing.assert_allclose(wide_s.numpy(), s.numpy(), rtol=1e-8)
    centered = a - a.mean(0)
    _, ps, _ = tp.pca_lowrank(tp.tensor(a), q=3)
    np.testing.assert_allclose(ps.numpy(), np.linalg.svd(centered, compute_uv=False)[:3], rtol=1e-6)
    with pytest.raises(ValueError, match="must be non-negative integer"):
        tp.pca_lowrank(tp.tensor(a), q=8)


@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_extreme_eigenpairs(largest: bool) -> None:
    tp.manual_seed(1)
    rng = np.random.default_rng(1)
    q, _ = np.linalg.qr(rng.standard_normal((12, 12)))
    w = np.linspace(1.0, 12.0, 12)
    a = (q * w) @ q.T
    e, x = tp.lobpcg(tp.tensor(a), k=2, largest=largest)
    want = w[::-1][:2] if largest else w[:2]
    np.testing.assert_allclose(e.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(a @ x.numpy(), x.numpy() * e.numpy(), atol=1e-5)
    b = np.diag(np.linspace(1.0, 2.0, 12))
    e, x = tp.lobpcg(tp.tensor(a), k=1, B=tp.tensor(b), largest=largest)
    gen = np.linalg.eigvals(np.linalg.solve(b, a)).real
    np.testing.assert_allclose(e.numpy(), [gen.max() if largest else gen.min()], rtol=1e-6)


# --- against torch -------------------------------------------------------------------------------


def _plain(x: Any, torch: Any) -> Any:
    if isinstance(x, (tp.Tensor, torch.Tensor)):
        return (str(x.dtype).split(".")[-1], tuple(x.shape), np.asarray(x.tolist(), dtype=float))
    if isinstance(x, (list, tuple)):
        return tuple(_plain(v, torch) for v in x)
    return tuple(x) if hasattr(x, "__iter__") else x


def _compare(a: Any, b: Any, where: str) -> None:
    if isinstance(a, tuple) and len(a) == 3 and isinstance(a[0], str):
        assert a[0] == b[0] and a[1] == b[1], f"{where}: {a[:2]} != {b[:2]}"
        np.testing.assert_allclose(a[2], b[2], rtol=1e-5, atol=1e-6, err_msg=where)
    elif isinstance(a, tuple):
        assert len(a) == len(b), f"{where}: {len(a)} results != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _compare(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a} != {b}"


FROZEN = Path(__file__).parent / "data" / "numpy_names_torch.json"


def _frozen(x: Any) -> Any:
    """A result as tools/gen_numpy_names.py records torch's: ``[dtype, shape, values]`` per
    tensor, lists for tuples, ``{"error": type}`` for an exception."""
    if isinstance(x, tp.Tensor):
        values = np.asarray(x.tolist(), dtype=float).reshape(-1)
        return [str(x.dtype).split(".")[-1], list(x.shape), [None if v != v else v for v in values]]
    if isinstance(x, (list, tuple)):
        return [_frozen(v) for v in x]
    return x


def _same(got: Any, want: Any, where: str) -> None:
    if isinstance(want, list) and len(want) == 3 and isinstance(want[0], str):
        assert got[0] == want[0] and got[1] == want[1], f"{where}: {got[:2]} != {want[:2]}"
        g = np.array([np.nan if v is None else v for v in got[2]], dtype=float)
        w = np.array([np.nan if v is None else v for v in want[2]], dtype=float)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=where)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got} != {want}"
        for i, (x, y) in enumerate(zip(got, want, strict=True)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got} != {want}"


def _outcome(name: str) -> Any:
    try:
        return _frozen(CASES[name](tp))
    except Exception as e:  # noqa: BLE001 - the exception's type is the answer compared
        return {"error": type(e).__name__}


@pytest.mark.parametrize("name", list(CASES))
def test_against_torch_frozen(name: str) -> None:
    """torch 2.13's answers as recorded (CI has no torch): values, dtype and shape, or the
    exception type (a NotImplementedError of torch's dtype dispatch may be a RuntimeError)."""
    want = json.loads(FROZEN.read_text())[name]
    got = _outcome(name)
    if isinstance(want, dict):
        allowed = {want["error"]} | (
            {"RuntimeError"} if want["error"] == "NotImplementedError" else set()
        )
        assert isinstance(got, dict) and got["error"] in allowed | {
            c.__name__ for c in _subclasses(want["error"])
        }, f"{name}: torch raises {want['error']}, tensorplug gives {got}"
        return
    _same(got, want, name)


def _subclasses(name: str) -> list[type]:
    base = {
        "RuntimeError": RuntimeError,
        "ValueError": ValueError,
        "TypeError": TypeError,
        "IndexError": IndexError,
        "NotImplementedError": NotImplementedError,
    }.get(name)
    return [] if base is None else base.__subclasses__()


@pytest.mark.parametrize("name", list(CASES))
def test_against_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    expr = CASES[name]
    try:
        want = _plain(expr(torch), torch)
    except Exception as e:  # noqa: BLE001 - the type torch raises is the expectation
        kinds = (NotImplementedError, RuntimeError) if type(e) is NotImplementedError else type(e)
        with pytest.raises(kinds):
            expr(tp)
        return
    _compare(_plain(expr(tp), torch), want, name)
