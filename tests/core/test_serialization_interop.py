"""PyTorch checkpoints and safetensors files load into tensorplug (issue 32, item 3). The
fixtures come from tools/gen_torch_checkpoints.py (torch 2.13, safetensors 0.8)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp

pytest.importorskip("tensorplug_cpu")

DATA = Path(__file__).parent / "data" / "serialization"
EXPECTED = json.loads((DATA / "torch_expected.json").read_text())


def mlp() -> tp.nn.Module:
    return tp.nn.Sequential(tp.nn.Linear(4, 8), tp.nn.ReLU(), tp.nn.Linear(8, 3))


def check_outputs(model: tp.nn.Module) -> None:
    with tp.no_grad():
        y = model(tp.tensor(EXPECTED["x"]))
    np.testing.assert_allclose(np.asarray(y.tolist()), EXPECTED["y"], rtol=1e-5, atol=1e-6)


def test_a_torch_state_dict_and_adam_state_load_and_give_torchs_outputs():
    ckpt = tp.load(DATA / "torch_mlp.pt")
    model = mlp()
    model.load_state_dict(ckpt["model"])
    check_outputs(model)
    optim = ckpt["optim"]
    for i, s in EXPECTED["optim_state"].items():
        state = optim["state"][int(i)]
        assert state["step"].item() == s["step"]
        np.testing.assert_allclose(np.asarray(state["exp_avg"].tolist()), s["exp_avg"])
    for g, want in zip(optim["param_groups"], EXPECTED["param_groups"], strict=True):
        assert g["lr"] == want["lr"] and list(g["betas"]) == want["betas"]
        assert g["params"] == want["params"]
    adam = tp.optim.Adam(model.parameters(), lr=0.01)
    adam.load_state_dict(optim)
    assert adam.state_dict()["param_groups"][0]["lr"] == 0.01


def test_torch_tensors_keep_dtype_shape_strides_and_shared_storage():
    d = tp.load(DATA / "torch_tensors.pt", map_location="cpu")
    want = {"f16": tp.float16, "bf16": tp.bfloat16, "i64": tp.int64, "u8": tp.uint8,
            "b": tp.bool, "c64": tp.complex64, "scalar": tp.float64}  # fmt: skip
    for name, dtype in want.items():
        assert d[name].dtype is dtype, name
    for name, value in EXPECTED["tensors"].items():
        got = d[name]
        assert got.shape == tuple(
            np.shape(value.get("real", value) if isinstance(value, dict) else value)
        ), name
        if isinstance(value, dict):
            assert got.tolist() == [
                complex(r, i) for r, i in zip(value["real"], value["imag"], strict=True)
            ]
        else:
            assert got.tolist() == value, name
        item = got.dtype.itemsize
        assert [s // item for s in got.tp_data.strides] == EXPECTED["strides"][name], name
    assert type(d["param"]) is tp.nn.Parameter and type(d["frozen"]) is tp.nn.Parameter
    assert d["size"] == (2, 3) and d["dtype"] is tp.float16
    assert d["meta"].device == tp.device("meta") and d["meta"].shape == (2, 3)
    # views of one storage share it, as in PyTorch
    d["base"].add_(100)
    assert d["view"].tolist()[0] == [102.0, 103.0, 104.0]
    assert d["t"].tolist()[0] == [100.0, 104.0, 108.0]


def test_safetensors_round_trip_and_a_file_of_safetensors_loads(tmp_path):
    pytest.importorskip("safetensors")
    model = mlp()
    model.load_state_dict(tp.serialization.load_safetensors(DATA / "mlp.safetensors"))
    check_outputs(model)
    path = tmp_path / "m.safetensors"
    sd = {**model.state_dict(), "bf": tp.tensor([1.5, -2.0]).to(tp.bfloat16)}
    tp.serialization.save_safetensors(sd, path, metadata={"format": "pt"})
    back = tp.serialization.load_safetensors(path)
    assert list(back) == sorted(sd) or set(back) == set(sd)
    for k, v in sd.items():
        assert back[k].dtype is v.dtype and back[k].tolist() == v.tolist()


def test_against_torch_in_process(tmp_path):
    """Where torch is importable: its views, dtypes and optimizer states, saved now."""
    torch = pytest.importorskip("torch")
    base = torch.randn(4, 6, dtype=torch.float64)
    obj = {
        "base": base,
        "cols": base[:, 1::2],
        "t": base.t(),
        "cl": torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last),
        "ints": torch.arange(-5, 5, dtype=torch.int16).view(2, 5)[:, 1:],
        "half": torch.randn(3).half(),
        "bf": torch.randn(3).bfloat16(),
        "cd": torch.randn(2, dtype=torch.complex128),
        "empty": torch.zeros(0, 3),
    }
    path = tmp_path / "t.pt"
    torch.save(obj, path)
    back = tp.load(path)
    for k, v in obj.items():
        want = v.float() if v.dtype == torch.bfloat16 else v
        got = back[k].to(tp.float32) if v.dtype == torch.bfloat16 else back[k]
        assert tuple(got.shape) == tuple(v.shape), k
        flat = np.asarray(got.tolist()).reshape(tuple(v.shape))
        np.testing.assert_array_equal(flat, want.numpy(), err_msg=k)
    back["base"].mul_(0)
    assert back["cols"].tolist() == [[0.0] * 3] * 4
