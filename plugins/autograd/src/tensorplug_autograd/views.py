"""Views under autograd: the ADInplaceOrView kernels of view ops and the ADView kernels of
in-place ops (inplace.py holds the in-place autograd itself).

Note [Views under autograd]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
A tensor that requires grad also carries ``ADInplaceOrView``, which sits below the autograd
keys. Its kernels do PyTorch's bookkeeping for view ops: a view op records on its outputs how
to re-create them from their root base (the chain of view ops, a :class:`ViewInfo`), and gives
them ``ADInplaceOrView`` and ``ADView``. An in-place op on such a view reaches the ``ADView``
kernel, which refuses the views no history could serve (below; Note [The ADView key]). The
version counter of what an in-place op writes is bumped by its caller as the kernel returns
(the dispatcher's call; the in-place autograd kernel, before it saves anything). Plain tensors
carry none of these keys, so their views and in-place ops pay nothing.

When an in-place op writes into a view of a tensor that takes part in autograd, the base's
history changes too: the base gets a :class:`CopySlices` node (its gradient is the incoming
one, with the view's region replaced by what the op's own backward gives), and the view a
fresh ``grad_fn`` made by replaying its view chain on the base.

Note [The ADView key]
~~~~~~~~~~~~~~~~~~~~
In PyTorch every tensor carries ``ADInplaceOrView``, whose in-place kernels bump the version
counter (C++, a few nanoseconds) and whose view kernels record views; the refusals above are
made in the autograd kernels (a view made under ``no_grad`` reports ``requires_grad=True``
there, so its in-place op reaches them). Here version counters are bumped by the callers, so
an in-place kernel's only work is the check of Note [Views that refuse in-place changes] in
inplace.py, and
that check can refuse only a tensor with view information. It therefore lives on a key of this
plugin's own, ``ADView``, just below ``ADInplaceOrView``, which exactly the tensors with view
information carry: the outputs of the view ops recorded here (:func:`record_view`), the views
of plain tensors given a history when written (Note [Views of plain tensors] in inplace.py), and what a custom
``Function`` gives for an input it returned as is. ``ADInplaceOrView`` keeps its place, on
every tensor that requires grad (a view of one must be recorded even under ``no_grad``, where
the autograd keys are excluded), with kernels for view ops only, and falls through for in-place
ops. So an optimizer's ``p.sub_(p.grad, alpha=lr)`` under ``no_grad``, on a parameter that is
not a view, goes from the dispatcher straight to the backend kernel, and with grad mode on the
in-place autograd kernel calls the backend's directly too; a view of a parameter still meets
the check. Aliases that drop the autograd keys (``M.strip``) drop ``ADView`` with them.
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp
from tensorplug import dispatcher
from tensorplug.dispatcher import OpOverload
from tensorplug.tensor import Tensor

from .codegen import below_call_source, compile_kernel, generated, source_parts, usable_names
from .inplace import check_view_write
from .masks import M, grad_recording
from .meta import AutogradMeta, ViewInfo, meta_of
from .recording import outputs
from .rules import Rule, core_composite, register_lazily

__all__ = ["record_view", "register_inplace_or_view"]


def record_view(rule: Rule, out: Any, args: tuple[Any, ...]) -> None:
    """Outputs of a view op remember how to re-create them from their base (for CopySlices)."""
    self = args[0]
    m = self.tp_autograd
    base_view = m.view if m is not None else None
    kw = {n: args[rule.npos + j] for j, n in enumerate(rule.kw_names)} if rule.kw_names else _NO_KW
    step = (rule.op, args[1 : rule.npos], kw)
    function = None
    if base_view is not None:
        root, chain, function = base_view.base, base_view.chain, base_view.function
    else:
        root, chain = self, ()
    if type(out) is Tensor:  # the common case: one view
        out_meta = out.tp_autograd
        if out_meta is None:
            out_meta = out.tp_autograd = AutogradMeta()
        out_meta.view = ViewInfo(root, (*chain, step), out.tp_version.value, function)
        # without autograd keys (under no_grad) the view still reaches this plugin's in-place
        # kernels, which refuse to write it with grad mode on (Note [Views that refuse
        # in-place changes]): they are ADView's (Note [The ADView key])
        out.tp_keyset |= M.view_bits
        return
    outs = outputs(out)
    for nr, t in enumerate(outs):
        if not isinstance(t, Tensor):
            continue
        s: tuple[Any, tuple[Any, ...], dict[str, Any]] = step
        if rule.returns_list:  # split/chunk: select the nr-th piece
            s = (_ListItem(rule.op, nr), s[1], s[2])
        meta_of(t).view = ViewInfo(root, (*chain, s), t.tp_version.value, function)
        t.tp_keyset |= M.view_bits


_DETACH = tp.ops.aten.detach.default


_NO_KW: dict[str, Any] = {}  # the keyword arguments of a view step without any (never written)


class _ListItem:
    """Replays a list-returning view op and picks one of its results."""

    def __init__(self, op: OpOverload, nr: int) -> None:
        self.op = op
        self.nr = nr

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.op(*args, **kwargs)[self.nr]


# --- the ADInplaceOrView kernels ----------------------------------------------------------------


def _detach_kernel(ks: int, self: Tensor) -> Tensor:
    """``detach`` shares data and version counter with its input but, as in PyTorch, is not
    a view of it for autograd: an in-place op on the result (``d.mul_(w)`` with ``w``
    requiring grad) gives the result a history of its own and leaves the input's alone. So
    it records no view information and forgets the base the core gave it."""
    out: Tensor = _DETACH.redispatch(M.below_view & int(ks), self)
    out.tp_base = None
    return out


def _view_body(rule: Rule, ks: int, args: tuple[Any, ...]) -> Any:
    kw = {n: args[rule.npos + j] for j, n in enumerate(rule.kw_names)}
    out = rule.op.redispatch(M.below_view & int(ks), *args[: rule.npos], **kw)
    if isinstance(args[0], Tensor):
        record_view(rule, out, args)
    return out


def _fast_view_kernel(rule: Rule) -> Any:
    """:func:`_view_body` as a generated kernel (see :func:`_fast_source`)."""
    if rule.schema.arguments[0].tensor_kind != "Tensor":
        return None
    return _fast_source(rule, "", f"    _record_view(_rule, _out, ({source_parts(rule)[2]}))\n")


def _fast_source(
    rule: Rule,
    before: str,
    after: str,
    names: dict[str, Any] | None = None,
    below: str = "below_view",
    what: str = "inplace_or_view",
) -> Any:
    """A kernel with the schema's signature that runs ``before``, calls the kernel below
    ADInplaceOrView (``below="below_adview"``: below ADView), looked up in the op's dispatch
    cache as the Autograd fast kernel does, then runs ``after``; ``None`` where the argument
    names do not allow it."""
    if not usable_names(list(rule.arg_names)):
        return None
    params, call, _ = source_parts(rule)
    body = before + below_call_source(below, call, "    ") + after + "    return _out\n"
    return compile_kernel(
        rule, params, body, {"_record_view": record_view, **(names or {})}, what, __name__
    )


def _fast_inplace_kernel(rule: Rule) -> Any:
    """:func:`_inplace_body` as a generated kernel, for ops whose ``self`` is a plain
    ``Tensor`` they write."""
    if rule.schema.arguments[0].tensor_kind != "Tensor":
        return None
    # No version bump here: every caller of this kernel bumps what the op wrote once it
    # returns, and nothing runs in between (the dispatcher's generated call and redispatch,
    # the in-place autograd kernel, a compiled graph's replay; ``kernel_for`` promises no bump)
    self = rule.arg_names[0]
    before = (  # Note [Views that refuse in-place changes]
        f"    _m = {self}.tp_autograd\n"
        "    if _m is not None and _m.view is not None:\n"
        f"        _check(_rule, {self}, _m.view, _recording())\n"
    )
    return _fast_source(
        rule,
        before,
        "",
        {"_check": check_view_write, "_recording": grad_recording},
        "below_adview",
        "adview",
    )


def _inplace_body(rule: Rule, ks: int, args: tuple[Any, ...]) -> Any:
    kw = {n: args[rule.npos + j] for j, n in enumerate(rule.kw_names)}
    if isinstance(args[0], Tensor):
        m = args[0].tp_autograd
        if m is not None and m.view is not None:
            check_view_write(rule, args[0], m.view, grad_recording())
    written = [
        args[i]
        for i, a in enumerate(rule.schema.arguments)
        if a.is_write and isinstance(args[i], Tensor)
    ]
    before = [t.tp_version.value for t in written]
    out = rule.op.redispatch(M.below_adview & int(ks), *args[: rule.npos], **kw)
    for t, v in zip(written, before, strict=True):
        vc = t.tp_version
        if vc.value == v:
            vc.value = v + 1
    return out


def register_inplace_or_view(lib: Any) -> int:
    """ADInplaceOrView kernels for the standard view ops, ADView kernels for the in-place ops
    that write their ``self`` (Note [The ADView key]); returns the count. Other ops that write
    (``out=``) have neither: the check concerns ``self`` only, and callers bump versions."""
    count = 0
    for op in dispatcher.ops_in("aten"):
        if op is _DETACH:
            lib.impl(op, _detach_kernel, "ADInplaceOrView", with_keyset=True)
            count += 1
            continue
        if core_composite(op):
            continue
        schema = op.schema
        args = schema.arguments
        first = schema.returns[0] if schema.returns else None
        writes = any(a.is_write for a in args)
        if (
            first is not None
            and first.annotation is not None
            and not first.annotation.is_write
            and not writes
        ):
            body, key = _view_body, "ADInplaceOrView"
        elif args and args[0].is_write and args[0].tensor_kind in ("Tensor", "Tensor?"):
            body, key = _inplace_body, "ADView"
        else:
            continue

        def build(op: OpOverload = op, body: Any = body) -> Any:
            rule = Rule(op, None)
            fast = _fast_view_kernel(rule) if body is _view_body else _fast_inplace_kernel(rule)
            return fast if fast is not None else generated(rule, body)

        register_lazily(lib, op, key, build, "inplace_or_view" if body is _view_body else "adview")
        count += 1
    return count
