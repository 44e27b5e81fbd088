"""The tracer plugin against eager tensorplug, hand-written numpy and torch, in one process.

* tracing cost per op: ``tp.tracer.trace`` of a chain of 200 small ops, per op, next to the
  same ops run eagerly;
* replaying the MLP 784-128-10 forward graph (batch 64; ``tp.nn.Sequential`` of Linear, ReLU,
  Linear, then cross-entropy) against the eager forward (goal: at most 0.90; torch.jit.trace's
  replay is about 0.95 of torch eager here), next to ``graph.code`` run through the dispatcher
  (what a replay without a plan runs, docs/tracer.md);
* the headline: ``tp.compile`` of the MLP training step (forward, ``tp.autograd.grad``, SGD in
  place) against the same step written by hand in numpy (bench/autograd.py's), goal at most
  1.10x; next to it the eager step, torch eager, and two floors: the lowered graph without
  its guards (straight-line Python calling the kernels), and a minimal Python loop calling the
  same kernels over prepared argument lists. Ratios of these long calls are
  medians of back-to-back pairs (bench/_timing.py's ``paired_ratio``);
* the forms of issue 34: ``tp.compile`` of the step written with ``F.linear`` or with
  ``@``/``+``, ``loss.backward()`` and the library's SGD or Adam (bench/autograd.py's
  ``form_step``, returning the detached loss), against the same step by hand in numpy and
  torch eager's same form, in one run (goals: at most 1.08x numpy and 0.85x torch eager).

Run: ``python bench/tracer.py``.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved, paired_ratio, us  # noqa: E402
from autograd import FORMS, LR, form_step, mlp_data, numpy_step  # noqa: E402

import tensorplug as tp  # noqa: E402
from tensorplug_tracer import codegen  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def tracing_cost() -> None:
    x = tp.ones([4])

    def chain(x: Any) -> Any:
        for _ in range(50):
            x = (x * 1.0001 + 0.5).relu().neg()
        return x

    t = interleaved(
        {"eager": lambda: chain(x), "trace": lambda: tp.tracer.trace(chain, x)}, number=20, rounds=7
    )
    n = 200
    print("tracing a chain of 200 ops on a 4-element tensor")
    print(f"  eager      {us(t['eager'] / n)} per op")
    print(f"  traced     {us(t['trace'] / n)} per op ({t['trace'] / t['eager']:.1f}x eager)")


def _params(requires_grad: bool) -> list[Any]:
    _, _, *pn = mlp_data()
    return [tp.tensor(p, requires_grad=requires_grad) for p in pn]


def replay() -> None:
    xn, yn, *_ = mlp_data()
    x, y = tp.tensor(xn), tp.tensor(yn)
    nn = tp.nn
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    loss_fn = nn.CrossEntropyLoss()

    def forward(x: Any, y: Any) -> Any:
        return loss_fn(model(x), y)

    graph = tp.tracer.trace(forward, x, y)
    compiled = tp.compile(forward)
    code = graph.globals()  # graph.code through the dispatcher: what a replay without a plan runs
    exec(graph.code, code)
    dispatched = code[graph.fn_name]
    fns: dict[str, Any] = {
        "eager forward": lambda: forward(x, y),
        "graph replay": lambda: graph(x, y),
        "graph.code": lambda: dispatched(x, y),
        "tp.compile": lambda: compiled(x, y),
    }
    with tp.no_grad():
        t = interleaved(fns, number=100, rounds=15)
    print("MLP 784-128-10 forward + cross-entropy, batch 64, under no_grad")
    for name, v in t.items():
        print(f"  {name:16s} {us(v)}")
    with tp.no_grad():
        r = paired_ratio(fns["graph replay"], fns["eager forward"], pairs=2000)
        rd = paired_ratio(fns["graph.code"], fns["eager forward"], pairs=2000)
        rc = paired_ratio(fns["tp.compile"], fns["eager forward"], pairs=2000)
    print(
        f"  goal: replay <= 0.90 eager: {r:.3f} (median of back-to-back pairs); "
        f"graph.code dispatched: {rd:.3f}; tp.compile: {rc:.3f}"
    )
    t = interleaved(fns, number=100, rounds=15)
    r = paired_ratio(fns["graph replay"], fns["eager forward"], pairs=2000)
    print(
        f"  with autograd recording: replay {us(t['graph replay'])}, eager {us(t['eager forward'])}: {r:.3f}"
    )
    if torch is not None:
        torch.set_num_threads(1)

        class Forward(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.mlp = torch.nn.Sequential(
                    torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
                )
                self.loss = torch.nn.CrossEntropyLoss()

            def forward(self, a: Any, b: Any) -> Any:
                return self.loss(self.mlp(a), b)

        tm = Forward()
        tx, ty = torch.from_numpy(xn), torch.from_numpy(yn)
        tf = lambda: tm(tx, ty)  # noqa: E731
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jit = torch.jit.trace(tm, (tx, ty))
        with torch.no_grad():
            rt = paired_ratio(lambda: jit(tx, ty), tf, pairs=2000)
        print(f"  torch.jit.trace replay / torch eager (no_grad): {rt:.3f}")


def _step(params: list[Any]) -> Any:
    w1, b1, w2, b2 = params

    def step(x: Any, y: Any) -> Any:
        z = tp.linear(tp.linear(x, w1, b1).relu(), w2, b2)
        loss = tp.nn.functional.cross_entropy(z, y)
        grads = tp.autograd.grad(loss, params)
        with tp.no_grad():
            for p, g in zip(params, grads, strict=True):
                p.sub_(g, alpha=LR)
        return loss.detach()

    return step


def kernel_loop(graph: Any, bound: list[Any], x: Any, y: Any) -> Any:
    """The floor of any replay of ``graph``: a Python loop calling, per node, the kernel the
    compiled step bound, with its argument tuple made once (inputs and constants in place,
    the results of earlier nodes fetched from a list), and nothing else: no guards, no version
    counters, Autograd excluded around the whole loop."""
    from tensorplug_tracer.graph import Value

    slot: dict[Any, int] = {v: i for i, v in enumerate(graph.inputs)}
    env: list[Any] = [x, y]
    for c in graph.constants:
        slot[c] = len(env)
        env.append(c.tensor)
    plan = []
    for n, (_, _, kernel) in zip(graph.nodes, bound, strict=True):
        refs = [(i, slot[a]) for i, a in enumerate(n.args) if isinstance(a, Value)]
        args = [None if isinstance(a, Value) else a for a in n.args]
        assert not any(isinstance(v, Value) for v in n.kwargs.values())
        out = n.outputs[0] if n.out_form == "one" else None
        if isinstance(out, Value):
            slot[out] = len(env)
            env.append(None)
        plan.append((kernel, args, refs, n.kwargs, slot.get(out, -1)))
    ret = slot[graph.out_leaves[0]]
    exclude = tp.dispatch.exclude

    def run() -> Any:
        with exclude("Autograd"):
            for kernel, args, refs, kwargs, out in plan:
                for i, j in refs:
                    args[i] = env[j]
                r = kernel(*args, **kwargs)
                if out >= 0:
                    env[out] = r
        return env[ret]

    return run


def headline() -> None:
    xn, yn, *_ = mlp_data()
    x, y = tp.tensor(xn), tp.tensor(yn)
    compiled = tp.compile(_step(_params(True)))
    for _ in range(3):  # traced until two traces agree (Note [Confirmed graphs])
        compiled(x, y)
    (entry,) = compiled._cache.values()  # the lowered graph itself, for the floor
    lowered, _ = codegen.lowered_function(entry.graph)  # without the guards
    loop = kernel_loop(entry.graph, entry.bound, x, y)
    eager = _step(_params(True))
    fns: dict[str, Any] = {
        "numpy by hand": numpy_step(True),
        "tp.compile": lambda: compiled(x, y),
        "lowered, no guards": lambda: lowered(x, y),
        "kernel loop": loop,
        "tensorplug eager": lambda: eager(x, y),
    }
    if torch is not None:
        torch.set_num_threads(1)
        xt, yt = torch.from_numpy(xn), torch.from_numpy(yn)
        pt = [torch.tensor(p, requires_grad=True) for p in mlp_data()[2:]]
        f = torch.nn.functional

        def torch_step() -> Any:
            z = f.linear(f.linear(xt, pt[0], pt[1]).relu(), pt[2], pt[3])
            loss = f.cross_entropy(z, yt)
            grads = torch.autograd.grad(loss, pt)
            with torch.no_grad():
                for p, g in zip(pt, grads, strict=True):
                    p.sub_(g, alpha=LR)
            return loss.detach()

        fns["torch eager"] = torch_step
    t = interleaved(fns, number=30, rounds=12)
    base = fns["numpy by hand"]
    print("MLP 784-128-10, batch 64, float32: forward + autograd.grad + SGD")
    for name, v in t.items():
        r = 1.0 if name == "numpy by hand" else paired_ratio(fns[name], base, pairs=600)
        print(f"  {name:17s} {us(v)}  {r:5.3f}x numpy (paired median)")
    r = paired_ratio(fns["tp.compile"], base, pairs=1500)
    print(f"  goal: tp.compile <= 1.10x numpy: {r:.3f}x")
    print(f"  graph: {len(entry.graph.nodes)} nodes, traced {compiled.trace_count} time(s)")


def numpy_adam_step() -> Any:
    """bench/autograd.py's numpy step with Adam (lr 1e-3, PyTorch's defaults) in place of SGD,
    the update written as the kit's (the lerp form of the first moment, one scratch array)."""
    x, y, *params = mlp_data()
    state = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
    lr, beta1, beta2, eps = 1e-3, 0.9, 0.999, 1e-8
    step_count = [0]
    rows = np.arange(64)

    def step() -> float:
        w1, b1, w2, b2 = params
        h = x @ w1.T + b1
        a = np.maximum(h, 0)
        z = a @ w2.T + b2
        m = z.max(1, keepdims=True)
        e = np.exp(z - m)
        lsm = z - m - np.log(e.sum(1, keepdims=True))
        loss = -lsm[rows, y].mean()
        dz = np.exp(lsm)
        dz[rows, y] -= 1
        dz /= 64
        dh = (dz @ w2) * (h > 0)
        grads = (dh.T @ x, dh.sum(0), dz.T @ a, dz.sum(0))
        step_count[0] += 1
        t = step_count[0]
        bc2_sqrt = (1 - beta2**t) ** 0.5
        step_size = lr / (1 - beta1**t)
        for p, g, (mm, vv) in zip(params, grads, state, strict=True):
            buf = np.empty_like(p)
            np.subtract(g, mm, out=buf)
            buf *= 1 - beta1
            mm += buf
            np.multiply(g, g, out=buf)
            buf *= 1 - beta2
            vv *= beta2
            vv += buf
            np.sqrt(vv, out=buf)
            buf /= bc2_sqrt
            buf += eps
            np.divide(mm, buf, out=buf)
            buf *= step_size
            p -= buf
        return float(loss)

    return step


def compiled_forms() -> None:
    """``tp.compile`` of each form of the step with ``loss.backward()`` (issue 34), against
    the numpy step by hand with the same update and torch eager's same form, interleaved."""
    forms = [f for f in FORMS if f[1] == "backward()"]
    fns: dict[Any, Any] = {("numpy", "SGD"): numpy_step(True), ("numpy", "Adam"): numpy_adam_step()}
    for form in forms:
        step = form_step(tp, *form)
        compiled = tp.compile(lambda step=step: step().detach())
        for _ in range(4):  # the optimizer's state, then the confirming traces
            compiled()
        assert compiled.trace_count <= 3 and len(compiled.graphs) == 1, form
        fns[("tp.compile", *form)] = compiled
        if torch is not None:
            torch.set_num_threads(1)
            fns[("torch", *form)] = form_step(torch, *form)
    t = interleaved(fns, number=30, rounds=12)
    print("MLP 784-128-10, batch 64, float32: tp.compile of each form of the step")
    for form in forms:
        opt = form[2]
        base = fns[("numpy", opt)]
        c = ("tp.compile", *form)
        rn = paired_ratio(fns[c], base, pairs=600)
        line = f"  {' / '.join(form):28s} compiled {us(t[c])}  numpy {us(t[('numpy', opt)])}"
        line += f"  {rn:5.3f}x numpy"
        if torch is not None:
            rt = paired_ratio(fns[c], fns[("torch", *form)], pairs=600)
            line += f"  torch {us(t[('torch', *form)])}  {rt:5.3f}x torch"
        print(line)
    print("  goals: at most 1.08x numpy and 0.85x torch eager")


def main() -> None:
    if not {"tracer", "autograd", "cpu"} <= tp.plugins.loaded_names():
        sys.exit("bench/tracer.py needs the tensorplug-tracer, -autograd and -cpu plugins")
    if "--forms" not in sys.argv:
        tracing_cost()
        replay()
        headline()
    compiled_forms()
    np.seterr(all="ignore")


if __name__ == "__main__":
    main()
