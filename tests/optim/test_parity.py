"""Every optimizer and scheduler against PyTorch's, from the same start over 50 steps, to 1e-6
relative: against frozen torch results (tests/optim/data/trajectories.npz, made by
tools/gen_optim_trajectories.py), and against torch itself when it is importable."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tests.optim import cases

DATA = np.load(Path(__file__).parent / "data" / "trajectories.npz")
HAS_TORCH = importlib.util.find_spec("torch") is not None
RTOL, ATOL = 1e-6, 1e-9


@pytest.mark.parametrize(
    ("name", "kwargs"), cases.OPTIMIZERS, ids=[cases.case_id(n, k) for n, k in cases.OPTIMIZERS]
)
def test_optimizer_trajectory_matches_pytorch(name, kwargs):
    got = cases.run_optimizer(tp, name, kwargs)
    want = DATA["opt:" + cases.case_id(name, kwargs)]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", list(cases.SCHEDULERS))
def test_schedule_matches_pytorch(name):
    got = cases.run_scheduler(tp, name)
    np.testing.assert_allclose(got, DATA["sched:" + name], rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("name", cases.CLOSED_FORM)
def test_closed_form_schedule_matches_pytorch(name):
    got = cases.run_scheduler(tp, name, closed_form=True)
    np.testing.assert_allclose(got, DATA["closed:" + name], rtol=RTOL, atol=1e-12)


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not importable")
@pytest.mark.parametrize(
    ("name", "kwargs"),
    cases.OPTIMIZERS[::3],
    ids=[cases.case_id(n, k) for n, k in cases.OPTIMIZERS[::3]],
)
def test_optimizer_trajectory_matches_torch_now(name, kwargs):
    import torch

    got = cases.run_optimizer(tp, name, kwargs)
    np.testing.assert_allclose(got, cases.run_optimizer(torch, name, kwargs), rtol=RTOL, atol=ATOL)


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not importable")
@pytest.mark.parametrize("name", list(cases.SCHEDULERS)[::2])
def test_schedule_matches_torch_now(name):
    import torch

    np.testing.assert_allclose(
        cases.run_scheduler(tp, name), cases.run_scheduler(torch, name), rtol=RTOL, atol=1e-12
    )


TENSOR_PATHS = [
    (n, k)
    for n, k in cases.OPTIMIZERS
    if n
    in ("Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "RMSprop", "Rprop", "ASGD", "Adafactor")
]


@pytest.mark.parametrize(
    ("name", "kwargs"), TENSOR_PATHS, ids=[cases.case_id(n, k) for n, k in TENSOR_PATHS]
)
def test_the_tensor_path_matches_pytorch_too(name, kwargs):
    # what a traced step runs (Note [Tensor paths] in optim/optimizer.py): its scalars in tensors
    with tp.dispatch.collect_state_reads() as reads:
        got = cases.run_optimizer(tp, name, kwargs)
    assert reads  # the step said what it depends on
    want = DATA["opt:" + cases.case_id(name, kwargs)]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


SIGNATURES = json.loads((Path(__file__).parent / "data" / "signatures.json").read_text("utf-8"))


@pytest.mark.parametrize("name", cases.SIGNATURES)
def test_constructor_arguments_and_defaults_are_pytorchs(name):
    assert cases.signature_of(tp, name) == SIGNATURES[name]
