"""Composite kernels: operators written in terms of other operators.

native_functions.yaml names these under ``dispatch: CompositeImplicitAutograd``. They run for
every backend and, where the backend has no kernel of its own, for ``Autograd<B>`` too (DESIGN
§4 step 3), so autograd, batching and tracing see the operators they decompose into. They call
operators through ``tensorplug.ops.aten`` and never touch backend arrays.
"""

from __future__ import annotations

import math
from typing import Any

from . import dtypes as _dt
from .ops import ops
from .tensor import _wrap_dim

aten = ops.aten

__all__ = [
    "addbmm",
    "argsort",
    "argsort_stable",
    "baddbmm",
    "chunk",
    "clip",
    "clip_",
    "clip_tensor",
    "clip_tensor_",
    "contiguous",
    "cross_entropy",
    "dropout",
    "embedding",
    "empty_like",
    "expand_as",
    "flatten",
    "full_like",
    "index_put",
    "layer_norm",
    "linalg_matmul",
    "linear",
    "mish",
    "movedim",
    "movedim_int",
    "mse_loss",
    "narrow",
    "narrow_tensor",
    "norm",
    "norm_dim",
    "ones_like",
    "outer",
    "rand_like",
    "randn_like",
    "reshape_as",
    "special_erf",
    "special_exp2",
    "special_expit",
    "special_expm1",
    "special_log1p",
    "special_log_softmax",
    "special_logit",
    "special_logsumexp",
    "special_softmax",
    "stack",
    "std_mean",
    "std_mean_unbiased",
    "std_unbiased",
    "swapaxes",
    "t",
    "unflatten",
    "var_mean",
    "var_mean_unbiased",
    "var_unbiased",
    "view_as",
    "zero_",
    "zeros_like",
]


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
        from .array_backend._linalg import _cpp_name as cname  # ATen prints C++ type names

        raise RuntimeError(
            f"aten::{name}: Input dtypes must be the same, got: input {cname(self.dtype)}, "
            f"batch1: {cname(batch1.dtype)}, batch2: {cname(batch2.dtype)}"
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
            from .array_backend._kit import torch_name

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
        out_names = ell_names + sorted((c for c, m in counts.items() if m == 1),
                                       key=lambda c: (c.islower(), c))
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
        raise RuntimeError(f"aten::trace: trace: expected a matrix, but got tensor with dim {self.ndim}")
    if self.dtype is _dt.bool:
        raise NotImplementedError("aten::trace: \"trace\" not implemented for 'Bool'")
    return aten.sum.default(aten.diag.default(self))


def t(self: Any) -> Any:
    nd = self.ndim
    if nd == 2:
        return aten.transpose.int(self, 0, 1)
    if nd > 2:
        raise RuntimeError(f"aten::t.default: t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return aten.view.default(self, list(self.shape))  # a view with the same shape, as torch


def flatten(self: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    shape = list(self.shape)
    if self.ndim == 0:  # the dims must still be valid for a 0-d tensor: -1 or 0
        _wrap_dim(start_dim, 0, "flatten.using_ints")
        _wrap_dim(end_dim, 0, "flatten.using_ints")
        return aten.reshape.default(self, [1])
    s = _wrap_dim(start_dim, len(shape), "flatten.using_ints")
    e = _wrap_dim(end_dim, len(shape), "flatten.using_ints")
    if s > e:
        raise RuntimeError("aten::flatten.using_ints: flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return aten.reshape.default(self, shape)
    n = 1
    for d in shape[s : e + 1]:
        n *= d
    return aten.reshape.default(self, [*shape[:s], n, *shape[e + 1 :]])


def unflatten(self: Any, dim: int, sizes: Any) -> Any:
    if self.ndim == 0:  # PyTorch wraps the dim error this way
        raise RuntimeError(
            "aten::unflatten.int: unflatten got an unexpected error:\n"
            f"Dimension specified as {dim} but tensor has no dimensions"
        )
    d = _wrap_dim(dim, self.ndim, "unflatten.int")
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("aten::unflatten.int: unflatten: sizes must be non-empty")
    shape = list(self.shape)
    known = math.prod(s for s in sizes if s != -1)
    n = shape[d]
    if (known != n) if -1 not in sizes else (n != 0 if known == 0 else n % known != 0):
        raise RuntimeError(
            f"aten::unflatten.int: unflatten: Provided sizes {sizes} don't multiply up to "
            f"the size of dim {dim} ({n}) in the input tensor"
        )
    from .array_backend._shape import infer_size  # the -1, with view's messages

    try:
        sizes = list(infer_size(sizes, n))
    except RuntimeError as e:
        raise RuntimeError(f"aten::unflatten.int: unflatten got an unexpected error:\n{e}") from e
    return aten.view.default(self, [*shape[:d], *sizes, *shape[d + 1 :]])


def view_as(self: Any, other: Any) -> Any:
    return aten.view.default(self, list(other.shape))


def reshape_as(self: Any, other: Any) -> Any:
    return aten.reshape.default(self, list(other.shape))


def expand_as(self: Any, other: Any) -> Any:
    return aten.expand.default(self, list(other.shape))


def swapaxes(self: Any, axis0: int, axis1: int) -> Any:
    return aten.transpose.int(self, axis0, axis1)


def movedim(self: Any, source: Any, destination: Any) -> Any:
    """PyTorch's movedim: the moved dims go to their destinations, the others keep their order
    in the remaining places."""
    nd = self.ndim
    if len(source) != len(destination):
        raise RuntimeError(
            f"aten::movedim.intlist: movedim: Invalid source or destination dims: source "
            f"({list(source)} dims) should contain the same number of dims as destination "
            f"({list(destination)} dims)"
        )
    src = [_wrap_dim(d, nd, "movedim.intlist") for d in source]
    dst = [_wrap_dim(d, nd, "movedim.intlist") for d in destination]
    for what, given, wrapped in (("source", source, src), ("destination", destination, dst)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(
                f"aten::movedim.intlist: movedim: repeated dim in `{what}` ({list(given)})"
            )
    if nd == 0:  # the dims were checked; nothing moves
        return aten.permute.default(self, [])
    order = [-1] * nd
    for s, d in zip(src, dst, strict=True):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in set(src))
    perm = [next(rest) if o == -1 else o for o in order]
    return aten.permute.default(self, perm)


def movedim_int(self: Any, source: int, destination: int) -> Any:
    return movedim(self, [source], [destination])


def moveaxis(self: Any, source: Any, destination: Any) -> Any:
    return movedim(self, source, destination)


def moveaxis_int(self: Any, source: int, destination: int) -> Any:
    return movedim(self, [source], [destination])


def ravel(self: Any) -> Any:
    return aten.reshape.default(self, [-1])


def broadcast_to(self: Any, size: Any) -> Any:
    return aten.expand.default(self, list(size))


def broadcast_tensors(tensors: Any) -> Any:
    shape: list[int] = []
    for x in tensors:
        s = list(x.shape)
        if len(s) > len(shape):
            shape = [1] * (len(s) - len(shape)) + shape
        s = [1] * (len(shape) - len(s)) + s
        for i, (n, m) in enumerate(zip(shape, s, strict=True)):
            if n != m and n != 1 and m != 1:
                raise RuntimeError(
                    f"aten::broadcast_tensors: The size of tensor a ({n}) must match the size of "
                    f"tensor b ({m}) at non-singleton dimension {i}"
                )
            shape[i] = m if n == 1 else n
    return [aten.expand.default(x, shape) for x in tensors]


def _meshgrid(tensors: Any, indexing: str, overload: str) -> Any:
    if len(tensors) == 0:
        raise RuntimeError(f"aten::{overload}: meshgrid expects a non-empty TensorList")
    for x in tensors[1:]:
        if x.dtype is not tensors[0].dtype:
            raise RuntimeError(
                f"aten::{overload}: meshgrid expects all tensors to have the same dtype"
            )
    for x in tensors:
        if x.ndim > 1:
            raise RuntimeError(
                f"aten::{overload}: Expected 0D or 1D tensor in the tensor list "
                f"but got: {x}"
            )
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f"aten::{overload}: indexing must be one of \"xy\" or \"ij\", but "
            f"received: {indexing}"
        )
    # "xy" is "ij" with the first two inputs swapped, and so their outputs
    swap = indexing == "xy" and len(tensors) >= 2
    ts = [tensors[1], tensors[0], *tensors[2:]] if swap else list(tensors)
    shape = [x.numel() for x in ts]
    out = []
    for i, x in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(aten.expand.default(aten.view.default(x, view), shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return out


def meshgrid(tensors: Any) -> Any:
    import warnings

    warnings.warn(  # PyTorch 2.13 still warns when indexing= is left out
        "tensorplug.meshgrid: pass the indexing argument, indexing='ij' (used when it is left "
        "out) or indexing='xy'; PyTorch will require it in an upcoming release.",
        UserWarning,
        stacklevel=2,
    )
    return _meshgrid(tensors, "ij", "meshgrid")


def meshgrid_indexing(tensors: Any, *, indexing: str) -> Any:
    return _meshgrid(tensors, indexing, "meshgrid.indexing")


def narrow(self: Any, dim: int, start: int, length: int) -> Any:
    if self.ndim == 0:
        raise RuntimeError("aten::narrow: narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("aten::narrow: narrow(): length must be non-negative.")
    d = _wrap_dim(dim, self.ndim, "narrow")
    n = self.shape[d]
    if not -n <= start <= n:
        raise IndexError(
            f"aten::narrow: start out of range (expected to be in range of [{-n}, {n}], but got "
            f"{start})"
        )
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(
            f"aten::narrow: start ({start}) + length ({length}) exceeds dimension size ({n})."
        )
    return aten.slice.Tensor(self, d, start, start + length)


def narrow_tensor(self: Any, dim: int, start: Any, length: int) -> Any:
    if start.ndim != 0 or start.dtype.is_floating_point or start.dtype.is_complex:
        raise RuntimeError("aten::narrow.Tensor: start must be an 0-dim integral Tensor.")
    return narrow(self, dim, int(start.item()), length)


def split_sizes(self: Any, split_size: Any, dim: int = 0) -> Any:
    return aten.split_with_sizes.default(self, list(split_size), dim)


def chunk(self: Any, chunks: int, dim: int = 0) -> Any:
    if chunks <= 0:
        raise RuntimeError(f"aten::chunk: chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap_dim(dim, self.ndim, "chunk")
    size = self.shape[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        sizes = [0] * chunks
        return aten.split_with_sizes.default(self, sizes, d)
    return aten.split.Tensor(self, max(split_size, 1), d)


def stack(tensors: Any, dim: int = 0) -> Any:
    if len(tensors) == 0:
        raise RuntimeError("aten::stack: stack expects a non-empty TensorList")
    shape = tuple(tensors[0].shape)
    for i, x in enumerate(tensors):
        if tuple(x.shape) != shape:
            raise RuntimeError(
                f"aten::stack: stack expects each tensor to be equal size, but got {list(shape)} "
                f"at entry 0 and {list(x.shape)} at entry {i}"
            )
    d = _wrap_dim(dim, len(shape) + 1, "stack")
    return aten.cat.default([aten.unsqueeze.default(x, d) for x in tensors], d)


def _stack_check(tensors: Any, name: str) -> None:
    if len(tensors) == 0:
        raise RuntimeError(f"aten::{name}: {name} expects a non-empty TensorList")


def atleast_1d(self: Any) -> Any:
    return aten.reshape.default(self, [1]) if self.ndim == 0 else self


def atleast_2d(self: Any) -> Any:
    if self.ndim == 0:
        return aten.reshape.default(self, [1, 1])
    return aten.unsqueeze.default(self, 0) if self.ndim == 1 else self


def atleast_3d(self: Any) -> Any:
    if self.ndim == 0:
        return aten.reshape.default(self, [1, 1, 1])
    if self.ndim == 1:
        return aten.unsqueeze.default(aten.unsqueeze.default(self, 0), -1)
    return aten.unsqueeze.default(self, -1) if self.ndim == 2 else self


def atleast_1d_sequence(tensors: Any) -> Any:
    return [atleast_1d(x) for x in tensors]


def atleast_2d_sequence(tensors: Any) -> Any:
    return [atleast_2d(x) for x in tensors]


def atleast_3d_sequence(tensors: Any) -> Any:
    return [atleast_3d(x) for x in tensors]


def vstack(tensors: Any) -> Any:
    _stack_check(tensors, "vstack")
    return aten.cat.default([atleast_2d(x) for x in tensors], 0)


def hstack(tensors: Any) -> Any:
    _stack_check(tensors, "hstack")
    ts = [atleast_1d(x) for x in tensors]
    return aten.cat.default(ts, 0 if ts[0].ndim == 1 else 1)


def dstack(tensors: Any) -> Any:
    _stack_check(tensors, "dstack")
    return aten.cat.default([atleast_3d(x) for x in tensors], 2)


def column_stack(tensors: Any) -> Any:
    _stack_check(tensors, "column_stack")
    cols = [aten.reshape.default(x, [x.numel(), 1]) if x.ndim <= 1 else x for x in tensors]
    return aten.cat.default(cols, 1)


def fliplr(self: Any) -> Any:
    if self.ndim < 2:
        raise RuntimeError("aten::fliplr: Input must be >= 2-d.")
    return aten.flip.default(self, [1])


def flipud(self: Any) -> Any:
    if self.ndim < 1:
        raise RuntimeError("aten::flipud: Input must be >= 1-d.")
    return aten.flip.default(self, [0])


def diff(
    self: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None
) -> Any:
    if self.ndim == 0:
        raise RuntimeError("aten::diff: diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"aten::diff: order must be non-negative but got {n}")
    d = _wrap_dim(dim, self.ndim, "diff")
    for x in (prepend, append):
        if x is not None and x.ndim != self.ndim:
            raise RuntimeError(
                "aten::diff: diff expects prepend or append to be the same dimension as input"
            )
    parts = [x for x in (prepend, self, append) if x is not None]
    out = aten.cat.default(parts, d) if len(parts) > 1 else self
    for _ in range(n):
        m = out.shape[d]
        if m == 0:
            break
        hi = aten.slice.Tensor(out, d, 1, m)
        lo = aten.slice.Tensor(out, d, 0, m - 1)
        # bools differ where they are not equal (PyTorch's logical_xor)
        out = aten.ne.Tensor(hi, lo) if out.dtype is _dt.bool else aten.sub.Tensor(hi, lo)
    return out if n else aten.clone.default(out)


def where_condition(condition: Any) -> Any:
    """``nonzero(condition, as_tuple=True)``: one index tensor per dim (PyTorch's
    nonzero_numpy; a 0-d condition counts as 1-d)."""
    c = aten.reshape.default(condition, [1]) if condition.ndim == 0 else condition
    return aten.unbind.int(aten.nonzero.default(c), 1)


def tile(self: Any, dims: Any) -> Any:
    dims = list(dims)
    return aten.repeat.default(self, [1] * (self.ndim - len(dims)) + dims)


def _repeat_interleave_size(n: int, output_size: int | None, overload: str) -> None:
    if output_size is not None and output_size != n:
        raise RuntimeError(
            f"aten::repeat_interleave.{overload}: repeat_interleave: Invalid output_size, "
            f"expected {n} but got {output_size}"
        )


def repeat_interleave_self_int(
    self: Any, repeats: int, dim: int | None = None, *, output_size: int | None = None
) -> Any:
    """Each element ``repeats`` times along ``dim``: a new dim after it, expanded and merged
    (PyTorch's own decomposition for an int, whose gradient is a sum over the copies)."""
    if repeats < 0:
        raise RuntimeError("aten::repeat_interleave.self_int: Repeats must be non-negative")
    x = aten.reshape.default(self, [-1]) if dim is None else self
    d = 0 if dim is None else _wrap_dim(dim, x.ndim, "repeat_interleave.self_int")
    if x.ndim == 0:
        x = aten.reshape.default(x, [1])
    shape = list(x.shape)
    _repeat_interleave_size(shape[d] * repeats, output_size, "self_int")
    spread = aten.unsqueeze.default(x, d + 1)
    grown = aten.expand.default(spread, [*shape[: d + 1], repeats, *shape[d + 1 :]])
    return aten.reshape.default(grown, [*shape[:d], shape[d] * repeats, *shape[d + 1 :]])


def repeat_interleave_self_tensor(
    self: Any, repeats: Any, dim: int | None = None, *, output_size: int | None = None
) -> Any:
    x = aten.reshape.default(self, [-1]) if dim is None else self
    d = 0 if dim is None else _wrap_dim(dim, x.ndim, "repeat_interleave.self_Tensor")
    if x.ndim == 0:
        x = aten.reshape.default(x, [1])
    if repeats.ndim == 0 or (repeats.ndim == 1 and repeats.shape[0] == 1):
        repeats = aten.expand.default(aten.reshape.default(repeats, [1]), [x.shape[d]])
    elif repeats.ndim == 1 and repeats.shape[0] != x.shape[d]:
        raise RuntimeError(
            "aten::repeat_interleave.self_Tensor: repeats must have the same size as input "
            f"along dim, but got repeats.size(0) = {repeats.shape[0]} and input.size({d}) = "
            f"{x.shape[d]}"
        )
    index = aten.repeat_interleave.Tensor(repeats, output_size=output_size)
    return aten.index_select.default(x, d, index)


def var_unbiased(self: Any, unbiased: bool = True) -> Any:
    return aten.var.correction(self, None, correction=1 if unbiased else 0)


def std_unbiased(self: Any, unbiased: bool = True) -> Any:
    return aten.std.correction(self, None, correction=1 if unbiased else 0)


def _check_floating(name: str, overload: str, self: Any) -> None:
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(
            f"aten::{name}.{overload}: {name} only support floating point and complex dtypes"
        )


def _with_mean(
    name: str, stat: Any, self: Any, dim: Any, correction: Any, keepdim: bool
) -> tuple[Any, Any]:
    """``(stat(self), mean(self))`` over ``dim``: var_mean and std_mean."""
    _check_floating(name, "correction", self)
    return (
        stat(self, dim, correction=correction, keepdim=keepdim),
        aten.mean.dim(self, dim, keepdim),
    )


def var_mean(
    self: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Any, Any]:
    return _with_mean("var_mean", aten.var.correction, self, dim, correction, keepdim)


def var_mean_unbiased(self: Any, unbiased: bool = True) -> tuple[Any, Any]:
    return var_mean(self, None, correction=1 if unbiased else 0)


def std_mean(
    self: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Any, Any]:
    return _with_mean("std_mean", aten.std.correction, self, dim, correction, keepdim)


def std_mean_unbiased(self: Any, unbiased: bool = True) -> tuple[Any, Any]:
    return std_mean(self, None, correction=1 if unbiased else 0)


def norm(self: Any, p: Any = 2) -> Any:
    # torch.norm of a number p is linalg.vector_norm over every element
    return aten.linalg_vector_norm.default(self, p)


def norm_dim(self: Any, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Any:
    return aten.linalg_vector_norm.default(self, 2 if p is None else p, dim, keepdim)


def argsort(self: Any, dim: int = -1, descending: bool = False) -> Any:
    return aten.sort.default(self, dim, descending)[1]


def argsort_stable(self: Any, *, stable: bool, dim: int = -1, descending: bool = False) -> Any:
    return aten.sort.stable(self, stable=stable, dim=dim, descending=descending)[1]


# --- aliases ------------------------------------------------------------------------------
# clip is clamp under numpy's name, as in PyTorch (grad_fn ClampBackward1, clamp's messages)


def clip(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp.default(self, min, max)


def clip_tensor(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp.Tensor(self, min, max)


def clip_(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp_.default(self, min, max)


def clip_tensor_(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp_.Tensor(self, min, max)


# --- *_like factories -----------------------------------------------------------------------


def _like(self: Any, dtype: Any, device: Any) -> dict[str, Any]:
    return {"dtype": dtype or self.dtype, "device": device or self.device}


def zeros_like(self: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.zeros.default(list(self.shape), **_like(self, dtype, device))


def ones_like(self: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
              pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.ones.default(list(self.shape), **_like(self, dtype, device))


def empty_like(self: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.empty.memory_format(list(self.shape), **_like(self, dtype, device))


def full_like(self: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.full.default(list(self.shape), fill_value, **_like(self, dtype, device))


def rand_like(self: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
              pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.rand.default(list(self.shape), **_like(self, dtype, device))


def randn_like(self: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Any:
    return aten.randn.default(list(self.shape), **_like(self, dtype, device))


# --- copies ---------------------------------------------------------------------------------


def contiguous(self: Any, *, memory_format: Any = "contiguous_format") -> Any:
    data = self._data
    flags = getattr(data, "flags", None)
    if flags is not None and flags["C_CONTIGUOUS"]:
        return self
    return aten.clone.default(self)


def zero_(self: Any) -> Any:
    return aten.fill_.Scalar(self, 0)


def index_put(self: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
    return aten.index_put_.default(aten.clone.default(self), indices, values, accumulate)


# --- neural network functions ---------------------------------------------------------------

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"aten::{op}: {reduction} is not a valid value for reduction (none, mean, sum)")


def mse_loss(self: Any, target: Any, reduction: str = "mean") -> Any:
    _check_reduction("mse_loss", reduction)
    diff = aten.sub.Tensor(self, target)
    sq = aten.mul.Tensor(diff, diff)
    if reduction == "mean":
        return aten.mean.default(sq)
    if reduction == "sum":
        return aten.sum.default(sq)
    return sq


def cross_entropy(self: Any, target: Any, weight: Any = None, reduction: str = "mean",
                  ignore_index: int = -100, label_smoothing: float = 0.0) -> Any:
    _check_reduction("cross_entropy_loss", reduction)
    class_dim = 0 if self.ndim == 1 else 1
    # PyTorch's rule: a target shaped like the input holds class probabilities, any other
    # holds class indices (nll_loss checks those, with its messages)
    probabilities = tuple(target.shape) == tuple(self.shape)
    if probabilities and not target.dtype.is_floating_point:
        from .array_backend._kit import torch_name

        raise RuntimeError(
            "aten::cross_entropy_loss: Expected floating point type for target with class "
            f"probabilities, got {torch_name(target.dtype)}"
        )
    logp = aten.log_softmax.int(self, class_dim)
    if probabilities:
        if label_smoothing > 0:
            n = self.shape[class_dim]
            target = aten.add.Scalar(aten.mul.Scalar(target, 1 - label_smoothing), label_smoothing / n)
        w = logp if weight is None else aten.mul.Tensor(logp, _class_shaped(weight, self.ndim, class_dim))
        loss = aten.neg.default(aten.sum.dim_IntList(aten.mul.Tensor(w, target), [class_dim]))
        if reduction == "mean":
            n = loss.numel() if loss.ndim else 1
            return aten.div.Scalar(aten.sum.default(loss), n)
        return aten.sum.default(loss) if reduction == "sum" else loss
    nll = aten.nll_loss.default(logp, target, weight, reduction, ignore_index)
    if label_smoothing <= 0:
        return nll
    # smoothing term: mean over classes of -log p, weighted like torch
    n = self.shape[class_dim]
    w = logp if weight is None else aten.mul.Tensor(logp, _class_shaped(weight, self.ndim, class_dim))
    smooth = aten.neg.default(aten.sum.dim_IntList(w, [class_dim]))
    keep = aten.ne.Scalar(target, ignore_index)
    smooth = aten.where.ScalarOther(keep, smooth, 0.0)
    if reduction == "mean":
        if weight is None:
            denom: Any = aten.sum.default(keep)
        else:
            safe = aten.where.ScalarOther(keep, target, 0)
            denom = aten.sum.default(aten.where.ScalarOther(keep, aten.index.Tensor(weight, [safe]), 0.0))
        smooth = aten.div.Tensor(aten.sum.default(smooth), denom)
    elif reduction == "sum":
        smooth = aten.sum.default(smooth)
    return aten.add.Tensor(
        aten.mul.Scalar(nll, 1 - label_smoothing), aten.mul.Scalar(smooth, label_smoothing / n)
    )


def _class_shaped(weight: Any, ndim: int, class_dim: int) -> Any:
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return aten.reshape.default(weight, shape)


def dropout(input: Any, p: float, train: bool) -> Any:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"aten::dropout: dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0.0:
        return input
    floating = input.dtype.is_floating_point or input.dtype.is_complex
    if p == 1.0:
        return aten.mul.Scalar(input, 0.0) if floating else aten.zeros_like.default(input)
    if not floating:
        # PyTorch scales the kept values in place: a float result into an integer tensor
        from .array_backend._kit import torch_name

        raise RuntimeError(
            f"aten::dropout: result type Float can't be cast to the desired output type "
            f"{torch_name(input.dtype)}; dropout needs a floating point input"
        )
    keep = aten.ge.Scalar(aten.rand_like.default(input), p)
    return aten.mul.Scalar(aten.where.ScalarOther(keep, input, 0.0), 1.0 / (1.0 - p))


def embedding(weight: Any, indices: Any, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    if weight.ndim != 2:
        raise RuntimeError("aten::embedding: 'weight' must be 2-D")
    if indices.dtype.is_floating_point or indices.dtype.is_complex:
        raise RuntimeError(
            f"aten::embedding: Expected tensor for argument #1 'indices' to have one of the following "
            f"scalar types: Long, Int; but got {indices.dtype} instead"
        )
    # index.Tensor would count negative indices from the end; PyTorch's lookup refuses them
    if indices.numel() and aten.min.default(indices).item() < 0:
        raise IndexError("aten::embedding: index out of range in self")
    rows = aten.index.Tensor(weight, [indices])
    # PyTorch's embedding_backward skips the rows of padding_idx and, with scale_grad_by_freq,
    # divides each row's gradient by how often its index occurs in indices. As compositions
    # with the same values: where(keep, rows, rows.detach()), and d + (rows - d) / count with
    # d = rows.detach(), exact since rows - d is 0 (taken on finite values only)
    if scale_grad_by_freq:
        flat = aten.reshape.default(indices, [-1])
        counts = aten.scatter_add.default(
            aten.zeros.default([weight.shape[0]], dtype=weight.dtype, device=weight.device),
            0,
            flat,
            aten.ones_like.default(flat, dtype=weight.dtype),
        )
        inverse = aten.unsqueeze.default(
            aten.pow.Tensor_Scalar(aten.index.Tensor(counts, [indices]), -1), -1
        )
        finite = aten.lt.Scalar(aten.abs.default(rows), math.inf)  # no inf - inf below
        safe = aten.where.ScalarOther(finite, rows, 0.0)
        fixed = aten.detach.default(safe)
        scaled = aten.add.Tensor(fixed, aten.mul.Tensor(aten.sub.Tensor(safe, fixed), inverse))
        rows = aten.where.self(finite, scaled, rows)
    if padding_idx >= 0:
        keep = aten.unsqueeze.default(aten.ne.Scalar(indices, padding_idx), -1)
        rows = aten.where.self(keep, rows, aten.detach.default(rows))
    return rows


def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-05, cudnn_enable: bool = True) -> Any:
    n = len(normalized_shape)
    if n == 0:
        raise RuntimeError(
            "aten::layer_norm: Expected normalized_shape to be at least 1-dimensional, i.e., "
            "containing at least one element, but got normalized_shape = []"
        )
    if tuple(input.shape[input.ndim - n :]) != tuple(normalized_shape):
        raise RuntimeError(
            f"aten::layer_norm: Given normalized_shape={list(normalized_shape)}, expected input "
            f"with shape [*, {', '.join(map(str, normalized_shape))}], but got input of size "
            f"{list(input.shape)}"
        )
    dims = list(range(input.ndim - n, input.ndim))
    # half precision is normalized in float32 and rounded once at the end, as PyTorch's kernel
    # does: step by step in bfloat16 the result was several ulps off
    result_dtype = input.dtype
    for t in (weight, bias):
        if t is not None:
            result_dtype = _dt.promote_types(result_dtype, t.dtype)
    x = input
    if input.dtype in (_dt.float16, _dt.bfloat16):
        x = aten._to_copy.default(input, dtype=_dt.float32)
    mean = aten.mean.dim(x, dims, True)
    centered = aten.sub.Tensor(x, mean)
    var = aten.mean.dim(aten.mul.Tensor(centered, centered), dims, True)
    out = aten.mul.Tensor(centered, aten.rsqrt.default(aten.add.Scalar(var, eps)))
    if weight is not None:
        out = aten.mul.Tensor(out, weight)
    if bias is not None:
        out = aten.add.Tensor(out, bias)
    if out.dtype != result_dtype:
        out = aten._to_copy.default(out, dtype=result_dtype)
    return out


# --- tensorplug.linalg, tensorplug.special, tensorplug.nn.functional ---------------------------
# (Note [Python modules] in _api.py.) The linalg and special ones are PyTorch's aliases of
# standard ops, CompositeImplicitAutograd there too.


def linalg_matmul(self: Any, other: Any) -> Any:
    return aten.matmul.default(self, other)


def special_expm1(self: Any) -> Any:
    return aten.expm1.default(self)


def special_exp2(self: Any) -> Any:
    return aten.exp2.default(self)


def special_log1p(self: Any) -> Any:
    return aten.log1p.default(self)


def special_erf(self: Any) -> Any:
    return aten.erf.default(self)


def special_expit(self: Any) -> Any:
    return aten.sigmoid.default(self)


def special_logit(self: Any, eps: float | None = None) -> Any:
    return aten.logit.default(self, eps)


def special_logsumexp(self: Any, dim: Any, keepdim: bool = False) -> Any:
    return aten.logsumexp.default(self, dim, keepdim)


def special_softmax(self: Any, dim: int, dtype: Any = None) -> Any:
    return aten.softmax.int(self, dim, dtype)


def special_log_softmax(self: Any, dim: int, *, dtype: Any = None) -> Any:
    return aten.log_softmax.int(self, dim, dtype)


def mish(self: Any) -> Any:
    """``x * tanh(softplus(x))``, with softplus written ``max(x, 0) + log1p(exp(-|x|))`` so
    that neither the value nor its gradient overflows for large ``|x|``."""
    softplus = aten.add.Tensor(
        aten.relu.default(self), aten.log1p.default(aten.exp.default(aten.neg.default(
            aten.abs.default(self))))
    )
    return aten.mul.Tensor(self, aten.tanh.default(softplus))
