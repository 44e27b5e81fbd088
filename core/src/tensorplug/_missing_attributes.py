"""Placeholders on ``Tensor`` for the attributes only an absent first-party plugin provides.

Note [Missing plugin attributes]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Without the autograd plugin, ``loss.backward()``, ``x.grad`` or ``x.requires_grad = True``
would fail with a bare ``AttributeError`` that does not say what to install. So the core sets a
placeholder property for each Tensor attribute the autograd plugin adds; reading, setting or
deleting it raises a :class:`~tensorplug.MissingPluginError` that names the distribution (and,
when it is installed but left out by ``TENSORPLUG_AUTOLOAD=0`` or a selection, says so). The
plugin replaces the placeholders when it loads, and the loader puts them back when it is
unregistered (it records what each tensor method replaced). The error is also an
``AttributeError``, so ``getattr(t, "grad", None)`` stays ``None`` without the plugin, as code
written for both cases expects. ``x.grad = g`` is kept as a plain attribute (a gradient computed by hand, for
``nn.utils.clip_grad_norm_`` or an optimizer); reading ``x.grad`` raises until one is set. ``requires_grad`` reads ``False`` (no tensor requires grad
without the plugin) and only setting it to a true value raises, as does
``requires_grad_(True)`` (``requires_grad=True`` of a factory); ``is_leaf`` and ``detach_``
keep the core's answers. Module names (``tp.vmap``, ``tp.autocast`` ...) are answered by the
module ``__getattr__`` (:func:`tensorplug.plugins.missing_name`), and ``import tensorplug.func``
(or ``from tensorplug.tracer import trace``) by a finder at the end of ``sys.meta_path`` that
raises the same error instead of a bare ``ModuleNotFoundError`` (a loaded plugin's module is in
``sys.modules`` already, so the finder is not asked).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from . import _manifest, plugins
from .errors import MissingPluginError
from .tensor import Tensor

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

__all__ = [
    "MissingPluginAttributeError",
    "MissingPluginImportError",
    "TENSOR_ATTRIBUTES",
    "install",
]

_AUTOGRAD: Final = (
    _manifest.BY_NAME["autograd"].name,
    _manifest.BY_NAME["autograd"].distribution,
)

# Tensor attribute -> (plugin, distribution) (Note [First-party manifest] in _manifest.py)
TENSOR_ATTRIBUTES: Final[dict[str, tuple[str, str]]] = {
    name: (p.name, p.distribution) for p in _manifest.MANIFEST for name in p.tensor_attributes
}


class MissingPluginAttributeError(MissingPluginError, AttributeError):
    """A Tensor attribute whose plugin is absent (Note [Missing plugin attributes])."""


def _error(what: str, plugin: str, dist: str) -> MissingPluginAttributeError:
    remedy = plugins.absent_plugin_remedy(plugin, dist) or (
        f"the {dist} plugin, which is not installed (or not loaded): pip install {dist}"
    )
    return MissingPluginAttributeError(f"{what} needs {remedy}", distribution=dist)


def _placeholder(name: str, plugin: str, dist: str) -> property:
    def get(self: Tensor) -> Any:
        if name not in self.__dict__:
            raise _error(f"Tensor.{name}", plugin, dist)
        return self.__dict__[name]

    def set(self: Tensor, value: Any) -> None:
        if name not in _SETTABLE:
            raise _error(f"Tensor.{name}", plugin, dist)
        self.__dict__[name] = value

    def delete(self: Tensor) -> None:
        if name not in self.__dict__:
            raise _error(f"Tensor.{name}", plugin, dist)
        del self.__dict__[name]

    return property(get, set, delete, doc=f"Provided by the {dist} plugin.")


# A gradient set by hand is kept without the plugin, as a plain attribute: nn's gradient
# utilities and the optimizers work on it (Note [nn without autograd] in nn/_autograd.py).
_SETTABLE: Final = frozenset({"grad"})


def _requires_grad(self: Tensor) -> bool:
    return False


def _set_requires_grad(self: Tensor, value: bool) -> None:
    if value:
        raise _error("x.requires_grad = True", *_AUTOGRAD)


def _requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
    if requires_grad:
        raise _error("requires_grad=True", *_AUTOGRAD)
    return self


class MissingPluginImportError(MissingPluginError, ImportError):
    """``import tensorplug.<name>`` whose plugin is absent: ``except ImportError`` sees it."""


class _MissingSubmoduleFinder:
    """``import tensorplug.<name>`` of a module only an absent plugin provides. A meta path
    finder by its ``find_spec`` (``importlib.abc.MetaPathFinder`` is not its base: importing
    ``importlib.abc`` would cost ``import tensorplug`` about 10 ms)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        package, _, name = fullname.partition(".")
        if package == "tensorplug" and name.isidentifier():
            err = plugins.missing_name(name)
            if isinstance(err, MissingPluginError):
                raise MissingPluginImportError(str(err), distribution=err.distribution)
        return None


def install() -> None:
    """Set the placeholders on Tensor and the submodule finder (at import, before any plugin
    loads)."""
    if not any(isinstance(f, _MissingSubmoduleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MissingSubmoduleFinder())
    for name, (plugin, dist) in TENSOR_ATTRIBUTES.items():
        setattr(Tensor, name, _placeholder(name, plugin, dist))
    setattr(Tensor, "requires_grad", property(_requires_grad, _set_requires_grad))  # noqa: B010
    setattr(Tensor, "requires_grad_", _requires_grad_)  # noqa: B010
