"""Forward-mode (tangent) formulas of the standard operators: the ``result:`` entries of
PyTorch's derivatives.yaml.

Note [Forward formula table]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``FORWARD_FORMULAS`` maps an overload name (``"mm"``, ``"softmax.int"``) to one of:

* ``LINEAR``: the op is linear in its differentiable inputs jointly (views, shape ops, sums,
  ``cat``, ``index_put``): the output's tangent is the op itself applied to the inputs'
  tangents (zeros for an input without one), PyTorch's ``auto_linear``;
* ``MULTILINEAR``: the op is linear in each differentiable input separately (``mm``,
  ``matmul``, ``dot``): the tangent is the sum, over the inputs with a tangent, of the op with
  that one input replaced by its tangent, PyTorch's ``auto_element_wise`` for products;
* a dict, as the reverse table's (Note [Formula table] in formulas/): input name ->
  ``fn(t, s)`` giving that input's contribution to the output's tangent (``t`` its tangent,
  never None; ``s`` the call: ``s.<arg>``, ``s.result``, ``s.<arg>_shape``). A tuple of names
  maps to one ``fn`` that receives a tuple of tangents, None where an input has none. For an op
  with several outputs, ``fn`` returns one tangent per output (None: none). Contributions are
  summed and broadcast to the output's shape.

Operators tagged ``pointwise`` with a reverse formula need no entry (:func:`elementwise_entry`):
their Jacobian is diagonal (after broadcasting), so the reverse formula with the tangent in
place of the cotangent is the forward one. Every other differentiable operator without an
entry takes the double-vjp construction (Note [Double-vjp construction] in forward.py).
Formulas call public operations, so reverse mode records them and outer forward levels
propagate through them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

__all__ = ["FORWARD_FORMULAS", "LINEAR", "MULTILINEAR", "elementwise_entry"]


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


LINEAR = _Marker("LINEAR")
MULTILINEAR = _Marker("MULTILINEAR")

FormulaEntry = Any  # LINEAR | MULTILINEAR | dict[str | tuple[str, ...], Callable]
FORWARD_FORMULAS: dict[str, FormulaEntry] = {}


def elementwise_entry(reverse: dict[Any, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """The forward entry of a pointwise op from its reverse entry (Note [Forward formula
    table]): each input's reverse formula, given the tangent as the cotangent."""
    return {k: fn for k, fn in reverse.items() if isinstance(k, str)}


def deflinear(*names: str) -> None:
    for n in names:
        FORWARD_FORMULAS[n] = LINEAR


def defmultilinear(*names: str) -> None:
    for n in names:
        FORWARD_FORMULAS[n] = MULTILINEAR


def defforward(name: str, **formulas: Callable[..., Any]) -> None:
    FORWARD_FORMULAS[name] = dict(formulas)


def _scale(t: Tensor, factor: Any) -> Tensor:
    return t if factor == 1 else t * factor


def _none(t: Any, s: Any) -> None:
    """A zero contribution (random draws, overwritten values)."""
    return None


# --- pointwise ---------------------------------------------------------------------------------

defforward(
    "_to_copy",
    self=lambda t, s: t.to(dtype=s.result.dtype, device=s.result.device),
)
defforward("copy_", src=lambda t, s: t.to(dtype=s.result.dtype, device=s.result.device))
defforward("fill_.Scalar", self=_none)  # overwritten by a constant
defforward(
    "masked_fill.Tensor",
    self=lambda t, s: t.masked_fill(s.mask, 0),
    value=lambda t, s: tp.where(s.mask, t, 0.0),
)

# --- complex numbers and FFTs ------------------------------------------------------------------
# R-linear in their inputs (conj_physical too: the op applied to the tangent is its tangent);
# complex and polar per input. Pointwise ops on complex values take the double-vjp construction
# (forward.py's _output_tangents).

deflinear("conj_physical", "view_as_real", "view_as_complex", "_fft_c2c", "_fft_r2c", "_fft_c2r")
defforward(
    "complex",
    real=lambda t, s: tp.complex(t, tp.zeros_like(t)),
    imag=lambda t, s: tp.complex(tp.zeros_like(t), t),
)
defforward(
    "polar",
    abs=lambda t, s: tp.polar(t, s.angle),  # t e^{i angle}
    angle=lambda t, s: s.result * t * 1j,  # i z t
)

# --- random: the draw is a constant; only the parameters move it -------------------------------

defforward("normal.Tensor_float", mean=lambda t, s: t)
defforward("normal.float_Tensor", std=lambda t, s: t * (s.result - s.mean) / s.std)
defforward(
    "normal.Tensor_Tensor",
    mean=lambda t, s: t,
    std=lambda t, s: t * (s.result - s.mean) / s.std,
)
for _n in (
    "bernoulli", "bernoulli.p", "bernoulli_.float", "uniform_", "normal_", "exponential_",
    "random_", "random_.from", "random_.to",
):  # fmt: skip
    defforward(_n, self=_none)

# in-place comparisons (issue 29): self's old values are overwritten by 0 and 1
for _cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
    defforward(f"{_cmp}_.Scalar", self=_none)
    defforward(f"{_cmp}_.Tensor", self=_none, other=_none)
for _n in ("cauchy_", "log_normal_", "geometric_"):
    defforward(_n, self=_none)

# --- reductions -----------------------------------------------------------------------------------

deflinear("sum", "sum.dim_IntList", "mean", "mean.dim", "cumsum")


def _restore(x: Tensor, dims: list[int], keepdim: bool) -> Tensor:
    if keepdim:
        return x
    for d in sorted(dims):
        x = x.unsqueeze(d)
    return x


def _at_indices(t: Tensor, dim: int, indices: Tensor, keepdim: bool) -> Tensor:
    """The tangent of values picked along ``dim`` at ``indices`` (max.dim, sort, topk)."""
    if t.ndim == 0:
        return t
    idx = indices if keepdim else indices.unsqueeze(dim)
    got = t.gather(dim, idx)
    return got if keepdim else got.squeeze(dim)


for _n in ("max.dim", "min.dim", "median.dim", "kthvalue"):
    defforward(_n, self=lambda t, s: (_at_indices(t, s.dim, s.result[1], s.keepdim), None))
for _n in ("sort", "sort.stable", "topk", "cummax", "cummin"):
    defforward(_n, self=lambda t, s: (_at_indices(t, s.dim, s.result[1], True), None))

# --- statistics: nanmedian.dim and mode pick values; logcumsumexp (PyTorch's logcumsumexp_jvp)
for _n in ("nanmedian.dim", "mode"):
    defforward(_n, self=lambda t, s: (_at_indices(t, s.dim, s.result[1], s.keepdim), None))


def _logcumsumexp_t(t: Tensor, x: Tensor, dim: int) -> Tensor:
    """The running softmax-weighted tangent: cumsum(exp(x - m) * t) / cumsum(exp(x - m))."""
    if x.ndim == 0:
        return t
    e = (x - x.amax(dim, True)).exp()
    return (e * t).cumsum(dim) / e.cumsum(dim)


defforward("logcumsumexp", self=lambda t, s: _logcumsumexp_t(t, s.self, s.dim))


def _dims(dim: Any, ndim: int) -> list[int]:
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return [d % max(ndim, 1) for d in dims]


def _var_t(t: Tensor, x: Tensor, dim: Any, correction: Any, keepdim: bool) -> Tensor:
    dims = _dims(dim, x.ndim)
    n = 1
    for d in dims:
        n *= x.shape[d] if x.ndim else 1
    c = 1 if correction is None else correction
    centered = x - x.mean(dims, keepdim=True) if x.ndim else x * 0
    return (centered * t).sum(dims, keepdim=keepdim) * (2.0 / max(n - c, 0))


defforward(
    "var.correction",
    self=lambda t, s: _var_t(t, s.self, s.dim, s.correction, s.keepdim),
)
defforward(
    "std.correction",
    self=lambda t, s: _var_t(t, s.self, s.dim, s.correction, s.keepdim) / (2 * s.result),
)
defforward(
    "logsumexp",
    self=lambda t, s: (
        t * (s.self - _restore(s.result, _dims(s.dim, s.self.ndim), s.keepdim)).exp()
    ).sum(_dims(s.dim, s.self.ndim), keepdim=s.keepdim),
)

# --- shape and views ----------------------------------------------------------------------------

deflinear(
    "transpose.int", "permute", "view", "reshape", "unsqueeze", "squeeze", "squeeze.dim",
    "expand", "select.int", "slice.Tensor", "split.Tensor", "split_with_sizes", "unbind.int",
    "flip", "roll", "repeat", "tril", "triu", "diag", "diagonal", "cat", "stack", "t", "narrow",
    "movedim.int", "clone",
)  # fmt: skip

# --- indexing ------------------------------------------------------------------------------------

deflinear(
    "index.Tensor", "index_put_", "index_put", "index_select", "masked_select", "gather",
    "scatter_add", "scatter.src", "index_add", "take", "masked_scatter",
)  # fmt: skip
defforward("scatter.value", self=lambda t, s: t.scatter(s.dim, s.index, 0.0))
defforward("index_fill.int_Scalar", self=lambda t, s: t.index_fill(s.dim, s.index, 0))
defforward(
    "index_fill.int_Tensor",
    self=lambda t, s: t.index_fill(s.dim, s.index, 0),
    value=lambda t, s: tp.zeros_like(s.result).index_fill(s.dim, s.index, t),
)

# --- linalg ---------------------------------------------------------------------------------------

defmultilinear("mm", "bmm", "matmul", "dot", "outer")
defforward(
    "addmm",
    self=lambda t, s: _scale(t, s.beta),
    mat1=lambda t, s: _scale(tp.ops.aten.mm.default(t, s.mat2), s.alpha),
    mat2=lambda t, s: _scale(tp.ops.aten.mm.default(s.mat1, t), s.alpha),
)

# --- nn --------------------------------------------------------------------------------------------

deflinear("nll_loss", "nll_loss_backward")


def _softmax_t(t: Tensor, y: Tensor, dim: int) -> Tensor:
    return y * (t - (t * y).sum(dim, keepdim=True))


defforward("softmax.int", self=lambda t, s: _softmax_t(t.to(s.result.dtype), s.result, s.dim))
defforward(
    "log_softmax.int",
    self=lambda t, s: (
        t.to(s.result.dtype) - (t.to(s.result.dtype) * s.result.exp()).sum(s.dim, keepdim=True)
    ),
)
defforward(
    "_softmax_backward_data",
    grad_output=lambda t, s: _softmax_t(t, s.output, s.dim),
    output=lambda t, s: (
        t * (s.grad_output - (s.grad_output * s.output).sum(s.dim, keepdim=True))
        - s.output * (s.grad_output * t).sum(s.dim, keepdim=True)
    ),
)
defforward(
    "_log_softmax_backward_data",
    grad_output=lambda t, s: t - s.output.exp() * t.sum(s.dim, keepdim=True),
    output=lambda t, s: -(s.output.exp() * t) * s.grad_output.sum(s.dim, keepdim=True),
)

# --- convolution and padding ------------------------------------------------------------------
# convolution is bilinear in (input, weight) and adds the bias: each input's tangent through
# the op with the others fixed (and no bias), the bias's broadcast over the positions. The
# padding operators and im2col/col2im are linear in their tensor; constant_pad_nd pads the
# tangent with zeros (its value is a constant); the pad backward kernels are linear in
# grad_output (self gives only the shape). convolution_backward takes the double-vjp.


def _conv_params(s: Any) -> tuple[Any, ...]:
    return (s.stride, s.padding, s.dilation, s.transposed, s.output_padding, s.groups)


_convolution = tp.ops.aten.convolution.default
defforward(
    "convolution",
    input=lambda t, s: _convolution(t, s.weight, None, *_conv_params(s)),
    weight=lambda t, s: _convolution(s.input, t, None, *_conv_params(s)),
    bias=lambda t, s: t.reshape([-1] + [1] * (len(s.weight.shape) - 2)),
)
defforward("constant_pad_nd", self=lambda t, s: tp.ops.aten.constant_pad_nd.default(t, s.pad, 0))
deflinear("im2col", "col2im")


def _defpad_backward(name: str) -> None:
    """``name``'s backward kernel is linear in grad_output (self gives only the shape)."""
    backward = getattr(tp.ops.aten, f"{name}_backward").default
    defforward(f"{name}_backward", grad_output=lambda t, s: backward(t, s.self, s.padding))


for _mode in ("reflection", "replication"):
    for _k in (1, 2, 3):
        deflinear(f"{_mode}_pad{_k}d")
        _defpad_backward(f"{_mode}_pad{_k}d")


# --- attention --------------------------------------------------------------------------------
# The fused attention (Note [Fused attention] in array_backend/_nn/_attention.py): with
# P = exp(S - lse) the weights, S = Q K^T * scale + mask, the output O = P V moves by
# dO = dP V + P dV, where dP = P * (dS - rowsum(P * dS)) and dS = (dQ K^T + Q dK^T) * scale.
# The log-sum-exp output is not differentiable (None).


def _attention_weights(
    q: Tensor, k: Tensor, lse: Tensor, mask: Tensor | None, causal: bool, sc: float
) -> Tensor:
    s = tp.matmul(q, k.transpose(-2, -1)) * sc
    if mask is not None:
        s = s.masked_fill(mask.logical_not(), -math.inf) if mask.dtype == tp.bool else s + mask
    if causal:
        L, S = s.shape[-2], s.shape[-1]
        upper = tp.ones(L, S, dtype=tp.bool, device=s.device).triu(1)
        s = s.masked_fill(upper, -math.inf)
    seen = lse.isfinite().unsqueeze(-1)  # a row that sees no key has no weights
    return tp.where(seen, (s - tp.where(seen, lse.unsqueeze(-1), 0.0)).exp(), 0.0)


def _attention_tangent(ts: tuple[Tensor | None, ...], s: Any) -> tuple[Tensor | None, None]:
    tq, tk, tv = ts
    q, k, v = s.query, s.key, s.value
    sc = 1.0 / math.sqrt(q.shape[-1]) if s.scale is None else s.scale
    p = _attention_weights(q, k, s.result[1].to(q.dtype), s.attn_mask, s.is_causal, sc)
    out: Tensor | None = None
    if tq is not None or tk is not None:
        ds = None
        if tq is not None:
            ds = tp.matmul(tq, k.transpose(-2, -1))
        if tk is not None:
            part = tp.matmul(q, tk.transpose(-2, -1))
            ds = part if ds is None else ds + part
        assert ds is not None
        ds = ds * sc
        dp = p * (ds - (p * ds).sum(-1, keepdim=True))
        out = tp.matmul(dp, v)
    if tv is not None:
        part = tp.matmul(p, tv)
        out = part if out is None else out + part
    return out, None


FORWARD_FORMULAS["_scaled_dot_product_flash_attention_for_cpu"] = {
    ("query", "key", "value"): _attention_tangent
}
