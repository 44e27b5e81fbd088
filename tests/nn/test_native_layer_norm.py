"""``native_layer_norm`` (array_backend/_nn/_layer_norm.py): PyTorch's CPU dtype rule (the
result in the input's dtype; float32 parameters and statistics allowed with a half precision
input; other mixes refused with PyTorch's messages, recorded from torch 2.13), and one
autograd node for ``F.layer_norm``."""

from __future__ import annotations

import pytest

import tensorplug as tp
from tensorplug.ops import ops


def _run(x_dtype: str, p_dtype: str) -> tuple[str, str]:
    x = tp.randn(2, 4).to(getattr(tp, x_dtype))
    w, b = (tp.randn(4).to(getattr(tp, p_dtype)) for _ in range(2))
    out, mean, _ = ops.aten.native_layer_norm.default(x, [4], w, b, 1e-5)
    return out.dtype.name, mean.dtype.name


@pytest.mark.parametrize(
    ("x_dtype", "p_dtype", "want"),
    [
        ("bfloat16", "float32", ("bfloat16", "float32")),
        ("float16", "float16", ("float16", "float16")),
        ("float64", "float64", ("float64", "float64")),
    ],
)
def test_result_and_statistics_dtypes(x_dtype: str, p_dtype: str, want: tuple[str, str]) -> None:
    assert _run(x_dtype, p_dtype) == want


@pytest.mark.parametrize(
    ("x_dtype", "p_dtype", "message"),
    [
        ("float32", "bfloat16", "expect parameter to have scalar type of Float"),
        ("float64", "float32", "all inputs must share same datatype"),
    ],
)
def test_mixed_dtypes_refused(x_dtype: str, p_dtype: str, message: str) -> None:
    with pytest.raises(
        RuntimeError, match=rf"aten::native_layer_norm: mixed dtype \(CPU\): {message}"
    ):
        _run(x_dtype, p_dtype)


def test_layer_norm_records_one_node() -> None:
    x = tp.randn(3, 4, requires_grad=True)
    y = tp.nn.functional.layer_norm(x, [4], tp.ones(4), tp.zeros(4))
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "AccumulateGrad"
