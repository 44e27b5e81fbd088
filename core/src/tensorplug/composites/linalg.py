"""The ``linalg`` family of the composites: products and contractions written with matmul,
bmm, mul and sum (linear, baddbmm, addbmm, outer, kron, tensordot, einsum, trace and t), and
``tensorplug.linalg.matmul``, PyTorch's alias of matmul (Note [Python modules] in _opset/api.py)."""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as _dt
from .._op_errors import broadcast_sizes, cpp_name, torch_name
from ..ops import ops
from ..tensor import _wrap_dim

aten = ops.aten


def linear(input: Any, weight: Any, bias: Any = None) -> Any:
    # a 2-D weight's t() is transpose(0, 1) (what t decomposes into): one dispatch fewer
    wt = aten.transpose.int(weight, 0, 1) if weight.ndim == 2 else aten.t.default(weight)
    if bias is not None and input.ndim == 2:  # one fused op (and one backward node), as torch
        return aten.addmm.default(bias, input, wt)
    out = aten.matmul.default(input, wt)
    return out if bias is None else aten.add.Tensor(out, bias)


def _batched_products(name: str, self: Any, batch1: Any, batch2: Any) -> None:
    """The checks baddbmm and addbmm share: 3-D batches of one dtype with matching sizes."""
    for what, x in (("batch1", batch1), ("batch2", batch2)):
        if x.ndim != 3:
            raise RuntimeError(f"aten::{name}: {what} must be a 3D tensor")
    if not (self.dtype is batch1.dtype is batch2.dtype):
        raise RuntimeError(
            f"aten::{name}: Input dtypes must be the same, got: input {cpp_name(self.dtype)}, "
            f"batch1: {cpp_name(batch1.dtype)}, batch2: {cpp_name(batch2.dtype)}"
        )


def baddbmm(self: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * self + alpha * (batch1 @ batch2)``, batch by batch; ``self`` broadcasts to the
    product's shape and is ignored when ``beta`` is 0 (a NaN in it does not propagate)."""
    _batched_products("baddbmm", self, batch1, batch2)
    b, n, k = batch1.shape
    if tuple(batch2.shape[:2]) != (b, k):
        raise RuntimeError(
            "aten::baddbmm: Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b}, {k}] but got: [{batch2.shape[0]}, {batch2.shape[1]}]."
        )
    return _scaled_sum(self, aten.bmm.default(batch1, batch2), beta, alpha)


def addbmm(self: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * self + alpha * sum_b(batch1[b] @ batch2[b])``: the batch summed away."""
    _batched_products("addbmm", self, batch1, batch2)
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(
            "aten::addbmm: batch1 and batch2 must have same number of batches, got "
            f"{batch1.shape[0]} and {batch2.shape[0]}"
        )
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(
            f"aten::addbmm: Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
            f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})"
        )
    products = aten.bmm.default(batch1, batch2)
    return _scaled_sum(self, aten.sum.dim_IntList(products, [0]), beta, alpha)


def _scaled_sum(self: Any, product: Any, beta: Any, alpha: Any) -> Any:
    """``beta * self + alpha * product``, ``self`` expanded to ``product``'s shape."""
    bias = aten.expand.default(self, list(product.shape))  # PyTorch's size check and message
    if alpha != 1:
        product = aten.mul.Scalar(product, alpha)
    if beta == 0:
        return product
    return aten.add.Tensor(product, bias, alpha=beta)


def outer(self: Any, vec2: Any) -> Any:
    for name, x in (("self", self), ("vec2", vec2)):
        if x.ndim != 1:
            raise RuntimeError(
                f"aten::outer: outer: Expected 1-D argument {name}, but got {x.ndim}-D"
            )
    return aten.mul.Tensor(aten.reshape.default(self, [self.shape[0], 1]), vec2)


def kron(self: Any, other: Any) -> Any:
    """Each dim ``n`` of ``self`` as ``(n, 1)``, each ``m`` of ``other`` as ``(1, m)``: their
    product, merged back, is the block matrix (PyTorch's KronImpl)."""
    nd = max(self.ndim, other.ndim)
    a = [1] * (nd - self.ndim) + list(self.shape)
    b = [1] * (nd - other.ndim) + list(other.shape)
    spread_a = aten.reshape.default(self, [x for n in a for x in (n, 1)])
    spread_b = aten.reshape.default(other, [x for m in b for x in (1, m)])
    prod = aten.mul.Tensor(spread_a, spread_b)
    return aten.reshape.default(prod, [n * m for n, m in zip(a, b, strict=True)])


# --- matrix-vector products, inner and cross products, distances (issue 29) --------------------
# mv, addmv and addr are kernels in PyTorch (BLAS); here they are matmul/mul and add, whose
# formulas give derivatives.yaml's. cdist is CompositeImplicitAutograd in PyTorch too.


def _scaled_check(name: str, self: Any, beta: Any, alpha: Any) -> None:
    if not (self.dtype.is_floating_point or self.dtype.is_complex) and self.dtype is not _dt.bool:
        for what, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise RuntimeError(
                    f"aten::{name}: For integral input tensors, argument {what} must not be a "
                    "floating point number."
                )


def _mv_checks(name: str, self: Any, mat: Any, vec: Any) -> None:
    if mat.ndim != 2 or vec.ndim != 1 or self.ndim > 1:
        raise RuntimeError(
            f"aten::{name}: vector + matrix @ vector expected, got {self.ndim}, {mat.ndim}, "
            f"{vec.ndim}"
        )
    n, k = mat.shape
    if vec.shape[0] != k or (self.ndim == 1 and self.shape[0] not in (1, n)):
        given = f"({self.shape[0]})" if self.ndim == 1 else "()"
        raise RuntimeError(
            f"aten::{name}: size mismatch, got input {given}, mat ({n}x{k}), vec ({vec.shape[0]})"
        )
    if not (self.dtype is mat.dtype is vec.dtype):
        raise RuntimeError(
            f"aten::{name}: {name.rstrip('_')} input tensors must have the same dtype, but got "
            f"{cpp_name(self.dtype)}, {cpp_name(mat.dtype)}, and {cpp_name(vec.dtype)}"
        )


def mv(self: Any, vec: Any) -> Any:
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"aten::mv: vector + matrix @ vector expected, got 1, {self.ndim}, {vec.ndim}"
        )
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"aten::mv: size mismatch, got input ({self.shape[0]}), mat "
            f"({self.shape[0]}x{self.shape[1]}), vec ({vec.shape[0]})"
        )
    if self.dtype is not vec.dtype:
        raise RuntimeError(
            f"aten::mv: addmv input tensors must have the same dtype, but got "
            f"{cpp_name(vec.dtype)}, {cpp_name(self.dtype)}, and {cpp_name(vec.dtype)}"
        )
    return aten.matmul.default(self, vec)


def addmv(self: Any, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * self + alpha * (mat @ vec)``; ``self`` is ignored when ``beta`` is 0."""
    _mv_checks("addmv", self, mat, vec)
    _scaled_check("addmv", self, beta, alpha)
    product = aten.matmul.default(mat, vec)
    if self.dtype is _dt.bool:
        return _bool_scaled(self, product, beta, alpha)
    return _scaled_sum(self, product, beta, alpha)


def addmv_(self: Any, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    out = addmv(self, mat, vec, beta=beta, alpha=alpha)
    if list(out.shape) != list(self.shape):
        raise RuntimeError(
            f"aten::addmv_: output with shape {list(self.shape)} doesn't match the broadcast "
            f"shape {list(out.shape)}"
        )
    return aten.copy_.default(self, out)


def _bool_scaled(self: Any, product: Any, beta: Any, alpha: Any) -> Any:
    """The bool form of ``beta * self + alpha * product``: ``(beta and self) or (alpha and
    product)``."""
    bias = aten.expand.default(self, list(product.shape))
    terms = [t for t, k in ((bias, beta), (product, alpha)) if k]
    if not terms:
        return aten.zeros.default(list(product.shape), dtype=_dt.bool, device=product.device)
    return terms[0] if len(terms) == 1 else aten.logical_or.default(*terms)


def addr(self: Any, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * self + alpha * outer(vec1, vec2)``, the three promoted to one dtype."""
    for what, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(
                f"aten::addr: addr: Expected 1-D argument {what}, but got {v.ndim}-D"
            )
    d = _dt.promote_types(_dt.promote_types(self.dtype, vec1.dtype), vec2.dtype)
    _scaled_check("addr", aten.empty.memory_format([0], dtype=d), beta, alpha)
    product = aten.mul.Tensor(aten.reshape.default(vec1, [vec1.shape[0], 1]), vec2)
    if d is _dt.bool:
        return _bool_scaled(self, product, beta, alpha)
    self_ = aten._to_copy.default(self, dtype=d) if self.dtype is not d else self
    return _scaled_sum(self_, product, beta, alpha)


def addr_(self: Any, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    out = addr(self, vec1, vec2, beta=beta, alpha=alpha)
    if list(out.shape) != list(self.shape):
        raise RuntimeError(
            f"aten::addr_: output with shape {list(self.shape)} doesn't match the broadcast "
            f"shape {list(out.shape)}"
        )
    return aten.copy_.default(self, out)


def ger(self: Any, vec2: Any) -> Any:
    return outer(self, vec2)


def inner(self: Any, other: Any) -> Any:
    if self.ndim == 0 or other.ndim == 0:
        return aten.mul.Tensor(self, other)
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            "aten::inner: inner() the last dimension must match on both input tensors but got "
            f"shapes {list(self.shape)} and {list(other.shape)}"
        )
    if self.dtype is not other.dtype:
        raise RuntimeError("aten::inner: both inputs should have same dtype")
    return aten.tensordot.default(self, other, [-1], [-1])  # autocast sees tensordot


def cross(self: Any, other: Any, dim: Any = None) -> Any:
    if dim is None:  # PyTorch's deprecated default: the first dim of length 3
        if self.ndim != other.ndim:
            raise RuntimeError(
                "aten::cross: linalg.cross: inputs must have the same number of dimensions."
            )
        shape = broadcast_sizes(list(self.shape), list(other.shape))
        sizes = [n for n in shape]
        if 3 not in sizes:
            raise RuntimeError("aten::cross: no dimension of size 3 in input")
        dim = sizes.index(3)
    return aten.linalg_cross.default(self, other, dim=dim)


_CDIST_MODES = {None: 0, 0: 0, 1: 1, 2: 2}


def cdist(x1: Any, x2: Any, p: float = 2.0, compute_mode: int | None = None) -> Any:
    """The ``p``-norm distance between each row of ``x1`` and each row of ``x2``, batch dims
    broadcast. ``compute_mode`` 0 (the default) takes the matrix-product form of the euclidean
    distance when either side has more than 25 rows, 1 always, 2 never, as PyTorch. The direct
    form is ``linalg_vector_norm`` of the differences, whose formula gives PyTorch's gradients
    (zero where a distance is zero)."""
    name = "aten::cdist"
    if x1.ndim < 2:
        raise RuntimeError(f"{name}: cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"{name}: cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"{name}: X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
            f"{x2.shape[-1]}"
        )
    for what, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(
                f"{name}: cdist only supports floating-point dtypes, {what} got: "
                f"{torch_name(x.dtype)}"
            )
    if x1.dtype is not x2.dtype:
        raise RuntimeError(
            f"{name}: expected scalar type {torch_name(x1.dtype)} but found {torch_name(x2.dtype)}"
        )
    if p < 0:
        raise RuntimeError(f"{name}: cdist only supports non-negative p values")
    if compute_mode not in _CDIST_MODES:
        raise RuntimeError(f"{name}: possible modes: 0, 1, 2, but was: {compute_mode}")
    mode = _CDIST_MODES[compute_mode]
    r1, r2, c = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    batch = broadcast_sizes(list(x1.shape[:-2]), list(x2.shape[:-2]))
    a = aten.expand.default(x1, [*batch, r1, c])
    b = aten.expand.default(x2, [*batch, r2, c])
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        return _euclidean_dist(a, b)
    diff = aten.sub.Tensor(aten.unsqueeze.default(a, -2), aten.unsqueeze.default(b, -3))
    return aten.linalg_vector_norm.default(diff, p, [-1])


def _euclidean_dist(x1: Any, x2: Any) -> Any:
    """PyTorch's _euclidean_dist: ``|a|^2 - 2 a.b + |b|^2`` as one matrix product of padded
    operands, clamped at 0 before the square root."""
    n1 = aten.sum.dim_IntList(aten.pow.Tensor_Scalar(x1, 2), [-1], True)
    n2 = aten.sum.dim_IntList(aten.pow.Tensor_Scalar(x2, 2), [-1], True)
    o1 = aten.ones_like.default(n1)
    o2 = aten.ones_like.default(n2)
    a = aten.cat.default([aten.mul.Scalar(x1, -2), n1, o1], -1)
    b = aten.cat.default([x2, o2, n2], -1)
    prod = aten.matmul.default(a, aten.transpose.int(b, -2, -1))
    return aten.sqrt.default(aten.clamp_min.default(prod, 0))


def tensordot(self: Any, other: Any, dims_self: Any, dims_other: Any) -> Any:
    """The contracted dims of ``self`` last and ``other``'s first, as one matrix product."""
    if len(dims_self) != len(dims_other):
        raise RuntimeError("aten::tensordot: both dimension lists should have same length")
    ds = [_wrap_dim(d, self.ndim, "tensordot") for d in dims_self]
    do = [_wrap_dim(d, other.ndim, "tensordot") for d in dims_other]
    for a, b in zip(ds, do, strict=True):
        sa, sb = self.shape[a], other.shape[b]
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(
                f"aten::tensordot: contracted dimensions need to match, but first has size {sa} "
                f"in dim {a} and second has size {sb} in dim {b}"
            )
    # a size-1 dim against a larger one broadcasts, as PyTorch's: expand both to the larger
    size = [max(self.shape[a], other.shape[b]) for a, b in zip(ds, do, strict=True)]
    keep_s = [d for d in range(self.ndim) if d not in ds]
    keep_o = [d for d in range(other.ndim) if d not in do]
    x = aten.permute.default(self, keep_s + ds)
    y = aten.permute.default(other, do + keep_o)
    out_s = [self.shape[d] for d in keep_s]
    out_o = [other.shape[d] for d in keep_o]
    x = aten.expand.default(x, out_s + size)
    y = aten.expand.default(y, size + out_o)
    k = math.prod(size)
    mm = aten.mm.default(
        aten.reshape.default(x, [math.prod(out_s), k]),
        aten.reshape.default(y, [k, math.prod(out_o)]),
    )
    return aten.reshape.default(mm, out_s + out_o)


def tensordot_int(a: Any, b: Any, dims: int = 2) -> Any:
    if dims < 0:
        raise RuntimeError(f"aten::tensordot.int: tensordot expects dims >= 0, but got dims={dims}")
    if dims > a.ndim or dims > b.ndim:
        raise RuntimeError(
            f"aten::tensordot.int: tensordot expects dims < ndim_a or ndim_b, but got dims={dims}"
        )
    return tensordot(a, b, list(range(a.ndim - dims, a.ndim)), list(range(dims)))


def _einsum_parse(equation: str, n_ops: int) -> tuple[list[list[str]], list[str] | None]:
    """The subscripts of each operand and of the output (``None``: implicit), with ``...`` as
    the one token ``"."`` and spaces dropped; PyTorch's messages."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")  # a second "->" is an invalid subscript, as PyTorch's

    def tokens(part: str, base: int) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(part):
            ch = part[i]
            if part.startswith("...", i):
                out.append(".")
                i += 3
                continue
            if not ("a" <= ch <= "z" or "A" <= ch <= "Z"):
                raise RuntimeError(
                    f"aten::einsum: einsum(): invalid subscript given at index {base + i} in the "
                    "equation string, subscripts must be in [a-zA-Z]"
                )
            out.append(ch)
            i += 1
        return out

    ins: list[list[str]] = []
    base = 0
    for part in lhs.split(","):
        ins.append(tokens(part, base))
        base += len(part) + 1
    if len(ins) > n_ops:
        raise RuntimeError(
            "aten::einsum: einsum(): fewer operands were provided than specified in the equation"
        )
    if len(ins) < n_ops:
        raise RuntimeError(
            "aten::einsum: einsum(): more operands were provided than specified in the equation"
        )
    return ins, tokens(rhs, len(lhs) + 2) if arrow else None


def einsum(equation: str, tensors: Any, *, path: Any = None) -> Any:
    """einsum over views, products and sums: each operand's dims are named by letters (``...``
    by the broadcast dims, named ``0``, ``1``, ...), repeated letters of one operand take its
    diagonal, every operand is permuted and viewed onto the letters of all, they are multiplied
    with broadcasting, and the letters missing from the output are summed. ``path`` only picks
    an order of contraction in PyTorch; every order gives the same values."""
    ins, out = _einsum_parse(equation, len(tensors))
    sizes: dict[str, int] = {}
    n_ell = 0
    named: list[tuple[Any, list[str]]] = []  # each operand with one letter per dim
    for k, (x, subs) in enumerate(zip(tensors, ins, strict=True)):
        if x.dtype is not tensors[0].dtype:  # PyTorch's bmm does not promote
            raise RuntimeError(
                f"aten::einsum: expected scalar type {torch_name(tensors[0].dtype)} but found "
                f"{torch_name(x.dtype)}"
            )
        letters = [c for c in subs if c != "."]
        if "." in subs:
            if len(letters) > x.ndim:
                raise RuntimeError(
                    f"aten::einsum: einsum(): the number of subscripts in the equation "
                    f"({len(letters)}) is more than the number of dimensions ({x.ndim}) for "
                    f"operand {k}"
                )
            ell = x.ndim - len(letters)
            n_ell = max(n_ell, ell)
            at = subs.index(".")
            # broadcast dims count from the right, as numpy's: "0" is the last of them
            names = [str(ell - 1 - i) for i in range(ell)]
            full = [*subs[:at], *names, *subs[at + 1 :]]
        else:
            if len(letters) != x.ndim:
                raise RuntimeError(
                    f"aten::einsum: einsum(): the number of subscripts in the equation "
                    f"({len(letters)}) does not match the number of dimensions ({x.ndim}) for "
                    f"operand {k} and no ellipsis was given"
                )
            full = letters
        # a letter repeated in one operand: its diagonal, first (an index, so a copy)
        while len(set(full)) != len(full):
            c = next(c for c in full if full.count(c) > 1)
            i = full.index(c)
            j = full.index(c, i + 1)
            if x.shape[i] != x.shape[j]:
                raise RuntimeError(
                    f"aten::einsum: einsum(): subscript {c} is repeated for operand {k} but the "
                    f"sizes don't match, {x.shape[j]} != {x.shape[i]}"
                )
            rest = [d for d in range(x.ndim) if d not in (i, j)]
            x = aten.permute.default(x, [i, j, *rest])
            idx = aten.arange.default(x.shape[0], dtype=_dt.int64, device=x.device)
            x = aten.index.Tensor(x, [idx, idx])
            full = [c, *(full[d] for d in rest)]
        for c, n in zip(full, x.shape, strict=True):
            if c in sizes and n != sizes[c] and n != 1 and sizes[c] != 1:
                raise RuntimeError(
                    f"aten::einsum: einsum(): subscript {c} has size {n} for operand {k} which "
                    f"does not broadcast with previously seen size {sizes[c]}"
                )
            sizes[c] = n if c not in sizes or sizes[c] == 1 else sizes[c]
        named.append((x, full))
    ell_names = [str(i) for i in reversed(range(n_ell))]
    if out is None:  # implicit: the broadcast dims, then the letters seen once, sorted
        counts: dict[str, int] = {}
        for subs in ins:
            for c in subs:
                if c != ".":
                    counts[c] = counts.get(c, 0) + 1
        out_names = ell_names + sorted(
            (c for c, m in counts.items() if m == 1), key=lambda c: (c.islower(), c)
        )
    else:
        out_names = []
        for c in out:
            if c == ".":
                out_names += ell_names
                continue
            if c in out_names:
                raise RuntimeError(
                    f"aten::einsum: einsum(): output subscript {c} appears more than once in the "
                    "output"
                )
            if not any(c in subs for subs in ins):
                raise RuntimeError(
                    f"aten::einsum: einsum(): output subscript {c} does not appear in the "
                    "equation for any input operand"
                )
            out_names.append(c)
    summed = [c for c in sizes if c not in out_names]
    order = out_names + summed
    prod: Any = None
    for x, full in named:  # each operand viewed onto all the letters, 1 where it has none
        present = [c for c in order if c in full]
        x = aten.permute.default(x, [full.index(c) for c in present])
        x = aten.reshape.default(x, [x.shape[present.index(c)] if c in full else 1 for c in order])
        prod = x if prod is None else aten.mul.Tensor(prod, x)
    if summed:
        return aten.sum.dim_IntList(prod, list(range(len(out_names), len(order))))
    return prod


def trace(self: Any) -> Any:
    if self.ndim != 2:
        raise RuntimeError(
            f"aten::trace: trace: expected a matrix, but got tensor with dim {self.ndim}"
        )
    if self.dtype is _dt.bool:
        raise NotImplementedError("aten::trace: \"trace\" not implemented for 'Bool'")
    return aten.sum.default(aten.diag.default(self))


def t(self: Any) -> Any:
    nd = self.ndim
    if nd == 2:
        return aten.transpose.int(self, 0, 1)
    if nd > 2:
        raise RuntimeError(
            f"aten::t.default: t() expects a tensor with <= 2 dimensions, but self is {nd}D"
        )
    return aten.view.default(self, list(self.shape))  # a view with the same shape, as torch


def linalg_matmul(self: Any, other: Any) -> Any:
    return aten.matmul.default(self, other)


# --- in-place forms (issue 29) ----------------------------------------------------------------


def _written_in_place(name: str, self: Any, result: Any) -> Any:
    """``result`` (of self's shape) copied into ``self``: the in-place form of a composite."""
    if list(result.shape) != list(self.shape):
        raise RuntimeError(
            f"aten::{name}: Bad in-place call: input tensor size {list(self.shape)} and output "
            f"tensor size {list(result.shape)} should match"
        )
    return aten.copy_.default(self, result)


def baddbmm_(self: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    return _written_in_place(
        "baddbmm_", self, baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    )


def addbmm_(self: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    return _written_in_place("addbmm_", self, addbmm(self, batch1, batch2, beta=beta, alpha=alpha))


def t_(self: Any) -> Any:
    """``t()`` in place: a matrix transposed, a vector or scalar left as it is (still an
    in-place op: its version moves on, as PyTorch's ``transpose_(0, 0)``)."""
    nd = self.ndim
    if nd > 2:
        raise RuntimeError(
            f"aten::t_: t_() expects a tensor with <= 2 dimensions, but self is {nd}D"
        )
    return aten.transpose_.default(self, 0, 0 if nd < 2 else 1)
