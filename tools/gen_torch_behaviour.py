"""Write tests/core/data/torch_behaviour.json: what torch 2.13 gives for the non-op names of the
torch.* docs index that tests/core/test_torch_names.py checks (reprs under set_printoptions, the
sym_* functions, settings' defaults and messages, predicates). Each case is an expression over
``T`` (the module: torch here, tensorplug in the test) and its result as text, or the exception
type and message. Run with /work/torchenv/bin/python."""

from __future__ import annotations

import json
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "torch_behaviour.json"

# (print options, expression): the repr of the tensor the expression makes
PRINTS = [
    ({}, "T.arange(30.)"),
    ({}, "T.tensor([1., 10000.])"),
    ({}, "T.tensor([1.5, 10000.])"),
    ({}, "T.tensor([1e-5, 1.])"),
    ({}, "T.tensor([float('nan'), 1.5, float('inf')])"),
    ({}, "T.tensor([1.5+2j, -3.25-1j])"),
    ({}, "T.tensor(2.5)"),
    ({}, "T.arange(12.).reshape(3, 4) * 1.5"),
    ({}, "T.tensor([100000000.0, 1.0])"),
    ({}, "T.arange(1200.).reshape(40, 30)"),
    ({}, "T.arange(40., dtype=T.float64)"),
    ({"precision": 2}, "T.tensor([1.2345, 2.5])"),
    ({"precision": 2}, "T.tensor([1+2j])"),
    ({"sci_mode": True}, "T.tensor([1.2345, 2.5])"),
    ({"sci_mode": False}, "T.tensor([1e-5, 1.])"),
    ({"threshold": 5, "edgeitems": 2}, "T.arange(10)"),
    ({"threshold": 5, "edgeitems": 2}, "T.arange(20.).reshape(4, 5)"),
    ({"threshold": 5, "edgeitems": 1}, "T.arange(27).reshape(3, 3, 3)"),
    ({"linewidth": 30}, "T.arange(12.)"),
    ({"profile": "short"}, "T.tensor([1.23456])"),
    ({"profile": "short"}, "T.arange(2000)"),
    ({"profile": "full"}, "T.arange(1005)[-3:]"),
]

# expressions whose value (repr) or exception torch gives
VALUES = [
    "T.sym_int(3.7)", "T.sym_int(-3.7)", "T.sym_float(3)", "T.sym_max(2, 3.0)", "T.sym_min(2, 3)",
    "T.sym_max(2, 3)", "T.sym_not(True)", "T.sym_ite(True, 1, 2)", "T.sym_sum([1, 2, 3.0])",
    "T.sym_fresh_size(3)",
    "T.is_tensor(T.ones(1))", "T.is_tensor([1])", "T.is_storage(T.ones(1))",
    "T.is_complex(T.ones(1))", "T.is_complex(T.ones(1, dtype=T.complex64))",
    "T.is_floating_point(T.ones(1))", "T.is_floating_point(T.ones(1, dtype=T.int32))",
    "T.is_conj(T.ones(1))", "T.is_nonzero(T.tensor([0.]))", "T.is_nonzero(T.tensor([2]))",
    "T.is_nonzero(T.ones(2))", "T.is_nonzero(T.ones(0))", "T.numel(T.ones(2, 3))", "T.numel([1])",
    "T.is_complex(1)", "T._assert(True, 'msg')", "T._assert(False, 'msg')",
    "T.Size([2, 3])", "T.Size([2, 3]).numel()", "T.Size([2, 3])[1:]", "T.Size([])",
    "T.Size([2]) + (3,)", "T.Size([2, 3]) == (2, 3)",
    "T.compiled_with_cxx11_abi() in (True, False)",
    "T.get_float32_matmul_precision()", "T.are_deterministic_algorithms_enabled()",
    "T.get_deterministic_debug_mode()", "T.is_deterministic_algorithms_warn_only_enabled()",
    "T.is_warn_always_enabled()", "T.is_inference_mode_enabled()",
    "T.set_num_threads(0)", "T.use_deterministic_algorithms(1)",
    "T.set_deterministic_debug_mode('x')",
    "T.set_rng_state(T.zeros(3))",
    "T.finfo(T.float32).eps", "T.finfo(T.bfloat16).max", "T.iinfo(T.int8).min", "T.finfo().tiny",
    "T.inf", "T.nan != T.nan", "T.e", "T.pi",
    "T.promote_types(T.int32, T.float16)", "T.can_cast(T.float32, T.int32)",
    "T.result_type(T.ones(1, dtype=T.int8), 1.0)",
    "T.cond(True, lambda x: x + 1, lambda x: x - 1, (T.ones(2),))",
    "T.cond(T.tensor(False), lambda x: x + 1, lambda x: x - 1, (T.ones(2),))",
    "T.cond(T.tensor([True, False]), lambda x: x + 1, lambda x: x - 1, (T.ones(2),))",
    "T.cond('a', lambda x: x + 1, lambda x: x - 1, (T.ones(2),))",
    "T.Stream()", "T.Event()", "T.Stream().query()", "T.Event().query()",
    "T.Stream().record_event()", "T.Event().elapsed_time(T.Event())",
    "T.cpu.device_count()", "T.cpu.current_device()", "T.cpu.is_available()",
    "T.get_device_module('cpu').__name__", "T.get_device_module('meta')",
    "T.broadcast_shapes((2, 1), (3,))", "T.broadcast_shapes(2, (3, 1))", "T.broadcast_shapes()",
    "T.broadcast_shapes((2,), (3,))", "T.broadcast_shapes((-1,))",
]  # fmt: skip


def run(expr: str) -> dict[str, str]:
    try:
        r = eval(expr, {"T": torch})
    except Exception as e:  # noqa: BLE001 - the exception is the expected value
        return {"raises": type(e).__name__, "message": str(e)}
    return {"value": repr(r)}


def main() -> None:
    prints = []
    for opts, expr in PRINTS:
        torch.set_printoptions(profile="default")
        torch.set_printoptions(**opts)
        prints.append({"options": opts, "expr": expr, "repr": repr(eval(expr, {"T": torch}))})
    torch.set_printoptions(profile="default")
    values = [{"expr": e, **run(e)} for e in VALUES]
    OUT.write_text(json.dumps({"prints": prints, "values": values}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
