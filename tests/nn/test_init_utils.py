"""nn.init (all 26 functions) and nn.utils (clipping, parametrizations) against PyTorch's
frozen values (tests/nn/data/trainutils.json, made by tools/gen_trainutils.py), and against
torch itself where it is importable."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn import init
from tests import needs

FROZEN = json.loads((Path(__file__).parent / "data" / "trainutils.json").read_text())

TORCH_INIT_NAMES = [
    "calculate_gain", "constant", "constant_", "dirac", "dirac_", "eye", "eye_",
    "kaiming_normal", "kaiming_normal_", "kaiming_uniform", "kaiming_uniform_", "normal",
    "normal_", "ones_", "orthogonal", "orthogonal_", "sparse", "sparse_", "trunc_normal_",
    "uniform", "uniform_", "xavier_normal", "xavier_normal_", "xavier_uniform",
    "xavier_uniform_", "zeros_",
]  # fmt: skip


def test_all_26_functions_of_torch_nn_init_are_there():
    assert sorted(init.__all__) == TORCH_INIT_NAMES
    assert all(callable(getattr(init, n)) for n in TORCH_INIT_NAMES)


def test_gains_and_their_errors():
    for key, gain in FROZEN["gains"].items():
        name, _, param = key.partition(":")
        ours = init.calculate_gain(name, float(param) if param else None)
        assert ours == pytest.approx(gain, rel=1e-15), key
    assert init.calculate_gain("leaky_relu", 3) == pytest.approx(FROZEN["gains"]["leaky_relu:3"])
    for case, call in {
        "unknown": lambda: init.calculate_gain("softsign_x"),
        "bad_param": lambda: init.calculate_gain("leaky_relu", True),
    }.items():
        kind, message = FROZEN["gain_errors"][case]
        with pytest.raises(ValueError) as e:
            call()
        assert (type(e.value).__name__, str(e.value)) == (kind, message)


def test_fans():
    for shape, fans in FROZEN["fans"]:
        assert list(init._calculate_fan_in_and_fan_out(tp.empty(shape))) == fans


STAT_CASES = {
    "xavier_uniform_": lambda t: init.xavier_uniform_(t, gain=2.0),
    "xavier_normal_": lambda t: init.xavier_normal_(t, gain=0.5),
    "kaiming_uniform_": lambda t: init.kaiming_uniform_(t, a=0.3, mode="fan_out"),
    "kaiming_normal_": lambda t: init.kaiming_normal_(t, nonlinearity="relu"),
    "trunc_normal_": lambda t: init.trunc_normal_(t, mean=0.5, std=2.0, a=-1.0, b=1.5),
    "trunc_normal_narrow": lambda t: init.trunc_normal_(t, std=1.0, a=2.0, b=2.5),
    "uniform_": lambda t: init.uniform_(t, -3.0, 5.0),
    "normal_": lambda t: init.normal_(t, 1.0, 0.25),
}


@pytest.mark.parametrize("case", sorted(STAT_CASES))
def test_init_statistics_match_pytorchs(case):
    """98k samples: the mean and std agree with PyTorch's to a few standard errors; bounded
    draws stay inside PyTorch's bounds and come close to them."""
    t = STAT_CASES[case](tp.empty([256, 128, 3], dtype=tp.float64))
    want = FROZEN["init_stats"][case]
    a = t.numpy()
    assert a.std() == pytest.approx(want["std"], rel=0.02)
    assert abs(a.mean() - want["mean"]) < 0.02 * max(want["std"], 1e-3) * 5
    if "uniform" in case or "trunc" in case:
        span = want["max"] - want["min"]
        assert want["min"] - 1e-3 * span <= a.min() <= want["min"] + 0.01 * span
        assert want["max"] - 0.01 * span <= a.max() <= want["max"] + 1e-3 * span


def test_generator_makes_random_inits_reproducible():
    for fn in (init.xavier_normal_, init.kaiming_uniform_, init.orthogonal_, init.trunc_normal_):
        a = fn(tp.empty(6, 5), generator=tp.Generator().manual_seed(3))
        b = fn(tp.empty(6, 5), generator=tp.Generator().manual_seed(3))
        assert tp.equal(a, b), fn.__name__
    s1 = init.sparse_(tp.empty(6, 5), 0.5, generator=tp.Generator().manual_seed(1))
    s2 = init.sparse_(tp.empty(6, 5), 0.5, generator=tp.Generator().manual_seed(1))
    assert tp.equal(s1, s2)


def test_deterministic_inits():
    assert init.eye_(tp.empty(2, 3)).tolist() == [[1, 0, 0], [0, 1, 0]]
    w = init.dirac_(tp.empty(6, 4, 3, 3), groups=2)
    assert np.argwhere(w.numpy()).tolist() == FROZEN["dirac"]
    assert init.constant_(tp.empty(2), 0.5).tolist() == [0.5, 0.5]
    assert init.ones_(tp.empty(2)).tolist() == [1, 1] and init.zeros_(tp.empty(1)).tolist() == [0]


def test_orthogonal_and_sparse():
    for shape in ([5, 3], [3, 5], [4, 2, 3]):
        w = init.orthogonal_(tp.empty(shape), gain=2.0).numpy().reshape(shape[0], -1)
        small = w @ w.T if shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(small, 4 * np.eye(len(small)), atol=1e-5)
    s = init.sparse_(tp.empty(10, 4), sparsity=0.3)
    assert ((s.numpy() == 0).sum(0) == 3).all()  # ceil(0.3 * 10) per column


def test_init_errors_are_pytorchs():
    calls = {
        "dirac_2d": lambda: init.dirac_(tp.empty(3, 3)),
        "dirac_groups": lambda: init.dirac_(tp.empty(5, 3, 3), groups=2),
        "eye_3d": lambda: init.eye_(tp.empty(2, 2, 2)),
        "sparse_1d": lambda: init.sparse_(tp.empty(3), 0.1),
        "orthogonal_1d": lambda: init.orthogonal_(tp.empty(3)),
        "fan_1d": lambda: init.xavier_uniform_(tp.empty(3)),
        "mode": lambda: init.kaiming_normal_(tp.empty(3, 3), mode="fan_x"),
    }
    for case, call in calls.items():
        kind, message = FROZEN["init_errors"][case]
        with pytest.raises(ValueError) as e:
            call()
        assert (type(e.value).__name__, str(e.value)) == (kind, message), case


def test_the_deprecated_names_warn_and_forward():
    with pytest.warns(FutureWarning, match=r"`nn.init.xavier_uniform` is now deprecated in favor"):
        init.xavier_uniform(tp.empty(3, 3))
    with pytest.warns(FutureWarning, match="nn.init.constant"):
        assert init.constant(tp.empty(2), 3.0).tolist() == [3.0, 3.0]
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_normal_(tp.empty(0, 3))


# --- clipping ---------------------------------------------------------------------------------


def params_with_grads():
    ps = []
    for g in FROZEN["clip"]["grads"]:
        p = nn.Parameter(tp.zeros(np.asarray(g).shape))
        p.grad = tp.tensor(g)
        ps.append(p)
    return ps


@needs.needs_autograd
def test_clip_grad_norm_matches_pytorch_for_every_norm_type():
    for case in FROZEN["clip"]["norm"]:
        for foreach in (None, True):
            ps = params_with_grads()
            norm_type = math.inf if case["norm_type"] == "inf" else case["norm_type"]
            total = nn.utils.clip_grad_norm_(ps, case["max_norm"], norm_type, foreach=foreach)
            assert total.item() == pytest.approx(case["total"], rel=1e-5)
            for p, want in zip(ps, case["clipped"], strict=True):
                np.testing.assert_allclose(p.grad.numpy(), want, rtol=1e-5, atol=1e-7)


@needs.needs_autograd
def test_get_total_norm_clip_grads_with_norm_and_clip_grad_value():
    ps = params_with_grads()
    total = nn.utils.get_total_norm([p.grad for p in ps], 2.0)
    nn.utils.clip_grads_with_norm_(ps, 0.5, total)
    want = next(c for c in FROZEN["clip"]["norm"] if c["norm_type"] == 2.0 and c["max_norm"] == 0.5)
    assert total.item() == pytest.approx(want["total"], rel=1e-6)
    for p, w in zip(ps, want["clipped"], strict=True):
        np.testing.assert_allclose(p.grad.numpy(), w, rtol=1e-5)
    assert nn.utils.get_total_norm([]).item() == 0.0
    assert nn.utils.get_total_norm([tp.ones(3), tp.ones(2)], 3.0).item() == pytest.approx(
        5 ** (1 / 3)
    )
    ps = params_with_grads()
    nn.utils.clip_grad_value_(ps, 0.3)
    for p, w in zip(ps, FROZEN["clip"]["value_0.3"], strict=True):
        np.testing.assert_allclose(p.grad.numpy(), w)
    p = nn.Parameter(tp.zeros(2))
    p.grad = tp.tensor([math.inf, 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)


# --- parametrizations -------------------------------------------------------------------------


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(-1, -2)


class Doubling(nn.Module):
    def forward(self, x):
        return x * 2

    def right_inverse(self, x):
        return x / 2


def test_parametrize_state_dict_keys_are_pytorchs():
    keys = FROZEN["parametrize_keys"]
    m = nn.Linear(3, 3)
    nn.utils.parametrize.register_parametrization(m, "weight", Symmetric())
    assert [list(m.state_dict()), type(m).__name__] == keys["one"]
    nn.utils.parametrize.register_parametrization(m, "weight", Symmetric())
    assert list(m.state_dict()) == keys["two"]
    m = nn.Linear(3, 3)
    nn.utils.parametrizations.weight_norm(m)
    assert list(m.state_dict()) == keys["weight_norm"]
    m = nn.Linear(3, 3)
    nn.utils.parametrizations.spectral_norm(m)
    nn.utils.parametrizations.weight_norm(m, "bias", dim=None)
    assert list(m.state_dict()) == keys["spectral_norm_and_bias_weight_norm"]
    s = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    nn.utils.parametrizations.weight_norm(s[1])
    assert list(s.state_dict()) == keys["nested"]


@needs.needs_autograd
def test_register_parametrization_right_inverse_cached_and_remove():
    P = nn.utils.parametrize
    m = nn.Linear(3, 3)
    w0 = m.weight.detach().clone()
    P.register_parametrization(m, "weight", Doubling())
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
    assert not P.is_parametrized(m, "bias")
    np.testing.assert_allclose(m.parametrizations.weight.original.detach().numpy(), w0.numpy() / 2)
    assert tp.allclose(m.weight, w0)
    m.weight = tp.ones(3, 3)  # through right_inverse
    assert m.parametrizations.weight.original.detach().tolist() == [[0.5] * 3] * 3
    m(tp.ones(1, 3)).sum().backward()
    assert m.parametrizations.weight.original.grad.tolist() == [[2.0] * 3] * 3
    with P.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    assert P.type_before_parametrizations(m) is nn.Linear
    P.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and list(m.state_dict()) == ["bias", "weight"]
    assert m.weight.detach().tolist() == [[1.0] * 3] * 3 and isinstance(m.weight, nn.Parameter)
    m2 = nn.Linear(2, 2)
    P.register_parametrization(m2, "weight", Doubling())
    P.remove_parametrizations(m2, "weight", leave_parametrized=False)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(m2, "weight")


def test_parametrization_errors():
    P = nn.utils.parametrize

    class Shrink(nn.Module):
        def forward(self, x):
            return x[:1]

    with pytest.raises(ValueError, match="may not change the shape of the tensor, unless `unsafe`"):
        P.register_parametrization(nn.Linear(2, 2), "weight", Shrink())
    m = nn.Linear(2, 2)
    P.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert m.weight.shape == (1, 2)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized"):
        P.register_parametrization(nn.Linear(2, 2), "nope", Shrink())
    m = nn.Linear(2, 2)
    P.register_parametrization(m, "weight", Symmetric())
    with pytest.raises(RuntimeError, match="parametrization Symmetric does not implement right"):
        m.weight = tp.zeros(2, 2)


def test_weight_norm_and_spectral_norm_values():
    m = nn.Linear(4, 3)
    w = m.weight.detach().clone()
    nn.utils.parametrizations.weight_norm(m)
    g = m.parametrizations.weight.original0.detach().numpy()
    np.testing.assert_allclose(g[:, 0], np.linalg.norm(w.numpy(), axis=1), rtol=1e-6)
    assert tp.allclose(m.weight, w, atol=1e-6)
    m = nn.Linear(5, 4)
    nn.utils.parametrizations.spectral_norm(m)
    for _ in range(20):
        m(tp.ones(1, 5))  # power iterations in training mode
    m.eval()
    sigma = np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0]
    assert sigma == pytest.approx(1.0, rel=1e-3)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


def test_legacy_weight_norm():
    m = nn.Linear(4, 3)
    w = m.weight.detach().clone()
    with pytest.warns(FutureWarning, match="deprecated in favor of"):
        nn.utils.weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert tp.allclose(m(tp.ones(1, 4)), tp.ones(1, 4) @ w.t() + m.bias, atol=1e-6)
    nn.utils.remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"] and tp.allclose(m.weight, w, atol=1e-6)


def test_legacy_spectral_norm():
    m = nn.Linear(5, 4)
    w = m.weight.detach().clone()
    nn.utils.spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    for _ in range(30):
        m(tp.ones(1, 5))
    sigma = np.linalg.svd(w.numpy(), compute_uv=False)[0]
    np.testing.assert_allclose(m.weight.detach().numpy(), w.numpy() / sigma, rtol=1e-3)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(m)
    nn.utils.remove_spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        nn.utils.remove_spectral_norm(m)


def test_legacy_spectral_norm_matches_torch():
    torch = pytest.importorskip("torch")
    tm = torch.nn.Linear(4, 3)
    torch.nn.utils.spectral_norm(tm)
    m = nn.Linear(4, 3)
    nn.utils.spectral_norm(m)
    assert list(m.state_dict()) == list(tm.state_dict())
    m.load_state_dict({k: tp.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.ones((2, 4), dtype=np.float32)
    for mode in ("train", "eval", "train"):
        getattr(tm, mode)()
        getattr(m, mode)()
        np.testing.assert_allclose(
            m(tp.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), rtol=1e-5
        )


def test_parametrizations_match_torch():
    torch = pytest.importorskip("torch")
    tm = torch.nn.Linear(4, 3)
    m = nn.Linear(4, 3)
    m.load_state_dict({k: tp.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    torch.nn.utils.parametrizations.spectral_norm(tm)
    nn.utils.parametrizations.spectral_norm(m)
    assert list(m.state_dict()) == list(tm.state_dict())
    m.load_state_dict({k: tp.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.ones((2, 4), dtype=np.float32)
    for mode in ("train", "eval"):
        getattr(tm, mode)()
        getattr(m, mode)()
        np.testing.assert_allclose(
            m(tp.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), rtol=1e-5
        )


@needs.needs_autograd
def test_stateless_functional_call_is_func_functional_call():
    pytest.importorskip("tensorplug_batched")
    m = nn.Linear(2, 1)
    w = {"weight": tp.ones(1, 2), "bias": tp.zeros(1)}
    with pytest.warns(FutureWarning, match="Please use tensorplug.func.functional_call"):
        out = nn.utils.stateless.functional_call(m, w, (tp.ones(1, 2),))
    assert out.tolist() == [[2.0]]
