"""tensorplug.nn: Parameter, Module, the layers, against numpy; and nn without autograd."""

from __future__ import annotations

import copy
import math
import os
import subprocess
import sys
from collections import OrderedDict

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn import functional as F
from tests import needs
from tests.needs import HAS_AUTOGRAD, needs_autograd


def a(t: tp.Tensor) -> np.ndarray:
    return np.asarray(tp.detach(t).numpy())


# --- the lazy import ------------------------------------------------------------------------


def test_import_tensorplug_does_not_import_nn_or_optim():
    script = (
        "import sys, tensorplug as tp\n"
        "print('tensorplug.nn' in sys.modules, 'tensorplug.optim' in sys.modules)\n"
        "print(tp.nn.Linear.__name__, tp.optim.SGD.__name__, tp.nn.functional.__name__)\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert r.stdout.splitlines() == ["False False", "Linear SGD tensorplug.nn.functional"]


def test_lazy_names_are_the_modules():
    import tensorplug.nn
    import tensorplug.optim

    assert tp.nn is tensorplug.nn and tp.optim is tensorplug.optim
    with pytest.raises(AttributeError, match="module 'tensorplug' has no attribute 'nnn'"):
        tp.nnn


# --- Parameter ------------------------------------------------------------------------------


def test_parameter_is_a_tensor_sharing_storage():
    t = tp.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    assert isinstance(p, tp.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad is HAS_AUTOGRAD and p.is_leaf
    t.add_(1.0)  # no copy: the parameter sees the write, and its version bump
    assert p.tolist() == [2.0, 3.0]
    assert p._version == t._version == 1
    assert (p * 2).tolist() == [4.0, 6.0]
    assert type(p * 2) is tp.Tensor


def test_parameter_views_and_detach_are_plain_tensors():
    p = nn.Parameter(tp.ones(2, 3))
    for t in (p.t(), p[0], p.detach(), p.reshape(6), p.clone()):
        assert type(t) is tp.Tensor
    assert p.t()._base is p


def test_parameter_options_and_repr():
    p = nn.Parameter(tp.tensor([1.0]), requires_grad=False)
    assert not p.requires_grad
    assert repr(p) == "Parameter containing:\ntensor([1.])"
    assert nn.Parameter().shape == (0,)
    with pytest.raises(
        TypeError, match="Parameter\\(data\\): data must be a tensorplug.Tensor, not list"
    ):
        nn.Parameter([1.0])


def test_parameter_deepcopy():
    p = nn.Parameter(tp.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.tolist() == [1.0, 2.0]
    assert q.requires_grad is p.requires_grad
    q.detach().add_(1.0)
    assert p.tolist() == [1.0, 2.0]


@needs_autograd
def test_parameter_from_a_computed_tensor_is_a_fresh_leaf():
    x = tp.ones(2, requires_grad=True)
    y = x * 3
    p = nn.Parameter(y)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    (p * p).sum().backward()
    assert p.grad.tolist() == [6.0, 6.0] and x.grad is None


# --- Module registration ----------------------------------------------------------------------


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2)
        self.scale = nn.Parameter(tp.ones(1))
        self.register_buffer("steps", tp.zeros([], dtype=tp.int64))
        self.register_buffer("cache", tp.zeros(2), persistent=False)
        self.note = tp.zeros(1)  # a plain tensor: not registered

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        return self.fc2(self.act(self.fc1(x))) * self.scale


def test_attributes_register_parameters_buffers_and_modules():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
    ]  # fmt: skip
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.named_parameters(prefix="net")][1] == "net.fc1.weight"
    assert len(list(net.parameters())) == 5
    assert [n for n, _ in net.named_buffers()] == ["steps", "cache"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert list(net.children()) == [net.fc1, net.act, net.fc2]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert list(net.modules())[0] is net
    assert "note" not in net._parameters and "note" not in net._buffers
    assert net.fc1.weight is net._modules["fc1"]._parameters["weight"]
    assert "fc1" in dir(net) and "scale" in dir(net)


def test_shared_parameters_and_modules_come_once():
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(seq.modules())) == 3
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4


def test_reassigning_and_deleting_attributes():
    net = Net()
    net.fc1.bias = None  # a registered parameter may become None...
    assert [n for n, _ in net.fc1.named_parameters()] == ["weight"]
    assert net.fc1.bias is None and "bias" in net.fc1._parameters
    with pytest.raises(
        TypeError,
        match=r"cannot assign 'Tensor' as parameter 'weight' "
        r"\(tensorplug.nn.Parameter or None expected\)",
    ):
        net.fc1.weight = tp.ones(4, 3)  # ...but not a plain tensor
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'act'"):
        net.act = 3
    with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'steps'"):
        net.steps = "x"
    net.steps = tp.ones([], dtype=tp.int64)  # a tensor replaces the buffer
    assert net.state_dict()["steps"].item() == 1
    net.act = nn.GELU()
    assert isinstance(net._modules["act"], nn.GELU)
    del net.scale
    assert "scale" not in dict(net.named_parameters())
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'scale'"):
        net.scale
    net.scale = nn.Parameter(tp.ones(1))
    assert [n for n, _ in net.named_parameters()][0] == "scale"


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match=r'parameter name can.*t contain "\.", got: a\.b'):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="buffer name can.*t be empty string"):
        m.register_buffer("", None)
    with pytest.raises(TypeError, match="module name should be a string. Got int"):
        m.add_module(1, None)
    with pytest.raises(
        TypeError,
        match=r"cannot assign 'Tensor' object to parameter 'w' "
        r"\(tensorplug.nn.Parameter or None required\)",
    ):
        m.register_parameter("w", tp.ones(1))
    with pytest.raises(TypeError, match="cannot assign 'list' object to buffer 'b'"):
        m.register_buffer("b", [1.0])
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("c", 3)
    m.register_buffer("b", tp.ones(1))
    with pytest.raises(KeyError, match="attribute 'b' already exists"):
        m.register_parameter("b", None)
    with pytest.raises(KeyError, match="attribute 'training' already exists"):
        m.register_buffer("training", None)

    class Early(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(tp.ones(1))

    with pytest.raises(
        AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"
    ):
        Early()

    class EarlyChild(nn.Module):
        def __init__(self) -> None:
            self.fc = nn.ReLU()

    with pytest.raises(
        AttributeError, match=r"cannot assign module before Module.__init__\(\) call"
    ):
        EarlyChild()

    class EarlyBuffer(nn.Module):
        def __init__(self) -> None:
            self.register_buffer("b", None)

    with pytest.raises(
        AttributeError, match=r"cannot assign buffer before Module.__init__\(\) call"
    ):
        EarlyBuffer()


@needs_autograd
def test_a_non_leaf_cannot_be_registered():
    x = tp.ones(2, requires_grad=True) * 2
    x.__class__ = nn.Parameter  # a computed tensor that claims to be a Parameter
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'w'"):
        nn.Module().register_parameter("w", x)


def test_forward_is_required():
    with pytest.raises(
        NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'
    ):
        nn.Module()(tp.ones(1))


def test_call_runs_forward_with_any_signature():
    class Add(nn.Module):
        def forward(self, x: tp.Tensor, y: tp.Tensor, *, alpha: float = 1.0) -> tp.Tensor:
            return x + y * alpha

    assert Add()(tp.ones(2), tp.ones(2), alpha=2.0).tolist() == [3.0, 3.0]


def test_train_eval_apply_and_requires_grad():
    net = Net()
    assert net.training and net.fc1.training
    assert net.eval() is net
    assert not net.training and not net.fc2.training
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("no")
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Net"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_()
    assert all(p.requires_grad for p in net.parameters()) is HAS_AUTOGRAD


def test_zero_grad_with_hand_set_grads():
    net = nn.Linear(2, 2)
    for p in net.parameters():
        p.grad = tp.ones_like(p)
    net.zero_grad(set_to_none=False)
    assert [p.grad.tolist() for p in net.parameters()] == [[[0.0, 0.0], [0.0, 0.0]], [0.0, 0.0]]
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.zero_grad()  # nothing to clear: harmless


def test_to_casts_floating_parameters_and_buffers():
    net = Net().to(tp.float64)
    assert {p.dtype for p in net.parameters()} == {tp.float64}
    assert isinstance(net.fc1.weight, nn.Parameter)
    assert net.fc1.weight.requires_grad is HAS_AUTOGRAD
    assert net.steps.dtype is tp.int64  # not floating point: kept
    assert net(tp.ones(1, 3, dtype=tp.float64)).dtype is tp.float64
    assert net.float().fc2.bias.dtype is tp.float32
    same = net.fc1.weight
    net.to("cpu")
    assert net.fc1.weight is same  # nothing to change: the same parameter
    with pytest.raises(
        TypeError, match="nn.Module.to only accepts floating point or complex dtypes"
    ):
        net.to(tp.int32)
    with pytest.raises(TypeError, match="to\\(\\) received an invalid argument of type int"):
        net.to(3)
    with pytest.raises(TypeError, match="to\\(\\) got an unexpected keyword argument 'copy'"):
        net.to(copy=True)


# --- state dict -----------------------------------------------------------------------------


def test_state_dict_round_trip():
    tp.manual_seed(0)
    src, dst = Net(), Net()
    sd = src.state_dict()
    assert list(sd) == ["scale", "steps", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert type(sd["fc1.weight"]) is tp.Tensor and not sd["fc1.weight"].requires_grad
    result = dst.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    x = tp.randn(5, 3)
    np.testing.assert_array_equal(a(src(x)), a(dst(x)))
    assert dst.fc1.weight is not src.fc1.weight  # copied in place, not shared
    kept = src.state_dict(keep_vars=True)["fc1.weight"]
    assert kept is src.fc1.weight
    twin = copy.deepcopy(src)
    assert type(twin.fc1.weight) is nn.Parameter and twin.fc1.weight is not src.fc1.weight
    np.testing.assert_array_equal(a(twin(x)), a(src(x)))


def test_load_state_dict_names_missing_and_unexpected_keys():
    net = Net()
    sd = net.state_dict()
    del sd["fc2.bias"]
    sd["extra"] = tp.ones(1)
    with pytest.raises(RuntimeError) as ei:
        net.load_state_dict(sd)
    assert str(ei.value) == (
        "Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "fc2.bias".\n'
        '\tUnexpected key(s) in state_dict: "extra".'
    )
    result = net.load_state_dict(sd, strict=False)
    assert result == (["fc2.bias"], ["extra"])


def test_load_state_dict_shape_mismatch_changes_nothing():
    net = Net()
    before = a(net.fc1.bias).copy()
    sd = {k: tp.zeros_like(v) for k, v in net.state_dict().items()}
    sd["fc2.weight"] = tp.zeros(3, 4)
    sd["scale"] = 1.0
    with pytest.raises(RuntimeError) as ei:
        net.load_state_dict(sd, strict=False)
    assert str(ei.value) == (
        "Error(s) in loading state_dict for Net:\n"
        '\tWhile copying the parameter named "scale", expected a tensorplug.Tensor from the '
        "checkpoint but received float\n"
        "\tsize mismatch for fc2.weight: copying a param with shape [3, 4] from checkpoint, "
        "the shape in current model is [2, 4]."
    )
    np.testing.assert_array_equal(a(net.fc1.bias), before)


# --- repr -----------------------------------------------------------------------------------


def test_repr_like_pytorch():
    model = nn.Sequential(
        nn.Linear(2, 16),
        nn.ReLU(),
        nn.Sequential(nn.Dropout(0.25), nn.LayerNorm(16)),
        nn.Linear(16, 3, bias=False),
    )
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=16, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Dropout(p=0.25, inplace=False)\n"
        "    (1): LayerNorm((16,), eps=1e-05, elementwise_affine=True, bias=True)\n"
        "  )\n"
        "  (3): Linear(in_features=16, out_features=3, bias=False)\n"
        ")"
    )
    assert repr(nn.Embedding(10, 3, padding_idx=0)) == "Embedding(10, 3, padding_idx=0)"
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"


# --- layers ---------------------------------------------------------------------------------


def test_linear_matches_numpy_and_pytorch_init():
    tp.manual_seed(0)
    lin = nn.Linear(50, 20, dtype=tp.float64)
    assert lin.weight.shape == (20, 50) and lin.bias.shape == (20,)
    assert lin.weight.dtype is tp.float64
    bound = 1 / math.sqrt(50)
    w, b = a(lin.weight), a(lin.bias)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.9 * bound  # really spread over the interval
    x = tp.randn(7, 50, dtype=tp.float64)
    np.testing.assert_allclose(a(lin(x)), a(x) @ w.T + b, rtol=1e-12)
    no_bias = nn.Linear(3, 2, bias=False)
    assert no_bias.bias is None and [n for n, _ in no_bias.named_parameters()] == ["weight"]
    assert nn.Linear(4, 2)(tp.ones(3, 5, 4)).shape == (3, 5, 2)


def test_activations():
    x = tp.tensor([-2.0, -0.5, 0.0, 1.5])
    xn = a(x)
    np.testing.assert_allclose(a(nn.ReLU()(x)), np.maximum(xn, 0))
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(a(nn.GELU()(x)), 0.5 * xn * (1 + erf(xn / math.sqrt(2))), rtol=1e-6)
    approx = 0.5 * xn * (1 + np.tanh(math.sqrt(2 / math.pi) * (xn + 0.044715 * xn**3)))
    np.testing.assert_allclose(a(nn.GELU("tanh")(x)), approx, rtol=1e-6)
    np.testing.assert_allclose(a(nn.Sigmoid()(x)), 1 / (1 + np.exp(-xn)), rtol=1e-6)
    np.testing.assert_allclose(a(nn.Tanh()(x)), np.tanh(xn), rtol=1e-6)
    np.testing.assert_allclose(a(nn.SiLU()(x)), xn / (1 + np.exp(-xn)), rtol=1e-6)
    y = x.clone()
    assert nn.ReLU(inplace=True)(y) is y and y.tolist() == [0.0, 0.0, 0.0, 1.5]
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    with pytest.raises(ValueError, match="GELU: approximate must be 'none' or 'tanh', got 'erf'"):
        nn.GELU("erf")


def test_dropout_uses_the_training_flag():
    tp.manual_seed(0)
    drop = nn.Dropout(0.25)
    x = tp.ones(10_000)
    y = a(drop(x))
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    drop.eval()
    assert drop(x) is x
    assert nn.Sequential(nn.Dropout(1.0)).eval()(x) is x
    assert a(nn.Dropout(1.0)(x)).max() == 0.0
    with pytest.raises(
        ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"
    ):
        nn.Dropout(1.5)


def test_embedding():
    tp.manual_seed(0)
    emb = nn.Embedding(10, 4, padding_idx=-2)
    assert emb.padding_idx == 8
    w = a(emb.weight)
    assert (w[8] == 0).all() and w.std() > 0.5  # N(0, 1) elsewhere
    idx = tp.tensor([[1, 8], [3, 3]])
    np.testing.assert_array_equal(a(emb(idx)), w[a(idx)])
    with pytest.raises(
        ValueError, match=r"Embedding: padding_idx must be within num_embeddings \(10\), got 10"
    ):
        nn.Embedding(10, 4, padding_idx=10)


def test_layer_norm_matches_numpy():
    tp.manual_seed(0)
    ln = nn.LayerNorm([3, 4], eps=1e-3, dtype=tp.float64)
    assert ln.weight.shape == (3, 4) and a(ln.weight).min() == 1 and a(ln.bias).max() == 0
    nn.init.normal_(ln.weight)
    nn.init.normal_(ln.bias)
    x = tp.randn(2, 3, 4, dtype=tp.float64)
    xn = a(x)
    mu = xn.mean(axis=(1, 2), keepdims=True)
    var = xn.var(axis=(1, 2), keepdims=True)
    want = (xn - mu) / np.sqrt(var + 1e-3) * a(ln.weight) + a(ln.bias)
    np.testing.assert_allclose(a(ln(x)), want, rtol=1e-10)
    plain = nn.LayerNorm(4, elementwise_affine=False)
    assert plain.weight is None and list(plain.parameters()) == []
    assert nn.LayerNorm(4, bias=False).bias is None


def test_losses_match_the_functions():
    tp.manual_seed(0)
    logits, target = tp.randn(6, 4), tp.tensor([0, 3, 1, -100, 2, 2])
    weight = tp.tensor([1.0, 2.0, 0.5, 1.5])
    ce = nn.CrossEntropyLoss(weight=weight, ignore_index=-100, label_smoothing=0.1)
    assert list(dict(ce.named_buffers())) == ["weight"]
    want = F.cross_entropy(logits, target, weight, label_smoothing=0.1)
    np.testing.assert_allclose(a(ce(logits, target)), a(want))
    x, y = tp.randn(3, 2), tp.randn(3, 2)
    np.testing.assert_allclose(a(nn.MSELoss()(x, y)), ((a(x) - a(y)) ** 2).mean(), rtol=1e-6)
    assert nn.MSELoss(reduction="none")(x, y).shape == (3, 2)
    logp = F.log_softmax(logits, 1)
    np.testing.assert_allclose(
        a(nn.NLLLoss(reduction="sum")(logp, target)), a(F.nll_loss(logp, target, reduction="sum"))
    )
    p = tp.sigmoid(x)
    np.testing.assert_allclose(a(nn.BCELoss()(p, tp.ones(3, 2))), -np.log(a(p)).mean(), rtol=1e-6)
    with pytest.raises(ValueError, match="MSELoss: avg is not a valid value for reduction"):
        nn.MSELoss(reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing must be between 0.0 and 1.0, got 2"):
        nn.CrossEntropyLoss(label_smoothing=2)


def test_sequential_container():
    l0, l1 = nn.Linear(2, 3), nn.Linear(3, 1)
    seq = nn.Sequential(l0, nn.ReLU(), l1)
    assert len(seq) == 3 and seq[0] is l0 and seq[-1] is l1
    assert list(seq) == [l0, seq[1], l1]
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and list(head) == [l0, seq[1]]
    x = tp.randn(4, 2)
    np.testing.assert_allclose(a(seq(x)), a(l1(tp.relu(l0(x)))))
    assert seq.append(nn.Sigmoid()) is seq and len(seq) == 4
    named = nn.Sequential(OrderedDict([("enc", l0), ("act", nn.Tanh())]))
    assert [n for n, _ in named.named_parameters()] == ["enc.weight", "enc.bias"]
    with pytest.raises(IndexError, match="index 3 is out of range for a Sequential of length 2"):
        named[3]
    with pytest.raises(TypeError, match="Sequential: argument 1 is a function, not a Module"):
        nn.Sequential(l0, tp.relu)


def test_init_functions():
    g = tp.Generator().manual_seed(1)
    w = tp.empty(200, 100)
    assert nn.init.uniform_(w, -2.0, 3.0, generator=g) is w
    assert -2.0 <= a(w).min() < -1.9 and 2.9 < a(w).max() <= 3.0
    nn.init.normal_(w, mean=1.0, std=0.5)
    assert abs(a(w).mean() - 1.0) < 0.01 and abs(a(w).std() - 0.5) < 0.01
    assert a(nn.init.zeros_(w)).max() == 0 and a(nn.init.ones_(w)).min() == 1
    assert a(nn.init.constant_(w, 0.25)).max() == 0.25
    bound = math.sqrt(2.0) * math.sqrt(3.0 / 100)  # relu gain, fan_in
    nn.init.kaiming_uniform_(w, nonlinearity="relu")
    assert bound * 0.95 < np.abs(a(w)).max() <= bound
    nn.init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu")
    assert np.abs(a(w)).max() <= math.sqrt(2.0) * math.sqrt(3.0 / 200)
    nn.init.xavier_uniform_(w, gain=2.0)
    assert np.abs(a(w)).max() <= 2.0 * math.sqrt(6.0 / 300)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / 1.04)
    assert nn.init.calculate_gain("tanh") == 5.0 / 3
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        nn.init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope slope not a valid number"):
        nn.init.calculate_gain("leaky_relu", "slope")
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        nn.init.kaiming_uniform_(w, mode="fan_avg")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(tp.empty(3))


@needs_autograd
def test_init_works_on_parameters_that_require_grad():
    p = nn.Parameter(tp.empty(3, 4))
    nn.init.xavier_uniform_(p)
    nn.init.zeros_(p)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None and a(p).max() == 0


# --- "Extending torch.nn": a Linear written by the user --------------------------------------


def _linear_function():
    """The note's LinearFunction when autograd.Function exists; else the plain function."""
    if not HAS_AUTOGRAD:
        return F.linear

    class LinearFunction(tp.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand(list(output.shape))
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    return LinearFunction.apply


class UserLinear(nn.Module):
    def __init__(self, input_features: int, output_features: int, bias: bool = True) -> None:
        super().__init__()
        self.input_features = input_features
        self.output_features = output_features
        self.weight = nn.Parameter(tp.empty(output_features, input_features))
        if bias:
            self.bias = nn.Parameter(tp.empty(output_features))
        else:
            self.register_parameter("bias", None)
        nn.init.uniform_(self.weight, -0.1, 0.1)
        if self.bias is not None:
            nn.init.uniform_(self.bias, -0.1, 0.1)
        self.fn = _linear_function()

    def forward(self, input: tp.Tensor) -> tp.Tensor:
        return self.fn(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"input_features={self.input_features}, output_features={self.output_features}, "
            f"bias={self.bias is not None}"
        )


def test_extending_nn_linear_example():
    tp.manual_seed(0)
    m = UserLinear(3, 2)
    assert repr(m) == "UserLinear(input_features=3, output_features=2, bias=True)"
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert np.abs(a(m.weight)).max() <= 0.1
    x = tp.randn(4, 3)
    y = m(x)
    np.testing.assert_allclose(a(y), a(x) @ a(m.weight).T + a(m.bias), rtol=1e-6)
    assert UserLinear(3, 2, bias=False).bias is None
    if HAS_AUTOGRAD:
        y.sum().backward()
        np.testing.assert_allclose(a(m.weight.grad), np.ones((4, 2)).T @ a(x), rtol=1e-6)
        np.testing.assert_allclose(a(m.bias.grad), [4.0, 4.0])


# --- nn without the autograd plugin (Note [nn without autograd]) -----------------------------

WITHOUT_AUTOGRAD = """
import tensorplug as tp
from tensorplug import nn
assert "autograd" not in tp.plugins.loaded_names()
tp.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 3))
p = model[0].weight
print(type(p).__name__, p.requires_grad, p.is_leaf)
nn.init.xavier_uniform_(p)
before = [q.tolist() for q in model.parameters()]
loss = nn.CrossEntropyLoss()(model(tp.randn(5, 2)), tp.tensor([0, 1, 2, 0, 1]))
print(loss.shape, loss.item() > 0)
for opt in (tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
            tp.optim.Adam(model.parameters())):
    opt.zero_grad()
    opt.step()
    print(type(opt).__name__, [q.tolist() for q in model.parameters()] == before, len(opt.state))
model.zero_grad()
model.load_state_dict(model.state_dict())
print(sorted(vars(p)))
"""


def test_nn_and_optim_without_autograd():
    env = dict(os.environ, TENSORPLUG_DISABLE_PLUGINS="autograd")
    r = subprocess.run(
        [sys.executable, "-c", WITHOUT_AUTOGRAD], env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "Parameter False True",
        "tensorplug.Size([]) True",  # Tensor.shape is a tp.Size, as torch.Size
        "SGD True 0",
        "Adam True 0",
        "[]",  # nothing written on the tensors: no stray `grad` attributes
    ]


class _CudaOnNumpy:
    """An in-process plugin: the CUDA key backed by numpy, so that .cuda() has somewhere to go
    on a machine without tensorplug-cuda."""

    @tp.hookimpl
    def tensorplug_register_kernels(self, registry):
        tp.array_backend.register(registry, "CUDA", np, device_type="cuda")


def test_module_cuda_and_cpu_move_parameters_and_buffers():
    with needs.unloaded("cuda"):  # a numpy CUDA backend stands in for tensorplug-cuda
        _module_cuda_and_cpu()


def _module_cuda_and_cpu():
    net = Net()
    before = [a(p) for p in net.parameters()]
    with pytest.raises(tp.MissingPluginError, match="pip install tensorplug-cuda"):
        net.cuda()
    tp.plugins.register(_CudaOnNumpy(), name="cuda_on_numpy")
    try:
        for call in (lambda: net.cuda(), lambda: net.cuda(0), lambda: net.cuda("cuda:0"),
                     lambda: net.cuda(tp.device("cuda"))):  # fmt: skip
            assert call() is net
            assert {p.device.type for p in net.parameters()} == {"cuda"}
            assert net.steps.device.type == "cuda"
            assert all(isinstance(p, nn.Parameter) for p in net.parameters())
        assert net.cpu() is net and {p.device.type for p in net.parameters()} == {"cpu"}
        for b, p in zip(before, net.parameters(), strict=True):
            np.testing.assert_array_equal(a(p), b)  # moved there and back unchanged
    finally:
        net.cpu()
        tp.plugins.unregister("cuda_on_numpy")
