"""Attention: ``F.scaled_dot_product_attention``, ``nn.MultiheadAttention`` and the transformer
modules against PyTorch 2.13: its values recorded by tools/gen_attention_fixtures.py
(data/attention.npz), and PyTorch itself where it is installed; their errors; the fused
kernel's memory (Note [Fused attention])."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from needs import autograd

import tensorplug as tp
import tensorplug.nn.functional as F
from tensorplug import nn

autograd()

DATA = np.load(Path(__file__).parent / "data" / "attention.npz")


def _rec(prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix) + 1 :]: DATA[k] for k in DATA.files if k.startswith(prefix + "/")}


def _state(prefix: str) -> dict[str, tp.Tensor]:
    return {
        k[len("state/") :]: tp.tensor(v) for k, v in _rec(prefix).items() if k.startswith("state/")
    }


def _close(got: Any, want: np.ndarray, tol: float = 2e-6) -> None:
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["sdpa_plain", "sdpa_causal", "sdpa_bool_mask", "sdpa_float_mask"])
def test_sdpa_matches_pytorch(name: str) -> None:
    r = _rec(name)
    q, k, v = (tp.tensor(r[n], requires_grad=True) for n in "qkv")
    mask = tp.tensor(r["mask"]) if "mask" in r else None
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=bool(r["causal"]))
    _close(out, r["out"])
    out.backward(tp.tensor(r["g"]))
    for t, n in ((q, "dq"), (k, "dk"), (v, "dv")):
        _close(t.grad, r[n], 1e-5)


MHA = {
    "mha": {},
    "mha_batch_first": {"batch_first": True},
    "mha_bias_kv_zero_attn": {"add_bias_kv": True, "add_zero_attn": True},
    "mha_kdim_vdim": {"kdim": 3, "vdim": 5},
    "mha_no_bias": {"bias": False},
}


@pytest.mark.parametrize("name", list(MHA))
def test_multihead_attention_loads_pytorchs_state_and_matches(name: str) -> None:
    m = nn.MultiheadAttention(8, 2, **MHA[name])
    state = _state(name)
    assert list(m.state_dict()) == list(state)  # PyTorch's keys, in its order
    m.load_state_dict(state)
    r = _rec(name)
    q, k, v, kpm, am = (tp.tensor(r[n]) for n in ("q", "k", "v", "kpm", "am"))
    out, w = m(q, k, v)
    _close(out, r["out"])
    _close(w, r["weights"])
    out, w = m(q, k, v, key_padding_mask=kpm, attn_mask=am)
    _close(out, r["out_masked"])
    _close(w, r["weights_masked"])
    out, w = m(q, k, v, key_padding_mask=kpm, average_attn_weights=False)
    _close(out, r["out_heads"])
    _close(w, r["weights_heads"])
    out, w = m(q, k, v, need_weights=False)
    assert w is None
    _close(out, r["out_fused"])


@pytest.mark.parametrize(("name", "norm_first", "act"), [
    ("enc_post_relu", False, "relu"), ("enc_pre_gelu", True, "gelu"),
])  # fmt: skip
def test_encoder_stack_matches_pytorch(name: str, norm_first: bool, act: str) -> None:
    layer = nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, activation=act, norm_first=norm_first, batch_first=True
    )
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    enc.load_state_dict(_state(name))
    r = _rec(name)
    x = tp.tensor(r["x"], requires_grad=True)
    y = enc(x, mask=nn.Transformer.generate_square_subsequent_mask(5))
    _close(y, r["out"], 1e-5)
    y.sum().backward()
    _close(x.grad, r["dx"], 1e-5)


def test_transformer_matches_pytorch() -> None:
    t = nn.Transformer(8, 2, 2, 2, 16, dropout=0.0)
    t.load_state_dict(_state("transformer"))
    r = _rec("transformer")
    y = t(tp.tensor(r["src"]), tp.tensor(r["tgt"]),
          tgt_mask=nn.Transformer.generate_square_subsequent_mask(5))  # fmt: skip
    _close(y, r["out"], 1e-5)


def test_transformer_layer_defaults_and_keys() -> None:
    dec = nn.TransformerDecoderLayer(8, 2)
    assert dec.linear1.out_features == 2048 and dec.dropout.p == 0.1
    assert [k for k in dec.state_dict() if k.startswith("norm")] == [
        "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias", "norm3.weight", "norm3.bias",
    ]  # fmt: skip
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(mask.numpy(), [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    t = nn.Transformer(8, 2, 1, 1, 16)
    assert all(p.ndim == 1 or abs(float(p.mean())) < 0.5 for p in t.parameters())


def test_mha_decoder_with_callable_activation_runs_batch_first() -> None:
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, activation=tp.tanh, batch_first=True)
    y = layer(tp.randn(3, 5, 8), tp.randn(3, 6, 8), tgt_is_causal=False)
    assert y.shape == (3, 5, 8)


# --- errors -----------------------------------------------------------------------------------


def test_sdpa_errors() -> None:
    q = tp.randn(2, 4, 5)
    with pytest.raises(RuntimeError, match="at least 2 dimensional"):
        F.scaled_dot_product_attention(tp.randn(5), q, q)
    with pytest.raises(RuntimeError, match="to have the same dtype"):
        F.scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(RuntimeError, match="must divide the number of heads"):
        F.scaled_dot_product_attention(
            tp.randn(1, 3, 4, 5), tp.randn(1, 2, 4, 5), tp.randn(1, 2, 4, 5), enable_gqa=True
        )
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)
    with pytest.raises(RuntimeError, match="aten::_scaled_dot_product_flash_attention_for_cpu"):
        F.scaled_dot_product_attention(q, tp.randn(2, 4, 3), q)


def test_module_errors() -> None:
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    m = nn.MultiheadAttention(8, 2)
    x = tp.randn(5, 3, 8)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is \(4, 5\)"):
        m(x, x, x, attn_mask=tp.zeros(4, 5))
    t = nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        t(tp.randn(5, 3, 8), tp.randn(5, 2, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal"):
        t(tp.randn(5, 3, 8), tp.randn(5, 3, 6))


def test_a_second_backward_through_the_fused_kernel_is_refused_as_in_pytorch() -> None:
    q = tp.randn(2, 3, 4, dtype=tp.float64, requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q)
    (g,) = tp.autograd.grad(out.sum(), q, create_graph=True)
    with pytest.raises(RuntimeError, match="_scaled_dot_product_flash_attention_for_cpu_backward"):
        g.sum().backward()


def test_the_math_path_serves_dropout_and_masks_that_require_grad() -> None:
    q = tp.randn(2, 3, 4, dtype=tp.float64, requires_grad=True)
    bias = tp.randn(3, 3, dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradcheck(lambda a, b: F.scaled_dot_product_attention(a, a, a, b), [q, bias])
    assert tp.autograd.gradgradcheck(
        lambda a, b: F.scaled_dot_product_attention(a, a, a, b), [q, bias]
    )
    tp.manual_seed(0)
    ones = tp.ones(1, 64, 4)
    out = F.scaled_dot_product_attention(ones, ones, tp.ones(1, 64, 4), dropout_p=0.5)
    kept = out.numpy()[0, :, 0]  # each row: the kept weights' sum, scaled by 2
    assert 0.5 < kept.mean() < 1.5 and kept.std() > 0


def test_fused_attention_keeps_no_score_matrix() -> None:
    """What a forward leaves allocated while its graph lives: the fused path keeps the output
    and one log-sum-exp per query row, the math path (a mask that requires grad) also its
    (L, S) weights -- 256 KiB here, where q, k, v and the output are 8 KiB each."""
    L = 256
    q = tp.randn(1, L, 8, requires_grad=True)
    zeros = tp.zeros(L, L)

    def held(**kw: Any) -> int:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            out = F.scaled_dot_product_attention(q, q, q, **kw)
            after = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        assert out.grad_fn is not None
        return after - before

    assert held() < 48 * 1024
    assert held(attn_mask=zeros.requires_grad_()) > L * L * 4


# --- against torch itself ----------------------------------------------------------------------


def test_against_torch_itself() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    tm = torch.nn.MultiheadAttention(8, 2, batch_first=True, add_bias_kv=True)
    pm = nn.MultiheadAttention(8, 2, batch_first=True, add_bias_kv=True)
    pm.load_state_dict({k: tp.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((3, 5, 8)).astype(np.float32)
    tx, px = torch.tensor(x, requires_grad=True), tp.tensor(x, requires_grad=True)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    to, _ = tm(tx, tx, tx, attn_mask=mask, need_weights=False)
    po, _ = pm(px, px, px, attn_mask=tp.tensor(mask.numpy()), need_weights=False)
    _close(po, to.detach().numpy())
    to.sum().backward()
    po.sum().backward()
    _close(px.grad, tx.grad.numpy(), 1e-5)
