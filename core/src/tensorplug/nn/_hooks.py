"""A module's forward hooks: the handle that registering one returns (:class:`RemovableHandle`),
adding a hook to a module's registry, and the call that runs them around ``forward``.

A module keeps its hooks in two dicts, ``_forward_pre_hooks`` and ``_forward_hooks`` (handle id
-> the hook and its options, in call order); ``Module.__call__`` comes here only when one of them
is not empty, so a module without hooks pays two attribute reads for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["HookedModule", "RemovableHandle", "add_hook", "call_with_hooks"]


class HookedModule(Protocol):
    """What the hooks read of an ``nn.Module``, declared here (module.py imports this module:
    a circle even for type checkers otherwise)."""

    @property
    def _forward_pre_hooks(self) -> dict[int, tuple[Callable[..., Any], bool]]: ...
    @property
    def _forward_hooks(self) -> dict[int, tuple[Callable[..., Any], bool, bool]]: ...
    def forward(self, *args: Any, **kwargs: Any) -> Any: ...


def call_with_hooks(module: HookedModule, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``module.forward(*args, **kwargs)`` between its forward pre-hooks and forward hooks."""
    for hook, with_kwargs in list(module._forward_pre_hooks.values()):
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
    try:
        result = module.forward(*args, **kwargs)
    except BaseException:
        for hook, with_kwargs, always in list(module._forward_hooks.values()):
            if always:  # always_call: run even when forward raised, then re-raise
                try:
                    hook(module, args, kwargs, None) if with_kwargs else hook(module, args, None)
                except Exception:
                    pass
        raise
    for hook, with_kwargs, _ in list(module._forward_hooks.values()):
        new = hook(module, args, kwargs, result) if with_kwargs else hook(module, args, result)
        if new is not None:
            result = new
    return result


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
    if prepend:
        for key in [k for k in hooks if k != handle.id]:
            hooks[key] = hooks.pop(key)  # move the others behind it
    return handle


RemovableHandle.__module__ = "tensorplug.nn.module"  # where users find it
