"""The ``Functionalize`` key: PyTorch's view semantics for backends whose arrays share no memory
(internal; the fallback is registered at start-up, ``tp.keys.set_has_views`` opts a backend in).

Note [Functionalization]
~~~~~~~~~~~~~~~~~~~~~~~~
numpy and CuPy arrays have views: ``a[0]`` shares ``a``'s memory, so writing one writes the
other, and the kit's view kernels (``Tensor._alias``) give tensorplug PyTorch's aliasing for
free. A library whose arrays share no memory (dask's graphs, array_api_strict's permutes, any
lazy or functional array library) makes every "view" a copy: a write through ``x.t()`` or
``x[0]`` would not reach ``x``, nor a write to ``x`` its views. PyTorch meets the same problem
on XLA and other lazy backends with *functionalization*, and so does tensorplug: a backend
declares it has no views (``register(..., views=False)``, ``tp.keys.set_has_views``), and its
tensors carry the ``Functionalize`` key (below ``ADInplaceOrView``, above ``BackendSelect``, as
in PyTorch's order), whose boxed fallback, :func:`functionalize_fallback`, runs every operator
on them:

1. **Sync.** Every tensor argument that is a view whose base moved on (the base's generation
   ``_fz_gen`` differs from the one the view was made or last synced at) is regenerated first:
   its view chain is replayed from the base's current value.
2. **Run** the operator below the key (the backend's kernel).
3. **View ops** (the schema returns an alias ``Tensor(a)`` and writes nothing; the result is a
   view of the backend's making, ``tp_base`` set): the result records its root base, the chain
   of view calls from that base (the operator, its other arguments, which output of a list) and
   the base's generation (``_fz_view``).
4. **Mutations** (an argument marked ``(a!)``: in-place methods, ``out=``, ``copy_``, the
   writes behind ``setitem``): a written view's new value is written back into its base, and
   the base's generation is bumped, so every other view of it regenerates on its next use. A
   written base just bumps its generation.

The version counter needs nothing: the kit's views share their base's counter
(``Tensor._alias``), and the dispatcher bumps it once per in-place call, so ``_version``
behaves as on CPU. Values read outside the dispatcher (``tolist``, ``numpy``, ``repr``,
``item`` is an operator) sync first too (``values._host``).

Write-back. PyTorch writes a view back with one inverse "scatter" operator per view operator
(``slice_scatter``, ``select_scatter``, ``diagonal_scatter``, ``as_strided_scatter``...). Here
it is generic instead: the view chain is replayed on ``arange(base.numel())`` shaped as the base,
which gives, for each element of the view, the flat position in the base it came from; one
``index_put`` writes the view's values there. That needs no inverse per view operator (the
kit's ~30 view operators and any a plugin defines work as they are; a backend needs no
scatter kernels), and it is exact for every view that selects elements, which is every view
that keeps the dtype. The cost is an int64 index array of the base's size per write through a
view (a lazy backend only adds it to its graph). Views that change the dtype
(``view_as_real``, ``view_as_complex``, ``real``/``imag``) select no elements: the chain is cut
at them and each is inverted by its own inverse (``view_as_complex``, ``view_as_real``,
``complex`` with the other part).

Cost. Backends with real views carry no ``Functionalize`` bit, so their calls never reach this
module: no check anywhere on their path (the key's bit is not in their key sets; the only
addition is one attribute read in ``values._host``, off the dispatcher). On a backend without
views every call pays one boxed fallback (binding the arguments and a scan of them); a write
through a view pays the index write-back, and a stale view the replay of its chain.

Limits. Regeneration is lazy (at the next use), as PyTorch's; a view whose values are read by
other means than operators and ``values`` (a plugin reading ``tp_data`` of a stale view
directly) must call :func:`sync` first. Writing a view of an expanded tensor writes the
element once (PyTorch refuses such writes).
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dtypes
from .. import keys as _keys
from ..ops import ops
from ..tensor import Tensor

__all__ = ["functionalize_fallback", "sync"]

_aten = ops.aten

# op -> (kind, argument index of the aliased input) with kind "view", "write" or "plain"
_KINDS: dict[Any, tuple[str, int]] = {}


class _View:
    """A view's record: its root base, the calls that make it from that base, and the base's
    generation its value is of."""

    __slots__ = ("base", "steps", "gen")

    def __init__(self, base: Tensor, steps: tuple[_Step, ...], gen: int) -> None:
        self.base = base
        self.steps = steps
        self.gen = gen


class _Step:
    """One view call: ``op(*args, **kwargs)`` with the input at ``args[pos]`` (``None`` in the
    stored args), and ``index`` the output taken from a list result (``unbind``), or -1."""

    __slots__ = ("op", "args", "kwargs", "pos", "index", "in_dtype", "out_dtype")

    def __init__(
        self,
        op: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        pos: int,
        index: int,
        in_dtype: _dtypes.dtype,
        out_dtype: _dtypes.dtype,
    ) -> None:
        self.op = op
        self.args = args
        self.kwargs = kwargs
        self.pos = pos
        self.index = index
        self.in_dtype = in_dtype
        self.out_dtype = out_dtype

    def apply(self, ks: int, x: Tensor) -> Tensor:
        args = list(self.args)
        args[self.pos] = x
        r = self.op.redispatch(ks, *args, **self.kwargs)
        return r[self.index] if self.index >= 0 else r  # type: ignore[no-any-return]


def _kind(op: Any) -> tuple[str, int]:
    got = _KINDS.get(op)
    if got is None:
        schema = op.schema
        if schema.is_mutable:
            got = ("write", -1)
        else:
            got = ("plain", -1)
            sets = {
                s for r in schema.returns if r.annotation is not None for s in r.annotation.before
            }
            if sets:
                for i, a in enumerate(schema.positional):
                    if a.annotation is not None and set(a.annotation.before) & sets:
                        got = ("view", i)
                        break
        _KINDS[op] = got
    return got


_FZ_BIT = _keys.get("Functionalize").bit  # a built-in key: its bit never changes


def _below(ks: int) -> int:
    """The keys of ``ks`` below ``Functionalize`` (the backend's)."""
    return int(ks) & _keys._state.below_mask[_FZ_BIT]


def _tensors(values: Any) -> list[Tensor]:
    out: list[Tensor] = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, list | tuple):
            out.extend(x for x in v if isinstance(x, Tensor))
    return out


def _sync_all(values: Any, ks: int) -> None:
    for v in values:
        if isinstance(v, Tensor):
            rec = v._fz_view
            if rec is not None and rec.gen != rec.base._fz_gen:
                _regenerate(v, rec, ks)
        elif isinstance(v, list | tuple):
            for x in v:
                if isinstance(x, Tensor):
                    rec = x._fz_view
                    if rec is not None and rec.gen != rec.base._fz_gen:
                        _regenerate(x, rec, ks)


def _regenerate(t: Tensor, rec: _View, ks: int) -> None:
    v = rec.base
    for step in rec.steps:
        v = step.apply(ks, v)
    t._data = v._data
    rec.gen = rec.base._fz_gen


def sync(t: Tensor) -> None:
    """Bring view ``t`` up to date with its base if the base was written since (a no-op for
    any other tensor): what a reader of ``t.tp_data`` outside the dispatcher calls first."""
    rec = t._fz_view
    if rec is not None and rec.gen != rec.base._fz_gen:
        _regenerate(t, rec, _below(t._tp_keyset))


def functionalize_fallback(op: Any, keyset: Any, *args: Any, **kwargs: Any) -> Any:
    """The boxed kernel of ``Functionalize`` (Note [Functionalization])."""
    ks = _below(keyset)
    kind, pos = _KINDS.get(op) or _kind(op)
    if kind == "plain":  # most calls: sync the arguments, run
        _sync_all(args, ks)
        if kwargs:
            _sync_all(kwargs.values(), ks)
        return op.redispatch(ks, *args, **kwargs)
    args, kwargs = op.schema.bind(args, kwargs, op.name)
    values = (*args, *kwargs.values())
    _sync_all(values, ks)
    result = op.redispatch(ks, *args, **kwargs)
    if kind == "view":
        _record(op, args, kwargs, pos, result)
        return result
    seen: set[int] = set()
    for a, v in zip(op.schema.arguments, values, strict=True):
        if a.is_write:
            for t in _tensors((v,)):
                if id(t) not in seen:
                    seen.add(id(t))
                    _written(t, ks)
    return result


def _record(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any], pos: int, result: Any) -> None:
    src = args[pos]
    if not isinstance(src, Tensor):
        return
    rec = src._fz_view
    base = src if rec is None else rec.base
    prefix = () if rec is None else rec.steps
    stored = list(args)
    stored[pos] = None
    stored_args = tuple(stored)
    outs = result if isinstance(result, list | tuple) else (result,)
    for i, out in enumerate(outs):
        # a view of the backend's making (Tensor._alias); a copy (reshape of a tensor that
        # cannot be viewed) or the input itself is no view to record
        if not isinstance(out, Tensor) or out is src:
            continue
        if out._base is None and op.name != "aten::detach.default":
            continue  # detach's result is no autograd view but aliases all of its input
        step = _Step(
            op,
            stored_args,
            kwargs,
            pos,
            i if isinstance(result, list | tuple) else -1,
            src._dtype,
            out._dtype,
        )
        out._fz_view = _View(base, (*prefix, step), base._fz_gen)


def _written(t: Tensor, ks: int) -> None:
    rec = t._fz_view
    if rec is None:
        t._fz_gen += 1
        return
    base = rec.base
    new = _write_back(base, rec.steps, t, ks)
    base._data = new._data
    base._fz_gen += 1
    rec.gen = base._fz_gen


def _write_back(base: Tensor, steps: tuple[_Step, ...], new: Tensor, ks: int) -> Tensor:
    """``base``'s new value once the view that ``steps`` make of it holds ``new``'s values."""
    values = [base]  # the value before each step, needed where a step changes the dtype
    for step in steps[:-1]:
        values.append(step.apply(ks, values[-1]))
    end = len(steps)
    while True:
        k = end - 1
        while k >= 0 and steps[k].in_dtype is steps[k].out_dtype:
            k -= 1
        # steps k+1 .. end-1 select elements of values[k + 1]
        if k + 1 < end:
            new = _scatter(values[k + 1], steps[k + 1 : end], new, ks)
        if k < 0:
            return new
        new = _invert(steps[k], values[k], new, ks)
        end = k


def _scatter(src: Tensor, steps: tuple[_Step, ...], new: Tensor, ks: int) -> Tensor:
    """``src`` with the elements that ``steps`` select from it replaced by ``new``'s."""
    if not steps:
        return new
    n = src.numel()
    positions = _aten.arange.default.redispatch(
        ks & _keys.backend_mask(), n, dtype=_dtypes.int64, device=src._device
    )
    positions = _reshape(positions, list(src.shape), ks)
    for step in steps:
        positions = step.apply(ks, positions)
    flat = _reshape(src, [n], ks)
    vals = _reshape(new, [-1], ks)
    if vals._dtype is not flat._dtype:
        vals = _aten._to_copy.default.redispatch(ks, vals, dtype=flat._dtype)
    out = _aten.index_put.default.redispatch(ks, flat, [_reshape(positions, [-1], ks)], vals)
    return _reshape(out, list(src.shape), ks)


def _reshape(t: Tensor, shape: list[int], ks: int) -> Tensor:
    return _aten.reshape.default.redispatch(ks, t, shape)  # type: ignore[no-any-return]


def _contiguous(t: Tensor, ks: int) -> Tensor:
    return _aten.clone.default.redispatch(ks, t)  # type: ignore[no-any-return]


def _invert(step: Any, before: Tensor, new: Tensor, ks: int) -> Tensor:
    """The value before dtype-changing view ``step`` (whose input was ``before``) that gives
    ``new`` after it."""
    name = step.op.name
    if name == "aten::view_as_real.default":
        return _aten.view_as_complex.default.redispatch(ks, _contiguous(new, ks))  # type: ignore[no-any-return]
    if name == "aten::view_as_complex.default":
        return _aten.view_as_real.default.redispatch(ks, new)  # type: ignore[no-any-return]
    if name == "aten::real.default":
        imag = _aten.imag.default.redispatch(ks, before)
        return _aten.complex.default.redispatch(ks, new, _contiguous(imag, ks))  # type: ignore[no-any-return]
    if name == "aten::imag.default":
        real = _aten.real.default.redispatch(ks, before)
        return _aten.complex.default.redispatch(ks, _contiguous(real, ks), new)  # type: ignore[no-any-return]
    raise NotImplementedError(
        f"{name}: writing through this view, which changes the dtype from {step.in_dtype} to "
        f"{step.out_dtype}, is not supported on a backend without views (Note "
        "[Functionalization]); write a copy and assign it to the base instead"
    )
