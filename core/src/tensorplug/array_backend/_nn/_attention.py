"""Part ``attention`` of the ``nn`` family of the array kit: the fused attention kernels that
``scaled_dot_product_attention`` runs (PyTorch's names and schemas):

* ``_scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal, *,
  attn_mask, scale)`` returns ``(output, logsumexp)``;
* ``_scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value, out,
  logsumexp, dropout_p, is_causal, *, attn_mask, scale)`` returns the three gradients.

Note [Fused attention]
~~~~~~~~~~~~~~~~~~~~~~
The forward keeps no ``(L, S)`` matrix for the backward: it returns the row-wise log-sum-exp
of the scaled, masked scores, one number per query row, and the backward recomputes the
attention weights from it, ``P = exp(Q K^T * scale + mask - lse)``, with two matrix products.
So the autograd graph of an attention holds ``q``, ``k``, ``v``, the output and ``lse``
(``O(L + S)`` per head), where the composition of public ops (the math path) holds the weights
(``O(L * S)``). The gradients, with ``dO`` the output's:
``dV = P^T dO``, ``dP = dO V^T``, ``dS = P * (dP - rowsum(dO * O))``, ``dQ = dS K * scale``,
``dK = dS^T Q * scale`` (``rowsum(dO * O)`` equals ``rowsum(P * dP)``, and is cheaper).

Scores, softmax and products run in the accumulation dtype (float32 for half precision, as
PyTorch's CPU kernel accumulates), and the outputs are rounded once; ``logsumexp`` stays in the
accumulation dtype. A query row that every key is masked from (all scores ``-inf``) gets a zero
output and ``lse = -inf`` and contributes no gradient, as PyTorch's kernels (and its math path's
safe softmax) give. ``attn_mask`` is a boolean mask (True: take part) or an additive float one,
broadcast to ``(..., L, S)``; ``is_causal`` masks the upper-left aligned upper triangle (row
``i`` sees keys ``0..i``), and with a mask both apply, as PyTorch does. Unlike PyTorch's CPU
kernel, these take any number of leading dimensions (they broadcast as ``matmul`` does) and a
value head size different from the query's; dropout is refused as PyTorch's is (the composite
runs the math path for ``dropout_p > 0``).

Note [Causal blocks]
~~~~~~~~~~~~~~~~~~~~
A causal attention (``is_causal`` without a mask) of at least two blocks of query rows (64
rows each) runs block by block: the rows ``r0..r1`` see the keys ``0..r1`` only, so each block
computes its scores, softmax and products against those keys, and the masked upper triangle
beyond them is never computed: about half the products and exponentials at long sequences,
and one ``(64, r1)`` weight array per head alive at a time instead of ``(L, S)``. The backward
does the same with the saved ``lse`` and adds each block's key and value gradients into the
rows it saw. The arithmetic of every row is the whole attention's (the same scores, maximum,
sums and products over the keys it sees), so the results agree to rounding.
"""

from __future__ import annotations

import math
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernel, Kernels, Kit, OpError, bind, fmt_shape, torch_name
from .._standard import matrix_transpose as _mT

_FWD = "scaled_dot_product_attention_flash_attention"


def _check(query: Tensor, key: Tensor, value: Tensor, dropout_p: float) -> _dt.dtype:
    if dropout_p > 0.0:
        raise OpError(f"{_FWD}: Currently do not support dropout > 0")
    d = query._dtype
    if key._dtype is not d or value._dtype is not d:
        raise OpError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{torch_name(d)} key.dtype: {torch_name(key._dtype)} and value.dtype: "
            f"{torch_name(value._dtype)} instead."
        )
    if d.kind != "f":
        raise OpError(f"\"{_FWD}\" not implemented for '{torch_name(d)}'")
    qs, ks, vs = (tuple(t._data.shape) for t in (query, key, value))
    if min(len(qs), len(ks), len(vs)) < 2:
        raise OpError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {len(qs)} key.dim: {len(ks)} and value.dim: {len(vs)} instead."
        )
    if qs[-1] != ks[-1]:
        raise OpError(
            f"{_FWD}: query and key must have the same head size, but got query "
            f"{fmt_shape(qs)} and key {fmt_shape(ks)}"
        )
    if ks[-2] != vs[-2]:
        raise OpError(
            f"{_FWD}: key and value must have the same sequence length, but got key "
            f"{fmt_shape(ks)} and value {fmt_shape(vs)}"
        )
    return d


def _scores(
    kit: Kit,
    q: Any,
    k: Any,
    attn_mask: Tensor | None,
    is_causal: Any,
    acc: Any,
) -> Any:
    """The scaled, masked scores ``(q * scale) k^T + mask`` in the accumulation dtype: one new
    ``(..., L, S)`` array, the masks added in place as ``0``/``-inf`` biases. ``q`` comes
    scaled: the scale multiplies the ``(L, E)`` queries, not the ``(L, S)`` scores (Note
    [Scaled queries])."""
    xp = kit.xp
    s = xp.matmul(q, _mT(xp, k))
    ninf = xp.asarray(-math.inf, dtype=acc)
    zero = xp.asarray(0.0, dtype=acc)
    if attn_mask is not None:
        m = attn_mask._data
        bias = (
            xp.where(kit.truth(m), zero, ninf) if attn_mask._dtype is _dt.bool else kit.cast(m, acc)
        )
        s = _add(s, bias)
    if is_causal is not False:  # True, or the first row of a causal block (an int)
        L, S = s.shape[-2], s.shape[-1]
        r0 = 0 if is_causal is True else int(is_causal)
        keep = xp.arange(S)[None, :] <= xp.arange(r0, r0 + L)[:, None]
        s = _add(s, xp.where(keep, zero, ninf))
    return s


# Note [Scaled queries]
# ~~~~~~~~~~~~~~~~~~~~~
# The scale enters the scores as ``(q * scale) k^T``: a pass over the ``(L, E)`` queries
# instead of the ``(L, S)`` scores (S is 2-16x E in a GPT block). The backward takes the same
# scaled queries: its scores are the forward's to the bit (the weights come back exactly from
# ``lse``), ``dK = dS^T (q * scale)`` needs no scale of its own, and ``dQ = (dS K) * scale``
# scales ``(L, E)`` again, not ``dS``. Each block scales its own rows of the queries (one
# block's copy alive at a time). The forward also divides the output by the softmax's
# row sums after its product with ``v`` (``(L, Ev)``) instead of the weights (``(L, S)``).
# Against the scores scaled after the product, the results differ by rounding only.


def _scale(q: Any, scale: float | None) -> float:
    """The scale, ``1 / sqrt(E)`` by default."""
    return 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale


def _add(s: Any, bias: Any) -> Any:
    """``s + bias``, in place where the sum has ``s``'s shape."""
    if bias.ndim <= s.ndim and all(
        b in (1, n) for b, n in zip(bias.shape[::-1], s.shape[::-1], strict=False)
    ):
        s += bias
        return s
    return s + bias


def _mul(a: Any, b: Any) -> Any:
    """``a * b``, in place where the product has ``a``'s shape."""
    if tuple(a.shape) == tuple(b.shape):
        a *= b
        return a
    return a * b


def _exp_(xp: Any, a: Any) -> Any:
    """``exp(a)``, into ``a`` where the library's ufuncs write into an array (numpy, CuPy)."""
    exp = xp.exp
    return exp(a, out=a) if hasattr(exp, "nin") else exp(a)


def _operands(kit: Kit, d: _dt.dtype, *ts: Tensor) -> tuple[Any, ...]:
    acc = kit.accumulate[d]
    device = ts[0]._device
    return tuple(kit.cast(kit.operand(t, d, device), acc) for t in ts)


_BLOCK = 64  # query rows per block of a causal attention (Note [Causal blocks])


def _causal_blocks(
    q: Any, k: Any, attn_mask: Tensor | None, is_causal: bool
) -> list[tuple[int, int, int]] | None:
    """Note [Causal blocks]: ``(first row, end row, keys seen)`` of each block of query rows,
    or None where the attention runs whole (not causal, a mask, or too few rows)."""
    L, S = q.shape[-2], k.shape[-2]
    if not is_causal or attn_mask is not None or L < 2 * _BLOCK or S == 0:
        return None
    return [(r0, min(L, r0 + _BLOCK), min(S, r0 + _BLOCK)) for r0 in range(0, L, _BLOCK)]


def _forward(
    kit: Kit, q: Any, k: Any, v: Any, attn_mask: Tensor | None, causal: Any, sc: float, acc: Any
) -> tuple[Any, Any]:
    """The output and ``lse`` (with its last dim kept) of one attention or block of query rows:
    ``causal`` is False, True, or the first row of a causal block (an int)."""
    xp = kit.xp
    p = _scores(kit, q * sc, k, attn_mask, causal, acc)
    top = xp.max(p, axis=-1, keepdims=True)
    top = xp.where(xp.isfinite(top), top, xp.asarray(0.0, dtype=acc))
    p -= top
    p = _exp_(xp, p)
    total = xp.sum(p, axis=-1, keepdims=True)
    lse = xp.log(total) + top  # -inf on a row every key is masked from (its p is 0)
    out = xp.matmul(p, v)
    out /= xp.where(total == 0, xp.asarray(1.0, dtype=acc), total)
    return out, lse


def flash_attention_for_cpu(
    kit: Kit,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    attn_mask: Tensor | None = None,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    d = _check(query, key, value, dropout_p)
    xp = kit.xp
    acc = kit.accumulate[d]
    q, k, v = _operands(kit, d, query, key, value)
    with kit.quiet():
        blocks = _causal_blocks(q, k, attn_mask, is_causal)
        sc = _scale(q, scale)
        if blocks is None:
            out, lse = _forward(kit, q, k, v, attn_mask, is_causal, sc, acc)
        else:
            parts = [
                _forward(kit, q[..., r0:r1, :], k[..., :e, :], v[..., :e, :], None, r0, sc, acc)
                for r0, r1, e in blocks
            ]
            out = xp.concat([o for o, _ in parts], axis=-2)
            lse = xp.concat([m for _, m in parts], axis=-2)
    device = query._device
    lse_dtype = kit.dtype_of(lse)
    return kit.wrap(out, d, device), kit.wrap(lse[..., 0], lse_dtype, device)


def flash_attention_for_cpu_backward(
    kit: Kit,
    grad_out: Tensor,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    out: Tensor,
    logsumexp: Tensor,
    dropout_p: float,
    is_causal: bool,
    *,
    attn_mask: Tensor | None = None,
    scale: float | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    d = _check(query, key, value, dropout_p)
    xp = kit.xp
    acc = kit.accumulate[d]
    q, k, v, g, o = _operands(kit, d, query, key, value, grad_out, out)
    lse = kit.cast(logsumexp._data, acc)[..., None]
    with kit.quiet():
        blocks = _causal_blocks(q, k, attn_mask, is_causal)
        sc = _scale(q, scale)
        if blocks is None:
            dq, dk, dv = _backward(kit, q, k, v, g, o, lse, attn_mask, is_causal, sc, acc)
        else:
            dqs, dk, dv = [], None, None
            for r0, r1, e in blocks:
                dq_b, dk_b, dv_b = _backward(
                    kit, q[..., r0:r1, :], k[..., :e, :], v[..., :e, :], g[..., r0:r1, :],
                    o[..., r0:r1, :], lse[..., r0:r1, :], None, r0, sc, acc,
                )  # fmt: skip
                dqs.append(dq_b)
                if dk is None:  # the first block sees the fewest keys: zeros for the rest
                    S = k.shape[-2]
                    dk = xp.zeros((*dk_b.shape[:-2], S, dk_b.shape[-1]), dtype=dk_b.dtype)
                    dv = xp.zeros((*dv_b.shape[:-2], S, dv_b.shape[-1]), dtype=dv_b.dtype)
                dk[..., :e, :] += dk_b
                dv[..., :e, :] += dv_b
            dq = xp.concat(dqs, axis=-2)
        dq *= sc
    device = query._device
    return (
        kit.wrap(_sum_to(xp, dq, q.shape), d, device),
        kit.wrap(_sum_to(xp, dk, k.shape), d, device),
        kit.wrap(_sum_to(xp, dv, v.shape), d, device),
    )


def _backward(
    kit: Kit, q: Any, k: Any, v: Any, g: Any, o: Any, lse: Any, attn_mask: Tensor | None,
    causal: Any, sc: float, acc: Any,
) -> tuple[Any, Any, Any]:  # fmt: skip
    """The three gradients of one attention or block of query rows (``causal`` as in
    :func:`_forward`), the weights recomputed from ``lse``; ``dQ`` still to be multiplied by
    the scale ``sc`` (Note [Scaled queries])."""
    xp = kit.xp
    q = q * sc
    p = _scores(kit, q, k, attn_mask, causal, acc)
    # a row every key is masked from has lse -inf and only -inf scores: exp gives 0 there
    p -= xp.where(xp.isfinite(lse), lse, xp.asarray(0.0, dtype=acc))
    p = _exp_(xp, p)
    # P^T dO as (dO^T P)^T: numpy's matmul of a transposed first operand is slower
    dv = _mT(xp, xp.matmul(_mT(xp, g), p))
    ds = xp.matmul(g, _mT(xp, v))  # dP, then dS in place
    ds -= xp.sum(g * o, axis=-1, keepdims=True)
    ds = _mul(ds, p)
    dq = xp.matmul(ds, k)
    dk = _mT(xp, xp.matmul(_mT(xp, q), ds))
    return dq, dk, dv


def _sum_to(xp: Any, a: Any, shape: tuple[int, ...]) -> Any:
    """``a`` summed over the leading dimensions it was broadcast along to reach ``shape``."""
    if tuple(a.shape) == tuple(shape):
        return a
    lead = a.ndim - len(shape)
    if lead:
        a = xp.sum(a, axis=tuple(range(lead)))
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and a.shape[i] != 1)
    if dims:
        a = xp.sum(a, axis=dims, keepdims=True)
    return a


KERNELS: dict[str, Kernel] = {
    "_scaled_dot_product_flash_attention_for_cpu": flash_attention_for_cpu,
    "_scaled_dot_product_flash_attention_for_cpu_backward": flash_attention_for_cpu_backward,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
