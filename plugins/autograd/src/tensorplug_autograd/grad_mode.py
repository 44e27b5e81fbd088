"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Grad mode is the thread's exclusion of the ``Autograd<B>`` keys (DESIGN §3): ``no_grad()``
excludes them all, so calls skip the autograd kernels and record nothing; ``enable_grad()``
removes them from the excluded set again. Each works as a context manager and as a decorator,
and restores the previous state on exit, as in PyTorch::

    with tp.no_grad():
        w.sub_(lr * w.grad)

    @tp.no_grad()          # or @tp.no_grad, without the call
    def evaluate(model, x): ...

A decorated generator function runs each step (up to its next ``yield``) in the mode, and
the code that consumes it in its own, as PyTorch's decorators do.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Generator
from typing import Any, TypeVar

from tensorplug.dispatch import local_state

from .masks import M, grad_recording

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])
_object_new = object.__new__
_object_init = object.__init__


def is_grad_enabled() -> bool:
    return grad_recording()


class _GradMode:
    """A context manager and decorator that sets grad mode to ``self._enabled``."""

    _enabled: bool = True

    # The thread's mode this instance replaced on its innermost open entry (None while it is
    # not entered), and those of its outer open entries: one object may be entered again
    # inside itself (``with off: ... with on: ... with off:``), rarely.
    _prev: int | None = None
    _outer: list[int] | None = None

    # ``with tp.no_grad():`` runs once per training step: the instance is made by ``__new__``
    # alone (the subclasses' own ``__init__`` set their mode), its state is the class defaults
    # until it is entered, and ``__exit__`` takes its three arguments without packing them
    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # @no_grad without parentheses: the class is called with the function to decorate
        if args or kwargs:
            if len(args) == 1 and not kwargs and callable(args[0]) and cls is not set_grad_enabled:
                return cls()(args[0])
            if cls.__init__ is _object_init:  # object's would accept them silently
                raise TypeError(f"{cls.__name__}() takes no arguments")
        return _object_new(cls)

    def __enter__(self) -> None:
        st = local_state.masks
        nexc = st.nexc
        if self._prev is not None:
            self._nest()
        self._prev = nexc
        st.nexc = (nexc | M.ag) if self._enabled else (nexc & M.nag)

    def __exit__(self, typ: object, value: object, tb: object) -> None:
        local_state.masks.nexc = self._prev  # type: ignore[assignment]
        self._prev = None if self._outer is None else self._unnest()

    def _nest(self) -> None:
        """Entered inside itself: keep the outer entry's mode."""
        if self._outer is None:
            self._outer = []
        self._outer.append(self._prev)  # type: ignore[arg-type]

    def _unnest(self) -> int | None:
        """The mode of the enclosing entry of this object, or None when this was the last."""
        outer = self._outer
        return outer.pop() if outer else None

    def __call__(self, fn: F) -> F:
        if inspect.isgeneratorfunction(fn):
            return _generator_in_mode(self, fn)  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def clone(self) -> _GradMode:
        return type(self)()


def _generator_in_mode(mode: _GradMode, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, a generator function, with every step of its generators run in ``mode``: the
    first ``next``, each ``send``, ``throw`` and ``close``; between steps the caller's mode
    holds."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        gen = fn(*args, **kwargs)
        try:
            with mode.clone():
                value = gen.send(None)
            while True:
                try:
                    sent = yield value
                except GeneratorExit:
                    with mode.clone():
                        gen.close()
                    raise
                except BaseException as exc:
                    with mode.clone():
                        value = gen.throw(exc)
                else:
                    with mode.clone():
                        value = gen.send(sent)
        except StopIteration as stop:
            return stop.value

    return wrapper


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Disable gradient recording in this thread for the block (or decorated function)."""

    _enabled = False

    def __enter__(self) -> None:  # _GradMode's, for one mode (an optimizer's step)
        st = local_state.masks
        nexc = st.nexc
        if self._prev is not None:
            self._nest()
        self._prev = nexc
        st.nexc = nexc & M.nag


class enable_grad(_GradMode):  # noqa: N801
    """Enable gradient recording in this thread for the block (or decorated function)."""

    _enabled = True


class set_grad_enabled(_GradMode):  # noqa: N801
    """Set grad mode to ``mode``. Takes effect on construction, like PyTorch's, so both
    ``set_grad_enabled(False)`` as a statement and ``with set_grad_enabled(False):`` work."""

    def __init__(self, mode: bool) -> None:
        super().__init__()
        self._enabled = bool(mode)
        st = local_state.masks
        self._entry = st.nexc
        st.nexc = (st.nexc | M.ag) if self._enabled else (st.nexc & M.nag)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        local_state.masks.nexc = self._entry

    def __call__(self, fn: F) -> F:
        local_state.masks.nexc = self._entry  # used as a decorator: undo the change made above
        return super().__call__(fn)

    def clone(self) -> _GradMode:
        return set_grad_enabled(self._enabled)


class _InferenceState(threading.local):
    on = False  # inside inference_mode() on this thread
    outer: list[bool] | None = None  # the states the open entries replaced


_inference = _InferenceState()


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside ``inference_mode()`` (and not a nested
    ``inference_mode(False)``), as ``torch.is_inference_mode_enabled``."""
    return _inference.on


class inference_mode(no_grad):  # noqa: N801
    """``no_grad`` (tensorplug has no separate inference tensors) that
    ``is_inference_mode_enabled()`` reports; ``mode=False`` turns both off for the block."""

    def __init__(self, mode: bool = True) -> None:
        super().__init__()
        self._enabled = not mode

    def __enter__(self) -> None:
        _GradMode.__enter__(self)  # either mode
        st = _inference
        if st.outer is None:
            st.outer = []
        st.outer.append(st.on)
        st.on = not self._enabled

    def __exit__(self, typ: object, value: object, tb: object) -> None:
        _GradMode.__exit__(self, typ, value, tb)
        outer = _inference.outer
        _inference.on = outer.pop() if outer else False

    def clone(self) -> _GradMode:
        return inference_mode(not self._enabled)
