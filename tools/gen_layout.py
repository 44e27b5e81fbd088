"""Record PyTorch's strides, storage offsets, contiguity and view errors for the layout tests,
on CPU tensors and on the same expressions of Meta tensors (``x.to("meta")``).

Each case is ``(setup, expr)``: ``setup`` makes the base ``x`` (``T`` is the module, torch or
tensorplug), ``expr`` the tensor whose layout is recorded, or raises. The same cases run against
tensorplug in tests/core/test_layout.py, from the frozen file this writes, and against torch
itself where it is importable.

Usage::

    /work/torchenv/bin/python tools/gen_layout.py     # writes tests/core/data/layout.json
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "layout.json"

X2 = "x = T.arange(12.).reshape(3, 4)"
X3 = "x = T.arange(24.).reshape(2, 3, 4)"
X4 = "x = T.arange(120.).reshape(2, 3, 4, 5)"
X5 = "x = T.arange(240.).reshape(2, 3, 2, 4, 5)"
XV = "x = T.arange(6.)"

CASES: list[tuple[str, str]] = [
    # the bug and the attention idiom
    (X2, "x.t().contiguous().view(-1)"),
    (X3, "x.transpose(1, 2).contiguous().view(2, 12)"),
    (X2, "x.t().view(-1)"),
    (X2, "x.t().clone().view(-1)"),
    (X2, "x.t().clone()"),
    (X2, "x.t().contiguous()"),
    (X2, "x.t().reshape(-1)"),
    (X2, "x.t()"),
    (X2, "x.T"),
    (X3, "x.mT"),
    (X3, "x.permute(2, 0, 1)"),
    (X3, "x.permute(2, 0, 1).clone()"),
    (X3, "x.permute(2, 0, 1).clone().view(-1)"),
    (X3, "x.permute(2, 0, 1).contiguous().view(-1)"),
    (X3, "x.permute(1, 0, 2).view(3, 8)"),
    (X3, "x.permute(0, 2, 1).view(2, 12)"),
    (X3, "x.transpose(0, 1).view(3, 2, 2, 2)"),
    (X3, "x.transpose(0, 1).reshape(6, 4)"),
    (X3, "x.transpose(0, 1).flatten()"),
    # expand
    (X2, "x[:, :1].expand(3, 5)"),
    (X2, "x[:, :1].expand(3, 5).view(15)"),
    (X2, "x[:, :1].expand(3, 5).contiguous()"),
    (X2, "x[:, :1].expand(3, 5).clone()"),
    (X2, "x[None].expand(2, 3, 4)"),
    (X2, "x[None].expand(2, 3, 4).view(2, 12)"),
    (X2, "x.unsqueeze(1).expand(3, 2, 4).view(6, 4)"),
    # slices, selects and friends
    (X2, "x[1:]"),
    (X2, "x[:, 1:3]"),
    (X2, "x[:, ::2]"),
    (X2, "x[::2, 1::2]"),
    (X2, "x[::2, 1::2].clone()"),
    (X2, "x[:, ::2].view(6)"),
    (X2, "x[1:].view(8)"),
    (X2, "x[1]"),
    (X2, "x[:, 2]"),
    (X2, "x.narrow(1, 1, 2)"),
    (X2, "x.select(1, 3)"),
    (X2, "x.diagonal()"),
    (X2, "x.diagonal(1)"),
    (X2, "x.unsqueeze(0)"),
    (X2, "x.unsqueeze(2)"),
    (X2, "x[:, :1].squeeze(1)"),
    (X2, "x.flatten()"),
    (X2, "x[1:].detach()"),
    (X2, "x.view(2, 6)[1]"),
    (X2, "x.split(2, 1)[1]"),
    (X2, "x.chunk(3, 0)[2]"),
    (X2, "x.unbind(1)[2]"),
    (X2, "x.movedim(0, 1)"),
    (XV, "x.view(2, 3).t()[1:]"),
    # unfold and as_strided
    (X2, "x.unfold(1, 2, 1)"),
    (X2, "x.unfold(0, 2, 1)"),
    (X2, "x.unfold(1, 3, 2)"),
    (X2, "x.unfold(1, 5, 1)"),
    (X2, "x.unfold(1, 2, 0)"),
    (X2, "x.t().unfold(0, 2, 2)"),
    (X2, "x[1:].unfold(1, 2, 1)"),
    (XV, "x.as_strided((2, 2), (1, 2))"),
    (XV, "x.as_strided((2, 2), (1, 2), 1)"),
    (XV, "x.as_strided((3,), (2,), 1)"),
    (XV, "x[2:].as_strided((2,), (1,))"),
    (XV, "x[2:].as_strided((2,), (1,), 0)"),
    (XV, "x.as_strided((7,), (1,))"),
    (XV, "x.as_strided((2,), (-1,))"),
    (XV, "x.as_strided((2, 2), (1,))"),
    (XV, "x.as_strided((2, 2), (0, 1), 4)"),
    # memory formats
    (X4, "x.contiguous(memory_format=T.channels_last)"),
    (X4, "x.to(memory_format=T.channels_last)"),
    (X4, "x.clone(memory_format=T.channels_last)"),
    (X4, "x.contiguous(memory_format=T.channels_last).clone()"),
    (X4, "x.contiguous(memory_format=T.channels_last).contiguous()"),
    (X4, "x.contiguous(memory_format=T.channels_last) + 1"),
    (X4, "x.contiguous(memory_format=T.channels_last).double()"),
    (X4, "T.empty_like(x.contiguous(memory_format=T.channels_last))"),
    (X4, "T.zeros_like(x.contiguous(memory_format=T.channels_last))"),
    (X4, "T.ones_like(x, memory_format=T.channels_last)"),
    (
        X4,
        "T.zeros_like(x.contiguous(memory_format=T.channels_last), memory_format=T.contiguous_format)",
    ),
    (X4, "x.permute(0, 2, 3, 1)"),
    (X4, "x.permute(0, 2, 3, 1).contiguous()"),
    (X4, "x.permute(0, 3, 1, 2).clone()"),
    (X4, "x[:, :, ::2].clone()"),
    (X4, "T.empty_like(x[:, :, ::2])"),
    (X4, "x[:, :1, :1, :1].contiguous(memory_format=T.channels_last)"),
    (X4, "x.contiguous(memory_format=T.channels_last).to(memory_format=T.contiguous_format)"),
    (X4, "x.contiguous(memory_format=T.channels_last_3d)"),
    (X5, "x.contiguous(memory_format=T.channels_last_3d)"),
    (X5, "x.clone(memory_format=T.channels_last_3d).clone()"),
    (X2, "x.contiguous(memory_format=T.channels_last)"),
    (X2, "x.clone(memory_format=T.channels_last)"),
    (X2, "x.contiguous(memory_format=T.preserve_format)"),
    (X2, "x.t().to(memory_format=T.contiguous_format)"),
    (X2, "T.empty_strided((2, 3), (1, 2))"),
    (X2, "T.empty_strided((2, 3), (4, 1))"),
    (X2, "T.empty_strided((2, 0), (1, 2))"),
    # storage ops: resize_, resize_as_, set_, swapdims_
    (XV, "x.resize_(2, 2)"),
    (XV, "x.resize_(6)"),
    (XV, "x[2:].resize_(2)"),
    (XV, "x[2:].resize_(4)"),
    (XV, "x.resize_(3, 4)[:1]"),
    (XV, "x[2:].resize_(5)[:4]"),
    (XV, "x.resize_(0)"),
    (XV, "x.resize_(-1)"),
    (XV, "x.resize_(2, 3, memory_format=T.preserve_format)"),
    (X2, "x.t().resize_(4, 3)"),
    (X2, "x.t().resize_(3, 4)"),
    (X2, "x.t().resize_(4, 3, memory_format=T.contiguous_format)"),
    (X4, "x.resize_(2, 3, 4, 5, memory_format=T.channels_last)"),
    (X4, "x.resize_(2, 3, 4, memory_format=T.channels_last)"),
    (X2, "T.zeros(2, 6).resize_as_(x)"),
    (X2, "T.zeros(2, 6).resize_as_(x.t(), memory_format=T.channels_last)"),
    (XV, "T.zeros(3).set_(x, 1, (2, 2), (1, 2))"),
    (XV, "T.zeros(3).set_(x, 2, (2, 2))"),
    (XV, "T.zeros(3).set_(x, 4, (2, 2), (1, 2))[:1, :1]"),
    (XV, "(T.zeros(3).set_(x, 4, (2, 2), (1, 2)), x)[1]"),
    (XV, "(x[2:].resize_(5), x)[1]"),
    (XV, "T.zeros(3).set_(x[2:])"),
    (XV, "T.zeros(3).set_(x.view(2, 3).t())"),
    (XV, "T.zeros(3).set_(x.untyped_storage())"),
    (XV, "T.zeros(3).set_(x.untyped_storage(), 2, (2,))"),
    (XV, "T.zeros(3).set_(x.untyped_storage(), 1, (2, 2), (2, 1))"),
    (XV, "T.zeros(3, dtype=T.int32).set_(x.untyped_storage())"),
    (XV, "T.zeros(3).set_()"),
    (XV, "T.zeros(3).set_(x.to(T.int64))"),
    (XV, "x.set_(x[1:])"),
    (X2, "x.swapdims_(0, 1)"),
    (X2, "x.swapaxes_(1, 0)"),
]


def record(T: Any, setup: str, expr: str, meta: bool = False) -> dict[str, Any]:
    """The layout of ``expr`` (or the type of its error), for module ``T``; with ``meta``, of
    the same expression on ``x.to("meta")`` (no values: Meta tensors have none)."""
    env: dict[str, Any] = {"T": T}
    exec(setup, env)
    if meta:
        env["x"] = env["x"].to("meta")
    x = env["x"]
    try:
        r = eval(expr, env)
    except Exception as e:  # the case records the error's type
        return {"error": type(e).__name__}
    return {
        "shape": list(r.shape),
        "stride": list(r.stride()),
        "offset": r.storage_offset(),
        "contiguous": r.is_contiguous(),
        "channels_last": r.is_contiguous(memory_format=T.channels_last),
        "channels_last_3d": r.is_contiguous(memory_format=T.channels_last_3d),
        "shares": r.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
        "storage_nbytes": r.untyped_storage().nbytes(),
        "dim_order": list(r.dim_order()) if r.ndim else [],
        "values": (
            r.flatten().tolist()
            if 0 < r.numel() <= 24 and "empty" not in expr and not r.is_meta
            else None
        ),
    }


def main() -> None:
    import torch

    cases = [
        {"setup": s, "expr": e, "torch": record(torch, s, e), "meta": record(torch, s, e, True)}
        for s, e in CASES
    ]
    lines = ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases)
    OUT.write_text(f'{{"torch":{json.dumps(torch.__version__)},"cases":[\n{lines}\n]}}\n')
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
