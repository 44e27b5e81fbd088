"""Derivative formulas of the standard operators: the role of PyTorch's derivatives.yaml.

Note [Formula table]
~~~~~~~~~~~~~~~~~~~~
``FORMULAS`` maps an overload name of native_functions.yaml (``"mul.Tensor"``, ``"neg"`` for an
empty overload) to a dict: differentiable input argument name -> ``fn(g, s)`` returning that
input's gradient. A tuple of names maps to one ``fn`` returning a tuple of gradients in that
order (for formulas that share work, like ``layer_norm``).

* ``g`` is the gradient of the output. For ops with several outputs (``max.dim``, ``split``),
  ``g`` is a tuple with one gradient per output; outputs that received none get zeros.
* ``s`` holds the forward call: ``s.<arg>`` is the argument (a tensor, list, or Python value),
  ``s.result`` the output (a tuple for several outputs), ``s.<arg>_shape`` / ``s.<arg>_dtype``
  the shape and dtype of a tensor argument, readable without saving the tensor.
  A tensor argument (or the result) is saved for backward only when the formula's code names it
  (``s.self`` saves ``self``; ``s.self_shape`` does not). Saved tensors are checked against
  their version counter when read (Note [Saved tensors] in graph.py), so write the formula to
  read them directly as ``s.<name>`` in its own body.
* The returned gradient may be ``None`` (zero), and may have a shape that broadcasts to the
  input's: the engine sums broadcast dimensions away and casts to the input's dtype, as
  PyTorch's ``validate_outputs`` does. A ``Tensor[]`` input gets a list.
* Formulas call only public tensorplug operations, so a backward pass run with
  ``create_graph=True`` records its own graph and higher derivatives work.

In-place variants (``add_.Tensor``) and ``out=`` variants (``add.out``) use the entry of their
functional overload; for in-place ones ``s.self`` is the value *before* the op (cloned first,
only when the formula names it) and ``s.result`` the value after. CompositeImplicitAutograd ops
have no entry: autograd sees the operators they decompose into. In-place ops whose functional
form is composite or absent (``index_put_``, ``copy_``, ``fill_.Scalar``) have entries of their
own.

``NON_DIFFERENTIABLE`` lists overloads whose outputs never require grad (comparisons, indices,
factories). ``OUTPUT_DIFFERENTIABILITY`` marks which outputs of a multi-output op are
differentiable (``max.dim``: the values, not the indices).

Note [Zero gradients]
~~~~~~~~~~~~~~~~~~~~~
Where PyTorch's derivatives.yaml writes ``zeros_like(grad)`` (``sign``, rounding divisions,
``fill_``) the formula returns real zeros, not ``None``: ``tp.autograd.grad`` then returns zeros
for that input as PyTorch does, instead of reporting it unused. Where PyTorch marks an op
not differentiable (``floor_divide``, comparisons) it is in ``NON_DIFFERENTIABLE``.

Note [Reading s in the formula body]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The kernel decides what to save from the names a formula's own code reads, so every formula
below reads the ``s.<name>`` it needs in its lambda and passes the values on to the ``_helper``
that does the work; a helper never receives ``s``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

__all__ = ["FORMULAS", "NON_DIFFERENTIABLE", "OUTPUT_DIFFERENTIABILITY"]

Formula = Callable[[Any, Any], Any]
Shape = Sequence[int]

FORMULAS: dict[str, dict[str | tuple[str, ...], Formula]] = {}
NON_DIFFERENTIABLE: set[str] = set()
OUTPUT_DIFFERENTIABILITY: dict[str, tuple[bool, ...]] = {}


# Hot formulas call operator overloads directly, as derivatives.yaml calls at:: functions: one
# dispatch, without the public function's overload choice and __tensorplug_function__ check.
_aten = tp.ops.aten
_mm = _aten.mm.default
_transpose = _aten.transpose.int


def _t(x: Tensor) -> Tensor:
    """``x.t()`` of a matrix, without the composite's dimension check (formulas know)."""
    return _transpose(x, 0, 1)



def defderiv(name: str, **formulas: Formula) -> None:
    """Add the formulas of overload ``name`` (one keyword per differentiable input)."""
    FORMULAS[name] = dict(formulas)


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


# --- pointwise binary arithmetic -----------------------------------------------------------------

defderiv(
    "add.Tensor",
    self=lambda g, s: g,
    other=lambda g, s: _scale(g, s.alpha),
)
defderiv("add.Scalar", self=lambda g, s: g)
defderiv(
    "sub.Tensor",
    self=lambda g, s: g,
    other=lambda g, s: -g if s.alpha == 1 else g * -s.alpha,
)
defderiv("sub.Scalar", self=lambda g, s: g)
defderiv("rsub.Scalar", self=lambda g, s: -g if s.alpha == 1 else g * -s.alpha)
defderiv(
    "mul.Tensor",
    self=lambda g, s: g * s.other,
    other=lambda g, s: g * s.self,
)
defderiv("mul.Scalar", self=lambda g, s: g * s.other)


def _div_other(g: Tensor, self: Tensor, other: Tensor) -> Tensor:
    # PyTorch's order, -g * ((self / other) / other), is the stable one for higher derivatives
    return -g * ((self / other) / other)


defderiv(
    "div.Tensor",
    self=lambda g, s: g / s.other,
    other=lambda g, s: _div_other(g, s.self, s.other),
)
defderiv("div.Scalar", self=lambda g, s: g / s.other)
# a rounding division is piecewise constant: zero gradient, as PyTorch (Note [Zero gradients])
defderiv(
    "div.Tensor_mode",
    self=lambda g, s: g / s.other if s.rounding_mode is None else _zeros(g, s.self_shape),
    other=lambda g, s: (
        _div_other(g, s.self, s.other) if s.rounding_mode is None else _zeros(g, s.other_shape)
    ),
)
defderiv("rdiv.Scalar", self=lambda g, s: _div_other(g, s.other, s.self))  # other / self
defderiv(
    "remainder.Tensor",
    self=lambda g, s: g,
    other=lambda g, s: -g * s.self.div(s.other, rounding_mode="floor"),
)
defderiv("remainder.Scalar", self=lambda g, s: g)
nondifferentiable("floor_divide", "floor_divide.Scalar")


def _pow_self_scalar(g: Tensor, self: Tensor, exponent: Any) -> Tensor:
    if exponent == 0:
        return _zeros(g, self.shape)
    if exponent == 2:
        return g * (self * 2)
    return g * (self.pow(exponent - 1) * exponent)


def _pow_self(g: Tensor, self: Tensor, exponent: Tensor) -> Tensor:
    return _where_zero(exponent != 0, g * (exponent * self.pow(exponent - 1)))


def _pow_exponent(g: Tensor, self: Tensor, exponent: Tensor, result: Tensor) -> Tensor:
    # 0 ** e has derivative 0 in e for e >= 0 (PyTorch's pow_backward_exponent)
    return g * _where_zero((self != 0).logical_or(exponent < 0), result * self.log())


def _scalar_log(x: float) -> float:
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def _pow_scalar_exponent(g: Tensor, base: Any, exponent: Tensor, result: Tensor) -> Tensor:
    if base == 0:
        return g * _where_zero(exponent < 0, result * -math.inf)
    return g * (result * _scalar_log(base))


defderiv("pow.Tensor_Scalar", self=lambda g, s: _pow_self_scalar(g, s.self, s.exponent))
defderiv(
    "pow.Tensor_Tensor",
    self=lambda g, s: _pow_self(g, s.self, s.exponent),
    exponent=lambda g, s: _pow_exponent(g, s.self, s.exponent, s.result),
)
defderiv("pow.Scalar", exponent=lambda g, s: _pow_scalar_exponent(g, s.self, s.exponent, s.result))


def _maximum_backward(g: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """d max(x, y) / dx: ``g`` where x wins, ``g / 2`` on ties (as PyTorch), else 0."""
    return tp.where(x == y, g / 2, g).masked_fill(x < y, 0)


def _minimum_backward(g: Tensor, x: Tensor, y: Tensor) -> Tensor:
    return tp.where(x == y, g / 2, g).masked_fill(x > y, 0)


defderiv(
    "maximum",
    self=lambda g, s: _maximum_backward(g, s.self, s.other),
    other=lambda g, s: _maximum_backward(g, s.other, s.self),
)
defderiv(
    "minimum",
    self=lambda g, s: _minimum_backward(g, s.self, s.other),
    other=lambda g, s: _minimum_backward(g, s.other, s.self),
)

# --- pointwise unary -----------------------------------------------------------------------------

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_C = 0.044715


def _gelu_backward(g: Tensor, x: Tensor, result: Tensor, approximate: str) -> Tensor:
    if approximate == "tanh":
        x2 = x * x
        t = tp.tanh((x + x2 * x * _GELU_C) * _SQRT_2_OVER_PI)
        d_inner = (1 - t * t) * ((x2 * (3 * _GELU_C) + 1) * _SQRT_2_OVER_PI)
        return g * ((t + 1) * 0.5 + x * 0.5 * d_inner)
    # exact: d/dx x*Phi(x) = Phi(x) + x*phi(x). The op set has no erf, so Phi(x) is read off the
    # result (result / x); at x = 0 it is 1/2 + x*phi(0), right in value and slope, so second
    # derivatives hold there too. phi(x) = exp(-x^2/2) / sqrt(2 pi).
    is_zero = x == 0
    cdf = tp.where(is_zero, x * _INV_SQRT_2PI + 0.5, result / tp.where(is_zero, 1.0, x))
    pdf = tp.exp(x * x * -0.5) * _INV_SQRT_2PI
    return g * (cdf + x * pdf)


def _tanh_backward(g: Tensor, y: Tensor) -> Tensor:
    return g * (1 - y * y)


def _sigmoid_backward(g: Tensor, y: Tensor) -> Tensor:
    return g * (y * (1 - y))


def _silu_backward(g: Tensor, x: Tensor) -> Tensor:
    sig = tp.sigmoid(x)
    return g * (sig * (x * (1 - sig) + 1))


defderiv("neg", self=lambda g, s: -g)
defderiv("abs", self=lambda g, s: g * s.self.sign())
defderiv("sign", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("exp", self=lambda g, s: g * s.result)
defderiv("log", self=lambda g, s: g / s.self)
defderiv("log1p", self=lambda g, s: g / (s.self + 1))
defderiv("sqrt", self=lambda g, s: g / (s.result * 2))
defderiv("rsqrt", self=lambda g, s: g * (s.result.pow(3) * -0.5))
defderiv("sin", self=lambda g, s: g * s.self.cos())
defderiv("cos", self=lambda g, s: -g * s.self.sin())
defderiv("tanh", self=lambda g, s: _tanh_backward(g, s.result))
defderiv("sigmoid", self=lambda g, s: _sigmoid_backward(g, s.result))
defderiv("relu", self=lambda g, s: _aten.threshold_backward.default(g, s.result, 0))
defderiv("gelu", self=lambda g, s: _gelu_backward(g, s.self, s.result, s.approximate))
defderiv("silu", self=lambda g, s: _silu_backward(g, s.self))
defderiv(
    "threshold_backward",
    grad_output=lambda g, s: tp.threshold_backward(g, s.self, s.threshold),
    self=lambda g, s: _zeros(g, s.self_shape),
)


def _clamp_self(g: Tensor, x: Tensor, lo: Any, hi: Any) -> Tensor:
    """The gradient passes where ``lo <= x <= hi`` (the subgradient 1 on the bounds)."""
    if lo is None and hi is None:
        return g
    if lo is None:
        return _where_zero(x <= hi, g)
    if hi is None:
        return _where_zero(x >= lo, g)
    return _where_zero((x >= lo).logical_and(x <= hi), g)


def _clamp_min(g: Tensor, x: Tensor, lo: Tensor, hi: Tensor | None) -> Tensor:
    below = x < lo
    return _where_zero(below if hi is None else below.logical_and(lo < hi), g)


def _clamp_max(g: Tensor, x: Tensor, lo: Tensor | None, hi: Tensor) -> Tensor:
    above = x > hi
    return _where_zero(above if lo is None else above.logical_or(hi < lo), g)


defderiv("clamp", self=lambda g, s: _clamp_self(g, s.self, s.min, s.max))
defderiv(
    "clamp.Tensor",
    self=lambda g, s: _clamp_self(g, s.self, s.min, s.max),
    min=lambda g, s: _clamp_min(g, s.self, s.min, s.max),
    max=lambda g, s: _clamp_max(g, s.self, s.min, s.max),
)
defderiv(
    "where.self",
    self=lambda g, s: _where_zero(s.condition, g),
    other=lambda g, s: tp.where(s.condition, 0.0, g),
)
defderiv("where.ScalarOther", self=lambda g, s: _where_zero(s.condition, g))
defderiv("where.ScalarSelf", other=lambda g, s: tp.where(s.condition, 0.0, g))

# --- comparisons and logic -----------------------------------------------------------------------

nondifferentiable(
    *(
        f"{op}.{kind}"
        for op in ("eq", "ne", "lt", "le", "gt", "ge")
        for kind in ("Tensor", "Scalar")
    ),
    "logical_and",
    "logical_or",
    "logical_not",
    "bitwise_not",
    "bitwise_and.Tensor",
    "bitwise_or.Tensor",
    "bitwise_xor.Tensor",
)

# --- reductions ----------------------------------------------------------------------------------


def _mean_backward(g: Tensor, shape: Shape, dim: Any, keepdim: bool) -> Tensor:
    n = _count(shape, _reduced_dims(dim, len(shape)))
    return _sum_backward(g / n if n else g, shape, dim, keepdim)


def _var_backward(g: Tensor, x: Tensor, dim: Any, correction: Any, keepdim: bool) -> Tensor:
    dims = _reduced_dims(dim, x.ndim)
    denom = _count(x.shape, dims) - (1 if correction is None else correction)
    # 2 / 0 is inf in PyTorch's C++ (the forward gives inf/nan there too)
    factor = 2.0 / denom if denom != 0 else math.inf
    centered = x - x.mean(dims, True)
    return _restore_reduced(g, x.ndim, dim, keepdim) * (centered * factor)


def _exclusive_products(x: Tensor, dim: int) -> Tensor:
    """``prod(x_j for j != i)`` along ``dim`` for every ``i``, zeros included.

    Exclusive prefix and suffix products by log-step scans (the op set has no cumprod): a
    polynomial in ``x``, so its derivatives of every order are right at zeros too, where
    ``result / x`` is not.
    """
    n = x.shape[dim]

    def shifted(t: Tensor, k: int, forward: bool) -> Tensor:  # moved k places, ones filled in
        ones = x.new_ones([*x.shape[:dim], k, *x.shape[dim + 1 :]])
        if forward:
            return tp.cat([ones, tp.slice(t, dim, 0, n - k)], dim)
        return tp.cat([tp.slice(t, dim, k, n), ones], dim)

    before, after = shifted(x, 1, True), shifted(x, 1, False)
    k = 1
    while k < n:
        before = before * shifted(before, k, True)
        after = after * shifted(after, k, False)
        k *= 2
    return before * after


def _prod_backward(g: Tensor, x: Tensor, result: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    if x.ndim == 0:
        return g
    if dim is not None:
        dim %= x.ndim
        g = _restore_reduced(g, x.ndim, dim, keepdim)
        result = _restore_reduced(result, x.ndim, dim, keepdim)
    if not (x == 0).sum().item():  # the common case, as PyTorch (which syncs here too)
        return g * (result / x)
    if dim is None:
        return g * _exclusive_products(x.reshape([-1]), 0).reshape(list(x.shape))
    return g * _exclusive_products(x, dim)


def _evenly_distribute(g: Tensor, x: Tensor, result: Tensor) -> Tensor:
    """max()/min(): the gradient shared evenly by the elements equal to the result."""
    mask = (x == result).logical_or((x != x).logical_and(result != result))  # NaN picks NaNs
    return mask * (g / mask.sum())


def _amax_backward(g: Tensor, x: Tensor, result: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """amax/amin: the gradient shared evenly by the ties of each reduced slice."""
    dims = _reduced_dims(dim, x.ndim)
    mask = x == _restore_reduced(result, x.ndim, dims, keepdim)
    g = _restore_reduced(g, x.ndim, dims, keepdim)
    return g / mask.sum(dims or None, True) * mask


def _value_selecting_backward(
    g: Tensor, shape: Shape, dim: int, indices: Tensor, keepdim: bool
) -> Tensor:
    """max.dim/min.dim: the gradient goes to the selected index of each slice."""
    if not shape:
        return g
    dim %= len(shape)
    if not keepdim:
        g, indices = g.unsqueeze(dim), indices.unsqueeze(dim)
    return _zeros(g, shape).scatter_add(dim, indices, g)


def _logsumexp_backward(g: Tensor, x: Tensor, result: Tensor, dim: Any, keepdim: bool) -> Tensor:
    g = _restore_reduced(g, x.ndim, dim, keepdim)
    return g * (x - _restore_reduced(result, x.ndim, dim, keepdim)).exp()


defderiv("sum", self=lambda g, s: g.expand(list(s.self_shape)))
defderiv(
    "sum.dim_IntList",
    self=lambda g, s: _sum_backward(g, s.self_shape, s.dim, s.keepdim),
)
defderiv("mean", self=lambda g, s: _mean_backward(g, s.self_shape, None, False))
defderiv("mean.dim", self=lambda g, s: _mean_backward(g, s.self_shape, s.dim, s.keepdim))
defderiv(
    "var.correction",
    self=lambda g, s: _var_backward(g, s.self, s.dim, s.correction, s.keepdim),
)
defderiv("prod", self=lambda g, s: _prod_backward(g, s.self, s.result, None, False))
defderiv(
    "prod.dim_int",
    self=lambda g, s: _prod_backward(g, s.self, s.result, s.dim, s.keepdim),
)
defderiv("amax", self=lambda g, s: _amax_backward(g, s.self, s.result, s.dim, s.keepdim))
defderiv("amin", self=lambda g, s: _amax_backward(g, s.self, s.result, s.dim, s.keepdim))
defderiv("max", self=lambda g, s: _evenly_distribute(g, s.self, s.result))
defderiv("min", self=lambda g, s: _evenly_distribute(g, s.self, s.result))
defderiv(
    "max.dim",
    self=lambda g, s: _value_selecting_backward(g[0], s.self_shape, s.dim, s.result[1], s.keepdim),
)
defderiv(
    "min.dim",
    self=lambda g, s: _value_selecting_backward(g[0], s.self_shape, s.dim, s.result[1], s.keepdim),
)
OUTPUT_DIFFERENTIABILITY["max.dim"] = (True, False)
OUTPUT_DIFFERENTIABILITY["min.dim"] = (True, False)
nondifferentiable("argmax", "argmin")
defderiv(
    "logsumexp",
    self=lambda g, s: _logsumexp_backward(g, s.self, s.result, s.dim, s.keepdim),
)


defderiv(
    "softmax.int",
    self=lambda g, s: _aten._softmax_backward_data.default(g, s.result, s.dim, s.self_dtype),
)
defderiv(
    "log_softmax.int",
    self=lambda g, s: _aten._log_softmax_backward_data.default(
        g, s.result, s.dim, s.self_dtype
    ),
)


def _softmax_backward_output(g: Tensor, gg: Tensor, y: Tensor, dim: int) -> Tensor:
    # d/dy of y * (g - sum(g * y)), applied to gg
    return gg * (g - (g * y).sum([dim], True)) - g * (gg * y).sum([dim], True)


defderiv(
    "_softmax_backward_data",
    grad_output=lambda g, s: tp._softmax_backward_data(g, s.output, s.dim, s.input_dtype),
    output=lambda g, s: _softmax_backward_output(s.grad_output, g, s.output, s.dim),
)
defderiv(
    "_log_softmax_backward_data",
    # its Jacobian in grad_output is I - exp(y) 1^T along dim: not symmetric
    grad_output=lambda g, s: g - (g * s.output.exp()).sum([s.dim], True),
    output=lambda g, s: -g * s.output.exp() * s.grad_output.sum([s.dim], True),
)

# --- linear algebra ------------------------------------------------------------------------------


def _matmul_self(g: Tensor, self_shape: Shape, other: Tensor) -> Tensor:
    if len(self_shape) == 1 and other.ndim == 1:  # dot
        return g * other
    if other.ndim == 1:  # (..., n, k) @ (k,): an outer product per batch
        return g.unsqueeze(-1) * other
    if len(self_shape) == 1:  # (k,) @ (..., k, m)
        return _sum_to(g.unsqueeze(-2).matmul(other.mT).squeeze(-2), self_shape)
    return _sum_to(g.matmul(other.mT), self_shape)


def _matmul_other(g: Tensor, self: Tensor, other_shape: Shape) -> Tensor:
    if self.ndim == 1 and len(other_shape) == 1:  # dot
        return g * self
    if self.ndim == 1:  # (k,) @ (..., k, m)
        return self.unsqueeze(-1) * g.unsqueeze(-2)
    if len(other_shape) == 1:  # (..., n, k) @ (k,)
        return _sum_to(self.mT.matmul(g.unsqueeze(-1)).squeeze(-1), other_shape)
    return _sum_to(self.mT.matmul(g), other_shape)


def _column_major(t: Tensor) -> bool:
    """Whether ``t``'s array is column-major only (a transposed weight, ``w.t()``): arrays
    with numpy's ``flags`` say so; others count as row-major."""
    flags = getattr(t._data, "flags", None)
    return flags is not None and flags.f_contiguous and not flags.c_contiguous


def _mm_mat2(g: Tensor, mat1: Tensor, mat2: Tensor) -> Tensor:
    """``mat1.t() @ g``, laid out like ``mat2``: for ``linear``'s ``w.t()`` computed as
    ``(g.t() @ mat1).t()`` (the same product), so the weight's gradient comes out row-major
    like the weight, and an optimizer step on it runs over matching layouts."""
    if _column_major(mat2):
        return _t(_mm(_t(g), mat1))
    return _mm(_t(mat1), g)


defderiv(
    "mm",
    self=lambda g, s: _mm(g, _t(s.mat2)),
    mat2=lambda g, s: _mm_mat2(g, s.self, s.mat2),
)
defderiv(
    "bmm",
    self=lambda g, s: g.bmm(s.mat2.transpose(1, 2)),
    mat2=lambda g, s: s.self.transpose(1, 2).bmm(g),
)
defderiv(
    "matmul",
    self=lambda g, s: _matmul_self(g, s.self_shape, s.other),
    other=lambda g, s: _matmul_other(g, s.self, s.other_shape),
)
defderiv(
    "addmm",
    self=lambda g, s: _scale(g, s.beta),
    mat1=lambda g, s: _scale(_mm(g, _t(s.mat2)), s.alpha),
    mat2=lambda g, s: _scale(_mm_mat2(g, s.mat1, s.mat2), s.alpha),
)

# --- views and shape -----------------------------------------------------------------------------


def _permute_backward(g: Tensor, dims: Sequence[int]) -> Tensor:
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n] = i
    return g.permute(inverse)


def _unsqueeze_to(g: Tensor, shape: Shape, dim: int | None = None) -> Tensor:
    """Undo squeeze (all size-1 dims, or only ``dim``): PyTorch's ``unsqueeze_to``."""
    if not shape:
        return g
    if dim is not None:
        dim %= len(shape)
        return g.unsqueeze(dim) if shape[dim] == 1 else g
    for d, n in enumerate(shape):
        if n == 1:
            g = g.unsqueeze(d)
    return g


def _slice_backward(
    g: Tensor, shape: Shape, dim: int, start: int | None, end: int | None, step: int
) -> Tensor:
    dim %= len(shape)
    n = shape[dim]
    lo = 0 if start is None else (start + n if start < 0 else start)
    return _embed(g, shape, dim, min(max(lo, 0), n), step)


def _select_backward(g: Tensor, shape: Shape, dim: int, index: int) -> Tensor:
    dim %= len(shape)
    return _embed(g.unsqueeze(dim), shape, dim, index % shape[dim], 1)


defderiv("transpose.int", self=lambda g, s: _aten.transpose.int(g, s.dim0, s.dim1))
defderiv("permute", self=lambda g, s: _permute_backward(g, s.dims))
defderiv("view", self=lambda g, s: g.reshape(list(s.self_shape)))
defderiv("reshape", self=lambda g, s: g.reshape(list(s.self_shape)))
defderiv("unsqueeze", self=lambda g, s: g.squeeze(s.dim))
defderiv("squeeze", self=lambda g, s: _unsqueeze_to(g, s.self_shape))
defderiv("squeeze.dim", self=lambda g, s: _unsqueeze_to(g, s.self_shape, s.dim))
defderiv("expand", self=lambda g, s: _sum_to(g, s.self_shape))
defderiv("select.int", self=lambda g, s: _select_backward(g, s.self_shape, s.dim, s.index))
defderiv(
    "slice.Tensor",
    self=lambda g, s: _slice_backward(g, s.self_shape, s.dim, s.start, s.end, s.step),
)
defderiv("split.Tensor", self=lambda g, s: tp.cat(list(g), s.dim))
defderiv("split_with_sizes", self=lambda g, s: tp.cat(list(g), s.dim))


def _cat_backward(g: Tensor, shapes: Sequence[Shape], dim: int) -> list[Tensor]:
    """Slices of ``g``; a 1-D empty input (which cat skips, as PyTorch) gets an empty one."""
    dim %= max(g.ndim, 1)
    skipped = [len(shape) == 1 and shape[0] == 0 for shape in shapes]
    sizes = [shape[dim] for shape, skip in zip(shapes, skipped, strict=True) if not skip]
    pieces = iter(tp.split_with_sizes(g, sizes, dim))
    return [_zeros(g, [0]) if skip else next(pieces) for skip in skipped]


defderiv("cat", tensors=lambda g, s: _cat_backward(g, s.tensors_shape, s.dim))

# --- indexing ------------------------------------------------------------------------------------

# in place on fresh zeros, as PyTorch's index_backward: the functional index_put would copy them
defderiv(
    "index.Tensor",
    self=lambda g, s: _zeros(g, s.self_shape).index_put_(s.indices, g, True),
)
# index_put (functional) is composite: the in-place op has the entry (Note [Formula table])
defderiv(
    "index_put_",
    self=lambda g, s: g if s.accumulate else tp.index_put(g, s.indices, _zeros(g, ()), False),
    values=lambda g, s: g.index(s.indices),
)
defderiv(
    "gather",
    self=lambda g, s: _zeros(g, s.self_shape).scatter_add(s.dim, s.index, g),
)
# src may be larger than index: its elements that index does not reach get zeros
defderiv(
    "scatter_add",
    self=lambda g, s: g,
    src=lambda g, s: _pad_to(g.gather(s.dim, s.index), s.src_shape),
)
defderiv("masked_fill.Scalar", self=lambda g, s: g.masked_fill(s.mask, 0))

# --- factories -----------------------------------------------------------------------------------

nondifferentiable(
    "zeros",
    "ones",
    "empty.memory_format",
    "full",
    "arange",
    "arange.start_step",
    "linspace",
    "eye",
    "eye.m",
    "rand",
    "randn",
    "randint",
    "randint.low",
)

# --- copies and conversion -----------------------------------------------------------------------

defderiv("_to_copy", self=lambda g, s: g.to(dtype=s.self_dtype, device=s.self_device))
defderiv("clone", self=lambda g, s: g)
defderiv(
    "copy_",
    self=lambda g, s: _zeros(g, s.self_shape),
    src=lambda g, s: g.to(device=s.src_device),
)
defderiv("fill_.Scalar", self=lambda g, s: _zeros(g, s.self_shape))
nondifferentiable("detach", "_local_scalar_dense")

# --- neural network functions --------------------------------------------------------------------


_BCE_EPS = 1e-12  # PyTorch's EPSILON in binary_cross_entropy_backward


def _bce_self(
    g: Tensor, x: Tensor, target: Tensor, weight: Tensor | None, reduction: str
) -> Tensor:
    grad = g * (x - target) / (x * (1 - x)).clamp(min=_BCE_EPS)
    if weight is not None:
        grad = grad * weight
    return grad / x.numel() if reduction == "mean" and x.numel() else grad


def _bce_target(
    g: Tensor, x: Tensor, target: Tensor, weight: Tensor | None, reduction: str
) -> Tensor:
    # the forward clamps both logs at -100; so does its derivative in target
    grad = g * ((-x).log1p().clamp(min=-100.0) - x.log().clamp(min=-100.0))
    if weight is not None:
        grad = grad * weight
    return grad / x.numel() if reduction == "mean" and x.numel() else grad


defderiv(
    "nll_loss",
    self=lambda g, s: _aten.nll_loss_backward.default(
        g, s.self, s.target, s.weight, s.reduction, s.ignore_index
    ),
)
defderiv(
    "nll_loss_backward",  # linear in grad_output; constant in self
    grad_output=lambda g, s: tp.nll_loss(g, s.target, s.weight, s.reduction, s.ignore_index),
    self=lambda g, s: _zeros(g, s.self_shape),
)
defderiv(
    "binary_cross_entropy",
    self=lambda g, s: _bce_self(g, s.self, s.target, s.weight, s.reduction),
    target=lambda g, s: _bce_target(g, s.self, s.target, s.weight, s.reduction),
)
