"""Custom operators from Python functions: torch.library's modern API, on top of
:class:`~tensorplug.library.Library` (internal; the public names live in ``tensorplug.library``).

``custom_op`` turns a function with type hints into an operator: the schema is inferred from
the hints (:func:`infer_schema`, PyTorch's rules), the function becomes its kernel for every
backend (``CompositeExplicitAutograd``) or for the backends of ``device_types``, and the
returned :class:`CustomOpDef` calls the operator and takes the other registrations::

    @tp.library.custom_op("mylib::numpy_sin", mutates_args=())
    def numpy_sin(x: tp.Tensor) -> tp.Tensor:
        return tp.tensor(np.sin(x.numpy()))

    @numpy_sin.register_fake                     # the Meta kernel: metadata, no data
    def _(x):
        return tp.empty_like(x)

    numpy_sin.register_autograd(backward, setup_context=setup_context)
    tp.library.opcheck(numpy_sin, (tp.randn(3),))

Registrations go into the library passed as ``lib=`` (a tensorplug extension, so that tests
and notebooks can remove an operator again with ``lib.close()``), else into a ``FRAGMENT``
library of the namespace that lives as long as the process, as in PyTorch.

Note [Fake kernels]
~~~~~~~~~~~~~~~~~~~
A fake kernel computes the metadata of the outputs (shape, dtype, device) from the metadata of
the inputs, without reading data; ``register_fake`` registers it for the ``Meta`` backend key,
as PyTorch does; ``custom_op`` registers one that raises until then (or PyTorch's trivial
one, for an operator that returns nothing). It runs on the core's Meta tensors (docs/meta.md):
a call with Meta inputs, abstract tracing, and ``opcheck``'s ``test_faketensor``, which runs the
operator on Meta copies of the inputs and compares the outputs' metadata with a real run's.
"""

from __future__ import annotations

import collections.abc
import inspect
import numbers
import types
import typing
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .. import dispatcher as _dispatcher
from .. import keys as _keys
from ..device import canonical as _canonical_device
from ..device import device as _Device
from ..dispatch import local_state
from ..dispatcher import OpOverload
from ..dispatcher._library import Library
from ..dtypes import dtype as _Dtype
from ..errors import RegistrationError
from ..tensor import Tensor
from . import _registration

__all__ = [
    "CustomOpDef",
    "custom_op",
    "impl_abstract",
    "infer_schema",
    "register_fake",
    "register_kernel",
]

DeviceTypes = str | Sequence[str] | None

_libraries: list[Library] = []  # the FRAGMENT libraries custom_op made: kept alive


class CustomOpDef:
    """A custom operator made by :func:`custom_op`: call it like the function it wraps."""

    def __init__(self, op: OpOverload, lib: Library, fn: Callable[..., Any]) -> None:
        self.op = op  # the operator overload ("ns::name.default")
        self.lib = lib  # the library that owns its registrations
        self.name = f"{op.namespace}::{op.op_name}"
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.op(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self.name}): {self.op.schema}>"

    def register_kernel(
        self, device_types: DeviceTypes, fn: Callable[..., Any] | None = None, /
    ) -> Any:
        """Make ``fn`` the kernel for ``device_types`` (``None``: every backend), replacing an
        earlier one for them; usable as a decorator."""

        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            for key in _keys_for(self.name, device_types):
                self.lib.impl(self.op, _checked_kernel(self.op, f), key, override=True)
            return f

        return register if fn is None else register(fn)

    def register_fake(self, fn: Callable[..., Any], /) -> Callable[..., Any]:
        """Make ``fn`` the fake kernel (Note [Fake kernels]), replacing an earlier one;
        usable as a decorator."""
        self.lib.impl(self.op, fn, "Meta", override=True)
        return fn

    def register_autograd(
        self,
        backward: Callable[..., Any],
        /,
        *,
        setup_context: Callable[[Any, tuple[Any, ...], Any], Any] | None = None,
    ) -> None:
        """``tp.library.register_autograd`` for this operator, in its library (the
        tensorplug-autograd plugin provides it)."""
        _registration.register_autograd(
            self.op, backward, setup_context=setup_context, lib=self.lib
        )


CustomOpDef.__module__ = "tensorplug.library"  # where users find it


def custom_op(
    name: str,
    fn: Callable[..., Any] | None = None,
    /,
    *,
    mutates_args: str | Iterable[str],
    device_types: DeviceTypes = None,
    schema: str | None = None,
    tags: str | Iterable[str] = (),
    lib: Library | None = None,
) -> Any:
    """Turn ``fn`` into the operator ``ns::name`` (PyTorch's ``torch.library.custom_op``).

    ``mutates_args`` names the arguments ``fn`` writes in place (``"unknown"``: every tensor
    argument); ``schema`` overrides the one inferred from the type hints
    (``"(Tensor x, int n) -> Tensor"``); ``device_types`` (``"cpu"``, ``["cpu", "cuda"]``)
    limits the kernel to those backends. Usable as a decorator.
    """
    ns, op_name = _split_name(name)

    def make(f: Callable[..., Any]) -> CustomOpDef:
        text = schema if schema is not None else infer_schema(f, mutates_args=mutates_args)
        if schema is not None and (not text.lstrip().startswith("(") or "::" in text):
            raise ValueError(
                f"custom_op({name!r}): schema= is the part after the name, such as "
                f"'(Tensor x, int n) -> Tensor'; got {schema!r}"
            )
        target = lib
        if target is None:
            target = Library(ns, "FRAGMENT", owner=_owner(f))
            _libraries.append(target)
        op = target.define(op_name + text, tags=tags)
        op_def = CustomOpDef(op, target, f)
        if not any(a.tensor_kind for a in op.schema.arguments):
            target.impl(op, _backend_select(op), "BackendSelect", with_keyset=True)
        # the fake kernel until register_fake gives one: PyTorch's trivial one for an operator
        # that returns nothing, else an error that says what to do
        target.impl(op, _returns_nothing if not op.schema.returns else _no_fake(op, f), "Meta")
        op_def.register_kernel(device_types, f)
        return op_def

    return make if fn is None else make(fn)


def register_fake(
    op: str | OpOverload | CustomOpDef,
    func: Callable[..., Any] | None = None,
    /,
    *,
    lib: Library | None = None,
    allow_override: bool = True,
) -> Any:
    """Register ``func`` as the fake kernel of ``op`` (Note [Fake kernels]): the ``Meta``
    kernel, which computes the outputs' metadata without reading data. Usable as a decorator.

    ``allow_override=False`` refuses to replace a fake kernel the operator already has.
    """
    if isinstance(op, CustomOpDef):
        return op.register_fake if func is None else op.register_fake(func)
    overload = _find(op, "register_fake")

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        if not allow_override and overload.has_kernel("Meta"):
            raise RegistrationError(
                f"register_fake: {overload.name} already has a fake (Meta) kernel, from "
                f"{_dispatcher.registrations(overload)['Meta']}; pass allow_override=True to "
                "replace it"
            )
        target = (
            lib if lib is not None else _registration._global_library(overload.namespace, "IMPL")
        )
        target.impl(overload, f, "Meta", override=True)
        return f

    return register if func is None else register(func)


def impl_abstract(
    qualname: str, func: Callable[..., Any] | None = None, *, lib: Library | None = None
) -> Any:
    """The former name of :func:`register_fake` (deprecated, as in PyTorch)."""
    warnings.warn(
        "tp.library.impl_abstract was renamed to tp.library.register_fake; please use that instead",
        DeprecationWarning,
        stacklevel=2,
    )
    return (
        register_fake(qualname, func, lib=lib)
        if func is not None
        else register_fake(qualname, lib=lib)
    )


def register_kernel(
    op: str | OpOverload | CustomOpDef,
    device_types: DeviceTypes,
    func: Callable[..., Any] | None = None,
    /,
    *,
    lib: Library | None = None,
) -> Any:
    """Register ``func`` as the kernel of ``op`` for ``device_types`` (``"cpu"``,
    ``["cpu", "cuda"]``; ``None``: every backend, through ``CompositeExplicitAutograd``).
    Usable as a decorator."""
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func) if func else op.register_kernel(device_types)
    overload = _find(op, "register_kernel")

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        target = (
            lib if lib is not None else _registration._global_library(overload.namespace, "IMPL")
        )
        for key in _keys_for(overload.name, device_types):
            target.impl(overload, f, key)
        return f

    return register if func is None else register(func)


# --- schema inference -----------------------------------------------------------------------


def infer_schema(
    prototype_function: Callable[..., Any],
    /,
    *,
    mutates_args: str | Iterable[str],
    op_name: str | None = None,
) -> str:
    """The schema of ``prototype_function`` from its type hints, by PyTorch's rules:
    ``(Tensor x, int n=2) -> Tensor``, with ``op_name`` in front when given.

    Parameters may be ``Tensor``, ``int``, ``float``, ``bool``, ``str``, a number
    (``int | float | bool``: ``Scalar``), ``tensorplug.dtype``, ``tensorplug.device``, an
    ``Optional`` of those, or a ``list``/``Sequence`` of tensors, ints, floats, bools or
    numbers; the return is ``None``, ``Tensor``, ``list[Tensor]``, a number type, or a
    ``tuple`` of those. Arguments named in ``mutates_args`` become ``Tensor(aN!)``.
    """
    sig = inspect.signature(prototype_function)

    def error(what: str) -> ValueError:
        return ValueError(
            f"infer_schema({_fn_name(prototype_function)}): {what} Got func with signature {sig}"
        )

    # hints may be strings (postponed annotations), even strings of strings ("'Tensor'")
    sig = sig.replace(
        parameters=[
            p.replace(annotation=_evaluated(p.annotation, prototype_function, error))
            for p in sig.parameters.values()
        ],
        return_annotation=_evaluated(sig.return_annotation, prototype_function, error),
    )
    unknown = mutates_args == "unknown"
    if isinstance(mutates_args, str) and not unknown:
        raise error(
            "mutates_args must be the names of the arguments the function writes, or "
            f"'unknown', not the string {mutates_args!r}."
        )
    mutated = set() if unknown else set(mutates_args)
    params: list[str] = []
    star = False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise error("positional-only arguments, *args and **kwargs are not supported.")
        if param.kind is param.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if param.annotation is param.empty:
            raise error(f"Parameter {name} must have a type annotation.")
        try:
            type_text = _PARAM_TYPES.get(_key(param.annotation))
        except TypeError:  # an unhashable annotation: no type at all
            type_text = None
        if type_text is None:
            raise error(
                f"Parameter {name} has unsupported type {_show(param.annotation)}. The valid "
                f"types are: {', '.join(_PARAM_NAMES)}."
            )
        if unknown and type_text.startswith("Tensor") or name in mutated:
            if not type_text.startswith("Tensor"):
                raise error(
                    f"Parameter {name} is in mutates_args but only Tensors or collections of "
                    "Tensors can be mutated."
                )
            type_text = f"Tensor(a{idx}!){type_text[len('Tensor') :]}"
        text = f"{type_text} {name}"
        if param.default is not param.empty:
            text += "=" + _default_text(param.default, name, error)
        params.append(text)
    missing = mutated - set(sig.parameters)
    if missing:
        raise error(
            f"{sorted(missing)} in mutates_args were not found in the custom op's signature. "
            "mutates_args names the arguments the function writes, or is 'unknown'."
        )
    returns = _returns_text(sig.return_annotation, error)
    prefix = op_name or ""
    return f"{prefix}({', '.join(params)}) -> {returns}"


def _evaluated(annotation: Any, fn: Callable[..., Any], error: Callable[[str], ValueError]) -> Any:
    while isinstance(annotation, str):
        try:
            annotation = eval(annotation, getattr(fn, "__globals__", {}))  # noqa: S307
        except Exception as e:
            raise error(
                f"its type hint {annotation!r} does not evaluate ({type(e).__name__}: {e}); "
                "every name in the hints must be importable from the function's module."
            ) from None
    return annotation


def _key(annotation: Any) -> Any:
    """A hashable stand-in for an annotation: unions become frozensets of their members."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return frozenset(_key(a) for a in typing.get_args(annotation))
    if origin in (list, collections.abc.Sequence):
        (arg,) = typing.get_args(annotation) or (Any,)
        return ("list", _key(arg))
    if origin is tuple:
        return ("tuple", tuple(_key(a) for a in typing.get_args(annotation)))
    return annotation


_NONE = type(None)
_NUMBER_KEYS = (
    frozenset({int, float, bool}),
    frozenset({int, float, bool, complex}),
    numbers.Number,
)
_BASES: list[tuple[Any, str, bool, bool]] = [
    # (Python type, schema type, T[] allowed, T?[] allowed)
    (Tensor, "Tensor", True, True),
    (int, "int", True, False),
    (float, "float", True, False),
    (bool, "bool", True, False),
    (str, "str", False, False),
    *((k, "Scalar", True, False) for k in _NUMBER_KEYS),
    (_Dtype, "ScalarType", False, False),
    (_Device, "Device", False, False),
]


def _param_types() -> dict[Any, str]:
    table: dict[Any, str] = {}
    for py, text, lists, optional_lists in _BASES:
        optional = py | {_NONE} if isinstance(py, frozenset) else frozenset({py, _NONE})
        table[py] = text
        table[optional] = f"{text}?"
        if lists:
            table[("list", py)] = f"{text}[]"
            if text != "Tensor":
                table[frozenset({("list", py), _NONE})] = f"{text}[]?"
        if optional_lists:
            table[("list", optional)] = f"{text}?[]"
    return table


_PARAM_TYPES = _param_types()
_PARAM_NAMES = (
    "Tensor", "int", "float", "bool", "str", "int | float | bool (a number)", "tensorplug.dtype",
    "tensorplug.device", "Optional[T] of those", "list[T] of Tensor, int, float, bool or numbers",
    "list[Tensor | None]",
)  # fmt: skip
_RETURN_TYPES: dict[Any, str] = {
    Tensor: "Tensor",
    ("list", Tensor): "Tensor[]",
    int: "int",
    float: "float",
    bool: "bool",
    **{k: "Scalar" for k in _NUMBER_KEYS},
}


def _returns_text(annotation: Any, error: Callable[[str], ValueError]) -> str:
    if annotation is None or annotation is _NONE:
        return "()"
    if annotation is inspect.Parameter.empty:
        raise error("No return type annotation was provided. Please add one.")
    key = _key(annotation)
    if isinstance(key, tuple) and key[0] == "tuple":
        texts = [_RETURN_TYPES.get(k) for k in key[1]]
        if all(texts):
            return "(" + ", ".join(typing.cast(list[str], texts)) + ")"
    elif key in _RETURN_TYPES:
        return _RETURN_TYPES[key]
    raise error(
        f"Return has unsupported type {_show(annotation)}. The valid types are: None, Tensor, "
        "list[Tensor], int, float, bool, int | float | bool (a number), and tuples of those."
    )


def _default_text(value: Any, name: str, error: Callable[[str], ValueError]) -> str:
    if value is None or type(value) in (bool, int, float):
        return repr(value)
    if isinstance(value, str | _Device):
        text = str(value)
        if '"' not in text:
            return f'"{text}"'
        if "'" not in text:
            return f"'{text}'"
    raise error(
        f"Parameter {name} has an unsupported default value {value!r}: defaults are None, "
        "numbers, bools, strings and devices (a dtype argument takes `tensorplug.dtype | None "
        "= None`)."
    )


def _show(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or repr(annotation)


def _fn_name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


# --- helpers --------------------------------------------------------------------------------


def _split_name(name: str) -> tuple[str, str]:
    ns, sep, op_name = name.partition("::")
    if not sep or not ns.isidentifier() or not op_name.isidentifier():
        raise ValueError(
            f"custom_op: the name must look like 'namespace::name' (e.g. 'mylib::my_linear'), "
            f"got {name!r}"
        )
    return ns, op_name


def _owner(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}:{_fn_name(fn)}"


def _find(op: str | OpOverload, who: str) -> OpOverload:
    if isinstance(op, OpOverload):
        return op
    try:
        return _dispatcher.find_op(op)
    except RegistrationError:
        raise RegistrationError(
            f"{who}: no operator named {op!r} is defined; define it first (tp.library.define, "
            "tp.library.custom_op or Library.define)"
        ) from None


def _keys_for(op_name: str, device_types: DeviceTypes) -> list[str]:
    """The registration keys of ``device_types``: their backends, or every backend."""
    if device_types is None:
        return ["CompositeExplicitAutograd"]
    names = [device_types] if isinstance(device_types, str) else list(device_types)
    found = []
    for device_type in names:
        key = _keys.backend_for_device_type(device_type)
        if key is None:
            known = ", ".join(sorted(_keys.device_types()))
            raise RegistrationError(
                f"{op_name}: unknown device type {device_type!r}; the device types are {known} "
                "(a backend plugin adds its own)"
            )
        found.append(key.name)
    return found


def _checked_kernel(op: OpOverload, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, refusing outputs that are, or alias, an input (PyTorch's rule for functions
    turned into operators: their outputs are fresh unless the schema says otherwise)."""
    if any(r.annotation is not None for r in op.schema.returns):
        return fn  # the schema itself says what aliases what

    def kernel(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        inputs = [t for v in (*args, *kwargs.values()) for t in _tensors(v)]
        for out in _tensors(result):
            if any(out is t or out._tp_version is t._tp_version for t in inputs):
                raise RuntimeError(
                    f"{op.name} (implemented by {_fn_name(fn)} in {fn.__module__}): the output "
                    "of a custom operator must not be one of its inputs or a view of one. The "
                    "usual cause is `return x` or `return x.view(...)`; return a new tensor, "
                    "such as x.clone(), instead."
                )
        return result

    kernel.__qualname__ = _fn_name(fn)
    kernel.__module__ = getattr(fn, "__module__", None) or __name__
    return kernel


def _tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _tensors(v)]
    return []


def _returns_nothing(*args: Any, **kwargs: Any) -> None:
    return None


def _no_fake(op: OpOverload, fn: Callable[..., Any]) -> Callable[..., Any]:
    def no_fake(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"{op.name} has no fake kernel, so it cannot run on Meta tensors (Note [Fake "
            f"kernels]): register one with @{fn.__name__}.register_fake, a function of the same "
            "arguments that returns outputs of the right shapes and dtypes without reading data"
        )

    return no_fake


def _backend_select(op: OpOverload) -> Callable[..., Any]:
    """For operators without tensor arguments: the backend of the ``device`` argument, else
    of the default device (PyTorch asks such custom ops for a ``device`` argument)."""
    names = [a.name for a in op.schema.arguments]
    at = names.index("device") if "device" in names else None
    npos = len(op.schema.positional)

    def backend_select(ks: Any, *args: Any, **kwargs: Any) -> Any:
        device = None
        if at is not None:
            device = args[at] if at < npos and at < len(args) else kwargs.get("device")
        dev = _canonical_device(device)
        key = _keys.backend_for_device_type(dev.type)
        if key is None:
            raise RuntimeError(f"{op.name}: no backend for device type '{dev.type}'")
        # the backend's plain key set, less what this thread excludes (redispatch reads no TLS)
        backend = _keys.tensor_keyset(key) & local_state.masks.nexc
        return op.redispatch(ks.below("BackendSelect") | backend, *args, **kwargs)

    backend_select.__qualname__ = f"backend_select[{op.name}]"
    return backend_select
