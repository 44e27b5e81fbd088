"""``opcheck``: does an operator keep the promises its registrations make? (internal; the public
names live in ``tensorplug.library``).

``tp.library.opcheck(op, args, kwargs=None)`` runs the operator on copies of the sample inputs,
once per check, and names each check it runs, as PyTorch's ``torch.library.opcheck`` does:

* ``test_schema``: the schema tells the truth about writes and aliases. An argument the schema
  does not mark written (``(a!)``) keeps its values, shape and dtype; an output is not an input
  and is not a view of one (it does not share the input's version counter) unless the schema
  gives both the same alias set (``Tensor(a) self -> Tensor(a)``).
* ``test_autograd_registration``: when an input requires grad, the operator's ``Autograd<B>``
  entry for the inputs' backend is an autograd kernel (``register_autograd``, an ``Autograd``
  kernel, or a ``CompositeImplicitAutograd`` decomposition) or a fallback such as the autograd
  plugin's, whose backward names the operator; a fallthrough would drop the gradients
  silently. Skipped when no input requires grad.
* ``test_faketensor``: the operator has a fake kernel (Note [Fake kernels] in _custom_ops.py:
  one registered for ``Meta``, or a ``CompositeImplicitAutograd`` decomposition), and it
  describes the real outputs: the operator runs on Meta copies of the inputs (docs/meta.md)
  and gives the same structure, shapes and dtypes as the real run, on the meta device.

PyTorch's fourth check, ``test_aot_dispatch_dynamic``, compares eager runs with its compiler's;
tensorplug has no compiler, so opcheck does not offer it.

Usage::

    tp.library.opcheck(numpy_sin, (tp.randn(3),))              # raises OpCheckError on failure
    tp.library.opcheck(op, args, raise_exception=False)
    # {'test_schema': 'SUCCESS', 'test_autograd_registration': 'SKIPPED: ...', ...}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import dispatcher as _dispatcher
from .. import keys as _keys
from ..dispatcher import OpOverload
from ..ops import OpPacket
from ..schema import Argument, FunctionSchema, Return
from ..tensor import Tensor

__all__ = ["DEFAULT_TEST_UTILS", "OpCheckError", "opcheck"]

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor")


class OpCheckError(Exception):
    """A check of :func:`opcheck` failed; the message names the check and the operator."""


OpCheckError.__module__ = "tensorplug.library"  # where users find it


class _Skip(Exception):
    """A check that does not apply to these inputs."""


def opcheck(
    op: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    *,
    test_utils: str | Sequence[str] = DEFAULT_TEST_UTILS,
    raise_exception: bool = True,
) -> dict[str, Any]:
    """Run the checks ``test_utils`` (default: all three) of ``op`` on ``args``/``kwargs``.

    ``op`` is a :class:`~tensorplug.library.CustomOpDef`, an ``OpOverload`` or an ``OpPacket``
    with one overload. Returns ``{check: "SUCCESS" | "SKIPPED: <why>" | exception}``; with
    ``raise_exception=True`` (the default) the first failure raises :class:`OpCheckError`
    naming the check, chained to the error it found.
    """
    overload = _overload(op)
    kwargs = {} if kwargs is None else kwargs
    if test_utils == "ALL":
        test_utils = DEFAULT_TEST_UTILS
    names = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    unknown = [n for n in names if n not in _CHECKS]
    if unknown:
        raise ValueError(
            f"opcheck(op, ..., test_utils={test_utils!r}): unknown check(s) {unknown}; the "
            f"checks are {', '.join(DEFAULT_TEST_UTILS)} (PyTorch's test_aot_dispatch_dynamic "
            "needs a compiler, which tensorplug does not have)"
        )
    results: dict[str, Any] = {}
    for name in names:
        try:
            _CHECKS[name](overload, *_copy((args, kwargs)))
        except _Skip as skip:
            results[name] = f"SKIPPED: {skip}"
        except Exception as e:
            if raise_exception:
                raise OpCheckError(f"opcheck({overload.name}): {name} failed: {e}") from e
            results[name] = e
        else:
            results[name] = "SUCCESS"
    return results


def _overload(op: Any) -> OpOverload:
    found = getattr(op, "op", op)  # a CustomOpDef's operator
    if isinstance(found, OpPacket):
        overloads = found._packet_overloads()
        if len(overloads) != 1:
            raise ValueError(
                f"opcheck: {found.qualname} has {len(overloads)} overloads "
                f"({', '.join(o.overload_name or 'default' for o in overloads)}); pass one, "
                f"such as tp.ops.{found.qualname.replace('::', '.')}.<overload>"
            )
        found = overloads[0]
    if not isinstance(found, OpOverload):
        raise ValueError(
            "opcheck(op, ...): op must be a custom op (tp.library.custom_op), an operator "
            f"overload such as tp.ops.aten.sin.default, or a packet with one overload; got "
            f"{type(op).__name__}"
        )
    return found


def _copy(value: Any) -> Any:
    """``value`` with every tensor replaced by a copy (a leaf that requires grad if it did)."""
    if isinstance(value, Tensor):
        t = value.detach().clone()
        return t.requires_grad_() if value.requires_grad else t
    if isinstance(value, list | tuple):
        return type(value)(_copy(v) for v in value)
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


def _tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _tensors(v)]
    return []


# --- test_schema ----------------------------------------------------------------------------


def _check_schema(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    schema = op.schema
    positional, keyword = schema.bind(args, kwargs, op.name)
    values = dict(zip((a.name for a in schema.arguments), (*positional, *keyword.values()),
                      strict=True))  # fmt: skip
    before = {a.name: [_snapshot(t) for t in _tensors(values[a.name])] for a in schema.arguments}
    result = op(*args, **kwargs)
    outputs = _outputs(schema, result)
    for argument in schema.arguments:
        for t, snapshot in zip(_tensors(values[argument.name]), before[argument.name], strict=True):
            for j, (out, ret) in enumerate(outputs):
                if out is t and not argument.is_write:
                    raise AssertionError(
                        f"outputs[{j}] is the argument '{argument.name}', which the schema does "
                        f"not mark written: return a new tensor, or annotate both, as in "
                        f"'Tensor(a!) {argument.name}' and '-> Tensor(a!)'"
                    )
                if _aliases(out, t) and not _may_alias(argument, ret):
                    raise AssertionError(
                        f"outputs[{j}] aliases the argument '{argument.name}' (a view of it), "
                        f"but the schema does not say so: annotate both with one alias set, as "
                        f"in 'Tensor(a) {argument.name}' and '-> Tensor(a)', or return a copy"
                    )
            if _snapshot(t) != snapshot and not argument.is_write:
                raise AssertionError(
                    f"the argument '{argument.name}' is not marked written (a!) in the schema "
                    f"'{schema}', but the operator changed it"
                )


def _snapshot(t: Tensor) -> tuple[Any, ...]:
    values = t.detach().tolist()
    return (t.shape, t.dtype, _nan_free(values))


def _nan_free(values: Any) -> Any:
    """Values with NaN replaced by a marker, so that equal snapshots compare equal."""
    if isinstance(values, list):
        return [_nan_free(v) for v in values]
    if isinstance(values, float) and math.isnan(values):
        return "nan"
    return values


def _outputs(schema: FunctionSchema, result: Any) -> list[tuple[Tensor, Return | None]]:
    """Each output tensor with the return it belongs to (a list return: each element)."""
    returns = schema.returns
    items = result if len(returns) > 1 and isinstance(result, tuple) else (result,)
    found = []
    for i, item in enumerate(items):
        ret = returns[i] if i < len(returns) else None
        found += [(t, ret) for t in _tensors(item)]
    return found


def _aliases(a: Tensor, b: Tensor) -> bool:
    """Whether ``a`` is, or is a view of, ``b``'s storage: views share their base's version
    counter (Note [Tensor protocol])."""
    return a is b or a._tp_version is b._tp_version or a._data is b._data


def _may_alias(argument: Argument, ret: Return | None) -> bool:
    a, r = argument.annotation, ret.annotation if ret is not None else None
    if a is None or r is None:
        return False
    sets = set(a.before) | set(a.after)
    return "*" in sets or "*" in r.before or bool(sets & set(r.before))


# --- test_autograd_registration -------------------------------------------------------------


def _check_autograd_registration(
    op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    tensors = _tensors([*args, *kwargs.values()])
    if not any(t.requires_grad for t in tensors):
        raise _Skip("no input requires grad; pass inputs that do to run this check")
    backends = [_keys.backend_for_device_type(t.device.type) for t in tensors]
    order = [k for k in _keys.priority_order() if k in backends]
    key = _keys.per_backend("Autograd", order[0])
    source = _dispatcher.dispatch_table(op)[key.name]
    if source in ("fallthrough", "missing"):
        what = "falls through to the backend kernel" if source == "fallthrough" else "is missing"
        raise AssertionError(
            f"its inputs require grad, but its {key.name} entry {what}: the outputs would not "
            "require grad and gradients would be lost without an error. Register a derivative "
            f"with tp.library.register_autograd('{op.name}', backward, setup_context=...) or an "
            "'Autograd' kernel; for an operator without one, "
            "tp.autograd.autograd_not_implemented_fallback() makes backward raise instead"
        )


# --- test_faketensor ------------------------------------------------------------------------


def _check_faketensor(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    source = _dispatcher.dispatch_table(op)["Meta"]
    if source not in ("Meta", "CompositeImplicitAutograd"):
        where = "" if source in ("missing", "fallback") else f" (its Meta entry is {source})"
        raise AssertionError(
            f"it has no fake kernel{where}: register one that computes the outputs' shapes and "
            f"dtypes without reading data, with tp.library.register_fake('{op.name}', fn) (or "
            "@op.register_fake for a custom op)"
        )
    expected = op(*args, **kwargs)
    fake_args, fake_kwargs = _to_meta((args, kwargs))
    got = op(*fake_args, **fake_kwargs)
    _compare_metadata(expected, got, "outputs")


def _to_meta(value: Any) -> Any:
    """``value`` with every tensor replaced by a Meta tensor of its shape and dtype (a leaf
    that requires grad if it did)."""
    if isinstance(value, Tensor):
        t = value.detach().to("meta")
        return t.requires_grad_() if value.requires_grad else t
    if isinstance(value, list | tuple):
        return type(value)(_to_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_meta(v) for k, v in value.items()}
    return value


def _compare_metadata(expected: Any, got: Any, where: str) -> None:
    if isinstance(expected, Tensor):
        if not isinstance(got, Tensor):
            raise AssertionError(f"{where}: the fake kernel gives {type(got).__name__}, the "
                                 "kernel a Tensor")  # fmt: skip
        for what in ("shape", "dtype"):
            e, g = getattr(expected, what), getattr(got, what)
            if what == "shape":
                e, g = tuple(e), tuple(g)
            if e != g:
                raise AssertionError(f"{where}: the fake kernel gives {what} {g}, the kernel {e}")
        if got.device.type != "meta":
            raise AssertionError(
                f"{where}: the fake kernel gives a tensor on {got.device} for Meta inputs; make "
                "its outputs on the inputs' device (tp.empty(..., device=x.device), "
                "tp.empty_like(x))"
            )
        return
    if isinstance(expected, list | tuple):
        if not isinstance(got, list | tuple) or len(got) != len(expected):
            raise AssertionError(
                f"{where}: the fake kernel gives {_describe(got)}, the kernel {_describe(expected)}"
            )
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            _compare_metadata(e, g, f"{where}[{i}]")
        return
    if expected is None and got is not None:
        raise AssertionError(f"{where}: the fake kernel gives {_describe(got)}, the kernel None")


def _describe(value: Any) -> str:
    if isinstance(value, list | tuple):
        return f"a {type(value).__name__} of {len(value)}"
    return type(value).__name__


_CHECKS: dict[str, Callable[[OpOverload, tuple[Any, ...], dict[str, Any]], None]] = {
    "test_schema": _check_schema,
    "test_autograd_registration": _check_autograd_registration,
    "test_faketensor": _check_faketensor,
}
