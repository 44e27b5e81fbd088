"""``tp.autograd.functional``: derivatives of whole functions, as ``torch.autograd.functional``.

``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp`` take a function of tensors
and a tensor or a tuple of tensors, and give results shaped as PyTorch's: a tuple where the
inputs (or outputs) were given as a tuple, a single tensor where one tensor was. As in PyTorch,
``jvp`` and ``hvp`` use the double-backward trick (reverse mode twice); ``jacobian(...,
strategy="forward-mode")`` uses forward mode (``forward_ad``), vectorized with ``tp.vmap``
when ``vectorize=True`` and tensorplug-batched is installed. ``vectorize=True`` with reverse
mode gives the same results as without (one backward pass per output element).

Usage::

    import tensorplug as tp
    from tensorplug.autograd.functional import jacobian, hvp

    x = tp.randn(3)
    jacobian(tp.sin, x)                                 # diag(cos(x))
    value, hv = hvp(lambda x: (x ** 3).sum(), x, tp.ones(3))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplug as tp
from tensorplug.tensor import Tensor

from . import forward_ad as fwAD
from .engine import grad as _grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

aten = tp.ops.aten


# --- the helpers of PyTorch's functional.py, written here -------------------------------------


def _as_tuple(inp: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Tensor, ...]]:
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but {where} has type {type(el)}."
            )
    return is_tuple, items


def _tuple_postprocess(res: Any, to_unpack: Any) -> Any:
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(
    inputs: tuple[Tensor, ...], create_graph: bool, need_graph: bool
) -> tuple[Tensor, ...]:
    """Fresh inputs: differentiable views where the graph is kept, else detached leaves."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(aten.view_as.default(inp, inp))
        else:
            d = aten.detach.default(inp)
            differentiable = d.dtype.is_floating_point or d.dtype.is_complex
            res.append(d.requires_grad_(need_graph) if differentiable else d)
    return tuple(res)


def _grad_postprocess(inputs: Any, create_graph: bool) -> Any:
    if isinstance(inputs[0], Tensor):
        if not create_graph:
            return tuple(aten.detach.default(inp) for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other, strict=True)):
        if tuple(el_v.shape) != tuple(el_other.shape):
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {list(el_other.shape)} but got "
                f"{list(el_v.shape)}."
            )


def _check_requires_grad(inputs: Any, input_type: str, strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode."
            )
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect to input {i} is "
                    "independent of the input. This is not allowed in strict mode. You should "
                    "ensure that your function is thrice differentiable and that the hessian "
                    "depends on the inputs."
                )
            if input_type == "jacobian":
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided "
                    f"function with respect to input {i} is independent of the input. This is "
                    "not allowed in strict mode. You should ensure that your function is twice "
                    "differentiable and that the jacobian depends on the inputs (this would be "
                    "violated by a linear function for example)."
                )
            if input_type == "grad_inputs":
                raise RuntimeError(
                    f"The gradient with respect to input {i} is independent of the inputs of "
                    "the user-provided function. This is not allowed in strict mode."
                )
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."
            )


def _autograd_grad(
    outputs: tuple[Any, ...],
    inputs: tuple[Tensor, ...],
    grad_outputs: Any = None,
    create_graph: bool = False,
    retain_graph: bool | None = None,
) -> tuple[Tensor | None, ...]:
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    outs, gos = [], []
    for out, go in zip(outputs, grad_outputs, strict=True):
        if out is not None and out.requires_grad:
            outs.append(out)
            gos.append(go)
    if not outs:
        return (None,) * len(inputs)
    return tuple(
        _grad(
            outs, list(inputs), gos, allow_unused=True, create_graph=create_graph,
            retain_graph=retain_graph,
        )
    )  # fmt: skip


_FILL_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. This "
    "is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(
    grads: tuple[Tensor | None, ...],
    refs: tuple[Tensor, ...],
    strict: bool,
    create_graph: bool,
    stage: str,
) -> tuple[Tensor, ...]:
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_FILL_MESSAGES[stage].format(i=i))
            g = aten.zeros_like.default(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _single_element(v: Any, inputs: tuple[Tensor, ...], what: str) -> None:
    if v is None and (len(inputs) != 1 or inputs[0].numel() != 1):
        raise RuntimeError(
            f"The vector v can only be None if the {what} a single Tensor with a single element."
        )


def _prepared_v(
    v: Any, fn_name: str, other: tuple[Tensor, ...], is_tuple: bool, create_graph: bool
) -> Any:
    if v is None:
        return None
    _, vs = _as_tuple(v, "v", fn_name)
    vs = _grad_preprocess(vs, create_graph=create_graph, need_graph=False)
    _validate_v(vs, other, is_tuple)
    return vs


# --- vjp, jvp ----------------------------------------------------------------------------------


def vjp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product of ``func`` at ``inputs``."""
    with enable_grad():
        is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _grad_preprocess(ins, create_graph=create_graph, need_graph=True)
        outputs = func(*ins)
        is_outputs_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outs, "outputs", strict=strict)
        if v is None:
            _single_element(v, outs, "user-provided function returns")
        vs = _prepared_v(v, "vjp", outs, is_outputs_tuple, create_graph)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outs, ins, vs, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, ins, strict, create_graph, "back")
    return (
        _tuple_postprocess(_grad_postprocess(outs, create_graph), is_outputs_tuple),
        _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple),
    )


def jvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product of ``func`` at ``inputs``, by the
    double-backward trick as in PyTorch (``tp.func.jvp`` uses forward mode)."""
    with enable_grad():
        is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _grad_preprocess(ins, create_graph=create_graph, need_graph=True)
        if v is None:
            _single_element(v, ins, "input to the user-provided function is")
        vs = _prepared_v(v, "jvp", ins, is_inputs_tuple, create_graph)
        outputs = func(*ins)
        is_outputs_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outs, "outputs", strict=strict)
        # the backward is linear in grad_outputs: their value does not reach the result
        grad_outputs = tuple(aten.zeros_like.default(o).requires_grad_() for o in outs)
        grad_inputs = _autograd_grad(outs, ins, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, vs, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outs, strict, create_graph, "back_trick")
    return (
        _tuple_postprocess(_grad_postprocess(outs, create_graph), is_outputs_tuple),
        _tuple_postprocess(_grad_postprocess(res, create_graph), is_outputs_tuple),
    )


# --- jacobian, hessian ---------------------------------------------------------------------------


def jacobian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``: for output ``i`` and input ``j``, a tensor of
    shape ``output_i.shape + input_j.shape``, nested in tuples as PyTorch's."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "tp.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _grad_preprocess(ins, create_graph=create_graph, need_graph=True)
        outputs = func(*ins)
        is_outputs_tuple, outs = _as_tuple(
            outputs, "outputs of the user-provided function", "jacobian"
        )
        _check_requires_grad(outs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError(
                "tp.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                "supported together. Please either set `strict=False` or `vectorize=False`."
            )
        jac: list[tuple[Tensor, ...]] = []
        for i, out in enumerate(outs):
            rows: list[list[Tensor]] = [[] for _ in ins]
            flat = aten.reshape.default(out, [-1])
            for j in range(out.numel()):
                vj = _autograd_grad(
                    (aten.select.int(flat, 0, j),), ins, retain_graph=True,
                    create_graph=create_graph,
                )  # fmt: skip
                for k, (g, inp) in enumerate(zip(vj, ins, strict=True)):
                    if g is not None:
                        if strict and create_graph and not g.requires_grad:
                            raise RuntimeError(
                                f"The jacobian of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode when "
                                "create_graph=True."
                            )
                        rows[k].append(g)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode."
                            )
                        rows[k].append(aten.zeros_like.default(inp))
            jac.append(tuple(_stacked(rows[k], out, inp) for k, inp in enumerate(ins)))
        res = _grad_postprocess(tuple(jac), create_graph)
        return _tuple_postprocess(res, (is_outputs_tuple, is_inputs_tuple))


def _stacked(rows: list[Tensor], out: Tensor, inp: Tensor) -> Tensor:
    shape = [*out.shape, *inp.shape]
    if not rows:
        return aten.zeros.default(shape, dtype=inp.dtype, device=inp.device)
    return aten.reshape.default(aten.stack.default(rows, 0), shape)


def _jacfwd(func: Callable[..., Any], inputs: Any, strict: bool, vectorize: bool) -> Any:
    if strict:
        raise RuntimeError(
            'tp.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
            "are not supported together (yet). Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    numels = [int(x.numel()) for x in ins]
    total = sum(numels)
    info: list[Any] = []

    def call(*args: Tensor) -> tuple[Tensor, ...]:
        is_out_tuple, outs = _as_tuple(func(*args), "outputs", "jacobian")
        if not info:
            info.extend([is_out_tuple, [list(o.shape) for o in outs]])
        return outs

    def push(tangents: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        with fwAD.transform_level() as level:
            duals = tuple(
                fwAD.make_dual(x, aten.reshape.default(t, list(x.shape)), level=level)
                for x, t in zip(ins, tangents, strict=True)
            )
            jv = []
            for o in call(*duals):
                t = fwAD.unpack_dual(o, level=level).tangent
                jv.append(aten.zeros_like.default(o) if t is None else t)
            return tuple(jv)

    basis = [
        aten.slice.Tensor(aten.eye.default(total, dtype=x.dtype, device=x.device), 1, s, s + n)
        for x, s, n in zip(ins, _starts(numels), numels, strict=True)
    ]
    func_ns = _func_transforms() if vectorize else None
    if func_ns is not None:  # one pass, vectorized by tp.vmap over the basis
        shaped = [
            aten.reshape.default(b, [total, *x.shape]) for b, x in zip(basis, ins, strict=True)
        ]
        stacked = tp.vmap(lambda *ts: func_ns.jvp(call, ins, ts)[1])(*shaped)
        stacked = tuple(aten.reshape.default(j, [total, -1]) for j in stacked)
    else:  # one jvp per direction
        per = [push(tuple(aten.select.int(b, 0, r) for b in basis)) for r in range(total)]
        stacked = tuple(
            aten.reshape.default(aten.stack.default([p[k] for p in per], 0), [total, -1])
            for k in range(len(per[0]) if per else 0)
        )
    is_outputs_tuple, shapes = info
    result = []
    for jac_out, shape in zip(stacked, shapes, strict=True):
        row = []
        for piece, inp in zip(aten.split_with_sizes.default(jac_out, numels, 0), ins, strict=True):
            moved = aten.movedim.int(piece, 0, -1)
            row.append(aten.reshape.default(moved, [*shape, *inp.shape]))
        result.append(tuple(row))
    res = _grad_postprocess(tuple(result), False)
    return _tuple_postprocess(res, (is_outputs_tuple, is_inputs_tuple))


def _func_transforms() -> Any:
    """``tp.func`` when tensorplug-batched is loaded (``vectorize=True`` uses its vmap), else
    None: the Jacobian is then computed one jvp at a time, with the same values."""
    try:
        return tp.func
    except tp.MissingPluginError:
        return None


def _starts(numels: list[int]) -> list[int]:
    out, s = [], 0
    for n in numels:
        out.append(s)
        s += n
    return out


def hessian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of scalar ``func`` at ``inputs``: ``jacobian`` of its ``jacobian`` (the
    outer one by ``outer_jacobian_strategy``)."""
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp: Tensor) -> Tensor:
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return aten.squeeze.default(out)

    def jac_func(*inp: Tensor) -> Any:
        if outer_jacobian_strategy == "forward-mode":
            # the dual inputs themselves (a detached copy would drop their tangents)
            inp = tuple(t if t.requires_grad else t.requires_grad_() for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    # forward over reverse runs one jvp per direction: the inner reverse pass differentiates
    # physical tensors, which vmap's batched wrappers are not (PyTorch batches the gradients)
    forward = outer_jacobian_strategy == "forward-mode"
    res = jacobian(
        jac_func, ins, create_graph=create_graph, strict=strict,
        vectorize=vectorize and not forward, strategy=outer_jacobian_strategy,
    )  # fmt: skip
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


# --- vhp, hvp ---------------------------------------------------------------------------------------


def _scalar_output(outs: tuple[Tensor, ...], is_tuple: bool, fn_name: str) -> None:
    if is_tuple or not isinstance(outs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )


def vhp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)``: the vector-Hessian product of scalar ``func``."""
    with enable_grad():
        is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "vhp")
        ins = _grad_preprocess(ins, create_graph=create_graph, need_graph=True)
        if v is None:
            _single_element(v, ins, "input to the user-provided function is")
        vs = _prepared_v(v, "vhp", ins, is_inputs_tuple, create_graph)
        outputs = func(*ins)
        is_outputs_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", "vhp")
        _check_requires_grad(outs, "outputs", strict=strict)
        _scalar_output(outs, is_outputs_tuple, "vhp")
        jac = _autograd_grad(outs, ins, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, ins, vs, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, ins, strict, create_graph, "double_back")
    return (
        _tuple_postprocess(_grad_postprocess(outs, create_graph), is_outputs_tuple),
        _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple),
    )


def hvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), H v)``: the Hessian-vector product of scalar ``func``, by the
    double-backward trick as in PyTorch."""
    with enable_grad():
        is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "hvp")
        ins = _grad_preprocess(ins, create_graph=create_graph, need_graph=True)
        if v is None:
            _single_element(v, ins, "input to the user-provided function is")
        vs = _prepared_v(v, "hvp", ins, is_inputs_tuple, create_graph)
        outputs = func(*ins)
        is_outputs_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", "hvp")
        _check_requires_grad(outs, "outputs", strict=strict)
        _scalar_output(outs, is_outputs_tuple, "hvp")
        jac = _autograd_grad(outs, ins, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(aten.zeros_like.default(x).requires_grad_() for x in ins)
        double_back = _autograd_grad(jac, ins, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, vs, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, ins, strict, create_graph, "double_back_trick")
    return (
        _tuple_postprocess(_grad_postprocess(outs, create_graph), is_outputs_tuple),
        _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple),
    )
