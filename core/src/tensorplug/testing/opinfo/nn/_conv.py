"""Samples and oracles of the ``nn`` family, part ``conv``: ``convolution`` and
``convolution_backward``, the public convolutions over them, ``im2col``/``col2im`` and the
padding operators.

The oracles compute in float64 by direct sums, independent of the kernels' im2col: a
convolution adds, per kernel offset, the input's strided slice times that offset's filter
taps (``einsum``); a transposed convolution scatters each input position's product into the
output positions it reaches; padding reads ``np.pad`` (its gradient adds back along
``np.pad``-ed position indices with ``np.add.at``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._core import FLOATS, LOWP, OpInfo, S, SampleInput, add, fn, make
from ._functions import _compare_linear_backward

# --- oracles ----------------------------------------------------------------------------------


def _tup(v: Any, k: int) -> tuple[int, ...]:
    v = tuple(v) if isinstance(v, (list, tuple)) else (v,)
    return v * k if len(v) == 1 else v


def _slices(off: Sequence[int], dil: Sequence[int], st: Sequence[int], n: Sequence[int]) -> Any:
    return (slice(None), slice(None)) + tuple(
        slice(o * d, o * d + s * (m - 1) + 1, s) for o, d, s, m in zip(off, dil, st, n, strict=True)
    )


def _zero_pad(x: Any, before: Sequence[int], after: Sequence[int]) -> Any:
    return np.pad(x, [(0, 0), (0, 0), *zip(before, after, strict=True)])


def ref_conv(x: Any, w: Any, b: Any, stride: Any, padding: Any, dilation: Any, groups: int) -> Any:
    """Plain convolution of (N, C, *S) by (O, C/G, *K), float64."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    k = w.ndim - 2
    st, pd, dl = _tup(stride, k), _tup(padding, k), _tup(dilation, k)
    xp = _zero_pad(x, pd, pd)
    kern = w.shape[2:]
    out = [
        (n - d * (q - 1) - 1) // s + 1
        for n, d, q, s in zip(xp.shape[2:], dl, kern, st, strict=True)
    ]
    o, cg = w.shape[0], w.shape[1]
    og = o // groups
    y = np.zeros((x.shape[0], o, *out))
    for g in range(groups):
        xs = xp[:, g * cg : (g + 1) * cg]
        for off in itertools.product(*(range(q) for q in kern)):
            taps = w[(slice(g * og, (g + 1) * og), slice(None), *off)]  # (og, cg)
            y[:, g * og : (g + 1) * og] += np.einsum(
                "nc...,oc->no...", xs[_slices(off, dl, st, out)], taps
            )
    if b is not None:
        y += np.asarray(b, np.float64).reshape((1, o) + (1,) * k)
    return y


def ref_conv_transpose(
    x: Any, w: Any, b: Any, stride: Any, padding: Any, output_padding: Any, groups: int,
    dilation: Any, size: Sequence[int] | None = None,
) -> Any:  # fmt: skip
    """Transposed convolution of (N, C_in, *S) by (C_in, C_out/G, *K), float64: each input
    position scatters into the output positions it reaches. ``size``: the output's spatial
    size (else the one output_padding gives)."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    k = w.ndim - 2
    st, pd, dl, op = _tup(stride, k), _tup(padding, k), _tup(dilation, k), _tup(output_padding, k)
    kern, sp = w.shape[2:], x.shape[2:]
    if size is None:
        size = [
            (n - 1) * s - 2 * p + d * (q - 1) + o + 1
            for n, s, p, d, q, o in zip(sp, st, pd, dl, kern, op, strict=True)
        ]
    full = [m + 2 * p for m, p in zip(size, pd, strict=True)]
    reach = [(n - 1) * s + d * (q - 1) + 1 for n, s, d, q in zip(sp, st, dl, kern, strict=True)]
    room = [max(f, r) for f, r in zip(full, reach, strict=True)]
    cg, og = w.shape[0] // groups, w.shape[1]
    y = np.zeros((x.shape[0], og * groups, *room))
    for g in range(groups):
        xs = x[:, g * cg : (g + 1) * cg]
        for off in itertools.product(*(range(q) for q in kern)):
            taps = w[(slice(g * cg, (g + 1) * cg), slice(None), *off)]  # (cg, og)
            y[(slice(None), slice(g * og, (g + 1) * og), *_slices(off, dl, st, sp)[2:])] += (
                np.einsum("nc...,co->no...", xs, taps)
            )
    y = y[(slice(None), slice(None), *(slice(p, p + m) for p, m in zip(pd, size, strict=True)))]
    if b is not None:
        y = y + np.asarray(b, np.float64).reshape((1, -1) + (1,) * k)
    return y


def _ref_convolution(
    x: Any, w: Any, b: Any, stride: Any, padding: Any, dilation: Any, transposed: bool,
    output_padding: Any, groups: int,
) -> Any:  # fmt: skip
    if transposed:
        return ref_conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation)
    return ref_conv(x, w, b, stride, padding, dilation, groups)


def _weight_taps(
    a: Any, g_: Any, w_shape: Sequence[int], groups: int, st: Any, dl: Any, out: Sequence[int]
) -> Any:
    """d(output)/d(weight) contracted with the output gradient, per kernel offset: ``a`` is the
    padded tensor the windows are read from, ``g_`` the one whose positions they meet."""
    gw = np.zeros(w_shape)
    first, second = w_shape[0] // groups, w_shape[1]
    for g in range(groups):
        for off in itertools.product(*(range(q) for q in w_shape[2:])):
            win = a[:, g * second : (g + 1) * second][_slices(off, dl, st, out)]
            other = g_[:, g * first : (g + 1) * first]
            n = other.shape[0]
            gw[(slice(g * first, (g + 1) * first), slice(None), *off)] = np.einsum(
                "nol,ncl->oc", other.reshape(n, first, -1), win.reshape(n, second, -1)
            )
    return gw


def _ref_convolution_backward(
    go: Any, x: Any, w: Any, bias_sizes: Any, stride: Any, padding: Any, dilation: Any,
    transposed: bool, output_padding: Any, groups: int, output_mask: Any,
) -> Any:  # fmt: skip
    go, x, w = (np.asarray(a, np.float64) for a in (go, x, w))
    k = w.ndim - 2
    st, pd, dl = _tup(stride, k), _tup(padding, k), _tup(dilation, k)
    sp = x.shape[2:]
    if not transposed:
        gi = ref_conv_transpose(go, w, None, st, pd, 0, groups, dl, size=sp)
        xp = _zero_pad(x, pd, pd)
        gw = _weight_taps(xp, go, w.shape, groups, st, dl, go.shape[2:])
    else:
        gi = ref_conv(go, w, None, st, pd, dl, groups)
        gi = gi[(slice(None), slice(None), *(slice(0, n) for n in sp))]
        gp = _zero_pad(go, pd, pd)
        gw = _weight_taps(gp, x, w.shape, groups, st, dl, sp)
    gb = go.sum(axis=(0, *range(2, go.ndim)))
    return tuple(v if m else None for v, m in zip((gi, gw, gb), output_mask, strict=True))


# --- samples ----------------------------------------------------------------------------------

TOL = {"float32": (1e-5, 1e-5)}
LOWP_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}


# Small shapes: the autograd tests run gradgradcheck on every float64 sample, on every backend.


def _convolution_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    def m(*shape: int) -> Any:
        return make(shape, d, rng)

    yield S("2d", m(2, 2, 4, 3), m(3, 2, 2, 2), m(3), [1, 1], [1, 0], [1, 1], False, [0, 0], 1)
    if d in LOWP:
        return
    yield S(
        "2d_stride_dilation_groups", m(1, 4, 5, 4), m(2, 2, 2, 2), None, [2, 1], [0, 1], [2, 1],
        False, [0, 0], 2,
    )  # fmt: skip
    yield S("1d", m(2, 2, 5), m(3, 2, 3), m(3), [2], [1], [1], False, [0], 1)
    yield S("3d", m(1, 1, 3, 2, 3), m(2, 1, 2, 2, 2), m(2), [1], [1], [1], False, [0], 1)
    yield S("depthwise", m(1, 3, 3, 3), m(3, 1, 2, 2), m(3), [1, 1], [1, 1], [1, 1], False,
            [0, 0], 3)  # fmt: skip
    yield S("empty_batch", m(0, 2, 4, 4), m(3, 2, 3, 3), None, [1], [0], [1], False, [0], 1)
    yield S(
        "transposed_2d", m(1, 4, 2, 3), m(4, 1, 3, 2), m(2), [2, 1], [1, 0], [1, 2], True,
        [1, 0], 2,
    )  # fmt: skip
    yield S("transposed_1d", m(2, 2, 3), m(2, 2, 3), None, [3], [1], [1], True, [2], 1)


def _convolution_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    def m(*shape: int) -> Any:
        return make(shape, d, rng)

    every = [True, True, True]
    yield S("2d", m(1, 3, 5, 2), m(1, 2, 4, 3), m(3, 2, 2, 2), [3], [1, 1], [1, 0], [1, 1],
            False, [0, 0], 1, every)  # fmt: skip
    if d in LOWP:
        return
    yield S(
        "2d_stride_groups_no_bias", m(1, 2, 2, 5), m(1, 4, 5, 4), m(2, 2, 2, 2), None, [2, 1],
        [0, 1], [2, 1], False, [0, 0], 2, [True, True, False],
    )  # fmt: skip
    yield S("weight_only_1d", m(2, 3, 3), m(2, 2, 5), m(3, 2, 3), [3], [2], [1], [1], False,
            [0], 1, [False, True, True])  # fmt: skip
    yield S(
        "transposed_2d", m(1, 2, 4, 5), m(1, 4, 2, 3), m(4, 1, 3, 2), [2], [2, 1], [1, 0],
        [1, 2], True, [1, 0], 2, every,
    )  # fmt: skip
    yield S("transposed_1d_input_only", m(2, 2, 9), m(2, 2, 3), m(2, 2, 3), None, [3], [1],
            [1], True, [2], 1, [True, False, False])  # fmt: skip


add(
    OpInfo(
        "convolution",
        op=fn("convolution"),
        sample_inputs=_convolution_samples,
        ref=_ref_convolution,
        dtypes=FLOATS + LOWP,
        tol={**TOL, **LOWP_TOL},
    )
)
add(
    OpInfo(
        "convolution_backward",
        op=fn("convolution_backward"),
        sample_inputs=_convolution_backward_samples,
        ref=_ref_convolution_backward,
        dtypes=FLOATS + LOWP,
        compare=_compare_linear_backward,
    )
)


def _conv_samples(k: int, mode: bool) -> Any:
    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        def m(*shape: int) -> Any:
            return make(shape, d, rng)

        x, w = m(1, 4, *([3] * k)), m(2, 2, *([2] * k))
        if mode:
            yield S("same", x, m(2, 2, *([3] * k)), m(2), padding="same", groups=2)
            yield S("same_dilated_unbatched", m(2, *([4] * k)), m(2, 2, *([2] * k)),
                    padding="same", dilation=2)  # fmt: skip
            yield S("valid_unbatched", m(2, *([3] * k)), m(2, 2, *([2] * k)), None, 1, "valid")
            return
        yield S("defaults", x, m(2, 4, *([2] * k)))
        yield S("bias_stride_padding_groups", x, w, m(2), 2, 1, 1, 2)
        yield S("unbatched_dilation", m(2, *([4] * k)), m(2, 2, *([2] * k)), dilation=2)

    return samples


def _ref_public_conv(k: int) -> Any:
    def ref(x: Any, w: Any, b: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
            groups: int = 1) -> Any:  # fmt: skip
        x = np.asarray(x, np.float64)
        unbatched = x.ndim == k + 1
        if unbatched:
            x = x[None]
        if isinstance(padding, str):
            if padding == "valid":
                padding = 0
            else:  # "same": the total split, the odd one on the right
                dl = _tup(dilation, k)
                total = [d * (q - 1) for d, q in zip(dl, np.shape(w)[2:], strict=True)]
                x = _zero_pad(x, [t // 2 for t in total], [t - t // 2 for t in total])
                padding = 0
        y = ref_conv(x, w, b, stride, padding, dilation, groups)
        return y[0] if unbatched else y

    return ref


def _conv_transpose_samples(k: int) -> Any:
    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        def m(*shape: int) -> Any:
            return make(shape, d, rng)

        yield S("defaults", m(1, 2, *([2] * k)), m(2, 2, *([2] * k)))
        yield S(
            "stride_padding_output_padding_groups", m(1, 2, *([2] * k)), m(2, 1, *([2] * k)),
            m(2), 2, 1, 1, 2,
        )  # fmt: skip
        yield S("unbatched_dilation", m(2, *([2] * k)), m(2, 1, *([2] * k)), dilation=2)

    return samples


def _ref_public_conv_transpose(k: int) -> Any:
    def ref(x: Any, w: Any, b: Any = None, stride: Any = 1, padding: Any = 0,
            output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Any:  # fmt: skip
        x = np.asarray(x, np.float64)
        unbatched = x.ndim == k + 1
        y = ref_conv_transpose(x[None] if unbatched else x, w, b, stride, padding,
                               output_padding, groups, dilation)  # fmt: skip
        return y[0] if unbatched else y

    return ref


for _k in (1, 2, 3):
    add(
        OpInfo(
            f"conv{_k}d",
            op=fn(f"conv{_k}d"),
            sample_inputs=_conv_samples(_k, False),
            ref=_ref_public_conv(_k),
            dtypes=FLOATS,
            tol=TOL,
        )
    )
    add(
        OpInfo(
            f"conv{_k}d.padding",
            op=fn(f"conv{_k}d"),
            sample_inputs=_conv_samples(_k, True),
            ref=_ref_public_conv(_k),
            dtypes=FLOATS,
            tol=TOL,
        )
    )
    add(
        OpInfo(
            f"conv_transpose{_k}d" if _k == 1 else f"conv_transpose{_k}d.input",
            op=fn(f"conv_transpose{_k}d"),
            sample_inputs=_conv_transpose_samples(_k),
            ref=_ref_public_conv_transpose(_k),
            dtypes=FLOATS,
            tol=TOL,
        )
    )


# --- im2col and col2im ------------------------------------------------------------------------


def _ref_im2col(x: Any, kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> Any:
    x = np.asarray(x, np.float64)
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    ks, dl, pd, st = (_tup(v, 2) for v in (kernel_size, dilation, padding, stride))
    xp = _zero_pad(x, pd, pd)
    out = [
        (n - d * (q - 1) - 1) // s + 1 for n, d, q, s in zip(xp.shape[2:], dl, ks, st, strict=True)
    ]
    n, c = x.shape[:2]
    cols = np.zeros((n, c, ks[0] * ks[1], out[0] * out[1]))
    for j, off in enumerate(itertools.product(range(ks[0]), range(ks[1]))):
        cols[:, :, j] = xp[_slices(off, dl, st, out)].reshape(n, c, -1)
    cols = cols.reshape(n, c * ks[0] * ks[1], -1)
    return cols[0] if unbatched else cols


def _ref_col2im(
    cols: Any, output_size: Any, kernel_size: Any, dilation: Any, padding: Any, stride: Any
) -> Any:
    cols = np.asarray(cols, np.float64)
    unbatched = cols.ndim == 2
    if unbatched:
        cols = cols[None]
    size, ks, dl, pd, st = (_tup(v, 2) for v in (output_size, kernel_size, dilation, padding,
                                                 stride))  # fmt: skip
    out = [
        (m + 2 * p - d * (q - 1) - 1) // s + 1
        for m, p, d, q, s in zip(size, pd, dl, ks, st, strict=True)
    ]
    n = cols.shape[0]
    c = cols.shape[1] // (ks[0] * ks[1])
    blocks = cols.reshape(n, c, ks[0] * ks[1], *out)
    img = np.zeros((n, c, size[0] + 2 * pd[0], size[1] + 2 * pd[1]))
    for j, off in enumerate(itertools.product(range(ks[0]), range(ks[1]))):
        img[_slices(off, dl, st, out)] += blocks[:, :, j]
    img = img[:, :, pd[0] : pd[0] + size[0], pd[1] : pd[1] + size[1]]
    return img[0] if unbatched else img


def _im2col_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("basic", make((1, 2, 3, 4), d, rng), [2, 2], [1, 1], [0, 0], [1, 1])
    yield S("all_args_unbatched", make((1, 5, 4), d, rng), [3, 2], [2, 1], [1, 2], [2, 3])


def _col2im_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("basic", make((1, 8, 6), d, rng), [3, 4], [2, 2], [1, 1], [0, 0], [1, 1])
    yield S("all_args_unbatched", make((6, 6), d, rng), [5, 4], [3, 2], [2, 1], [1, 2], [2, 3])


add(
    OpInfo(
        "im2col", op=fn("im2col"), sample_inputs=_im2col_samples, ref=_ref_im2col,
        dtypes=FLOATS,
    )
)  # fmt: skip
add(
    OpInfo(
        "col2im", op=fn("col2im"), sample_inputs=_col2im_samples, ref=_ref_col2im,
        dtypes=FLOATS, tol=TOL,
    )
)  # fmt: skip


# --- padding ----------------------------------------------------------------------------------

_NP_MODE = {"reflection": "reflect", "replication": "edge", "circular": "wrap"}


def _crop_then_pad(x: Any, pad: Sequence[int], np_mode: str, value: float = 0.0) -> Any:
    """``F.pad``'s semantics by ``np.pad``: negative amounts crop. Circular padding wraps what
    is left after the crop; reflection and replication read the uncropped input (the crop
    comes after)."""
    x = np.asarray(x, np.float64)
    n = len(pad) // 2
    crop = [slice(None)] * x.ndim
    widths = [(0, 0)] * x.ndim
    for i in range(n):
        dim = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        crop[dim] = slice(max(-left, 0), x.shape[dim] - max(-right, 0))
        widths[dim] = (max(left, 0), max(right, 0))
    if np_mode == "constant":
        return np.pad(x[tuple(crop)], widths, mode="constant", constant_values=value)
    if np_mode == "wrap":
        return np.pad(x[tuple(crop)], widths, mode="wrap")
    padded = np.pad(x, widths, mode=np_mode)  # type: ignore[call-overload]
    after = [slice(None)] * x.ndim
    for i in range(n):
        dim = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        after[dim] = slice(max(-left, 0), padded.shape[dim] - max(-right, 0))
    return padded[tuple(after)]


def _ref_pad_backward(mode: str) -> Any:
    def ref(g: Any, x: Any, padding: Any) -> Any:
        """Each output position's gradient added to the input position it read."""
        x = np.asarray(x, np.float64)
        g = np.asarray(g, np.float64)
        index = np.arange(x.size).reshape(x.shape)
        # which input element each output element reads: the positions, padded the same way
        sources = _crop_then_pad(index, padding, _NP_MODE[mode]).astype(np.int64)
        out = np.zeros(x.size)
        np.add.at(out, sources.ravel(), g.ravel())
        return out.reshape(x.shape)

    return ref


def _pad_samples(k: int, backward: bool, mode: str) -> Any:
    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        n = 2 if k == 3 else 3
        for name, shape, pad in (
            (
                "batched",
                (2, 1, *([n] * k)),
                [1, 2, 0, 2] if k == 2 else [1, 2] if k == 1 else [1, 1, 0, 1, 1, 0],
            ),
            ("unbatched_negative", (1, *([n] * k)), [-1, 1, 1, 0, 1, -1][: 2 * k]),
        ):
            x = make(shape, d, rng)
            if backward:
                out = _crop_then_pad(x, pad, _NP_MODE[mode]).shape
                yield S(name, make(out, d, rng), x, pad)
            else:
                yield S(name, x, pad)

    return samples


for _mode in ("reflection", "replication"):
    for _k in (1, 2, 3):
        _name = f"{_mode}_pad{_k}d"
        add(
            OpInfo(
                _name,
                op=fn(_name),
                sample_inputs=_pad_samples(_k, False, _mode),
                ref=lambda x, pad, m=_NP_MODE[_mode]: _crop_then_pad(x, pad, m),
                dtypes=FLOATS,
            )
        )
        add(
            OpInfo(
                f"{_name}_backward",
                op=fn(f"{_name}_backward"),
                sample_inputs=_pad_samples(_k, True, _mode),
                ref=_ref_pad_backward(_mode),
                dtypes=FLOATS,
                tol=TOL,
            )
        )


def _constant_pad_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("one_dim", make((2, 3), d, rng), [1, 2])
    yield S("value_negative_4_dims", make((1, 2, 3, 2), d, rng), [1, -1, 0, 2, 2, 1, 0, 1], 2)
    yield S("crop_all", make((3, 4), d, rng), [-2, -2])


add(
    OpInfo(
        "constant_pad_nd",
        op=fn("constant_pad_nd"),
        sample_inputs=_constant_pad_samples,
        ref=lambda x, pad, value=0: _crop_then_pad(x, pad, "constant", value),
        dtypes=FLOATS + ("int64",),
    )
)
add(
    OpInfo(
        "_pad_circular",
        op=fn("_pad_circular"),
        sample_inputs=_pad_samples(2, False, "circular"),
        ref=lambda x, pad: _crop_then_pad(x, pad, "wrap"),
        dtypes=FLOATS,
    )
)


def _pad_op_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("constant_default", make((2, 3), d, rng), [1, 2])
    yield S("constant_value", make((1, 2, 3), d, rng), [1, 0, 2, 1], "constant", 1.5)
    yield S("reflect", make((1, 2, 4), d, rng), [2, 1], "reflect")
    yield S("replicate_2d", make((1, 1, 2, 3), d, rng), [2, 1, 0, 2], mode="replicate")
    yield S("circular_3d", make((1, 2, 2, 3), d, rng), [1, 1, 2, 0, 1, 2], mode="circular")


def _ref_pad(x: Any, pad: Any, mode: str = "constant", value: float | None = None) -> Any:
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
               "circular": "wrap"}[mode]  # fmt: skip
    return _crop_then_pad(x, pad, np_mode, 0.0 if value is None else value)


add(OpInfo("pad", op=fn("pad"), sample_inputs=_pad_op_samples, ref=_ref_pad, dtypes=FLOATS))
