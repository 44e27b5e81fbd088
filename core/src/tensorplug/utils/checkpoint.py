"""Activation checkpointing: ``checkpoint(fn, *args, use_reentrant=False)`` and
``checkpoint_sequential``, in the image of ``torch.utils.checkpoint``.

Note [Checkpointing]
~~~~~~~~~~~~~~~~~~~~
``checkpoint(fn, *args, use_reentrant=False, **kwargs)`` runs ``fn`` once, forward, keeping
none of the tensors its operations save for backward: the autograd plugin's saved-tensor hooks
(``tp.autograd.graph.saved_tensors_hooks``, Note [Saved tensor hooks]) replace each by its
position. The first time the backward pass reads one of them, ``fn`` runs again on the same
arguments, with grad recording on and the random state it started from (``preserve_rng_state``),
and that recomputation's saved tensors are handed out by position; by default it stops as soon
as the last one needed is saved (``early_stop``). So the region holds its inputs and outputs
between forward and backward instead of every intermediate, at the cost of a second forward.
Gradients reach every tensor ``fn`` uses that requires grad, parameters it closes over
included, through the graph of the first run; ``tp.autograd.grad`` works as well as
``backward``. ``determinism_check="default"`` compares the shapes, dtypes and devices of the
recomputed values with the first run's and raises :class:`CheckpointError` (PyTorch's message)
when they differ; ``"none"`` skips it.

``use_reentrant=True`` is PyTorch's older variant: ``fn`` runs under ``no_grad`` inside a
``tp.autograd.Function`` whose backward recomputes it and calls ``tp.autograd.backward`` on the
recomputed graph. It takes no keyword arguments for ``fn``, needs an input that requires grad
for any gradient, and works with ``backward()`` only; prefer ``use_reentrant=False``. As in
PyTorch 2.13, leaving ``use_reentrant`` unset warns, then uses the reentrant variant.

Both need the autograd plugin; with grad recording off they simply call ``fn``.
``context_fn``, ``debug`` and ``early_stop`` are accepted as PyTorch's: ``context_fn()`` gives
two context managers, for the first run and for the recomputation.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import tensorplug

from .. import random as _random
from ..errors import MissingPluginError
from ..tensor import Tensor

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential"]

_DEBUG_TIP = (
    "\nTip: To see a more detailed error message, either pass `debug=True` to\n"
    "`tensorplug.utils.checkpoint.checkpoint(...)`.\n"
)


class CheckpointError(RuntimeError):
    """The recomputation of a checkpointed region did not save what its first run saved."""


def noop_context_fn() -> tuple[Any, Any]:
    return contextlib.nullcontext(), contextlib.nullcontext()


def _autograd() -> Any:
    ag = vars(tensorplug).get("autograd")
    if ag is None:
        raise MissingPluginError(
            "tensorplug.utils.checkpoint needs the autograd plugin: pip install "
            "tensorplug-autograd",
            distribution="tensorplug-autograd",
        )
    return ag


def _grad_enabled() -> bool:
    f = vars(tensorplug).get("is_grad_enabled")
    return bool(f is not None and f())


def _tensors(values: Iterable[Any]) -> list[Tensor]:
    return [v for v in values if isinstance(v, Tensor)]


class _RngState:
    """The default generators' streams of the CPU and of the arguments' devices."""

    def __init__(self, args: Iterable[Any]) -> None:
        types = {"cpu"} | {t.device.type for t in _tensors(args)}
        self.states = [
            (g, g.get_state()) for g in (_random.default_generator(d) for d in sorted(types))
        ]

    @contextlib.contextmanager
    def restored(self) -> Any:
        """Run with the saved streams, then put the current ones back."""
        now = [(g, g.get_state()) for g, _ in self.states]
        for g, s in self.states:
            g.set_state(s)
        try:
            yield
        finally:
            for g, s in now:
                g.set_state(s)


def _metadata(t: Tensor) -> dict[str, Any]:
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device}


class _StopRecomputation(Exception):
    """Every saved value needed is recomputed (``early_stop``)."""


class _Frame:
    """One checkpointed call: what its first run saved (positions, metadata) and what its
    recomputation gave back (Note [Checkpointing])."""

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        rng: _RngState | None,
        recompute_context: contextlib.AbstractContextManager[Any],
        check: bool,
        early_stop: bool,
    ) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.rng = rng
        self.recompute_context = recompute_context
        self.check = check
        self.early_stop = early_stop
        self.metadata: list[dict[str, Any]] = []
        self.recomputed: list[Tensor | None] | None = None

    def pack(self, t: Tensor) -> int:
        self.metadata.append(_metadata(t))
        return len(self.metadata) - 1

    def unpack(self, i: int) -> Tensor:
        if self.recomputed is None:
            self._recompute()
        assert self.recomputed is not None
        t = self.recomputed[i]
        if t is None:  # a value unpacked twice (the saved tensor keeps it after the first)
            raise CheckpointError(
                "tensorplug.utils.checkpoint: a saved value was unpacked twice." + _DEBUG_TIP
            )
        self.recomputed[i] = None  # the node that saved it keeps it from now on
        return t

    def _recompute(self) -> None:
        ag = _autograd()
        n = len(self.metadata)
        got: list[Tensor] = []

        def pack(t: Tensor) -> None:
            if len(got) >= n:
                raise CheckpointError(
                    "tensorplug.utils.checkpoint: trying to save more tensors during "
                    "recomputation than during the original forward pass.\n" + _DEBUG_TIP
                )
            got.append(t)
            if self.early_stop and len(got) == n:
                raise _StopRecomputation

        def unpack(_: None) -> Tensor:
            raise CheckpointError(
                "tensorplug.utils.checkpoint: a value saved during recomputation was read "
                "back; the recomputation's graph is never differentiated." + _DEBUG_TIP
            )

        rng = self.rng.restored() if self.rng is not None else contextlib.nullcontext()
        try:
            with (
                rng,
                ag.enable_grad(),
                self.recompute_context,
                ag.graph.saved_tensors_hooks(pack, unpack),
            ):
                self.fn(*self.args, **self.kwargs)
        except _StopRecomputation:
            pass
        if len(got) != n:
            raise CheckpointError(
                "tensorplug.utils.checkpoint: A different number of tensors was saved during "
                "the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {n}\n"
                f"Number of tensors saved during recomputation: {len(got)}.\n" + _DEBUG_TIP
            )
        if self.check:
            different = [
                (i, m, _metadata(t))
                for i, (m, t) in enumerate(zip(self.metadata, got, strict=True))
                if m != _metadata(t)
            ]
            if different:
                lines = "".join(
                    f"tensor at position {i}:\nsaved metadata: {m}\nrecomputed metadata: {r}\n"
                    for i, m, r in different
                )
                raise CheckpointError(
                    "tensorplug.utils.checkpoint: Recomputed values for the following tensors "
                    f"have different metadata than during the forward pass.\n{lines}.\n"
                    + _DEBUG_TIP
                )
        self.recomputed = list(got)
        self.args = ()  # the recomputation is done: let go of the inputs
        self.kwargs = {}


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)``, recomputed in backward instead of keeping its saved
    tensors (Note [Checkpointing]). ``preserve_rng_state=True`` (a keyword) replays the random
    state of the first run."""
    if use_reentrant is None:
        warnings.warn(
            "tensorplug.utils.checkpoint: the use_reentrant parameter should be passed "
            "explicitly. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _reentrant(function, preserve, args)
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    if not _grad_enabled():
        return function(*args, **kwargs)
    ag = _autograd()
    forward_context, recompute_context = context_fn()
    rng = _RngState([*args, *kwargs.values()]) if preserve else None
    frame = _Frame(
        function, args, kwargs, rng, recompute_context, determinism_check == "default", early_stop
    )
    with forward_context, ag.graph.saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def _reentrant(function: Callable[..., Any], preserve: bool, args: tuple[Any, ...]) -> Any:
    if not _grad_enabled():
        return function(*args)
    ag = _autograd()

    class CheckpointFunction(ag.Function):  # type: ignore[misc, name-defined]
        @staticmethod
        def forward(ctx: Any, *inputs: Any) -> Any:
            ctx.rng = _RngState(inputs) if preserve else None
            ctx.inputs = inputs
            with ag.no_grad():
                return function(*inputs)

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            detached = tuple(
                x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x
                for x in ctx.inputs
            )
            rng = ctx.rng.restored() if ctx.rng is not None else contextlib.nullcontext()
            with rng, ag.enable_grad():
                outputs = function(*detached)
            if isinstance(outputs, Tensor):
                outputs = (outputs,)
            pairs = [
                (o, g)
                for o, g in zip(outputs, grads, strict=False)
                if isinstance(o, Tensor) and o.requires_grad and g is not None
            ]
            if not pairs:
                raise RuntimeError(
                    "none of output has requires_grad=True, this checkpoint() is not necessary"
                )
            ag.backward([o for o, _ in pairs], [g for _, g in pairs])
            return tuple(x.grad if isinstance(x, Tensor) else None for x in detached)

    return CheckpointFunction.apply(*args)


def checkpoint_sequential(
    functions: Any,
    segments: int,
    input: Any,
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Run ``functions`` (a list of callables, or an ``nn.Sequential``) in order on ``input``,
    checkpointing each of ``segments`` pieces but the last (PyTorch's split:
    ``len // segments`` functions per piece, the rest in the last)."""
    if use_reentrant is None:
        warnings.warn(
            "tensorplug.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
            "should be passed explicitly. use_reentrant=False is recommended.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    functions = list(functions)

    def run(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run(end + 1, len(functions) - 1)(input)
