"""``Optimizer``: parameter groups, per-parameter state, and their state dict.

An optimizer holds ``param_groups`` — a list of dicts, each with its ``"params"`` and its
hyperparameters (the constructor's keywords are the defaults every group starts from) — and
``state``, a dict from parameter to that parameter's buffers (momentum, moments, step count).
Subclasses implement ``_update(group)``: PyTorch's update rule, run under ``no_grad()`` with in-place
operators on the parameters (Note [nn without autograd]: a parameter whose ``grad`` is None is
skipped, and without the autograd plugin every one is).

Usage::

    opt = tp.optim.SGD([{"params": model[0].parameters()},
                        {"params": model[2].parameters(), "lr": 1e-3}], lr=1e-2, momentum=0.9)
    opt.zero_grad(); loss.backward(); opt.step()
    saved = opt.state_dict(); opt.load_state_dict(saved)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from ..nn._autograd import enable_grad, no_grad, reset_grad
from ..ops import ops
from ..tensor import Tensor

__all__ = ["Optimizer", "ParamsT", "required"]

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()
"""A default that every parameter group must override (e.g. an ``lr`` without default)."""


class Optimizer:
    """Base class of the optimizers: subclasses define ``step``."""

    defaults: dict[str, Any]
    param_groups: list[dict[str, Any]]
    state: defaultdict[Tensor, dict[str, Any]]  # keyed by the parameter itself (by identity)

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {type(params).__name__}"
            )
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        groups: list[Any] = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group: its ``"params"`` and any hyperparameter that differs from the defaults.

        ``"params"`` holds tensors, or ``(name, tensor)`` pairs (``model.named_parameters()``),
        whose names the group keeps as ``"param_names"``; as in PyTorch, either every group
        names its parameters or none does.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError("param_group must have a 'params' entry")
        raw = param_group["params"]
        if isinstance(raw, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        entries: list[Any] = [raw] if isinstance(raw, Tensor) else list(raw)
        named = [isinstance(e, tuple) for e in entries]
        names: list[str] | None = None
        if any(named):
            if not all(named):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param "
                    "names are missing"
                )
            names = [name for name, _ in entries]
            params = [p for _, p in entries]
        else:
            params = entries
        if self.param_groups and ("param_names" in self.param_groups[0]) != (names is not None):
            which = "with" if names is not None else "without"
            raise ValueError(
                "all optimizer param groups should be with/without names. cannot "
                f"add param group {which} names to the optimizer"
            )
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is "
                    f"{type(p).__name__}"
                )
            if not p.is_leaf:
                raise ValueError(
                    "can't optimize a non-leaf Tensor; pass the leaf tensors it is computed "
                    "from, or a detached copy: t.detach().requires_grad_()"
                )
        ids = [id(p) for p in params]
        if len(set(ids)) != len(ids):
            raise ValueError("a parameter group holds the same parameter more than once")
        taken = {id(p) for g in self.param_groups for p in g["params"]}
        if taken.intersection(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        group = {**param_group, "params": params}
        if names is not None:
            group["param_names"] = names
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            group.setdefault(name, default)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to None, or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                reset_grad(p, set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters once from their gradients; returns ``closure()`` if given.

        ``closure`` (which recomputes the loss) runs with grad enabled; the update rule,
        ``_update(group)`` for each parameter group, runs under ``no_grad()``.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._update(group)
        return loss

    def _update(self, group: dict[str, Any]) -> None:
        """One group's update rule: what a subclass implements."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    # --- state dict --------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``.

        Parameters are numbered in group order, so the dict fits any optimizer built over
        parameters of the same shapes in the same order. Its tensors are the live buffers.
        """
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in g["params"]]
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take hyperparameters and buffers from ``state_dict`` (buffers are copied, cast to
        each parameter's device, and to its dtype when floating point)."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has a different number of parameter groups "
                f"({len(saved_groups)}) than the optimizer ({len(self.param_groups)})"
            )
        by_index: dict[int, Tensor] = {}
        for i, (g, s) in enumerate(zip(self.param_groups, saved_groups, strict=True)):
            if len(g["params"]) != len(s["params"]):
                raise ValueError(
                    f"loaded state dict contains a parameter group that doesn't match the size "
                    f"of optimizer's group: group {i} has {len(s['params'])} parameters there, "
                    f"{len(g['params'])} here"
                )
            by_index.update(zip(s["params"], g["params"], strict=True))
        state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for k, buffers in state_dict["state"].items():
            p = by_index.get(k)
            if p is None:
                raise ValueError(
                    f"loaded state dict has state for parameter {k}, which no parameter group "
                    "of it lists"
                )
            state[p] = {name: _cast_like(p, v) for name, v in buffers.items()}
        self.state = state
        self.param_groups = [
            {**s, "params": g["params"]}
            for g, s in zip(self.param_groups, saved_groups, strict=True)
        ]

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def _cast_like(p: Tensor, value: Any) -> Any:
    if not isinstance(value, Tensor):
        return value
    dtype = p.dtype if value.is_floating_point() and p.is_floating_point() else value.dtype
    copy = ops.aten._to_copy.default(value, dtype=dtype, device=p.device)
    return copy
