"""tensorplug-autograd: reverse-mode and forward-mode automatic differentiation (DESIGN §8).

The plugin owns the ``Autograd<B>`` keys (through the ``Autograd`` alias) and
``ADInplaceOrView``, and adds the ``ADView`` key just below it. It registers one Autograd kernel
per standard operator, generated from the formula table (formulas/, kernels.py),
ADInplaceOrView kernels for view ops and ADView kernels for in-place ops (views.py), a fallback
for operators without a derivative, the Tensor attributes of autograd (tensor_api.py), and the
names ``tp.autograd``, ``tp.no_grad``, ``tp.enable_grad``, ``tp.set_grad_enabled``,
``tp.is_grad_enabled``, ``tp.inference_mode`` and ``tp.is_inference_mode_enabled``. A tensor carries its ``Autograd<B>`` key only
while it requires grad, so calls on plain tensors never reach this plugin. Forward mode adds the
``ForwardAD`` key, just above the ``Autograd<B>`` keys, which only dual tensors carry, and one
boxed kernel for it (forward.py; Note [Dual tensors] in dual.py).

Its modules, one noun each, every one importing only modules listed before it (annotations under
``TYPE_CHECKING`` aside; no cycle, deferred imports included: ``tools/import_graph.py``):
``masks`` (the key-set masks), ``dual`` (forward-mode levels and tangents), ``grad_mode``, ``meta`` (a tensor's autograd state), ``saved``
(saved tensors), ``graph`` (nodes, edges, hooks), ``accumulate`` (leaves and
``AccumulateGrad``), ``engine`` (backward, ``autograd.grad``), ``nodes`` (the node of an op with
a formula), ``formulas/`` (the derivative table, one module per op family), ``rules`` (what each
op's kernel needs), ``recording``, ``inplace`` (in-place autograd, ``CopySlices``), ``codegen``
(the kernels' generated source), ``kernels``, ``views``, ``fused``, ``fused_steps`` (a chain of
nodes run as one step), ``function``
(``tp.autograd.Function``), ``reference`` (the kernels as plain Python), ``forward_formulas``
(the tangent formulas), ``forward`` (the ``ForwardAD`` kernel), ``forward_ad``
(``tp.autograd.forward_ad``), ``functional`` (``tp.autograd.functional``), ``tensor_api``,
``gradcheck``, ``graph_api`` (``tp.autograd.graph``) and ``autograd`` (``tp.autograd``).
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp
from tensorplug.hookspecs import hookimpl

from . import autograd as _autograd_api
from . import engine
from . import forward as _forward
from . import fused as _fused
from . import fused_steps as _fused_steps
from . import grad_mode as _grad_mode
from . import kernels as _kernels
from . import tensor_api as _tensor_api
from . import views as _views
from .masks import M

PLUGIN_API_VERSION = "1.2"  # the tensorplug.PLUGIN_API_VERSION it is written for (codegen)

__all__ = [
    "PLUGIN_API_VERSION",
    "tensorplug_add_keys",
    "tensorplug_add_names",
    "tensorplug_add_tensor_methods",
    "tensorplug_register_kernels",
]


def _refresh(*_: Any) -> None:
    M.refresh()
    engine._ONES.clear()  # kept tensors of backends that may be gone


def _above_forward(keys: Any) -> list[str]:
    """The keys ForwardAD ranks below when present: Autocast<B> and Tracer see a call before
    forward mode does (a trace records the user's ops, autocast casts before tangents are
    computed)."""
    names = []
    for name in ("Tracer", "Autocast"):
        try:
            keys.get(name)
        except Exception:  # noqa: BLE001  (the plugin that adds it is not loaded)
            continue
        names.append(name)
    return names


@hookimpl
def tensorplug_add_keys(keys: Any) -> None:
    # Note [The ADView key] in views.py
    keys.register_functionality("ADView", after="ADInplaceOrView", before="BackendSelect")
    # Note [Dual tensors] in dual.py: just above every Autograd<B> key, so autograd records
    # both the primal computation and the tangent's
    keys.register_functionality("ForwardAD", before="Autograd", after=_above_forward(keys))


@hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    M.refresh()
    registry.add_key_listener(_refresh)  # a backend added later gets Autograd<B>
    registry.add_repr_suffix(_tensor_api.repr_suffix)
    lib = registry.library("_", "IMPL")
    lib.fallback(_kernels.not_implemented_kernel, "Autograd")
    lib.fallback(tp.library.fallthrough_kernel, "ADView")  # kernels for in-place ops only
    lib.fallback(_forward.forward_kernel, "ForwardAD")  # Note [Forward-mode kernel]
    aten = registry.library("aten", "IMPL")
    _kernels.register_all(aten)
    _fused.register_fused(aten)
    _fused_steps.register_fused_steps()  # Note [Fused backward steps]
    _views.register_inplace_or_view(aten)


@hookimpl
def tensorplug_add_names() -> dict[str, Any]:
    return {
        "autograd": _autograd_api,
        "no_grad": _grad_mode.no_grad,
        "enable_grad": _grad_mode.enable_grad,
        "set_grad_enabled": _grad_mode.set_grad_enabled,
        "is_grad_enabled": _grad_mode.is_grad_enabled,
        "inference_mode": _grad_mode.inference_mode,
        "is_inference_mode_enabled": _grad_mode.is_inference_mode_enabled,
    }


@hookimpl
def tensorplug_add_tensor_methods() -> dict[str, Any]:
    return dict(_tensor_api.METHODS)
