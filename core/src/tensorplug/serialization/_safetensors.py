"""safetensors files through the ``safetensors`` library's numpy API (internal; the optional
``tensorplug[safetensors]`` extra)."""

from __future__ import annotations

import os
from typing import Any

from .. import _backends
from ..device import canonical as _canonical_device
from ..tensor import Tensor

__all__ = ["load_safetensors", "save_safetensors"]


def _library() -> Any:
    try:
        import safetensors.numpy
    except ImportError:
        raise ImportError(
            "tp.serialization.load_safetensors/save_safetensors need the safetensors package: "
            'pip install "tensorplug[safetensors]"'
        ) from None
    return safetensors.numpy


def load_safetensors(path: str | os.PathLike[str], device: Any = "cpu") -> dict[str, Tensor]:
    """The tensors of a safetensors file, by name, on ``device`` (what ``safetensors.torch.
    load_file`` gives; ``Module.load_state_dict`` takes it). The library checks the header
    against the file: dtypes, shapes and byte ranges."""
    st = _library()
    arrays = st.load_file(os.fspath(path))
    dev = _canonical_device(device)
    cpu = _backends.for_device_type("cpu")
    out: dict[str, Tensor] = {}
    for name, array in arrays.items():
        t: Tensor = cpu.from_host(array, "cpu")
        out[name] = t if dev.type == "cpu" else t.to(dev)
    return out


def save_safetensors(
    tensors: dict[str, Tensor],
    path: str | os.PathLike[str],
    metadata: dict[str, str] | None = None,
) -> None:
    """Write ``tensors`` (a ``state_dict``: names to tensors) as a safetensors file. As
    ``safetensors.torch.save_file``, tensors that share memory must be saved once
    (``safetensors`` refuses them otherwise)."""
    st = _library()
    arrays = {}
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"save_safetensors: {name!r} is a {type(t).__name__}, not a Tensor")
        host = _backends.for_device_type(t.device.type).to_host(t.tp_data)
        arrays[name] = host.copy()  # C order, owning its memory
    st.save_file(arrays, os.fspath(path), metadata=metadata)
