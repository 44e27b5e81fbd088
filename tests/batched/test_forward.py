"""tp.func forward-mode transforms (forward.py; torch.func, PyTorch 2.13): jvp, jacfwd,
linearize and hessian = jacfwd(jacrev), against closed forms, reverse mode (jacfwd == jacrev on
a range of ops) and torch; composed with vmap, grad, jacrev and themselves; every error with
PyTorch's message."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

pytest.importorskip("tensorplug_batched")
if "batched" not in tp.plugins.loaded_names():
    pytest.skip("needs the tensorplug-batched plugin loaded", allow_module_level=True)
needs.autograd()

from tensorplug.func import grad, hessian, jacfwd, jacrev, jvp, linearize, vmap  # noqa: E402

F = tp.nn.functional
DATA = json.loads((Path(__file__).parents[1] / "autograd" / "data" / "forward_ad.json").read_text())


def close(a, b, tol=1e-8):
    a = np.asarray(a.tolist()) if isinstance(a, tp.Tensor) else np.asarray(a)
    b = np.asarray(b.tolist()) if isinstance(b, tp.Tensor) else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


rng = np.random.default_rng(1)


def r(*shape):
    return tp.tensor(rng.standard_normal(shape))


def test_import_from_tensorplug_func():
    from tensorplug.func import jvp as j  # the import the issue reported broken

    assert j is jvp


def test_jvp_closed_form():
    x, v = r(3), r(3)
    out, t = jvp(lambda x: x.sin() * x.sum(), (x,), (v,))
    xn, vn = x.numpy(), v.numpy()
    close(out, np.sin(xn) * xn.sum())
    close(t, np.cos(xn) * vn * xn.sum() + np.sin(xn) * vn.sum())


def _inplace(x):
    y = x.clone()
    y.mul_(x)
    y[1:].add_(x[:-1])
    return y


# functions of one tensor: jacfwd must equal jacrev
FUNCTIONS = {
    "pointwise": lambda x: (x.exp() * x.tanh() + x.sigmoid()).pow(2),
    "views": lambda x: x.reshape(2, 3).t()[1:].flatten() * 3,
    "matmul": lambda x: x.reshape(2, 3) @ x.reshape(3, 2),
    "reductions": lambda x: tp.stack([x.sum(), x.var(), x.max(), x.logsumexp(0)]),
    "softmax": lambda x: F.log_softmax(x.reshape(2, 3), 1) + F.softmax(x, 0).reshape(2, 3),
    "inplace": _inplace,
    "indexing": lambda x: x[tp.tensor([4, 0, 2])] + x.gather(0, tp.tensor([1, 1, 5]))[None],
    "cross_entropy": lambda x: F.cross_entropy(x.reshape(2, 3), tp.tensor([2, 0])),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_jacfwd_equals_jacrev(name):
    x = r(6)
    close(jacfwd(FUNCTIONS[name])(x), jacrev(FUNCTIONS[name])(x), 1e-10)


def test_multiple_outputs_argnums_has_aux_and_integer_inputs():
    x, y = r(3), r(2)
    n = tp.tensor([2, 1, 0])

    def f(x, n, y):
        return (x[n] * y.sum(), {"b": x * y[0]}), x.sum()

    (ja, jb), aux = jacfwd(f, argnums=(0, 2), has_aux=True)(x, n, y)
    (ra, rb) = jacrev(lambda x, n, y: f(x, n, y)[0], argnums=(0, 2))(x, n, y)
    for a, b in zip((*ja, *jb["b"]), (*ra, *rb["b"]), strict=True):
        close(a, b)
    close(aux, x.sum())
    p, t, a2 = jvp(lambda x: (x * 2, x.sum()), (x,), (tp.ones(3, dtype=tp.float64),), has_aux=True)
    close(t, [2, 2, 2])
    close(a2, x.sum())


def test_vmap_of_jvp_and_jvp_of_vmap():
    xs, vs = r(4, 3), r(4, 3)
    f = lambda x: (x.sin() * x).cumsum(0)  # noqa: E731
    per_sample = vmap(lambda x, v: jvp(f, (x,), (v,))[1])(xs, vs)
    loop = tp.stack([jvp(f, (xs[i],), (vs[i],))[1] for i in range(4)])
    close(per_sample, loop)
    close(jvp(vmap(f), (xs,), (vs,))[1], loop)
    # a tangent batched, the primal not: in_dims (None, 0), batch dim elsewhere
    v_t = r(3, 4)
    got = vmap(lambda v: jvp(f, (xs[0],), (v,))[1], in_dims=1)(v_t)
    close(got, tp.stack([jvp(f, (xs[0],), (v_t[:, i],))[1] for i in range(4)]))


def test_compositions_give_the_hessian():
    x = r(4)
    f = lambda x: (x.sin() * x.roll(1)).sum() * x.exp().sum()  # noqa: E731
    want = jacrev(jacrev(f))(x)
    for h in (hessian(f)(x), jacfwd(jacfwd(f))(x), jacrev(jacfwd(f))(x), jacfwd(grad(f))(x)):
        close(h, want, 1e-9)
    v = r(4)
    _, hv = jvp(grad(f), (x,), (v,))  # forward over reverse: H v
    close(hv, want @ v, 1e-9)
    # nested jvp: second directional derivative
    _, d2 = jvp(lambda x: jvp(f, (x,), (v,))[1], (x,), (v,))
    close(d2, v @ want @ v, 1e-9)


def test_hessian_of_an_mlp_loss():
    tp.manual_seed(0)
    model = tp.nn.Sequential(tp.nn.Linear(3, 5), tp.nn.Tanh(), tp.nn.Linear(5, 2)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = r(4, 3), tp.tensor([0, 1, 1, 0])

    def loss(w0):
        p = dict(params, **{"0.weight": w0})
        return F.cross_entropy(tp.func.functional_call(model, p, (x,)), y)

    h = hessian(loss)(params["0.weight"])
    assert tuple(h.shape) == (5, 3, 5, 3)
    close(h, jacrev(jacrev(loss))(params["0.weight"]), 1e-9)


def test_linearize():
    x, v = r(3), r(3)
    f = lambda x: x.exp() * x.sum()  # noqa: E731
    out, fn = linearize(f, x)
    close(out, f(x))
    close(fn(v), jvp(f, (x,), (v,))[1])
    with pytest.raises(RuntimeError, match=r"tangent:0 with shape \[4\] in flattened pytree"):
        fn(r(4))
    with pytest.raises(RuntimeError, match="to have the same argspec as the primals"):
        fn(v, v)
    with pytest.raises(RuntimeError, match="tangent:0 with dtype"):
        fn(v.float())


@pytest.mark.parametrize("name", [n for n, c in DATA.items() if "hessian0" in c])
def test_committed_torch_values(name):
    case = DATA[name]
    fn = eval(case["expr"], {"T": tp})  # noqa: S307  (tools/gen_forward_ad.py's text)
    xs = [tp.tensor(np.asarray(a)) for a in case["inputs"]]
    jac = jacfwd(fn, argnums=tuple(range(len(xs))))(*xs)
    for got, want in zip(jac, case["jacfwd"], strict=True):
        close(got, want, 1e-9)
    close(hessian(fn)(*xs), case["hessian0"], 1e-9)


def test_against_torch_func():
    torch = pytest.importorskip("torch")
    x, v = r(2, 3), r(2, 3)
    ours = jvp(lambda x: F.softmax(x.exp(), 1) @ x.t(), (x,), (v,))[1]
    tx, tv = torch.tensor(x.numpy()), torch.tensor(v.numpy())
    theirs = torch.func.jvp(lambda x: torch.softmax(x.exp(), 1) @ x.t(), (tx,), (tv,))[1]
    close(ours, theirs.numpy(), 1e-10)
    g = lambda T: lambda x: (T.tanh(x) * x.sum()).sum()  # noqa: E731
    close(hessian(g(tp))(x), torch.func.hessian(g(torch))(tx).numpy(), 1e-10)


# --- errors, with PyTorch's messages -----------------------------------------------------------------


def test_errors():
    x = r(3)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        jvp(tp.sin, x, x)
    with pytest.raises(
        RuntimeError, match="Expected primals and tangents to have the same python structure"
    ):
        jvp(tp.sin, (x,), (x, x))
    with pytest.raises(
        RuntimeError, match="Trying to set a forward gradient that has a different size"
    ):
        jvp(tp.sin, (x,), (r(4),))
    with pytest.raises(RuntimeError, match="Expected primals to contain at least one Tensor"):
        jvp(tp.sin, (), ())
    with pytest.raises(RuntimeError, match="Expected primals to only contain Tensors"):
        jvp(tp.sin, (3.0,), (1.0,))
    with pytest.raises(
        RuntimeError,
        match="expected f\\(\\*primals\\) to return only tensors, got unsupported type <class 'int'>",
    ):
        jvp(lambda x: 3, (x,), (x,))
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        jvp(lambda x: x, (x,), (x,), has_aux=True)
    with pytest.raises(RuntimeError, match="Expected tensors, got unsupported type"):
        jvp(lambda x: (x, 3), (x,), (x,), has_aux=True)
    with pytest.raises(RuntimeError, match="The output of f is independent of the inputs"):
        jvp(lambda x: tp.ones(3), (x,), (x,), strict=True)
    close(jvp(lambda x: tp.ones(3), (x,), (x,))[1], [0, 0, 0])
    with pytest.raises(ValueError, match="Expected primal to be floating point"):
        jvp(tp.sin, (tp.tensor([1, 2]),), (tp.tensor([1, 2]),))
    with pytest.raises(RuntimeError, match=r"argnums elements must be unique, got \(0, 0\)"):
        jacfwd(tp.sin, argnums=(0, 0))(x)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness are"):
        jacfwd(tp.sin, randomness="bad")
    with pytest.raises(RuntimeError, match="randomness error mode"):
        jacfwd(lambda x: tp.rand(3, dtype=tp.float64) + x)(x)
    close(jacfwd(lambda x: tp.rand(3, dtype=tp.float64) + x, randomness="same")(x), np.eye(3))


def test_without_autograd_the_forward_transforms_name_it():
    x = r(3)
    with needs.unloaded("autograd"):
        for call in (
            lambda: jvp(tp.sin, (x,), (x,)),
            lambda: jacfwd(tp.sin)(x),
            lambda: linearize(tp.sin, x),
        ):
            with pytest.raises(tp.MissingPluginError, match="tensorplug-autograd") as e:
                call()
            assert e.value.distribution == "tensorplug-autograd"
    close(jvp(tp.sin, (x,), (x,))[1], np.cos(x.numpy()) * x.numpy())
