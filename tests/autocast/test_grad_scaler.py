"""tp.amp.GradScaler against PyTorch's documented behaviour: unscaled gradients, a step skipped
when a gradient is inf or NaN, the growth/backoff schedule, state_dict, and its errors."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from needs import autocast, autograd

import tensorplug as tp

autocast()
autograd()


def setup(init_scale: float = 1024.0, **kwargs: Any) -> tuple[Any, Any, Any]:
    p = tp.tensor([1.0, 2.0]).requires_grad_()
    opt = tp.optim.SGD([p], lr=0.1)
    scaler = tp.amp.GradScaler(init_scale=init_scale, **kwargs)
    return p, opt, scaler


def backward(p: Any, scaler: Any, bad: float | None = None) -> None:
    scaler.scale((p * 3.0).sum()).backward()
    if bad is not None:
        with tp.no_grad():
            p.grad[1] = bad


def test_scale_unscale_and_step() -> None:
    p, opt, scaler = setup()
    loss = (p * 3.0).sum()
    scaled = scaler.scale(loss)
    assert scaled.item() == loss.item() * 1024.0
    scaled.backward()
    assert p.grad.tolist() == [3072.0, 3072.0]
    scaler.unscale_(opt)
    assert p.grad.tolist() == [3.0, 3.0]  # divided by the scale, in place
    assert scaler.step(opt) is None  # SGD.step returns None
    np.testing.assert_allclose(p.detach().numpy(), [0.7, 1.7], rtol=1e-6)
    scaler.update()
    assert scaler.get_scale() == 1024.0  # one good step of 2000: unchanged


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_a_step_with_a_non_finite_gradient_is_skipped_and_the_scale_backs_off(bad: float) -> None:
    p, opt, scaler = setup()
    backward(p, scaler, bad)
    scaler.step(opt)
    assert p.detach().tolist() == [1.0, 2.0]  # not stepped
    scaler.update()
    assert scaler.get_scale() == 512.0
    opt.zero_grad()
    backward(p, scaler)  # a clean step afterwards goes through
    scaler.step(opt)
    np.testing.assert_allclose(p.detach().numpy(), [0.7, 1.7], rtol=1e-6)


def _schedule(
    pattern: str, init: float, growth: float, backoff: float, interval: int
) -> list[float]:
    """PyTorch's documented schedule, as a loop: the oracle."""
    scale, good, out = init, 0, []
    for step in pattern:
        if step == "x":
            scale, good = scale * backoff, 0
        else:
            good += 1
            if good == interval:
                scale, good = scale * growth, 0
        out.append(scale)
    return out


def test_the_scale_schedule() -> None:
    pattern = "..x...x.....x"
    p, opt, scaler = setup(
        init_scale=256.0, growth_factor=4.0, backoff_factor=0.25, growth_interval=2
    )
    got = []
    for step in pattern:
        opt.zero_grad()
        backward(p, scaler, float("inf") if step == "x" else None)
        scaler.step(opt)
        scaler.update()
        got.append(scaler.get_scale())
    assert got == _schedule(pattern, 256.0, 4.0, 0.25, 2)


def test_state_dict_round_trip() -> None:
    p, opt, scaler = setup(growth_interval=3)
    for _ in range(2):
        opt.zero_grad()
        backward(p, scaler)
        scaler.step(opt)
        scaler.update()
    state = scaler.state_dict()
    assert state == {
        "scale": 1024.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 3,
        "_growth_tracker": 2,
    }
    other = tp.amp.GradScaler()
    other.load_state_dict(state)
    assert other.state_dict() == state
    q, opt2, _ = setup()
    opt2.zero_grad()
    backward(q, other)
    other.step(opt2)
    other.update()  # the third good step in a row: grows
    assert other.get_scale() == 2048.0
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "The source state dict is empty, possibly because it was saved from a disabled "
            "instance of GradScaler."
        ),
    ):
        other.load_state_dict({})


def test_update_with_a_new_scale() -> None:
    p, opt, scaler = setup()
    backward(p, scaler)
    scaler.step(opt)
    scaler.update(new_scale=8.0)
    assert scaler.get_scale() == 8.0
    backward(p, scaler)
    scaler.step(opt)
    scaler.update(tp.tensor([4.0]))
    assert scaler.get_scale() == 4.0
    backward(p, scaler)
    scaler.step(opt)
    with pytest.raises(
        ValueError, match="new_scale should be a float or a 1-element float32 tensor"
    ):
        scaler.update(tp.tensor([4.0, 2.0]))


def test_two_optimizers_share_one_update() -> None:
    p, opt, scaler = setup()
    q = tp.tensor([5.0]).requires_grad_()
    opt2 = tp.optim.SGD([q], lr=0.1)
    scaler.scale((p * 3.0).sum() + q.sum()).backward()
    with tp.no_grad():
        q.grad[0] = float("nan")
    scaler.step(opt)
    scaler.step(opt2)
    np.testing.assert_allclose(p.detach().numpy(), [0.7, 1.7], rtol=1e-6)  # p's grads were fine
    assert q.item() == 5.0  # q's step skipped
    scaler.update()
    assert scaler.get_scale() == 512.0  # one inf anywhere backs off


def test_scale_of_containers() -> None:
    _, _, scaler = setup(init_scale=2.0)
    a, b = tp.tensor([1.0]), tp.tensor([3.0])
    out = scaler.scale([a, (b, a)])
    assert isinstance(out, list) and isinstance(out[1], tuple)
    assert [out[0].item(), out[1][0].item(), out[1][1].item()] == [2.0, 6.0, 2.0]
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        scaler.scale([a, 3.0])


def test_disabled_scaler_passes_through() -> None:
    p, opt, scaler = setup(enabled=False)
    loss = (p * 3.0).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.unscale_(opt)
    assert p.grad.tolist() == [3.0, 3.0]
    scaler.step(opt)
    np.testing.assert_allclose(p.detach().numpy(), [0.7, 1.7], rtol=1e-6)
    scaler.update()
    assert (scaler.get_scale(), scaler.state_dict(), scaler.is_enabled()) == (1.0, {}, False)


# float16 products overflow to inf on the way (that is what the scaler handles); the array kit
# does not silence numpy's overflow warnings in matmul and casts (Note [Quiet arithmetic])
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_mixed_precision_training_with_float16_autocast() -> None:
    tp.manual_seed(0)
    x = tp.randn([64, 8])
    y = (x[:, 0] > 0).to(tp.int64)
    model = tp.nn.Sequential(tp.nn.Linear(8, 16), tp.nn.ReLU(), tp.nn.Linear(16, 2))
    opt = tp.optim.SGD(model.parameters(), lr=0.5)
    scaler = tp.amp.GradScaler(init_scale=2.0**24, growth_interval=5)  # starts too large
    losses, scales = [], []
    for _ in range(40):
        opt.zero_grad()
        with tp.autocast("cpu", dtype=tp.float16):
            logits = model(x)
            loss = tp.nn.functional.cross_entropy(logits, y)
        assert logits.dtype is tp.float16 and loss.dtype is tp.float32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
        scales.append(scaler.get_scale())
    assert all(np.isfinite(losses))
    assert min(scales) < 2.0**24  # it backed off from a scale that overflowed float16
    assert losses[-1] < losses[0] / 2
    for param in model.parameters():
        assert param.dtype is tp.float32 and param.grad.dtype is tp.float32


def test_errors() -> None:
    with pytest.raises(ValueError, match=re.escape("The growth factor must be > 1.0, got 1.0.")):
        tp.amp.GradScaler(growth_factor=1.0)
    with pytest.raises(ValueError, match=re.escape("The backoff factor must be < 1.0, got 1.5.")):
        tp.amp.GradScaler(backoff_factor=1.5)
    p, opt, scaler = setup()
    no_scale = re.escape("Attempted unscale_ but _scale is None.  This may indicate your script")
    with pytest.raises(RuntimeError, match=no_scale):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="Attempted step but _scale is None"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="Attempted update but _scale is None"):
        scaler.update()
    backward(p, scaler)
    with pytest.raises(RuntimeError, match="No inf checks were recorded prior to update()"):
        scaler.update()
    with pytest.raises(
        RuntimeError, match="Closure use is not currently supported if GradScaler is enabled."
    ):
        scaler.step(opt, closure=lambda: 0.0)
    scaler.unscale_(opt)
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "unscale_() has already been called on this optimizer since the last update()."
        ),
    ):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match=re.escape("unscale_() is being called after step().")):
        scaler.unscale_(opt)
    with pytest.raises(
        RuntimeError, match=re.escape("step() has already been called since the last update().")
    ):
        scaler.step(opt)
    scaler.update()
    empty = tp.optim.SGD([tp.tensor([1.0]).requires_grad_()], lr=0.1)  # no gradients
    with pytest.raises(RuntimeError, match="No inf checks were recorded for this optimizer"):
        scaler.step(empty)
    half = tp.tensor([1.0], dtype=tp.float16).requires_grad_()
    opt_half = tp.optim.SGD([half], lr=0.1)
    scaler.scale(half.float().sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        scaler.unscale_(opt_half)


def test_cuda_scaler_without_cuda_warns_and_disables() -> None:
    if tp.cuda.is_available():
        pytest.skip("a GPU is available here")
    with pytest.warns(
        UserWarning, match="GradScaler is enabled, but CUDA is not available.  Disabling."
    ):
        scaler = tp.amp.GradScaler("cuda")
    assert not scaler.is_enabled()
