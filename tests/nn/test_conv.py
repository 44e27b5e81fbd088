"""Convolution, padding, unfold/fold (issue 35): against PyTorch's results frozen in
tests/nn/data/conv.{npz,json} (tools/gen_conv_fixtures.py), so CI without torch compares too,
and against torch itself where it is importable; gradcheck and gradgradcheck; vmap; the modules'
arguments, init, repr and state_dict; Meta shapes."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn import functional as F

DATA = Path(__file__).parent / "data"
META = json.loads((DATA / "conv.json").read_text(encoding="utf-8"))
ARRAYS = dict(np.load(DATA / "conv.npz"))

needs_autograd = pytest.mark.skipif(
    not hasattr(tp, "autograd") or not hasattr(tp.autograd, "gradcheck"),
    reason="needs tensorplug-autograd",
)


def arr(key: str) -> np.ndarray:
    return ARRAYS[key].astype(np.float64)


def close(got: tp.Tensor, want: np.ndarray, what: str, tol: float = 1e-5) -> None:
    g = got.detach().numpy()
    assert g.shape == want.shape, f"{what}: shape {g.shape} != {want.shape}"
    np.testing.assert_allclose(g, want, rtol=tol, atol=tol, err_msg=what)


def leaf(a: np.ndarray) -> tp.Tensor:
    return tp.tensor(a, requires_grad=True)


# --- frozen PyTorch results ---------------------------------------------------------------


@needs_autograd
@pytest.mark.parametrize("case", META["conv"], ids=lambda c: c["name"])
def test_convolution_matches_torch_frozen(case: dict[str, Any]) -> None:
    name = case["name"]
    x, w = leaf(arr(f"{name}/x")), leaf(arr(f"{name}/w"))
    b = leaf(arr(f"{name}/b")) if case["bias"] else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # padding="same" with an even kernel warns, as torch
        y = getattr(F, case["fn"])(x, w, b, **case["kwargs"])
    close(y, arr(f"{name}/y"), "output")
    y.backward(tp.tensor(arr(f"{name}/g")))
    close(x.grad, arr(f"{name}/gx"), "input gradient")
    close(w.grad, arr(f"{name}/gw"), "weight gradient")
    if b is not None:
        close(b.grad, arr(f"{name}/gb"), "bias gradient")


@needs_autograd
@pytest.mark.parametrize("case", META["pad"], ids=lambda c: c["name"])
def test_pad_matches_torch_frozen(case: dict[str, Any]) -> None:
    name = case["name"]
    x = leaf(arr(f"{name}/x"))
    y = F.pad(x, case["pad"], case["mode"], case["value"])
    close(y, arr(f"{name}/y"), "output")
    y.backward(tp.tensor(arr(f"{name}/g")))
    close(x.grad, arr(f"{name}/gx"), "gradient")


def _error_call(case: dict[str, Any]) -> None:
    x = tp.randn(*case["input"])
    if case["call"] == "pad":
        F.pad(x, **case["kwargs"])
    elif case["call"] in ("unfold", "fold"):
        getattr(F, case["call"])(x, **case["kwargs"])
    else:
        w = tp.randn(*case["weight"])
        b = tp.randn(*case["bias"]) if case["bias"] is not None else None
        getattr(F, case["call"])(x, w, b, **case["kwargs"])


@pytest.mark.parametrize("case", META["errors"], ids=lambda c: c["name"])
def test_errors_match_torch_frozen(case: dict[str, Any]) -> None:
    kinds = {"RuntimeError": RuntimeError, "ValueError": ValueError,
             "NotImplementedError": NotImplementedError}  # fmt: skip
    with pytest.raises(kinds[case["type"]]) as info:
        _error_call(case)
    # PyTorch's words; tensorplug's kernels put the operator's name in front
    assert case["message"] in str(info.value).splitlines()[0], str(info.value)


@pytest.mark.parametrize("case", META["modules"], ids=lambda c: c["name"])
def test_module_state_dict_from_torch_gives_torch_s_output(case: dict[str, Any]) -> None:
    name = case["name"]
    m = getattr(nn, case["cls"])(*case["args"], **case["kwargs"], dtype=tp.float64)
    assert list(m.state_dict()) == case["keys"]
    assert repr(m) == case["repr"]
    state = {k: tp.tensor(arr(f"{name}/state/{k}")) for k in case["keys"]}
    m.load_state_dict(state)
    with tp.no_grad():
        y = m(tp.tensor(arr(f"{name}/x")), **case["forward"])
    close(y, arr(f"{name}/y"), name)


@pytest.mark.parametrize("case", META["reprs"], ids=lambda c: c["cls"])
def test_module_repr_matches_torch(case: dict[str, Any]) -> None:
    assert repr(getattr(nn, case["cls"])(*case["args"], **case["kwargs"])) == case["repr"]


@needs_autograd
def test_a_conv_net_trains_as_in_torch_frozen() -> None:
    """8 SGD steps of a small conv net (reflect padding, groups, a transposed convolution) from
    torch's initial weights give torch's losses (float64)."""
    net = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, padding_mode="reflect"),
        nn.ReLU(),
        nn.Conv2d(4, 6, 3, stride=2, groups=2),
        nn.ReLU(),
        nn.ConvTranspose2d(6, 2, 2, stride=2),
        nn.Flatten(),
        nn.Linear(72, 3),
    ).double()
    case = META["trajectory"]
    net.load_state_dict({k: tp.tensor(arr(f"trajectory/state/{k}")) for k in net.state_dict()})
    opt = tp.optim.SGD(net.parameters(), lr=case["lr"])
    x, y = tp.tensor(arr("trajectory/x")), tp.tensor(case["targets"])
    losses = []
    for _ in range(len(case["losses"])):
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.testing.assert_allclose(losses, case["losses"], rtol=1e-10, atol=1e-10)


# --- PyTorch itself -------------------------------------------------------------------------


@needs_autograd
def test_random_convolutions_match_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for k in (1, 2, 3):
        for transposed in (False, True):
            groups = int(rng.integers(1, 3))
            cin, cout = 2 * groups, 3 * groups
            kernel = tuple(int(v) for v in rng.integers(1, 4, k))
            stride = tuple(int(v) for v in rng.integers(1, 3, k))
            dilation = tuple(int(v) for v in rng.integers(1, 3, k))
            padding = tuple(int(v) for v in rng.integers(0, 2, k))
            x = rng.standard_normal((2, cin, *([6] * k)))
            w = rng.standard_normal(
                (cin, cout // groups, *kernel) if transposed else (cout, cin // groups, *kernel)
            )
            b = rng.standard_normal(cout)
            kw: dict[str, Any] = {"stride": stride, "padding": padding, "dilation": dilation,
                                  "groups": groups}  # fmt: skip
            fn = f"conv_transpose{k}d" if transposed else f"conv{k}d"
            if transposed:
                kw["output_padding"] = tuple(
                    min(s, d) - 1 for s, d in zip(stride, dilation, strict=True)
                )
            tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
            ty = getattr(torch.nn.functional, fn)(tx, tw, tb, **kw)
            px, pw, pb = leaf(x), leaf(w), leaf(b)
            py = getattr(F, fn)(px, pw, pb, **kw)
            what = f"{fn} {kw}"
            close(py, ty.detach().numpy(), what, 1e-10)
            g = rng.standard_normal(tuple(ty.shape))
            ty.backward(torch.tensor(g))
            py.backward(tp.tensor(g))
            for p, t in ((px, tx), (pw, tw), (pb, tb)):
                close(p.grad, t.grad.numpy(), what, 1e-10)


def test_float32_conv2d_and_fold_match_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 12, 10)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    got = F.conv2d(tp.tensor(x), tp.tensor(w), None, 1, "same")
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), None, 1, "same")
    assert got.dtype == tp.float32
    close(got, want.numpy(), "conv2d", 1e-4)
    cols = F.unfold(tp.tensor(x), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    tcols = torch.nn.functional.unfold(torch.tensor(x), (2, 3), dilation=(2, 1), padding=1,
                                       stride=(1, 2))  # fmt: skip
    close(cols, tcols.numpy(), "unfold")
    back = F.fold(cols, (12, 10), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    tback = torch.nn.functional.fold(tcols, (12, 10), (2, 3), dilation=(2, 1), padding=1,
                                     stride=(1, 2))  # fmt: skip
    close(back, tback.numpy(), "fold", 1e-4)


# --- gradients of gradients ------------------------------------------------------------------


def _f64(*shape: int) -> tp.Tensor:
    return tp.randn(*shape, dtype=tp.float64, requires_grad=True)


@needs_autograd
@pytest.mark.parametrize(
    ("fn", "shapes", "kwargs"),
    [
        ("conv2d", [(2, 4, 5, 4), (6, 2, 3, 2), (6,)],
         {"stride": (2, 1), "padding": 1, "dilation": (1, 2), "groups": 2}),
        ("conv1d", [(1, 2, 6), (3, 2, 2), None], {"padding": "same", "dilation": 1}),
        ("conv_transpose2d", [(2, 4, 3, 3), (4, 3, 2, 2), (6,)],
         {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    ],
)  # fmt: skip
def test_gradcheck_and_gradgradcheck(fn: str, shapes: list[Any], kwargs: dict[str, Any]) -> None:
    tp.manual_seed(0)
    args = tuple(_f64(*s) for s in shapes if s is not None)

    def f(*a: tp.Tensor) -> tp.Tensor:
        b = a[2] if len(a) == 3 else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r: tp.Tensor = getattr(F, fn)(a[0], a[1], b, **kwargs)
        return r

    assert tp.autograd.gradcheck(f, args)
    assert tp.autograd.gradgradcheck(f, args)


@needs_autograd
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradgradcheck(mode: str) -> None:
    tp.manual_seed(0)
    x = _f64(2, 3, 4, 5)

    def f(t: tp.Tensor) -> tp.Tensor:
        return F.pad(t, (2, 1, -1, 2), mode)

    assert tp.autograd.gradcheck(f, (x,))
    assert tp.autograd.gradgradcheck(f, (x,))


@needs_autograd
def test_unfold_fold_gradgradcheck() -> None:
    tp.manual_seed(0)
    x = _f64(2, 2, 4, 5)
    assert tp.autograd.gradgradcheck(lambda t: F.unfold(t, (2, 3), padding=(1, 0), stride=2), (x,))
    c = _f64(2, 8, 6)
    assert tp.autograd.gradgradcheck(lambda t: F.fold(t, (4, 5), 2, padding=(0, 1), stride=2), (c,))


@needs_autograd
def test_backward_asks_only_for_the_gradients_it_needs() -> None:
    """The first layer's input needs no gradient: one convolution_backward call, without it."""
    op = tp.ops.aten.convolution_backward.default
    cpu = op.kernel_for(tp.keys.DispatchKeySet(tp.keys.get("CPU").mask))
    masks: list[list[bool]] = []

    def spy(*args: Any) -> Any:
        masks.append(list(args[-1]))
        return cpu(*args)

    x = tp.randn(2, 3, 6, 6)
    w = tp.randn(4, 3, 3, 3, requires_grad=True)
    with tp.Library("aten", "IMPL") as lib:
        lib.impl("convolution_backward", spy, "CPU", override=True)
        F.conv2d(x, w).sum().backward()
    assert masks == [[False, True, False]]
    assert w.grad is not None and x.grad is None


# Stride-1 convolutions whose input is larger than their output: their input gradient goes
# through widened rows (_input_grad_wide in array_backend/_nn/_conv.py, the samples inside the
# product); groups, dilation, padding, three spatial dimensions, a channels_last input, and the
# transposed convolution whose forward it is.
_WIDE = [
    # (x shape, w shape, padding, dilation, groups)
    ((3, 6, 14, 14), (16, 6, 5, 5), (0, 0), (1, 1), 1),  # LeNet's second layer
    ((2, 4, 9, 8), (6, 2, 3, 2), (1, 0), (1, 1), 2),
    ((2, 3, 10, 9), (2, 3, 3, 3), (1, 2), (2, 1), 1),
    ((2, 4, 5, 6, 5), (4, 1, 2, 3, 2), (0, 1, 0), (1, 1, 2), 4),
]


@pytest.mark.parametrize("xs, ws, padding, dilation, groups", _WIDE)
@pytest.mark.parametrize("channels_last", [False, True])
def test_widened_rows_input_gradient_matches_numpy(
    xs: tuple[int, ...], ws: tuple[int, ...], padding: tuple[int, ...],
    dilation: tuple[int, ...], groups: int, channels_last: bool,
) -> None:  # fmt: skip
    from tensorplug.testing.opinfo.nn._conv import _ref_convolution_backward, ref_conv_transpose

    k = len(xs) - 2
    if channels_last and k != 2:
        pytest.skip("channels_last is 4-D")
    rng = np.random.default_rng(sum(xs) + sum(ws))
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    args = ([1] * k, list(padding), list(dilation), False, [0] * k, groups)
    xt = tp.tensor(x)
    if channels_last:
        xt = xt.contiguous(memory_format=tp.channels_last)
    out = tp.ops.aten.convolution.default(xt, tp.tensor(w), None, *args)
    g = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    gi = tp.ops.aten.convolution_backward.default(
        tp.tensor(g), xt, tp.tensor(w), None, *args, [True, False, False]
    )[0]
    want = _ref_convolution_backward(g, x, w, None, *args, [True, False, False])[0]
    np.testing.assert_allclose(gi.numpy(), want, rtol=2e-5, atol=2e-5 * np.abs(want).max())
    # the transposed convolution of g by w is the same sum, as a forward
    if not channels_last:
        y = tp.ops.aten.convolution.default(
            tp.tensor(g), tp.tensor(w), None, [1] * k, list(padding), list(dilation), True,
            [0] * k, groups,
        )  # fmt: skip
        ref = ref_conv_transpose(g, w, None, 1, padding, 0, groups, dilation)
        assert y.is_contiguous()
        np.testing.assert_allclose(y.numpy(), ref, rtol=2e-5, atol=2e-5 * np.abs(ref).max())


# --- vmap -----------------------------------------------------------------------------------


def _loop(f: Any, *args: Any, in_dims: tuple[Any, ...]) -> tp.Tensor:
    size = next(a.shape[0] for a, d in zip(args, in_dims, strict=True) if d is not None)
    return tp.stack(
        [f(*(a[i] if d is not None else a for a, d in zip(args, in_dims, strict=True)))
         for i in range(size)]
    )  # fmt: skip


@pytest.mark.skipif(not hasattr(tp, "vmap"), reason="needs tensorplug-batched")
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("in_dims", [(0, None, None), (None, 0, None), (0, 0, 0), (None, None, 0)])
def test_vmap_convolution_matches_a_loop(transposed: bool, in_dims: tuple[Any, ...]) -> None:
    tp.manual_seed(0)
    b_ = 3
    x = tp.randn(b_, 2, 4, 5, 5, dtype=tp.float64)
    w = tp.randn(b_, 4, 3, 3, 3, dtype=tp.float64) if transposed else tp.randn(
        b_, 6, 2, 3, 3, dtype=tp.float64)  # fmt: skip
    b = tp.randn(b_, 6, dtype=tp.float64)
    args = [a if d is not None else a[0] for a, d in zip((x, w, b), in_dims, strict=True)]

    def f(x: tp.Tensor, w: tp.Tensor, b: tp.Tensor) -> tp.Tensor:
        if transposed:
            r: tp.Tensor = F.conv_transpose2d(x, w, b, stride=2, padding=1, groups=2)
        else:
            r = F.conv2d(x, w, b, stride=2, padding=1, groups=2)
        return r

    got = tp.vmap(f, in_dims=in_dims)(*args)
    close(got, _loop(f, *args, in_dims=in_dims).numpy(), "vmap", 1e-10)


@needs_autograd
@pytest.mark.skipif(not hasattr(tp, "vmap"), reason="needs tensorplug-batched")
def test_per_sample_gradients_of_a_conv_net() -> None:
    from tensorplug.func import grad, vmap

    tp.manual_seed(0)
    xs = tp.randn(3, 1, 8, 8, dtype=tp.float64)
    w = tp.randn(4, 1, 3, 3, dtype=tp.float64)
    b = tp.randn(4, dtype=tp.float64)

    def loss(w: tp.Tensor, b: tp.Tensor, x: tp.Tensor) -> tp.Tensor:
        h = F.pad(F.conv2d(x[None], w, b, padding=1).relu(), (1, 1, 1, 1), "reflect")
        r: tp.Tensor = h.pow(2).sum()
        return r

    gw, gb = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))(w, b, xs)
    for i in range(3):
        ew, eb = grad(loss, argnums=(0, 1))(w, b, xs[i])
        close(gw[i], ew.numpy(), "weight", 1e-10)
        close(gb[i], eb.numpy(), "bias", 1e-10)


# --- modules ---------------------------------------------------------------------------------


def test_conv_module_init_is_kaiming_uniform_a_sqrt5() -> None:
    tp.manual_seed(0)
    m = nn.Conv2d(16, 32, 3)
    bound = 1 / math.sqrt(16 * 9)  # kaiming_uniform_(a=sqrt(5)) and the bias's: 1/sqrt(fan_in)
    for p in (m.weight, m.bias):
        assert p is not None
        a = p.detach().numpy()
        assert np.abs(a).max() <= bound and np.abs(a).max() > 0.9 * bound
    t = nn.ConvTranspose2d(6, 4, 3, groups=2)
    assert tuple(t.weight.shape) == (6, 2, 3, 3)  # fan_in of the transposed weight: 2 * 9
    assert t.bias is not None and np.abs(t.bias.detach().numpy()).max() <= 1 / math.sqrt(18)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: nn.Conv2d(3, 4, 3, groups=0), "groups must be a positive integer"),
        (lambda: nn.Conv2d(3, 4, 3, groups=2), "in_channels must be divisible by groups"),
        (lambda: nn.Conv2d(4, 3, 3, groups=2), "out_channels must be divisible by groups"),
        (lambda: nn.Conv2d(3, 4, 3, padding="full"), "Invalid padding string 'full'"),
        (lambda: nn.Conv2d(3, 4, 3, stride=2, padding="same"),
         "padding='same' is not supported for strided convolutions"),
        (lambda: nn.Conv2d(3, 4, 3, padding_mode="edge"), "padding_mode must be one of"),
        (lambda: nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"),
         'Only "zeros" padding mode is supported for ConvTranspose2d'),
    ],
)  # fmt: skip
def test_conv_module_argument_errors(make: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make()


def test_conv_transpose_output_size() -> None:
    m = nn.ConvTranspose2d(2, 3, 3, stride=2)
    x = tp.randn(1, 2, 4, 4)
    assert tuple(m(x, output_size=[10, 10]).shape) == (1, 3, 10, 10)
    assert tuple(m(x[0], output_size=[3, 9, 10]).shape) == (3, 9, 10)
    with pytest.raises(ValueError, match=r"valid sizes range from \[9, 9\] to \[10, 10\]"):
        m(x, output_size=[12, 12])


def test_lazy_conv_modules_take_in_channels_from_the_first_input() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lazy modules warn that they are new, as PyTorch's
        m = nn.LazyConv2d(6, 3, padding=1, groups=2)
        t = nn.LazyConvTranspose1d(4, 3, stride=2)
    assert (
        repr(m) == "LazyConv2d(0, 6, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2)"
    )
    assert tuple(m(tp.randn(2, 4, 5, 5)).shape) == (2, 6, 5, 5)
    assert type(m) is nn.Conv2d and tuple(m.weight.shape) == (6, 2, 3, 3) and m.in_channels == 4
    assert tuple(t(tp.randn(3, 5)).shape) == (4, 11)  # unbatched: channels are dimension 0
    assert type(t) is nn.ConvTranspose1d and tuple(t.weight.shape) == (3, 4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bad = nn.LazyConv2d(4, 3, groups=2)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        bad(tp.randn(1, 3, 5, 5))


def test_padding_modules() -> None:
    x = tp.arange(6.0).reshape(1, 2, 3)
    assert nn.ZeroPad1d((1, 0))(x).tolist() == [[[0.0, 0.0, 1.0, 2.0], [0.0, 3.0, 4.0, 5.0]]]
    assert nn.ConstantPad1d(1, 9.0)(x)[0, 0].tolist() == [9.0, 0.0, 1.0, 2.0, 9.0]
    assert nn.ReflectionPad1d(2)(x)[0, 0].tolist() == [2.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0]
    assert nn.ReplicationPad1d((0, 2))(x)[0, 1].tolist() == [3.0, 4.0, 5.0, 5.0, 5.0]
    assert nn.CircularPad1d(1)(x)[0, 0].tolist() == [2.0, 0.0, 1.0, 2.0, 0.0]
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.CircularPad1d(1)(tp.zeros(1, 1, 1, 3))
    assert tuple(nn.ReflectionPad3d(1)(tp.zeros(1, 2, 3, 3, 3)).shape) == (1, 2, 5, 5, 5)


def test_fold_of_unfold_counts_the_blocks() -> None:
    x = tp.ones(1, 2, 4, 4)
    cols = nn.Unfold(2)(x)
    assert tuple(cols.shape) == (1, 8, 9)
    counts = nn.Fold((4, 4), 2)(cols)[0, 0].tolist()
    assert counts[0] == [1.0, 2.0, 2.0, 1.0] and counts[1] == [2.0, 4.0, 4.0, 2.0]


def test_meta_shapes() -> None:
    x = tp.empty(8, 3, 32, 32, device="meta")
    w = tp.empty(16, 3, 5, 5, device="meta")
    assert tuple(F.conv2d(x, w, stride=2, padding=2).shape) == (8, 16, 16, 16)
    wt = tp.empty(3, 4, 4, 4, device="meta")
    assert tuple(F.conv_transpose2d(x, wt, stride=2, padding=1).shape) == (8, 4, 64, 64)
    assert tuple(F.pad(x, (1, 2, 3, 4), "reflect").shape) == (8, 3, 39, 35)
    assert tuple(F.unfold(x, 3).shape) == (8, 27, 900)
    with pytest.raises(RuntimeError, match="expected input\\[8, 3, 32, 32\\] to have 6 channels"):
        F.conv2d(x, tp.empty(4, 6, 3, 3, device="meta"))
