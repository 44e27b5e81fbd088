"""Error paths of tensorplug-autograd that the behaviour tests do not reach: each test
triggers one error and checks its message (PyTorch's wording where PyTorch has the error,
plus what to do)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tests import needs

needs.autograd()

from tensorplug_autograd.gradcheck import _checked, _Failed  # noqa: E402
from tensorplug_autograd.kernels import kernel_for  # noqa: E402
from tensorplug_autograd.rules import Rule  # noqa: E402


def t64(values, requires_grad=True):
    return tp.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def other_device_ones(n):
    try:
        return tp.ones(n, device="foo")  # the example backend, when installed
    except Exception:
        pytest.skip("needs a second backend (tensorplug-foo)")


# --- engine.py: backward / grad arguments and the gradients nodes return ----------------------


def test_outputs_that_are_not_tensors():
    x = t64([1.0, 2.0])
    message = r"^Expected output to be a Tensor, but element 0 of tensors is a float; pass the"
    with pytest.raises(TypeError, match=message):
        tp.autograd.backward([1.0])
    with pytest.raises(TypeError, match=message):
        tp.autograd.grad([1.0], [x])


def test_inputs_that_are_not_tensors():
    x = t64([1.0, 2.0])
    with pytest.raises(
        TypeError,
        match=r"^all inputs have to be Tensors, but got float \(element 1 of inputs\); pass the "
        "Tensors to differentiate with respect to$",
    ):
        tp.autograd.grad((x * 2).sum(), [x, 1.0])


def test_inputs_that_do_not_require_grad_name_their_index():
    x = t64([1.0, 2.0])
    with pytest.raises(
        RuntimeError,
        match=r"^One of the differentiated Tensors does not require grad \(element 1 of "
        r"inputs\); call requires_grad_\(\) on it",
    ):
        tp.autograd.grad((x * 2).sum(), [x, t64([1.0], requires_grad=False)])


def test_a_backward_that_returns_a_non_tensor_gradient():
    class FloatGrad(tp.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return 1.0

    with pytest.raises(
        TypeError,
        match=r"^function FloatGradBackward returned a gradient at index 0: expected Variable or "
        r"None \(got float\); return a Tensor, or None, for each input$",
    ):
        FloatGrad.apply(t64([1.0, 2.0])).sum().backward()


def test_a_backward_that_returns_a_gradient_of_the_wrong_shape():
    class WrongShape(tp.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return tp.ones(3, dtype=tp.float64)

    with pytest.raises(
        RuntimeError,
        match=r"^Function WrongShapeBackward returned an invalid gradient at index 0 - got \[3\] "
        r"but expected shape compatible with \[2\]; return a gradient of the input's shape$",
    ):
        WrongShape.apply(t64([1.0, 2.0])).sum().backward()


# --- function.py: tp.autograd.Function --------------------------------------------------------


def test_a_gradient_for_an_argument_that_is_not_a_tensor():
    class Scale(tp.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g, tp.ones(1)

    with pytest.raises(
        RuntimeError,
        match=r"^function ScaleBackward returned a gradient different than None at position 2, "
        "but the corresponding forward input was not a Variable; return None at that position$",
    ):
        Scale.apply(t64([1.0, 2.0]), 2.0).sum().backward()


def test_a_non_tensor_gradient_for_an_argument_that_is_not_a_tensor():
    class Scale(tp.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g * 2.0, 5  # PyTorch refuses any value but None there, not only tensors

    with pytest.raises(
        RuntimeError, match=r"different than None at position 2, .* return None at that position$"
    ):
        Scale.apply(t64([1.0, 2.0]), 2.0).sum().backward()


def test_a_function_without_forward():
    class NoForward(tp.autograd.Function):
        pass

    with pytest.raises(
        NotImplementedError,
        match=r"^You must implement the forward function for custom autograd\.Function\.$",
    ):
        NoForward.apply(t64([1.0]))


def test_a_function_without_backward():
    class NoBackward(tp.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

    y = NoBackward.apply(t64([1.0]))
    with pytest.raises(
        NotImplementedError,
        match=r"^You must implement either the backward or vjp method for your custom "
        r"autograd\.Function to use it with backward mode AD\.$",
    ):
        y.sum().backward()


# --- graph.py: tensor hooks -------------------------------------------------------------------


def test_a_hook_that_returns_a_non_tensor():
    def to_float(g):
        return 1.0

    y = t64([1.0, 2.0]) * 2
    y.register_hook(to_float)
    with pytest.raises(
        TypeError,
        match=r"^expected Variable, but hook 'to_float' returned 'float'; return the new "
        "gradient as a Tensor, or None to keep the gradient$",
    ):
        y.sum().backward()


def test_a_hook_that_changes_the_device():
    other_device_ones(1)

    def elsewhere(g):
        return g.to("foo")

    y = t64([1.0, 2.0]) * 2
    y.register_hook(elsewhere)
    with pytest.raises(
        RuntimeError,
        match=r"^hook 'elsewhere' has changed the device of value \(was cpu got foo\); return "
        "a gradient on the tensor's device$",
    ):
        y.sum().backward()


# --- tensor_api.py: .grad, .data, retain_grad -------------------------------------------------


def test_assigning_a_grad_that_is_not_a_tensor():
    x = t64([1.0, 2.0])
    with pytest.raises(
        TypeError,
        match="^assigned grad expected to be a Tensor or None but got grad of type float$",
    ):
        x.grad = 1.0


def test_assigning_a_grad_on_another_device():
    other = other_device_ones(2)
    x = tp.ones(2, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="^attempting to assign a gradient with device type 'foo' to a tensor with device "
        "type 'cpu'. Please ensure that the gradient and the tensor are on the same device$",
    ):
        x.grad = other


def test_retain_grad_needs_requires_grad():
    with pytest.raises(
        RuntimeError,
        match="^can't retain_grad on Tensor that has requires_grad=False; only tensors",
    ):
        tp.ones(2).retain_grad()


def test_assigning_data_that_is_not_a_tensor():
    x = tp.ones(2)
    with pytest.raises(
        TypeError,
        match=r"^Variable data has to be a tensor, but got float; assign a Tensor to \.data$",
    ):
        x.data = 1.0


# --- gradcheck.py -----------------------------------------------------------------------------


def test_gradcheck_catches_a_gradient_of_the_wrong_size_or_dtype():
    # A guard against engine bugs: the engine fits what a node returns to its input and checks
    # what hooks return, so no graph gets a wrong gradient this far; checked on its own.
    x = t64([1.0, 2.0])
    with pytest.raises(
        _Failed,
        match=r"^Analytical gradient has incorrect size: input 0 has shape \[2\], its gradient "
        r"\[3\]; the backward \(or a hook on its graph\) must give each input a gradient of "
        "its shape$",
    ):
        _checked((tp.ones(3, dtype=tp.float64),), (x,), (0,), False)
    with pytest.raises(
        _Failed,
        match=r"^Gradient has dtype mismatch: input 0 is tensorplug\.float64, its gradient "
        r"tensorplug\.float32; the backward \(or a hook on its graph\) must give each input "
        "a gradient of its dtype$",
    ):
        _checked((tp.ones(2),), (x,), (0,), True)
    assert _checked((tp.ones(2),), (x,), (0,), False)[0].dtype is tp.float32  # not asked


def test_gradgradcheck_needs_an_output_that_requires_grad():
    with pytest.raises(
        ValueError, match="^gradgradcheck expects func to have an output that requires grad$"
    ):
        tp.autograd.gradgradcheck(lambda a: a.detach() * 2, (t64([1.0, 2.0]),))


# --- kernels.py / nodes.py: mistakes in a formula ---------------------------------------------
# A formula table is internal (Note [Formula table]); these build a Rule for a custom op the
# way register_all does for aten ops, to reach the errors a formula's author sees.


def _mymul(self, other):
    return tp.tensor(self.detach().numpy() * other.detach().numpy())


def _read(s, name):
    """``s.<name>`` read where the rule cannot see it (not in the formula's own code)."""
    return getattr(s, name)


def _op_with_formulas(lib, ns, table):
    lib.define("mymul(Tensor self, Tensor other) -> Tensor")
    lib.impl("mymul", _mymul, "CPU")
    op = getattr(tp.ops, ns).mymul.default
    lib.impl("mymul", kernel_for(Rule(op, table)), "Autograd", with_keyset=True)
    return op


def test_a_formula_keyed_by_a_name_that_is_not_an_argument(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("mymul(Tensor self, Tensor other) -> Tensor")
        op = getattr(tp.ops, ns).mymul.default
        with pytest.raises(
            ValueError,
            match=rf"^formula of {ns}::mymul\.default names 'x', not an argument of its schema; "
            r"key it by one of \['self', 'other'\]$",
        ):
            Rule(op, {"x": lambda g, s: g})


def test_a_formula_that_reads_an_argument_it_did_not_save(ns):
    with tp.Library(ns, "DEF") as lib:
        op = _op_with_formulas(lib, ns, {"self": lambda g, s: g * _read(s, "other")})
        y = op(t64([1.0, 2.0]), t64([3.0, 4.0], requires_grad=False))
        with pytest.raises(
            AttributeError,
            match=rf"^the formula of {ns}::mymul\.default reads s\.other, which was not saved; "
            r"read it as s\.other directly in the formula's own body",
        ):
            y.sum().backward()


def test_a_formula_that_reads_the_result_it_did_not_save(ns):
    with tp.Library(ns, "DEF") as lib:
        op = _op_with_formulas(lib, ns, {"self": lambda g, s: g * _read(s, "result")})
        y = op(t64([1.0, 2.0]), t64([3.0, 4.0], requires_grad=False))
        with pytest.raises(
            AttributeError,
            match=rf"^the formula of {ns}::mymul\.default reads s\.result, which was not saved; "
            r"read it as s\.result directly in the formula's own body",
        ):
            y.sum().backward()


def test_a_formula_that_reads_a_name_that_does_not_exist(ns):
    with tp.Library(ns, "DEF") as lib:
        op = _op_with_formulas(lib, ns, {"self": lambda g, s: g * s.nosuch})
        y = op(t64([1.0, 2.0]), t64([3.0, 4.0], requires_grad=False))
        with pytest.raises(
            AttributeError,
            match=rf"^the formula of {ns}::mymul\.default reads s\.nosuch: no such argument or "
            r"output; it can read the arguments \['self', 'other'\], result",
        ):
            y.sum().backward()


# --- node hooks: what they return is checked as PyTorch does -----------------------------------


def _product() -> tuple[tp.Tensor, tp.Tensor, tp.Tensor]:
    x = tp.tensor([1.0, 2.0], requires_grad=True)
    w = tp.tensor([3.0, 4.0], requires_grad=True)
    return x, w, x * w


def test_a_node_hook_that_returns_the_wrong_number_of_values():
    x, w, y = _product()
    y.grad_fn.register_hook(lambda gi, go: (gi[0],))
    with pytest.raises(
        RuntimeError,
        match=r"hook '<lambda>' has returned an incorrect number of values \(got 1, but expected 2\); "
        "return one gradient",
    ):
        y.sum().backward()
    x, w, y = _product()

    def pre(go):
        return (go[0], go[0])

    y.grad_fn.register_prehook(pre)
    with pytest.raises(
        RuntimeError,
        match=r"hook 'pre' has returned an incorrect number of values \(got 2, but expected 1\)",
    ):
        y.sum().backward()


def test_a_node_hook_that_returns_a_non_tensor_or_another_shape():
    x, w, y = _product()
    y.grad_fn.register_hook(lambda gi, go: (gi[0], "a"))
    with pytest.raises(TypeError, match="expected Variable, but hook '<lambda>' returned 'str'"):
        y.sum().backward()
    x, w, y = _product()
    y.grad_fn.register_hook(lambda gi, go: (gi[0], tp.ones([3])))
    with pytest.raises(
        RuntimeError, match=r"hook '<lambda>' has changed the size of value \(was \[2\] got \[3\]\)"
    ):
        y.sum().backward()


def test_a_node_hook_may_replace_gradients_or_drop_them():
    x, w, y = _product()
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, None))
    y.sum().backward()
    assert x.grad.tolist() == [30.0, 40.0] and w.grad is None
