"""tensorplug's conformance kit on the Dask backend (tensorplug.testing), and the dask
limitations it meets, each named, with a test of its own below.

Each case costs dask's graph building and a few computes (about 0.15 s: dask's own overhead on
tiny arrays), so the suite runs a sample: the first float32 sample of every eighth operator
(by name), about 90 cases. ``TENSORPLUG_DASK_CONFORMANCE=full`` runs every case of float32,
int64 and bool, and the gradients (9,045 cases: about 25 minutes with ``-n 2`` on two shared
cores).

The expected failures (EXPECTED), each a limitation of dask itself shown by a test below:

* dask's linalg has no ``det``, ``slogdet``, ``eigh``, ``eig``, QR's ``mode='raw'`` or
  ``'complete'``, nor an SVD with ``full_matrices=True`` (which norms, ranks and condition
  numbers use), and takes 2-D arrays only: no batches of matrices, no vector right-hand side.
* dask's reshape splits and merges only whole chunks evenly (the reshapes of ``padding='same'``
  and grouped convolutions, ``combinations`` past the length), and ``eye`` with more columns
  than rows is a graph dask cannot compute (a missing dependency in its own graph).
* indexing with a one-element dask array reports the whole axis as the result's shape
  (nearest-neighbour downsampling to size 1, global adaptive max pooling).
* dask's max/min along a dim of an array with another dim empty fails at compute.
"""

from __future__ import annotations

import fnmatch
import os

import dask.array as da
import numpy as np
import pytest

import tensorplug as tp
from tensorplug.testing import OP_DB, cases, instantiate_device_type_tests

FULL = os.environ.get("TENSORPLUG_DASK_CONFORMANCE", "") == "full"

NO_LINALG = "dask.array.linalg has no {}"
NO_SVD = "dask's svd has no full_matrices=True"
TWO_D = "dask.array.linalg takes 2-D arrays only (no batches, no vector right-hand sides)"
RESHAPE = "dask reshapes only whole chunks evenly"
TAKE_ONE = "dask's shape of a take with a one-element index array is wrong"
EMPTY_MAX = "dask's max/min of an array with an empty dim fails at compute"

EXPECTED: dict[str, str] = {
    "linalg_det": NO_LINALG.format("det"),
    "det": NO_LINALG.format("det"),
    "linalg_slogdet": NO_LINALG.format("slogdet"),
    "slogdet": NO_LINALG.format("slogdet"),
    "logdet": NO_LINALG.format("slogdet"),
    "_linalg_eigh": NO_LINALG.format("eigh"),
    "linalg_eigh": NO_LINALG.format("eigh"),
    "linalg_eigvalsh": NO_LINALG.format("eigh"),
    "linalg_pinv.atol_rtol_float": NO_LINALG.format("eigh (hermitian=True)"),
    "linalg_eig": NO_LINALG.format("eig"),
    "linalg_eigvals": NO_LINALG.format("eig"),
    "geqrf": "dask's qr has only mode='reduced'",
    "linalg_qr-*-complete": "dask's qr has only mode='reduced'",
    "linalg_svdvals": NO_SVD,
    "linalg_matrix_norm": NO_SVD,
    "linalg_matrix_norm.str_ord": NO_SVD,
    "linalg_cond": NO_SVD,
    "linalg_matrix_rank": NO_SVD,
    "linalg_matrix_rank.atol_rtol_tensor": NO_SVD,
    "linalg_matrix_rank.atol_rtol_float": NO_SVD,
    "linalg_matrix_rank.tol_tensor": NO_SVD,
    "_linalg_svd-*-full": NO_SVD,
    "_linalg_svd-*-values_only": TWO_D,
    "_linalg_svd-*-wide_batched": TWO_D,
    "linalg_qr-*-wide_batched": TWO_D,
    "cholesky-*-pd_batched": TWO_D,
    "linalg_cholesky-*-pd_batched": TWO_D,
    "linalg_cholesky_ex-*-pd_batched": TWO_D,
    "inverse-*-batched": TWO_D,
    "linalg_inv-*-batched": TWO_D,
    "linalg_inv_ex-*-batched": TWO_D,
    "linalg_lstsq-*-gelsd_batched": TWO_D,
    "linalg_lu_solve-*-right_adjoint": TWO_D,
    "linalg_matrix_exp-*-scaled_batched": TWO_D,
    "matrix_exp-*-scaled_batched": TWO_D,
    "linalg_solve-*-broadcast": TWO_D,
    "linalg_solve-*-vector": TWO_D,
    "linalg_solve_ex-*-broadcast": TWO_D,
    "linalg_solve_ex-*-vector": TWO_D,
    "linalg_solve_triangular-*-lower_unit_right": TWO_D,
    "conv1d.padding-*-same": RESHAPE,
    "conv2d.padding-*-same": RESHAPE,
    "conv3d.padding-*-same": RESHAPE,
    "conv1d-*-bias_stride_padding_groups": RESHAPE,
    "conv2d-*-bias_stride_padding_groups": RESHAPE,
    "conv3d-*-bias_stride_padding_groups": RESHAPE,
    "convolution-*-2d_stride_dilation_groups": RESHAPE,
    "convolution_backward-*-2d_stride_groups_no_bias": RESHAPE,
    "combinations-*-r_beyond": RESHAPE,
    "eye.m-*-2x4": "dask's eye with m is a graph it cannot compute (a missing dependency)",
    "eye.m-*-default_dtype": "dask's eye with m is a graph it cannot compute (a missing dependency)",
    "upsample_nearest3d-*-down": TAKE_ONE,
    "upsample_nearest3d-*-empty_batch": TAKE_ONE,
    "adaptive_max_pool2d-*-global": TAKE_ONE,
    "adaptive_max_pool3d-*-global": TAKE_ONE,
    "amax-*-empty_kept": EMPTY_MAX,
    "amin-*-empty_kept": EMPTY_MAX,
    "aminmax-*-empty_other_dim": EMPTY_MAX,
    # the gradients of the same operators
    "grad:linalg_det": NO_LINALG.format("det"),
    "grad:det": NO_LINALG.format("det"),
    "grad:linalg_slogdet": NO_LINALG.format("slogdet"),
    "grad:slogdet": NO_LINALG.format("slogdet"),
    "grad:logdet": NO_LINALG.format("slogdet"),
    "grad:_linalg_eigh": NO_LINALG.format("eigh"),
    "grad:linalg_eigh": NO_LINALG.format("eigh"),
    "grad:linalg_eigvalsh": NO_LINALG.format("eigh"),
    "grad:linalg_pinv.atol_rtol_float": NO_LINALG.format("eigh (hermitian=True)"),
    "grad:linalg_matrix_norm": TWO_D,
    "grad:linalg_svdvals": TWO_D,
    "grad:conv1d.padding": RESHAPE,
    "grad:conv2d.padding": RESHAPE,
    "grad:conv3d.padding": RESHAPE,
    "grad:upsample_nearest3d": TAKE_ONE,
}


def _expected(picked: set[str]) -> dict[str, str]:
    """EXPECTED's entries for the cases that run: all of them, or those of the sample (the
    first float32 case of each operator ``picked``; no gradients)."""
    if FULL:
        return dict(EXPECTED)
    first: dict[str, str] = {}
    for p in cases(("float32",)):
        first.setdefault(p.id.split("-")[0], p.id)
    ids = [first[op] for op in picked if op in first]
    return {
        k: v
        for k, v in EXPECTED.items()
        if not k.startswith("grad:")
        and any(i.split("-")[0] == k or fnmatch.fnmatchcase(i, k) for i in ids)
    }


def _sample() -> tuple[set[str], object]:
    names = sorted({info.name for info in OP_DB})
    picked = set(names) if FULL else {n for i, n in enumerate(names) if i % 8 == 0}
    seen: set[str] = set()

    def select(case_id: str) -> bool:
        op = case_id.split("-")[0]
        if op not in picked:
            return False
        if FULL:
            return True
        if op in seen:  # the first float32 sample of each operator
            return False
        seen.add(op)
        return True

    return picked, select


_PICKED, _SELECT = _sample()

instantiate_device_type_tests(
    globals(),
    "dask",
    dtypes=("float32", "int64", "bool") if FULL else ("float32",),
    expected_failures=_expected(_PICKED),
    grads=FULL,
    select=_SELECT,  # type: ignore[arg-type]
)


# --- the dask limitations, each shown on dask itself ------------------------------------------


def test_dask_arrays_share_no_memory():
    """Why the plugin registers ``views=False``: an assignment into a slice of a dask array is
    not seen by the array it was sliced from (numpy's view would see it)."""
    a = da.zeros(4)
    v = a[1:3]
    v[...] = 1
    assert a.sum().compute() == 0


def test_dask_linalg_lacks_what_the_expected_failures_name():
    for name in ("det", "slogdet", "eigh", "eig"):
        assert not hasattr(da.linalg, name)
    with pytest.raises(ValueError, match="full_matrices"):
        import array_api_compat.dask.array as xp

        xp.linalg.svd(da.ones((3, 3)), full_matrices=True)


def test_dask_reshapes_only_whole_chunks():
    a = da.ones((6, 5, 4), chunks=(3, 2, 2))
    with pytest.raises(NotImplementedError, match="merge or split existing dimensions"):
        a.reshape((5, 6, 4))


def test_dask_linalg_takes_two_dimensions_only():
    import array_api_compat.dask.array as xp

    batch = da.from_array(np.stack([np.eye(3)] * 2))
    with pytest.raises(ValueError, match="Dimension must be 2"):
        xp.linalg.inv(batch)
    with pytest.raises(ValueError, match="must be 2D"):  # a batch of SVDs
        xp.linalg.svd(da.from_array(np.ones((2, 3, 4))), full_matrices=False)


def test_dask_max_of_an_array_with_an_empty_dim_fails_at_compute():
    a = da.zeros((0, 3), chunks=(1, 3))
    r = da.max(a, axis=1, keepdims=True)  # numpy: an empty (0, 1) result
    assert r.shape == (0, 1)
    with pytest.raises(ValueError, match="zero-size array"):
        r.compute()


def test_dask_eye_wider_than_tall_cannot_compute():
    with pytest.raises(ValueError, match="Missing dependency"):
        da.eye(2, M=4).compute()


def test_dask_take_with_one_index_reports_the_whole_axis():
    b = da.from_array(np.arange(9.0).reshape(3, 3))
    r = da.take(b, da.from_array(np.array([0])), axis=0)
    assert r.shape == (3, 3) and r.compute().shape == (1, 3)


def test_views_on_dask_write_through_to_their_base():
    """Functionalization (docs/functionalization.md) gives dask tensors PyTorch's views."""
    assert not tp.keys.has_views("Dask")
    x = tp.arange(6, dtype=tp.float32, device="dask")
    v = x.view(2, 3)
    assert v.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    v.t()[0].add_(1)
    assert x.tolist() == [1.0, 1.0, 2.0, 4.0, 4.0, 5.0] and x._version == 1
    x.mul_(2)
    assert v.tolist() == [[2.0, 2.0, 4.0], [8.0, 8.0, 10.0]]
