"""The kernels' fast paths against their general paths, bit for bit.

Every fast path of ``tensorplug.array_backend`` is gated on ``kit.native`` (the dtypes a backend
computes in as it stores them), so the same kernels built from a kit whose ``native`` is empty
take the general path for every call. Each case runs both on fresh copies of the same inputs
and checks the result's dtype, shape and bytes, the mutated input of in-place ops, the warnings
raised, and, where the general path raises, the same exception type and message. The inputs
cover what the fast paths must leave to the general path: half precision, integers, bools,
complex, mixed dtypes, 0-dim and empty tensors, broadcasting, scalars that are bool, complex,
out of an integer range, non-finite, and arguments in error.
"""

from __future__ import annotations

import copy
import itertools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import _backends
from tensorplug.array_backend import _MODULES, _kit
from tensorplug.tensor import Tensor
from tensorplug.testing.opinfo import ml_dtypes

Kernels = dict[str, Callable[..., Any]]


def _kernels(kit: Any) -> Kernels:
    out: Kernels = {}
    for mod in _MODULES:
        out.update(mod.build(kit))
    return {name: _kit.guard(name, fn) for name, fn in out.items()}


@pytest.fixture(scope="module")
def paths() -> tuple[Kernels, Kernels]:
    kit = _backends.for_key("CPU").kit
    slow_kit = copy.copy(kit)
    slow_kit.native = frozenset()
    return _kernels(kit), _kernels(slow_kit)


DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8", "bool", "complex64"]
if ml_dtypes is not None:
    DTYPES.append("bfloat16")


def make(dtype: str, shape: tuple[int, ...], seed: int = 0, special: bool = False) -> Tensor:
    rng = np.random.default_rng(seed)
    base = np.asarray(rng.standard_normal(shape) * 4)
    if special and base.size >= 4:
        flat = base.reshape(-1)
        flat[:4] = [np.inf, -np.inf, np.nan, -0.0]
    if dtype == "bool":
        return tp.tensor(base > 0)
    if dtype in ("int64", "int32", "uint8"):
        with np.errstate(invalid="ignore"):
            ints = np.nan_to_num(base, posinf=7, neginf=-7).astype(np.int64)
        if dtype == "uint8":
            ints = np.abs(ints)
        return tp.tensor(ints.astype(dtype))
    if dtype == "complex64":
        with np.errstate(invalid="ignore"):
            return tp.tensor((base + 1j * np.flip(base)).astype(np.complex64))
    if dtype == "bfloat16":
        return tp.tensor(base.astype(np.float32), dtype=tp.bfloat16)
    return tp.tensor(base.astype(dtype))


def fresh(x: Any) -> Any:
    """A deep copy of the arguments: tensors cloned (same dtype and data), lists copied."""
    if isinstance(x, Tensor):
        return x.clone()
    if isinstance(x, list):
        return [fresh(v) for v in x]
    if isinstance(x, tuple):
        return tuple(fresh(v) for v in x)
    if isinstance(x, dict):
        return {k: fresh(v) for k, v in x.items()}
    return x


def outcome(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What a call gives: its result (or exception) and its warnings, and the mutated args."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: Any = fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - compared between the paths
            result = e
    return result, [(w.category, str(w.message)) for w in caught], args


def same_tensor(a: Any, b: Any, what: str, result: bool = True) -> None:
    """``result``: ``a`` and ``b`` are what the kernels returned (not an argument they wrote)."""
    assert isinstance(a, Tensor) and isinstance(b, Tensor), what
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {a.shape} != {b.shape}"
    x, y = np.ascontiguousarray(a._data), np.ascontiguousarray(b._data)
    assert x.dtype == y.dtype, f"{what}: storage {x.dtype} != {y.dtype}"
    assert x.tobytes() == y.tobytes(), f"{what}: values differ: {x} != {y}"
    # the fast paths build their tensor inline (Note [Cheap tensors] in tensor.py): every
    # slot set as the general path sets it
    assert not result or state(a) == state(b), f"{what}: tensor state {state(a)} != {state(b)}"


SLOTS = [n for n in Tensor.__slots__ if n not in ("__weakref__", "__dict__")]


def state(t: Tensor) -> dict[str, Any]:
    """A tensor's class, slots (arrays and version counters by kind) and ``__dict__``."""
    got: dict[str, Any] = {"class": type(t), "dict": dict(t.__dict__)}
    for name in SLOTS:
        v = getattr(t, name, AttributeError)
        if name == "_data":
            v = type(v)
        elif name == "_vc":
            v = None if v is None else type(v)
        got[name] = v
    return got


def check(paths: tuple[Kernels, Kernels], name: str, *args: Any, **kwargs: Any) -> None:
    fast_k, slow_k = paths
    fast = outcome(fast_k[name], fresh(args), fresh(kwargs))
    slow = outcome(slow_k[name], fresh(args), fresh(kwargs))
    what = f"{name}{args!r:.200}"
    (rf, wf, af), (rs, ws, as_) = fast, slow
    if isinstance(rs, Exception) or isinstance(rf, Exception):
        assert type(rf) is type(rs), f"{what}: {rf!r} != {rs!r}"
        assert str(rf) == str(rs), f"{what}: message {rf} != {rs}"
    elif isinstance(rs, tuple):
        for i, (x, y) in enumerate(zip(rf, rs, strict=True)):
            if x is None or y is None:  # an output not asked for (linear_backward's mask)
                assert x is None and y is None, f"{what}[{i}]: {x!r} != {y!r}"
                continue
            same_tensor(x, y, f"{what}[{i}]")
    elif isinstance(rs, Tensor) and name.startswith("empty"):  # values undefined
        assert (rf.dtype, rf.shape) == (rs.dtype, rs.shape), what
    elif isinstance(rs, Tensor):
        same_tensor(rf, rs, what)
    else:
        assert rf == rs, what
    assert wf == ws, f"{what}: warnings {wf} != {ws}"
    for x, y in zip(af, as_, strict=True):  # in-place ops: the written tensor
        if isinstance(x, Tensor):
            same_tensor(x, y, f"{what} (argument after the call)", result=False)


SCALARS = [0.5, 2, -3, 0, 1.0, 1e39, 2**70, True, 1 + 2j, float("nan"), float("inf"), -0.0, 300]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "op", ["add", "sub", "mul", "eq", "lt", "maximum", "logical_and", "bitwise_and", "atan2"]
)
def test_binary(paths: tuple[Kernels, Kernels], op: str, dtype: str) -> None:
    """``op.Tensor`` (``tp.add(a, b)``) for every pair of dtypes, broadcast and 0-dim shapes,
    mismatched shapes (PyTorch's message), and alpha where the op takes one."""
    name = op if op in ("maximum", "logical_and", "atan2") else f"{op}.Tensor"
    alphas: list[tuple[Any, ...]] = [(), (1,), (2,), (0.5,), (True,), (1.0,)]
    for other_dtype in DTYPES:
        a = make(dtype, (3, 4), 1, special=True)
        for shape in ((3, 4), (4,), (), (2, 3)):
            b = make(other_dtype, shape, 2, special=True)
            for alpha in alphas if op in ("add", "sub") else [()]:
                kw = {"alpha": alpha[0]} if alpha else {}
                check(paths, name, a, b, **kw)
    check(paths, name, make(dtype, ()), make(dtype, ()))  # the array call gives a scalar
    check(paths, name, make(dtype, (0, 2)), make(dtype, (2,)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "op", ["add", "sub", "mul", "div", "eq", "ne", "lt", "gt", "ge", "le", "remainder"]
)
def test_binary_scalar(paths: tuple[Kernels, Kernels], op: str, dtype: str) -> None:
    for shape, special in (((3, 4), True), ((), False), ((0, 2), False)):
        t = make(dtype, shape, special=special)
        for s in SCALARS:
            check(paths, f"{op}.Scalar", t, s)
            if op in ("add", "sub"):
                check(paths, f"{op}.Scalar", t, s, 2)
                check(paths, f"{op}.Scalar", t, s, 0.5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_inplace(paths: tuple[Kernels, Kernels], op: str, dtype: str) -> None:
    a = make(dtype, (3, 4), 1, special=True)
    for other_dtype in ("float32", "float64", "int64", dtype):
        for shape in ((3, 4), (4,), (1, 4), (2, 3, 4), ()):
            b = make(other_dtype, shape, 2)
            for alpha in ((), (1,), (2,), (0.5,), (0.01,), (-3,), (True,), (1 + 1j,)):
                kw = {"alpha": alpha[0]} if alpha and op in ("add", "sub") else {}
                check(paths, f"{op}_.Tensor", a, b, **kw)
    for s in SCALARS:
        check(paths, f"{op}_.Scalar", a, s)
    # a read-only broadcast view
    row = make(dtype, (4,), 3)
    view = tp.ops.aten.expand.default(row, [3, 4])
    check(paths, f"{op}_.Tensor", view, make(dtype, (3, 4), 4))
    check(paths, f"{op}_.Scalar", view, 2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_inplace(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    """``relu_``'s fast path (``maximum(a, 0, out=a)``, Note [relu's zero]) against the general
    path's copy back, with nan, infinities and -0.0."""
    for shape in ((3, 4), (), (0,), (2, 3, 4)):
        check(paths, "relu_", make(dtype, shape, special=True))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "uint8"])
def test_relu_inplace_views(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    """``relu_`` on a strided view writes through to its base, on both paths; on a read-only
    broadcast view both raise PyTorch's error and write nothing."""
    results = []
    for kernels in paths:
        base = make(dtype, (4, 6), 5, special=True)
        before = base.numpy().copy()
        view = base[:, ::2]
        assert view.tp_data.base is not None and not view.tp_data.flags.c_contiguous
        assert kernels["relu_"](view) is view
        want = before.copy()
        want[:, ::2] = np.maximum(want[:, ::2], 0)
        np.testing.assert_array_equal(base.numpy(), want)
        row = make(dtype, (4,), 3)
        row_before = row.numpy().copy()
        expanded = tp.ops.aten.expand.default(row, [3, 4])
        with pytest.raises(Exception) as e:
            kernels["relu_"](expanded)
        np.testing.assert_array_equal(row.numpy(), row_before)
        results.append((base.numpy().tobytes(), type(e.value), str(e.value)))
    assert results[0] == results[1]
    assert results[0][1] is RuntimeError
    assert (
        "more than one element of the written-to tensor refers to a single memory" in results[0][2]
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_out(paths: tuple[Kernels, Kernels], op: str, dtype: str) -> None:
    a = make(dtype, (3, 4), 1, special=True)
    for other_dtype in ("float32", "int64", dtype):
        b = make(other_dtype, (3, 4), 2, special=True)
        for out_dtype, out_shape in ((dtype, (3, 4)), ("float64", (3, 4)), (dtype, (2,))):
            for alpha in ((), (2,)):
                kw = {"alpha": alpha[0]} if alpha and op in ("add", "sub") else {}
                check(paths, f"{op}.out", a, b, out=make(out_dtype, out_shape, 5), **kw)
    check(paths, f"{op}.out", a, make(dtype, (4,), 2), out=make(dtype, (3, 4), 5))  # broadcast
    if dtype.startswith("float"):  # out aliasing an input, as Adam's div.out(m, d, out=d)
        b = make(dtype, (3, 4), 2)
        fast_k, slow_k = paths
        x, y = fresh(b), fresh(b)
        fast_k[f"{op}.out"](fresh(a), x, out=x)
        slow_k[f"{op}.out"](fresh(a), y, out=y)
        same_tensor(x, y, f"{op}.out aliasing other")
    # a read-only broadcast view as out
    view = tp.ops.aten.expand.default(make(dtype, (4,), 3), [3, 4])
    check(paths, f"{op}.out", a, make(dtype, (3, 4), 4), out=view)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_threshold_backward(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    if dtype == "bfloat16" and ml_dtypes is None:
        pytest.skip("no ml_dtypes")
    g = make(dtype, (3, 4), 1)  # negative gradients where the input is dropped: +0, not -0
    x = make(dtype, (3, 4), 2, special=True)  # inf, -inf, nan, -0.0 among the inputs
    for threshold in (0, 0.5, -1):
        check(paths, "threshold_backward", g, x, threshold)
    check(paths, "threshold_backward", make(dtype, (3, 4), 3, special=True), x, 0)  # inf in g
    check(paths, "threshold_backward", g, make(dtype, (4,), 4), 0)  # broadcast
    # finite gradients whose sum of squares overflows (the fast path's finiteness test gives
    # up, the general path computes it) and a NaN gradient where the input is dropped
    if dtype in ("float32", "float64"):
        big = tp.tensor(np.full((3, 4), 1e30 if dtype == "float32" else 1e200), dtype=g.dtype)
        check(paths, "threshold_backward", big, x, 0)
        nan_g = g.clone()
        nan_g._data[0, 0] = np.nan
        check(paths, "threshold_backward", nan_g, tp.full([3, 4], -1.0, dtype=g.dtype), 0)
    # -0.0 gradients among finite ones: kept where the input passes, +0.0 where dropped
    signed = make(dtype, (3, 4), 5)
    signed._data[0, :2] = -0.0
    keep = make(dtype, (3, 4), 6)
    keep._data[0, 0], keep._data[0, 1] = 1.0, -1.0
    check(paths, "threshold_backward", signed, keep, 0)
    fast_k, _ = paths
    r = fast_k["threshold_backward"](signed, keep, 0)._data.astype(np.float64)
    assert np.signbit(r[0, 0]) and r[0, 0] == 0  # PyTorch's where(x <= t, 0, g) keeps -0.0
    r = fast_k["threshold_backward"](g, x, 0)._data.astype(np.float64)
    assert not np.signbit(r[r == 0]).any()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "op", ["div.Tensor", "pow.Tensor_Tensor", "floor_divide", "remainder.Tensor"]
)
def test_quiet_binary(paths: tuple[Kernels, Kernels], op: str, dtype: str) -> None:
    a = make(dtype, (3, 4), 1, special=True)
    for shape in ((3, 4), (4,), (2, 3, 4)):
        b = make(dtype, shape, 2, special=True)
        check(paths, op, a, b)
    check(paths, op, a, tp.zeros([3, 4], dtype=a.dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "op", ["exp", "log", "sqrt", "log1p", "rsqrt", "sigmoid", "relu", "neg", "tanh", "silu"]
)
def test_unary(paths: tuple[Kernels, Kernels], op: str, dtype: str) -> None:
    for shape in ((3, 4), (), (0,)):
        check(paths, op, make(dtype, shape, special=True))


DIMS: list[Any] = [[1], [0], [-1], [-2], [2], [0, 1], [], None, [1, 1]]


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    for shape, special in (
        ((5, 4), True),
        ((5, 4), False),
        ((7,), False),
        ((), False),
        ((0, 3), False),
    ):
        t = make(dtype, shape, special=special)
        check(paths, "sum", t)
        check(paths, "mean", t)
        for dim, keep in itertools.product(DIMS, (False, True)):
            check(paths, "sum.dim_IntList", t, dim, keep)
            check(paths, "mean.dim", t, dim, keep)
            if dim is not None:
                check(paths, "amax", t, dim, keep)
                check(paths, "amin", t, dim, keep)
        for dim in (0, 1, -1, 2):
            check(paths, "softmax.int", t, dim)
            check(paths, "log_softmax.int", t, dim)
            check(paths, "softmax.int", t, dim, tp.float64)
            check(paths, "log_softmax.int", t, dim, tp.float32)
        check(paths, "sum.dim_IntList", t, [0], False, dtype=tp.float64)


def test_softmax_rows(paths: tuple[Kernels, Kernels]) -> None:
    rows = np.array(
        [[1.0, 2.0, 3.0], [np.inf, 1.0, 0.0], [-np.inf, -np.inf, -np.inf], [np.nan, 1.0, 2.0]]
    )
    for d in ("float32", "float64"):
        t = tp.tensor(rows.astype(d))
        for dim in (0, 1):
            check(paths, "softmax.int", t, dim)
            check(paths, "log_softmax.int", t, dim)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nll_loss(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    x = make(dtype, (6, 4), special=True)
    targets = [
        [0, 1, 2, 3, 0, 1],
        [0, 1, -100, 3, 0, 1],
        [0, 1, 4, 3, 0, 1],
        [0, 1, -1, 3, 0, 1],
        [0, 1, 2],
    ]
    for target in targets:
        t = tp.tensor(np.array(target, np.int64))
        for reduction in ("mean", "sum", "none", "bad"):
            check(paths, "nll_loss", x, t, None, reduction)
            check(paths, "nll_loss", x, t, None, reduction, 1)
            check(paths, "nll_loss", x, t, None, reduction, -1)
        check(paths, "nll_loss", x, t, make(dtype, (4,), 5))
        check(paths, "nll_loss", x, tp.tensor(np.array(target, np.int32)))
    check(paths, "nll_loss", make(dtype, (4,)), tp.tensor(np.array(1)))
    check(paths, "nll_loss", make(dtype, (0, 4)), tp.tensor(np.zeros(0, np.int64)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_nll_loss_backward(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    # the fast path scales the gradient as a Python float: the same bits as the general
    # path's division in the tensor's dtype, for batch sizes that do not divide evenly
    rng = np.random.default_rng(7)
    for n in (1, 3, 7, 64, 100):
        x = make(dtype, (n, 5), n)
        t = tp.tensor(rng.integers(0, 5, n))
        grads = [1.0, 1 / 3, -2.5e-3, 3.4e38 if dtype == "float32" else 1e300, np.nan, np.inf, -0.0]
        for value in grads if dtype != "float16" else [1.0, 1 / 3]:
            g = tp.tensor(np.array(value, dtype))
            for reduction in ("mean", "sum"):
                check(paths, "nll_loss_backward", g, x, t, None, reduction, -100)
    x = make(dtype, (3, 5))
    check(paths, "nll_loss_backward", tp.tensor(np.array(1.0, dtype)), x, tp.tensor([0, 5, 1]))
    check(paths, "nll_loss_backward", tp.tensor(np.array(1.0, dtype)), x, tp.tensor([0, -1, 1]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_cross_entropy_loss_backward(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    # Note [Fused cross-entropy backward]: the fast path's bits are the composition's (the
    # general path) for every scale it takes; the others (zero, negative, NaN, subnormal
    # scales, log-probabilities whose exp underflows) it leaves to the general path
    name = "tensorplug::cross_entropy_loss_backward"
    rng = np.random.default_rng(11)
    info = np.finfo(dtype)
    values = [1.0, 1 / 3, 2.5e-3, float(info.max), float(info.tiny), float(info.tiny) / 4]
    values += [0.0, -0.0, -1.5, np.nan, np.inf]
    for n in (1, 3, 7, 64):
        x = make(dtype, (n, 5), n, special=True)
        t = tp.tensor(rng.integers(0, 5, n))
        for value in values:
            g = tp.tensor(np.array(value, dtype))
            for reduction in ("mean", "sum"):
                check(paths, name, g, x, t, reduction, -100)
        rows = np.array(values * n, dtype)[:n]
        check(paths, name, tp.tensor(rows), x, t, "none", -100)
        check(paths, name, tp.tensor(np.abs(rows) + 0.5), x, t, "none", -100)
    x, one = make(dtype, (3, 5)), tp.tensor(np.array(1.0, dtype))
    check(paths, name, one, x, tp.tensor([0, 5, 1]))  # out of range
    check(paths, name, one, x, tp.tensor([0, -1, 1]))
    check(paths, name, one, x, tp.tensor([0, 4, 1]), "mean", 4)  # ignored
    check(paths, name, one, x, tp.tensor([0, 4]))  # batch size
    check(paths, name, one, x, tp.tensor([0, 4, 1]), "max")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64", "int64"])
def test_linear_backward(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    x, g, w = make(dtype, (5, 3), 1, special=True), make(dtype, (5, 4), 2), make(dtype, (4, 3), 3)
    for mask in itertools.product((True, False), repeat=3):
        check(paths, "linear_backward", x, g, w, list(mask))
    every = [True, True, True]
    big = tp.tensor(np.full((5, 4), 3e38 if dtype == "float32" else 1.0), dtype=g.dtype)
    check(paths, "linear_backward", x, big, w, every)  # the bias sum overflows: no warning
    check(paths, "linear_backward", make(dtype, (2, 5, 3), 4), make(dtype, (2, 5, 4), 5), w, every)
    check(paths, "linear_backward", make(dtype, (0, 3)), make(dtype, (0, 4)), w, every)
    check(paths, "linear_backward", make(dtype, (3, 5), 7).t(), g, w, every)  # not contiguous
    # errors: shapes, dtypes, the mask's length
    check(paths, "linear_backward", x, make(dtype, (5, 2)), w, every)
    check(paths, "linear_backward", make(dtype, (5, 2)), g, w, every)
    check(paths, "linear_backward", x, g, make(dtype, (4, 3, 1)), every)
    check(
        paths,
        "linear_backward",
        x,
        g,
        make("float64" if dtype != "float64" else "float32", (4, 3)),
        every,
    )
    check(paths, "linear_backward", x, g, w, [True, True])


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_products(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    a, b = make(dtype, (5, 3), 1, special=True), make(dtype, (3, 4), 2)
    for name in ("mm", "matmul"):
        check(paths, name, a, b)
        check(paths, name, a, make(dtype, (4, 4), 2))
        check(paths, name, a, make("float64", (3, 4), 2))
    for bias_shape in ((4,), (5, 4), (1, 4), (5, 1), (), (3,)):
        bias = make(dtype, bias_shape, 3)
        for beta, alpha in ((1, 1), (0, 1), (2, 1), (1, 0.5), (True, True)):
            check(paths, "addmm", bias, a, b, beta=beta, alpha=alpha)
    check(paths, "addmm", make("float64", (4,)), a, b)
    check(paths, "matmul", make(dtype, (2, 5, 3)), b)
    # linear's call: a transposed weight; and what the fast path must leave to the general one
    wt = tp.ops.aten.transpose.int(make(dtype, (4, 3), 4), 0, 1)
    check(paths, "addmm", make(dtype, (4,), 3), a, wt)
    check(paths, "addmm", make(dtype, (4,), 3), a, make("float64", (3, 4), 2))  # mat2's dtype
    check(paths, "addmm", make(dtype, (4,), 3), a, make(dtype, (4, 4), 2))  # inner sizes
    check(paths, "addmm", make(dtype, (4,), 3), make(dtype, (3,), 1), b)  # a vector mat1
    check(paths, "addmm", make(dtype, (4,), 3), a, make(dtype, (3, 4, 1), 2))  # a 3-D mat2


@pytest.mark.parametrize("dtype", DTYPES)
def test_where(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    c = make("bool", (3, 4), 7)
    a, b = make(dtype, (3, 4), 1, special=True), make(dtype, (3, 4), 2)
    for s in SCALARS:
        check(paths, "where.ScalarOther", c, a, s)
        check(paths, "where.ScalarSelf", c, s, a)
    check(paths, "where.self", c, a, b)
    check(paths, "where.self", c, a, make("float64", (3, 4), 2))
    check(paths, "where.self", c, a, make(dtype, (4,), 2))
    check(paths, "where.self", c, make(dtype, (2, 4)), b)
    check(paths, "where.ScalarOther", make("int64", (3, 4)), a, 0.0)
    check(paths, "where.ScalarOther", make("bool", (4,)), a, 0.0)
    c0, a0, b0 = make("bool", ()), make(dtype, (), 1), make(dtype, (), 2)
    check(paths, "where.self", c0, a0, b0)
    check(paths, "where.ScalarOther", c0, a0, 0.5)
    check(paths, "where.ScalarSelf", c0, 0.5, b0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_factories(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    d = getattr(tp, dtype)
    dev = tp.device("cpu")
    for size in ([2, 3], [], [0, 4], [-1, 2]):
        for name in ("zeros", "ones", "empty.memory_format"):
            check(paths, name, size, dtype=d, device=dev)
            check(paths, name, size, device=dev)
        for value in (2.5, -1e-8, 7, True, 1e39, float("nan"), 70000.0, 1 + 1j):
            check(paths, "full", size, value, dtype=d, device=dev)
            check(paths, "full", size, value, device=dev)


@pytest.mark.parametrize("dtype", DTYPES)
def test_indexing(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    x = make(dtype, (6, 4), special=True)
    for idx in ([0, 5, 2, 2], [-1, 3], [6], [[0, 1], [2, 3]], []):
        i = tp.tensor(np.array(idx, np.int64))
        check(paths, "index.Tensor", x, [i])
        check(paths, "index.Tensor", x, [tp.tensor(np.array(idx, np.int32))])
        n = len(idx)
        for vshape in ((n, 4), (4,), (n, 3)):
            v = make(dtype, vshape, 9)
            check(paths, "index_put_", x, [i], v)
            check(paths, "index_put_", x, [i], v, True)
        check(paths, "index_put_", x, [i], make("float64", (n, 4)))
    check(paths, "index.Tensor", x, [tp.tensor(np.array(2))])
    check(paths, "index.Tensor", x[0], [tp.tensor(np.array(2))])
    check(paths, "index.Tensor", make(dtype, ()), [tp.tensor(np.array([0]))])
    check(paths, "index.Tensor", x, [None, tp.tensor(np.array([1, 0]))])
    check(paths, "index.Tensor", x, [make("bool", (6,))])
    row = make(dtype, (4,))
    check(
        paths,
        "index_put_",
        tp.ops.aten.expand.default(row, [6, 4]),
        [tp.tensor(np.array([1]))],
        row,
    )


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bfloat16"])
def test_index_put_rows_in_rounds(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    # Note [Rows added in rounds]: enough rows (>= 64) for the rounds, repeated indices (the
    # order of the additions to one row shows in float sums), negative ones aliasing positive
    # ones, too many rounds (one index 40 times of 70), an index out of range, a broadcast row
    rng = np.random.default_rng(3)
    x = make(dtype, (64, 5), special=True)
    for idx in (
        rng.integers(0, 64, 1280),
        rng.integers(-64, 64, 640),
        np.concatenate([np.full(40, 2), np.arange(60)]),
        np.concatenate([rng.integers(0, 64, 640), [64]]),
        np.concatenate([rng.integers(0, 64, 640), [-65]]),
    ):
        for i in (tp.tensor(idx.astype(np.int64)), tp.tensor(idx.astype(np.int32))):
            n = len(idx)
            check(paths, "index_put_", x, [i], make(dtype, (n, 5), 4), True)
            check(paths, "index_put_", x, [i], make(dtype, (5,), 4), True)
    big = make(dtype, (300, 2, 3), 5)
    i = tp.tensor(rng.integers(0, 300, 640))
    check(paths, "index_put_", big, [i], make(dtype, (640, 2, 3), 6), True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_add(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    base = make(dtype, (5, 4), special=True)
    for dim, index in (
        (1, [[0], [3], [1], [1], [2]]),
        (1, [[0, 0, 3], [1, 1, 1], [2, 3, 0], [0, 0, 0], [3, 2, 1]]),
        (0, [[0, 1, 4, 4], [4, 4, 0, 1]]),
        (-1, [[0], [3], [1]]),
        (1, [[0], [4], [1], [1], [2]]),
        (1, [[0], [-1], [1], [1], [2]]),
        (2, [[0]]),
    ):
        i = tp.tensor(np.array(index, np.int64))
        src = make(dtype, tuple(i.shape), 4)
        check(paths, "scatter_add", base, dim, i, src)
        check(paths, "scatter_add", base, dim, i, make(dtype, (5, 4), 4))
        check(paths, "scatter_add", base, dim, tp.tensor(np.array(index, np.int32)), src)
        check(paths, "scatter_add", base, dim, i, make("float64", tuple(i.shape)))


def test_quiet_leaves_the_error_state() -> None:
    """Note [Quiet arithmetic]: kernels silence numpy only while they run."""
    before = np.geterr()
    a = tp.tensor(np.array([0.0, 1.0, -1.0], np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tp.div(a, a)
        tp.log(a)
        tp.ops.aten.mean.default(tp.zeros([0]))
        tp.log_softmax(tp.tensor(np.array([[np.inf, -np.inf]], np.float32)), 1)
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning):
        np.divide(np.ones(1), np.zeros(1))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_linear_forward(paths: tuple[Kernels, Kernels], dtype: str) -> None:
    # Note [Linear forward]: the fast path's bits are the decomposition's (the general path)
    name = "tensorplug::linear_forward"
    x, w = make(dtype, (5, 3), 1, special=True), make(dtype, (4, 3), 2)
    for bias in (make(dtype, (4,), 3), make(dtype, (5, 4), 4), make(dtype, (1,), 5), None):
        check(paths, name, x, w, bias)
    check(paths, name, x, w, make(dtype, (), 6))  # a 0-d bias: the general path
    for shape in ((2, 5, 3), (3,), (0, 3), (2, 0, 3)):  # batched, a vector, empty
        check(paths, name, make(dtype, shape, 7), w, make(dtype, (4,), 3))
        check(paths, name, make(dtype, shape, 7), w)
    check(paths, name, make(dtype, (3, 5), 8).t(), make(dtype, (3, 4), 9).t())  # not contiguous
    check(paths, name, x, make(dtype, (3,), 10))  # a vector weight
    # errors: shapes, dtypes, a weight of 3 dimensions, a bias that does not broadcast
    check(paths, name, x, make(dtype, (4, 2)), make(dtype, (4,)))
    check(paths, name, x, make(dtype, (4, 2)))
    check(paths, name, make(dtype, (2, 5, 3)), make(dtype, (4, 2)))
    check(paths, name, x, make("float64" if dtype != "float64" else "float32", (4, 3)))
    check(paths, name, x, w, make("float64" if dtype != "float64" else "float32", (4,)))
    check(paths, name, make(dtype, (2, 5, 3)), w, make(dtype, (5,)))
    check(paths, name, x, make(dtype, (2, 4, 3)))
