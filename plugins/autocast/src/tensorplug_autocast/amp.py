"""``tp.amp``: automatic mixed precision, with PyTorch's names.

``tp.amp.autocast`` is ``tp.autocast``; ``GradScaler`` scales losses for float16 training;
``custom_fwd`` / ``custom_bwd`` let a ``tp.autograd.Function`` take part in autocast;
``register_autocast`` (also ``tp.library.register_autocast``) gives a custom operator an
autocast policy; ``cached_cast`` is the cast an autocast kernel of your own uses;
``is_autocast_available(device_type)`` says whether a device type's backend declares autocast
dtypes. See docs/autocast.md.
"""

from __future__ import annotations

from .custom import cached_cast, custom_bwd, custom_fwd, register_autocast
from .grad_scaler import GradScaler
from .mode import autocast, is_autocast_available

__all__ = [
    "GradScaler",
    "autocast",
    "cached_cast",
    "custom_bwd",
    "custom_fwd",
    "is_autocast_available",
    "register_autocast",
]
