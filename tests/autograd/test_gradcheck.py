"""gradcheck and gradgradcheck themselves (tensorplug_autograd/gradcheck.py).

Each check is shown a function it must accept and one with a deliberately wrong derivative
(a ``tp.autograd.Function`` or an operator with ``register_autograd``) that it must reject,
naming the output and the input whose Jacobians disagree.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import tensorplug as tp
from tensorplug import Tensor
from tests import needs

needs.autograd()

from tensorplug_autograd.gradcheck import GradcheckError  # noqa: E402

gradcheck = tp.autograd.gradcheck
gradgradcheck = tp.autograd.gradgradcheck


def f64(values: Any) -> Tensor:
    return tp.tensor(values, dtype=tp.float64, requires_grad=True)


def mismatch(output: int, input: int) -> str:
    return re.escape(f"Jacobian mismatch for output {output} with respect to input {input},")


class WrongMul(tp.autograd.Function):
    """x * y whose gradient for y is wrong (it returns the one for x)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, y: Tensor) -> Tensor:
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor, Tensor]:
        x, y = ctx.saved_tensors
        return g * y, g * y


class WrongSecondOutput(tp.autograd.Function):
    """(2x, 3x) whose backward ignores the second output's gradient."""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> tuple[Tensor, Tensor]:
        return x * 2, x * 3

    @staticmethod
    def backward(ctx: Any, g1: Tensor, g2: Tensor) -> Tensor:
        return g1 * 2


class CubeDetached(tp.autograd.Function):
    """x**3 whose backward is right but not differentiable (it reads x detached)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        x = x.detach()
        return g * (x * x * 3)


def test_correct_functions_pass() -> None:
    x, y = f64([0.5, -1.0, 2.0]), f64([[1.5, 2.0, -0.5], [0.1, 0.2, 0.3]])
    assert gradcheck(tp.sin, (x,)) is True
    assert gradcheck(lambda a, b: a * b, (x, y)) is True
    assert gradcheck(lambda a: tp.split(a, 2), (x,))  # several outputs, as a list
    assert gradcheck(lambda a, k, b: (a * k + b).exp(), (x, 2.0, y))  # a non-tensor input
    assert gradcheck(tp.sum, (f64(3.0),))  # 0-dim
    assert gradgradcheck(lambda a, b: (a * b).exp(), (x, y)) is True


def test_a_wrong_gradient_names_the_output_and_the_input() -> None:
    x, y = f64([1.0, 2.0]), f64([3.0, -1.0])
    with pytest.raises(GradcheckError, match=mismatch(0, 1)) as info:
        gradcheck(WrongMul.apply, (x, y))
    msg = str(info.value)
    assert "\nnumerical:tensor(" in msg and "\nanalytical:tensor(" in msg
    assert isinstance(info.value, RuntimeError)
    assert gradcheck(WrongMul.apply, (x, y), raise_exception=False) is False


def test_inputs_are_counted_by_their_position() -> None:
    """Non-tensor and non-differentiable inputs keep their places in the numbering."""
    x, y = f64([1.0, 2.0]), f64([3.0, -1.0])
    plain = tp.tensor([1.0, 1.0], dtype=tp.float64)
    with pytest.raises(GradcheckError, match=mismatch(0, 3)):
        gradcheck(lambda a, k, c, b: WrongMul.apply(a * k + c, b), (x, 2.0, plain, y))


def test_a_wrong_second_output_is_named() -> None:
    with pytest.raises(GradcheckError, match=mismatch(1, 0)):
        gradcheck(WrongSecondOutput.apply, (f64([1.0, -2.0, 0.5]),))


def test_a_wrong_formula_of_a_library_operator(ns: str) -> None:
    with tp.Library(ns, "DEF") as lib:
        lib.define("square(Tensor x) -> Tensor")
        lib.impl("square", lambda x: tp.mul(x, x), "CPU")

        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Tensor) -> None:
            ctx.save_for_backward(inputs[0])

        def backward(ctx: Any, g: Tensor) -> Tensor:
            (x,) = ctx.saved_tensors
            return g * x  # should be 2 * g * x

        tp.library.register_autograd(
            f"{ns}::square", backward, setup_context=setup_context, lib=lib
        )
        square = getattr(tp.ops, ns).square.default
        with pytest.raises(GradcheckError, match=mismatch(0, 0)):
            gradcheck(square, (f64([1.0, -3.0]),))


def test_gradgradcheck_catches_a_backward_that_is_not_differentiable() -> None:
    x = f64([0.5, -1.5, 2.0])
    assert gradcheck(CubeDetached.apply, (x,))  # first derivatives are right
    assert gradgradcheck(lambda t: t * t * t, (x,))
    with pytest.raises(GradcheckError, match=mismatch(0, 0)):
        gradgradcheck(CubeDetached.apply, (x,))
    assert gradgradcheck(CubeDetached.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_grad_outputs() -> None:
    x, y = f64([[0.5, -1.5], [2.0, 0.25]]), f64([[1.0, 2.0], [3.0, 4.0]])
    assert gradgradcheck(tp.mm, (x, y), gen_non_contig_grad_outputs=True)
    go = f64([[1.0, -1.0], [0.5, 2.0]])
    assert gradgradcheck(lambda a, b: (a * b).sin(), (x, y), (go,))
    # grad_outputs that do not require grad are constants of the second-order check
    assert gradgradcheck(lambda a: a.exp(), (x,), (go.detach(),))


def test_non_reentrant_backward_is_caught() -> None:
    calls = [0]

    class Drifting(tp.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Tensor) -> Tensor:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Tensor) -> Tensor:
            calls[0] += 1
            return g * 2 + calls[0] * 1e-9  # a tiny drift from call to call

    x = f64([1.0, 2.0])
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(Drifting.apply, (x,), check_undefined_grad=False)
    assert gradcheck(Drifting.apply, (x,), nondet_tol=1e-6, check_undefined_grad=False)


def test_zero_output_gradients_must_give_zero_input_gradients() -> None:
    class OneWhenZero(tp.autograd.Function):
        """Right for every nonzero output gradient, wrong for a zero one."""

        @staticmethod
        def forward(ctx: Any, x: Tensor) -> Tensor:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Tensor) -> Tensor:
            return g * 2 if bool((g != 0).sum()) else tp.ones_like(g)

    x = f64([1.0, 2.0])
    with pytest.raises(GradcheckError, match="undefined output grads"):
        gradcheck(OneWhenZero.apply, (x,))
    assert gradcheck(OneWhenZero.apply, (x,), check_undefined_grad=False)


def test_outputs_that_do_not_require_grad_must_not_depend_on_the_inputs() -> None:
    x = f64([1.0, 2.0])
    assert gradcheck(lambda t: t > 1.5, (x,))  # piecewise constant: fine
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda t: t.detach() * 2, (x,))


def test_argument_errors_and_warnings() -> None:
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(tp.sin, (tp.tensor([1.0], dtype=tp.float64),))
    x32 = tp.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        gradcheck(lambda t: t * 2, (x32,), eps=1e-3, atol=1e-3)


def test_inputs_are_left_as_they_were() -> None:
    x = f64([0.5, -1.0, 2.0])
    version = x._version
    gradcheck(tp.exp, (x,))
    assert x.tolist() == [0.5, -1.0, 2.0]
    assert x.grad is None  # gradcheck uses tp.autograd.grad, never .grad
    assert x._version > version  # perturbed in place, like PyTorch's


def test_pytorch_modes_without_support_say_so() -> None:
    x = f64([1.0, 2.0])
    assert gradcheck(tp.sin, (x,), fast_mode=False, check_batched_grad=False)
    with pytest.raises(NotImplementedError, match="fast_mode is not supported"):
        gradcheck(tp.sin, (x,), fast_mode=True)
    with pytest.raises(NotImplementedError, match="check_fwd_over_rev is not supported"):
        gradgradcheck(tp.sin, (x,), check_fwd_over_rev=True)
