"""The autograd plugin against hand-written numpy (and torch when importable), in one process.

* ``tp.add(a, b)`` on 1-element float32 tensors that require grad: the forward alone
  (goal: no slower than torch.add with requires_grad), and forward + ``tp.autograd.grad``
  (goal: stays ahead of torch); next to it, the least any dispatcher written in Python does
  for that call (:func:`python_floor`, a model);
* a training step of an MLP 784-128-10 (batch 64, ReLU, cross-entropy): forward + backward,
  and with an SGD update (goal for both: at most 1.20x the hand-written numpy step, ahead of
  torch eager);
* the same step written each way users write it (``F.linear`` or ``@``/``+``, ``backward()``
  or ``autograd.grad``, SGD or Adam: :func:`forms`), against torch eager's same form (goal:
  at most 1.0x torch each).

The numpy step is the floor: the same arithmetic written by hand, with no graph. Next to it,
the floor of any autograd written in Python: the same step on a bare pure-Python autograd over
numpy (:func:`floor_step`, a model), so the gap to it is measured in the same process.
Run: ``python bench/autograd.py``.
"""

from __future__ import annotations

import heapq
import itertools
import os
import sys
from pathlib import Path
from typing import Any

# One BLAS thread for numpy (and so tensorplug) and torch alike: on a shared 2-core machine,
# threaded matmuls measure the neighbours' load, not the code.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved, us  # noqa: E402

import tensorplug as tp  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

LR = 0.01


def python_floor() -> Any:
    """The least a dispatcher written in Python does for ``add`` with grad: a public function,
    a call that ORs key sets and looks the kernel up, an autograd kernel that calls the
    backend's and records a node (edges, input shapes, a sequence number) and the output's
    history. A lower bound, not a dispatcher: it reads no thread state (grad mode, excluded
    keys), checks no dtype, device or argument (``alpha``), keeps no dtype and device for the
    engine, and its node has no hooks, saved arguments or version counters.
    """
    seq = itertools.count()

    class T:
        __slots__ = ("data", "dtype", "ks", "meta")

    class Meta:
        __slots__ = ("grad_fn", "nr")

    class Node:
        __slots__ = ("edges", "shapes", "seq")

    def new(data: Any, dtype: Any, ks: int) -> T:
        t = object.__new__(T)
        t.data, t.dtype, t.ks, t.meta = data, dtype, ks, None
        return t

    def backend(x: T, y: T) -> T:
        return new(np.add(x.data, y.data), x.dtype, 1)

    def edge(x: T) -> tuple[Any, int]:
        m = x.meta
        return (m.grad_fn, m.nr) if m is not None else (None, 0)

    def autograd(x: T, y: T) -> T:
        out = backend(x, y)
        n = object.__new__(Node)
        n.edges = (edge(x), edge(y))
        n.shapes = (x.data.shape, y.data.shape)
        n.seq = next(seq)
        m = out.meta = object.__new__(Meta)
        m.grad_fn, m.nr = n, 0
        out.ks |= 2
        return out

    table = {3: autograd, 1: backend}

    def call(x: T, y: T) -> T:
        return table[x.ks | y.ks](x, y)

    def add(x: T, y: T) -> T:
        return call(x, y)

    leaf_meta = object.__new__(Meta)
    leaf_meta.grad_fn, leaf_meta.nr = object(), 0
    a = new(np.ones(1, np.float32), "float32", 3)
    a.meta = leaf_meta
    b = new(np.ones(1, np.float32), "float32", 1)
    return lambda: add(a, b)


def tiny() -> None:
    a = tp.ones([1], requires_grad=True)
    b = tp.ones([1])
    plain_a, plain_b = tp.ones([1]), tp.ones([1])
    fns: dict[str, Any] = {
        "tp.add (no grad)": lambda: tp.add(plain_a, plain_b),
        "tp.add (grad)": lambda: tp.add(a, b),
        "tp.add + autograd.grad": lambda: tp.autograd.grad(tp.add(a, b), a),
        "python floor (grad)": python_floor(),
    }
    if torch is not None:
        at = torch.ones(1, requires_grad=True)
        bt = torch.ones(1)
        fns["torch.add (grad)"] = lambda: torch.add(at, bt)
        fns["torch.add + autograd.grad"] = lambda: torch.autograd.grad(torch.add(at, bt), at)
    t = interleaved(fns, number=5000, rounds=15)
    print("1-element float32, a.requires_grad")
    for name, v in t.items():
        print(f"  {name:28s} {us(v)}")
    if torch is not None:
        print(
            f"  goal: forward with grad no slower than torch: "
            f"{t['tp.add (grad)'] / t['torch.add (grad)']:.2f}x torch.add "
            f"(the python floor: {t['python floor (grad)'] / t['torch.add (grad)']:.2f}x)"
        )
        print(
            f"  goal: forward + grad ahead of torch: "
            f"{t['tp.add + autograd.grad'] / t['torch.add + autograd.grad']:.2f}x"
        )


def mlp_data() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 784), dtype=np.float32)
    y = rng.integers(0, 10, 64)
    w1 = (rng.standard_normal((128, 784)) * 0.03).astype(np.float32)
    b1 = np.zeros(128, np.float32)
    w2 = (rng.standard_normal((10, 128)) * 0.1).astype(np.float32)
    b2 = np.zeros(10, np.float32)
    return x, y, w1, b1, w2, b2


def numpy_step(update: bool) -> Any:
    x, y, w1, b1, w2, b2 = mlp_data()
    rows = np.arange(64)

    def step() -> float:
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
        dw2 = dz.T @ a
        db2 = dz.sum(0)
        dh = (dz @ w2) * (h > 0)
        dw1 = dh.T @ x
        db1 = dh.sum(0)
        if update:
            for p, g in ((w1, dw1), (b1, db1), (w2, dw2), (b2, db2)):
                np.subtract(p, LR * g, out=p)
        return float(loss)

    return step


def floor_step(update: bool) -> Any:
    """The issue's floor for the step: a bare pure-Python autograd over numpy, as small as
    such a thing gets while it still records a graph and runs it back. ``__slots__`` tensors,
    one node per op (linear, relu, cross-entropy) holding its edges and saved arrays, and an
    engine that counts dependencies, runs ready nodes from a heap by creation order, sums
    gradients in buffers and accumulates leaves' gradients into ``.grad``. What it leaves out
    is what a dispatcher and a real autograd add: dispatch keys, dtype/device checks, version
    counters, hooks, views, create_graph, NaN-exact backward kernels."""
    xn, yn, *params_np = mlp_data()
    seq = itertools.count()
    n_rows = xn.shape[0]
    rows = np.arange(n_rows)

    class T:
        __slots__ = ("data", "grad", "fn", "leaf")

    class Node:
        __slots__ = ("seq", "edges", "backward")

    def tensor(data: Any, leaf: bool) -> T:
        t = T()
        t.data, t.grad, t.fn, t.leaf = data, None, None, leaf
        return t

    def acc_node(t: T) -> Node:
        n = Node()
        n.seq, n.edges, n.backward = next(seq), (), t
        return n

    def edge(t: T) -> Any:
        return t.fn

    def make(data: Any, backward: Any, *inputs: T) -> T:
        n = Node()
        n.seq, n.edges, n.backward = next(seq), tuple(edge(t) for t in inputs), backward
        out = tensor(data, False)
        out.fn = n
        return out

    def linear(a: T, w: T, b: T) -> T:
        ad, wd = a.data, w.data
        need_input = a.fn is not None
        return make(
            ad @ wd.T + b.data,
            lambda g: (g @ wd if need_input else None, g.T @ ad, g.sum(0)),
            a,
            w,
            b,
        )

    def relu(a: T) -> T:
        h = a.data
        return make(np.maximum(h, 0), lambda g: (g * (h > 0),), a)

    def cross_entropy(z: T, target: Any) -> T:
        zd = z.data
        m = zd.max(1, keepdims=True)
        lsm = zd - m - np.log(np.exp(zd - m).sum(1, keepdims=True))

        def backward(g: Any) -> tuple[Any]:
            dz = np.exp(lsm)
            dz[rows, target] -= 1
            dz *= g / n_rows
            return (dz,)

        return make(np.asarray(-lsm[rows, target].mean()), backward, z)

    def run_backward(loss: T) -> None:
        root = loss.fn
        deps: dict[Any, int] = {}
        stack = [root]
        while stack:
            for child in stack.pop().edges:
                if child is not None:
                    c = deps.get(child)
                    if c is None:
                        deps[child] = 1
                        stack.append(child)
                    else:
                        deps[child] = c + 1
        buffers = {root: np.ones(())}
        ready = [(-root.seq, root)]
        while ready:
            node = heapq.heappop(ready)[1]
            g = buffers.pop(node)
            fn = node.backward
            if type(fn) is T:  # a leaf's accumulator
                fn.grad = g if fn.grad is None else fn.grad + g
                continue
            for child, cg in zip(node.edges, fn(g), strict=True):
                if child is None:
                    continue
                if cg is not None:
                    old = buffers.get(child)
                    buffers[child] = cg if old is None else old + cg
                left = deps[child] - 1
                deps[child] = left
                if left == 0:
                    heapq.heappush(ready, (-child.seq, child))

    params = [tensor(p, True) for p in params_np]
    for p in params:
        p.fn = acc_node(p)
    x, w1, b1, w2, b2 = tensor(xn, False), *params

    def step() -> Any:
        loss = cross_entropy(linear(relu(linear(x, w1, b1)), w2, b2), yn)
        for p in params:
            p.grad = None
        run_backward(loss)
        if update:
            for p in params:
                np.subtract(p.data, LR * p.grad, out=p.data)
        return loss

    return step


def tp_step(update: bool) -> Any:
    xn, yn, *params_np = mlp_data()
    x, y = tp.tensor(xn), tp.tensor(yn)
    params = [tp.tensor(p, requires_grad=True) for p in params_np]
    w1, b1, w2, b2 = params

    def step() -> float:
        z = tp.linear(tp.linear(x, w1, b1).relu(), w2, b2)
        loss = tp.cross_entropy(z, y)
        for p in params:
            p.grad = None
        loss.backward()
        if update:
            with tp.no_grad():
                for p in params:
                    p.sub_(p.grad, alpha=LR)
        return loss

    return step


def torch_step(update: bool) -> Any:
    xn, yn, *params_np = mlp_data()
    x, y = torch.from_numpy(xn), torch.from_numpy(yn)
    params = [torch.tensor(p, requires_grad=True) for p in params_np]
    w1, b1, w2, b2 = params
    f = torch.nn.functional

    def step() -> Any:
        z = f.linear(f.linear(x, w1, b1).relu(), w2, b2)
        loss = f.cross_entropy(z, y)
        for p in params:
            p.grad = None
        loss.backward()
        if update:
            with torch.no_grad():
                for p in params:
                    p.sub_(p.grad, alpha=LR)
        return loss

    return step


def mlp() -> None:
    for update in (False, True):
        fns = {
            "numpy by hand": numpy_step(update),
            "bare autograd": floor_step(update),
            "tensorplug": tp_step(update),
        }
        if torch is not None:
            torch.set_num_threads(1)
            fns["torch"] = torch_step(update)
        t = interleaved(fns, number=50, rounds=15)
        base = t["numpy by hand"]
        what = "forward + backward + SGD" if update else "forward + backward"
        print(f"MLP 784-128-10, batch 64, float32: {what}")
        for name, v in t.items():
            print(f"  {name:16s} {us(v)}  {v / base:5.2f}x numpy")
        print(
            f"  goal: tensorplug <= 1.20x numpy: {t['tensorplug'] / base:.2f}x "
            f"(the bare autograd: {t['bare autograd'] / base:.2f}x)"
        )


FORMS = [
    (model, grad, opt)
    for model in ("F.linear", "@ and +")
    for grad in ("backward()", "autograd.grad")
    for opt in ("SGD", "Adam")
]


def form_step(lib: Any, model: str, grad: str, opt: str) -> Any:
    """The MLP step written one of the ways users write it (issue 34): the layers as
    ``F.linear`` or as ``@``/``+``; the gradients by ``loss.backward()`` or by
    ``autograd.grad`` put into ``.grad``; the update by the library's SGD or Adam."""
    xn, yn, *params_np = mlp_data()
    if lib is tp:
        x, y = tp.tensor(xn), tp.tensor(yn)
        params = [tp.tensor(p, requires_grad=True) for p in params_np]
    else:
        x, y = lib.from_numpy(xn), lib.from_numpy(yn)
        params = [lib.tensor(p, requires_grad=True) for p in params_np]
    w1, b1, w2, b2 = params
    f = lib.nn.functional
    o = lib.optim.SGD(params, lr=LR) if opt == "SGD" else lib.optim.Adam(params, lr=1e-3)

    def forward() -> Any:
        if model == "F.linear":
            return f.linear(f.linear(x, w1, b1).relu(), w2, b2)
        return lib.relu(x @ w1.T + b1) @ w2.T + b2

    def step() -> Any:
        loss = f.cross_entropy(forward(), y)
        if grad == "backward()":
            o.zero_grad()
            loss.backward()
        else:
            for p, g in zip(params, lib.autograd.grad(loss, params), strict=True):
                p.grad = g
        o.step()
        return loss

    return step


def forms() -> None:
    """Every form of the step against torch eager's same form, interleaved in one process
    (goal, issue 34: each at most 1.0x torch, none regressing to reach another)."""
    if torch is None:
        print("forms of the MLP step: torch is not importable here, so there is no ratio to show")
        return
    fns: dict[Any, Any] = {}
    for form in FORMS:
        fns[("tp", *form)] = form_step(tp, *form)
        fns[("torch", *form)] = form_step(torch, *form)
    t = interleaved(fns, number=30, rounds=15)
    print(
        "MLP 784-128-10, batch 64, float32: each form of the step, tensorplug against torch eager"
    )
    for form in FORMS:
        a, b = t[("tp", *form)], t[("torch", *form)]
        print(f"  {' / '.join(form):34s} {us(a)}  torch {us(b)}  {a / b:5.2f}x torch")


def main() -> None:
    if "autograd" not in tp.plugins.loaded_names():
        sys.exit("bench/autograd.py needs the tensorplug-autograd plugin")
    tiny()
    mlp()
    forms()


if __name__ == "__main__":
    main()
