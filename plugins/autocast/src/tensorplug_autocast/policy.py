"""The autocast op policies: PyTorch 2.13's CPU and CUDA op lists, in one table.

Each entry names a standard operator overload and its policy in CPU regions and in regions of
every other device type. CUDA's lists are the ones PyTorch also uses for its other accelerators
(XPU, MPS, MTIA), so a third-party backend gets them too. The policies (PyTorch's names):

* ``lower_precision_fp``: cast eligible inputs (Note [Eligible tensors] in casting.py) to the
  region's dtype (bfloat16 or float16) and run there: matrix products, ``linear``;
* ``fp32``: cast eligible inputs to float32: losses, ``prod``, and on CUDA ``exp``, ``log``,
  ``pow``, ``layer_norm`` ...;
* ``fp32_set_opt_dtype``: ops with a ``dtype=`` argument (``sum``, ``softmax`` ...) run in
  float32 unless the call gives a dtype; an input that is not eligible leaves the call alone;
* ``fp32_append_dtype``: ``norm`` computes an eligible input in float32 (PyTorch redispatches to
  the overload with a dtype; here the input is cast, with the same result dtype);
* ``promote``: ops of several inputs (``cat``, ``stack`` ...) run in the widest floating dtype
  among their eligible inputs, float32 winning over the region's dtype;
* ``banned``: refused with an explanation (CUDA's ``binary_cross_entropy``);
* ``opaque`` (tensorplug's): run unchanged with autocast off inside. For composites that
  PyTorch runs as one unlisted kernel: the listed operators they decompose into here must not
  be autocast one by one (``trace`` is ``sum(diag(x))``, and CUDA lists ``sum``).

Note [Entries PyTorch does not have]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A few composites decompose differently here than in PyTorch, so the lists alone would give a
different result dtype. ``NOT_IN_PYTORCH`` names the entries added for them; each keeps
PyTorch's outcome: CPU ``einsum`` (PyTorch's runs ``bmm``, which is listed; this one multiplies
and sums), CUDA ``tensordot.int`` (PyTorch's Python API passes ``dims=int`` to ``tensordot``,
which is listed; here it is an overload of its own), and CUDA ``trace`` and ``mish`` (see
``opaque``: ``mish`` is ``x * tanh(softplus(x))`` here, and CUDA lists ``exp`` and ``log1p``).
tests/autocast/test_composites.py runs every other composite in regions and checks that its
result dtype is what it is outside one.

Every other operator is a fallthrough for the ``Autocast<B>`` keys (a call passes straight
through, at no cost), and so is an operator on a device type whose list does not name it. A
composite operator that is not listed decomposes into listed ones (``cross_entropy_loss`` on
CUDA runs ``log_softmax`` and ``nll_loss`` in float32). In-place and ``out=`` overloads are
never listed: PyTorch does not autocast them either.

The lists also name operators the standard op set does not define (``ABSENT_CPU``,
``ABSENT_CUDA``): convolutions, recurrent cells, attention, linear algebra routines,
most losses. docs/autocast.md lists them. The losses and activations a user reaches for first
(``l1_loss``, ``smooth_l1_loss``, ``huber_loss``, ``kl_div``, ``binary_cross_entropy_with_logits``,
``softplus``, ``cosine_similarity``) are operators of the standard set, so they have entries.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ABSENT_CPU",
    "ABSENT_CUDA",
    "BANNED",
    "NOT_IN_PYTORCH",
    "OPAQUE",
    "FP32",
    "FP32_APPEND_DTYPE",
    "FP32_SET_OPT_DTYPE",
    "LOWER",
    "POLICIES",
    "PROMOTE",
    "Policy",
]

Policy = str
LOWER: Final = "lower_precision_fp"
FP32: Final = "fp32"
FP32_SET_OPT_DTYPE: Final = "fp32_set_opt_dtype"
FP32_APPEND_DTYPE: Final = "fp32_append_dtype"
PROMOTE: Final = "promote"
BANNED: Final = "banned"
OPAQUE: Final = "opaque"

_: Final[None] = None  # not on that device type's list

# aten overload -> (policy on CPU, policy on CUDA and every other device type)
POLICIES: Final[dict[str, tuple[Policy | None, Policy | None]]] = {
    # lower precision: matrix products
    "mm": (LOWER, LOWER),
    "bmm": (LOWER, LOWER),
    "matmul": (LOWER, LOWER),
    "addmm": (LOWER, LOWER),
    "baddbmm": (LOWER, LOWER),
    "addbmm": (LOWER, LOWER),
    "linear": (LOWER, LOWER),
    "einsum": (LOWER, LOWER),  # CPU: Note [Entries PyTorch does not have]
    # lower precision: attention
    "scaled_dot_product_attention": (LOWER, LOWER),
    # --- convolution: lower precision (CUDA lists the padding="same"/"valid" overloads'
    # composite convolution, CPU the overloads themselves)
    "convolution": (_, LOWER),
    "conv1d": (LOWER, LOWER),
    "conv2d": (LOWER, LOWER),
    "conv3d": (LOWER, LOWER),
    "conv1d.padding": (LOWER, _),
    "conv2d.padding": (LOWER, _),
    "conv3d.padding": (LOWER, _),
    "conv_transpose1d": (LOWER, LOWER),
    "conv_transpose2d.input": (LOWER, LOWER),
    "conv_transpose3d.input": (LOWER, LOWER),
    "prelu": (LOWER, LOWER),
    # lower precision: the fused recurrent cells (CUDA only, as PyTorch lists them)
    "_thnn_fused_lstm_cell": (_, LOWER),
    "_thnn_fused_gru_cell": (_, LOWER),
    # lower precision: a whole LSTM layer (CPU only, as PyTorch lists it)
    "mkldnn_rnn_layer": (LOWER, _),
    # float32: pointwise functions whose results overflow or lose precision in 16 bits
    "acos": (_, FP32),
    "asin": (_, FP32),
    "cosh": (_, FP32),
    "exp": (_, FP32),
    "expm1": (_, FP32),
    "log": (_, FP32),
    "log10": (_, FP32),
    "log2": (_, FP32),
    "log1p": (_, FP32),
    "reciprocal": (_, FP32),
    "rsqrt": (_, FP32),
    "sinh": (_, FP32),
    "tan": (_, FP32),
    "pow.Tensor_Scalar": (_, FP32),
    "pow.Tensor_Tensor": (_, FP32),
    "pow.Scalar": (_, FP32),
    # float32: normalizations, reductions and losses
    "layer_norm": (_, FP32),
    "native_layer_norm": (_, FP32),
    "logsumexp": (_, FP32),
    "prod": (FP32, FP32_SET_OPT_DTYPE),
    "prod.dim_int": (FP32, FP32_SET_OPT_DTYPE),
    "trace": (FP32, OPAQUE),  # CUDA: Note [Entries PyTorch does not have]
    "mish": (_, OPAQUE),  # CUDA: Note [Entries PyTorch does not have]
    "mse_loss": (FP32, FP32),
    "nll_loss": (FP32, FP32),
    "cross_entropy_loss": (FP32, _),  # CUDA: its log_softmax and nll_loss are listed
    "binary_cross_entropy": (FP32, BANNED),
    "l1_loss": (FP32, FP32),
    "smooth_l1_loss": (FP32, FP32),
    "huber_loss": (FP32, FP32),
    "kl_div": (FP32, FP32),
    "binary_cross_entropy_with_logits": (FP32, FP32),
    "softplus": (_, FP32),
    "cosine_similarity": (_, FP32),
    # --- padding: float32 on CPU
    "reflection_pad1d": (FP32, _),
    "reflection_pad2d": (FP32, _),
    "replication_pad1d": (FP32, _),
    "replication_pad2d": (FP32, _),
    "replication_pad3d": (FP32, _),
    # --- resampling: CUDA computes the upsampling operators in float32 (their .vec overloads
    # decompose into these); CPU the grid samplers, which CUDA promotes instead
    "upsample_nearest1d": (_, FP32),
    "_upsample_nearest_exact1d": (_, FP32),
    "upsample_nearest2d": (_, FP32),
    "_upsample_nearest_exact2d": (_, FP32),
    "upsample_nearest3d": (_, FP32),
    "_upsample_nearest_exact3d": (_, FP32),
    "upsample_linear1d": (_, FP32),
    "upsample_bilinear2d": (_, FP32),
    "_upsample_bilinear2d_aa": (_, FP32),
    "upsample_trilinear3d": (_, FP32),
    "upsample_bicubic2d": (_, FP32),
    "_upsample_bicubic2d_aa": (_, FP32),
    "grid_sampler": (FP32, PROMOTE),
    "grid_sampler_2d": (FP32, _),
    "grid_sampler_3d": (FP32, _),
    # float32: pooling (CPU) and normalization (CUDA)
    "avg_pool3d": (FP32, _),
    "max_pool3d": (FP32, _),
    "adaptive_avg_pool3d": (FP32, _),
    "adaptive_max_pool3d": (FP32, _),
    "max_unpool2d": (FP32, _),
    "max_unpool3d": (FP32, _),
    # --- fractional max pooling (PyTorch's CPU float32 list) ---
    "fractional_max_pool2d": (FP32, _),
    "fractional_max_pool3d": (FP32, _),
    "group_norm": (_, FP32),
    "rms_norm": (_, FP32),
    # float32 unless the call gives a dtype
    "sum": (_, FP32_SET_OPT_DTYPE),
    "sum.dim_IntList": (_, FP32_SET_OPT_DTYPE),
    "softmax.int": (_, FP32_SET_OPT_DTYPE),
    "log_softmax.int": (_, FP32_SET_OPT_DTYPE),
    "cumsum": (_, FP32_SET_OPT_DTYPE),
    "cumprod": (_, FP32_SET_OPT_DTYPE),
    "linalg_vector_norm": (_, FP32_SET_OPT_DTYPE),
    "norm.Scalar": (_, FP32_APPEND_DTYPE),
    "norm.ScalarOpt_dim": (_, FP32_APPEND_DTYPE),
    # --- linear algebra (torch.linalg and the top-level names) ---
    # lower precision: the products; float32 on CPU: the factorizations and solvers (CUDA's
    # list has none of them); float32 unless a dtype is given: CUDA's matrix norms
    "linalg_vecdot": (LOWER, LOWER),
    "linalg_multi_dot": (_, LOWER),
    "chain_matmul": (_, LOWER),
    "linalg_matrix_norm": (_, FP32_SET_OPT_DTYPE),
    "linalg_matrix_norm.str_ord": (_, FP32_SET_OPT_DTYPE),
    "vdot": (_, PROMOTE),
    "cholesky": (FP32, _),
    "cholesky_inverse": (FP32, _),
    "cholesky_solve": (FP32, _),
    "inverse": (FP32, _),
    "lu_solve": (FP32, _),
    "orgqr": (FP32, _),
    "ormqr": (FP32, _),
    "pinverse": (FP32, _),
    "geqrf": (FP32, _),
    "_lu_with_info": (FP32, _),
    "qr": (FP32, _),
    "svd": (FP32, _),
    "triangular_solve": (FP32, _),
    "linalg_cholesky": (FP32, _),
    "linalg_cholesky_ex": (FP32, _),
    "linalg_cond": (FP32, _),
    "linalg_cond.p_str": (FP32, _),
    "linalg_eig": (FP32, _),
    "linalg_eigh": (FP32, _),
    "linalg_eigvals": (FP32, _),
    "linalg_eigvalsh": (FP32, _),
    "linalg_householder_product": (FP32, _),
    "linalg_inv": (FP32, _),
    "linalg_inv_ex": (FP32, _),
    "linalg_lstsq": (FP32, _),
    "linalg_matrix_rank": (FP32, _),
    "linalg_matrix_rank.atol_rtol_float": (FP32, _),
    "linalg_matrix_rank.atol_rtol_tensor": (FP32, _),
    "linalg_matrix_rank.tol_tensor": (FP32, _),
    "linalg_qr": (FP32, _),
    "linalg_solve": (FP32, _),
    "linalg_svd": (FP32, _),
    "linalg_svdvals": (FP32, _),
    "linalg_tensorinv": (FP32, _),
    "linalg_tensorsolve": (FP32, _),
    # the widest input type
    "cat": (PROMOTE, _),
    "stack": (PROMOTE, _),
    "addcdiv": (_, PROMOTE),
    "addcmul": (_, PROMOTE),
    "atan2": (_, PROMOTE),
    "dot": (_, PROMOTE),
    "index_put": (_, PROMOTE),
    "scatter_add": (_, PROMOTE),
    "tensordot": (_, PROMOTE),
    "tensordot.int": (_, PROMOTE),  # CUDA: Note [Entries PyTorch does not have]
    # --- issue 29's names: matrix-vector products, distances, cross products, index_copy ---
    "mv": (OPAQUE, LOWER),  # CPU: Note [Entries PyTorch does not have]
    "addmv": (OPAQUE, LOWER),  # CPU: Note [Entries PyTorch does not have]
    "addr": (OPAQUE, LOWER),  # CPU: Note [Entries PyTorch does not have]
    "cdist": (FP32, FP32),
    "cross": (_, PROMOTE),
    "index_copy": (PROMOTE, _),
    # --- FFT, complex numbers and special functions: float32 ------------------------------
    "fft_fft": (FP32, _),
    "fft_ifft": (FP32, _),
    "fft_fft2": (FP32, _),
    "fft_ifft2": (FP32, _),
    "fft_fftn": (FP32, _),
    "fft_ifftn": (FP32, _),
    "fft_rfft": (FP32, _),
    "fft_irfft": (FP32, _),
    "fft_rfft2": (FP32, _),
    "fft_irfft2": (FP32, _),
    "fft_rfftn": (FP32, _),
    "fft_irfftn": (FP32, _),
    "fft_hfft": (FP32, _),
    "fft_ihfft": (FP32, _),
    "polar": (FP32, _),
    "view_as_complex": (FP32, _),
    "stft": (FP32, _),
    "stft.center": (FP32, _),
    "erfinv": (_, FP32),
    # --- statistics: quantiles (CPU), dist and renorm (CUDA) in float32
    "quantile": (FP32, _),
    "quantile.scalar": (FP32, _),
    "nanquantile": (FP32, _),
    "nanquantile.scalar": (FP32, _),
    "dist": (_, FP32),
    "renorm": (_, FP32),
}

# (overload, "cpu" or "cuda") of the entries above that PyTorch's lists do not have
NOT_IN_PYTORCH: Final = frozenset(
    {
        ("einsum", "cpu"),
        ("trace", "cuda"),
        ("mish", "cuda"),
        ("tensordot.int", "cuda"),
        ("mv", "cpu"),
        ("addmv", "cpu"),
        ("addr", "cpu"),
    }
)

# Entries of PyTorch 2.13's lists that name operators the standard op set does not define.
ABSENT_CPU: Final[dict[Policy, tuple[str, ...]]] = {
    LOWER: (
        "_convolution.deprecated", "conv_tbc", "_addmm_activation",
        "_native_multi_head_attention",
    ),
    FP32: (
        "_grid_sampler_2d_cpu_fallback",
        "fake_quantize_per_tensor_affine",
        "cosine_embedding_loss", "nll_loss2d", "hinge_embedding_loss", "poisson_nll_loss",
        "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
        "multilabel_margin_loss", "multilabel_margin_loss_forward", "ctc_loss.IntList",
        "ctc_loss.Tensor",
    ),
    PROMOTE: (),
}  # fmt: skip

ABSENT_CUDA: Final[dict[Policy, tuple[str, ...]]] = {
    LOWER: (
        "_convolution", "_convolution.deprecated", "conv_tbc", "cudnn_convolution",
        "cudnn_convolution_transpose",
        "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
        "_scaled_dot_product_flash_attention",
    ),
    FP32: (
        "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim", "poisson_nll_loss", "cosine_embedding_loss",
        "nll_loss2d", "hinge_embedding_loss", "margin_ranking_loss", "multilabel_margin_loss",
        "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "pdist",
    ),
    PROMOTE: ("bilinear",),
}  # fmt: skip
