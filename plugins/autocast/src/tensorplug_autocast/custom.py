"""Autocast for custom operators and custom autograd Functions.

Three ways, as in PyTorch:

* ``tp.library.register_autocast(op, device_type, cast_inputs)`` gives ``op`` an
  ``Autocast<B>`` kernel for that device type's backend: in a region it casts the floating
  inputs (Note [Eligible tensors] in casting.py) to ``cast_inputs`` and runs the op with
  autocast off for that device type;
* the pattern of PyTorch's dispatcher tutorial: a kernel of your own for ``AutocastCPU`` (or
  the ``Autocast`` alias) that casts with :func:`cached_cast` and calls the op again under
  ``tp.dispatch.exclude("AutocastCPU")``;
* ``tp.amp.custom_fwd`` / ``custom_bwd`` decorate the ``forward`` / ``backward`` of a
  ``tp.autograd.Function``: ``custom_fwd(cast_inputs=...)`` casts the inputs and runs
  ``forward`` with autocast off; ``custom_bwd`` runs ``backward`` with the autocast state
  ``forward`` ran with. They keep that state on ``ctx`` as ``ctx.fwd_used_autocast`` and
  ``ctx.autocast_dtype``.

Usage::

    tp.library.register_autocast("mylib::my_mm", "cpu", tp.bfloat16)

    def my_mm_autocast(a, b):                                  # the tutorial's pattern
        with tp.dispatch.exclude("AutocastCPU"):
            return my_mm(tp.amp.cached_cast(tp.bfloat16, a, "cpu"),
                         tp.amp.cached_cast(tp.bfloat16, b, "cpu"))
    lib.impl("my_mm", my_mm_autocast, "AutocastCPU")

    class MyMM(tp.autograd.Function):
        @staticmethod
        @tp.amp.custom_fwd(device_type="cpu", cast_inputs=tp.float32)
        def forward(ctx, a, b): ...
        @staticmethod
        @tp.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad): ...
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import tensorplug as tp
from tensorplug.dtypes import dtype

from . import mode
from .casting import cast, cast_value
from .kernels import TensorArgs, call_excluding

__all__ = ["cached_cast", "custom_bwd", "custom_fwd", "register_autocast"]

_libraries: list[Any] = []  # libraries register_autocast made itself (lib=None)


def cached_cast(to_type: dtype, value: Any, device_type: str) -> Any:
    """``value`` (a tensor, None, or a list or tuple of them) with its eligible tensors cast to
    ``to_type`` (Note [Eligible tensors]); casts to the region's dtype use the region's cache
    (Note [Cast cache]), as ``at::autocast::cached_cast``."""
    info = mode.device_info(device_type)
    st = mode.state()
    keep = st.dtypes.get(device_type, info.default) is to_type
    return cast_value(value, to_type, device_type, st, keep)


def register_autocast(op: Any, device_type: str, cast_inputs: dtype, /, *, lib: Any = None) -> None:
    """Make ``op`` cast its floating inputs to ``cast_inputs`` in ``device_type`` regions and
    run with autocast off (as ``torch.library.register_autocast``)."""
    overload = tp.dispatcher.find_op(op)
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    info = mode.device_info(device_type)
    if not isinstance(cast_inputs, dtype):
        raise TypeError(
            f"register_autocast({overload.name}, {device_type!r}, ...): cast_inputs must be a "
            f"tensorplug dtype (tp.float32, tp.bfloat16 ...), not {type(cast_inputs).__name__}"
        )
    where = TensorArgs(overload)

    def kernel(*args: Any, **kwargs: Any) -> Any:
        st = mode.state()
        new, kw = where.cast_all(args, kwargs, cast_inputs, device_type, st, False)
        return call_excluding(overload, info.mask, new, kw)

    kernel.__qualname__ = f"register_autocast[{overload.name}, {device_type}]"
    if lib is None:
        lib = tp.Library(overload.namespace, "IMPL")
        _libraries.append(lib)
    lib.impl(overload, kernel, info.key.name)


def _cast_nested(value: Any, device_type: str, to: dtype, st: mode.ThreadState) -> Any:
    """PyTorch's ``_cast`` of custom_fwd: tensors inside lists, tuples and dicts too."""
    if isinstance(value, tp.Tensor):
        return cast(value, to, device_type, st, False)
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, Mapping):
        return {k: _cast_nested(v, device_type, to, st) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_cast_nested(v, device_type, to, st) for v in value)
    return value


def custom_fwd(
    fwd: Callable[..., Any] | None = None,
    *,
    device_type: str,
    cast_inputs: dtype | None = None,
) -> Any:
    """Decorate the ``forward`` of a ``tp.autograd.Function`` (PyTorch's ``custom_fwd``).

    In a ``device_type`` region with ``cast_inputs`` given, the floating inputs are cast to it
    and ``forward`` runs with autocast off; without ``cast_inputs``, ``forward``'s ops run with
    the region's autocast state. Outside a region it changes nothing.
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    fn = fwd

    @functools.wraps(fn)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx.autocast_dtype = mode.get_autocast_dtype(device_type)
        enabled = mode.is_autocast_enabled(device_type)
        if cast_inputs is None:
            ctx.fwd_used_autocast = enabled
            return fn(*args, **kwargs)
        ctx.fwd_used_autocast = False
        if not enabled:
            return fn(*args, **kwargs)
        st = mode.state()
        with mode.autocast(device_type, enabled=False):
            return fn(
                *_cast_nested(args, device_type, cast_inputs, st),
                **_cast_nested(kwargs, device_type, cast_inputs, st),
            )

    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """Decorate the ``backward`` of a ``tp.autograd.Function`` decorated with
    :func:`custom_fwd`: it runs with the autocast state ``forward`` ran with."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    fn = bwd

    @functools.wraps(fn)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        try:
            enabled, used = ctx.fwd_used_autocast, ctx.autocast_dtype
        except AttributeError:
            raise RuntimeError(
                f"{getattr(fn, '__qualname__', fn)}: tp.amp.custom_bwd needs the forward of "
                "the same Function decorated with tp.amp.custom_fwd, which records the "
                "autocast state on ctx"
            ) from None
        with mode.autocast(device_type, enabled=enabled, dtype=used):
            return fn(*args, **kwargs)

    return decorate_bwd
