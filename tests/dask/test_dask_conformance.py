"""tensorplug's conformance kit on the Dask backend (tensorplug.testing), and the dask
limitations it meets, each named, with a test of its own below.

Each case costs dask's graph building and a few computes (about 0.15 s: dask's own overhead on
tiny arrays), so the suite runs a sample: the first float32 sample of every eighth operator
(by name), about 90 cases. ``TENSORPLUG_DASK_CONFORMANCE=full`` runs every case of float32,
int64 and bool, and the gradients (about 7,000 cases, the better part of an hour on two cores).

The expected failures:

* dask's linalg has no ``det``, ``slogdet``, ``eigh``, ``eig``, QR's ``mode='raw'`` nor an SVD
  with ``full_matrices=True`` (which norms, ranks and condition numbers use).
* dask's reshape splits and merges only whole chunks evenly (the ``padding='same'``
  convolutions' reshapes), and ``eye`` with ``m`` is a graph dask cannot compute (a missing
  dependency in its own graph).
* indexing with a one-element dask array reports the whole axis as the result's shape
  (nearest-neighbour downsampling to size 1).
"""

from __future__ import annotations

import os

import dask.array as da
import numpy as np
import pytest

import tensorplug as tp
from tensorplug.testing import OP_DB, instantiate_device_type_tests

FULL = os.environ.get("TENSORPLUG_DASK_CONFORMANCE", "") == "full"

NO_LINALG = "dask.array.linalg has no {}"
NO_SVD = "dask's svd has no full_matrices=True"

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
    "linalg_svdvals": NO_SVD,
    "linalg_matrix_norm": NO_SVD,
    "linalg_matrix_norm.str_ord": NO_SVD,
    "linalg_cond": NO_SVD,
    "linalg_matrix_rank": NO_SVD,
    "linalg_matrix_rank.atol_rtol_tensor": NO_SVD,
    "linalg_matrix_rank.atol_rtol_float": NO_SVD,
    "linalg_matrix_rank.tol_tensor": NO_SVD,
    "conv1d.padding": "dask reshapes only whole chunks evenly",
    "conv2d.padding": "dask reshapes only whole chunks evenly",
    "conv3d.padding": "dask reshapes only whole chunks evenly",
    "eye.m": "dask's eye with m is a graph it cannot compute (a missing dependency)",
    "upsample_nearest3d": "dask's shape of a take with a one-element index array is wrong",
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
    expected_failures={k: v for k, v in EXPECTED.items() if k in _PICKED},
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
