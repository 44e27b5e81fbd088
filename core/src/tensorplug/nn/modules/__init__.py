"""``tensorplug.nn.modules``: where PyTorch's users find ``nn.modules.module`` (the global
module hooks, ``register_module_forward_hook``, ...). The modules themselves live in
``tensorplug.nn``."""

from __future__ import annotations

from . import module

__all__ = ["module"]
