"""``tensorplug::cross_entropy_loss_backward`` (Note [tensorplug operators] in _opset/own_ops.py):
tensorplug's own operator, against a float64 numpy oracle and, bit for bit, against the two
operators it fuses (Note [Fused cross-entropy backward] in array_backend/_backward.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.testing.opinfo import ml_dtypes

OP = tp.ops.tensorplug.cross_entropy_loss_backward.default
_aten = tp.ops.aten
DTYPES = ["float16", "float32", "float64"] + (["bfloat16"] if ml_dtypes is not None else [])


def composed(g: Any, lp: Any, t: Any, reduction: str = "mean", ignore_index: int = -100) -> Any:
    gl = _aten.nll_loss_backward.default(g, lp, t, None, reduction, ignore_index)
    dim = 0 if lp.ndim == 1 else 1
    return _aten._log_softmax_backward_data.default(gl, lp, dim, lp.dtype)


def oracle(g: Any, lp: Any, t: Any, reduction: str, ignore_index: int) -> Any:
    """exp(lp) * c - c * onehot(t), per row, c the row's scale; ignored rows zero."""
    lp, t, g = np.asarray(lp, np.float64), np.asarray(t), np.asarray(g, np.float64)
    rows = lp.reshape(-1, lp.shape[-1])
    tt = t.reshape(-1)
    keep = tt != ignore_index
    if reduction == "none":
        c = g.reshape(-1) * keep
    else:
        n = keep.sum()
        c = keep * (g / n if reduction == "mean" and n else (0.0 if reduction == "mean" else g))
    out = np.exp(rows) * c[:, None]
    for i in np.flatnonzero(keep):
        out[i, tt[i]] -= c[i]
    return out.reshape(lp.shape)


def cases(dtype: str) -> Any:
    rng = np.random.default_rng(5)
    for n, c in ((7, 5), (64, 10), (1, 3)):  # an uneven batch among them
        lp = tp.log_softmax(tp.tensor(rng.standard_normal((n, c))), 1).to(getattr(tp, dtype))
        t = rng.integers(0, c, n)
        ignored = t.copy()
        ignored[::2] = 1  # some targets ignored (ignore_index=1)
        for reduction in ("mean", "sum", "none"):
            g = tp.tensor(rng.uniform(0.1, 2, n if reduction == "none" else ()))
            g = g.to(lp.dtype)
            yield lp, tp.tensor(t), g, reduction, -100
            yield lp, tp.tensor(ignored), g, reduction, 1
            yield lp, tp.tensor(np.full(n, 2)), g, reduction, 2  # every target ignored
    lp1 = tp.log_softmax(tp.tensor(rng.standard_normal(4)), 0).to(getattr(tp, dtype))
    for reduction in ("mean", "sum", "none"):
        yield lp1, tp.tensor(3), tp.tensor(1.5).to(lp1.dtype), reduction, -100  # 1-D input
        yield lp1, tp.tensor(3), tp.tensor(1.5).to(lp1.dtype), reduction, 3


@pytest.mark.parametrize("dtype", DTYPES)
def test_against_the_composition_bit_for_bit_and_numpy(dtype: str) -> None:
    tol = {"float64": 1e-12, "float32": 1e-5, "float16": 3e-3, "bfloat16": 2e-2}[dtype]
    for lp, t, g, reduction, ignore in cases(dtype):
        got = OP(g, lp, t, reduction, ignore)
        want = composed(g, lp, t, reduction, ignore)
        assert got.dtype == lp.dtype and got.shape == lp.shape
        a = np.asarray(got.to(tp.float64).numpy())
        b = np.asarray(want.to(tp.float64).numpy())
        assert a.tobytes() == b.tobytes(), (reduction, ignore, tuple(lp.shape))
        ref = oracle(
            g.to(tp.float64).numpy(), lp.to(tp.float64).numpy(), t.numpy(), reduction, ignore
        )
        np.testing.assert_allclose(a, ref, rtol=tol, atol=tol)


def test_default_arguments_are_mean_and_minus_100() -> None:
    lp = tp.log_softmax(tp.randn(3, 4), 1)
    t, g = tp.tensor([0, 3, 1]), tp.tensor(1.0)
    assert OP(g, lp, t).numpy().tobytes() == composed(g, lp, t).numpy().tobytes()


def test_meta_runs_the_composite() -> None:
    lp = tp.empty(5, 4, device="meta")
    out = OP(tp.empty((), device="meta"), lp, tp.empty(5, dtype=tp.int64, device="meta"))
    assert out.device.type == "meta" and tuple(out.shape) == (5, 4) and out.dtype == tp.float32


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_errors_name_the_op(device: str) -> None:
    lp = tp.zeros(2, 3, 4, device=device)
    g = tp.zeros((), device=device)
    with pytest.raises(RuntimeError, match=r"^tensorplug::cross_entropy_loss_backward: log_probs "):
        OP(g, lp, tp.zeros(2, dtype=tp.int64, device=device))
    with pytest.raises(
        (RuntimeError, ValueError),
        match=r"^tensorplug::cross_entropy_loss_backward: max is not a valid value for reduction",
    ):
        OP(g, lp[0], tp.zeros(3, dtype=tp.int64, device=device), "max")


def test_cpu_errors_name_the_op() -> None:
    lp, g = tp.log_softmax(tp.randn(3, 4), 1), tp.tensor(1.0)
    op = "^tensorplug::cross_entropy_loss_backward: "
    with pytest.raises(
        IndexError, match=op + "index 7 is out of bounds for dimension 1 with size 4"
    ):
        OP(g, lp, tp.tensor([0, 7, 1]))
    with pytest.raises(IndexError, match=op + "Target -1 is out of bounds"):
        OP(g, lp, tp.tensor([0, -1, 1]))
    with pytest.raises(RuntimeError, match=op + r"Expected input batch_size \(3\) to match"):
        OP(g, lp, tp.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=op + "expected target dtype to be Long or Byte"):
        OP(g, lp, tp.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(RuntimeError, match=op + r"grad_output must have shape \[3\]"):
        OP(g, lp, tp.tensor([0, 1, 2]), "none")
    with pytest.raises(RuntimeError, match=op + "\"nll_loss_backward\" not implemented for 'Long'"):
        OP(g, tp.zeros(3, 4, dtype=tp.int64), tp.tensor([0, 1, 2]))


def test_the_cpu_kernel_does_not_dispatch() -> None:
    # Note [Kernels that do not dispatch]: the autograd node calls it directly
    lp = tp.log_softmax(tp.randn(3, 4), 1)
    assert tp.library.is_no_dispatch(OP.kernel_for(lp.tp_keyset))


# array_api_strict warns where numpy's error state is quiet ("mean" of every target ignored)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_strict_backend_computes_it_as_the_composition() -> None:
    # the kit's kernel on a namespace of the standard only (no fast path): the general path
    if "strict" not in {p.name for p in tp.plugins.list()}:
        pytest.skip("the tensorplug-strict example plugin is not installed")
    for lp, t, g, reduction, ignore in cases("float32"):
        s_lp, s_t, s_g = (v.to("strict") for v in (lp, t, g))
        got = OP(s_g, s_lp, s_t, reduction, ignore)
        assert got.device.type == "strict"
        want = composed(g, lp, t, reduction, ignore)
        assert got.to("cpu").numpy().tobytes() == want.numpy().tobytes()
