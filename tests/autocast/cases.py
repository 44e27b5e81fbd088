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
    # where a low-precision input stays low precision (the CUDA list does not name the
    # factorizations) the kernels refuse it, as PyTorch's do: (on CPU, on other device types)
    refuses_low: tuple[bool, bool] = (False, False)
    # whether the op takes half precision inputs where no policy casts them (the FFTs and the
    # complex constructors have no half precision kernel: complex32 is not a dtype here)
    halves: bool = True


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


def Linalg(op: str, call: Callable[..., Any]) -> Case:
    """A factorization or solver: float32 on CPU (the list), refused in low precision on
    other device types, whose list does not name it (as PyTorch's CUDA kernels refuse)."""
    return Case(op, call, refuses_low=(False, True))


def _wc(m: Any, mk: Make, n: int = 3) -> Any:
    """A well-conditioned matrix of the case's dtype: small entries plus 2 I."""
    x = mk([n, n])
    return x * 0.1 + m.eye(n, dtype=x.dtype, device=x.device) * 2


def _pd(m: Any, mk: Make, n: int = 3) -> Any:
    """A symmetric positive-definite matrix of the case's dtype (no product: matmul would be
    cast in the region)."""
    x = mk([n, n])
    return (x + x.mT) * 0.05 + m.eye(n, dtype=x.dtype, device=x.device) * 2


def _ran(m: Any, r: Any, x: Any) -> Any:
    """For an operator whose result is an integer tensor (matrix_rank): it ran (which a
    low-precision input does only when the region casts it to float32); float32 on CPU, the
    input's dtype elsewhere, as the lists say."""
    del r
    return m.zeros(1, device=x.device, dtype=m.float32 if x.device.type == "cpu" else x.dtype)


def _rank(m: Any, mk: Make, call: Callable[..., Any]) -> Any:
    x = mk([3, 3])
    return _ran(m, call(x), x)


def _lu_solve(m: Any, mk: Make) -> Any:
    b = mk([3, 2])
    LU, piv = m.linalg.lu_factor(_wc(m, mk).float())  # outside the lists (PyTorch's too)
    return m.lu_solve(b, LU.to(b.dtype), piv)


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
    Case(
        "convolution",
        lambda m, mk, ints: m.convolution(
            mk([1, 2, 5]), mk([3, 2, 2]), mk([3]), [1], [0], [1], False, [0], 1
        ),
    ),
    Case("conv1d", lambda m, mk, ints: F(m).conv1d(mk([1, 2, 5]), mk([3, 2, 2]), mk([3]))),
    Case("conv2d", lambda m, mk, ints: F(m).conv2d(mk([1, 2, 4, 4]), mk([3, 2, 2, 2]))),
    Case("conv3d", lambda m, mk, ints: F(m).conv3d(mk([1, 2, 3, 3, 3]), mk([3, 2, 2, 2, 2]))),
    *(
        Case(
            f"conv{k}d.padding",
            lambda m, mk, ints, k=k: getattr(F(m), f"conv{k}d")(
                mk([1, 2] + [4] * k), mk([3, 2] + [3] * k), padding="same"
            ),
            via=(None, LOWER),  # CUDA lists the convolution it runs
        )
        for k in (1, 2, 3)
    ),
    Case(
        "conv_transpose1d", lambda m, mk, ints: F(m).conv_transpose1d(mk([1, 2, 3]), mk([2, 3, 2]))
    ),
    Case(
        "conv_transpose2d.input",
        lambda m, mk, ints: F(m).conv_transpose2d(mk([1, 2, 3, 3]), mk([2, 3, 2, 2])),
    ),
    Case(
        "conv_transpose3d.input",
        lambda m, mk, ints: F(m).conv_transpose3d(mk([1, 2, 2, 2, 2]), mk([2, 3, 2, 2, 2])),
    ),
    Case("reflection_pad1d", lambda m, mk, ints: F(m).pad(mk([1, 2, 4]), (1, 2), "reflect")),
    Case(
        "reflection_pad2d", lambda m, mk, ints: F(m).pad(mk([1, 2, 4, 4]), (1, 2, 1, 0), "reflect")
    ),
    Case("replication_pad1d", lambda m, mk, ints: F(m).pad(mk([1, 2, 4]), (1, 2), "replicate")),
    Case(
        "replication_pad2d",
        lambda m, mk, ints: F(m).pad(mk([1, 2, 4, 4]), (1, 2, 1, 0), "replicate"),
    ),
    Case(
        "replication_pad3d",
        lambda m, mk, ints: F(m).pad(mk([1, 2, 3, 3, 3]), (1, 1, 0, 1, 1, 0), "replicate"),
    ),
    Case(
        "_thnn_fused_lstm_cell",
        lambda m, mk, ints: m.ops.aten._thnn_fused_lstm_cell(mk([2, 8]), mk([2, 8]), mk([2, 2]))[0],
    ),
    Case(
        "_thnn_fused_gru_cell",
        lambda m, mk, ints: m.ops.aten._thnn_fused_gru_cell(mk([2, 6]), mk([2, 6]), mk([2, 2]))[0],
    ),
    Case(
        "mkldnn_rnn_layer",
        lambda m, mk, ints: m.ops.aten.mkldnn_rnn_layer(
            mk([3, 2, 4]),
            mk([8, 4]),
            mk([8, 2]),
            mk([8]),
            mk([8]),
            mk([2, 2]),
            mk([2, 2]),
            False,
            [],
            2,
            2,
            1,
            True,
            False,
            False,
            False,
        )[0],
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
    Case(
        "native_layer_norm",
        lambda m, mk, ints: m.ops.aten.native_layer_norm(mk([2, 4]), [4], mk([4]), mk([4]), 1e-5)[
            0
        ],
    ),
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
    # pooling (float32 on CPU), normalization (float32 on CUDA), prelu (lower precision)
    Case("avg_pool3d", lambda m, mk, ints: F(m).avg_pool3d(mk([1, 1, 2, 2, 2]), 2)),
    Case("max_pool3d", lambda m, mk, ints: F(m).max_pool3d(mk([1, 1, 2, 2, 2]), 2)),
    Case(
        "adaptive_avg_pool3d", lambda m, mk, ints: F(m).adaptive_avg_pool3d(mk([1, 1, 2, 2, 2]), 1)
    ),
    Case(
        "adaptive_max_pool3d", lambda m, mk, ints: F(m).adaptive_max_pool3d(mk([1, 1, 2, 2, 2]), 1)
    ),
    Case(
        "max_unpool2d",
        lambda m, mk, ints: F(m).max_unpool2d(mk([1, 1, 1, 1]), ints([[[[3]]]]), 2),
    ),
    Case(
        "max_unpool3d",
        lambda m, mk, ints: F(m).max_unpool3d(mk([1, 1, 1, 1, 1]), ints([[[[[3]]]]]), 2),
    ),
    Case(
        "fractional_max_pool2d",
        lambda m, mk, ints: F(m).fractional_max_pool2d(
            mk([1, 1, 4, 4]), 2, 2, _random_samples=mk([1, 1, 2])
        ),
    ),
    Case(
        "fractional_max_pool3d",
        lambda m, mk, ints: F(m).fractional_max_pool3d(
            mk([1, 1, 4, 4, 4]), 2, 2, _random_samples=mk([1, 1, 3])
        ),
    ),
    Case("group_norm", lambda m, mk, ints: F(m).group_norm(mk([2, 4]), 2, mk([4]), mk([4]))),
    Case("rms_norm", lambda m, mk, ints: F(m).rms_norm(mk([2, 4]), [4], mk([4]))),
    Case("prelu", lambda m, mk, ints: F(m).prelu(mk([2, 3]), mk([3]))),
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
    # issue 29's names
    Case("mv", lambda m, mk, ints: m.mv(mk([2, 3]), mk([3]))),
    Case("addmv", lambda m, mk, ints: m.addmv(mk([2]), mk([2, 3]), mk([3]))),
    Case("addr", lambda m, mk, ints: m.addr(mk([2, 3]), mk([2]), mk([3]))),
    Case("cdist", lambda m, mk, ints: m.cdist(mk([2, 3]), mk([4, 3]))),
    Case("cross", lambda m, mk, ints: m.cross(mk([2, 3]), mk([2, 3]), dim=1)),
    Case("index_copy", lambda m, mk, ints: m.index_copy(mk([3, 2]), 0, ints([2, 0]), mk([2, 2]))),
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
    # --- linear algebra ---
    Case("linalg_vecdot", lambda m, mk, ints: m.linalg.vecdot(mk([2, 3]), mk([2, 3]))),
    Case(
        "linalg_multi_dot",
        lambda m, mk, ints: m.linalg.multi_dot([mk([2, 3]), mk([3, 4])]),
        via=(LOWER, None),  # CPU: its mm is listed
    ),
    Case(
        "chain_matmul",
        lambda m, mk, ints: m.chain_matmul(mk([2, 3]), mk([3, 4])),
        via=(LOWER, None),
    ),
    Case("linalg_matrix_norm", lambda m, mk, ints: m.linalg.matrix_norm(mk([3, 3]), 1)),
    Case("linalg_matrix_norm.str_ord", lambda m, mk, ints: m.linalg.matrix_norm(mk([3, 3]))),
    Case("vdot", lambda m, mk, ints: m.vdot(mk([3]), mk([3]))),
    Linalg("cholesky", lambda m, mk, ints: m.cholesky(_pd(m, mk))),
    Linalg("cholesky_inverse", lambda m, mk, ints: m.cholesky_inverse(_pd(m, mk))),
    Linalg("cholesky_solve", lambda m, mk, ints: m.cholesky_solve(mk([3, 2]), _pd(m, mk))),
    Linalg("inverse", lambda m, mk, ints: m.inverse(_wc(m, mk))),
    Linalg("lu_solve", lambda m, mk, ints: _lu_solve(m, mk)),
    Linalg("orgqr", lambda m, mk, ints: m.orgqr(mk([4, 3]), mk([3]))),
    Case(
        "ormqr",
        lambda m, mk, ints: m.ormqr(mk([4, 3]), mk([3]), mk([4, 2])),
        via=(None, LOWER),  # CUDA: its matmul is listed
        refuses_low=(False, True),
    ),
    Case(
        "pinverse",
        lambda m, mk, ints: m.pinverse(mk([4, 3])),
        via=(None, LOWER),
        refuses_low=(False, True),
    ),
    Linalg("geqrf", lambda m, mk, ints: m.geqrf(mk([4, 3]))[0]),
    Linalg("_lu_with_info", lambda m, mk, ints: m.ops.aten._lu_with_info(_wc(m, mk))[0]),
    Linalg("qr", lambda m, mk, ints: m.qr(mk([4, 3]))[0]),
    Linalg("svd", lambda m, mk, ints: m.svd(mk([4, 3]))[1]),
    Linalg("triangular_solve", lambda m, mk, ints: m.triangular_solve(mk([3, 2]), _wc(m, mk))[0]),
    Linalg("linalg_cholesky", lambda m, mk, ints: m.linalg.cholesky(_pd(m, mk))),
    Linalg("linalg_cholesky_ex", lambda m, mk, ints: m.linalg.cholesky_ex(_pd(m, mk))[0]),
    Linalg("linalg_cond", lambda m, mk, ints: m.linalg.cond(_wc(m, mk))),
    Linalg("linalg_cond.p_str", lambda m, mk, ints: m.linalg.cond(_wc(m, mk), "fro")),
    Linalg("linalg_eig", lambda m, mk, ints: m.linalg.eig(_wc(m, mk))[0].abs()),
    Linalg("linalg_eigh", lambda m, mk, ints: m.linalg.eigh(_pd(m, mk))[0]),
    Linalg("linalg_eigvals", lambda m, mk, ints: m.linalg.eigvals(_wc(m, mk)).abs()),
    Linalg("linalg_eigvalsh", lambda m, mk, ints: m.linalg.eigvalsh(_pd(m, mk))),
    Linalg(
        "linalg_householder_product",
        lambda m, mk, ints: m.linalg.householder_product(mk([4, 3]), mk([3])),
    ),
    Linalg("linalg_inv", lambda m, mk, ints: m.linalg.inv(_wc(m, mk))),
    Linalg("linalg_inv_ex", lambda m, mk, ints: m.linalg.inv_ex(_wc(m, mk))[0]),
    Linalg("linalg_lstsq", lambda m, mk, ints: m.linalg.lstsq(mk([4, 3]), mk([4, 2]))[0]),
    Linalg(
        "linalg_matrix_rank",
        lambda m, mk, ints: _rank(m, mk, lambda x: m.ops.aten.linalg_matrix_rank(x, 0.01)),
    ),
    Linalg(
        "linalg_matrix_rank.atol_rtol_float",
        lambda m, mk, ints: _rank(m, mk, lambda x: m.linalg.matrix_rank(x, atol=0.01)),
    ),
    Linalg(
        "linalg_matrix_rank.atol_rtol_tensor",
        lambda m, mk, ints: _rank(m, mk, lambda x: m.linalg.matrix_rank(x)),
    ),
    Linalg(
        "linalg_matrix_rank.tol_tensor",
        lambda m, mk, ints: _rank(
            m,
            mk,
            lambda x: m.ops.aten.linalg_matrix_rank.tol_tensor(x, m.tensor(0.01, device=x.device)),
        ),
    ),
    Linalg("linalg_qr", lambda m, mk, ints: m.linalg.qr(mk([4, 3]))[0]),
    Linalg("linalg_solve", lambda m, mk, ints: m.linalg.solve(_wc(m, mk), mk([3, 2]))),
    Linalg("linalg_svd", lambda m, mk, ints: m.linalg.svd(mk([4, 3]))[1]),
    Linalg("linalg_svdvals", lambda m, mk, ints: m.linalg.svdvals(mk([4, 3]))),
    Linalg(
        "linalg_tensorinv",
        lambda m, mk, ints: m.linalg.tensorinv(_wc(m, mk, 4).reshape(4, 2, 2), ind=1),
    ),
    Linalg(
        "linalg_tensorsolve",
        lambda m, mk, ints: m.linalg.tensorsolve(_wc(m, mk, 4).reshape(2, 2, 4), mk([2, 2])),
    ),
]

# FFTs and complex constructors (CPU list: float32); each case reads a real result back
CASES += (
    [
        Case(
            f"fft_{name}",
            lambda m, mk, ints, name=name: _real(m, getattr(m.fft, name)(mk([2, 4]))),
            halves=False,
        )
        for name in (
            "fft",
            "ifft",
            "fft2",
            "ifft2",
            "fftn",
            "ifftn",
            "rfft",
            "rfft2",
            "rfftn",
            "ihfft",
        )
    ]
    + [
        Case(
            f"fft_{name}",
            lambda m, mk, ints, name=name: getattr(m.fft, name)(_complex(m, mk([2, 4]))),
            halves=False,
        )
        for name in ("irfft", "irfft2", "irfftn", "hfft")
    ]
    + [
        Case("polar", lambda m, mk, ints: _real(m, m.polar(mk([3]), mk([3]))), halves=False),
        Case(
            "view_as_complex",
            lambda m, mk, ints: _real(m, m.view_as_complex(mk([3, 2]))),
            halves=False,
        ),
        Case("erfinv", lambda m, mk, ints: m.erfinv(mk([3]))),
        Case(
            "stft.center",
            lambda m, mk, ints: _real(m, m.stft(mk([16]), 8, return_complex=True)),
            halves=False,
        ),
        Case(
            "stft",
            lambda m, mk, ints: _real(
                m, m.ops.aten.stft.default(mk([16]), 8, 2, 8, None, False, True, True)
            ),
            halves=False,
        ),
    ]
)

# --- statistics: quantiles (CPU), dist and renorm (CUDA)
CASES += [
    # (quantiles of float16 and bfloat16 tensors are refused outside the CPU list, as PyTorch)
    Case(
        "quantile", lambda m, mk, ints: m.quantile(mk([2, 5]), mk([2]).sigmoid(), 1), halves=False
    ),
    Case("quantile.scalar", lambda m, mk, ints: m.quantile(mk([2, 5]), 0.3, 1), halves=False),
    Case(
        "nanquantile",
        lambda m, mk, ints: m.nanquantile(mk([2, 5]), mk([2]).sigmoid(), 1),
        halves=False,
    ),
    Case("nanquantile.scalar", lambda m, mk, ints: m.nanquantile(mk([2, 5]), 0.3), halves=False),
    Case("dist", lambda m, mk, ints: m.dist(mk([2, 3]), mk([2, 3]))),
    Case("renorm", lambda m, mk, ints: m.renorm(mk([2, 3]), 2, 0, 1.0)),
]


def _real(m: Any, z: Any) -> Any:
    return z.abs()  # not view_as_real: torch's ifft of a real input is a lazy conjugate


def _complex(m: Any, x: Any) -> Any:
    """A complex tensor made from ``x`` (its precision follows ``x``'s)."""
    return m.view_as_complex(m.stack([x, x], -1))


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
