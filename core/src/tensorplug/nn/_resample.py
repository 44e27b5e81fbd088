"""Resampling functions of :mod:`tensorplug.nn.functional` (re-exported there):
``interpolate`` (and the deprecated ``upsample``, ``upsample_nearest``, ``upsample_bilinear``),
``grid_sample``, ``affine_grid``, ``pixel_shuffle`` and ``pixel_unshuffle``, with
``torch.nn.functional``'s signatures, checks and messages.

``interpolate`` picks the operator of its mode and rank (``upsample_bilinear2d.vec``, ...) and
passes it either the output size or the scale factors, as PyTorch's does: a given
``scale_factor`` is used in the coordinate map unless ``recompute_scale_factor=True``, which
computes the size first and drops the factors. Mode ``"area"`` is adaptive average pooling,
as in PyTorch: ``adaptive_avg_pool{1,2,3}d`` where the op set defines it, else the same
windows averaged here (:func:`_area`).

Usage::

    import tensorplug.nn.functional as F
    y = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
    grid = F.affine_grid(theta, [n, c, h, w], align_corners=False)
    z = F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import tensorplug

from .. import dtypes as _dt
from ..ops import ops
from ..tensor import Tensor

__all__ = [
    "affine_grid",
    "grid_sample",
    "interpolate",
    "pixel_shuffle",
    "pixel_unshuffle",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]

aten = ops.aten

_MODES = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"


def _is_integer(x: Any) -> bool:
    if isinstance(x, Tensor):
        return not (x.dtype.is_floating_point or x.dtype.is_complex) and x.ndim == 0
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _op(name: str, overload: str = "vec") -> Any:
    return getattr(getattr(aten, name), overload)


def interpolate(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resample the spatial dims of ``input`` (``(N, C, d1, ..., dk)``, k = 1, 2 or 3) to
    ``size`` or by ``scale_factor`` (one of them; each an int/float or one per dim)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    output_size: list[Any] | None
    scale_factors: list[float] | None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}"
                )
            output_size = [int(x) for x in size]
        else:
            output_size = [int(size) for _ in range(dim)]  # type: ignore[arg-type]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, C, "
                    "d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scale_factors = [float(f) for f in scale_factor]
        else:
            scale_factors = [float(scale_factor) for _ in range(dim)]  # type: ignore[arg-type]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        assert scale_factors is not None
        output_size = [math.floor(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires "
            "a 4-D tensor as input"
        )
    r: Tensor
    if 1 <= dim <= 3 and mode in ("nearest", "nearest-exact"):
        name = f"upsample_nearest{dim}d" if mode == "nearest" else f"_upsample_nearest_exact{dim}d"
        r = _op(name)(input, output_size, scale_factors)
        return r
    if 1 <= dim <= 3 and mode == "area":
        assert output_size is not None
        return _area(input, output_size)
    aligned = {
        (1, "linear"): "upsample_linear1d",
        (2, "bilinear"): "upsample_bilinear2d",
        (3, "trilinear"): "upsample_trilinear3d",
        (2, "bicubic"): "upsample_bicubic2d",
    }.get((dim, mode))
    if aligned is not None:
        if antialias:
            aligned = f"_{aligned}_aa"
        r = _op(aligned)(input, output_size, align_corners, scale_factors)
        return r
    needs = {"linear": 3, "bilinear": 4, "trilinear": 5}
    if mode in needs and 3 <= input.ndim <= 5:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {needs[mode]}D input"
        )
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the "
        f"modes: {_MODES.replace(' | area', ' | lanczos | area')} (got {mode})"
    )


def _area(input: Tensor, output_size: Sequence[int]) -> Tensor:
    """Mode ``"area"``: ``adaptive_avg_pool{k}d``, PyTorch's choice. Where the op set has no
    such operator, the same windows (``floor(i * in / out)`` to ``ceil((i + 1) * in / out)``)
    are averaged one dim at a time, by ``index_select`` of each window's elements (padded with
    a weight of 0 to the widest) and a weighed sum."""
    dim = len(output_size)
    name = f"adaptive_avg_pool{dim}d"
    try:
        pool = getattr(aten, name).default
    except AttributeError:
        pool = None
    if pool is not None:
        r: Tensor = pool(input, list(output_size))
        return r
    out = input
    for k in range(dim):
        axis = 2 + k
        n_in, n_out = int(input.shape[axis]), int(output_size[k])
        if n_out <= 0:
            raise RuntimeError(
                f"aten::{name}: adaptive_avg_pool{dim}d(): Expected output size to be positive"
            )
        windows = [
            (o * n_in // n_out, -(-(o + 1) * n_in // n_out)) for o in range(n_out)
        ]  # fmt: skip
        width = max(e - s for s, e in windows)
        idx = [s + min(t, e - s - 1) for s, e in windows for t in range(width)]
        wts = [1.0 / (e - s) if t < e - s else 0.0 for s, e in windows for t in range(width)]
        index = tensorplug.tensor(idx, dtype=_dt.int64, device=input.device)
        weights = tensorplug.tensor(wts, dtype=input.dtype, device=input.device)
        shape = list(out.shape)
        picked = aten.index_select.default(out, axis, index)
        picked = aten.reshape.default(picked, [*shape[:axis], n_out, width, *shape[axis + 1 :]])
        tail = [1] * (len(shape) - axis - 1)
        weights = aten.reshape.default(weights, [n_out, width, *tail])
        out = aten.sum.dim_IntList(aten.mul.Tensor(picked, weights), [axis + 1])
    return out


def upsample(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated: :func:`interpolate`."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
) -> Tensor:
    """Deprecated: ``interpolate(..., mode="nearest")``."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
) -> Tensor:
    """Deprecated: ``interpolate(..., mode="bilinear", align_corners=True)``."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample ``input`` (``(N, C, H, W)`` or ``(N, C, D, H, W)``) at the positions of ``grid``
    (``(N, H_out, W_out, 2)`` or ``(N, D_out, H_out, W_out, 3)``, x first, in [-1, 1])."""
    modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
    paddings = {"zeros": 0, "border": 1, "reflection": 2}
    if mode not in modes:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in paddings:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    r: Tensor = aten.grid_sampler.default(
        input, grid, modes[mode], paddings[padding_mode], align_corners
    )
    return r


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of the affine maps ``theta`` (``(N, 2, 3)`` for a 4-d ``size``,
    ``(N, 3, 4)`` for a 5-d one), for :func:`grid_sample`."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    shape = tuple(theta.shape)
    shown = f"torch.Size({list(shape)})"
    if len(size) == 4:
        if theta.ndim != 3 or shape[-2] != 2 or shape[-1] != 3:
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                f"Got {shown}."
            )
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or shape[-2] != 3 or shape[-1] != 4:
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                f"Got {shown}."
            )
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    r: Tensor = aten.affine_grid_generator.default(theta, list(size), align_corners)
    return r


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C * r * r, H, W)`` to ``(*, C, H * r, W * r)``."""
    r: Tensor = aten.pixel_shuffle.default(input, upscale_factor)
    return r


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H * r, W * r)`` to ``(*, C * r * r, H, W)``: the inverse of pixel_shuffle."""
    r: Tensor = aten.pixel_unshuffle.default(input, downscale_factor)
    return r
