"""Saving and loading tensors: ``tp.save(obj, f)`` and ``tp.load(f, weights_only=True)``.

Note [Checkpoint format]
~~~~~~~~~~~~~~~~~~~~~~~~
``tp.save`` writes a zip archive laid out as PyTorch's (docs/serialization.md):
``archive/data.pkl`` (the object, pickle protocol 4), ``archive/byteorder``,
``archive/.tensorplug_format`` (the format version, :data:`FORMAT_VERSION`) and one record
``archive/data/<key>`` per storage, its bytes stored (not compressed) at a 64-byte-aligned
offset. The pickle refers to a storage by the persistent id ``('storage', dtype name, key,
device, numel)`` and builds a tensor over it with ``rebuild_from_storage(storage, offset,
shape, stride, requires_grad, class, attributes)``: views of one base share its storage,
saved once, as in PyTorch.

Every record carries the zip's CRC-32, which ``tp.load`` checks before using a byte of it
(under ``mmap=True`` too); a bad record, directory or pickle raises :class:`CheckpointError`
naming the file and the record. The same reader takes ``torch.save``'s archives (the persistent
id's type is then ``torch.FloatStorage`` and the like, the tensors ``torch._utils.
_rebuild_tensor_v2``) without importing torch, and the plain pickle streams of tensorplug
<= 0.1.2 (format 0, tensors inline as :func:`rebuild_tensor`).

Note [Tensor pickles]
~~~~~~~~~~~~~~~~~~~~~
A pickled tensor records what it *is*, never how this process dispatches it: its device
(``"cpu"``, ``"foo:1"``), dtype, shape and data, ``requires_grad``, its subclass
(``nn.Parameter``) and the attributes a user set on it. Key sets are not recorded: bits belong
to the process that assigned them (Note [Bit reuse] in keys.py), so loading rebuilds the tensor
through the storage backend its device type has *in the loading process*; a device type no
loaded plugin provides is an error naming it. A tensor that requires grad is saved as a leaf:
its data, without the graph that made it (as PyTorch does). ``pickle.dumps(t)`` (and
``copy.deepcopy``, ``multiprocessing``) give a self-contained record, :func:`rebuild_tensor`,
the data inline; ``tp.save`` puts the data in storage records instead.

``tp.load`` reads with ``weights_only=True`` by default: Note [Weights-only unpickling] in
_unpickler.py. Pass ``weights_only=False`` only for files you trust.

Usage::

    tp.save(model.state_dict(), "model.tp")
    model.load_state_dict(tp.load("model.tp"))
    model.load_state_dict(tp.load("model.pt", map_location="cpu"))  # from torch.save
    with tp.serialization.safe_globals([MyConfig]):
        extra = tp.load("run.tp")
"""

from __future__ import annotations

import contextlib
import copy
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..tensor import Tensor
from ._records import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    rebuild_from_storage,
    rebuild_tensor,
    reduce_tensor,
    register_tensor_class,
)
from ._safetensors import load_safetensors, save_safetensors
from ._unpickler import CheckpointError

__all__ = [
    "FORMAT_VERSION", "CheckpointError", "add_safe_globals", "clear_safe_globals",
    "get_safe_globals", "load", "load_safetensors", "rebuild_from_storage", "rebuild_tensor",
    "register_tensor_class", "safe_globals", "save", "save_safetensors",
]  # fmt: skip


# the archive reader and writer (zipfile, mmap, secrets) are imported on first use of one of
# these names: ``import tensorplug`` does not pay for them (issue 34, start-up)
_ARCHIVE_NAMES = frozenset({"FORMAT_VERSION", "load", "save"})
if TYPE_CHECKING:
    from ._archive import FORMAT_VERSION, load, save


def __getattr__(name: str) -> Any:
    if name in _ARCHIVE_NAMES:
        from . import _archive

        return getattr(_archive, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@contextlib.contextmanager
def safe_globals(safe_globals: list[Any]) -> Iterator[None]:
    """``add_safe_globals`` for the ``with`` block only, as ``torch.serialization.
    safe_globals``: the list is as it was afterwards."""
    before = get_safe_globals()
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        clear_safe_globals()
        add_safe_globals(before)


def _reduce_ex(self: Tensor, protocol: Any) -> tuple[Any, ...]:
    """Pickle (and copy) by device type, dtype and data, never key bits (Note [Tensor
    pickles])."""
    if self.requires_grad and not self.is_leaf and _for_another_process():
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue)."
        )
    return reduce_tensor(self)


def _for_another_process() -> bool:
    """Whether the pickling in progress is multiprocessing's (a ``Queue``, a spawned process's
    arguments), where PyTorch refuses a non-leaf tensor that requires grad; ``pickle.dumps``
    and ``tp.save`` keep it as a leaf, as PyTorch's do. Told from the callers' frames, so that
    ``import tensorplug`` does not import multiprocessing to register a reducer; looked at
    only for such a tensor."""
    frame: Any = sys._getframe(2)
    for _ in range(12):
        if frame is None:
            return False
        if frame.f_globals.get("__name__") == "multiprocessing.reduction":
            return True
        frame = frame.f_back
    return False


def _deepcopy(self: Tensor, memo: dict[int, Any]) -> Tensor:
    """``copy.deepcopy``: a copy of the data and of the user's attributes. As PyTorch, a
    tensor that requires grad and is not a leaf is refused (``pickle.dumps`` saves it as a
    leaf, as PyTorch's does)."""
    found = memo.get(id(self))
    if found is not None:
        return found  # type: ignore[no-any-return]
    if self.requires_grad and not self.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment. Detach it first (x.detach()) or deepcopy its leaves."
        )
    fn, args = reduce_tensor(self)
    *head, state = args
    new: Tensor = fn(*head, copy.deepcopy(state, memo))
    memo[id(self)] = new
    return new


_reduce_ex.__qualname__ = "Tensor.__reduce_ex__"
_deepcopy.__qualname__ = "Tensor.__deepcopy__"
Tensor.__reduce_ex__ = _reduce_ex  # type: ignore[method-assign, assignment]
Tensor.__deepcopy__ = _deepcopy  # type: ignore[method-assign, assignment]
