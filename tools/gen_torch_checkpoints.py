"""Write the PyTorch and safetensors fixtures of tests/core/test_serialization_interop.py.

    /work/torchenv/bin/python tools/gen_torch_checkpoints.py   # torch 2.13, safetensors 0.8

Writes, under tests/core/data/serialization/:
- torch_mlp.pt: ``{"model": state_dict, "optim": Adam state_dict}`` of a small MLP after one
  Adam step (torch.save's zip archive);
- torch_tensors.pt: views sharing a storage, dtypes, a Parameter, a 0-d tensor;
- mlp.safetensors: the MLP's state_dict through safetensors.torch.save_file;
- torch_expected.json: the MLP's input and PyTorch's output, and the tensors' values.
"""

import json
from pathlib import Path

import torch
from safetensors.torch import save_file

OUT = Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "serialization"
OUT.mkdir(parents=True, exist_ok=True)
torch.manual_seed(0)

model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(5, 4)
model(x).square().sum().backward()
opt.step()
with torch.no_grad():
    y = model(x)
torch.save({"model": model.state_dict(), "optim": opt.state_dict()}, OUT / "torch_mlp.pt")
save_file({k: v.contiguous() for k, v in model.state_dict().items()}, OUT / "mlp.safetensors")

base = torch.arange(12, dtype=torch.float32)
tensors = {
    "base": base,
    "view": base[2:8].view(2, 3),  # offset 2 into base's storage
    "t": base.view(3, 4).t(),  # strides (1, 4)
    "f16": torch.tensor([1.5, -2.25], dtype=torch.float16),
    "bf16": torch.tensor([[1.5, -2.0], [3.0, 0.5]], dtype=torch.bfloat16),
    "i64": torch.tensor([1, -2, 3], dtype=torch.int64),
    "u8": torch.tensor([0, 255], dtype=torch.uint8),
    "b": torch.tensor([True, False]),
    "c64": torch.tensor([1 + 2j], dtype=torch.complex64),
    "scalar": torch.tensor(2.5, dtype=torch.float64),
    "param": torch.nn.Parameter(torch.tensor([1.0, 2.0])),
    "frozen": torch.nn.Parameter(torch.tensor([3.0]), requires_grad=False),
    "size": torch.Size([2, 3]),
    "dtype": torch.float16,
    "meta": torch.empty(2, 3, device="meta"),
}
torch.save(tensors, OUT / "torch_tensors.pt")


def plain(v):
    if isinstance(v, torch.Tensor):
        v = v.detach()
        if v.is_complex():
            return {"real": v.real.tolist(), "imag": v.imag.tolist()}
        return v.float().tolist() if v.dtype == torch.bfloat16 else v.tolist()
    return v


expected = {
    "x": x.tolist(),
    "y": y.tolist(),
    "tensors": {k: plain(v) for k, v in tensors.items() if k not in ("size", "dtype", "meta")},
    "strides": {k: list(v.stride()) for k, v in tensors.items() if isinstance(v, torch.Tensor)},
    "offsets": {k: v.storage_offset() for k, v in tensors.items() if isinstance(v, torch.Tensor)},
    "optim_state": {
        str(i): {"step": float(s["step"]), "exp_avg": s["exp_avg"].tolist()}
        for i, s in opt.state_dict()["state"].items()
    },
    "param_groups": [
        {k: v for k, v in g.items() if k in ("lr", "betas", "eps", "params")}
        for g in opt.state_dict()["param_groups"]
    ],
}
(OUT / "torch_expected.json").write_text(json.dumps(expected, indent=1) + "\n")
