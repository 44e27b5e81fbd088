"""The activations, losses and tensor utilities of tensorplug.nn.functional beyond the first
set, against numpy / closed-form oracles, with finite-difference gradient checks and PyTorch's
error messages."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn import functional as F
from tests.needs import needs_autograd


def a(t: tp.Tensor) -> np.ndarray:
    return np.asarray(tp.detach(t).numpy())


# values off the kinks (finite differences need smooth neighbourhoods), plus large ones
XS = np.array(
    [
        [-3.1, -1.2, -0.4, 0.3, 0.9],
        [1.7, 2.6, -2.2, 5.3, 7.1],
        [-0.05, 0.05, 3.3, -4.4, 0.6],
        [-700.0, 700.0, 30.0, -30.0, 1.1],
    ]
)


@pytest.fixture
def x() -> tp.Tensor:
    return tp.tensor(XS, dtype=tp.float64)


def leaf(arr: np.ndarray) -> tp.Tensor:
    return tp.tensor(arr, dtype=tp.float64, requires_grad=True)


def softplus_np(x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    bx = beta * x
    return np.where(bx > threshold, x, np.logaddexp(0, bx) / beta)


def sigmoid_np(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


def logsigmoid_np(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0, -x)


# --- activations ------------------------------------------------------------------------------


def test_activations_match_their_closed_forms(x):
    xn = XS
    with np.errstate(over="ignore"):
        elu = np.where(xn > 0, xn, 1.5 * np.expm1(np.minimum(xn, 0)))
    cases = [
        (F.leaky_relu(x), np.where(xn > 0, xn, 0.01 * xn)),
        (F.leaky_relu(x, 0.2), np.where(xn > 0, xn, 0.2 * xn)),
        (F.elu(x, 1.5), elu),
        (F.softplus(x), softplus_np(xn)),
        (F.softplus(x, 2.0, 5.0), softplus_np(xn, 2.0, 5.0)),
        (F.softplus(x, -1.0), softplus_np(xn, -1.0)),
        (F.logsigmoid(x), logsigmoid_np(xn)),
        (F.hardtanh(x), np.clip(xn, -1, 1)),
        (F.hardtanh(x, -2.0, 3.0), np.clip(xn, -2, 3)),
        (F.relu6(x), np.clip(xn, 0, 6)),
        (F.softmin(x, 1), np.exp(-xn - np.logaddexp.reduce(-xn, axis=1, keepdims=True))),
    ]
    for got, want in cases:
        assert np.isfinite(a(got)).all()
        np.testing.assert_allclose(a(got), want, rtol=1e-12, atol=1e-300)


def test_softplus_and_logsigmoid_do_not_overflow_in_float16():
    # exp(20) overflows float16: the stable forms never compute it
    x = tp.tensor([-20.0, 0.0, 11.0, 19.0, 20.0, 60.0], dtype=tp.float16)
    np.testing.assert_allclose(
        a(F.softplus(x)).astype(np.float64),
        softplus_np(a(x).astype(np.float64)),
        rtol=2e-3,
        atol=1e-7,
    )
    np.testing.assert_allclose(
        a(F.logsigmoid(x)).astype(np.float64),
        logsigmoid_np(a(x).astype(np.float64)),
        rtol=2e-3,
        atol=1e-7,
    )
    assert F.softplus(x).dtype is tp.float16 and F.logsigmoid(x).dtype is tp.float16


def test_hardtanh_keeps_integers_and_nan():
    np.testing.assert_array_equal(a(F.relu6(tp.tensor([-3, 0, 9]))), [0, 0, 6])
    assert F.relu6(tp.tensor([-3, 0, 9])).dtype is tp.int64
    assert np.isnan(a(F.hardtanh(tp.tensor([float("nan")])))).all()


def test_inplace_activations_write_the_input(x):
    for fn in (F.leaky_relu, F.elu, F.hardtanh, F.relu6):
        y = x.clone()
        assert fn(y, inplace=True) is y
        np.testing.assert_array_equal(a(y), a(fn(x)))


def test_softmax_family_without_dim_warns_and_picks_torchs_dim(x):
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        implicit = F.softmin(x)
    np.testing.assert_allclose(a(implicit), a(F.softmin(x, 1)), rtol=1e-15)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        assert np.allclose(a(F.softmax(tp.ones(2, 3, 4))), 0.5)  # 3-d: dim 0
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        np.testing.assert_allclose(a(F.log_softmax(x)), a(F.log_softmax(x, 1)), rtol=1e-15)
    assert F.softmin(x.float(), 1, dtype=tp.float64).dtype is tp.float64


def test_hardtanh_rejects_inverted_bounds(x):
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(ValueError, match=r"Hardtanh: max_val \(1.0\) must be greater"):
        nn.Hardtanh(1.0, 1.0)


@needs_autograd
@pytest.mark.parametrize("fn", [
    F.leaky_relu, F.elu, F.softplus, F.logsigmoid, F.hardtanh, F.relu6,
    lambda t: F.softplus(t, 0.5, 1.0), lambda t: F.elu(t, 0.3), lambda t: F.softmin(t, 0),
])  # fmt: skip
def test_activation_gradients(fn):
    assert tp.autograd.gradcheck(fn, (leaf(XS[:3]),))


@needs_autograd
def test_activation_gradients_at_the_kinks_are_torchs():
    # PyTorch: leaky_relu/elu take the negative side at 0, hardtanh is flat at its bounds,
    # softplus and logsigmoid are smooth (1/2 at 0)
    z = leaf(np.array([0.0, -1.0, 1.0, 6.0, 800.0, -800.0]))
    grads = {
        "leaky_relu": (F.leaky_relu(z, 0.2), [0.2, 0.2, 1, 1, 1, 0.2]),
        "elu": (F.elu(z, 2.0), [2.0, 2 * np.exp(-1), 1, 1, 1, 0]),
        "hardtanh": (F.hardtanh(z), [1, 0, 0, 0, 0, 0]),
        "relu6": (F.relu6(z), [0, 0, 1, 0, 0, 0]),
        "softplus": (F.softplus(z), sigmoid_np(np.array([0.0, -1, 1, 6, 800, -800]))),
        "logsigmoid": (F.logsigmoid(z), sigmoid_np(np.array([0.0, 1, -1, -6, -800, 800]))),
    }
    for name, (out, want) in grads.items():
        (g,) = tp.autograd.grad(out.sum(), z)
        assert np.isfinite(a(g)).all(), name
        np.testing.assert_allclose(a(g), want, rtol=1e-12, atol=1e-300, err_msg=name)


# --- losses -----------------------------------------------------------------------------------

T = np.array(
    [
        [0.2, -1.5, 0.1, 0.4, 2.0],
        [1.0, 2.4, -2.0, 2.0, 6.0],
        [0.5, 0.0, 3.0, -1.0, 0.3],
        [-699.0, 699.5, 29.0, -31.0, 1.05],
    ]
)
W = np.linspace(0.5, 2.0, 20).reshape(4, 5)


def reduce_np(loss: np.ndarray, reduction: str) -> np.ndarray:
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]


def smooth_l1_np(d: np.ndarray, beta: float) -> np.ndarray:
    ad = np.abs(d)
    return ad if beta == 0 else np.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)


def huber_np(d: np.ndarray, delta: float) -> np.ndarray:
    ad = np.abs(d)
    return np.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(x, reduction):
    t, w, d = tp.tensor(T), tp.tensor(W), XS - T
    cases = [
        (F.l1_loss(x, t, reduction=reduction), reduce_np(np.abs(d), reduction)),
        (F.smooth_l1_loss(x, t, reduction=reduction), reduce_np(smooth_l1_np(d, 1.0), reduction)),
        (
            F.smooth_l1_loss(x, t, reduction=reduction, beta=0.5),
            reduce_np(smooth_l1_np(d, 0.5), reduction),
        ),
        (F.smooth_l1_loss(x, t, reduction=reduction, beta=0.0), reduce_np(np.abs(d), reduction)),
        (F.huber_loss(x, t, reduction), reduce_np(huber_np(d, 1.0), reduction)),
        (F.huber_loss(x, t, reduction, 2.5), reduce_np(huber_np(d, 2.5), reduction)),
        (F.huber_loss(x, t, reduction, weight=w), reduce_np(W * huber_np(d, 1.0), reduction)),
    ]
    weighted_l1 = W * np.abs(d)
    want_l1 = (
        weighted_l1.sum() / W.sum() if reduction == "mean" else reduce_np(weighted_l1, reduction)
    )
    cases.append((F.l1_loss(x, t, reduction=reduction, weight=w), want_l1))
    for got, want in cases:
        np.testing.assert_allclose(a(got), want, rtol=1e-12)


def bce_logits_np(x, t, weight=None, pos_weight=None):
    pw = 1.0 if pos_weight is None else pos_weight
    loss = -(pw * t * logsigmoid_np(x) + (1 - t) * logsigmoid_np(-x))
    return loss if weight is None else weight * loss


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_with_logits(x, reduction):
    p = np.clip(np.abs(T) / 10, 0, 1)
    t, w, pw = tp.tensor(p), tp.tensor(W[0]), tp.tensor([1.0, 2.0, 0.5, 3.0, 1.0], dtype=tp.float64)
    got = F.binary_cross_entropy_with_logits(x, t, reduction=reduction)
    assert np.isfinite(a(got)).all()  # logits of ±700 included
    np.testing.assert_allclose(a(got), reduce_np(bce_logits_np(XS, p), reduction), rtol=1e-12)
    got = F.binary_cross_entropy_with_logits(x, t, w, reduction=reduction, pos_weight=pw)
    np.testing.assert_allclose(
        a(got), reduce_np(bce_logits_np(XS, p, a(w), a(pw)), reduction), rtol=1e-12
    )
    # = binary_cross_entropy of the probabilities, where those are representable
    small = tp.tensor(XS[:3])
    np.testing.assert_allclose(
        a(F.binary_cross_entropy_with_logits(small, tp.tensor(p[:3]), reduction=reduction)),
        a(F.binary_cross_entropy(F.sigmoid(small), tp.tensor(p[:3]), reduction=reduction)),
        rtol=1e-10,
    )


def kl_np(x, t, log_target=False):
    if log_target:
        return np.exp(t) * (t - x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t == 0, 0.0, t * np.log(np.where(t == 0, 1.0, t))) - t * x


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
def test_kl_div(reduction):
    logq = np.log(np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]]))
    p = np.array([[0.0, 0.5, 0.5], [0.2, 0.2, 0.6]])
    for log_target, t in ((False, p), (True, np.log(p + 0.1))):
        loss = kl_np(logq, t, log_target)
        want = loss.sum() / 2 if reduction == "batchmean" else reduce_np(loss, reduction)
        got = F.kl_div(tp.tensor(logq), tp.tensor(t), reduction=reduction, log_target=log_target)
        np.testing.assert_allclose(a(got), want, rtol=1e-12)


def test_kl_div_mean_warns_and_batchmean_of_a_scalar_is_the_sum():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(tp.zeros(2), tp.ones(2))
    got = F.kl_div(
        tp.tensor(0.5, dtype=tp.float64), tp.tensor(0.25, dtype=tp.float64), reduction="batchmean"
    )
    np.testing.assert_allclose(a(got), kl_np(0.5, 0.25), rtol=1e-12)


def test_loss_errors(x):
    t = tp.tensor(T)
    with pytest.raises(ValueError, match="l1_loss: avg is not a valid value for reduction"):
        F.l1_loss(x, t, reduction="avg")
    with pytest.raises(ValueError, match="huber_loss: avg is not a valid value for reduction"):
        F.huber_loss(x, t, "avg")
    with pytest.raises(ValueError, match="smooth_l1_loss: avg is not a valid value"):
        F.smooth_l1_loss(x, t, reduction="avg")
    with pytest.raises(ValueError, match="binary_cross_entropy_with_logits: avg is not a valid"):
        F.binary_cross_entropy_with_logits(x, t, reduction="avg")
    with pytest.raises(
        ValueError,
        match=r"kl_div: avg is not a valid value for reduction \(none, "
        r"batchmean, mean, sum\)",
    ):
        F.kl_div(x, t, reduction="avg")
    with pytest.raises(
        RuntimeError, match="smooth_l1_loss does not support negative values for beta."
    ):
        F.smooth_l1_loss(x, t, beta=-1.0)
    with pytest.raises(
        RuntimeError, match="huber_loss does not support non-positive values for delta."
    ):
        F.huber_loss(x, t, delta=0.0)
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        F.l1_loss(x, t, weight=tp.ones(5))
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        F.huber_loss(x, t, weight=tp.ones(5))
    with pytest.raises(
        ValueError,
        match=r"Target size \(\[5\]\) must be the same as input size "
        r"\(\[4, 5\]\)",
    ):
        F.binary_cross_entropy_with_logits(x, t[0])
    with pytest.warns(
        UserWarning,
        match=r"Using a target size \(\[5\]\) that is different to "
        r"the input size \(\[4, 5\]\)",
    ):
        np.testing.assert_allclose(a(F.l1_loss(x, t[0])), np.abs(XS - T[0]).mean(), rtol=1e-12)


@needs_autograd
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_gradients(reduction):
    x, t, w = leaf(XS[:3]), leaf(T[:3]), tp.tensor(W[:3])
    p = leaf(np.clip(np.abs(T[:3]) / 10, 0.05, 0.95))
    pw = tp.tensor([1.0, 2.0, 0.5, 3.0, 1.0], dtype=tp.float64)
    checks = [
        (lambda x, t: F.l1_loss(x, t, reduction=reduction), (x, t)),
        (lambda x, t: F.l1_loss(x, t, reduction=reduction, weight=w), (x, t)),
        (lambda x, t: F.smooth_l1_loss(x, t, reduction=reduction, beta=0.5), (x, t)),
        (lambda x, t: F.huber_loss(x, t, reduction, 1.5, w), (x, t)),
        (
            lambda x, p: F.binary_cross_entropy_with_logits(
                x, p, w, reduction=reduction, pos_weight=pw
            ),
            (x, p),
        ),
        (
            lambda x, p: F.kl_div(x, p, reduction="sum" if reduction == "mean" else reduction),
            (x, p),
        ),
        (
            lambda x, t: (
                F.kl_div(x, t, reduction=reduction, log_target=True)
                if reduction != "mean"
                else F.kl_div(x, t, reduction="batchmean", log_target=True)
            ),
            (x, t),
        ),
    ]
    for fn, inputs in checks:
        assert tp.autograd.gradcheck(fn, inputs)


@needs_autograd
def test_kl_div_gradient_at_zero_targets_is_finite():
    # torch's xlogy backward gives NaN for a zero target; the t log t term is taken as 0 there
    x, t = leaf(np.array([0.3, -0.2])), leaf(np.array([0.0, 0.5]))
    gx, gt = tp.autograd.grad(F.kl_div(x, t, reduction="sum"), [x, t])
    np.testing.assert_allclose(a(gx), [0.0, -0.5], rtol=1e-15)
    np.testing.assert_allclose(a(gt), [-0.3, np.log(0.5) + 1 + 0.2], rtol=1e-12)


# --- tensor utilities -------------------------------------------------------------------------


@pytest.mark.parametrize(("p", "dim"), [(2.0, 1), (1.0, 0), (3.0, -1)])
def test_normalize(x, p, dim):
    norm = np.linalg.norm(XS, ord=p, axis=dim, keepdims=True)
    np.testing.assert_allclose(a(F.normalize(x, p, dim)), XS / norm, rtol=1e-12)
    out = tp.empty(4, 5, dtype=tp.float64)
    assert F.normalize(x, p, dim, out=out) is out
    np.testing.assert_allclose(a(out), XS / norm, rtol=1e-12)


def test_normalize_leaves_zero_rows_zero():
    z = tp.zeros(2, 3, dtype=tp.float64)
    np.testing.assert_array_equal(a(F.normalize(z)), np.zeros((2, 3)))


@pytest.mark.parametrize("pad", [(1, 2), (0, 0, 1, 1), (-1, 2), (2, -3, 1, 0), (1, 1, 1, 1)])
def test_pad_constant(x, pad):
    got = F.pad(x, pad, value=1.5)
    want = XS
    for i in range(len(pad) // 2):  # numpy pads; negative amounts crop
        axis = XS.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        idx = [slice(None)] * XS.ndim
        idx[axis] = slice(max(-left, 0), want.shape[axis] - max(-right, 0))
        want = want[tuple(idx)]
        widths = [(0, 0)] * XS.ndim
        widths[axis] = (max(left, 0), max(right, 0))
        want = np.pad(want, widths, constant_values=1.5)
    np.testing.assert_array_equal(a(got), want)


def test_pad_keeps_the_dtype_and_pads_three_dims():
    got = F.pad(tp.tensor([1, 2]), (1, 2), value=1.5)
    assert got.dtype is tp.int64
    np.testing.assert_array_equal(a(got), [1, 1, 2, 1, 1])  # the value is cast, as torch does
    y = F.pad(tp.ones(2, 2, 2), (1, 0, 0, 1, 2, 2))
    assert y.shape == (6, 3, 3) and a(y).sum() == 8


def test_pad_errors(x):
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(
        RuntimeError,
        match="Padding length should be less than or equal to two "
        "times the input dimension but got padding length 6",
    ):
        F.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(
        RuntimeError,
        match=r"The input size 5, plus negative padding -3 and -3 "
        r"resulted in a negative output size",
    ):
        F.pad(x, (-3, -3))
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(x, (1, 1), mode="foo")
    with pytest.raises(RuntimeError, match='Padding mode "reflect" doesn\'t take in value'):
        F.pad(x, (1, 1), mode="reflect", value=1.0)
    with pytest.raises(
        NotImplementedError,
        match="Padding size 4 is not supported for 2D input tensor.\nSupported combinations",
    ):
        F.pad(x, (1, 1, 1, 1), mode="replicate")
    with pytest.raises(
        RuntimeError,
        match=r"Argument #4: Padding size should be less than the "
        r"corresponding input dimension, but got: padding "
        r"\(5, 0\) at dimension 1 of input \[4, 5\]",
    ):
        F.pad(x, (5, 0), mode="reflect")
    with pytest.raises(RuntimeError, match=r"Argument #6: .* padding \(0, 4\) at dimension 1"):
        F.pad(x[None], (0, 0, 0, 4), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once."):
        F.pad(x, (6, 0), mode="circular")
    with pytest.raises(
        RuntimeError,
        match=r"Expected 2D or 3D \(batch mode\) tensor with "
        r"possibly 0 batch size and other non-zero dimensions "
        r"for input, but got: \[1, 0\]",
    ):
        F.pad(tp.zeros(1, 0), (1, 1), mode="reflect")


NP_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(1, 2), (3, 0), (2, 1, 1, 2), (0, 1, 2, 0, 1, 1)])
def test_pad_modes_match_numpy(mode, pad):
    # the smallest input each padding takes: one dimension more than it pads
    shape = (2, 3, 4, 5)[-(len(pad) // 2 + 1) :]
    xs = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    widths = [(0, 0)] * xs.ndim
    for i in range(len(pad) // 2):
        widths[xs.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    got = F.pad(tp.tensor(xs), pad, mode=mode)
    np.testing.assert_array_equal(a(got), np.pad(xs, widths, mode=NP_MODES[mode]))


def test_pad_modes_with_negative_amounts():
    xs = np.arange(8.0).reshape(2, 4)
    # reflect and replicate read the input's own coordinates; circular wraps the cropped part
    np.testing.assert_array_equal(
        a(F.pad(tp.tensor(xs), (-1, 2), mode="reflect")), xs[:, [1, 2, 3, 2, 1]]
    )
    np.testing.assert_array_equal(
        a(F.pad(tp.tensor(xs), (-1, 2), mode="replicate")), xs[:, [1, 2, 3, 3, 3]]
    )
    np.testing.assert_array_equal(
        a(F.pad(tp.tensor(xs), (-1, 2), mode="circular")), xs[:, [1, 2, 3, 1, 2]]
    )


@needs_autograd
def test_pad_and_normalize_gradients():
    xs = leaf(XS[:3])
    assert tp.autograd.gradcheck(lambda t: F.pad(t, (2, -1, 1, 1), value=3.0), (xs,))
    for mode in ("reflect", "replicate", "circular"):  # elements read twice add up
        assert tp.autograd.gradcheck(lambda t, m=mode: F.pad(t[None], (2, -1, 1, 2), mode=m), (xs,))
    assert tp.autograd.gradcheck(lambda t: F.normalize(t, 3.0, 0), (xs,))
    assert tp.autograd.gradcheck(lambda t: F.normalize(t), (xs,))


def test_one_hot():
    got = F.one_hot(tp.tensor([[0, 2], [1, 1]]))
    assert got.dtype is tp.int64 and got.shape == (2, 2, 3)
    np.testing.assert_array_equal(a(got), np.eye(3, dtype=np.int64)[[[0, 2], [1, 1]]])
    np.testing.assert_array_equal(a(F.one_hot(tp.tensor(1), 3)), [0, 1, 0])
    assert F.one_hot(tp.tensor([], dtype=tp.int64), 3).shape == (0, 3)


def test_one_hot_errors():
    with pytest.raises(
        RuntimeError, match="one_hot is only applicable to index tensor of type LongTensor."
    ):
        F.one_hot(tp.tensor([1.0]))
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(tp.tensor([-1]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(tp.tensor([3]), 2)
    with pytest.raises(
        RuntimeError, match="Can not infer total number of classes from empty tensor."
    ):
        F.one_hot(tp.tensor([], dtype=tp.int64))


def test_cosine_similarity_and_pairwise_distance(x):
    t = tp.tensor(T)
    for dim in (0, 1, -1):
        want = (XS * T).sum(dim) / (np.linalg.norm(XS, axis=dim) * np.linalg.norm(T, axis=dim))
        np.testing.assert_allclose(a(F.cosine_similarity(x, t, dim)), want, rtol=1e-12)
    col = XS[:, :1]  # broadcast along dim before the norms, as PyTorch does
    want = (col * T).sum(1) / (
        np.linalg.norm(np.broadcast_to(col, T.shape), axis=1) * np.linalg.norm(T, axis=1)
    )
    np.testing.assert_allclose(a(F.cosine_similarity(tp.tensor(col), t)), want, rtol=1e-12)
    np.testing.assert_array_equal(a(F.cosine_similarity(tp.zeros(3), tp.zeros(3), 0)), 0.0)
    for p in (1.0, 2.0, 3.0):
        want = np.linalg.norm(XS - T + 1e-6, ord=p, axis=-1)
        np.testing.assert_allclose(a(F.pairwise_distance(x, t, p)), want, rtol=1e-12)
    assert F.pairwise_distance(x, t, keepdim=True).shape == (4, 1)
    with pytest.raises(
        RuntimeError,
        match=r"The size of tensor a \(5\) must match the size of "
        r"tensor b \(2\) at non-singleton dimension 1",
    ):
        F.cosine_similarity(x, t[:, :2])


@needs_autograd
def test_cosine_similarity_and_pairwise_distance_gradients():
    x1, x2 = leaf(XS[:3]), leaf(T[:3])
    assert tp.autograd.gradcheck(lambda u, v: F.cosine_similarity(u, v), (x1, x2))
    assert tp.autograd.gradcheck(lambda u, v: F.cosine_similarity(u, v, 0), (x1, x2))
    assert tp.autograd.gradcheck(lambda u, v: F.pairwise_distance(u, v, 3.0), (x1, x2))


# --- modules ----------------------------------------------------------------------------------


def test_module_reprs_are_torchs():
    reprs = {
        nn.Softmax(): "Softmax(dim=None)",
        nn.LogSoftmax(1): "LogSoftmax(dim=1)",
        nn.Softmin(0): "Softmin(dim=0)",
        nn.LeakyReLU(): "LeakyReLU(negative_slope=0.01)",
        nn.LeakyReLU(0.2, True): "LeakyReLU(negative_slope=0.2, inplace=True)",
        nn.ELU(): "ELU(alpha=1.0)",
        nn.ELU(inplace=True): "ELU(alpha=1.0, inplace=True)",
        nn.Softplus(): "Softplus(beta=1.0, threshold=20.0)",
        nn.Hardtanh(): "Hardtanh(min_val=-1.0, max_val=1.0)",
        nn.Hardtanh(-2, 2, True): "Hardtanh(min_val=-2, max_val=2, inplace=True)",
        nn.ReLU6(): "ReLU6()",
        nn.ReLU6(True): "ReLU6(inplace=True)",
        nn.LogSigmoid(): "LogSigmoid()",
        nn.L1Loss(): "L1Loss()",
        nn.SmoothL1Loss(beta=0.5): "SmoothL1Loss()",
        nn.HuberLoss(delta=2): "HuberLoss()",
        nn.BCEWithLogitsLoss(): "BCEWithLogitsLoss()",
        nn.KLDivLoss(): "KLDivLoss()",
    }
    for module, text in reprs.items():
        assert repr(module) == text


def test_modules_call_their_functions(x):
    t = tp.tensor(T)
    p = tp.tensor(np.clip(np.abs(T) / 10, 0, 1))
    pairs = [
        (nn.LeakyReLU(0.2)(x), F.leaky_relu(x, 0.2)),
        (nn.ELU(0.5)(x), F.elu(x, 0.5)),
        (nn.Softplus(2, 5)(x), F.softplus(x, 2, 5)),
        (nn.Hardtanh(-2, 2)(x), F.hardtanh(x, -2, 2)),
        (nn.ReLU6()(x), F.relu6(x)),
        (nn.LogSigmoid()(x), F.logsigmoid(x)),
        (nn.Softmax(0)(x), F.softmax(x, 0)),
        (nn.LogSoftmax(1)(x), F.log_softmax(x, 1)),
        (nn.Softmin(1)(x), F.softmin(x, 1)),
        (nn.L1Loss("sum")(x, t), F.l1_loss(x, t, reduction="sum")),
        (nn.SmoothL1Loss(beta=0.5)(x, t), F.smooth_l1_loss(x, t, beta=0.5)),
        (nn.HuberLoss("none", 2.0)(x, t), F.huber_loss(x, t, "none", 2.0)),
        (
            nn.BCEWithLogitsLoss(pos_weight=tp.full([5], 2.0, dtype=tp.float64))(x, p),
            F.binary_cross_entropy_with_logits(
                x, p, pos_weight=tp.full([5], 2.0, dtype=tp.float64)
            ),
        ),
        (
            nn.KLDivLoss("batchmean", log_target=True)(x, t),
            F.kl_div(x, t, reduction="batchmean", log_target=True),
        ),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(a(got), a(want))


def test_loss_modules_check_reduction_and_keep_weights_as_buffers():
    with pytest.raises(
        ValueError,
        match=r"L1Loss: avg is not a valid value for reduction "
        r"\(none, mean, sum\)",
    ):
        nn.L1Loss("avg")
    with pytest.raises(
        ValueError,
        match=r"KLDivLoss: avg is not a valid value for reduction "
        r"\(none, batchmean, mean, sum\)",
    ):
        nn.KLDivLoss("avg")
    assert nn.KLDivLoss("batchmean").reduction == "batchmean"
    loss = nn.BCEWithLogitsLoss(tp.ones(3), pos_weight=tp.ones(3))
    assert list(loss.state_dict()) == ["weight", "pos_weight"]
