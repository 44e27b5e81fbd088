"""Gradient checks: analytical gradients against finite differences (``tp.autograd.gradcheck``).

Note [How gradcheck works]
~~~~~~~~~~~~~~~~~~~~~~~~~~
``gradcheck(func, inputs)`` follows PyTorch's slow mode. For every output of ``func`` that
requires grad and every input that requires grad it builds two Jacobians, laid out as
PyTorch's (one row per input element, one column per output element, float64):

* **numerical**: each input element in turn is moved by ``+eps`` and ``-eps`` in place (under
  ``no_grad``, through a detached alias, then restored) and ``func`` runs again; the row is
  ``(f(x + eps) - f(x - eps)) / (2 eps)``, central differences;
* **analytical**: one ``tp.autograd.grad`` call per output element, with a one-hot
  ``grad_outputs``: the vector-Jacobian product gives that element's column.

They must agree elementwise within ``|a - n| <= atol + rtol * |n|``, or the check fails with
PyTorch's message: "Jacobian mismatch for output i with respect to input j", followed by both
matrices. ``i`` and ``j`` are positions in ``func``'s outputs and in ``inputs``.

Further checks, as PyTorch's: analytical gradients have the input's shape (and dtype, with
``check_grad_dtypes``); backward is reentrant (the first column computed twice agrees within
``nondet_tol``); with ``check_undefined_grad``, zero output gradients give zero input gradients
(a formula must treat an absent gradient as zeros; the one-output-at-a-time columns already
leave the other outputs of multi-output ops without gradient). When no output requires grad,
the numerical Jacobian must be zero.

``gradgradcheck(func, inputs)`` runs ``gradcheck`` on the function that maps ``inputs`` and
``grad_outputs`` to the first derivatives computed with ``create_graph=True``, so it checks
second derivatives; ``grad_outputs`` default to random values in [-1, 1) from a fixed seed.

Perturbation writes through tensor data with public operations only (indexing and ``fill_``),
so the checks run on any backend. Use float64 inputs: float32 cannot resolve ``eps=1e-6``.

Note [Complex gradcheck]
~~~~~~~~~~~~~~~~~~~~~~~~
Complex inputs and outputs are checked as PyTorch's slow mode checks them, through their real
and imaginary parts: each complex input that requires grad is replaced by a real leaf of its
``view_as_real`` (shape ``(..., 2)``), which ``func`` sees through ``view_as_complex``, and each
complex output is seen as ``view_as_real`` of it. The Jacobian of that real function holds both
perturbations (real, imaginary) of each input and both parts of each output, so it checks the
gradients PyTorch's convention gives (Note [Complex gradients] in formulas/_table.py: a real
loss's gradient for ``z = x + iy`` is ``dL/dx + i dL/dy``) exactly. A failure names the input
and output by their positions in ``inputs`` and ``func``'s outputs, as for real ones, and says
that they were complex.

Usage::

    import tensorplug as tp
    x = tp.randn([3], dtype=tp.float64).requires_grad_()
    tp.autograd.gradcheck(tp.sin, (x,))              # True, or raises GradcheckError
    tp.autograd.gradgradcheck(lambda t: t * t * t, (x,))
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """A gradient check failed; the message says which output, input and values."""


class _Failed(Exception):
    """Internal: carries a failure message up to the point that raises or returns False."""


# --- small helpers ---------------------------------------------------------------------------------


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _requires_grad(x: Any) -> bool:
    return isinstance(x, Tensor) and bool(x.requires_grad)


def _element_indices(shape: Sequence[int]) -> list[tuple[int, ...]]:
    """Every multi-index of ``shape`` in row-major order (``[()]`` for a 0-dim tensor)."""
    out: list[tuple[int, ...]] = [()]
    for n in shape:
        out = [(*idx, i) for idx in out for i in range(n)]
    return out


def _flat64(t: Tensor) -> Tensor:
    return t.detach().reshape([-1]).to(tp.float64)


def _stack(rows: list[Tensor], n_rows: int, n_cols: int, like: Tensor, dim: int) -> Tensor:
    """Stack 1-D rows (``dim=0``) or columns (``dim=1``) into an ``n_rows x n_cols`` matrix."""
    if not rows:
        return tp.zeros([n_rows, n_cols], dtype=tp.float64, device=like.device)
    return tp.stack(rows, dim)


def _allclose(a: Tensor, n: Tensor, rtol: float, atol: float) -> bool:
    if a.numel() == 0:
        return True
    close = (a - n).abs() <= (n.abs() * rtol + atol)
    return bool(close.logical_not().sum().item() == 0)


def _is_zero(t: Tensor) -> bool:
    return t.numel() == 0 or bool((t != 0).sum().item() == 0)


def _mismatch(kind: str, out_i: int, in_j: int, numerical: Tensor, analytical: Tensor) -> str:
    return (
        f"{kind} mismatch for output {out_i} with respect to input {in_j},\n"
        f"numerical:{numerical!r}\nanalytical:{analytical!r}\n"
    )


# --- the Jacobians ---------------------------------------------------------------------------------


def _outputs(func: Callable[..., Any], inputs: tuple[Any, ...]) -> list[Tensor | None]:
    """The outputs of ``func``, positionally; non-tensors stand as None."""
    return [o if isinstance(o, Tensor) else None for o in _as_tuple(func(*inputs))]


def _numerical_jacobians(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    input_indices: Sequence[int],
    outputs: Sequence[Tensor | None],
    eps: float,
) -> dict[tuple[int, int], Tensor]:
    """``{(output index, input index): Jacobian}`` by central differences (float outputs)."""
    float_outs = [i for i, o in enumerate(outputs) if o is not None and o.dtype.is_floating_point]
    result: dict[tuple[int, int], Tensor] = {}
    for j in input_indices:
        x = inputs[j]
        data = x.detach()  # writes through it reach x without recording anything
        originals = data.reshape([-1]).tolist()
        rows: dict[int, list[Tensor]] = {i: [] for i in float_outs}
        for idx, orig in zip(_element_indices(x.shape), originals, strict=True):
            values = []
            for delta in (eps, -eps):
                with tp.no_grad():
                    data[idx] = orig + delta
                # copies: a view of the input (expand, select) would follow the next write
                values.append(
                    [o if o is None else tp.clone(o.detach()) for o in _outputs(func, inputs)]
                )
            with tp.no_grad():
                data[idx] = orig
            plus, minus = values
            for i in float_outs:
                p, m = plus[i], minus[i]
                assert p is not None and m is not None
                rows[i].append((_flat64(p) - _flat64(m)) / (2 * eps))
        for i in float_outs:
            out = outputs[i]
            assert out is not None
            result[(i, j)] = _stack(rows[i], x.numel(), out.numel(), x, 0)
    return result


def _one_hot(out: Tensor, idx: tuple[int, ...]) -> Tensor:
    with tp.no_grad():
        v = tp.zeros(list(out.shape), dtype=out.dtype, device=out.device)
        v[idx] = 1
    return v


def _vjp(out: Tensor, inputs: Sequence[Tensor], grad_output: Tensor) -> tuple[Tensor | None, ...]:
    return tuple(
        tp.autograd.grad([out], list(inputs), [grad_output], retain_graph=True, allow_unused=True)
    )


def _checked(
    grads: tuple[Tensor | None, ...],
    inputs: Sequence[Tensor],
    input_indices: Sequence[int],
    check_grad_dtypes: bool,
) -> list[Tensor | None]:
    for g, x, j in zip(grads, inputs, input_indices, strict=True):
        if g is None:
            continue
        if tuple(g.shape) != tuple(x.shape):
            raise _Failed(
                f"Analytical gradient has incorrect size: input {j} has shape {list(x.shape)}, "
                f"its gradient {list(g.shape)}; the backward (or a hook on its graph) must give "
                "each input a gradient of its shape"
            )
        if check_grad_dtypes and g.dtype != x.dtype:
            raise _Failed(
                f"Gradient has dtype mismatch: input {j} is {x.dtype}, its gradient {g.dtype}; the "
                "backward (or a hook on its graph) must give each input a gradient of its dtype"
            )
    return list(grads)


def _analytical_jacobians(
    out: Tensor,
    out_i: int,
    inputs: tuple[Any, ...],
    input_indices: Sequence[int],
    nondet_tol: float,
    check_grad_dtypes: bool,
) -> dict[int, Tensor]:
    """``{input index: Jacobian}`` of one output, column by column from one-hot VJPs."""
    xs = [inputs[j] for j in input_indices]
    columns: dict[int, list[Tensor]] = {j: [] for j in input_indices}
    for k, idx in enumerate(_element_indices(out.shape)):
        grads = _checked(_vjp(out, xs, _one_hot(out, idx)), xs, input_indices, check_grad_dtypes)
        if k == 0:
            again = _vjp(out, xs, _one_hot(out, idx))
            for j, g1, g2 in zip(input_indices, grads, again, strict=True):
                if (g1 is None) != (g2 is None) or (
                    g1 is not None
                    and g2 is not None
                    and not _allclose(_flat64(g2), _flat64(g1), 0.0, nondet_tol)
                ):
                    raise _Failed(
                        f"Backward is not reentrant, i.e., running backward with same input and "
                        f"grad_output multiple times gives different values (output {out_i}, "
                        f"input {j}), although analytical gradient matches numerical gradient. "
                        f"The tolerance for nondeterminism was {nondet_tol}."
                    )
        for j, g, x in zip(input_indices, grads, xs, strict=True):
            columns[j].append(_flat64(g) if g is not None else _flat64(tp.zeros_like(x)))
    return {j: _stack(columns[j], inputs[j].numel(), out.numel(), out, 1) for j in input_indices}


def _check_undefined_grad(
    outputs: Sequence[Tensor], inputs: Sequence[Tensor], input_indices: Sequence[int]
) -> None:
    zeros = [tp.zeros_like(o) for o in outputs]
    grads = tp.autograd.grad(
        list(outputs), list(inputs), zeros, retain_graph=True, allow_unused=True
    )
    for j, g in zip(input_indices, grads, strict=True):
        if g is not None and not _is_zero(g):
            raise _Failed(
                f"Expected backward function to handle undefined output grads: zero output "
                f"gradients gave a nonzero gradient for input {j}:\n{g!r}"
            )


def _unsupported(**flags: bool) -> None:
    asked = [name for name, on in flags.items() if on]
    if asked:
        raise NotImplementedError(
            f"gradcheck: {', '.join(asked)} is not supported by tensorplug-autograd (it has no "
            "forward-mode AD or vmap of gradients); leave it False to run the slow-mode check"
        )


# --- the checks ------------------------------------------------------------------------------------


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    fast_mode: bool = False,
    check_batched_grad: bool = False,
    check_forward_ad: bool = False,
) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Note [How gradcheck works]. Returns True; on a failure raises :class:`GradcheckError`, or
    returns False when ``raise_exception`` is False. PyTorch's other modes (``fast_mode``,
    batched gradients, forward AD) are not available and raise ``NotImplementedError``.
    """
    _unsupported(
        fast_mode=fast_mode,
        check_batched_grad=check_batched_grad,
        check_forward_ad=check_forward_ad,
    )
    tupled = _as_tuple(inputs)
    input_indices = [j for j, x in enumerate(tupled) if _requires_grad(x)]
    if not input_indices:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of "
            "them have requires_grad=True."
        )
    for j in input_indices:
        if tupled[j].dtype not in (tp.float64, tp.complex128):
            warnings.warn(
                f"Input #{j} requires gradient and is not a double precision floating point "
                "or complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex.",
                stacklevel=2,
            )
    first = _outputs(func, tupled)
    func, tupled, complex_note = _realified(func, tupled, input_indices, first)
    # the realified function's outputs are _gradcheck's to compute
    outputs = None if complex_note else first
    try:
        _gradcheck(
            func, tupled, input_indices, eps, atol, rtol, nondet_tol,
            check_undefined_grad, check_grad_dtypes, outputs,
        )  # fmt: skip
    except _Failed as e:
        if raise_exception:
            raise GradcheckError(complex_note + str(e)) from None
        return False
    return True


def _realified(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    input_indices: list[int],
    outputs: list[Tensor | None],
) -> tuple[Callable[..., Any], tuple[Any, ...], str]:
    """Note [Complex gradcheck]: ``func`` and ``inputs`` with every complex input that requires
    grad, and every complex output, seen as real tensors of their real and imaginary parts;
    the same function and inputs when none is complex."""
    cplx_in = {j for j in input_indices if inputs[j].dtype.is_complex}
    if not cplx_in and not any(o is not None and o.dtype.is_complex for o in outputs):
        return func, inputs, ""
    real_inputs = tuple(
        tp.view_as_real(x.detach().clone()).requires_grad_() if j in cplx_in else x
        for j, x in enumerate(inputs)
    )

    def realified(*args: Any) -> Any:
        rebuilt = [tp.view_as_complex(a) if j in cplx_in else a for j, a in enumerate(args)]
        out = func(*rebuilt)
        seen = tuple(
            tp.view_as_real(o) if isinstance(o, Tensor) and o.dtype.is_complex else o
            for o in _as_tuple(out)
        )
        return seen if isinstance(out, (tuple, list)) else seen[0]

    note = (
        "(complex inputs and outputs are checked through their real and imaginary parts, "
        "view_as_real: each Jacobian row or column pairs the real with the imaginary "
        "perturbation)\n"
    )
    return realified, real_inputs, note


def _gradcheck(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    input_indices: list[int],
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
    check_undefined_grad: bool,
    check_grad_dtypes: bool,
    outputs: list[Tensor | None] | None = None,
) -> None:
    # the analytical part first: perturbing the inputs bumps their version counters, which
    # would invalidate a graph recorded before the numerical part
    if outputs is None:
        outputs = _outputs(func, inputs)
    diff = [i for i, o in enumerate(outputs) if o is not None and _requires_grad(o)]
    analytical: dict[tuple[int, int], Tensor] = {}
    for i in diff:
        out = outputs[i]
        assert out is not None
        per_input = _analytical_jacobians(
            out, i, inputs, input_indices, nondet_tol, check_grad_dtypes
        )
        analytical.update(((i, j), a) for j, a in per_input.items())
    if diff and check_undefined_grad:
        diff_outs = [o for o in outputs if o is not None and _requires_grad(o)]
        _check_undefined_grad(diff_outs, [inputs[j] for j in input_indices], input_indices)
    numerical = _numerical_jacobians(func, inputs, input_indices, outputs, eps)
    if not diff:
        for (i, j), n in numerical.items():
            if not _is_zero(n):
                raise _Failed(
                    f"Numerical gradient for function expected to be zero (output {i} does not "
                    f"require grad), but for input {j} it is:\n{n!r}"
                )
        return
    for (i, j), a in analytical.items():
        n = numerical[(i, j)]
        if not _allclose(a, n, rtol, atol):
            raise _Failed(_mismatch("Jacobian", i, j, n, a))


def _random_grad_output(out: Tensor, gen: Any, non_contiguous: bool) -> Tensor:
    """Values in [-1, 1) like ``out``; strided (every other element of a wider tensor) if asked."""
    shape = list(out.shape)
    wide = non_contiguous and out.ndim > 0 and out.numel() > 1
    if wide:
        shape[-1] *= 2
    cplx = out.dtype.is_complex
    dtype = out.dtype.to_real() if cplx else out.dtype
    with tp.no_grad():
        v = tp.rand(shape + [2] * cplx, generator=gen, dtype=dtype, device=out.device) * 2 - 1
        if cplx:  # real and imaginary parts each in [-1, 1)
            v = tp.view_as_complex(v)
        if wide:
            v = v[..., ::2]
    return v.detach().requires_grad_()


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    fast_mode: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
) -> bool:
    """Check second derivatives: :func:`gradcheck` of the gradients of ``func``.

    ``grad_outputs`` (one per output that requires grad) default to random values in [-1, 1)
    that require grad (non-contiguous with ``gen_non_contig_grad_outputs``), drawn from a
    generator with a fixed seed so a failure reproduces.
    """
    _unsupported(
        fast_mode=fast_mode,
        check_batched_grad=check_batched_grad,
        check_fwd_over_rev=check_fwd_over_rev,
    )
    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        diff_outs = [o for o in _outputs(func, tupled) if o is not None and _requires_grad(o)]
        gen = tp.Generator(diff_outs[0].device.type if diff_outs else "cpu").manual_seed(0)
        tupled_grads = tuple(
            _random_grad_output(o, gen, gen_non_contig_grad_outputs) for o in diff_outs
        )
    else:
        tupled_grads = _as_tuple(grad_outputs)
    n_grads = len(tupled_grads)
    if n_grads == 0:
        raise ValueError("gradgradcheck expects func to have an output that requires grad")
    diff_inputs = [j for j, x in enumerate(tupled) if _requires_grad(x)]

    def first_derivatives(*args: Any) -> tuple[Tensor, ...]:
        ins, gos = args[:-n_grads], args[-n_grads:]
        outs = [o for o in _outputs(func, ins) if o is not None and _requires_grad(o)]
        grads = tp.autograd.grad(
            outs, [ins[j] for j in diff_inputs], list(gos), create_graph=True, allow_unused=True
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivatives,
        tupled + tupled_grads,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
    )
