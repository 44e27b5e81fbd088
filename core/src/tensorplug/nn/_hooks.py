"""A module's hooks: the handle that registering one returns (:class:`RemovableHandle`), adding
a hook to a module's registry or to the global ones, and the call that runs them around
``forward``.

A module keeps its hooks in four dicts, ``_forward_pre_hooks``, ``_forward_hooks``,
``_backward_pre_hooks`` and ``_backward_hooks`` (handle id -> the hook and its options, in call
order), the global hooks of ``nn.modules.module.register_module_*`` are in :data:`GLOBAL`.
``Module.__call__`` comes here only when the module has had a hook (its ``_hooked`` flag) or a
global call hook exists, so a module without hooks pays two reads for them.

Note [Full backward hooks]
~~~~~~~~~~~~~~~~~~~~~~~~~~
As PyTorch's ``BackwardHook``: when a module has full backward (pre-)hooks and grad recording
is on, its tensor arguments go through an identity ``tp.autograd.Function``
(``BackwardHookFunction``) before ``forward``, and its tensor outputs through another after the
forward hooks. The outputs' node runs first in backward: the pre-hooks
``hook(module, grad_output)`` may replace ``grad_output``; the inputs' node runs when the
gradients of all the inputs are known: ``hook(module, grad_input, grad_output)`` may replace
``grad_input``. ``grad_input`` and ``grad_output`` are tuples with one entry per positional
argument / output (None for the non-tensors and for tensors that get no gradient). When no
input requires grad the hooks run from the outputs' node with ``grad_input`` all None, and may
only return None. Modifying a module's output (or, inside ``forward``, its input) in place
raises the custom Function's view error, as in PyTorch: clone it first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import tensorplug

from ..tensor import Tensor

__all__ = [
    "GLOBAL", "HookedModule", "RemovableHandle", "add_global_hook", "add_hook",
    "call_with_hooks",
]  # fmt: skip


class _GlobalHooks:
    """The hooks of every module (``nn.modules.module.register_module_*``)."""

    def __init__(self) -> None:
        self.forward_pre: dict[int, tuple[Callable[..., Any], bool]] = {}
        self.forward: dict[int, tuple[Callable[..., Any], bool, bool]] = {}
        self.backward_pre: dict[int, Callable[..., Any]] = {}
        self.backward: dict[int, Callable[..., Any]] = {}
        self.buffer_registration: dict[int, Callable[..., Any]] = {}
        self.module_registration: dict[int, Callable[..., Any]] = {}
        self.parameter_registration: dict[int, Callable[..., Any]] = {}

        self.n_calls = 0  # global hooks that run around module calls: Module.__call__ reads it


GLOBAL = _GlobalHooks()


class HookedModule(Protocol):
    """What the hooks read of an ``nn.Module``, declared here (module.py imports this module:
    a circle even for type checkers otherwise)."""

    @property
    def _forward_pre_hooks(self) -> dict[int, tuple[Callable[..., Any], bool]]: ...
    @property
    def _forward_hooks(self) -> dict[int, tuple[Callable[..., Any], bool, bool]]: ...
    @property
    def _backward_pre_hooks(self) -> dict[int, Callable[..., Any]]: ...
    @property
    def _backward_hooks(self) -> dict[int, Callable[..., Any]]: ...
    def forward(self, *args: Any, **kwargs: Any) -> Any: ...


def call_with_hooks(module: HookedModule, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``module.forward(*args, **kwargs)`` between its forward pre-hooks and forward hooks
    (the global ones first), its inputs and outputs set up for its full backward hooks (Note
    [Full backward hooks])."""
    pre_hooks = [*GLOBAL.forward_pre.values(), *module._forward_pre_hooks.values()]
    fwd_hooks = [*GLOBAL.forward.values(), *module._forward_hooks.values()]
    bw_hooks = [*GLOBAL.backward.values(), *module._backward_hooks.values()]
    bw_pre_hooks = [*GLOBAL.backward_pre.values(), *module._backward_pre_hooks.values()]
    for hook, with_kwargs in pre_hooks:
        if with_kwargs:
            new = hook(module, args, kwargs)
            if new is not None:
                if not (isinstance(new, tuple) and len(new) == 2):
                    raise RuntimeError(
                        "forward pre-hook must return None or a tuple of (new_args, "
                        f"new_kwargs), but got {new!r}."
                    )
                args, kwargs = new
        else:
            new = hook(module, args)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
    bw = None
    if (bw_hooks or bw_pre_hooks) and _grad_enabled():
        bw = _BackwardHook(module, bw_hooks, bw_pre_hooks)
        args = bw.setup_input_hook(args)
    try:
        result = module.forward(*args, **kwargs)
    except BaseException:
        for hook, with_kwargs, always in fwd_hooks:
            if always:  # always_call: run even when forward raised, then re-raise
                try:
                    hook(module, args, kwargs, None) if with_kwargs else hook(module, args, None)
                except Exception:
                    pass
        raise
    for hook, with_kwargs, _ in fwd_hooks:
        new = hook(module, args, kwargs, result) if with_kwargs else hook(module, args, result)
        if new is not None:
            result = new
    if bw is not None:
        result = bw.setup_output_hook(result)
    return result


def _autograd() -> Any:
    return vars(tensorplug).get("autograd")


def _grad_enabled() -> bool:
    f = vars(tensorplug).get("is_grad_enabled")
    return bool(f is not None and f())


_hook_function: Any = None


def _backward_hook_function() -> Any:
    """The identity Function the gradients of a hooked module's inputs and outputs pass
    through (Note [Full backward hooks]), made once the autograd plugin is there."""
    global _hook_function
    if _hook_function is None:
        ag = _autograd()

        class BackwardHookFunction(ag.Function):  # type: ignore[misc, name-defined]
            @staticmethod
            def forward(ctx: Any, on_grads: Any, *tensors: Tensor) -> tuple[Tensor, ...]:
                ctx.on_grads = on_grads
                ctx.set_materialize_grads(False)
                ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
                return tensors

            @staticmethod
            def backward(ctx: Any, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
                return (None, *ctx.on_grads(grads))

        _hook_function = BackwardHookFunction
    return _hook_function


class _BackwardHook:
    """A hooked module's call, as PyTorch's ``torch.utils.hooks.BackwardHook`` (Note [Full
    backward hooks])."""

    def __init__(
        self,
        module: HookedModule,
        hooks: list[Callable[..., Any]],
        pre_hooks: list[Callable[..., Any]],
    ) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = 0
        self.input_index: list[int] | None = None
        self.n_outputs = 0
        self.output_index: list[int] | None = None

    @staticmethod
    def _pack(index: list[int], values: tuple[Any, ...], size: int) -> tuple[Any, ...]:
        out: list[Any] = [None] * size
        for i, v in zip(index, values, strict=True):
            out[i] = v
        return tuple(out)

    @staticmethod
    def _unpack(index: list[int], values: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(values[i] for i in index)

    def wrap_tensors(
        self, values: tuple[Any, ...], on_grads: Callable[..., Any]
    ) -> tuple[Any, ...] | None:
        """``values`` with their tensors passed through the identity Function, or None when
        none requires grad."""
        index = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        tensors = [values[i] for i in index]
        if not any(t.requires_grad for t in tensors):
            return None
        new = _backward_hook_function().apply(on_grads, *tensors)
        if isinstance(new, Tensor):
            new = (new,)
        out = list(values)
        for i, t in zip(index, new, strict=True):
            out[i] = t
        return tuple(out)

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        index = [i for i, v in enumerate(args) if isinstance(v, Tensor)]
        self.n_inputs = len(args)

        def on_grads(grads: tuple[Any, ...]) -> tuple[Any, ...]:
            grad_inputs = self._pack(index, grads, self.n_inputs)
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is None:
                    continue
                if isinstance(res, Tensor):
                    res = (res,)
                if len(res) != len(grad_inputs):
                    raise RuntimeError(
                        "Backward hook returned an invalid number of grad_input, got "
                        f"{len(res)}, but expected {len(grad_inputs)}"
                    )
                grad_inputs = tuple(res)
            self.grad_outputs = None  # this call's backward is done
            return self._unpack(index, grad_inputs)

        wrapped = self.wrap_tensors(args, on_grads)
        if wrapped is None:
            return args
        self.input_index = index
        return wrapped

    def setup_output_hook(self, result: Any) -> Any:
        single = not isinstance(result, tuple)
        values = (result,) if single else result
        index = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        self.n_outputs = len(values)

        def on_grads(grads: tuple[Any, ...]) -> tuple[Any, ...]:
            grad_outputs = self._pack(index, grads, self.n_outputs)
            for hook in self.pre_hooks:
                res = hook(self.module, grad_outputs)
                if res is None:
                    continue
                if isinstance(res, Tensor):
                    res = (res,)
                if len(res) != len(grad_outputs):
                    raise RuntimeError(
                        "Backward pre hook returned an invalid number of grad_output, got "
                        f"{len(res)}, but expected {len(grad_outputs)}"
                    )
                grad_outputs = tuple(res)
            self.grad_outputs = grad_outputs
            if self.input_index is None:  # no input requires grad: the hooks run now
                grad_inputs = (None,) * self.n_inputs
                for hook in self.hooks:
                    res = hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (
                        isinstance(res, tuple) and all(r is None for r in res)
                    ):
                        raise RuntimeError(
                            "Backward hook for Modules where no input requires gradient should "
                            "always return None or None for all gradients."
                        )
                self.grad_outputs = None
            return self._unpack(index, grad_outputs)

        wrapped = self.wrap_tensors(values, on_grads)
        if wrapped is None:
            return result
        self.output_index = index
        return wrapped[0] if single else wrapped


class RemovableHandle:
    """What registering a hook returns: ``remove()`` takes the hook out again (also as a
    context manager, on exit)."""

    _next_id = 0

    def __init__(self, hooks: dict[int, Any]) -> None:
        self._hooks = hooks
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def add_hook(module: HookedModule, registry: str, entry: Any, prepend: bool) -> RemovableHandle:
    hooks: dict[int, Any] | None = module.__dict__.get(registry)
    if hooks is None:  # the class's empty default is shared: never written
        hooks = {}
        object.__setattr__(module, registry, hooks)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = entry
    object.__setattr__(module, "_hooked", True)  # Module.__call__ comes here from now on
    if prepend:
        for key in [k for k in hooks if k != handle.id]:
            hooks[key] = hooks.pop(key)  # move the others behind it
    return handle


class _GlobalCallHandle(RemovableHandle):
    """The handle of a global hook run around module calls: removing it keeps
    ``GLOBAL.n_calls`` true."""

    def remove(self) -> None:
        if self._hooks.pop(self.id, None) is not None:
            GLOBAL.n_calls -= 1


def add_global_hook(registry: dict[int, Any], entry: Any, *, call: bool) -> RemovableHandle:
    """Add ``entry`` to a registry of :data:`GLOBAL`; ``call``: a hook run around calls."""
    handle = _GlobalCallHandle(registry) if call else RemovableHandle(registry)
    registry[handle.id] = entry
    if call:
        GLOBAL.n_calls += 1
    return handle


RemovableHandle.__module__ = "tensorplug.nn.module"  # where users find it
