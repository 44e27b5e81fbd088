"""Batching rules of the factories that take a tensor: the ``*_like`` operators give a batched
tensor of the sample's shape, as PyTorch's do (a factory without a tensor argument meets vmap
through ``VmapMode`` only when it is random: random.py)."""

from __future__ import annotations

from .pointwise import defunary

defunary("zeros_like.default", "ones_like.default", "empty_like.default", "full_like.default")
