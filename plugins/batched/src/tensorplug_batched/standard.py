"""The standard operators' entries in the rule table that the ``def*`` helpers fill.

One line per family, in the order of native_functions.yaml. The rules of their own shape live
beside their kind: views.py (shape and view ops, cat/stack), linalg.py (the matmul family,
losses, embedding), indexing.py (index, gather/scatter, masks, search), randomness.py (random
operators). Composite operators (``CompositeImplicitAutograd``: ``linear``, ``flatten``,
``layer_norm`` ...) need no entry: the fallback runs their decomposition on the batched tensors.
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp

from .batched import BatchedTensor
from .fallback import loop
from .rules import (
    Kernel,
    broadcasting_kernel,
    defbroadcasting,
    defdim,
    defdynamic,
    deffull,
    defreduction,
    defrule,
    defunary,
    passdown,
    top_level,
)

aten = tp.ops.aten

# --- elementwise ------------------------------------------------------------------------------

defbroadcasting(
    "add.Tensor", "add_.Tensor", "sub.Tensor", "sub_.Tensor", "mul.Tensor", "mul_.Tensor",
    "div.Tensor", "div.Tensor_mode", "div_.Tensor", "floor_divide.default",
    "remainder.Tensor", "fmod.Tensor", "fmod_.Tensor", "pow.Tensor_Tensor", "pow.Scalar",
    "pow_.Tensor", "maximum.default", "minimum.default", "fmax.default", "fmin.default",
    "atan2.default", "atan2_.default", "hypot.default", "hypot_.default",
    "lerp.Scalar", "lerp_.Scalar", "addcmul.default",
    "addcmul_.default", "addcdiv.default", "addcdiv_.default",
    "clamp.Tensor", "clamp_.Tensor", "clamp_min.Tensor", "clamp_min_.Tensor",
    "clamp_max.Tensor", "clamp_max_.Tensor",
    "eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor",
    "logical_and.default", "logical_or.default",
    "bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor",
    "threshold_backward.default", "copy_.default",
)  # fmt: skip
# heaviside refuses mixed dtypes and isclose compares as given: no promotion to imitate
defbroadcasting("heaviside.default", "heaviside_.default", "isclose.default", promote=())
defbroadcasting("where.self", "where.ScalarOther", "where.ScalarSelf", promote=("self", "other"))
defbroadcasting("masked_fill.Scalar", "masked_fill_.Scalar", promote=())


@defrule("lerp.Tensor", "lerp_.Tensor")
def _lerp_maker(op: Any) -> Kernel:
    """A 0-d ``weight`` of another dtype is promoted like a scalar (the kernel's rule); batched,
    it is 1-d, so it is cast first to the dtype the logical call computes in."""
    plain = broadcasting_kernel(op, promote=())
    inplace = op.schema.positional[0].is_write

    def kernel(self: Any, end: Any, weight: Any) -> Any:
        lvl = top_level((self, end, weight))
        w = weight
        if (
            type(w) is BatchedTensor
            and w.level == lvl
            and w.ndim == 0
            and w.dtype is not self.dtype
        ):
            d = self.dtype if inplace else tp.result_type(self, end, w)
            weight = aten._to_copy.default(w, dtype=d)
            if not inplace:
                self = aten._to_copy.default(self, dtype=d)
                end = aten._to_copy.default(end, dtype=d)
        return plain(self, end, weight)

    return kernel


defunary(
    "add.Scalar", "add_.Scalar", "sub.Scalar", "sub_.Scalar", "rsub.Scalar", "mul.Scalar",
    "mul_.Scalar", "div.Scalar", "div_.Scalar", "rdiv.Scalar", "floor_divide.Scalar",
    "remainder.Scalar", "fmod.Scalar", "fmod_.Scalar", "pow.Tensor_Scalar", "pow_.Scalar",
    "neg.default", "neg_.default", "abs.default", "abs_.default", "sign.default",
    "sgn.default", "sgn_.default", "floor.default", "floor_.default", "ceil.default",
    "ceil_.default", "trunc.default", "trunc_.default", "round.default", "round.decimals",
    "round_.default", "round_.decimals", "frac.default", "frac_.default", "exp.default",
    "exp_.default", "exp2.default", "exp2_.default", "expm1.default", "expm1_.default",
    "log.default", "log_.default", "log1p.default", "log2.default", "log2_.default",
    "log10.default", "log10_.default", "sqrt.default", "sqrt_.default", "rsqrt.default",
    "square.default", "square_.default", "reciprocal.default", "reciprocal_.default",
    "sin.default", "sin_.default", "cos.default", "cos_.default", "tan.default",
    "tan_.default", "asin.default", "asin_.default", "acos.default", "acos_.default",
    "atan.default", "atan_.default", "tanh.default", "tanh_.default", "sinh.default",
    "sinh_.default", "cosh.default", "cosh_.default", "asinh.default", "asinh_.default",
    "acosh.default", "acosh_.default", "atanh.default", "atanh_.default", "sigmoid.default",
    "sigmoid_.default", "logit.default", "logit_.default", "erf.default", "erf_.default",
    "relu.default", "relu_.default", "gelu.default", "silu.default",
    "clamp.default", "clamp_.default", "clamp_min.default", "clamp_min_.default",
    "clamp_max.default", "clamp_max_.default", "nan_to_num.default", "nan_to_num_.default",
    "eq.Scalar", "ne.Scalar", "lt.Scalar", "le.Scalar", "gt.Scalar", "ge.Scalar",
    "isnan.default", "isinf.default", "isfinite.default", "signbit.default",
    "logical_not.default", "bitwise_not.default",
    # copies and fills keep the shape (the *_like factories give batched tensors, as PyTorch's)
    "_to_copy.default", "clone.default", "detach.default", "fill_.Scalar", "zero_.default",
    "zeros_like.default", "ones_like.default", "empty_like.default", "full_like.default",
)  # fmt: skip


def _out_maker(functional: str) -> Any:
    """``op.out(..., out=o)``: the functional op, copied into ``o`` (a batched value into an
    unbatched ``o`` is PyTorch's in-place error); a result ``o`` must be resized or cast to is
    left to the loop, where the kernel's own rules apply."""
    name, _, overload = functional.partition(".")
    fop = getattr(getattr(aten, name), overload)

    def maker(op: Any) -> Kernel:
        def kernel(*args: Any, out: Any, **kwargs: Any) -> Any:
            lvl = top_level((*args, out))
            if lvl == 0:
                return passdown(op, args, {"out": out, **kwargs})
            r = fop(*args, **kwargs)
            if r.shape != out.shape or r.dtype is not out.dtype:
                return loop(op, args, {"out": out, **kwargs}, lvl)
            aten.copy_.default(out, r)
            return out

        return kernel

    return maker


for _name in ("add", "sub", "mul", "div"):
    defrule(f"{_name}.out")(_out_maker(f"{_name}.Tensor"))

# --- reductions -------------------------------------------------------------------------------

defreduction(
    "sum.dim_IntList", "mean.dim", "var.correction", "std.correction", "prod.dim_int",
    "amax.default", "amin.default", "aminmax.default", "max.dim", "min.dim",
    "argmax.default", "argmin.default", "logsumexp.default", "var_mean.correction",
    "std_mean.correction", "median.dim", "kthvalue.default", "any.dim", "all.dim",
    "linalg_vector_norm.default",
)  # fmt: skip
defreduction("any.dims", "all.dims", empty_is_all=False)  # dim=[] reduces nothing
defreduction("count_nonzero.default", "count_nonzero.dim_IntList", keepdim=None)

deffull("sum.default", lambda x, dtype=None: aten.sum.dim_IntList(x, [1], dtype=dtype))
deffull("mean.default", lambda x, dtype=None: aten.mean.dim(x, [1], dtype=dtype))
deffull("prod.default", lambda x, dtype=None: aten.prod.dim_int(x, 1, dtype=dtype))
deffull("max.default", lambda x: aten.max.dim(x, 1)[0], empty_ok=False)
deffull("min.default", lambda x: aten.min.dim(x, 1)[0], empty_ok=False)
deffull("median.default", lambda x: aten.median.dim(x, 1)[0], empty_ok=False)
deffull("any.default", lambda x: aten.any.dim(x, 1))
deffull("all.default", lambda x: aten.all.dim(x, 1))

# --- along a dimension, keeping the rank -----------------------------------------------------------

defdim(
    "cumsum.default", "cumprod.default", "cummax.default", "cummin.default", "softmax.int",
    "log_softmax.int", "sort.default", "sort.stable", "topk.default",
    "_softmax_backward_data.default", "_log_softmax_backward_data.default",
    "gather.default", "scatter.src", "scatter.value", "scatter_.src", "scatter_.value",
    "scatter_add.default",
)  # fmt: skip
defdim("flip.default", dim="dims")

# --- shapes that depend on values ----------------------------------------------------------------

defdynamic(
    "nonzero.default", "masked_select.default", "where.default", "_unique2.default",
    "unique_dim.default", "repeat_interleave.Tensor",
)  # fmt: skip
