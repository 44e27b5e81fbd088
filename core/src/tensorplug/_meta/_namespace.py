"""The meta array namespace :data:`xp`: the meta arrays of ``_array`` with the functions of
every family module (internal; see ``_array`` for Note [Meta arrays]).

Importing a family module adds its functions to :data:`xp`; this module imports them all, so
``from ._namespace import xp`` gives the whole namespace. The Meta backend imports it when it
builds its kernels, on the first call with Meta tensors, so that ``import tensorplug`` does not
pay for the families.
"""

from __future__ import annotations

from . import _factories, _fft, _indexing, _linalg, _pointwise, _reductions, _shape
from ._array import MetaArray, MetaValueRead, xp

__all__ = ["MetaArray", "MetaValueRead", "xp"]

# the families whose functions are in xp (imported for that)
FAMILIES = (_factories, _pointwise, _shape, _linalg, _reductions, _indexing, _fft)
