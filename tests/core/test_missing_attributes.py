"""What a user meets when the plugin behind a name is absent (Note [Missing plugin attributes]):
every name a first-party plugin adds -- Tensor methods, properties and setters, and
``tensorplug.`` names -- raises a MissingPluginError naming its distribution; when the plugin is
installed but left out by a setting, the message says so."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

import tensorplug as tp
from tensorplug import plugins
from tensorplug.plugins import _missing as _missing_attributes
from tests import needs

_NOT_INSTALLED = (
    "needs the tensorplug-autograd plugin, which is not installed (or not loaded): "
    "pip install tensorplug-autograd"
)


def test_every_name_a_loaded_first_party_plugin_adds_is_known():
    """The tables cover what the plugins really add, so a new name cannot be forgotten."""
    checked = 0
    for info in plugins.list():
        if info.status != "loaded" or info.name not in plugins.FIRST_PARTY_PLUGINS:
            continue
        dist = plugins.FIRST_PARTY_PLUGINS[info.name]
        for name in info.names:
            assert plugins._FIRST_PARTY_NAMES[name] == (info.name, dist), name
            checked += 1
        for name in info.tensor_methods:
            if name in (
                "requires_grad",
                "requires_grad_",
                "is_leaf",
                "detach_",
                "tp_autograd",
                "tp_tangents",
            ):
                continue  # core answers: False, a no-op for False, True, a no-op; plugin state
            assert _missing_attributes.TENSOR_ATTRIBUTES[name] == (info.name, dist), name
            checked += 1
    if checked == 0:
        pytest.skip("no first-party plugin that adds names is loaded here")


@pytest.mark.parametrize(
    ("what", "access"),
    [
        ("Tensor.grad", lambda x: x.grad),
        ("Tensor.grad", lambda x: delattr(x, "grad")),
        ("Tensor.grad_fn", lambda x: setattr(x, "grad_fn", None)),
        ("Tensor.data", lambda x: setattr(x, "data", tp.zeros(2))),
        ("Tensor.grad_fn", lambda x: x.grad_fn),
        ("Tensor.backward", lambda x: x.sum().backward()),
        ("Tensor.retain_grad", lambda x: x.retain_grad()),
        ("Tensor.retains_grad", lambda x: x.retains_grad),
        ("Tensor.register_hook", lambda x: x.register_hook(print)),
        (
            "Tensor.register_post_accumulate_grad_hook",
            lambda x: x.register_post_accumulate_grad_hook(print),
        ),
        ("Tensor.data", lambda x: x.data),
        ("x.requires_grad = True", lambda x: setattr(x, "requires_grad", True)),
        ("requires_grad=True", lambda x: x.requires_grad_()),
        ("requires_grad=True", lambda x: tp.ones(2, requires_grad=True)),
        ("requires_grad=True", lambda x: tp.tensor([1.0], requires_grad=True)),
    ],
)
def test_tensor_attribute_without_autograd_names_the_distribution(what, access):
    x = tp.ones(2)
    with needs.unloaded("autograd"):
        with pytest.raises(tp.MissingPluginError) as e:
            access(x)
    assert e.value.distribution == "tensorplug-autograd"
    assert str(e.value) == f"{what} {_NOT_INSTALLED}"


def test_tensor_attributes_without_autograd_that_have_an_answer():
    x = tp.ones(2)
    with needs.unloaded("autograd"):
        assert getattr(x, "grad", None) is None  # the error is also an AttributeError
        assert not hasattr(x, "grad_fn")
        assert x.requires_grad is False
        x.requires_grad = False  # nothing to switch off
        assert x.requires_grad_(False) is x
        assert x.is_leaf is True
        assert x.detach_() is x
        x.grad = g = tp.full([2], 3.0)  # a gradient set by hand is kept (nn.utils, optimizers)
        assert x.grad is g
        del x.grad
        assert getattr(x, "grad", None) is None
    if needs.HAS_AUTOGRAD:  # the plugin's attributes are back once it is loaded again
        assert x.grad is None
        x.requires_grad = True
        x.sum().backward()
        assert x.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    ("name", "dist"),
    [
        ("vmap", "tensorplug-batched"),
        ("func", "tensorplug-batched"),
        ("autocast", "tensorplug-autocast"),
        ("amp", "tensorplug-autocast"),
        ("tracer", "tensorplug-tracer"),
        ("compile", "tensorplug-tracer"),
        ("autograd", "tensorplug-autograd"),
        ("no_grad", "tensorplug-autograd"),
        ("is_grad_enabled", "tensorplug-autograd"),
        ("inference_mode", "tensorplug-autograd"),
    ],
)
def test_module_name_without_its_plugin_names_the_distribution(name, dist):
    with needs.unloaded(dist.removeprefix("tensorplug-")):
        with pytest.raises(tp.MissingPluginError) as e:
            getattr(tp, name)
    assert e.value.distribution == dist
    assert str(e.value) == (
        f"tensorplug.{name} is provided by the {dist} plugin, which is not installed "
        f"(or not loaded): pip install {dist}"
    )


@pytest.mark.parametrize(
    ("module", "dist"),
    [
        ("func", "tensorplug-batched"),
        ("tracer", "tensorplug-tracer"),
        ("amp", "tensorplug-autocast"),
    ],
)
def test_importing_a_module_of_an_absent_plugin_names_the_distribution(module, dist):
    with needs.unloaded(dist.removeprefix("tensorplug-")):
        assert f"tensorplug.{module}" not in sys.modules
        with pytest.raises(ImportError) as e:  # also a MissingPluginError
            importlib.import_module(f"tensorplug.{module}")
    assert isinstance(e.value, tp.MissingPluginError) and e.value.distribution == dist
    assert str(e.value) == (
        f"tensorplug.{module} is provided by the {dist} plugin, which is not installed "
        f"(or not loaded): pip install {dist}"
    )
    with pytest.raises(ModuleNotFoundError, match="No module named 'tensorplug.no_such_module'"):
        importlib.import_module("tensorplug.no_such_module")


_PROBE = """
import tensorplug as tp
x = object.__new__(tp.Tensor)  # no backend may be loaded; the attributes fail before data
for access in (lambda: x.grad, lambda: x.backward(), lambda: setattr(x, "requires_grad", True),
               lambda: tp.vmap, lambda: tp.autocast, lambda: tp.compile, lambda: tp.no_grad):
    try:
        access()
    except tp.MissingPluginError as e:
        print(e.distribution, "|", e)
"""


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"TENSORPLUG_AUTOLOAD": "0"}, "TENSORPLUG_AUTOLOAD=0"),
        ({"TENSORPLUG_PLUGINS": "cpu"}, "not listed in TENSORPLUG_PLUGINS='cpu'"),
    ],
)
def test_installed_but_not_loaded_says_so(env, why):
    for module in (
        "tensorplug_autograd",
        "tensorplug_batched",
        "tensorplug_autocast",
        "tensorplug_tracer",
    ):
        pytest.importorskip(module)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    r = subprocess.run(
        [sys.executable, "-c", _PROBE], env={**clean, **env}, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    tail = f"which is installed but not loaded ({why}): change that setting"
    assert r.stdout.splitlines() == [
        f"tensorplug-autograd | Tensor.grad needs the tensorplug-autograd plugin, {tail}",
        f"tensorplug-autograd | Tensor.backward needs the tensorplug-autograd plugin, {tail}",
        f"tensorplug-autograd | x.requires_grad = True needs the tensorplug-autograd plugin, {tail}",
        f"tensorplug-batched | tensorplug.vmap is provided by the tensorplug-batched plugin, {tail}",
        f"tensorplug-autocast | tensorplug.autocast is provided by the tensorplug-autocast plugin, {tail}",
        f"tensorplug-tracer | tensorplug.compile is provided by the tensorplug-tracer plugin, {tail}",
        f"tensorplug-autograd | tensorplug.no_grad is provided by the tensorplug-autograd plugin, {tail}",
    ]
