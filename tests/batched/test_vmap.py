"""tp.vmap's semantics (torch.func.vmap, PyTorch 2.13) against Python loops: in_dims/out_dims
pytrees, negative dims, nesting, chunks, views, autograd through a vmapped computation; and
every error with PyTorch's message."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorplug as tp
from tests.needs import needs_autograd

pytest.importorskip("tensorplug_batched")
if "batched" not in tp.plugins.loaded_names():
    pytest.skip("needs the tensorplug-batched plugin loaded", allow_module_level=True)

from tensorplug_batched.batched import BatchedTensor  # noqa: E402


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a.tolist()), np.asarray(b.tolist()), rtol=tol, atol=tol)


def loop(f, *xs, dim=0):
    return tp.stack([f(*(x.select(dim, i) for x in xs)) for i in range(xs[0].shape[dim])])


@pytest.fixture
def x():
    tp.manual_seed(0)
    return tp.randn(3, 4, 5)


def test_tp_vmap_is_tp_func_vmap():
    assert tp.vmap is tp.func.vmap


def test_in_dims_match_a_loop(x):
    f = lambda a: (a.exp() * 2).sum(-1)
    close(tp.vmap(f)(x), loop(f, x))
    close(tp.vmap(f, in_dims=1)(x), loop(f, x, dim=1))
    close(tp.vmap(f, in_dims=-1)(x), loop(f, x, dim=2))
    close(tp.vmap(f, in_dims=-3)(x), loop(f, x))


def test_unmapped_inputs_and_kwargs(x):
    w = tp.randn(5)
    got = tp.vmap(lambda a, b, scale=1.0: (a * b) * scale, in_dims=(0, None))(x, w, scale=2.0)
    close(got, loop(lambda a: a * w * 2.0, x))


def test_pytree_inputs_and_outputs(x):
    y = tp.randn(5, 4)
    out = tp.vmap(
        lambda d: {"sum": d["a"] + d["b"][0], "parts": (d["a"],)},
        in_dims=({"a": 0, "b": [2]},),
    )({"a": x, "b": [tp.randn(4, 5, 3)]})
    assert set(out) == {"sum", "parts"} and out["sum"].shape == (3, 4, 5)
    close(out["parts"][0], x)
    a, s = tp.vmap(lambda r: (r, r.sum()), out_dims=(1, 0))(y)
    assert a.shape == (4, 5) and s.shape == (5,)
    close(a, y.T)
    close(tp.vmap(lambda r: r, out_dims=-1)(y), y.T)


def test_none_inputs_are_empty_nodes(x):
    got = tp.vmap(lambda a, nothing: a.sum(), in_dims=(0, 0))(x, None)
    close(got, loop(lambda a: a.sum(), x))


def test_outputs_that_do_not_depend_on_the_batch(x):
    out = tp.vmap(lambda a: tp.ones(2))(x)
    assert out.shape == (3, 2)
    s, c = tp.vmap(lambda a: (a.sum(), tp.ones(2)), out_dims=(0, None))(x)
    assert s.shape == (3,) and c.shape == (2,)


def test_nested_vmap_has_a_level_per_vmap(x):
    seen = []

    def inner(row):
        seen.append((type(row), row.level))
        return row.sum() + 1

    def outer(m):
        seen.append((type(m), m.level))
        return tp.vmap(inner)(m)

    got = tp.vmap(outer)(x)
    close(got, loop(lambda m: loop(lambda r: r.sum() + 1, m), x))
    (t0, l0), (t1, l1) = seen
    assert t0 is BatchedTensor and t1 is BatchedTensor and l1 > l0


def test_nested_vmap_mixes_levels(x):
    # the inner function closes over a tensor batched at the outer level only
    got = tp.vmap(lambda m: tp.vmap(lambda r: r * m.sum())(m))(x)
    close(got, loop(lambda m: m * m.sum(), x))
    # in_dims at both levels: outer over dim 2, inner over dim 1 of what is left
    got = tp.vmap(tp.vmap(lambda v: v * 2, in_dims=1), in_dims=2)(x)
    close(got, x.permute([2, 1, 0]) * 2)


def test_chunk_size_gives_the_same_result(x):
    f = lambda a: (a**2).sum(0)
    close(tp.vmap(f, chunk_size=2)(x), tp.vmap(f)(x))
    close(tp.vmap(f, in_dims=1, out_dims=1, chunk_size=3)(x), tp.vmap(f, in_dims=1, out_dims=1)(x))


def test_batched_tensor_repr_and_metadata():
    seen = {}

    def f(a):
        seen["repr"] = repr(a)
        seen["shape"] = a.shape
        return a

    tp.vmap(f)(tp.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert seen["shape"] == (2,)
    assert re.fullmatch(
        r"BatchedTensor\(lvl=\d+, bdim=0, value=\n    tensor\(\[\[1\., 2\.\],\n"
        r"            \[3\., 4\.\]\]\)\n\)",
        seen["repr"],
    )


def test_views_stay_views():
    z = tp.zeros(3, 4)
    tp.vmap(lambda r: r[1:].add_(1))(z)
    assert z.tolist() == [[0.0, 1.0, 1.0, 1.0]] * 3
    z = tp.zeros(3, 4)
    tp.vmap(lambda r: r.view(2, 2)[0].fill_(5.0))(z)
    assert z.tolist() == [[5.0, 5.0, 0.0, 0.0]] * 3
    z = tp.zeros(4, 3)  # batch along dim 1
    tp.vmap(lambda col: col.unsqueeze(0).transpose(0, 1)[2].mul_(0).add_(7), in_dims=1)(z)
    assert z.tolist()[2] == [7.0, 7.0, 7.0] and z.tolist()[0] == [0.0, 0.0, 0.0]


def test_inplace_into_a_batched_tensor(x):
    y = x.clone()
    tp.vmap(lambda a: a.mul_(2).add_(1))(y)
    close(y, x * 2 + 1)


def test_python_operators_of_batched_tensors(x):
    # Note [Operators of batched tensors]: tensors, batched tensors and numbers take a fast
    # path, everything else Tensor's operators; each against a loop, dtype included
    w, v, b = tp.randn(5, 2), tp.randn(5), tp.randn(5)
    xi = tp.arange(60).reshape(3, 4, 5)
    cases = [
        lambda r, s: r + b, lambda r, s: r + s, lambda r, s: r - s, lambda r, s: r * s,
        lambda r, s: r / s, lambda r, s: r @ w.to(r.dtype), lambda r, s: r @ v.to(r.dtype),
        lambda r, s: r[0] @ s.mT, lambda r, s: r + 2, lambda r, s: r - 2.5, lambda r, s: r * 2, lambda r, s: r / 4,
        lambda r, s: 2 + r, lambda r, s: 2.5 - r, lambda r, s: 3 * r, lambda r, s: 1 / r,
        lambda r, s: r + True, lambda r, s: r * np.float64(2.0), lambda r, s: r + tp.nn.Parameter(b),
        lambda r, s: -r, lambda r, s: r ** 2, lambda r, s: r > s, lambda r, s: b - r,
    ]  # fmt: skip
    for f in cases:
        for a in (x, xi):
            got = tp.vmap(f)(a, a.flip(0))
            want = loop(f, a, a.flip(0))
            assert got.dtype is want.dtype
            close(got, want)
    nested = tp.vmap(tp.vmap(lambda r, s: (r + s) @ v - 1))(x, x)
    close(nested, tp.stack([loop(lambda r, s: (r + s) @ v - 1, x[i], x[i]) for i in range(3)]))
    with pytest.raises(TypeError):
        tp.vmap(lambda r: r + "a")(x)


def test_fast_rules_show_their_calls_in_a_dispatch_trace(x):
    # Note [Rules call kernels directly]: the call on the value is traced as a dispatch step
    w, b = tp.randn(5, 2), tp.randn(5)
    texts = []

    def f(r):
        for op, args in ((tp.ops.aten.relu.default, (r,)), (tp.ops.aten.add.Tensor, (r, b)),
                         (tp.ops.aten.matmul.default, (r, w))):  # fmt: skip
            texts.append(tp.dispatcher.explain(op, *args))
        return r

    tp.vmap(f, in_dims=1)(x)
    for text in texts:
        steps = text.split("dispatch steps when run:")[1]
        assert "-> Batched" in steps and "-> CPU" in steps, text


def test_rule_passes_down_when_nothing_is_batched():
    a, b = tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0])
    with tp.dispatch.include("Batched"):
        assert tp.add(a, b).tolist() == [4.0, 6.0]
        assert tp.sum(a).item() == 3.0
        assert type(tp.ops.aten.unsqueeze.default(a, 0)) is tp.Tensor


@needs_autograd
def test_backward_of_a_vmapped_computation():
    tp.manual_seed(1)
    y = tp.randn(4, 5)
    w = tp.randn(5, requires_grad=True)
    tp.vmap(lambda r: (r * w).sum().tanh())(y).sum().backward()
    t = np.tanh(y.numpy() @ w.detach().numpy())
    np.testing.assert_allclose(w.grad.numpy(), ((1 - t**2)[:, None] * y.numpy()).sum(0), rtol=1e-5)
    xx = y.clone().requires_grad_()
    inside = []
    tp.vmap(lambda r: inside.append(r.requires_grad) or r.exp().sum())(xx).sum().backward()
    np.testing.assert_allclose(xx.grad.numpy(), np.exp(y.numpy()), rtol=1e-5)
    assert inside == [True]


# --- errors, with PyTorch 2.13's messages --------------------------------------------------------


def test_batch_size_mismatch():
    with pytest.raises(ValueError) as e:
        tp.vmap(tp.add)(tp.randn(3, 4), tp.randn(5, 4))
    assert str(e.value) == (
        "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
        "[3, 5] for the mapped dimension"
    )


def test_no_batched_input():
    with pytest.raises(ValueError, match="^vmap: Expected at least one Tensor to vmap over$"):
        tp.vmap(tp.sin, in_dims=(None,))(tp.randn(3))


def test_no_inputs():
    with pytest.raises(ValueError) as e:
        tp.vmap(tp.sin)()
    assert str(e.value) == (
        "vmap(sin)(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
        "to vmap over a function with no inputs. The latter is unsupported."
    )


@pytest.mark.parametrize(("in_dims", "kind"), [(None, "NoneType"), ("a", "str"), ([0], "list")])
def test_in_dims_type(in_dims, kind):
    with pytest.raises(ValueError) as e:
        tp.vmap(tp.sin, in_dims=in_dims)(tp.randn(3))
    assert str(e.value) == (
        f"vmap(sin, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
        f"(potentially nested) tuple matching the structure of inputs, got: <class '{kind}'>."
    )


def test_in_dims_structure():
    with pytest.raises(ValueError) as e:
        tp.vmap(tp.sin, in_dims=(0, 0))(tp.randn(3))
    assert str(e.value).startswith(
        "vmap(sin, in_dims=(0, 0), ...)(<inputs>): in_dims is not compatible with the structure "
        "of `inputs`. in_dims has structure PyTreeSpec((*, *)"
    )


def test_in_dim_values():
    x = tp.randn(3, 4)
    with pytest.raises(ValueError) as e:
        tp.vmap(tp.sin, in_dims=(0.5,))(x)
    assert str(e.value) == (
        "vmap(sin, in_dims=(0.5,), ...)(<inputs>): Got in_dim=0.5 for an input but in_dim must "
        "be either an integer dimension or None."
    )
    for d in (2, -3):
        with pytest.raises(ValueError) as e:
            tp.vmap(tp.sin, in_dims=d)(x)
        assert str(e.value) == (
            f"vmap(sin, in_dims={d}, ...)(<inputs>): Got in_dim={d} for some input, but that "
            "input is a Tensor of dimensionality 2 so expected in_dim to satisfy -2 <= in_dim < 2."
        )
    with pytest.raises(ValueError) as e:
        tp.vmap(lambda a, b: a, in_dims=(0, 0))(x, 3)
    assert str(e.value) == (
        "vmap(<lambda>, in_dims=(0, 0), ...)(<inputs>): Got in_dim=0 for an input but the input "
        "is of type <class 'int'>. We cannot vmap over non-Tensor arguments, please use None as "
        "the respective in_dim"
    )


def test_out_dims_errors():
    x = tp.randn(3, 4)
    with pytest.raises(ValueError) as e:
        tp.vmap(tp.sin, out_dims="a")(x)
    assert str(e.value) == (
        "vmap(sin, ..., out_dims=a): `out_dims` must be an int, None or a python collection of "
        "ints representing where in the outputs the vmapped dimension should appear."
    )
    with pytest.raises(ValueError) as e:
        tp.vmap(tp.sin, out_dims=(0, 0))(x)
    assert str(e.value).startswith(
        "vmap(sin, ..., out_dims=(0, 0))(<inputs>): out_dims is not compatible with the "
        "structure of `outputs`. out_dims has structure PyTreeSpec((*, *)"
    )
    with pytest.raises(
        IndexError,
        match=re.escape("Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ):
        tp.vmap(tp.sin, out_dims=2)(x)
    with pytest.raises(ValueError) as e:
        tp.vmap(tp.sin, out_dims=None)(x)
    assert (
        str(e.value) == "vmap(sin, ...): `sin` can not return a BatchedTensor when out_dim is None"
    )


def test_non_tensor_output():
    with pytest.raises(ValueError) as e:
        tp.vmap(lambda a: (a, 3))(tp.randn(3))
    assert str(e.value) == (
        "vmap(<lambda>, ...): `<lambda>` must only return Tensors, got type <class 'int'>. "
        "Did you mean to set out_dims= to None for output?"
    )
    assert tp.vmap(lambda a: (a, 3), out_dims=(0, None))(tp.randn(3))[1] == 3


def test_randomness_and_chunk_size_arguments():
    with pytest.raises(RuntimeError) as e:
        tp.vmap(tp.sin, randomness="bad")
    assert str(e.value) == (
        "Only allowed values for randomness are 'error', 'different', or 'same'. Got bad"
    )
    with pytest.raises(ValueError) as e:
        tp.vmap(tp.sin, chunk_size=0)
    assert str(e.value) == "vmap: chunk_size should be None or greater than 0. (got 0)"


ITEM = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
    ".item() on a Tensor, please try to rewrite what you're doing with other operations. If "
    "error is occurring somewhere inside PyTorch internals, please file a bug report."
)


@pytest.mark.parametrize("read", [lambda a: a.sum().item(), lambda a: float(a.sum())])
def test_item_inside_vmap(read):
    with pytest.raises(RuntimeError) as e:
        tp.vmap(read)(tp.randn(3, 4))
    assert str(e.value) == ITEM


def test_data_dependent_control_flow():
    with pytest.raises(RuntimeError) as e:
        tp.vmap(lambda a: a if a.sum() > 0 else -a)(tp.randn(3, 4))
    assert str(e.value) == (
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
        "flow. We don't support that yet, please file an issue at "
        "https://github.com/pytorch/pytorch/issues ."
    )


@pytest.mark.parametrize("read", [lambda a: a.tolist(), lambda a: a.numpy(), np.asarray])
def test_reading_a_batched_tensors_data(read):
    msg = "Cannot access data pointer of Tensor that doesn't have storage"
    with pytest.raises(RuntimeError, match=msg):
        tp.vmap(lambda a: read(a) and a)(tp.randn(3, 4))


INPLACE = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor "
    "`other` in extra_args that has more elements than `self`. This happened due to `other` "
    "being vmapped over but `self` not being vmapped over in a vmap. Please try to use "
    "out-of-place operators instead of inplace arithmetic. If said operator is being called "
    "inside the PyTorch framework, please file a bug report instead."
)


@pytest.mark.parametrize(
    ("name", "write"),
    [
        ("aten::add_.Tensor", lambda b, a: b.add_(a)),
        ("aten::copy_.default", lambda b, a: b.copy_(a)),
        ("aten::copy_.default", lambda b, a: b.__setitem__(0, a[0])),
        ("aten::index_put_.default", lambda b, a: b.__setitem__(tp.tensor([0, 1]), a[:2])),
        ("aten::scatter_.src", lambda b, a: b.scatter_(0, tp.tensor([0, 1]), a[:2])),
    ],
)
def test_writing_a_batched_value_into_an_unbatched_tensor(name, write):
    def f(a):
        b = tp.zeros(4)
        write(b, a)
        return b

    with pytest.raises(RuntimeError) as e:
        tp.vmap(f)(tp.randn(3, 4))
    assert str(e.value) == f"{INPLACE} ({name})"


def test_dynamic_shapes_are_refused():
    with pytest.raises(RuntimeError) as e:
        tp.vmap(lambda a: a.nonzero())(tp.randn(3, 4))
    assert str(e.value) == (
        "vmap: We do not support batching operators that can output dynamic shape. Attempted "
        "to vmap over aten::nonzero.default. Please file an issue at "
        "https://github.com/pytorch/pytorch/issues if you need this feature."
    )
    with pytest.raises(RuntimeError) as e:
        tp.vmap(lambda a: a[a > 0])(tp.randn(3, 4))
    assert str(e.value) == (
        "vmap: We do not support batching operators that can support dynamic shape. Attempting "
        "to batch over indexing with a boolean mask."
    )


def test_out_variants():
    a, b = tp.randn(3, 4), tp.randn(4)
    out = tp.zeros(3, 4)
    r = tp.vmap(lambda x, o: tp.add(x, b, out=o))(a, out)
    close(out, a + b)
    close(r, a + b)
    with pytest.raises(RuntimeError, match=r"^vmap: inplace arithmetic.*\(aten::copy_.default\)$"):
        tp.vmap(lambda x: tp.mul(x, b, out=tp.zeros(4)))(a)


@pytest.mark.skipif("foo" not in tp.plugins.loaded_names(), reason="needs the example foo backend")
def test_vmap_on_the_foo_backend():
    x, w = tp.randn(3, 4, device="foo"), tp.randn(4, 2, device="foo")
    got = tp.vmap(lambda r: tp.relu(r @ w).sum())(x)
    assert got.device == tp.device("foo")
    close(got, tp.relu(x @ w).sum(1))


@pytest.mark.skipif("tracer" not in tp.plugins.loaded_names(), reason="needs tensorplug-tracer")
def test_vmap_and_the_tracer():
    w = tp.randn(3, 2)

    def f(x):
        return (x @ w).relu().sum()

    xs = tp.randn(5, 3)
    want = tp.stack([f(xs[i]) for i in range(5)])
    g = tp.tracer.trace(f, tp.randn(3))  # a graph of one sample, replayed under vmap
    close(tp.vmap(g)(xs), want)
    traced = tp.tracer.trace(lambda x: tp.vmap(f)(x), xs)  # records the batched computation
    close(traced(xs * 2), tp.vmap(f)(xs * 2))
    compiled = tp.compile(lambda x: tp.vmap(f)(x))
    for _ in range(3):  # traced, confirmed, then lowered
        close(compiled(xs), want)


@pytest.mark.skipif("autocast" not in tp.plugins.loaded_names(), reason="needs tensorplug-autocast")
def test_vmap_under_autocast_matches_the_loop():
    x, w = tp.randn(4, 3), tp.randn(3, 2)
    f = lambda row: tp.relu(row @ w).sum()
    with tp.autocast("cpu"):
        got = tp.vmap(f)(x)
        want = tp.stack([f(x[i]) for i in range(4)])
    assert got.dtype == want.dtype == tp.bfloat16  # matmul runs in lower precision
    close(got.float(), want.float(), 1e-2)
