"""Batching rules of the FFT kernels and of the complex views.

``_fft_c2c``, ``_fft_r2c`` and ``_fft_c2r`` transform the dims they are given: the rule moves
the batch dimension first (a view) and shifts the dims by one, so one call transforms every
sample. ``view_as_real`` and ``view_as_complex`` read the last dimension: with the batch first it
stays last; where the batch was the last physical dimension, ``view_as_complex``'s pairs are
not contiguous any more and the rule makes them so (a copy: the result no longer writes through
to the input, where PyTorch's rule refuses the call).
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp

from ..batched import BatchedTensor, front, wrap
from ..calls import passdown, wrap_dim
from .table import Kernel, defrule

aten = tp.ops.aten


def _dims_rule(op: Any) -> Kernel:
    def kernel(self: Any, dim: list[int], *args: Any) -> Any:
        if type(self) is not BatchedTensor:
            return passdown(op, (self, dim, *args), {})
        n = self.ndim
        phys = [wrap_dim(d, max(n, 1), op) + 1 for d in dim]
        return wrap(op(front(self), phys, *args), 0, self.level)

    return kernel


defrule("_fft_c2c.default", "_fft_r2c.default", "_fft_c2r.default")(_dims_rule)


@defrule("view_as_real.default")
def _view_as_real_rule(op: Any) -> Kernel:
    def kernel(self: Any) -> Any:
        if type(self) is not BatchedTensor:
            return passdown(op, (self,), {})
        return wrap(op(front(self)), 0, self.level)

    return kernel


@defrule("view_as_complex.default")
def _view_as_complex_rule(op: Any) -> Kernel:
    def kernel(self: Any) -> Any:
        if type(self) is not BatchedTensor:
            return passdown(op, (self,), {})
        v = front(self)
        if self.bdim == self.value.ndim - 1:  # the pairs are strided by the batch now
            v = aten.contiguous.default(v)
        return wrap(op(v), 0, self.level)

    return kernel
