"""The kit reads an array's element count as ``math.prod(a.shape)``, never ``a.size``: the array
API's ``size`` is an attribute, torch's a method (examples/torch_backend). The reads kept are on
arrays only numpy or a strided library can hold (host arrays, numpy's ufunc fast paths)."""

from __future__ import annotations

import re
from pathlib import Path

import tensorplug.array_backend as ab

# file (relative to array_backend/) -> receivers whose ``.size`` is read on numpy arrays only
_NUMPY_ONLY = {
    "_pointwise/_complex.py": {"a"},  # the strided path: arrays with strides and .view
    "_strided.py": {"a"},  # strided backends only
    "_reductions/_common.py": {"a"},  # numpy's ufunc .reduce fast path
    "_nn/_functions.py": {"a"},  # fast_softmax: numpy's ufunc fast path
    "_storage.py": {"host"},  # host numpy arrays
    "_nn/_conv.py": {"self", "geo"},  # a geometry's spatial size, no array
}
_READ = re.compile(r"\b([A-Za-z_][\w.]*)\.size\b(?!\s*\()")


def test_kit_kernels_read_no_size_attribute() -> None:
    root = Path(ab.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        allowed = _NUMPY_ONLY.get(rel, set())
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            for m in _READ.finditer(code):
                if m.group(1) not in allowed and not _in_string(code, m.start()):
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, (
        "kit code reads .size of an array, a method on torch tensors: write "
        "math.prod(a.shape) (docs/extending.md):\n" + "\n".join(found)
    )


def _in_string(code: str, at: int) -> bool:
    """Whether position ``at`` of ``code`` lies in the text of a string literal (an error
    message's ``input.size(1)``), not in an f-string's ``{...}``, by counting quotes before it."""
    head = code[:at]
    for q in "\"'":
        if head.count(q) % 2 == 1:
            text = head[head.rfind(q) + 1 :]
            return text.count("{") <= text.count("}")
    return False


def test_numpy_held_bfloat16_takes_no_float32_bridge() -> None:
    """Note [bfloat16 across transfers]: only a library's own bfloat16 (torch's) crosses the
    default transfers as float32; ml_dtypes' (numpy's, dask's) pays nothing."""
    import tensorplug as tp
    from tensorplug import _backends
    from tensorplug.array_backend._storage import _native_bfloat16

    kit = _backends.for_device_type("cpu").kit  # type: ignore[attr-defined]
    assert _native_bfloat16(kit) is None
    t = tp.tensor([1.5, float("nan"), -2.0], dtype=tp.bfloat16)
    assert t.isnan().tolist() == [False, True, False]
    assert t.float().tolist()[::2] == [1.5, -2.0]
