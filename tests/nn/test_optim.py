"""tensorplug.optim against numpy implementations of PyTorch's documented algorithms.

Gradients are set by hand (``p.grad = ...``), so these tests need no autograd plugin.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import optim


def a(t: tp.Tensor) -> np.ndarray:
    return np.asarray(tp.detach(t).numpy())


# --- the oracles: the algorithm boxes of torch.optim.SGD / torch.optim.Adam, in numpy ----------


def sgd_np(
    params,
    grad_steps,
    lr,
    momentum=0.0,
    dampening=0.0,
    weight_decay=0.0,
    nesterov=False,
    maximize=False,
):
    params = [p.copy() for p in params]
    bufs = [None] * len(params)
    for grads in grad_steps:
        for i, g in enumerate(grads):
            if g is None:
                continue
            g = -g if maximize else g
            if weight_decay != 0:
                g = g + weight_decay * params[i]
            if momentum != 0:
                bufs[i] = g.copy() if bufs[i] is None else momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            params[i] = params[i] - lr * g
    return params


def adam_np(
    params,
    grad_steps,
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    amsgrad=False,
    maximize=False,
):
    b1, b2 = betas
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    vmax = [np.zeros_like(p) for p in params]
    for t, grads in enumerate(grad_steps, start=1):
        for i, g in enumerate(grads):
            g = -g if maximize else g
            if weight_decay != 0:
                g = g + weight_decay * params[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            m_hat = m[i] / (1 - b1**t)
            if amsgrad:
                vmax[i] = np.maximum(vmax[i], v[i])
                v_hat = vmax[i] / (1 - b2**t)
            else:
                v_hat = v[i] / (1 - b2**t)
            params[i] = params[i] - lr * m_hat / (np.sqrt(v_hat) + eps)
    return params


# --- helpers --------------------------------------------------------------------------------


def problem(steps: int = 5, seed: int = 0):
    """Two float64 parameters and a different gradient for each of ``steps`` steps."""
    rng = np.random.default_rng(seed)
    params = [rng.normal(size=(3, 4)), rng.normal(size=(4,))]
    grads = [[rng.normal(size=p.shape) for p in params] for _ in range(steps)]
    return params, grads


def run(opt_cls, params, grad_steps, **kwargs):
    ps = [tp.tensor(p) for p in params]
    opt = opt_cls(ps, **kwargs)
    for grads in grad_steps:
        for p, g in zip(ps, grads, strict=True):
            p.grad = None if g is None else tp.tensor(g)
        opt.step()
    return ps, opt


SGD_CASES = [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.9, "dampening": 0.3},
    {"lr": 0.1, "momentum": 0.8, "nesterov": True},
    {"lr": 0.1, "weight_decay": 0.01},
    {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.05, "nesterov": True},
    {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.05, "maximize": True},
    {"lr": 0.1, "momentum": 0.7, "nesterov": True, "weight_decay": 0.02, "maximize": True},
]

ADAM_CASES = [
    {},
    {"lr": 0.01, "betas": (0.8, 0.99)},
    {"lr": 0.01, "weight_decay": 0.1},
    {"lr": 0.01, "amsgrad": True},
    {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1, "eps": 1e-6},
    {"lr": 0.01, "maximize": True, "weight_decay": 0.1},
    {"lr": 0.02, "amsgrad": True, "maximize": True},
]


@pytest.mark.parametrize("kwargs", SGD_CASES, ids=str)
def test_sgd_matches_the_documented_algorithm(kwargs):
    params, grads = problem()
    ps, _ = run(optim.SGD, params, grads, **kwargs)
    for got, want in zip(ps, sgd_np(params, grads, **kwargs), strict=True):
        np.testing.assert_allclose(a(got), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kwargs", ADAM_CASES, ids=str)
def test_adam_matches_the_documented_algorithm(kwargs):
    params, grads = problem(steps=8)
    ps, opt = run(optim.Adam, params, grads, **kwargs)
    for got, want in zip(ps, adam_np(params, grads, **kwargs), strict=True):
        np.testing.assert_allclose(a(got), want, rtol=1e-12, atol=1e-14)
    state = opt.state[ps[0]]
    assert state["step"] == 8
    assert set(state) == {"step", "exp_avg", "exp_avg_sq"} | (
        {"max_exp_avg_sq"} if kwargs.get("amsgrad") else set()
    )


def test_maximize_is_minimizing_the_negated_gradient():
    params, grads = problem()
    neg = [[-g for g in step] for step in grads]
    for cls, kw in (
        (optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
        (optim.Adam, {"lr": 0.01, "amsgrad": True}),
    ):
        up, _ = run(cls, params, grads, maximize=True, **kw)
        down, _ = run(cls, params, neg, **kw)
        for u, d in zip(up, down, strict=True):
            np.testing.assert_allclose(a(u), a(d), rtol=1e-13)


def test_updates_are_in_place_and_skip_parameters_without_grad():
    params, grads = problem(steps=2)
    for step in grads:
        step[1] = None  # the second parameter never gets a gradient
    ps = [tp.tensor(p) for p in params]
    ids = [id(p) for p in ps]
    for cls in (optim.SGD, optim.Adam):
        opt = cls(ps, lr=0.1)
        for step in grads:
            ps[0].grad = tp.tensor(step[0])
            opt.step()
        assert [id(p) for p in ps] == ids and ps[0]._version > 0
        np.testing.assert_array_equal(a(ps[1]), params[1])
        assert ps[1] not in opt.state


def test_param_groups_have_their_own_hyperparameters():
    params, grads = problem()
    ps = [tp.tensor(p) for p in params]
    opt = optim.SGD([{"params": [ps[0]]}, {"params": ps[1], "lr": 0.01, "momentum": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
    assert opt.param_groups[0]["momentum"] == 0.0
    for step in grads:
        for p, g in zip(ps, step, strict=True):
            p.grad = tp.tensor(g)
        opt.step()
    [w0] = sgd_np(params[:1], [s[:1] for s in grads], lr=0.1)
    [w1] = sgd_np(params[1:], [s[1:] for s in grads], lr=0.01, momentum=0.5)
    np.testing.assert_allclose(a(ps[0]), w0, rtol=1e-12)
    np.testing.assert_allclose(a(ps[1]), w1, rtol=1e-12)


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        (optim.SGD, {"lr": 0.1, "momentum": 0.9}),
        (optim.Adam, {"lr": 0.01, "amsgrad": True}),
    ],
)
def test_state_dict_round_trip_continues_the_same_trajectory(cls, kwargs):
    params, grads = problem(steps=6)
    ps, opt = run(cls, params, grads[:3], **kwargs)
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert sd["param_groups"][0]["params"] == [0, 1] and sorted(sd["state"]) == [0, 1]
    qs = [tp.tensor(a(p)) for p in ps]
    other = cls(qs, lr=123.0)
    other.load_state_dict(sd)
    assert (
        other.param_groups[0]["lr"] == kwargs["lr"] and other.param_groups[0]["params"][0] is qs[0]
    )
    for key, value in other.state[qs[0]].items():
        if isinstance(value, tp.Tensor):  # loaded buffers are copies, not the source's tensors
            assert value is not opt.state[ps[0]][key]
    for step in grads[3:]:
        for o, (p, q) in enumerate(zip(ps, qs, strict=True)):
            p.grad = tp.tensor(step[o])
            q.grad = tp.tensor(step[o])
        opt.step()
        other.step()
    for p, q in zip(ps, qs, strict=True):
        np.testing.assert_array_equal(a(p), a(q))


def test_load_state_dict_errors():
    ps = [tp.zeros(2), tp.zeros(3)]
    sd = optim.SGD(ps, lr=0.1).state_dict()
    with pytest.raises(
        ValueError,
        match=r"loaded state dict has a different number of parameter "
        r"groups \(1\) than the optimizer \(2\)",
    ):
        optim.SGD([{"params": [ps[0]]}, {"params": [ps[1]]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(
        ValueError,
        match="loaded state dict contains a parameter group that "
        "doesn't match the size of optimizer's group: group 0 has 2 parameters "
        "there, 1 here",
    ):
        optim.SGD([ps[0]], lr=0.1).load_state_dict(sd)
    sd["state"][7] = {"momentum_buffer": tp.zeros(2)}
    with pytest.raises(ValueError, match="loaded state dict has state for parameter 7"):
        optim.SGD(ps, lr=0.1).load_state_dict(sd)


def test_zero_grad_and_closure():
    ps = [tp.ones(2), tp.ones(3)]
    opt = optim.Adam(ps)
    for p in ps:
        p.grad = tp.ones_like(p)
    opt.zero_grad(set_to_none=False)
    assert [p.grad.tolist() for p in ps] == [[0.0, 0.0], [0.0, 0.0, 0.0]]
    opt.zero_grad()
    assert all(p.grad is None for p in ps)
    assert opt.step(lambda: 1.5) == 1.5 and opt.step() is None


def test_constructor_errors():
    p = tp.zeros(2)
    cases = [
        (
            lambda: optim.SGD(p, lr=0.1),
            TypeError,
            "params argument given to the optimizer should be an iterable of Tensors or dicts, "
            "but got Tensor",
        ),
        (lambda: optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
        (
            lambda: optim.SGD([p, p], lr=0.1),
            ValueError,
            "a parameter group holds the same parameter more than once",
        ),
        (
            lambda: optim.SGD([{"params": [p]}, {"params": [p]}]),
            ValueError,
            "some parameters appear in more than one parameter group",
        ),
        (
            lambda: optim.SGD([{"params": {p}}]),
            TypeError,
            "optimizer parameters need to be organized in ordered collections",
        ),
        (lambda: optim.SGD([{"lr": 0.1}]), ValueError, "param_group must have a 'params' entry"),
        (
            lambda: optim.SGD([p]).add_param_group([p]),
            TypeError,
            "param_group must be a dict, but got list",
        ),
        (
            lambda: optim.SGD([1.0]),
            TypeError,
            "optimizer can only optimize Tensors, but one of the params is float",
        ),
        (lambda: optim.SGD([p], lr=-1), ValueError, "Invalid learning rate: -1"),
        (lambda: optim.SGD([p], momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
        (lambda: optim.SGD([p], weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
        (
            lambda: optim.SGD([p], nesterov=True),
            ValueError,
            "Nesterov momentum requires a momentum and zero dampening",
        ),
        (
            lambda: optim.SGD([p], momentum=0.9, dampening=0.1, nesterov=True),
            ValueError,
            "Nesterov momentum requires a momentum and zero dampening",
        ),
        (lambda: optim.Adam([p], lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
        (lambda: optim.Adam([p], eps=-1e-8), ValueError, "Invalid epsilon value: -1e-08"),
        (
            lambda: optim.Adam([p], betas=(1.0, 0.999)),
            ValueError,
            "Invalid beta parameter at index 0: 1.0",
        ),
        (
            lambda: optim.Adam([p], betas=(0.9, -0.1)),
            ValueError,
            "Invalid beta parameter at index 1: -0.1",
        ),
        (
            lambda: optim.Adam([p], weight_decay=-0.1),
            ValueError,
            "Invalid weight_decay value: -0.1",
        ),
    ]
    for make, exc, message in cases:
        with pytest.raises(exc) as ei:
            make()
        assert str(ei.value).startswith(message), (message, str(ei.value))


def test_required_hyperparameter():
    class Bare(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": optim.optimizer.required})

    with pytest.raises(
        ValueError,
        match="parameter group didn't specify a value of required optimization parameter lr",
    ):
        Bare([tp.zeros(1)])
    assert Bare([{"params": [tp.zeros(1)], "lr": 0.1}]).param_groups[0]["lr"] == 0.1
    with pytest.raises(NotImplementedError, match="Bare does not implement step"):
        Bare([{"params": [tp.zeros(1)], "lr": 0.1}]).step()


def test_repr():
    opt = optim.SGD([tp.zeros(1)], lr=0.5, momentum=0.9)
    assert repr(opt) == (  # PyTorch 2.13's, as printed by torch.optim.SGD
        "SGD (\n"
        "Parameter Group 0\n"
        "    dampening: 0\n"
        "    differentiable: False\n"
        "    foreach: None\n"
        "    fused: None\n"
        "    lr: 0.5\n"
        "    maximize: False\n"
        "    momentum: 0.9\n"
        "    nesterov: False\n"
        "    weight_decay: 0\n"
        ")"
    )
