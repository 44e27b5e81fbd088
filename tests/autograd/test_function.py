"""tp.autograd.Function (the examples of PyTorch's "Extending torch.autograd" note), and
derivatives of custom operators: autograd_not_implemented_fallback, the tutorial's Autograd
kernel pattern, tp.library.register_autograd, and the default for ops without a derivative."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()


def t64(values, requires_grad=True):
    return tp.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


class LinearFunction(tp.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output) if hasattr(output, "expand_as") else bias
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(tp.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class Exp(tp.autograd.Function):  # the setup_context style
    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


def test_linear_function_matches_gradcheck_and_ops():
    rng = np.random.default_rng(0)
    x = t64(rng.standard_normal((4, 3)))
    w = t64(rng.standard_normal((2, 3)))
    b = t64(rng.standard_normal(2))
    out = LinearFunction.apply(x, w, b)
    assert out.grad_fn.name() == "LinearFunctionBackward"
    out.sum().backward()
    gx, gw, gb = x.grad, w.grad, b.grad
    x.grad = w.grad = b.grad = None
    (x.mm(w.t()) + b).sum().backward()
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy())
    np.testing.assert_allclose(gw.numpy(), w.grad.numpy())
    np.testing.assert_allclose(gb.numpy(), b.grad.numpy())
    assert tp.autograd.gradcheck(LinearFunction.apply, (x, w, b))


def test_needs_input_grad_and_mul_constant():
    x = t64([1.0, 2.0])
    seen = {}

    class Probe(tp.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["needs"] = ctx.needs_input_grad
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    Probe.apply(x, tp.ones([2], dtype=tp.float64), 3)
    assert seen["needs"] == (True, False, False)
    y = MulConstant.apply(x, 5.0)
    assert y.grad_fn.name() == "MulConstantBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


def test_setup_context_style_and_double_backward():
    x = t64([0.5, 1.0])
    y = Exp.apply(x)
    (g,) = tp.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), np.exp([0.5, 1.0]))
    (gg,) = tp.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.exp([0.5, 1.0]))


def test_function_without_grad_records_nothing():
    x = tp.ones([2], dtype=tp.float64)
    assert MulConstant.apply(x, 2.0).grad_fn is None
    with tp.no_grad():
        assert MulConstant.apply(t64([1.0]), 2.0).grad_fn is None


def test_saved_tensors_check_versions_and_free():
    x = t64([1.0, 2.0])
    h = x * 1
    y = Exp.apply(h)
    y.mul_(2)
    with pytest.raises(
        RuntimeError, match="output 0 of ExpBackward, is at version 1; expected version 0"
    ):
        y.sum().backward()
    z = Exp.apply(x * 1).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        z.backward()


def test_mark_non_differentiable_and_materialize_grads():
    class SortWithIndex(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, indices = x.max(0)
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(indices)
            ctx.n = x.shape[0]
            return values, indices

        @staticmethod
        def backward(ctx, g_values, g_indices):
            assert g_indices is not None  # materialized zeros
            (idx,) = ctx.saved_tensors
            grad = tp.zeros([ctx.n], dtype=g_values.dtype)
            grad[idx.item()] = g_values
            return grad

    x = t64([1.0, 5.0, 2.0])
    values, indices = SortWithIndex.apply(x)
    assert values.requires_grad and not indices.requires_grad
    values.backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1.0, 0.0])

    class NoMaterialize(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            assert gb is None
            return ga * 2

    z = t64([1.0])
    a, _ = NoMaterialize.apply(z)
    a.sum().backward()
    assert z.grad.item() == 2.0


def test_mark_dirty():
    class AddOneInPlace(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = t64([1.0, 2.0])
    y = x * 2
    out = AddOneInPlace.apply(y)
    assert out is y and y.grad_fn.name() == "AddOneInPlaceBackward"
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * (2 * np.array([1.0, 2.0]) + 1))


def test_wrong_number_of_gradients():
    class Bad(tp.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    x = t64([1.0])
    with pytest.raises(
        RuntimeError,
        match="function BadBackward returned an incorrect number of gradients \\(expected 2, got 1\\)",
    ):
        Bad.apply(x, x).sum().backward()


def test_function_cannot_be_instantiated():
    with pytest.raises(RuntimeError, match=r"call MulConstant.apply\(\.\.\.\)"):
        MulConstant()


# --- custom operators -------------------------------------------------------------------------


def _numpy_sin(x):
    return tp.tensor(np.sin(x.detach().numpy()), dtype=x.dtype)


def test_custom_op_without_derivative_fails_on_backward_naming_it(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("mysin(Tensor x) -> Tensor")
        lib.impl("mysin", _numpy_sin, "CPU")
        x = t64([0.5])
        y = getattr(tp.ops, ns).mysin(x)
        assert y.requires_grad and y.grad_fn.name() == "NotImplemented"
        with pytest.raises(
            RuntimeError,
            match=rf"the derivative for '{ns}::mysin.default' is not implemented.*register_autograd",
        ):
            y.sum().backward()


def test_autograd_not_implemented_fallback_registered_explicitly(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("mysin(Tensor x) -> Tensor")
        lib.impl("mysin", _numpy_sin, "CPU")
        lib.impl("mysin", tp.autograd.autograd_not_implemented_fallback(), "Autograd")
        assert tp.dispatcher.registrations(f"{ns}::mysin")["Autograd"]
        y = getattr(tp.ops, ns).mysin(t64([0.5]))
        with pytest.raises(RuntimeError, match=f"'{ns}::mysin.default' is not implemented"):
            y.backward()
        assert not getattr(tp.ops, ns).mysin(tp.ones([1])).requires_grad


def test_tutorial_pattern_autograd_kernel_reenters_under_exclude(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("mysin(Tensor x) -> Tensor")
        lib.impl("mysin", _numpy_sin, "CPU")
        op = getattr(tp.ops, ns).mysin

        class MySin(tp.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                with tp.dispatch.exclude("Autograd"):
                    return op(x)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * x.cos()

        lib.impl("mysin", MySin.apply, "Autograd")
        x = t64([0.3, 1.1])
        op(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.cos([0.3, 1.1]))
        assert tp.autograd.gradcheck(op, (t64([0.2, -0.4]),))


def test_register_autograd(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("scaled_sin(Tensor x, float k) -> Tensor")
        lib.impl("scaled_sin", lambda x, k: _numpy_sin(x) * k, "CPU")

        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.save_for_backward(x)
            ctx.k = k

        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos() * ctx.k, None

        tp.library.register_autograd(
            f"{ns}::scaled_sin", backward, setup_context=setup_context, lib=lib
        )
        op = getattr(tp.ops, ns).scaled_sin
        x = t64([0.3, 1.1])
        y = op(x, 2.0)
        assert y.grad_fn is not None
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos([0.3, 1.1]))
        assert tp.autograd.gradcheck(lambda t: op(t, 3.0), (t64([0.2, -0.4]),))
    assert f"{ns}::scaled_sin.default" not in {o._name for o in tp.dispatcher.all_ops()}
