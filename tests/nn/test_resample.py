"""F.interpolate, F.grid_sample, F.affine_grid and F.pixel_shuffle against torch 2.13's
outputs and gradients, frozen in data/resample.npz by tools/gen_resample.py (so this runs
without torch), and the functions' and modules' argument checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F
from tensorplug import nn

DATA = np.load(Path(__file__).parent / "data" / "resample.npz")
INDEX: list[dict[str, Any]] = json.loads(str(DATA["index"]))
INPUTS = {"x": 1 / 4, "g": 1 / 4, "theta": 1 / 8, "grid": 1 / 64}


def _array(entry: dict[str, Any], key: str) -> np.ndarray:
    offset, shape = entry["arrays"][key]
    size = int(np.prod(shape, dtype=np.int64))
    if key in INPUTS:
        flat = DATA["inputs"][offset : offset + size].astype(np.float64) * INPUTS[key]
    else:
        flat = DATA["results"][offset : offset + size].astype(np.float64)
    return flat.reshape(shape)


def _case_id(entry: dict[str, Any]) -> str:
    c = entry["case"]
    parts = [c["fn"]]
    for k in ("mode", "padding_mode", "label"):
        if k in c:
            parts.append(str(c[k]))
    if "align_corners" in c and c["align_corners"] is not None:
        parts.append("ac" if c["align_corners"] else "hp")
    if c.get("antialias"):
        parts.append("aa")
    parts.append("x".join(map(str, c.get("shape", c.get("size", [])))))
    return "-".join(parts)


def _leaf(a: np.ndarray) -> tp.Tensor:
    t = tp.tensor(a)
    t.requires_grad_(True)
    return t


def _close(got: tp.Tensor, want: np.ndarray) -> None:
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("entry", INDEX, ids=[_case_id(e) for e in INDEX])
def test_matches_torch_frozen(entry: dict[str, Any]) -> None:
    c = entry["case"]
    fn = c["fn"]
    if fn == "affine_grid":
        theta = _leaf(_array(entry, "theta"))
        y = F.affine_grid(theta, c["size"], align_corners=c["align_corners"])
        _close(y, _array(entry, "y"))
        y.backward(tp.tensor(_array(entry, "g")))
        _close(theta.grad, _array(entry, "dtheta"))
        return
    x = _leaf(_array(entry, "x"))
    grid = None
    if fn == "interpolate":
        kw = {k: c[k] for k in ("size", "scale_factor", "recompute_scale_factor", "antialias")
              if k in c}  # fmt: skip
        y = F.interpolate(x, mode=c["mode"], align_corners=c["align_corners"], **kw)
    elif fn == "grid_sample":
        grid = _leaf(_array(entry, "grid"))
        y = F.grid_sample(
            x, grid, mode=c["mode"], padding_mode=c["padding_mode"],
            align_corners=c["align_corners"],
        )  # fmt: skip
    else:
        y = getattr(F, fn)(x, c["factor"])
    _close(y, _array(entry, "y"))
    y.backward(tp.tensor(_array(entry, "g")))
    _close(x.grad, _array(entry, "dx"))
    if grid is not None:
        _close(grid.grad, _array(entry, "dgrid"))


def test_frozen_cases_cover_every_mode_and_alignment() -> None:
    seen = {
        (e["case"]["mode"], e["case"]["align_corners"], e["case"].get("label"))
        for e in INDEX
        if e["case"]["fn"] == "interpolate"
    }
    for mode in ("nearest", "nearest-exact", "area", "linear", "bilinear", "bicubic", "trilinear"):
        aligns = (
            (False, True) if mode in ("linear", "bilinear", "bicubic", "trilinear") else (None,)
        )
        for align in aligns:
            for label in ("down_size", "up_size", "down_scale", "up_scale"):
                assert (mode, align, label) in seen


# --- checks and messages (PyTorch's) ---------------------------------------------------------


def test_interpolate_argument_errors() -> None:
    x = tp.zeros(1, 2, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=3, scale_factor=2.0)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=3, align_corners=True)
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        F.interpolate(x, size=[3])
    with pytest.raises(TypeError, match="expected size to be one of int"):
        F.interpolate(x, size=[3.0, 3.0])
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful"):
        F.interpolate(x, size=3, recompute_scale_factor=True)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(x, size=3, antialias=True)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        F.interpolate(x, size=3, mode="linear")
    with pytest.raises(NotImplementedError, match=r"got 4D\) .* \(got foo\)"):
        F.interpolate(x, size=3, mode="foo")


def test_upsample_kernel_errors_name_the_op() -> None:
    x = tp.zeros(1, 2, 4, 4)
    with pytest.raises(RuntimeError, match=r"aten::upsample_bilinear2d: Input and output sizes "
                       r"should be greater than 0, but got input \(H: 4, W: 4\) output \(H: 0, W: 3\)"):  # fmt: skip
        tp.ops.aten.upsample_bilinear2d.vec(x, [0, 3], False, None)
    with pytest.raises(RuntimeError, match="Must specify exactly one of output_size"):
        tp.ops.aten.upsample_bilinear2d.vec(x, None, False, None)
    with pytest.raises(RuntimeError, match="Non-empty 4D data tensor expected"):
        tp.ops.aten.upsample_bilinear2d.vec(tp.zeros(1, 0, 4, 4), [3, 3], False, None)
    with pytest.raises(NotImplementedError, match="compute_indices_weights_linear"):
        tp.ops.aten.upsample_bilinear2d.vec(x.long(), [3, 3], False, None)
    with pytest.raises(
        RuntimeError, match=r"output.size\(3\) = 3 but got grad_output.size\(3\) = 2"
    ):
        tp.ops.aten.upsample_bilinear2d_backward(tp.zeros(1, 2, 3, 2), [3, 3], [1, 2, 4, 4], False)
    # an empty batch is fine
    assert tp.ops.aten.upsample_bilinear2d.vec(tp.zeros(0, 2, 4, 4), [3, 3], False, None).shape == (
        0, 2, 3, 3
    )  # fmt: skip


def test_nearest_takes_uint8() -> None:
    x = tp.arange(16, dtype=tp.uint8).reshape(1, 1, 4, 4)
    y = F.interpolate(x, scale_factor=2)
    assert y.dtype == tp.uint8
    np.testing.assert_array_equal(y.numpy(), np.repeat(np.repeat(x.numpy(), 2, 2), 2, 3))


def test_grid_sample_errors() -> None:
    x, g = tp.zeros(1, 2, 4, 4), tp.zeros(1, 3, 3, 2)
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic'"):
        F.grid_sample(x, g, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border'"):
        F.grid_sample(x, g, padding_mode="wrap", align_corners=False)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        F.grid_sample(x, g)
    with pytest.raises(RuntimeError, match="expected grid to have size 2 in last dimension"):
        F.grid_sample(x, g[..., :1], align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(
            tp.zeros(1, 1, 2, 2, 2), tp.zeros(1, 1, 1, 1, 3), "bicubic", align_corners=False
        )
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        F.grid_sample(x, g.double(), align_corners=False)


def test_affine_grid_errors() -> None:
    with pytest.raises(ValueError, match="shape Nx2x3 for size"):
        F.affine_grid(tp.zeros(1, 3, 4), [1, 1, 2, 2], align_corners=False)
    with pytest.raises(NotImplementedError, match="affine_grid only supports 4D and 5D sizes"):
        F.affine_grid(tp.zeros(1, 2, 3), [1, 2, 2], align_corners=False)
    with pytest.raises(ValueError, match="Expected theta to have floating point type"):
        F.affine_grid(tp.zeros(1, 2, 3, dtype=tp.int64), [1, 1, 2, 2], align_corners=False)


def test_pixel_shuffle_errors() -> None:
    with pytest.raises(RuntimeError, match="is not divisible by 4"):
        F.pixel_shuffle(tp.zeros(1, 3, 2, 2), 2)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\)=3 is not divisible by 2"):
        F.pixel_unshuffle(tp.zeros(1, 1, 4, 3), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        F.pixel_shuffle(tp.zeros(4, 4), 2)
    # any number of leading batch dims
    assert F.pixel_shuffle(tp.zeros(2, 3, 8, 1, 2), 2).shape == (2, 3, 2, 2, 4)


def test_modules_as_pytorch() -> None:
    up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
    assert repr(up) == "Upsample(scale_factor=2.0, mode='bilinear')"
    assert nn.Upsample(size=(3, 4)).extra_repr() == "size=(3, 4), mode='nearest'"
    assert up.state_dict() == {} and list(up.parameters()) == []
    x = tp.randn(1, 2, 3, 3)
    np.testing.assert_allclose(
        up(x).numpy(), F.interpolate(x, scale_factor=2.0, mode="bilinear").numpy()
    )
    bi = nn.UpsamplingBilinear2d(scale_factor=2)
    assert (bi.mode, bi.align_corners) == ("bilinear", True)
    assert nn.UpsamplingNearest2d(size=5)(x).shape == (1, 2, 5, 5)
    ps, pu = nn.PixelShuffle(2), nn.PixelUnshuffle(2)
    assert repr(ps) == "PixelShuffle(upscale_factor=2)"
    assert repr(pu) == "PixelUnshuffle(downscale_factor=2)"
    y = tp.randn(2, 8, 3, 3)
    np.testing.assert_array_equal(pu(ps(y)).numpy(), y.numpy())


def test_deprecated_upsample_functions_warn() -> None:
    x = tp.randn(1, 1, 2, 2)
    with pytest.warns(UserWarning, match="upsample_bilinear` is deprecated"):
        y = F.upsample_bilinear(x, scale_factor=2)
    np.testing.assert_allclose(
        y.numpy(), F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True).numpy()
    )
    with pytest.warns(UserWarning, match="upsample` is deprecated"):
        F.upsample(x, size=3)
    with pytest.warns(UserWarning, match="upsample_nearest` is deprecated"):
        F.upsample_nearest(x, size=3)


def test_a_nonfinite_input_stays_where_it_is_read() -> None:
    # small dims resample by a matrix product (Note [Dense resampling]), which would spread an
    # inf to every output of its row; such inputs take the gathers, as PyTorch's kernels read
    x = tp.zeros(1, 1, 6, 6)
    x[0, 0, 0, 0] = float("inf")
    y = F.interpolate(x, size=[12, 12], mode="bilinear", align_corners=False).numpy()
    assert np.isinf(y[0, 0, 0, 0]) and np.isfinite(y[0, 0, 4:, :]).all()
    assert np.isfinite(y[0, 0, :, 4:]).all()


def test_meta_tensors_give_shapes() -> None:
    x = tp.empty(2, 3, 5, 5, device="meta")
    assert F.interpolate(x, scale_factor=1.5, mode="bicubic").shape == (2, 3, 7, 7)
    grid = tp.empty(2, 4, 6, 2, device="meta")
    assert F.grid_sample(x, grid, align_corners=False).shape == (2, 3, 4, 6)
    gi, gg = tp.grid_sampler_2d_backward(
        tp.empty(2, 3, 4, 6, device="meta"), x, grid, 0, 0, False, [True, True]
    )
    assert gi.shape == (2, 3, 5, 5) and gg.shape == (2, 4, 6, 2)


def test_vmap_folds_into_the_batch_and_gives_per_sample_gradients() -> None:
    x = tp.randn(3, 2, 2, 4, 4)
    grid = tp.rand(3, 2, 3, 3, 2) * 2 - 1
    got = tp.vmap(lambda a, g: F.grid_sample(a, g, align_corners=False))(x, grid)
    want = tp.stack([F.grid_sample(x[i], grid[i], align_corners=False) for i in range(3)])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)

    def loss(a: tp.Tensor) -> tp.Tensor:
        return F.interpolate(a[None], scale_factor=2, mode="bilinear").square().sum()

    per_sample = tp.func.vmap(tp.func.grad(loss))(x[:, 0])
    for i in range(3):
        xi = x[i, 0].detach().clone()
        xi.requires_grad_(True)
        loss(xi).backward()
        np.testing.assert_allclose(per_sample[i].numpy(), xi.grad.numpy(), rtol=1e-5, atol=1e-6)
