"""The formula table and the helpers its formulas share (Note [Formula table])."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

Formula = Callable[[Any, Any], Any]
Shape = Sequence[int]

FORMULAS: dict[str, dict[str | tuple[str, ...], Formula]] = {}
NON_DIFFERENTIABLE: set[str] = set()
OUTPUT_DIFFERENTIABILITY: dict[str, tuple[bool, ...]] = {}
# Note [Saved outputs]: the outputs of a multi-output op its formula reads (s.result[i]), where
# that is not all of them; the others are not saved, so writing them in place later is no
# error (``out += identity`` after a batch norm: PyTorch's formulas save only its mean and
# invstd). Reading an output that is not saved gives None.
SAVED_OUTPUTS: dict[str, tuple[int, ...]] = {}


# Hot formulas call operator overloads directly, as derivatives.yaml calls at:: functions: one
# dispatch, without the public function's overload choice and __tensorplug_function__ check.
_aten = tp.ops.aten
_mm = _aten.mm.default
_transpose = _aten.transpose.int


def _t(x: Tensor) -> Tensor:
    """``x.t()`` of a matrix, without the composite's dimension check (formulas know)."""
    return _transpose(x, 0, 1)


# Note [Complex gradients]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch's convention ("Autograd for Complex Numbers"): the gradient of a real loss L with
# respect to a complex z = x + iy is dL/dx + i dL/dy (twice the conjugate Wirtinger derivative
# dL/dz*), so gradient descent steps along -grad as for real tensors. For an op s(z) with
# Wirtinger derivatives a = ds/dz and b = ds/dz*, the gradient handed back is
# ``g * conj(a) + conj(g) * b``. A holomorphic op has b = 0: its real formula with the
# derivative conjugated, ``g * conj(f'(z))`` (``mul``: ``g * other.conj()``; ``mm``:
# ``g @ mat2.mH``), which is why the formulas below conjugate what they multiply ``g`` by
# (``_cj``: a no-op on real tensors, so real gradients are unchanged). Non-holomorphic ops
# (``abs``, ``angle``, ``sgn``, ``polar``, ``real``) have their own formulas. A real input of
# an op with a complex output gets the real part of its gradient (PyTorch's handle_r_to_c),
# applied once for every formula by the engine (``fit_gradient`` in graph.py).
_conj_physical = _aten.conj_physical.default


def _cj(x: Tensor) -> Tensor:
    """``x.conj()`` for a complex tensor, ``x`` itself for a real one (Note [Complex gradients])."""
    return _conj_physical(x) if x.tp_dtype.kind == "c" else x


def _cjs(x: Any) -> Any:
    """The conjugate of a Python scalar (or a tensor): an ``alpha``, a ``value``, ``other``."""
    if isinstance(x, Tensor):
        return _cj(x)
    return x.conjugate() if isinstance(x, complex) else x


def _tH(x: Tensor) -> Tensor:
    """``x.mH`` of a matrix: the conjugate transpose (``x.t()`` for a real one)."""
    return _cj(_transpose(x, 0, 1))


def _mH(x: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (``x.mT`` for a real tensor)."""
    return _cj(x.mT)


def defderiv(name: str, **formulas: Formula) -> None:
    """Add the formulas of overload ``name`` (one keyword per differentiable input)."""
    entry: dict[str | tuple[str, ...], Formula] = {}
    for arg, fn in formulas.items():
        entry[arg] = fn
    FORMULAS[name] = entry


def nondifferentiable(*names: str) -> None:
    NON_DIFFERENTIABLE.update(names)


# --- helpers: shapes and reductions --------------------------------------------------------------


def _zeros(g: Tensor, shape: Shape) -> Tensor:
    """Zeros of ``shape`` with ``g``'s dtype and device (Note [Zero gradients])."""
    return g.new_zeros(list(shape))


def _scale(g: Tensor, factor: Any) -> Tensor:
    """``g * factor``, skipping the multiplication by one (PyTorch's ``maybe_multiply``)."""
    return g if factor == 1 else g * factor


def _reduced_dims(dim: Any, ndim: int) -> list[int]:
    """The dims a reduction removed, wrapped and sorted; ``None`` and ``[]`` mean all of them."""
    if ndim == 0:
        return []
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(ndim))
    return sorted(d % ndim for d in dims)


def _restore_reduced(g: Tensor, ndim: int, dim: Any, keepdim: bool) -> Tensor:
    """Put back the dims a reduction without ``keepdim`` removed, as size 1."""
    if keepdim or ndim == 0:
        return g
    for d in _reduced_dims(dim, ndim):
        g = g.unsqueeze(d)
    return g


def _sum_backward(g: Tensor, shape: Shape, dim: Any, keepdim: bool) -> Tensor:
    return _restore_reduced(g, len(shape), dim, keepdim).expand(list(shape))


def _count(shape: Shape, dims: Sequence[int]) -> int:
    return math.prod(shape[d] for d in dims)


def _sum_to(x: Tensor, shape: Shape) -> Tensor:
    """Sum ``x`` down to ``shape`` (which it broadcasts from): PyTorch's ``at::sum_to``."""
    shape = tuple(shape)
    lead = x.ndim - len(shape)
    if lead > 0:
        x = x.sum(list(range(lead)))
    ones = [i for i, n in enumerate(shape) if n == 1 and x.shape[i] != 1]
    if ones:
        x = x.sum(ones, True)
    return x


def _pad_to(x: Tensor, shape: Shape) -> Tensor:
    """``x`` at the start of each dim of a zero tensor of ``shape`` (``shape >= x.shape``)."""
    for d, (have, want) in enumerate(zip(x.shape, shape, strict=True)):
        if have < want:
            fill = list(x.shape)
            fill[d] = want - have
            x = tp.cat([x, _zeros(x, fill)], d)
    return x


def _embed(g: Tensor, shape: Shape, dim: int, start: int, step: int) -> Tensor:
    """Zeros of ``shape`` holding ``g`` at ``start, start+step, ...`` along ``dim``.

    The backward of select and slice, built out of place (cat, or scatter_add for strided
    slices) so that it is itself differentiable.
    """
    k = g.shape[dim]
    if k == 0:
        return _zeros(g, shape)
    if step == 1 or k == 1:
        pieces = []
        if start > 0:
            pieces.append(_zeros(g, [*shape[:dim], start, *shape[dim + 1 :]]))
        pieces.append(g)
        after = shape[dim] - start - k
        if after > 0:
            pieces.append(_zeros(g, [*shape[:dim], after, *shape[dim + 1 :]]))
        return tp.cat(pieces, dim) if len(pieces) > 1 else g
    index = tp.arange(start, start + k * step, step, dtype=tp.int64, device=g.device)
    index = index.reshape([k if d == dim else 1 for d in range(g.ndim)]).expand(list(g.shape))
    return _zeros(g, shape).scatter_add(dim, index, g)


def _where_zero(cond: Tensor, g: Tensor) -> Tensor:
    """``g`` where ``cond`` holds, else 0."""
    return tp.where(cond, g, 0.0)
