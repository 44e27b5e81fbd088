"""The differential bad-input cases (issue 32, item 6): one expression per case, evaluated with
``T`` bound to ``torch`` (tools/gen_bad_inputs.py, which records the outcomes in
data/bad_inputs.json) or to ``tensorplug`` (test_bad_inputs.py, which compares). ``F`` is
``T.nn.functional``; ``x`` a float32 ``[[0., 1., 2.], [3., 4., 5.]]``, ``v`` a float32
``[1., -2., 3.]``, ``i`` an int64 ``[0, 1, 2]``, ``b`` a bool ``[True, False, True]``, ``c``
a complex64 ``[1+1j, 2-1j]``, ``s`` a float32 scalar tensor ``2.5``. An outcome is the exception
type (its nearest builtin class) or the result's dtype, shape and values.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CASES", "env", "outcome"]


def env(T: Any) -> dict[str, Any]:
    return {
        "T": T,
        "F": T.nn.functional,
        "x": T.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]),
        "v": T.tensor([1.0, -2.0, 3.0]),
        "i": T.tensor([0, 1, 2]),
        "b": T.tensor([True, False, True]),
        "c": T.tensor([1 + 1j, 2 - 1j], dtype=T.complex64),
        "s": T.tensor(2.5),
    }


_BUILTIN = (
    NotImplementedError, OverflowError, ZeroDivisionError, IndexError, KeyError, TypeError,
    ValueError, RecursionError, MemoryError, AttributeError, RuntimeError, Exception,
)  # fmt: skip


def outcome(T: Any, expr: str) -> dict[str, Any]:
    """The outcome of ``expr``: ``{"raises": "RuntimeError"}`` or ``{"dtype", "shape",
    "values"}`` (a tuple result: the first element's)."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = eval(expr, env(T))  # noqa: S307 - the cases are this file's own
    except BaseException as e:  # noqa: B036 - every failure is an outcome
        for cls in _BUILTIN:
            if isinstance(e, cls):
                return {"raises": cls.__name__}
        return {"raises": type(e).__name__}
    if isinstance(r, tuple | list) and r and hasattr(r[0], "dtype"):
        r = r[0]
    if hasattr(r, "dtype") and hasattr(r, "shape"):
        values = r.detach().reshape(-1)[:16].tolist() if r.numel() else []
        if r.dtype.is_complex:
            values = [[z.real, z.imag] for z in values]
        return {"dtype": str(r.dtype).split(".")[-1], "shape": list(r.shape), "values": values}
    if isinstance(r, bool | int | float):
        return {"value": r}
    return {"type": type(r).__name__}


_UNARY = ["abs", "neg", "exp", "log", "sqrt", "sin", "tanh", "sigmoid", "floor", "ceil",
          "round", "trunc", "sign", "reciprocal", "rsqrt", "erf", "log1p", "expm1", "frac",
          "relu"]  # fmt: skip
_BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmod", "remainder",
           "atan2", "eq", "lt", "ge", "logical_and", "bitwise_and", "bitwise_or", "hypot"]  # fmt: skip
_REDUCE = ["sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "std", "var",
           "logsumexp", "cumsum", "softmax", "all", "any"]  # fmt: skip


def _cases() -> list[str]:
    cases = [
        # --- factories and conversions
        "T.linspace(0, 1, 2**63)", "T.linspace(0, 1, -1)", "T.arange(0, 10, 0)",
        "T.arange(0, float('inf'))", "T.arange(10, 0, 1)", "T.zeros(-1)", "T.zeros(2**70)",
        "T.ones(2, 2**62)", "T.empty(2**62, 2**62)", "T.full((2,), 1.5, dtype=T.int64)",
        "T.tensor([300, -1], dtype=T.uint8)", "T.tensor([2**63])", "T.tensor([1j], dtype=T.float32)",
        "T.tensor([1, 'a'])", "T.tensor([[1, 2], [3]])", "T.tensor(float('nan'), dtype=T.int64)",
        "T.tensor([float('inf')]).to(T.int32)", "T.tensor([float('nan')]).long()",
        "T.zeros(2, dtype=float)", "T.zeros(2, dtype=int)", "T.zeros(2, dtype=bool)",
        "x.to(float)", "x.to(int)", "x.view(T.int32)", "x.view(T.int64)", "x.view(T.float16)",
        "T.eye(-1)", "T.eye(2, -3)", "T.randperm(-1)", "T.randint(5, 2, (3,))",
        "T.tensor([1.5]).item()", "x.item()", "T.tensor([]).item()", "int(x)", "float(v)",
        "bool(v)", "T.tensor([1, 2]) @ T.tensor([1.0, 2.0])",
        # --- dims and shapes
        "x.sum(dim=2)", "x.sum(dim=-3)", "x.sum(dim=2**70)", "x.transpose(0, 2)",
        "x.reshape(4, 2)", "x.reshape(-1, -1)", "x.view(4)", "x.view(-1, 5)", "x.expand(3, 2)",
        "x.expand(2, -1, 3)", "x.permute(0, 0)", "x.permute(0)", "x.squeeze(5)",
        "x.unsqueeze(3)", "x.unsqueeze(-4)", "x.flatten(1, 0)", "x.narrow(1, 2, 5)",
        "x.narrow(0, -3, 1)", "x.select(0, 2)", "x.select(2, 0)", "x[2]", "x[:, 3]",
        "x[0, 0, 0]", "x[i]", "x[b]", "v[b]", "v[T.tensor([True, False])]", "v[1.5]",
        "x.split(0)", "x.split(-1)", "x.split(2**64 + 1)", "x.chunk(0)", "x.chunk(-1)",
        "T.chunk(s, 2)", "x.chunk(2**64 + 1)", "x.roll(2**64 + 1)", "x.roll(1, 5)",
        "x.roll((1, 2), (0,))", "T.cat([x, v])", "T.cat([])", "T.cat([x, x], dim=3)",
        "T.stack([x, v])", "T.stack([])", "x.repeat(2)", "x.repeat(-1, 1)", "x.flip(3)",
        "x.flip(0, 0)", "x.tril(2**70)", "T.diag(T.zeros(2, 2, 2))", "x.t().t().t()",
        "T.zeros(2, 2, 2).t()", "x.movedim(0, 5)", "x.unflatten(1, (2, 2))",
        "x.index_select(0, T.tensor([2]))", "x.index_select(0, T.tensor([0.0]))",
        "x.gather(1, T.tensor([[0], [1]], dtype=T.int32))", "x.gather(1, T.tensor([[3], [0]]))",
        "x.gather(1, T.tensor([[0.0]]))", "x.gather(3, T.tensor([[0]]))",
        "x.scatter(1, T.tensor([[5]]), 1.0)", "T.take(v, T.tensor([5]))",
        "v.masked_fill(T.tensor([1, 0, 1]), 0.0)", "v.masked_fill(b, T.tensor([1.0, 2.0]))",
        "T.where(b, 1.0, 0)", "T.where(b, v, 0)", "T.where(i, v, v)", "T.where(b, v, c)",
        "x.topk(4)", "x.topk(-1)", "x.kthvalue(0)", "x.kthvalue(4)", "x.sort(dim=3)",
        "T.searchsorted(v, 1.0)", "T.bucketize(v, T.tensor([[1.0]]))", "T.nonzero(s)",
        # --- pointwise edge cases
        "T.sign(T.tensor(float('nan')))", "T.sign(T.tensor([float('nan'), -0.0]))",
        "T.sgn(c)", "T.lt(c, c)", "T.ge(c, c)", "T.gt(c, 1)", "T.le(c, c)", "T.maximum(c, c)",
        "T.clamp(c, 0, 1)", "T.floor(c)", "T.remainder(c, c)", "T.atan2(c, c)",
        "T.bitwise_and(i, 3)", "T.bitwise_and(v, 3)", "T.bitwise_and(b, True)",
        "T.bitwise_not(v)", "T.bitwise_xor(i, 1.5)", "i << -1", "i >> 1", "i << 1.5",
        "T.div(i, 0)", "T.div(i, 0, rounding_mode='floor')", "T.floor_divide(i, 0)",
        "T.remainder(i, 0)", "T.fmod(i, 0)", "T.div(v, v, rounding_mode='bogus')",
        "T.pow(i, -1)", "T.pow(2, i)", "T.pow(i, -1.5)", "T.add(v, v, alpha=1.5)",
        "T.add(i, i, alpha=1.5)", "T.add(b, b, alpha=2)", "T.sub(b, b)", "-b", "T.neg(b)",
        "T.abs(b)", "T.lerp(v, v, i)", "T.clamp(v, min=T.tensor([1.0, 2.0]))", "T.clamp(v)",
        "T.clamp(i, 0.5, 1.5)", "T.round(v, decimals=2**70)", "T.isnan(i)", "T.nan_to_num(c)",
        "T.logical_not(c)", "T.exp(b)", "T.sqrt(i)", "T.sigmoid(i)", "T.erfinv(i)",
        "T.polygamma(-1, v)", "T.mvlgamma(v, 0)", "T.heaviside(v, i)", "T.copysign(i, v)",
        "T.hypot(i, i)", "T.xlogy(i, i)", "T.ldexp(v, v)", "T.fill(v, c[0])",
        "T.zeros(2, dtype=T.int64).fill_(1.5)", "T.zeros(2, dtype=T.int64).fill_(float('nan'))",
        "T.zeros(2, dtype=T.uint8).fill_(300)", "T.zeros(2, dtype=T.uint8).fill_(-1)",
        "T.zeros(2).add_(c)", "T.zeros(2, dtype=T.int64).add_(1.5)", "i.mul_(v)",
        "i.div_(2)", "b.add_(1)", "x.expand(2, 2, 3).add_(1)", "v.expand(2, 3).fill_(0)",
        "v.expand(2, 3).zero_()", "v.expand(2, 3).clone()",
        # --- overlapping in-place writes
        "T.arange(6.0)[1:].add_(T.arange(6.0)[:5])", "(lambda y: y[1:].add_(y[:5]))(T.arange(6.0))",
        "(lambda y: y[1:].copy_(y[:5]))(T.arange(6.0))", "(lambda y: y.add_(y))(T.arange(6.0))",
        "(lambda y: T.add(y[:5], 1, out=y[1:]))(T.arange(6.0))",
        "(lambda y: T.exp(y, out=y))(T.arange(3.0))", "(lambda y: y.mul_(y.flip(0)))(T.arange(4.0))",
        # --- reductions and norms
        "T.norm(x, p='fro', dim=1)", "T.norm(x, p='nuc')", "T.norm(x, p='bogus')",
        "T.norm(i)", "T.linalg.vector_norm(i)", "T.linalg.vector_norm(x, ord='fro')",
        "T.linalg.matrix_norm(v)", "T.mean(i)", "T.var(i)", "T.std(x, correction=5)",
        "T.sum(x, dtype=T.int32)", "T.prod(b)", "T.cumsum(x, dim=2)", "T.softmax(x, 2)",
        "T.softmax(i, 0)", "T.log_softmax(i, 0)", "T.logsumexp(i, 0)", "T.argmax(T.zeros(0))",
        "T.max(T.zeros(0))", "T.amax(T.zeros(0, 3), 0)", "T.amax(T.zeros(0, 3), 1)",
        "T.median(T.zeros(0))", "T.mode(x, 3)", "T.aminmax(T.zeros(0))", "T.unique(c)",
        "T.count_nonzero(x, 3)", "T.histc(i)", "T.bincount(v)", "T.bincount(T.tensor([-1]))",
        # --- linalg
        "T.mm(x, x)", "T.mm(x, i.reshape(3, 1))", "T.matmul(v, T.zeros(4))", "T.matmul(s, s)",
        "T.bmm(x, x)", "T.dot(v, i)", "T.dot(v, T.zeros(4))", "T.outer(x, v)",
        "T.linalg.inv(x)", "T.linalg.inv(T.zeros(2, 2))", "T.linalg.inv(T.eye(2, dtype=T.int64))",
        "T.linalg.det(x)", "T.linalg.cholesky(-T.eye(2))", "T.linalg.solve(T.zeros(2, 2), T.ones(2))",
        "T.linalg.svd(i.reshape(3, 1).float()).S", "T.linalg.eigh(x)", "T.linalg.qr(v)",
        "T.trace(v)", "T.kron(x, i)", "T.cross(v, v, dim=5)", "T.linalg.cross(x, x)",
        "T.einsum('ij,jk', x, x)", "T.einsum('i', x)", "T.tensordot(x, x, 5)",
        # --- nn.functional
        "F.cross_entropy(x, T.tensor([0, 1]), label_smoothing=2.0)",
        "F.cross_entropy(x, T.tensor([0, 1]), label_smoothing=-0.1)",
        "F.cross_entropy(x, T.tensor([0, 3]))", "F.cross_entropy(x, T.tensor([0.0, 1.0]))",
        "F.cross_entropy(x, T.tensor([0, 1]), reduction='bogus')",
        "F.nll_loss(x, T.tensor([0, 5]))", "F.dropout(x, p=1.5)", "F.dropout(x, p=-0.1)",
        "F.dropout(x, p=1.0)", "F.dropout1d(x, p=2.0)", "F.alpha_dropout(x, p=2.0)",
        "F.softmax(x, dim=2)", "F.linear(x, T.zeros(4, 4))", "F.embedding(i, x)",
        "F.embedding(T.tensor([5]), x)", "F.embedding(v, x)", "F.one_hot(i, 2)",
        "F.one_hot(v)", "F.one_hot(T.tensor([-1]))", "F.mse_loss(x, v)",
        "F.binary_cross_entropy(T.tensor([2.0]), T.tensor([1.0]))",
        "F.layer_norm(x, (4,))", "F.group_norm(x.reshape(1, 2, 3), 4)",
        "F.conv1d(x, T.zeros(1, 1, 5))", "F.conv2d(x, T.zeros(1, 1, 1, 1))",
        "F.max_pool1d(x.unsqueeze(0), 0)", "F.avg_pool1d(x.unsqueeze(0), 5)",
        "F.pad(x, (1,))", "F.pad(x, (-5, 0))", "F.pad(x, (1, 1), mode='bogus')",
        "F.interpolate(x.unsqueeze(0), size=-1)", "F.leaky_relu(x, -1)", "F.elu(i)",
        "F.gelu(x, approximate='bogus')", "F.softplus(x, beta=0)", "F.hardtanh(x, 2, 1)",
        "F.normalize(x, p=0)", "F.cosine_similarity(x, v, dim=3)", "F.glu(v)",
        "F.relu(b)", "F.silu(i)", "F.log_softmax(x, 3)", "F.kl_div(x, x, reduction='bogus')",
        "F.smooth_l1_loss(x, x, beta=-1)", "F.huber_loss(x, x, delta=0)",
        # --- autograd
        "(lambda a: (lambda y: (y.backward(), y.backward()))((a * 2).sum()))(T.ones(2, requires_grad=True))",
        "(lambda a: (lambda y: (y.backward(), y.backward()))((a + 2).sum()))(T.ones(2, requires_grad=True))",
        "(lambda a: (lambda y: (y.backward(), y.backward()))(a.sum()))(T.ones(2, requires_grad=True))",
        "T.ones(2, requires_grad=True).backward()", "T.ones(2).backward()",
        "T.ones(1, dtype=T.int64, requires_grad=True)", "T.tensor([1], requires_grad=True)",
        "T.ones(2, requires_grad=True).add_(1)", "T.autograd.grad(T.ones(1).sum(), [T.ones(1)])",
        "(lambda a: T.autograd.grad(a.sum(), [T.ones(1, requires_grad=True)]))(T.ones(1, requires_grad=True))",
        "T.exp(T.ones(2, requires_grad=True), out=T.empty(2))",
        "x.requires_grad_().numpy()", "(lambda a: (a * 2).numpy())(T.ones(1, requires_grad=True))",
        # --- Python values
        "T.tensor((lambda l: (l.append(l), l)[1])([]))", "T.zeros((2, 'a'))", "T.zeros(2.5)",
        "T.zeros((2, None))", "T.ones(2, 3, dtype='float32')", "T.tensor([1], dtype='float')",
        "x.sum(dim='a')", "x.sum(dim=1.0)", "x.sum(dim=(0, 0))", "x[None, ..., None, ...]",
        "x[..., ...]", "x['a']", "v[T.tensor([[0, 1]])]", "v[T.tensor(1.0)]",
        "v[[True, False, True]]", "x.reshape((2, 3.0))", "x.expand(2**64)",
        "T.zeros(2) + 'a'", "T.zeros(2) + None", "T.zeros(2) == None", "T.zeros(2) + 2**64",
        "T.zeros(2, dtype=T.int64) + 2**63", "T.zeros(2, dtype=T.int32) + 2**40",
        "T.full((2,), 2**63)", "T.full((2,), 2**40, dtype=T.int32)",
        "T.tensor([1, 2], dtype=T.int8) * 200", "T.zeros(2, dtype=T.int8).fill_(200)",
        "T.tensor([-1], dtype=T.uint8)", "T.tensor([256])", "T.tensor([256]).to(T.uint8)",
        "T.tensor([1e40]).to(T.float16)", "T.tensor(1e40, dtype=T.float16)",
        "T.tensor([1e40], dtype=T.float32)",
    ]
    for op in _UNARY:
        cases += [f"T.{op}(b)", f"T.{op}(c)", f"T.{op}(i)", f"T.{op}(s)"]
    for op in _BINARY:
        cases += [f"T.{op}(v, T.zeros(4))", f"T.{op}(b, b)", f"T.{op}(v, c)", f"T.{op}(i, 2.5)"]
    for op in _REDUCE:
        cases += [f"T.{op}(x, 2)", f"T.{op}(b, 0)", f"T.{op}(c, 0)", f"T.{op}(x, -3)"]
    return cases


CASES: list[str] = list(dict.fromkeys(_cases()))
