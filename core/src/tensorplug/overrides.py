"""The ``__tensorplug_function__`` protocol (the role of ``__torch_function__`` / NEP 18).

A public function of tensorplug (``tp.add``, ``tp.sum``, ...) called with an argument whose type
defines ``__tensorplug_function__`` hands the call to that type instead of dispatching::

    class ScalarTensor:
        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            if func not in HANDLED_FUNCTIONS:
                return NotImplemented
            return HANDLED_FUNCTIONS[func](*args, **(kwargs or {}))

The rules are NEP 18's: the candidates are the arguments (also inside lists and tuples) whose
type defines the method and is not ``Tensor`` itself (nor sets it to
:data:`disabled_tensorplug_function_impl`, as ``nn.Parameter`` does); subclasses go before their superclasses,
otherwise left to right, each type once; ``NotImplemented`` passes to the next; when every one
returns ``NotImplemented`` the call raises ``TypeError`` (a Python operator returns
``NotImplemented`` instead, so that Python tries the reflected operator).

The method is looked up on the instance, so a classmethod (as above) and a plain method
``def __tensorplug_function__(self, func, types, args=(), kwargs=None)`` (the "Extending
PyTorch" note's ``MetadataTensor``) both work; a plain method gets PyTorch's warning that
the form is deprecated there, once per class.

What takes part: the public functions (``tp.add``), the Tensor methods (``x.add``), the Python
operators (``q + 1``, ``-q``, ``q[0]``, ``func`` being the operator method, ``Tensor.__add__``),
and the functions of ``tensorplug.nn.functional``, ``tensorplug.linalg``,
``tensorplug.special`` and ``tensorplug.fft``.

``Tensor`` itself defines the method, as ``torch.Tensor.__torch_function__``: it runs the
function with the protocol disabled (:class:`DisableTensorplugFunctionSubclass`) and gives
tensor results (also inside tuples and lists) the class ``cls``. So a subclass that defines
nothing keeps its class through every function (``(s + 1)`` is an ``s``-class tensor), and one
that defines the method can end with ``super().__tensorplug_function__(func, types, args,
kwargs)``. The dispatcher still skips the protocol for plain ``Tensor`` arguments: only
subclasses take part (Note [Public function fast path] in _opset/functions.py).

Usage::

    tensorplug.overrides.get_overridable_functions()   # {"tensorplug": [...], "Tensor": [...],
                                                       #  "tensorplug.nn.functional": [...], ...}
    tensorplug.overrides.get_testing_overrides()       # {tp.add: lambda input, other, ...: -1}
    tensorplug.overrides.get_ignored_functions()       # factories and other non-overridable names
    tensorplug.overrides.resolve_name(tp.add)          # "tensorplug.add"
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
import warnings
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = [
    "DisableTensorplugFunctionSubclass",
    "disabled_tensorplug_function_impl",
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_tensorplug_function",
    "has_tensorplug_function",
    "is_tensor_like",
    "resolve_name",
]

F = TypeVar("F", bound=Callable[..., Any])

# Filled by _opset/api.py as it makes the public functions, on first use (Note [Lazy public
# functions]): the listings below have it make them all first.
_overridable: dict[Any, list[Callable[..., Any]]] = {}
_ignored: set[Callable[..., Any]] = set()
_signatures: dict[Callable[..., Any], inspect.Signature] = {}


class _State(threading.local):
    disabled = False  # inside DisableTensorplugFunctionSubclass, on this thread


_state = _State()


class DisableTensorplugFunctionSubclass:
    """Within it, no argument's type takes part in the protocol on this thread: calls dispatch
    as if every tensor were a plain ``Tensor`` (``torch._C.DisableTorchFunctionSubclass``).
    What a ``__tensorplug_function__`` uses to run ``func`` itself::

        with tp.overrides.DisableTensorplugFunctionSubclass():
            ret = func(*args, **kwargs)
    """

    __slots__ = ("_prev",)

    def __enter__(self) -> None:
        self._prev = _state.disabled
        _state.disabled = True

    def __exit__(self, *exc: object) -> None:
        _state.disabled = self._prev


class _DisabledImpl:
    """The type of :data:`disabled_tensorplug_function_impl`: a callable with no ``__get__``,
    so that it stays itself as a class attribute and the protocol can recognize it."""

    __slots__ = ()

    def __call__(
        self, func: Callable[..., Any], types: Any, args: Any = (), kwargs: Any = None
    ) -> Any:
        with DisableTensorplugFunctionSubclass():
            return func(*args, **(kwargs or {}))

    def __repr__(self) -> str:
        return "tensorplug.overrides.disabled_tensorplug_function_impl"


# ``__tensorplug_function__ = disabled_tensorplug_function_impl`` in a Tensor subclass takes it
# out of the protocol: it dispatches like ``Tensor`` and its results are plain tensors
# (``nn.Parameter``; PyTorch's ``torch._C._disabled_torch_function_impl``).
disabled_tensorplug_function_impl = _DisabledImpl()


def _takes_part_type(t: type) -> bool:
    """Whether arguments of type ``t`` (not a list) take part in the protocol now."""
    return (
        t is not _tensor_class()
        and getattr(t, "__tensorplug_function__", disabled_tensorplug_function_impl)
        is not disabled_tensorplug_function_impl
        and not _state.disabled
    )


def default_tensorplug_function(
    cls: type, func: Callable[..., Any], types: Any, args: Any = (), kwargs: Any = None
) -> Any:
    """``Tensor.__tensorplug_function__`` (installed as a classmethod by the op-set layer):
    PyTorch's ``Tensor.__torch_function__``. ``NotImplemented`` unless ``cls`` is a subclass
    of every type in ``types``; else ``func`` run with the protocol disabled, its tensor
    results given class ``cls``."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTensorplugFunctionSubclass():
        return _convert(func(*args, **kwargs), cls)


def _convert(ret: Any, cls: type) -> Any:
    """``ret`` with its tensors (also inside tuples and lists) of class ``cls``."""
    tensor = _tensor_class()
    if cls is tensor:
        return ret
    if isinstance(ret, tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)  # type: ignore[attr-defined]
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        make = getattr(ret, "_make", None)  # a named tuple (tp.return_types)
        ret = make(items) if make is not None else type(ret)(items)
    return ret


def _candidates(values: Iterable[Any]) -> list[Any]:
    """Arguments whose types take part, in NEP 18 order (one per type)."""
    from .tensor import Tensor

    if _state.disabled:
        return []
    found: list[Any] = []
    types: list[type] = []

    def visit(v: Any) -> None:
        t = type(v)
        if t is list or t is tuple:
            for x in v:
                visit(x)
            return
        if (
            t is Tensor
            or t in types
            or getattr(t, "__tensorplug_function__", disabled_tensorplug_function_impl)
            is disabled_tensorplug_function_impl
        ):
            return
        # subclasses before superclasses: insert before the first superclass already found
        pos = len(found)
        for i, other in enumerate(types):
            if issubclass(t, other):
                pos = i
                break
        found.insert(pos, v)
        types.insert(pos, t)

    for v in values:
        visit(v)
    return found


def has_tensorplug_function(values: Iterable[Any]) -> bool:
    """True when any of ``values`` (or an element of a list among them) takes the call over."""
    return bool(_candidates(values))


def handle_tensorplug_function(
    public: Callable[..., Any], relevant: Iterable[Any], *args: Any, **kwargs: Any
) -> Any:
    """Offer the call of ``public`` to each candidate type in turn (NEP 18 order)."""
    cands = _candidates(relevant)
    result = _offer(public, cands, args, kwargs)
    if result is not NotImplemented:
        return result
    types = tuple(type(c) for c in cands)
    names = ", ".join(sorted({t.__name__ for t in types}))
    qual = getattr(public, "__qualname__", repr(public))
    raise TypeError(
        f"no implementation found for 'tensorplug.{qual}' on types that implement "
        f"__tensorplug_function__: [{names}]"
    )


def _offer(
    public: Callable[..., Any], cands: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """The first answer other than ``NotImplemented`` of the candidates, else
    ``NotImplemented`` (internal: the Python operators return that to Python)."""
    types = tuple(type(c) for c in cands)
    for c in cands:
        method = c.__tensorplug_function__  # on the instance: a plain method binds to it
        if getattr(method, "__self__", None) is c and type(c) not in _warned:
            _warned.add(type(c))
            warnings.warn(
                f"{type(c).__qualname__}.__tensorplug_function__ is a plain method; PyTorch "
                "deprecates that form of __torch_function__ and will make it an error, please "
                "define it as a classmethod",
                UserWarning,
                stacklevel=_outside_tensorplug(),
            )
        result = method(public, types, args, kwargs)
        if result is not NotImplemented:
            return result
    return NotImplemented


_warned: set[type] = set()  # classes warned about their plain-method protocol


def _outside_tensorplug() -> int:
    """The ``stacklevel`` of the caller's first frame outside tensorplug (the user's call)."""
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("tensorplug"):
        frame, level = frame.f_back, level + 1
    return level


def _takes_part(x: Any) -> bool:
    """Whether ``x`` (not a list) takes part in the protocol (internal, for operators)."""
    return _takes_part_type(type(x))


@functools.cache
def _tensor_class() -> type:
    from .tensor import Tensor

    return Tensor


def _overridable_function(namespace: str, fn: F) -> F:
    """``fn``, a public function written in Python, made to honour the protocol (with itself
    as ``func``) and listed under ``namespace`` (internal: ``tensorplug.nn.functional``)."""

    tensor = _tensor_class()

    def maybe(values: Iterable[Any]) -> bool:  # cheap: one type test for each tensor
        for v in values:
            t = type(v)
            if t is not tensor and (t is list or t is tuple or _takes_part(v)):
                return True
        return False

    @functools.wraps(fn)
    def public(*args: Any, **kwargs: Any) -> Any:
        if maybe(args) or (kwargs and maybe(kwargs.values())):
            relevant = (*args, *kwargs.values())
            if has_tensorplug_function(relevant):
                return handle_tensorplug_function(public, relevant, *args, **kwargs)
        return fn(*args, **kwargs)

    _overridable.setdefault(namespace, []).append(public)
    _signatures[public] = inspect.signature(fn)
    return public  # type: ignore[return-value]


def resolve_name(f: Callable[..., Any]) -> str | None:
    """The name of a function the protocol hands over, for messages: ``"tensorplug.add"``,
    ``"tensorplug.Tensor.add"``, ``"tensorplug.nn.functional.relu"``, ``"aten::add.Tensor"``
    for an operator overload; ``None`` for anything else. Evaluated (after
    ``import tensorplug``), the name gives back ``f``."""
    from .dispatcher import OpOverload

    if isinstance(f, OpOverload):
        return f.name
    _make_all()
    for namespace, fns in _overridable.items():
        if any(fn is f for fn in fns):
            prefix = "tensorplug.Tensor" if namespace == "Tensor" else namespace
            return f"{prefix}.{f.__name__}"
    return None


def is_tensor_like(x: Any) -> bool:
    from .tensor import Tensor

    return isinstance(x, Tensor) or hasattr(type(x), "__tensorplug_function__")


def get_overridable_functions() -> dict[Any, list[Callable[..., Any]]]:
    """Namespace (``"tensorplug"``, ``"Tensor"``, ``"tensorplug.nn.functional"``,
    ``"tensorplug.linalg"``, ``"tensorplug.special"``, ``"tensorplug.fft"``) -> functions the
    protocol covers."""
    _make_all()
    return {ns: list(fns) for ns, fns in _overridable.items()}


def get_ignored_functions() -> set[Callable[..., Any]]:
    """Public functions that never consult the protocol (they take no tensor-like argument)."""
    _make_all()
    return set(_ignored)


def get_testing_overrides() -> dict[Callable[..., Any], Callable[..., Any]]:
    """Each overridable function -> a dummy with the same signature that returns -1."""
    _make_all()
    out: dict[Callable[..., Any], Callable[..., Any]] = {}
    for fns in _overridable.values():
        for fn in fns:
            sig = _signatures.get(fn)
            out[fn] = _dummy(sig)
    return out


# What makes every public function not made yet: ``_opset.api.generate_all``, which registers itself
# here when it is imported, and the start-up's loading of the lazy front ends whose functions
# are listed (``tensorplug.nn.functional``): this module stays below both (Note [Lazy public
# functions], Note [Layers] in docs/architecture.md).
_make_all_hooks: list[Callable[[], None]] = []


def _make_all() -> None:
    for make in _make_all_hooks:
        make()


def _dummy(sig: inspect.Signature | None) -> Callable[..., Any]:
    def dummy(*args: Any, **kwargs: Any) -> int:
        return -1

    if sig is not None:
        dummy.__signature__ = sig  # type: ignore[attr-defined]
    return dummy
