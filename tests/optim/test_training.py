"""Training with tp.optim: an MLP written for torch run with tensorplug, a training step under
tp.compile (one guarded graph, bitwise equal to eager steps), and torch's state dicts."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_tracer = pytest.mark.skipif(not needs.HAS_TRACER, reason="needs tensorplug-tracer loaded")


def train_mlp(torch, steps: int = 30) -> list[float]:
    """An MLP with Adam and StepLR, as a PyTorch user writes it: run with ``torch`` or with
    ``tensorplug`` passed as ``torch``."""
    nn = torch.nn
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.normal(size=(64, 10)).astype(np.float32))
    y = torch.tensor(rng.integers(0, 3, size=64))
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
    with torch.no_grad():  # the same start for both libraries
        for p in model.parameters():
            p.copy_(torch.tensor(rng.normal(scale=0.3, size=tuple(p.shape)).astype(np.float32)))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses


@needs.needs_autograd
def test_an_mlp_with_adam_and_steplr_trains_as_written_for_torch():
    losses = train_mlp(tp)
    assert losses[-1] < 0.6 * losses[0]
    if HAS_TORCH:
        import torch

        np.testing.assert_allclose(losses, train_mlp(torch), rtol=2e-5)


# --- tp.compile of a whole training step ------------------------------------------------------


def _training(opt_name, kwargs, sched, compiled, fullgraph=False, steps=9):
    tp.manual_seed(0)
    model = tp.nn.Sequential(tp.nn.Linear(6, 8), tp.nn.ReLU(), tp.nn.Linear(8, 3))
    opt = getattr(tp.optim, opt_name)(model.parameters(), **kwargs)
    scheduler = sched(opt)
    loss_fn = tp.nn.CrossEntropyLoss()

    def step(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    f = tp.compile(step, fullgraph=fullgraph) if compiled else step
    tp.manual_seed(1)
    x, y = tp.randn(16, 6), tp.randint(0, 3, (16,))
    losses = []
    for _ in range(steps):
        losses.append(f(x, y).item())
        scheduler.step()
    return losses, [p.detach().numpy().copy() for p in model.parameters()], f, opt


S = tp.optim.lr_scheduler
STEPS = [
    ("Adam", {"lr": 0.01}, lambda o: S.StepLR(o, 2, 0.5)),
    ("AdamW", {"lr": 0.01, "amsgrad": True}, lambda o: S.ExponentialLR(o, 0.8)),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}, lambda o: S.CosineAnnealingLR(o, 4)),
]


@needs.needs_autograd
@needs_tracer
@pytest.mark.parametrize(("name", "kwargs", "sched"), STEPS, ids=[s[0] for s in STEPS])
def test_a_compiled_training_step_is_one_graph_across_learning_rate_changes(name, kwargs, sched):
    want_losses, want_params, _, _ = _training(name, kwargs, sched, compiled=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback, no warning
        losses, params, f, _ = _training(name, kwargs, sched, compiled=True, fullgraph=True)
    assert losses == want_losses  # bitwise: the same kernels on the same values
    for a, b in zip(params, want_params, strict=True):
        np.testing.assert_array_equal(a, b)
    # the first call makes the optimizer's state, the next two agree: then one graph for all
    assert f.trace_count == 3 and len(f.graphs) == 1
    ops = {n.op.name for n in f.graphs[0].nodes}
    assert {"aten::_foreach_add_.Scalar", "aten::_fused_sgd_.tensor_lr"} & ops


@needs.needs_autograd
@needs_tracer
def test_a_changed_hyperparameter_is_guarded_and_a_tensor_lr_needs_no_trace():
    def changed_beta(o):
        class Bump:
            def step(self):
                o.param_groups[0]["betas"] = (0.8, 0.99)  # a guarded hyperparameter

        return Bump()

    want, want_params, _, _ = _training("Adam", {"lr": 0.01}, changed_beta, compiled=False)
    got, params, f, _ = _training("Adam", {"lr": 0.01}, changed_beta, compiled=True)
    assert got == want and all(
        np.array_equal(a, b) for a, b in zip(params, want_params, strict=True)
    )
    # the change after the first call retraces; with the betas steady, one graph again
    assert f.trace_count == 3

    lr = tp.tensor(0.01, dtype=tp.float64)
    want, _, _, _ = _training("Adam", {"lr": lr.clone()}, lambda o: S.StepLR(o, 1, 0.7), False)
    got, _, f, opt = _training("Adam", {"lr": lr}, lambda o: S.StepLR(o, 1, 0.7), True)
    assert got == want and f.trace_count == 3
    assert opt.param_groups[0]["lr"] is lr  # written in place by the scheduler


@needs.needs_autograd
@needs_tracer
def test_load_state_dict_between_compiled_steps_is_seen():
    _, _, f, opt = _training("Adam", {"lr": 0.01}, lambda o: S.StepLR(o, 100), True, steps=4)
    saved = opt.state_dict()
    n = f.trace_count
    opt.load_state_dict(saved)  # new state tensors: the graph holding the old ones must not run
    x, y = tp.randn(16, 6), tp.randint(0, 3, (16,))
    f(x, y)
    assert f.trace_count == n + 1


# --- PyTorch's state dicts --------------------------------------------------------------------


def test_state_dict_has_pytorchs_layout():
    p = tp.zeros(3, 2)
    opt = tp.optim.Adam([p], lr=0.1)
    p.grad = tp.ones(3, 2)
    opt.step()
    sd = opt.state_dict()
    assert list(sd["param_groups"][0]) == [
        "lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach", "capturable",
        "differentiable", "fused", "decoupled_weight_decay", "params",
    ]  # fmt: skip
    step = sd["state"][0]["step"]
    assert isinstance(step, tp.Tensor) and step.dtype == tp.float32 and step.shape == ()
    assert step.item() == 1.0


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not importable")
@pytest.mark.parametrize("name", ["Adam", "SGD", "RMSprop", "NAdam", "ASGD"])
def test_a_torch_state_dict_loads_and_continues_torchs_trajectory(name):
    import torch

    from tests.optim import cases

    kwargs = {"lr": 0.05, "momentum": 0.9} if name in ("SGD", "RMSprop") else {"lr": 0.05}

    def run(lib, ps, opt, t0, t1):
        for t in range(t0, t1):
            for p, g in zip(ps, cases.grads([cases.to_np(p) for p in ps], t), strict=True):
                p.grad = lib.tensor(g)
            opt.step()

    tps = [torch.tensor(x.copy()) for x in cases.INIT]
    topt = getattr(torch.optim, name)(tps, **kwargs)
    run(torch, tps, topt, 0, 10)
    sd = topt.state_dict()
    ours = [tp.tensor(p.numpy().copy()) for p in tps]
    opt = getattr(tp.optim, name)(ours, **kwargs)
    opt.load_state_dict({
        "state": {i: {k: tp.tensor(v.numpy()) if torch.is_tensor(v) else v for k, v in s.items()}
                  for i, s in sd["state"].items()},
        "param_groups": sd["param_groups"],
    })  # fmt: skip
    run(torch, tps, topt, 10, 20)
    run(tp, ours, opt, 10, 20)
    for a, b in zip(ours, tps, strict=True):
        np.testing.assert_allclose(cases.to_np(a), b.numpy(), rtol=1e-6, atol=1e-9)


TENSOR_PATH_STEPS = [
    ("Adagrad", {"lr": 0.05, "lr_decay": 0.01}),
    ("Adadelta", {}),
    ("Adamax", {"lr": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.01, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    ("Rprop", {}),
    ("ASGD", {"lr": 0.05}),
    ("Adafactor", {"lr": 0.05}),
]


@needs.needs_autograd
@needs_tracer
@pytest.mark.parametrize(
    ("name", "kwargs"), TENSOR_PATH_STEPS, ids=[s[0] for s in TENSOR_PATH_STEPS]
)
def test_every_optimizer_compiles_to_one_graph_through_its_tensor_path(name, kwargs):
    def sched(o):
        return S.StepLR(o, 2, 0.5)

    want_losses, want_params, _, _ = _training(name, kwargs, sched, compiled=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        losses, params, f, _ = _training(name, kwargs, sched, compiled=True, fullgraph=True)
    # Note [Tensor paths]: the traced step computes its scalars in tensors, equal to rounding
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for a, b in zip(params, want_params, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert f.trace_count == 3 and len(f.graphs) == 1
