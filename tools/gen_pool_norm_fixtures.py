"""Freeze PyTorch's values for tests/nn/test_pool_norm_parity.py (pooling, normalization,
activations; BatchNorm2d through training and evaluation, and its state_dict), so that the
comparison runs where torch is not installed. Run with a Python that has torch:

    /work/torchenv/bin/python tools/gen_pool_norm_fixtures.py

It writes tests/nn/data/pool_norm_torch.npz (float64 values: a few KB, compressed).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "nn" / "data" / "pool_norm_torch.npz"


def _cases() -> object:
    spec = importlib.util.spec_from_file_location("cases", ROOT / "tests/nn/pool_norm_cases.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_case(cases: object, name: str) -> dict[str, np.ndarray]:
    shape, fn = cases.CASES[name]  # type: ignore[attr-defined]
    salt = sorted(cases.CASES).index(name)  # type: ignore[attr-defined]
    x = torch.tensor(cases.data(shape, salt), requires_grad=True)  # type: ignore[attr-defined]
    out = fn(F, x)
    outs = out if isinstance(out, tuple) else (out,)
    g = torch.tensor(cases.upstream(tuple(outs[0].shape)))  # type: ignore[attr-defined]
    (outs[0] * g).sum().backward()
    r = {f"{name}/out{i}": o.detach().numpy() for i, o in enumerate(outs)}
    r[f"{name}/grad"] = x.grad.numpy()
    return r


def batch_norm_run(cases: object, momentum: float | None) -> dict[str, np.ndarray]:
    tag = f"bn_m{momentum}"
    bn = nn.BatchNorm2d(3, momentum=momentum).double()
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.0, 0.5, -1.5], dtype=torch.float64))
        bn.bias.copy_(torch.tensor([0.0, 0.2, -0.1], dtype=torch.float64))
    r: dict[str, np.ndarray] = {}
    for step in range(cases.BN_STEPS):  # type: ignore[attr-defined]
        x = torch.tensor(cases.data(cases.BN_SHAPE, 100 + step), requires_grad=True)  # type: ignore[attr-defined]
        y = bn(x)
        (y * torch.tensor(cases.upstream(tuple(y.shape)))).sum().backward()  # type: ignore[attr-defined]
        r[f"{tag}/train{step}"] = y.detach().numpy()
        r[f"{tag}/grad{step}"] = x.grad.numpy()
    r[f"{tag}/weight_grad"] = bn.weight.grad.numpy()
    r[f"{tag}/bias_grad"] = bn.bias.grad.numpy()
    for k, v in bn.state_dict().items():
        r[f"{tag}/state/{k}"] = v.numpy().copy()
    bn.eval()
    x = torch.tensor(cases.data(cases.BN_SHAPE, 200))  # type: ignore[attr-defined]
    r[f"{tag}/eval_input"] = x.numpy()
    r[f"{tag}/eval"] = bn(x).detach().numpy()
    bn.train()
    r[f"{tag}/train_after_load"] = bn(x).detach().numpy()
    return r


def main() -> None:
    cases = _cases()
    torch.manual_seed(0)
    arrays: dict[str, np.ndarray] = {}
    for name in cases.CASES:  # type: ignore[attr-defined]
        arrays.update(run_case(cases, name))
    for momentum in (0.1, None):
        arrays.update(batch_norm_run(cases, momentum))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(arrays)} arrays)")


if __name__ == "__main__":
    main()
