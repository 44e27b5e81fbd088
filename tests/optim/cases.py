"""The optimizer and scheduler cases the parity tests run, written against a library ``lib``
that is ``torch`` or ``tensorplug``: the same code runs on both (tools/gen_optim_trajectories.py
runs it on torch and freezes the results in tests/optim/data/trajectories.npz;
tests/optim/test_parity.py runs it on tensorplug and compares, with torch too when importable).

Gradients come from numpy, so no autograd is needed: at step t, for parameter i,
``g = C[i] * p + 0.1 * p**3 + NOISE[t][i]`` (a quartic loss with noise), the loss being
``sum(C p**2 / 2 + 0.025 p**4 + NOISE p)``; LBFGS's closure uses step 0's noise throughout.
A ``maximize=True`` case is fed the negated gradients. All in float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

STEPS = 50
EVERY = 5  # trajectories are recorded every EVERY steps

_rng = np.random.default_rng(31)
SHAPES = [(3, 4), (4,)]
INIT = [_rng.normal(size=s) for s in SHAPES]
C = [_rng.uniform(0.5, 1.5, size=s) for s in SHAPES]
NOISE = [[0.3 * _rng.normal(size=s) for s in SHAPES] for _ in range(STEPS)]


def grads(params: list[np.ndarray], t: int) -> list[np.ndarray]:
    return [C[i] * p + 0.1 * (p * p * p) + NOISE[t][i] for i, p in enumerate(params)]


def loss(params: list[np.ndarray], t: int) -> float:
    """The loss whose gradient is ``grads(params, t)``."""
    total = 0.0
    for i, p in enumerate(params):
        total += float(np.sum(C[i] * p * p / 2 + 0.025 * (p * p * p * p) + NOISE[t][i] * p))
    return total


OPTIMIZERS: list[tuple[str, dict[str, Any]]] = [
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.2, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "foreach": False}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "maximize": True, "eps": 1e-6}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "foreach": False}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True, "foreach": False}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    (
        "Adagrad",
        {
            "lr": 0.1,
            "lr_decay": 0.01,
            "weight_decay": 0.1,
            "initial_accumulator_value": 0.1,
            "maximize": True,
        },
    ),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "foreach": False}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "alpha": 0.9, "maximize": True}),
    ("Rprop", {"lr": 0.01}),
    ("Rprop", {"lr": 0.01, "etas": (0.3, 1.5), "step_sizes": (1e-4, 1.0)}),
    ("ASGD", {"lr": 0.05}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 10, "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.05}),
    (
        "Adafactor",
        {
            "lr": 0.05,
            "beta2_decay": -0.5,
            "eps": (1e-20, 1e-3),
            "d": 2.0,
            "weight_decay": 0.1,
            "maximize": False,
        },
    ),  # fmt: skip
    ("LBFGS", {"lr": 0.5, "max_iter": 2}),
    ("LBFGS", {"lr": 1, "max_iter": 3, "history_size": 3, "line_search_fn": "strong_wolfe"}),
]


def case_id(name: str, kwargs: dict[str, Any]) -> str:
    return name + "(" + ", ".join(f"{k}={v}" for k, v in kwargs.items()) + ")"


def to_np(t: Any) -> np.ndarray:
    return np.array(t.detach().numpy(), dtype=np.float64, copy=True)


def run_optimizer(lib: Any, name: str, kwargs: dict[str, Any], steps: int = STEPS) -> np.ndarray:
    """The flattened parameters every EVERY steps (rows) of ``steps`` steps."""
    ps = [lib.tensor(x.copy()) for x in INIT]
    opt = getattr(lib.optim, name)(ps, **kwargs)
    sign = -1.0 if kwargs.get("maximize") else 1.0  # maximize the negated loss
    rows = []
    for t in range(steps):
        if name == "LBFGS":

            def closure() -> Any:
                cur = [to_np(p) for p in ps]
                for p, g in zip(ps, grads(cur, 0), strict=True):
                    p.grad = lib.tensor(g)
                return lib.tensor(loss(cur, 0))

            opt.step(closure)
        else:
            for p, g in zip(ps, grads([to_np(p) for p in ps], t), strict=True):
                p.grad = lib.tensor(sign * g)
            opt.step()
        if (t + 1) % EVERY == 0:
            rows.append(np.concatenate([to_np(p).ravel() for p in ps]))
    return np.stack(rows)


# --- schedulers: name -> a builder (lib, optimizer) -> scheduler; with the optimizer to use --


def _sched(lib: Any) -> Any:
    return lib.optim.lr_scheduler


SCHEDULERS: dict[str, tuple[str, Any]] = {
    "LambdaLR": ("SGD", lambda lib, o: _sched(lib).LambdaLR(o, lambda e: 0.95**e + 0.01 * e)),
    "MultiplicativeLR": ("SGD", lambda lib, o: _sched(lib).MultiplicativeLR(o, lambda e: 0.97)),
    "StepLR": ("SGD", lambda lib, o: _sched(lib).StepLR(o, step_size=7, gamma=0.5)),
    "MultiStepLR": ("SGD", lambda lib, o: _sched(lib).MultiStepLR(o, [5, 12, 12, 30], 0.3)),
    "ConstantLR": ("SGD", lambda lib, o: _sched(lib).ConstantLR(o, factor=0.25, total_iters=8)),
    "LinearLR": ("SGD", lambda lib, o: _sched(lib).LinearLR(o, 0.1, 0.9, total_iters=20)),
    "ExponentialLR": ("SGD", lambda lib, o: _sched(lib).ExponentialLR(o, gamma=0.93)),
    "PolynomialLR": ("SGD", lambda lib, o: _sched(lib).PolynomialLR(o, total_iters=30, power=2.0)),
    "CosineAnnealingLR": ("SGD", lambda lib, o: _sched(lib).CosineAnnealingLR(o, T_max=12, eta_min=0.001)),
    "CosineAnnealingWarmRestarts": (
        "SGD", lambda lib, o: _sched(lib).CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01)),
    "CyclicLR": ("SGDm", lambda lib, o: _sched(lib).CyclicLR(o, 0.01, 0.1, step_size_up=4, step_size_down=6)),
    "CyclicLR-triangular2": ("SGDm", lambda lib, o: _sched(lib).CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="triangular2")),
    "CyclicLR-exp_range": ("Adam", lambda lib, o: _sched(lib).CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="exp_range", gamma=0.97)),
    "OneCycleLR": ("Adam", lambda lib, o: _sched(lib).OneCycleLR(o, max_lr=0.2, total_steps=60)),
    "OneCycleLR-3phase-linear": ("SGDm", lambda lib, o: _sched(lib).OneCycleLR(
        o, max_lr=0.2, epochs=6, steps_per_epoch=10, three_phase=True, anneal_strategy="linear")),
    "ReduceLROnPlateau": ("SGD", lambda lib, o: _sched(lib).ReduceLROnPlateau(o, patience=2, factor=0.5, cooldown=1)),
    "ReduceLROnPlateau-max-abs": ("SGD", lambda lib, o: _sched(lib).ReduceLROnPlateau(
        o, mode="max", threshold_mode="abs", threshold=0.01, patience=1, min_lr=0.01)),
    "SequentialLR": ("SGD", lambda lib, o: _sched(lib).SequentialLR(
        o, [_sched(lib).LinearLR(o, 0.1, total_iters=5), _sched(lib).ExponentialLR(o, 0.9),
            _sched(lib).CosineAnnealingLR(o, T_max=10)], milestones=[5, 20])),
    "ChainedScheduler": ("SGD", lambda lib, o: _sched(lib).ChainedScheduler(
        [_sched(lib).ConstantLR(o, factor=0.5, total_iters=4), _sched(lib).ExponentialLR(o, 0.95),
         _sched(lib).StepLR(o, 10, 0.5)])),
    "SWALR": ("SGD", lambda lib, o: lib.optim.swa_utils.SWALR(o, swa_lr=0.02, anneal_epochs=7)),
    "SWALR-linear": ("SGD", lambda lib, o: lib.optim.swa_utils.SWALR(o, swa_lr=0.3, anneal_epochs=5, anneal_strategy="linear")),
}  # fmt: skip

# schedulers stepped with an epoch (the closed forms), at these epochs
CLOSED_FORM = ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
               "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts"]  # fmt: skip
EPOCHS = [3, 7, 8, 2, 15, 40, 21, 0, 33]

# a noisy metric for ReduceLROnPlateau: down, then flat with noise
METRIC = [1.0 / (1 + 0.3 * t) + 0.05 * float(np.sin(t * 1.7)) for t in range(STEPS)]


def _optimizer(lib: Any, which: str, params: list[Any]) -> Any:
    groups = [{"params": params[:1]}, {"params": params[1:], "lr": 0.2}]
    if which == "SGD":
        return lib.optim.SGD(groups, lr=0.1)
    if which == "SGDm":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return lib.optim.Adam(groups, lr=0.1)


def run_scheduler(lib: Any, name: str, closed_form: bool = False) -> np.ndarray:
    """Per step: each group's learning rate (``get_last_lr()``) and momentum (``momentum`` or
    ``betas[0]``, 0 when the optimizer has neither)."""
    import warnings

    which, build = SCHEDULERS[name]
    ps = [lib.tensor(x.copy()) for x in INIT]
    opt = _optimizer(lib, which, ps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = build(lib, opt)
        rows = []
        epochs = EPOCHS if closed_form else range(STEPS)
        for t, epoch in enumerate(epochs):
            for p, g in zip(ps, grads([to_np(p) for p in ps], t), strict=True):
                p.grad = lib.tensor(g)
            opt.step()
            if name.startswith("ReduceLROnPlateau"):
                sched.step(METRIC[t])
            elif closed_form:
                sched.step(epoch)
            else:
                sched.step()
            row = [float(v) for v in sched.get_last_lr()]
            for g in opt.param_groups:
                row.append(float(g["momentum"]) if "momentum" in g else float(g["betas"][0]))
            rows.append(row)
    return np.asarray(rows, dtype=np.float64)


# --- signatures: constructor arguments and defaults -------------------------------------------

SIGNATURES = [
    *(f"optim.{n}" for n in ("SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "NAdam",
                              "RAdam", "RMSprop", "Rprop", "ASGD", "LBFGS", "SparseAdam",
                              "Adafactor")),
    *(f"optim.lr_scheduler.{n}" for n in (
        "LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
        "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
        "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR", "ReduceLROnPlateau",
        "SequentialLR", "ChainedScheduler")),
    "optim.swa_utils.AveragedModel", "optim.swa_utils.SWALR", "optim.swa_utils.update_bn",
    "optim.swa_utils.get_ema_multi_avg_fn", "optim.swa_utils.get_swa_multi_avg_fn",
    "optim.swa_utils.get_ema_avg_fn", "optim.swa_utils.get_swa_avg_fn",
]  # fmt: skip


def signature_of(lib: Any, name: str) -> list[list[str]]:
    """``[name, kind, repr(default)]`` of each parameter of ``lib.<name>`` (its ``__init__``
    for a class, without ``self``)."""
    import inspect

    obj = lib
    for part in name.split("."):
        obj = getattr(obj, part)
    fn = obj.__init__ if inspect.isclass(obj) else obj
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.name == "self":
            continue
        default = "<none>" if p.default is inspect.Parameter.empty else repr(p.default)
        out.append([p.name, p.kind.name, default])
    return out
