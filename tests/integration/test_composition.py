"""The functionality plugins composed, in one process, on CPU and on the example foo backend
(docs/combinations.md, "Composition rules").

For each pair the dispatch path of one call is pinned with ``tp.dispatcher.explain`` (so the
key order is part of the test), and the numbers are checked against an oracle: the eager run, a
Python loop over samples, or a float32 run within bfloat16's tolerance.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

import tensorplug as tp

_NEEDED = ("cpu", "autograd", "autocast", "tracer", "batched")
if not set(_NEEDED) <= tp.plugins.loaded_names():
    pytest.skip(
        "needs the cpu, autograd, autocast, tracer and batched plugins loaded",
        allow_module_level=True,
    )

HAS_FOO = "foo" in tp.plugins.loaded_names()
DEVICES = [
    "cpu",
    pytest.param("foo", marks=pytest.mark.skipif(not HAS_FOO, reason="needs tensorplug-foo")),
]
BACKEND = {"cpu": "CPU", "foo": "Foo"}

# bfloat16 keeps 8 significant bits: a relative error of 2**-8 per rounding
BF16 = {"rtol": 5e-2, "atol": 5e-2}


def steps(text: str) -> list[tuple[int, str, str]]:
    """The dispatch steps of an ``explain`` text: (depth, op, chosen key), in call order."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^( *)\[dispatch\] (?:call|redispatch) (\S+) keyset=.*?-> (\w+)", line)
        if m:
            out.append((len(m[1]) // 2 - 2, m[2], m[3]))
    return out


def path(pattern: list[tuple[int, str, str]], device: str) -> list[tuple[int, str, str]]:
    b = BACKEND[device]
    return [(d, f"aten::{op}", key.format(B=b)) for d, op, key in pattern]


def arr(t: tp.Tensor) -> np.ndarray:
    return np.asarray(t.detach().to("cpu").float().numpy())


def rand(device: str, *shape: int, seed: int) -> tp.Tensor:
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return tp.tensor(data, device=device)


# --- autocast x autograd: bfloat16 training -------------------------------------------------


def _mlp_loss(w1: tp.Tensor, w2: tp.Tensor, x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
    return ((x @ w1).tanh() @ w2 - y).pow(2).mean()


@pytest.mark.parametrize("device", DEVICES)
def test_autocast_autograd_bf16_training(device):
    x, y = rand(device, 16, 4, seed=0), rand(device, 16, 1, seed=1)
    init = [rand(device, 4, 8, seed=2) * 0.5, rand(device, 8, 1, seed=3) * 0.5]

    def train(autocast: bool) -> tuple[list[float], list[tp.Tensor]]:
        ws = [w.clone().requires_grad_() for w in init]
        losses = []
        for _ in range(5):
            if autocast:
                with tp.autocast(device, dtype=tp.bfloat16):
                    loss = _mlp_loss(*ws, x, y)
                assert loss.dtype == tp.float32  # mean runs in float32 (autocast's policy)
            else:
                loss = _mlp_loss(*ws, x, y)
            loss.backward()  # outside the region, as in PyTorch
            losses.append(loss.item())
            with tp.no_grad():
                for w in ws:
                    assert w.grad.dtype == tp.float32  # a float32 leaf gets a float32 gradient
                    w.sub_(0.1 * w.grad)
                    w.grad = None
        return losses, ws

    bf16_losses, bf16_ws = train(autocast=True)
    f32_losses, f32_ws = train(autocast=False)  # the oracle: the same training in float32
    np.testing.assert_allclose(bf16_losses, f32_losses, **BF16)
    assert bf16_losses[-1] < bf16_losses[0]
    for a, b in zip(bf16_ws, f32_ws, strict=True):
        np.testing.assert_allclose(arr(a), arr(b), **BF16)

    w = init[0].clone().requires_grad_()
    with tp.autocast(device, dtype=tp.bfloat16):
        text = tp.dispatcher.explain(tp.ops.aten.mm.default, x, w)
    # Autocast<B> casts first; autograd records the cast of the leaf and the bf16 mm
    assert steps(text) == path(
        [
            (0, "mm.default", "Autocast{B}"),
            (1, "_to_copy.default", "{B}"),  # x does not require grad: straight to the kernel
            (1, "_to_copy.default", "Autograd{B}"),
            (2, "_to_copy.default", "{B}"),
            (1, "mm.default", "Autograd{B}"),
            (2, "mm.default", "{B}"),
        ],
        device,
    )


# --- tracer x autograd: a joint graph --------------------------------------------------------


def _step(x: tp.Tensor, w: tp.Tensor) -> tuple[tp.Tensor, tp.Tensor]:
    loss = (x @ w).tanh().pow(2).sum()
    (gw,) = tp.autograd.grad(loss, [w])
    return loss, gw


@pytest.mark.parametrize("device", DEVICES)
def test_tracer_autograd_joint_graph(device):
    x, w = rand(device, 4, 3, seed=0), rand(device, 3, 2, seed=1).requires_grad_()
    graph = tp.tracer.trace(_step, x, w)
    ops = [n.op.name for n in graph.nodes]
    # the backward's ops are in the graph: tanh's derivative and the mm for w's gradient
    assert "aten::tanh_backward.default" in ops or ops.count("aten::mul.Tensor") >= 2
    assert sum(name in ("aten::mm.default", "aten::matmul.default") for name in ops) >= 2

    x2, w2 = rand(device, 4, 3, seed=2), rand(device, 3, 2, seed=3).requires_grad_()
    loss, gw = graph(x2, w2)
    eager_loss, eager_gw = _step(x2, w2)  # the oracle: the eager run
    np.testing.assert_allclose(arr(loss), arr(eager_loss), rtol=1e-6)
    np.testing.assert_allclose(arr(gw), arr(eager_gw), rtol=1e-6, atol=1e-6)

    # and a replayed forward can be differentiated
    fwd = tp.tracer.trace(lambda x, w: (x @ w).tanh().sum(), x, w)
    w3 = rand(device, 3, 2, seed=4).requires_grad_()
    fwd(x2, w3).backward()
    w4 = w3.detach().clone().requires_grad_()
    (x2 @ w4).tanh().sum().backward()
    np.testing.assert_allclose(arr(w3.grad), arr(w4.grad), rtol=1e-6, atol=1e-6)

    seen: list[str] = []

    def explained(x: tp.Tensor, w: tp.Tensor) -> tp.Tensor:
        seen.append(tp.dispatcher.explain(tp.ops.aten.mm.default, x, w))
        return x

    tp.tracer.trace(explained, x, w)
    # Tracer records the call once, then Autograd<B> records it for backward
    assert steps(seen[0]) == path(
        [(0, "mm.default", "Tracer"), (1, "mm.default", "Autograd{B}"), (2, "mm.default", "{B}")],
        device,
    )


# --- batched x autograd: per-sample gradients, backward of a vmapped function ---------------


def _sample_loss(w: tp.Tensor, x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
    return ((x @ w).tanh() - y).pow(2).sum()


@pytest.mark.parametrize("device", DEVICES)
def test_batched_autograd(device):
    w = rand(device, 3, 2, seed=0)
    xs, ys = rand(device, 5, 3, seed=1), rand(device, 5, 2, seed=2)

    per_sample = tp.vmap(tp.func.grad(_sample_loss), in_dims=(None, 0, 0))(w, xs, ys)
    assert tuple(per_sample.shape) == (5, 3, 2)
    for i in range(5):  # the oracle: loss.backward() per sample, in a Python loop
        wi = w.clone().requires_grad_()
        _sample_loss(wi, xs[i], ys[i]).backward()
        np.testing.assert_allclose(arr(per_sample[i]), arr(wi.grad), rtol=1e-5, atol=1e-6)

    # backward of a vmapped function: the shared weight's gradient is the sum over samples
    wv = w.clone().requires_grad_()
    xv = xs.clone().requires_grad_()
    tp.vmap(_sample_loss, in_dims=(None, 0, 0))(wv, xv, ys).sum().backward()
    wl = w.clone().requires_grad_()
    xl = [xs[i].clone().requires_grad_() for i in range(5)]
    sum(_sample_loss(wl, xl[i], ys[i]) for i in range(5)).backward()  # type: ignore[union-attr]
    np.testing.assert_allclose(arr(wv.grad), arr(wl.grad), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        arr(xv.grad), np.stack([arr(x.grad) for x in xl]), rtol=1e-5, atol=1e-6
    )

    seen: list[str] = []

    def explained(x: tp.Tensor) -> tp.Tensor:
        seen.append(tp.dispatcher.explain(tp.ops.aten.mul.Tensor, x, wv[:, 0]))
        return x

    tp.vmap(explained)(xs)
    # Batched runs its rule on the whole batch; the rule's call meets Autograd<B> below
    assert steps(seen[0]) == path(
        [(0, "mul.Tensor", "Batched"), (1, "mul.Tensor", "Autograd{B}"), (2, "mul.Tensor", "{B}")],
        device,
    )


# --- batched x tracer: vmap of a replayed graph, tracing a vmapped function -----------------


def _f(x: tp.Tensor) -> tp.Tensor:
    return (x.sin() * 2.0 + x.pow(2)).sum(0)


@pytest.mark.parametrize("device", DEVICES)
def test_batched_tracer(device):
    xs = rand(device, 6, 4, 3, seed=0)
    loop = np.stack([arr(_f(xs[i])) for i in range(6)])  # the oracle: a Python loop

    graph = tp.tracer.trace(_f, xs[0])  # traced for one sample
    np.testing.assert_allclose(arr(tp.vmap(graph)(xs)), loop, rtol=1e-6)

    batched = tp.tracer.trace(tp.vmap(_f), xs)  # the batched computation the rules run
    assert [tuple(n.outputs[0].meta.shape) for n in batched.nodes][-1] == (6, 3)
    xs2 = rand(device, 6, 4, 3, seed=1)
    np.testing.assert_allclose(arr(batched(xs2)), arr(tp.vmap(_f)(xs2)), rtol=1e-6)

    seen: list[str] = []

    def explained(x: tp.Tensor) -> tp.Tensor:
        seen.append(tp.dispatcher.explain(tp.ops.aten.sin.default, x))
        return x

    tp.tracer.trace(tp.vmap(explained), xs)
    # Batched is above Tracer: the tracer records the rule's call on the whole batch
    assert steps(seen[0]) == path(
        [(0, "sin.default", "Batched"), (1, "sin.default", "Tracer"), (2, "sin.default", "{B}")],
        device,
    )


# --- autocast x tracer: the casts are recorded -----------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_autocast_tracer_records_the_casts(device):
    x, w = rand(device, 4, 3, seed=0), rand(device, 3, 2, seed=1)

    def f(x: tp.Tensor, w: tp.Tensor) -> tp.Tensor:
        with tp.autocast(device, dtype=tp.bfloat16):
            return tp.mm(x, w).relu()

    graph = tp.tracer.trace(f, x, w)
    casts = [n for n in graph.nodes if n.op.name == "aten::_to_copy.default"]
    assert [n.constants.get("dtype") for n in casts] == [tp.bfloat16, tp.bfloat16]
    [mm] = [n for n in graph.nodes if n.op.name == "aten::mm.default"]
    assert mm.outputs[0].meta.dtype == tp.bfloat16

    x2, w2 = rand(device, 4, 3, seed=2), rand(device, 3, 2, seed=3)
    replayed = graph(x2, w2)  # outside any region: the recorded casts do the work
    assert not tp.is_autocast_enabled(device)
    eager = f(x2, w2)
    assert replayed.dtype == eager.dtype == tp.bfloat16
    np.testing.assert_array_equal(arr(replayed), arr(eager))  # the same ops: the same bits
    np.testing.assert_allclose(arr(replayed), np.maximum(arr(x2) @ arr(w2), 0), **BF16)

    seen: list[str] = []

    def explained(x: tp.Tensor, w: tp.Tensor) -> tp.Tensor:
        with tp.autocast(device, dtype=tp.bfloat16):
            seen.append(tp.dispatcher.explain(tp.ops.aten.mm.default, x, w))
        return x

    tp.tracer.trace(explained, x, w)
    # Autocast<B> is above Tracer: its casts are calls the tracer records
    assert steps(seen[0]) == path(
        [
            (0, "mm.default", "Autocast{B}"),
            (1, "_to_copy.default", "Tracer"),
            (2, "_to_copy.default", "{B}"),
            (1, "_to_copy.default", "Tracer"),
            (2, "_to_copy.default", "{B}"),
            (1, "mm.default", "Tracer"),
            (2, "mm.default", "{B}"),
        ],
        device,
    )


# --- all of them together ---------------------------------------------------------------------


def _bf16_sample_loss(device: str) -> Callable[..., tp.Tensor]:
    def loss(w: tp.Tensor, x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
        with tp.autocast(device, dtype=tp.bfloat16):
            h = tp.mm(x.unsqueeze(0), w).tanh()
        return (h.float() - y).pow(2).sum()

    return loss


@pytest.mark.parametrize("device", DEVICES)
def test_all_plugins_together(device):
    """Per-sample gradients (batched x autograd) of a bfloat16 loss (autocast), traced and
    replayed (tracer), on ``device``: the foo backend for the example third-party case."""
    w = rand(device, 3, 2, seed=0)
    xs, ys = rand(device, 5, 3, seed=1), rand(device, 5, 1, 2, seed=2)
    loss = _bf16_sample_loss(device)

    def per_sample_grads(w: tp.Tensor, xs: tp.Tensor, ys: tp.Tensor) -> tp.Tensor:
        return tp.vmap(tp.func.grad(loss), in_dims=(None, 0, 0))(w, xs, ys)

    graph = tp.tracer.trace(per_sample_grads, w, xs, ys)
    assert any(n.op.name == "aten::_to_copy.default" for n in graph.nodes)  # the casts
    w2 = rand(device, 3, 2, seed=3)
    replayed = graph(w2, xs, ys)
    eager = per_sample_grads(w2, xs, ys)
    assert tuple(replayed.shape) == (5, 3, 2) and replayed.dtype == tp.float32
    np.testing.assert_allclose(arr(replayed), arr(eager), rtol=1e-6, atol=1e-6)
    for i in range(5):  # the oracle: float32 loss.backward() per sample, within bf16 tolerance
        wi = w2.clone().requires_grad_()
        ((tp.mm(xs[i].unsqueeze(0), wi).tanh() - ys[i]).pow(2).sum()).backward()
        np.testing.assert_allclose(arr(replayed[i]), arr(wi.grad), **BF16)

    seen: list[str] = []
    wg = w.clone().requires_grad_()

    def explained(x: tp.Tensor) -> tp.Tensor:
        with tp.autocast(device, dtype=tp.bfloat16):
            seen.append(tp.dispatcher.explain(tp.ops.aten.mm.default, x.unsqueeze(0), wg))
        return x

    tp.tracer.trace(tp.vmap(explained), xs)
    # every key in its place: Batched, Autocast<B>, Tracer, Autograd<B>, the backend
    # every key in its place: Batched (whose rule for mm calls matmul on the whole batch),
    # Autocast<B> (which casts), Tracer, Autograd<B>, the backend
    got = steps(seen[0])
    assert [s for s in got if s[1] in ("aten::mm.default", "aten::matmul.default")] == path(
        [
            (0, "mm.default", "Batched"),
            (1, "matmul.default", "Autocast{B}"),
            (2, "matmul.default", "Tracer"),
            (3, "matmul.default", "Autograd{B}"),
            (4, "matmul.default", "{B}"),
        ],
        device,
    )
    casts = [s for s in got if s[1] == "aten::_to_copy.default"]
    assert casts[0] == path([(2, "_to_copy.default", "Tracer")], device)[0]
    if HAS_FOO and device == "foo":  # the third-party key above them all sees every call
        with tp.foo_counting() as counts:
            graph(w2, xs, ys)
        assert {n.op.name for n in graph.nodes} <= set(counts)
        assert counts["aten::_to_copy.default"] >= 2
