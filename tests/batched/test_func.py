"""tp.func transforms (torch.func, PyTorch 2.13): grad, grad_and_value, vjp, jacrev, hessian
against closed forms and autograd loops; their composition with vmap (per-sample gradients equal
a Python loop); functional_call; every error with PyTorch's message."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

pytest.importorskip("tensorplug_batched")
if "batched" not in tp.plugins.loaded_names():
    pytest.skip("needs the tensorplug-batched plugin loaded", allow_module_level=True)
needs.autograd()

from tensorplug.func import (  # noqa: E402
    functional_call,
    grad,
    grad_and_value,
    hessian,
    jacrev,
    vjp,
    vmap,
)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a.tolist()), np.asarray(b), rtol=tol, atol=tol)


@pytest.fixture
def x():
    tp.manual_seed(0)
    return tp.randn(3, dtype=tp.float64)


def f_np(x):
    return np.sin(x) * x.sum()


def jac_np(x):
    return np.diag(np.cos(x)) * x.sum() + np.sin(x)[:, None]


def f(x):
    return tp.sin(x) * x.sum()


def test_import_forms():
    import tensorplug.func as func_module

    assert tp.func is func_module and tp.func.grad is grad


# --- grad and grad_and_value --------------------------------------------------------------------


def test_grad_matches_the_closed_form(x):
    close(grad(lambda v: (v**3).sum())(x), 3 * x.numpy() ** 2)
    gx, gy = grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, x * 2)
    close(gx, 2 * x.numpy())
    close(gy, x.numpy())
    close(grad(lambda a, b: (a * b).sum(), argnums=-1)(x, x * 2), x.numpy())


def test_grad_of_a_pytree_argument(x):
    params = {"w": x, "b": [tp.tensor(1.0, dtype=tp.float64)]}
    g = grad(lambda p: (p["w"] * p["b"][0]).sum() ** 2)(params)
    s = x.numpy().sum() + 0
    assert set(g) == {"w", "b"}
    close(g["w"], np.full(3, 2 * s))
    close(g["b"][0], 2 * s * s)


def test_grad_and_value_and_aux(x):
    g, v = grad_and_value(lambda v: (v**2).sum())(x)
    close(g, 2 * x.numpy())
    close(v, (x.numpy() ** 2).sum())
    assert not v.requires_grad
    g, (v, aux) = grad_and_value(lambda v: ((v**2).sum(), {"s": v.sum()}), has_aux=True)(x)
    close(aux["s"], x.numpy().sum())
    g, aux = grad(lambda v: ((v**2).sum(), v.mean()), has_aux=True)(x)
    close(g, 2 * x.numpy())
    close(aux, x.numpy().mean())


def test_grad_of_grad_and_no_perturbation_confusion():
    t = tp.tensor(0.5, dtype=tp.float64)
    close(grad(grad(tp.sin))(t), -np.sin(0.5))
    close(grad(grad(grad(lambda v: v**4)))(t), 24 * 0.5)
    # d/dx [x * d/dy (x y) at y=x] = d/dx x^2 = 2x: the inner derivative treats x as constant
    close(grad(lambda v: v * grad(lambda y: v * y)(v))(tp.tensor(3.0, dtype=tp.float64)), 6.0)


def test_grad_through_the_callers_autograd(x):
    w = x.clone().requires_grad_()
    g = grad(lambda v, w: (v * w).sum() ** 2)(tp.ones(3, dtype=tp.float64), w)
    g.sum().backward()  # d/dw sum_i 2 (v.w) w_i = 2 sum(w) + 2 (v.w) at v=1
    s = x.numpy().sum()
    close(w.grad, np.full(3, 2 * s) + 2 * s)
    # without a differentiated argument the result is a plain tensor
    plain = grad(lambda v: (v * x).sum())(tp.ones(3, dtype=tp.float64))
    assert not plain.requires_grad and plain.numpy().shape == (3,)


# --- per-sample gradients ------------------------------------------------------------------------


def test_per_sample_gradients_of_an_mlp_equal_a_loop():
    tp.manual_seed(0)
    model = tp.nn.Sequential(tp.nn.Linear(4, 8), tp.nn.ReLU(), tp.nn.Linear(8, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}
    xs, ys = tp.randn(6, 4), tp.randint(0, 3, [6])

    def loss(p, x, y):
        return tp.nn.functional.cross_entropy(functional_call(model, p, (x,)), y)

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)
    for i in range(6):
        model.zero_grad()
        tp.nn.functional.cross_entropy(model(xs[i]), ys[i]).backward()
        for name, p in model.named_parameters():
            close(per_sample[name][i], p.grad.numpy(), 1e-6)

    # the same with a batch of one inside
    def loss1(p, x, y):
        out = functional_call(model, p, (x.unsqueeze(0),))
        return tp.nn.functional.cross_entropy(out, y.unsqueeze(0))

    again = vmap(grad(loss1), in_dims=(None, 0, 0))(params, xs, ys)
    for name in params:
        close(again[name], per_sample[name].numpy(), 1e-6)


def test_per_sample_gradients_with_a_batched_parameter():
    w = tp.randn(5, 3, dtype=tp.float64)  # one parameter per sample
    xs = tp.randn(5, 3, dtype=tp.float64)
    g = vmap(grad(lambda w, x: (w * x).sum().tanh()))(w, xs)
    t = np.tanh((w.numpy() * xs.numpy()).sum(1))
    close(g, (1 - t**2)[:, None] * xs.numpy())


def test_nested_vmap_of_grad():
    xs = tp.randn(2, 3, 4, dtype=tp.float64)
    g = vmap(vmap(grad(lambda v: (v**3).sum())))(xs)
    close(g, 3 * xs.numpy() ** 2)


# --- vjp, jacrev, hessian ------------------------------------------------------------------------


def test_vjp(x):
    out, fn = vjp(f, x)
    close(out, f_np(x.numpy()))
    ct = tp.randn(3, dtype=tp.float64)
    (g,) = fn(ct)
    close(g, ct.numpy() @ jac_np(x.numpy()))
    (g2,) = fn(ct)  # may be called again
    close(g2, g.numpy())
    (outs, fn2) = vjp(lambda a, b: {"p": a * b, "s": (a + b).sum()}, x, x * 3)
    ga, gb = fn2({"p": tp.ones(3, dtype=tp.float64), "s": tp.tensor(2.0, dtype=tp.float64)})
    close(ga, 3 * x.numpy() + 2)
    close(gb, x.numpy() + 2)


def test_vmap_of_vjp_fn_has_a_cotangent_per_sample(x):
    _, fn = vjp(f, x)
    cts = tp.randn(4, 3, dtype=tp.float64)
    close(vmap(fn)(cts)[0], cts.numpy() @ jac_np(x.numpy()))


def test_jacrev(x):
    close(jacrev(f)(x), jac_np(x.numpy()))
    ja, jb = jacrev(lambda a, b: a * b, argnums=(0, 1))(x, x * 2)
    close(ja, np.diag(2 * x.numpy()))
    close(jb, np.diag(x.numpy()))
    m = tp.randn(2, 3, dtype=tp.float64)
    j = jacrev(lambda v: m @ v)(x)
    close(j, m.numpy())
    out = jacrev(lambda v: {"a": v.sum(), "b": v * 2})(x)
    close(out["a"], np.ones(3))
    close(out["b"], 2 * np.eye(3))


def test_jacrev_composes_with_vmap(x):
    xs = tp.stack([x, x * 2, -x])
    per = vmap(jacrev(f))(xs)
    for i in range(3):
        close(per[i], jac_np(xs[i].numpy()))
    full = jacrev(vmap(f))(xs)  # the Jacobian of the batched function: block diagonal
    assert full.shape == (3, 3, 3, 3)
    close(full[1, :, 1, :], jac_np(xs[1].numpy()))
    close(full[0, :, 1, :], np.zeros((3, 3)))


def test_hessian(x):
    h = hessian(lambda v: (v**3).sum() * v[0])(x)
    xn = x.numpy()
    want = np.diag(6 * xn * xn[0])
    want[0, :] += 3 * xn**2
    want[:, 0] += 3 * xn**2
    close(h, want)
    close(
        vmap(hessian(lambda v: (v**3).sum()))(tp.stack([x, x * 2])),
        np.stack([np.diag(6 * xn), np.diag(12 * xn)]),
    )


# --- errors -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argnums", "msg"),
    [
        (2, "Got argnum=2, but only 1 positional inputs"),
        (-2, "Got argnum=-2, but only 1 positional inputs"),
        ((0, 0), "argnums elements must be unique, got (0, 0)"),
        (0.5, "argnums must be int or Tuple[int, ...], got: <class 'float'>"),
        ((), "argnums must be non-empty"),
    ],
)
def test_argnums_errors(argnums, msg, x):
    with pytest.raises(RuntimeError) as e:
        grad(lambda a: a.sum(), argnums=argnums)(x)
    assert str(e.value) == msg


def test_grad_output_errors(x):
    with pytest.raises(RuntimeError) as e:
        grad(lambda a: a)(x)
    assert str(e.value) == (
        "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
        "1 dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
    )
    with pytest.raises(RuntimeError) as e:
        grad(lambda a: 3)(x)
    assert str(e.value) == (
        "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'int'>"
    )
    with pytest.raises(RuntimeError) as e:
        grad(lambda a: a.sum(), has_aux=True)(x)
    assert str(e.value) == (
        "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if "
        "has_aux is True"
    )
    with pytest.raises(RuntimeError) as e:
        grad(lambda a: (a.sum(), 1), has_aux=True)(x)
    assert str(e.value) == "Expected tensors, got unsupported type <class 'int'>"


def test_grad_input_errors():
    with pytest.raises(ValueError) as e:
        grad(lambda a: a.sum())(3.0)
    assert str(e.value) == "Thing passed to transform API must be Tensor, got <class 'float'>"
    with pytest.raises(
        RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"
    ):
        grad(lambda a: a.sum())(tp.ones(3, dtype=tp.int64))


def test_vjp_errors(x):
    _, fn = vjp(lambda v: (v.sin(), v.cos()), x)
    with pytest.raises(RuntimeError) as e:
        fn(tp.randn(3))
    assert str(e.value).startswith(
        "Expected pytree structure of cotangents to be the same as pytree structure of outputs "
        "to the function. cotangents: PyTreeSpec(*), primal output: PyTreeSpec((*, *))"
    )
    with pytest.raises(RuntimeError) as e:
        fn((tp.randn(2), tp.randn(3)))
    assert str(e.value) == (
        "Mismatch in shape: grad_output[0] has a shape of [2] and output[0] has a shape of [3]."
    )
    for call in (lambda: vjp(lambda v: 3, x), lambda: jacrev(lambda v: 3)(x)):
        with pytest.raises(RuntimeError) as e:
            call()
        assert str(e.value) == (
            "vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported type "
            "<class 'int'>"
        )


# --- functional_call ------------------------------------------------------------------------------


def test_functional_call_swaps_parameters_and_buffers_for_one_call():
    tp.manual_seed(0)
    model = tp.nn.Linear(3, 2)
    model.register_buffer("offset", tp.zeros(2))
    model.forward = lambda x: x @ model.weight.T + model.bias + model.offset  # type: ignore[method-assign]
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    w, b, off = tp.ones(2, 3), tp.zeros(2), tp.full([2], 10.0)
    x = tp.randn(4, 3)
    out = functional_call(model, {"weight": w, "bias": b, "offset": off}, (x,))
    close(out, x.numpy() @ np.ones((3, 2)) + 10.0)
    out2 = functional_call(model, ({"weight": w}, {"bias": b}), x)  # a single arg, two dicts
    close(out2, x.numpy() @ np.ones((3, 2)))
    for k, v in model.state_dict().items():
        close(v, before[k].numpy())
    assert [n for n, _ in model.named_parameters()] == ["weight", "bias"]
    close(model(x), x.numpy() @ before["weight"].numpy().T + before["bias"].numpy())


def test_functional_call_ties_shared_parameters():
    lin = tp.nn.Linear(2, 2, bias=False)
    model = tp.nn.Sequential(lin, lin)
    w = tp.eye(2) * 2
    out = functional_call(model, {"0.weight": w}, (tp.ones(2),))
    close(out, [4.0, 4.0])
    with pytest.raises(ValueError) as e:
        functional_call(model, {"0.weight": w, "1.weight": w * 1}, (tp.ones(2),))
    assert str(e.value) == (
        "functional_call got multiple values for keys ['0.weight', '1.weight'], which are tied. "
        "Consider using tie_weights=False"
    )


def test_functional_call_errors():
    model = tp.nn.Linear(2, 2)
    with pytest.raises(RuntimeError) as e:
        functional_call(model, {"weight": tp.ones(2, 2)}, (tp.ones(2),), strict=True)
    assert str(e.value) == "Error(s) in reparametrizing for Linear:\n\tMissing key(s): 'bias'."
    with pytest.raises(ValueError) as e:
        functional_call(
            model, ({"weight": tp.ones(2, 2)}, {"weight": tp.ones(2, 2)}), (tp.ones(2),)
        )
    assert str(e.value) == (
        "['weight'] appeared in multiple dictionaries; behavior of functional call is ambiguous"
    )
    with pytest.raises(ValueError) as e:
        functional_call(model, 3, (tp.ones(2),))
    assert str(e.value) == (
        "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
        "<class 'int'>"
    )
