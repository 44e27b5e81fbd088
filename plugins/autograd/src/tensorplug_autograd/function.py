"""``tp.autograd.Function`` and ``tp.library.register_autograd``: user-defined derivatives.

A ``Function`` subclass defines ``forward`` and ``backward`` as static methods; ``apply`` runs
``forward`` with grad mode off and, when an input requires grad, makes a node (an instance of
``<Name>Backward``, which is also the ``ctx`` both methods receive) the ``grad_fn`` of the
outputs. Both styles of PyTorch work::

    class MulConstant(tp.autograd.Function):
        @staticmethod
        def forward(ctx, tensor, constant):          # ctx first ...
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

    class Exp(tp.autograd.Function):
        @staticmethod
        def forward(x):                              # ... or a separate setup_context
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

``register_autograd(op, backward, setup_context=...)`` gives an operator the same machinery
through an Autograd kernel: the op runs below autograd and ``backward`` is its derivative.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import tensorplug as tp
from tensorplug import dispatcher
from tensorplug.dispatch import local_state
from tensorplug.tensor import Tensor

from .accumulate import edge
from .graph import Node, input_meta, zeros_for
from .masks import M, grad_recording
from .meta import ViewInfo, is_leaf, meta_of, set_history
from .saved import FREED, SavedTensor

__all__ = ["Function", "FunctionCtx", "once_differentiable", "register_autograd"]


class FunctionCtx(Node):
    """The ``ctx`` of a Function: it is also the backward node of the call."""

    # no __slots__: users store anything on ctx (ctx.constant = ...)
    _backward: Callable[..., Any]
    _fn_name: str = "Function"

    def __init__(self) -> None:
        super().__init__()
        self.needs_input_grad: tuple[bool, ...] = ()
        self.materialize_grads = True
        self._to_save: tuple[Any, ...] | None = None
        self._saved: tuple[SavedTensor | None, ...] | None = None
        self._dirty_tensors: tuple[Tensor, ...] = ()
        self._non_differentiable: tuple[Tensor, ...] = ()
        self._out_meta: tuple[Any, ...] = ()
        self._n_out = 1
        self._arg_edges: tuple[int | None, ...] = ()  # forward arg position -> edge index

    # --- the API of ctx -------------------------------------------------------------------

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(t).__name__}"
                )
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        if self._saved is None:
            if self._to_save is not None:  # read inside forward / setup_context
                return self._to_save
            return ()
        return tuple(None if s is None else s.unpack(self) for s in self._saved)

    def mark_dirty(self, *tensors: Tensor) -> None:
        self._dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)

    # --- as a node ------------------------------------------------------------------------

    def name(self) -> str:
        return type(self).__name__

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        if self.materialize_grads:
            grads = [
                g if g is not None or m is None else zeros_for(m)
                for g, m in zip(grads, self._out_meta, strict=True)
            ]
        result = self._backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self._arg_edges)
        if len(result) < n_args or any(r is not None for r in result[n_args:]):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{n_args}, got {len(result)})"
            )
        res: list[Tensor | None] = [None] * len(self.next_functions)
        for pos, e in enumerate(self._arg_edges):
            r = result[pos]
            if e is None:
                if r is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {pos + 1}, but the corresponding forward input was not a "
                        "Variable; return None at that position"
                    )
                continue
            res[e] = r
        return res

    def _release(self) -> None:
        if self._saved is not None:  # drop them: reading one afterwards raises
            self._saved = tuple(None if s is None else FREED for s in self._saved)


class _FunctionMeta(type):
    """Gives each Function subclass its node class ``<Name>Backward``."""

    def __init__(cls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> None:
        super().__init__(name, bases, ns)
        backward = cls.__dict__.get("backward")
        fn: Any = (
            backward.__func__
            if isinstance(backward, staticmethod)
            else getattr(cls, "backward", None)
        )
        cls._backward_cls = type(
            f"{name}Backward", (FunctionCtx,), {"_backward": staticmethod(fn), "_fn_name": name}
        )


class Function(metaclass=_FunctionMeta):
    """Base class of user-defined differentiable functions (see the module docstring)."""

    _backward_cls: type[FunctionCtx]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            f"{type(self).__name__} is a tp.autograd.Function: call {type(self).__name__}.apply(...) "
            "instead of creating an instance"
        )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        return _NO_SETUP

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        uses_setup = cls.setup_context is not Function.setup_context

        def forward(ctx: FunctionCtx) -> Any:
            if uses_setup:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
                return out
            return cls.forward(ctx, *args, **kwargs)

        return run_function(cls._backward_cls, args, forward)


_NO_SETUP = object()


def once_differentiable(backward: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a Function's ``backward`` that is not itself differentiable: it runs with
    grad mode off, so with ``create_graph=True`` its results record nothing (they do not
    require grad), as PyTorch's ``torch.autograd.function.once_differentiable``."""

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        st = local_state.masks
        old = st.nexc
        st.nexc = old & M.nag
        try:
            return backward(ctx, *grads)
        finally:
            st.nexc = old

    return wrapper


def run_function(
    node_cls: type[FunctionCtx], args: Sequence[Any], forward: Callable[[FunctionCtx], Any]
) -> Any:
    """Run ``forward(ctx)`` with grad mode off; connect its outputs to ``ctx`` as a node."""
    ctx = node_cls()
    edges: list[Any] = []
    metas: list[Any] = []
    arg_edges: list[int | None] = []
    needs: list[bool] = []
    recording = grad_recording()
    for a in args:
        if isinstance(a, Tensor):
            arg_edges.append(len(edges))
            e = edge(a) if recording else (None, 0)
            edges.append(e)
            metas.append(input_meta(a))
            needs.append(e[0] is not None)
        else:
            arg_edges.append(None)
            needs.append(False)
    ctx.needs_input_grad = tuple(needs)
    ctx._arg_edges = tuple(arg_edges)
    st = local_state.masks
    old = st.nexc
    st.nexc = old & M.nag
    try:
        out = forward(ctx)
    finally:
        st.nexc = old
    if not any(needs):
        return out
    single = not isinstance(out, tuple)
    outs = [out] if single else list(out)
    inputs = [a for a in args if isinstance(a, Tensor)]
    dirty = ctx._dirty_tensors
    nondiff = ctx._non_differentiable
    for d in dirty:
        if not any(d is t for t in outs):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as "
                "output. The inputs that are modified inplace must all be outputs of the "
                "Function."
            )
        if d.tp_keyset & M.ag and is_leaf(d):
            raise RuntimeError(
                f"a leaf Variable that requires grad has been used in an in-place operation "
                f"({ctx._fn_name} marked it dirty). Pass a clone() of it, or run the Function "
                "under tp.no_grad()."
            )
    for nr, t in enumerate(outs):
        if not isinstance(t, Tensor):
            continue
        returned_input = any(t is x for x in inputs) and not any(t is d for d in dirty)
        if returned_input:
            t = outs[nr] = _alias_of_input(t)
        if any(t is x for x in nondiff) or not (
            t.tp_dtype.is_floating_point or t.tp_dtype.is_complex
        ):
            continue
        set_history(t, ctx, nr)
        view = t.tp_autograd.view if t.tp_autograd is not None else None
        if view is not None and not any(t is d for d in dirty):
            # Note [Views that refuse in-place changes] in inplace.py
            view.function = node_cls._fn_name
    ctx.next_functions = tuple(edges)
    ctx._input_meta = tuple(metas)
    ctx._n_out = len(outs)
    ctx._out_meta = tuple(input_meta(t) if isinstance(t, Tensor) else None for t in outs)
    if ctx._to_save is not None:
        saved: list[SavedTensor | None] = []
        for t in ctx._to_save:
            if t is None:
                saved.append(None)
                continue
            nr = next((i for i, o in enumerate(outs) if o is t), -1)
            saved.append(SavedTensor(t, nr) if nr >= 0 else SavedTensor(t))
        ctx._saved = tuple(saved)
        ctx._to_save = None
    for d in dirty:
        meta_of(d)
    return outs[0] if single else tuple(outs)


def _alias_of_input(t: Tensor) -> Tensor:
    """What a Function gives for an input it returned as is: an alias, a view of the input
    (as in PyTorch) whose replay records nothing, so the output's history stays the
    Function's."""
    out: Tensor = tp.ops.aten.detach.default(t)
    m = t.tp_autograd
    base = m.view if m is not None else None
    root, chain = (base.base, base.chain) if base is not None else (t, ())
    meta_of(out).view = ViewInfo(root, (*chain, (_DETACH, (), {})), out.tp_version.value)
    out.tp_keyset |= M.adview  # its in-place ops meet the check (Note [The ADView key])
    return out


_DETACH = tp.ops.aten.detach.default


# --- register_autograd --------------------------------------------------------------------------

_libraries: list[Any] = []  # Libraries made by register_autograd without lib=: kept alive


def register_autograd(
    op: Any,
    backward: Callable[..., Any],
    /,
    *,
    setup_context: Callable[[Any, tuple[Any, ...], Any], Any] | None = None,
    lib: Any = None,
) -> None:
    """Make ``backward(ctx, *grads)`` the derivative of ``op`` (PyTorch's register_autograd).

    ``setup_context(ctx, inputs, output)`` runs after the op, with ``inputs`` the op's
    arguments in schema order; ``backward`` returns one gradient per argument (``None`` for
    arguments that are not tensors or need none).
    """
    overload = dispatcher.find_op(op) if not isinstance(op, tp.OpOverload) else op
    s = overload.schema
    names = [a.name for a in s.arguments]
    npos = len(s.positional)
    node_cls = type(
        f"{overload.op_name.capitalize()}Backward",
        (FunctionCtx,),
        {"_backward": staticmethod(backward), "_fn_name": overload.name},
    )

    def kernel(ks: int, *args: Any, **kwargs: Any) -> Any:
        inputs = (*args, *(kwargs[n] for n in names[npos:] if n in kwargs))

        def forward(ctx: FunctionCtx) -> Any:
            out = overload.redispatch(M.below & int(ks), *args, **kwargs)
            if setup_context is not None:
                setup_context(ctx, inputs, out)
            return out

        return run_function(node_cls, inputs, forward)

    kernel.__qualname__ = f"register_autograd[{overload.name}]"
    if lib is None:
        lib = tp.Library(overload.namespace, "IMPL")
        _libraries.append(lib)
    lib.impl(overload, kernel, "Autograd", with_keyset=True)
