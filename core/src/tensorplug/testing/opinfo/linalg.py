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
    is_float,
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


# --- matrix-vector products, inner and cross products, distances (issue 29) --------------------


def _inplace_of(base: OpInfo, name: str, function: bool = False) -> None:
    """``name`` in place on ``base``'s samples whose result has ``self``'s shape and dtype."""

    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for s in base.sample_inputs(d, rng):
            r = np.asarray(base.ref(*s.args, **s.kwargs))  # type: ignore[misc]
            if r.shape == s.args[0].shape and base.result_dtype(s, d) == d:
                yield s

    add(
        OpInfo(
            name,
            op=fn(name) if function else meth(name),
            method=meth(name) if function else None,
            sample_inputs=gen,
            ref=base.ref,
            dtypes=base.dtypes,
            kind="inplace",
            tol=base.tol,
        )
    )


def _mv_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2x3", _mat((2, 3), d, rng), _mat((3,), d, rng))
    yield S("empty_inner", _mat((2, 0), d, rng), _mat((0,), d, rng))
    yield S("kw", _mat((1, 2), d, rng), vec=_mat((2,), d, rng))


add(
    OpInfo(
        "mv",
        op=fn("mv"),
        method=meth("mv"),
        sample_inputs=_mv_samples,
        ref=lambda self, vec: _np_matmul(self, vec),
        dtypes=("float32", "int64"),
        tol=MATMUL_TOL,
    )
)


def _ref_addmv(self: Any, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    prod = _np_matmul(mat, vec)
    if self.dtype == np.bool_:
        return (bool(beta) & self) | (bool(alpha) & (prod != 0))
    out = alpha * prod
    return out if beta == 0 else out + beta * np.asarray(self, out.dtype)


def _addmv_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", _mat((2,), d, rng), _mat((2, 3), d, rng), _mat((3,), d, rng))
    yield S("broadcast_self", _mat((1,), d, rng), _mat((2, 3), d, rng), _mat((3,), d, rng))
    if is_int(d):
        yield S(
            "scaled", _mat((2,), d, rng), _mat((2, 2), d, rng), _mat((2,), d, rng), beta=2, alpha=3
        )
    else:
        yield S(
            "scaled",
            _mat((2,), d, rng),
            _mat((2, 2), d, rng),
            _mat((2,), d, rng),
            beta=0.5,
            alpha=2,
        )
    nan_self = np.full((2,), np.nan if not is_int(d) else 7, dtype=np.dtype(d))
    yield S("beta0", nan_self, _mat((2, 3), d, rng), _mat((3,), d, rng), beta=0)


addmv = add(
    OpInfo(
        "addmv",
        op=fn("addmv"),
        method=meth("addmv"),
        sample_inputs=_addmv_samples,
        ref=_ref_addmv,
        dtypes=("float32", "int64"),
        tol=MATMUL_TOL,
    )
)
_inplace_of(addmv, "addmv_", function=True)


def _ref_addr(self: Any, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    prod = np.multiply.outer(vec1, vec2)
    if prod.dtype == np.bool_:
        return (bool(beta) & self) | (bool(alpha) & prod)
    out = alpha * prod
    return out if beta == 0 else out + beta * self


def _addr_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((2, 3), d, rng), make((2,), d, rng), make((3,), d, rng))
    yield S("broadcast_self", make((3,), d, rng), make((2,), d, rng), make((3,), d, rng))
    k = {"beta": 2, "alpha": 3} if not is_float(d) else {"beta": 0.5, "alpha": 2.0}
    if d == "bool":
        k = {"beta": False, "alpha": True}
    yield S("scaled", make((2, 2), d, rng), make((2,), d, rng), make((2,), d, rng), **k)
    if d == "float32":
        yield S("promote", make((2, 2), d, rng), make((2,), "int64", rng), make((2,), d, rng))


addr = add(
    OpInfo(
        "addr",
        op=fn("addr"),
        method=meth("addr"),
        sample_inputs=_addr_samples,
        ref=_ref_addr,
        dtypes=("float32", "int64", "bool"),
        result_dtype=promoted(0, 1, 2),
    )
)
_inplace_of(addr, "addr_")


def _ger_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2_3", make((2,), d, rng), make((3,), d, rng))
    yield S("empty", make((0,), d, rng), make((2,), d, rng))


add(
    OpInfo(
        "ger",
        op=fn("ger"),
        method=meth("ger"),
        sample_inputs=_ger_samples,
        ref=lambda a, b: np.multiply.outer(a, b),
        dtypes=("float32", "int64"),
    )
)


def _inner_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("vec_vec", _mat((3,), d, rng), _mat((3,), d, rng))
    yield S("mat_3d", _mat((2, 3), d, rng), _mat((4, 2, 3), d, rng))
    yield S("scalar", _mat((), d, rng), _mat((2, 2), d, rng))
    yield S("empty", _mat((2, 0), d, rng), _mat((0,), d, rng))


add(
    OpInfo(
        "inner",
        op=fn("inner"),
        method=meth("inner"),
        sample_inputs=_inner_samples,
        ref=lambda a, b: np.asarray(np.inner(a, b)) if a.ndim and b.ndim else a * b,
        dtypes=("float32", "int64"),
        tol=MATMUL_TOL,
    )
)


def _cross_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default_dim", make((2, 3), d, rng), make((2, 3), d, rng))
    yield S("first_3", make((3, 3), d, rng), make((3, 3), d, rng))
    yield S("dim0_broadcast", make((3, 1), d, rng), make((3, 2), d, rng), 0)
    yield S("kw_neg", make((2, 3), d, rng), make((1, 3), d, rng), dim=-1)


def _ref_cross(a: Any, b: Any, dim: Any = None) -> Any:
    if dim is None:
        dim = list(np.broadcast_shapes(a.shape, b.shape)).index(3)
    return np.cross(a, b, axis=dim)


add(
    OpInfo(
        "cross",
        op=fn("cross"),
        method=meth("cross"),
        sample_inputs=_cross_samples,
        ref=_ref_cross,
        dtypes=("float32", "int64"),
    )
)


def _cdist_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("p2", make((3, 2), d, rng), make((4, 2), d, rng))
    yield S("p1_batched", make((2, 3, 2), d, rng), make((1, 2, 2), d, rng), 1.0)
    yield S("p0", np.round(make((3, 2), d, rng)), np.round(make((2, 2), d, rng)), 0.0)
    yield S("pinf", make((2, 3), d, rng), make((2, 3), d, rng), float("inf"))
    yield S("p3", make((2, 2), d, rng), make((3, 2), d, rng), p=3.0)
    yield S("p_half", make((2, 2), d, rng), make((3, 2), d, rng), 0.5)
    yield S("mm_mode", make((3, 2), d, rng), make((2, 2), d, rng), 2.0, 1)
    yield S("no_mm_mode", make((3, 2), d, rng), make((2, 2), d, rng), compute_mode=2)
    yield S("mm_by_size", make((26, 2), d, rng), make((2, 2), d, rng))
    yield S("empty_rows", make((0, 2), d, rng), make((2, 2), d, rng))


def _ref_cdist(x1: Any, x2: Any, p: float = 2.0, compute_mode: Any = None) -> Any:
    diff = np.abs(x1[..., :, None, :].astype(np.float64) - x2[..., None, :, :])
    if p == 0:
        out = (diff != 0).sum(-1).astype(np.float64)
    elif p == float("inf"):
        out = diff.max(-1, initial=0.0)
    else:
        out = (diff**p).sum(-1) ** (1 / p)
    return out


add(
    OpInfo(
        "cdist",
        op=fn("cdist"),
        sample_inputs=_cdist_samples,
        ref=_ref_cdist,
        dtypes=FLOATS,
        tol={"float32": (1e-4, 1e-4)},
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
