"""``Module``: the base class of every layer and model (``tensorplug.nn.Module``).

A Module owns three ordered registries, filled by attribute assignment:

- ``_parameters``: name -> :class:`Parameter` (or None): ``self.w = Parameter(...)``;
- ``_buffers``: name -> Tensor (or None), state that is not learned: ``register_buffer(...)``;
- ``_modules``: name -> sub-Module (or None): ``self.fc = Linear(...)``.

Everything else walks that tree: ``parameters()``, ``named_modules()``, ``state_dict()``
(dotted names such as ``"0.weight"``), ``train()`` / ``eval()``, ``zero_grad()``, ``to()``.
Calling a module runs its ``forward``, between its forward pre-hooks and forward hooks. The behaviour, the names and the error messages are
PyTorch's; the differences are written down in docs/nn.md.

Usage::

    class TwoLayer(tp.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = tp.nn.Linear(2, 16)
            self.fc2 = tp.nn.Linear(16, 3)

        def forward(self, x):
            return self.fc2(tp.nn.functional.relu(self.fc1(x)))

    model = TwoLayer()
    [name for name, _ in model.named_parameters()]   # ['fc1.weight', 'fc1.bias', ...]
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, TypeVar

from .. import dtypes as _dtypes
from .._opset import construct as _construct
from ..device import canonical as _canonical_device
from ..device import device as _Device
from ..ops import ops
from ..tensor import Tensor
from ._autograd import no_grad, reset_grad, set_requires_grad
from ._hooks import GLOBAL as _GLOBAL_HOOKS
from ._hooks import RemovableHandle, add_global_hook, add_hook, call_with_hooks
from .parameter import Parameter

__all__ = [
    "IncompatibleKeys", "Module", "RemovableHandle", "register_module_buffer_registration_hook",
    "register_module_forward_hook", "register_module_forward_pre_hook",
    "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
    "register_module_module_registration_hook", "register_module_parameter_registration_hook",
]  # fmt: skip

_aten = ops.aten
M = TypeVar("M", bound="Module")


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict(strict=False)`` could not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"IncompatibleKeys(missing_keys={self.missing_keys!r}, "
            f"unexpected_keys={self.unexpected_keys!r})"
        )


def _forward_unimplemented(self: Module, *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


class Module:
    """Base class for all neural network modules; subclasses define ``forward``."""

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent_buffers: set[str]
    _modules: dict[str, Module | None]

    # An attribute, not a method, so that subclasses may give forward any signature.
    forward: Callable[..., Any] = _forward_unimplemented

    def __init__(self) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers", set())
        setattr_(self, "_modules", {})

    # Hooks, by handle id in call order (_hooks.py); a module gets its own dicts at its first
    # hook, and its _hooked flag, so calling a module without hooks costs two reads.
    _forward_pre_hooks: dict[int, tuple[Callable[..., Any], bool]] = {}
    _forward_hooks: dict[int, tuple[Callable[..., Any], bool, bool]] = {}
    _backward_pre_hooks: dict[int, Callable[..., Any]] = {}
    _backward_hooks: dict[int, Callable[..., Any]] = {}
    _hooked = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._hooked or _GLOBAL_HOOKS.n_calls:
            return call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(module, grad_output)`` runs in backward when the gradients of the module's
        outputs are known, before those of its inputs are computed, and may return a new
        ``grad_output`` tuple (Note [Full backward hooks] in _hooks.py)."""
        return add_hook(self, "_backward_pre_hooks", hook, prepend)

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs in backward when the gradients of the
        module's inputs are known, and may return a new ``grad_input`` tuple (Note [Full
        backward hooks] in _hooks.py)."""
        return add_hook(self, "_backward_hooks", hook, prepend)

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward`` and may return new args (a tuple, or
        one value); with ``with_kwargs=True`` it is ``hook(module, args, kwargs)`` and may
        return ``(args, kwargs)``. Returns a handle whose ``remove()`` takes it out."""
        return add_hook(self, "_forward_pre_hooks", (hook, with_kwargs), prepend)

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward`` and may return a new output;
        with ``with_kwargs=True`` it is ``hook(module, args, kwargs, output)``. With
        ``always_call=True`` it also runs (with output None) when ``forward`` raises."""
        return add_hook(self, "_forward_hooks", (hook, with_kwargs, always_call), prepend)

    # --- registration ------------------------------------------------------------------------

    def _check_new_name(self, kind: str, name: Any, own: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in self.__dict__[own]:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a None placeholder) under ``name``."""
        self._check_new_name("parameter", name, "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(tensorplug.nn.Parameter or None required)"
            )
        if param is not None and not param.is_leaf:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                "created explicitly: wrap the computed tensor in Parameter(...)"
            )
        for hook in list(_GLOBAL_HOOKS.parameter_registration.values()):
            new = hook(self, name, param)
            if new is not None:
                param = new
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter; ``persistent`` ones are saved."""
        self._check_new_name("buffer", name, "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(tensorplug.Tensor or None required)"
            )
        for hook in list(_GLOBAL_HOOKS.buffer_registration.values()):
            new = hook(self, name, tensor)
            if new is not None:
                tensor = new
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module (or a None placeholder) under ``name``."""
        self._check_new_name("module", name, "_modules")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        for hook in list(_GLOBAL_HOOKS.module_registration.values()):
            new = hook(self, name, module)
            if new is not None:
                module = new
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _forget(self, name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(tensorplug.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _forget(self, name, keep="_modules")
            self.add_module(name, value)
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(tensorplug.nn.Module or None expected)"
                )
            self._modules[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(tensorplug.Tensor or None expected)"
                )
            for hook in list(_GLOBAL_HOOKS.buffer_registration.values()):
                new = hook(self, name, value)
                if new is not None:
                    value = new
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: the registries hold the rest
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            r = d.get(registry)
            if r is not None and name in r:
                return r[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        names = [*super().__dir__(), *self._parameters, *self._buffers, *self._modules]
        return sorted(set(names))

    # --- walking the tree --------------------------------------------------------------------

    def named_modules(
        self, memo: set[int] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """``(dotted name, module)`` for this module and every descendant, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                sub = f"{prefix}.{name}" if prefix else name
                yield from child.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        for _, child in self.named_children():
            yield child

    def get_submodule(self, target: str) -> Module:
        """The descendant at the dotted path ``target`` (``""`` is this module)."""
        if target == "":
            return self
        module: Module = self
        for name in target.split("."):
            if not hasattr(module, name):
                raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
            child = getattr(module, name)
            if not isinstance(child, Module):
                raise AttributeError(f"`{name}` is not an nn.Module")
            module = child
        return module

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at the dotted path ``target`` (``"net.0"``), replacing what is there;
        with ``strict`` only an existing attribute may be replaced."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(f"{parent._get_name()} has no attribute `{atoms[-1]}`")
        if hasattr(parent, atoms[-1]):
            if not isinstance(getattr(parent, atoms[-1]), Module):
                raise AttributeError(f"`{atoms[-1]}` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def _owner_of(self, target: str) -> tuple[Module, str]:
        """The module that holds the last name of the dotted ``target``, and that name."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        return module, name

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target`` (``"0.weight"``)."""
        module, name = self._owner_of(target)
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor | None:
        """The buffer at the dotted path ``target`` (None for a registered None placeholder)."""
        module, name = self._owner_of(target)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return module._buffers[name]

    def _named_members(
        self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else iter([(prefix, self)])
        )
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)``; a parameter shared by two modules comes once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self: M, fn: Callable[[Module], None]) -> M:
        """Call ``fn`` on every submodule (children first), then on this module."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # --- modes and gradients -----------------------------------------------------------------

    def train(self: M, mode: bool = True) -> M:
        """Set training mode (``mode=False`` is evaluation mode) here and in every descendant."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self: M) -> M:
        return self.train(False)

    def requires_grad_(self: M, requires_grad: bool = True) -> M:
        """Turn gradient recording for every parameter on or off (needs the autograd plugin)."""
        for p in self.parameters():
            set_requires_grad(p, requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to None, or to zeros in place."""
        for p in self.parameters():
            reset_grad(p, set_to_none)

    # --- conversion --------------------------------------------------------------------------

    def _apply(self: M, fn: Callable[[Tensor], Tensor]) -> M:
        for module in self.modules():
            for name, p in module._parameters.items():
                if p is None:
                    continue
                with no_grad():
                    new = fn(p)
                if new is not p:
                    module._parameters[name] = Parameter(new, p.requires_grad)
            for name, b in module._buffers.items():
                if b is not None:
                    module._buffers[name] = fn(b)
        return self

    def to(self: M, *args: Any, **kwargs: Any) -> M:
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``; a dtype applies to floating-point tensors only.
        ``non_blocking`` is accepted and ignored, as every copy is synchronous.

        ``memory_format=`` (``tp.channels_last``, ...) lays out the 4-d and 5-d parameters and
        buffers in that format, as PyTorch's (the others keep theirs).

        Parameters that change are replaced by new ones: build optimizers after ``to()``.
        """
        fmt = kwargs.pop("memory_format", None)
        device, dtype, _, _ = _construct.parse_to(args, kwargs, copy_allowed=False)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}"
            )
        dev = None if device is None else _canonical_device(device)

        def convert(t: Tensor) -> Tensor:
            cast_ = (
                dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) else None
            )
            if fmt is not None and t.dim() in (4, 5):
                r: Tensor = t.to(device=dev, dtype=cast_, memory_format=fmt)
            else:
                r = t.to(device=dev, dtype=cast_)
            return r

        return self._apply(convert)

    def float(self: M) -> M:
        return self.to(_dtypes.float32)

    def double(self: M) -> M:
        return self.to(_dtypes.float64)

    def half(self: M) -> M:
        return self.to(_dtypes.float16)

    def bfloat16(self: M) -> M:
        return self.to(_dtypes.bfloat16)

    def cpu(self: M) -> M:
        return self.to("cpu")

    def cuda(self: M, device: int | str | _Device | None = None) -> M:
        """Move parameters and buffers to a CUDA device: the current one, or ``device`` (an
        index, ``"cuda:1"`` or a tp.device)."""
        if device is None:
            return self.to("cuda")
        if isinstance(device, int):
            return self.to(_Device("cuda", device))
        return self.to(device)

    def to_empty(self: M, *, device: Any, recurse: bool = True) -> M:
        """Parameters and buffers replaced by uninitialized tensors of the same shape and dtype
        on ``device`` (for modules built on the meta device, initialized afterwards)."""
        dev = None if device is None else _canonical_device(device)
        modules = self.modules() if recurse else iter([self])
        for module in modules:
            for name, p in module._parameters.items():
                if p is not None:
                    new = _aten.empty_like.default(p, device=dev)
                    module._parameters[name] = Parameter(new, p.requires_grad)
            for name, b in module._buffers.items():
                if b is not None:
                    module._buffers[name] = _aten.empty_like.default(b, device=dev)
        return self

    # --- state dict --------------------------------------------------------------------------

    def _state_items(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """Every parameter and persistent buffer under its dotted name (duplicates included),
        each name preceded by ``prefix`` as it is (PyTorch's: ``"model."``, with its dot)."""
        for module_path, module in self.named_modules(remove_duplicate=False):
            dot = f"{prefix}{module_path}." if module_path else prefix
            for name, p in module._parameters.items():
                if p is not None:
                    yield dot + name, p
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent_buffers:
                    yield dot + name, b

    def state_dict(self, *, prefix: str = "", keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name; detached unless ``keep_vars``.
        ``prefix`` is put in front of every name as given: ``prefix="model."`` gives
        ``"model.fc.weight"``.

        The tensors share storage with the module's: clone them to keep a snapshot.
        """
        out: OrderedDict[str, Tensor] = OrderedDict()
        for name, t in self._state_items(prefix):
            out[name] = t if keep_vars else _aten.detach.default(t)
        return out

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True
    ) -> IncompatibleKeys:
        """Copy ``state_dict``'s tensors into this module's parameters and buffers, in place.

        Every problem is collected first and raised together in one ``RuntimeError``, before
        anything is copied: a failed load changes nothing. With ``strict=False`` missing and
        unexpected keys are returned instead; shape mismatches always raise.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"Expected state_dict to be dict-like, got {type(state_dict).__name__}."
            )
        own = dict(self._state_items())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors: list[str] = []
        if strict:  # PyTorch's order: missing, unexpected, then each value's problem
            if missing:
                errors.append(
                    "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + "."
                )
            if unexpected:
                errors.append(
                    "Unexpected key(s) in state_dict: "
                    + ", ".join(f'"{k}"' for k in unexpected)
                    + "."
                )
        pairs: list[tuple[Tensor, Tensor]] = []
        for name, target in own.items():
            if name not in state_dict:
                continue
            value = state_dict[name]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{name}", expected a tensorplug.Tensor '
                    f"from the checkpoint but received {type(value).__name__}"
                )
            elif tuple(value.shape) != tuple(target.shape):
                errors.append(
                    f"size mismatch for {name}: copying a param with shape {list(value.shape)} "
                    f"from checkpoint, the shape in current model is {list(target.shape)}."
                )
            else:
                pairs.append((target, value))
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        with no_grad():
            for target, value in pairs:
                _aten.copy_.default(target, value)
        return IncompatibleKeys(missing, unexpected)

    # --- repr --------------------------------------------------------------------------------

    def extra_repr(self) -> str:
        """The text inside this module's parentheses in ``repr`` (override in subclasses)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _indent(repr(m), 2) for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        head = self._get_name() + "("
        if not lines:
            return head + ")"
        if len(extra_lines) == 1 and not child_lines:
            return head + extra_lines[0] + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


def _forget(module: Module, name: str, keep: str) -> None:
    """Remove ``name`` from the instance dict and every registry but ``keep``, the one it is
    about to be registered in again: a name reassigned there keeps its place in the order of
    ``parameters()``, ``state_dict()`` and ``repr``, as in PyTorch."""
    module.__dict__.pop(name, None)
    for registry in ("_parameters", "_buffers", "_modules"):
        if registry != keep:
            getattr(module, registry).pop(name, None)
    module._non_persistent_buffers.discard(name)


def _indent(text: str, spaces: int) -> str:
    """Indent every line of ``text`` but the first (nested reprs)."""
    first, *rest = text.split("\n")
    return "\n".join([first, *(" " * spaces + line for line in rest)])


# --- global hooks (PyTorch's nn.modules.module.register_module_*) ---------------------------


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, args)`` runs before the ``forward`` of every module, before the module's
    own pre-hooks, and may return new args. For debugging and profiling."""
    return add_global_hook(_GLOBAL_HOOKS.forward_pre, (hook, False), call=True)


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """``hook(module, args, output)`` runs after the ``forward`` of every module, before the
    module's own forward hooks, and may return a new output."""
    return add_global_hook(_GLOBAL_HOOKS.forward, (hook, with_kwargs, always_call), call=True)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A full backward pre-hook of every module (``Module.register_full_backward_pre_hook``),
    run before the module's own."""
    return add_global_hook(_GLOBAL_HOOKS.backward_pre, hook, call=True)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A full backward hook of every module (``Module.register_full_backward_hook``), run
    before the module's own."""
    return add_global_hook(_GLOBAL_HOOKS.backward, hook, call=True)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, buffer)`` runs in every ``register_buffer`` (and buffer
    assignment) and may return the buffer to register instead."""
    return add_global_hook(_GLOBAL_HOOKS.buffer_registration, hook, call=False)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, submodule)`` runs in every ``add_module`` (and submodule
    assignment) and may return the submodule to register instead."""
    return add_global_hook(_GLOBAL_HOOKS.module_registration, hook, call=False)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, param)`` runs in every ``register_parameter`` (and parameter
    assignment) and may return the parameter to register instead."""
    return add_global_hook(_GLOBAL_HOOKS.parameter_registration, hook, call=False)
