"""tp.optim's API beyond the update rules: step and state-dict hooks, the multi-tensor
operators' checks, LBFGS and SparseAdam's contracts, the schedulers' warnings and state dicts,
and swa_utils."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import optim
from tensorplug.optim import lr_scheduler, swa_utils


def params():
    ps = [tp.tensor([1.0, 2.0]), tp.tensor([[0.5, -1.0]])]
    for p in ps:
        p.grad = tp.ones_like(p)
    return ps


def test_step_hooks_run_around_the_step_and_can_be_removed():
    calls = []
    opt = optim.SGD(params(), lr=0.1)
    pre = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", a, k)))
    post = opt.register_step_post_hook(lambda o, a, k: calls.append(("post", a, k)))
    glob = optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: calls.append("g"))
    try:
        opt.step()
    finally:
        glob.remove()
    assert calls == ["g", ("pre", (), {}), ("post", (), {})]
    pre.remove()
    post.remove()
    opt.step()
    assert len(calls) == 3


def test_a_pre_hook_may_replace_the_arguments_and_must_return_a_pair():
    opt = optim.SGD(params(), lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: ((), {"closure": lambda: 7.0}))
    assert opt.step() == 7.0
    bad = optim.SGD(params(), lr=0.1)
    bad.register_step_pre_hook(lambda o, a, k: 3)
    with pytest.raises(
        RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\)"
    ):
        bad.step()


def test_hooks_wrap_a_subclass_step_once():
    calls = []

    class Halve(optim.Optimizer):
        def __init__(self, ps):
            super().__init__(ps, {"lr": 0.5})

        def step(self, closure=None):
            calls.append("step")
            return super().step(closure)

        def _update(self, group):
            for p in group["params"]:
                p.mul_(group["lr"])

    ps = params()
    opt = Halve(ps)
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    opt.step()
    assert calls == ["step", "post"] and ps[0].tolist() == [0.5, 1.0]


def test_state_dict_hooks():
    opt = optim.Adam(params(), lr=0.1)
    seen = []
    opt.register_state_dict_pre_hook(lambda o: seen.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    opt.register_load_state_dict_pre_hook(
        lambda o, sd: {k: v for k, v in sd.items() if k != "extra"}
    )
    opt.register_load_state_dict_post_hook(lambda o: seen.append("loaded"))
    sd = opt.state_dict()
    assert sd["extra"] == 1 and seen == ["pre"]
    opt.load_state_dict(sd)
    assert seen == ["pre", "loaded"]


def test_foreach_and_the_per_parameter_loop_agree():
    for cls, kw in ((optim.Adam, {"amsgrad": True, "weight_decay": 0.1}), (optim.AdamW, {}),
                    (optim.SGD, {"momentum": 0.9, "nesterov": True}),
                    (optim.Adagrad, {"lr_decay": 0.1, "weight_decay": 0.1})):  # fmt: skip
        runs = []
        for foreach in (True, False):
            rng = np.random.default_rng(0)
            ps = [tp.tensor(rng.normal(size=(3, 2))) for _ in range(2)]
            opt = cls(ps, lr=0.01, foreach=foreach, **kw)
            for _ in range(5):
                for p in ps:
                    p.grad = tp.tensor(rng.normal(size=(3, 2)))
                opt.step()
            runs.append([p.numpy() for p in ps])
        for a, b in zip(*runs, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-13)


def test_a_parameter_whose_first_gradient_comes_late_gets_sgds_first_step():
    a, b = tp.tensor([1.0]), tp.tensor([1.0])
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9)
    a.grad = tp.tensor([1.0])
    opt.step()
    b.grad = tp.tensor([1.0])
    opt.step()
    assert opt.state[b]["momentum_buffer"].tolist() == [1.0]
    np.testing.assert_allclose(a.tolist(), [1.0 - 0.1 - 0.1 * 1.9])
    np.testing.assert_allclose(b.tolist(), [0.9])


def test_fused_operators_check_their_lists():
    a = tp.ops.aten
    p = [tp.zeros(2)]
    with pytest.raises(
        RuntimeError, match="Tensor lists must have the same number of tensors, got 1 and 0"
    ):
        a._fused_sgd_(p, [], [], weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0,
                      nesterov=False, maximize=False, is_first_step=False)  # fmt: skip
    with pytest.raises(RuntimeError, match="the parameters must be floating point, got 'Long'"):
        a._fused_sgd_([tp.zeros(2, dtype=tp.int64)], [tp.zeros(2, dtype=tp.int64)], [],
                      weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0, nesterov=False,
                      maximize=False, is_first_step=False)  # fmt: skip
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        a._foreach_add_.Scalar([tp.zeros(2, dtype=tp.int64)], 0.5)


def test_found_inf_skips_and_grad_scale_divides():
    a = tp.ops.aten
    p, g = tp.ones(2), tp.full([2], 4.0)
    kw = {"weight_decay": 0.0, "momentum": 0.0, "lr": 0.5, "dampening": 0.0, "nesterov": False,
          "maximize": False, "is_first_step": False}  # fmt: skip
    a._fused_sgd_([p], [g], [], found_inf=tp.ones(1), **kw)
    assert p.tolist() == [1.0, 1.0]
    a._fused_sgd_([p], [g], [], grad_scale=tp.full([1], 4.0), **kw)
    assert p.tolist() == [0.5, 0.5]


def test_lbfgs_needs_a_closure_and_one_group():
    p = tp.tensor([1.0])
    with pytest.raises(RuntimeError, match="LBFGS.step\\(\\) needs a closure"):
        optim.LBFGS([p]).step(None)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [p]}, {"params": [tp.tensor([2.0])]}])


def test_sparse_adam_refuses_dense_gradients_as_pytorch_does():
    opt = optim.SparseAdam(params())
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        opt.step()
    with pytest.raises(ValueError, match="Invalid learning rate: 0"):
        optim.SparseAdam(params(), lr=0)


def test_scheduler_warnings():
    opt = optim.SGD(params(), lr=0.1)
    sched = lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before"):
        sched.step()
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
        sched.step(4)
    assert sched.get_last_lr() == [pytest.approx(0.001)]


def test_scheduler_state_dict_round_trip_and_tensor_lr():
    opt = optim.SGD(params(), lr=tp.tensor(0.1, dtype=tp.float64))
    cell = opt.param_groups[0]["lr"]
    sched = lr_scheduler.LambdaLR(opt, lambda e: 0.5**e)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched.step()
        sched.step()
    assert opt.param_groups[0]["lr"] is cell and cell.item() == pytest.approx(0.025)
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["lr_lambdas"] == [None] and sd["last_epoch"] == 2
    other = lr_scheduler.LambdaLR(optim.SGD(params(), lr=0.1), lambda e: 0.5**e)
    other.load_state_dict(sd)
    assert other.last_epoch == 2


def test_averaged_model_averages_and_ema():
    model = tp.nn.Linear(2, 1)
    swa = swa_utils.AveragedModel(model)
    ema = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.5))
    for v in (1.0, 2.0, 6.0):  # SWA: their mean, 3; EMA(0.5): 1, then 1.5, then 3.75
        with tp.no_grad():
            model.weight.fill_(v)
        swa.update_parameters(model)
        ema.update_parameters(model)
    np.testing.assert_allclose(swa.module.weight.detach().numpy(), np.full((1, 2), 3.0))
    np.testing.assert_allclose(ema.module.weight.detach().numpy(), np.full((1, 2), 3.75))
    assert swa.n_averaged.item() == 3
    out = swa(tp.ones(1, 2))
    assert out.shape == (1, 1)
    with pytest.raises(ValueError, match="Invalid decay value 2"):
        swa_utils.get_ema_multi_avg_fn(2)


def test_update_bn_resets_and_recomputes_running_statistics():
    class FakeBN(tp.nn.Module):
        def __init__(self):
            super().__init__()
            self.momentum = 0.1
            self.batches = []
            self.resets = 0

        def reset_running_stats(self):
            self.resets += 1

        def forward(self, x):
            self.batches.append((x.shape, self.momentum, self.training))
            return x

    model = tp.nn.Sequential(FakeBN())
    model.eval()
    swa_utils.update_bn([(tp.ones(2, 3), 0), (tp.ones(4, 3), 1)], model)
    bn = model[0]
    assert bn.resets == 1 and bn.batches == [((2, 3), None, True), ((4, 3), None, True)]
    assert bn.momentum == 0.1 and not model.training


@pytest.mark.parametrize("decoupled", [True, False])
@pytest.mark.parametrize("maximize", [False, True])
def test_fused_adam_small_parameters_together_are_bit_for_bit_one_at_a_time(decoupled, maximize):
    # Note [Small parameters together] (array_backend/_nn/_optim.py): a list of small
    # parameters (some sharing a step count, one at another, one large, one float64, one
    # transposed) against the same update one parameter a call
    rng = np.random.default_rng(7)
    shapes = [(128,), (3, 5), (80, 80), (7,), (2, 3), (4, 6)]
    dtypes = [tp.float32, tp.float32, tp.float32, tp.float32, tp.float64, tp.float32]
    steps = [3.0, 3.0, 3.0, 5.0, 3.0, 3.0]

    def state():
        out = []
        for shape, d, s in zip(shapes, dtypes, steps, strict=True):
            p, g, m, v = (tp.tensor(rng.normal(size=shape)).to(d) for _ in range(4))
            out.append((p, g, m, v.abs(), tp.tensor(s)))
        p, g, m, v, s = out[5]
        out[5] = (p.t().contiguous().t(), g, m, v, s)  # a column-major parameter
        return out

    fused = tp.ops.aten._fused_adamw_ if decoupled else tp.ops.aten._fused_adam_
    kw = {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "weight_decay": 0.1, "eps": 1e-8,
          "amsgrad": False, "maximize": maximize}  # fmt: skip
    together = state()
    alone = [tuple(t.clone() for t in row) for row in together]
    before = [row[0].numpy().copy() for row in together]
    fused(*([row[k] for row in together] for k in (0, 1, 2, 3)), [], [r[4] for r in together],
          **kw)  # fmt: skip
    for p, g, m, v, s in alone:
        fused([p], [g], [m], [v], [], [s], **kw)
    for a, b, p0 in zip(together, alone, before, strict=True):
        for k in (0, 2, 3):
            assert a[k].dtype == b[k].dtype
            np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())
        assert not np.array_equal(a[0].numpy(), p0)  # updated
