"""Generate tests/nn/data/conv.npz and conv.json: PyTorch's results for the convolution and
padding tests (tests/nn/test_conv.py), so that they compare with PyTorch where it is not
installed. Run with an interpreter that has torch:

    /work/torchenv/bin/python tools/gen_conv_fixtures.py

Each case records its inputs, PyTorch's output and its gradients for a fixed output gradient
(computed in float64 from float32 values, stored as float32), the module cases a state_dict and PyTorch's output, the error cases the exception
type and message PyTorch gives, and a small conv net the losses of 8 SGD steps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

DATA = Path(__file__).resolve().parents[1] / "tests" / "nn" / "data"

# (name, F function, input shape, weight shape, bias?, keyword arguments)
CONV_CASES: list[tuple[str, str, tuple[int, ...], tuple[int, ...], bool, dict[str, Any]]] = [
    ("conv1d_stride_padding", "conv1d", (2, 3, 9), (4, 3, 3), True, {"stride": 2, "padding": 1}),
    ("conv2d_groups_dilation", "conv2d", (2, 4, 7, 6), (6, 2, 3, 2), True,
     {"stride": [2, 1], "padding": [1, 2], "dilation": [1, 2], "groups": 2}),
    ("conv2d_same_even_kernel", "conv2d", (2, 3, 7, 8), (4, 3, 4, 3), False,
     {"padding": "same", "dilation": [1, 2]}),
    ("conv2d_depthwise", "conv2d", (2, 4, 6, 6), (4, 1, 3, 3), True, {"padding": 1, "groups": 4}),
    ("conv2d_unbatched_valid", "conv2d", (3, 6, 5), (2, 3, 2, 2), True, {"padding": "valid"}),
    ("conv3d_dilation", "conv3d", (1, 2, 5, 4, 5), (3, 2, 2, 3, 2), True,
     {"padding": 1, "dilation": [2, 1, 1]}),
    ("conv_transpose1d_dilation", "conv_transpose1d", (2, 3, 5), (3, 2, 3), True,
     {"stride": 3, "output_padding": 2, "dilation": 2}),
    ("conv_transpose2d_groups", "conv_transpose2d", (2, 4, 5, 4), (4, 3, 3, 2), True,
     {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    ("conv_transpose3d", "conv_transpose3d", (1, 2, 3, 3, 2), (2, 2, 2, 2, 2), True,
     {"stride": 2}),
]  # fmt: skip

# (name, input shape, pad, mode, value)
PAD_CASES: list[tuple[str, tuple[int, ...], list[int], str, float | None]] = [
    ("constant_3d_negative", (2, 3, 4, 5), [1, -2, 0, 3, 2, 1], "constant", 1.5),
    ("reflect_1d", (2, 3, 6), [2, 3], "reflect", None),
    ("reflect_2d_negative", (2, 3, 5, 4), [2, 1, -1, 3], "reflect", None),
    ("reflect_3d", (1, 2, 4, 3, 5), [1, 2, 0, 1, 2, 2], "reflect", None),
    ("replicate_2d", (3, 5, 4), [3, 1, 2, 0], "replicate", None),
    ("replicate_3d", (1, 2, 3, 3, 3), [2, 1, 1, 0, 0, 2], "replicate", None),
    ("circular_1d", (2, 3, 5), [2, 4], "circular", None),
    ("circular_2d_negative", (2, 3, 5, 4), [-1, 2, 3, 1], "circular", None),
]

# (name, call, input shape, weight shape or None, bias shape or None, keyword arguments)
ERROR_CASES: list[tuple[str, str, tuple[int, ...], Any, Any, dict[str, Any]]] = [
    ("input_rank", "conv2d", (5, 5), (4, 3, 3, 3), None, {}),
    ("input_rank_1d", "conv1d", (2, 3, 5, 5), (4, 3, 3), None, {}),
    ("channels", "conv2d", (2, 3, 5, 5), (4, 2, 3, 3), None, {}),
    ("groups_divide_weight", "conv2d", (2, 3, 5, 5), (3, 1, 3, 3), None, {"groups": 2}),
    ("groups_channels", "conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, {"groups": 2}),
    ("bias_size", "conv2d", (2, 3, 5, 5), (4, 3, 3, 3), (5,), {}),
    ("kernel_too_big", "conv2d", (2, 3, 5, 5), (4, 3, 7, 7), None, {}),
    ("stride", "conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, {"stride": 0}),
    ("padding", "conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, {"padding": -1}),
    ("dilation", "conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, {"dilation": 0}),
    ("groups", "conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, {"groups": 0}),
    ("same_strided", "conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None,
     {"padding": "same", "stride": 2}),
    ("padding_string", "conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, {"padding": "foo"}),
    ("transposed_channels", "conv_transpose2d", (2, 3, 5, 5), (4, 3, 3, 3), None, {}),
    ("output_padding", "conv_transpose2d", (2, 3, 5, 5), (3, 2, 3, 3), None,
     {"output_padding": 1}),
    ("unfold_blocks", "unfold", (2, 3, 5, 5), None, None, {"kernel_size": 7}),
    ("unfold_padding", "unfold", (2, 3, 5, 5), None, None, {"kernel_size": 3, "padding": -1}),
    ("fold_blocks", "fold", (2, 27, 10), None, None, {"output_size": [5, 5], "kernel_size": 3}),
    ("pad_reflect_too_big", "pad", (2, 3, 4), None, None, {"pad": [4, 1], "mode": "reflect"}),
    ("pad_odd", "pad", (2, 3, 4), None, None, {"pad": [1, 2, 3], "mode": "constant"}),
    ("pad_circular_wraps", "pad", (2, 3, 4), None, None, {"pad": [5, 0], "mode": "circular"}),
    ("pad_reflect_value", "pad", (2, 3, 4), None, None,
     {"pad": [1, 1], "mode": "reflect", "value": 2.0}),
]  # fmt: skip

# modules built from a seed: (name, class, constructor arguments, input shape, forward kwargs)
MODULE_CASES: list[tuple[str, str, list[Any], dict[str, Any], tuple[int, ...], dict[str, Any]]] = [
    ("conv2d_reflect", "Conv2d", [3, 4, 3], {"padding": 1, "padding_mode": "reflect"},
     (2, 3, 6, 5), {}),
    ("conv2d_circular_same", "Conv2d", [4, 6, [3, 2]],
     {"padding": "same", "groups": 2, "padding_mode": "circular", "bias": False}, (1, 4, 5, 5), {}),
    ("conv1d_replicate", "Conv1d", [2, 3, 3], {"padding": 2, "padding_mode": "replicate",
                                               "stride": 2}, (2, 2, 8), {}),
    ("conv3d", "Conv3d", [2, 2, 2], {"dilation": 2}, (1, 2, 5, 5, 5), {}),
    ("conv_transpose2d_output_size", "ConvTranspose2d", [2, 3, 3], {"stride": 2},
     (1, 2, 4, 4), {"output_size": [10, 10]}),
    ("conv_transpose1d", "ConvTranspose1d", [3, 2, 2], {"stride": 2, "padding": 1,
                                                        "output_padding": 1}, (2, 3, 5), {}),
]  # fmt: skip

REPRS: list[tuple[str, list[Any], dict[str, Any]]] = [
    ("Conv1d", [3, 4, 3], {"stride": 2, "padding": 1, "padding_mode": "reflect"}),
    ("Conv2d", [4, 6, [3, 2]], {"padding": "same", "dilation": [2, 1], "groups": 2}),
    ("Conv2d", [1, 6, 5], {}),
    ("Conv3d", [2, 3, 2], {"bias": False, "padding": 1}),
    ("ConvTranspose2d", [4, 6, 3], {"stride": 2, "padding": 1, "output_padding": 1,
                                    "groups": 2}),
    ("ConvTranspose1d", [3, 2, 3], {"dilation": 2}),
    ("ZeroPad2d", [2], {}),
    ("ConstantPad3d", [[1, 2, 0, 1, 2, 2], 1.5], {}),
    ("ReflectionPad1d", [[2, 1]], {}),
    ("ReplicationPad2d", [1], {}),
    ("CircularPad3d", [1], {}),
    ("Fold", [[4, 5], 2], {}),
    ("Unfold", [3], {"padding": 1}),
]  # fmt: skip


def _trajectory_net(nn: Any) -> Any:
    """The net of the trajectory case, built from ``torch.nn`` or ``tensorplug.nn`` (the test
    builds it the same way)."""
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, padding_mode="reflect"),
        nn.ReLU(),
        nn.Conv2d(4, 6, 3, stride=2, groups=2),
        nn.ReLU(),
        nn.ConvTranspose2d(6, 2, 2, stride=2),
        nn.Flatten(),
        nn.Linear(72, 3),
    )


def main() -> None:
    gen = np.random.default_rng(35)

    class _Rng:  # float32 values in float64 arrays: exact when stored as float32
        def standard_normal(self, shape: Any) -> np.ndarray:
            return gen.standard_normal(shape).astype(np.float32).astype(np.float64)

    rng = _Rng()
    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, Any] = {"conv": [], "pad": [], "errors": [], "modules": [], "reprs": []}

    def t(a: np.ndarray) -> torch.Tensor:
        return torch.tensor(a, requires_grad=True)

    for name, fn, xs, ws, bias, kw in CONV_CASES:
        x, w = rng.standard_normal(xs), rng.standard_normal(ws)
        tr = fn.startswith("conv_transpose")
        groups = kw.get("groups", 1)
        b = rng.standard_normal(ws[1] * groups if tr else ws[0]) if bias else None
        tx, tw = t(x), t(w)
        tb = t(b) if b is not None else None
        y = getattr(F, fn)(tx, tw, tb, **kw)
        g = rng.standard_normal(tuple(y.shape))
        y.backward(torch.tensor(g))
        arrays.update({f"{name}/x": x, f"{name}/w": w, f"{name}/y": y.detach().numpy(),
                       f"{name}/g": g, f"{name}/gx": tx.grad.numpy(), f"{name}/gw": tw.grad.numpy()})  # fmt: skip
        if tb is not None:
            arrays[f"{name}/b"], arrays[f"{name}/gb"] = b, tb.grad.numpy()
        meta["conv"].append({"name": name, "fn": fn, "bias": bias, "kwargs": kw})

    for name, shape, pad, mode, value in PAD_CASES:
        x = rng.standard_normal(shape)
        tx = t(x)
        y = F.pad(tx, pad, mode, value)
        g = rng.standard_normal(tuple(y.shape))
        y.backward(torch.tensor(g))
        arrays.update({f"{name}/x": x, f"{name}/y": y.detach().numpy(), f"{name}/g": g,
                       f"{name}/gx": tx.grad.numpy()})  # fmt: skip
        meta["pad"].append({"name": name, "pad": pad, "mode": mode, "value": value})

    for name, call, xs, ws, bs, kw in ERROR_CASES:
        x = torch.randn(xs)
        try:
            if call == "pad":
                F.pad(x, **kw)
            elif call in ("unfold", "fold"):
                getattr(F, call)(x, **kw)
            else:
                w = torch.randn(ws)
                b = torch.randn(bs) if bs is not None else None
                getattr(F, call)(x, w, b, **kw)
        except Exception as e:  # recorded: the type and first line PyTorch gives
            meta["errors"].append({
                "name": name, "call": call, "input": xs, "weight": ws, "bias": bs, "kwargs": kw,
                "type": type(e).__name__, "message": str(e).splitlines()[0],
            })  # fmt: skip
        else:
            raise AssertionError(f"{name}: PyTorch raised nothing")

    for name, cls, args, kwargs, xs, fkw in MODULE_CASES:
        torch.manual_seed(0)
        m = getattr(torch.nn, cls)(*args, **kwargs).double()
        x = rng.standard_normal(xs)
        y = m(torch.tensor(x), **fkw)
        for k, v in m.state_dict().items():
            arrays[f"{name}/state/{k}"] = v.numpy()
        arrays[f"{name}/x"], arrays[f"{name}/y"] = x, y.detach().numpy()
        meta["modules"].append({
            "name": name, "cls": cls, "args": args, "kwargs": kwargs, "forward": fkw,
            "keys": list(m.state_dict()), "repr": repr(m),
        })  # fmt: skip

    # a small conv net's SGD trajectory (float64): the losses of 8 steps from torch's init
    torch.manual_seed(0)
    net = _trajectory_net(torch.nn).double()
    x = rng.standard_normal((8, 1, 8, 8))
    y = np.arange(8) % 3
    for k, v in net.state_dict().items():
        arrays[f"trajectory/state/{k}"] = v.numpy().copy()  # the step changes it in place
    arrays["trajectory/x"] = x
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    losses = []
    for _ in range(8):
        opt.zero_grad()
        loss = F.cross_entropy(net(torch.tensor(x)), torch.tensor(y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    meta["trajectory"] = {"targets": y.tolist(), "losses": losses, "lr": 0.1}

    for cls, args, kwargs in REPRS:
        meta["reprs"].append({"cls": cls, "args": args, "kwargs": kwargs,
                              "repr": repr(getattr(torch.nn, cls)(*args, **kwargs))})  # fmt: skip

    DATA.mkdir(parents=True, exist_ok=True)
    # stored as float32 (the inputs are drawn as float32 values, so they are exact; the
    # results are rounded once): the tests compute in float64 and compare to 1e-5
    np.savez_compressed(DATA / "conv.npz", **{k: v.astype(np.float32) for k, v in arrays.items()})
    (DATA / "conv.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(arrays)} arrays, {sum(a.nbytes for a in arrays.values())} bytes raw")


if __name__ == "__main__":
    main()
