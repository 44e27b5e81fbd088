"""The forms PyTorch's Python functions accept beyond their operators' schemas (internal),
as the public function and method of the same name rewrite them before the overload is chosen:

* ``nonzero(x, as_tuple=True)``: one index tensor per dim (``aten::where(condition)``);
* ``einsum``'s sublist form, ``einsum(a, [0, 1], b, [1, 2], [0, 2])``: the equation written
  from the sublists (torch/functional.py's ``_einsum`` parser);
* ``tensordot(a, b, dims=([1], [0]))``: the two lists of contracted dims, as a pair or a
  2-row tensor (``aten::tensordot``); ``dims=n`` stays ``tensordot.int``;
* ``cdist(..., compute_mode="use_mm_for_euclid_dist")``: the mode names as the integers
  ``aten::cdist`` takes;
* ``unique_consecutive``: the output alone, or with the inverse and/or counts asked for;
* ``block_diag()`` with no tensors.

``FUNCTIONS`` and ``METHODS`` map a public name to a wrapper maker ``form(fn) -> fn``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ops import ops
from ..tensor import Tensor

Form = Callable[[Callable[..., Any]], Callable[..., Any]]


def _nonzero(fn: Callable[..., Any]) -> Callable[..., Any]:
    def nonzero(*args: Any, as_tuple: bool = False, **kwargs: Any) -> Any:
        if not as_tuple:
            return fn(*args, **kwargs)
        x = args[0] if args else kwargs.pop("input", kwargs.pop("self", None))
        if kwargs.get("out") is not None:
            raise RuntimeError("nonzero(): as_tuple=True does not take out=")
        return tuple(ops.aten.where.default(x))

    return nonzero


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist(subs: Any) -> str:
    out = []
    for s in subs:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, int) and 0 <= s < 52:
            out.append(_LETTERS[s])
        else:
            raise ValueError(
                f"einsum(): subscript in subscript list is not within the valid range [0, 52), got {s}"
            )
    return "".join(out)


def _einsum(fn: Callable[..., Any]) -> Callable[..., Any]:
    def einsum(*args: Any, **kwargs: Any) -> Any:
        if not args or isinstance(args[0], str):
            return fn(*args, **kwargs)
        # the sublist form: operand, sublist, operand, sublist, ..., [output sublist]
        ops_, subs = list(args[0::2]), list(args[1::2])
        out = None
        if len(args) % 2 == 1:
            out = ops_.pop()  # the trailing output sublist
            out = _sublist(out)
        eq = ",".join(_sublist(s) for s in subs)
        if out is not None:
            eq += "->" + out
        return fn(eq, *ops_, **kwargs)

    return einsum


def _tensordot(fn: Callable[..., Any]) -> Callable[..., Any]:
    def tensordot(a: Any, b: Any, dims: Any = 2, *rest: Any, **kwargs: Any) -> Any:
        out = kwargs.pop("out", None)
        if rest or "dims_other" in kwargs or "dims_self" in kwargs:  # the schema's own form
            r = fn(a, b, dims, *rest, **kwargs)
        else:
            if isinstance(dims, Tensor):
                dims = int(dims.item()) if dims.ndim == 0 else dims.tolist()
            if isinstance(dims, int):
                r = fn(a, b, dims, **kwargs)
            else:
                if len(dims) != 2:
                    raise RuntimeError("tensordot expects dims to be a pair of lists of dims")
                da, db = dims
                da = [da] if isinstance(da, int) else list(da)
                db = [db] if isinstance(db, int) else list(db)
                r = fn(a, b, da, db, **kwargs)
        if out is not None:
            out.copy_(r)
            return out
        return r

    return tensordot


_CDIST_MODES = {
    "use_mm_for_euclid_dist_if_necessary": 0,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


def _cdist(fn: Callable[..., Any]) -> Callable[..., Any]:
    def cdist(x1: Any, x2: Any, p: float = 2.0, compute_mode: Any = None) -> Any:
        if isinstance(compute_mode, str):
            if compute_mode not in _CDIST_MODES:
                raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
            compute_mode = _CDIST_MODES[compute_mode]
        return fn(x1, x2, float(p), compute_mode)

    return cdist


def _unique_consecutive(fn: Callable[..., Any]) -> Callable[..., Any]:
    def unique_consecutive(*args: Any, **kwargs: Any) -> Any:
        output, inverse, counts = fn(*args, **kwargs)  # the schema's errors, as the operator's
        inv = args[1] if len(args) > 1 else kwargs.get("return_inverse", False)
        cnt = args[2] if len(args) > 2 else kwargs.get("return_counts", False)
        if inv and cnt:
            return output, inverse, counts
        if inv:
            return output, inverse
        if cnt:
            return output, counts
        return output

    return unique_consecutive


def _block_diag(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``block_diag()`` of no tensors: PyTorch's empty 1x0 matrix of the default dtype (the
    dispatcher has no tensor to dispatch on)."""

    def block_diag(*args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return fn(*args, **kwargs)
        return ops.aten.empty.memory_format([1, 0])

    return block_diag


FUNCTIONS: dict[str, Form] = {
    "block_diag": _block_diag,
    "nonzero": _nonzero,
    "einsum": _einsum,
    "tensordot": _tensordot,
    "cdist": _cdist,
    "unique_consecutive": _unique_consecutive,
}
METHODS: dict[str, Form] = {
    "nonzero": _nonzero,
    "unique_consecutive": _unique_consecutive,
}
