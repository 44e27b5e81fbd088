"""Frozen PyTorch values for the training-utility tests (tests/nn/test_init_utils.py,
tests/utils/test_data.py): nn.init gains, fans and sample statistics, clip norms, collate
outputs and parametrization state_dict keys.

Run with a Python that has torch (``/work/torchenv/bin/python tools/gen_trainutils.py``);
writes tests/nn/data/trainutils.json.
"""

from __future__ import annotations

import collections
import json
import math
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.utils.data import default_collate, default_convert

OUT = Path(__file__).resolve().parents[1] / "tests" / "nn" / "data" / "trainutils.json"


def err(fn):
    try:
        fn()
    except Exception as e:
        return [type(e).__name__, str(e)]
    return None


def gains():
    names = [
        "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "sigmoid", "tanh", "relu", "selu",
    ]  # fmt: skip
    out = {n: nn.init.calculate_gain(n) for n in names}
    out["leaky_relu"] = nn.init.calculate_gain("leaky_relu")
    out["leaky_relu:0.2"] = nn.init.calculate_gain("leaky_relu", 0.2)
    out["leaky_relu:3"] = nn.init.calculate_gain("leaky_relu", 3)
    errors = {
        "unknown": err(lambda: nn.init.calculate_gain("softsign_x")),
        "bad_param": err(lambda: nn.init.calculate_gain("leaky_relu", True)),
    }
    return out, errors


def fans():
    shapes = [[5, 3], [8, 4, 3], [6, 2, 3, 3], [2, 3, 1, 2, 2]]
    return [[s, list(nn.init._calculate_fan_in_and_fan_out(torch.empty(s)))] for s in shapes]


def init_stats():
    torch.manual_seed(0)
    shape = [256, 128, 3]
    cases = {
        "xavier_uniform_": lambda t: nn.init.xavier_uniform_(t, gain=2.0),
        "xavier_normal_": lambda t: nn.init.xavier_normal_(t, gain=0.5),
        "kaiming_uniform_": lambda t: nn.init.kaiming_uniform_(t, a=0.3, mode="fan_out"),
        "kaiming_normal_": lambda t: nn.init.kaiming_normal_(t, nonlinearity="relu"),
        "trunc_normal_": lambda t: nn.init.trunc_normal_(t, mean=0.5, std=2.0, a=-1.0, b=1.5),
        "trunc_normal_narrow": lambda t: nn.init.trunc_normal_(t, std=1.0, a=2.0, b=2.5),
        "uniform_": lambda t: nn.init.uniform_(t, -3.0, 5.0),
        "normal_": lambda t: nn.init.normal_(t, 1.0, 0.25),
    }
    out = {}
    for name, f in cases.items():
        t = f(torch.empty(shape, dtype=torch.float64))
        out[name] = {
            "mean": t.mean().item(), "std": t.std().item(),
            "min": t.min().item(), "max": t.max().item(),
        }  # fmt: skip
    return out


def init_errors():
    return {
        "dirac_2d": err(lambda: nn.init.dirac_(torch.empty(3, 3))),
        "dirac_groups": err(lambda: nn.init.dirac_(torch.empty(5, 3, 3), groups=2)),
        "eye_3d": err(lambda: nn.init.eye_(torch.empty(2, 2, 2))),
        "sparse_1d": err(lambda: nn.init.sparse_(torch.empty(3), 0.1)),
        "orthogonal_1d": err(lambda: nn.init.orthogonal_(torch.empty(3))),
        "fan_1d": err(lambda: nn.init.xavier_uniform_(torch.empty(3))),
        "mode": err(lambda: nn.init.kaiming_normal_(torch.empty(3, 3), mode="fan_x")),
    }


def dirac():
    w = nn.init.dirac_(torch.empty(6, 4, 3, 3), groups=2)
    return [list(map(int, i)) for i in w.nonzero().tolist()]


def clip():
    out = []
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(s).astype(np.float32) for s in ([3, 4], [5], [2, 2, 2])]
    for norm_type in [2.0, 1.0, 3.5, math.inf]:
        for max_norm in [0.5, 100.0]:
            ps = [nn.Parameter(torch.zeros(g.shape)) for g in grads]
            for p, g in zip(ps, grads, strict=True):
                p.grad = torch.tensor(g)
            total = nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
            out.append(
                {
                    "norm_type": "inf" if norm_type == math.inf else norm_type,
                    "max_norm": max_norm,
                    "total": total.item(),
                    "clipped": [p.grad.tolist() for p in ps],
                }
            )
    value = [nn.Parameter(torch.zeros(g.shape)) for g in grads]
    for p, g in zip(value, grads, strict=True):
        p.grad = torch.tensor(g)
    nn.utils.clip_grad_value_(value, 0.3)
    return {
        "grads": [g.tolist() for g in grads],
        "norm": out,
        "value_0.3": [p.grad.tolist() for p in value],
    }


Point = collections.namedtuple("Point", ["x", "y"])


def describe(x):
    """A JSON form of a collate result: tensors as {dtype, shape, values}."""
    if isinstance(x, torch.Tensor):
        return {"tensor": str(x.dtype).removeprefix("torch."), "shape": list(x.shape),
                "values": x.tolist()}  # fmt: skip
    if isinstance(x, Point):
        return {"Point": [describe(v) for v in x]}
    if isinstance(x, dict):
        return {"dict": {k: describe(v) for k, v in x.items()}}
    if isinstance(x, tuple):
        return {"tuple": [describe(v) for v in x]}
    if isinstance(x, list):
        return {"list": [describe(v) for v in x]}
    if isinstance(x, np.ndarray):
        return {"ndarray": x.tolist()}
    return {type(x).__name__: x}


def collate():
    cases = {
        "floats": [1.0, 2.5],
        "ints": [1, 2, 3],
        "bools": [True, False],
        "strs": ["a", "b"],
        "tensors": [torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])],
        "tuples": [(torch.tensor(1), 1.0, "x"), (torch.tensor(2), 2.0, "y")],
        "lists": [[1, 2.0], [3, 4.0]],
        "dicts": [{"a": 1, "b": torch.zeros(2)}, {"a": 2, "b": torch.ones(2)}],
        "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
        "ndarrays": [np.arange(3, dtype=np.float32), np.arange(3, 6, dtype=np.float32)],
        "np_scalars": [np.float64(1.5), np.float64(2.5)],
        "np_int_scalars": [np.int32(1), np.int32(7)],
        "nested": [{"x": [np.int64(1), (2, 3.0)]}, {"x": [np.int64(4), (5, 6.0)]}],
    }
    out = {k: describe(default_collate(v)) for k, v in cases.items()}
    errors = {
        "object": err(lambda: default_collate([object(), object()])),
        "ragged": err(lambda: default_collate([[1, 2], [3]])),
        "str_array": err(lambda: default_collate([np.array(["a"]), np.array(["b"])])),
        "sizes": err(lambda: default_collate([torch.zeros(2), torch.zeros(3)])),
    }
    convert = {
        "ndarray": describe(default_convert(np.arange(3))),
        "tuple": describe(default_convert((np.float32(1.0), "s", 3))),
        "dict": describe(default_convert({"a": np.ones(2), "b": [1, 2]})),
    }
    return {"out": out, "errors": errors, "convert": convert}


def parametrize_keys():
    class Sym(nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

    out = {}
    m = nn.Linear(3, 3)
    nn.utils.parametrize.register_parametrization(m, "weight", Sym())
    out["one"] = [list(m.state_dict()), type(m).__name__]
    nn.utils.parametrize.register_parametrization(m, "weight", Sym())
    out["two"] = list(m.state_dict())
    m = nn.Linear(3, 3)
    nn.utils.parametrizations.weight_norm(m)
    out["weight_norm"] = list(m.state_dict())
    m = nn.Linear(3, 3)
    nn.utils.parametrizations.spectral_norm(m)
    nn.utils.parametrizations.weight_norm(m, "bias", dim=None)
    out["spectral_norm_and_bias_weight_norm"] = list(m.state_dict())
    s = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    nn.utils.parametrizations.weight_norm(s[1])
    out["nested"] = list(s.state_dict())
    return out


def main():
    g, gerr = gains()
    data = {
        "gains": g,
        "gain_errors": gerr,
        "fans": fans(),
        "init_stats": init_stats(),
        "init_errors": init_errors(),
        "dirac": dirac(),
        "clip": clip(),
        "collate": collate(),
        "parametrize_keys": parametrize_keys(),
    }
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
