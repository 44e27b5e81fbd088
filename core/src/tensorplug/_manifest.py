"""The first-party plugins and what each adds: the one table the core reads wherever it names
them (internal).

Note [First-party manifest]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
The core knows the plugins of this repository by name, for three reasons: to say what to
install when a key, a device, a ``tensorplug.<name>`` or a ``Tensor`` attribute is missing
(``pip install tensorplug-batched`` for ``tp.vmap``; Note [Missing plugin attributes] in
plugins/_missing.py); to prefer the first-party distribution when two offer one plugin name
(``plugins/_selection.py``); and to tell first-party sections of ``tensorplug demo`` from
third-party ones (``cli``). Each of those places reads :data:`MANIFEST`, never a list of its
own, and ``tests/core/test_manifest.py`` loads every first-party plugin and checks that what its
hooks add (keys, names, Tensor attributes) and the keys its kernels are registered for are what
its entry here says: a name added to a plugin and not here fails that test.

A third-party plugin needs no entry: it is discovered through its entry point, and its names
are simply absent without it. This module imports nothing of tensorplug (it is the floor every
layer may read).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

__all__ = [
    "MANIFEST",
    "BY_NAME",
    "FirstPartyPlugin",
    "provider_of_attribute",
    "provider_of_device",
    "provider_of_key",
    "provider_of_name",
]


_FIELDS = (
    "name",
    "distribution",
    "module",
    "serves",
    "keys",
    "devices",
    "names",
    "tensor_attributes",
    "tensor_replaces",
    "tensor_state",
)


class FirstPartyPlugin:
    """One first-party plugin: where it comes from and what it adds (immutable; a plain class
    with slots rather than a dataclass, which would cost ``import tensorplug`` ~0.5 ms).

    - ``name``: the entry point's name: TENSORPLUG_PLUGINS / TENSORPLUG_DISABLE_PLUGINS take it;
    - ``distribution``: what ``pip install`` takes;
    - ``module``: the entry point's module, which holds the hook implementations;
    - ``serves``: keys that the core defines (or key families: "Autograd" is every Autograd<B>)
      and this plugin provides the kernels or fallbacks of: a missing kernel for one names it;
    - ``keys``: keys it creates (``tensorplug_add_keys``);
    - ``devices``: device types whose tensors need it (a backend of ``serves``);
    - ``names``: ``tensorplug.<name>`` it adds (``tensorplug_add_names``);
    - ``tensor_attributes``: Tensor attributes it adds that the core does not have: without the
      plugin a placeholder raises MissingPluginError naming the distribution;
    - ``tensor_replaces``: Tensor attributes it replaces, which the core answers itself without
      it (``is_leaf`` is True, ``requires_grad`` False, ...: Note [Missing plugin attributes]);
    - ``tensor_state``: class defaults of per-tensor state it keeps on Tensor (not user API: no
      placeholder).
    """

    __slots__ = _FIELDS
    name: str
    distribution: str
    module: str
    serves: tuple[str, ...]
    keys: tuple[str, ...]
    devices: tuple[str, ...]
    names: tuple[str, ...]
    tensor_attributes: tuple[str, ...]
    tensor_replaces: tuple[str, ...]
    tensor_state: tuple[str, ...]

    def __init__(
        self,
        name: str,
        distribution: str,
        module: str,
        serves: tuple[str, ...] = (),
        keys: tuple[str, ...] = (),
        devices: tuple[str, ...] = (),
        names: tuple[str, ...] = (),
        tensor_attributes: tuple[str, ...] = (),
        tensor_replaces: tuple[str, ...] = (),
        tensor_state: tuple[str, ...] = (),
    ) -> None:
        values: tuple[object, ...] = (name, distribution, module, serves, keys, devices, names)
        values += (tensor_attributes, tensor_replaces, tensor_state)
        for field, value in zip(_FIELDS, values, strict=True):
            object.__setattr__(self, field, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"FirstPartyPlugin is immutable: cannot set {name!r}")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, f) for f in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if type(other) is not FirstPartyPlugin:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        args = ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS)
        return f"FirstPartyPlugin({args})"

    @property
    def tensor_methods(self) -> frozenset[str]:
        """Everything its ``tensorplug_add_tensor_methods`` sets on Tensor."""
        return frozenset((*self.tensor_attributes, *self.tensor_replaces, *self.tensor_state))


MANIFEST: Final[tuple[FirstPartyPlugin, ...]] = (
    FirstPartyPlugin(
        name="cpu",
        distribution="tensorplug-cpu",
        module="tensorplug_cpu",
        serves=("CPU",),
        devices=("cpu",),
    ),
    FirstPartyPlugin(
        name="cuda",
        distribution="tensorplug-cuda",
        module="tensorplug_cuda",
        serves=("CUDA",),
        devices=("cuda",),
    ),
    FirstPartyPlugin(
        name="dask",
        distribution="tensorplug-dask",
        module="tensorplug_dask",
        keys=("Dask",),
        devices=("dask",),
        names=("dask",),
    ),
    FirstPartyPlugin(
        name="autograd",
        distribution="tensorplug-autograd",
        module="tensorplug_autograd",
        serves=("Autograd", "ADInplaceOrView"),
        keys=("ADView", "ForwardAD"),
        names=(
            "autograd",
            "no_grad",
            "enable_grad",
            "set_grad_enabled",
            "is_grad_enabled",
            "inference_mode",
            "is_inference_mode_enabled",
        ),
        tensor_attributes=(
            "grad",
            "grad_fn",
            "backward",
            "retain_grad",
            "retains_grad",
            "register_hook",
            "register_post_accumulate_grad_hook",
            "data",
            "output_nr",
        ),
        tensor_replaces=("requires_grad", "requires_grad_", "is_leaf", "detach_"),
        tensor_state=("tp_autograd", "tp_tangents"),
    ),
    FirstPartyPlugin(
        name="autocast",
        distribution="tensorplug-autocast",
        module="tensorplug_autocast",
        serves=("Autocast",),
        names=(
            "autocast",
            "amp",
            "is_autocast_enabled",
            "set_autocast_enabled",
            "get_autocast_dtype",
            "set_autocast_dtype",
            "is_autocast_cache_enabled",
            "set_autocast_cache_enabled",
            "clear_autocast_cache",
        ),
    ),
    FirstPartyPlugin(
        name="tracer",
        distribution="tensorplug-tracer",
        module="tensorplug_tracer",
        serves=("Tracer",),
        names=("tracer", "compile"),
    ),
    FirstPartyPlugin(
        name="batched",
        distribution="tensorplug-batched",
        module="tensorplug_batched",
        serves=("Batched",),
        keys=("VmapMode",),
        names=("vmap", "func"),
    ),
)

BY_NAME: Final[dict[str, FirstPartyPlugin]] = {p.name: p for p in MANIFEST}


def _index(field: str) -> dict[str, FirstPartyPlugin]:
    """``field``'s items -> the plugin that adds them (test_manifest.py checks that no item is
    in two plugins)."""
    return {item: p for p in MANIFEST for item in getattr(p, field)}


_BY_KEY: Final = _index("serves")
_BY_DEVICE: Final = _index("devices")
_BY_PUBLIC_NAME: Final = _index("names")
_BY_ATTRIBUTE: Final = _index("tensor_attributes")


def provider_of_key(name: str) -> FirstPartyPlugin | None:
    """The plugin that serves core key (or key family) ``name``; None for any other key."""
    return _BY_KEY.get(name)


def provider_of_device(device_type: str) -> FirstPartyPlugin | None:
    """The plugin that tensors of ``device_type`` need; None for a third party's device."""
    return _BY_DEVICE.get(device_type)


def provider_of_name(name: str) -> FirstPartyPlugin | None:
    """The plugin that adds ``tensorplug.<name>``; None when no first-party plugin does."""
    return _BY_PUBLIC_NAME.get(name)


def provider_of_attribute(name: str) -> FirstPartyPlugin | None:
    """The plugin that adds ``Tensor.<name>`` where the core has none (a placeholder's)."""
    return _BY_ATTRIBUTE.get(name)


# Note [Loader state for remedies]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Errors raised below the plugin loader (a missing kernel's DispatchError, a device with no
# backend) say whether the plugin that would serve them is installed and left out, failed, or
# absent. Only the loader (``plugins/__init__.py``, a layer above) knows, so it registers two answers
# here when it is imported; until then no plugin is loaded and none is known to be left out.
_loader_answers: list[tuple[Callable[[], set[str]], Callable[[str, str], str | None]]] = []


def register_loader(
    loaded_names: Callable[[], set[str]], absent_remedy: Callable[[str, str], str | None]
) -> None:
    """The plugin loader's answers: the names of the loaded plugins, and why an installed
    first-party plugin is not loaded (``absent_remedy(plugin, distribution)``, None if it is)."""
    _loader_answers[:] = [(loaded_names, absent_remedy)]


def loaded_plugins() -> set[str]:
    return _loader_answers[0][0]() if _loader_answers else set()


def absent_plugin_remedy(plugin: str, distribution: str) -> str | None:
    return _loader_answers[0][1](plugin, distribution) if _loader_answers else None
