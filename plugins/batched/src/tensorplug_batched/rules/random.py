"""Random operators under vmap: the ``randomness`` modes "error", "different" and "same".

Note [Random operators]
~~~~~~~~~~~~~~~~~~~~~~~
A random operator (tagged ``nondeterministic_seeded``) is handled per active level, innermost
first, as in PyTorch: "error" raises; "different" gives each sample of the level its own draw,
so the result is batched at the level even when no argument is; "same" draws once and shares
the draw across the level's samples. Two kernels do it:

* the ``Batched`` rule of each random operator, when an argument is batched at level L;
* the kernel of ``VmapMode`` -- a key this plugin adds just below ``Batched``, included while
  any vmap runs, with a fallthrough for every other operator -- when no argument is batched at
  the innermost level (``tp.rand(3)`` inside vmap has no argument to be batched).

Each handles its level, then calls the operator for the levels below with the levels from L up
hidden (``levels.hide_from``), so ``VmapMode`` sees the next one. "Same" with a batched
argument whose values matter (``bernoulli(p)``, ``normal(mean, std)``, ``multinomial``) draws
noise of the logical shape once and applies it to every sample: ``rand < p``, ``mean + std *
randn``, and for multinomial the inverse CDF (with replacement) or Gumbel top-k (without), which
draw from the same distributions as the operators, though not the same numbers.

Usage::

    tp.vmap(lambda x: x + tp.rand(3), randomness="different")(tp.zeros(4, 3))  # 4 draws
    tp.vmap(lambda x: x + tp.rand(3), randomness="same")(tp.zeros(4, 3))       # 1 draw, shared
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplug as tp

from ..batched import BatchedTensor, front, materialize, wrap
from ..calls import passdown, top_level
from ..levels import find_level, hide_from, visible_levels
from .table import defrule, is_inplace, positions

__all__ = ["register_vmap_mode", "random_error"]

aten = tp.ops.aten

RANDOM_OPS: tuple[str, ...] = (
    "bernoulli.default", "bernoulli.p", "normal.Tensor_float", "normal.float_Tensor",
    "normal.Tensor_Tensor", "multinomial.default", "bernoulli_.float", "uniform_.default",
    "normal_.default", "exponential_.default", "random_.from", "random_.to", "random_.default",
    "cauchy_.default", "log_normal_.default", "geometric_.default",  # issue 29
)  # fmt: skip
FACTORIES = (
    "rand.default",
    "randn.default",
    "randint.default",
    "randint.low",
    "normal.float_float",
)


def random_error(op: Any) -> RuntimeError:
    return RuntimeError(
        "vmap: called random operation while in randomness error mode. Please either use the "
        "'same' or 'different' randomness flags on vmap or perform the randomness operation "
        f"out of vmap ({op.name})"
    )


def _inplace_different_error(op: Any) -> RuntimeError:
    return RuntimeError(
        "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will "
        "appear like same randomness. If this is necessary for your usage, please file an "
        f"issue with functorch. ({op.name})"
    )


# --- per operator: "different" on physical values, "same" on logical tensors ------------------

# name -> fn(op, args with every tensor batched first, kwargs) -> physical result
_DIFFERENT: dict[str, Callable[..., Any]] = {}
# name -> fn(op, logical args, kwargs) -> logical result
_SAME: dict[str, Callable[..., Any]] = {}


def _direct(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return op(*args, **kwargs)


def _multinomial_different(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    p, *rest = args
    if p.ndim == 2:
        return op(p, *rest, **kwargs)
    flat = aten.reshape.default(p, [-1, p.shape[-1]])
    out = op(flat, *rest, **kwargs)
    return aten.reshape.default(out, [*p.shape[:-1], out.shape[-1]])


def _like(t: Any, shape: Any, generator: Any, fn: Any = aten.rand.default) -> Any:
    return fn(list(shape), generator=generator, dtype=t.dtype, device=t.device)


def _bernoulli_same(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    (p,) = args
    u = _like(p, p.shape, kwargs.get("generator"))
    return aten._to_copy.default(aten.lt.Tensor(u, p), dtype=p.dtype)


def _value_free_same(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Operators that read only ``self``'s shape and dtype: one draw of the logical shape."""
    self, *rest = args
    blank = aten.empty.memory_format(list(self.shape), dtype=self.dtype, device=self.device)
    return op(blank, *rest, **kwargs)


def _normal_same(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    mean, std = args
    g = kwargs.get("generator")
    like = mean if isinstance(mean, tp.Tensor) else std
    if isinstance(mean, tp.Tensor) and isinstance(std, tp.Tensor):
        shape = _broadcast_shape(mean.shape, std.shape)
    else:
        shape = like.shape
    z = _like(like, shape, g, aten.randn.default)
    scaled = aten.mul.Tensor(z, std) if isinstance(std, tp.Tensor) else aten.mul.Scalar(z, std)
    return (
        aten.add.Tensor(scaled, mean)
        if isinstance(mean, tp.Tensor)
        else aten.add.Scalar(scaled, mean)
    )


def _broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    return tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))


def _multinomial_same(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    probs, n, replacement = args
    g = kwargs.get("generator")
    k = probs.shape[-1]
    if replacement:  # inverse CDF with shared uniforms
        cdf = aten.cumsum.default(probs, -1)
        total = aten.slice.Tensor(cdf, -1, k - 1, k)
        u = aten.mul.Tensor(_like(probs, (*probs.shape[:-1], n), g), total)
        idx = aten.searchsorted.Tensor(cdf, aten.contiguous.default(u), right=True)
        return aten.clamp_max.default(idx, k - 1)
    # Gumbel top-k: the order of log p - log(-log u) samples without replacement
    u = _like(probs, probs.shape, g)
    gumbel = aten.neg.default(aten.log.default(aten.neg.default(aten.log.default(u))))
    keys = aten.add.Tensor(aten.log.default(probs), gumbel)
    return aten.topk.default(keys, n)[1]


for _name in ("bernoulli.default", "bernoulli.p", "normal.Tensor_float", "normal.float_Tensor",
              "normal.Tensor_Tensor", "bernoulli_.float", "uniform_.default", "normal_.default",
              "exponential_.default", "random_.from", "random_.to", "random_.default"):  # fmt: skip
    _DIFFERENT[_name] = _direct
_DIFFERENT["multinomial.default"] = _multinomial_different
_SAME["bernoulli.default"] = _bernoulli_same
_SAME["multinomial.default"] = _multinomial_same
for _name in ("normal.Tensor_float", "normal.float_Tensor", "normal.Tensor_Tensor"):
    _SAME[_name] = _normal_same
for _name in ("bernoulli.p", "bernoulli_.float", "uniform_.default", "normal_.default",
              "exponential_.default", "random_.from", "random_.to", "random_.default"):  # fmt: skip
    _SAME[_name] = _value_free_same
# the fills of issue 29: as exponential_
for _name in ("cauchy_.default", "log_normal_.default", "geometric_.default"):
    _DIFFERENT[_name] = _direct
    _SAME[_name] = _value_free_same


# --- poisson: one count per rate; "same" randomness with batched rates is refused, as in
# functorch (its unary_pointwise_random_batch_rule)


def _poisson_same(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    raise RuntimeError(
        "vmap: Vmap does not currently support same randomness with a batched tensor input. "
        f"Please file an issue with functorch ({op.name})"
    )


RANDOM_OPS = (*RANDOM_OPS, "poisson.default")
_DIFFERENT["poisson.default"] = _direct
_SAME["poisson.default"] = _poisson_same


def _physical_args(
    args: tuple[Any, ...], tensors: tuple[int, ...], lvl: int, size: int
) -> list[Any]:
    """Every tensor argument with a batch dimension first, broadcast to one rank."""
    rank = max(args[i].ndim for i in tensors)
    out = list(args)
    for i in tensors:
        a = args[i]
        p = front(a) if type(a) is BatchedTensor and a.level == lvl else materialize(a, size)
        for _ in range(rank - a.ndim):
            p = aten.unsqueeze.default(p, 1)
        out[i] = p
    return out


# --- the Batched rules ----------------------------------------------------------------------------


def _batched_rule(op: Any) -> Callable[..., Any]:
    name = op.name.split("::", 1)[1]
    different = _DIFFERENT[name]
    same = _SAME[name]
    tensors = positions(op, ("Tensor",))
    inplace = is_inplace(op)

    def rule(*args: Any, **kwargs: Any) -> Any:
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, kwargs)
        level = find_level(lvl)
        mode = level.randomness if level is not None else "different"
        if mode == "error":
            raise random_error(op)
        self = args[0]
        with hide_from(lvl):
            if mode == "same":
                out = same(op, args, kwargs)
                if inplace:
                    aten.copy_.default(self, out)
                    return self
                return out
            size = next(
                int(a.value.shape[a.bdim])
                for a in args
                if type(a) is BatchedTensor and a.level == lvl
            )
            out = different(op, tuple(_physical_args(args, tensors, lvl, size)), kwargs)
            return self if inplace else wrap(out, 0, lvl)

    return rule


for _name in RANDOM_OPS:
    defrule(_name)(_batched_rule)


# --- the VmapMode kernels ----------------------------------------------------------------------


def register_vmap_mode(lib: tp.Library, fallbacks: tp.Library) -> None:
    """A fallthrough for every operator on ``VmapMode``, and a kernel for each random one."""
    fallbacks.fallback(tp.library.fallthrough_kernel, "VmapMode")
    for name in (*RANDOM_OPS, *FACTORIES, "randperm.default"):
        op_name, overload = name.split(".")
        op = getattr(getattr(aten, op_name), overload)
        lib.impl(op, _mode_kernel(op, name), "VmapMode")


def _mode_kernel(op: Any, name: str) -> Callable[..., Any]:
    inplace = is_inplace(op)
    tensors = positions(op, ("Tensor",))
    size_index = next((i for i, a in enumerate(op.schema.positional) if a.name == "size"), -1)

    def kernel(*args: Any, **kwargs: Any) -> Any:
        levels = visible_levels()
        if not levels:
            with tp.dispatch.exclude("VmapMode"):
                return op(*args, **kwargs)
        top = levels[-1]
        if top.randomness == "error":
            raise random_error(op)
        with hide_from(top.id):
            if top.randomness == "same":
                return op(*args, **kwargs)
            if inplace:
                raise _inplace_different_error(op)
            if size_index >= 0:
                call = list(args)
                call[size_index] = [top.size, *args[size_index]]
                out = op(*call, **kwargs)
            elif not tensors:  # randperm: no size to extend
                out = aten.stack.default([op(*args, **kwargs) for _ in range(top.size)], 0)
            else:
                batched = list(args)
                for i in tensors:
                    batched[i] = wrap(materialize(args[i], top.size), 0, top.id)
                phys = _physical_args(tuple(batched), tensors, top.id, top.size)
                out = _DIFFERENT[name](op, tuple(phys), kwargs)
            return wrap(out, 0, top.id)

    return kernel
