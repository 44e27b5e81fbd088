"""Forward-mode transforms of ``tp.func``: ``jvp``, ``jacfwd``, ``linearize``, and ``hessian``
as ``jacfwd(jacrev(f))``; they compute tangents with the autograd plugin's forward mode
(``tp.autograd.forward_ad``).

Note [Tangents inside vmap]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Forward mode, like autograd, works on physical tensors, below ``Batched``: a dual tensor is a
physical tensor with a tangent (Note [Dual tensors] in the autograd plugin). So inside
``vmap``, ``jvp`` brings each primal and its tangent to the same physical layout first -- both
materialized at every active level and laid out as ``[B_outer, ..., B_inner, *logical]``,
as the reverse transforms do (Note [Gradients inside vmap] in transforms.py) -- pairs the two
physical tensors and wraps the dual back at the levels. The batching rules then run every op on
physical duals, and the tangent of each physical output is that of the logical output laid out
the same way, because the rules apply the same ops to primal and tangent. ``jacfwd`` is
``vmap`` of ``jvp`` over the standard basis, so the primal is materialized along the basis
dimension (expanded, not copied). Each ``jvp`` takes a level of its own
(``forward_ad.transform_level``), so ``jvp(jvp(f))`` and ``jacfwd(jacfwd(f))`` nest, and
reverse mode composes both ways (``jacfwd(jacrev(f))``, ``jacrev(jacfwd(f))``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import tensorplug as tp
from tensorplug.errors import MissingPluginError
from tensorplug.tensor import Tensor

from . import pytree
from .batched import BatchedTensor, wrap
from .levels import Level, active_levels
from .transforms import _argnums, _canonical, _innermost, _materialize, _rebuild, jacrev
from .vmap import vmap

__all__ = ["hessian", "jacfwd", "jvp", "linearize"]

aten = tp.ops.aten


def _forward_ad(name: str) -> Any:
    """``tp.autograd.forward_ad``, or a MissingPluginError naming tensorplug-autograd."""
    try:
        return tp.autograd.forward_ad
    except MissingPluginError as e:
        raise MissingPluginError(
            f"tp.func.{name} computes tangents with the tensorplug-autograd plugin: {e}",
            distribution="tensorplug-autograd",
        ) from None


def _tensors_only(xs: list[Any], api: str, argname: str) -> None:
    if not xs:
        raise RuntimeError(f"{api}: Expected {argname} to contain at least one Tensor.")
    for x in xs:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{api}: Expected {argname} to only contain Tensors, got {type(x)}")


def _laid_out(x: Tensor, levels: list[Level]) -> Tensor:
    """``x`` batched at every level in ``levels``, over one physical tensor laid out as
    ``[B_outer, ..., B_inner, *logical]`` (Note [Tangents inside vmap])."""
    if not levels:
        return x
    out: Tensor = _canonical(_materialize(x, levels))
    for lv in levels:
        out = wrap(out, 0, lv.id)
    return out


def _make_dual(fwad: Any, p: Tensor, t: Tensor, level: int, levels: list[Level]) -> Tensor:
    if type(p) is not BatchedTensor and type(t) is not BatchedTensor:
        dual: Tensor = fwad.make_dual(p, t, level=level)
        return dual
    lp, lt = _laid_out(p, levels), _laid_out(t, levels)
    out: Tensor = _rebuild(lp, fwad.make_dual(_innermost(lp), _innermost(lt), level=level))
    return out


def _unpack(fwad: Any, o: Any, level: int, strict: bool, api: str) -> tuple[Tensor, Tensor]:
    if not isinstance(o, Tensor):
        raise RuntimeError(
            f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}"
        )
    inner = _innermost(o)
    primal, tangent = fwad.unpack_dual(inner, level=level)
    if tangent is None:
        if strict:
            raise RuntimeError(
                "jvp(f, primals, tangents, strict=True): The output of f is independent of "
                "the inputs. This is not allowed with strict=True."
            )
        tangent = aten.zeros_like.default(inner)
    return _rebuild(o, primal), _rebuild(o, tangent)


def _jvp(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    tangents: Any,
    argnums: tuple[int, ...] | None,
    strict: bool,
    has_aux: bool,
    api: str = "jvp(f, primals, tangents)",
) -> Any:
    fwad = _forward_ad("jvp")
    primals = args if argnums is None else tuple(args[i] for i in argnums)
    flat_p, spec_p = pytree.tree_flatten(primals)
    flat_t, spec_t = pytree.tree_flatten(tangents)
    if spec_p != spec_t:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {spec_p} and tangents with structure {spec_t}"
        )
    _tensors_only(flat_p, api, "primals")
    _tensors_only(flat_t, api, "tangents")
    levels = list(active_levels())
    with fwad.transform_level() as level:
        duals = pytree.tree_unflatten(
            spec_p,
            [_make_dual(fwad, p, t, level, levels) for p, t in zip(flat_p, flat_t, strict=True)],
        )
        if argnums is None:
            call_args = duals
        else:
            new = list(args)
            for k, i in enumerate(argnums):
                new[i] = duals[k]
            call_args = tuple(new)
        out = func(*call_args)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(
                    f"{api}: output of function f should be a tuple: (output, aux) if has_aux "
                    "is True"
                )
            out, aux = out
            aux = pytree.tree_map(lambda x: _primal_aux(fwad, x, level), aux)
        flat_o, spec_o = pytree.tree_flatten(out)
        if not flat_o:
            raise RuntimeError(
                f"{api}: Expected f to be a function that has non-empty output (got output = {out})"
            )
        pairs = [_unpack(fwad, o, level, strict, api) for o in flat_o]
    primals_out = pytree.tree_unflatten(spec_o, [p for p, _ in pairs])
    tangents_out = pytree.tree_unflatten(spec_o, [t for _, t in pairs])
    if has_aux:
        return primals_out, tangents_out, aux
    return primals_out, tangents_out


def _primal_aux(fwad: Any, x: Any, level: int) -> Any:
    if not isinstance(x, Tensor):
        raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return _rebuild(x, fwad.unpack_dual(_innermost(x), level=level).primal)


def jvp(
    func: Callable[..., Any],
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> Any:
    """``(func(*primals), J @ tangents)`` (``torch.func.jvp``): the output and the
    Jacobian-vector product of ``func`` at ``primals`` along ``tangents`` (same structure,
    same shapes), by forward mode. ``has_aux``: ``func`` returns ``(output, aux)`` and ``aux``
    comes third. ``strict``: an output independent of the inputs raises. Composes with
    ``vmap``, ``grad``, ``jacrev`` and itself."""
    if not isinstance(primals, tuple):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be "
            "valid to call f(*primals)."
        )
    return _jvp(func, primals, tangents, None, strict, has_aux)


def _basis(flat: list[Tensor], numels: list[int]) -> list[Tensor]:
    """One tangent per input for each of the ``sum(numels)`` directions of the standard basis:
    the k-th input's is ``[N, *shape]``, the identity's rows of its columns."""
    total = sum(numels)
    dtype = flat[0].dtype
    device = flat[0].device
    eye = aten.eye.default(total, dtype=dtype, device=device)
    out = []
    start = 0
    for x, n in zip(flat, numels, strict=True):
        chunk = aten.slice.Tensor(eye, 1, start, start + n)
        out.append(aten.reshape.default(chunk.to(dtype=x.dtype), [total, *x.shape]))
        start += n
    return out


def jacfwd(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable[..., Any]:
    """The Jacobian of ``func`` with respect to the arguments ``argnums`` by forward mode
    (``torch.func.jacfwd``): ``vmap`` of ``jvp`` over the standard basis; for an output of
    shape ``S`` and an input of shape ``I`` it has shape ``S + I``. ``randomness`` is vmap's."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        nums = _argnums(argnums, len(args))
        primals = tuple(args[i] for i in nums)
        flat, spec = pytree.tree_flatten(primals)
        _tensors_only(flat, "jacfwd(f, ...)(*args)", "primals")
        numels = [int(p.numel()) for p in flat]
        basis = pytree.tree_unflatten(spec, _basis(flat, numels))

        def push_jvp(b: Any) -> Any:
            got = _jvp(func, args, b, nums, False, has_aux)
            return (got[1], got[2]) if has_aux else got[1]

        results = vmap(push_jvp, randomness=randomness)(basis)
        aux = None
        if has_aux:
            results, aux = results
            aux = pytree.tree_map(lambda a: aten.select.int(a, 0, 0), aux)
        flat_out, spec_out = pytree.tree_flatten(results)
        per_output = []
        for jac in flat_out:
            moved = aten.movedim.int(jac, 0, -1)
            pieces = aten.split_with_sizes.default(moved, numels, -1)
            ins = [
                aten.reshape.default(piece, [*piece.shape[:-1], *p.shape])
                for piece, p in zip(pieces, flat, strict=True)
            ]
            grouped = pytree.tree_unflatten(spec, ins)
            per_output.append(grouped[0] if isinstance(argnums, int) else grouped)
        result = pytree.tree_unflatten(spec_out, per_output)
        if has_aux:
            return result, aux
        return result

    return wrapper


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)`` (``torch.func.linearize``): ``jvp_fn(*tangents)`` is the
    Jacobian-vector product at ``primals``. PyTorch traces the linearized graph once;
    here ``jvp_fn`` runs forward mode through ``func`` again on each call, with the primals
    fixed (same results, the cost of a ``jvp``)."""
    _forward_ad("linearize")
    flat_p, spec_p = pytree.tree_flatten(primals)
    out = func(*primals)
    fixed = tuple(aten.detach.default(p) if isinstance(p, Tensor) else p for p in primals)

    def jvp_fn(*tangents: Any) -> Any:
        flat_t, spec_t = pytree.tree_flatten(tangents)
        if spec_t != spec_p:
            raise RuntimeError(
                f"Expected the tangents {spec_t} to have the same argspec as the primals {spec_p}"
            )
        for i, (p, t) in enumerate(zip(flat_p, flat_t, strict=True)):
            if tuple(t.shape) != tuple(p.shape):
                raise RuntimeError(
                    f"tangent:{i} with shape {list(t.shape)} in flattened pytree doesn't match "
                    f"the shape {list(p.shape)} of the corresponding primal."
                )
            if t.dtype != p.dtype:
                raise RuntimeError(
                    f"tangent:{i} with dtype {t.dtype} in flattened pytree doesn't match the "
                    f"dtype {p.dtype} of the corresponding primal."
                )
        return _jvp(func, fixed, tangents, None, False, False)[1]

    return out, jvp_fn


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Hessian of ``func`` with respect to the arguments ``argnums``
    (``torch.func.hessian``): ``jacfwd(jacrev(func))``, forward mode over reverse mode."""
    return jacfwd(jacrev(func, argnums), argnums)
