"""Write tests/core/data/serialization/legacy_v0.tp: a checkpoint in the plain-pickle format
tp.save wrote before the zip archive (tensorplug 0.1.2, commit 12c644d). Kept for the record:
running it now writes the new format; the committed file was written by the old code.

    uv run python tools/gen_legacy_checkpoint.py
"""

import collections

import tensorplug as tp

x = tp.arange(6.0).reshape(2, 3)
obj = {
    "sd": collections.OrderedDict(
        weight=tp.nn.Parameter(x), bias=tp.tensor([1, -2], dtype=tp.int64)
    ),
    "bf16": tp.tensor([1.5, -2.0]).to(tp.bfloat16),
    "step": 3,
    "dtype": tp.float16,
    "device": tp.device("cpu"),
}
tp.save(obj, "tests/core/data/serialization/legacy_v0.tp")
