"""The Autograd kernel of one key set, written as plain Python: the reference of the templates.

Note [Reference autograd kernel]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The kernels the dispatcher runs are generated (codegen.py): a factory per op makes the kernel
of each key set, with the schema's signature, the kernel below autograd bound, and the
recording unrolled over the op's arguments. :func:`reference_factory` makes the same kernel
from the same :class:`~.rules.Rule` without generating anything, step by step as Note
[Autograd kernel] in kernels.py describes it, each step the plain Python the generic kernels
run too:

1. bind the call's arguments by the schema (the generated signature does it);
2. an ``out=`` overload refuses, since an argument requires grad (:func:`~.recording.refuse_out`);
3. an in-place op runs :func:`~.inplace.run_inplace` (the leaf and view checks, the call, the
   version bump, the recording, ``CopySlices`` for a view);
4. an out-of-place op refuses tensor inputs without a formula that require grad, runs the op
   below autograd with the autograd keys excluded (:meth:`~.rules.Rule.call_below`) and records
   the node when a differentiable input requires grad (:func:`~.recording.record`).

It is slow and never registered: ``tests/autograd/test_reference.py`` runs the OpInfo samples
through the registered (generated) kernels and through this one, and compares outputs, graphs
and gradients, so a template that drifts from the plain Python fails there.

Usage::

    rule = RULES["aten::mul.Tensor"]               # built by the op's first call
    kernel = reference_factory(rule)(rule.op, ks)  # ks: the call's dispatch key set
    out = kernel(a, b)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorplug.dispatcher import OpOverload

from .inplace import run_inplace
from .recording import check_no_requires_grad, record, refuse_out
from .rules import Rule

__all__ = ["reference_factory"]


def reference_factory(rule: Rule) -> Callable[[OpOverload, int], Callable[..., Any]]:
    """The ``per_keyset`` factory of ``rule``'s op, as plain Python (Note [Reference autograd
    kernel]): ``factory(op, ks)`` gives the kernel of key set ``ks``."""

    def factory(op: OpOverload, ks: int) -> Callable[..., Any]:
        ks = int(ks)

        def kernel(*args: Any, **kwargs: Any) -> Any:
            # 1. the schema's binding: positional values, then keyword-only ones in order
            pos, kw = rule.schema.bind(args, kwargs, rule.name)
            flat = (*pos, *kw.values())
            if rule.out:  # 2.
                return refuse_out(rule, ks, flat)
            if rule.inplace:  # 3.
                return run_inplace(rule, ks, flat)
            if rule.no_grad_args:  # 4.
                check_no_requires_grad(rule, flat)
            out = rule.call_below(ks, flat)
            record(rule, out, flat)
            return out

        kernel.__qualname__ = f"reference_kernel[{rule.name}]"
        return kernel

    return factory
