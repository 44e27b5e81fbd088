"""The ``reductions`` family of the array kit: kernels that combine the elements along dims.

* ``_sums``: sum, prod, mean, var, std, logsumexp, any/all, count_nonzero, linalg_vector_norm,
  cumsum/cumprod;
* ``_extrema``: amax/amin, max/min, argmax/argmin, aminmax; isclose/allclose/equal;
* ``_sorting``: sort, topk, median, kthvalue, cummax/cummin, searchsorted/bucketize, unique;
* ``_statistics``: mode, nanmedian, logcumsumexp;
* ``_counting``: bincount, histc, histogram, isin, unique_consecutive.

Sorting is here because its ops order or search the elements along a dim, as the reductions
combine them there (``median`` and ``kthvalue`` reduce it; ``cummax`` scans it as ``cumsum``
does). ``_common`` holds the fast path's ufunc reductions (Note [Reduction fast path]) and the
general path. :data:`PARTS` are the modules ``register`` builds (one ``build(kit)`` each).
"""

from __future__ import annotations

from . import _counting, _extrema, _sorting, _statistics, _sums

PARTS = (_sums, _extrema, _sorting, _statistics, _counting)
