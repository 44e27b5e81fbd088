"""OpInfo registry: one entry per operator overload of ``native_functions.yaml``.

An :class:`OpInfo` says three things about an operator overload:

* how a user calls it: the public function (``tp.add``), the ``Tensor`` method (``t.add``) and,
  always, the overload itself (``tp.ops.aten.add.Tensor``), so every overload's kernel runs even
  where the public packet would pick another one;
* which inputs to try: ``sample_inputs(dtype, rng)`` yields :class:`SampleInput`s whose numpy
  arrays stand in for tensors (``DT("float64")`` stands in for a dtype argument);
* what the answer is: ``ref``, a numpy oracle written from PyTorch's documented semantics and
  never from tensorplug, and ``result_dtype``, the dtype PyTorch's promotion rules give.

The harness in ``test_ops.py`` turns arrays into tensors, runs every variant and compares. The
oracles never import or call tensorplug; the ``op`` callables resolve their tensorplug name at
call time, so this module imports even while the public API is incomplete.

Usage::

    from .opinfo import OP_DB, OPS_BY_NAME
    info = OPS_BY_NAME["add.Tensor"]
    for sample in info.sample_inputs("float32", np.random.default_rng(0)):
        expected = info.ref(*sample.args, **sample.kwargs)
"""

from __future__ import annotations

# the family modules fill OP_DB as they are imported (one module per op family, the families
# of every place an op lives: docs/extending.md; _core holds the machinery they share)
from . import (  # noqa: F401
    factories,
    fft,
    indexing,
    linalg,
    linalg_solvers,
    nn,
    pointwise,
    random,
    reductions,
    shape,
    special,
)
from ._core import (
    DT,
    OP_DB,
    OpInfo,
    SampleInput,
    is_float,
    is_int,
    ml_dtypes,
    np_dtype,
)

OPS_BY_NAME: dict[str, OpInfo] = {info.name: info for info in OP_DB}
assert len(OPS_BY_NAME) == len(OP_DB), "duplicate OpInfo names"

__all__ = [
    "DT",
    "OP_DB",
    "OPS_BY_NAME",
    "OpInfo",
    "SampleInput",
    "is_float",
    "is_int",
    "ml_dtypes",
    "np_dtype",
]
