"""Forward hooks of ``nn.Module``: ``register_forward_pre_hook`` and ``register_forward_hook``,
in PyTorch's calling conventions, against the same computation written out by hand."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tests import needs


def linear(i: int = 2, o: int = 3) -> nn.Linear:
    m = nn.Linear(i, o)
    with tp.no_grad():
        m.weight.copy_(tp.tensor(np.arange(i * o, dtype=np.float32).reshape(o, i) / 10))
        m.bias.copy_(tp.tensor(np.arange(o, dtype=np.float32)))
    return m


def by_hand(m: nn.Linear, x: tp.Tensor) -> np.ndarray:
    return x.numpy() @ m.weight.detach().numpy().T + m.bias.detach().numpy()


def test_a_forward_hook_sees_the_output_and_may_replace_it():
    needs.autograd()
    m, x = linear(), tp.ones([4, 2])
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append((mod, args, out)))
    y = m(x)
    [(mod, args, out)] = seen
    assert mod is m and args == (x,) and out is y
    m.register_forward_hook(lambda mod, args, out: out * 2)
    np.testing.assert_allclose(m(x).detach().numpy(), 2 * by_hand(m, x), rtol=1e-6)


def test_a_pre_hook_may_replace_the_arguments():
    needs.autograd()
    m, x = linear(), tp.ones([4, 2])
    handle = m.register_forward_pre_hook(lambda mod, args: (args[0] * 3,))
    np.testing.assert_allclose(m(x).detach().numpy(), by_hand(m, x * 3), rtol=1e-6)
    handle.remove()
    m.register_forward_pre_hook(lambda mod, args: args[0] - 1)  # one value: taken as (value,)
    np.testing.assert_allclose(m(x).detach().numpy(), by_hand(m, x - 1), rtol=1e-6)


def test_hooks_with_keyword_arguments():
    class Scale(nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    m, x = Scale(), tp.ones([2])
    calls = []
    m.register_forward_pre_hook(
        lambda mod, args, kwargs: (args, {"factor": kwargs["factor"] + 1}), with_kwargs=True
    )
    m.register_forward_hook(lambda mod, args, kwargs, out: calls.append(kwargs), with_kwargs=True)
    assert m(x, factor=2.0).tolist() == [3.0, 3.0]
    assert calls == [{"factor": 3.0}]
    m.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True)
    with pytest.raises(
        RuntimeError,
        match=r"forward pre-hook must return None or a tuple of \(new_args, new_kwargs\), but got \(tensor",
    ):
        m(x, factor=2.0)


def test_hooks_run_in_registration_order_and_prepend_puts_one_first():
    needs.autograd()
    m, order = linear(), []
    m.register_forward_hook(lambda *a: order.append("first"))
    m.register_forward_hook(lambda *a: order.append("second"))
    m.register_forward_hook(lambda *a: order.append("prepended"), prepend=True)
    m.register_forward_pre_hook(lambda *a: order.append("pre"))
    m(tp.ones([1, 2]))
    assert order == ["pre", "prepended", "first", "second"]


def test_removing_hooks_and_handles_as_context_managers():
    needs.autograd()
    m, seen = linear(), []
    with m.register_forward_hook(lambda *a: seen.append(1)):
        m(tp.ones([1, 2]))
    m(tp.ones([1, 2]))
    assert seen == [1]
    assert (
        nn.Module._forward_hooks == {} and nn.Module._forward_pre_hooks == {}
    )  # class defaults untouched
    assert "_forward_hooks" not in linear().__dict__  # a module without hooks keeps none


def test_always_call_runs_when_forward_raises():
    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("broken forward")

    m, seen = Broken(), []
    m.register_forward_hook(lambda mod, args, out: seen.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append(("normal", out)))
    with pytest.raises(ValueError, match="broken forward"):
        m(tp.ones([1]))
    assert seen == [("always", None)]


def test_capturing_activations_of_a_submodule_with_gradients_flowing():
    needs.autograd()
    model = nn.Sequential(linear(2, 3), nn.ReLU(), linear(3, 1))
    captured = {}
    model[1].register_forward_hook(lambda mod, args, out: captured.setdefault("relu", out))
    x = tp.tensor([[1.0, -2.0], [0.5, 0.5]])
    model(x).sum().backward()
    h = np.maximum(by_hand(model[0], x), 0)
    np.testing.assert_allclose(captured["relu"].detach().numpy(), h, rtol=1e-6)
    assert captured["relu"].requires_grad  # the hook sees the graph's own tensor
    np.testing.assert_allclose(model[2].weight.grad.numpy(), h.sum(0, keepdims=True), rtol=1e-6)
