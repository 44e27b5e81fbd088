"""``tensorplug.nn.modules.module``: ``Module`` and the global module hooks, under PyTorch's
path (``torch.nn.modules.module.register_module_forward_hook``, ...); defined in
``tensorplug.nn.module``."""

from __future__ import annotations

from ..module import (
    Module,
    RemovableHandle,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)

__all__ = [
    "Module", "RemovableHandle", "register_module_buffer_registration_hook",
    "register_module_forward_hook", "register_module_forward_pre_hook",
    "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
    "register_module_module_registration_hook", "register_module_parameter_registration_hook",
]  # fmt: skip
