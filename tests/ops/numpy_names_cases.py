"""Issue 29's expressions run on tensorplug and on torch (``m`` is the module): the cases of
tests/ops/test_numpy_names.py, in a module of their own so that tools/gen_numpy_names.py can
record torch's answers without importing tensorplug."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
