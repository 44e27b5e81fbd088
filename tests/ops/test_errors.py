"""Bad inputs to the standard operators raise PyTorch's exception types and texts, naming the op.

Every case checks three things: the exception type PyTorch raises, PyTorch's message text
(``match=``), and that the message names the operator as ``aten::<op>`` -- a user must learn
which call failed without reading a numpy traceback.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp


def T(shape: tuple[int, ...], dtype: str = "float32") -> Any:
    return tp.tensor(np.zeros(shape, dtype=dtype))


def I(values: Any) -> Any:  # noqa: E743 - an index tensor
    return tp.tensor(np.asarray(values, dtype=np.int64))


def _is_numpy_exception(e: BaseException) -> bool:
    return type(e).__module__.split(".")[0] == "numpy"


def check_error(call: Callable[[], Any], exc: Any, text: str, op: str | tuple[str, ...]) -> None:
    with pytest.raises(exc, match=re.escape(text)) as info:
        call()
    message = str(info.value)
    ops = (op,) if isinstance(op, str) else op
    assert any(f"aten::{o}" in message for o in ops), (
        f"the message should name the op as aten::{ops[0]}: {message!r}"
    )
    assert not _is_numpy_exception(info.value), f"a raw numpy exception escaped: {info.value!r}"


# (id, call, exception type, PyTorch's text, op name in the message)
ErrorCase = tuple[str, Callable[[], Any], Any, str, Any]

SIZE_MISMATCH = (
    "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
)

SHAPE_CASES: list[ErrorCase] = [
    ("add.Tensor", lambda: tp.add(T((2, 3)), T((2, 4))), RuntimeError, SIZE_MISMATCH, "add"),
    (  # the forward's target checks, shared
        "nll_loss_backward_batch",
        lambda: tp.nll_loss_backward(T(()), T((2, 3)), I([0, 1, 2])),
        RuntimeError,
        "Expected input batch_size (2) to match target batch_size (3).",
        "nll_loss_backward",
    ),
    ("sub.Tensor", lambda: tp.sub(T((2, 3)), T((2, 4))), RuntimeError, SIZE_MISMATCH, "sub"),
    ("mul.Tensor", lambda: tp.mul(T((2, 3)), T((2, 4))), RuntimeError, SIZE_MISMATCH, "mul"),
    ("div.Tensor", lambda: tp.div(T((2, 3)), T((2, 4))), RuntimeError, SIZE_MISMATCH, "div"),
    (
        "add.out",
        lambda: tp.add(T((2, 3)), T((2, 4)), out=T((2, 3))),
        RuntimeError,
        SIZE_MISMATCH,
        "add",
    ),
    ("add_.Tensor", lambda: T((2, 3)).add_(T((2, 4))), RuntimeError, SIZE_MISMATCH, "add_"),
    ("maximum", lambda: tp.maximum(T((2, 3)), T((2, 4))), RuntimeError, SIZE_MISMATCH, "maximum"),
    ("eq.Tensor", lambda: tp.eq(T((2, 3)), T((2, 4))), RuntimeError, SIZE_MISMATCH, "eq"),
    (
        "where.self",
        lambda: tp.where(T((2, 3), "bool"), T((2, 3)), T((2, 4))),
        RuntimeError,
        SIZE_MISMATCH,
        "where",
    ),
    (
        "mm",
        lambda: tp.mm(T((2, 3)), T((4, 5))),
        RuntimeError,
        "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
        "mm",
    ),
    (
        "dot_size",
        lambda: tp.dot(T((3,)), T((4,))),
        RuntimeError,
        "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
        "elements, but got 3 and 4 elements respectively",
        "dot",
    ),
    (
        "dot_2d",
        lambda: tp.dot(T((2, 3)), T((3,))),
        RuntimeError,
        "1D tensors expected, but got 2D and 1D tensors",
        "dot",
    ),
    (
        "outer_2d",
        lambda: tp.outer(T((3,)), T((2, 3))),
        RuntimeError,
        "outer: Expected 1-D argument vec2, but got 2-D",
        "outer",
    ),
    (
        "masked_select",
        lambda: tp.masked_select(T((2, 3)), T((2,), "bool")),
        RuntimeError,
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1",
        "masked_select",
    ),
    (
        "repeat_too_few",
        lambda: T((2, 3)).repeat([2]),
        RuntimeError,
        "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
        "repeat",
    ),
    (
        "roll_shifts_dims",
        lambda: tp.roll(T((2, 3)), [1, 2], [0]),
        RuntimeError,
        "shifts and dimensions must align. shifts: 2, dims:1",
        "roll",
    ),
    (
        "tril_1d",
        lambda: tp.tril(T((3,))),
        RuntimeError,
        "tril: input tensor must have at least 2 dimensions",
        "tril",
    ),
    (
        "triu_0d",
        lambda: tp.triu(T(())),
        RuntimeError,
        "triu: input tensor must have at least 2 dimensions",
        "triu",
    ),
    (
        "diag_3d",
        lambda: tp.diag(T((2, 2, 2))),
        RuntimeError,
        "diag(): Supports 1D or 2D tensors. Got 3D",
        "diag",
    ),
    (
        "unflatten",
        lambda: tp.unflatten(T((2, 12)), 1, [5, -1]),
        RuntimeError,
        "unflatten: Provided sizes [5, -1] don't multiply up to the size of dim 1 (12) in the "
        "input tensor",
        "unflatten",
    ),
    (
        "view_as",
        lambda: T((2, 3)).view_as(T((4,))),
        RuntimeError,
        "shape '[4]' is invalid for input of size 6",
        "view",
    ),
    (
        "expand_as",
        lambda: T((2, 3)).expand_as(T((3, 3))),
        RuntimeError,
        "The expanded size of the tensor (3) must match the existing size (2) at non-singleton "
        "dimension 0.  Target sizes: [3, 3].  Tensor sizes: [2, 3]",
        "expand",
    ),
    (
        "matmul",
        lambda: tp.matmul(T((2, 3)), T((4, 5))),
        RuntimeError,
        "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
        "matmul",
    ),
    (
        "linear",
        lambda: tp.linear(T((2, 3)), T((5, 4))),
        RuntimeError,
        "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
        ("linear", "matmul", "mm", "addmm"),
    ),
    (
        "bmm_2d",
        lambda: tp.bmm(T((2, 3)), T((3, 4))),
        RuntimeError,
        "batch1 must be a 3D tensor",
        "bmm",
    ),
    (
        "cat",
        lambda: tp.cat([T((2, 3)), T((2, 4))]),
        RuntimeError,
        "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor "
        "number 1 in the list.",
        "cat",
    ),
    (
        "stack",
        lambda: tp.stack([T((2, 3)), T((2, 4))]),
        RuntimeError,
        "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 1",
        "stack",
    ),
    (
        "reshape",
        lambda: tp.reshape(T((2, 3)), [4, 2]),
        RuntimeError,
        "shape '[4, 2]' is invalid for input of size 6",
        "reshape",
    ),
    (
        "view",
        lambda: T((2, 3)).view([5]),
        RuntimeError,
        "shape '[5]' is invalid for input of size 6",
        "view",
    ),
    (
        "expand",
        lambda: T((2, 3)).expand([3, 3]),
        RuntimeError,
        "The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 0",
        "expand",
    ),
    (
        "index_put_",
        lambda: tp.index_put_(T((2, 3)), [I([0, 1])], T((3, 3))),
        RuntimeError,
        "shape mismatch: value tensor of shape [3, 3] cannot be broadcast to indexing result of shape [2, 3]",
        "index_put_",
    ),
]

DIM_OUT_OF_RANGE = "Dimension out of range (expected to be in range of [-2, 1], but got 2)"

DIM_CASES: list[ErrorCase] = [
    ("sum.dim_IntList", lambda: tp.sum(T((2, 3)), 2), IndexError, DIM_OUT_OF_RANGE, "sum"),
    (
        "sum.dim_IntList_list",
        lambda: tp.sum(T((2, 3)), [0, 2]),
        IndexError,
        DIM_OUT_OF_RANGE,
        "sum",
    ),
    ("mean.dim", lambda: tp.mean(T((2, 3)), 2), IndexError, DIM_OUT_OF_RANGE, "mean"),
    ("max.dim", lambda: tp.max(T((2, 3)), 2), IndexError, DIM_OUT_OF_RANGE, "max"),
    ("argmax", lambda: tp.argmax(T((2, 3)), 2), IndexError, DIM_OUT_OF_RANGE, "argmax"),
    ("softmax.int", lambda: tp.softmax(T((2, 3)), 2), IndexError, DIM_OUT_OF_RANGE, "softmax"),
    (
        "log_softmax.int",
        lambda: tp.log_softmax(T((2, 3)), 2),
        IndexError,
        DIM_OUT_OF_RANGE,
        "log_softmax",
    ),
    (
        "transpose.int",
        lambda: tp.transpose(T((2, 3)), 0, 2),
        IndexError,
        DIM_OUT_OF_RANGE,
        "transpose",
    ),
    ("select.int", lambda: tp.select(T((2, 3)), 2, 0), IndexError, DIM_OUT_OF_RANGE, "select"),
    ("unbind.int", lambda: tp.unbind(T((2, 3)), 2), IndexError, DIM_OUT_OF_RANGE, "unbind"),
    (
        "unbind_0d",
        lambda: tp.unbind(T(())),
        IndexError,
        "Dimension specified as 0 but tensor has no dimensions",
        "unbind",
    ),
    ("flip", lambda: tp.flip(T((2, 3)), [2]), IndexError, DIM_OUT_OF_RANGE, "flip"),
    ("roll", lambda: tp.roll(T((2, 3)), 1, 2), IndexError, DIM_OUT_OF_RANGE, "roll"),
    ("narrow", lambda: tp.narrow(T((2, 3)), 2, 0, 1), IndexError, DIM_OUT_OF_RANGE, "narrow"),
    ("movedim.int", lambda: tp.movedim(T((2, 3)), 2, 0), IndexError, DIM_OUT_OF_RANGE, "movedim"),
    ("swapaxes", lambda: tp.swapaxes(T((2, 3)), 0, 2), IndexError, DIM_OUT_OF_RANGE, "transpose"),
    (
        "unflatten.int",
        lambda: tp.unflatten(T((2, 3)), 2, [3]),
        IndexError,
        DIM_OUT_OF_RANGE,
        "unflatten",
    ),
    (
        "index_select",
        lambda: tp.index_select(T((2, 3)), 2, I([0])),
        IndexError,
        DIM_OUT_OF_RANGE,
        "index_select",
    ),
    ("cat", lambda: tp.cat([T((2, 3)), T((2, 3))], 2), IndexError, DIM_OUT_OF_RANGE, "cat"),
    ("flatten", lambda: tp.flatten(T((2, 3)), 0, 2), IndexError, DIM_OUT_OF_RANGE, "flatten"),
    ("squeeze.dim", lambda: tp.squeeze(T((2, 3)), 2), IndexError, DIM_OUT_OF_RANGE, "squeeze"),
    ("var.correction", lambda: tp.var(T((2, 3)), 2), IndexError, DIM_OUT_OF_RANGE, "var"),
    (
        "neg_dim",
        lambda: tp.sum(T((2, 3)), -3),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got -3)",
        "sum",
    ),
    (
        "unsqueeze",
        lambda: tp.unsqueeze(T((2, 3)), 3),
        IndexError,
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)",
        "unsqueeze",
    ),
    (
        "0dim",
        lambda: tp.sum(T(()), 1),
        IndexError,
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        "sum",
    ),
]

INDEX_CASES: list[ErrorCase] = [
    (
        "index.Tensor",
        lambda: tp.index(T((3, 2)), [I([0, 5])]),
        IndexError,
        "index 5 is out of bounds for dimension 0 with size 3",
        "index",
    ),
    (
        "index.Tensor_negative",
        lambda: tp.index(T((3, 2)), [I([-4])]),
        IndexError,
        "index -4 is out of bounds for dimension 0 with size 3",
        "index",
    ),
    (
        "index_put_",
        lambda: tp.index_put_(T((3, 2)), [I([5])], T((2,))),
        IndexError,
        "index 5 is out of bounds for dimension 0 with size 3",
        "index_put_",
    ),
    (
        "gather",
        lambda: tp.gather(T((2, 3)), 1, I([[5]])),
        RuntimeError,
        "index 5 is out of bounds for dimension 1 with size 3",
        "gather",
    ),
    (
        "scatter_add",
        lambda: tp.scatter_add(T((3, 3)), 0, I([[5]]), T((1, 1))),
        RuntimeError,
        "index 5 is out of bounds for dimension 0 with size 3",
        "scatter_add",
    ),
    (
        "select.int",
        lambda: tp.select(T((3, 2)), 0, 5),
        IndexError,
        "select(): index 5 out of range for tensor of size [3, 2] at dimension 0",
        "select",
    ),
    (
        "index_select",
        lambda: tp.index_select(T((2, 3)), 1, I([3])),
        IndexError,
        "index out of range in self: index 3 is out of bounds for dimension 1 with size 3",
        "index_select",
    ),
    (
        "index_select_negative",
        lambda: tp.index_select(T((2, 3)), 0, I([-1])),
        IndexError,
        "index out of range in self: index -1 is out of bounds for dimension 0 with size 2",
        "index_select",
    ),
    (
        "index_select_0d",
        lambda: tp.index_select(T(()), 0, I([1])),
        IndexError,
        "index out of range in self",
        "index_select",
    ),
    # scatter / index_add / index_fill / take / masked_scatter: PyTorch 2.13's texts
    (
        "scatter_dtype",
        lambda: T((3, 4)).scatter(0, I([[0, 1]]), T((1, 2), "float64")),
        RuntimeError,
        "scatter(): Expected self.dtype to be equal to src.dtype",
        "scatter",
    ),
    (
        "scatter_index_dtype",
        lambda: T((3, 4)).scatter(0, tp.tensor([[0.0]]), 1.0),
        RuntimeError,
        "scatter(): Expected dtype int32/int64 for index",
        "scatter",
    ),
    (
        "scatter_bounds",
        lambda: T((3, 4)).scatter(0, I([[-1, 1]]), 1.0),
        RuntimeError,
        "index -1 is out of bounds for dimension 0 with size 3",
        "scatter",
    ),
    (
        "scatter_src_size",
        lambda: T((3, 4)).scatter(0, I([[0, 1]]), T((1, 1))),
        RuntimeError,
        "Expected index [1, 2] to be no larger than self [3, 4] apart from dimension 0 and to "
        "be no larger size than src [1, 1]",
        "scatter",
    ),
    (
        "index_add_dtype",
        lambda: T((3, 4)).index_add(0, I([0]), T((1, 4), "float64")),
        RuntimeError,
        "index_add_(): self (Float) and source (Double) must have the same scalar type",
        "index_add",
    ),
    (
        "index_add_index_dtype",
        lambda: T((3, 4)).index_add(0, tp.tensor([0.0]), T((1, 4))),
        RuntimeError,
        "index_add_(): Expected dtype int32/int64 for index but got: Float",
        "index_add",
    ),
    (
        "index_add_count",
        lambda: T((3, 4)).index_add(0, I([0, 1]), T((1, 4))),
        RuntimeError,
        "index_add_(): Number of indices (2) should be equal to source.size(dim): (1), for dim: 0",
        "index_add",
    ),
    (
        "index_add_vector",
        lambda: T((3, 4)).index_add(0, I([[0]]), T((1, 4))),
        IndexError,
        "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: Long and "
        "size: [1, 1]",
        "index_add",
    ),
    (
        "index_add_shape",
        lambda: T((3, 4)).index_add(0, I([0]), T((1, 3))),
        RuntimeError,
        "source tensor shape must match self tensor shape, excluding the specified dimension. "
        "Got self.shape = [3, 4] source.shape = [1, 3]",
        "index_add",
    ),
    (
        "index_add_bounds",
        lambda: T((3, 4)).index_add(0, I([-1]), T((1, 4))),
        RuntimeError,
        "index -1 is out of bounds for dimension 0 with size 3",
        "index_add",
    ),
    (
        "index_fill_bounds",
        lambda: T((3, 4)).index_fill(0, I([-4]), 2.0),
        IndexError,
        "index -4 is out of bounds for dimension 0 with size 3",
        "index_fill",
    ),
    (
        "index_fill_index_dtype",
        lambda: T((3, 4)).index_fill(0, tp.tensor([0.0]), 1.0),
        IndexError,
        "index_fill_(): Expected dtype int64 for index.",
        "index_fill",
    ),
    (
        "index_fill_vector",
        lambda: T((3, 4)).index_fill(0, I([[0]]), 1.0),
        RuntimeError,
        "Index has to be a vector/scalar",
        "index_fill",
    ),
    (
        "index_fill_value",
        lambda: T((3, 4)).index_fill(0, I([0]), T((2,))),
        RuntimeError,
        "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
        "dimension(s).",
        "index_fill",
    ),
    (
        "index_fill_overflow",
        lambda: T((3,), "uint8").index_fill(0, I([0]), 300),
        RuntimeError,
        "value cannot be converted to type uint8 without overflow",
        "index_fill",
    ),
    (
        "take_bounds",
        lambda: T((3, 4)).take(I([12])),
        IndexError,
        "out of range: tried to access index 12 on a tensor of 12 elements.",
        "take",
    ),
    (
        "take_negative",
        lambda: T((3, 4)).take(I([-13])),
        IndexError,
        "out of range: tried to access index -13 on a tensor of 12 elements.",
        "take",
    ),
    (
        "take_index_dtype",
        lambda: T((3, 4)).take(tp.tensor([0], dtype=tp.int32)),
        RuntimeError,
        "take(): Expected a long tensor for index, but got Int",
        "take",
    ),
    (
        "masked_scatter_dtype",
        lambda: T((3,)).masked_scatter(T((3,), "bool"), T((3,), "float64")),
        RuntimeError,
        "masked_scatter: expected self and source to have same dtypes but gotFloat and Double",
        "masked_scatter",
    ),
    (
        "masked_scatter_mask",
        lambda: T((3,)).masked_scatter(T((3,), "uint8"), T((3,))),
        RuntimeError,
        "masked_scatter_ only supports boolean masks, but got mask with dtype Byte",
        "masked_scatter",
    ),
    (
        "masked_scatter_source",
        lambda: T((3,)).masked_scatter(tp.tensor([True, True, True]), T((2,))),
        RuntimeError,
        "Number of elements of source < number of ones in mask",
        "masked_scatter",
    ),
    (
        "narrow_past_the_end",
        lambda: tp.narrow(T((2, 3)), 1, 2, 2),
        RuntimeError,
        "start (2) + length (2) exceeds dimension size (3).",
        "narrow",
    ),
    (
        "narrow_start",
        lambda: tp.narrow(T((2, 3)), 1, -4, 0),
        IndexError,
        "start out of range (expected to be in range of [-3, 3], but got -4)",
        "narrow",
    ),
    (
        "embedding",
        lambda: tp.embedding(T((3, 2)), I([5])),
        IndexError,
        "out of",
        ("embedding", "index"),
    ),
    (
        "nll_loss",
        lambda: tp.nll_loss(T((2, 3)), I([0, 7])),
        IndexError,
        "Target 7 is out of bounds.",
        "nll_loss",
    ),
    (  # the fast path (no weight, nothing ignored) checks negative targets itself
        "nll_loss_backward_negative",
        lambda: tp.nll_loss_backward(T(()), T((2, 3)), I([0, -1])),
        IndexError,
        "Target -1 is out of bounds.",
        "nll_loss_backward",
    ),
    (
        "nll_loss_backward_too_large",
        lambda: tp.nll_loss_backward(T(()), T((2, 3)), I([0, 3])),
        IndexError,
        "index 3 is out of bounds for dimension 1 with size 3",
        "nll_loss_backward",
    ),
    (
        "nll_loss_backward_weighted",
        lambda: tp.nll_loss_backward(T(()), T((2, 3)), I([0, 5]), T((3,))),
        IndexError,
        "index 5 is out of bounds for dimension 0 with size 3",
        "nll_loss_backward",
    ),
]

TYPE_CASES: list[ErrorCase] = [
    ("add_str", lambda: tp.add(T((2,)), "x"), TypeError, "add", "add"),
    ("add_missing_argument", lambda: tp.add(T((2,))), TypeError, "add", "add"),
    ("add_unknown_keyword", lambda: tp.add(T((2,)), T((2,)), bogus=1), TypeError, "bogus", "add"),
    ("sum_dim_str", lambda: tp.sum(T((2,)), "x"), TypeError, "sum", "sum"),
    ("full_fill_str", lambda: tp.full([2], "x"), TypeError, "fill_value", "full"),
    ("zeros_dtype_str", lambda: tp.zeros([2], dtype="float32"), TypeError, "dtype", "zeros"),
    ("mm_list", lambda: tp.mm([[1.0]], T((1, 1))), TypeError, "mm", "mm"),
    ("cat_not_a_list", lambda: tp.cat(T((2,))), TypeError, "cat", "cat"),
    (
        "transpose_float_dim",
        lambda: tp.transpose(T((2, 3)), 0.5, 1),
        TypeError,
        "transpose",
        "transpose",
    ),
]

SEMANTIC_CASES: list[ErrorCase] = [
    (
        "add_int_float_alpha",
        lambda: tp.add(T((2,), "int64"), T((2,), "int64"), alpha=0.5),
        RuntimeError,
        "For integral input tensors, argument alpha must not be a floating point number.",
        "add",
    ),
    (
        "sub_bool",
        lambda: tp.sub(T((2,), "bool"), T((2,), "bool")),
        RuntimeError,
        "Subtraction, the `-` operator, with two bool tensors is not supported.",
        "sub",
    ),
    (
        "sub_one_bool",
        lambda: tp.sub(T((2,), "float32"), T((2,), "bool")),
        RuntimeError,
        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
        "invert a mask, use the `~` or `logical_not()` operator instead.",
        "sub",
    ),
    (
        "sub_bool_python_scalar",
        lambda: tp.sub(T((2,), "int64"), True),
        RuntimeError,
        "Subtraction, the `-` operator, with a bool tensor is not supported.",
        "sub",
    ),
    (
        "sub_bool_tensor_and_python_bool",
        lambda: tp.sub(T((2,), "bool"), True),
        RuntimeError,
        "Subtraction, the `-` operator, with two bool tensors is not supported.",
        "sub",
    ),
    (
        "rsub_bool",
        lambda: tp.rsub(T((2,), "bool"), 1),
        RuntimeError,
        "Subtraction, the `-` operator, with a bool tensor is not supported.",
        "rsub",
    ),
    (
        "sub_inplace_bool_other",
        lambda: T((2,), "float32").sub_(T((2,), "bool")),
        RuntimeError,
        "Subtraction, the `-` operator, with a bool tensor is not supported.",
        "sub_",
    ),
    (
        "neg_bool",
        lambda: tp.neg(T((2,), "bool")),
        RuntimeError,
        "Negation, the `-` operator, on a bool tensor is not supported.",
        "neg",
    ),
    (
        "mean_int",
        lambda: tp.mean(T((2,), "int64")),
        RuntimeError,
        "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
        "dtype. Got: Long",
        "mean",
    ),
    (
        "pow_int_negative",
        lambda: tp.pow(T((2,), "int64"), -1),
        RuntimeError,
        "Integers to negative integer powers are not allowed.",
        "pow",
    ),
    (
        "inplace_cast",
        lambda: T((2,), "int64").add_(1.5),
        RuntimeError,
        "result type Float can't be cast to the desired output type Long",
        "add_",
    ),
    (
        "div_inplace_int",
        lambda: T((2,), "int64").div_(T((2,), "int64")),
        RuntimeError,
        "result type Float can't be cast to the desired output type Long",
        "div_",
    ),
    (
        "where_float_condition",
        lambda: tp.where(T((2,)), T((2,)), T((2,))),
        RuntimeError,
        "where expected condition to be a boolean tensor, but got a tensor with dtype Float",
        "where",
    ),
    (
        "clamp_no_bounds",
        lambda: tp.clamp(T((2,))),
        RuntimeError,
        "At least one of 'min' or 'max' must not be None",
        "clamp",
    ),
    (
        "max_empty",
        lambda: tp.max(T((0,))),
        RuntimeError,
        "max(): Expected reduction dim to be specified for input.numel() == 0.",
        "max",
    ),
    (
        "permute_duplicate",
        lambda: tp.permute(T((2, 3)), [0, 0]),
        RuntimeError,
        "permute(): duplicate dims are not allowed.",
        "permute",
    ),
    (
        "movedim_repeated",
        lambda: tp.movedim(T((2, 3, 4)), [0, -3], [1, 2]),
        RuntimeError,
        "movedim: repeated dim in `source` ([0, -3])",
        "movedim",
    ),
    (
        "movedim_lengths",
        lambda: tp.movedim(T((2, 3, 4)), [0, 1], [2]),
        RuntimeError,
        "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the "
        "same number of dims as destination ([2] dims)",
        "movedim",
    ),
    (
        "flip_duplicate",
        lambda: tp.flip(T((2, 3)), [0, -2]),
        RuntimeError,
        "dim 0 appears multiple times in the list of dims",
        "flip",
    ),
    ("roll_no_shifts", lambda: tp.roll(T((2,)), [], []), RuntimeError, "`shifts` required", "roll"),
    (
        "repeat_negative",
        lambda: T((2, 3)).repeat([-1, 2]),
        RuntimeError,
        "Trying to create tensor with negative dimension -2: [-2, 6]",
        "repeat",
    ),
    (
        "narrow_negative_length",
        lambda: tp.narrow(T((2, 3)), 1, 0, -1),
        RuntimeError,
        "narrow(): length must be non-negative.",
        "narrow",
    ),
    (
        "narrow_0d",
        lambda: tp.narrow(T(()), 0, 0, 1),
        RuntimeError,
        "narrow() cannot be applied to a 0-dim tensor.",
        "narrow",
    ),
    (
        "narrow_float_start",
        lambda: tp.narrow(T((3,)), 0, tp.tensor(1.0), 1),
        RuntimeError,
        "start must be an 0-dim integral Tensor.",
        "narrow",
    ),
    (
        "unflatten_no_sizes",
        lambda: tp.unflatten(T((2, 3)), 1, []),
        RuntimeError,
        "unflatten: sizes must be non-empty",
        "unflatten",
    ),
    (
        "unflatten_two_inferred",
        lambda: tp.unflatten(T((2, 12)), 1, [-1, -1]),
        RuntimeError,
        "only one dimension can be inferred",
        "unflatten",
    ),
    (
        "index_select_float_index",
        lambda: tp.index_select(T((2, 3)), 1, T((1,))),
        RuntimeError,
        "index_select(): Expected dtype int32 or int64 for index",
        "index_select",
    ),
    (
        "index_select_matrix_index",
        lambda: tp.index_select(T((2, 3)), 1, I([[0]])),
        IndexError,
        "index_select(): Index is supposed to be a vector",
        "index_select",
    ),
    (
        "index_select_0d_two_values",
        lambda: tp.index_select(T(()), 0, I([0, 0])),
        RuntimeError,
        "index_select(): Index to scalar can have only 1 value, got 2 value(s)",
        "index_select",
    ),
    (
        "masked_select_uint8_mask",
        lambda: tp.masked_select(T((2,)), T((2,), "uint8")),
        RuntimeError,
        "masked_select: expected BoolTensor for mask",
        "masked_select",
    ),
    (
        "dot_dtypes",
        lambda: tp.dot(T((3,)), T((3,), "float64")),
        RuntimeError,
        "dot : expected both vectors to have same dtype, but found Float and Double",
        "dot",
    ),
    (
        "dot_bool",
        lambda: tp.dot(T((3,), "bool"), T((3,), "bool")),
        NotImplementedError,
        "\"dot\" not implemented for 'Bool'",
        "dot",
    ),
    (
        "split_zero",
        lambda: tp.split(T((2, 3)), 0),
        RuntimeError,
        "split_size can only be 0 if dimension size is 0, but got dimension size of 2",
        "split",
    ),
    (
        "chunk_zero",
        lambda: tp.chunk(T((2, 3)), 0),
        RuntimeError,
        "chunk expects `chunks` to be greater than 0, got: 0",
        "chunk",
    ),
    (
        "cat_empty_list",
        lambda: tp.cat([]),
        ValueError,
        "expected a non-empty list of Tensors",
        "cat",
    ),
    (
        "dropout_p",
        lambda: tp.dropout(T((2,)), 1.5, True),
        ValueError,
        "dropout probability has to be between 0 and 1, but got 1.5",
        "dropout",
    ),
    (
        "eye_negative",
        lambda: tp.eye(-1),
        RuntimeError,
        "n must be greater or equal to 0, got -1",
        "eye",
    ),
    (
        "randint_empty_range",
        lambda: tp.randint(0, [2]),
        RuntimeError,
        "random_ expects 'from' to be less than 'to', but got from=0 >= to=0",
        "randint",
    ),
]


def _params(cases: list[ErrorCase]) -> list[Any]:
    return [pytest.param(call, exc, text, op, id=name) for name, call, exc, text, op in cases]


@pytest.mark.parametrize(("call", "exc", "text", "op"), _params(SHAPE_CASES))
def test_shape_mismatch(call: Callable[[], Any], exc: Any, text: str, op: Any) -> None:
    check_error(call, exc, text, op)


@pytest.mark.parametrize(("call", "exc", "text", "op"), _params(DIM_CASES))
def test_dim_out_of_range(call: Callable[[], Any], exc: Any, text: str, op: Any) -> None:
    check_error(call, exc, text, op)


@pytest.mark.parametrize(("call", "exc", "text", "op"), _params(INDEX_CASES))
def test_index_out_of_bounds(call: Callable[[], Any], exc: Any, text: str, op: Any) -> None:
    check_error(call, exc, text, op)


@pytest.mark.parametrize(("call", "exc", "text", "op"), _params(TYPE_CASES))
def test_wrong_argument_type(call: Callable[[], Any], exc: Any, text: str, op: Any) -> None:
    check_error(call, exc, text, op)


@pytest.mark.parametrize(("call", "exc", "text", "op"), _params(SEMANTIC_CASES))
def test_invalid_values(call: Callable[[], Any], exc: Any, text: str, op: Any) -> None:
    check_error(call, exc, text, op)


def F(values: Any, dtype: str = "float32") -> Any:
    return tp.tensor(np.asarray(values, dtype=dtype))


BERNOULLI_P = "Expected p_in >= 0 && p_in <= 1 to be true, but got false."
MULTINOMIAL_BAD = "probability tensor contains either `inf`, `nan` or element < 0"

# The random ops' parameter and dtype checks, PyTorch 2.13's texts and check order (the
# distribution's parameters before the dtype)
RANDOM_CASES: list[ErrorCase] = [
    ("randperm_negative", lambda: tp.randperm(-1), RuntimeError,
     "Trying to create tensor with negative dimension -1: [-1]", "randperm"),
    ("randperm_half", lambda: tp.randperm(2050, dtype=tp.float16), RuntimeError,
     "n cannot be greater than 2049 for Half type.", "randperm"),
    ("randperm_int8", lambda: tp.randperm(300, dtype=tp.int8), RuntimeError,
     "without overflow", "randperm"),
    ("randperm_bool", lambda: tp.randperm(2, dtype=tp.bool), NotImplementedError,
     "\"randperm\" not implemented for 'Bool'", "randperm"),
    ("multinomial_negative", lambda: tp.multinomial(F([0.5, -0.1]), 1), RuntimeError,
     MULTINOMIAL_BAD, "multinomial"),
    ("multinomial_inf", lambda: tp.multinomial(F([0.5, np.inf]), 1), RuntimeError,
     MULTINOMIAL_BAD, "multinomial"),
    ("multinomial_nan", lambda: tp.multinomial(F([[0.5, 0.5], [np.nan, 1]]), 1, True),
     RuntimeError, MULTINOMIAL_BAD, "multinomial"),
    ("multinomial_zero_row", lambda: tp.multinomial(F([[1.0, 0.0], [0.0, 0.0]]), 1),
     RuntimeError, "invalid multinomial distribution (sum of probabilities <= 0)", "multinomial"),
    ("multinomial_too_many", lambda: tp.multinomial(F([0.5, 0.5]), 3), RuntimeError,
     "cannot sample n_sample > prob_dist.size(-1) samples without replacement", "multinomial"),
    ("multinomial_no_samples", lambda: tp.multinomial(F([0.5, 0.5]), 0), RuntimeError,
     "cannot sample n_sample <= 0 samples", "multinomial"),
    ("multinomial_3d", lambda: tp.multinomial(T((2, 2, 2)), 1), RuntimeError,
     "prob_dist must be 1 or 2 dim", "multinomial"),
    ("multinomial_long", lambda: tp.multinomial(F([1, 2], "int64"), 1), RuntimeError,
     "multinomial only supports floating-point dtypes for input, got: Long", "multinomial"),
    ("normal_std_negative", lambda: tp.normal(T((3,)), -1.0), RuntimeError,
     "normal expects std >= 0.0, but found std -1", "normal"),
    ("normal_std_nan", lambda: tp.normal(0.0, float("nan"), [2]), RuntimeError,
     "normal expects std >= 0.0, but found std nan", "normal"),
    ("normal_std_tensor", lambda: tp.normal(T((3,)), F([1.0, -1.0, 1.0])), RuntimeError,
     "normal expects all elements of std >= 0.0", "normal"),
    ("normal_float_std_tensor", lambda: tp.normal(0.0, F([np.nan])), RuntimeError,
     "normal expects all elements of std >= 0.0", "normal"),
    ("normal_shapes", lambda: tp.normal(T((2, 2)), T((4,))), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 1",
     "normal"),
    ("normal_long", lambda: tp.normal(T((3,), "int64"), 1.0), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'", "normal"),
    ("normal_dtype", lambda: tp.normal(0.0, 1.0, [2], dtype=tp.int64), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'", "normal"),
    ("normal__std", lambda: T((3,), "int64").normal_(0.0, -1.0), RuntimeError,
     "normal expects std >= 0.0, but found std -1", "normal_"),
    ("bernoulli_p_above_1", lambda: tp.bernoulli(F([0.5, 1.5])), RuntimeError, BERNOULLI_P,
     "bernoulli"),
    ("bernoulli_p_nan", lambda: tp.bernoulli(F([np.nan])), RuntimeError, BERNOULLI_P,
     "bernoulli"),
    ("bernoulli_long", lambda: tp.bernoulli(F([0, 1], "int64")), NotImplementedError,
     "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'", "bernoulli"),
    ("bernoulli_float_p", lambda: tp.bernoulli(T((3,)), 1.5), RuntimeError,
     "bernoulli_ expects p to be in [0, 1], but got p=1.5", "bernoulli"),
    ("bernoulli__p", lambda: T((3,)).bernoulli_(-0.5), RuntimeError,
     "bernoulli_ expects p to be in [0, 1], but got p=-0.5", "bernoulli_"),
    ("uniform__range", lambda: T((3,)).uniform_(2, 1), RuntimeError,
     "uniform_ expects to return a [from, to) range, but found from=2 > to=1", "uniform_"),
    ("uniform__long", lambda: T((3,), "int64").uniform_(), NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'", "uniform_"),
    ("exponential__lambda", lambda: T((3,)).exponential_(0.0), RuntimeError,
     "exponential_ expects lambda > 0.0, but found lambda=0", "exponential_"),
    ("exponential__long", lambda: T((3,), "int64").exponential_(), RuntimeError,
     "Exponential distribution is a continuous probability distribution. dtype must be a "
     "floating point but you specified Long", "exponential_"),
    ("random__empty_range", lambda: T((3,)).random_(5, 2), RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=2", "random_"),
    ("random__from_bounds", lambda: T((3,), "int8").random_(-200, 0), RuntimeError,
     "from is out of bounds for signed char", "random_"),
    ("random__to_bounds", lambda: T((3,), "bool").random_(3), RuntimeError,
     "to - 1 is out of bounds for bool", "random_"),
    ("random__to_inc", lambda: T((3,)).random_(2**25, None), RuntimeError,
     "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to "
     "dtype, but got from=33554432 > to_inc=16777216", "random_"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "exc", "text", "op"), _params(RANDOM_CASES))
def test_random_op_checks(call: Callable[[], Any], exc: Any, text: str, op: Any) -> None:
    check_error(call, exc, text, op)


# aminmax, searchsorted / bucketize, isclose, unique, diagonal, tril_ / triu_, logspace: PyTorch
# 2.13's texts (checked against torch)
SEARCH_AND_SHAPE_CASES: list[ErrorCase] = [
    (
        "aminmax_empty",
        lambda: tp.aminmax(T((0, 3))),
        RuntimeError,
        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
        "identity.",
        "aminmax",
    ),
    (
        "aminmax_empty_dim",
        lambda: tp.aminmax(T((0, 3)), dim=0),
        IndexError,
        "aminmax: Expected reduction dim 0 to have non-zero size.",
        "aminmax",
    ),
    (
        "aminmax_complex",
        lambda: tp.aminmax(T((2,), "complex64")),
        NotImplementedError,
        "\"aminmax_cpu\" not implemented for 'ComplexFloat'",
        "aminmax",
    ),
    (
        "aminmax_dim",
        lambda: tp.aminmax(T((2, 3)), dim=2),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        "aminmax",
    ),
    (
        "searchsorted_side",
        lambda: tp.searchsorted(I([1, 2]), I([1]), side="foo"),
        RuntimeError,
        "torch.searchsorted(): side can only be 'left' or 'right' but got foo",
        "searchsorted.Tensor",
    ),
    (
        "searchsorted_opposites",
        lambda: tp.searchsorted(I([1, 2]), I([1]), side="left", right=True),
        RuntimeError,
        "torch.searchsorted(): side and right can't be set to opposites, got side of left while "
        "right was True",
        "searchsorted.Tensor",
    ),
    (
        "searchsorted_leading_dims",
        lambda: tp.searchsorted(I([[1, 3], [2, 4]]), I([2])),
        RuntimeError,
        "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
        "dimensions of boundaries tensor and input value tensor must match, but we got "
        "boundaries tensor [2, 2] and input value tensor [1]",
        "searchsorted.Tensor",
    ),
    (
        "searchsorted_0d_boundaries",
        lambda: tp.searchsorted(I(1), I([2])),
        RuntimeError,
        "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
        "dimension",
        "searchsorted.Tensor",
    ),
    (
        "searchsorted_0d_value",
        lambda: tp.searchsorted(I([[1, 3]]), I(3)),
        RuntimeError,
        "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
        "is 1, but we got boundaries tensor dim(2) and input value's dim(0) numel(1)",
        "searchsorted.Tensor",
    ),
    (
        "searchsorted_sorter_size",
        lambda: tp.searchsorted(I([5, 1, 3]), I([2]), sorter=I([1, 2])),
        RuntimeError,
        "torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
        "tensor [3]and got sorter tensor [2]",
        "searchsorted.Tensor",
    ),
    (
        "searchsorted_sorter_dtype",
        lambda: tp.searchsorted(I([5, 1, 3]), I([2]), sorter=tp.tensor([1, 2, 0], dtype=tp.int32)),
        RuntimeError,
        "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype Int",
        "searchsorted.Tensor",
    ),
    (
        "searchsorted_sorter_range",
        lambda: tp.searchsorted(I([5, 1, 3]), I([2]), sorter=I([1, 2, 3])),
        RuntimeError,
        "torch.searchsorted(): sorter index out of range",
        "searchsorted.Tensor",
    ),
    (
        "searchsorted_complex",
        lambda: tp.searchsorted(T((2,), "complex64"), T((1,), "complex64")),
        NotImplementedError,
        "\"searchsorted_out_cpu\" not implemented for 'ComplexFloat'",
        "searchsorted.Tensor",
    ),
    (
        "searchsorted_bool",
        lambda: tp.searchsorted(T((2,), "bool"), T((1,), "bool")),
        NotImplementedError,
        "\"searchsorted_out_cpu\" not implemented for 'Bool'",
        "searchsorted.Tensor",
    ),
    (
        "bucketize_2d",
        lambda: tp.bucketize(I([1]), I([[1, 2]])),
        RuntimeError,
        "boundaries tensor must be 1 dimension, but got dim(2)",
        "bucketize.Tensor",
    ),
    (
        "isclose_dtype",
        lambda: tp.isclose(T((2,)), T((2,), "float64")),
        RuntimeError,
        "Float did not match Double",
        "isclose",
    ),
    (
        "isclose_rtol",
        lambda: tp.isclose(T((2,)), T((2,)), rtol=-1.0),
        RuntimeError,
        "rtol must be greater than or equal to zero, but got -1",
        "isclose",
    ),
    (
        "isclose_atol",
        lambda: tp.isclose(T((2,)), T((2,)), atol=-0.5),
        RuntimeError,
        "atol must be greater than or equal to zero, but got -0.5",
        "isclose",
    ),
    (
        "isclose_shape",
        lambda: tp.isclose(T((2,)), T((3,))),
        RuntimeError,
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
        "isclose",
    ),
    (
        "unique_complex",
        lambda: tp.unique(T((2,), "complex64")),
        NotImplementedError,
        "\"unique\" not implemented for 'ComplexFloat'",
        "_unique2",
    ),
    (
        "unique_dim_complex",
        lambda: tp.unique(T((1, 1), "complex64"), dim=0),
        NotImplementedError,
        "\"unique_dim\" not implemented for 'ComplexFloat'",
        "unique_dim",
    ),
    (
        "unique_dim_0d",
        lambda: tp.unique(T(()), dim=0),
        IndexError,
        "Dimension specified as 0 but tensor has no dimensions",
        "unique_dim",
    ),
    (
        "unique_dim_range",
        lambda: tp.unique(T((2, 2)), dim=2),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        "unique_dim",
    ),
    (
        "unique_dim_zero_unselected",
        lambda: tp.unique(T((2, 0)), dim=0),
        RuntimeError,
        "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied",
        "unique_dim",
    ),
    (
        "unique_dim_two_zero_dims",
        lambda: tp.unique(T((0, 0)), dim=0),
        RuntimeError,
        "Number of zero sized dimensions is more than one, so unique cannot be applied",
        "unique_dim",
    ),
    (
        "diagonal_same_dims",
        lambda: T((2, 3, 4)).diagonal(0, 1, -2),
        RuntimeError,
        "diagonal dimensions cannot be identical 1, -2",
        "diagonal",
    ),
    (
        "diagonal_dim_range",
        lambda: T((2, 3)).diagonal(0, 0, 2),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        "diagonal",
    ),
    (
        "diagonal_1d",
        lambda: T((2,)).diagonal(),
        IndexError,
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        "diagonal",
    ),
    (
        "tril__1d",
        lambda: T((3,)).tril_(),
        RuntimeError,
        "tril: input tensor must have at least 2 dimensions",
        "tril_",
    ),
    (
        "triu__1d",
        lambda: T((3,)).triu_(),
        RuntimeError,
        "triu: input tensor must have at least 2 dimensions",
        "triu_",
    ),
    (
        "logspace_negative_steps",
        lambda: tp.logspace(0, 1, -1),
        RuntimeError,
        "number of steps must be non-negative",
        "logspace",
    ),
    (
        "logspace_bool",
        lambda: tp.logspace(0, 1, 3, dtype=tp.bool),
        NotImplementedError,
        "\"logspace_cpu\" not implemented for 'Bool'",
        "logspace",
    ),
]


@pytest.mark.parametrize(("call", "exc", "text", "op"), _params(SEARCH_AND_SHAPE_CASES))
def test_search_and_shape_ops(call: Callable[[], Any], exc: Any, text: str, op: Any) -> None:
    check_error(call, exc, text, op)


def B(values: Any) -> Any:
    return tp.tensor(np.asarray(values, dtype=bool))


CAST_FLOAT_TO_LONG = "result type Float can't be cast to the desired output type Long"
ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2."
)

# PyTorch's refusals of the pointwise ops of dtypes they do not take, in PyTorch's check order
# (argument checks, broadcast against self for in-place ops, the cast of the result, the kernel)
POINTWISE_DTYPE_CASES: list[ErrorCase] = [
    *(
        (
            f"{op}_bool",
            lambda op=op: getattr(tp, op)(T((2,), "bool")),
            RuntimeError,
            f"\"{op}_vml_cpu\" not implemented for 'Bool'",
            op,
        )
        for op in ("floor", "ceil", "trunc", "round")
    ),
    *(
        (
            f"{op}_complex",
            lambda op=op: getattr(tp, op)(T((2,), "complex64")),
            RuntimeError,
            f"{op} is not supported for complex inputs",
            op,
        )
        for op in ("floor", "ceil", "trunc")
    ),
    (
        "round_decimals_int",
        lambda: tp.round(T((2,), "int64"), decimals=1),
        RuntimeError,
        "\"round_cpu\" not implemented for 'Long'",
        "round",
    ),
    (
        "round_decimals_zero_int",  # round() takes integers, round(decimals=0) does not
        lambda: tp.round(T((2,), "int32"), decimals=0),
        RuntimeError,
        "\"round_vml_cpu\" not implemented for 'Int'",
        "round",
    ),
    (
        "frac_int",
        lambda: tp.frac(T((2,), "int64")),
        RuntimeError,
        "\"frac_cpu\" not implemented for 'Long'",
        "frac",
    ),
    (
        "erf_complex",
        lambda: tp.erf(T((2,), "complex64")),
        RuntimeError,
        "\"erf_vml_cpu\" not implemented for 'ComplexFloat'",
        "erf",
    ),
    (
        "abs_bool",
        lambda: tp.abs(T((2,), "bool")),
        RuntimeError,
        "\"abs_cpu\" not implemented for 'Bool'",
        "abs",
    ),
    (
        "abs__complex",
        lambda: T((2,), "complex64").abs_(),
        RuntimeError,
        "In-place abs is not supported for complex tensors.",
        "abs_",
    ),
    ("exp__int", lambda: T((2,), "int64").exp_(), RuntimeError, CAST_FLOAT_TO_LONG, "exp_"),
    ("sqrt__int", lambda: tp.sqrt_(T((2,), "int64")), RuntimeError, CAST_FLOAT_TO_LONG, "sqrt_"),
    (
        "square__bool",  # a bool squares to int64
        lambda: T((2,), "bool").square_(),
        RuntimeError,
        "result type Long can't be cast to the desired output type Bool",
        "square_",
    ),
    (
        "neg__bool",
        lambda: T((2,), "bool").neg_(),
        RuntimeError,
        "Negation, the `-` operator, on a bool tensor is not supported.",
        "neg_",
    ),
    (
        "clamp_min_bool_scalar",
        lambda: tp.clamp_min(T((2,), "bool"), True),
        RuntimeError,
        "\"clamp_min_scalar_cpu\" not implemented for 'Bool'",
        "clamp_min",
    ),
    (
        "clamp_max_complex",
        lambda: tp.clamp_max(T((2,), "complex64"), 1),
        RuntimeError,
        "clamp is not supported for complex types",
        "clamp_max",
    ),
    (
        "clamp_min_tensor_complex",
        lambda: tp.clamp_min(T((2,)), T((2,), "complex64")),
        RuntimeError,
        "\"maximum_cpu\" not implemented for 'ComplexFloat'",
        "clamp_min",
    ),
    (
        "clamp_min__tensor_shape_first",
        lambda: T((3, 1), "int64").clamp_min_(T((3, 4), "complex64")),
        RuntimeError,
        "output with shape [3, 1] doesn't match the broadcast shape [3, 4]",
        "clamp_min_",
    ),
    (
        "clamp_max__tensor_cast_before_kernel",
        lambda: T((3,), "int64").clamp_max_(T((3,), "complex64")),
        RuntimeError,
        "result type ComplexFloat can't be cast to the desired output type Long",
        "clamp_max_",
    ),
    (
        "lerp_end_dtype",
        lambda: tp.lerp(T((3,)), T((3,), "float64"), 0.5),
        RuntimeError,
        "expected dtype float for `end` but got dtype double",
        "lerp",
    ),
    (
        "lerp_weight_dtype",
        lambda: tp.lerp(T((3,)), T((3,)), T((3,), "int64")),
        RuntimeError,
        "expected dtype float for `weight` but got dtype long int",
        "lerp",
    ),
    (
        "lerp_int",
        lambda: tp.lerp(T((3,), "int64"), T((3,), "int64"), 1),
        RuntimeError,
        "\"lerp_kernel_scalar\" not implemented for 'Long'",
        "lerp",
    ),
    (
        "lerp_complex_weight",
        lambda: tp.lerp(T((3,)), T((3,)), 1 + 2j),
        RuntimeError,
        "value cannot be converted to type float without overflow",
        "lerp",
    ),
    (
        "lerp__dtype_before_shape",
        lambda: T((3,)).lerp_(T((2, 3)), T((3,), "float64")),
        RuntimeError,
        "expected dtype float for `weight` but got dtype double",
        "lerp_",
    ),
    (
        "lerp__shape",
        lambda: T((3,), "int64").lerp_(T((2, 3), "int64"), 0.5),
        RuntimeError,
        "output with shape [3] doesn't match the broadcast shape [2, 3]",
        "lerp_",
    ),
    (
        "addcmul_bool",
        lambda: tp.addcmul(T((2,), "bool"), T((2,), "bool"), T((2,), "bool")),
        RuntimeError,
        "\"addcmul_cpu_out\" not implemented for 'Bool'",
        "addcmul",
    ),
    (
        "addcmul_shapes",
        lambda: tp.addcmul(T((3,)), T((2,)), T((3,))),
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0",
        "addcmul",
    ),
    (
        "addcmul_complex_value",
        lambda: tp.addcmul(T((2,), "float16"), T((2,), "float16"), T((2,), "float16"), value=1j),
        RuntimeError,
        "value cannot be converted to type float without overflow",
        "addcmul",
    ),
    (
        "addcmul__cast",
        lambda: T((2,), "int64").addcmul_(T((2,)), T((2,))),
        RuntimeError,
        CAST_FLOAT_TO_LONG,
        "addcmul_",
    ),
    (
        "addcdiv_integers",
        lambda: tp.addcdiv(T((2,)), T((2,), "int64"), T((2,), "bool")),
        RuntimeError,
        ADDCDIV_INTEGER,
        "addcdiv",
    ),
    (
        "pow__negative_int_exponent",
        lambda: T((2,), "uint8").pow_(-1),
        RuntimeError,
        "Integers to negative integer powers are not allowed.",
        "pow_",
    ),
    (
        "pow_bool",
        lambda: tp.pow(T((2,), "bool"), T((2,), "bool")),
        RuntimeError,
        "\"pow\" not implemented for 'Bool'",
        "pow",
    ),
    (
        "pow__shape",
        lambda: T((3,)).pow_(T((2, 3))),
        RuntimeError,
        "output with shape [3] doesn't match the broadcast shape [2, 3]",
        "pow_",
    ),
    (
        "masked_fill_value_dims",
        lambda: tp.masked_fill(T((3,)), B([True, False, True]), T((1,))),
        RuntimeError,
        "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
        "dimension(s).",
        "masked_fill",
    ),
    (
        "masked_fill__shape",
        lambda: T((3,)).masked_fill_(B(np.ones((2, 3))), 1.0),
        RuntimeError,
        "output with shape [3] doesn't match the broadcast shape [2, 3]",
        "masked_fill_",
    ),
    ("log10__int", lambda: T((2,), "int64").log10_(), RuntimeError, CAST_FLOAT_TO_LONG, "log10_"),
    (
        "atan2__int",
        lambda: T((2,), "int64").atan2_(T((2,))),
        RuntimeError,
        CAST_FLOAT_TO_LONG,
        "atan2_",
    ),
    (
        "atan2_complex",
        lambda: tp.atan2(T((2,), "complex64"), T((2,), "complex64")),
        RuntimeError,
        "\"atan2_cpu\" not implemented for 'ComplexFloat'",
        "atan2",
    ),
    (
        "hypot_int",
        lambda: tp.hypot(T((2,), "int64"), T((2,), "int64")),
        RuntimeError,
        "\"hypot_cpu\" not implemented for 'Long'",
        "hypot",
    ),
    (
        "fmod_bool",
        lambda: tp.fmod(T((2,), "bool"), T((2,), "bool")),
        RuntimeError,
        "\"fmod_cpu\" not implemented for 'Bool'",
        "fmod",
    ),
    (
        "fmod_int_zero",
        lambda: tp.fmod(I([3, 4]), I([1, 0])),
        RuntimeError,
        "ZeroDivisionError",
        "fmod",
    ),
    ("fmod_scalar_int_zero", lambda: tp.fmod(I([3]), 0), RuntimeError, "ZeroDivisionError", "fmod"),
    (
        "fmod__shape",
        lambda: T((3,)).fmod_(T((2, 3))),
        RuntimeError,
        "output with shape [3] doesn't match the broadcast shape [2, 3]",
        "fmod_",
    ),
    (
        "heaviside_dtypes",
        lambda: tp.heaviside(T((2,)), T((2,), "float64")),
        RuntimeError,
        "heaviside is not yet implemented for tensors with different dtypes.",
        "heaviside",
    ),
    (
        "heaviside__dtypes_before_cast",
        lambda: T((2,), "int64").heaviside_(T((2,))),
        RuntimeError,
        "heaviside is not yet implemented for tensors with different dtypes.",
        "heaviside_",
    ),
    (
        "heaviside_complex",
        lambda: tp.heaviside(T((2,), "complex64"), T((2,), "complex64")),
        RuntimeError,
        "heaviside is not yet implemented for complex tensors.",
        "heaviside",
    ),
    *(
        (
            f"{op}_complex",
            lambda op=op: getattr(tp, op)(T((2,), "complex64"), T((2,), "complex64")),
            RuntimeError,
            f"{op} not implemented for complex tensors.",
            op,
        )
        for op in ("fmax", "fmin")
    ),
    (
        "signbit_complex",
        lambda: tp.signbit(T((2,), "complex64")),
        RuntimeError,
        "signbit is not implemented for complex tensors.",
        "signbit",
    ),
    (
        "logit_complex",
        lambda: tp.logit(T((2,), "complex64")),
        RuntimeError,
        "\"logit_cpu\" not implemented for 'ComplexFloat'",
        "logit",
    ),
    (
        "clip_no_bounds",  # clip is clamp: clamp's message
        lambda: tp.clip(T((2,))),
        RuntimeError,
        "torch.clamp: At least one of 'min' or 'max' must not be None",
        "clamp",
    ),
]


@pytest.mark.parametrize(("call", "exc", "text", "op"), _params(POINTWISE_DTYPE_CASES))
def test_pointwise_dtype_refusals(call: Callable[[], Any], exc: Any, text: str, op: Any) -> None:
    check_error(call, exc, text, op)


def test_clamp_in_place_keeps_the_tensor_s_dtype_and_shape() -> None:
    ints = tp.tensor([1, 5, 9])
    with pytest.raises(
        RuntimeError,
        match=r"^aten::clamp_: result type Float can't be cast to the desired output type Long$",
    ):
        ints.clamp_(0.5, 2.5)
    assert ints.tolist() == [1, 5, 9]  # nothing written
    small = tp.zeros([3])
    with pytest.raises(
        RuntimeError,
        match=r"^aten::clamp_\.Tensor: output with shape \[3\] doesn't match the broadcast shape \[2, 3\]$",
    ):
        small.clamp_(tp.zeros([2, 3]))


def test_flatten_checks_its_dims_on_a_0d_tensor() -> None:
    scalar = tp.tensor(1.0)
    assert tp.flatten(scalar, 0, -1).shape == (1,)  # -1 and 0 are its dims, as in PyTorch
    with pytest.raises(
        IndexError,
        match=r"^aten::flatten\.using_ints: Dimension out of range \(expected to be in range of \[-1, 0\], but got 5\)$",
    ):
        tp.flatten(scalar, 5, 7)


def test_wrong_type_names_argument_and_expected_type() -> None:
    with pytest.raises(TypeError) as info:
        tp.full([2], "x")
    message = str(info.value)
    assert "fill_value" in message and "Scalar" in message and "str" in message, message


@pytest.mark.parametrize("name", ["flaot32", "float", "int128"])
def test_unknown_dtype_names(name: str) -> None:
    if name == "float":  # a PyTorch alias, valid
        assert tp.dtypes.from_name(name) == tp.float32
        return
    with pytest.raises((TypeError, ValueError), match=re.escape(f"Unknown dtype '{name}'")) as info:
        tp.dtypes.from_name(name)
    assert "float32" in str(info.value), "the message should list the known dtypes"


def test_mixing_devices() -> None:
    other = tp.tensor([1.0], device="meta")  # the core's Meta backend: a second device
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "Expected all tensors to be on the same device, but found at least two devices"
        ),
    ):
        tp.add(other, T((1,)))
    tp.add(other, tp.tensor(1.0))  # a CPU 0-dim tensor is allowed, as in PyTorch


def _unscale(grads: Any, found_inf: Any = None, inv_scale: Any = None) -> Any:
    return tp._amp_foreach_non_finite_check_and_unscale_(
        grads,
        T((1,)) if found_inf is None else found_inf,
        T((1,)) if inv_scale is None else inv_scale,
    )


def _update(scale: Any = None, tracker: Any = None, found_inf: Any = None) -> Any:
    return tp._amp_update_scale_(
        T((1,)) if scale is None else scale,
        T((1,), "int32") if tracker is None else tracker,
        T((1,)) if found_inf is None else found_inf,
        2.0,
        0.5,
        10,
    )


AMP_CASES: list[ErrorCase] = [  # PyTorch 2.13's CPU texts, in its order of checks
    ("unscale_inv_scale_size", lambda: _unscale([T((2,))], inv_scale=T((2,))), RuntimeError,
     "inv_scale must be a 1-element tensor.", "_amp_foreach_non_finite_check_and_unscale_"),
    ("unscale_found_inf_size", lambda: _unscale([T((2,))], found_inf=T((2,))), RuntimeError,
     "found_inf must be a 1-element tensor.", "_amp_foreach_non_finite_check_and_unscale_"),
    ("unscale_inv_scale_dtype", lambda: _unscale([T((2,))], inv_scale=T((1,), "float64")),
     RuntimeError, "inv_scale must be a float tensor.", "_amp_foreach_non_finite_check_and_unscale_"),
    ("unscale_found_inf_dtype", lambda: _unscale([T((2,))], found_inf=T((1,), "float64")),
     RuntimeError, "found_inf must be a float tensor.", "_amp_foreach_non_finite_check_and_unscale_"),
    ("unscale_int_grad", lambda: _unscale([T((2,), "int64")]), NotImplementedError,
     "\"_amp_foreach_non_finite_check_and_unscale_cpu\" not implemented for 'Long'",
     "_amp_foreach_non_finite_check_and_unscale_"),
    ("update_tracker_size", lambda: _update(tracker=T((2,), "int32")), RuntimeError,
     "growth_tracker must be a 1-element tensor.", "_amp_update_scale_"),
    ("update_scale_size", lambda: _update(scale=T((2,))), RuntimeError,
     "current_scale must be a 1-element tensor.", "_amp_update_scale_"),
    ("update_found_inf_size", lambda: _update(found_inf=T((2,))), RuntimeError,
     "found_inf must be a 1-element tensor.", "_amp_update_scale_"),
    ("update_tracker_dtype", lambda: _update(tracker=T((1,), "int64")), RuntimeError,
     "growth_tracker must be an int tensor.", "_amp_update_scale_"),
    ("update_scale_dtype", lambda: _update(scale=T((1,), "float64")), RuntimeError,
     "current_scale must be a float tensor.", "_amp_update_scale_"),
    ("update_found_inf_dtype", lambda: _update(found_inf=T((1,), "float64")), RuntimeError,
     "found_inf must be a float tensor.", "_amp_update_scale_"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "exc", "text", "op"), _params(AMP_CASES))
def test_amp_op_checks(call: Callable[[], Any], exc: Any, text: str, op: Any) -> None:
    check_error(call, exc, text, op)


BATCHED_MATMUL_CASES: list[ErrorCase] = [  # PyTorch 2.13's texts, checked against torch 2.13 CPU
    ("baddbmm_dtypes", lambda: tp.baddbmm(T((2, 3, 5), "float64"), T((2, 3, 4)), T((2, 4, 5))),
     RuntimeError, "Input dtypes must be the same, got: input double, batch1: float, batch2: float",
     "baddbmm"),
    ("baddbmm_batch2_sizes", lambda: tp.baddbmm(T((2, 3, 5)), T((2, 3, 4)), T((3, 4, 5))),
     RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4].",
     "baddbmm"),
    ("baddbmm_self_shape", lambda: tp.baddbmm(T((2, 3, 4)), T((2, 3, 4)), T((2, 4, 5))),
     RuntimeError,
     "The expanded size of the tensor (5) must match the existing size (4) at non-singleton "
     "dimension 2.  Target sizes: [2, 3, 5].  Tensor sizes: [2, 3, 4]", ("baddbmm", "expand")),
    # PyTorch's meta check; its CPU kernel reports a 2-D batch through an expand instead
    ("baddbmm_2d_batch", lambda: tp.baddbmm(T((3, 5)), T((3, 4)), T((2, 4, 5))), RuntimeError,
     "batch1 must be a 3D tensor", "baddbmm"),
    ("addbmm_batches", lambda: tp.addbmm(T((3, 5)), T((2, 3, 4)), T((3, 4, 5))), RuntimeError,
     "batch1 and batch2 must have same number of batches, got 2 and 3", "addbmm"),
    ("addbmm_inner", lambda: tp.addbmm(T((3, 5)), T((2, 3, 4)), T((2, 6, 5))), RuntimeError,
     "Incompatible matrix sizes for bmm (3x4 and 6x5)", "addbmm"),
    ("addbmm_self_shape", lambda: tp.addbmm(T((3, 4)), T((2, 3, 4)), T((2, 4, 5))), RuntimeError,
     "The expanded size of the tensor (5) must match the existing size (4) at non-singleton "
     "dimension 1.  Target sizes: [3, 5].  Tensor sizes: [3, 4]", ("addbmm", "expand")),
]  # fmt: skip


@pytest.mark.parametrize(("call", "exc", "text", "op"), _params(BATCHED_MATMUL_CASES))
def test_batched_matmul_checks(call: Callable[[], Any], exc: Any, text: str, op: Any) -> None:
    check_error(call, exc, text, op)


def test_meshgrid_without_indexing_warns_in_tensorplug_terms():
    x, y = tp.tensor(np.arange(2.0)), tp.tensor(np.arange(3.0))
    with pytest.warns(UserWarning) as w:
        a, b = tp.meshgrid(x, y)
    assert [str(m.message) for m in w] == [
        "tensorplug.meshgrid: pass the indexing argument, indexing='ij' (used when it is left "
        "out) or indexing='xy'; PyTorch will require it in an upcoming release."
    ]
    ea, eb = np.meshgrid(np.arange(2.0), np.arange(3.0), indexing="ij")
    assert np.array_equal(a.numpy(), ea) and np.array_equal(b.numpy(), eb)
    with pytest.raises(RuntimeError) as e:
        tp.meshgrid(T((2, 2)), indexing="ij")
    assert str(e.value).startswith(
        "aten::meshgrid.indexing: Expected 0D or 1D tensor in the tensor list but got: "
    )


# linear_backward: PyTorch declares the schema but has no dense CPU kernel for it (only
# MkldnnCPU's), so these texts are tensorplug's; each names what to fix
ALL3 = [True, True, True]
LINEAR_BACKWARD_CASES: list[ErrorCase] = [
    ("weight_not_matrix", lambda: tp.linear_backward(T((5, 3)), T((5, 4)), T((4, 3, 1)), ALL3),
     RuntimeError, "weight must be a matrix (got a 3-D tensor)", "linear_backward"),
    ("self_0d", lambda: tp.linear_backward(T(()), T((4,)), T((4, 3)), ALL3),
     RuntimeError, "self must have at least one dimension (got a 0-D tensor)", "linear_backward"),
    ("columns", lambda: tp.linear_backward(T((5, 2)), T((5, 4)), T((4, 3)), ALL3),
     RuntimeError, "self's last dimension (2) must equal the number of columns of weight (3)",
     "linear_backward"),
    ("grad_shape", lambda: tp.linear_backward(T((5, 3)), T((5, 2)), T((4, 3)), ALL3),
     RuntimeError, "grad_output must have shape [5, 4] (self's leading dimensions and weight's "
     "rows), but got [5, 2]", "linear_backward"),
    ("dtypes", lambda: tp.linear_backward(T((5, 3)), T((5, 4)), T((4, 3), "float64"), ALL3),
     RuntimeError, "expected self, grad_output and weight to have the same dtype, but got Float, "
     "Float and Double", "linear_backward"),
    ("ints", lambda: tp.linear_backward(T((5, 3), "int64"), T((5, 4), "int64"),
                                        T((4, 3), "int64"), ALL3),
     RuntimeError, "\"linear_backward\" not implemented for 'Long'", "linear_backward"),
    ("mask_length", lambda: tp.ops.aten.linear_backward(T((5, 3)), T((5, 4)), T((4, 3)),
                                                        [True, True]),
     RuntimeError, "output_mask must have 3 elements, but got 2", "linear_backward"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "exc", "text", "op"), _params(LINEAR_BACKWARD_CASES))
def test_linear_backward_checks(call: Callable[[], Any], exc: Any, text: str, op: Any) -> None:
    check_error(call, exc, text, op)
