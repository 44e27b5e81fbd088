"""``Optimizer``: parameter groups, per-parameter state, hooks, and PyTorch's state dict.

An optimizer holds ``param_groups`` — a list of dicts, each with its ``"params"`` and its
hyperparameters (the constructor's keywords are the defaults every group starts from) — and
``state``, a dict from parameter to that parameter's buffers (momentum, moments, a step count
held in a 0-dim tensor as PyTorch 2.x holds it). Subclasses implement ``_update(group)``:
PyTorch's update rule, run under ``no_grad()`` with in-place operators on the parameters (Note
[nn without autograd]: a parameter whose ``grad`` is None is skipped, and without the autograd
plugin every one is). A subclass may instead override ``step(closure=None)`` as in PyTorch; the
step hooks wrap it all the same.

Usage::

    opt = tp.optim.SGD([{"params": model[0].parameters()},
                        {"params": model[2].parameters(), "lr": 1e-3}], lr=1e-2, momentum=0.9)
    opt.zero_grad(); loss.backward(); opt.step()
    saved = opt.state_dict(); opt.load_state_dict(saved)

Note [Learning rate cells]
~~~~~~~~~~~~~~~~~~~~~~~~~~
The multi-tensor paths (``foreach``) read a group's learning rate from a 0-dim float64 tensor,
its *cell*, that follows ``group["lr"]``: a param group is a dict whose ``group["lr"] = x``
also writes ``x`` into the cell. A graph ``tp.compile`` traced from a training step reads the
cell (a constant held by reference), so a scheduler changing the learning rate between steps
changes what the graph computes without a new trace. A learning rate given as a tensor is its
own cell.
"""

from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

from .. import dtypes as _dt
from ..dispatch import local_state, state_read
from ..nn._autograd import enable_grad, no_grad, reset_grad
from ..nn._hooks import RemovableHandle
from ..ops import ops
from ..tensor import Tensor

__all__ = [
    "Optimizer",
    "ParamsT",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
    "required",
]

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]

_aten = ops.aten


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()
"""A default that every parameter group must override (e.g. an ``lr`` without default)."""

_global_step_pre_hooks: dict[int, Callable[..., Any]] = OrderedDict()
_global_step_post_hooks: dict[int, Callable[..., Any]] = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A hook every optimizer calls before its step: ``hook(optimizer, args, kwargs)``, which
    returns None or a new ``(args, kwargs)``."""
    handle = RemovableHandle(_global_step_pre_hooks)
    _global_step_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A hook every optimizer calls after its step: ``hook(optimizer, args, kwargs)``."""
    handle = RemovableHandle(_global_step_post_hooks)
    _global_step_post_hooks[handle.id] = hook
    return handle


def scalar_dtype() -> _dt.dtype:
    """The dtype of step counts and other scalar state: PyTorch's ``_get_scalar_dtype()``."""
    return _dt.float64 if _dt.get_default_dtype() is _dt.float64 else _dt.float32


def new_step(p: Tensor) -> Tensor:
    """A step count for ``p``'s state: a 0-dim tensor on ``p``'s device holding 0."""
    step: Tensor = _aten.zeros.default([], dtype=scalar_dtype(), device=p.device)
    return step


class _Group(dict):  # type: ignore[type-arg]
    """A parameter group: a dict whose ``"lr"`` also fills its cell (Note [Learning rate
    cells])."""

    __slots__ = ("cell",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cell: Tensor | None = None

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, value)
        if key == "lr" and self.cell is not None and self.cell is not value:
            if isinstance(value, Tensor):
                self.cell = None  # a tensor learning rate is its own cell
            else:
                with no_grad():
                    _aten.fill_.Scalar(self.cell, value)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def __reduce__(self) -> Any:  # copies and pickles are plain dicts
        return (dict, (dict(self),))


def lr_cell(group: dict[str, Any]) -> Tensor:
    """The tensor the multi-tensor paths read ``group``'s learning rate from (Note [Learning
    rate cells])."""
    lr = group["lr"]
    if isinstance(lr, Tensor):
        return lr
    cell = group.cell if isinstance(group, _Group) else None
    if cell is None:
        cell = _aten.full.default(
            [], float(lr), dtype=_dt.float64, device=group["params"][0].device
        )
        if isinstance(group, _Group):
            group.cell = cell
    return cell


def _hooked(step: Callable[..., Any]) -> Callable[..., Any]:
    """``step`` run between the step pre-hooks and post-hooks (global ones and the
    optimizer's own), once per call even when a subclass's ``step`` calls ``super().step()``."""

    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        d = self.__dict__
        d["_opt_called"] = True  # read by the schedulers' step-order warning
        if d.get("_stepping"):
            return step(self, *args, **kwargs)
        pre = d.get("_optimizer_step_pre_hooks")
        post = d.get("_optimizer_step_post_hooks")
        if not (pre or post or _global_step_pre_hooks or _global_step_post_hooks):
            d["_stepping"] = True
            try:
                return step(self, *args, **kwargs)
            finally:
                d["_stepping"] = False
        for hook in chain(_global_step_pre_hooks.values(), (pre or {}).values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), but "
                        f"got {result}."
                    )
                args, kwargs = result
        d["_stepping"] = True
        try:
            out = step(self, *args, **kwargs)
        finally:
            d["_stepping"] = False
        for hook in chain((post or {}).values(), _global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    wrapper.__hooked__ = True  # type: ignore[attr-defined]
    return wrapper


class Optimizer:
    """Base class of the optimizers: subclasses define ``_update(group)`` or ``step``."""

    defaults: dict[str, Any]
    param_groups: list[dict[str, Any]]
    state: defaultdict[Tensor, dict[str, Any]]  # keyed by the parameter itself (by identity)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "__hooked__", False):
            cls.step = _hooked(step)  # type: ignore[method-assign]

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {type(params).__name__}"
            )
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        self._optimizer_step_pre_hooks: dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_step_post_hooks: dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_state_dict_pre_hooks: dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_state_dict_post_hooks: dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: dict[int, Callable[..., Any]] = OrderedDict()
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
        group = _Group({**param_group, "params": params})
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

    @_hooked
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters once from their gradients; returns ``closure()`` if given.

        ``closure`` (which recomputes the loss) runs with grad enabled; the update rule,
        ``_update(group)`` for each parameter group, runs under ``no_grad()`` (with the
        caller's grad mode for an optimizer built with ``differentiable=True``).
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        if local_state.state_reads is not None:  # recorded: say what the update depends on
            for group in self.param_groups:
                depends_on(self, group, self._hyperparameters(group))
        if self.defaults.get("differentiable"):
            for group in self.param_groups:
                self._update(group)
            return loss
        with no_grad():
            for group in self.param_groups:
                self._update(group)
        return loss

    _foreach_reads_lr_cell = False  # Note [Learning rate cells]: Adam, AdamW, SGD, Adagrad
    _has_tensor_path = False  # Note [Tensor paths]: all but SGD, Adam, AdamW, LBFGS, SparseAdam

    def _hyperparameters(self, group: dict[str, Any]) -> tuple[str, ...]:
        """The keys of ``group`` its update reads as Python values: all but the parameters
        (and the learning rate, where the update reads it from its cell or it is a tensor)."""
        reads_cell = (self._foreach_reads_lr_cell and use_foreach(group)) or (
            self._has_tensor_path and tensor_path(group)
        )
        skip_lr = isinstance(group["lr"], Tensor) or (reads_cell and isinstance(group, _Group))
        return tuple(
            k for k in group if k not in ("params", "param_names") and not (skip_lr and k == "lr")
        )

    def _update(self, group: dict[str, Any]) -> None:
        """One group's update rule: what a subclass implements."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    # --- hooks -------------------------------------------------------------------------------

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` before each step; it may return a new
        ``(args, kwargs)``."""
        return self._add_hook("_optimizer_step_pre_hooks", hook, False)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` after each step."""
        return self._add_hook("_optimizer_step_post_hooks", hook, False)

    def register_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer)`` before ``state_dict()`` builds the dict."""
        return self._add_hook("_optimizer_state_dict_pre_hooks", hook, prepend)

    def register_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` after; it may return a new state dict."""
        return self._add_hook("_optimizer_state_dict_post_hooks", hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` before loading; it may return the dict to load."""
        return self._add_hook("_optimizer_load_state_dict_pre_hooks", hook, prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer)`` after loading."""
        return self._add_hook("_optimizer_load_state_dict_post_hooks", hook, prepend)

    def _add_hook(self, registry: str, hook: Callable[..., Any], prepend: bool) -> RemovableHandle:
        hooks = self.__dict__.setdefault(registry, OrderedDict())
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    # --- state dict --------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``,
        PyTorch's layout.

        Parameters are numbered in group order, so the dict fits any optimizer built over
        parameters of the same shapes in the same order. Its tensors are the live buffers.
        """
        for hook in self.__dict__.get("_optimizer_state_dict_pre_hooks", {}).values():
            hook(self)
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in g["params"]]
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        out: dict[str, Any] = {"state": state, "param_groups": groups}
        for hook in self.__dict__.get("_optimizer_state_dict_post_hooks", {}).values():
            new = hook(self, out)
            if new is not None:
                out = new
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take hyperparameters and buffers from ``state_dict`` (PyTorch's layout; buffers are
        copied, cast to each parameter's device, and to its dtype when floating point; step
        counts become 0-dim tensors of the scalar dtype on the parameter's device)."""
        state_dict = dict(state_dict)
        for hook in self.__dict__.get("_optimizer_load_state_dict_pre_hooks", {}).values():
            new = hook(self, state_dict)
            if new is not None:
                state_dict = new
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
            state[p] = {name: _cast_like(p, name, v) for name, v in buffers.items()}
        self.state = state
        groups: list[dict[str, Any]] = []
        for g, s in zip(self.param_groups, saved_groups, strict=True):
            new = _Group({**s, "params": g["params"]})
            if "param_names" in g and "param_names" not in s:
                new["param_names"] = g["param_names"]
            for key, value in g.items():  # keys a dict of an older version lacks
                new.setdefault(key, value)
            groups.append(new)
        self.param_groups = groups
        for hook in self.__dict__.get("_optimizer_load_state_dict_post_hooks", {}).values():
            hook(self)

    def __getstate__(self) -> dict[str, Any]:
        return {
            "defaults": self.defaults,
            "state": self.state,
            "param_groups": [dict(g) for g in self.param_groups],
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.param_groups = [_Group(g) for g in self.param_groups]

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def _cast_like(p: Tensor, key: str, value: Any) -> Any:
    if not isinstance(value, Tensor):
        return value
    if key == "step":
        return _aten._to_copy.default(value, dtype=scalar_dtype(), device=p.device)
    dtype = p.dtype if value.is_floating_point() and p.is_floating_point() else value.dtype
    return _aten._to_copy.default(value, dtype=dtype, device=p.device)


def grads_of(group: dict[str, Any], self: Optimizer) -> list[tuple[Tensor, Tensor, dict[str, Any]]]:
    """``(param, grad, state)`` for each parameter of ``group`` that has a gradient."""
    state = self.state
    out = []
    for p in group["params"]:
        g = getattr(p, "grad", None)
        if g is not None:
            out.append((p, g, state[p]))
    return out


def use_foreach(group: dict[str, Any]) -> bool:
    """Whether ``group`` takes the multi-tensor path: ``foreach`` or ``fused`` asked, or left
    to the default (None), ``differentiable`` not asked, and every parameter on one device
    (one multi-tensor call takes one device's tensors)."""
    if group.get("differentiable"):
        return False
    if not (group.get("fused") or group.get("foreach") is not False):
        return False
    params = group["params"]
    device = params[0].device if params else None
    return all(p.device == device for p in params)


def depends_on(self: Optimizer, group: dict[str, Any], keys: tuple[str, ...]) -> None:
    """Say that this step's operators depend on ``group``'s hyperparameters ``keys``, and on
    ``self.state`` and ``group`` being the objects they are now (a ``load_state_dict`` replaces
    both): a graph ``tp.compile`` traced from a training step checks them before it runs
    (Note [Python state reads] in tensorplug.dispatch). The learning rate is read from its cell
    (Note [Learning rate cells]), so a scheduler changing it needs no new trace."""
    state = self.state

    def read() -> tuple[Any, ...]:
        same = self.state is state and any(g is group for g in self.param_groups)
        return (same, *(group[k] for k in keys))

    state_read(read)


# Note [Tensor paths]
# ~~~~~~~~~~~~~~~~~~~
# PyTorch's per-parameter rules of Adagrad, Adamax, NAdam, RAdam, ASGD and Adafactor read the
# step count (and ASGD its eta and mu, Adafactor two norms) into Python floats, which a traced
# step cannot do: ``tp.compile`` would run it eagerly. Their *tensor path* computes the same
# scalars with operators on 0-dim tensors (the step count cast to float64, the learning rate
# from its cell), as PyTorch's ``capturable=True`` paths do; RMSprop's and Adadelta's read only
# the learning rate from its cell (Rprop reads the learning rate only as its first step size).
# It runs with ``capturable=True``, and whenever a recorder collects state reads (a trace:
# ``tp.compile``), so a compiled training step with any of them is one graph that a
# learning-rate change does not retrace. The two paths agree to rounding, not bitwise.


def tensor_path(group: dict[str, Any]) -> bool:
    """Whether ``group``'s update takes its optimizer's tensor path (Note [Tensor paths])."""
    return bool(group.get("capturable")) or local_state.state_reads is not None


def step_f64(step: Tensor) -> Tensor:
    """A step count (or another 0-dim state tensor) as a float64 0-dim tensor, for the scalars
    of a tensor path."""
    t: Tensor = _aten._to_copy.default(step, dtype=_dt.float64)
    return t
