"""Pooling, normalization and the added activations against PyTorch: outputs, indices, input
gradients, BatchNorm2d's running statistics and state_dict through training and evaluation,
against values frozen from torch 2.13 (tools/gen_pool_norm_fixtures.py; always runs) and
against torch itself where it is importable (messages, reprs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F
from tensorplug import nn
from tests.needs import needs_autograd
from tests.nn import pool_norm_cases as cases

FROZEN = np.load(Path(__file__).parent / "data" / "pool_norm_torch.npz")


def a(t: tp.Tensor) -> np.ndarray:
    return np.asarray(tp.detach(t).numpy())


@needs_autograd
@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_matches_frozen_torch_values(name: str) -> None:
    shape, fn = cases.CASES[name]
    x = tp.tensor(cases.data(shape, sorted(cases.CASES).index(name)), requires_grad=True)
    out = fn(F, x)
    outs = out if isinstance(out, tuple) else (out,)
    (outs[0] * tp.tensor(cases.upstream(tuple(outs[0].shape)))).sum().backward()
    for i, o in enumerate(outs):
        want = FROZEN[f"{name}/out{i}"]
        if want.dtype.kind == "i":  # indices: exactly
            np.testing.assert_array_equal(a(o), want)
        else:
            np.testing.assert_allclose(a(o), want, rtol=1e-10, atol=1e-12)
    # 1e-7: torch's elu_backward rounds celu's 1/alpha (a Scalar) to float there
    np.testing.assert_allclose(a(x.grad), FROZEN[f"{name}/grad"], rtol=1e-7, atol=1e-12)


def _bn(momentum: float | None) -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(3, momentum=momentum).double()
    with tp.no_grad():
        bn.weight.copy_(tp.tensor([1.0, 0.5, -1.5], dtype=tp.float64))
        bn.bias.copy_(tp.tensor([0.0, 0.2, -0.1], dtype=tp.float64))
    return bn


@needs_autograd
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm2d_training_running_stats_and_eval_match_torch(momentum: float | None) -> None:
    tag = f"bn_m{momentum}"
    bn = _bn(momentum)
    for step in range(cases.BN_STEPS):
        x = tp.tensor(cases.data(cases.BN_SHAPE, 100 + step), requires_grad=True)
        y = bn(x)
        (y * tp.tensor(cases.upstream(tuple(y.shape)))).sum().backward()
        np.testing.assert_allclose(a(y), FROZEN[f"{tag}/train{step}"], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(a(x.grad), FROZEN[f"{tag}/grad{step}"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a(bn.weight.grad), FROZEN[f"{tag}/weight_grad"], rtol=1e-10)
    np.testing.assert_allclose(a(bn.bias.grad), FROZEN[f"{tag}/bias_grad"], rtol=1e-10)
    state = bn.state_dict()
    assert list(state) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    for k, v in state.items():
        want = FROZEN[f"{tag}/state/{k}"]
        assert a(v).dtype == want.dtype, k
        np.testing.assert_allclose(a(v), want, rtol=1e-10, err_msg=k)
    bn.eval()
    x = tp.tensor(FROZEN[f"{tag}/eval_input"])
    np.testing.assert_allclose(a(bn(x)), FROZEN[f"{tag}/eval"], rtol=1e-10)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_a_state_dict_saved_from_torch_gives_torchs_output(momentum: float | None) -> None:
    tag = f"bn_m{momentum}"
    state = {
        k.rsplit("/", 1)[1]: tp.tensor(FROZEN[k])
        for k in FROZEN.files
        if k.startswith(f"{tag}/state/")
    }
    bn = nn.BatchNorm2d(3, momentum=momentum).double()
    bn.load_state_dict(state)
    assert int(bn.num_batches_tracked.item()) == cases.BN_STEPS
    x = tp.tensor(FROZEN[f"{tag}/eval_input"])
    bn.eval()
    np.testing.assert_allclose(a(bn(x)), FROZEN[f"{tag}/eval"], rtol=1e-10)
    bn.train()
    np.testing.assert_allclose(a(bn(x)), FROZEN[f"{tag}/train_after_load"], rtol=1e-10)


def test_momentum_none_is_a_cumulative_average() -> None:
    bn = nn.BatchNorm1d(2, momentum=None).double()
    xs = [tp.tensor(cases.data((5, 2), i)) for i in range(3)]
    for x in xs:
        bn(x)
    means = np.mean([a(x).mean(axis=0) for x in xs], axis=0)
    np.testing.assert_allclose(a(bn.running_mean), means, rtol=1e-12)
    assert int(bn.num_batches_tracked.item()) == 3


def test_sync_batch_norm_needs_a_distributed_backend_in_training() -> None:
    sbn = nn.SyncBatchNorm(3)
    x = tp.randn(4, 3, 2, 2)
    with pytest.raises(RuntimeError, match="SyncBatchNorm needs a distributed backend"):
        sbn(x)
    sbn.eval()
    assert sbn(x).shape == (4, 3, 2, 2)  # the running statistics: nothing to synchronize
    assert list(sbn.state_dict()) == list(nn.BatchNorm2d(3).state_dict())


def test_vmap_of_batch_norm_with_unbatched_running_stats_is_refused_as_functorch() -> None:
    bn = nn.BatchNorm1d(3)
    with pytest.raises(RuntimeError, match="Batch norm got a batched tensor as input while the"):
        tp.vmap(bn)(tp.randn(2, 4, 3))
    # evaluation only reads them: allowed, the same as a loop
    bn.eval()
    x = tp.randn(2, 4, 3)
    np.testing.assert_allclose(a(tp.vmap(bn)(x)), np.stack([a(bn(x[i])) for i in range(2)]))


# --- against torch itself -----------------------------------------------------------------------


def _torch() -> Any:
    return pytest.importorskip("torch")


MODULES = [
    "MaxPool2d(3, 2, 1, ceil_mode=True)", "MaxPool1d(2)", "MaxPool3d((1, 2, 2))",
    "AvgPool1d(3)", "AvgPool2d(2, padding=1, divisor_override=3)", "AvgPool3d(2)",
    "MaxUnpool1d(2)", "MaxUnpool2d(3, 1)", "MaxUnpool3d(2)", "LPPool1d(2, 3)", "LPPool2d(1.5, 2)",
    "AdaptiveAvgPool1d(3)", "AdaptiveAvgPool2d((2, None))", "AdaptiveMaxPool2d(3, True)",
    "AdaptiveMaxPool3d(1)", "BatchNorm1d(4)", "BatchNorm2d(3, momentum=None, affine=False)",
    "BatchNorm3d(2, track_running_stats=False, bias=False)", "InstanceNorm1d(3)",
    "InstanceNorm2d(3, affine=True, track_running_stats=True)", "GroupNorm(2, 4)",
    "GroupNorm(1, 3, affine=False)", "LocalResponseNorm(3)", "RMSNorm([2, 3], eps=1e-3)",
    "Dropout1d()", "Dropout2d(0.2)", "Dropout3d(inplace=True)", "AlphaDropout(0.1)",
    "FeatureAlphaDropout()", "PReLU(3)", "Threshold(0.1, 20)", "RReLU()", "Hardsigmoid()",
    "Hardswish()", "Mish()", "CELU(0.5)", "SELU()", "GLU()", "Hardshrink()", "Softshrink(0.3)",
    "Softsign()", "Tanhshrink()", "Softmax2d()", "ChannelShuffle(2)", "SyncBatchNorm(3)",
]  # fmt: skip


@pytest.mark.parametrize("spec", MODULES)
def test_module_reprs_and_state_dict_keys_match_torch(spec: str) -> None:
    env = {"nn": nn, "torch": _torch()}
    ours, theirs = eval(f"nn.{spec}", env), eval(f"torch.nn.{spec}", env)  # noqa: S307
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_every_activation_normalization_pooling_and_dropout_module_of_torch_exists() -> None:
    torch = _torch()
    import torch.nn.modules.activation as act
    import torch.nn.modules.batchnorm as bn
    import torch.nn.modules.channelshuffle as cs
    import torch.nn.modules.dropout as do
    import torch.nn.modules.flatten as fl
    import torch.nn.modules.instancenorm as inorm
    import torch.nn.modules.normalization as norm
    import torch.nn.modules.pooling as pool

    # left out: CrossMapLRN2d (legacy Lua torch)
    skip = {"CrossMapLRN2d"}
    names = {n for m in (act, bn, cs, do, fl, inorm, norm, pool) for n in m.__all__} - skip
    assert torch is not None
    assert sorted(n for n in names if not hasattr(nn, n)) == []


BAD_CALLS = [
    "F.max_pool2d(x, 2, 0)", "F.max_pool2d(x, 2, 1, 2)", "F.max_pool2d(x, 9)",
    "F.max_pool2d(x[0, 0], 2)", "F.max_pool2d(x, (2, 2, 2))", "F.avg_pool2d(x, 2, 2, 2)",
    "F.avg_pool2d(x, 2, divisor_override=0)", "F.adaptive_avg_pool2d(x[0, 0], 2)",
    "F.adaptive_max_pool2d(x[0, 0], 2)", "F.batch_norm(x, None, None, training=False)",
    "F.batch_norm(x[:1, :, :1, :1], None, None, training=True)",
    "F.batch_norm(x, None, None, w5, training=True)", "F.group_norm(x, 3)",
    "F.group_norm(x, 2, w5)", "F.instance_norm(x[:, :, :1, :1])",
    "F.local_response_norm(x[0, 0], 2)", "F.rms_norm(x, [4])", "F.prelu(x, w5)",
    "F.glu(x, 2)", "F.channel_shuffle(x, 3)", "F.max_unpool2d(x, x, 2)",
    "F.dropout1d(x, 0.5)", "F.alpha_dropout(x, 1.5)",
]  # fmt: skip


@pytest.mark.parametrize("call", BAD_CALLS)
def test_errors_match_torchs_type_and_message(call: str) -> None:
    torch = _torch()

    def run(lib: Any, functional: Any) -> BaseException:
        env = {"F": functional, "x": lib.ones(2, 4, 3, 3), "w5": lib.ones(5)}
        with pytest.raises(Exception) as info:  # noqa: PT011 - compared below
            eval(call, env)  # noqa: S307 - fixed calls
        return info.value

    ours, theirs = run(tp, F), run(torch, torch.nn.functional)
    assert type(ours) is type(theirs) or isinstance(ours, type(theirs)), (ours, theirs)
    # our messages name the op first ("aten::max_pool2d_with_indices: ..."); torch's text follows
    assert str(theirs).splitlines()[0].strip() in str(ours), (str(ours), str(theirs))


@pytest.mark.filterwarnings("ignore:Lazy modules are a new feature")
@pytest.mark.parametrize(
    ("spec", "shape"),
    [("LazyBatchNorm2d()", (4, 3, 2, 2)), ("LazyBatchNorm1d(momentum=None)", (5, 2)),
     ("LazyInstanceNorm1d(affine=True, track_running_stats=True)", (3, 4, 5))],
)  # fmt: skip
def test_lazy_norms_become_their_module_as_torchs_do(spec: str, shape: tuple[int, ...]) -> None:
    torch = _torch()
    env = {"nn": nn, "torch": torch}
    ours, theirs = eval(f"nn.{spec}", env), eval(f"torch.nn.{spec}", env)  # noqa: S307
    assert repr(ours) == repr(theirs)
    xn = cases.data(shape, 7).astype(np.float32)  # the modules' default dtype
    y = ours(tp.tensor(xn))
    want = theirs(torch.tensor(xn)).detach().numpy()
    assert type(ours).__name__ == type(theirs).__name__ and repr(ours) == repr(theirs)
    np.testing.assert_allclose(a(y), want, rtol=1e-5, atol=1e-6)
    state = ours.state_dict()
    assert list(state) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(a(state[k]), v.numpy(), rtol=1e-5, atol=1e-7, err_msg=k)
