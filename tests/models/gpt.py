"""A GPT-style language model written as a PyTorch user writes it, against a library ``lib``
that is ``torch`` or ``tensorplug``: token and position embeddings, pre-norm blocks of causal
self-attention (``F.scaled_dot_product_attention``, or ``nn.MultiheadAttention`` with a causal
mask) and a GELU MLP, a final LayerNorm, an LM head tied to the token embedding, AdamW.

tools/gen_gpt_trajectories.py runs it on torch and freezes the losses of ``STEPS`` training
steps in tests/models/data/gpt_trajectories.json; tests/models/test_gpt.py runs it on
tensorplug (eagerly, compiled, under autocast) and compares; bench/gpt.py times it. Weights
and batches come from numpy with fixed seeds, so both libraries start from the same values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

STEPS = 20
VARIANTS = ("sdpa", "mha")


def make_model(
    lib: Any,
    attention: str = "sdpa",
    vocab: int = 64,
    block_size: int = 16,
    d: int = 32,
    heads: int = 4,
    layers: int = 1,
    dropout: float = 0.0,
) -> Any:
    nn = lib.nn
    F = nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.dropout = dropout

        def forward(self, x: Any) -> Any:
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q = q.view(B, T, heads, C // heads).transpose(1, 2)
            k = k.view(B, T, heads, C // heads).transpose(1, 2)
            v = v.view(B, T, heads, C // heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(
                q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True
            )
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.proj(y)

    class MHASelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn = nn.MultiheadAttention(d, heads, dropout=dropout, batch_first=True)
            mask = lib.triu(lib.ones(block_size, block_size, dtype=lib.bool), diagonal=1)
            self.register_buffer("mask", mask, persistent=False)

        def forward(self, x: Any) -> Any:
            T = x.shape[1]
            y, _ = self.attn(x, x, x, attn_mask=self.mask[:T, :T], need_weights=False)
            return y

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(d)
            self.attn = CausalSelfAttention() if attention == "sdpa" else MHASelfAttention()
            self.ln_2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(
                nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(dropout)
            )

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(block_size, d)
            self.drop = nn.Dropout(dropout)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)
            self.lm_head = nn.Linear(d, vocab, bias=False)
            self.lm_head.weight = self.wte.weight  # weight tying

        def forward(self, idx: Any, targets: Any = None) -> Any:
            B, T = idx.shape
            pos = lib.arange(0, T, dtype=lib.long, device=idx.device)
            x = self.drop(self.wte(idx) + self.wpe(pos))
            for block in self.blocks:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            if targets is None:
                return logits
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return GPT()


def copy_weights(lib: Any, model: Any, seed: int = 0) -> None:
    """Set every parameter from a seeded numpy generator (the tied table once): matrices
    ~ N(0, 0.02²) as GPT-2 initializes them, LayerNorm weights 1 + N(0, 0.1²), biases
    N(0, 0.02²)."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            a = 0.02 * rng.standard_normal(shape)
            if name.endswith("weight") and len(shape) == 1:
                a = 1.0 + 0.1 * rng.standard_normal(shape)
            p.copy_(lib.tensor(a.astype(np.float32)))


def batches(
    steps: int = STEPS, batch: int = 4, block_size: int = 16, vocab: int = 64, seed: int = 1
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``steps`` (inputs, targets) pairs of int64 token ids, targets the inputs shifted by one:
    sequences that follow ``next = (5 * token + 3) % vocab`` from random first tokens, with one
    token in eight replaced by a random one (something to learn, but not only that)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        seq = np.empty((batch, block_size + 1), dtype=np.int64)
        seq[:, 0] = rng.integers(0, vocab, size=batch)
        for t in range(block_size):
            seq[:, t + 1] = (5 * seq[:, t] + 3) % vocab
        noise = rng.random(seq.shape) < 0.125
        seq[noise] = rng.integers(0, vocab, size=int(noise.sum()))
        out.append((seq[:, :-1].copy(), seq[:, 1:].copy()))
    return out


def optimizer(lib: Any, model: Any) -> Any:
    return lib.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)


def train_step(lib: Any, model: Any, opt: Any, bf16: bool = False) -> Any:
    """The step function ``step(idx, targets) -> loss`` as a user writes it; with ``bf16``, the
    forward and the loss run under ``autocast("cpu", dtype=bfloat16)`` (only they: PyTorch
    caches the casts of the weights until the region ends, so a region around several steps
    would keep using the first step's weights)."""

    def step(idx: Any, targets: Any) -> Any:
        if bf16:
            with lib.autocast("cpu", dtype=lib.bfloat16):
                loss = model(idx, targets)
        else:
            loss = model(idx, targets)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.detach()

    return step


def trajectory(
    lib: Any, attention: str, compile_step: bool = False, bf16: bool = False, **config: Any
) -> list[float]:
    """The losses of ``STEPS`` AdamW steps from the copied weights."""
    model = make_model(lib, attention, **config)
    copy_weights(lib, model)
    opt = optimizer(lib, model)
    step = train_step(lib, model, opt, bf16)
    if compile_step:
        step = lib.compile(step)
    losses = []
    for x, y in batches():
        losses.append(float(step(lib.tensor(x), lib.tensor(y))))
    return losses
