"""Forward-mode AD (forward_ad.py, dual.py, forward.py, forward_formulas.py): tangents of
standard operators against central finite differences and against reverse mode, the formula
table against the double-vjp construction, PyTorch's ``forward_ad`` semantics (levels, views,
in-place ops, ``no_grad``, ``detach``) and errors, and committed values computed with torch
(tools/gen_forward_ad.py), compared with torch directly where it is importable."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()

from tensorplug_autograd import forward  # noqa: E402
from tensorplug_autograd.forward_formulas import FORWARD_FORMULAS  # noqa: E402

import tensorplug.autograd.forward_ad as fwAD  # noqa: E402

F = tp.nn.functional
DATA = json.loads((Path(__file__).parent / "data" / "forward_ad.json").read_text())


def t64(a):
    return tp.tensor(np.asarray(a, dtype=np.float64))


def jvp_of(fn, xs, vs):
    """(outputs, tangents) of ``fn`` at ``xs`` along ``vs`` with forward_ad."""
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, v) for x, v in zip(xs, vs, strict=True)]
        out = fn(*duals)
        outs = [out] if isinstance(out, tp.Tensor) else list(out)
        pairs = [fwAD.unpack_dual(o) for o in outs]
    return [p.primal for p in pairs], [p.tangent for p in pairs]


def finite_difference(fn, xs, vs, eps=1e-6):
    def at(s):
        out = fn(*[x + s * v for x, v in zip(xs, vs, strict=True)])
        return [out] if isinstance(out, tp.Tensor) else list(out)

    plus, minus = at(eps), at(-eps)
    return [
        (np.asarray(a.tolist()) - np.asarray(b.tolist())) / (2 * eps)
        for a, b in zip(plus, minus, strict=True)
    ]


def reverse_jvp(fn, xs, vs):
    """J v by reverse mode: one backward pass per output element."""
    ins = [x.detach().requires_grad_() for x in xs]
    out = fn(*ins)
    outs = [out] if isinstance(out, tp.Tensor) else list(out)
    res = []
    for o in outs:
        flat = o.reshape(-1)
        rows = []
        for j in range(flat.numel()):
            gs = tp.autograd.grad(flat[j], ins, retain_graph=True, allow_unused=True)
            rows.append(
                sum(float((g * v).sum()) for g, v in zip(gs, vs, strict=True) if g is not None)
            )
        res.append(np.asarray(rows).reshape(tuple(o.shape)))
    return res


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(
        np.asarray(a.tolist() if isinstance(a, tp.Tensor) else a), np.asarray(b), rtol=tol, atol=tol
    )


rng = np.random.default_rng(0)


def r(*shape):
    return t64(rng.standard_normal(shape))


def pos(*shape):
    return t64(rng.uniform(0.5, 2.0, shape))


IDX = tp.tensor([2, 0, 1])
MASK = tp.tensor([[True, False, True], [False, True, False]])

# name -> (function, inputs): every op family, views, in-place ops, several outputs
CASES = {
    "pointwise_unary": (
        lambda x: x.sin().exp() + x.tanh() * x.sigmoid() - x.abs().sqrt(),
        [r(2, 3)],
    ),
    "pointwise_binary_broadcast": (
        lambda x, y: x * y / (y * y + 1) - x.pow(2) + tp.maximum(x, y),
        [r(2, 3), r(3)],
    ),
    "pow_log_clamp": (lambda x, y: x.pow(y) + x.log() + x.clamp(0.7, 1.5), [pos(3), r(3)]),
    "where_masked_fill": (
        lambda x: tp.where(x > 0, x * 2, x.exp()) + x.masked_fill(MASK, 0.5),
        [r(2, 3)],
    ),
    "mm_addmm_matmul": (
        lambda a, b, c: tp.addmm(c, a, b) + (a @ b) * 2 + tp.mm(a, b).t().t(),
        [r(2, 3), r(3, 4), r(4)],
    ),
    "linear_relu_gelu": (
        lambda x, w, b: F.gelu(F.relu(F.linear(x, w, b))),
        [r(2, 3), r(4, 3), r(4)],
    ),
    "reductions": (
        lambda x: (x.sum(1), x.mean(0), x.var(1), x.std(0), tp.logsumexp(x, 1)),
        [r(3, 4)],
    ),
    "max_prod_amax": (lambda x: (x.max(1).values, x.prod(0), x.amax(1), x.cumsum(1)), [r(3, 4)]),
    "views_and_shape": (
        lambda x: (
            x.t().reshape(6)[1:5].view(2, 2).expand(3, 2, 2),
            x.permute(1, 0).unsqueeze(0).flip(2),
            x[1],
            x.select(1, 2),
        ),
        [r(2, 3)],
    ),
    "cat_stack_split": (
        lambda x, y: (tp.cat([x, y], 0), tp.stack([x, y]).sum(0), *x.split(1, 1), *y.unbind(0)),
        [r(2, 3), r(2, 3)],
    ),
    "indexing": (
        lambda x, y: (
            x[:, IDX],
            x.gather(1, IDX.expand(2, 3)),
            x.index_select(1, IDX),
            x.index_put((IDX[:2],), y),
        ),
        [r(3, 3), r(2, 3)],
    ),
    "softmax_losses": (
        lambda x: (
            F.softmax(x, 1),
            F.log_softmax(x, 0),
            F.cross_entropy(x, tp.tensor([0, 2])),
            F.mse_loss(x, x.flip(0)),
        ),
        [r(2, 3)],
    ),
    "bce_norm_double_vjp": (
        lambda x: (
            F.binary_cross_entropy(x.sigmoid(), tp.tensor([[0.0, 1.0, 1.0]]).expand(2, 3)),
            tp.linalg.vector_norm(x),
        ),
        [r(2, 3)],
    ),
    "inplace_inside": (lambda x, y: _inplace(x, y), [r(2, 3), r(2, 3)]),
    "sort_topk": (lambda x: (x.sort(1).values, x.topk(2, 1).values), [r(2, 4)]),
}


def _inplace(x, y):
    z = x * 1.0
    z.mul_(y)
    z.add_(x, alpha=2)
    z[0] = y[1] * 3
    z[:, 1].sin_()
    return z


@pytest.mark.parametrize("name", list(CASES))
def test_tangents_match_finite_differences_and_reverse_mode(name):
    fn, xs = CASES[name]
    vs = [r(*x.shape) for x in xs]
    outs, tangents = jvp_of(fn, xs, vs)
    expect_out = fn(*xs)
    expect_out = [expect_out] if isinstance(expect_out, tp.Tensor) else list(expect_out)
    for o, e in zip(outs, expect_out, strict=True):
        close(o, e.tolist(), 1e-12)
    fd = finite_difference(fn, xs, vs)
    rev = reverse_jvp(fn, xs, vs)
    for t, d, rv in zip(tangents, fd, rev, strict=True):
        assert t is not None
        close(t, d, 1e-5)
        close(t, rv, 1e-9)


@pytest.mark.parametrize(
    "name",
    [
        "pointwise_binary_broadcast",
        "mm_addmm_matmul",
        "reductions",
        "views_and_shape",
        "softmax_losses",
        "indexing",
    ],
)
def test_formulas_agree_with_the_double_vjp_construction(name, monkeypatch):
    fn, xs = CASES[name]
    vs = [r(*x.shape) for x in xs]
    _, with_formulas = jvp_of(fn, xs, vs)
    forward._RULES.clear()
    monkeypatch.setattr(forward, "FORWARD_FORMULAS", {})
    monkeypatch.setattr(forward, "elementwise_entry", lambda reverse: None)
    monkeypatch.setattr(forward, "_scalar", lambda o: False)
    try:
        _, by_double_vjp = jvp_of(fn, xs, vs)
    finally:
        forward._RULES.clear()
    for a, b in zip(with_formulas, by_double_vjp, strict=True):
        close(a, b.tolist(), 1e-10)


def test_formula_table_names_real_overloads():
    for name in FORWARD_FORMULAS:
        op = tp.dispatcher.find_op(f"aten::{name}")
        assert op is not None, name


def test_second_order_through_nested_levels_and_reverse():
    x = r(3)
    v = r(3)
    f = lambda x: (x.sin() * x).sum()  # noqa: E731
    # reverse over forward: d/dx <grad f, v> ... the tangent is differentiable
    xr = x.detach().requires_grad_()
    with fwAD.dual_level():
        t = fwAD.unpack_dual(f(fwAD.make_dual(xr, v))).tangent
    (g,) = tp.autograd.grad(t, xr)
    hess = np.diag(2 * np.cos(x.numpy()) - x.numpy() * np.sin(x.numpy()))
    close(g, hess @ v.numpy(), 1e-10)
    # forward over reverse: the gradient's tangent
    with fwAD.dual_level():
        d = fwAD.make_dual(xr, v)
        (gd,) = tp.autograd.grad(f(d), d, create_graph=True)
        close(fwAD.unpack_dual(gd).tangent, hess @ v.numpy(), 1e-10)


def test_no_grad_keeps_forward_mode_and_detach_drops_it():
    x, v = r(3), r(3)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        with tp.no_grad():
            close(fwAD.unpack_dual(d * 3).tangent, (v * 3).tolist())
        assert fwAD.unpack_dual(d.detach()).tangent is None
        assert fwAD.unpack_dual(x).tangent is None  # make_dual returns a view; x stays plain


def test_in_place_ops_follow_pytorch():
    x, v = r(3), tp.ones(3, dtype=tp.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        y = d * 2
        y.add_(d)
        close(fwAD.unpack_dual(y).tangent, [3.0, 3.0, 3.0])
        z = x.clone()
        z.mul_(d)  # a plain tensor becomes dual
        close(fwAD.unpack_dual(z).tangent, x.tolist())
        w = tp.zeros(3, 2, dtype=tp.float64)
        w[:, 0] = d  # the base of the written view takes the tangent
        close(fwAD.unpack_dual(w).tangent, [[1, 0], [1, 0], [1, 0]])
        u = d * 1
        u.copy_(x)  # overwritten by a constant: tangent zero
        close(fwAD.unpack_dual(u).tangent, [0, 0, 0])
        e = fwAD.make_dual(tp.zeros(3, dtype=tp.float64), tp.ones(3, dtype=tp.float64))
        e[1] = 5.0  # fill_ of a view: a constant there
        close(fwAD.unpack_dual(e).tangent, [1, 0, 1])
        s = d + 0  # the tangent is the output's own: changing it leaves d's alone
        s.mul_(5)
        close(fwAD.unpack_dual(d).tangent, [1, 1, 1])


def test_leaving_the_level_drops_tangents_and_the_key():
    x, v = r(3), r(3)
    with fwAD.dual_level():
        y = fwAD.make_dual(x, v).exp()
        assert y.tp_keyset & tp.keys.get("ForwardAD").mask
    assert not y.tp_keyset & tp.keys.get("ForwardAD").mask
    assert fwAD.unpack_dual(y).tangent is None
    with fwAD.dual_level() as level:
        assert fwAD.unpack_dual(y, level=level).tangent is None


def test_unpack_dual_is_a_named_tuple_and_repr_shows_the_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(tp.ones(2), tp.zeros(2))
        u = fwAD.unpack_dual(d)
        assert type(u).__name__ == "UnpackedDualTensor" and u._fields == ("primal", "tangent")
        assert "tangent=tensor([0., 0.])" in repr(d)


def test_integer_outputs_and_comparisons_have_no_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(r(4), r(4))
        assert fwAD.unpack_dual(d.argmax()).tangent is None
        assert fwAD.unpack_dual(d > 0).tangent is None


def test_custom_op_uses_the_double_vjp_construction():
    with tp.Library("fwdtest", "DEF") as lib:
        lib.define("cube(Tensor x) -> Tensor")
        lib.impl("cube", lambda x: tp.tensor(np.asarray(x.tolist()) ** 3, dtype=x.dtype), "CPU")

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

        tp.library.register_autograd(
            "fwdtest::cube", backward, setup_context=setup_context, lib=lib
        )
        x, v = r(3), r(3)
        with fwAD.dual_level():
            t = fwAD.unpack_dual(tp.ops.fwdtest.cube(fwAD.make_dual(x, v))).tangent
        close(t, (3 * x.numpy() ** 2 * v.numpy()))
        lib.define("nograd(Tensor x) -> Tensor")
        lib.impl("nograd", lambda x: tp.tensor(x.tolist(), dtype=x.dtype), "CPU")
        lib.impl("nograd", tp.autograd.autograd_not_implemented_fallback(), "Autograd")
        with fwAD.dual_level(), pytest.raises(RuntimeError, match="fwdtest::nograd"):
            tp.ops.fwdtest.nograd(fwAD.make_dual(x, v))


# --- errors, with PyTorch's messages -------------------------------------------------------------


def test_errors():
    x = r(3)
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(
            RuntimeError,
            match=r"Tensor is of size \[3\] while the given forward gradient is of size \[4\]",
        ):
            fwAD.make_dual(x, r(4))
        with pytest.raises(
            ValueError, match="Expected primal to be floating point or complex, but got"
        ):
            fwAD.make_dual(tp.tensor([1, 2]), tp.tensor([1, 2]))
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fwAD.make_dual(x, tp.tensor([1, 2, 3]))
        with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
            fwAD.make_dual(x, x, level=5)
        with pytest.raises(RuntimeError, match="Invalid level given to _fw_primal"):
            fwAD.unpack_dual(x, level=5)
        d = fwAD.make_dual(x, x)
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same level"):
            fwAD.make_dual(d, x)
        with pytest.raises(
            RuntimeError, match="out=... arguments don't support automatic differentiation"
        ):
            tp.add(d, d, out=tp.empty(3, dtype=tp.float64))
        with pytest.raises(RuntimeError, match="not the last one that was created"):
            fwAD.exit_dual_level(level=3)
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()


# --- against torch -----------------------------------------------------------------------------------


def _tp_inputs(case):
    return [t64(x) for x in case["inputs"]], [t64(v) for v in case["tangents"]]


@pytest.mark.parametrize("name", list(DATA))
def test_committed_torch_values(name):
    case = DATA[name]
    fn = eval(case["expr"], {"T": tp})  # noqa: S307  (the committed text of our generator)
    xs, vs = _tp_inputs(case)
    (out,), (tan,) = jvp_of(fn, xs, vs)
    close(out, case["jvp_out"], 1e-10)
    close(tan, case["jvp_tangent"], 1e-10)


@pytest.mark.parametrize(
    "name", ["pointwise_binary_broadcast", "mm_addmm_matmul", "softmax_losses", "inplace_inside"]
)
def test_against_torch_forward_ad(name):
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfwAD

    fn, xs = CASES[name]
    vs = [r(*x.shape) for x in xs]
    _, ours = jvp_of(fn, xs, vs)
    tfn = eval(
        _TORCH_CASES[name],
        {
            "torch": torch,
            "F": torch.nn.functional,
            "IDX": torch.tensor([2, 0, 1]),
            "_inplace": _torch_inplace,
        },
    )  # noqa: S307
    with tfwAD.dual_level():
        duals = [
            tfwAD.make_dual(
                torch.tensor(np.asarray(x.tolist())), torch.tensor(np.asarray(v.tolist()))
            )
            for x, v in zip(xs, vs, strict=True)
        ]
        out = tfn(*duals)
        outs = [out] if isinstance(out, torch.Tensor) else list(out)
        theirs = [tfwAD.unpack_dual(o).tangent.numpy() for o in outs]
    for a, b in zip(ours, theirs, strict=True):
        close(a, b, 1e-10)


def _torch_inplace(x, y):
    z = x * 1.0
    z.mul_(y)
    z.add_(x, alpha=2)
    z[0] = y[1] * 3
    z[:, 1].sin_()
    return z


_TORCH_CASES = {
    "pointwise_binary_broadcast": "lambda x, y: x * y / (y * y + 1) - x.pow(2) + torch.maximum(x, y)",
    "mm_addmm_matmul": "lambda a, b, c: torch.addmm(c, a, b) + (a @ b) * 2 + torch.mm(a, b).t().t()",
    "softmax_losses": "lambda x: (F.softmax(x, 1), F.log_softmax(x, 0), F.cross_entropy(x, torch.tensor([0, 2])), F.mse_loss(x, x.flip(0)))",
    "inplace_inside": "lambda x, y: _inplace(x, y)",
}


def test_scalar_outputs_use_the_gradient_once(monkeypatch):
    """Note [Scalar outputs]: a full reduction without a formula runs its reverse formula once,
    never the double-vjp construction, and agrees with it."""
    x, v = pos(2, 3), r(2, 3)
    fns = [lambda x: x.prod(), lambda x: x.amax(), lambda x: tp.linalg.vector_norm(x)]
    got = [jvp_of(f, [x], [v])[1][0] for f in fns]
    calls = []
    monkeypatch.setattr(forward, "double_vjp", lambda *a: calls.append(a) or [None])
    forward._RULES.clear()
    for f, t in zip(fns, got, strict=True):
        close(jvp_of(f, [x], [v])[1][0], t.tolist(), 1e-12)
        close(t, finite_difference(f, [x], [v])[0], 1e-5)
    assert calls == []


def test_the_submodules_import_as_in_pytorch_and_leave_with_the_plugin():
    import sys

    import tensorplug.autograd.functional as functional

    assert fwAD is tp.autograd.forward_ad and functional is tp.autograd.functional
    with needs.unloaded("autograd"):
        assert "tensorplug.autograd.forward_ad" not in sys.modules
        with pytest.raises(tp.MissingPluginError, match="tensorplug-autograd"):
            import tensorplug.autograd.forward_ad  # noqa: F401
    assert sys.modules["tensorplug.autograd.forward_ad"] is tp.autograd.forward_ad
