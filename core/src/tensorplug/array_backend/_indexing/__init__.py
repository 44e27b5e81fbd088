"""The ``indexing`` family of the array kit: kernels that pick or write elements at positions.

* ``_index``: index (advanced indexing), index_put_, index_select, index_add, index_fill, take;
* ``_scatter``: gather, scatter, scatter_add, masked_select, masked_scatter, nonzero;
* ``_search``: searchsorted and bucketize;
* ``_reduce``: scatter_reduce (sum, prod, mean, amax, amin);

with the in-place forms of index_add, index_fill, scatter and masked_scatter (the functional
kernel's result written back into ``self``). :data:`PARTS` are the modules ``register`` builds
(one ``build(kit)`` each).

Note [Indexing fast path]
~~~~~~~~~~~~~~~~~~~~~~~~~
The common calls index with one integer tensor (``x[idx]``, an embedding, the rows of a
gradient) or scatter a gradient back along a dim. Their fast paths skip the translation of the
index list and go to the array library's indexing at once, on the same arrays the general path
would use; numpy checks the bounds (its IndexError is converted as every kernel error is,
Note [Kernel errors]) and a shape that does not fit makes it refuse before writing anything, so
the general path can then run and raise PyTorch's message. ``scatter_add`` checks that no
index is negative (numpy would wrap it) and leaves the upper bound to ``add.at``.
"""

from __future__ import annotations

from . import _index, _reduce, _scatter, _search

PARTS = (_index, _scatter, _search, _reduce)
