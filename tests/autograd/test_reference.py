"""The generated autograd kernels against their plain-Python reference
(tensorplug_autograd/reference.py, Note [Reference autograd kernel]) on the OpInfo samples:
the same outputs, the same nodes, the same gradients, the same errors.

One dtype per op (float32, else float64): the templates do not depend on it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.testing.opinfo import DT, OP_DB, OpInfo, SampleInput
from tests import needs

needs.autograd()

from tensorplug_autograd.fused import FUSED  # noqa: E402
from tensorplug_autograd.reference import reference_factory  # noqa: E402
from tensorplug_autograd.rules import RULES  # noqa: E402

SKIPPED_KINDS = ("random", "factory", "out")


def _dtype(info: OpInfo) -> str | None:
    for d in ("float32", "float64"):
        if d in info.dtypes:
            return d
    return None


def _infos() -> list[Any]:
    return [
        pytest.param(info, id=info.name)
        for info in OP_DB
        if info.kind not in SKIPPED_KINDS and _dtype(info) is not None
    ]


def _tensors(x: Any) -> Iterator[tp.Tensor]:
    if isinstance(x, tp.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _tensors(v)


def _prepare(
    info: OpInfo, sample: SampleInput
) -> tuple[list[tp.Tensor], list[Any], dict[str, Any]]:
    """The sample as tensors, every floating-point one a leaf that requires grad (an in-place
    op's ``self`` a clone of one: it has a history)."""
    leaves: list[tp.Tensor] = []

    def convert(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            t = tp.tensor(x.copy())
            if t.dtype.is_floating_point:
                leaves.append(t.requires_grad_())
            return t
        if isinstance(x, list):
            return [convert(v) for v in x]
        if isinstance(x, DT):
            return getattr(tp, x.name)
        return x

    args = [convert(x) for x in sample.args]
    kwargs = {k: convert(v) for k, v in sample.kwargs.items()}
    if info.kind == "inplace" and args and isinstance(args[0], tp.Tensor) and args[0].requires_grad:
        args[0] = args[0].clone()
    return leaves, args, kwargs


def _outcome(
    info: OpInfo, sample: SampleInput, call: Callable[[list[Any], dict[str, Any]], Any]
) -> list[Any]:
    """What ``call`` gives for the sample: the outputs (values, dtypes, nodes) and the leaves'
    gradients of their sum, or the error raised on the way."""
    leaves, args, kwargs = _prepare(info, sample)
    seen: list[Any] = []
    try:
        tp.manual_seed(0)
        out = call(args, kwargs)
        outs = list(_tensors(out))
        for t in outs:
            fn = t.grad_fn
            seen.append(
                (
                    t.dtype,
                    tuple(t.shape),
                    t.requires_grad,
                    None if fn is None else (fn.name(), len(fn.next_functions)),
                    t.detach().numpy().copy(),
                )
            )
        diff = [t for t in outs if t.grad_fn is not None]
        if diff and leaves:
            loss = diff[0].sum()
            for t in diff[1:]:
                loss = loss + t.sum()
            grads = tp.autograd.grad(loss, leaves, allow_unused=True)
            seen += [None if g is None else (g.dtype, g.detach().numpy().copy()) for g in grads]
    except Exception as e:  # the same error, from both
        seen.append((type(e), str(e)))
    return seen


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, (tuple, list)):
        return (
            isinstance(b, (tuple, list))
            and len(a) == len(b)
            and all(_same(x, y) for x, y in zip(a, b, strict=True))
        )
    return bool(a == b)


@pytest.mark.parametrize("info", _infos())
def test_the_generated_kernel_and_its_reference_agree(info: OpInfo) -> None:
    dtype = _dtype(info)
    assert dtype is not None
    op = getattr(getattr(tp.ops.aten, info.op_name), info.overload_name)
    rng = np.random.default_rng(zlib.crc32(f"{info.name}-reference".encode()))
    compared = 0
    for sample in info.sample_inputs(dtype, rng):
        generated = _outcome(info, sample, lambda a, kw: op(*a, **kw))
        rule = RULES.get(op.name)  # built by the generated kernel's first call
        if rule is None or info.op_name in FUSED:
            pytest.skip("no generated Autograd kernel: composite, not differentiable or fused")

        def reference(a: list[Any], kw: dict[str, Any]) -> Any:
            ks = 0
            for t in _tensors([*a, *kw.values()]):
                ks |= int(t.tp_keyset)
            if not ks & int(tp.keys.keyset("Autograd")):  # no input requires grad
                return op(*a, **kw)
            return reference_factory(rule)(op, ks)(*a, **kw)

        assert _same(generated, _outcome(info, sample, reference)), sample.name
        compared += 1
    if not compared:
        pytest.skip("no samples")
