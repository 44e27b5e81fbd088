"""Samples and oracles of the ``linalg`` family: the matrix products, and
``tensorplug.linalg.matmul`` (PyTorch's alias of matmul)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._core import (
    ALL,
    FLOATS,
    LOWP,
    LOWP_TOL_LOOSE,
    NUMERIC,
    OpInfo,
    S,
    SampleInput,
    add,
    alias,
    fn,
    is_int,
    make,
    meth,
    promoted,
)

# --- linear algebra ---------------------------------------------------------------------------

MATMUL_TOL = {"float32": (1e-5, 1e-5), **LOWP_TOL_LOOSE}


def _mat(shape: tuple[int, ...], d: str, rng: np.random.Generator) -> np.ndarray:
    return make(shape, d, rng, -2, 2)


def _mm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2x3_3x4", _mat((2, 3), d, rng), _mat((3, 4), d, rng))
    yield S("1x1", _mat((1, 1), d, rng), _mat((1, 1), d, rng))
    yield S("empty_inner", _mat((2, 0), d, rng), _mat((0, 3), d, rng))
    yield S("empty_outer", _mat((0, 3), d, rng), _mat((3, 2), d, rng))


def _bmm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("b2", _mat((2, 3, 4), d, rng), _mat((2, 4, 5), d, rng))
    yield S("b1", _mat((1, 2, 2), d, rng), _mat((1, 2, 3), d, rng))
    yield S("empty_batch", _mat((0, 2, 3), d, rng), _mat((0, 3, 4), d, rng))


def _matmul_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("mat_mat", _mat((2, 3), d, rng), _mat((3, 4), d, rng))
    yield S("vec_vec", _mat((3,), d, rng), _mat((3,), d, rng))
    yield S("vec_mat", _mat((3,), d, rng), _mat((3, 4), d, rng))
    yield S("mat_vec", _mat((2, 3), d, rng), _mat((3,), d, rng))
    yield S("batched_broadcast", _mat((2, 1, 3, 4), d, rng), _mat((5, 4, 2), d, rng))
    yield S("batched_vec", _mat((2, 3, 4), d, rng), _mat((4,), d, rng))
    yield S("vec_batched", _mat((3,), d, rng), _mat((2, 3, 4), d, rng))
    yield S("empty", _mat((0, 3), d, rng), _mat((3, 2), d, rng))


def _np_matmul(a: Any, b: Any) -> Any:
    if np.asarray(a).dtype.kind == "f":
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.matmul(a, b)


add(
    OpInfo(
        "mm",
        op=fn("mm"),
        method=meth("mm"),
        sample_inputs=_mm_samples,
        ref=_np_matmul,
        dtypes=NUMERIC + LOWP,
        tol=MATMUL_TOL,
    )
)
add(
    OpInfo(
        "bmm",
        op=fn("bmm"),
        method=meth("bmm"),
        sample_inputs=_bmm_samples,
        ref=_np_matmul,
        dtypes=NUMERIC,
        tol=MATMUL_TOL,
    )
)
add(
    OpInfo(
        "matmul",
        op=fn("matmul"),
        method=meth("matmul"),
        sample_inputs=_matmul_samples,
        ref=_np_matmul,
        dtypes=NUMERIC + LOWP,
        tol=MATMUL_TOL,
    )
)


def _dot_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("3", _mat((3,), d, rng), _mat((3,), d, rng))
    yield S("1", _mat((1,), d, rng), _mat((1,), d, rng))
    yield S("empty", _mat((0,), d, rng), _mat((0,), d, rng))
    yield S("kw", _mat((5,), d, rng), tensor=_mat((5,), d, rng))


add(
    OpInfo(
        "dot",
        op=fn("dot"),
        method=meth("dot"),
        sample_inputs=_dot_samples,
        ref=lambda self, tensor: _np_matmul(self, tensor),
        dtypes=NUMERIC + LOWP,
        tol=MATMUL_TOL,
    )
)


def _outer_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2_3", make((2,), d, rng), make((3,), d, rng))
    yield S("1_1", make((1,), d, rng), make((1,), d, rng))
    yield S("empty", make((0,), d, rng), make((3,), d, rng))
    if d == "float32":
        yield S("promote_int64_float32", make((2,), "int64", rng), make((3,), d, rng))


add(
    OpInfo(
        "outer",
        op=fn("outer"),
        method=meth("outer"),
        sample_inputs=_outer_samples,
        ref=lambda a, b: np.multiply.outer(a, b),
        dtypes=ALL,
        result_dtype=promoted(0, 1),
    )
)


def _ref_addmm(c: Any, a: Any, b: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    prod = _np_matmul(a, b)
    return alpha * prod if beta == 0 else beta * np.asarray(c) + alpha * prod


def _addmm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    al, be = (2, 3) if is_int(d) else (0.5, 2.0)
    yield S("full_self", _mat((2, 4), d, rng), _mat((2, 3), d, rng), _mat((3, 4), d, rng))
    yield S("broadcast_self", _mat((4,), d, rng), _mat((2, 3), d, rng), _mat((3, 4), d, rng))
    yield S(
        "alpha_beta",
        _mat((2, 4), d, rng),
        _mat((2, 3), d, rng),
        _mat((3, 4), d, rng),
        beta=be,
        alpha=al,
    )
    yield S("beta0", _mat((1, 4), d, rng), _mat((2, 3), d, rng), _mat((3, 4), d, rng), beta=0)
    yield S("empty_inner", _mat((2, 4), d, rng), _mat((2, 0), d, rng), _mat((0, 4), d, rng))


add(
    OpInfo(
        "addmm",
        op=fn("addmm"),
        method=meth("addmm"),
        sample_inputs=_addmm_samples,
        ref=_ref_addmm,
        dtypes=NUMERIC,
        tol=MATMUL_TOL,
    )
)


def _ref_baddbmm(c: Any, a: Any, b: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    prod = _np_matmul(a, b)
    return alpha * prod if beta == 0 else beta * np.asarray(c) + alpha * prod


def _ref_addbmm(c: Any, a: Any, b: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    prod = _np_matmul(a, b).sum(0) if a.shape[0] else np.zeros((a.shape[1], b.shape[2]), a.dtype)
    return alpha * prod if beta == 0 else beta * np.asarray(c) + alpha * prod


def _batched_addmm_samples(summed: bool) -> Any:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        al, be = (2, 3) if is_int(d) else (0.5, 2.0)
        out = (2, 4) if summed else (3, 2, 4)
        yield S("full_self", _mat(out, d, rng), _mat((3, 2, 5), d, rng), _mat((3, 5, 4), d, rng))
        yield S(
            "broadcast_self", _mat((4,), d, rng), _mat((3, 2, 5), d, rng), _mat((3, 5, 4), d, rng)
        )
        yield S(
            "alpha_beta",
            _mat(out, d, rng),
            _mat((3, 2, 5), d, rng),
            _mat((3, 5, 4), d, rng),
            beta=be,
            alpha=al,
        )
        yield S(
            "beta0", _mat((1,), d, rng), _mat((3, 2, 5), d, rng), _mat((3, 5, 4), d, rng), beta=0
        )
        yield S(
            "one_batch", _mat(out[-2:], d, rng), _mat((1, 2, 5), d, rng), _mat((1, 5, 4), d, rng)
        )
        yield S("empty_inner", _mat(out, d, rng), _mat((3, 2, 0), d, rng), _mat((3, 0, 4), d, rng))
        if summed:
            yield S(
                "no_batches", _mat(out, d, rng), _mat((0, 2, 5), d, rng), _mat((0, 5, 4), d, rng)
            )

    return gen


for _name, _ref in (("baddbmm", _ref_baddbmm), ("addbmm", _ref_addbmm)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_batched_addmm_samples(_name == "addbmm"),
            ref=_ref,
            dtypes=NUMERIC + LOWP,
            tol=MATMUL_TOL,
        )
    )


def _ref_linear(x: Any, w: Any, bias: Any = None) -> Any:
    out = _np_matmul(x, np.swapaxes(w, -1, -2))
    return out if bias is None else out + bias


def _linear_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("bias", _mat((2, 3), d, rng), _mat((4, 3), d, rng), _mat((4,), d, rng))
    yield S("no_bias", _mat((2, 3), d, rng), _mat((4, 3), d, rng))
    yield S("bias_none_kw", _mat((2, 3), d, rng), _mat((4, 3), d, rng), bias=None)
    yield S("batched", _mat((5, 2, 3), d, rng), _mat((4, 3), d, rng), _mat((4,), d, rng))
    yield S("vector_input", _mat((3,), d, rng), _mat((4, 3), d, rng), _mat((4,), d, rng))


add(
    OpInfo(
        "linear",
        op=fn("linear"),
        sample_inputs=_linear_samples,
        ref=_ref_linear,
        dtypes=FLOATS + LOWP,
        tol=MATMUL_TOL,
    )
)


alias("linalg_matmul", "matmul", "linalg.matmul")


# --- addmm_, baddbmm_, addbmm_ (issue 29): self must have the result's shape ---------------------

from ._core import OP_DB, add_inplace_of_shape  # noqa: E402

for _name in ("addmm", "baddbmm", "addbmm"):
    add_inplace_of_shape(next(i for i in OP_DB if i.name == _name), f"{_name}_", f"{_name}_")
