"""Issue 29's torch.* names of the shape, indexing, scatter and BLAS families: the Python forms
their public functions take beyond the schemas (``nonzero(as_tuple=True)``, einsum's sublists,
``tensordot(dims=(a, b))``, cdist's mode names, unique_consecutive's results), the functions
written in Python (unravel_index, svd_lowrank, pca_lowrank, lobpcg), checked
against numpy; and, where torch is importable, the same expressions against torch's values and
exception types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

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

# (expression, as a function of the module: tp or torch)
CASES: dict[str, Callable[[Any], Any]] = {
    "tensor_split_unordered": lambda m: m.tensor_split(m.arange(5.0), [4, 2, -1]),
    "hsplit": lambda m: m.hsplit(m.arange(12.0).reshape(3, 4), 2),
    "vsplit_error": lambda m: m.vsplit(m.ones(3), 2),
    "dsplit_uneven": lambda m: m.dsplit(m.ones(1, 1, 5), 2),
    "combinations_r3": lambda m: m.combinations(m.arange(4.0), 3),
    "combinations_replacement": lambda m: m.combinations(m.arange(3), with_replacement=True),
    "combinations_r0": lambda m: m.combinations(m.arange(3.0), 0),
    "cartesian_prod": lambda m: m.cartesian_prod(m.tensor([1, 2]), m.tensor([3, 4, 5])),
    "block_diag": lambda m: m.block_diag(m.tensor(2), m.ones(2, dtype=m.int32), m.ones(0, 2)),
    "block_diag_empty": lambda m: m.block_diag(),
    "vander_int": lambda m: m.vander(m.tensor([1, 2, 3]), 4),
    "rot90": lambda m: m.rot90(m.arange(6).reshape(2, 3), -3, [1, 0]),
    "diagflat": lambda m: m.diagflat(m.tensor([[1, 2], [3, 4]]), -1),
    "diag_embed": lambda m: m.diag_embed(m.arange(6.0).reshape(2, 3), 1, 0, 2),
    "diagonal_scatter": lambda m: m.diagonal_scatter(m.zeros(3, 4), m.ones(3), 1),
    "select_scatter": lambda m: m.select_scatter(m.zeros(2, 3), m.ones(2), 1, -1),
    "slice_scatter": lambda m: m.slice_scatter(m.zeros(4, 2), m.ones(2, 2), 0, 1, None, 2),
    "slice_scatter_error": lambda m: m.slice_scatter(m.zeros(4, 2), m.ones(3, 2), 0, 0, 2),
    "index_copy": lambda m: m.zeros(4, 2).index_copy(0, m.tensor([3, 0]), m.ones(2, 2)),
    "index_copy_int32_error": lambda m: m.zeros(3).index_copy(
        0, m.tensor([0], dtype=m.int32), m.ones(1)
    ),
    "take_along_dim": lambda m: m.take_along_dim(
        m.arange(6.0).reshape(2, 3), m.tensor([[2], [0]]), dim=1
    ),
    "take_along_dim_flat": lambda m: m.take_along_dim(
        m.arange(6.0).reshape(2, 3), m.tensor([5, 0])
    ),
    "take_along_dim_error": lambda m: m.take_along_dim(m.ones(2, 3), m.tensor([0]), dim=1),
    "argwhere": lambda m: m.argwhere(m.tensor([[0, 1], [2, 0]])),
    "scatter_reduce_amax_exclude": lambda m: m.ones(3).scatter_reduce(
        0, m.tensor([0, 1, 0]), m.tensor([5.0, -6.0, 7.0]), "amax", include_self=False
    ),
    "scatter_reduce_mean_int": lambda m: m.tensor([1, 2, 3]).scatter_reduce(
        0, m.tensor([0, 0, 2]), m.tensor([4, 5, 6]), "mean"
    ),
    "scatter_reduce_bad": lambda m: m.ones(3).scatter_reduce(0, m.tensor([0]), m.ones(1), "foo"),
    "scatter_reduce_old_names": lambda m: [
        m.ones(3).scatter_reduce(0, m.tensor([0, 1]), m.tensor([5.0, -2.0]), r)
        for r in ("max", "min")
    ],
    "index_reduce_prod": lambda m: m.ones(3, 2).index_reduce(
        0, m.tensor([0, 2, 0]), m.arange(6.0).reshape(3, 2), "prod"
    ),
    "mv": lambda m: m.mv(m.arange(6.0).reshape(2, 3), m.ones(3)),
    "mv_error": lambda m: m.mv(m.ones(2, 3), m.ones(4)),
    "addmv_beta0_nan": lambda m: m.addmv(
        m.full((2,), float("nan")), m.ones(2, 3), m.ones(3), beta=0, alpha=2
    ),
    "addr_bool": lambda m: m.addr(
        m.tensor([[True, False]]), m.tensor([True]), m.tensor([False, True])
    ),
    "addr_int_float_beta": lambda m: m.addr(
        m.ones(2, 3, dtype=m.int64), m.ones(2, dtype=m.int64), m.ones(3, dtype=m.int64), beta=0.5
    ),
    "ger": lambda m: m.ger(m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0, 5.0])),
    "inner": lambda m: m.inner(m.arange(6.0).reshape(2, 3), m.ones(4, 3)),
    "cross_default_dim": lambda m: m.cross(m.ones(3, 2), m.arange(6.0).reshape(3, 2)),
    "cross_no_3": lambda m: m.cross(m.ones(2, 4), m.ones(2, 4)),
    "cdist_p0": lambda m: m.cdist(m.tensor([[0.0, 1.0], [2.0, 2.0]]), m.tensor([[0.0, 2.0]]), 0.0),
    "cdist_pinf_batched": lambda m: m.cdist(
        m.arange(12.0).reshape(2, 3, 2), m.ones(1, 2, 2), float("inf")
    ),
    "cdist_mm": lambda m: m.cdist(m.arange(60.0).reshape(30, 2) / 7, m.ones(3, 2)),
    "cdist_int_error": lambda m: m.cdist(m.ones(2, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int64)),
    "trapezoid_int": lambda m: m.trapezoid(m.tensor([1, 2, 4])),
    "trapezoid_x": lambda m: m.trapezoid(m.tensor([1.0, 2.0, 4.0]), m.tensor([0.0, 1.0, 3.0])),
    "trapz_dx": lambda m: m.trapz(m.tensor([1.0, 2.0, 4.0]), dx=2.0),
    "cumulative_trapezoid": lambda m: m.cumulative_trapezoid(m.arange(6.0).reshape(2, 3), dim=1),
    "gradient_edge2": lambda m: m.gradient(
        m.tensor([1.0, 2.0, 4.0, 8.0]), spacing=2.0, edge_order=2
    ),
    "gradient_coordinates": lambda m: m.gradient(
        m.tensor([1.0, 2.0, 4.0, 8.0], dtype=m.float64),
        spacing=[m.tensor([0.0, 1.0, 3.0, 4.0], dtype=m.float64)],
    ),
    "gradient_short": lambda m: m.gradient(m.tensor([1.0, 2.0]), edge_order=2),
    "cov_weights": lambda m: m.cov(
        m.tensor([[1.0, 2.0, 4.0], [0.0, 1.0, 1.0]]),
        fweights=m.tensor([1, 2, 1]),
        aweights=m.tensor([0.5, 1.0, 2.0]),
    ),
    "corrcoef": lambda m: m.corrcoef(m.tensor([[1, 2, 4], [3, 1, 0]])),
    "bincount_weights": lambda m: m.bincount(m.tensor([1, 3]), weights=m.tensor([1, 2])),
    "bincount_negative": lambda m: m.bincount(m.tensor([-1, 3])),
    "histc": lambda m: m.histc(m.tensor([1.0, 2.0, 1.0]), bins=3, min=2, max=2),
    "histc_long": lambda m: m.histc(m.tensor([1, 2, 1]), bins=4),
    "histogram": lambda m: tuple(m.histogram(m.tensor([1.0, 2.0, 5.0]), bins=3, density=True)),
    "histogram_edges": lambda m: tuple(
        m.histogram(m.tensor([1.0, 2.0, 5.0]), bins=m.tensor([0.0, 1.0, 3.0, 5.0]))
    ),
    "isin": lambda m: m.isin(m.tensor([1, 2, 3]), m.tensor([2.5, 3.0])),
    "isin_scalar": lambda m: m.isin(2, m.tensor([2, 3])),
    "isin_bool_error": lambda m: m.isin(m.tensor([True]), m.tensor([True])),
    "unique_consecutive_dim": lambda m: m.unique_consecutive(
        m.tensor([[1, 1], [1, 1], [2, 3]]), return_inverse=True, return_counts=True, dim=0
    ),
    "unravel_index": lambda m: m.unravel_index(m.tensor([5, -1, 13]), (3, 4)),
    "nonzero_as_tuple": lambda m: m.nonzero(m.tensor([[0, 1], [2, 0]]), as_tuple=True),
    "einsum_sublist": lambda m: m.einsum(m.ones(2, 3), [0, 1], m.ones(3), [1], [0]),
    "tensordot_pair": lambda m: m.tensordot(m.ones(2, 3), m.ones(4, 3), dims=([1], [1])),
    "tril_indices": lambda m: m.tril_indices(3, 4, 1),
    "tril_indices_neg_dtype": lambda m: m.tril_indices(4, 3, -1, dtype=m.int32),
    "triu_indices_wide": lambda m: m.triu_indices(2, 5, 2),
    "tril_indices_empty": lambda m: m.tril_indices(0, 3),
    "diff_n2_bool": lambda m: m.diff(m.tensor([True, False, False, True]), n=2),
    "diff_dim0_append": lambda m: m.diff(m.arange(6.0).reshape(3, 2), 1, 0, append=m.ones(1, 2)),
    "kthvalue_keepdim": lambda m: tuple(m.kthvalue(m.tensor([[3.0, 1.0], [0.0, 5.0]]), 1, 0, True)),
    "kthvalue_out_of_range": lambda m: m.kthvalue(m.tensor([1.0, 2.0]), 3),
    "cartesian_prod_one": lambda m: m.cartesian_prod(m.tensor([1, 2])),
    "cartesian_prod_2d_error": lambda m: m.cartesian_prod(m.ones(2, 2), m.ones(2)),
    "triu_indices": lambda m: m.triu_indices(4, 3, -1),
    "diff_prepend": lambda m: m.diff(m.tensor([1, 3, 6]), prepend=m.tensor([0])),
    "kthvalue": lambda m: tuple(m.kthvalue(m.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]]), 2, 1)),
    "concatenate": lambda m: m.concatenate([m.ones(2), m.zeros(1)]),
    "row_stack": lambda m: m.row_stack([m.ones(2), m.zeros(2)]),
    "swapdims": lambda m: m.swapdims(m.ones(2, 3, 4), 0, 2).shape,
    "adjoint": lambda m: m.ones(2, 3).adjoint().shape,
    "narrow_copy": lambda m: m.arange(6).reshape(2, 3).narrow_copy(1, 1, 2),
}


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


@pytest.mark.parametrize("name", list(CASES))
def test_against_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    expr = CASES[name]
    try:
        want = _plain(expr(torch), torch)
    except Exception as e:  # noqa: BLE001 - the type torch raises is the expectation
        with pytest.raises(
            type(e) if type(e) is not NotImplementedError else (NotImplementedError, RuntimeError)
        ):
            expr(tp)
        return
    _compare(_plain(expr(tp), torch), want, name)
