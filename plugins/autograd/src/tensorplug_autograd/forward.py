"""The kernel of the ``ForwardAD`` key: how tangents propagate through an operator.

Note [Forward-mode kernel]
~~~~~~~~~~~~~~~~~~~~~~~~~~
One boxed fallback serves every operator, reached only by calls with a dual argument (Note
[Dual tensors] in dual.py). For the innermost visible level ``L`` at which an argument has a
tangent:

1. a ``CompositeImplicitAutograd`` operator runs its decomposition, whose parts meet this
   kernel themselves;
2. otherwise, with ``L`` hidden, the call runs again from this key down (so outer levels are
   handled the same way, and autograd below records the primal computation), and the output's
   tangent is computed from the arguments' tangents at ``L``: by the operator's entry in
   ``FORWARD_FORMULAS`` (forward_formulas.py); for an operator without one, from its reverse
   formula: once, dotted with the tangent, when its one output is a scalar (Note [Scalar
   outputs]), else by the double-vjp construction (Note [Double-vjp construction]). Tangent computations are ordinary calls, so
   autograd records them (reverse over forward) and outer levels propagate through them
   (``jvp(jvp(f))``).
3. An in-place operator writes the new tangent into the tangent its ``self`` has (a view of
   a tangent stays one), or gives ``self`` one; ``out=`` overloads are refused, as autograd
   refuses them.

Outputs that are not floating point, and operators autograd marks non-differentiable
(comparisons, ``detach``, indices), get no tangent, as in PyTorch.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import tensorplug as tp
from tensorplug import dispatcher
from tensorplug.dispatcher import OpOverload
from tensorplug.library import mark_boxed
from tensorplug.tensor import Tensor

from . import dual
from . import formulas as _formulas
from .forward_formulas import FORWARD_FORMULAS, LINEAR, MULTILINEAR, elementwise_entry
from .grad_mode import enable_grad
from .inplace import _gather_view, _positions
from .kernels import _functional_name
from .masks import M, grad_recording
from .saved import SavedTensor

__all__ = ["FwdRule", "double_vjp", "forward_kernel", "rule_of"]

aten = tp.ops.aten


def _short(op: OpOverload) -> str:
    name = op.name.split("::", 1)[1]
    return name[: -len(".default")] if name.endswith(".default") else name


class FwdRule:
    """What the forward kernel needs to know of an op, made on its first dual call."""

    def __init__(self, op: OpOverload) -> None:
        s = op.schema
        self.op = op
        self.names = tuple(a.name for a in s.arguments)
        # each argument's schema default, for the values a call leaves out (what the autograd
        # kernels' generated signatures give the reverse formulas)
        self.defaults = tuple(a.default_value if a.has_default else _REQUIRED for a in s.arguments)
        self.kinds = {a.name: a.tensor_kind for a in s.arguments if a.tensor_kind}
        args = s.arguments
        self.out = s.is_out
        self.inplace = bool(args) and args[0].is_write and not self.out
        self.composite = op.has_kernel("CompositeImplicitAutograd")
        first = s.returns[0] if s.returns else None
        self.view = (
            first is not None and first.annotation is not None and not first.annotation.is_write
        )
        short = _short(op)
        # the functional overload an in-place or out= one pairs with, as autograd pairs them
        functional = _functional_name(short) if (self.inplace or self.out) else None
        if functional in _formulas.NON_DIFFERENTIABLE and short in _formulas.FORMULAS:
            functional = None  # an in-place op with a zero gradient of its own (eq_)
        self.fname = functional or short
        self.fop = op if functional is None else dispatcher.find_op(f"{op.namespace}::{functional}")
        ns = op.namespace == "aten"
        self.nondiff = ns and (
            short in _formulas.NON_DIFFERENTIABLE or self.fname in _formulas.NON_DIFFERENTIABLE
        )
        out_diff = _formulas.OUTPUT_DIFFERENTIABILITY.get(self.fname) if ns else None
        self.out_diff = out_diff
        reverse = (_formulas.FORMULAS.get(self.fname) if ns else None) or {}
        diff: list[str] = []
        for key in reverse:
            diff.extend(key if isinstance(key, tuple) else (key,))
        # the differentiable inputs: those autograd has formulas for, else every tensor input
        self.diff = tuple(diff) if reverse else tuple(self.kinds)
        self.reverse = reverse
        entry: Any = FORWARD_FORMULAS.get(self.fname) if ns else None
        # a pointwise op's reverse formula read as its forward one (Note [Forward formula
        # table]); not for complex values (see _output_tangents)
        self.elementwise = entry is None and ns and bool(reverse) and "pointwise" in self.fop.tags
        if self.elementwise:
            entry = elementwise_entry(reverse)
        self.entry = entry
        self.reads_self = self.inplace and (
            entry is None
            or entry is MULTILINEAR
            or (isinstance(entry, dict) and "self" in _names_read(entry))
        )


def _names_read(entry: dict[Any, Callable[..., Any]]) -> set[str]:
    names: set[str] = set()

    def walk(code: types.CodeType) -> None:
        names.update(code.co_names)
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                walk(c)

    for fn in entry.values():
        walk(fn.__code__)
    return names


_RULES: dict[OpOverload, FwdRule] = {}
_REQUIRED = object()


def _values(
    rule: FwdRule, op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The call's arguments by name, defaults filled in."""
    names = rule.names
    values = dict(zip(names, args, strict=False))
    for i in range(len(args), len(names)):
        n = names[i]
        v = kwargs.get(n, rule.defaults[i])
        if v is _REQUIRED:  # a call that does not fit the schema: bind raises its error
            pos, kw = op.schema.bind(args, kwargs, op.name)
            return dict(zip(names, (*pos, *kw.values()), strict=True))
        values[n] = v
    return values


def rule_of(op: OpOverload) -> FwdRule:
    r = _RULES.get(op)
    if r is None:
        r = _RULES[op] = FwdRule(op)
    return r


class Call:
    """What a forward formula reads of the call (``s``): ``s.<arg>`` (for an in-place op,
    ``s.self`` is the value before the write), ``s.result``, and ``s.<arg>_shape`` /
    ``_dtype`` / ``_device``, as the reverse formulas read them."""

    def __init__(self, values: dict[str, Any], result: Any) -> None:
        self.__dict__.update(values)
        self.result = result

    def __getattr__(self, name: str) -> Any:
        base, _, what = name.rpartition("_")
        if what in ("shape", "dtype", "device") and base in self.__dict__:
            v = self.__dict__[base]
            return list(v.shape) if what == "shape" else getattr(v, what)
        raise AttributeError(name)


def _tensors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Tensor]:
    out = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if isinstance(x, Tensor))
    return out


def forward_kernel(op: OpOverload, keyset: Any, *args: Any, **kwargs: Any) -> Any:
    """Boxed: Note [Forward-mode kernel]."""
    ks = int(keyset)
    levels: set[int] = set()
    for t in _tensors(args, kwargs):
        if t.tp_keyset & M.fwd:
            dual.visible_levels(t, levels)
    if not levels:
        return op.redispatch(ks & M.below_fwd, *args, **kwargs)
    level = max(levels)
    # outer levels left: this kernel again, for them; else straight below
    down = ks & (M.fwd_down if len(levels) > 1 else M.below_fwd)
    rule = rule_of(op)
    if rule.composite:
        backend = tp.keys.DispatchKeySet(ks & tp.keys.backend_mask())
        return op.kernel_for(backend)(*args, **kwargs)
    if rule.out:
        raise RuntimeError(
            f"{op.name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments has a forward-mode tangent. Use the "
            "functional form."
        )
    old = dual.hide_from(level)
    try:
        if rule.nondiff:
            return op.redispatch(down, *args, **kwargs)
        if "inplace_view" in op.tags:  # the tangent takes the same view (Note [In-place views])
            out = op.redispatch(down, *args, **kwargs)
            tan = dual.tangent(args[0], level)
            if tan is not None:
                op(tan, *args[1:], **kwargs)
            return out
        values = _values(rule, op, args, kwargs)
        before = None
        if rule.reads_self:
            before = aten.clone.default(values["self"])
        out = op.redispatch(down, *args, **kwargs)
        tangents = {n: _tangents_of(values[n], level) for n in rule.diff if n in values}
        if all(_absent(t) for t in tangents.values()):
            return out
        if before is not None:
            values["self"] = before
        outs = [out] if isinstance(out, Tensor) else list(out)
        touts = _output_tangents(rule, values, tangents, out, outs)
        if rule.inplace:
            target = args[0] if args else kwargs["self"]
            _write_inplace(target, outs[0], touts[0], level)
            if dual.tangent(target, level) is not None:
                _share_with_saved(target)
            return out
    finally:
        dual.unhide(old)
    for o, tan in zip(outs, touts, strict=True):
        if tan is not None:
            dual.set_tangent(o, level, tan)
            _share_with_saved(o)
    return out


def _share_with_saved(o: Tensor) -> None:
    """Give the alias autograd saved of output ``o`` (made before ``o`` had a tangent) ``o``'s
    tangents: a backward formula that reads the result (``exp``'s) needs them for forward over
    reverse (Note [Dual tensors] in dual.py)."""
    m = o.tp_autograd
    node = None if m is None else m.grad_fn
    r = getattr(node, "_result", None)
    if r is None:
        return
    for sv in [r] if type(r) is SavedTensor else r:
        if type(sv) is SavedTensor and sv.t is not o and sv.t.tp_data is o.tp_data:
            dual.carry(o, sv.t)


mark_boxed(forward_kernel)


def _tangents_of(v: Any, level: int) -> Any:
    if isinstance(v, Tensor):
        return dual.tangent(v, level)
    if isinstance(v, (list, tuple)):
        return [dual.tangent(x, level) for x in v]
    return None


def _absent(t: Any) -> bool:
    return t is None or (isinstance(t, list) and all(x is None for x in t))


def _differentiable(rule: FwdRule, nr: int, o: Any) -> bool:
    if not isinstance(o, Tensor) or o.tp_dtype.kind not in "fc":
        return False
    d = rule.out_diff
    return d is None or (d[nr] if nr < len(d) else d[-1])


def _output_tangents(
    rule: FwdRule, values: dict[str, Any], tangents: dict[str, Any], out: Any, outs: list[Any]
) -> list[Tensor | None]:
    """The tangent of each output (None where it has none)."""
    entry = rule.entry
    if rule.elementwise and _has_complex(values, outs):
        # a pointwise op's Jacobian on complex values is a real 2 x 2 block per element,
        # which its reverse formula applies transposed (Note [Complex gradients] in
        # formulas/_table.py): the tangent comes from the double-vjp construction instead
        entry = None
    if entry is None and rule.reverse and len(outs) == 1 and _scalar(outs[0]):
        got: list[Any] = [gradient_dot(rule, values, tangents, out)]
    elif entry is None:
        got = double_vjp(rule, values, tangents, outs)
    elif entry is LINEAR:
        got = _as_list(_substituted(rule, values, tangents, tuple(tangents)))
    elif entry is MULTILINEAR:
        got = []
        for name, t in tangents.items():
            if not _absent(t):
                got = _add_lists(got, _as_list(_substituted(rule, values, tangents, (name,))))
    else:
        s = Call(values, out)
        got = []
        for key, fn in entry.items():
            if isinstance(key, tuple):
                ts = tuple(tangents.get(k) for k in key)
                if all(_absent(t) for t in ts):
                    continue
                got = _add_lists(got, _as_list(fn(ts, s)))
            else:
                t = tangents.get(key)
                if _absent(t):
                    continue
                got = _add_lists(got, _as_list(fn(t, s)))
    result: list[Tensor | None] = []
    given = {id(x) for t in tangents.values() for x in (t if isinstance(t, list) else [t])}
    for nr, o in enumerate(outs):
        t = got[nr] if nr < len(got) else None
        if t is None or not _differentiable(rule, nr, o):
            result.append(None)
            continue
        if t.shape != o.shape:
            t = aten.clone.default(aten.expand.default(t, list(o.shape)))
        elif id(t) in given and not rule.view and not rule.inplace:
            # an input's own tangent (``x + 0``): a new output gets a tangent of its own, so an
            # in-place change of one leaves the other's alone
            t = aten.clone.default(t)
        result.append(t)
    return result


def _has_complex(values: dict[str, Any], outs: list[Any]) -> bool:
    for v in (*values.values(), *outs):
        if isinstance(v, Tensor) and v.tp_dtype.kind == "c":
            return True
    return False


def _real_dot(g: Tensor, v: Tensor) -> Tensor:
    """``<g, v>`` in the real inner product, ``Re(sum(conj(g) v))``, which pairs a gradient in
    PyTorch's complex convention with a tangent; ``sum(g v)`` for real tensors."""
    if g.tp_dtype.kind == "c" or v.tp_dtype.kind == "c":
        return aten.real.default(aten.mul.Tensor(aten.conj.default(g), v)).sum()
    return (g * v).sum()


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _add_lists(a: list[Any], b: list[Any]) -> list[Any]:
    n = max(len(a), len(b))
    out = []
    for i in range(n):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        out.append(y if x is None else x if y is None else x + y)
    return out


def _zeros_for(v: Any, t: Any) -> Any:
    """The tangent ``t`` of argument ``v``, with zeros where a floating point tensor has none;
    other values (indices, masks) stay as they are."""
    if isinstance(v, Tensor):
        return _zero_or(v, t)
    if isinstance(v, (list, tuple)):
        return [_zero_or(x, tx) for x, tx in zip(v, t, strict=True)]
    return v


def _zero_or(x: Any, t: Any) -> Any:
    if not isinstance(x, Tensor) or x.tp_dtype.kind not in "fc":
        return x
    return aten.zeros_like.default(x) if t is None else t


def _substituted(
    rule: FwdRule, values: dict[str, Any], tangents: dict[str, Any], names: tuple[str, ...]
) -> Any:
    """The functional op called with the arguments ``names`` replaced by their tangents (zeros
    where one has none): the output's tangent for an op linear in them jointly."""
    call = dict(values)
    for n in names:
        call[n] = _zeros_for(values[n], tangents.get(n))
    schema = rule.fop.schema
    pos = [call[a.name] for a in schema.positional]
    kw = {a.name: call[a.name] for a in schema.kwarg_only}
    return rule.fop(*pos, **kw)


def _scalar(o: Any) -> bool:
    return isinstance(o, Tensor) and o.tp_data.ndim == 0 and o.tp_dtype.is_floating_point


def gradient_dot(
    rule: FwdRule, values: dict[str, Any], tangents: dict[str, Any], out: Tensor
) -> Tensor | None:
    """Note [Scalar outputs]
    ~~~~~~~~~~~~~~~~~~~~~~~~
    An op without a forward formula whose one output is a scalar (a full reduction, a loss
    with ``mean``/``sum``: ``prod``, ``amax``, ``linalg_vector_norm``, ``binary_cross_entropy``)
    has ``J`` one row, the gradient: its tangent is ``<grad, v>``, the reverse formula run once
    with a cotangent of one, dotted with the tangent -- PyTorch's ``result:`` entries of such
    ops have this form (``prod``'s is ``(prod_backward(1, self, result) * self_t).sum()``).
    No double backward, no recorded graph."""
    s = Call(values, out)
    one = aten.ones_like.default(out)
    total: Tensor | None = None
    for key, fn in rule.reverse.items():
        names = key if isinstance(key, tuple) else (key,)
        if all(_absent(tangents.get(n)) for n in names):
            continue
        grads = fn(one, s)
        if not isinstance(key, tuple):
            grads = (grads,)
        for n, g in zip(names, grads, strict=True):
            t: Any = tangents.get(n)
            if g is None or _absent(t):
                continue
            pairs = [(g, t)] if isinstance(t, Tensor) else list(zip(g, t, strict=True))
            for gi, ti in pairs:
                if gi is None or ti is None:
                    continue
                term = _real_dot(gi, ti)
                total = term if total is None else total + term
    if total is None:
        return None
    return total if total.tp_dtype is out.tp_dtype else total.to(out.tp_dtype)


def _single(v: Any) -> bool:
    """Whether an argument's value is one tensor (or an absent optional tensor, ``None``), not a
    list of them."""
    return v is None or isinstance(v, Tensor)


def double_vjp(
    rule: FwdRule, values: dict[str, Any], tangents: dict[str, Any], outs: list[Any]
) -> list[Tensor | None]:
    """Note [Double-vjp construction]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    For an op without a forward formula, the jvp at ``x`` along ``v`` is computed from its
    reverse mode: with ``u`` a dummy cotangent (zeros, requiring grad),
    ``vjp(u) = J^T u`` is linear in ``u``, so the gradient of ``<vjp(u), v>`` with respect to
    ``u`` is ``J v``. It costs the op's forward again, a backward pass that records its graph,
    and a second backward through that graph (docs/autograd.md gives figures); every op with a
    twice-differentiable reverse formula gets a tangent this way. The inputs are taken as views
    (not detached), so a reverse pass outside still sees their history, and outer levels'
    tangents propagate through the views."""
    autograd = tp.autograd
    # the tangent stays differentiable when a reverse pass outside may differentiate it
    keep = grad_recording() and any(
        x is not None and x.requires_grad
        for name, t in tangents.items()
        for x in ([values[name], t] if _single(values[name]) else [*values[name], *t])
    )
    with enable_grad():
        call = dict(values)
        xs: list[Tensor] = []
        vs: list[Tensor] = []
        for name, t in tangents.items():
            v = values[name]
            pairs = [(v, t)] if _single(v) else list(zip(v, t, strict=True))
            fresh_list = []
            for x, tx in pairs:
                if tx is None or x is None or x.tp_dtype.kind not in "fc":
                    fresh_list.append(x)
                    continue
                if x.requires_grad:  # a view keeps the history a reverse pass outside needs
                    fresh = aten.view.default(x, list(x.shape))
                else:
                    fresh = aten.detach.default(x).requires_grad_()
                    dual.carry(x, fresh)  # outer levels' tangents
                xs.append(fresh)
                vs.append(tx)
                fresh_list.append(fresh)
            call[name] = fresh_list[0] if _single(v) else fresh_list
        if rule.inplace and rule.fop is rule.op:  # no functional form: write into a copy
            call["self"] = aten.clone.default(call["self"])
        schema = rule.fop.schema
        res = rule.fop(
            *[call[a.name] for a in schema.positional],
            **{a.name: call[a.name] for a in schema.kwarg_only},
        )
        res_list = [res] if isinstance(res, Tensor) else list(res)
        diff = [
            nr for nr, o in enumerate(res_list) if _differentiable(rule, nr, o) and o.requires_grad
        ]
        if not diff or not xs:
            return [None for _ in outs]
        us = [aten.zeros_like.default(res_list[nr]).requires_grad_() for nr in diff]
        gs = autograd.grad(
            [res_list[nr] for nr in diff], xs, us, create_graph=True, allow_unused=True
        )
        dot = None
        for g, v in zip(gs, vs, strict=True):
            if g is None:
                continue
            term = _real_dot(g, v)
            dot = term if dot is None else dot + term
        if dot is None or not dot.requires_grad:
            jv: list[Any] = [None] * len(us)
        else:
            jv = list(autograd.grad(dot, us, create_graph=keep, allow_unused=True))
    result: list[Tensor | None] = [None] * len(outs)
    for nr, g in zip(diff, jv, strict=True):
        result[nr] = aten.zeros_like.default(outs[nr]) if g is None else g
    return result


def _write_inplace(target: Tensor, out: Tensor, t: Tensor | None, level: int) -> None:
    """Step 3 of Note [Forward-mode kernel]."""
    old = dual.tangent(target, level)
    if t is None:
        if old is not None:  # the write does not depend on the old value: its tangent is 0
            old.zero_()
        return
    if old is not None:
        old.copy_(t)
        return
    base = target.tp_base
    if base is not None:
        _write_into_base(target, base, t, level)
    dual.set_tangent(target, level, t)


def _write_into_base(view: Tensor, base: Tensor, t: Tensor, level: int) -> None:
    """A view without a tangent was written with a value that has one (``w[:, 0] = d``): its
    base takes the tangent at the view's place (zeros elsewhere), as in PyTorch. The place is
    worked out from the memory layout, as autograd does for views of plain tensors (Note
    [Views of plain tensors] in inplace.py); the view's own tangent is a copy, so a later
    in-place change of the view alone does not reach the base's tangent."""
    pos, why = _positions(view, base)
    if pos is None:
        raise RuntimeError(
            "forward AD: an in-place operation wrote a value with a tangent into a view of a "
            f"tensor without one (base of shape {list(base.shape)}), and the view's place in "
            f"its base cannot be worked out because {why}. Build the result out of place "
            "(tp.cat, tp.stack, tp.where, index_put)."
        )
    gather = _gather_view(view, base, pos).chain[0][0]
    bt = dual.tangent(base, level)
    if bt is None:
        bt = aten.zeros.default(list(base.shape), dtype=t.dtype, device=base.device)
        dual.set_tangent(base, level, bt)
    gather.scatter(bt, t.expand(list(view.shape)))
