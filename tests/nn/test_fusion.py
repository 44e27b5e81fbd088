"""nn.utils.fusion: a convolution or linear layer with the eval-mode batch norm after it
folded in computes what the two layers compute (the oracle: the two layers themselves), and
what PyTorch's fusion computes where torch is installed."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn.utils import fuse_conv_bn_eval, fuse_linear_bn_eval


def _bn_with_stats(bn: nn.Module, n: int, rng: np.random.Generator) -> None:
    bn.running_mean.copy_(tp.tensor(rng.standard_normal(n), dtype=tp.float32))
    bn.running_var.copy_(tp.tensor(rng.uniform(0.5, 2.0, n), dtype=tp.float32))
    with tp.no_grad():
        bn.weight.copy_(tp.tensor(rng.uniform(0.5, 1.5, n), dtype=tp.float32))
        bn.bias.copy_(tp.tensor(rng.standard_normal(n), dtype=tp.float32))


@pytest.mark.parametrize(("conv", "bn", "transpose", "x"), [
    (lambda: nn.Conv2d(3, 4, 3, padding=1), lambda: nn.BatchNorm2d(4), False, (2, 3, 6, 6)),
    (lambda: nn.Conv1d(3, 4, 3, bias=False), lambda: nn.BatchNorm1d(4), False, (2, 3, 7)),
    (lambda: nn.ConvTranspose2d(3, 4, 2, stride=2), lambda: nn.BatchNorm2d(4), True, (2, 3, 4, 4)),
])  # fmt: skip
def test_fused_conv_computes_conv_then_bn(conv, bn, transpose, x) -> None:
    rng = np.random.default_rng(0)
    c, b = conv(), bn()
    _bn_with_stats(b, 4, rng)
    c.eval(), b.eval()
    fused = fuse_conv_bn_eval(c, b, transpose=transpose)
    inp = tp.tensor(rng.standard_normal(x), dtype=tp.float32)
    with tp.no_grad():
        np.testing.assert_allclose(fused(inp).numpy(), b(c(inp)).numpy(), rtol=1e-5, atol=1e-5)
    assert isinstance(fused.weight, nn.Parameter) and fused.bias is not None
    assert c.weight is not fused.weight  # a copy: the original is untouched


def test_fused_linear_computes_linear_then_bn() -> None:
    rng = np.random.default_rng(1)
    lin, b = nn.Linear(5, 4), nn.BatchNorm1d(4)
    _bn_with_stats(b, 4, rng)
    lin.eval(), b.eval()
    fused = fuse_linear_bn_eval(lin, b)
    inp = tp.tensor(rng.standard_normal((3, 5)), dtype=tp.float32)
    with tp.no_grad():
        np.testing.assert_allclose(fused(inp).numpy(), b(lin(inp)).numpy(), rtol=1e-5, atol=1e-5)


def test_fusion_is_for_eval_only() -> None:
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fuse_conv_bn_eval(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2))
    with pytest.raises(AssertionError, match="must equal bn.num_features"):
        fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(4).eval())


def test_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    tc, tb = torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)
    tb.running_mean.uniform_(-1, 1), tb.running_var.uniform_(0.5, 2)
    tc.eval(), tb.eval()
    c, b = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
    c.load_state_dict({k: tp.tensor(v.numpy()) for k, v in tc.state_dict().items()})
    b.load_state_dict({k: tp.tensor(v.numpy()) for k, v in tb.state_dict().items()})
    c.eval(), b.eval()
    want = torch.nn.utils.fuse_conv_bn_eval(tc, tb)
    got = fuse_conv_bn_eval(c, b)
    np.testing.assert_allclose(got.weight.detach().numpy(), want.weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(got.bias.detach().numpy(), want.bias.detach().numpy(), rtol=1e-6)
