"""Full backward hooks, global module hooks, module utilities (set_submodule, to_empty,
get_*), ParameterList / ParameterDict and lazy modules, with PyTorch's semantics and messages."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn.modules import module as M
from tests import needs


class Two(nn.Module):
    """Two inputs (one not a tensor), two outputs."""

    def forward(self, a, scale, b):
        return a * scale, a + b


@needs.needs_autograd
def test_full_backward_hooks_see_grad_input_and_grad_output():
    m = nn.Linear(3, 2)
    x = tp.randn(4, 3, requires_grad=True)
    log = []
    m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", mod, go)))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("hook", mod, gi, go)))
    m(x).sum().backward()
    (_, mod, go), (_, mod2, gi, go2) = log
    assert mod is m and mod2 is m and go2 is go
    assert go[0].tolist() == [[1.0, 1.0]] * 4
    assert tp.allclose(gi[0], x.grad) and len(gi) == 1


@needs.needs_autograd
def test_backward_hooks_with_several_inputs_and_outputs_pack_none_for_non_tensors():
    m = Two()
    a = tp.ones(2, requires_grad=True)
    b = tp.ones(2, requires_grad=True)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    y1, y2 = m(a, 3.0, b)
    (y1.sum() + 2 * y2.sum()).backward()
    [(gi, go)] = seen
    assert len(gi) == 3 and gi[1] is None and gi[0].tolist() == [5.0, 5.0]
    assert gi[2].tolist() == [2.0, 2.0] and [g.tolist() for g in go] == [[1.0, 1.0], [2.0, 2.0]]


@needs.needs_autograd
def test_hooks_may_replace_gradients():
    x = tp.ones(1, 3, requires_grad=True)
    m = nn.Linear(3, 1)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 7,))
    m(x).sum().backward()
    assert x.grad.tolist() == [[7.0, 7.0, 7.0]]
    x.grad = None
    m = nn.Linear(3, 1)
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
    m(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * m.weight.detach().numpy(), rtol=1e-6)
    m = nn.Linear(3, 1)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(
        RuntimeError,
        match="Backward hook returned an invalid number of grad_input, got 2, but expected 1",
    ):
        m(x).sum().backward()
    m = nn.Linear(3, 1)
    m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    with pytest.raises(
        RuntimeError, match="Backward pre hook returned an invalid number of grad_output"
    ):
        m(x).sum().backward()


@needs.needs_autograd
def test_no_input_requiring_grad_gives_none_grad_inputs():
    m = nn.Linear(3, 1)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append(gi))
    m(tp.ones(1, 3)).sum().backward()
    assert seen == [(None,)] and m.weight.grad is not None
    m.register_full_backward_hook(lambda mod, gi, go: (tp.ones(1, 3),))
    with pytest.raises(RuntimeError, match="no input requires gradient should always return None"):
        m(tp.ones(1, 3)).sum().backward()


@needs.needs_autograd
def test_modifying_a_hooked_modules_output_in_place_raises_as_torch():
    m = nn.Linear(3, 1)
    m.register_full_backward_hook(lambda *a: None)
    y = m(tp.ones(1, 3, requires_grad=True))
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        y.mul_(2)
    r = nn.ReLU()
    r.forward = lambda x: x.relu_()  # an in-place module
    r.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        r(tp.ones(2, requires_grad=True) * 1)


@needs.needs_autograd
def test_global_hooks_run_for_every_module_before_its_own_and_go_away():
    order = []
    m = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    m[0].register_forward_hook(lambda *a: order.append("own"))
    handles = [
        M.register_module_forward_pre_hook(
            lambda mod, a: order.append(("pre", type(mod).__name__))
        ),
        M.register_module_forward_hook(lambda mod, a, o: order.append(("fwd", type(mod).__name__))),
        M.register_module_full_backward_pre_hook(lambda mod, go: order.append("bw_pre")),
        M.register_module_full_backward_hook(lambda mod, gi, go: order.append("bw")),
    ]
    try:
        m(tp.ones(1, 2, requires_grad=True)).sum().backward()
    finally:
        for h in handles:
            h.remove()
    assert order[:6] == [
        ("pre", "Sequential"), ("pre", "Linear"), ("fwd", "Linear"), "own",
        ("pre", "Tanh"), ("fwd", "Tanh"),
    ]  # fmt: skip
    assert order.count("bw") == 3 and order.count("bw_pre") == 3
    order.clear()
    m(tp.ones(1, 2))
    assert order == ["own"]


def test_registration_hooks_may_replace_what_is_registered():
    seen = []
    hs = [
        M.register_module_parameter_registration_hook(lambda mod, n, p: seen.append(("p", n))),
        M.register_module_buffer_registration_hook(lambda mod, n, b: b * 0 + 5),
        M.register_module_module_registration_hook(lambda mod, n, s: seen.append(("m", n))),
    ]
    try:
        lin = nn.Linear(1, 1)
        holder = nn.Module()
        holder.child = lin
        holder.register_buffer("buf", tp.zeros(2))
    finally:
        for h in hs:
            h.remove()
    assert ("p", "weight") in seen and ("p", "bias") in seen and ("m", "child") in seen
    assert holder.buf.tolist() == [5.0, 5.0]
    holder.register_buffer("buf2", tp.zeros(1))
    assert holder.buf2.tolist() == [0.0]


def test_submodule_utilities():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU()))
    m.set_submodule("1.0", nn.Tanh())
    assert isinstance(m.get_submodule("1.0"), nn.Tanh)
    m.set_submodule("1.extra", nn.ReLU())
    assert isinstance(m[1].extra, nn.ReLU)
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        m.set_submodule("1.nope", nn.ReLU(), strict=True)
    with pytest.raises(ValueError, match="Cannot set the submodule without a target name!"):
        m.set_submodule("", nn.ReLU())
    with pytest.raises(ValueError, match="`module` is not an nn.Module"):
        m.set_submodule("0", 3)
    assert m.get_parameter("0.weight") is m[0].weight
    m.register_module("head", nn.Linear(2, 1))
    assert "head" in dict(m.named_children())
    e = nn.Linear(3, 2).to_empty(device="cpu")
    assert e.weight.shape == (2, 3) and isinstance(e.weight, nn.Parameter)
    meta = nn.Linear(3, 2).to_empty(device="meta")
    assert meta.weight.device.type == "meta"


def test_parameter_list_and_dict():
    pl = nn.ParameterList([tp.zeros(2, 3), nn.Parameter(tp.ones(3))])
    pl.append(tp.ones(1))
    assert len(pl) == 3 and all(isinstance(p, nn.Parameter) for p in pl)
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert (
        repr(pl).splitlines()[1]
        == "    (0): Parameter containing: [tensorplug.float32 of size 2x3]"
    )
    pl[0] = tp.ones(1)
    assert pl[0].shape == (1,) and len(pl[1:]) == 2
    pd = nn.ParameterDict({"a": tp.zeros(1)})
    pd["b"] = tp.ones(2)
    pd.update([("c", tp.ones(3))])
    assert list(pd) == ["a", "b", "c"] and list(pd.state_dict()) == ["a", "b", "c"]
    assert "b" in pd and pd.pop("b").shape == (2,) and list(pd.keys()) == ["a", "c"]
    with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key"):
        pd[1] = tp.ones(1)
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl()


@needs.needs_autograd
def test_lazy_linear_materializes_in_place_and_becomes_linear():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = nn.LazyLinear(4)
    assert isinstance(m.weight, nn.UninitializedParameter)
    held = list(m.parameters())  # e.g. an optimizer built before the first call
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in"):
        tp.add(m.weight, 1)
    y = m(tp.ones(2, 3))
    assert type(m) is nn.Linear and m.in_features == 3 and y.shape == (2, 4)
    assert held[0] is m.weight and type(m.weight) is nn.Parameter and m.weight.shape == (4, 3)
    y.sum().backward()
    assert m.weight.grad.shape == (4, 3)
    assert m._hooked is False  # the initializing hook is gone: calls take the fast path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m2 = nn.LazyLinear(4)
    m2.load_state_dict(m.state_dict())
    assert tp.equal(m2.weight, m.weight)
