"""Writes tests/nn/data/attention.npz: outputs and gradients of PyTorch's attention functions
and modules (F.scaled_dot_product_attention, nn.MultiheadAttention, the transformer layers)
for fixed inputs and weights, so tests/nn/test_attention.py compares tensorplug with PyTorch
where torch is not installed. Run with a Python that has torch::

    python tools/gen_attention_fixtures.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

OUT = Path(__file__).resolve().parents[1] / "tests" / "nn" / "data" / "attention.npz"

# name -> (module factory, call options); every module has dropout 0 and embed dim 8
MHA = {
    "mha": {},
    "mha_batch_first": {"batch_first": True},
    "mha_bias_kv_zero_attn": {"add_bias_kv": True, "add_zero_attn": True},
    "mha_kdim_vdim": {"kdim": 3, "vdim": 5},
    "mha_no_bias": {"bias": False},
}


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    out: dict[str, np.ndarray] = {}

    def put(prefix: str, **arrays: object) -> None:
        for k, v in arrays.items():
            out[f"{prefix}/{k}"] = v.detach().numpy() if isinstance(v, torch.Tensor) else v

    # scaled_dot_product_attention: outputs and gradients
    for name, causal, mask_kind in [
        ("sdpa_plain", False, None), ("sdpa_causal", True, None),
        ("sdpa_bool_mask", False, "bool"), ("sdpa_float_mask", False, "float"),
    ]:  # fmt: skip
        q, k, v = (
            rng.standard_normal(s).astype(np.float32)
            for s in [(2, 2, 5, 4), (2, 2, 6, 4), (2, 2, 6, 3)]
        )
        if causal:
            k, v = k[:, :, :5], v[:, :, :5]
        mask = None
        if mask_kind == "bool":
            mask = rng.random((5, 6)) > 0.3
        elif mask_kind == "float":
            mask = rng.standard_normal((2, 1, 5, 6)).astype(np.float32)
        tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
        o = torch.nn.functional.scaled_dot_product_attention(
            tq, tk, tv, attn_mask=None if mask is None else torch.tensor(mask), is_causal=causal
        )
        g = rng.standard_normal(o.shape).astype(np.float32)
        o.backward(torch.tensor(g))
        put(name, q=q, k=k, v=v, g=g, out=o, dq=tq.grad, dk=tk.grad, dv=tv.grad,
            causal=np.array(causal))  # fmt: skip
        if mask is not None:
            put(name, mask=mask)

    # MultiheadAttention: weights and outputs under several call options
    for name, kw in MHA.items():
        m = torch.nn.MultiheadAttention(8, 2, **kw)
        q = rng.standard_normal((5, 3, 8)).astype(np.float32)
        k = rng.standard_normal((6, 3, kw.get("kdim", 8))).astype(np.float32)
        v = rng.standard_normal((6, 3, kw.get("vdim", 8))).astype(np.float32)
        if kw.get("batch_first"):
            q, k, v = (np.ascontiguousarray(a.transpose(1, 0, 2)) for a in (q, k, v))
        kpm = np.zeros((3, 6), bool)
        kpm[1, 4:] = True
        am = rng.standard_normal((5, 6)).astype(np.float32)
        for key, value in m.state_dict().items():
            out[f"{name}/state/{key}"] = value.numpy()
        put(name, q=q, k=k, v=v, kpm=kpm, am=am)
        T = lambda a: torch.tensor(a)  # noqa: E731
        o, w = m(T(q), T(k), T(v))
        put(name, out=o, weights=w)
        o, w = m(T(q), T(k), T(v), key_padding_mask=T(kpm), attn_mask=T(am))
        put(name, out_masked=o, weights_masked=w)
        o, w = m(T(q), T(k), T(v), key_padding_mask=T(kpm), average_attn_weights=False)
        put(name, out_heads=o, weights_heads=w)
        o, _ = m(T(q), T(k), T(v), need_weights=False)
        put(name, out_fused=o)

    # an encoder stack (post- and pre-norm) and a whole Transformer, causal masks
    for name, norm_first, act in [("enc_post_relu", False, "relu"), ("enc_pre_gelu", True, "gelu")]:
        layer = torch.nn.TransformerEncoderLayer(
            8, 2, 16, dropout=0.0, activation=act, norm_first=norm_first, batch_first=True
        )
        enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        x = rng.standard_normal((3, 5, 8)).astype(np.float32)
        mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
        for key, value in enc.state_dict().items():
            out[f"{name}/state/{key}"] = value.numpy()
        tx = torch.tensor(x, requires_grad=True)
        y = enc(tx, mask=mask)
        y.sum().backward()
        put(name, x=x, out=y, dx=tx.grad)
    t = torch.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0)
    src = rng.standard_normal((6, 3, 8)).astype(np.float32)
    tgt = rng.standard_normal((5, 3, 8)).astype(np.float32)
    for key, value in t.state_dict().items():
        out[f"transformer/state/{key}"] = value.numpy()
    y = t(torch.tensor(src), torch.tensor(tgt),
          tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(5))  # fmt: skip
    put("transformer", src=src, tgt=tgt, out=y)
    np.savez_compressed(OUT, **out)
    print(OUT, len(out), "arrays", OUT.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
