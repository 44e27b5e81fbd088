"""Write ``tests/core/data/tensor_methods_expected.json``: torch 2.13's answers to the
expressions of issue 29's Tensor methods and properties (the in-place variants, conversions,
queries, legacy methods, sparse and quantized names on dense tensors).

Each expression is evaluated with ``T`` bound to ``torch`` after the SETUP lines; the test
(tests/core/test_tensor_methods_torch.py) evaluates it with ``T`` bound to ``tensorplug`` and
compares values, dtype and shape, or the exception type. A ``shape:`` prefix compares dtype
and shape only (random fills). Run with torch installed:
``/work/torchenv/bin/python tools/gen_tensor_methods_expected.py``.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

OUT = (
    Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "tensor_methods_expected.json"
)

SETUP = """
x = T.tensor([[1.5, -2.0], [3.0, 4.0]])
v = T.tensor([0.5, 1.5, 2.5])
i = T.tensor([5, 6, 7])
b = T.tensor([True, False, True])
"""

EXPRESSIONS = [
    # in-place pointwise
    "x.clone().eq_(1.5)", "x.clone().ne_(x.t())", "x.clone().lt_(2.0)", "x.clone().le_(x)",
    "x.clone().gt_(0)", "x.clone().ge_(T.tensor([3.0, 0.0]))", "i.clone().eq_(6)",
    "x.clone().eq_(T.zeros(3, 2))", "x.clone().floor_divide_(0.7)",
    "x.clone().floor_divide_(T.tensor([0.7, -0.3]))", "i.clone().floor_divide_(2)",
    "x.clone().remainder_(0.7)", "x.clone().remainder_(T.tensor([0.7, -0.3]))",
    "i.clone().remainder_(-4)", "i.clone().remainder_(1.5)", "x.clone().logical_and_(x.t())",
    "b.clone().logical_or_(b.flip(0))", "x.clone().logical_not_()", "i.clone().bitwise_not_()",
    "b.clone().bitwise_not_()", "x.clone().bitwise_not_()", "i.clone().bitwise_and_(3)",
    "i.clone().bitwise_or_(T.tensor([8, 8, 8]))", "i.clone().bitwise_xor_(1)",
    "b.clone().bitwise_and_(3)", "b.clone().bitwise_xor_(True)", "x.clone().sign_()",
    "i.clone().sign_()", "v.clone().log1p_()", "v.clone().rsqrt_()", "i.clone().rsqrt_()",
    "T.log1p_(v.clone())", "T.rsqrt_(v.clone())", "x.cfloat().mul(1j).conj_physical_()",
    "T.conj_physical_(x.clone())",
    # in-place special functions
    "v.clone().lgamma_()", "v.clone().digamma_()", "(v / 3).erfinv_()", "v.clone().erfc_()",
    "T.erfc_(v.clone())", "v.clone().i0_()", "T.i0_(v.clone())", "v.clone().sinc_()",
    "T.sinc_(v.clone())", "(v + 1).mvlgamma_(2)", "v.clone().mvlgamma_(2)", "v.clone().polygamma_(1)",
    "v.clone().polygamma_(0)", "v.clone().polygamma_(-1)", "i.clone().lgamma_()",
    "i.clone().polygamma_(1)", "v.clone().igamma_(T.tensor([1.0, 2.0, 0.5]))",
    "v.clone().igammac_(T.tensor([1.0, 2.0, 0.5]))", "v.clone().xlogy_(T.tensor([1.0, 2.0, 0.5]))",
    "v.clone().xlogy_(2.0)", "T.xlogy_(v.clone(), 3)", "T.zeros(3).xlogy_(T.zeros(3))",
    # in-place scans, products, indexing
    "x.clone().cumsum_(0)", "x.clone().cumsum_(1)", "i.clone().cumsum_(0)",
    "x.clone().cumprod_(-1)", "i.int().cumprod_(0)", "x.clone().cumsum_(0, dtype=T.float64)",
    "x.clone().addmm_(x, x)", "x.clone().addmm_(x, x, beta=0.5, alpha=2)",
    "T.zeros(3).addmm_(T.ones(3, 2), T.ones(2, 3))", "x.clone().baddbmm_(x[None], x[None])",
    "x[None].clone().baddbmm_(x[None], x[None], beta=2)", "x.clone().addbmm_(x[None], x[None])",
    "T.ones(3, 3).addbmm_(T.ones(2, 3, 2), T.ones(2, 2, 3), alpha=0.5)",
    "x.clone().scatter_add_(0, T.tensor([[1, 0]]), T.tensor([[10.0, 20.0]]))",
    "x.clone().scatter_add_(1, T.tensor([[0, 0]]), T.tensor([[10.0, 20.0]]))",
    "x.clone().put_(T.tensor([0, 3]), T.tensor([9.0, 8.0]))",
    "x.clone().put_(T.tensor([-1, -1]), T.tensor([9.0, 8.0]), accumulate=True)",
    "x.put(T.tensor([1]), T.tensor([7.0]))", "T.put(x, T.tensor([[0, 1]]), T.tensor([[1.0, 2.0]]), True)",
    "x.clone().put_(T.tensor([4]), T.tensor([1.0]))", "x.clone().put_(T.tensor([1], dtype=T.int32), T.tensor([1.0]))",
    "x.clone().put_(T.tensor([1]), T.tensor([1]))", "x.clone().put_(T.tensor([1, 2]), T.tensor([1.0]))",
    "T.zeros(3, 3).fill_diagonal_(5)", "T.zeros(7, 3).fill_diagonal_(5, wrap=True)",
    "T.zeros(7, 3).fill_diagonal_(5)", "T.zeros(2, 5).fill_diagonal_(-1.5)",
    "T.zeros(3, 3, 3, dtype=T.int64).fill_diagonal_(2)", "T.zeros(3).fill_diagonal_(1)",
    "T.zeros(2, 3, 3).fill_diagonal_(1)",
    # in-place views
    "T.zeros(3, 1, 2).squeeze_()", "T.zeros(3, 1, 2).squeeze_(1)", "T.zeros(3, 1, 2).squeeze_(0)",
    "x.clone().unsqueeze_(-1)", "x.clone().t_()", "v.clone().t_()", "T.zeros(2, 3, 4).t_()",
    "T.arange(6.0).reshape(1, 2, 3).transpose_(0, 2)", "T.arange(6.0).reshape(2, 3).swapaxes_(0, 1)",
    "x.clone().transpose_(0, 5)",
    # random fills: dtype, shape and errors
    "shape:T.zeros(3, 4).cauchy_()", "shape:T.zeros(3, 4, dtype=T.float64).cauchy_(2.0, 0.5)",
    "shape:T.zeros(3, 4).log_normal_()", "shape:T.zeros(2).log_normal_(0.0, 0.25)",
    "shape:T.zeros(3, 4).geometric_(0.3)", "shape:T.zeros(3, dtype=T.int32).geometric_(0.5)",
    "T.zeros(3).cauchy_(sigma=0)", "T.zeros(3, dtype=T.int64).cauchy_()",
    "T.zeros(3).log_normal_(std=0)", "T.zeros(3, dtype=T.int64).log_normal_()",
    "T.zeros(3).geometric_(0)", "T.zeros(3).geometric_(1.5)",
    "T.zeros(3, dtype=T.bool).geometric_(0.5)",
    # conversions and queries
    "x.byte()", "x.char()", "x.cfloat()", "x.cdouble()", "x.cfloat().dtype", "x.cdouble().dtype",
    "x.type()", "x.double().type()", "i.type()", "b.type()", "x.half().type()", "x.bfloat16().type()",
    "x.cfloat().type()", "x.cdouble().type()", "x.char().type()", "x.byte().type()", "x.short().type()",
    "x.int().type()", "x.type(T.float64)", "x.type(T.int64)", "x.type(dtype=T.int32)",
    "x.type('torch.IntTensor')", "x.type('torch.DoubleTensor')", "x.type('float')", "x.type(T.float32) is x",
    "x.get_device()", "x.ndimension()", "T.tensor(3.0).ndimension()", "x.is_signed()", "i.is_signed()",
    "x.byte().is_signed()", "b.is_signed()", "x.cfloat().is_signed()", "T.is_signed(i)",
    "x.is_same_size(T.zeros(2, 2))", "x.is_same_size(T.zeros(4))", "T.is_same_size(x, x.t())",
    "x.is_inference()", "T.tensor([2.0]).is_nonzero()", "T.tensor(0).is_nonzero()",
    "T.is_nonzero(T.tensor([[True]]))", "x.is_nonzero()", "T.tensor([]).is_nonzero()",
    "x.is_distributed()", "T.is_distributed(x)",
    "x.new(2, 3).shape", "x.new(2, 3).dtype", "i.new(4).dtype", "x.new([1, 2])", "i.new([1, 2])",
    "x.new()", "x.new((2,))", "x.new(T.tensor([1.0]))", "x.new(T.tensor([1]))",
    "x.new_empty_strided((2, 3), (3, 1)).shape", "x.new_empty_strided((2, 3), (3, 1), dtype=T.int64).dtype",
    "x.new_empty_strided((2, 3), (1,))",
    "x.sum_to_size(2, 1)", "x.sum_to_size((1, 2))", "x.sum_to_size(2)", "x.sum_to_size([1])",
    "x.sum_to_size(3, 2)", "x.sum_to_size(2, 2) is x", "T.ones(4, 2, 3).sum_to_size(1, 3)",
    "x.clone().apply_(lambda a: a * 2)", "i.clone().apply_(lambda a: a + 0.7)",
    "x.clone().map_(T.ones(2), lambda a, c: a + c)", "x.clone().map2_(x, x, lambda a, c, d: a + c * d)",
    "x.clone().map_(T.ones(3), lambda a, c: a)", "x.clone().map_(i, lambda a, c: a)",
    "x.clone().apply_(lambda a: 'a')", "x.clone().apply_(3)",
    "T.tensor([0, 2, 0, 3]).nonzero_static(size=3)",
    "T.tensor([[0, 2], [1, 0]]).nonzero_static(size=1, fill_value=-5)",
    "T.nonzero_static(T.tensor([0, 2]), size=4, fill_value=9)",
    "T.tensor([1, 0]).nonzero_static(size=-1)",
    "x.unsafe_chunk(2)", "x.unsafe_chunk(2, 1)", "T.unsafe_chunk(v, 2)", "x.unsafe_split(1, 1)",
    "T.unsafe_split(v, 2)", "x.unsafe_split_with_sizes([1, 1])", "T.unsafe_split_with_sizes(v, [1, 2])",
    "x.module_load(T.ones(2, 2))", "x.clone().module_load(T.ones(2, 2), assign=True)",
    "x.record_stream(None)", "x.xpu()", "x.ipu()", "x.mtia()",
    "x.lstsq(x)", "x.solve(x)", "x.eig()", "x.symeig()", "x.reinforce(x)",
    # properties
    "x.H", "x.cfloat().mul(1j).H", "x.cfloat().mH", "T.zeros(2, 3, 4).mH.shape", "T.zeros(3).H",
    "T.zeros(2, 3, 4).H", "T.zeros(3).mH", "T.tensor(2.0).H",
    "(x.is_cpu, x.is_cuda, x.is_meta, x.is_xpu, x.is_ipu, x.is_maia, x.is_mps, x.is_mtia)",
    "(x.is_vulkan, x.is_xla, x.is_mkldnn, x.is_nested, x.is_quantized, x.is_sparse, x.is_sparse_csr)",
    "T.zeros(2, device='meta').is_meta", "T.zeros(2, device='meta').is_cpu", "T.zeros(2, device='meta').get_device()",
    "x.grad_dtype", "i.grad_dtype", "x.name", "x.output_nr", "x.volatile",
    # sparse and quantized names on a dense tensor
    "x.to_dense()", "x.to_dense() is x", "x.dense_dim()", "x.sparse_dim()", "x.dequantize()",
    "x.indices()", "x.values()", "x.coalesce()", "x.is_coalesced()", "x.crow_indices()",
    "x.col_indices()", "x.ccol_indices()", "x.row_indices()", "x.sparse_mask(x)",
    "x.sparse_resize_((2, 2), 1, 1)", "x.sparse_resize_and_clear_((2, 2), 1, 1)",
    "x.resize_as_sparse_(x)", "x.smm(x)", "x.sspaddmm(x, x)", "x.to_padded_tensor(0.0)",
    "x.q_scale()", "x.q_zero_point()", "x.q_per_channel_scales()", "x.q_per_channel_zero_points()",
    "x.q_per_channel_axis()", "x.qscheme()", "x.int_repr()",
]  # fmt: skip


def encode(r: Any, torch: Any) -> Any:
    if isinstance(r, torch.Tensor):
        if r.device.type == "meta":
            return {"tensor": True, "dtype": str(r.dtype).split(".")[-1], "shape": list(r.shape)}
        vals = r.detach().cpu()
        if vals.is_complex():
            values: Any = [[z.real, z.imag] for z in vals.reshape(-1).tolist()]
        else:
            values = vals.reshape(-1).tolist()
        values = [None if isinstance(f, float) and math.isnan(f) else f for f in values]
        return {
            "tensor": True,
            "dtype": str(r.dtype).split(".")[-1],
            "shape": list(r.shape),
            "values": values,
        }
    if isinstance(r, torch.dtype):
        return {"dtype_value": str(r).split(".")[-1]}
    if isinstance(r, torch.Size):
        return {"size": list(r)}
    if isinstance(r, (list, tuple)):
        return {"sequence": [encode(e, torch) for e in r]}
    if isinstance(r, str):
        return {"str": r.replace("torch.", "tensorplug.", 1)}
    if r is None or isinstance(r, (bool, int, float)):
        return {"value": r}
    raise TypeError(f"cannot encode {type(r)}")


def main() -> None:
    import torch

    out: dict[str, Any] = {"torch": torch.__version__, "setup": SETUP, "cases": []}
    for expr in EXPRESSIONS:
        shape_only = expr.startswith("shape:")
        code = expr.removeprefix("shape:")
        env: dict[str, Any] = {"T": torch}
        exec(SETUP, env)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                r = eval(code, env)
            except Exception as e:
                case = {"expr": expr, "error": type(e).__name__}
            else:
                enc = encode(r, torch)
                if shape_only:
                    enc.pop("values", None)
                case = {"expr": expr, "result": enc}
        out["cases"].append(case)
    OUT.write_text(json.dumps(out, indent=0) + "\n")
    print(f"wrote {OUT} ({len(out['cases'])} cases)", file=sys.stderr)


if __name__ == "__main__":
    main()
