"""``tensorplug demo``: an end-to-end run of whatever plugins are installed, one section per
plugin (internal; the command lives in ``cli.py``)."""

from __future__ import annotations

import argparse
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

import tensorplug

from . import _manifest
from . import dispatcher as _dispatcher
from . import keys as _keys
from . import plugins as _plugins
from .errors import DispatchError, MissingPluginError

# the names plugins add are installed at import time: the type checker sees them as Any
tp: Any = tensorplug


@dataclass(frozen=True)
class Section:
    """One part of the demo, shown when ``plugin`` is loaded (always, for ``plugin=None``)."""

    title: str
    plugin: str | None
    distribution: str
    run: Callable[[TextIO], None]


def _demo_core(out: TextIO) -> None:
    loaded = sorted(_plugins.loaded_names())
    print(
        f"tensorplug {tp.__version__}: {len(_dispatcher.all_ops())} operators defined, "
        f"{len(_keys.priority_order())} runtime dispatch keys",
        file=out,
    )
    print(f"loaded plugins: {', '.join(loaded) or 'none'}", file=out)


def _demo_cpu(out: TextIO) -> None:
    a = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = tp.ones([2, 2])
    print(f"a = {a!r}", file=out)
    print(f"a + 1 = {a + 1!r}", file=out)
    print(f"a @ b = {a @ b!r}", file=out)
    print(f"(a * a).sum() = {(a * a).sum().item()}", file=out)
    print("dispatch table of aten::add.Tensor (keys with an entry):", file=out)
    for key, source in _dispatcher.dispatch_table("aten::add.Tensor").items():
        if source != "missing":
            print(f"  {key:<20} {source}", file=out)


def spiral_problem() -> tuple[Any, Any, Any]:
    """The demo's data and model, seeded: ``(x, y, model)``, 300 points of a 3-class spiral and
    a small MLP from tp.nn (tests/combos/test_matrix.py's workload uses them too)."""
    import math

    nn = tp.nn
    tp.manual_seed(0)
    n, classes = 100, 3
    radius = tp.linspace(0.1, 1.0, n)
    xs, ys = [], []
    for c in range(classes):
        start = 2 * math.pi * c / classes
        theta = tp.linspace(start, start + 1.5 * math.pi, n) + 0.15 * tp.randn([n])
        xs.append(tp.stack([radius * theta.cos(), radius * theta.sin()], 1))
        ys.append(tp.full([n], c, dtype=tp.int64))
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, classes))
    return tp.cat(xs), tp.cat(ys), model


def _spiral_training(out: TextIO | None, autocast_dtype: Any = None) -> tuple[float, float]:
    """Train the demo classifier (a small MLP from tp.nn, Adam, on a 3-class spiral) and return
    (accuracy, seconds); with ``autocast_dtype``, forward passes run in a CPU autocast region.
    Prints the model and the loss every 75 steps to ``out`` when given."""
    import contextlib
    import time

    nn = tp.nn
    x, y, model = spiral_problem()
    if out is not None:
        print(f"model: {model!r}", file=out)
    loss_fn = nn.CrossEntropyLoss()
    opt = tp.optim.Adam(model.parameters(), lr=0.02)

    def region() -> Any:
        if autocast_dtype is None:
            return contextlib.nullcontext()
        return tp.autocast("cpu", dtype=autocast_dtype)

    began = time.perf_counter()
    for step in range(_SPIRAL_STEPS + 1):
        opt.zero_grad()
        with region():
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if out is not None and step % 75 == 0:
            print(f"step {step:3d}: loss {loss.item():.4f}", file=out)
    elapsed = time.perf_counter() - began
    with tp.no_grad(), region():
        acc = (model(x).argmax(1) == y).to(tp.float32).mean().item()
    return acc, elapsed


_SPIRAL_STEPS = 300
_float32_run: list[tuple[float, float]] = []  # the autograd section's result, for autocast's


def _demo_autograd(out: TextIO) -> None:
    acc, elapsed = _spiral_training(out)
    _float32_run[:] = [(acc, elapsed)]
    print(
        f"trained on a 3-class spiral (300 points) with Adam, {_SPIRAL_STEPS} steps in "
        f"{elapsed:.2f} s: accuracy {acc:.2f}",
        file=out,
    )


def _demo_autocast(out: TextIO) -> None:
    a = tp.randn([4, 4])
    with tp.autocast("cpu", dtype=tp.bfloat16):
        c = a @ a
        s = c.sum()
        p = c.softmax(1)
        loss = tp.nn.functional.mse_loss(c, a)
    print(
        f"inside autocast('cpu', bfloat16): matmul -> {c.dtype}, sum -> {s.dtype}, "
        f"softmax -> {p.dtype}, mse_loss -> {loss.dtype}",
        file=out,
    )
    if "autograd" not in _plugins.loaded_names():
        print("(with tensorplug-autograd the demo classifier also trains here)", file=out)
        return
    print("the demo classifier, trained in float32 and under bfloat16 autocast:", file=out)
    runs = [
        ("float32", _float32_run[0] if _float32_run else _spiral_training(None)),
        ("bfloat16 autocast", _spiral_training(None, tp.bfloat16)),
    ]
    for name, (acc, elapsed) in runs:
        print(
            f"  {name:18s} accuracy {acc:.2f} ({_SPIRAL_STEPS} steps in {elapsed:.2f} s)", file=out
        )
    print(
        "  (numpy has no bfloat16 arithmetic: bfloat16 products are computed in float32 and "
        "rounded, so autocast costs time here; see docs/performance.md)",
        file=out,
    )


def _demo_tracer(out: TextIO) -> None:
    # the autograd section's classifier (untrained): tp.nn needs tensorplug-autograd
    x = tp.randn([8, 2])
    if "autograd" in _plugins.loaded_names():
        nn = tp.nn
        forward: Any = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))
        what = "the classifier's forward"
    else:
        w1, w2 = tp.randn([2, 16]), tp.randn([16, 3])
        forward = lambda x: (x @ w1).relu() @ w2  # noqa: E731
        what = "a two-layer forward"
    graph = tp.tracer.trace(forward, x)
    lines = str(graph).splitlines()
    print(f"tp.tracer.trace of {what} ({len(graph.nodes)} nodes):", file=out)
    for line in lines[:9]:
        print(f"  {line}", file=out)
    if len(lines) > 9:
        print(f"  ... ({len(lines) - 9} more lines)", file=out)
    same = bool((graph(x) - forward(x)).abs().max().item() == 0)
    print(f"replayed through the dispatcher: equals the eager forward: {same}", file=out)


def _demo_batched(out: TextIO) -> None:
    x = tp.randn([5, 3])
    w = tp.randn([3])
    batched = tp.vmap(lambda row: (row * w).sum())(x)
    looped = tp.stack([(x[i] * w).sum() for i in range(5)])
    same = bool((batched - looped).abs().max().item() < 1e-5)
    print(f"vmap over 5 rows -> shape {tuple(batched.shape)}; equals the loop: {same}", file=out)


def _demo_cuda(out: TextIO) -> None:
    if not tp.cuda.is_available():
        why = _backends_runtime_reason("cuda")
        print(f"tensorplug-cuda is installed, but no CUDA device is available: {why}", file=out)
        return
    a = tp.randn([256, 256], device="cuda")
    c = (a @ a).sum()
    tp.cuda.synchronize()
    print(
        f"{tp.cuda.device_count()} CUDA device(s); (a @ a).sum() on {c.device}: "
        f"{c.cpu().item():.3f}",
        file=out,
    )


def _demo_dask(out: TextIO) -> None:
    x = tp.arange(12, dtype=tp.float32, device="dask").reshape(3, 4)
    y = (x @ x.T).relu().sum()
    dask: Any = getattr(tp, "dask")  # noqa: B009 - a plugin's name
    print(
        f"(x @ x.T).relu().sum() on 'dask': a graph of {dask.task_count(y)} tasks until read: "
        f"{y.item():.1f}",
        file=out,
    )


def _backends_runtime_reason(device_type: str) -> str | None:
    from . import _backends

    rt = _backends.runtime(device_type)
    return None if rt is None else rt.unavailable_reason()


def _section(title: str, plugin: str, run: Callable[[TextIO], None]) -> Section:
    """The demo section of first-party plugin ``plugin`` (Note [First-party manifest])."""
    return Section(title, plugin, _manifest.BY_NAME[plugin].distribution, run)


SECTIONS: list[Section] = [
    Section("core", None, "tensorplug", _demo_core),
    _section("CPU backend", "cpu", _demo_cpu),
    _section("autograd", "autograd", _demo_autograd),
    _section("autocast", "autocast", _demo_autocast),
    _section("tracer", "tracer", _demo_tracer),
    _section("batched (vmap)", "batched", _demo_batched),
    _section("CUDA backend", "cuda", _demo_cuda),
    _section("Dask backend", "dask", _demo_dask),
]


def _third_party_section(info: _plugins.PluginInfo) -> Section:
    def run(out: TextIO) -> None:
        print(
            f"keys: {', '.join(info.keys) or 'none'}; kernels: {info.op_count}; "
            f"names: {', '.join(info.names) or 'none'}",
            file=out,
        )
        for name in info.keys:
            key = _keys.get(name)
            if key.kind is not _keys.KeyKind.BACKEND or key.device_type is None:
                continue
            try:
                t = tp.tensor([1.0, 2.0], device=key.device_type)
                print(f"tensor on {key.device_type!r}: t + 1 = {t + 1!r}", file=out)
            except (DispatchError, MissingPluginError, RuntimeError) as e:
                print(f"a tensor on {key.device_type!r} cannot be used here: {e}", file=out)

    return Section(f"third-party plugin {info.name}", info.name, info.distribution or "", run)


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    loaded = _plugins.loaded_names()
    sections = list(SECTIONS)
    for info in _plugins.list():
        if info.name not in _manifest.BY_NAME and info.status == "loaded":
            sections.append(_third_party_section(info))
    failures = 0
    for s in sections:
        print(f"== {s.title} ==", file=out)
        if s.plugin is not None and s.plugin not in loaded:
            print(f"not installed: pip install {s.distribution}", file=out)
            continue
        try:
            s.run(out)
        except Exception:
            failures += 1
            print(f"this section failed:\n{traceback.format_exc()}", file=out)
    return 1 if failures else 0
