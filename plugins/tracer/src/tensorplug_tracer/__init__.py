"""tensorplug-tracer: the ``Tracer`` key (DESIGN §8).

The plugin registers one boxed fallback on ``Tracer`` (recorder.py), so a trace records every
operator, of any namespace, defined before or after the plugin loaded; it adds the names
``tp.tracer`` (trace, Graph, load, TracerWarning...) and ``tp.compile``. ``tp.trace`` stays
the matrix trace (``aten::trace``), as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from tensorplug.hookspecs import hookimpl

from . import api, codegen, replay, serialize
from .graph import hooks
from .recorder import M, tracer_fallback, value_read_hook

__all__ = ["PLUGIN_API_VERSION", "tensorplug_add_names", "tensorplug_register_kernels"]

PLUGIN_API_VERSION = "1.2"  # the tensorplug.PLUGIN_API_VERSION it is written for (codegen)

# what a Graph does that the modules above graph.py provide (Note [What a graph does,
# registered from above] in graph.py)
hooks.source = codegen.source
hooks.namespace = codegen.namespace
hooks.replay = replay.replay_function
hooks.save = serialize.save


def _refresh(*_: Any) -> None:
    M.refresh()


@hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    M.refresh()
    registry.add_key_listener(_refresh)
    registry.add_value_read_hook(value_read_hook)
    registry.library("_", "IMPL").fallback(tracer_fallback, "Tracer")


@hookimpl
def tensorplug_add_names() -> dict[str, Any]:
    return {"tracer": api, "compile": api.compile}
