"""tensorplug.nn and tensorplug.optim where a differential run against PyTorch found them to
differ: each test pins PyTorch's behaviour (values as closed forms or numpy, messages as text)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn

HAS_AUTOGRAD = "no_grad" in vars(tp)
needs_autograd = pytest.mark.skipif(not HAS_AUTOGRAD, reason="needs tensorplug-autograd")


def a(t: tp.Tensor) -> np.ndarray:
    return np.asarray(tp.detach(t).numpy())


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.seq = nn.Sequential(nn.Linear(4, 2), nn.ReLU())
        self.register_buffer("buf", tp.zeros(2))
        self.register_buffer("empty", None)
        self.plain = tp.zeros(1)


# --- Module -----------------------------------------------------------------------------------


def test_state_dict_prefix_is_prepended_as_given():
    # torch: the prefix carries its own dot ("model."), as load_state_dict's recursion passes it
    assert list(Net().state_dict(prefix="model.")) == [
        "model.buf", "model.fc.weight", "model.fc.bias", "model.seq.0.weight", "model.seq.0.bias",
    ]
    assert list(nn.Linear(1, 1).state_dict(prefix="x_")) == ["x_weight", "x_bias"]


def test_get_submodule_get_parameter_get_buffer():
    net = Net()
    assert net.get_submodule("") is net
    assert net.get_submodule("seq.0") is net.seq[0]
    assert net.get_parameter("seq.0.weight") is net.seq[0].weight
    assert net.get_buffer("buf") is net.buf
    assert net.get_buffer("empty") is None
    with pytest.raises(AttributeError, match="^Sequential has no attribute `5`$"):
        net.get_submodule("seq.5")
    with pytest.raises(AttributeError, match="^`weight` is not an nn.Module$"):
        net.get_submodule("fc.weight")
    with pytest.raises(AttributeError, match="^Linear has no attribute `foo`$"):
        net.get_parameter("fc.foo")
    with pytest.raises(AttributeError, match="^`buf` is not an nn.Parameter$"):
        net.get_parameter("buf")
    with pytest.raises(AttributeError, match="^`weight` is not a buffer$"):
        net.get_buffer("fc.weight")
    with pytest.raises(AttributeError, match="^`plain` is not a buffer$"):
        net.get_buffer("plain")


def test_half_bfloat16_and_non_blocking():
    m = nn.Linear(2, 2)
    assert m.half() is m and m.weight.dtype == tp.float16 and m.bias.dtype == tp.float16
    assert m.bfloat16().weight.dtype == tp.bfloat16
    assert m.to("cpu", tp.float32, non_blocking=True).weight.dtype == tp.float32


def test_load_state_dict_messages_in_pytorch_order():
    net = Net()
    sd = dict(net.state_dict())
    del sd["fc.bias"]
    sd["extra"] = tp.zeros(1)
    sd["seq.0.weight"] = tp.zeros(7)
    with pytest.raises(RuntimeError) as ei:
        net.load_state_dict(sd)
    assert str(ei.value) == (
        "Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "fc.bias".\n'
        '\tUnexpected key(s) in state_dict: "extra".\n'
        "\tsize mismatch for seq.0.weight: copying a param with shape [7] from checkpoint, "
        "the shape in current model is [2, 4]."
    )
    with pytest.raises(TypeError, match="^Expected state_dict to be dict-like, got list.$"):
        net.load_state_dict([("buf", tp.zeros(2))])  # type: ignore[arg-type]


def test_incompatible_keys_repr():
    net = Net()
    assert repr(net.load_state_dict(net.state_dict())) == "<All keys matched successfully>"
    sd = dict(net.state_dict())
    del sd["buf"]
    assert repr(net.load_state_dict(sd, strict=False)) == (
        "IncompatibleKeys(missing_keys=['buf'], unexpected_keys=[])"
    )
