"""``tp.func``: composable function transforms, as ``torch.func``.

``vmap`` (vmap.py) needs only this plugin; ``grad``, ``grad_and_value``, ``vjp`` and ``jacrev``
(transforms.py, reverse mode) and ``jvp``, ``jacfwd``, ``linearize`` and ``hessian``
(forward.py, forward mode; ``hessian`` is ``jacfwd(jacrev(f))``) differentiate with
tensorplug-autograd and raise a ``MissingPluginError`` naming it when it is not loaded;
``functional_call`` runs a module with other parameters and buffers.

Usage::

    import tensorplug as tp
    from tensorplug.func import functional_call, grad, vmap

    model = tp.nn.Linear(3, 1)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        return ((functional_call(model, p, (x,)) - y) ** 2).mean()

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)  # a dict of [B, ...]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .custom import register_vmap  # noqa: F401  (tp.library.register_vmap calls it here)
from .forward import hessian, jacfwd, jvp, linearize
from .transforms import grad, grad_and_value, jacrev, vjp
from .vmap import vmap

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "vjp",
    "vmap",
]

_MISSING = object()


def functional_call(
    module: Any,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Call ``module(*args, **kwargs)`` with its parameters and buffers replaced by the tensors
    of ``parameter_and_buffer_dicts`` (a dict from dotted names to tensors, or a sequence of
    such dicts), as ``torch.func.functional_call``; the module is left as it was afterwards.

    ``tie_weights``: a parameter shared under several names takes the value given for any of
    them. ``strict``: the names given must be exactly the module's parameters and buffers.
    """
    values = _merge(parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    own = dict(module.named_parameters(remove_duplicate=False))
    own.update(dict(module.named_buffers()))
    if tie_weights:
        values = _tie(module, values)
    if strict:
        _check_strict(module, own, values)
    replaced: list[tuple[Any, str, Any]] = []
    try:
        for name, value in values.items():
            owner_path, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_path) if owner_path else module
            # an instance attribute shadows the module's registries (Module.__getattr__ only
            # runs when normal lookup fails), and leaves parameter order and hooks untouched
            replaced.append((owner, attr, owner.__dict__.get(attr, _MISSING)))
            object.__setattr__(owner, attr, value)
        return module(*args, **(kwargs or {}))
    finally:
        for owner, attr, before in reversed(replaced):
            if before is _MISSING:
                object.__delattr__(owner, attr)
            else:
                object.__setattr__(owner, attr, before)


def _merge(dicts: Any) -> dict[str, Any]:
    if isinstance(dicts, Mapping):
        return dict(dicts)
    if isinstance(dicts, Sequence) and not isinstance(dicts, str):
        if not all(isinstance(d, Mapping) for d in dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
            )
        seen: dict[str, int] = {}
        for d in dicts:
            for k in d:
                seen[k] = seen.get(k, 0) + 1
        repeated = [k for k, n in seen.items() if n > 1]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                "ambiguous"
            )
        return {k: v for d in dicts for k, v in d.items()}
    raise ValueError(
        "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
        f"{type(dicts)}"
    )


def _tie(module: Any, values: dict[str, Any]) -> dict[str, Any]:
    """Give every name of a tied (shared) parameter the value given for one of them."""
    names_of: dict[int, list[str]] = {}
    for name, p in module.named_parameters(remove_duplicate=False):
        names_of.setdefault(id(p), []).append(name)
    out = dict(values)
    for names in names_of.values():
        if len(names) < 2:
            continue
        given = [n for n in names if n in values]
        if not given:
            continue
        if len({id(values[n]) for n in given}) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {given}, which are tied. "
                "Consider using tie_weights=False"
            )
        for n in names:
            out[n] = values[given[0]]
    return out


def _check_strict(module: Any, own: dict[str, Any], values: dict[str, Any]) -> None:
    unexpected = [k for k in values if k not in own]
    missing = [k for k in own if k not in values]
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError(
            f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(msgs)
        )
