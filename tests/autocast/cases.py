"""One call per entry of the policy table (tensorplug_autocast.policy.POLICIES), written against a
module ``m`` that is ``tensorplug`` or ``torch``, so the same call checks tensorplug's dtype
outcome against the table and against PyTorch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tensorplug_autocast.policy import FP32, LOWER, Policy

# mk(shape, low=0.1, high=0.9) -> a floating tensor of the case's input dtype on the device;
# ints(values) -> an int64 tensor on the device
Make = Callable[..., Any]


@dataclass(frozen=True)
class Case:
    op: str  # the table's key
    call: Callable[[Any, Make, Callable[[list[int]], Any]], Any]
    # what the op gives where its own entry is a fallthrough but what it decomposes into is
    # listed: (on CPU, on other device types); None: its natural dtype
    via: tuple[Policy | None, Policy | None] = (None, None)


def F(m: Any) -> Any:
    return m.nn.functional


def _antialiased(m: Any, name: str, x: Any) -> Any:
    """``name`` (an antialiased upsampling) of ``x``. PyTorch's CPU kernels of these take no
    float16 or bfloat16 (tensorplug's do), and no CPU list names them, so a CPU region leaves
    the call alone: for torch on CPU the half precision call is run in float32 and cast back,
    which is the dtype PyTorch's call would give had it the kernel."""
    op = getattr(m.ops.aten, name).default
    if m.__name__ == "torch" and x.device.type == "cpu" and x.dtype != m.float32:
        return op(x.float(), [2, 2], False).to(x.dtype)
    return op(x, [2, 2], False)


def _vector_norm(m: Any) -> Any:
    return m.linalg.vector_norm


CASES: list[Case] = [
    Case("mm", lambda m, mk, ints: m.mm(mk([3, 4]), mk([4, 5]))),
    Case("bmm", lambda m, mk, ints: m.bmm(mk([2, 3, 4]), mk([2, 4, 5]))),
    Case("matmul", lambda m, mk, ints: m.matmul(mk([3, 4]), mk([4]))),
    Case("addmm", lambda m, mk, ints: m.addmm(mk([5]), mk([3, 4]), mk([4, 5]))),
    Case("baddbmm", lambda m, mk, ints: m.baddbmm(mk([2, 3, 5]), mk([2, 3, 4]), mk([2, 4, 5]))),
    Case("addbmm", lambda m, mk, ints: m.addbmm(mk([3, 5]), mk([2, 3, 4]), mk([2, 4, 5]))),
    Case("linear", lambda m, mk, ints: F(m).linear(mk([3, 4]), mk([5, 4]), mk([5]))),
    Case("einsum", lambda m, mk, ints: m.einsum("ij,jk->ik", mk([3, 4]), mk([4, 5]))),
    Case(
        "scaled_dot_product_attention",
        lambda m, mk, ints: F(m).scaled_dot_product_attention(
            mk([2, 3, 4]), mk([2, 5, 4]), mk([2, 5, 4])
        ),
    ),
    *(
        Case(name, lambda m, mk, ints, name=name: getattr(m, name)(mk([3])))
        for name in (
            "acos",
            "asin",
            "cosh",
            "exp",
            "expm1",
            "log",
            "log10",
            "log2",
            "log1p",
            "reciprocal",
            "rsqrt",
            "sinh",
            "tan",
        )
    ),  # fmt: skip
    Case("pow.Tensor_Scalar", lambda m, mk, ints: m.pow(mk([3]), 2.0)),
    Case("pow.Tensor_Tensor", lambda m, mk, ints: m.pow(mk([3]), mk([3]))),
    Case("pow.Scalar", lambda m, mk, ints: m.pow(2.0, mk([3]))),
    Case("layer_norm", lambda m, mk, ints: F(m).layer_norm(mk([2, 4]), [4], mk([4]), mk([4]))),
    Case("logsumexp", lambda m, mk, ints: m.logsumexp(mk([2, 3]), 1)),
    Case("prod", lambda m, mk, ints: m.prod(mk([3]))),
    Case("prod.dim_int", lambda m, mk, ints: m.prod(mk([2, 3]), 1)),
    Case("trace", lambda m, mk, ints: m.trace(mk([3, 3]))),
    Case("mish", lambda m, mk, ints: F(m).mish(mk([3]))),
    Case("mse_loss", lambda m, mk, ints: F(m).mse_loss(mk([3]), mk([3]))),
    Case("nll_loss", lambda m, mk, ints: F(m).nll_loss(mk([3, 4]), ints([0, 1, 3]))),
    Case(
        "cross_entropy_loss",
        lambda m, mk, ints: F(m).cross_entropy(mk([3, 4]), ints([0, 1, 3])),
        via=(None, FP32),  # CUDA lists its log_softmax and nll_loss
    ),
    Case("binary_cross_entropy", lambda m, mk, ints: F(m).binary_cross_entropy(mk([3]), mk([3]))),
    Case("l1_loss", lambda m, mk, ints: F(m).l1_loss(mk([3]), mk([3]))),
    Case("smooth_l1_loss", lambda m, mk, ints: F(m).smooth_l1_loss(mk([3]), mk([3]))),
    Case("huber_loss", lambda m, mk, ints: F(m).huber_loss(mk([3]), mk([3]))),
    Case("kl_div", lambda m, mk, ints: F(m).kl_div(mk([2, 3]), mk([2, 3]), reduction="batchmean")),
    Case(
        "binary_cross_entropy_with_logits",
        lambda m, mk, ints: F(m).binary_cross_entropy_with_logits(mk([3]), mk([3])),
    ),
    Case("softplus", lambda m, mk, ints: F(m).softplus(mk([3]))),
    Case("cosine_similarity", lambda m, mk, ints: F(m).cosine_similarity(mk([2, 3]), mk([2, 3]))),
    # --- resampling
    *(
        Case(
            name,
            lambda m, mk, ints, name=name, n=n: getattr(m.ops.aten, name).default(
                mk([1, 2] + [3] * n), [4] * n
            ),
        )
        for name, n in (
            ("upsample_nearest1d", 1),
            ("_upsample_nearest_exact1d", 1),
            ("upsample_nearest2d", 2),
            ("_upsample_nearest_exact2d", 2),
            ("upsample_nearest3d", 3),
            ("_upsample_nearest_exact3d", 3),
        )
    ),
    *(
        Case(
            name,
            lambda m, mk, ints, name=name, n=n: getattr(m.ops.aten, name).default(
                mk([1, 2] + [3] * n), [4] * n, False
            ),
        )
        for name, n in (
            ("upsample_linear1d", 1),
            ("upsample_bilinear2d", 2),
            ("upsample_trilinear3d", 3),
            ("upsample_bicubic2d", 2),
        )
    ),
    *(
        Case(name, lambda m, mk, ints, name=name: _antialiased(m, name, mk([1, 2, 3, 3])))
        for name in ("_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa")
    ),
    Case(
        "grid_sampler",
        lambda m, mk, ints: m.grid_sampler(mk([1, 2, 3, 3]), mk([1, 2, 2, 2]), 0, 0, False),
    ),
    Case(
        "grid_sampler_2d",
        lambda m, mk, ints: m.grid_sampler_2d(mk([1, 2, 3, 3]), mk([1, 2, 2, 2]), 0, 0, False),
    ),
    Case(
        "grid_sampler_3d",
        lambda m, mk, ints: m.grid_sampler_3d(
            mk([1, 1, 2, 3, 3]), mk([1, 1, 2, 2, 3]), 0, 0, False
        ),
    ),
    Case("sum", lambda m, mk, ints: m.sum(mk([3]))),
    Case("sum.dim_IntList", lambda m, mk, ints: m.sum(mk([2, 3]), 1)),
    Case("softmax.int", lambda m, mk, ints: m.softmax(mk([2, 3]), 1)),
    Case("log_softmax.int", lambda m, mk, ints: m.log_softmax(mk([2, 3]), 1)),
    Case("cumsum", lambda m, mk, ints: m.cumsum(mk([3]), 0)),
    Case("cumprod", lambda m, mk, ints: m.cumprod(mk([3]), 0)),
    Case("linalg_vector_norm", lambda m, mk, ints: _vector_norm(m)(mk([3]))),
    Case("norm.Scalar", lambda m, mk, ints: m.ops.aten.norm.Scalar(mk([3]))),
    Case(
        "norm.ScalarOpt_dim", lambda m, mk, ints: m.ops.aten.norm.ScalarOpt_dim(mk([2, 3]), 2, [1])
    ),
    Case("cat", lambda m, mk, ints: m.cat([mk([2]), mk([3])])),
    Case("stack", lambda m, mk, ints: m.stack([mk([2]), mk([2])])),
    Case("addcdiv", lambda m, mk, ints: m.addcdiv(mk([3]), mk([3]), mk([3]))),
    Case("addcmul", lambda m, mk, ints: m.addcmul(mk([3]), mk([3]), mk([3]))),
    Case("atan2", lambda m, mk, ints: m.atan2(mk([3]), mk([3]))),
    Case("dot", lambda m, mk, ints: m.dot(mk([3]), mk([3]))),
    Case("index_put", lambda m, mk, ints: m.index_put(mk([3]), (ints([0, 2]),), mk([2]))),
    Case("scatter_add", lambda m, mk, ints: m.scatter_add(mk([3]), 0, ints([0, 1, 2]), mk([3]))),
    Case(
        "tensordot",
        lambda m, mk, ints: m.ops.aten.tensordot.default(mk([2, 3]), mk([3, 4]), [1], [0]),
        via=(LOWER, None),  # it runs mm
    ),
    Case(
        "tensordot.int",
        lambda m, mk, ints: m.tensordot(mk([2, 3]), mk([3, 4]), dims=1),
        via=(LOWER, None),
    ),
]

# operators outside every list keep their natural dtype (the Autocast keys fall through)
UNLISTED: list[Case] = [
    Case("add.Tensor", lambda m, mk, ints: m.add(mk([3]), mk([3]))),
    Case("relu", lambda m, mk, ints: m.relu(mk([3]))),
    Case("mean", lambda m, mk, ints: m.mean(mk([3]))),
    Case("tanh", lambda m, mk, ints: m.tanh(mk([3]))),
    Case("max", lambda m, mk, ints: m.max(mk([3]))),
]


def makers(m: Any, dtype: Any, device: str, seed: int = 0) -> tuple[Make, Callable[..., Any]]:
    """``mk`` and ``ints`` of a case, for module ``m`` (tensorplug or torch)."""
    rng = np.random.default_rng(seed)

    def mk(shape: list[int], low: float = 0.1, high: float = 0.9) -> Any:
        data = rng.uniform(low, high, size=shape).astype(np.float32)
        return m.tensor(data, device=device).to(dtype)

    def ints(values: list[int]) -> Any:
        return m.tensor(values, dtype=m.int64, device=device)

    return mk, ints
