"""``default_collate`` and ``default_convert``: PyTorch's rules for turning samples into a batch.

``default_collate(batch)`` (a list of samples) keeps the samples' structure and stacks the
leaves: tensors are stacked along a new first dimension; numpy arrays and numpy scalars become
tensors and are stacked; Python floats give a float64 tensor, ints an int64 tensor, bools a bool
tensor; strings and bytes stay a list; a Mapping gives a mapping of the same type (a mutable
one is copied and updated), a namedtuple a namedtuple, a tuple a *list*, other sequences (all
of one length) a sequence of the same type where it can be built from a list. Anything else,
and numpy arrays of strings or objects, raises PyTorch's ``TypeError``.

``default_convert(data)`` (no batching: ``batch_size=None``) turns numpy arrays and scalars
into tensors through the same structures, leaving everything else as it is.
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

from ... import dtypes as _dtypes
from ..._opset.construct import as_tensor, tensor
from ...ops import ops
from ...tensor import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_namedtuple(x: Any) -> bool:
    """A tuple whose class (or a base) has namedtuple's field list (looked up in the classes'
    namespaces, not by attribute: a plugin may not name a private attribute the core reads)."""
    return isinstance(x, tuple) and any("_fields" in vars(c) for c in type(x).__mro__[:-2])


def default_convert(data: Any) -> Any:
    """numpy arrays and scalars inside ``data`` as tensors; every structure kept."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if (
            elem_type.__name__ == "ndarray"
            and _np_str_obj_array_pattern.search(data.dtype.str) is not None
        ):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if _is_namedtuple(data):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, str | bytes):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                seq: Any = copy.copy(data)
                for i, d in enumerate(data):
                    seq[i] = default_convert(d)
                return seq
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


CollateFnMap = dict[type | tuple[type, ...], Callable[..., Any]]


def collate(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Collate ``batch`` by the structure of its first element; the leaves by the first entry
    of ``collate_fn_map`` (type -> ``fn(batch, *, collate_fn_map)``) their type matches."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(
                    {
                        key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                        for key in elem
                    }
                )
                return clone
            return elem_type(
                {
                    key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem
                }
            )
        except TypeError:
            return {
                key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem
            }
    if _is_namedtuple(elem):
        return elem_type(
            *(
                collate(samples, collate_fn_map=collate_fn_map)
                for samples in zip(*batch, strict=False)
            )
        )
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch, strict=True))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone_seq: Any = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone_seq[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone_seq
            return elem_type(
                [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
            )
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    r: Tensor = ops.aten.stack.default(list(batch), 0)
    return r


def collate_numpy_array_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    elem = batch[0]
    if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    import numpy  # only numpy scalars come here

    return as_tensor(numpy.asarray(batch))  # their own dtype, as torch.as_tensor(batch)


def collate_float_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    return tensor(list(batch), dtype=_dtypes.float64)


def collate_int_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    return tensor(list(batch))


def collate_str_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    return batch


def _numpy_collate(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    elem = batch[0]
    name = type(elem).__name__
    if name in ("str_", "string_", "bytes_"):
        return batch
    if name in ("ndarray", "memmap"):
        return collate_numpy_array_fn(batch, collate_fn_map=collate_fn_map)
    if getattr(elem, "shape", None) == ():  # a numpy scalar
        return collate_numpy_scalar_fn(batch, collate_fn_map=collate_fn_map)
    raise TypeError(default_collate_err_msg_format.format(type(elem)))


class _NumpyMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return type(obj).__module__ == "numpy"


class _Numpy(metaclass=_NumpyMeta):
    """Stands for every numpy type in :data:`default_collate_fn_map`."""


default_collate_fn_map: CollateFnMap = {
    Tensor: collate_tensor_fn,
    _Numpy: _numpy_collate,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: Any) -> Any:
    """A list of samples as one batch, by PyTorch's rules (module docstring): tensors, numpy
    arrays and numbers stacked; dicts, namedtuples and sequences collated field by field."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
